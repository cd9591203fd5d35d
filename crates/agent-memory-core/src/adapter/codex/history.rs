//! Codex CLI's history: its rollout files,
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, one per session (a
//! resumed session appends to its own), read back as the hook payloads Codex sends.
//!
//! Every line is `{timestamp, type, payload}`. `session_meta` opens the session (its `id` is the
//! hooks' `session_id`); an `event_msg` `task_started` opens a turn and `task_complete`, with
//! `last_agent_message`, ends it: the turn's `Stop`. A prompt is the `event_msg` the person's
//! input became (`item_completed` of a `UserMessage`; `user_message` in older files), never a
//! `response_item` user message, which also carries the environment context and AGENTS.md
//! instructions Codex adds. A tool call is a `response_item` (`function_call`,
//! `custom_tool_call`, `local_shell_call`) completed by the `item_completed` Codex writes when
//! it ends (`CommandExecution`, `McpToolCall`, `FileChange`; `exec_command_end` and
//! `mcp_tool_call_end` in older files) or else by its `*_output` item. A shell command is
//! `PostToolUse` of `Bash` with its output as the string `tool_response`, an MCP call
//! `mcp__<server>__<tool>` with the server's result, a file change the `apply_patch` call the
//! hooks never report (as `rollout.rs` makes it at a stop). Developer messages (hook context
//! among them), reasoning, token counts, settings and world state are Codex's bookkeeping.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::{Value, json};

use super::rollout::as_patch;
use crate::adapter::history::{
    HistorySource, Layout, LineRead, Recorded, SessionHead, SessionReader,
};
use crate::adapter::{ConfigBase, ConfigRoot, parse_iso_ms};

pub(in crate::adapter) const SOURCE: HistorySource = HistorySource {
    root: ConfigRoot { env: Some("CODEX_HOME"), base: ConfigBase::Home, dir: ".codex" },
    layout: Layout::Files {
        dir: "sessions",
        depth: 3,
        prefix: "rollout-",
        suffix: ".jsonl",
        index: None,
        open: |file| Box::new(Reader::new(file.path)),
    },
};

/// The line types Codex 0.171.0 writes: the first three say what a hook would, `turn_context`
/// the model; the rest is bookkeeping.
const KNOWN: &[&str] = &[
    "session_meta",
    "event_msg",
    "response_item",
    "turn_context",
    "world_state",
    "token_usage_record",
    "compacted",
];

/// What Codex puts in the person's place that they did not type: the environment and the
/// project's instructions, older files' marker of an interrupted turn and of a `!` command.
const NOT_TYPED: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<turn_aborted>",
    "<user_shell_command>",
];

/// The headers Codex writes above a command's output for the model (`Chunk ID: …\nWall time:
/// …\nProcess exited with code 0\nOriginal token count: 4\nOutput:\n…`); the hooks get the output
/// alone.
const OUTPUT_HEADERS: &[&str] =
    &["Chunk ID:", "Wall time:", "Process exited", "Process running", "Exit code:"];

#[derive(Debug, Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    payload: Value,
}

/// What a tool call is to the hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A command: `Bash`, with `{command}`.
    Shell,
    /// Input to a command already running: its output belongs to that command's call.
    Stdin,
    Patch,
    Mcp,
    Other,
}

/// A tool call waiting for its end.
#[derive(Debug)]
struct Call {
    kind: Kind,
    name: String,
    input: Value,
}

/// The turn being read.
#[derive(Debug, Default)]
struct Turn {
    id: Option<String>,
    /// Its latest prompt's text, so one prompt written twice (as an event and an item) counts once.
    prompt: Option<String>,
    /// Its latest answer text.
    answer: Option<String>,
}

struct Reader {
    path: String,
    head: SessionHead,
    /// The model, from the latest `turn_context`.
    model: Option<String>,
    /// When the session began, until its `SessionStart` is made (it waits for the model).
    start: Option<i64>,
    calls: HashMap<String, Call>,
    /// Calls already made into a record: a call ends in more than one line.
    done: HashSet<String>,
    turn: Turn,
    /// The time of the latest line that had one.
    last_ms: Option<i64>,
}

impl Reader {
    fn new(path: &str) -> Reader {
        Reader {
            path: path.to_owned(),
            head: SessionHead::default(),
            model: None,
            start: None,
            calls: HashMap::new(),
            done: HashSet::new(),
            turn: Turn::default(),
            last_ms: None,
        }
    }

