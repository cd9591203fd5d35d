//! `agent-memory install` / `uninstall` on real files under a temp HOME: users' own settings
//! survive, a second install changes nothing, `--dry-run` only prints, uninstall gives back the
//! original bytes, a broken file stops only its agent, and the hook install wrote really runs.
//! OpenCode and Copilot CLI get files of our own (a plugin, a hooks file) beside the user's.

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
        .env_remove("COPILOT_HOME")
        .env_remove("XDG_CONFIG_HOME")
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

/// The lines of an install's output about files, without the summary that ends it.
fn file_lines(said: &str) -> Vec<&str> {
    let summary = ["wired ", "Next: ", "nothing to change ", "removed agent-memory ", "dry run "];
    said.lines().filter(|l| !summary.iter().any(|s| l.starts_with(s))).collect()
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
    // The summary comes first, and a file that does not exist yet would be created.
    let first = printed.lines().next().unwrap_or_default();
    assert!(first.starts_with("dry run for ") && first.contains("nothing is written"), "{first}");
    assert!(printed.contains(" would create "), "{printed}");
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

    // Claude Code and Codex read skills: each gets the one that teaches search → timeline →
    // get and the review commands, the project report and the mode creator, where it looks
    // for its user's skills.
    for skill in [".claude/skills/agent-memory/SKILL.md", ".agents/skills/agent-memory/SKILL.md"] {
        let text = read(&home, skill);
        assert!(text.starts_with("---\nname: agent-memory\ndescription: "), "{skill}: {text}");
        for step in ["search", "timeline", "get_observations", "review --approve"] {
            assert!(text.contains(step), "{skill} teaches {step}");
        }
    }
    for dir in [".claude/skills", ".agents/skills"] {
        let report = read(&home, &format!("{dir}/agent-memory-report/SKILL.md"));
        assert!(report.starts_with("---\nname: agent-memory-report\n"), "{report}");
        assert!(report.contains("agent-memory report --project . --since 12w"), "{report}");
        let mode = read(&home, &format!("{dir}/agent-memory-mode/SKILL.md"));
        assert!(mode.starts_with("---\nname: agent-memory-mode\n"), "{mode}");
        assert!(mode.contains("agent-memory mode show NAME"), "{mode}");
    }

    let installed = snapshot(&home);
    let again = run(&home, &["install"]);
    assert!(again.status.success(), "{}", describe(&again));
    let said = String::from_utf8_lossy(&again.stdout);
    assert_eq!(file_lines(&said).len(), 11, "{said}");
    assert!(file_lines(&said).iter().all(|l| l.contains("up to date")), "{said}");
    assert!(said.trim_end().ends_with("checks that it works."), "ends with what to do: {said}");
    assert_eq!(snapshot(&home), installed, "a second install changes nothing");

    let out = run(&home, &["uninstall"]);
    assert!(out.status.success(), "{}", describe(&out));
    for skill in ["agent-memory", "agent-memory-report", "agent-memory-mode"] {
        assert!(
            !home.user_home().join(".claude/skills").join(skill).exists(),
            "the skill's folder goes: {skill}"
        );
    }
    let mut after = snapshot(&home);
    after.retain(|path, _| !path.to_string_lossy().ends_with(".agent-memory.bak"));
    assert_eq!(after, original, "uninstall gives back the original bytes, and no hooks.json");
}

