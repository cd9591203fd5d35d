//! OpenCode's history: its SQLite database of every session, read back as the payloads its
//! plugin hands the hook.
//!
//! `~/.local/share/opencode/opencode.db` (`$XDG_DATA_HOME`) keeps one `session` row per session
//! (`ses_…`, its `directory`, `parent_id` for a subagent's session), its `message` rows (`msg_…`,
//! `data` JSON: `role`, `time.created`, an assistant's `time.completed`, `summary` on a
//! compaction's summary) and their `part` rows (`prt_…`, `data` JSON by `type`: `text`, `tool`
//! with `{tool, callID, state: {status, input, output, title, metadata, error, time}}`,
//! `reasoning`, `step-start`, …). Times are Unix milliseconds.
//!
//! Our plugin (`install/opencode_plugin.js`) hands the hook `{cwd, input, output}` per moment,
//! and this reader rebuilds exactly that: `session.created` with the session's info;
//! `chat.message` for a user message with text someone typed, with the message and all its parts
//! (OpenCode's own synthetic parts included, as the plugin sees them); `tool.execute.after` for
//! each completed tool part, with its arguments and `{title, metadata, output}`; and
//! `session.idle` once a turn's last answer completed, with the turn's last text as `response`,
//! as the plugin keeps it from `experimental.text.complete`. Subagents' sessions are read too:
//! the plugin sees their moments as any session's.
//!
//! What the hooks never saw is left out: user messages of synthetic text only (compaction, its
//! "continue"), a compaction's summary, tool calls still pending or running. One exception: a
//! tool call that failed (status `error`) is read as a `tool.execute.after` whose output carries
//! the `error`, a failure; OpenCode throws before that hook then, but the failure is worth
//! remembering.

use rusqlite::{Connection, OptionalExtension, Row};
use serde_json::{Map, Value, json};

use crate::adapter::history::{DbSession, HistorySource, Layout, Recorded, SessionHead, Tally};
use crate::adapter::{ConfigBase, ConfigRoot};

pub(in crate::adapter) const SOURCE: HistorySource = HistorySource {
    root: ConfigRoot { env: None, base: ConfigBase::DataHome, dir: "opencode" },
    layout: Layout::Database { file: "opencode.db", sessions, read },
};

/// Every session, oldest first, with its latest change: the session's own, or that of any of
/// its messages or parts (an answer still streaming changes only its parts).
const SESSIONS: &str = "
    SELECT s.id, s.directory, s.time_created,
           max(s.time_updated,
               coalesce((SELECT max(m.time_updated) FROM message m WHERE m.session_id = s.id), 0),
               coalesce((SELECT max(p.time_updated) FROM part p WHERE p.session_id = s.id), 0)),
           (SELECT count(*) FROM message m WHERE m.session_id = s.id)
    FROM session s
    ORDER BY s.time_created, s.id";

const SESSION: &str = "SELECT * FROM session WHERE id = ?1";
/// By creation time: ids are in time order as OpenCode makes them, but not once renumbered.
const MESSAGES: &str =
    "SELECT id, time_created, data FROM message WHERE session_id = ?1 ORDER BY time_created, id";
const PARTS: &str = "SELECT id, data FROM part WHERE message_id = ?1 ORDER BY time_created, id";

/// The part types of OpenCode 1.18.33 that say nothing a hook would.
const QUIET_PARTS: &[&str] = &[
    "reasoning",
    "step-start",
    "step-finish",
    "snapshot",
    "patch",
    "file",
    "agent",
    "subtask",
    "retry",
    "compaction",
];

fn sessions(conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
    let mut statement = conn.prepare(SESSIONS)?;
    let mut rows = statement.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        // A row whose columns cannot be read is left out, never the whole list.
        let Ok(Some(id)) = row.get::<_, Option<String>>(0) else { continue };
        let started_ms = row.get::<_, Option<i64>>(2).ok().flatten();
        out.push(DbSession {
            key: id.clone(),
            head: SessionHead {
                session: Some(id),
                cwd: row.get::<_, Option<String>>(1).ok().flatten(),
                started_ms,
            },
            updated_ms: row.get::<_, Option<i64>>(3).ok().flatten().or(started_ms).unwrap_or(0),
            records: row.get::<_, Option<i64>>(4).ok().flatten().unwrap_or(0).max(0) as u64,
        });
    }
    Ok(out)
}

