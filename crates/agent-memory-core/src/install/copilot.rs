//! Copilot CLI's wiring: our hooks in a file of their own, `agent-memory.json`, in a hooks
//! directory (`$COPILOT_HOME/hooks/` for the user, `<repo>/.github/hooks/` for one repository),
//! and the MCP server in `$COPILOT_HOME/mcp-config.json`. Copilot payloads carry no event
//! name, so each hook names its event on the command line. Copilot 1.0.102 loads both hooks
//! directories (the repository's only in a trusted folder); project-level MCP configuration is
//! not wired, since no such file was seen to work.
//!
//! Must not: touch any server or key of `mcp-config.json` that is not ours.

use std::path::{Path, PathBuf};

use super::{
    ConfigError, FilePlan, HOOK_TIMEOUT_S, HookSpec, Json, Op, Place, ReadFile, file_plan,
    hook_command, owned_file_plan,
};

/// The agent's name in the registry, which its hook commands pass as `--agent`.
const AGENT: &str = "copilot";

/// Our hooks file in the user's hooks directory, under `$COPILOT_HOME`.
pub(crate) fn user_hooks_file(copilot_home: &Path) -> PathBuf {
    copilot_home.join("hooks/agent-memory.json")
}

/// The events the adapter stores or answers; `preToolUse` takes no context in Copilot, and a
/// file read is answered after it ran (`postToolUse`), so it is not wired.
pub const HOOKS: &[HookSpec] = &[
    HookSpec { event: "sessionStart", matcher: None, timeout_s: None },
    HookSpec { event: "userPromptSubmitted", matcher: None, timeout_s: None },
    HookSpec { event: "postToolUse", matcher: None, timeout_s: None },
    HookSpec { event: "agentStop", matcher: None, timeout_s: None },
    HookSpec { event: "sessionEnd", matcher: None, timeout_s: None },
];

/// The whole of our hooks file: `{"version": 1, "hooks": {event: [{type, bash, timeoutSec}]}}`.
pub fn hooks_file(bin: &str) -> String {
    let hooks = HOOKS
        .iter()
        .map(|spec| {
            let handler = Json::Object(vec![
                ("type".to_owned(), Json::str("command")),
                ("bash".to_owned(), Json::String(hook_command(bin, AGENT, spec.event))),
                ("timeoutSec".to_owned(), Json::uint(HOOK_TIMEOUT_S)),
            ]);
            (spec.event.to_owned(), Json::Array(vec![handler]))
        })
        .collect();
    Json::Object(vec![
        ("version".to_owned(), Json::uint(1)),
        ("hooks".to_owned(), Json::Object(hooks)),
    ])
    .to_text("")
}

/// Adds (or removes) our MCP server in `mcp-config.json`.
pub fn mcp(op: Op, text: Option<&str>, path: &Path, bin: &str) -> Result<String, ConfigError> {
    super::mcp_servers_file(op, text, path, server(bin))
}

/// The entry `copilot mcp add` writes for a local (stdio) server, every tool allowed.
fn server(bin: &str) -> Json {
    Json::Object(vec![
        ("type".to_owned(), Json::str("local")),
        ("command".to_owned(), Json::str(bin)),
        ("args".to_owned(), Json::Array(vec![Json::str("mcp")])),
        ("tools".to_owned(), Json::Array(vec![Json::str("*")])),
    ])
}

pub(crate) fn plan(
    op: Op,
    place: &Place<'_>,
    bin: &str,
    read: ReadFile<'_>,
) -> Result<Vec<FilePlan>, ConfigError> {
    let hooks = hooks_file(bin);
    let mut plans = Vec::new();
    match place {
        Place::User { root: copilot_home, .. } => {
            let path = user_hooks_file(copilot_home);
            plans.extend(owned_file_plan(path, op, read, &hooks)?);
            plans.extend(file_plan(
                copilot_home.join("mcp-config.json"),
                op,
                read,
                &|op, text, path| mcp(op, text, path, bin),
            )?);
        }
        Place::Project(dir) => {
            let path = dir.join(".github/hooks/agent-memory.json");
            plans.extend(owned_file_plan(path, op, read, &hooks)?);
        }
    }
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIN: &str = "/opt/am/agent-memory";

    #[test]
    fn hooks_name_their_event_on_the_command_line() {
        let value: serde_json::Value = serde_json::from_str(&hooks_file(BIN)).expect("valid JSON");
        assert_eq!(value["version"], 1);
        let hooks = value["hooks"].as_object().expect("hooks");
        assert_eq!(hooks.len(), HOOKS.len());
        assert_eq!(
            value["hooks"]["agentStop"][0],
            serde_json::json!({
                "type": "command",
                "bash": "/opt/am/agent-memory hook --agent copilot --event agentStop",
                "timeoutSec": 5
            })
        );
    }

    #[test]
    fn mcp_server_is_added_beside_others_and_removed_again() {
        let original = "{\n  \"mcpServers\": {\n    \"docs\": {\n      \"type\": \"local\",\n      \"command\": \"docs-server\",\n      \"args\": [],\n      \"tools\": [\n        \"*\"\n      ]\n    }\n  }\n}\n";
        let p = Path::new("/home/u/.copilot/mcp-config.json");
        let out = mcp(Op::Install, Some(original), p, BIN).expect("install");
        let value: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(value["mcpServers"]["agent-memory"]["type"], "local");
        assert_eq!(value["mcpServers"]["agent-memory"]["tools"][0], "*");
        assert_eq!(value["mcpServers"]["docs"]["command"], "docs-server");
        assert_eq!(mcp(Op::Install, Some(&out), p, BIN).expect("again"), out);
        assert_eq!(mcp(Op::Uninstall, Some(&out), p, BIN).expect("uninstall"), original);
        let err = mcp(Op::Install, Some("{\"mcpServers\": "), p, BIN).expect_err("broken");
        assert!(err.to_string().contains("is not valid JSON"), "{err}");
    }
}
