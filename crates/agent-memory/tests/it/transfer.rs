//! Export and import: a JSONL round trip into a second store, idempotent, private events
//! excluded.

use crate::{assert_quiet_success, count, home, payload};

#[test]
fn export_import_round_trip_is_idempotent() {
    let source = home();
    for (i, text) in ["wire the payment webhook", "修复回调签名", "add retries to the uploader"]
        .iter()
        .enumerate()
    {
        let body = payload(
            &format!("s{}", i % 2),
            "UserPromptSubmit",
            "/tmp",
            serde_json::json!({ "prompt": text }),
        );
        assert_quiet_success(&source.hook("claude-code", "UserPromptSubmit", &body));
    }
    let env_read = payload(
        "s0",
        "PostToolUse",
        "/tmp",
        serde_json::json!({"tool_name": "Read", "tool_input": {"file_path": "/tmp/.env"}, "tool_response": "A=1", "tool_use_id": "t"}),
    );
    assert_quiet_success(&source.hook("claude-code", "PostToolUse", &env_read));
    assert_eq!(count(&source, "SELECT count(*) FROM events"), 4);

    let file = source.user_home().join("export.jsonl");
    source.ok(&["export", "--output", file.to_str().expect("utf-8 path")]);
    let exported = std::fs::read_to_string(&file).expect("export file");
    assert!(exported.lines().next().expect("header").contains("agent-memory-export"));
    assert!(!exported.contains(".env"), "private events never leave");
    // stdout export is the same stream.
    let stdout = source.ok(&["export"]);
    assert_eq!(stdout.lines().count(), exported.lines().count());

    let target = home();
    let first = target.json(&["import", file.to_str().expect("utf-8 path")]);
    assert_eq!(first["events"], 3, "{first}");
    let second = target.json(&["import", file.to_str().expect("utf-8 path")]);
    assert_eq!(second["events"], 0, "{second}");
    assert_eq!(second["already_present"], 3, "{second}");
    assert_eq!(count(&target, "SELECT count(*) FROM events"), 3);
    assert_eq!(count(&target, "SELECT count(*) FROM sessions"), 2);

    // The imported events are searchable like captured ones.
    let hits = target.json(&["search", "回调"]);
    assert_eq!(hits["hits"].as_array().map(Vec::len), Some(1), "{hits}");

    // And re-exporting gives the same events.
    let again = target.ok(&["export"]);
    let events = |s: &str| s.lines().filter(|l| l.contains("\"type\":\"event\"")).count();
    assert_eq!(events(&again), 3);
}

#[test]
fn import_rejects_what_is_not_an_export() {
    let home = home();
    let out = home.run(&["import", "-"], b"{\"type\":\"event\",\"data\":{\"nope\":1}}\n");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 1") && err.contains("export"), "{err}");
}
