//! Claude Code's wiring: hooks in `settings.json` (`~/.claude/` or `<project>/.claude/`), the
//! MCP server in `~/.claude.json` (user scope) or `<project>/.mcp.json` (project scope).
//!
//! The same wiring also comes packaged as a Claude Code plugin inside a one-plugin local
//! marketplace ([`plugin_files`]): `claude plugin marketplace add <dir>` and `claude plugin
//! install agent-memory@agent-memory` take it from there.
//!
//! Must not: touch any hook, server or key that is not ours.

use std::path::{Path, PathBuf};

use super::{
    ConfigError, FilePlan, HookSpec, Json, MCP_SERVER_NAME, Op, Place, ReadFile, file_plan,
    install_hook_groups, skill_plan, uninstall_hook_groups,
};

/// The agent's name in the registry, which its hook commands pass as `--agent`.
pub const AGENT: &str = "claude-code";

/// Every event the Claude Code adapter reads; `PreToolUse` only for `Read` (file context).
/// `SessionStart` for every source Claude Code names: a new session, a resumed one, one
/// cleared with `/clear`, and the fresh context after a compaction, which needs the briefing
/// again most of all.
pub const HOOKS: &[HookSpec] = &[
    HookSpec {
        event: "SessionStart",
        matcher: Some("startup|resume|clear|compact"),
        timeout_s: None,
    },
    HookSpec { event: "UserPromptSubmit", matcher: None, timeout_s: None },
    HookSpec { event: "PreToolUse", matcher: Some("Read"), timeout_s: None },
    HookSpec { event: "PostToolUse", matcher: Some(""), timeout_s: None },
    HookSpec { event: "PostToolUseFailure", matcher: Some(""), timeout_s: None },
    HookSpec { event: "PreCompact", matcher: None, timeout_s: None },
    HookSpec { event: "Stop", matcher: None, timeout_s: None },
    HookSpec { event: "SessionEnd", matcher: None, timeout_s: None },
];

/// Adds (or removes) our hooks in a settings file.
pub fn settings(op: Op, text: Option<&str>, path: &Path, bin: &str) -> Result<String, ConfigError> {
    super::edit_json(path, text, |root| match op {
        Op::Install => install_hook_groups(root, path, AGENT, HOOKS, bin, 1),
        Op::Uninstall => uninstall_hook_groups(root, path, bin),
    })
}

/// Adds (or removes) our MCP server in `~/.claude.json` or a project's `.mcp.json`.
pub fn mcp(op: Op, text: Option<&str>, path: &Path, bin: &str) -> Result<String, ConfigError> {
    super::mcp_servers_file(op, text, path, server(bin))
}

/// The entry `claude mcp add --scope user` writes for a stdio server.
fn server(bin: &str) -> Json {
    Json::Object(vec![
        ("type".to_owned(), Json::str("stdio")),
        ("command".to_owned(), Json::str(bin)),
        ("args".to_owned(), Json::Array(vec![Json::str("mcp")])),
    ])
}

/// The name of the plugin, and of the marketplace that holds it.
pub const PLUGIN_NAME: &str = "agent-memory";

/// The files of a local marketplace holding the agent-memory plugin (its manifest, hooks and
/// MCP server, all running `bin`), as paths relative to the marketplace directory with their
/// text.
pub fn plugin_files(bin: &str, version: &str) -> Vec<(PathBuf, String)> {
    let description = "One shared, permanent memory for all your AI coding agents: every session \
        recorded, the briefing at session start, memory search over MCP.";
    let plugin_dir = PathBuf::from("plugins").join(PLUGIN_NAME);
    let marketplace = serde_json::json!({
        "name": PLUGIN_NAME,
        "owner": {"name": "agent-memory"},
        "plugins": [{
            "name": PLUGIN_NAME,
            "source": format!("./plugins/{PLUGIN_NAME}"),
            "description": description,
            "version": version,
        }],
    });
    let manifest = serde_json::json!({
        "name": PLUGIN_NAME,
        "version": version,
        "description": description,
        "author": {"name": "agent-memory"},
    });
    let mut hooks = Json::Object(vec![(
        "description".to_owned(),
        Json::str("agent-memory: record every session and hand back what earlier ones learned"),
    )]);
    // An empty object always takes our groups; the path only names it in errors.
    let _ = install_hook_groups(&mut hooks, Path::new("hooks.json"), AGENT, HOOKS, bin, 1);
    let mcp = serde_json::json!({ "mcpServers": { MCP_SERVER_NAME: { "command": bin, "args": ["mcp"] } } });
    let pretty = |v: &serde_json::Value| format!("{v:#}\n");
    vec![
        (PathBuf::from(".claude-plugin/marketplace.json"), pretty(&marketplace)),
        (plugin_dir.join(".claude-plugin/plugin.json"), pretty(&manifest)),
        (plugin_dir.join("hooks/hooks.json"), hooks.to_text("")),
        (plugin_dir.join(".mcp.json"), pretty(&mcp)),
    ]
}

