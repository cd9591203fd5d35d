//! Any bytes as an export file: import reports bad lines as errors, never panics, and what it
//! stores is sanitized.
#![no_main]

use agent_memory_core::capture;
use agent_memory_core::store::Store;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut store = Store::open_in_memory().expect("store");
    let mut input = data;
    let _ = store
        .import(&mut input, &capture::sanitize_event, &|t| capture::sanitize_text(t).into_owned());
});
