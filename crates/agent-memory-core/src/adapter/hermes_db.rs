//! Hermes Agent's history: its SQLite database of every session, `~/.hermes/state.db`, read back
//! as the payloads its shell hooks and our memory provider hand over.
//!
//! `sessions` holds one row per session (`id` as the hooks send it, `source` the platform,
//! `model`, `cwd`, `started_at`/`ended_at` in REAL seconds, `end_reason`, `parent_session_id`);
//! `messages` its OpenAI-style messages in insertion order (`id`): a `user` row is a prompt
//! (`content` as typed; `api_content` is what the model saw, with injected recall), an
//! `assistant` row holds text and `tool_calls` (JSON, each `arguments` a JSON string), a `tool`
//! row the result of one call (`tool_call_id`, `tool_name`, `content` the result as JSON text).
//! Hermes writes each closing answer up to three times (`finish_reason` `verification_required`,
//! then `stop`); the last text of a turn is its answer. A session is `on_session_start`, each
//! prompt `pre_llm_call`, each result `post_tool_call`, each turn's end `post_llm_call`, and
//! `on_session_finalize` when the row says it ended (`chat -q` runs leave `ended_at` NULL);
//! the per-turn `on_session_end` of the shell hooks is not kept, so it is not made up.
//!
//! Skipped, as our provider skips it live: subagent sessions (`source` `subagent`), calls of
//! Hermes's bookkeeping tools (a built-in memory write becomes `on_memory_write` instead),
//! background-review turns, compaction summaries and the rows compaction copied from earlier
//! ones, and rows a rewind took back (`active` 0 without `compacted`). Older databases lack
//! some columns; a missing one reads as NULL.

use std::collections::{HashMap, HashSet};

use rusqlite::types::Value as Cell;
use rusqlite::{Connection, Row};
use serde_json::{Map, Value, json};

use super::history::{DbSession, HistorySource, Layout, Recorded, SessionHead, Tally};
use super::{ConfigBase, ConfigRoot, parse_iso_ms};

pub(super) const SOURCE: HistorySource = HistorySource {
    root: ConfigRoot { env: Some("HERMES_HOME"), base: ConfigBase::Home, dir: ".hermes" },
    layout: Layout::Database { file: "state.db", sessions, read },
};

/// Tools our provider does not record: Hermes's memory store (mirrored as `on_memory_write`),
/// its todo list and its scheduler say nothing about the work itself.
const BOOKKEEPING: &[&str] = &["memory", "todo", "cronjob", "cron"];
/// The memory tool's actions Hermes mirrors to a memory provider.
const MIRRORED: &[&str] = &["add", "replace", "remove"];
/// How messages Hermes wrote itself begin: compaction summaries (current and legacy), the todo
/// list it re-injects after a compaction.
const INJECTED: &[&str] = &[
    "[CONTEXT COMPACTION",
    "[CONTEXT SUMMARY]:",
    "[Your active task list was preserved across context compression]",
];
/// How a background review's prompt begins: older Hermes builds wrote that turn into the
/// reviewed session, and our provider never records a review.
const REVIEW: &[&str] = &[
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
];
/// What Hermes puts before a structured (multimodal) `content` stored as JSON.
const JSON_CONTENT: &str = "\u{0}json:";

/// Every session, oldest first, with its message count and latest time.
fn sessions(conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
    let have = columns(conn, "sessions")?;
    let col = |name: &str| if have.contains(name) { format!("s.{name}") } else { "NULL".into() };
    let subagents = if have.contains("source") { "WHERE s.source IS NOT 'subagent'" } else { "" };
    let sql = format!(
        "SELECT s.id, {cwd}, s.started_at, {ended}, COUNT(m.id), MAX(m.timestamp) \
         FROM sessions s LEFT JOIN messages m ON m.session_id = s.id {subagents} \
         GROUP BY s.id ORDER BY s.started_at, s.id",
        cwd = col("cwd"),
        ended = col("ended_at"),
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        // A row that cannot be read is left out: `read` would find nothing of it either.
        let Some(key) = text(row, 0) else { continue };
        let started_ms = ms(row, 2);
        let updated_ms = [started_ms, ms(row, 3), ms(row, 5)].into_iter().flatten().max();
        let records = row.get::<_, i64>(4).unwrap_or(0).max(0) as u64;
        let head = SessionHead { session: Some(key.clone()), cwd: text(row, 1), started_ms };
        out.push(DbSession { key, head, updated_ms: updated_ms.unwrap_or(0), records });
    }
    Ok(out)
}

