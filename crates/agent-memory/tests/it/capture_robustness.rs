//! Bad input never hurts the agent: malformed, binary, empty, wrong-typed and huge payloads,
//! and mistyped command lines, all exit 0 with nothing on stdout, a logged error, and no panic.

use crate::{assert_quiet_success, count, home, payload};

fn last_outcome(home: &agent_memory_testkit::TestHome) -> (String, String) {
    crate::db(home)
        .query_row(
            "SELECT outcome, coalesce(detail, '') FROM hook_runs ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the hook run is recorded")
}

#[test]
fn unreadable_payloads_are_logged_and_kept_aside() {
    let home = home();
    let cases: [(&str, Vec<u8>, &str); 6] = [
        ("malformed", b"{\"session_id\": \"s\", \"cwd\": ".to_vec(), "not valid JSON"),
        ("binary", vec![0xff, 0xfe, 0x00, 0x12, 0x80, 0x81, 0xc3, 0x28], "not UTF-8"),
        ("empty", Vec::new(), "empty payload"),
        ("array", b"[1, 2, 3]".to_vec(), "not an object"),
        (
            "wrong types",
            br#"{"session_id": 5, "hook_event_name": "UserPromptSubmit", "prompt": ["x"]}"#
                .to_vec(),
            "session",
        ),
        ("string", b"\"just text\"".to_vec(), "not an object"),
    ];
    for (name, bytes, expected) in cases {
        let out = home.hook("claude-code", "UserPromptSubmit", &bytes);
        assert_quiet_success(&out);
        let (outcome, detail) = last_outcome(&home);
        assert_eq!(outcome, "invalid", "{name}: {detail}");
        assert!(detail.contains(expected), "{name}: {detail:?} should mention {expected:?}");
    }
    assert!(home.log().contains("did not store its event"), "log:\n{}", home.log());
    let kept = std::fs::read_dir(home.home().join("rejected")).expect("rejected dir").count();
    assert_eq!(kept, 6, "every unreadable payload is kept for inspection");
    assert_eq!(count(&home, "SELECT count(*) FROM events"), 0);
}

#[test]
fn huge_payload_is_truncated_with_a_marker_not_lost() {
    let home = home();
    let output = "x".repeat(20 * 1024 * 1024);
    let body = payload(
        "big-session",
        "PostToolUse",
        "/tmp",
        serde_json::json!({
            "tool_name": "Bash",
            "tool_input": {"command": "cat huge.log"},
            "tool_response": {"stdout": output, "stderr": ""},
            "tool_use_id": "toolu_1",
        }),
    );
    assert!(body.len() > 20 * 1024 * 1024);
    let out = home.hook("claude-code", "PostToolUse", &body);
    assert_quiet_success(&out);
    let summary: String = crate::db(&home)
        .query_row("SELECT summary FROM events WHERE kind = 'tool_use'", [], |r| r.get(0))
        .expect("the event is stored");
    assert!(summary.contains("truncated"), "{summary}");
    assert!(home.log().contains("over the stdin cap"), "log:\n{}", home.log());
    // Nothing near the payload's size reached the store.
    assert!(std::fs::metadata(home.db_path()).expect("db").len() < 2 * 1024 * 1024);
}

#[test]
fn mistyped_command_lines_still_exit_zero_quietly() {
    let home = home();
    for args in [vec!["hook"], vec!["hook", "--agnt", "claude-code"], vec!["hook", "--agent"]] {
        let out = home.run(&args, b"{}");
        assert_quiet_success(&out);
    }
}

#[test]
fn unknown_agents_and_events_are_recorded_or_skipped_never_errors() {
    let home = home();
    let body =
        payload("s-1", "SomethingNew", "/tmp", serde_json::json!({"new_field": {"deep": [1, 2]}}));
    assert_quiet_success(&home.hook("claude-code", "SomethingNew", &body));
    assert_eq!(last_outcome(&home).0, "skipped");
    let body = payload(
        "s-2",
        "userPromptSubmitted",
        "/tmp",
        serde_json::json!({"prompt": "a prompt from an agent we have no adapter for"}),
    );
    assert_quiet_success(&home.hook("my-own-agent", "userPromptSubmitted", &body));
    assert_eq!(last_outcome(&home).0, "stored");
    assert_eq!(count(&home, "SELECT count(*) FROM events WHERE agent = 'my-own-agent'"), 1);
}

