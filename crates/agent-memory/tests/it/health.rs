//! The health check and its timer, through the real binary: `doctor --health` passes on a
//! healthy store, trips on a spool over its limit and on a hook error rate over its limit (a
//! non-zero exit, the fix named, a note in the vault's inbox), and `install --schedule` adds a
//! daily timer that `uninstall` removes exactly, in a temporary HOME.

use std::path::Path;

use serde_json::{Value, json};

use crate::{assert_quiet_success, home, hook_while_locked, payload};
use agent_memory_testkit::{TestHome, describe};

#[allow(clippy::disallowed_methods)]
fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

fn prompt(text: &str) -> Vec<u8> {
    payload("h-1", "UserPromptSubmit", "/w/app", json!({ "prompt": text }))
}

fn over(report: &Value) -> Vec<String> {
    let checks = report["checks"].as_array().cloned().unwrap_or_default();
    checks
        .iter()
        .filter(|c| c["ok"] == false)
        .filter_map(|c| c["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn the_health_check_trips_on_the_spool_and_on_hook_errors_and_notes_it() {
    let home = home();
    let vault = home.user_home().join("vault");
    write(
        &home.home().join("config.toml"),
        &format!(
            "[vault]\npath = \"{}\"\n\n[health]\nmax_spool_events = 1\nmin_hook_runs = 1\nmax_hook_error_rate = 0.2\n",
            vault.display()
        ),
    );
    assert_quiet_success(&home.hook(
        "claude-code",
        "UserPromptSubmit",
        &prompt("wire the webhook"),
    ));
    let healthy = home.ok(&["doctor", "--health"]);
    assert!(healthy.contains("healthy: every check is within its limit"), "{healthy}");
    assert!(healthy.contains("ok    spool"), "{healthy}");

    // Two events the locked store could not take wait in the spool: over a limit of one.
    for text in ["spooled one", "spooled two"] {
        let (out, _) = hook_while_locked(&home, "claude-code", "UserPromptSubmit", &prompt(text));
        assert_quiet_success(&out);
    }
    let out = home.run(&["doctor", "--health"], b"");
    assert!(!out.status.success(), "over a limit fails: {}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("OVER  spool         2 events wait in the spool (limit 1)"), "{said}");
    assert!(said.contains("fix: `agent-memory recover` stores them"), "{said}");

    // Hooks handed what is no JSON fail; past a fifth of the day's runs, the rate trips too.
    for _ in 0..3 {
        home.hook("claude-code", "UserPromptSubmit", b"{not json");
    }
    let out = home.cmd().args(["doctor", "--health", "--json"]).output().expect("doctor");
    assert!(!out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(over(&report), ["hook errors", "spool"], "{report:#}");
    let note = vault.join("agent-memory/Inbox").join(
        report["note"].as_str().and_then(|p| Path::new(p).file_name()?.to_str()).expect("a note"),
    );
    let text = std::fs::read_to_string(&note).expect("the note in the vault's inbox");
    assert!(text.starts_with("# agent-memory health, 20"), "{text}");
    assert!(text.contains("- **over**: 2 events wait in the spool (limit 1)"), "{text}");

    // Recovered, the spool is within its limit again.
    home.ok(&["recover"]);
    let out = home.cmd().args(["doctor", "--health", "--json"]).output().expect("doctor");
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(over(&report), ["hook errors"], "{report:#}");
}

/// `install --schedule` on a machine with neither a systemd user session nor `crontab` (an
/// empty PATH): the unit files are written and the person told how to enable them.
#[test]
fn install_schedule_adds_a_daily_timer_and_uninstall_removes_exactly_it() {
    let home = home();
    let bare = home.user_home().join("bare-path");
    std::fs::create_dir_all(&bare).expect("an empty PATH");
    let run = |home: &TestHome, args: &[&str]| {
        let out = home.cmd().args(args).env("PATH", &bare).output().expect("runs");
        assert!(out.status.success(), "{args:?}: {}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let units = home.user_home().join(".config/systemd/user");
    let would = run(&home, &["install", "--schedule", "--dry-run"]);
    assert!(would.contains("would write"), "{would}");
    assert!(!units.exists(), "a dry run writes nothing");

    let said = run(&home, &["install", "--schedule", "--no-import-history"]);
    assert!(said.contains("systemctl --user enable --now agent-memory-health.timer"), "{said}");
    let service =
        std::fs::read_to_string(units.join("agent-memory-health.service")).expect("service");
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_agent-memory")).expect("the binary");
    assert!(service.contains(&format!("ExecStart={} doctor --health", bin.display())), "{service}");
    let timer = std::fs::read_to_string(units.join("agent-memory-health.timer")).expect("timer");
    assert!(timer.contains("OnCalendar=daily") && timer.contains("Persistent=true"), "{timer}");
    // Again: nothing to change.
    let again = run(&home, &["install", "--schedule", "--no-import-history"]);
    assert!(!again.contains("wrote"), "{again}");

    let removed = run(&home, &["uninstall"]);
    assert!(
        removed.contains("removed") && removed.contains("agent-memory-health.timer"),
        "{removed}"
    );
    let left: Vec<_> = std::fs::read_dir(&units).expect("units dir").flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}
