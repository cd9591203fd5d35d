//! The command line as a user meets it: the help lists commands in the order a new user needs
//! them, and every command's help is there.

use crate::home;

#[test]
fn help_lists_what_a_new_user_needs_first_and_internal_commands_last() {
    let home = home();
    let help = home.ok(&["--help"]);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(commands[..6], ["install", "status", "search", "show", "timeline", "brief"]);
    let tail = &commands[commands.len() - 3..];
    assert_eq!(tail, ["mcp", "hook", "help"], "{commands:?}");
    for args in [&["hook", "--help"][..], &["help", "hook"]] {
        let text = home.ok(args);
        assert!(text.contains("Usage: agent-memory hook"), "{args:?}: {text}");
        assert!(!text.contains("[default: ]") && !text.contains("parse_fast"), "{text}");
    }
}

/// Flags work the way they read: `--project DIR` with a space, `--project AGENT` still an
/// agent, `--json` documented and taken by install, `forget` several ids like `show`, shell
/// completions, and `--color`.
#[test]
fn flags_are_consistent() {
    let home = home();
    std::fs::create_dir_all(home.user_home().join(".claude")).expect("mkdir");
    let project = home.user_home().join("proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let run = |args: &[&str]| {
        home.cmd().args(args).env("PATH", "/nonexistent").output().expect("run agent-memory")
    };

    let out = run(&["install", "--project", project.to_str().expect("utf-8"), "claude-code"]);
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    assert!(project.join(".claude/settings.json").is_file(), "--project DIR with a space");

    // `--project claude-code`: the current directory's project, for the agent named.
    let out = run(&["install", "--project", "claude-code", "--json"]);
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("install --json");
    let paths: Vec<&str> = report["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    let here = home.user_home().join(".claude/settings.json");
    assert!(paths.contains(&here.to_str().expect("utf-8")), "{report:#}");
    assert!(report["binary"].as_str().is_some_and(|b| !b.is_empty()), "{report:#}");

    // Every --json flag says what it does.
    let help = home.ok(&["search", "--help"]);
    assert!(help.contains("--json") && help.contains("docs/json.md"), "{help}");

    // forget takes several ids, checks them all first.
    let ids: Vec<String> = ["Tabs are four spaces", "Commits are one line"]
        .iter()
        .map(|text| {
            let out = home.json(&["remember", text, "--project", project.to_str().expect("utf-8")]);
            format!("m{}", out["id"])
        })
        .collect();
    let out = run(&["forget", &ids[0], "m999"]);
    assert!(!out.status.success(), "a missing id changes nothing");
    let forgot = home.json(&["forget", &ids[0], &ids[1]]);
    assert_eq!(forgot.as_array().map(Vec::len), Some(2), "{forgot}");
    assert!(forgot.as_array().expect("list").iter().all(|m| m["status"] == "forgotten"));

    for shell in ["bash", "zsh", "fish"] {
        let script = home.ok(&["completions", shell]);
        assert!(script.contains("agent-memory") && script.contains("install"), "{shell}");
    }
    let plain = home.run(&["--color", "never", "search", "--no-such-flag"], b"");
    assert!(!String::from_utf8_lossy(&plain.stderr).contains('\u{1b}'), "no escape codes");
    let colored = home.run(&["--color=always", "search", "--no-such-flag"], b"");
    assert!(String::from_utf8_lossy(&colored.stderr).contains('\u{1b}'), "escape codes");
}

/// The commands that answered only in text take `--json` too, each with one documented shape.
#[test]
fn every_command_that_answers_takes_json() {
    let home = home();
    let config = home.json(&["config", "show"]);
    assert!(config["search"]["limit"].is_number(), "{config}");
    let brief = home.json(&["brief"]);
    assert!(brief["project"].is_string() && brief["markdown"].is_null(), "{brief}");
    let mode = home.json(&["mode", "use", "code"]);
    assert_eq!((&mode["mode"], &mode["changed"]), (&"code".into(), &true.into()), "{mode}");
    home.ok(&["remember", "Releases are tagged on main", "--global"]);
    let file = home.user_home().join("team.pack");
    let built = home.json(&["pack", "build", file.to_str().expect("utf-8"), "--global"]);
    assert_eq!((&built["action"], &built["memories"]), (&"built".into(), &1.into()), "{built}");
    let added = home.json(&["pack", "add", file.to_str().expect("utf-8"), "--name", "team"]);
    assert_eq!(added["already_known"], 1, "{added}");
}

/// `review --approve/--reject/--edit --json` answer with the memory they changed.
#[test]
fn review_decisions_answer_in_json_when_asked() {
    let home = home();
    let dir = home.user_home().join("proj");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let id =
        home.json(&["remember", "Tabs are four spaces", "--project", dir.to_str().expect("utf-8")])
            ["id"]
            .clone();
    let id = format!("m{id}");
    let edited = home.json(&["review", "--edit", &id, "--importance", "9"]);
    assert_eq!(edited["importance"], 9, "{edited}");
    let out = home.run(&["review", "--approve", &id, "--json"], b"");
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON either way");
    // An active memory is no candidate: the refusal is JSON too.
    assert_eq!(body["error"]["code"], "conflict", "{body}");
}