#[test]
fn injected_context_echoed_back_is_not_captured_again() {
    let home = home();
    let prompt = format!(
        "<hook_context>{}</hook_context>\n\nFix the flaky login test",
        agent_memory_core::capture::fence::wrap("recalled: the answer is 42")
    );
    let body = payload("s-echo", "BeforeAgent", "/tmp", serde_json::json!({"prompt": prompt}));
    assert_quiet_success(&home.hook("gemini", "BeforeAgent", &body));
    let (summary, body_text): (String, String) = crate::db(&home)
        .query_row("SELECT summary, body FROM events", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("stored");
    assert!(summary.contains("Fix the flaky login test"), "{summary}");
    for text in [&summary, &body_text] {
        assert!(!text.contains("the answer is 42") && !text.contains("hook_context"), "{text}");
    }
}

#[test]
fn private_spans_and_sensitive_files_keep_only_the_fact() {
    let home = home();
    let body = payload(
        "s-private",
        "UserPromptSubmit",
        "/tmp",
        serde_json::json!({"prompt": "deploy now <private>my bank pin is 9911</private> please"}),
    );
    assert_quiet_success(&home.hook("claude-code", "UserPromptSubmit", &body));
    let body = payload(
        "s-private",
        "PostToolUse",
        "/tmp",
        serde_json::json!({
            "tool_name": "Read",
            "tool_input": {"file_path": "/tmp/app/.env"},
            "tool_response": {"type": "text", "file": {"filePath": "/tmp/app/.env", "content": "DB_HOST=internal-db-7\nFEATURE_FLAG=on\n"}},
            "tool_use_id": "toolu_env",
        }),
    );
    assert_quiet_success(&home.hook("claude-code", "PostToolUse", &body));
    // What an edit writes into a sensitive file is no more kept than what a read returns.
    let body = payload(
        "s-private",
        "PostToolUse",
        "/tmp",
        serde_json::json!({
            "tool_name": "Edit",
            "tool_input": {"file_path": "/tmp/app/.env", "old_string": "FEATURE_FLAG=on", "new_string": "SMTP_RELAY=relay-internal-9"},
            "tool_response": {"filePath": "/tmp/app/.env"},
            "tool_use_id": "toolu_env_edit",
        }),
    );
    assert_quiet_success(&home.hook("claude-code", "PostToolUse", &body));
    let all: String = crate::db(&home)
        .prepare("SELECT summary || body || payload || sensitivity FROM events")
        .expect("prepare")
        .query_map([], |r| r.get::<_, String>(0))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows")
        .join("\n");
    assert!(!all.contains("9911") && !all.contains("bank pin"), "{all}");
    assert!(all.contains("deploy now"), "{all}");
    assert!(!all.contains("internal-db-7") && !all.contains("relay-internal-9"), "{all}");
    assert!(
        all.contains(".env") && all.contains("private"),
        "the access itself is recorded: {all}"
    );
}

#[test]
fn hooks_of_runs_agent_memory_started_itself_record_nothing() {
    let home = home();
    let body = payload(
        "s-self",
        "UserPromptSubmit",
        "/tmp",
        serde_json::json!({"prompt": "distil these events please"}),
    );
    let out = agent_memory_testkit::run_with_stdin(
        home.cmd()
            .args(["hook", "--agent", "claude-code", "--event", "UserPromptSubmit"])
            .env("AGENT_MEMORY_DISABLE", "1"),
        &body,
    );
    assert_quiet_success(&out);
    assert!(!home.db_path().exists(), "nothing was opened or written");
}

/// `hook --help` answers a person; a hook command line with a typo still never fails an agent.
#[test]
fn hook_help_is_printed_and_a_mistyped_hook_still_succeeds() {
    let home = crate::home();
    let help = home.ok(&["hook", "--help"]);
    assert!(help.contains("Usage: agent-memory hook") && help.contains("--agent"), "{help}");
    assert!(!help.contains("parse_fast") && !help.contains("[default: ]"), "{help}");
    let out = home.run(&["hook", "--agnt", "codex"], b"{}");
    assert!(out.status.success() && out.stdout.is_empty() && out.stderr.is_empty());
}
