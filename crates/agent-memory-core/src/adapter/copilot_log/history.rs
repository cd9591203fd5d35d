//! Copilot CLI's history: its session logs, `~/.copilot/session-state/<session id>/events.jsonl`,
//! read back as the hook payloads Copilot sends.
//!
//! Each line is `{type, data, id, parentId, timestamp}` (`timestamp` an RFC 3339 instant, `id` a
//! UUID of its own); the file only grows, a resumed session appending to it. Of its many types,
//! these carry the session: `session.start` (the session id and `context.cwd`) and
//! `session.resume` each begin a run, hence a `sessionStart`; a `user.message` is a prompt
//! (`data.content` as typed; `transformedContent` is what the model saw, with our injected
//! context); an `assistant.message` holds the model's text and its `toolRequests`;
//! `tool.execution_start` names a call and `tool.execution_complete` ends it (`success`, the
//! model's `result.content` or an `error`); `assistant.turn_end` closes each model call, the
//! last one of a prompt's turn its `agentStop`; `session.shutdown` ends the run, its
//! `sessionEnd`. Copilot's own `agentStop` carries no closing answer: here the turn's last
//! text goes into it as `last_assistant_message`, which the adapter reads, so the work pass has
//! nothing left to fill in from the log.
//!
//! A `user.message` Copilot injected itself (one naming its `source`, an autopilot nudge) is no
//! prompt. A call that failed is `postToolUseFailure`, as Copilot fires it (with the error's
//! message): agent-memory registers no such hook, so neither it nor this stores failures.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::adapter::history::{
    HistorySource, Layout, LineRead, Recorded, SessionHead, SessionReader,
};
use crate::adapter::{ConfigBase, ConfigRoot, parse_iso_ms};

pub(in crate::adapter) const SOURCE: HistorySource = HistorySource {
    root: ConfigRoot { env: Some("COPILOT_HOME"), base: ConfigBase::Home, dir: ".copilot" },
    layout: Layout::Files {
        dir: "session-state",
        depth: 1,
        prefix: "events",
        suffix: ".jsonl",
        index: None,
        open: |file| Box::new(Reader::new(file.path)),
    },
};

/// What Copilot appends to a tool's result when a `postToolUse` hook answered it (ours, with
/// context), after `Tool "<name>" succeeded.`: the hook itself saw the result without it.
const HOOK_GUIDANCE: &str = " succeeded. Additional guidance from postToolUse hooks:";

/// One log line, as far as the reader needs it.
#[derive(Debug, Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: Value,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
}

/// A tool call waiting for its completion.
#[derive(Debug)]
struct Call {
    name: String,
    args: Value,
}

/// A run's `sessionStart`, held until its first prompt (which it names as `initialPrompt`).
#[derive(Debug)]
struct Start {
    source: &'static str,
    at_ms: i64,
    id: String,
}

/// The turn being read: from a typed prompt to the next one, or the run's end.
#[derive(Debug, Default)]
struct Turn {
    /// The `id` of its prompt's line, which names its stop.
    prompt: Option<String>,
    /// Its latest answer text.
    answer: Option<String>,
    /// When its latest model call ended (Copilot runs the stop hook right after).
    last_ms: Option<i64>,
}

struct Reader {
    path: String,
    head: SessionHead,
    /// The working directory of the current run (a resumed run may start elsewhere).
    cwd: Option<String>,
    start: Option<Start>,
    calls: HashMap<String, Call>,
    turn: Turn,
}

impl Reader {
    fn new(path: &str) -> Reader {
        // The log's folder is named after the session: enough for a log cut before its start.
        let session = std::path::Path::new(path)
            .parent()
            .and_then(|dir| dir.file_name())
            .and_then(|name| name.to_str())
            .filter(|name| !name.is_empty())
            .map(str::to_owned);
        Reader {
            path: path.to_owned(),
            head: SessionHead { session, ..SessionHead::default() },
            cwd: None,
            start: None,
            calls: HashMap::new(),
            turn: Turn::default(),
        }
    }

