//! Integration tests: the real `agent-memory` binary, run as a child process under a temp
//! home, against real SQLite files, with payloads captured from the real agents.

mod agents;
mod agents_hermes;
mod agents_oc;
mod architecture;
mod capture_robustness;
mod cli;
mod concurrency;
mod distil;
mod doctor;
mod health;
mod hermes_provider;
mod history;
mod install;
mod json;
mod lessons;
mod log;
mod mcp;
mod memory;
mod packaging;
mod project_identity;
mod quality;
mod reactions;
mod recall_inject;
mod redaction;
mod report;
mod samples;
mod search;
mod semantic;
mod serve;
mod sign;
mod spool;
mod spool_faults;
mod statements;
mod status;
mod team;
mod transfer;
mod trust;
mod vault;
mod walkthrough;

use std::path::PathBuf;

use agent_memory_testkit::TestHome;

/// A fresh home for one test.
pub fn home() -> TestHome {
    TestHome::new(env!("CARGO_BIN_EXE_agent-memory"))
}

/// A read-only connection to the test home's store.
pub fn db(home: &TestHome) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(
        home.db_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open the store read-only")
}

/// One number from the store.
pub fn count(home: &TestHome, sql: &str) -> i64 {
    db(home).query_row(sql, [], |r| r.get(0)).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// A Claude Code-style payload; `extra` fields are merged in.
pub fn payload(session: &str, event: &str, cwd: &str, extra: serde_json::Value) -> Vec<u8> {
    let mut base = serde_json::json!({
        "session_id": session,
        "transcript_path": format!("/tmp/{session}.jsonl"),
        "cwd": cwd,
        "hook_event_name": event,
    });
    if let (Some(base), serde_json::Value::Object(extra)) = (base.as_object_mut(), extra) {
        base.extend(extra);
    }
    serde_json::to_vec(&base).expect("serialize payload")
}

/// Asserts a hook run exited 0 quietly, as every agent needs.
#[track_caller]
pub fn assert_quiet_success(out: &std::process::Output) {
    assert!(out.status.success(), "hook must exit 0:\n{}", agent_memory_testkit::describe(out));
    assert!(
        out.stdout.is_empty(),
        "hook printed on stdout:\n{}",
        agent_memory_testkit::describe(out)
    );
}

/// Runs a hook while another connection holds the store's write lock, so the hook must spool;
/// returns its output and the spool files it left, read before the lock is released.
pub fn hook_while_locked(
    home: &TestHome,
    agent: &str,
    event: &str,
    payload: &[u8],
) -> (std::process::Output, Vec<Vec<u8>>) {
    let mut locker = rusqlite::Connection::open(home.db_path()).expect("open the store");
    let tx = locker
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .expect("take the write lock");
    let out = agent_memory_testkit::run_with_stdin(
        home.cmd()
            .args(["hook", "--agent", agent, "--event", event])
            .env("AGENT_MEMORY_CAPTURE__BUSY_TIMEOUT_MS", "50"),
        payload,
    );
    let spooled = std::fs::read_dir(home.spool_dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| std::fs::read(e.path()).unwrap_or_default())
        .collect();
    tx.rollback().expect("release the lock");
    (out, spooled)
}

/// A tool the test needs, or `None` with a notice outside CI; in CI (`CI=true`) a panic with
/// the command that installs it.
#[allow(clippy::print_stderr)]
pub fn needed(
    test: &str,
    var: &str,
    install: &str,
    check: impl Fn(&PathBuf) -> bool,
) -> Option<PathBuf> {
    let named = std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(path) = named.clone().filter(|p| check(p)) {
        return Some(path);
    }
    let advice = format!(
        "{var} is {}; run `export {var}=\"$({install} | tail -n 1)\"`",
        named.map_or("not set".to_owned(), |p| format!("{}, which is not usable", p.display()))
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{test} needs it: {advice}");
    eprintln!("skipping {test}: {advice}");
    None
}
