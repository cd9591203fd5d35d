//! `agent-memory status`: counts per agent and project, open sessions, hook outcomes and error
//! rate, filter counters, spool depth.

use crate::{assert_quiet_success, home, payload};

#[test]
fn status_reports_what_happened() {
    let home = home();
    let send = |agent: &str, event: &str, session: &str, extra: serde_json::Value| {
        assert_quiet_success(&home.hook(agent, event, &payload(session, event, "/tmp", extra)));
    };
    send("claude-code", "SessionStart", "a", serde_json::json!({"source": "startup"}));
    send(
        "claude-code",
        "UserPromptSubmit",
        "a",
        serde_json::json!({"prompt": "find the slow query in reports"}),
    );
    send("claude-code", "UserPromptSubmit", "a", serde_json::json!({"prompt": "ok"}));
    send(
        "claude-code",
        "UserPromptSubmit",
        "a",
        serde_json::json!({"prompt": "find the slow query in reports"}),
    );
    send(
        "claude-code",
        "PostToolUse",
        "a",
        serde_json::json!({"tool_name": "TodoWrite", "tool_input": {"todos": []}, "tool_response": "ok"}),
    );
    send(
        "claude-code",
        "PreToolUse",
        "a",
        serde_json::json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
    );
    send("codex", "SessionStart", "b", serde_json::json!({"source": "startup"}));
    send("codex", "SessionEnd", "b", serde_json::json!({"reason": "other"}));
    assert_quiet_success(&home.hook("codex", "Stop", b"not json"));

    let status = home.json(&["status"]);
    assert_eq!(status["events"], 4, "{status:#}");
    assert_eq!(status["sessions"], 2);
    assert_eq!(status["open_sessions"], 1, "codex's session ended");
    let agents = status["agents"].as_array().expect("agents");
    assert_eq!(agents[0]["agent"], "claude-code");
    assert_eq!(agents[0]["events"], 2);
    let day = &status["hooks"][0];
    assert_eq!(day["window"], "24h");
    assert_eq!(day["runs"], 9);
    assert_eq!(day["outcomes"]["stored"], 4);
    assert_eq!(day["outcomes"]["skipped"], 1);
    assert_eq!(day["outcomes"]["invalid"], 1);
    assert_eq!(day["filtered"]["too_short"], 1);
    assert_eq!(day["filtered"]["low_value"], 1);
    assert_eq!(day["filtered"]["near_duplicate"], 1);
    let rate = day["error_rate"].as_f64().expect("rate");
    assert!((rate - 1.0 / 9.0).abs() < 1e-9, "{rate}");
    assert_eq!(status["spool"]["records"], 0);
    assert_eq!(status["hooks"][1]["window"], "7d");

    let text = home.ok(&["status"]);
    for needle in ["claude-code", "codex", "near_duplicate 1", "hooks 24h", "spool"] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
}
