//! Gemini CLI's wiring: one `settings.json` (`~/.gemini/` or `<project>/.gemini/`) holds the
//! hooks (timeouts in milliseconds), `hooksConfig.enabled` and the MCP server.
//!
//! Must not: touch any hook, server or key that is not ours.

use std::path::Path;

use super::{
    ConfigError, FilePlan, HookSpec, Json, Op, Place, ReadFile, file_plan, install_hook_groups,
    install_mcp_server, shape, uninstall_hook_groups, uninstall_mcp_server,
};

/// The agent's name in the registry, which its hook commands pass as `--agent`.
const AGENT: &str = "gemini";

/// The events the Gemini adapter stores or answers. `PreCompress` is left out on purpose: it
/// fires before every model request although nothing is compressed, and the adapter skips it.
pub const HOOKS: &[HookSpec] = &[
    HookSpec { event: "SessionStart", matcher: None, timeout_s: None },
    HookSpec { event: "BeforeAgent", matcher: None, timeout_s: None },
    HookSpec { event: "AfterTool", matcher: Some(".*"), timeout_s: None },
    HookSpec { event: "AfterAgent", matcher: None, timeout_s: None },
    HookSpec { event: "SessionEnd", matcher: None, timeout_s: None },
];

/// Adds (or removes) our hooks, `hooksConfig.enabled` and our MCP server in a settings file.
pub fn settings(op: Op, text: Option<&str>, path: &Path, bin: &str) -> Result<String, ConfigError> {
    super::edit_json(path, text, |root| match op {
        Op::Install => {
            install_hook_groups(root, path, AGENT, HOOKS, bin, 1000)?;
            // Hooks run only with `hooksConfig.enabled`; other hooksConfig keys stay as they are.
            root.object_entry(path, "hooksConfig")?.set("enabled", Json::Bool(true));
            install_mcp_server(root, path, server(bin))
        }
        Op::Uninstall => {
            uninstall_hook_groups(root, path, bin)?;
            uninstall_mcp_server(root, path)?;
            // Once no hook is left, the switch install turned on goes too.
            if root.get("hooks").is_none()
                && let Some(config) = root.get_mut("hooksConfig")
            {
                if !matches!(config, Json::Object(_)) {
                    return Err(shape(path, "hooksConfig", "an object"));
                }
                if config.get("enabled") == Some(&Json::Bool(true)) {
                    config.remove("enabled");
                }
                if matches!(config, Json::Object(m) if m.is_empty()) {
                    root.remove("hooksConfig");
                }
            }
            Ok(())
        }
    })
}

fn server(bin: &str) -> Json {
    Json::Object(vec![
        ("command".to_owned(), Json::str(bin)),
        ("args".to_owned(), Json::Array(vec![Json::str("mcp")])),
    ])
}

pub(crate) fn plan(
    op: Op,
    place: &Place<'_>,
    bin: &str,
    read: ReadFile<'_>,
) -> Result<Vec<FilePlan>, ConfigError> {
    let path = match place {
        Place::User { root, .. } => root.join("settings.json"),
        Place::Project(dir) => dir.join(".gemini/settings.json"),
    };
    Ok(file_plan(path, op, read, &|op, text, path| settings(op, text, path, bin))?
        .into_iter()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIN: &str = "/opt/am/agent-memory";

    fn path() -> &'static Path {
        Path::new("/home/u/.gemini/settings.json")
    }

    const EXISTING: &str = r#"{
    "theme": "GitHub",
    "hooksConfig": {
        "notifications": false
    },
    "hooks": {
        "BeforeTool": [
            {
                "matcher": ".*",
                "hooks": [
                    {
                        "name": "audit",
                        "type": "command",
                        "command": "/usr/local/bin/audit",
                        "timeout": 2000
                    }
                ]
            }
        ]
    },
    "mcpServers": {
        "github": {
            "httpUrl": "https://example.invalid/mcp"
        }
    }
}
"#;

    #[test]
    fn installs_into_an_empty_config() {
        let out = settings(Op::Install, Some(""), path(), BIN).expect("install");
        let value: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(value["hooksConfig"]["enabled"], true);
        assert_eq!(value["hooks"]["AfterTool"][0]["matcher"], ".*");
        assert_eq!(value["hooks"]["AfterTool"][0]["hooks"][0]["timeout"], 5000);
        assert_eq!(
            value["hooks"]["BeforeAgent"][0]["hooks"][0]["command"],
            "/opt/am/agent-memory hook --agent gemini --event BeforeAgent"
        );
        assert_eq!(value["mcpServers"]["agent-memory"]["args"][0], "mcp");
        assert_eq!(settings(Op::Install, Some(&out), path(), BIN).expect("again"), out);
        assert_eq!(settings(Op::Uninstall, Some(&out), path(), BIN).expect("uninstall"), "{}\n");
    }

    #[test]
    fn keeps_what_the_user_has_and_uninstalls_to_the_same_bytes() {
        let out = settings(Op::Install, Some(EXISTING), path(), BIN).expect("install");
        assert!(out.starts_with("{\n    \"theme\": \"GitHub\",\n    \"hooksConfig\": {\n        \"notifications\": false,\n        \"enabled\": true"), "{out}");
        let value: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(value["hooks"]["BeforeTool"][0]["hooks"][0]["name"], "audit");
        assert_eq!(value["mcpServers"]["github"]["httpUrl"], "https://example.invalid/mcp");
        assert_eq!(settings(Op::Install, Some(&out), path(), BIN).expect("again"), out);
        // The user has hooks of their own, so the switch install turned on stays on; the plan
        // restores the backup instead when nothing else changed (see the parent's tests).
        let back = settings(Op::Uninstall, Some(&out), path(), BIN).expect("uninstall");
        assert_eq!(
            back,
            EXISTING.replace(
                "\"notifications\": false\n",
                "\"notifications\": false,\n        \"enabled\": true\n"
            )
        );
    }

    #[test]
    fn broken_json_is_an_error() {
        let err =
            settings(Op::Install, Some("{\"theme\": \"x\",}"), path(), BIN).expect_err("broken");
        assert!(err.to_string().contains("is not valid JSON (line 1"), "{err}");
        let err = settings(Op::Install, Some("[]"), path(), BIN).expect_err("not an object");
        assert!(err.to_string().contains("`(top level)` is not an object"), "{err}");
    }
}
