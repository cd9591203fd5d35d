//! The architecture's promises that a test can check: the paths ARCHITECTURE.md names exist,
//! and core's dependency tree holds no async runtime, no HTTP and no sockets; and the READMEs
//! open with what a new user does first.

use std::path::Path;

#[test]
fn architecture_md_names_only_real_paths() {
    let root = agent_memory_testkit::workspace_root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut checked = 0;
    for (i, part) in text.split('`').enumerate() {
        // Odd parts are inside backticks; paths contain a slash or a dot-file extension.
        let looks_like_path = i % 2 == 1
            && !part.contains(' ')
            && (part.starts_with("crates/")
                || part.starts_with("scripts/")
                || part.starts_with("bench/")
                || part.starts_with(".ci/"));
        if looks_like_path {
            let path = part.trim_end_matches('/');
            assert!(
                root.join(path).exists() || Path::new(path).exists(),
                "ARCHITECTURE.md names {path}, which does not exist"
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "ARCHITECTURE.md should map the code ({checked} paths found)");
}

#[test]
fn core_depends_on_no_runtime_or_network_crate() {
    let deps = agent_memory_testkit::locked_dependencies("agent-memory-core");
    assert!(deps.contains("rusqlite"), "the lockfile is read: {deps:?}");
    let banned = [
        "tokio",
        "async-std",
        "smol",
        "hyper",
        "reqwest",
        "ureq",
        "axum",
        "mio",
        "rmcp",
        "tonic",
        "postgres",
        "tokio-postgres",
        "agent-memory-team",
    ];
    for name in banned {
        assert!(!deps.contains(name), "agent-memory-core must not depend on {name}");
    }
}

/// A new user reads the quick start first: install, `agent-memory install`, restart, work,
/// then see it working; the two commands for a clone stay, and the per-agent reference lives
/// in `docs/agents.md`, not before "Using it".
#[test]
fn readmes_open_with_the_quick_start() {
    let root = agent_memory_testkit::workspace_root();
    for (file, heading) in [("README.md", "## Quick start"), ("README.zh-CN.md", "## 快速上手")]
    {
        let text = std::fs::read_to_string(root.join(file)).expect(file);
        let first = text.lines().find(|l| l.starts_with("## ")).unwrap_or_default();
        assert_eq!(first, heading, "{file} must open with its quick start");
        let quick = text.split("\n## ").nth(1).unwrap_or_default();
        let steps = ["./scripts/install", "agent-memory install", "agent-memory status"];
        let mut at = 0;
        for step in steps.into_iter().chain(["agent-memory search", "agent-memory serve"]) {
            let found = quick[at..].find(step).map(|i| i + at);
            at = found.unwrap_or_else(|| panic!("{file}'s quick start lacks {step} in order"));
        }
        assert!(text.contains("./scripts/test"), "{file} keeps the whole test suite's command");
    }
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    assert!(!readme.contains("\"hooks\": {"), "the per-agent JSON belongs in docs/agents.md");
    let agents = std::fs::read_to_string(root.join("docs/agents.md")).expect("docs/agents.md");
    for name in ["Claude Code", "Codex CLI", "Gemini CLI", "Copilot CLI", "OpenCode", "Hermes"] {
        assert!(agents.contains(name), "docs/agents.md describes {name}");
    }
}

/// The Chinese README shows the same commands and names the same files as the English one:
/// every `agent-memory <command> [<subcommand>]` that opens a line of a code block, and every
/// file or folder of "Where things live".
#[test]
fn the_two_readmes_list_the_same_commands_and_files() {
    let root = agent_memory_testkit::workspace_root();
    let read = |file: &str| std::fs::read_to_string(root.join(file)).expect(file);
    let commands = |text: &str| {
        let mut found = std::collections::BTreeSet::new();
        let mut in_code = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_code = !in_code;
                continue;
            }
            let Some(rest) = line.strip_prefix("agent-memory ").filter(|_| in_code) else {
                continue;
            };
            let words: Vec<&str> = rest
                .split_whitespace()
                .take(2)
                .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
                .filter(|w| !w.starts_with("--"))
                .collect();
            // A line of output (`agent-memory serve: listening …`) names no command.
            if !words.is_empty() {
                found.insert(words.join(" "));
            }
        }
        found
    };
    let files = |text: &str, heading: &str| {
        let section = text.split(heading).nth(1).unwrap_or_default();
        let section = section.split("\n## ").next().unwrap_or_default();
        section
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| s.ends_with('/') || s.contains('.') && !s.contains(' '))
            .map(str::to_owned)
            .collect::<std::collections::BTreeSet<_>>()
    };
    let (en, zh) = (read("README.md"), read("README.zh-CN.md"));
    assert_eq!(commands(&en), commands(&zh), "README.zh-CN.md shows other commands");
    assert!(commands(&en).len() > 20, "{:?}", commands(&en));
    assert_eq!(
        files(&en, "## Where things live"),
        files(&zh, "## 文件位置"),
        "README.zh-CN.md names other files"
    );
}

#[test]
fn the_hook_path_never_names_the_team_client() {
    // Team sync opens sockets and runs the client's runtime: the hook's own modules and core
    // must not reach it, so a hook never syncs.
    let root = agent_memory_testkit::workspace_root();
    for file in ["crates/agent-memory/src/cmd/hook.rs", "crates/agent-memory-core/src/hook.rs"] {
        let text = std::fs::read_to_string(root.join(file)).expect("source");
        assert!(!text.contains("agent_memory_team"), "{file} must not call team sync");
    }
}
