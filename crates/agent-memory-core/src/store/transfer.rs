//! Export and import: the store as a JSONL stream, and back.
//!
//! One JSON object per line, `{"type": …, "data": …}`: a header, then projects, sessions and
//! events. Events are keyed by their capture uid, so importing a stream twice (or a stream that
//! overlaps what is stored) adds nothing twice. Private events never leave through an export.
//!
//! Long-term memories travel in the same format (`export --memories`): a header, projects, and
//! one `memory` line per candidate or active memory; `export --all` writes both, a whole backup.
//! A memory is the same memory when it carries the id and creation time it has in this store
//! (an export of this store read back, a backup restored) or else when its scope (project or
//! global) and text are the same, so importing twice adds nothing twice; of two versions of the
//! same memory the one edited last wins. Imported memories keep their tier, kind and
//! importance, and say `imported` as their origin.
//!
//! The header names the store that wrote it (a random identity made with the store). Only this
//! store's own export read back, or a file the person says they trust, keeps its memories as
//! they are and may match them by id; memory in anyone else's file arrives as candidates for
//! review, as a pack's does, because an active global memory is injected into every session.
//!
//! A whole backup (`export --all`) also carries what was made of the events: observations,
//! summaries, distil progress and what promotion and search knew of them ([`backup`]), so a
//! store restored from it answers the same and proposes nothing again.
//!
//! Must not: redact. The importer takes sanitizers from the caller and runs every event and
//! memory text through them, because an imported file is input like any other.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::Ordering;

use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::{
    EVENT_COLUMNS, Result, Store, StoreError, event_from_row, insert_event, upsert_project,
};
use crate::event::Event;
use crate::project::ProjectIdentity;

mod backup;

pub use backup::{
    AnchorRecord, CursorRecord, HitsRecord, ObservationRecord, ProgressRecord, SessionRef,
    SummaryRecord,
};

/// The `format` field of an export header.
pub const FORMAT: &str = "agent-memory-export";
/// The version of the line format this build writes and reads: 2 added what a whole backup
/// carries beyond events and memories; a file of version 1 reads as it always did.
pub const FORMAT_VERSION: u32 = 2;

/// One line of an export.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Line {
    Header(Header),
    Project(ProjectRecord),
    Session(SessionRecord),
    /// Boxed: an event is by far the largest line, and most lines are events anyway.
    Event(Box<EventRecord>),
    Memory(MemoryRecord),
    /// The lines below come only in a whole backup.
    Observation(Box<ObservationRecord>),
    Summary(Box<SummaryRecord>),
    Progress(ProgressRecord),
    Cursor(CursorRecord),
}

/// A long-term memory in an export.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// Its id in the exporting store, for reference only.
    pub id: i64,
    pub tier: super::memories::Tier,
    pub kind: super::memories::Kind,
    pub text: String,
    /// The project key; `None` for global memory.
    pub project: Option<String>,
    pub importance: u8,
    pub status: super::memories::Status,
    pub created_at: i64,
    pub updated_at: i64,
    pub origin: String,
    /// In a whole backup: the observations and summaries it came from (`o12`, `s3`, ids of the
    /// file's own observation and summary lines), the memories it supersedes or was superseded
    /// by (ids of the file's memory lines), what search found of it, and the files it rests on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<HitsRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<AnchorRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub exported_at: i64,
    /// The identity of the store that wrote it; absent in exports of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// A whole backup (`export --all`): everything the store holds but private events.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole: bool,
}