    /// A record, with the fields every hook payload of the session carries.
    fn record(&self, event: &'static str, extra: Value, at_ms: i64, source_id: String) -> Recorded {
        let mut payload = json!({
            "session_id": self.head.session,
            "transcript_path": self.path,
            "cwd": self.head.cwd,
            "hook_event_name": event,
        });
        if let Some(fields) = payload.as_object_mut() {
            if event != "SessionStart"
                && let Some(turn) = &self.turn.id
            {
                fields.insert("turn_id".into(), json!(turn));
            }
            if let Some(model) = &self.model {
                fields.insert("model".into(), json!(model));
            }
            if let Value::Object(extra) = extra {
                fields.extend(extra);
            }
        }
        Recorded { event_name: event, payload, at_ms, source_id }
    }

    /// The session's start, once: it waits for the first turn's model, or for anything else.
    fn flush_start(&mut self, out: &mut Vec<Recorded>) {
        let Some(at_ms) = self.start.take() else { return };
        let id = format!("start-{}", self.head.session.as_deref().unwrap_or_default());
        out.push(self.record("SessionStart", json!({ "source": "startup" }), at_ms, id));
    }

    fn push(&mut self, record: Recorded, out: &mut Vec<Recorded>) {
        self.flush_start(out);
        out.push(record);
    }

    fn session_meta(&mut self, payload: &Value, at_ms: i64, out: &mut Vec<Recorded>) {
        let Some(id) = payload["id"].as_str().or(payload["session_id"].as_str()) else { return };
        match self.head.session.as_deref() {
            None => {
                self.head.session = Some(id.to_owned());
                self.head.cwd = payload["cwd"].as_str().map(str::to_owned);
                self.head.started_ms = Some(at_ms);
                self.start = Some(at_ms);
            }
            // The same session opened again: `codex resume` in a version that says so.
            Some(known) if known == id && self.start.is_none() => {
                let record = self.record(
                    "SessionStart",
                    json!({ "source": "resume" }),
                    at_ms,
                    format!("resume-{at_ms}"),
                );
                out.push(record);
            }
            // Another session's meta (a fork's parent): not this session's start.
            Some(_) => {}
        }
    }

    fn event(&mut self, payload: &Value, at_ms: i64, out: &mut Vec<Recorded>) {
        match payload["type"].as_str().unwrap_or_default() {
            "task_started" => {
                self.turn =
                    Turn { id: payload["turn_id"].as_str().map(str::to_owned), ..Turn::default() };
            }
            "user_message" => {
                // Older files mark what Codex itself wrote there with a kind other than plain.
                if payload["kind"].as_str().is_none_or(|kind| kind == "plain")
                    && let Some(text) = payload["message"].as_str()
                {
                    self.prompt(text, format!("user-{at_ms}"), at_ms, out);
                }
            }
            "agent_message" => {
                if let Some(text) = payload["message"].as_str().filter(|t| !t.trim().is_empty()) {
                    self.turn.answer = Some(text.to_owned());
                }
            }
            "item_completed" => self.item(&payload["item"], at_ms, out),
            "exec_command_end" => {
                let output = payload["aggregated_output"]
                    .as_str()
                    .or(payload["stdout"].as_str())
                    .unwrap_or_default();
                if let Some(id) = payload["call_id"].as_str() {
                    self.shell_end(id, &payload["command"], output, at_ms, out);
                }
            }
            "mcp_tool_call_end" => {
                let invocation = &payload["invocation"];
                let result = match &payload["result"] {
                    Value::Object(result) if result.contains_key("Ok") => result["Ok"].clone(),
                    Value::Object(result) if result.contains_key("Err") => {
                        mcp_error(&result["Err"])
                    }
                    other => other.clone(),
                };
                if let Some(id) = payload["call_id"].as_str() {
                    let (server, tool) = (&invocation["server"], &invocation["tool"]);
                    self.mcp_end(id, server, tool, &invocation["arguments"], result, at_ms, out);
                }
            }
            "task_complete" => self.stop(payload, at_ms, out),
            // An interrupted turn runs no `Stop` hook.
            "turn_aborted" => self.end_turn(),
            _ => {}
        }
    }

    /// An item Codex completed: the person's message, the agent's, or a tool call's end.
    fn item(&mut self, item: &Value, at_ms: i64, out: &mut Vec<Recorded>) {
        let Some(id) = item["id"].as_str() else { return };
        match item["type"].as_str().unwrap_or_default() {
            "UserMessage" => {
                let text = texts(&item["content"]);
                self.prompt(&text, id.to_owned(), at_ms, out);
            }
            "AgentMessage" => {
                let text = texts(&item["content"]);
                if !text.is_empty() {
                    self.turn.answer = Some(text);
                }
            }
            "CommandExecution" => {
                let output = item["aggregated_output"].as_str().unwrap_or_default();
                self.shell_end(id, &item["command"], output, at_ms, out);
            }
            "McpToolCall" => {
                let result = match &item["result"] {
                    result @ Value::Object(_) => result.clone(),
                    _ => mcp_error(&item["error"]),
                };
                let (server, tool) = (&item["server"], &item["tool"]);
                self.mcp_end(id, server, tool, &item["arguments"], result, at_ms, out);
            }
            "FileChange" => self.file_change(id, item, at_ms, out),
            _ => {}
        }
    }

