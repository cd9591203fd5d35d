//! `agent-memory install` / `uninstall` on real files under a temp HOME: users' own settings
//! survive, a second install changes nothing, `--dry-run` only prints, uninstall gives back the
//! original bytes, a broken file stops only its agent, and the hook install wrote really runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agent_memory_testkit::{TestHome, describe};

use crate::{count, home};

const CLAUDE_SETTINGS: &str = r#"{
  "model": "opus",
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/log-bash.sh",
            "timeout": 10
          }
        ]
      }
    ]
  }
}
"#;

const CLAUDE_JSON: &str = r#"{
  "numStartups": 12,
  "mcpServers": {
    "mem": {
      "type": "stdio",
      "command": "python3",
      "args": [
        "server.py"
      ],
      "env": {}
    }
  },
  "projects": {}
}
"#;

const CODEX_CONFIG: &str = r#"# Codex, tuned by hand
model = "gpt-5"  # keep this one

[mcp_servers.docs]
command = "docs-server"
args = ["--stdio"]
"#;

const GEMINI_SETTINGS: &str = r#"{
    "theme": "GitHub",
    "mcpServers": {
        "github": {
            "httpUrl": "https://example.invalid/mcp"
        }
    }
}
"#;

/// A home holding the three agents' configs with the user's own content.
fn with_configs() -> TestHome {
    let home = home();
    let h = home.user_home();
    for (path, text) in [
        (".claude/settings.json", CLAUDE_SETTINGS),
        (".claude.json", CLAUDE_JSON),
        (".codex/config.toml", CODEX_CONFIG),
        (".gemini/settings.json", GEMINI_SETTINGS),
    ] {
        put(&h.join(path), text);
    }
    home
}

pub(crate) fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    // A test fixture, not a file a user owns.
    #[allow(clippy::disallowed_methods)]
    std::fs::write(path, text).expect("write fixture");
}