/// Which memories of an import are kept as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportTrust {
    /// This store's own export read back (its header names this store); memory from any other
    /// file arrives as candidates.
    OwnExports,
    /// Every memory as it is: the person vouches for the file (`import --trust`), or it is
    /// this home's own store carried over (`recover`).
    Everything,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProjectRecord {
    pub key: String,
    pub name: String,
    pub root: String,
    pub origin: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionRecord {
    pub agent: String,
    pub source_id: String,
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub transcript_path: Option<String>,
    pub title: Option<String>,
    pub started_at: i64,
    pub last_event_at: i64,
    pub ended_at: Option<i64>,
    /// The branch the session's checkout was on, and what the work pass made of it (see
    /// `store::branches`): work on a branch of its own stays out of other branches' context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_seen: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_commit: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventRecord {
    /// The project key.
    pub project: Option<String>,
    pub content_hash: String,
    pub event: Event,
    /// How often search found it, and when last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<HitsRecord>,
}

/// Which memory lines an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lines {
    /// `export --memories` or a pack: the memories with their projects, and nothing that
    /// names other items of this store.
    MemoriesOnly,
    /// A whole backup: the projects are written already, and each memory says where it came
    /// from.
    Whole,
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportFilter {
    pub agent: Option<String>,
    pub since_ms: Option<i64>,
}

/// Counts of one import or export.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TransferReport {
    pub projects: usize,
    pub sessions: usize,
    pub events: usize,
    /// Events already present (imports only).
    pub already_present: usize,
    pub memories: usize,
    /// Memories already present (imports only).
    pub memories_present: usize,
    /// Memories present in an older version, brought up to the imported edit (imports only).
    pub memories_updated: usize,
    /// Of `memories`, those that arrived as candidates to review, from a file that is not this
    /// store's own export (imports only).
    #[serde(default)]
    pub memories_for_review: usize,
    /// Observations and summaries (whole backups only; on import, those added).
    #[serde(default)]
    pub observations: usize,
    #[serde(default)]
    pub summaries: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("line {line}: {message}; is this an agent-memory export?")]
    BadLine { line: usize, message: String },
    #[error(
        "line {line}: export format version {found} is newer than this agent-memory reads ({FORMAT_VERSION}); upgrade agent-memory"
    )]
    TooNew { line: usize, found: u32 },
    #[error("reading the export failed: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for TransferError {
    fn from(e: rusqlite::Error) -> Self {
        TransferError::Store(StoreError::Sql(e))
    }
}

impl Store {
    /// Writes the store as JSONL to `out`.
    pub fn export(
        &self,
        out: &mut dyn Write,
        filter: &ExportFilter,
        now_ms: i64,
    ) -> Result<TransferReport, TransferError> {
        self.export_events(out, filter, now_ms, false)
    }

    /// The header, projects, sessions and events of an export.
    fn export_events(
        &self,
        out: &mut dyn Write,
        filter: &ExportFilter,
        now_ms: i64,
        whole: bool,
    ) -> Result<TransferReport, TransferError> {
        let mut report = TransferReport::default();
        write_line(out, &Line::Header(self.export_header(now_ms, whole)?))?;
        let conn = self.conn();
        let since = filter.since_ms.unwrap_or(i64::MIN);
        let mut stmt = conn.prepare("SELECT key, name, root, origin FROM projects ORDER BY id")?;
        let projects = stmt.query_map([], project_record)?;
        for project in projects {
            write_line(out, &Line::Project(project?))?;
            report.projects += 1;
        }
        let mut stmt = conn.prepare(
            "SELECT s.agent, s.source_id, p.key, s.cwd, s.transcript_path, s.title, s.started_at,
                    s.last_event_at, s.ended_at, s.branch, s.branch_seen, s.work_branch,
                    s.work_commit
             FROM sessions s LEFT JOIN projects p ON p.id = s.project_id
             WHERE (?1 IS NULL OR s.agent = ?1) AND s.last_event_at >= ?2 ORDER BY s.id",
        )?;
        let sessions = stmt.query_map(params![filter.agent, since], |r| {
            Ok(SessionRecord {
                agent: r.get(0)?,
                source_id: r.get(1)?,
                project: r.get(2)?,
                cwd: r.get(3)?,
                transcript_path: r.get(4)?,
                title: r.get(5)?,
                started_at: r.get(6)?,
                last_event_at: r.get(7)?,
                ended_at: r.get(8)?,
                branch: r.get(9)?,
                branch_seen: r.get(10)?,
                work_branch: r.get(11)?,
                work_commit: r.get(12)?,
            })
        })?;
        for session in sessions {
            write_line(out, &Line::Session(session?))?;
            report.sessions += 1;
        }
        let mut stmt = conn.prepare(&format!(
            "SELECT {EVENT_COLUMNS}, p.key, e.content_hash, h.count, h.last_at
                 FROM events e JOIN sessions s ON s.id = e.session_id
                 LEFT JOIN projects p ON p.id = e.project_id
                 LEFT JOIN hits h ON h.item_kind = 'event' AND h.item_id = e.id
                 WHERE e.sensitivity != 'private' AND (?1 IS NULL OR e.agent = ?1) AND e.at >= ?2
                 ORDER BY e.id"
        ))?;
        let mut rows = stmt.query(params![filter.agent, since])?;
        while let Some(r) = rows.next()? {
            let event = event_from_row(r, 0)?;
            let hits = match (r.get(17)?, r.get(18)?) {
                (Some(count), Some(last_at)) => Some(HitsRecord { count, last_at }),
                _ => None,
            };
            let record = EventRecord { project: r.get(15)?, content_hash: r.get(16)?, event, hits };
            write_line(out, &Line::Event(Box::new(record)))?;
            report.events += 1;
        }
        out.flush()?;
        Ok(report)
    }

