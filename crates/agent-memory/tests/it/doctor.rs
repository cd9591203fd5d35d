//! `agent-memory doctor` on real configs under a temp HOME: what it reports before and after
//! install, a Codex hook whose trust hash went stale, hooks that run a binary that is gone,
//! recent hook errors; every failure with its fix, and the user's store left alone.

use std::path::Path;
use std::process::Output;

use agent_memory_testkit::{TestHome, describe};
use serde_json::Value;

use crate::home;

/// `HOME` with the three agents' config directories, as a machine that has them.
fn with_agents() -> TestHome {
    let home = home();
    for dir in [".claude", ".codex", ".gemini", ".config/opencode", ".copilot", ".hermes"] {
        std::fs::create_dir_all(home.user_home().join(dir)).expect("mkdir");
    }
    home
}

/// Runs the binary with no agent on PATH and no CODEX_HOME, so only the fake HOME counts.
fn run(home: &TestHome, bin: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = home.cmd();
    if let Some(bin) = bin {
        cmd = std::process::Command::new(bin);
        cmd.envs(home.cmd().get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(home.user_home());
    }
    for var in ["CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME", "HERMES_HOME"] {
        cmd.env_remove(var);
    }
    cmd.args(args).env("PATH", "/nonexistent").output().expect("run")
}

/// `doctor --json`: the report and whether the command succeeded.
fn doctor(home: &TestHome) -> (Value, bool) {
    let out = run(home, None, &["doctor", "--json"]);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor printed no JSON ({e}):\n{}", describe(&out)));
    (report, out.status.success())
}

/// The findings of one agent for one check.
fn findings<'a>(report: &'a Value, agent: &str, check: &str) -> Vec<&'a Value> {
    report["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter(|a| a["agent"] == agent)
        .flat_map(|a| a["findings"].as_array().expect("findings"))
        .filter(|f| f["check"] == check)
        .collect()
}

fn level<'a>(report: &'a Value, agent: &str, check: &str) -> Vec<&'a str> {
    findings(report, agent, check).iter().map(|f| f["level"].as_str().expect("level")).collect()
}

const AGENTS: [&str; 6] = ["claude-code", "codex", "gemini", "opencode", "copilot", "hermes"];