fn read(
    conn: &Connection,
    session: &DbSession,
    out: &mut Vec<Recorded>,
) -> rusqlite::Result<Tally> {
    let mut tally = Tally::default();
    // Gone since it was listed: nothing to read.
    let Some(info) = conn.query_row(SESSION, [&session.key], session_info).optional()? else {
        return Ok(tally);
    };
    let mut reader = Reader::new(&session.key, info.directory.clone());
    out.push(reader.created(info));
    let mut messages = conn.prepare(MESSAGES)?;
    let mut parts = conn.prepare(PARTS)?;
    let mut rows = messages.query([&session.key])?;
    while let Some(row) = rows.next()? {
        let Some((id, created_ms, data)) = message_row(row) else {
            tally.skipped += 1;
            continue;
        };
        let mut message_parts = Vec::new();
        let mut part_rows = parts.query([&id])?;
        while let Some(part) = part_rows.next()? {
            match (part.get::<_, String>(0), object(part.get::<_, String>(1))) {
                (Ok(part_id), Some(data)) => message_parts.push(Part { id: part_id, data }),
                _ => tally.skipped += 1,
            }
        }
        let message = Message { id, created_ms, data, parts: message_parts };
        tally.skipped += reader.message(message, out);
    }
    reader.finish(out);
    Ok(tally)
}

/// The text column as a JSON object, when it is one.
fn object(text: rusqlite::Result<String>) -> Option<Map<String, Value>> {
    match serde_json::from_str::<Value>(&text.ok()?).ok()? {
        Value::Object(fields) => Some(fields),
        _ => None,
    }
}

fn message_row(row: &Row<'_>) -> Option<(String, Option<i64>, Map<String, Value>)> {
    let id = row.get::<_, String>(0).ok()?;
    let created_ms = row.get::<_, Option<i64>>(1).ok().flatten();
    Some((id, created_ms, object(row.get::<_, String>(2))?))
}

/// A session's row, as `session.created` hands it over in `properties.info`.
#[derive(Debug, Clone, Default, PartialEq)]
struct SessionInfo {
    id: String,
    directory: Option<String>,
    created_ms: Option<i64>,
    /// `properties.info`, from the columns this version of OpenCode has.
    info: Map<String, Value>,
}

fn session_info(row: &Row<'_>) -> rusqlite::Result<SessionInfo> {
    let id: String = row.get("id")?;
    // Columns come and go between versions: one that is missing is left out.
    let text = |name: &str| row.get::<_, Option<String>>(name).ok().flatten();
    let number = |name: &str| row.get::<_, Option<i64>>(name).ok().flatten();
    let directory = text("directory");
    let created_ms = number("time_created");
    let mut info = Map::new();
    info.insert("id".into(), json!(id));
    for (key, column) in [
        ("slug", "slug"),
        ("version", "version"),
        ("projectID", "project_id"),
        ("workspaceID", "workspace_id"),
        ("parentID", "parent_id"),
        ("directory", "directory"),
        ("path", "path"),
        ("title", "title"),
    ] {
        if let Some(value) = text(column) {
            info.insert(key.into(), json!(value));
        }
    }
    if let Some(permission) = text("permission").and_then(|t| serde_json::from_str(&t).ok()) {
        info.insert("permission".into(), permission);
    }
    // As it was made: the later `time_updated` is no part of the moment it was created.
    info.insert("time".into(), json!({ "created": created_ms, "updated": created_ms }));
    Ok(SessionInfo { id, directory, created_ms, info })
}

/// One message with its parts, as read from their rows.
#[derive(Debug, Clone)]
struct Message {
    id: String,
    /// The row's `time_created`, when the data has no `time.created`.
    created_ms: Option<i64>,
    data: Map<String, Value>,
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
struct Part {
    id: String,
    data: Map<String, Value>,
}

/// The turn being read: from a prompt until the next one.
#[derive(Debug)]
struct Turn {
    /// The prompt's message id, which names its `session.idle`.
    prompt: String,
    /// The latest text the model finished, as `experimental.text.complete` handed it over.
    answer: Option<String>,
    /// When its latest answer completed; `None` while the latest is still being written.
    completed_ms: Option<i64>,
}

/// Turns one session's messages into the plugin's payloads.
struct Reader {
    session: String,
    cwd: Option<String>,
    turn: Option<Turn>,
}

impl Reader {
    fn new(session: &str, cwd: Option<String>) -> Reader {
        Reader { session: session.to_owned(), cwd, turn: None }
    }

