//! The generic adapter: best effort over the common spellings of hook fields, for agents without
//! an adapter of their own (OpenCode, Copilot CLI and Hermes Agent for now, and any other name).
//!
//! It reads JSON by lists of key spellings instead of wire structs, because it follows no one
//! agent's format; an agent that needs precision gets its own adapter and `wire.rs`. It must stay
//! forgiving: a field it cannot find is absent, never an error, except the session id, the
//! prompt of a prompt and the tool name of a tool use.

use serde_json::Value;

use super::{
    AdapterError, Draft, Field, Head, Hook, NOT_CAPTURED, Route, Slot, is_empty, text_of,
    timestamp_ms,
};
use crate::event::{EventKind, ToolKind};

const SESSION_START: Route = Route::Store(EventKind::SessionStart, session_start);
const PROMPT: Route = Route::Store(EventKind::Prompt, prompt);
const TOOL_USE: Route = Route::Store(EventKind::ToolUse, tool_use);
const STOP: Route = Route::Store(EventKind::Stop, stop);
const SESSION_END: Route = Route::Store(EventKind::SessionEnd, session_end);
const ANSWERED: Route = Route::Answer(pending_tool);
const MEMORY_WRITE: Route = Route::Store(EventKind::Note, memory_write);

/// OpenCode 1.18.33 plugin hooks and bus events, by the names its plugin passes as `--event`.
pub(super) const OPENCODE_EVENTS: &[(&str, Route)] = &[
    ("session.created", SESSION_START),
    ("chat.message", PROMPT),
    ("tool.execute.before", ANSWERED),
    ("tool.execute.after", TOOL_USE),
    ("session.idle", STOP),
];

/// OpenCode has no shell hooks: its plugin (`install/opencode_plugin.js`) runs the hook and puts
/// the answer into the system prompt; it answers nothing about files yet.
pub(super) const OPENCODE_SLOTS: &[(&str, Slot)] =
    &[("session.created", Slot::SessionStart), ("chat.message", Slot::Prompt)];

/// Copilot CLI 1.0.102 hooks. Its payloads carry no event name, so `--event` is required.
pub(super) const COPILOT_EVENTS: &[(&str, Route)] = &[
    ("sessionStart", SESSION_START),
    ("userPromptSubmitted", PROMPT),
    ("preToolUse", ANSWERED),
    ("postToolUse", TOOL_USE),
    ("agentStop", STOP),
    ("sessionEnd", SESSION_END),
];

/// Where Copilot CLI takes context, as seen reaching the model. `preToolUse` takes none, so a
/// file is answered with the read's result (`postToolUse`).
pub(super) const COPILOT_SLOTS: &[(&str, Slot)] = &[
    ("sessionStart", Slot::SessionStart),
    ("userPromptSubmitted", Slot::Prompt),
    ("postToolUse", Slot::FileRead),
];

/// Hermes Agent 0.19.0 shell hooks. `on_session_end` fires after every turn and
/// `on_session_finalize` once at exit (not under `-z`), so a session may end more than once.
/// `on_memory_write` comes only from our memory provider: Hermes's own memory tool wrote an
/// entry, which other agents should see too.
pub(super) const HERMES_EVENTS: &[(&str, Route)] = &[
    ("on_session_start", SESSION_START),
    ("pre_llm_call", PROMPT),
    ("pre_tool_call", ANSWERED),
    ("post_tool_call", TOOL_USE),
    ("post_llm_call", STOP),
    ("on_session_end", SESSION_END),
    ("on_session_finalize", SESSION_END),
    ("on_memory_write", MEMORY_WRITE),
];

/// Where Hermes takes context. Its `on_session_start` output is not read, so Hermes gets the
/// briefing with its first prompt; `pre_tool_call` takes none.
pub(super) const HERMES_SLOTS: &[(&str, Slot)] = &[("pre_llm_call", Slot::Prompt)];

