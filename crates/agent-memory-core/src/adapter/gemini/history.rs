//! Gemini CLI's history: its chat files,
//! `~/.gemini/tmp/<project slug>/chats/session-<YYYY-MM-DDTHH-MM>-<session id, 8>.jsonl`, read
//! back as the hook payloads Gemini CLI sends.
//!
//! A chat file is an append log. A metadata line `{sessionId, projectHash, startTime, …}` opens
//! it, and again each time the session is resumed into it (`--resume`): a `SessionStart` each.
//! Message records `{id, timestamp, type, content, displayContent?, toolCalls?}` follow: a
//! `user` record with text is a prompt (`BeforeAgent`, its `displayContent` being the prompt the
//! hook got, without the `BeforeAgent` context Gemini adds as a part of its own), one with
//! `functionResponse` parts the tools' results sent back; a `gemini` record is the model's
//! answer and tool calls, written again under the same `id` as its calls finish, each finished
//! call being an `AfterTool`. The next prompt, a resume or the file's end closes a turn: its
//! `AfterAgent`, with the turn's last answer. `{"$set": …}` lines update the metadata (a
//! `messages` one replays the whole conversation, already read), `{"$rewindTo": id}` drops
//! messages from the resumed conversation, not from what happened; `info`, `warning` and
//! `error` records are the CLI's own notices. The working directory is the project the file's
//! slug (or the metadata's `projectHash`, the sha256 of its root) names in `~/.gemini/projects.json`.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::adapter::history::{
    HistorySource, Layout, LineRead, Recorded, SessionHead, SessionReader,
};
use crate::adapter::{ConfigBase, ConfigRoot, parse_iso_ms};
use crate::capture::fence::drop_spans;

pub(in crate::adapter) const SOURCE: HistorySource = HistorySource {
    root: ConfigRoot { env: None, base: ConfigBase::Home, dir: ".gemini" },
    layout: Layout::Files {
        dir: "tmp",
        depth: 2,
        prefix: "session-",
        suffix: ".jsonl",
        index: Some("projects.json"),
        open: |file| Box::new(Reader::new(file.path, file.index)),
    },
};

/// What Gemini CLI records as the person's turn that reaches no model, so no `BeforeAgent`
/// (its own test for what a resumed session replays): slash commands, `?` help, and the
/// session context it writes first.
const NOT_TYPED: &[&str] = &["/", "?", "<session_context>"];

/// How a finished tool call ended.
const FINISHED: &[&str] = &["success", "error", "cancelled"];

/// The turn being read.
#[derive(Debug, Default)]
struct Turn {
    /// Its prompt's record id and text.
    prompt: Option<(String, String)>,
    /// Its latest answer text, and when the model last wrote.
    answer: Option<String>,
    last_ms: Option<i64>,
}

struct Reader {
    path: String,
    head: SessionHead,
    /// The projects of `projects.json`, kept until a metadata line's hash can name one.
    projects: Vec<String>,
    /// Metadata lines read: the first starts the session, later ones resume it.
    opened: u32,
    /// Prompts and tool calls already made into records (a record is written again as it
    /// changes).
    seen: HashSet<String>,
    turn: Turn,
}

impl Reader {
    fn new(path: &str, index: Option<&Value>) -> Reader {
        let projects = index.map(projects).unwrap_or_default();
        // `tmp/<slug>/chats/<file>`: the project whose slug the file lives under.
        let slug = Path::new(path)
            .parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .and_then(|name| name.to_str());
        let cwd = slug.and_then(|slug| {
            projects.iter().find(|(_, s)| s == slug).map(|(root, _)| root.clone())
        });
        let head = SessionHead { cwd, ..SessionHead::default() };
        Reader {
            path: path.to_owned(),
            projects: if head.cwd.is_some() {
                Vec::new()
            } else {
                projects.into_iter().map(|(root, _)| root).collect()
            },
            head,
            opened: 0,
            seen: HashSet::new(),
            turn: Turn::default(),
        }
    }