/// A config the user keeps as a link into their dotfiles stays a link: install and uninstall
/// write the file it names.
#[cfg(unix)]
#[test]
fn a_config_linked_into_dotfiles_is_written_through_the_link() {
    let home = with_configs();
    let h = home.user_home();
    let real = h.join("dotfiles/gemini-settings.json");
    put(&real, GEMINI_SETTINGS);
    let link = h.join(".gemini/settings.json");
    std::fs::remove_file(&link).expect("rm");
    std::os::unix::fs::symlink(&real, &link).expect("link");
    let out = run(&home, &["install", "gemini"]);
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    assert!(std::fs::symlink_metadata(&link).expect("link").file_type().is_symlink());
    let written = std::fs::read_to_string(&real).expect("read");
    assert!(written.contains("agent-memory"), "{written}");
    let out = run(&home, &["uninstall", "gemini"]);
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    assert!(std::fs::symlink_metadata(&link).expect("link").file_type().is_symlink());
    assert!(!std::fs::read_to_string(&real).expect("read").contains("agent-memory hook"));
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
        .env_remove("XDG_CONFIG_HOME")
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

/// Runs a hook command line install wrote through `shell -c`, in the user's environment with
/// this home's store, with `stdin`; it must succeed.
#[track_caller]
fn run_as_agent_would(home: &TestHome, shell: &str, command: &str, stdin: &[u8]) {
    let mut shell = Command::new(shell);
    shell.arg("-c").arg(command);
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
    let out = agent_memory_testkit::run_with_stdin(&mut shell, stdin);
    assert!(out.status.success(), "{command}\n{}", describe(&out));
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
    run_as_agent_would(&home, "/bin/sh", &command, &sample.bytes);
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
    assert!(file_lines(&said).iter().all(|l| l.starts_with("hermes ")), "{said}");
    assert!(said.contains("wired 1 agent (hermes)") && said.contains("Next: restart"), "{said}");
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
    let files = file_lines(&said);
    assert!(files.len() == 4 && files.iter().all(|l| l.contains("up to date")), "{said}");
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

const OPENCODE_JSON: &str = r#"{
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "docs": {
      "type": "remote",
      "url": "https://example.invalid/mcp",
      "enabled": true
    }
  }
}
"#;

const COPILOT_MCP: &str = r#"{
    "mcpServers": {
        "docs": {
            "type": "local",
            "command": "docs-server",
            "args": [],
            "tools": ["*"]
        }
    }
}"#;

const COPILOT_USER_HOOKS: &str =
    r#"{"version":1,"hooks":{"sessionStart":[{"type":"command","bash":"echo hi"}]}}"#;

/// A home holding OpenCode's and Copilot CLI's configs with the user's own content.
fn with_opencode_and_copilot() -> TestHome {
    let home = home();
    let h = home.user_home();
    put(&h.join(".config/opencode/opencode.json"), OPENCODE_JSON);
    put(&h.join(".config/opencode/plugins/mine.js"), "export const Mine = async () => ({})\n");
    put(&h.join(".copilot/mcp-config.json"), COPILOT_MCP);
    put(&h.join(".copilot/hooks/mine.json"), COPILOT_USER_HOOKS);
    home
}

fn this_binary() -> String {
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_agent-memory")).expect("binary");
    bin.to_str().expect("UTF-8 path").to_owned()
}