    /// A whole backup as one JSONL stream: everything [`Store::export`] writes (every project,
    /// session and event but private ones), what was distilled from them, then the memories
    /// `memories` selects with where each came from.
    pub fn export_all(
        &self,
        out: &mut dyn Write,
        memories: &super::memories::Filter,
        now_ms: i64,
    ) -> Result<TransferReport, TransferError> {
        let mut report = self.export_events(out, &ExportFilter::default(), now_ms, true)?;
        self.distilled_lines(out, &mut report)?;
        // Every project is written already.
        self.memory_lines(out, memories, &mut report, Lines::Whole)?;
        out.flush()?;
        Ok(report)
    }

    /// Writes the long-term memories `filter` selects as JSONL, with the projects they belong
    /// to: `export --memories` (candidates and active ones), or a pack (reviewed ones).
    pub fn export_memories(
        &self,
        out: &mut dyn Write,
        filter: &super::memories::Filter,
        now_ms: i64,
    ) -> Result<TransferReport, TransferError> {
        let mut report = TransferReport::default();
        write_line(out, &Line::Header(self.export_header(now_ms, false)?))?;
        self.memory_lines(out, filter, &mut report, Lines::MemoriesOnly)?;
        out.flush()?;
        Ok(report)
    }

    /// The identity written into this store's exports.
    pub fn identity(&self) -> Result<String, TransferError> {
        Ok(self.conn().query_row("SELECT id FROM store_identity", [], |r| r.get(0))?)
    }

    fn export_header(&self, now_ms: i64, whole: bool) -> Result<Header, TransferError> {
        Ok(Header {
            format: FORMAT.into(),
            version: FORMAT_VERSION,
            exported_at: now_ms,
            store: Some(self.identity()?),
            whole,
        })
    }