/// Tool families by the names agents without an adapter use, compared case-insensitively.
pub(super) const TOOLS: &[(&str, ToolKind)] = &[
    ("bash", ToolKind::Shell),
    ("terminal", ToolKind::Shell),
    ("shell", ToolKind::Shell),
    ("run_shell_command", ToolKind::Shell),
    ("exec_command", ToolKind::Shell),
    ("read", ToolKind::Read),
    ("view", ToolKind::Read),
    ("read_file", ToolKind::Read),
    ("edit", ToolKind::Edit),
    ("multiedit", ToolKind::Edit),
    ("str_replace", ToolKind::Edit),
    ("patch", ToolKind::Edit),
    ("apply_patch", ToolKind::Edit),
    ("replace", ToolKind::Edit),
    ("write", ToolKind::Write),
    ("create", ToolKind::Write),
    ("write_file", ToolKind::Write),
    ("grep", ToolKind::Search),
    ("glob", ToolKind::Search),
    ("search", ToolKind::Search),
    ("search_files", ToolKind::Search),
    ("list", ToolKind::Search),
    ("ls", ToolKind::Search),
    ("webfetch", ToolKind::Web),
    ("web_fetch", ToolKind::Web),
    ("fetch", ToolKind::Web),
    ("websearch", ToolKind::Web),
    ("web_search", ToolKind::Web),
    ("web_extract", ToolKind::Web),
    ("task", ToolKind::Agent),
    ("agent", ToolKind::Agent),
    ("delegate_task", ToolKind::Agent),
    ("todowrite", ToolKind::Meta),
    ("todo", ToolKind::Meta),
    ("memory", ToolKind::Meta),
    ("mcp_*", ToolKind::Mcp),
];

/// For an agent without a table: the route another agent's table gave the event name, read the
/// generic way (the payload may be in any agent's spelling).
pub(super) fn route(found: Route) -> Route {
    match found {
        Route::Store(EventKind::SessionStart, _) => SESSION_START,
        Route::Store(EventKind::Prompt, _) => PROMPT,
        Route::Store(EventKind::ToolUse, _) => TOOL_USE,
        Route::Store(EventKind::Stop, _) => STOP,
        Route::Store(EventKind::SessionEnd, _) => SESSION_END,
        Route::Store(EventKind::Note, _) => Route::Skip(NOT_CAPTURED),
        Route::Answer(_) => ANSWERED,
        Route::Skip(_) => found,
    }
}

/// Where fields may sit, searched in order: the top level, Hermes's `extra`, OpenCode's plugin
/// `input`/`output` and its bus events' `properties` (and the session `info` inside).
const SCOPES: &[&[&str]] = &[
    &[],
    &["extra"],
    &["input"],
    &["output"],
    &["input", "properties"],
    &["input", "properties", "info"],
];

const SESSION_KEYS: &[&str] = &["session_id", "sessionId", "sessionID"];
const CWD_KEYS: &[&str] = &["cwd", "directory"];
const TRANSCRIPT_KEYS: &[&str] = &["transcript_path", "transcriptPath"];
const PROMPT_KEYS: &[&str] = &["prompt", "user_message", "initialPrompt", "parts"];
const TOOL_KEYS: &[&str] = &["tool_name", "toolName", "tool"];
const INPUT_KEYS: &[&str] = &["tool_input", "toolArgs", "toolInput", "args"];
const OUTPUT_KEYS: &[&str] = &["tool_response", "toolResult", "result", "output"];
const LAST_MESSAGE_KEYS: &[&str] =
    &["last_assistant_message", "assistant_response", "prompt_response", "response"];
const EXIT_KEYS: &[&str] = &["exit_code", "exitCode", "exit"];
/// Words agents use for a tool call that did not succeed (`status`, `resultType`).
const FAILED: &[&str] = &["error", "failure", "failed", "rejected", "denied", "blocked"];

/// The first non-null value under any of `keys`, searching each scope in turn.
fn lookup<'v>(payload: &'v Value, keys: &[&str]) -> Option<&'v Value> {
    SCOPES.iter().find_map(|scope| {
        let object = scope.iter().try_fold(payload, |value, key| value.get(key))?;
        keys.iter().find_map(|key| object.get(key).filter(|value| !value.is_null()))
    })
}

