//! What every agent's history reader shares: where an agent keeps the sessions it already
//! wrote, and the shape in which a reader hands each of their records back, as the hook payload
//! the agent would have sent for it.
//!
//! An agent keeps its history either as one JSON-lines file per session ([`Layout::Files`]:
//! Claude Code, Codex, Gemini CLI, Copilot CLI) or as one SQLite database of every session
//! ([`Layout::Database`]: OpenCode, Hermes). Its reader, in `adapter/<agent>/history.rs`, knows
//! the format; `crate::history` finds the files, streams them, and stores what the readers
//! make through the same sanitize → adapter → finish steps as any hook input. A record's
//! [`Recorded::source_id`] is what keeps it from being stored twice.
//!
//! Must not: open files (a line reader is handed lines, a database reader an open read-only
//! connection), or fail on a record: one it cannot read is counted, never an error.

use serde_json::Value;

use super::ConfigRoot;

/// Where an agent keeps its history, and its reader.
#[derive(Debug, Clone, Copy)]
pub struct HistorySource {
    /// The folder the layout's paths are relative to.
    pub root: ConfigRoot,
    pub layout: Layout,
}

/// How an agent lays its sessions out on disk.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// One JSON-lines file per session: the files under `dir` of the root, exactly `depth`
    /// folders down (0: in `dir` itself), whose names start with `prefix` and end with `suffix`.
    Files {
        dir: &'static str,
        depth: u8,
        prefix: &'static str,
        suffix: &'static str,
        /// A file of the root the reader needs beside each session (Gemini CLI's map of
        /// projects), read once and handed to [`Layout::Files::open`].
        index: Option<&'static str>,
        /// A reader for one session's file, given its path and the index.
        open: fn(&FileContext<'_>) -> Box<dyn SessionReader>,
    },
    /// One SQLite database of every session, at `file` of the root.
    Database {
        file: &'static str,
        /// Every session the database holds, oldest first.
        sessions: fn(&rusqlite::Connection) -> rusqlite::Result<Vec<DbSession>>,
        /// One session's records, in order.
        read: fn(&rusqlite::Connection, &DbSession, &mut Vec<Recorded>) -> rusqlite::Result<Tally>,
    },
}

/// What a line reader is told of the file it reads.
#[derive(Debug, Clone, Copy)]
pub struct FileContext<'a> {
    /// The session file, as the agent's hooks name it in `transcript_path`.
    pub path: &'a str,
    /// The layout's index file, parsed, when it has one and it could be read.
    pub index: Option<&'a Value>,
}

/// Reads one session's file, a line at a time, in order; it keeps what it needs between lines
/// (a tool call waits for its result, a turn's answer for the turn's end).
pub trait SessionReader {
    /// Reads one whole line (without its line break), adding the records it completes to `out`.
    fn line(&mut self, line: &[u8], out: &mut Vec<Recorded>) -> LineRead;
    /// The file ended: adds what was held back.
    fn finish(&mut self, out: &mut Vec<Recorded>);
    /// What the lines so far say of the session.
    fn head(&self) -> &SessionHead;
}

/// What one line was to a reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// A record the reader knows, whether or not it made one.
    Known,
    /// Valid JSON of a type the reader does not know: skipped.
    Unknown,
    /// Not JSON, or not in the shape its type promises: skipped and counted.
    Malformed,
}

/// What is known of one session before (or without) reading it whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionHead {
    /// The agent's own session id, as its hooks send it.
    pub session: Option<String>,
    pub cwd: Option<String>,
    /// When its first record was written, in Unix milliseconds.
    pub started_ms: Option<i64>,
}

/// One session of a [`Layout::Database`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbSession {
    /// The database's key of the session, handed back to the reader.
    pub key: String,
    pub head: SessionHead,
    /// When it last changed, in Unix milliseconds.
    pub updated_ms: i64,
    /// How many records (messages) it holds.
    pub records: u64,
}

/// One record of an agent's history, as the hook payload the agent would have sent for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The hook event, in the agent's spelling, the payload is read as.
    pub event_name: &'static str,
    /// The payload, with the session id, cwd and transcript path every hook payload carries.
    pub payload: Value,
    /// When it happened, in Unix milliseconds.
    pub at_ms: i64,
    /// The record's own id, unique within its session and the same at every reading: what
    /// keeps it from being stored twice.
    pub source_id: String,
}

/// What a database reader made of one session's rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Rows of a kind the reader does not know, or that it could not read.
    pub skipped: u64,
}

/// An ISO 8601 instant (`2026-01-01T00:00:00.000Z`) as Unix milliseconds.
pub fn iso_ms(value: &Value) -> Option<i64> {
    super::parse_iso_ms(value.as_str()?)
}

/// Each record's event name, record id and time within its 100 seconds: what a reader's tests
/// compare.
#[cfg(test)]
pub(crate) fn shape(records: &[Recorded]) -> Vec<(&str, &str, i64)> {
    records.iter().map(|r| (r.event_name, r.source_id.as_str(), r.at_ms % 100_000)).collect()
}

/// What the adapter stores of a hook payload of `agent`, when it stores anything: how a
/// reader's tests hold what it makes against what the hooks sent.
#[cfg(test)]
pub(crate) fn normalized(
    agent: &str,
    event: &str,
    payload: &Value,
    at_ms: i64,
) -> Option<crate::event::Event> {
    let ctx =
        crate::event::CaptureContext { uid: "u", agent, event_name: event, received_at_ms: at_ms };
    match super::normalize(&ctx, payload) {
        Ok(super::Normalized::Event(event)) => Some(*event),
        _ => None,
    }
}