    /// The memory lines of an export: in a memories-only export preceded by their projects'
    /// lines, in a whole backup with where each came from.
    fn memory_lines(
        &self,
        out: &mut dyn Write,
        filter: &super::memories::Filter,
        report: &mut TransferReport,
        lines: Lines,
    ) -> Result<(), TransferError> {
        let with_projects = lines == Lines::MemoriesOnly;
        use super::memories;
        let mut list = memories::list(self, filter).map_err(|err| match err {
            memories::MemoryError::Store(err) => TransferError::Store(err),
            other => TransferError::Store(StoreError::Data(other.to_string())),
        })?;
        list.sort_by_key(|m| m.id);
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT key, name, root, origin FROM projects WHERE key = ?1")?;
        let mut written: Vec<String> = Vec::new();
        for memory in list.iter().filter(|_| with_projects) {
            let Some(key) = memory.project.as_ref().filter(|k| !written.contains(k)) else {
                continue;
            };
            let project = stmt.query_row([key], project_record)?;
            write_line(out, &Line::Project(project))?;
            written.push(key.clone());
            report.projects += 1;
        }
        for m in list {
            let whole = lines == Lines::Whole;
            let anchors = if whole {
                self.anchor_records(super::recall::ItemKind::Memory, m.id)?
            } else {
                Vec::new()
            };
            let record = MemoryRecord {
                sources: if whole { m.sources } else { Vec::new() },
                supersedes: m.supersedes.filter(|_| whole),
                superseded_by: m.superseded_by.filter(|_| whole),
                hits: m
                    .last_hit
                    .filter(|_| whole)
                    .map(|last_at| HitsRecord { count: m.hits, last_at }),
                anchors,
                id: m.id,
                tier: m.tier,
                kind: m.kind,
                text: m.text,
                project: m.project,
                importance: m.importance,
                status: m.status,
                created_at: m.created_at,
                updated_at: m.updated_at,
                origin: m.origin,
            };
            write_line(out, &Line::Memory(record))?;
            report.memories += 1;
        }
        Ok(())
    }

    /// Reads a JSONL export into the store in one transaction. Every event passes through
    /// `sanitize` first, every memory's text through `sanitize_text`. Idempotent: events whose
    /// uid is stored already, and memories whose text is stored already in the same scope, are
    /// counted, not added. `trust` says whose memories are kept as they are; the others arrive
    /// as candidates.
    pub fn import(
        &mut self,
        input: &mut dyn BufRead,
        sanitize: &dyn Fn(&mut Event),
        sanitize_text: &dyn Fn(&str) -> String,
        trust: ImportTrust,
    ) -> Result<TransferReport, TransferError> {
        let source = match trust {
            ImportTrust::OwnExports => Source::Unknown,
            ImportTrust::Everything => Source::Trusted,
        };
        self.import_as(input, sanitize, sanitize_text, "imported", source)
    }

    /// Mounts a memory pack (see [`crate::store::memories`]): its reviewed memories are added
    /// with the origin `pack:NAME`, which search and recall show as their provenance. Only
    /// memory and project lines are read; a candidate (L1) in a pack is left out.
    ///
    /// A pack is someone else's file, so unless `trusted` its memories arrive as candidates,
    /// global ones without a project, until someone approves them (`memories::approve_pack`):
    /// nothing in it reaches a briefing unreviewed.
    pub fn import_pack(
        &mut self,
        input: &mut dyn BufRead,
        name: &str,
        trusted: bool,
        sanitize_text: &dyn Fn(&str) -> String,
    ) -> Result<TransferReport, TransferError> {
        // A pack carries memories only; sessions and events in one are passed over unread.
        let origin = format!("pack:{name}");
        let source = if trusted { Source::Trusted } else { Source::Foreign };
        self.import_as(input, &|_| {}, sanitize_text, &origin, source)
    }

    fn import_as(
        &mut self,
        input: &mut dyn BufRead,
        sanitize: &dyn Fn(&mut Event),
        sanitize_text: &dyn Fn(&str) -> String,
        origin: &str,
        source: Source,
    ) -> Result<TransferReport, TransferError> {
        let identity = self.identity()?;
        // A bulk write touches every index page again and again; give it room (64 MiB).
        self.conn.pragma_update(None, "cache_size", -65_536)?;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let last_id: i64 =
            tx.query_row("SELECT coalesce(max(id), 0) FROM events", [], |r| r.get(0))?;
        let before = backup::Before::read(&tx)?;
        // The full-text index is built once at the end, not a segment per event.
        self.fts_deferred.store(true, Ordering::Relaxed);
        let mut importer = Importer {
            tx: &tx,
            projects: HashMap::new(),
            sessions: HashMap::new(),
            origin: origin.to_owned(),
            identity,
            source,
            restored: backup::Restored::default(),
        };
        let read = importer.read_all(input, sanitize, sanitize_text);
        self.fts_deferred.store(false, Ordering::Relaxed);
        let report = read?;
        importer.finish(before)?;
        super::index_events_after(&tx, last_id)?;
        tx.commit()?;
        self.checkpoint()?;
        Ok(report)
    }
}