    fn record(
        &self,
        event: &'static str,
        input: Value,
        output: Value,
        at_ms: i64,
        id: String,
    ) -> Recorded {
        let payload = json!({ "cwd": self.cwd, "input": input, "output": output });
        Recorded { event_name: event, payload, at_ms, source_id: id }
    }

    /// `session.created`, the bus event the plugin passes on as it came.
    fn created(&self, info: SessionInfo) -> Recorded {
        let input = json!({
            "type": "session.created",
            "properties": { "sessionID": info.id, "info": info.info },
        });
        self.record(
            "session.created",
            input,
            Value::Null,
            info.created_ms.unwrap_or(0),
            "created".into(),
        )
    }

    /// Reads one message; how many of its parts could not be read.
    fn message(&mut self, message: Message, out: &mut Vec<Recorded>) -> u64 {
        match message.data.get("role").and_then(Value::as_str) {
            Some("user") => self.user(message, out),
            Some("assistant") => self.assistant(message, out),
            _ => 1,
        }
    }

    fn user(&mut self, message: Message, out: &mut Vec<Recorded>) -> u64 {
        let unknown = message.parts.iter().filter(|p| !known(&p.data)).count() as u64;
        // Only a message someone wrote went through `chat.message`; one of OpenCode's own
        // synthetic text (a compaction, its "continue") did not.
        let typed = message.parts.iter().any(|part| {
            part.data.get("type") == Some(&json!("text"))
                && part.data.get("synthetic") != Some(&Value::Bool(true))
                && part
                    .data
                    .get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.trim().is_empty())
        });
        if !typed {
            return unknown;
        }
        self.end_turn(out);
        let at_ms = message.data.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64);
        let at_ms = at_ms.or(message.created_ms).unwrap_or(0);
        let mut info = message.data;
        // Filled in after the turn, from its changes: not there when the hook ran.
        info.remove("summary");
        info.insert("id".into(), json!(message.id));
        info.insert("sessionID".into(), json!(self.session));
        let parts: Vec<Value> = message
            .parts
            .into_iter()
            .map(|part| {
                let mut fields = part.data;
                fields.insert("id".into(), json!(part.id));
                fields.insert("messageID".into(), json!(message.id));
                fields.insert("sessionID".into(), json!(self.session));
                Value::Object(fields)
            })
            .collect();
        let input = json!({ "sessionID": self.session });
        let output = json!({ "message": info, "parts": parts });
        out.push(self.record("chat.message", input, output, at_ms, message.id.clone()));
        self.turn = Some(Turn { prompt: message.id, answer: None, completed_ms: None });
        unknown
    }

    fn assistant(&mut self, message: Message, out: &mut Vec<Recorded>) -> u64 {
        // A compaction's summary is OpenCode's bookkeeping, no answer to anyone.
        let summary = message.data.get("summary") == Some(&Value::Bool(true));
        let time = message.data.get("time");
        let created_ms = time.and_then(|t| t.get("created")).and_then(Value::as_i64);
        let completed_ms = time.and_then(|t| t.get("completed")).and_then(Value::as_i64);
        let mut skipped = 0;
        for part in message.parts {
            match part.data.get("type").and_then(Value::as_str) {
                Some("tool") => {
                    let fallback = completed_ms.or(created_ms).or(message.created_ms).unwrap_or(0);
                    match self.tool(part, fallback) {
                        Ok(Some(record)) => out.push(record),
                        Ok(None) => {}
                        Err(()) => skipped += 1,
                    }
                }
                Some("text") if !summary => {
                    let synthetic = part.data.get("synthetic") == Some(&Value::Bool(true));
                    if let (Some(turn), Some(text), false) = (
                        self.turn.as_mut(),
                        part.data.get("text").and_then(Value::as_str),
                        synthetic,
                    ) {
                        turn.answer = Some(text.to_owned());
                    }
                }
                _ if known(&part.data) => {}
                _ => skipped += 1,
            }
        }
        if !summary && let Some(turn) = self.turn.as_mut() {
            turn.completed_ms = completed_ms;
        }
        skipped
    }

    /// A tool part as `tool.execute.after`, once it ran; `Err` when it cannot be read.
    fn tool(&self, part: Part, fallback_ms: i64) -> Result<Option<Recorded>, ()> {
        let Part { id, mut data } = part;
        let Some(Value::Object(mut state)) = data.remove("state") else { return Err(()) };
        let tool = data.get("tool").and_then(Value::as_str).ok_or(())?;
        let call = data.get("callID").and_then(Value::as_str).unwrap_or_default();
        let time = state.get("time");
        let at_ms = time
            .and_then(|t| t.get("end").or_else(|| t.get("start")))
            .and_then(Value::as_i64)
            .unwrap_or(fallback_ms);
        let output = match state.get("status").and_then(Value::as_str) {
            Some("completed") => {
                let mut output = json!({
                    "title": state.remove("title").unwrap_or_else(|| json!("")),
                    "metadata": state.remove("metadata").unwrap_or_else(|| json!({})),
                    "output": state.remove("output").unwrap_or_else(|| json!("")),
                });
                if let Some(attachments) = state.remove("attachments") {
                    output["attachments"] = attachments;
                }
                output
            }
            // The hook never sees a call that threw; its error is kept in the shape the hook
            // reads as a failure.
            Some("error") => {
                let error = state.remove("error").unwrap_or_else(|| json!(""));
                json!({
                    "metadata": state.remove("metadata").unwrap_or_else(|| json!({})),
                    "output": error,
                    "error": error,
                })
            }
            // Still pending or running: OpenCode stopped before the call ended.
            Some("pending" | "running") => return Ok(None),
            _ => return Err(()),
        };
        let input = json!({
            "tool": tool,
            "sessionID": self.session,
            "callID": call,
            "args": state.remove("input").unwrap_or_else(|| json!({})),
        });
        Ok(Some(self.record("tool.execute.after", input, output, at_ms, id)))
    }

    /// The turn being read ends: its `session.idle`, when its last answer completed (one still
    /// being written, in a session OpenCode stopped, never went idle).
    fn end_turn(&mut self, out: &mut Vec<Recorded>) {
        let Some(turn) = self.turn.take() else { return };
        let Some(completed_ms) = turn.completed_ms else { return };
        let input = json!({ "type": "session.idle", "properties": { "sessionID": self.session } });
        // The plugin sends no response when the latest text was empty.
        let output = match turn.answer.filter(|text| !text.is_empty()) {
            Some(response) => json!({ "response": response }),
            None => Value::Null,
        };
        out.push(self.record(
            "session.idle",
            input,
            output,
            completed_ms,
            format!("idle-{}", turn.prompt),
        ));
    }

    fn finish(&mut self, out: &mut Vec<Recorded>) {
        self.end_turn(out);
    }
}