    /// The hook payload of `event`: the fields every Copilot payload carries, then `fields`.
    fn record(
        &self,
        event: &'static str,
        fields: Value,
        at_ms: i64,
        source_id: String,
    ) -> Recorded {
        let mut payload = Map::new();
        payload.insert("sessionId".into(), json!(self.head.session));
        payload.insert("timestamp".into(), json!(at_ms));
        payload.insert("cwd".into(), json!(self.cwd));
        if let Value::Object(fields) = fields {
            payload.extend(fields);
        }
        Recorded { event_name: event, payload: Value::Object(payload), at_ms, source_id }
    }

    /// The held `sessionStart`, naming the run's first prompt when it is known.
    fn flush_start(&mut self, prompt: Option<&str>, out: &mut Vec<Recorded>) {
        let Some(start) = self.start.take() else { return };
        let mut fields = json!({ "source": start.source });
        if let Some(prompt) = prompt {
            fields["initialPrompt"] = json!(prompt);
        }
        out.push(self.record("sessionStart", fields, start.at_ms, start.id));
    }

    /// The turn being read ends: its `agentStop`, when a prompt began it and the model answered.
    fn end_turn(&mut self, out: &mut Vec<Recorded>) {
        let turn = std::mem::take(&mut self.turn);
        let (Some(prompt), Some(last_ms)) = (turn.prompt, turn.last_ms) else { return };
        let mut stop = json!({
            "transcriptPath": self.path,
            "stopReason": "end_turn",
            "stop_hook_active": false,
        });
        if let Some(answer) = turn.answer {
            stop["last_assistant_message"] = json!(answer);
        }
        out.push(self.record("agentStop", stop, last_ms, format!("stop-{prompt}")));
    }

    /// A run begins: the turn before it is over, and its `sessionStart` waits for a prompt.
    fn run(
        &mut self,
        data: &Value,
        source: &'static str,
        id: String,
        at_ms: i64,
        out: &mut Vec<Recorded>,
    ) {
        self.end_turn(out);
        self.flush_start(None, out);
        if let Some(cwd) = data["context"]["cwd"].as_str() {
            self.cwd = Some(cwd.to_owned());
            self.head.cwd.get_or_insert_with(|| cwd.to_owned());
        }
        self.start = Some(Start { source, at_ms, id });
    }

    fn user(&mut self, data: &Value, id: String, at_ms: i64, out: &mut Vec<Recorded>) {
        let text = data["content"].as_str().unwrap_or_default();
        // A message injected by Copilot itself (a skill's body, another agent's prompt, the
        // autopilot's nudge) names its origin; none reaches `userPromptSubmitted`, and the turn
        // it came in goes on.
        let injected = data["source"].as_str().is_some_and(|s| !s.is_empty())
            || data["isAutopilotContinuation"] == true;
        if injected || text.trim().is_empty() {
            return;
        }
        self.end_turn(out);
        self.flush_start(Some(text), out);
        out.push(self.record("userPromptSubmitted", json!({ "prompt": text }), at_ms, id.clone()));
        self.turn.prompt = Some(id);
    }

    fn assistant(&mut self, data: &Value, at_ms: i64) {
        for request in data["toolRequests"].as_array().into_iter().flatten() {
            if let (Some(id), Some(name)) =
                (request["toolCallId"].as_str(), request["name"].as_str())
            {
                let args = request.get("arguments").cloned().unwrap_or(Value::Null);
                self.calls.entry(id.to_owned()).or_insert(Call { name: name.to_owned(), args });
            }
        }
        if self.turn.prompt.is_none() {
            return;
        }
        if let Some(text) = data["content"].as_str().map(str::trim).filter(|t| !t.is_empty()) {
            self.turn.answer = Some(text.to_owned());
        }
        self.turn.last_ms = self.turn.last_ms.max(Some(at_ms));
    }

