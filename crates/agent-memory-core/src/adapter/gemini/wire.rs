//! Gemini CLI's hook stdin where it differs from Claude Code's, exactly as Gemini CLI 0.61.0 sends
//! it (`crates/agent-memory-testkit/fixtures/agents/gemini/`). `SessionStart`, `BeforeAgent`
//! (`prompt`) and `SessionEnd` come in Claude Code's shapes (see `claude_code/wire.rs`).
//!
//! Serde structs only, no mapping; unknown fields are ignored and every field is lenient.

use serde::Deserialize;
use serde_json::Value;

use crate::adapter::Field;

/// Every event also carries when it happened, as ISO 8601 UTC.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Clock {
    pub timestamp: Field<String>,
}

/// `AfterTool`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct AfterTool {
    pub tool_name: Field<String>,
    pub tool_input: Option<Value>,
    pub tool_response: Field<ToolResponse>,
    /// MCP tools only.
    pub mcp_context: Field<McpContext>,
}

/// What the tool returned: `llmContent` for the model (a string wrapped in
/// `<untrusted_context>`, or MCP-style `[{text}]` parts), `returnDisplay` for the user (a string,
/// or a diff object for file tools), and `error` when it failed.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct ToolResponse {
    pub llm_content: Option<Value>,
    pub return_display: Option<Value>,
    pub error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct McpContext {
    pub server_name: Field<String>,
    pub tool_name: Field<String>,
}

/// `AfterAgent`: the turn's final answer (and the prompt again, already captured).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct AfterAgent {
    pub prompt_response: Field<String>,
}