    fn prompt(&mut self, text: &str, source_id: String, at_ms: i64, out: &mut Vec<Recorded>) {
        let trimmed = text.trim_start();
        if trimmed.is_empty() || NOT_TYPED.iter().any(|p| trimmed.starts_with(p)) {
            return;
        }
        // Some versions write the same input as an event and as an item.
        if self.turn.prompt.as_deref() == Some(text) {
            return;
        }
        self.turn.prompt = Some(text.to_owned());
        let record = self.record("UserPromptSubmit", json!({ "prompt": text }), at_ms, source_id);
        self.push(record, out);
    }

    fn stop(&mut self, payload: &Value, at_ms: i64, out: &mut Vec<Recorded>) {
        if let Some(turn) = payload["turn_id"].as_str() {
            self.turn.id = Some(turn.to_owned());
        }
        let answer = payload["last_agent_message"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| self.turn.answer.clone());
        let id = match &self.turn.id {
            Some(turn) => format!("stop-{turn}"),
            None => format!("stop-{at_ms}"),
        };
        let stop = json!({ "stop_hook_active": false, "last_assistant_message": answer });
        let record = self.record("Stop", stop, at_ms, id);
        self.push(record, out);
        self.end_turn();
    }

    /// The turn is over: a command still running is killed with it, unseen by any hook.
    fn end_turn(&mut self) {
        self.turn = Turn::default();
        self.calls.clear();
    }

    /// A model's tool call, waiting for its end.
    fn call(&mut self, payload: &Value) {
        let Some(id) = payload["call_id"].as_str() else { return };
        let name = payload["name"].as_str().unwrap_or_default();
        let call = match payload["type"].as_str().unwrap_or_default() {
            "local_shell_call" => Call {
                kind: Kind::Shell,
                name: "Bash".into(),
                input: json!({ "command": command_line(&payload["action"]["command"]) }),
            },
            "custom_tool_call" if name == "apply_patch" => Call {
                kind: Kind::Patch,
                name: name.into(),
                input: json!({ "input": payload["input"] }),
            },
            "custom_tool_call" => Call {
                kind: Kind::Other,
                name: name.into(),
                input: payload.get("input").cloned().unwrap_or(Value::Null),
            },
            _ => function_call(payload, name),
        };
        self.calls.insert(id.to_owned(), call);
    }

    /// A call's output item: the call's end, unless an item already ended it or the command
    /// still runs (its end is the `CommandExecution` written when it exits).
    fn call_output(&mut self, payload: &Value, at_ms: i64, out: &mut Vec<Recorded>) {
        let Some(id) = payload["call_id"].as_str() else { return };
        if self.done.contains(id) {
            self.calls.remove(id);
            return;
        }
        let Some(call) = self.calls.get(id) else { return };
        let (text, running) = output_text(&payload["output"]);
        let response = match call.kind {
            Kind::Stdin => {
                self.calls.remove(id);
                return;
            }
            Kind::Shell if running => return,
            Kind::Mcp => json!({ "content": [{ "type": "text", "text": text }], "isError": false }),
            Kind::Shell | Kind::Patch | Kind::Other => json!(text),
        };
        let Some(call) = self.calls.remove(id) else { return };
        self.tool_use(id, call.name, call.input, response, at_ms, out);
    }

    fn shell_end(
        &mut self,
        id: &str,
        command: &Value,
        output: &str,
        at_ms: i64,
        out: &mut Vec<Recorded>,
    ) {
        // A command no tool call of the model's ran (a `!` command of the person's) has no hook.
        let Some(call) = self.calls.remove(id) else { return };
        let input = match call.kind {
            Kind::Shell => call.input,
            _ => json!({ "command": command_line(command) }),
        };
        self.tool_use(id, "Bash".into(), input, json!(output), at_ms, out);
    }

    #[allow(clippy::too_many_arguments)]
    fn mcp_end(
        &mut self,
        id: &str,
        server: &Value,
        tool: &Value,
        arguments: &Value,
        result: Value,
        at_ms: i64,
        out: &mut Vec<Recorded>,
    ) {
        let call = self.calls.remove(id);
        let name = match (server.as_str(), tool.as_str(), &call) {
            (Some(server), Some(tool), _) => format!("mcp__{server}__{tool}"),
            (_, _, Some(call)) => call.name.clone(),
            _ => return,
        };
        let input = match (arguments, call) {
            (Value::Null, Some(call)) => call.input,
            (arguments, _) => arguments.clone(),
        };
        self.tool_use(id, name, input, result, at_ms, out);
    }