    /// A record, with the fields every hook payload carries (Gemini CLI's own time among them).
    fn record(&self, event: &'static str, extra: Value, at_ms: i64, source_id: String) -> Recorded {
        let mut payload = json!({
            "session_id": self.head.session,
            "transcript_path": self.path,
            "cwd": self.head.cwd,
            "hook_event_name": event,
            "timestamp": iso(at_ms),
        });
        if let (Some(fields), Value::Object(extra)) = (payload.as_object_mut(), extra) {
            fields.extend(extra);
        }
        Recorded { event_name: event, payload, at_ms, source_id }
    }

    /// The turn being read ends: its `AfterAgent`, when the model answered it at all.
    fn end_turn(&mut self, out: &mut Vec<Recorded>) {
        let turn = std::mem::take(&mut self.turn);
        let (Some((id, prompt)), Some(last_ms)) = (turn.prompt, turn.last_ms) else { return };
        let stop = json!({
            "prompt": prompt,
            "prompt_response": turn.answer.unwrap_or_default(),
            "stop_hook_active": false,
        });
        out.push(self.record("AfterAgent", stop, last_ms, format!("stop-{id}")));
    }

    fn metadata(&mut self, line: &Map<String, Value>, out: &mut Vec<Recorded>) -> LineRead {
        let Some(session) = line.get("sessionId").and_then(Value::as_str) else {
            return LineRead::Malformed;
        };
        let Some(at_ms) = line.get("startTime").and_then(Value::as_str).and_then(parse_iso_ms)
        else {
            return LineRead::Malformed;
        };
        self.end_turn(out);
        if self.head.session.is_none() {
            self.head.session = Some(session.to_owned());
            self.head.started_ms = Some(at_ms);
        }
        if self.head.cwd.is_none()
            && let Some(hash) = line.get("projectHash").and_then(Value::as_str)
        {
            self.head.cwd = self.projects.iter().find(|root| sha256_hex(root) == hash).cloned();
        }
        let source = if self.opened == 0 { "startup" } else { "resume" };
        self.opened += 1;
        let id = format!("start-{at_ms}");
        out.push(self.record("SessionStart", json!({ "source": source }), at_ms, id));
        LineRead::Known
    }

    fn message(&mut self, line: &Map<String, Value>, out: &mut Vec<Recorded>) -> LineRead {
        let Some(at_ms) = line.get("timestamp").and_then(Value::as_str).and_then(parse_iso_ms)
        else {
            return LineRead::Malformed;
        };
        let id = line.get("id").and_then(Value::as_str).unwrap_or_default();
        match line.get("type").and_then(Value::as_str).unwrap_or_default() {
            "user" => self.user(id, line, at_ms, out),
            "gemini" => self.gemini(line, at_ms, out),
            "info" | "warning" | "error" => {}
            _ => return LineRead::Unknown,
        }
        LineRead::Known
    }

    fn user(&mut self, id: &str, line: &Map<String, Value>, at_ms: i64, out: &mut Vec<Recorded>) {
        // `displayContent` is the prompt as the hook got it; `content` adds what hooks injected.
        let shown = line.get("displayContent").filter(|v| !v.is_null());
        let text = texts(shown.or(line.get("content")).unwrap_or(&Value::Null));
        let typed = drop_spans(&text, "<hook_context>", "</hook_context>");
        let typed = typed.trim();
        if typed.is_empty() || NOT_TYPED.iter().any(|p| typed.starts_with(p)) {
            return;
        }
        if self.head.session.is_none() || !self.seen.insert(id.to_owned()) {
            return;
        }
        self.end_turn(out);
        out.push(self.record("BeforeAgent", json!({ "prompt": text }), at_ms, id.to_owned()));
        self.turn.prompt = Some((id.to_owned(), text));
    }

    fn gemini(&mut self, line: &Map<String, Value>, at_ms: i64, out: &mut Vec<Recorded>) {
        if self.head.session.is_none() {
            return;
        }
        if let Some(Value::Array(calls)) = line.get("toolCalls") {
            for call in calls {
                self.tool_call(call, at_ms, out);
            }
        }
        if self.turn.prompt.is_some() {
            let text = texts(line.get("content").unwrap_or(&Value::Null));
            if !text.trim().is_empty() {
                self.turn.answer = Some(text);
            }
            self.turn.last_ms = self.turn.last_ms.max(Some(at_ms));
        }
    }

