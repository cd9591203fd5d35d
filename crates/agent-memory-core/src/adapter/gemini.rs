//! The Gemini CLI adapter: its hook events and tool families, and readers for its tool results,
//! turn ends and timestamps. Gemini CLI copied Claude Code's hook protocol for session start,
//! prompt and session end, which the Claude Code readers read; the rest is in `wire.rs`.
//!
//! Must not keep Gemini's model-facing wrappers (`<untrusted_context>`, the shell report's
//! labels) in what it stores: those are Gemini's framing, not the tool's output.

pub(super) mod history;
mod wire;

use serde_json::Value;

use self::wire::{AfterAgent, AfterTool, Clock};
use super::{
    AdapterError, Draft, Head, Hook, MODEL_LEVEL, Route, Slot, claude_code, exit_code_in,
    parse_iso_ms, text_of,
};
use crate::capture::fence::drop_spans;
use crate::event::{EventKind, ToolKind};

/// Gemini CLI 0.61.0's hook events. The model-level ones fire per request or per streamed chunk
/// (and `PreCompress` before every request, though nothing is compressed).
pub(super) const EVENTS: &[(&str, Route)] = &[
    ("SessionStart", claude_code::SESSION_START),
    ("BeforeAgent", Route::Store(EventKind::Prompt, prompt)),
    ("BeforeTool", claude_code::ANSWERED),
    ("AfterTool", Route::Store(EventKind::ToolUse, tool_use)),
    ("AfterAgent", Route::Store(EventKind::Stop, stop)),
    ("SessionEnd", claude_code::SESSION_END),
    ("BeforeModel", Route::Skip(MODEL_LEVEL)),
    ("AfterModel", Route::Skip(MODEL_LEVEL)),
    ("BeforeToolSelection", Route::Skip(MODEL_LEVEL)),
    ("PreCompress", Route::Skip(MODEL_LEVEL)),
];

/// Where Gemini CLI takes context, as seen reaching the model. `BeforeTool` takes none, so a
/// file is answered with the read's result (`AfterTool`).
pub(super) const SLOTS: &[(&str, Slot)] = &[
    ("SessionStart", Slot::SessionStart),
    ("BeforeAgent", Slot::Prompt),
    ("AfterTool", Slot::FileRead),
];

/// Gemini CLI puts every hook's context in front of the prompt, each block wrapped in
/// `<hook_context>…</hook_context>`; none of it is what the user typed.
fn prompt(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let prompt = claude_code::prompt_text(hook)?;
    Ok(Draft::prompt(drop_spans(&prompt, "<hook_context>", "</hook_context>").trim().to_owned()))
}

/// Gemini CLI's built-in tools by family; MCP tools are `mcp_<server>_<tool>`.
pub(super) const TOOLS: &[(&str, ToolKind)] = &[
    ("run_shell_command", ToolKind::Shell),
    ("read_file", ToolKind::Read),
    ("read_many_files", ToolKind::Read),
    ("replace", ToolKind::Edit),
    ("write_file", ToolKind::Write),
    ("glob", ToolKind::Search),
    ("search_file_content", ToolKind::Search),
    ("grep", ToolKind::Search),
    ("list_directory", ToolKind::Search),
    ("web_fetch", ToolKind::Web),
    ("google_web_search", ToolKind::Web),
    ("write_todos", ToolKind::Meta),
    ("save_memory", ToolKind::Meta),
    ("mcp_*", ToolKind::Mcp),
];

/// Claude Code's common fields, plus the time Gemini CLI stamps on every event.
pub(super) fn head(hook: &Hook<'_>) -> Result<Head, AdapterError> {
    let clock: Clock = hook.parse()?;
    let head = claude_code::head(hook)?;
    Ok(Head { at_ms: clock.timestamp.text().and_then(|at| parse_iso_ms(&at)), ..head })
}

fn tool_use(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let wire: AfterTool = hook.parse()?;
    let mut call = hook.tool(wire.tool_name, wire.tool_input)?;
    if let Some(response) = wire.tool_response.ok() {
        let for_model = response.llm_content.as_ref().map(text_of).unwrap_or_default();
        let for_model =
            for_model.replace("<untrusted_context>", "").replace("</untrusted_context>", "");
        call.exit_code = exit_code_in(&for_model);
        // What the user saw has no wrappers; file tools show a diff object there instead.
        call.output = match response.return_display {
            Some(Value::String(shown)) if !shown.trim().is_empty() => shown,
            _ if call.kind == ToolKind::Shell => shell_output(&for_model),
            _ => for_model.trim().to_owned(),
        };
        if let Some(error) = response.error.filter(|error| !error.is_null()) {
            call.is_error = true;
            if call.output.is_empty() {
                call.output = error.get("message").map_or_else(|| text_of(&error), text_of);
            }
        }
    }
    if let (Some(context), Some(mcp)) = (wire.mcp_context.ok(), call.mcp.as_mut()) {
        // The alias and tool as configured; the joined tool name is ambiguous when they hold `_`.
        if let (Some(server), Some(tool)) = (context.server_name.text(), context.tool_name.text()) {
            *mcp = (server, tool);
        }
    }
    Ok(Draft::tool_use(call))
}

/// Labels of the shell tool's report to the model that are bookkeeping, not output.
const SHELL_BOOKKEEPING: &[&str] =
    &["Command: ", "Directory: ", "Process Group PGID: ", "Background PIDs: ", "Signal: "];

/// The shell tool's report to the model (`Output: …\nProcess Group PGID: N`) without its labels.
fn shell_output(report: &str) -> String {
    let lines = report
        .trim()
        .lines()
        .filter(|line| !SHELL_BOOKKEEPING.iter().any(|label| line.starts_with(label)));
    let lines: Vec<&str> =
        lines.map(|line| line.strip_prefix("Output: ").unwrap_or(line)).collect();
    lines.join("\n")
}

fn stop(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let wire: AfterAgent = hook.parse()?;
    Ok(Draft::stop(wire.prompt_response.text()))
}