/// One session's records, in order.
fn read(
    conn: &Connection,
    session: &DbSession,
    out: &mut Vec<Recorded>,
) -> rusqlite::Result<Tally> {
    let mut tally = Tally::default();
    let have = columns(conn, "sessions")?;
    let col = |name: &str| if have.contains(name) { name.to_owned() } else { "NULL".into() };
    let sql = format!(
        "SELECT {}, {}, {}, started_at, {}, {}, {} FROM sessions WHERE id = ?1",
        col("source"),
        col("model"),
        col("cwd"),
        col("ended_at"),
        col("end_reason"),
        col("parent_session_id"),
    );
    let meta = conn.query_row(&sql, [&session.key], |row| {
        Ok(Meta {
            platform: text(row, 0).unwrap_or_else(|| "cli".into()),
            model: text(row, 1),
            cwd: text(row, 2),
            started_ms: ms(row, 3),
            ended_ms: ms(row, 4),
            end_reason: text(row, 5),
            parent: text(row, 6),
        })
    })?;
    let mut reader = Reader::new(&session.key, meta);
    if let Some(parent) = reader.meta.parent.clone() {
        reader.copied_from(conn, &parent)?;
    }
    reader.start(out);

    let have = columns(conn, "messages")?;
    let col = |name: &str| if have.contains(name) { name.to_owned() } else { "NULL".into() };
    let sql = format!(
        "SELECT id, role, content, {}, {}, {}, timestamp, {}, {} FROM messages \
         WHERE session_id = ?1 ORDER BY id",
        col("tool_call_id"),
        col("tool_calls"),
        col("tool_name"),
        col("active"),
        col("compacted"),
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([&session.key])?;
    while let Some(row) = rows.next()? {
        match Message::of(row) {
            Some(message) => reader.message(message, &mut tally, out),
            None => tally.skipped += 1,
        }
    }
    reader.finish(out);
    Ok(tally)
}

/// The columns `table` has: Hermes adds columns as it goes, so an older database lacks some.
fn columns(conn: &Connection, table: &str) -> rusqlite::Result<HashSet<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt.query_map([table], |row| row.get::<_, String>(0))?;
    names.collect()
}