    /// A patch applied: the `PostToolUse` Codex never sends for `apply_patch`, as `rollout.rs`
    /// makes it at a stop.
    fn file_change(&mut self, id: &str, item: &Value, at_ms: i64, out: &mut Vec<Recorded>) {
        self.calls.remove(id);
        let Some(changes) = item["changes"].as_object() else { return };
        let patch = as_patch(changes, self.head.cwd.as_deref().unwrap_or(""));
        let status = item["status"].as_str().unwrap_or("completed");
        let mut output = item["stdout"].as_str().unwrap_or("").to_owned();
        if status != "completed" {
            let stderr = item["stderr"].as_str().unwrap_or("");
            output = format!("apply_patch {status}: {stderr}{output}");
        }
        let input = json!({ "input": patch });
        self.tool_use(id, "apply_patch".into(), input, json!(output), at_ms, out);
    }

    fn tool_use(
        &mut self,
        id: &str,
        name: String,
        input: Value,
        response: Value,
        at_ms: i64,
        out: &mut Vec<Recorded>,
    ) {
        if !self.done.insert(id.to_owned()) {
            return;
        }
        let fields = json!({
            "tool_name": name,
            "tool_input": input,
            "tool_response": response,
            "tool_use_id": id,
        });
        let record = self.record("PostToolUse", fields, at_ms, id.to_owned());
        self.push(record, out);
    }

    fn response_item(&mut self, payload: &Value, at_ms: i64, out: &mut Vec<Recorded>) {
        match payload["type"].as_str().unwrap_or_default() {
            "function_call" | "custom_tool_call" | "local_shell_call" => self.call(payload),
            "function_call_output" | "custom_tool_call_output" => {
                self.call_output(payload, at_ms, out);
            }
            "message" if payload["role"] == "assistant" => {
                let text = texts(&payload["content"]);
                if !text.is_empty() {
                    self.turn.answer = Some(text);
                }
            }
            _ => {}
        }
    }
}

/// A `function_call` as the hooks name it: a command is `Bash`, an MCP tool
/// `mcp__<server>__<tool>`, anything else its own name with its parsed arguments.
fn function_call(payload: &Value, name: &str) -> Call {
    let raw = payload["arguments"].as_str().unwrap_or_default();
    let args: Value = if raw.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(raw).unwrap_or_else(|_| json!(raw))
    };
    let namespace = payload["namespace"].as_str().unwrap_or_default();
    if namespace.starts_with("mcp__") || name.starts_with("mcp__") {
        let name = match namespace {
            "" => name.to_owned(),
            ns if ns.ends_with("__") => format!("{ns}{name}"),
            ns => format!("{ns}__{name}"),
        };
        return Call { kind: Kind::Mcp, name, input: args };
    }
    match name {
        "exec_command" | "shell" | "shell_command" | "local_shell" | "container.exec" => {
            let command = args.get("cmd").unwrap_or(&args["command"]);
            Call {
                kind: Kind::Shell,
                name: "Bash".into(),
                input: json!({ "command": command_line(command) }),
            }
        }
        "write_stdin" => Call { kind: Kind::Stdin, name: name.into(), input: args },
        "apply_patch" => {
            let patch = args.get("input").cloned().unwrap_or(args);
            Call { kind: Kind::Patch, name: name.into(), input: json!({ "input": patch }) }
        }
        _ => Call { kind: Kind::Other, name: name.into(), input: args },
    }
}

/// A command as the hooks give it: the string the model wrote; an argument list's script when
/// it is `bash -lc SCRIPT`, its words joined otherwise.
fn command_line(command: &Value) -> String {
    match command {
        Value::String(line) => line.clone(),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [_, flag, script] if matches!(*flag, "-lc" | "-c") => (*script).to_owned(),
                words => words.join(" "),
            }
        }
        _ => String::new(),
    }
}

/// A call output's text without the headers Codex writes for the model, and whether it says the
/// command still runs. Older files hold `{"output", "metadata"}` as a string; MCP results are a
/// list of content items.
fn output_text(output: &Value) -> (String, bool) {
    match output {
        Value::String(text) => {
            if let Ok(Value::Object(old)) = serde_json::from_str::<Value>(text)
                && let Some(Value::String(inner)) = old.get("output")
            {
                return (inner.clone(), false);
            }
            let running = text.lines().any(|l| l.starts_with("Process running with session ID"));
            (without_headers(text).to_owned(), running)
        }
        Value::Array(items) => {
            let parts: Vec<&str> = items
                .iter()
                .filter_map(|item| item["text"].as_str())
                .map(without_headers)
                .filter(|t| !t.trim().is_empty())
                .collect();
            (parts.join("\n"), false)
        }
        Value::Null => (String::new(), false),
        other => (other.to_string(), false),
    }
}