/// What importing one memory line did.
enum Imported {
    Added,
    Present,
    Updated,
    /// Left out: a memory someone else rejected or forgot is not put up for review here.
    Passed,
}

/// Where an import's memories come from, as far as is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// Not known yet: the header decides (this store's own export, or someone else's file).
    Unknown,
    /// This store's own export, read back.
    Own,
    /// A file the person vouches for.
    Trusted,
    /// Someone else's file.
    Foreign,
}

impl Source {
    /// Whether its memories arrive as candidates to review.
    fn for_review(self) -> bool {
        matches!(self, Source::Unknown | Source::Foreign)
    }
}

/// The state of one import: ids of the projects and sessions seen so far.
struct Importer<'a> {
    tx: &'a rusqlite::Transaction<'a>,
    projects: HashMap<String, i64>,
    sessions: HashMap<(String, String), i64>,
    /// The origin imported memories are given: `imported`, or `pack:NAME` for a pack.
    origin: String,
    /// This store's identity, which its own exports carry in their header.
    identity: String,
    /// Whose memories these are; decides whether they arrive as candidates.
    source: Source,
    /// What the file's own ids stand for here.
    restored: backup::Restored,
}

impl Importer<'_> {
    fn read_all(
        &mut self,
        input: &mut dyn BufRead,
        sanitize: &dyn Fn(&mut Event),
        sanitize_text: &dyn Fn(&str) -> String,
    ) -> Result<TransferReport, TransferError> {
        let mut report = TransferReport::default();
        let mut buf = String::new();
        let mut line_no = 0;
        let now = crate::time::now_ms();
        // What another machine or person wrote is sanitized like a hook's input, field by field,
        // and a time in the future (a wrong clock, a crafted file) is taken as now.
        let clean = |text: &str| sanitize_text(text);
        let clean_opt = |text: Option<String>| text.map(|t| sanitize_text(&t));
        loop {
            buf.clear();
            line_no += 1;
            match read_line_capped(input, &mut buf, MAX_LINE_BYTES) {
                Ok(0) => return Ok(report),
                Ok(_) => {}
                Err(err) if err.kind() == std::io::ErrorKind::InvalidData => {
                    return Err(TransferError::BadLine { line: line_no, message: err.to_string() });
                }
                Err(err) => return Err(err.into()),
            }
            if buf.trim().is_empty() {
                continue;
            }
            let line: Line = serde_json::from_str(&buf)
                .map_err(|e| TransferError::BadLine { line: line_no, message: e.to_string() })?;
            match line {
                Line::Header(h) => {
                    check_header(&h, line_no)?;
                    if h.whole {
                        self.whole_backup();
                    }
                    if self.source == Source::Unknown {
                        let own = h.store.as_deref() == Some(self.identity.as_str());
                        self.source = if own { Source::Own } else { Source::Foreign };
                    }
                }
                Line::Project(p) => {
                    within(line_no, "project key", &p.key, MAX_PATH_BYTES)?;
                    within(line_no, "project root", &p.root, MAX_PATH_BYTES)?;
                    let identity = ProjectIdentity {
                        key: p.key.clone(),
                        root: clean(&p.root).into(),
                        name: crate::text::clip(&clean(&p.name), MAX_NAME_CHARS),
                        origin: clean_opt(p.origin).map(|o| crate::text::clip(&o, MAX_PATH_BYTES)),
                        branch: None,
                    };
                    let id = upsert_project(self.tx, &identity, crate::time::now_ms())?;
                    self.projects.insert(p.key, id);
                    report.projects += 1;
                }
                Line::Session(_)
                | Line::Event(_)
                | Line::Observation(_)
                | Line::Summary(_)
                | Line::Progress(_)
                | Line::Cursor(_)
                    if self.origin.starts_with("pack:") => {}
                Line::Session(mut s) => {
                    within(line_no, "session agent", &s.agent, MAX_NAME_CHARS)?;
                    within(line_no, "session id", &s.source_id, MAX_PATH_BYTES)?;
                    s.cwd = clean_opt(s.cwd);
                    s.transcript_path = clean_opt(s.transcript_path);
                    s.title = clean_opt(s.title).map(|t| crate::text::clip(&t, 500));
                    s.started_at = s.started_at.min(now);
                    s.last_event_at = s.last_event_at.min(now);
                    s.ended_at = s.ended_at.map(|t| t.min(now));
                    self.session(s)?;
                    report.sessions += 1;
                }
                Line::Event(mut record) => {
                    within(line_no, "event agent", &record.event.agent, MAX_NAME_CHARS)?;
                    within(line_no, "event session", &record.event.session, MAX_PATH_BYTES)?;
                    within(line_no, "event uid", &record.event.uid, MAX_PATH_BYTES)?;
                    sanitize(&mut record.event);
                    record.event.at_ms = record.event.at_ms.min(now);
                    match self.event(&record)? {
                        true => report.events += 1,
                        false => report.already_present += 1,
                    }
                    self.event_hits(&record.event.uid, record.hits)?;
                }
                Line::Observation(record) => {
                    within(line_no, "observation session", &record.session.id, MAX_PATH_BYTES)?;
                    report.observations += usize::from(self.observation(&record, &clean)?);
                }
                Line::Summary(record) => {
                    within(line_no, "summary session", &record.session.id, MAX_PATH_BYTES)?;
                    report.summaries += usize::from(self.summary(&record, &clean)?);
                }
                Line::Progress(record) => self.progress(&record)?,
                Line::Cursor(record) => self.cursor(&record)?,
                Line::Memory(record)
                    if self.origin.starts_with("pack:")
                        && record.tier == super::memories::Tier::L1 => {}
                Line::Memory(mut record) => {
                    if record.id < 1 {
                        return Err(TransferError::BadLine {
                            line: line_no,
                            message: format!("memory id {} is not a memory id", record.id),
                        });
                    }
                    if let Some(key) = &record.project {
                        within(line_no, "memory project", key, MAX_PATH_BYTES)?;
                    }
                    record.text = sanitize_text(&record.text);
                    record.origin = crate::text::clip(&clean(&record.origin), MAX_NAME_CHARS);
                    record.created_at = record.created_at.min(now);
                    match self.memory(&record, line_no)? {
                        Imported::Added => {
                            report.memories += 1;
                            report.memories_for_review += usize::from(self.source.for_review());
                        }
                        Imported::Present => report.memories_present += 1,
                        Imported::Updated => report.memories_updated += 1,
                        Imported::Passed => {}
                    }
                }
            }
        }
    }

    fn session(&mut self, s: SessionRecord) -> Result<(), TransferError> {
        let project_id = s.project.as_ref().and_then(|k| self.projects.get(k)).copied();
        let id: i64 = self
            .tx
            .prepare_cached(
                "INSERT INTO sessions (agent, source_id, project_id, cwd, transcript_path, title,
                                       started_at, last_event_at, ended_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (agent, source_id) DO UPDATE SET
                     started_at = min(sessions.started_at, excluded.started_at),
                     last_event_at = max(sessions.last_event_at, excluded.last_event_at),
                     title = coalesce(sessions.title, excluded.title),
                     ended_at = coalesce(sessions.ended_at, excluded.ended_at),
                     project_id = coalesce(sessions.project_id, excluded.project_id)
                 RETURNING id",
            )?
            .query_row(
                params![
                    s.agent,
                    s.source_id,
                    project_id,
                    s.cwd,
                    s.transcript_path,
                    s.title,
                    s.started_at,
                    s.last_event_at,
                    s.ended_at
                ],
                |r| r.get(0),
            )?;
        self.sessions.insert((s.agent, s.source_id), id);
        Ok(())
    }

    /// Stores one memory: a memory of this store (its id and creation time) is brought up to
    /// the imported version when that was edited later; another is added unless the same text
    /// is stored already in the same scope.
    fn memory(&mut self, record: &MemoryRecord, line: usize) -> Result<Imported, TransferError> {
        use super::memories::{NewMemory, Status, Tier, check_text};
        let bad = |message: String| TransferError::BadLine { line, message };
        let set_aside =
            matches!(record.status, Status::Rejected | Status::Forgotten | Status::Superseded);
        if set_aside && self.source.for_review() {
            return Ok(Imported::Passed);
        }
        let text = check_text(&record.text).map_err(|e| bad(e.to_string()))?;
        // Ids of someone else's store mean nothing here (and a crafted file could name any id
        // to rewrite that memory): only this store's own export, or a backup the person
        // vouches for, is matched by id.
        let by_id = matches!(self.source, Source::Own | Source::Trusted);
        if by_id && !self.origin.starts_with("pack:") {
            let same: Option<i64> = self
                .tx
                .query_row(
                    "SELECT updated_at FROM memories WHERE id = ?1 AND created_at = ?2",
                    params![record.id, record.created_at],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(updated_at) = same {
                self.memory_here(record.id, record.id, None, None);
                if record.updated_at <= updated_at {
                    return Ok(Imported::Present);
                }
                self.tx
                    .prepare_cached(
                        "UPDATE memories SET text = ?2, kind = ?3, importance = ?4, tier = ?5,
                                             status = ?6, updated_at = ?7
                         WHERE id = ?1",
                    )?
                    .execute(params![
                        record.id,
                        text,
                        record.kind.as_str(),
                        record.importance,
                        record.tier.as_str(),
                        record.status.as_str(),
                        record.updated_at.min(crate::time::now_ms()),
                    ])?;
                return Ok(Imported::Updated);
            }
        }
        let project_id = match (&record.project, record.tier) {
            (_, Tier::L3) | (None, _) => None,
            (Some(key), _) => match self.projects.get(key) {
                Some(id) => Some(*id),
                None => {
                    let id: Option<i64> = self
                        .tx
                        .query_row("SELECT id FROM projects WHERE key = ?1", [key], |r| r.get(0))
                        .optional()?;
                    Some(id.ok_or_else(|| bad(format!("memory of unknown project {key}")))?)
                }
            },
        };
        let present: Option<i64> = self
            .tx
            .query_row(
                "SELECT id FROM memories WHERE project_id IS ?1 AND text = ?2
                 AND status IN ('candidate', 'active', 'rejected', 'forgotten') LIMIT 1",
                params![project_id, text],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = present {
            self.memory_here(record.id, id, None, None);
            return Ok(Imported::Present);
        }
        // A whole backup restored keeps where each memory came from; any other file says only
        // that it was imported.
        let restoring = self.restoring();
        let new = NewMemory {
            tier: if self.source.for_review() { Tier::L1 } else { record.tier },
            kind: record.kind,
            text,
            project_id,
            importance: record.importance,
            // Source ids name the file's own observation and summary lines: those it carried
            // are the same items here under other ids.
            sources: record.sources.iter().filter_map(|s| self.item_here(s)).collect(),
            origin: if restoring { record.origin.clone() } else { self.origin.clone() },
            supersedes: None,
        };
        let id =
            super::memories::insert_row(self.tx, &new, record.created_at, crate::time::now_ms())
                .map_err(|e| match e {
                    super::memories::MemoryError::Store(e) => TransferError::Store(e),
                    other => bad(other.to_string()),
                })?;
        if set_aside {
            // A backup restored keeps what was rejected, replaced or forgotten out of every briefing.
            self.tx.execute(
                "UPDATE memories SET status = ?2 WHERE id = ?1",
                params![id, record.status.as_str()],
            )?;
        }
        // Links name memories of the file; only a restore keeps them (a candidate from anyone
        // else's file retires nothing until someone approves it as a successor).
        match restoring {
            true => self.memory_here(record.id, id, record.supersedes, record.superseded_by),
            false => self.memory_here(record.id, id, None, None),
        }
        self.memory_state(id, project_id, record.hits, &record.anchors)?;
        Ok(Imported::Added)
    }

    /// Stores one event; false when its uid was stored already.
    fn event(&mut self, record: &EventRecord) -> Result<bool, TransferError> {
        let event = &record.event;
        let project_id = match record.project.as_ref().and_then(|k| self.projects.get(k)) {
            Some(id) => *id,
            None => {
                // An event whose project line is missing still needs a project.
                let identity = crate::project::resolve(
                    std::path::Path::new(event.cwd.as_deref().unwrap_or("/")),
                    &[],
                );
                let id = upsert_project(self.tx, &identity, event.at_ms)?;
                if let Some(key) = &record.project {
                    self.projects.insert(key.clone(), id);
                }
                id
            }
        };
        let session_key = (event.agent.clone(), event.session.clone());
        let session_id = match self.sessions.get(&session_key) {
            Some(id) => *id,
            None => {
                let id = super::upsert_session(self.tx, event, project_id, None)?;
                self.sessions.insert(session_key, id);
                id
            }
        };
        Ok(insert_event(self.tx, event, &record.content_hash, session_id, project_id, true)?
            .is_some())
    }
}

/// The longest key, path or id an import takes: a path the system could open, and more than
/// any key or id this program makes.
const MAX_PATH_BYTES: usize = 4096;
/// The longest name (of an agent, a project) an import takes, or keeps: longer ones are cut.
const MAX_NAME_CHARS: usize = 200;

/// Refuses a field longer than `max` bytes: no export writes one.
fn within(line: usize, field: &str, value: &str, max: usize) -> Result<(), TransferError> {
    if value.len() <= max {
        return Ok(());
    }
    Err(TransferError::BadLine {
        line,
        message: format!(
            "the {field} is {} bytes, more than the {max} any export writes",
            value.len()
        ),
    })
}

/// The longest line an import reads: far above any event capture keeps, and small enough that
/// a corrupt or hostile file cannot make an import hold gigabytes.
const MAX_LINE_BYTES: usize = 64 << 20;

/// Reads one line into `buf`, up to `max` bytes; a longer line is `InvalidData`, read no
/// further than the cap. Returns the bytes read, 0 at the end.
fn read_line_capped(
    input: &mut dyn BufRead,
    buf: &mut String,
    max: usize,
) -> std::io::Result<usize> {
    let mut bytes = Vec::new();
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            break;
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..=at], true),
            None => (available, false),
        };
        if bytes.len() + chunk.len() > max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "the line is longer than {} MiB; no export writes such a line, so the file is damaged or not an export",
                    max >> 20
                ),
            ));
        }
        bytes.extend_from_slice(chunk);
        let used = chunk.len();
        input.consume(used);
        if done {
            break;
        }
    }
    let read = bytes.len();
    *buf = String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "the line is not UTF-8 text")
    })?;
    Ok(read)
}

/// A project line from a row of `SELECT key, name, root, origin FROM projects`.
fn project_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<ProjectRecord> {
    Ok(ProjectRecord { key: r.get(0)?, name: r.get(1)?, root: r.get(2)?, origin: r.get(3)? })
}

fn check_header(header: &Header, line: usize) -> Result<(), TransferError> {
    if header.format != FORMAT {
        return Err(TransferError::BadLine {
            line,
            message: format!("format is {:?}", header.format),
        });
    }
    if header.version > FORMAT_VERSION {
        return Err(TransferError::TooNew { line, found: header.version });
    }
    Ok(())
}

fn write_line(out: &mut dyn Write, line: &Line) -> Result<(), TransferError> {
    serde_json::to_writer(&mut *out, line).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(())
}