/// A cell as text: ids may be stored as numbers.
fn text(row: &Row<'_>, at: usize) -> Option<String> {
    match row.get::<_, Cell>(at).ok()? {
        Cell::Text(text) => Some(text),
        Cell::Integer(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A time cell (REAL seconds, as Hermes writes it; or an integer, or ISO text) as Unix ms.
fn ms(row: &Row<'_>, at: usize) -> Option<i64> {
    seconds(row, at).map(|s| (s * 1000.0).round() as i64)
}

fn seconds(row: &Row<'_>, at: usize) -> Option<f64> {
    let value = match row.get::<_, Cell>(at).ok()? {
        Cell::Real(s) => s,
        // 1e11 seconds is the year 5138, 1e11 milliseconds is 1973.
        Cell::Integer(n) if n.unsigned_abs() < 100_000_000_000 => n as f64,
        Cell::Integer(n) => n as f64 / 1000.0,
        Cell::Text(text) => match text.trim().parse::<f64>() {
            Ok(s) => s,
            Err(_) => parse_iso_ms(&text)? as f64 / 1000.0,
        },
        _ => return None,
    };
    value.is_finite().then_some(value)
}

/// What the session row says of the session.
#[derive(Debug)]
struct Meta {
    platform: String,
    model: Option<String>,
    cwd: Option<String>,
    started_ms: Option<i64>,
    ended_ms: Option<i64>,
    end_reason: Option<String>,
    parent: Option<String>,
}

/// One `messages` row.
#[derive(Debug)]
struct Message {
    role: String,
    content: Option<String>,
    tool_call_id: Option<String>,
    tool_calls: Option<String>,
    tool_name: Option<String>,
    /// REAL seconds.
    seconds: f64,
    /// Taken back by a rewind: not active and not compacted away.
    rewound: bool,
    /// Summarised away by an in-place compaction, which copied some of it after.
    compacted: bool,
}

impl Message {
    fn of(row: &Row<'_>) -> Option<Message> {
        let flag = |at: usize| row.get::<_, Option<i64>>(at).ok().flatten();
        let active = flag(7).unwrap_or(1) != 0;
        let compacted = flag(8).unwrap_or(0) != 0;
        Some(Message {
            role: text(row, 1)?,
            content: text(row, 2),
            tool_call_id: text(row, 3).filter(|id| !id.is_empty()),
            tool_calls: text(row, 4),
            tool_name: text(row, 5),
            seconds: seconds(row, 6)?,
            rewound: !active && !compacted,
            compacted,
        })
    }

    fn at_ms(&self) -> i64 {
        (self.seconds * 1000.0).round() as i64
    }

    /// Its text: a structured content's text parts, joined.
    fn text(&self) -> String {
        let Some(content) = self.content.as_deref() else { return String::new() };
        let Some(json) = content.strip_prefix(JSON_CONTENT) else { return content.to_owned() };
        let parts: Vec<String> = match serde_json::from_str::<Value>(json) {
            Ok(Value::Array(parts)) => parts
                .iter()
                .filter_map(|part| part.as_str().or(part["text"].as_str()))
                .map(str::to_owned)
                .collect(),
            Ok(Value::String(text)) => vec![text],
            _ => Vec::new(),
        };
        parts.join("\n")
    }
}

/// Where a compaction's copies of earlier rows may be.
#[derive(Debug, Clone, Copy)]
struct Copies {
    /// The time an in-place compaction wrote its rows at (a rotated session's are written one
    /// by one, with none).
    batch: Option<f64>,
    /// The latest time of what it archived: a copy keeping its own time is no later.
    until: f64,
}

/// A tool call waiting for its result.
#[derive(Debug)]
struct Call {
    name: String,
    input: Value,
}

/// The turn being read.
#[derive(Debug, Default)]
struct Turn {
    /// The source id of its prompt, and the prompt.
    prompt: Option<(String, String)>,
    answer: Option<String>,
    last_ms: Option<i64>,
}

struct Reader {
    session: String,
    meta: Meta,
    calls: HashMap<String, Call>,
    turn: Turn,
    /// Inside a background review's turn: nothing of it is the user's.
    reviewing: bool,
    prompted: bool,
    /// Prompts compaction summarised away, which it may copy after its summary, by text.
    archived: HashMap<String, u32>,
    /// The latest time of the rows an in-place compaction archived.
    archived_until: Option<f64>,
    /// While rows may be a compaction's copies of earlier ones.
    copies: Option<Copies>,
    /// Tool calls already read.
    seen_calls: HashSet<String>,
    /// Rows read per instant, so rows of one instant get distinct ids.
    instants: HashMap<(String, i64), u32>,
}

impl Reader {
    fn new(session: &str, meta: Meta) -> Reader {
        Reader {
            session: session.to_owned(),
            meta,
            calls: HashMap::new(),
            turn: Turn::default(),
            reviewing: false,
            prompted: false,
            archived: HashMap::new(),
            archived_until: None,
            copies: None,
            seen_calls: HashSet::new(),
            instants: HashMap::new(),
        }
    }

    /// A session that continues one compaction ended begins with what it copied of that one:
    /// its prompts and tool calls are the parent's, already read there.
    fn copied_from(&mut self, conn: &Connection, parent: &str) -> rusqlite::Result<()> {
        let reason: Option<String> = conn
            .query_row("SELECT end_reason FROM sessions WHERE id = ?1", [parent], |row| {
                Ok(text(row, 0))
            })
            .unwrap_or(None);
        if reason.as_deref() != Some("compression") {
            return Ok(());
        }
        let mut stmt = conn.prepare(
            "SELECT role, content, tool_call_id FROM messages WHERE session_id = ?1 \
             AND role IN ('user', 'tool')",
        )?;
        let mut rows = stmt.query([parent])?;
        while let Some(row) = rows.next()? {
            let content = text(row, 1).unwrap_or_default();
            match text(row, 0).as_deref() {
                Some("user") if !INJECTED.iter().any(|p| content.trim_start().starts_with(p)) => {
                    *self.archived.entry(content).or_default() += 1;
                }
                Some("user") => {}
                _ => self.seen_calls.extend(text(row, 2)),
            }
        }
        // Its copies come first, written one by one: they last until a prompt that is none.
        self.copies = Some(Copies { batch: None, until: f64::INFINITY });
        Ok(())
    }

    /// A shell hook's payload: `hook_event_name`, `tool_name`, `tool_input`, `session_id`,
    /// `cwd`, and everything else in `extra`.
    fn hook(&self, event: &'static str, tool: Option<(&str, &Value)>, extra: Value) -> Value {
        let (name, input) = tool.map_or((Value::Null, Value::Null), |(n, i)| (json!(n), i.clone()));
        json!({
            "hook_event_name": event,
            "tool_name": name,
            "tool_input": input,
            "session_id": self.session,
            "cwd": self.meta.cwd,
            "extra": extra,
        })
    }

    fn push(
        &self,
        event: &'static str,
        payload: Value,
        at_ms: i64,
        id: String,
        out: &mut Vec<Recorded>,
    ) {
        out.push(Recorded { event_name: event, payload, at_ms, source_id: id });
    }

    /// A stable id for a row: its kind and instant (Hermes keeps a message's time when it
    /// rewrites a session), numbered when several share one.
    fn instant_id(&mut self, kind: &str, message: &Message) -> String {
        let micros = (message.seconds * 1e6).round() as i64;
        let n = self.instants.entry((kind.to_owned(), micros)).or_default();
        *n += 1;
        if *n == 1 { format!("{kind}-{micros}") } else { format!("{kind}-{micros}-{n}") }
    }

    fn start(&self, out: &mut Vec<Recorded>) {
        let Some(at_ms) = self.meta.started_ms else { return };
        let extra = json!({ "model": self.meta.model, "platform": self.meta.platform });
        let payload = self.hook("on_session_start", None, extra);
        self.push("on_session_start", payload, at_ms, "start".into(), out);
    }

    /// The turn being read ends: its `post_llm_call`, when a prompt began it and the model
    /// answered.
    fn end_turn(&mut self, out: &mut Vec<Recorded>) {
        let turn = std::mem::take(&mut self.turn);
        let (Some((id, prompt)), Some(last_ms)) = (turn.prompt, turn.last_ms) else { return };
        let extra = json!({
            "user_message": prompt,
            "assistant_response": turn.answer.unwrap_or_default(),
            "model": self.meta.model,
            "platform": self.meta.platform,
        });
        let payload = self.hook("post_llm_call", None, extra);
        self.push("post_llm_call", payload, last_ms, format!("stop-{id}"), out);
    }

    fn message(&mut self, message: Message, tally: &mut Tally, out: &mut Vec<Recorded>) {
        if message.rewound {
            return;
        }
        if message.compacted {
            let until = self.archived_until.unwrap_or(message.seconds);
            self.archived_until = Some(until.max(message.seconds));
        } else if let Some(until) = self.archived_until.take() {
            // The first live row after archived ones: the compaction's new rows begin, written
            // at once (one time for all, or the copied rows' own earlier times).
            self.copies = Some(Copies { batch: Some(message.seconds), until });
        }
        if let Some(Copies { batch: Some(batch), until }) = self.copies
            && message.seconds != batch
            && message.seconds > until
        {
            self.copies = None;
        }
        match message.role.as_str() {
            "user" => self.user(&message, out),
            "assistant" if !self.reviewing => self.assistant(&message, tally),
            "tool" if !self.reviewing => self.tool(&message, out),
            "assistant" | "tool" | "system" => {}
            _ => tally.skipped += 1,
        }
    }

    fn user(&mut self, message: &Message, out: &mut Vec<Recorded>) {
        let text = message.text();
        let trimmed = text.trim_start();
        if trimmed.is_empty() || INJECTED.iter().any(|p| trimmed.starts_with(p)) {
            return;
        }
        if REVIEW.iter().any(|p| trimmed.starts_with(p)) {
            self.end_turn(out);
            self.reviewing = true;
            return;
        }
        let copy = self.copies.is_some()
            && self.archived.get_mut(&text).is_some_and(|n| {
                let some = *n > 0;
                *n = n.saturating_sub(1);
                some
            });
        if message.compacted {
            *self.archived.entry(text.clone()).or_default() += 1;
        }
        self.reviewing = false;
        if copy {
            // Compaction's copy of a prompt already read: the turn it began goes on.
            return;
        }
        self.copies = None;
        self.end_turn(out);
        let id = self.instant_id("user", message);
        let extra = json!({
            "user_message": text,
            "is_first_turn": !self.prompted,
            "model": self.meta.model,
            "platform": self.meta.platform,
        });
        let payload = self.hook("pre_llm_call", None, extra);
        self.push("pre_llm_call", payload, message.at_ms(), id.clone(), out);
        self.prompted = true;
        self.turn.prompt = Some((id, text));
    }

    fn assistant(&mut self, message: &Message, tally: &mut Tally) {
        if let Some(calls) = message.tool_calls.as_deref().filter(|c| !c.trim().is_empty()) {
            match serde_json::from_str::<Value>(calls) {
                Ok(Value::Array(calls)) => calls.iter().for_each(|call| self.request(call)),
                Ok(Value::Null) => {}
                _ => tally.skipped += 1,
            }
        }
        let text = message.text();
        let text = text.trim();
        if self.turn.prompt.is_none() || INJECTED.iter().any(|p| text.starts_with(p)) {
            return;
        }
        if !text.is_empty() {
            self.turn.answer = Some(text.to_owned());
        }
        self.turn.last_ms = self.turn.last_ms.max(Some(message.at_ms()));
    }

    /// One of an assistant message's tool calls, waiting for its result.
    fn request(&mut self, call: &Value) {
        let Some(id) = call["id"].as_str().or(call["call_id"].as_str()) else { return };
        let function = &call["function"];
        let name = function["name"].as_str().or(call["name"].as_str()).unwrap_or_default();
        // Arguments come as JSON text; the hooks hand them over parsed.
        let input = match &function["arguments"] {
            Value::String(raw) => {
                serde_json::from_str::<Value>(raw).unwrap_or_else(|_| json!({ "arguments": raw }))
            }
            Value::Null => json!({}),
            other => other.clone(),
        };
        self.calls.insert(id.to_owned(), Call { name: name.to_owned(), input });
    }

    fn tool(&mut self, message: &Message, out: &mut Vec<Recorded>) {
        let id = match &message.tool_call_id {
            Some(id) if !self.seen_calls.insert(id.clone()) => return,
            Some(id) => id.clone(),
            None => self.instant_id("tool", message),
        };
        let call = self.calls.remove(&id).unwrap_or_else(|| Call {
            name: message.tool_name.clone().unwrap_or_default(),
            input: json!({}),
        });
        if call.name.is_empty() {
            return;
        }
        let result = message.content.clone().unwrap_or_default();
        let at_ms = message.at_ms();
        if self.turn.prompt.is_some() {
            self.turn.last_ms = self.turn.last_ms.max(Some(at_ms));
        }
        if BOOKKEEPING.contains(&call.name.as_str()) {
            if call.name == "memory" {
                self.memory_writes(&call.input, &result, at_ms, &id, out);
            }
            return;
        }
        // Hermes says a call failed when its result names an error.
        let parsed = serde_json::from_str::<Value>(&result).unwrap_or(Value::Null);
        let error = parsed["error"].as_str().filter(|e| !e.trim().is_empty());
        let extra = json!({
            "result": result,
            "tool_call_id": message.tool_call_id,
            "status": if error.is_some() { "error" } else { "ok" },
            "error_type": error.map(|_| "tool_error"),
            "error_message": error,
        });
        let payload = self.hook("post_tool_call", Some((&call.name, &call.input)), extra);
        self.push("post_tool_call", payload, at_ms, id, out);
    }

    /// What Hermes tells a memory provider of a memory tool call that wrote: each add, replace
    /// or remove with its content.
    fn memory_writes(
        &self,
        input: &Value,
        result: &str,
        at_ms: i64,
        id: &str,
        out: &mut Vec<Recorded>,
    ) {
        let result = serde_json::from_str::<Value>(result).unwrap_or(Value::Null);
        if result["success"] != true || result["staged"] == true {
            return;
        }
        let target = input["target"].as_str().unwrap_or("memory");
        let single = [input.clone()];
        let operations = match input["operations"].as_array() {
            Some(ops) if !ops.is_empty() => ops.as_slice(),
            _ => &single,
        };
        for (n, op) in operations.iter().enumerate() {
            let action = op["action"].as_str().unwrap_or_default();
            let content = op["content"].as_str().map(str::trim).unwrap_or_default();
            if !MIRRORED.contains(&action) || content.is_empty() {
                continue;
            }
            let mut payload = Map::new();
            payload.insert("hook_event_name".into(), json!("on_memory_write"));
            payload.insert("session_id".into(), json!(self.session));
            payload.insert("cwd".into(), json!(self.meta.cwd));
            payload.insert("action".into(), json!(action));
            payload.insert("target".into(), json!(target));
            payload.insert("content".into(), json!(content));
            let source_id = format!("memory-{id}-{n}");
            self.push("on_memory_write", Value::Object(payload), at_ms, source_id, out);
        }
    }

    fn finish(&mut self, out: &mut Vec<Recorded>) {
        self.end_turn(out);
        let Some(at_ms) = self.meta.ended_ms else { return };
        let extra = json!({ "platform": self.meta.platform, "reason": self.meta.end_reason });
        let payload = self.hook("on_session_finalize", None, extra);
        self.push("on_session_finalize", payload, at_ms, "end".into(), out);
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::params;

    use super::*;
    use crate::adapter::{Normalized, closing_answer_of, normalize};
    use crate::event::{CaptureContext, Event, EventKind};

    /// Hermes 0.19's tables, as far as the reader reads them.
    const SCHEMA: &str = "
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
            parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
            message_count INTEGER DEFAULT 0, cwd TEXT, title TEXT);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
            role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
            timestamp REAL NOT NULL, finish_reason TEXT, active INTEGER NOT NULL DEFAULT 1,
            compacted INTEGER NOT NULL DEFAULT 0, api_content TEXT);";

    fn database() -> Connection {
        let conn = Connection::open_in_memory().expect("a database");
        conn.execute_batch(SCHEMA).expect("the test data");
        conn
    }

    fn session(conn: &Connection, id: &str, source: &str, started: f64, ended: Option<f64>) {
        conn.execute(
            "INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, cwd) \
             VALUES (?1, ?2, 'm1', ?3, ?4, ?5, '/p')",
            params![id, source, started, ended, ended.map(|_| "cli_close")],
        )
        .expect("the test data");
    }

    /// A row: (role, content, tool call id, tool calls, tool name, seconds, active, compacted).
    type Row<'a> =
        (&'a str, &'a str, Option<&'a str>, Option<String>, Option<&'a str>, f64, i64, i64);

    fn messages(conn: &Connection, session: &str, rows: &[Row<'_>]) {
        for (role, content, call_id, calls, tool, at, active, compacted) in rows {
            conn.execute(
                "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, \
                 tool_name, timestamp, active, compacted) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![session, role, content, call_id, calls, tool, at, active, compacted],
            )
            .expect("the test data");
        }
    }

    fn calls(id: &str, name: &str, args: Value) -> Option<String> {
        let call = json!([{"id": id, "call_id": id, "type": "function",
                           "function": {"name": name, "arguments": args.to_string()}}]);
        Some(call.to_string())
    }

    fn read_all(conn: &Connection) -> (Vec<DbSession>, Vec<Recorded>, Tally) {
        let list = sessions(conn).expect("the sessions");
        let mut out = Vec::new();
        let mut tally = Tally::default();
        for session in &list {
            tally.skipped += read(conn, session, &mut out).expect("a session").skipped;
        }
        (list, out, tally)
    }

    const T: f64 = 1_767_225_600.0;

    /// Two turns: a command, a read that fails, a memory write and a todo update, the answer
    /// written three times; then a system row, a row of an unknown role and a rewound prompt.
    fn two_turns(conn: &Connection) {
        session(conn, "s1", "cli", T, Some(T + 30.0));
        messages(
            conn,
            "s1",
            &[
                ("user", "fix add", None, None, None, T + 1.0, 1, 0),
                (
                    "assistant",
                    "",
                    None,
                    calls("c1", "terminal", json!({"command": "make test"})),
                    None,
                    T + 2.0,
                    1,
                    0,
                ),
                (
                    "tool",
                    r#"{"output": "1 failed", "exit_code": 1, "error": null}"#,
                    Some("c1"),
                    None,
                    Some("terminal"),
                    T + 3.0,
                    1,
                    0,
                ),
                (
                    "assistant",
                    "",
                    None,
                    calls("c2", "read_file", json!({"path": "/p/x.py"})),
                    None,
                    T + 4.0,
                    1,
                    0,
                ),
                (
                    "tool",
                    r#"{"content": "", "error": "File not found: /p/x.py"}"#,
                    Some("c2"),
                    None,
                    Some("read_file"),
                    T + 5.0,
                    1,
                    0,
                ),
                (
                    "assistant",
                    "",
                    None,
                    calls(
                        "c3",
                        "memory",
                        json!({"action": "add", "target": "user", "content": "Prefers tabs"}),
                    ),
                    None,
                    T + 6.0,
                    1,
                    0,
                ),
                ("tool", r#"{"success": true}"#, Some("c3"), None, Some("memory"), T + 7.0, 1, 0),
                (
                    "assistant",
                    "",
                    None,
                    calls("c4", "todo", json!({"todos": []})),
                    None,
                    T + 8.0,
                    1,
                    0,
                ),
                ("tool", r#"{"todos": []}"#, Some("c4"), None, Some("todo"), T + 9.0, 1, 0),
                ("assistant", "Fixed.", None, None, None, T + 10.0, 1, 0),
                ("assistant", "Fixed.", None, None, None, T + 11.0, 1, 0),
                ("system", "You are Hermes", None, None, None, T + 12.0, 1, 0),
                ("session_meta", "{}", None, None, None, T + 13.0, 1, 0),
                ("user", "taken back", None, None, None, T + 14.0, 0, 0),
                ("user", "again", None, None, None, T + 15.0, 1, 0),
                ("assistant", "Done again.", None, None, None, T + 16.5, 1, 0),
            ],
        );
    }

    #[test]
    fn a_session_reads_as_its_hooks() {
        let conn = database();
        two_turns(&conn);
        let (list, records, tally) = read_all(&conn);
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].records, 16);
        assert_eq!(list[0].updated_ms, 1_767_225_630_000);
        assert_eq!(list[0].head.cwd.as_deref(), Some("/p"));
        assert_eq!(list[0].head.started_ms, Some(1_767_225_600_000));
        let shape = crate::adapter::history::shape(&records);
        assert_eq!(
            shape,
            [
                ("on_session_start", "start", 0),
                ("pre_llm_call", "user-1767225601000000", 1_000),
                ("post_tool_call", "c1", 3_000),
                ("post_tool_call", "c2", 5_000),
                ("on_memory_write", "memory-c3-0", 7_000),
                ("post_llm_call", "stop-user-1767225601000000", 11_000),
                ("pre_llm_call", "user-1767225615000000", 15_000),
                ("post_llm_call", "stop-user-1767225615000000", 16_500),
                ("on_session_finalize", "end", 30_000),
            ]
        );
        // The unknown role is counted; the system row and the rewound prompt are known.
        assert_eq!(tally.skipped, 1);
        let payload = |i: usize| &records[i].payload;
        assert_eq!(payload(0)["extra"], json!({"model": "m1", "platform": "cli"}));
        assert_eq!(payload(1)["session_id"], "s1");
        assert_eq!(payload(1)["cwd"], "/p");
        assert_eq!(payload(1)["extra"]["user_message"], "fix add");
        assert_eq!(payload(1)["extra"]["is_first_turn"], true);
        assert_eq!(payload(2)["tool_name"], "terminal");
        assert_eq!(payload(2)["tool_input"], json!({"command": "make test"}));
        assert_eq!(payload(2)["extra"]["status"], "ok");
        assert_eq!(payload(2)["extra"]["tool_call_id"], "c1");
        assert_eq!(payload(3)["extra"]["status"], "error");
        assert_eq!(payload(3)["extra"]["error_message"], "File not found: /p/x.py");
        assert_eq!(payload(4)["content"], "Prefers tabs");
        assert_eq!(payload(4)["target"], "user");
        assert_eq!(payload(5)["extra"]["assistant_response"], "Fixed.");
        assert_eq!(payload(6)["extra"]["is_first_turn"], false);
        assert_eq!(payload(8)["extra"]["reason"], "cli_close");

        // And the adapter reads them as the hooks' events.
        let events: Vec<Event> = records.iter().filter_map(normalized).collect();
        let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        use EventKind::*;
        assert_eq!(
            kinds,
            [SessionStart, Prompt, ToolUse, ToolUse, Note, Stop, Prompt, Stop, SessionEnd]
        );
        assert!(events[3].summary.contains("failed"), "{}", events[3].summary);
        assert_eq!(closing_answer_of(&events[5]), Some("Fixed."));
    }

    #[test]
    fn what_compaction_copied_is_not_read_twice() {
        let conn = database();
        session(&conn, "s1", "cli", T, None);
        let summary = "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted";
        messages(
            &conn,
            "s1",
            &[
                // Archived by an in-place compaction...
                ("user", "first", None, None, None, T + 1.0, 0, 1),
                ("assistant", "One.", None, None, None, T + 2.0, 0, 1),
                ("user", "second", None, None, None, T + 3.0, 0, 1),
                (
                    "assistant",
                    "",
                    None,
                    calls("c1", "terminal", json!({"command": "ls"})),
                    None,
                    T + 4.0,
                    0,
                    1,
                ),
                ("tool", r#"{"output": "a"}"#, Some("c1"), None, Some("terminal"), T + 5.0, 0, 1),
                // ...then its summary and the tail it kept, copied at the compaction's time.
                ("user", summary, None, None, None, T + 6.0, 1, 0),
                ("user", "second", None, None, None, T + 6.0, 1, 0),
                (
                    "assistant",
                    "",
                    None,
                    calls("c1", "terminal", json!({"command": "ls"})),
                    None,
                    T + 6.0,
                    1,
                    0,
                ),
                ("tool", r#"{"output": "a"}"#, Some("c1"), None, Some("terminal"), T + 6.0, 1, 0),
                ("assistant", "Two.", None, None, None, T + 7.0, 1, 0),
                // A prompt typed again later is a prompt.
                ("user", "first", None, None, None, T + 8.0, 1, 0),
                ("assistant", "One again.", None, None, None, T + 9.0, 1, 0),
            ],
        );
        // A session that continues one ended by compaction begins with copies of it.
        session(&conn, "s2", "cli", T + 20.0, None);
        conn.execute("UPDATE sessions SET parent_session_id = 's1' WHERE id = 's2'", [])
            .expect("the test data");
        conn.execute("UPDATE sessions SET end_reason = 'compression' WHERE id = 's1'", [])
            .expect("the test data");
        messages(
            &conn,
            "s2",
            &[
                ("user", "first", None, None, None, T + 21.0, 1, 0),
                ("tool", r#"{"output": "a"}"#, Some("c1"), None, Some("terminal"), T + 21.0, 1, 0),
                ("user", "third", None, None, None, T + 22.0, 1, 0),
                ("assistant", "Three.", None, None, None, T + 23.0, 1, 0),
            ],
        );
        let (_, records, _) = read_all(&conn);
        let shape: Vec<(&str, &str)> = records
            .iter()
            .map(|r| (r.event_name, r.payload["session_id"].as_str().unwrap_or_default()))
            .collect();
        assert_eq!(
            shape,
            [
                ("on_session_start", "s1"),
                ("pre_llm_call", "s1"),
                ("post_llm_call", "s1"),
                ("pre_llm_call", "s1"),
                ("post_tool_call", "s1"),
                ("post_llm_call", "s1"),
                ("pre_llm_call", "s1"),
                ("post_llm_call", "s1"),
                ("on_session_start", "s2"),
                ("pre_llm_call", "s2"),
                ("post_llm_call", "s2"),
            ]
        );
        let answers: Vec<&Value> = records
            .iter()
            .filter(|r| r.event_name == "post_llm_call")
            .map(|r| &r.payload["extra"]["assistant_response"])
            .collect();
        assert_eq!(answers, ["One.", "Two.", "One again.", "Three."]);
    }

    #[test]
    fn an_older_database_and_bad_rows_are_read_as_far_as_they_go() {
        let conn = Connection::open_in_memory().expect("a database");
        conn.execute_batch(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
                started_at REAL NOT NULL);
             CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
                role TEXT, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
                timestamp REAL);
             INSERT INTO sessions VALUES ('old', 'cli', 'm', 1767225600);
             INSERT INTO sessions VALUES ('sub', 'subagent', 'm', 1767225601.5);
             INSERT INTO messages (session_id, role, content, timestamp)
                VALUES ('old', 'user', 'hello', 1767225601.25);
             INSERT INTO messages (session_id, role, content, timestamp)
                VALUES ('old', 'user', 'no time', NULL);
             INSERT INTO messages (session_id, role, content, tool_calls, timestamp)
                VALUES ('old', 'assistant', '', '[{\"id\": ', 1767225602);
             INSERT INTO messages (session_id, role, content, timestamp)
                VALUES ('old', 'assistant', 'Hi.', '1767225603');",
        )
        .expect("the test data");
        let (list, records, tally) = read_all(&conn);
        // The subagent's session is left out; times read from REAL, integer or text cells.
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].head.cwd, None);
        assert_eq!(list[0].records, 4);
        assert_eq!(list[0].updated_ms, 1_767_225_603_000);
        let names: Vec<&str> = records.iter().map(|r| r.event_name).collect();
        assert_eq!(names, ["on_session_start", "pre_llm_call", "post_llm_call"]);
        assert_eq!(records[1].at_ms, 1_767_225_601_250);
        assert_eq!(records[2].payload["extra"]["assistant_response"], "Hi.");
        // The row without a time and the cut tool calls are counted.
        assert_eq!(tally.skipped, 2);
    }

    fn normalized(record: &Recorded) -> Option<Event> {
        let ctx = CaptureContext {
            uid: "u",
            agent: "hermes",
            event_name: record.event_name,
            received_at_ms: record.at_ms,
        };
        match normalize(&ctx, &record.payload) {
            Ok(Normalized::Event(event)) => Some(*event),
            _ => None,
        }
    }

    /// The recorded session of `fixtures/history/hermes-batch-size-reverse`: its database reads
    /// as the events its hooks gave, but for the per-turn session ends the database does not
    /// keep (and the times: Hermes's hooks carry none).
    #[test]
    fn the_recorded_session_reads_as_its_hooks_did() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../agent-memory-testkit/fixtures/history/hermes-batch-size-reverse"
        );
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
        let conn = Connection::open_with_flags(format!("{dir}/home/.hermes/state.db"), flags)
            .expect("the recorded database");
        let (list, records, tally) = read_all(&conn);
        assert_eq!(tally.skipped, 0);
        assert_eq!(list.len(), 1);
        let hooks = std::fs::read_to_string(format!("{dir}/hooks.jsonl")).expect("hooks");
        let hooked: Vec<Event> = hooks
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a hook line"))
            .filter_map(|line| {
                let event = line["event"].as_str()?.to_owned();
                let ctx = CaptureContext {
                    uid: "u",
                    agent: "hermes",
                    event_name: &event,
                    received_at_ms: 0,
                };
                match normalize(&ctx, &line["payload"]) {
                    Ok(Normalized::Event(event)) if event.kind != EventKind::SessionEnd => {
                        Some(*event)
                    }
                    _ => None,
                }
            })
            .collect();
        let read: Vec<Event> = records.iter().filter_map(normalized).collect();
        let view = |e: &Event| {
            (
                e.kind,
                e.session.clone(),
                e.cwd.clone(),
                e.tool.clone(),
                e.summary.clone(),
                e.body.clone(),
            )
        };
        let hooked_view: Vec<_> = hooked.iter().map(view).collect();
        let read_view: Vec<_> = read.iter().map(view).collect();
        assert_eq!(read_view, hooked_view);
        // The same calls (but for how long each ran, which the database does not keep), by id,
        // and the same closing answers.
        let ids = |events: &[Event]| -> Vec<Value> {
            let mut calls: Vec<Value> = events
                .iter()
                .filter(|e| e.kind == EventKind::ToolUse)
                .map(|e| e.payload.clone())
                .collect();
            calls.iter_mut().filter_map(Value::as_object_mut).for_each(|call| {
                call.remove("duration_ms");
            });
            calls
        };
        assert_eq!(ids(&read), ids(&hooked));
        let call_ids: Vec<&str> =
            records.iter().filter_map(|r| r.payload["extra"]["tool_call_id"].as_str()).collect();
        assert_eq!(
            call_ids,
            ["call_000000000001", "call_000000000002", "call_000000000003", "call_000000000004"]
        );
        let answers: Vec<Option<&str>> =
            read.iter().filter(|e| e.kind == EventKind::Stop).map(closing_answer_of).collect();
        assert_eq!(
            answers,
            [
                Some("BATCH_SIZE is 1000 now."),
                Some(
                    "BATCH_SIZE is back to 100: 1000 rows exceed the search index's 5 MB bulk request limit."
                )
            ]
        );
    }
}