/// Whether a part is of a type OpenCode writes.
fn known(part: &Map<String, Value>) -> bool {
    match part.get("type").and_then(Value::as_str) {
        Some("text" | "tool") => true,
        Some(kind) => QUIET_PARTS.contains(&kind),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::event::{CaptureContext, EventKind};

    const SCHEMA: &str = "
        CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT,
            slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL,
            version TEXT NOT NULL, permission TEXT, time_created INTEGER NOT NULL,
            time_updated INTEGER NOT NULL);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
            time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
            time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);";

    fn database() -> Connection {
        let conn = Connection::open_in_memory().expect("in-memory database");
        conn.execute_batch(SCHEMA).expect("schema");
        conn
    }

    fn session(conn: &Connection, id: &str, created: i64) {
        conn.execute(
            "INSERT INTO session VALUES (?1, 'p1', NULL, 'calm-owl', '/p', '', 'Fix it', '1.18.33',
                '[]', ?2, ?2)",
            rusqlite::params![id, created],
        )
        .expect("session row");
    }

    fn message(conn: &Connection, session: &str, id: &str, at: i64, data: Value) {
        conn.execute(
            "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
            rusqlite::params![id, session, at, data.to_string()],
        )
        .expect("message row");
    }

    fn part(conn: &Connection, message: &str, id: &str, at: i64, data: &str) {
        conn.execute(
            "INSERT INTO part VALUES (?1, ?2, (SELECT session_id FROM message WHERE id = ?2), ?3, ?3, ?4)",
            rusqlite::params![id, message, at, data],
        )
        .expect("part row");
    }

    fn user(at: i64) -> Value {
        json!({ "role": "user", "time": { "created": at }, "agent": "build", "summary": { "diffs": [] } })
    }

    fn assistant(parent: &str, created: i64, completed: Option<i64>) -> Value {
        json!({ "role": "assistant", "parentID": parent, "path": { "cwd": "/p", "root": "/p" },
                "time": { "created": created, "completed": completed } })
    }

    fn read_all(conn: &Connection, id: &str) -> (Vec<Recorded>, Tally) {
        let listed = sessions(conn).expect("sessions");
        let session = listed.iter().find(|s| s.key == id).expect("the session");
        let mut out = Vec::new();
        let tally = read(conn, session, &mut out).expect("read");
        (out, tally)
    }

    fn normalized(record: &Recorded) -> crate::event::Event {
        let ctx = CaptureContext {
            uid: "u",
            agent: "opencode",
            event_name: record.event_name,
            received_at_ms: record.at_ms,
        };
        match crate::adapter::normalize(&ctx, &record.payload) {
            Ok(crate::adapter::Normalized::Event(event)) => *event,
            other => panic!("{}: {other:?}", record.event_name),
        }
    }

    /// A session of two turns: the first with a tool that ran, one that failed and a closing
    /// answer, then a compaction; the second cut while its tool ran.
    fn two_turns() -> Connection {
        let conn = database();
        session(&conn, "ses_1", 1_000);
        message(&conn, "ses_1", "msg_1", 1_100, user(1_100));
        part(&conn, "msg_1", "prt_1", 1_100, r#"{"type":"text","text":"run the tests"}"#);
        message(&conn, "ses_1", "msg_2", 1_200, assistant("msg_1", 1_200, Some(1_900)));
        part(&conn, "msg_2", "prt_2", 1_210, r#"{"type":"step-start","snapshot":"abc"}"#);
        part(&conn, "msg_2", "prt_3", 1_220, r#"{"type":"text","text":"Running them."}"#);
        part(
            &conn,
            "msg_2",
            "prt_4",
            1_230,
            r#"{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed",
                "input":{"command":"make test"},"output":"ok\n","title":"make test",
                "metadata":{"output":"ok\n","exit":0,"truncated":false},
                "time":{"start":1230,"end":1300}}}"#,
        );
        part(
            &conn,
            "msg_2",
            "prt_5",
            1_310,
            r#"{"type":"tool","tool":"edit","callID":"call_2","state":{"status":"error",
                "input":{"filePath":"/p/a.py","oldString":"x","newString":"y"},
                "error":"oldString not found in content","time":{"start":1310,"end":1350}}}"#,
        );
        part(&conn, "msg_2", "prt_6", 1_360, r#"{"type":"hologram"}"#);
        part(&conn, "msg_2", "prt_7", 1_370, r#"{"type":"text","text":"All gr"#);
        part(&conn, "msg_2", "prt_8", 1_800, r#"{"type":"text","text":"All green."}"#);
        // `/compact`: OpenCode's own user message and its summary.
        message(&conn, "ses_1", "msg_3", 2_000, user(2_000));
        part(&conn, "msg_3", "prt_9", 2_000, r#"{"type":"compaction","auto":false}"#);
        message(
            &conn,
            "ses_1",
            "msg_4",
            2_100,
            json!({ "role": "assistant", "summary": true, "time": { "created": 2_100, "completed": 2_500 } }),
        );
        part(&conn, "msg_4", "prt_10", 2_200, r#"{"type":"text","text":"Summary: tests ran."}"#);
        message(&conn, "ses_1", "msg_5", 3_000, user(3_000));
        part(&conn, "msg_5", "prt_11", 3_000, r#"{"type":"text","text":"now deploy"}"#);
        part(
            &conn,
            "msg_5",
            "prt_12",
            3_000,
            r#"{"type":"text","text":"<file>","synthetic":true}"#,
        );
        message(&conn, "ses_1", "msg_6", 3_100, assistant("msg_5", 3_100, None));
        part(
            &conn,
            "msg_6",
            "prt_13",
            3_200,
            r#"{"type":"tool","tool":"bash","callID":"call_3","state":{"status":"running",
                "input":{"command":"./deploy"},"time":{"start":3200}}}"#,
        );
        conn
    }

    #[test]
    fn turns_read_as_the_plugin_hands_them_over() {
        let conn = two_turns();
        let (records, tally) = read_all(&conn, "ses_1");
        let shape: Vec<(&str, &str, i64)> =
            records.iter().map(|r| (r.event_name, r.source_id.as_str(), r.at_ms)).collect();
        assert_eq!(
            shape,
            [
                ("session.created", "created", 1_000),
                ("chat.message", "msg_1", 1_100),
                ("tool.execute.after", "prt_4", 1_300),
                ("tool.execute.after", "prt_5", 1_350),
                ("session.idle", "idle-msg_1", 1_900),
                ("chat.message", "msg_5", 3_000),
            ]
        );
        assert_eq!(tally.skipped, 2, "the unknown part and the cut one");

        let prompt = &records[1].payload;
        assert_eq!(prompt["cwd"], "/p");
        assert_eq!(prompt["input"], json!({ "sessionID": "ses_1" }));
        assert_eq!(
            prompt["output"]["message"],
            json!({ "id": "msg_1", "sessionID": "ses_1", "role": "user", "agent": "build",
                    "time": { "created": 1_100 } })
        );
        assert_eq!(
            prompt["output"]["parts"],
            json!([{ "type": "text", "text": "run the tests", "id": "prt_1", "messageID": "msg_1",
                     "sessionID": "ses_1" }])
        );
        let tool = &records[2].payload;
        assert_eq!(
            tool["input"],
            json!({ "tool": "bash", "sessionID": "ses_1", "callID": "call_1",
                    "args": { "command": "make test" } })
        );
        assert_eq!(
            tool["output"],
            json!({ "title": "make test", "output": "ok\n",
                    "metadata": { "output": "ok\n", "exit": 0, "truncated": false } })
        );
        assert_eq!(records[4].payload["output"], json!({ "response": "All green." }));
        assert_eq!(records[4].payload["input"]["properties"], json!({ "sessionID": "ses_1" }));
        assert_eq!(
            records[5].payload["output"]["parts"].as_array().map(Vec::len),
            Some(2),
            "OpenCode's own synthetic parts go with the prompt, as the plugin sees them"
        );

        let kinds: Vec<EventKind> = records.iter().map(|r| normalized(r).kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::SessionStart,
                EventKind::Prompt,
                EventKind::ToolUse,
                EventKind::ToolUse,
                EventKind::Stop,
                EventKind::Prompt,
            ]
        );
        let failed = normalized(&records[3]);
        assert!(failed.facts.failed, "{:?}", failed.facts);
        assert!(failed.body.contains("oldString not found"), "{}", failed.body);
        assert_eq!(normalized(&records[1]).body, "run the tests");
        assert_eq!(normalized(&records[0]).session, "ses_1");
    }

    #[test]
    fn sessions_are_listed_oldest_first_with_their_latest_change() {
        let conn = two_turns();
        session(&conn, "ses_0", 500);
        session(&conn, "ses_2", 9_000);
        let listed = sessions(&conn).expect("sessions");
        let keys: Vec<&str> = listed.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, ["ses_0", "ses_1", "ses_2"]);
        let one = &listed[1];
        assert_eq!(
            one.head,
            SessionHead {
                session: Some("ses_1".into()),
                cwd: Some("/p".into()),
                started_ms: Some(1_000)
            }
        );
        assert_eq!(
            (one.records, one.updated_ms),
            (6, 3_200),
            "the running tool's part is the latest"
        );
        // A session without messages still started.
        let (records, _) = read_all(&conn, "ses_2");
        let names: Vec<&str> = records.iter().map(|r| r.event_name).collect();
        assert_eq!(names, ["session.created"]);
        // One deleted since it was listed reads as nothing.
        conn.execute("DELETE FROM session WHERE id = 'ses_2'", []).expect("delete");
        let mut out = Vec::new();
        assert_eq!(read(&conn, &listed[2], &mut out).expect("read"), Tally::default());
        assert!(out.is_empty());
    }

    #[test]
    fn a_message_that_cannot_be_read_is_counted() {
        let conn = database();
        session(&conn, "ses_1", 1_000);
        conn.execute("INSERT INTO message VALUES ('msg_1', 'ses_1', 1100, 1100, '{\"role\":')", [])
            .expect("cut message row");
        message(&conn, "ses_1", "msg_2", 1_200, json!({ "role": "system" }));
        let (records, tally) = read_all(&conn, "ses_1");
        assert_eq!(records.len(), 1);
        assert_eq!(tally.skipped, 2);
    }

    /// The session recorded from the real OpenCode reads back as the payloads its plugin handed
    /// the hook in that same session.
    #[test]
    fn the_recorded_session_reads_as_its_hooks() {
        let root = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../agent-memory-testkit/fixtures/history"
        ));
        let scenarios: Vec<_> = std::fs::read_dir(root)
            .map(|dir| dir.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        let scenarios: Vec<_> = scenarios
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("opencode-")))
            .collect();
        assert!(!scenarios.is_empty(), "no OpenCode history under {}", root.display());
        for scenario in scenarios {
            compare_with_hooks(&scenario);
        }
    }

    fn compare_with_hooks(scenario: &Path) {
        let db = scenario.join("home/.local/share/opencode/opencode.db");
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
        let conn = Connection::open_with_flags(&db, flags).expect("the recorded database");
        let listed = sessions(&conn).expect("sessions");
        assert_eq!(listed.len(), 1, "{}", scenario.display());
        let mut records = Vec::new();
        assert_eq!(read(&conn, &listed[0], &mut records).expect("read"), Tally::default());

        let stored = ["session.created", "chat.message", "tool.execute.after", "session.idle"];
        let hooks: Vec<Value> = std::fs::read_to_string(scenario.join("hooks.jsonl"))
            .expect("hooks.jsonl")
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a hook line"))
            .filter(|hook| stored.iter().any(|name| hook["event"] == *name))
            .collect();
        let names: Vec<&str> = records.iter().map(|r| r.event_name).collect();
        let hook_names: Vec<&str> = hooks.iter().filter_map(|h| h["event"].as_str()).collect();
        assert_eq!(names, hook_names, "{}", scenario.display());
        assert!(records.windows(2).all(|w| w[0].at_ms <= w[1].at_ms), "in time order");

        for (record, hook) in records.iter().zip(&hooks) {
            let (ours, theirs) = (&record.payload, &hook["payload"]);
            let at = format!("{} {}", scenario.display(), record.event_name);
            assert_eq!(ours["cwd"], theirs["cwd"], "{at}");
            match record.event_name {
                "session.created" => {
                    let (ours, theirs) =
                        (&ours["input"]["properties"], &theirs["input"]["properties"]);
                    assert_eq!(ours["sessionID"], theirs["sessionID"], "{at}");
                    for key in ["id", "slug", "version", "projectID", "directory", "permission"] {
                        assert_eq!(ours["info"][key], theirs["info"][key], "{at} {key}");
                    }
                    assert_eq!(ours["info"]["time"]["created"], theirs["info"]["time"]["created"]);
                }
                "session.idle" => {
                    assert_eq!(ours["input"]["properties"], theirs["input"]["properties"], "{at}");
                    assert_eq!(ours["output"], theirs["output"], "{at}");
                }
                // A prompt with its message and parts, a tool call with its arguments and
                // result: exactly as the plugin handed them over.
                _ => assert_eq!(ours, theirs, "{at}"),
            }
            // And the adapter reads both alike.
            let hook_record = Recorded { payload: theirs.clone(), ..record.clone() };
            let (mine, live) = (normalized(record), normalized(&hook_record));
            assert_eq!(
                (mine.kind, &mine.session, &mine.cwd, &mine.tool, &mine.summary, &mine.body),
                (live.kind, &live.session, &live.cwd, &live.tool, &live.summary, &live.body),
                "{at}"
            );
        }
    }
}
