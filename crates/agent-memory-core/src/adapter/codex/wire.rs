//! Codex CLI's hook stdin where it differs from Claude Code's, exactly as Codex 0.171.0 sends it
//! (`crates/agent-memory-testkit/fixtures/agents/codex/`). Every other event Codex sends in Claude
//! Code's shapes (see `claude_code/wire.rs`).
//!
//! Serde structs only, no mapping; unknown fields are ignored and every field is lenient.

use serde::Deserialize;
use serde_json::Value;

use crate::adapter::Field;

/// `PostToolUse`. Codex reports its `exec_command` as `Bash`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct PostToolUse {
    pub tool_name: Field<String>,
    pub tool_input: Option<Value>,
    pub tool_response: Option<ToolResponse>,
}

/// A tool's result: its shape depends on the tool.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum ToolResponse {
    /// Shell tools: the output as the model saw it (`"hello\n"`).
    Text(String),
    /// MCP tools: the server's `CallToolResult`.
    Mcp(McpResult),
    Other(Value),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct McpResult {
    pub content: Value,
    #[serde(default)]
    pub is_error: Field<bool>,
}