    /// A tool call, once it finished: what `AfterTool` handed over.
    fn tool_call(&mut self, call: &Value, at_ms: i64, out: &mut Vec<Recorded>) {
        let status = call["status"].as_str().unwrap_or_default();
        let Some(id) = call["id"].as_str() else { return };
        if !FINISHED.contains(&status) || self.seen.contains(id) {
            return;
        }
        self.seen.insert(id.to_owned());
        let at_ms = call["timestamp"].as_str().and_then(parse_iso_ms).unwrap_or(at_ms);
        let response = response_of(&call["result"]);
        let mut tool_response = json!({
            "llmContent": response.get("output").or(response.get("error")).cloned().unwrap_or_default(),
            "returnDisplay": call.get("resultDisplay").cloned().unwrap_or_default(),
        });
        if status != "success" {
            let message = response
                .get("error")
                .and_then(Value::as_str)
                .or(call["resultDisplay"].as_str())
                .unwrap_or(status);
            tool_response["error"] = json!({ "message": message });
        }
        let mut fields = json!({
            "tool_name": call["name"],
            "tool_input": call.get("args").cloned().unwrap_or_else(|| json!({})),
            "tool_response": tool_response,
        });
        if let Some((server, tool)) = call["displayName"].as_str().and_then(mcp_names) {
            fields["mcp_context"] = json!({ "server_name": server, "tool_name": tool });
        }
        out.push(self.record("AfterTool", fields, at_ms, id.to_owned()));
        if self.turn.prompt.is_some() {
            self.turn.last_ms = self.turn.last_ms.max(Some(at_ms));
        }
    }

    /// A `$set` patch of the metadata: read only for the workspace its session context names,
    /// when nothing else named the project.
    fn patch(&mut self, set: &Value) {
        if self.head.cwd.is_some() {
            return;
        }
        let Some(Value::Array(messages)) = set.get("messages") else { return };
        for message in messages {
            let text = texts(&message["content"]);
            if text.trim_start().starts_with("<session_context>")
                && let Some(root) = workspace(&text)
            {
                self.head.cwd = Some(root.to_owned());
                return;
            }
        }
    }
}

/// `projects.json`'s project roots and their slugs: `{"projects": {root: slug}}`.
fn projects(index: &Value) -> Vec<(String, String)> {
    let map = index.get("projects").unwrap_or(index);
    let Some(map) = map.as_object() else { return Vec::new() };
    map.iter().filter_map(|(root, slug)| Some((root.clone(), slug.as_str()?.to_owned()))).collect()
}

fn sha256_hex(text: &str) -> String {
    crate::text::hex(&Sha256::digest(text.as_bytes()))
}

/// The first workspace directory a session context lists (`- **Workspace Directories:**\n  -
/// /root`).
fn workspace(context: &str) -> Option<&str> {
    let (_, after) = context.split_once("Workspace Directories:**")?;
    let line = after.lines().map(str::trim).find(|l| !l.is_empty())?;
    let root = line.strip_prefix("- ")?.trim();
    root.starts_with('/').then_some(root)
}

/// The `functionResponse.response` of a tool call's result parts: `{output}` or `{error}`.
fn response_of(result: &Value) -> Map<String, Value> {
    let parts = match result {
        Value::Array(parts) => parts.as_slice(),
        part => std::slice::from_ref(part),
    };
    parts
        .iter()
        .find_map(|part| part.pointer("/functionResponse/response")?.as_object().cloned())
        .unwrap_or_default()
}

/// An MCP tool's server and tool, from the name Gemini CLI shows for it: `tool (server MCP
/// Server)`.
fn mcp_names(display: &str) -> Option<(&str, &str)> {
    let (tool, rest) = display.split_once(" (")?;
    let server = rest.strip_suffix(" MCP Server)")?;
    Some((server, tool))
}

/// A content's text: a string, or its text parts joined (thoughts left out).
fn texts(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => {
            let parts: Vec<&str> = parts
                .iter()
                .filter(|part| part["thought"] != true)
                .filter_map(|part| part["text"].as_str())
                .collect();
            parts.join("\n")
        }
        _ => String::new(),
    }
}

/// Unix milliseconds as the ISO 8601 instant Gemini CLI writes.
fn iso(at_ms: i64) -> String {
    jiff::Timestamp::from_millisecond(at_ms).map_or_else(|_| String::new(), |t| format!("{t:.3}"))
}

