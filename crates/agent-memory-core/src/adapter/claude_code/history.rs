//! Claude Code's history: `~/.claude/projects/<cwd, every / as ->/<session id>.jsonl`, one file
//! per session, read back as the hook payloads Claude Code sends.
//!
//! Of the file's many line types (queue operations, attachments, API request shapes, cost
//! states, …) three carry the session: a `user` line whose `message.content` is text is a
//! prompt (a list of `tool_result` blocks instead answers tool calls, with the tool's own result
//! beside it as `toolUseResult`, the object `PostToolUse` hands over as `tool_response`); an
//! `assistant` line holds text and `tool_use` blocks (one content block per line when it
//! streams); a `system` line of subtype `stop_hook_summary` marks the moment the turn stopped.
//! Every line carries `sessionId`, `cwd`, `timestamp` and its own `uuid`. Lines marked `isMeta`
//! (command caveats), compaction summaries and slash-command echoes are no prompt; subagent
//! lines (`isSidechain`) give their tool calls but neither prompts nor the turn's answer.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::adapter::history::{
    HistorySource, Layout, LineRead, Recorded, SessionHead, SessionReader,
};
use crate::adapter::{ConfigBase, ConfigRoot, parse_iso_ms};

pub(in crate::adapter) const SOURCE: HistorySource = HistorySource {
    root: ConfigRoot { env: Some("CLAUDE_CONFIG_DIR"), base: ConfigBase::Home, dir: ".claude" },
    layout: Layout::Files {
        dir: "projects",
        depth: 1,
        prefix: "",
        suffix: ".jsonl",
        index: None,
        open: |file| Box::new(Reader::new(file.path)),
    },
};

/// Prompts Claude Code records that the person did not type: a slash command's echo and its
/// output, and the caveat before them.
const NOT_TYPED: &[&str] = &["<command-", "<local-command-", "Caveat: The messages below"];

/// One line, as far as any reader here needs it.
#[derive(Debug, Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default, rename = "sessionId")]
    session: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    uuid: Option<String>,
    #[serde(default, rename = "isSidechain")]
    sidechain: bool,
    #[serde(default, rename = "isMeta")]
    meta: bool,
    #[serde(default, rename = "isCompactSummary")]
    compact_summary: bool,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default, rename = "toolUseResult")]
    tool_use_result: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Message {
    #[serde(default)]
    content: Value,
}

/// A tool call waiting for its result.
#[derive(Debug)]
struct Call {
    name: String,
    input: Value,
}

impl Call {
    /// The fields a tool hook's payload gives the call, with its outcome under `key`; built
    /// in place, since `json!` would copy the input and the outcome value by value.
    fn fields(self, id: &str, key: &str, outcome: Value) -> Value {
        let mut fields = serde_json::Map::new();
        fields.insert("tool_name".into(), Value::String(self.name));
        fields.insert("tool_input".into(), self.input);
        fields.insert("tool_use_id".into(), Value::String(id.to_owned()));
        fields.insert(key.into(), outcome);
        Value::Object(fields)
    }
}

/// The turn being read.
#[derive(Debug, Default)]
struct Turn {
    /// The `uuid` of its prompt, which names its stop.
    prompt: Option<String>,
    /// Its latest answer text, and when it was written.
    answer: Option<String>,
    last_ms: Option<i64>,
}

struct Reader {
    path: String,
    head: SessionHead,
    started: bool,
    calls: HashMap<String, Call>,
    turn: Turn,
}

impl Reader {
    fn new(path: &str) -> Reader {
        Reader {
            path: path.to_owned(),
            head: SessionHead::default(),
            started: false,
            calls: HashMap::new(),
            turn: Turn::default(),
        }
    }

    /// The fields every hook payload carries, with the event's name.
    fn payload(&self, event: &str) -> Value {
        json!({
            "session_id": self.head.session,
            "cwd": self.head.cwd,
            "transcript_path": self.path,
            "hook_event_name": event,
        })
    }

    fn record(&self, event: &'static str, extra: Value, at_ms: i64, source_id: String) -> Recorded {
        let mut payload = self.payload(event);
        if let (Some(fields), Value::Object(extra)) = (payload.as_object_mut(), extra) {
            fields.extend(extra);
        }
        Recorded { event_name: event, payload, at_ms, source_id }
    }

    /// The turn being read ends: its stop, when anything answered it.
    fn end_turn(&mut self, stopped_ms: Option<i64>, out: &mut Vec<Recorded>) {
        let turn = std::mem::take(&mut self.turn);
        let (Some(prompt), Some(last_ms)) = (turn.prompt, turn.last_ms) else { return };
        let stop = json!({
            "stop_hook_active": false,
            "last_assistant_message": turn.answer.unwrap_or_default(),
        });
        out.push(self.record(
            "Stop",
            stop,
            stopped_ms.unwrap_or(last_ms),
            format!("stop-{prompt}"),
        ));
    }