/// Every file under the fake HOME but agent-memory's own home, with its bytes.
fn snapshot(home: &TestHome) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, skip: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("ls").flatten() {
            let path = entry.path();
            if path == skip || path.ends_with("tmp") {
                continue;
            }
            if path.is_dir() {
                walk(&path, skip, out);
            } else {
                out.insert(path.clone(), std::fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(home.user_home(), &home.home(), &mut out);
    out
}

/// Runs the binary with no agent on PATH and no CODEX_HOME or HERMES_HOME, so only the fake
/// HOME counts.
fn run(home: &TestHome, args: &[&str]) -> Output {
    let out = home
        .cmd()
        .args(args)
        .env_remove("CODEX_HOME")
        .env_remove("HERMES_HOME")
        .env("PATH", "/nonexistent")
        .output();
    out.expect("run agent-memory")
}

fn read(home: &TestHome, path: &str) -> String {
    std::fs::read_to_string(home.user_home().join(path)).expect("read config")
}

fn json(home: &TestHome, path: &str) -> serde_json::Value {
    serde_json::from_str(&read(home, path)).expect("valid JSON")
}

#[test]
fn install_keeps_the_users_config_is_idempotent_and_uninstall_restores_every_byte() {
    let home = with_configs();
    let original = snapshot(&home);

    let dry = run(&home, &["install", "--dry-run"]);
    assert!(dry.status.success(), "{}", describe(&dry));
    let printed = String::from_utf8_lossy(&dry.stdout);
    let settings = home.user_home().join(".claude/settings.json");
    assert!(printed.contains(&format!("--- {}", settings.display())), "{printed}");
    assert!(printed.contains("+            \"command\": \""), "{printed}");
    assert!(printed.contains("+[mcp_servers.agent-memory]"), "{printed}");
    assert_eq!(snapshot(&home), original, "--dry-run changes nothing");

    let out = run(&home, &["install"]);
    assert!(out.status.success(), "{}", describe(&out));
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_agent-memory")).expect("binary");
    let bin = bin.to_str().expect("UTF-8 path");

    let claude = json(&home, ".claude/settings.json");
    assert_eq!(claude["model"], "opus");
    assert_eq!(claude["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "~/bin/log-bash.sh");
    assert_eq!(
        claude["hooks"]["PostToolUse"][1]["hooks"][0]["command"],
        format!("{bin} hook --agent claude-code --event PostToolUse")
    );
    assert_eq!(claude["hooks"]["PreToolUse"][0]["matcher"], "Read");
    let events: Vec<&String> = claude["hooks"].as_object().expect("hooks").keys().collect();
    assert_eq!(events.len(), 8, "{events:?}");
    let claude_json = json(&home, ".claude.json");
    assert_eq!(claude_json["mcpServers"]["mem"]["command"], "python3");
    assert_eq!(claude_json["mcpServers"]["agent-memory"]["command"], bin);
    assert!(read(&home, ".claude.json").starts_with("{\n  \"numStartups\": 12,\n  \"mcpServers\""));

    let codex_hooks = json(&home, ".codex/hooks.json");
    assert_eq!(codex_hooks["hooks"].as_object().expect("hooks").len(), 5);
    let config = read(&home, ".codex/config.toml");
    assert!(config.starts_with(CODEX_CONFIG.trim_end()), "comments stay:\n{config}");
    let hooks_path = home.user_home().join(".codex/hooks.json");
    assert!(config.contains(&format!("[hooks.state.\"{}:stop:0:0\"]", hooks_path.display())));
    assert_eq!(config.matches("trusted_hash = \"sha256:").count(), 5, "{config}");

    let gemini = json(&home, ".gemini/settings.json");
    assert_eq!(gemini["hooksConfig"]["enabled"], true);
    assert_eq!(gemini["hooks"]["AfterTool"][0]["hooks"][0]["timeout"], 5000);
    assert_eq!(gemini["mcpServers"]["github"]["httpUrl"], "https://example.invalid/mcp");
    assert!(read(&home, ".gemini/settings.json").starts_with("{\n    \"theme\""), "indent kept");
    for kept in
        [".claude/settings.json", ".claude.json", ".codex/config.toml", ".gemini/settings.json"]
    {
        let backup = home.user_home().join(format!("{kept}.agent-memory.bak"));
        assert_eq!(std::fs::read(&backup).expect("backup"), original[&home.user_home().join(kept)]);
    }

    let installed = snapshot(&home);
    let again = run(&home, &["install"]);
    assert!(again.status.success(), "{}", describe(&again));
    let said = String::from_utf8_lossy(&again.stdout);
    assert_eq!(said.lines().count(), 5, "{said}");
    assert!(said.lines().all(|l| l.contains("up to date")), "{said}");
    assert_eq!(snapshot(&home), installed, "a second install changes nothing");

    let out = run(&home, &["uninstall"]);
    assert!(out.status.success(), "{}", describe(&out));
    let mut after = snapshot(&home);
    after.retain(|path, _| !path.to_string_lossy().ends_with(".agent-memory.bak"));
    assert_eq!(after, original, "uninstall gives back the original bytes, and no hooks.json");
}

#[test]
fn a_broken_config_is_left_alone_and_the_other_agents_are_installed() {
    let home = with_configs();
    let broken = "{\n  \"numStartups\": 12,\n  \"mcpServers\": {\n}\n";
    put(&home.user_home().join(".claude.json"), broken);
    let out = run(&home, &["install"]);
    assert!(!out.status.success(), "a broken file fails the run:\n{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let path = home.user_home().join(".claude.json");
    assert!(
        stderr.contains(&format!("claude-code: {} is not valid JSON (line", path.display())),
        "{stderr}"
    );
    assert!(stderr.contains("could not install for claude-code"), "{stderr}");
    assert_eq!(read(&home, ".claude.json"), broken, "never overwritten");
    assert_eq!(read(&home, ".claude/settings.json"), CLAUDE_SETTINGS, "its agent is left whole");
    assert!(!home.user_home().join(".claude.json.agent-memory.bak").exists());
    assert_eq!(json(&home, ".gemini/settings.json")["hooksConfig"]["enabled"], true);
    assert!(read(&home, ".codex/config.toml").contains("[mcp_servers.agent-memory]"));
}

#[test]
fn project_level_install_skips_codex_and_says_so() {
    let home = home();
    let project = home.user_home().join("proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let flag = format!("--project={}", project.to_str().expect("utf-8"));
    let out = run(&home, &["install", &flag, "claude-code", "codex", "gemini"]);
    assert!(out.status.success(), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("codex        has no project-level configuration"), "{said}");
    let settings = json(&home, "proj/.claude/settings.json");
    assert!(settings["hooks"]["SessionStart"].is_array());
    assert_eq!(json(&home, "proj/.mcp.json")["mcpServers"]["agent-memory"]["args"][0], "mcp");
    assert!(json(&home, "proj/.gemini/settings.json")["hooks"]["BeforeAgent"].is_array());
    assert!(!home.user_home().join(".codex").exists());

    // A bare --project is the current directory, and the words after it stay agent names.
    let out = home
        .cmd()
        .current_dir(&project)
        .args(["install", "--project", "gemini", "--dry-run"])
        .env_remove("CODEX_HOME")
        .env("PATH", "/nonexistent")
        .output()
        .expect("install");
    assert!(out.status.success(), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("up to date"), "{}", describe(&out));
}

#[test]
fn unknown_agent_is_an_error_naming_the_choices() {
    let home = home();
    let out = run(&home, &["install", "cursor"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown agent `cursor`; choose"));
}

#[test]
fn the_hook_install_wrote_runs_as_claude_code_would_run_it() {
    let home = with_configs();
    let out = run(&home, &["install", "claude-code"]);
    assert!(out.status.success(), "{}", describe(&out));
    let settings = json(&home, ".claude/settings.json");
    let command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .expect("command string")
        .to_owned();
    let sample = agent_memory_testkit::samples("claude-code")
        .into_iter()
        .find(|s| s.file == "SessionStart.json")
        .expect("SessionStart sample");
    // Claude Code runs the command string through a shell, with the user's environment.
    let mut shell = Command::new("/bin/sh");
    shell.arg("-c").arg(&command);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("AGENT_MEMORY_") {
            shell.env_remove(key);
        }
    }
    shell
        .env("HOME", home.user_home())
        .env("AGENT_MEMORY_HOME", home.home())
        .env("AGENT_MEMORY_DISTIL__AUTO_WORK", "false")
        .current_dir(home.user_home());
    let out = agent_memory_testkit::run_with_stdin(&mut shell, &sample.bytes);
    assert!(out.status.success(), "{command}\n{}", describe(&out));
    assert_eq!(count(&home, "SELECT count(*) FROM events WHERE agent = 'claude-code'"), 1);
}

const HERMES_CONFIG: &str = "# Hermes, by hand\nmodel:\n  default: gpt-5   # fast\n\nmemory:\n  provider: honcho  # was trying it\n  memory_enabled: true\n\nmcp_servers:\n  github:\n    command: gh-mcp\n";

#[test]
fn hermes_gets_the_provider_and_uninstall_restores_its_config() {
    let home = home();
    put(&home.user_home().join(".hermes/config.yaml"), HERMES_CONFIG);
    let original = snapshot(&home);

    // Found by its directory alone.
    let out = run(&home, &["install"]);
    assert!(out.status.success(), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.lines().all(|l| l.starts_with("hermes ")), "{said}");
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_agent-memory")).expect("binary");
    let bin = bin.to_str().expect("UTF-8 path");
    let plugin = home.user_home().join(".hermes/plugins/agent-memory");
    let init = std::fs::read_to_string(plugin.join("__init__.py")).expect("provider");
    assert!(init.contains("MemoryProvider") && init.contains("def register(ctx)"));
    let config: serde_json::Value =
        serde_json::from_str(&read(&home, ".hermes/plugins/agent-memory/config.json"))
            .expect("config.json");
    assert_eq!(config["bin"], bin);
    let yaml = read(&home, ".hermes/config.yaml");
    assert!(
        yaml.starts_with(
            "# Hermes, by hand\nmodel:\n  default: gpt-5   # fast\n\nmemory:\n  provider: agent-memory  # agent-memory replaced:   provider: honcho  # was trying it\n"
        ),
        "{yaml}"
    );
    assert!(
        yaml.ends_with(&format!(
            "  github:\n    command: gh-mcp\n  agent-memory:\n    command: \"{bin}\"\n    args: [\"mcp\"]\n"
        )),
        "{yaml}"
    );

    let installed = snapshot(&home);
    let again = run(&home, &["install", "hermes"]);
    assert!(again.status.success(), "{}", describe(&again));
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(said.lines().count() == 4 && said.lines().all(|l| l.contains("up to date")), "{said}");
    assert_eq!(snapshot(&home), installed, "a second install changes nothing");

    // Hermes compiles the provider beside itself; uninstall takes that away too.
    put(&plugin.join("__pycache__/__init__.cpython-311.pyc"), "bytecode");
    let out = run(&home, &["uninstall", "hermes"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(!plugin.exists(), "the plugin directory is gone");
    let mut after = snapshot(&home);
    after.retain(|path, _| !path.to_string_lossy().ends_with(".agent-memory.bak"));
    assert_eq!(after, original, "uninstall gives back the original bytes");
}

#[test]
fn hermes_yaml_it_cannot_edit_is_left_alone() {
    let home = home();
    let flow = "memory: {provider: honcho}\n";
    put(&home.user_home().join(".hermes/config.yaml"), flow);
    let out = run(&home, &["install", "hermes"]);
    assert!(!out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let path = home.user_home().join(".hermes/config.yaml");
    assert!(
        stderr.contains(&format!("hermes: {} line 1: `memory` is written inline", path.display())),
        "{stderr}"
    );
    assert_eq!(read(&home, ".hermes/config.yaml"), flow, "never overwritten");
    assert!(!home.user_home().join(".hermes/plugins").exists(), "nothing else installed");
}
