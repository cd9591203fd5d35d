//! The Codex CLI adapter: its hook events and tool families, and the reader for its tool
//! results. Codex copied Claude Code's hook protocol, so every other event is read by the
//! Claude Code readers; only `PostToolUse` has a shape of its own (`wire.rs`).
//!
//! Must not duplicate what the Claude Code readers do: a Codex event that drifts from Claude
//! Code's shape gets its own wire struct here instead.

mod wire;

use self::wire::{PostToolUse, ToolResponse};
pub(super) mod history;
pub(super) mod rollout;

use super::{AdapterError, Draft, Hook, MODEL_LEVEL, Route, Slot, claude_code, text_of};
use crate::event::{EventKind, ToolKind};

/// Codex 0.171.0's hook events. `PreModelRequest` fires before every model call; a permission
/// request is followed by the tool's own events.
pub(super) const EVENTS: &[(&str, Route)] = &[
    ("SessionStart", claude_code::SESSION_START),
    ("UserPromptSubmit", claude_code::PROMPT),
    ("PreToolUse", claude_code::ANSWERED),
    ("PostToolUse", Route::Store(EventKind::ToolUse, tool_use)),
    ("PreCompact", claude_code::COMPACTED),
    ("Stop", claude_code::STOP),
    ("SessionEnd", claude_code::SESSION_END),
    ("PreModelRequest", Route::Skip(MODEL_LEVEL)),
    ("PermissionRequest", Route::Skip(PERMISSION)),
];

/// Where Codex takes context, as seen reaching the model. It has no file-reading tool, so no
/// file context.
pub(super) const SLOTS: &[(&str, Slot)] =
    &[("SessionStart", Slot::SessionStart), ("UserPromptSubmit", Slot::Prompt)];

const PERMISSION: &str = "permission request: the tool's own events follow";

/// Codex's tools by family, as its hooks name them; MCP tools are `mcp__<server>__<tool>`.
pub(super) const TOOLS: &[(&str, ToolKind)] = &[
    ("Bash", ToolKind::Shell),
    ("exec_command", ToolKind::Shell),
    ("write_stdin", ToolKind::Shell),
    ("shell", ToolKind::Shell),
    ("local_shell", ToolKind::Shell),
    ("apply_patch", ToolKind::Edit),
    ("view_image", ToolKind::Read),
    ("web_search", ToolKind::Web),
    ("update_plan", ToolKind::Meta),
    ("mcp__*", ToolKind::Mcp),
];

fn tool_use(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let wire: PostToolUse = hook.parse()?;
    let mut call = hook.tool(wire.tool_name, wire.tool_input)?;
    match wire.tool_response {
        Some(ToolResponse::Text(text)) => call.output = text,
        Some(ToolResponse::Mcp(result)) => {
            call.output = text_of(&result.content);
            call.is_error = result.is_error.ok() == Some(true);
        }
        Some(ToolResponse::Other(value)) => call.output = text_of(&value),
        None => {}
    }
    Ok(Draft::tool_use(call))
}
