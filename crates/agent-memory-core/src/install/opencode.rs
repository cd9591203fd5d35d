//! OpenCode's wiring: OpenCode has no shell hooks, so install writes a plugin of ours,
//! `plugins/agent-memory.js` (`install/opencode_plugin.js` with this binary's path baked in),
//! into its config directory (`$XDG_CONFIG_HOME/opencode/` for the user, `<project>/.opencode/`
//! for one project), and the MCP server into `opencode.json` beside it (the project's at its
//! root) in the 1.x shape: `"mcp": {"agent-memory": {"type": "local", "command": [bin, "mcp"],
//! "enabled": true}}`. The plugin runs `agent-memory hook --agent opencode` and puts what it
//! answers into the system prompt.
//!
//! Must not: touch any server or key of `opencode.json` that is not ours.

use std::path::{Path, PathBuf};

use super::{
    ConfigError, FilePlan, Json, Op, Place, ReadFile, file_plan, install_server_in,
    owned_file_plan, uninstall_server_in,
};

/// The plugin as shipped; `@AGENT_MEMORY_BIN@` stands for the binary's path.
pub(crate) const PLUGIN: &str = include_str!("opencode_plugin.js");

/// The plugin file for `bin`: its path as a JavaScript string literal.
pub fn plugin(bin: &str) -> String {
    let literal = serde_json::Value::String(bin.to_owned()).to_string();
    PLUGIN.replace("\"@AGENT_MEMORY_BIN@\"", &literal)
}

/// Adds (or removes) our MCP server in `opencode.json`, and `mcp` when that leaves it empty.
pub fn config(op: Op, text: Option<&str>, path: &Path, bin: &str) -> Result<String, ConfigError> {
    super::edit_json(path, text, |root| match op {
        Op::Install => install_server_in(root, path, "mcp", server(bin)),
        Op::Uninstall => uninstall_server_in(root, path, "mcp"),
    })
}

fn server(bin: &str) -> Json {
    Json::Object(vec![
        ("type".to_owned(), Json::str("local")),
        ("command".to_owned(), Json::Array(vec![Json::str(bin), Json::str("mcp")])),
        ("enabled".to_owned(), Json::Bool(true)),
    ])
}

/// `opencode.json` in `dir`, or the `opencode.jsonc` there when only that one exists.
fn config_path(dir: &Path, read: ReadFile<'_>) -> Result<PathBuf, ConfigError> {
    let json = dir.join("opencode.json");
    let jsonc = dir.join("opencode.jsonc");
    Ok(if read(&json)?.is_none() && read(&jsonc)?.is_some() { jsonc } else { json })
}

pub(crate) fn plan(
    op: Op,
    place: &Place<'_>,
    bin: &str,
    read: ReadFile<'_>,
) -> Result<Vec<FilePlan>, ConfigError> {
    let (plugins, config_dir) = match place {
        Place::User { root, .. } => (root.join("plugins"), root.clone()),
        Place::Project(dir) => (dir.join(".opencode/plugins"), dir.to_path_buf()),
    };
    let plugin = plugin(bin);
    let mut plans = Vec::new();
    plans.extend(owned_file_plan(plugins.join("agent-memory.js"), op, read, &plugin)?);
    plans.extend(file_plan(config_path(&config_dir, read)?, op, read, &|op, text, path| {
        config(op, text, path, bin)
    })?);
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIN: &str = "/opt/am/agent-memory";

    #[test]
    fn the_plugin_carries_the_binary_as_a_string_literal() {
        let text = plugin("/home/a \"b\"/agent-memory");
        assert!(text.contains(r#"const BIN = "/home/a \"b\"/agent-memory""#), "{text}");
        assert!(!text.contains("@AGENT_MEMORY_BIN@"));
    }

    #[test]
    fn mcp_server_is_added_beside_the_users_config_and_removed_again() {
        let original = "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"model\": \"fake/fake-model\",\n  \"mcp\": {\n    \"docs\": {\n      \"type\": \"remote\",\n      \"url\": \"https://example.invalid/mcp\"\n    }\n  }\n}\n";
        let p = Path::new("/home/u/.config/opencode/opencode.json");
        let out = config(Op::Install, Some(original), p, BIN).expect("install");
        let value: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(
            value["mcp"]["agent-memory"],
            serde_json::json!({"type": "local", "command": [BIN, "mcp"], "enabled": true})
        );
        assert_eq!(value["mcp"]["docs"]["type"], "remote");
        assert_eq!(config(Op::Install, Some(&out), p, BIN).expect("again"), out);
        assert_eq!(config(Op::Uninstall, Some(&out), p, BIN).expect("uninstall"), original);
        let err = config(Op::Install, Some("{\"mcp\": []}"), p, BIN).expect_err("shape");
        assert!(err.to_string().contains("`mcp` is not an object"), "{err}");
    }
}