/// `text` after the headers Codex writes above an output, repeated when a tool's own report
/// repeats them (`apply_patch` run as a command).
fn without_headers(mut text: &str) -> &str {
    while OUTPUT_HEADERS.iter().any(|h| text.starts_with(h)) {
        match text.find("\nOutput:") {
            Some(at) => {
                let rest = &text[at + "\nOutput:".len()..];
                text = rest.strip_prefix('\n').unwrap_or(rest);
            }
            None => return "",
        }
    }
    text
}

/// An MCP call that failed, as the server result the hooks hand over.
fn mcp_error(error: &Value) -> Value {
    let message = match error {
        Value::String(text) => text.clone(),
        Value::Object(fields) => fields
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_owned),
        _ => "the MCP call failed".to_owned(),
    };
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}

/// The text items of a message's content, joined.
fn texts(content: &Value) -> String {
    let Value::Array(items) = content else {
        return content.as_str().unwrap_or_default().to_owned();
    };
    let parts: Vec<&str> = items
        .iter()
        .filter_map(|item| item["text"].as_str())
        .filter(|t| !t.trim().is_empty())
        .collect();
    parts.join("\n")
}

impl SessionReader for Reader {
    fn line(&mut self, line: &[u8], out: &mut Vec<Recorded>) -> LineRead {
        let Ok(line) = serde_json::from_slice::<Line>(line) else { return LineRead::Malformed };
        if !KNOWN.contains(&line.kind.as_str()) {
            return LineRead::Unknown;
        }
        let Some(at_ms) = line.timestamp.as_deref().and_then(parse_iso_ms).or(self.last_ms) else {
            return LineRead::Malformed;
        };
        self.last_ms = Some(at_ms);
        let payload = &line.payload;
        match line.kind.as_str() {
            "session_meta" => self.session_meta(payload, at_ms, out),
            "turn_context" => {
                if let Some(model) = payload["model"].as_str() {
                    self.model = Some(model.to_owned());
                }
                self.flush_start(out);
            }
            // Nothing before the session's meta is of this session.
            _ if self.head.session.is_none() => {}
            "event_msg" => self.event(payload, at_ms, out),
            "response_item" => self.response_item(payload, at_ms, out),
            _ => {}
        }
        LineRead::Known
    }

    fn finish(&mut self, out: &mut Vec<Recorded>) {
        // A call never ended and a turn never completed sent no hook either.
        self.flush_start(out);
    }