fn text_at(payload: &Value, keys: &[&str]) -> Option<String> {
    lookup(payload, keys)?
        .as_str()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

fn field_at(payload: &Value, keys: &[&str]) -> Field<String> {
    lookup(payload, keys).cloned().map_or(Field::Absent, Field::from_value)
}

pub(super) fn head(hook: &Hook<'_>) -> Result<Head, AdapterError> {
    let payload = hook.payload;
    Ok(Head {
        session: field_at(payload, SESSION_KEYS),
        cwd: text_at(payload, CWD_KEYS),
        transcript_path: text_at(payload, TRANSCRIPT_KEYS),
        at_ms: lookup(payload, &["timestamp"]).and_then(timestamp_ms),
    })
}

fn session_start(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let payload = hook.payload;
    Ok(Draft::session_start(text_at(payload, &["source"]), text_at(payload, &["model"])))
}

fn prompt(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    // OpenCode sends the prompt as message parts; `text_of` joins their text.
    let prompt =
        lookup(hook.payload, PROMPT_KEYS).map(text_of).filter(|text| !text.trim().is_empty());
    Ok(Draft::prompt(prompt.ok_or_else(|| hook.missing("prompt"))?))
}

/// The tool call of a pre-tool event, in any agent's spelling.
fn pending_tool(hook: &Hook<'_>) -> Result<(Field<String>, Option<Value>), AdapterError> {
    let payload = hook.payload;
    Ok((field_at(payload, TOOL_KEYS), lookup(payload, INPUT_KEYS).cloned()))
}

fn tool_use(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let payload = hook.payload;
    let raw = lookup(payload, OUTPUT_KEYS).unwrap_or(&Value::Null);
    // Hermes hands the result over as a JSON string: read the object inside.
    let parsed = raw
        .as_str()
        .filter(|text| text.trim_start().starts_with('{'))
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    let result = parsed.as_ref().unwrap_or(raw);
    let input = lookup(payload, INPUT_KEYS).cloned();
    let mut call = hook.tool(field_at(payload, TOOL_KEYS), input)?;
    call.output = text_of(result);
    // OpenCode keeps the exit code in the result's `metadata`.
    call.exit_code = [result, result.get("metadata").unwrap_or(&Value::Null)]
        .iter()
        .find_map(|object| EXIT_KEYS.iter().find_map(|key| object.get(key)?.as_i64()));
    call.is_error = failed(payload, result);
    call.duration_ms = lookup(payload, &["duration_ms", "durationMs"]).and_then(Value::as_u64);
    Ok(Draft::tool_use(call))
}

/// Whether a tool call failed, by any agent's way of saying so (a non-zero exit code counts too,
/// in [`Draft::tool_use`]).
fn failed(payload: &Value, result: &Value) -> bool {
    let flagged =
        ["isError", "is_error"].iter().any(|key| result.get(key) == Some(&Value::Bool(true)));
    let errored = result.get("error").is_some_and(|error| !is_empty(error))
        || lookup(payload, &["error_message"]).is_some_and(|error| !is_empty(error));
    let status = [lookup(payload, &["status"]), result.get("resultType")]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|status| FAILED.iter().any(|word| word.eq_ignore_ascii_case(status)));
    flagged || errored || status
}

fn stop(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    Ok(Draft::stop(text_at(hook.payload, LAST_MESSAGE_KEYS)))
}

fn session_end(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    Ok(Draft::session_end(text_at(hook.payload, &["reason"])))
}

/// An entry the agent wrote to its own memory (`action` add, replace or remove, into `target`
/// memory or user), kept as a note under its words.
fn memory_write(hook: &Hook<'_>) -> Result<Draft, AdapterError> {
    let payload = hook.payload;
    let content = text_at(payload, &["content"]).ok_or_else(|| hook.missing("content"))?;
    let action = text_at(payload, &["action"]).unwrap_or_else(|| "add".to_owned());
    let target = text_at(payload, &["target"]).unwrap_or_else(|| "memory".to_owned());
    let summary = format!("Memory {action} ({target}): {content}");
    let body = serde_json::json!({ "action": action, "target": target, "content": content });
    Ok(Draft::new(EventKind::Note, summary, content, body))
}
