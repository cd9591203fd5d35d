//! Claude Code's hook stdin, exactly as Claude Code 2.1.332 sends it (recorded in
//! `crates/agent-memory-testkit/fixtures/agents/claude-code/`). Codex and Gemini CLI copied this
//! protocol, and their adapters read the events they share with these structs.
//!
//! Serde structs only, no mapping. Only the fields agent-memory uses are declared: unknown fields
//! are ignored, and every field is a lenient [`Field`] (or any JSON), so a new or oddly typed field
//! never rejects a payload. Required fields are enforced by the adapter, not here.

use serde::Deserialize;
use serde_json::Value;

use crate::adapter::Field;

/// What every hook event carries.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Envelope {
    pub session_id: Field<String>,
    pub cwd: Field<String>,
    pub transcript_path: Field<String>,
}

/// `SessionStart`: `source` is `startup`, `resume`, `clear` or `compact`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct SessionStart {
    pub source: Field<String>,
    /// Sent by Codex, and by Claude Code in some versions.
    pub model: Field<String>,
}

/// `UserPromptSubmit`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct UserPromptSubmit {
    pub prompt: Field<String>,
}

/// `PreToolUse`: the call about to run.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct PreToolUse {
    pub tool_name: Field<String>,
    pub tool_input: Option<Value>,
}

/// `PostToolUse`, and `PostToolUseFailure`, which sends `error` instead of `tool_response`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct ToolEvent {
    pub tool_name: Field<String>,
    pub tool_input: Option<Value>,
    pub tool_response: Option<ToolResponse>,
    pub duration_ms: Field<u64>,
    /// MCP tools only: `{name, source}`.
    pub mcp_server: Field<McpServer>,
    pub error: Field<String>,
    pub is_interrupt: Field<bool>,
}

/// A tool's result: its shape depends on the tool.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum ToolResponse {
    /// `Bash`.
    Shell(ShellResult),
    /// Any other shape: MCP content blocks, `Read`'s `{file}`, `Edit`'s patch, plain text.
    Other(Value),
}

#[derive(Debug, Deserialize)]
pub(super) struct ShellResult {
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub interrupted: bool,
}

#[derive(Debug, Deserialize)]
pub(super) struct McpServer {
    pub name: String,
}

/// `PreCompact`: `trigger` is `manual` or `auto`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct PreCompact {
    pub trigger: Field<String>,
    pub custom_instructions: Field<String>,
}

/// `Stop`: the turn's final answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Stop {
    pub last_assistant_message: Field<String>,
}

/// `SessionEnd`: `reason` is `clear`, `logout`, `prompt_input_exit` or `other`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct SessionEnd {
    pub reason: Field<String>,
}