    fn head(&self) -> &SessionHead {
        &self.head
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::adapter::closing_answer_of;
    use crate::event::{Event, EventKind};

    const PATH: &str = "/home/dev/.codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-s1.jsonl";

    fn read(lines: &[Value]) -> (Vec<Recorded>, Reader) {
        let mut reader = Reader::new(PATH);
        let mut out = Vec::new();
        for line in lines {
            assert_eq!(
                reader.line(line.to_string().as_bytes(), &mut out),
                LineRead::Known,
                "{line}"
            );
        }
        reader.finish(&mut out);
        (out, reader)
    }

    fn line(kind: &str, at: u32, payload: Value) -> Value {
        json!({ "timestamp": format!("2026-01-01T00:00:{at:02}.000Z"), "type": kind, "payload": payload })
    }

    fn event(at: u32, payload: Value) -> Value {
        line("event_msg", at, payload)
    }

    fn item(at: u32, payload: Value) -> Value {
        line("response_item", at, payload)
    }

    fn completed(at: u32, item: Value) -> Value {
        event(at, json!({ "type": "item_completed", "turn_id": "t1", "item": item }))
    }

    fn meta() -> Value {
        line("session_meta", 0, json!({ "id": "s1", "cwd": "/p", "source": "exec" }))
    }

    fn opening() -> Vec<Value> {
        vec![
            meta(),
            event(0, json!({ "type": "task_started", "turn_id": "t1" })),
            item(
                0,
                json!({ "type": "message", "role": "developer", "content": [{ "type": "input_text", "text": "<permissions instructions>" }] }),
            ),
            item(
                0,
                json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>" }] }),
            ),
            line(
                "turn_context",
                0,
                json!({ "turn_id": "t1", "cwd": "/p", "model": "gpt-5.1-codex" }),
            ),
            item(
                1,
                json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "fix the tests" }] }),
            ),
            completed(
                1,
                json!({ "type": "UserMessage", "id": "u1", "content": [{ "type": "text", "text": "fix the tests" }] }),
            ),
        ]
    }

    fn shell_call(at: u32, id: &str, cmd: &str) -> Value {
        let arguments = json!({ "cmd": cmd }).to_string();
        item(
            at,
            json!({ "type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": id }),
        )
    }

    fn closing(at: u32, answer: &str) -> Vec<Value> {
        vec![
            item(
                at,
                json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": answer }] }),
            ),
            event(
                at,
                json!({ "type": "task_complete", "turn_id": "t1", "last_agent_message": answer }),
            ),
        ]
    }

    #[test]
    fn a_turn_reads_as_its_hooks() {
        let mut lines = opening();
        lines.extend([
            shell_call(2, "c1", "make test"),
            completed(3, json!({ "type": "CommandExecution", "id": "c1", "command": ["/bin/bash", "-lc", "make test"], "status": "failed", "aggregated_output": "1 failed\n", "exit_code": 2 })),
            item(3, json!({ "type": "function_call_output", "call_id": "c1", "output": "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 2\nOriginal token count: 2\nOutput:\n1 failed\n" })),
            item(4, json!({ "type": "function_call", "name": "exec_command", "arguments": "{\"cmd\": \"apply_patch <<'EOF'\\n*** Begin Patch\\nEOF\"}", "call_id": "c2" })),
            completed(5, json!({ "type": "FileChange", "id": "c2", "status": "completed", "stdout": "Success. Updated the following files:\nM a.py\n", "changes": { "/p/a.py": { "type": "update", "unified_diff": "@@ -1 +1 @@\n-x = 1\n+x = 2\n" } } })),
            item(5, json!({ "type": "function_call_output", "call_id": "c2", "output": "Wall time: 0 seconds\nOutput:\nExit code: 0\nWall time: 0 seconds\nOutput:\nSuccess." })),
            item(6, json!({ "type": "function_call", "name": "mem_search", "namespace": "mcp__mem", "arguments": "{\"query\": \"x\"}", "call_id": "c3" })),
            completed(7, json!({ "type": "McpToolCall", "id": "c3", "server": "mem", "tool": "mem_search", "arguments": { "query": "x" }, "status": "failed", "error": { "message": "server gone" } })),
            item(7, json!({ "type": "function_call_output", "call_id": "c3", "output": [{ "type": "input_text", "text": "server gone" }] })),
            line("token_usage_record", 7, json!({ "usage": {} })),
        ]);
        lines.extend(closing(8, "Fixed: x is 2."));
        let (records, reader) = read(&lines);
        let shape = crate::adapter::history::shape(&records);
        assert_eq!(
            shape,
            [
                ("SessionStart", "start-s1", 0),
                ("UserPromptSubmit", "u1", 1_000),
                ("PostToolUse", "c1", 3_000),
                ("PostToolUse", "c2", 5_000),
                ("PostToolUse", "c3", 7_000),
                ("Stop", "stop-t1", 8_000),
            ]
        );
        let [start, prompt, shell, patch, mcp, stop] = &records[..] else { unreachable!() };
        assert_eq!(start.payload["model"], "gpt-5.1-codex");
        assert_eq!(prompt.payload["prompt"], "fix the tests");
        assert_eq!(prompt.payload["turn_id"], "t1");
        assert_eq!(shell.payload["tool_name"], "Bash");
        assert_eq!(shell.payload["tool_input"], json!({ "command": "make test" }));
        assert_eq!(shell.payload["tool_response"], "1 failed\n");
        assert_eq!(shell.payload["tool_use_id"], "c1");
        assert_eq!(patch.payload["tool_name"], "apply_patch");
        assert_eq!(
            patch.payload["tool_input"]["input"],
            "*** Begin Patch\n*** Update File: a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n*** End Patch"
        );
        assert_eq!(mcp.payload["tool_name"], "mcp__mem__mem_search");
        assert_eq!(mcp.payload["tool_response"]["isError"], true);
        assert_eq!(stop.payload["last_assistant_message"], "Fixed: x is 2.");
        assert_eq!(stop.payload["cwd"], "/p");
        assert_eq!(stop.payload["transcript_path"], PATH);
        let head = reader.head();
        assert_eq!((head.session.as_deref(), head.cwd.as_deref()), (Some("s1"), Some("/p")));

        // Read as live capture reads them: the MCP failure is one, the rest as the hooks say.
        let events: Vec<Event> =
            records.iter().filter_map(|r| normalized(r.event_name, &r.payload, r.at_ms)).collect();
        assert_eq!(events.len(), records.len());
        assert!(events[4].facts.failed, "{:?}", events[4].facts);
        assert_eq!(closing_answer_of(&events[5]), Some("Fixed: x is 2."));
    }

    /// A command still running when its call returned ends when Codex records its exit; a
    /// command the person ran (no call of the model's) and one killed at the turn's end send
    /// nothing.
    #[test]
    fn a_command_ends_when_it_exits() {
        let mut lines = opening();
        lines.extend([
            shell_call(2, "c1", "sleep 3; echo late"),
            item(2, json!({ "type": "function_call_output", "call_id": "c1", "output": "Chunk ID: 1\nWall time: 0.5 seconds\nProcess running with session ID 7\nOriginal token count: 0\nOutput:\n" })),
            item(3, json!({ "type": "function_call", "name": "write_stdin", "arguments": "{\"session_id\": 7, \"chars\": \"\"}", "call_id": "c2" })),
            item(5, json!({ "type": "function_call_output", "call_id": "c2", "output": "Chunk ID: 2\nWall time: 2 seconds\nProcess exited with code 0\nOutput:\nlate\n" })),
            completed(5, json!({ "type": "CommandExecution", "id": "c1", "command": ["/bin/bash", "-lc", "sleep 3; echo late"], "aggregated_output": "late\n", "exit_code": 0 })),
            completed(6, json!({ "type": "CommandExecution", "id": "u9", "command": ["ls"], "aggregated_output": "a\n" })),
            shell_call(7, "c3", "sleep 99"),
            item(7, json!({ "type": "function_call_output", "call_id": "c3", "output": "Chunk ID: 3\nProcess running with session ID 8\nOutput:\n" })),
        ]);
        lines.extend(closing(8, "Done."));
        // Killed as the turn ended: the model never saw it end, nor did a hook.
        lines.push(completed(9, json!({ "type": "CommandExecution", "id": "c3", "command": ["/bin/bash", "-lc", "sleep 99"], "aggregated_output": "", "exit_code": -1 })));
        let (records, _) = read(&lines);
        let calls: Vec<(&str, &Value)> = records
            .iter()
            .filter(|r| r.event_name == "PostToolUse")
            .map(|r| (r.source_id.as_str(), &r.payload["tool_response"]))
            .collect();
        assert_eq!(calls, [("c1", &json!("late\n"))]);
        assert_eq!(records[2].payload["tool_input"], json!({ "command": "sleep 3; echo late" }));
    }

    /// Older rollouts: the prompt as a `user_message` event, the shell tool's argument list and
    /// its output as a JSON string, a freeform `apply_patch`, no `item_completed`.
    #[test]
    fn older_rollouts_read_the_same() {
        let lines = [
            meta(),
            event(
                1,
                json!({ "type": "user_message", "message": "<environment_context>x</environment_context>", "kind": "environment_context" }),
            ),
            event(1, json!({ "type": "user_message", "message": "list files", "images": [] })),
            item(
                2,
                json!({ "type": "function_call", "name": "shell", "arguments": "{\"command\": [\"bash\", \"-lc\", \"ls\"]}", "call_id": "c1" }),
            ),
            item(
                3,
                json!({ "type": "function_call_output", "call_id": "c1", "output": "{\"output\":\"a.py\\n\",\"metadata\":{\"exit_code\":0}}" }),
            ),
            item(
                4,
                json!({ "type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch\n*** Add File: b.py\n+B = 1\n*** End Patch", "call_id": "c2" }),
            ),
            item(
                5,
                json!({ "type": "custom_tool_call_output", "call_id": "c2", "output": "{\"output\":\"Success. Updated the following files:\\nA b.py\\n\",\"metadata\":{}}" }),
            ),
            event(6, json!({ "type": "agent_message", "message": "Listed and added." })),
            event(6, json!({ "type": "task_complete", "last_agent_message": null })),
        ];
        let (records, _) = read(&lines);
        let names: Vec<(&str, &str)> =
            records.iter().map(|r| (r.event_name, r.source_id.as_str())).collect();
        let prompt_id = format!("user-{}", records[1].at_ms);
        let stop_id = format!("stop-{}", records[4].at_ms);
        assert_eq!(
            names,
            [
                ("SessionStart", "start-s1"),
                ("UserPromptSubmit", prompt_id.as_str()),
                ("PostToolUse", "c1"),
                ("PostToolUse", "c2"),
                ("Stop", stop_id.as_str()),
            ]
        );
        assert_eq!(records[1].payload["prompt"], "list files");
        assert_eq!(records[2].payload["tool_input"], json!({ "command": "ls" }));
        assert_eq!(records[2].payload["tool_response"], "a.py\n");
        assert_eq!(records[3].payload["tool_name"], "apply_patch");
        assert_eq!(
            records[3].payload["tool_response"],
            "Success. Updated the following files:\nA b.py\n"
        );
        assert_eq!(records[4].payload["last_assistant_message"], "Listed and added.");
    }

    #[test]
    fn a_cut_or_foreign_line_is_told_apart() {
        let mut reader = Reader::new(PATH);
        let mut out = Vec::new();
        assert_eq!(
            reader.line(br#"{"timestamp":"2026-01-01T00:00:00Z","type":"event_m"#, &mut out),
            LineRead::Malformed
        );
        assert_eq!(reader.line(br#"[1, 2]"#, &mut out), LineRead::Malformed);
        assert_eq!(
            reader.line(br#"{"type":"hologram","payload":{}}"#, &mut out),
            LineRead::Unknown
        );
        assert_eq!(
            reader.line(br#"{"type":"world_state","payload":{}}"#, &mut out),
            LineRead::Malformed
        );
        assert_eq!(
            reader.line(
                br#"{"timestamp":"2026-01-01T00:00:00Z","type":"world_state","payload":{}}"#,
                &mut out
            ),
            LineRead::Known
        );
        reader.finish(&mut out);
        assert!(out.is_empty());
    }

    fn normalized(event: &str, payload: &Value, at_ms: i64) -> Option<Event> {
        crate::adapter::history::normalized("codex", event, payload, at_ms)
    }

    /// What live capture stored of a recorded session, with each tool call's id: each stored
    /// hook's event, and at the point its hook first saw it, each file change capture read from
    /// the rollout at the stop.
    fn captured(hooks: &str) -> Vec<(Event, Option<String>)> {
        let lines: Vec<Value> =
            hooks.lines().map(|l| serde_json::from_str(l).expect("a hook line")).collect();
        let stop = lines
            .iter()
            .find(|l| l["event"] == "Stop")
            .and_then(|l| normalized("Stop", &l["payload"], 0))
            .expect("a stop");
        let mut events = Vec::new();
        for line in &lines {
            for seen in line["transcript"].as_array().into_iter().flatten() {
                let change = super::super::rollout::unreported(
                    seen.to_string().as_bytes(),
                    &stop,
                    &HashSet::new(),
                )
                .expect("a file change");
                let event = normalized(change.event_name, &change.payload, change.at_ms);
                events.extend(event.map(|e| (e, Some(change.call_id))));
            }
            let payload = &line["payload"];
            let event = normalized(line["event"].as_str().unwrap_or_default(), payload, 0);
            let id = payload["tool_use_id"].as_str().map(str::to_owned);
            events.extend(event.map(|e| (e, id)));
        }
        events
    }

    /// The recorded sessions of `fixtures/history/codex-*`: their rollout reads as the events
    /// their hooks gave (and the file changes capture read at the stop): prompt, commands,
    /// outputs, call ids and closing answer alike.
    #[test]
    fn the_recorded_sessions_read_as_their_hooks_did() {
        for name in ["codex-retry-apply-patch", "codex-pricing-sed-masked"] {
            let dir = format!(
                "{}/../agent-memory-testkit/fixtures/history/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let session = "00000001-0000-4000-8000-000000000000";
            let file =
                format!(".codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-{session}.jsonl");
            let rollout =
                std::fs::read_to_string(format!("{dir}/home/{file}")).expect("the rollout");
            // The file as the hooks name it.
            let mut reader = Reader::new(&format!("/home/dev/{file}"));
            let mut records = Vec::new();
            for line in rollout.lines() {
                assert_eq!(reader.line(line.as_bytes(), &mut records), LineRead::Known, "{line}");
            }
            reader.finish(&mut records);
            assert_eq!(reader.head().session.as_deref(), Some(session));
            assert_eq!(reader.head().cwd.as_deref(), Some("/home/dev/work/proj"));

            let hooks = std::fs::read_to_string(format!("{dir}/hooks.jsonl")).expect("hooks");
            let read: Vec<(Event, Option<String>)> = records
                .iter()
                .filter_map(|r| {
                    let id = r.payload["tool_use_id"].as_str().map(str::to_owned);
                    Some((normalized(r.event_name, &r.payload, r.at_ms)?, id))
                })
                .collect();
            assert_eq!(read.len(), records.len(), "{name}: every record reads as an event");
            // The history holds no session end; every other event reads the same.
            let view = |events: &[(Event, Option<String>)]| -> Vec<_> {
                events
                    .iter()
                    .filter(|(e, _)| e.kind != EventKind::SessionEnd)
                    .map(|(e, id)| {
                        let where_ = (e.session.clone(), e.cwd.clone(), e.transcript_path.clone());
                        let what = (e.tool.clone(), e.summary.clone(), e.body.clone());
                        (e.kind, where_, what, e.facts.clone(), id.clone())
                    })
                    .collect()
            };
            assert_eq!(view(&read), view(&captured(&hooks)), "{name}");
        }
    }
}
