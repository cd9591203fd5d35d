//! Any text as a search query: the converter never panics, and what it builds FTS5 accepts.
#![no_main]

use agent_memory_core::store::Store;
use agent_memory_core::store::fts;
use agent_memory_core::store::search::SearchQuery;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fuzz_target!(|data: &[u8]| {
    static STORE: OnceLock<std::sync::Mutex<Store>> = OnceLock::new();
    let text = String::from_utf8_lossy(data);
    let _ = fts::to_match_query(&text, 12);
    let _ = fts::to_match_all_query(&text, 12);
    let _ = fts::index_tokens(&text);
    let store =
        STORE.get_or_init(|| std::sync::Mutex::new(Store::open_in_memory().expect("store")));
    let store = store.lock().unwrap_or_else(|p| p.into_inner());
    let query =
        SearchQuery { text: text.into_owned(), limit: 5, max_terms: 12, ..SearchQuery::default() };
    let results = store.search(&query).expect("a query never fails the search");
    assert!(!results.fallback, "the converter built something FTS5 rejected");
});