    /// A call begins: its name as the hooks give it (an MCP tool's as `<server>-<tool>`).
    fn tool_start(&mut self, data: &Value) {
        let (Some(id), Some(name)) = (data["toolCallId"].as_str(), data["toolName"].as_str())
        else {
            return;
        };
        let args = data.get("arguments").cloned().unwrap_or(Value::Null);
        self.calls.insert(id.to_owned(), Call { name: name.to_owned(), args });
    }

    fn tool_complete(&mut self, data: &Value, at_ms: i64, out: &mut Vec<Recorded>) {
        let Some(id) = data["toolCallId"].as_str() else { return };
        // A call never named (its request cut from the log) cannot make a payload.
        let Some(call) = self.calls.remove(id) else { return };
        self.flush_start(None, out);
        let record = if data["success"] == true {
            let text = data["result"]["content"].as_str().unwrap_or_default();
            let fields = json!({
                "toolName": call.name,
                "toolArgs": call.args,
                "toolResult": {
                    "resultType": "success",
                    "textResultForLlm": without_guidance(text, &call.name),
                },
            });
            self.record("postToolUse", fields, at_ms, id.to_owned())
        } else {
            let error = data["error"]["message"].as_str().or(data["error"].as_str());
            let fields = json!({
                "toolName": call.name,
                "toolArgs": call.args,
                "error": error.unwrap_or_default(),
            });
            self.record("postToolUseFailure", fields, at_ms, id.to_owned())
        };
        out.push(record);
        if self.turn.prompt.is_some() {
            self.turn.last_ms = self.turn.last_ms.max(Some(at_ms));
        }
    }

    fn shutdown(&mut self, data: &Value, id: String, at_ms: i64, out: &mut Vec<Recorded>) {
        self.end_turn(out);
        self.flush_start(None, out);
        let reason = match data["shutdownType"].as_str() {
            Some("error") => "error",
            _ => "complete",
        };
        out.push(self.record("sessionEnd", json!({ "reason": reason }), at_ms, id));
    }
}

/// A tool's result as its `postToolUse` hook saw it: without what hooks appended to it.
fn without_guidance<'t>(text: &'t str, tool: &str) -> &'t str {
    let marker = format!("\n\nTool \"{tool}\"{HOOK_GUIDANCE}");
    text.find(&marker).map_or(text, |at| &text[..at])
}

impl SessionReader for Reader {
    fn line(&mut self, line: &[u8], out: &mut Vec<Recorded>) -> LineRead {
        let Ok(line) = serde_json::from_slice::<Line>(line) else { return LineRead::Malformed };
        let kind = line.kind.as_str();
        if !READ.contains(&kind) {
            return if KNOWN.contains(&kind) || kind.starts_with("session.") {
                LineRead::Known
            } else {
                LineRead::Unknown
            };
        }
        let Some(at_ms) = line.timestamp.as_deref().and_then(parse_iso_ms) else {
            return LineRead::Malformed;
        };
        self.head.started_ms.get_or_insert(at_ms);
        let data = &line.data;
        // The line's own id; a line without one (never seen) is named by its time.
        let id = line.id.unwrap_or_else(|| format!("{kind}-{at_ms}"));
        match kind {
            "session.start" => {
                if let Some(session) = data["sessionId"].as_str().filter(|s| !s.is_empty()) {
                    self.head.session = Some(session.to_owned());
                }
                self.run(data, "new", id, at_ms, out);
            }
            "session.resume" => self.run(data, "resume", id, at_ms, out),
            "user.message" => self.user(data, id, at_ms, out),
            "assistant.message" => self.assistant(data, at_ms),
            "tool.execution_start" => self.tool_start(data),
            "tool.execution_complete" => self.tool_complete(data, at_ms, out),
            "assistant.turn_end" if self.turn.prompt.is_some() => {
                self.turn.last_ms = self.turn.last_ms.max(Some(at_ms));
            }
            "session.shutdown" => self.shutdown(data, id, at_ms, out),
            _ => {}
        }
        LineRead::Known
    }