pub(crate) fn plan(
    op: Op,
    place: &Place<'_>,
    bin: &str,
    read: ReadFile<'_>,
) -> Result<Vec<FilePlan>, ConfigError> {
    let (settings_path, mcp_path, skills) = match place {
        Place::User { home, root } => {
            (root.join("settings.json"), home.join(".claude.json"), root.join("skills"))
        }
        Place::Project(dir) => {
            (dir.join(".claude/settings.json"), dir.join(".mcp.json"), dir.join(".claude/skills"))
        }
    };
    let mut plans = Vec::new();
    plans.extend(file_plan(settings_path, op, read, &|op, text, path| {
        settings(op, text, path, bin)
    })?);
    plans.extend(file_plan(mcp_path, op, read, &|op, text, path| mcp(op, text, path, bin))?);
    plans.extend(skill_plan(&skills, op, read)?);
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIN: &str = "/opt/am/agent-memory";

    fn path() -> &'static Path {
        Path::new("/home/u/.claude/settings.json")
    }

    const EXISTING: &str = r#"{
  "model": "opus",
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/log-bash.sh"
          }
        ]
      }
    ],
    "Notification": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  },
  "permissions": {
    "allow": [
      "Bash(ls:*)"
    ]
  }
}
"#;

    #[test]
    fn installs_into_an_empty_config() {
        let out = settings(Op::Install, None, path(), BIN).expect("install");
        let value: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        let events: Vec<_> = value["hooks"].as_object().expect("hooks").keys().cloned().collect();
        assert_eq!(events.len(), HOOKS.len());
        assert_eq!(
            value["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "/opt/am/agent-memory hook --agent claude-code --event PreToolUse"
        );
        assert_eq!(value["hooks"]["PreToolUse"][0]["matcher"], "Read");
        assert_eq!(value["hooks"]["Stop"][0]["hooks"][0]["timeout"], 5);
        assert_eq!(settings(Op::Install, Some(&out), path(), BIN).expect("again"), out);
        assert_eq!(settings(Op::Uninstall, Some(&out), path(), BIN).expect("uninstall"), "{}\n");
    }

    #[test]
    fn keeps_what_the_user_has_and_uninstalls_to_the_same_bytes() {
        let out = settings(Op::Install, Some(EXISTING), path(), BIN).expect("install");
        assert!(out.starts_with("{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PostToolUse\""));
        let value: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        let post = value["hooks"]["PostToolUse"].as_array().expect("array");
        assert_eq!(post.len(), 2, "the user's group stays, ours is added: {post:?}");
        assert_eq!(post[0]["hooks"][0]["command"], "~/bin/log-bash.sh");
        assert_eq!(value["hooks"]["Notification"][0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(value["permissions"]["allow"][0], "Bash(ls:*)");
        assert_eq!(settings(Op::Install, Some(&out), path(), BIN).expect("again"), out);
        let back = settings(Op::Uninstall, Some(&out), path(), BIN).expect("uninstall");
        assert_eq!(back, EXISTING);
    }

    #[test]
    fn a_moved_binary_replaces_the_old_hooks() {
        let old = settings(Op::Install, Some(EXISTING), path(), "/old/agent-memory").expect("old");
        let new = settings(Op::Install, Some(&old), path(), BIN).expect("new");
        assert!(!new.contains("/old/agent-memory"));
        assert_eq!(new, settings(Op::Install, Some(EXISTING), path(), BIN).expect("fresh"));
    }

    #[test]
    fn mcp_server_is_added_beside_others_and_removed_again() {
        let original = "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"mem\": {\n      \"type\": \"stdio\",\n      \"command\": \"python3\",\n      \"args\": []\n    }\n  }\n}\n";
        let p = Path::new("/home/u/.claude.json");
        let out = mcp(Op::Install, Some(original), p, BIN).expect("install");
        let value: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(value["mcpServers"]["agent-memory"]["command"], BIN);
        assert_eq!(value["mcpServers"]["agent-memory"]["args"][0], "mcp");
        assert_eq!(value["mcpServers"]["mem"]["command"], "python3");
        assert_eq!(mcp(Op::Install, Some(&out), p, BIN).expect("again"), out);
        assert_eq!(mcp(Op::Uninstall, Some(&out), p, BIN).expect("uninstall"), original);
    }

    #[test]
    fn the_plugin_carries_the_same_hooks_and_the_mcp_server() {
        let files = plugin_files(BIN, "1.2.3");
        let text = |name: &str| -> serde_json::Value {
            let (_, text) = files.iter().find(|(p, _)| p.ends_with(name)).expect(name);
            serde_json::from_str(text).expect("valid JSON")
        };
        let market = text("marketplace.json");
        assert_eq!(market["plugins"][0]["source"], "./plugins/agent-memory");
        assert_eq!(text("plugin.json")["version"], "1.2.3");
        let hooks = text("hooks.json");
        let settings: serde_json::Value =
            serde_json::from_str(&settings(Op::Install, None, path(), BIN).expect("install"))
                .expect("valid JSON");
        assert_eq!(hooks["hooks"], settings["hooks"], "the plugin's hooks are the settings' hooks");
        assert_eq!(hooks["hooks"]["SessionStart"][0]["matcher"], "startup|resume|clear|compact");
        assert_eq!(text(".mcp.json")["mcpServers"]["agent-memory"]["command"], BIN);
        let paths: Vec<_> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(
            paths,
            [
                ".claude-plugin/marketplace.json",
                "plugins/agent-memory/.claude-plugin/plugin.json",
                "plugins/agent-memory/hooks/hooks.json",
                "plugins/agent-memory/.mcp.json",
            ]
        );
    }

    #[test]
    fn broken_json_is_an_error_naming_the_place() {
        let err = settings(Op::Install, Some("{\n  \"hooks\": {,\n}"), path(), BIN)
            .expect_err("broken JSON");
        let message = err.to_string();
        assert!(
            message.contains("/home/u/.claude/settings.json is not valid JSON (line 2"),
            "{message}"
        );
        assert!(message.contains("fix the file"), "{message}");
        let err = settings(Op::Install, Some("{\"hooks\": []}"), path(), BIN).expect_err("shape");
        assert!(err.to_string().contains("`hooks` is not an object"), "{err}");
    }
}