    fn user(&mut self, mut line: Line, at_ms: i64, out: &mut Vec<Recorded>) {
        let Some(message) = line.message.take() else { return };
        match &message.content {
            Value::String(text) => self.prompt(&line, text, at_ms, out),
            Value::Array(blocks) => {
                let text = texts(blocks);
                if !text.is_empty() && !blocks.iter().any(|b| b["type"] == "tool_result") {
                    self.prompt(&line, &text, at_ms, out);
                    return;
                }
                for block in blocks.iter().filter(|b| b["type"] == "tool_result") {
                    self.tool_result(block, line.tool_use_result.as_ref(), at_ms, out);
                }
            }
            _ => {}
        }
    }

    fn prompt(&mut self, line: &Line, text: &str, at_ms: i64, out: &mut Vec<Recorded>) {
        let typed = !line.meta
            && !line.compact_summary
            && !line.sidechain
            && !NOT_TYPED.iter().any(|p| text.trim_start().starts_with(p));
        let Some(uuid) = line.uuid.clone().filter(|_| typed && !text.trim().is_empty()) else {
            return;
        };
        self.end_turn(None, out);
        out.push(self.record("UserPromptSubmit", json!({ "prompt": text }), at_ms, uuid.clone()));
        self.turn.prompt = Some(uuid);
        self.turn.last_ms = None;
    }

    fn tool_result(
        &mut self,
        block: &Value,
        result: Option<&Value>,
        at_ms: i64,
        out: &mut Vec<Recorded>,
    ) {
        let Some(id) = block["tool_use_id"].as_str() else { return };
        let Some(call) = self.calls.remove(id) else { return };
        let content = block.get("content").unwrap_or(&Value::Null);
        let record = if block["is_error"] == true {
            let error = match content {
                Value::Array(blocks) => texts(blocks),
                other => other.as_str().unwrap_or_default().to_owned(),
            };
            let fields = call.fields(id, "error", Value::String(error));
            self.record("PostToolUseFailure", fields, at_ms, id.to_owned())
        } else {
            // The tool's own result is what the hook hands over; the model's copy otherwise.
            let response = match result {
                Some(value @ Value::Object(_)) => value,
                _ => content,
            };
            let fields = call.fields(id, "tool_response", response.clone());
            self.record("PostToolUse", fields, at_ms, id.to_owned())
        };
        out.push(record);
        self.turn.last_ms = self.turn.last_ms.max(Some(at_ms));
    }

    fn assistant(&mut self, line: Line, at_ms: i64) {
        let Some(Value::Array(mut blocks)) = line.message.map(|m| m.content) else { return };
        for block in &mut blocks {
            if block["type"] == "tool_use"
                && let Some(id) = block["id"].as_str()
            {
                let (id, name) =
                    (id.to_owned(), block["name"].as_str().unwrap_or_default().to_owned());
                // Taken, not copied: of a call's block only its text would be read again.
                let input = block.get_mut("input").map(Value::take).unwrap_or(Value::Null);
                self.calls.insert(id, Call { name, input });
            }
        }
        if line.sidechain || self.turn.prompt.is_none() {
            return;
        }
        let text = texts(&blocks);
        if !text.is_empty() {
            self.turn.answer = Some(text);
        }
        self.turn.last_ms = self.turn.last_ms.max(Some(at_ms));
    }
}

/// The text blocks of a message's content, joined.
fn texts(blocks: &[Value]) -> String {
    let parts: Vec<&str> = blocks
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .filter(|t| !t.trim().is_empty())
        .collect();
    parts.join("\n")
}

impl SessionReader for Reader {
    fn line(&mut self, line: &[u8], out: &mut Vec<Recorded>) -> LineRead {
        let Ok(line) = serde_json::from_slice::<Line>(line) else { return LineRead::Malformed };
        if !matches!(line.kind.as_str(), "user" | "assistant" | "system") {
            return if KNOWN.contains(&line.kind.as_str()) {
                LineRead::Known
            } else {
                LineRead::Unknown
            };
        }
        let Some(at_ms) = line.timestamp.as_deref().and_then(parse_iso_ms) else {
            return LineRead::Malformed;
        };
        if self.head.session.is_none() {
            self.head.session = line.session.clone();
        }
        if self.head.cwd.is_none() {
            self.head.cwd = line.cwd.clone();
        }
        if self.head.started_ms.is_none() {
            self.head.started_ms = Some(at_ms);
        }
        if !self.started && self.head.session.is_some() {
            self.started = true;
            let id = format!("start-{}", self.head.session.as_deref().unwrap_or_default());
            out.push(self.record("SessionStart", json!({ "source": "startup" }), at_ms, id));
        }
        match line.kind.as_str() {
            "user" => self.user(line, at_ms, out),
            "assistant" => self.assistant(line, at_ms),
            _ if line.subtype.as_deref() == Some("stop_hook_summary") => {
                self.end_turn(Some(at_ms), out);
            }
            _ => {}
        }
        LineRead::Known
    }