#[test]
fn opencode_and_copilot_get_files_of_their_own_and_uninstall_restores_every_byte() {
    let home = with_opencode_and_copilot();
    let original = snapshot(&home);
    let bin = this_binary();

    // Found by their config directories alone.
    let out = run(&home, &["install"]);
    assert!(out.status.success(), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(file_lines(&said).len(), 4, "{said}");
    assert!(
        file_lines(&said).iter().all(|l| l.starts_with("opencode ") || l.starts_with("copilot ")),
        "{said}"
    );

    let plugin = read(&home, ".config/opencode/plugins/agent-memory.js");
    assert!(plugin.contains(&format!("const BIN = {}", serde_json::json!(bin))), "{plugin}");
    assert!(plugin.contains("experimental.chat.system.transform"));
    let config = json(&home, ".config/opencode/opencode.json");
    assert_eq!(config["model"], "anthropic/claude-sonnet-4-5");
    assert_eq!(config["mcp"]["docs"]["type"], "remote");
    assert_eq!(
        config["mcp"]["agent-memory"],
        serde_json::json!({"type": "local", "command": [bin, "mcp"], "enabled": true})
    );
    assert!(
        read(&home, ".config/opencode/opencode.json")
            .starts_with("{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"model\"")
    );

    let hooks = json(&home, ".copilot/hooks/agent-memory.json");
    assert_eq!(hooks["version"], 1);
    // serde_json sorts keys; the file keeps them in the order Copilot fires them.
    let events: Vec<&String> = hooks["hooks"].as_object().expect("hooks").keys().collect();
    assert_eq!(
        events,
        ["agentStop", "postToolUse", "sessionEnd", "sessionStart", "userPromptSubmitted"]
    );
    assert_eq!(
        hooks["hooks"]["userPromptSubmitted"][0],
        serde_json::json!({
            "type": "command",
            "bash": format!("{bin} hook --agent copilot --event userPromptSubmitted"),
            "timeoutSec": 5
        })
    );
    let mcp = json(&home, ".copilot/mcp-config.json");
    assert_eq!(mcp["mcpServers"]["docs"]["command"], "docs-server");
    assert_eq!(
        mcp["mcpServers"]["agent-memory"],
        serde_json::json!({"type": "local", "command": bin, "args": ["mcp"], "tools": ["*"]})
    );
    assert_eq!(read(&home, ".copilot/hooks/mine.json"), COPILOT_USER_HOOKS);

    let installed = snapshot(&home);
    let again = run(&home, &["install", "opencode", "copilot"]);
    assert!(again.status.success(), "{}", describe(&again));
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(file_lines(&said).iter().all(|l| l.contains("up to date")), "{said}");
    assert_eq!(snapshot(&home), installed, "a second install changes nothing");

    let out = run(&home, &["uninstall", "opencode", "copilot"]);
    assert!(out.status.success(), "{}", describe(&out));
    let mut after = snapshot(&home);
    after.retain(|path, _| !path.to_string_lossy().ends_with(".agent-memory.bak"));
    assert_eq!(after, original, "uninstall gives back the original bytes, and no files of ours");
}

#[test]
fn opencode_and_copilot_project_install_and_where_their_homes_are() {
    let home = home();
    let project = home.user_home().join("proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let flag = format!("--project={}", project.to_str().expect("utf-8"));
    let out = run(&home, &["install", &flag, "opencode", "copilot"]);
    assert!(out.status.success(), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("copilot      takes only its hooks from a repository"), "{said}");
    assert!(read(&home, "proj/.opencode/plugins/agent-memory.js").contains("hook"));
    assert_eq!(json(&home, "proj/opencode.json")["mcp"]["agent-memory"]["type"], "local");
    assert!(json(&home, "proj/.github/hooks/agent-memory.json")["hooks"]["agentStop"].is_array());
    let out = run(&home, &["uninstall", &flag, "opencode", "copilot"]);
    assert!(out.status.success(), "{}", describe(&out));
    let left: Vec<PathBuf> = snapshot(&home).into_keys().collect();
    assert!(left.is_empty(), "uninstall removes every file install created: {left:?}");

    // `$XDG_CONFIG_HOME` and `$COPILOT_HOME` move the user's configs.
    let xdg = home.user_home().join("xdg");
    let copilot_home = home.user_home().join("cp");
    let out = home
        .cmd()
        .args(["install", "opencode", "copilot"])
        .env("XDG_CONFIG_HOME", &xdg)
        .env("COPILOT_HOME", &copilot_home)
        .env("PATH", "/nonexistent")
        .output()
        .expect("install");
    assert!(out.status.success(), "{}", describe(&out));
    assert!(xdg.join("opencode/plugins/agent-memory.js").is_file());
    assert!(xdg.join("opencode/opencode.json").is_file());
    assert!(copilot_home.join("hooks/agent-memory.json").is_file());
    assert!(copilot_home.join("mcp-config.json").is_file());
    assert!(
        !home.user_home().join(".config").exists() && !home.user_home().join(".copilot").exists()
    );
    // Wired for the user already: a repository's hooks would run beside those.
    let out = home
        .cmd()
        .args(["install", &flag, "copilot"])
        .env("COPILOT_HOME", &copilot_home)
        .env("PATH", "/nonexistent")
        .output()
        .expect("install");
    assert!(out.status.success(), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("so each event would run the hook twice"), "{said}");
}

#[test]
fn a_broken_opencode_config_is_left_alone_and_copilot_is_installed() {
    let home = with_opencode_and_copilot();
    let broken = "{\n  \"mcp\": {\n    \"docs\": {,\n  }\n}\n";
    put(&home.user_home().join(".config/opencode/opencode.json"), broken);
    for _ in 0..2 {
        let out = run(&home, &["install", "opencode", "copilot"]);
        assert!(!out.status.success(), "a broken file fails the run:\n{}", describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("opencode: ") && stderr.contains("is not valid JSON (line 3"),
            "{stderr}"
        );
        assert!(stderr.contains("could not install for opencode"), "{stderr}");
    }
    assert_eq!(read(&home, ".config/opencode/opencode.json"), broken, "never overwritten");
    assert!(
        !home.user_home().join(".config/opencode/plugins/agent-memory.js").exists(),
        "nothing of the agent is written when one of its files cannot be"
    );
    assert!(json(&home, ".copilot/mcp-config.json")["mcpServers"]["agent-memory"].is_object());
    put(&home.user_home().join(".copilot/mcp-config.json"), "{\"mcpServers\": [}");
    let out = run(&home, &["uninstall", "copilot"]);
    assert!(!out.status.success(), "{}", describe(&out));
    assert_eq!(read(&home, ".copilot/mcp-config.json"), "{\"mcpServers\": [}");
}

#[test]
fn the_hook_install_wrote_runs_as_copilot_would_run_it() {
    let home = home();
    let out = run(&home, &["install", "copilot"]);
    assert!(out.status.success(), "{}", describe(&out));
    let hooks = json(&home, ".copilot/hooks/agent-memory.json");
    for (event, file) in
        [("sessionStart", "sessionStart.json"), ("postToolUse", "postToolUse.json")]
    {
        let command = hooks["hooks"][event][0]["bash"].as_str().expect("bash").to_owned();
        let sample = agent_memory_testkit::samples("copilot")
            .into_iter()
            .find(|s| s.file == file)
            .expect("sample");
        // Copilot runs its `bash` entry with bash.
        run_as_agent_would(&home, "/bin/bash", &command, &sample.bytes);
    }
    let kinds = count(
        &home,
        "SELECT count(*) FROM events WHERE agent = 'copilot' AND kind IN ('session_start', 'tool_use')",
    );
    assert_eq!(kinds, 2);
}

/// The command every hook in Claude Code's settings runs.
fn hook_binaries(home: &TestHome) -> Vec<String> {
    let settings = json(home, ".claude/settings.json");
    let mut bins: Vec<String> = settings["hooks"]
        .as_object()
        .expect("hooks")
        .values()
        .flat_map(|groups| groups.as_array().cloned().unwrap_or_default())
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|hook| hook["command"].as_str().map(str::to_owned))
        .filter_map(|command| command.split_once(" hook ").map(|(bin, _)| bin.to_owned()))
        .collect();
    bins.dedup();
    bins
}

/// Run from a build directory, install wires the installed copy when there is one, copies
/// itself to ~/.local/bin when asked, and otherwise says that `cargo clean` would break the
/// hooks; doctor flags hooks that run a build's output.
#[test]
fn a_build_s_output_wires_the_installed_copy_or_says_why_not() {
    let built = env!("CARGO_BIN_EXE_agent-memory");
    let profile_dir = std::path::Path::new(built).parent().expect("dir");
    assert!(profile_dir.join(".fingerprint").is_dir(), "{built} is a build's output");

    // No installed copy: a warning, and the build's output is wired.
    let home = with_configs();
    let out = run(&home, &["install", "claude-code"]);
    assert!(out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cargo clean") && stderr.contains("--copy-self"), "{stderr}");
    let canonical = std::fs::canonicalize(built).expect("canonical");
    assert_eq!(hook_binaries(&home), [canonical.to_string_lossy()]);
    let doctor = run(&home, &["doctor", "claude-code", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).expect("JSON");
    let binary = &report["agents"][0]["findings"][0];
    assert_eq!(
        (&binary["check"], &binary["level"]),
        (&"binary".into(), &"warn".into()),
        "{report:#}"
    );
    assert!(binary["message"].as_str().unwrap_or_default().contains("build's output"), "{binary}");

    // --copy-self: the copy in ~/.local/bin is wired.
    let out = run(&home, &["install", "claude-code", "--copy-self"]);
    assert!(out.status.success(), "{}", describe(&out));
    let local = home.user_home().join(".local/bin/agent-memory");
    assert!(local.is_file(), "{}", describe(&out));
    let local = std::fs::canonicalize(&local).expect("canonical");
    assert_eq!(hook_binaries(&home), [local.to_string_lossy()]);

    // An installed copy is preferred from then on, with a note saying so.
    let out = run(&home, &["install", "claude-code"]);
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("wiring the installed") && stdout.contains("up to date"), "{stdout}");
    assert!(out.stderr.is_empty(), "{}", describe(&out));
}