#[test]
fn before_install_every_agent_found_is_reported_unwired_with_the_command_that_fixes_it() {
    let home = with_agents();
    let (report, ok) = doctor(&home);
    assert!(!ok, "unwired agents are failures: {report:#}");
    for agent in AGENTS {
        let wiring = findings(&report, agent, "wiring");
        assert_eq!(wiring.len(), 1, "{report:#}");
        assert_eq!(wiring[0]["level"], "fail");
        assert_eq!(wiring[0]["fix"], format!("run `agent-memory install {agent}`"));
        // The binary itself works, so the round trip and the MCP server pass.
        assert_eq!(level(&report, agent, "round trip"), ["ok"], "{report:#}");
        assert_eq!(level(&report, agent, "mcp"), ["ok"], "{report:#}");
    }
    // The text form carries the same fixes.
    let out = run(&home, None, &["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAIL  wiring       not wired to agent-memory"), "{text}");
    assert!(text.contains("fix: run `agent-memory install codex`"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("doctor found 6 problems"));
}

#[test]
fn after_install_everything_passes_and_the_users_store_gets_no_synthetic_event() {
    let home = with_agents();
    // Installed as a user would: the hooks run a copy in ~/.local/bin, not a build's output.
    let out = run(&home, None, &["install", "--copy-self"]);
    assert!(out.status.success(), "{}", describe(&out));
    let (report, ok) = doctor(&home);
    assert!(ok, "{report:#}");
    for agent in AGENTS {
        for check in ["binary", "wiring", "round trip", "mcp"] {
            assert_eq!(level(&report, agent, check), ["ok"], "{agent} {check}: {report:#}");
        }
        assert_eq!(level(&report, agent, "hook errors"), ["info"], "no hook ran yet");
    }
    assert_eq!(level(&report, "codex", "trust"), ["ok"]);
    let mcp = findings(&report, "claude-code", "mcp")[0]["message"].as_str().expect("message");
    assert!(mcp.contains("search") && mcp.contains("get_observations"), "{mcp}");
    assert_eq!(crate::count(&home, "SELECT count(*) FROM events"), 0, "round trips stay out");
}

#[test]
fn a_stale_codex_trust_hash_is_named_as_the_reason_codex_skips_the_hooks() {
    let home = with_agents();
    assert!(run(&home, None, &["install", "codex"]).status.success());
    let config = home.user_home().join(".codex/config.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    let stale = text.replacen("trusted_hash = \"sha256:", "trusted_hash = \"sha256:00", 1);
    #[allow(clippy::disallowed_methods)]
    std::fs::write(&config, stale).expect("write");

    let (report, ok) = doctor(&home);
    assert!(!ok);
    let trust = findings(&report, "codex", "trust");
    assert_eq!(trust[0]["level"], "fail", "{report:#}");
    let message = trust[0]["message"].as_str().expect("message");
    assert!(message.starts_with("1 hook has no current trusted_hash"), "{message}");
    assert!(message.contains("skips it without a word"), "{message}");
    assert_eq!(
        trust[0]["fix"],
        "run `agent-memory install codex` (it writes the hash Codex computes)"
    );
    assert_eq!(level(&report, "codex", "wiring"), ["fail"], "install would change it");

    assert!(run(&home, None, &["install", "codex"]).status.success());
    let out = run(&home, None, &["doctor", "codex"]);
    assert!(out.status.success(), "install fixed it: {}", describe(&out));
}

#[test]
fn hooks_that_run_a_binary_that_is_gone_fail_with_the_reinstall_fix() {
    let home = with_agents();
    let old = home.user_home().join("old-bin/agent-memory");
    std::fs::create_dir_all(old.parent().expect("dir")).expect("mkdir");
    std::fs::copy(env!("CARGO_BIN_EXE_agent-memory"), &old).expect("copy binary");
    let out = run(&home, Some(&old), &["install", "gemini"]);
    assert!(out.status.success(), "{}", describe(&out));
    std::fs::remove_file(&old).expect("remove the old binary");

    let out = run(&home, None, &["doctor", "gemini", "--json"]);
    assert!(!out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let binary = findings(&report, "gemini", "binary");
    assert_eq!(binary.len(), 1, "{report:#}");
    assert_eq!(binary[0]["level"], "fail");
    let message = binary[0]["message"].as_str().expect("message");
    assert_eq!(message, format!("the hooks run {}, which does not exist", old.display()));
    assert!(
        binary[0]["fix"].as_str().expect("fix").starts_with("run `agent-memory install gemini`")
    );
    assert_eq!(level(&report, "gemini", "wiring"), ["fail"]);
    assert_eq!(
        findings(&report, "gemini", "wiring")[0]["message"]
            .as_str()
            .map(|m| m.starts_with("installed, but out of date in ")),
        Some(true)
    );
    assert!(findings(&report, "claude-code", "wiring").is_empty(), "only the agent named");
}

#[test]
fn recent_hook_errors_are_counted_with_where_to_look() {
    let home = with_agents();
    assert!(run(&home, None, &["install", "claude-code"]).status.success());
    let out = home.hook("claude-code", "PostToolUse", b"{not json");
    assert!(out.status.success(), "a hook always exits 0");
    let (report, _) = doctor(&home);
    let errors = findings(&report, "claude-code", "hook errors");
    assert_eq!(errors[0]["level"], "warn", "{report:#}");
    let message = errors[0]["message"].as_str().expect("message");
    assert!(
        message.starts_with("1 of 1 hook runs in the last 24 h did not reach the store"),
        "{message}"
    );
    let fix = errors[0]["fix"].as_str().expect("fix");
    assert!(fix.contains(&home.home().join("rejected").display().to_string()), "{fix}");
}

/// A broken `config.toml` locks nobody out: commands warn and go on with every setting that
/// fits, as the hooks do, and doctor fails on it with the line to fix, in plain words.
#[test]
fn a_broken_config_is_a_doctor_failure_and_a_warning_elsewhere() {
    let home = with_agents();
    std::fs::create_dir_all(home.home()).expect("mkdir");
    // A person's edit with a mistake in it, beside settings that are fine.
    agent_memory_core::fsutil::write_atomic(
        &home.home().join("config.toml"),
        b"[search]\nlimit = \"ten\"\n[capture]\ndeadline_ms = 900\n[serch]\nlimit = 3\n",
    )
    .expect("write");
    let shown = run(&home, None, &["config", "show", "--json"]);
    let shown: Value = serde_json::from_slice(&shown.stdout).expect("config show --json");
    assert_eq!(shown["capture"]["deadline_ms"], 900, "a valid setting is kept: {shown}");
    for args in [&["status"][..], &["search", "anything"], &["config", "show"], &["memories"]] {
        let out = run(&home, None, args);
        assert!(out.status.success(), "{args:?} must go on: {}", describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("warning:")
                && stderr.contains("line 2")
                && stderr.contains("`search.limit` is left out")
                && stderr.contains("`serch`")
                && stderr.contains("every other setting applies"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("usize"), "no Rust type reaches a user: {stderr}");
    }
    let (report, ok) = doctor(&home);
    assert!(!ok, "a broken config fails doctor: {report:#}");
    let config: Vec<&Value> = report["store"]
        .as_array()
        .expect("store")
        .iter()
        .filter(|f| f["check"] == "config")
        .collect();
    assert_eq!(config.len(), 1, "{report:#}");
    assert_eq!(config[0]["level"], "fail");
    let message = config[0]["message"].as_str().expect("message");
    assert!(message.contains("line 2: the text \"ten\" where a whole number"), "{message}");
    assert!(config[0]["fix"].as_str().expect("fix").contains("config default"), "{config:?}");
}
