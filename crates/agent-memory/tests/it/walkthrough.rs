//! A new user's first hour, through the real binary in a clean home: `status` says how to
//! start, `install` wires a fake agent config, one agent's session goes through the wired hook
//! command, `work` distils it, another agent finds it (search, and its session-start briefing),
//! and `status` counts what is there.

use serde_json::{Value, json};

use crate::{home, payload};

#[test]
fn install_capture_work_and_find_it_from_another_agent() {
    let home = home();
    for dir in [".claude", ".codex"] {
        std::fs::create_dir_all(home.user_home().join(dir)).expect("mkdir");
    }
    let run = |args: &[&str]| {
        home.cmd().args(args).env("PATH", "/nonexistent").output().expect("run agent-memory")
    };

    // A fresh home: status points at install.
    let fresh = String::from_utf8_lossy(&run(&["status"]).stdout).into_owned();
    assert!(fresh.contains("run `agent-memory install`"), "{fresh}");

    // install wires both agents found.
    let out = run(&["install"]);
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let installed = String::from_utf8_lossy(&out.stdout);
    assert!(installed.contains("claude-code") && installed.contains("codex"), "{installed}");

    // Claude Code runs the command install wrote, as it would, for a session start.
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(home.user_home().join(".claude/settings.json")).expect("read"),
    )
    .expect("settings are JSON");
    let command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .expect("a SessionStart hook command")
        .to_owned();
    let start = payload("walk-1", "SessionStart", "/w/app", json!({"source": "startup"}));
    let out = agent_memory_testkit::run_with_stdin(
        std::process::Command::new("sh")
            .args(["-c", &command])
            .envs(home.cmd().get_envs().filter_map(|(k, v)| Some((k, v?)))),
        &start,
    );
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));

    // The rest of the session, then a work pass.
    crate::distil::bug_fix_session(&home, "walk-1", true);
    let report = home.json(&["work"]);
    assert!(report["observations"].as_i64() >= Some(1), "{report}");

    // Codex, in the same project: search finds Claude Code's fix, and its briefing has it.
    let hits = home.json(&["search", "parser", "--project", "/w/app"]);
    let found: Vec<(&str, &str)> = hits["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| (h["kind"].as_str().unwrap_or(""), h["agent"].as_str().unwrap_or("")))
        .collect();
    assert!(found.contains(&("observation", "claude-code")), "{hits:#}");
    let codex_start = payload("codex-1", "SessionStart", "/w/app", json!({"source": "startup"}));
    let out = home.hook("codex", "SessionStart", &codex_start);
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(answer.contains("Fixed the parser") && answer.contains("claude-code"), "{answer}");

    // status counts it all.
    let status = home.json(&["status"]);
    assert!(status["observations"].as_i64() >= Some(1), "{status:#}");
    assert_eq!(status["summaries"], 1, "{status:#}");
    assert!(status["last_work_pass_ms"].as_i64().is_some(), "{status:#}");
    assert_eq!(status["serve"], Value::Null, "{status:#}");
    let text = String::from_utf8_lossy(&run(&["status"]).stdout).into_owned();
    for needle in ["distilled  ", "1 summary", "last work pass", "claude-code", "codex"] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    assert!(!text.contains("nothing captured yet"), "{text}");
}