    fn finish(&mut self, out: &mut Vec<Recorded>) {
        self.end_turn(None, out);
    }

    fn head(&self) -> &SessionHead {
        &self.head
    }
}

/// The line types Claude Code 2.1.332 writes that say nothing a hook would.
const KNOWN: &[&str] = &[
    "queue-operation",
    "attachment",
    "atis-latch",
    "last-prompt",
    "api-request",
    "api-request-blob",
    "api-request-shape",
    "tools-used",
    "cost-state",
    "summary",
    "file-history-snapshot",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[Value]) -> Vec<Recorded> {
        let mut reader = Reader::new("/home/dev/.claude/projects/-p/s1.jsonl");
        let mut out = Vec::new();
        for line in lines {
            reader.line(line.to_string().as_bytes(), &mut out);
        }
        reader.finish(&mut out);
        out
    }

    fn line(kind: &str, uuid: &str, at: &str, extra: Value) -> Value {
        let mut line = json!({
            "type": kind, "uuid": uuid, "sessionId": "s1", "cwd": "/p",
            "timestamp": format!("2026-01-01T00:00:{at}Z"),
        });
        if let (Some(line), Some(extra)) = (line.as_object_mut(), extra.as_object()) {
            line.extend(extra.clone());
        }
        line
    }

    #[test]
    fn a_turn_reads_as_its_hooks() {
        let records = read(&[
            line("user", "u1", "01", json!({"message": {"content": "run the tests"}})),
            line(
                "assistant",
                "a1",
                "02",
                json!({"message": {"content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make test"}}
                ]}}),
            ),
            line(
                "user",
                "u2",
                "03",
                json!({"message": {"content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
                ]}, "toolUseResult": {"stdout": "ok", "stderr": "", "interrupted": false}}),
            ),
            line(
                "assistant",
                "a2",
                "04",
                json!({"message": {"content": [{"type": "text", "text": "All green."}]}}),
            ),
            line("system", "s", "05", json!({"subtype": "stop_hook_summary"})),
            json!({"type": "cost-state", "sessionId": "s1"}),
        ]);
        let shape = crate::adapter::history::shape(&records);
        assert_eq!(
            shape,
            [
                ("SessionStart", "start-s1", 1_000),
                ("UserPromptSubmit", "u1", 1_000),
                ("PostToolUse", "t1", 3_000),
                ("Stop", "stop-u1", 5_000),
            ]
        );
        assert_eq!(records[2].payload["tool_response"]["stdout"], "ok");
        assert_eq!(records[2].payload["tool_input"]["command"], "make test");
        assert_eq!(records[3].payload["last_assistant_message"], "All green.");
        assert_eq!(records[1].payload["session_id"], "s1");
        assert_eq!(records[1].payload["cwd"], "/p");
    }

    #[test]
    fn what_no_one_typed_is_no_prompt_and_a_failed_call_is_a_failure() {
        let records = read(&[
            line("user", "m", "01", json!({"isMeta": true, "message": {"content": "Caveat: x"}})),
            line(
                "user",
                "c",
                "02",
                json!({"message": {"content": "<command-name>/clear</command-name>"}}),
            ),
            line(
                "user",
                "u1",
                "03",
                json!({"message": {"content": [{"type": "text", "text": "fix it"}]}}),
            ),
            line(
                "assistant",
                "a1",
                "04",
                json!({"message": {"content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/x"}}]}}),
            ),
            line(
                "user",
                "u2",
                "05",
                json!({"message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "File does not exist."}]}, "toolUseResult": "Error: File does not exist."}),
            ),
        ]);
        let names: Vec<&str> = records.iter().map(|r| r.event_name).collect();
        assert_eq!(names, ["SessionStart", "UserPromptSubmit", "PostToolUseFailure", "Stop"]);
        assert_eq!(records[1].payload["prompt"], "fix it");
        assert_eq!(records[2].payload["error"], "File does not exist.");
    }

    #[test]
    fn a_cut_or_foreign_line_is_told_apart() {
        let mut reader = Reader::new("/x.jsonl");
        let mut out = Vec::new();
        assert_eq!(
            reader.line(br#"{"type":"user","message":{"con"#, &mut out),
            LineRead::Malformed
        );
        assert_eq!(reader.line(br#"{"type":"hologram"}"#, &mut out), LineRead::Unknown);
        assert_eq!(reader.line(br#"{"type":"cost-state"}"#, &mut out), LineRead::Known);
        assert!(out.is_empty());
    }
}