    fn finish(&mut self, out: &mut Vec<Recorded>) {
        self.end_turn(out);
        self.flush_start(None, out);
    }

    fn head(&self) -> &SessionHead {
        &self.head
    }
}

/// The line types the reader reads.
const READ: &[&str] = &[
    "session.start",
    "session.resume",
    "user.message",
    "assistant.message",
    "tool.execution_start",
    "tool.execution_complete",
    "assistant.turn_end",
    "session.shutdown",
];

/// Other line types Copilot CLI 1.0.102 writes that say nothing a hook would (any `session.*`
/// line is one too): hooks' own runs, the system prompt, streaming, usage and subagent
/// bookkeeping.
const KNOWN: &[&str] = &[
    "hook.start",
    "hook.end",
    "hook.progress",
    "system.message",
    "system.notification",
    "assistant.turn_start",
    "assistant.intent",
    "assistant.reasoning",
    "assistant.reasoning_delta",
    "assistant.streaming_delta",
    "assistant.message_start",
    "assistant.message_delta",
    "assistant.tool_call_delta",
    "assistant.idle",
    "assistant.usage",
    "assistant.server_tool_progress",
    "model.call_failure",
    "model.call_finished",
    "abort",
    "pending_messages.modified",
    "tool.user_requested",
    "tool.execution_partial_result",
    "tool.execution_progress",
    "tool.shell_output",
    "tool_search.activated",
    "skill.invoked",
    "subagent.started",
    "subagent.configured",
    "subagent.completed",
    "subagent.failed",
    "subagent.selected",
    "subagent.deselected",
    "instruction_discovered",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::closing_answer_of;
    use crate::event::{Event, EventKind};

    const PATH: &str = "/home/dev/.copilot/session-state/s1/events.jsonl";

    fn read_lines(lines: &[String]) -> Vec<Recorded> {
        let mut reader = Reader::new(PATH);
        let mut out = Vec::new();
        for line in lines {
            reader.line(line.as_bytes(), &mut out);
        }
        reader.finish(&mut out);
        out
    }

    fn line(kind: &str, id: &str, at: &str, data: Value) -> String {
        json!({"type": kind, "data": data, "id": id, "parentId": null,
               "timestamp": format!("2026-01-01T00:00:{at}.000Z")})
        .to_string()
    }

    fn session() -> Vec<String> {
        let context = json!({"cwd": "/p", "gitRoot": "/p"});
        vec![
            line("session.start", "e0", "00", json!({"sessionId": "s1", "context": context})),
            line("hook.start", "e1", "00", json!({"hookType": "sessionStart"})),
            line(
                "user.message",
                "u1",
                "01",
                json!({"content": "fix add", "transformedContent": "<x>fix add\n\n<system_reminder>ctx</system_reminder>"}),
            ),
            line("system.message", "e2", "01", json!({"role": "system", "content": "You are"})),
            line(
                "assistant.message",
                "a1",
                "02",
                json!({"content": "", "toolRequests": [
                    {"toolCallId": "t1", "name": "bash", "arguments": {"command": "make test"}}
                ]}),
            ),
            line(
                "tool.execution_start",
                "e3",
                "02",
                json!({"toolCallId": "t1", "toolName": "bash", "arguments": {"command": "make test"}}),
            ),
            line(
                "tool.execution_complete",
                "e4",
                "03",
                json!({"toolCallId": "t1", "success": true, "result": {
                    "content": "ok\n\nTool \"bash\" succeeded. Additional guidance from postToolUse hooks:\nctx",
                    "detailedContent": "ok"}}),
            ),
            line("assistant.turn_end", "e5", "03", json!({"turnId": "0"})),
            line(
                "assistant.message",
                "a2",
                "04",
                json!({"content": "", "toolRequests": [
                    {"toolCallId": "t2", "name": "view", "arguments": {"path": "/p/missing.py"}}
                ]}),
            ),
            line(
                "tool.execution_complete",
                "e6",
                "05",
                json!({"toolCallId": "t2", "success": false,
                       "error": {"message": "Path does not exist", "code": "failure"}}),
            ),
            line("assistant.message", "a3", "06", json!({"content": "Fixed.", "toolRequests": []})),
            line("assistant.turn_end", "e7", "07", json!({"turnId": "2"})),
            line("session.shutdown", "e8", "08", json!({"shutdownType": "routine"})),
        ]
    }

    #[test]
    fn a_session_reads_as_its_hooks() {
        let records = read_lines(&session());
        let shape = crate::adapter::history::shape(&records);
        assert_eq!(
            shape,
            [
                ("sessionStart", "e0", 0),
                ("userPromptSubmitted", "u1", 1_000),
                ("postToolUse", "t1", 3_000),
                ("postToolUseFailure", "t2", 5_000),
                ("agentStop", "stop-u1", 7_000),
                ("sessionEnd", "e8", 8_000),
            ]
        );
        let payload = |i: usize| &records[i].payload;
        assert_eq!(payload(0)["source"], "new");
        assert_eq!(payload(0)["initialPrompt"], "fix add");
        assert_eq!(payload(1)["prompt"], "fix add");
        assert_eq!(payload(1)["sessionId"], "s1");
        assert_eq!(payload(1)["cwd"], "/p");
        assert_eq!(payload(1)["timestamp"], records[1].at_ms);
        assert_eq!(payload(2)["toolName"], "bash");
        assert_eq!(payload(2)["toolArgs"]["command"], "make test");
        assert_eq!(
            payload(2)["toolResult"],
            json!({"resultType": "success", "textResultForLlm": "ok"})
        );
        assert_eq!(payload(3)["error"], "Path does not exist");
        assert_eq!(payload(4)["last_assistant_message"], "Fixed.");
        assert_eq!(payload(4)["transcriptPath"], PATH);
        assert_eq!(payload(5)["reason"], "complete");
    }

    #[test]
    fn a_resumed_run_starts_again_and_injected_messages_are_no_prompt() {
        let mut lines = session();
        lines.extend([
            line("session.resume", "r0", "10", json!({"context": {"cwd": "/q"}})),
            line("user.message", "u3", "11", json!({"content": "again"})),
            // A skill's body injected mid-turn: the turn goes on.
            line(
                "user.message",
                "u2",
                "12",
                json!({"content": "skill body", "source": "skill-pdf"}),
            ),
            line("assistant.message", "a4", "13", json!({"content": "Done again."})),
        ]);
        let records = read_lines(&lines);
        let names: Vec<&str> = records[6..].iter().map(|r| r.event_name).collect();
        assert_eq!(names, ["sessionStart", "userPromptSubmitted", "agentStop"]);
        assert_eq!(records[6].payload["source"], "resume");
        assert_eq!(records[6].payload["initialPrompt"], "again");
        assert_eq!(records[7].payload["cwd"], "/q");
        assert_eq!(records[8].payload["last_assistant_message"], "Done again.");
        assert_eq!(records[8].source_id, "stop-u3");
    }

    #[test]
    fn a_cut_or_foreign_line_is_told_apart() {
        let mut reader = Reader::new(PATH);
        let mut out = Vec::new();
        assert_eq!(
            reader.line(br#"{"type":"user.message","data":{"con"#, &mut out),
            LineRead::Malformed
        );
        assert_eq!(
            reader.line(br#"{"type":"user.message","data":{}}"#, &mut out),
            LineRead::Malformed
        );
        assert_eq!(reader.line(br#"{"type":"hologram","data":{}}"#, &mut out), LineRead::Unknown);
        assert_eq!(
            reader.line(br#"{"type":"session.usage_record","data":{}}"#, &mut out),
            LineRead::Known
        );
        assert_eq!(reader.line(br#"{"type":"hook.end","data":{}}"#, &mut out), LineRead::Known);
        assert!(out.is_empty());
        // Without its start line, the log's folder still names the session.
        assert_eq!(reader.head().session.as_deref(), Some("s1"));
    }

    fn normalized(event: &str, payload: &Value, at_ms: i64) -> Option<Event> {
        crate::adapter::history::normalized("copilot", event, payload, at_ms)
    }

    /// The recorded session of `fixtures/history/copilot-theme-reverse` (two runs, the second
    /// resumed): its log reads as the events its hooks gave, with each turn's closing answer
    /// the scenario's, which the hooks never carry.
    #[test]
    fn the_recorded_session_reads_as_its_hooks_did() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../agent-memory-testkit/fixtures/history/copilot-theme-reverse"
        );
        let session = "00000001-0000-4000-8000-000000000000";
        let path = format!("{dir}/home/.copilot/session-state/{session}/events.jsonl");
        let log = std::fs::read_to_string(&path).expect("the recorded log");
        let mut reader = Reader::new(&path);
        let mut records = Vec::new();
        for line in log.lines() {
            assert_ne!(reader.line(line.as_bytes(), &mut records), LineRead::Malformed, "{line}");
        }
        reader.finish(&mut records);
        assert_eq!(reader.head().session.as_deref(), Some(session));
        assert_eq!(reader.head().cwd.as_deref(), Some("/home/dev/work/proj"));

        let hooks = std::fs::read_to_string(format!("{dir}/hooks.jsonl")).expect("hooks");
        let hooked: Vec<Event> = hooks
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a hook line"))
            .filter_map(|line| normalized(line["event"].as_str()?, &line["payload"], 0))
            .collect();
        let read: Vec<Event> =
            records.iter().filter_map(|r| normalized(r.event_name, &r.payload, r.at_ms)).collect();
        // Stops aside (the hooks' carry no answer), every event reads the same; in the resumed
        // run Copilot ran `sessionStart` beside `userPromptSubmitted`, so starts are counted.
        let view = |events: &[Event]| -> Vec<_> {
            events
                .iter()
                .filter(|e| !matches!(e.kind, EventKind::Stop | EventKind::SessionStart))
                .map(|e| {
                    (
                        e.kind,
                        e.session.clone(),
                        e.cwd.clone(),
                        e.tool.clone(),
                        e.summary.clone(),
                        e.body.clone(),
                    )
                })
                .collect()
        };
        assert_eq!(view(&read), view(&hooked));
        let kinds = |events: &[Event]| -> Vec<EventKind> {
            events.iter().map(|e| e.kind).filter(|k| *k != EventKind::SessionStart).collect()
        };
        assert_eq!(kinds(&read), kinds(&hooked));
        let starts = |events: &[Event]| -> Vec<String> {
            events
                .iter()
                .filter(|e| e.kind == EventKind::SessionStart)
                .map(|e| e.summary.clone())
                .collect()
        };
        assert_eq!(starts(&read), starts(&hooked));
        let scenario = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../agent-memory-testkit/fixtures/sessions/copilot-theme-reverse/scenario.json"
        ))
        .expect("the scenario");
        let scenario: Value = serde_json::from_str(&scenario).expect("a scenario");
        let finals: Vec<Option<&str>> = scenario["turns"]
            .as_array()
            .expect("turns")
            .iter()
            .map(|t| t["final"].as_str())
            .collect();
        let answers: Vec<Option<&str>> =
            read.iter().filter(|e| e.kind == EventKind::Stop).map(closing_answer_of).collect();
        assert_eq!(answers, finals);
        // Every stop still names the log, as the hook's does.
        let stops = records.iter().filter(|r| r.event_name == "agentStop");
        assert!(
            stops.clone().count() == 2
                && stops.clone().all(|r| r.payload["transcriptPath"] == path.as_str())
        );
    }
}