impl SessionReader for Reader {
    fn line(&mut self, line: &[u8], out: &mut Vec<Recorded>) -> LineRead {
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(line) else {
            return LineRead::Malformed;
        };
        if let Some(set) = line.get("$set") {
            self.patch(set);
            LineRead::Known
        } else if line.contains_key("$rewindTo") {
            LineRead::Known
        } else if line.get("id").is_some_and(Value::is_string) {
            self.message(&line, out)
        } else if line.contains_key("sessionId") {
            self.metadata(&line, out)
        } else {
            LineRead::Unknown
        }
    }

    fn finish(&mut self, out: &mut Vec<Recorded>) {
        self.end_turn(out);
    }

    fn head(&self) -> &SessionHead {
        &self.head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::closing_answer_of;
    use crate::event::{Event, EventKind};

    const PATH: &str = "/home/dev/.gemini/tmp/proj/chats/session-2026-01-01T00-00-s1.jsonl";

    fn index() -> Value {
        json!({ "projects": { "/home/dev/work/proj": "proj", "/elsewhere": "other" } })
    }

    fn read(lines: &[Value]) -> (Vec<Recorded>, Reader) {
        let index = index();
        let mut reader = Reader::new(PATH, Some(&index));
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

    fn at(second: u32) -> String {
        format!("2026-01-01T00:00:{second:02}.000Z")
    }

    fn header(second: u32) -> Value {
        json!({ "sessionId": "s1", "projectHash": "h", "startTime": at(second), "lastUpdated": at(second), "kind": "main" })
    }

    fn message(id: &str, second: u32, kind: &str, extra: Value) -> Value {
        let mut line = json!({ "id": id, "timestamp": at(second), "type": kind });
        if let (Some(fields), Value::Object(extra)) = (line.as_object_mut(), extra) {
            fields.extend(extra);
        }
        line
    }

    fn context() -> Value {
        json!({ "$set": { "messages": [{ "id": "ctx", "timestamp": at(0), "type": "user", "content": [{ "text": "<session_context>\n- **Workspace Directories:**\n  - /from/context\n</session_context>" }] }] } })
    }

    fn call(
        id: &str,
        name: &str,
        args: Value,
        status: &str,
        response: Value,
        display: Value,
    ) -> Value {
        json!({
            "id": id, "name": name, "args": args, "status": status, "timestamp": at(4),
            "result": [{ "functionResponse": { "id": id, "name": name, "response": response } }],
            "resultDisplay": display, "displayName": name,
        })
    }

    #[test]
    fn a_turn_reads_as_its_hooks() {
        let shell = call(
            "c1",
            "run_shell_command",
            json!({ "command": "make test", "description": "Run" }),
            "success",
            json!({ "output": "<untrusted_context>\nOutput: 1 failed\nExit Code: 2\nProcess Group PGID: 7\n</untrusted_context>" }),
            json!("1 failed"),
        );
        let missing = call(
            "c2",
            "read_file",
            json!({ "file_path": "/home/dev/work/proj/nope.py" }),
            "error",
            json!({ "error": "File not found: /home/dev/work/proj/nope.py" }),
            json!("File not found."),
        );
        let mut running = shell.clone();
        running["status"] = json!("executing");
        running["result"] = Value::Null;
        let records = read(&[
            header(0),
            context(),
            message("m0", 1, "user", json!({ "content": [{ "text": "/stats" }] })),
            message("u1", 1, "user", json!({
                "content": [
                    { "text": "<hook_context>briefing</hook_context>\n\nfix the tests" },
                    { "text": "<hook_context>recall</hook_context>" },
                ],
                "displayContent": [{ "text": "<hook_context>briefing</hook_context>\n\nfix the tests" }],
            })),
            json!({ "$set": { "lastUpdated": at(1) } }),
            message("g1", 2, "gemini", json!({ "content": "", "model": "m" })),
            message("g1", 2, "gemini", json!({ "content": "Let me look.", "toolCalls": [running] })),
            message("g1", 2, "gemini", json!({ "content": "Let me look.", "toolCalls": [shell, missing] })),
            message("r1", 5, "user", json!({ "content": [{ "functionResponse": { "id": "c1", "name": "run_shell_command", "response": {} } }] })),
            message("i1", 5, "info", json!({ "content": "Request cancelled." })),
            message("g2", 6, "gemini", json!({ "content": "Fixed." })),
        ])
        .0;
        let shape = crate::adapter::history::shape(&records);
        let start = format!("start-{}", records[0].at_ms);
        assert_eq!(
            shape,
            [
                ("SessionStart", start.as_str(), 0),
                ("BeforeAgent", "u1", 1_000),
                ("AfterTool", "c1", 4_000),
                ("AfterTool", "c2", 4_000),
                ("AfterAgent", "stop-u1", 6_000),
            ]
        );
        let [start, prompt, shell, missing, stop] = &records[..] else { unreachable!() };
        assert_eq!(start.payload["source"], "startup");
        assert_eq!(start.payload["cwd"], "/home/dev/work/proj", "the project of the file's slug");
        assert_eq!(
            prompt.payload["prompt"],
            "<hook_context>briefing</hook_context>\n\nfix the tests"
        );
        assert_eq!(prompt.payload["timestamp"], "2026-01-01T00:00:01.000Z");
        assert_eq!(shell.payload["tool_response"]["returnDisplay"], "1 failed");
        assert_eq!(
            missing.payload["tool_response"]["error"]["message"],
            "File not found: /home/dev/work/proj/nope.py"
        );
        assert_eq!(stop.payload["prompt_response"], "Fixed.");
        assert_eq!(stop.payload["transcript_path"], PATH);

        // Read as live capture reads them: the prompt without the injected context, the command
        // failed by its exit code, the read by its error, the answer the turn's.
        let events: Vec<Event> =
            records.iter().filter_map(|r| normalized(r.event_name, &r.payload, r.at_ms)).collect();
        assert_eq!(events.len(), records.len());
        assert_eq!(events[1].body, "fix the tests");
        assert_eq!((events[2].facts.failed, events[2].facts.exit_code), (true, Some(2)));
        assert!(events[3].facts.failed);
        assert_eq!(closing_answer_of(&events[4]), Some("Fixed."));
    }

    /// A resumed session appends a metadata line and replays its conversation in a `$set`: a
    /// start of its own, nothing read twice, and the turn before it ends there.
    #[test]
    fn a_resumed_session_starts_again_and_replays_nothing() {
        let prompt = json!({ "content": [{ "text": "first" }] });
        let replay = json!({ "$set": { "messages": [
            message("u1", 9, "user", prompt.clone()),
            message("g1", 9, "gemini", json!({ "content": [{ "text": "one" }] })),
        ] } });
        let records = read(&[
            header(0),
            message("u1", 1, "user", prompt),
            message("g1", 2, "gemini", json!({ "content": "one" })),
            header(8),
            replay,
            json!({ "$set": { "sessionId": "s1" } }),
            json!({ "$rewindTo": "g1" }),
            message("u2", 10, "user", json!({ "content": [{ "text": "second" }] })),
            message("g2", 11, "gemini", json!({ "content": "two" })),
        ])
        .0;
        let shape: Vec<(&str, Option<&str>, i64)> = records
            .iter()
            .map(|r| {
                (
                    r.event_name,
                    r.payload["source"].as_str().or(r.payload["prompt_response"].as_str()),
                    r.at_ms % 100_000,
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("SessionStart", Some("startup"), 0),
                ("BeforeAgent", None, 1_000),
                ("AfterAgent", Some("one"), 2_000),
                ("SessionStart", Some("resume"), 8_000),
                ("BeforeAgent", None, 10_000),
                ("AfterAgent", Some("two"), 11_000),
            ]
        );
    }

    /// The project: the file's slug in `projects.json`, else the root whose hash the metadata
    /// names (older files live under the hash), else the workspace the session context names.
    #[test]
    fn the_working_directory_is_the_project_of_the_file() {
        let hash = sha256_hex("/home/dev/work/proj");
        let index = json!({ "projects": { "/home/dev/work/proj": "renamed" } });
        let path = format!("/home/dev/.gemini/tmp/{hash}/chats/session-x.jsonl");
        let mut reader = Reader::new(&path, Some(&index));
        let mut out = Vec::new();
        let mut meta = header(0);
        meta["projectHash"] = json!(hash);
        reader.line(meta.to_string().as_bytes(), &mut out);
        assert_eq!(reader.head().cwd.as_deref(), Some("/home/dev/work/proj"));
        assert_eq!(reader.head().session.as_deref(), Some("s1"));

        let mut reader = Reader::new(PATH, None);
        reader.line(header(0).to_string().as_bytes(), &mut out);
        reader.line(context().to_string().as_bytes(), &mut out);
        assert_eq!(reader.head().cwd.as_deref(), Some("/from/context"));
    }

    #[test]
    fn a_cut_or_foreign_line_is_told_apart() {
        let mut reader = Reader::new(PATH, None);
        let mut out = Vec::new();
        assert_eq!(
            reader.line(br#"{"id":"u1","timestamp":"2026-01-01T00:00:01.000Z","ty"#, &mut out),
            LineRead::Malformed
        );
        assert_eq!(reader.line(br#""text""#, &mut out), LineRead::Malformed);
        assert_eq!(reader.line(br#"{"hologram":true}"#, &mut out), LineRead::Unknown);
        assert_eq!(
            reader.line(
                br#"{"id":"x","timestamp":"2026-01-01T00:00:01.000Z","type":"hologram"}"#,
                &mut out
            ),
            LineRead::Unknown
        );
        assert_eq!(
            reader.line(br#"{"id":"x","type":"user","content":"no time"}"#, &mut out),
            LineRead::Malformed
        );
        assert_eq!(
            reader.line(br#"{"$set":{"lastUpdated":"2026-01-01T00:00:01.000Z"}}"#, &mut out),
            LineRead::Known
        );
        reader.finish(&mut out);
        assert!(out.is_empty());
    }

    fn normalized(event: &str, payload: &Value, at_ms: i64) -> Option<Event> {
        crate::adapter::history::normalized("gemini", event, payload, at_ms)
    }

    /// The recorded session of `fixtures/history/gemini-fix-date-parse-zh`: its chat file reads
    /// as the events its hooks gave: prompt, tool calls with their input and output, and the
    /// closing answer.
    #[test]
    fn the_recorded_session_reads_as_its_hooks_did() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../agent-memory-testkit/fixtures/history/gemini-fix-date-parse-zh"
        );
        let file = ".gemini/tmp/proj/chats/session-2026-01-01T00-00-00000001.jsonl";
        let chat = std::fs::read_to_string(format!("{dir}/home/{file}")).expect("the chat file");
        let index = std::fs::read_to_string(format!("{dir}/home/.gemini/projects.json"))
            .expect("projects.json");
        let index: Value = serde_json::from_str(&index).expect("an index");
        // The file as the hooks name it.
        let mut reader = Reader::new(&format!("/home/dev/{file}"), Some(&index));
        let mut records = Vec::new();
        for line in chat.lines().filter(|l| !l.trim().is_empty()) {
            assert_eq!(reader.line(line.as_bytes(), &mut records), LineRead::Known, "{line}");
        }
        reader.finish(&mut records);
        assert_eq!(reader.head().session.as_deref(), Some("00000001-0000-4000-8000-000000000000"));
        assert_eq!(reader.head().cwd.as_deref(), Some("/home/dev/work/proj"));

        let hooks = std::fs::read_to_string(format!("{dir}/hooks.jsonl")).expect("hooks");
        let hooked: Vec<Event> = hooks
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a hook line"))
            .filter_map(|line| normalized(line["event"].as_str()?, &line["payload"], 0))
            .collect();
        let read: Vec<Event> =
            records.iter().filter_map(|r| normalized(r.event_name, &r.payload, r.at_ms)).collect();
        assert_eq!(read.len(), records.len(), "every record reads as an event");
        // The history holds no session end; every other event reads the same.
        let view = |events: &[Event]| -> Vec<_> {
            events
                .iter()
                .filter(|e| e.kind != EventKind::SessionEnd)
                .map(|e| {
                    let where_ = (e.session.clone(), e.cwd.clone(), e.transcript_path.clone());
                    let what = (e.tool.clone(), e.summary.clone(), e.body.clone());
                    (e.kind, where_, what, e.files.clone(), e.facts.clone())
                })
                .collect()
        };
        assert_eq!(view(&read), view(&hooked));
    }
}
