//! The Claude Code adapter: its hook events and tool families, and readers for its payloads.
//!
//! Codex and Gemini CLI copied Claude Code's hook protocol, so their adapters reuse the readers
//! here for the events they share (and [`head`] for the common fields). Knows Claude Code's wire
//! format only through `wire.rs`; builds events only through the shared [`Draft`] builders.

pub(super) mod history;
mod wire;

use serde_json::Value;

use self::wire::{
    Envelope, PreCompact, PreToolUse, SessionEnd, SessionStart, Stop, ToolEvent, ToolResponse,
    UserPromptSubmit,
};
use super::{
    AdapterError, Draft, Field, Head, Hook, MODEL_LEVEL, Route, Slot, exit_code_in, join_nonempty,
    text_of,
};
use crate::event::{EventKind, ToolKind};

/// Claude Code 2.1.332's hook events. `PostToolBatch` repeats each `PostToolUse` with less
/// detail; `SubagentStop` ends a subagent's turn, not the user's; display and instruction
/// events say nothing about the work.
pub(super) const EVENTS: &[(&str, Route)] = &[
    ("SessionStart", SESSION_START),
    ("UserPromptSubmit", PROMPT),
    ("PreToolUse", ANSWERED),
    ("PostToolUse", TOOL_USE),
    ("PostToolUseFailure", TOOL_FAILURE),
    ("PostToolBatch", Route::Skip(BATCH)),
    ("PreCompact", COMPACTED),
    ("Stop", STOP),
    ("SubagentStop", Route::Skip(SUBAGENT)),
    ("SessionEnd", SESSION_END),
    ("PreModelSwitch", Route::Skip(MODEL_LEVEL)),
    ("PostModelSwitch", Route::Skip(MODEL_LEVEL)),
];

/// Where Claude Code takes context: every pair reaches the model (`PreToolUse` as documented).
pub(super) const SLOTS: &[(&str, Slot)] = &[
    ("SessionStart", Slot::SessionStart),
    ("UserPromptSubmit", Slot::Prompt),
    ("PreToolUse", Slot::FileRead),
];

// The routes Codex and Gemini CLI share, since they send these events in Claude Code's shapes.
pub(super) const SESSION_START: Route = Route::Store(EventKind::SessionStart, session_start);
pub(super) const PROMPT: Route = Route::Store(EventKind::Prompt, prompt);
pub(super) const COMPACTED: Route = Route::Store(EventKind::Note, compacted);
pub(super) const STOP: Route = Route::Store(EventKind::Stop, stop);
pub(super) const SESSION_END: Route = Route::Store(EventKind::SessionEnd, session_end);
pub(super) const ANSWERED: Route = Route::Answer(pending_tool);
const TOOL_USE: Route = Route::Store(EventKind::ToolUse, tool_use);
const TOOL_FAILURE: Route = Route::Store(EventKind::ToolUse, tool_failure);
const BATCH: &str = "duplicate of PostToolUse";
const SUBAGENT: &str = "subagent turn: its tools are captured";

/// Claude Code's built-in tools by family; MCP tools are `mcp__<server>__<tool>`.
pub(super) const TOOLS: &[(&str, ToolKind)] = &[
    ("Bash", ToolKind::Shell),
    ("BashOutput", ToolKind::Shell),
    ("KillShell", ToolKind::Shell),
    ("Read", ToolKind::Read),
    ("Edit", ToolKind::Edit),
    ("MultiEdit", ToolKind::Edit),
    ("NotebookEdit", ToolKind::Edit),
    ("Write", ToolKind::Write),
    ("Grep", ToolKind::Search),
    ("Glob", ToolKind::Search),
    ("LS", ToolKind::Search),
    ("WebFetch", ToolKind::Web),
    ("WebSearch", ToolKind::Web),
    ("Task", ToolKind::Agent),
    ("Agent", ToolKind::Agent),
    ("TodoWrite", ToolKind::Meta),
    ("ToolSearch", ToolKind::Meta),
    ("ExitPlanMode", ToolKind::Meta),
    ("Skill", ToolKind::Meta),
    ("mcp__*", ToolKind::Mcp),
];

/// The session id, cwd and transcript path every event of this protocol carries.
pub(super) fn head(hook: &Hook<'_>) -> Result<Head, AdapterError> {
    let envelope: Envelope = hook.parse()?;
    Ok(Head {
        session: envelope.session_id,
        cwd: envelope.cwd.text(),
        transcript_path: envelope.transcript_path.text(),
        at_ms: None,
    })
}

fn session_start(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let wire: SessionStart = hook.parse()?;
    Ok(Draft::session_start(wire.source.text(), wire.model.text()))
}

fn prompt(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    Ok(Draft::prompt(prompt_text(hook)?))
}

/// The prompt of a `UserPromptSubmit`-shaped payload.
pub(super) fn prompt_text(hook: &Hook<'_>) -> Result<String, AdapterError> {
    let wire: UserPromptSubmit = hook.parse()?;
    hook.require(wire.prompt, "prompt")
}

/// The tool call of a `PreToolUse`-shaped payload.
fn pending_tool(hook: &Hook<'_>) -> Result<(Field<String>, Option<Value>), AdapterError> {
    let wire: PreToolUse = hook.parse()?;
    Ok((wire.tool_name, wire.tool_input))
}

fn tool_use(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    read_tool(hook, false)
}

fn tool_failure(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    read_tool(hook, true)
}

fn read_tool(hook: &Hook<'_>, failed: bool) -> Result<Draft, AdapterError> {
    let wire: ToolEvent = hook.parse()?;
    let mut call = hook.tool(wire.tool_name, wire.tool_input)?;
    match wire.tool_response {
        Some(ToolResponse::Shell(shell)) => {
            call.output = join_nonempty(&[&shell.stdout, &shell.stderr], "\n");
            call.is_error = shell.interrupted;
        }
        Some(ToolResponse::Other(value)) => call.output = text_of(&value),
        None => {}
    }
    // A failure's error text is its output, and often opens with the exit code.
    if let Some(error) = wire.error.text() {
        call.exit_code = exit_code_in(&error);
        call.output = join_nonempty(&[&call.output, &error], "\n");
    }
    call.is_error |= failed || wire.is_interrupt.ok() == Some(true);
    call.duration_ms = wire.duration_ms.ok();
    // Claude Code names the server itself; plugin servers do not split cleanly from the tool name.
    if let (Some(server), Some(mcp)) = (wire.mcp_server.ok(), call.mcp.as_mut()) {
        mcp.0 = server.name;
    }
    Ok(Draft::tool_use(call))
}

fn compacted(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let wire: PreCompact = hook.parse()?;
    Ok(Draft::compacted(wire.trigger.text(), wire.custom_instructions.text()))
}

fn stop(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let wire: Stop = hook.parse()?;
    Ok(Draft::stop(wire.last_assistant_message.text()))
}

fn session_end(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let wire: SessionEnd = hook.parse()?;
    Ok(Draft::session_end(wire.reason.text()))
}
