//! Day zero: the sessions a person's agents wrote before agent-memory was there, found where
//! each agent keeps them and stored as the events its hooks would have captured.
//!
//! [`find`] lists, for each agent whose registry row says where its history lives, the
//! sessions on disk (a file each, or a database's sessions) without reading them; [`survey`]
//! reads the head of each to say what is there and how much of it the store already holds;
//! [`import`] streams each session through its agent's reader (`adapter/<agent>/history.rs`),
//! which hands back the hook payloads the agent would have sent, and stores each through the
//! same sanitize → adapter → finish → filter steps as any hook input
//! ([`capture::prepare_value`]), dated at the source, in the project its working directory
//! resolves to, as live capture does.
//!
//! Nothing is stored twice: a record's event uid is `<agent>-history-<session>-<record id>`;
//! what a session holds from the moment the hooks first captured it (less a few seconds: the
//! agent stamps its own record first) is theirs; and a source read whole is not read again
//! until its size or time changes (`history_read`, written in the transaction that stores the
//! source's last events), so a second import reads nothing and a killed one starts again
//! where it stopped.
//!
//! Each agent's sources are read and prepared on a thread of its own, handed over a bounded
//! channel in parcels, while the calling thread writes them in batches of `BATCH` events,
//! each indexed once (`Store::write_many`). A written batch goes back to the reading thread to
//! be freed there: freeing memory another thread allocated takes the allocator's lock that
//! thread is using, which cost an import a seventh of its time.
//!
//! Must not: read a whole file into memory (lines are streamed, one longer than [`MAX_LINE`]
//! is skipped), write to an agent's files (databases are opened read-only), or stop at a bad
//! record or source: each is counted, and a source that cannot be read is reported.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};

use serde::Serialize;
use serde_json::Value;

use crate::adapter::history::{DbSession, FileContext, Layout, LineRead, Recorded, SessionHead};
use crate::adapter::{AGENTS, AgentSpec};
use crate::capture::{self, Stage};
use crate::config::Config;
use crate::event::Event;
use crate::install::UserDirs;
use crate::project::ProjectIdentity;
use crate::store::transcripts::ReadMark;
use crate::store::{Bulk, Columns, Store, StoreError};
use crate::time;

/// The longest line of a session file that is read; a longer one (a huge tool output) is
/// skipped and counted, so one file never holds more than this in memory.
pub const MAX_LINE: usize = 32 * 1024 * 1024;
/// What [`survey`] reads of a session file to learn its session, directory and start.
const HEAD_BYTES: u64 = 256 * 1024;
/// Events written to the store in one transaction: small enough that a hook waiting to write
/// meanwhile waits a fraction of its deadline.
const BATCH: usize = 2_000;
/// Prepared events handed from the reading side to the writing side at a time, at most.
const PARCEL: usize = 250;
/// A parcel is handed on sooner once it holds about this many bytes, so that what the reader
/// prepares ahead stays bounded when events are large (long tool outputs): at most
/// `AHEAD * BATCH / PARCEL` parcels wait, about 64 MiB.
const PARCEL_BYTES: usize = 1024 * 1024;
/// Batches the reading side may prepare ahead of the writing side: the writer stalls now and
/// then (a commit, a copy of the log), and the reader should not stall with it.
const AHEAD: usize = 8;
/// Batches written between two copies of the write-ahead log into the database: about 30
/// MB of log at most.
const LOG_BATCHES: u64 = 16;
/// Written batches that may wait for the reading thread to free them; past that, or once the
/// reader has finished, the writer frees a batch itself.
const SPENT: usize = 2;
/// How long before the hooks first captured a session a record of its history is still taken
/// for theirs: an agent stamps its own record of a prompt a moment before the hook runs.
const CAPTURED_SLACK_MS: i64 = 5_000;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One agent's history on this machine.
#[derive(Debug)]
pub struct Found {
    pub agent: &'static AgentSpec,
    /// The folder it lives under.
    pub root: PathBuf,
    pub sources: Vec<Source>,
    /// Why part of it could not be listed.
    pub errors: Vec<String>,
}

/// One session of an agent's history, before it is read.
#[derive(Debug, Clone)]
pub struct Source {
    pub place: Place,
    /// Bytes of a file; records of a database's session.
    pub size: u64,
    /// When it last changed, in Unix milliseconds.
    pub modified_ms: i64,
}

#[derive(Debug, Clone)]
pub enum Place {
    File(PathBuf),
    Database { file: PathBuf, session: DbSession },
}

impl Source {
    /// Its key in the store's record of what was read.
    fn key(&self) -> String {
        match &self.place {
            Place::File(path) => path.display().to_string(),
            Place::Database { file, session } => format!("{}#{}", file.display(), session.key),
        }
    }
}

/// Every agent's history under `dirs`; `agents` narrows it to those agents (all when empty).
pub fn find(dirs: &UserDirs, agents: &[&'static AgentSpec]) -> Vec<Found> {
    let mut found = Vec::new();
    for agent in AGENTS {
        let Some(source) = agent.history else { continue };
        if !agents.is_empty() && !agents.iter().any(|a| a.name == agent.name) {
            continue;
        }
        let root = dirs.root(&source.root);
        let mut this = Found { agent, root: root.clone(), sources: Vec::new(), errors: Vec::new() };
        match source.layout {
            Layout::Files { dir, depth, prefix, suffix, .. } => {
                let mut files = Vec::new();
                walk(&root.join(dir), depth, &mut |path, meta| {
                    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                    if meta.is_file() && name.starts_with(prefix) && name.ends_with(suffix) {
                        files.push(Source {
                            place: Place::File(path.to_owned()),
                            size: meta.len(),
                            modified_ms: modified_ms(meta),
                        });
                    }
                });
                files.sort_by_key(|a| (a.modified_ms, a.key()));
                this.sources = files;
            }
            Layout::Database { file, sessions, .. } => {
                let path = root.join(file);
                if path.is_file() {
                    match open_database(&path).and_then(|conn| sessions(&conn)) {
                        Ok(list) => {
                            this.sources = list
                                .into_iter()
                                .map(|session| Source {
                                    size: session.records,
                                    modified_ms: session.updated_ms,
                                    place: Place::Database { file: path.clone(), session },
                                })
                                .collect();
                        }
                        Err(err) => this.errors.push(format!("{}: {err}", path.display())),
                    }
                }
            }
        }
        found.push(this);
    }
    found
}

/// Calls `each` with every entry exactly `depth` folders below `dir` (links not followed).
fn walk(dir: &Path, depth: u8, each: &mut dyn FnMut(&Path, &std::fs::Metadata)) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        let path = entry.path();
        if depth == 0 {
            each(&path, &meta);
        } else if meta.is_dir() {
            walk(&path, depth - 1, each);
        }
    }
}

fn modified_ms(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

/// An agent's database, read-only: agent-memory never writes to it, and the agent may be
/// writing to it now (its write-ahead log is read as SQLite reads it).
fn open_database(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = rusqlite::Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

/// What one agent's history holds, as `history` lists it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub agent: String,
    pub display: String,
    /// Where it lives.
    pub root: String,
    pub sessions: u64,
    pub bytes: u64,
    /// The first session's start and the last change of any, in Unix milliseconds.
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    /// Distinct working directories.
    pub projects: u64,
    /// Sessions the store already holds (captured by the hooks, or imported before).
    pub in_store: u64,
    pub errors: Vec<String>,
}

/// What each agent's history holds, and how much of it the store has.
pub fn survey(store: &Store, found: &[Found]) -> Result<Vec<Summary>, HistoryError> {
    let mut out = Vec::new();
    for this in found {
        let Some(source) = this.agent.history else { continue };
        let known = store.session_source_ids(this.agent.name)?;
        let mut summary = Summary {
            agent: this.agent.name.to_owned(),
            display: this.agent.display.to_owned(),
            root: this.root.display().to_string(),
            errors: this.errors.clone(),
            ..Summary::default()
        };
        let index = read_index(&source.layout, &this.root);
        let mut projects = BTreeSet::new();
        for item in &this.sources {
            let head = match (&item.place, source.layout) {
                (Place::File(path), Layout::Files { open, .. }) => peek(path, open, index.as_ref()),
                (Place::Database { session, .. }, _) => session.head.clone(),
                _ => SessionHead::default(),
            };
            summary.sessions += 1;
            summary.bytes += match &item.place {
                Place::File(_) => item.size,
                Place::Database { .. } => 0,
            };
            let first = head.started_ms.unwrap_or(item.modified_ms);
            summary.first_ms = Some(summary.first_ms.map_or(first, |f| f.min(first)));
            summary.last_ms =
                Some(summary.last_ms.map_or(item.modified_ms, |l| l.max(item.modified_ms)));
            if let Some(cwd) = head.cwd {
                projects.insert(cwd);
            }
            if head.session.is_some_and(|s| known.contains(&s)) {
                summary.in_store += 1;
            }
        }
        if let Layout::Database { file, .. } = source.layout {
            summary.bytes = std::fs::metadata(this.root.join(file)).map_or(0, |m| m.len());
        }
        summary.projects = projects.len() as u64;
        out.push(summary);
    }
    Ok(out)
}

/// The layout's index file, parsed, when it has one that can be read.
fn read_index(layout: &Layout, root: &Path) -> Option<Value> {
    let Layout::Files { index: Some(name), .. } = layout else { return None };
    let bytes = std::fs::read(root.join(name)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// What the first lines of a session file say of it.
fn peek(
    path: &Path,
    open: fn(&FileContext<'_>) -> Box<dyn crate::adapter::history::SessionReader>,
    index: Option<&Value>,
) -> SessionHead {
    let name = path.display().to_string();
    let mut reader = open(&FileContext { path: &name, index });
    let Ok(file) = File::open(path) else { return SessionHead::default() };
    let mut lines = BufReader::new(std::io::Read::take(file, HEAD_BYTES));
    let mut line = Vec::new();
    let mut out = Vec::new();
    while let Ok(Some(end)) = next_line(&mut lines, &mut line) {
        if !end.fits {
            continue;
        }
        reader.line(&line, &mut out);
        out.clear();
        let head = reader.head();
        if head.session.is_some() && head.cwd.is_some() && head.started_ms.is_some() {
            break;
        }
    }
    reader.head().clone()
}

/// One line as [`next_line`] read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LineEnd {
    /// It fits in [`MAX_LINE`]; when not, the line buffer holds nothing of it.
    fits: bool,
    /// It ends with a line break (the last line of a file being written may not).
    broken: bool,
    /// Its bytes, with the break.
    bytes: u64,
}

/// Reads the next line into `line` (without its break); `None` at the end.
fn next_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<Option<LineEnd>> {
    line.clear();
    let mut end = LineEnd { fits: true, broken: false, bytes: 0 };
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok((end.bytes > 0).then_some(end));
        }
        let (part, used) = match buf.iter().position(|b| *b == b'\n') {
            Some(at) => (&buf[..at], at + 1),
            None => (buf, buf.len()),
        };
        end.broken = used > part.len();
        if end.fits {
            if line.len() + part.len() > MAX_LINE {
                end.fits = false;
                line.clear();
            } else {
                line.extend_from_slice(part);
            }
        }
        end.bytes += used as u64;
        input.consume(used);
        if end.broken {
            return Ok(Some(end));
        }
    }
}

/// Which part of the history to import.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only what happened at or after this time (Unix milliseconds).
    pub since_ms: Option<i64>,
    /// Only sessions whose working directory is this directory or inside it.
    pub project: Option<PathBuf>,
}

/// What importing one agent's history did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Imported {
    pub agent: String,
    /// Sessions read.
    pub sessions: u64,
    /// Sessions not read: unchanged since they were read whole.
    pub unchanged: u64,
    /// Events stored.
    pub events: u64,
    /// Records already stored: by an earlier import, or captured by the hooks.
    pub already: u64,
    /// Records not stored: outside `--since` or `--project`, or what capture drops (noise,
    /// events no hook stores).
    pub skipped: u64,
    /// Lines or rows that could not be read (cut, malformed, too long).
    pub malformed: u64,
    /// Lines of a type the reader does not know.
    pub unknown: u64,
    /// Sources that could not be read, with why.
    pub errors: Vec<String>,
}

/// Stores what the agents' histories in `found` hold, within `options`. `progress` is called
/// once per source (session) handled.
///
/// Each agent's sources are read, and their records prepared as hook input, on a thread of
/// their own while this one writes what is ready: reading and preparing cost about as much as
/// writing, and a machine has two cores at least.
pub fn import(
    store: &mut Store,
    config: &Config,
    found: &[Found],
    options: &Options,
    progress: &mut dyn FnMut(),
) -> Result<Vec<Imported>, HistoryError> {
    let roots = store.registered_roots()?;
    let mut projects = Projects { roots, known: HashMap::new() };
    let mut out = Vec::new();
    for this in found {
        let Some(history) = this.agent.history else { continue };
        let mut report = Imported {
            agent: this.agent.name.to_owned(),
            errors: this.errors.clone(),
            ..Imported::default()
        };
        // What is unchanged since it was read whole is not read again.
        let mut wanted = Vec::new();
        for source in &this.sources {
            if options.since_ms.is_some_and(|since| source.modified_ms < since) {
                progress();
            } else if store.history_read(&source.key())? == Some((source.size, source.modified_ms))
            {
                report.unchanged += 1;
                progress();
            } else {
                wanted.push(source);
            }
        }
        let agent = this.agent.name;
        let reading = Reading { agent, root: &this.root, layout: history.layout, options, config };
        let copier = store.log_copier()?;
        // The reader owns the way back: once it ends, the writer frees what it wrote.
        let (spent_send, spent) = std::sync::mpsc::sync_channel(SPENT);
        let mut sink = Sink {
            store: &mut *store,
            agent: this.agent.name,
            projects: &mut projects,
            items: Vec::new(),
            marks: Vec::new(),
            cutoffs: HashMap::new(),
            report: &mut report,
            batches: 0,
            uid_prefix: uid_prefix(this.agent.name),
            log_copy: None,
            spent: spent_send,
        };
        // Not a scoped thread: should the writing side panic, the scope would wait for a
        // copier that waits to be asked for more.
        let copying = copier.map(|copier| {
            let (wake, woken) = std::sync::mpsc::sync_channel(1);
            let done = Arc::new(AtomicBool::new(false));
            sink.log_copy = Some(LogCopy { wake, done: Arc::clone(&done), asked: false });
            std::thread::spawn(move || {
                for () in woken {
                    // A copy that cannot go ahead is left for the writer's own.
                    if let Err(err) = copier.copy_log_back() {
                        tracing::debug!(%err, "copying the log back beside a history import");
                    }
                    done.store(true, Ordering::Release);
                }
            })
        });
        let counts = std::thread::scope(|scope| {
            let (send, receive) = std::sync::mpsc::sync_channel(AHEAD * BATCH / PARCEL);
            let reader = scope.spawn(move || reading.all(&wanted, &send, &spent));
            let written = receive.iter().flatten().try_for_each(|read| sink.take(read, progress));
            // The log's copier stops once no more can be asked of it.
            sink.log_copy = None;
            // A failed write stops the reading: it finds no one to send to.
            drop(receive);
            let counts = reader.join();
            written.and_then(|()| sink.flush()).map(|()| counts)
        })?;
        if let Some(copying) = copying {
            // It ends with the copy under way, if any: nothing is asked of it any more.
            let _ = copying.join();
        }
        // A reader that panicked read nothing it did not send; what it did not mark read is
        // read again next time.
        let counts = counts.unwrap_or_else(|_| {
            report.errors.push(format!(
                "reading {}'s history stopped unexpectedly; run the import again",
                this.agent.display
            ));
            Counts::default()
        });
        report.skipped += counts.skipped;
        report.malformed += counts.malformed;
        report.unknown += counts.unknown;
        out.push(report);
    }
    Ok(out)
}

/// What the reading side hands the writing side, in order.
enum Read {
    /// An event ready for the store, its uid given (which names the record it came from).
    Event { event: Box<Event>, hash: String, columns: Columns },
    /// A source read whole; everything it gave was sent before this.
    Done(ReadMark),
    /// A source that could not be read (or not to the end).
    Failed(String),
}

/// What the reading side counted.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    skipped: u64,
    malformed: u64,
    unknown: u64,
}

/// The reading side of one agent's import: its sources streamed through the agent's reader,
/// each record prepared as the hook would prepare it.
#[derive(Clone, Copy)]
struct Reading<'a> {
    agent: &'static str,
    root: &'a Path,
    layout: Layout,
    options: &'a Options,
    config: &'a Config,
}

impl Reading<'_> {
    fn all(
        self,
        sources: &[&Source],
        send: &SyncSender<Vec<Read>>,
        spent: &Receiver<Vec<Bulk>>,
    ) -> Counts {
        let mut prep = Preparer {
            reading: self,
            send,
            spent,
            parcel: Vec::with_capacity(PARCEL),
            parcel_bytes: 0,
            counts: Counts::default(),
            gone: false,
        };
        let index = read_index(&self.layout, self.root);
        let mut database = None;
        for source in sources {
            let key = source.key();
            let whole = match (&source.place, self.layout) {
                (Place::File(path), Layout::Files { open, .. }) => {
                    read_file(path, open, index.as_ref(), &mut prep)
                }
                (Place::Database { file, session }, Layout::Database { read, .. }) => {
                    if database.is_none() {
                        database = Some(open_database(file).map_err(|e| e.to_string()));
                    }
                    let mut records = Vec::new();
                    match database.as_ref().map(|db| match db {
                        Ok(conn) => read(conn, session, &mut records).map_err(|e| e.to_string()),
                        Err(err) => Err(err.clone()),
                    }) {
                        Some(Ok(tally)) => {
                            prep.counts.malformed += tally.skipped;
                            prep.take(records);
                            Ok(None)
                        }
                        Some(Err(err)) => Err(err),
                        None => Ok(None),
                    }
                }
                _ => Ok(None),
            };
            let read = match whole {
                Ok(bytes) => {
                    let transcript = match (&source.place, bytes) {
                        (Place::File(path), Some(bytes)) => {
                            Some((path.display().to_string(), bytes))
                        }
                        _ => None,
                    };
                    let (size, modified_ms) = (source.size, source.modified_ms);
                    Read::Done(ReadMark { source: key, size, modified_ms, transcript })
                }
                Err(err) => Read::Failed(format!("{key}: {err}")),
            };
            prep.push(read);
            prep.send_parcel();
            if prep.gone {
                break;
            }
        }
        prep.counts
    }
}

/// Prepares one source's records as hook input and sends them on.
struct Preparer<'a> {
    reading: Reading<'a>,
    send: &'a SyncSender<Vec<Read>>,
    /// Batches the writing side has written, handed back to be freed on this thread, which
    /// allocated them.
    spent: &'a Receiver<Vec<Bulk>>,
    /// What waits to be sent, a parcel at a time.
    parcel: Vec<Read>,
    /// About how many bytes the parcel holds.
    parcel_bytes: usize,
    counts: Counts,
    /// The writing side stopped.
    gone: bool,
}

impl Preparer<'_> {
    fn take(&mut self, records: Vec<Recorded>) {
        for record in records {
            if self.gone {
                return;
            }
            self.one(record);
        }
    }

    fn push(&mut self, read: Read) {
        if let Read::Event { event, columns, .. } = &read {
            self.parcel_bytes += event.summary.len() + event.body.len() + columns.bytes();
        }
        self.parcel.push(read);
        if self.parcel.len() >= PARCEL || self.parcel_bytes >= PARCEL_BYTES {
            self.send_parcel();
        }
    }

    fn send_parcel(&mut self) {
        let parcel = std::mem::replace(&mut self.parcel, Vec::with_capacity(PARCEL));
        self.parcel_bytes = 0;
        self.spent.try_iter().for_each(drop);
        if !parcel.is_empty() && self.send.send(parcel).is_err() {
            self.gone = true;
        }
    }

    fn one(&mut self, record: Recorded) {
        let Recorded { event_name, payload, at_ms, source_id } = record;
        let Reading { agent, options, config, .. } = self.reading;
        if options.since_ms.is_some_and(|since| at_ms < since) {
            self.counts.skipped += 1;
            return;
        }
        // The uid names the session, which each agent spells its own way: the adapter reads
        // it, and the uid is given once it has.
        match capture::prepare_value(agent, event_name, "", at_ms, payload, None, config) {
            Stage::Ready { mut event, hash }
                if within(event.cwd.as_deref(), options.project.as_deref()) =>
            {
                // Worked out here (as the uid below) rather than by the writing side, which is
                // the busier.
                let columns = Columns::of(&event);
                // The payload's text is in `columns` now; its tree of values is freed here,
                // where it was built, rather than by the writer, for whom every free of a
                // block allocated on this thread costs a lock.
                event.payload = serde_json::Value::Null;
                event.uid = history_uid(agent, &event.session, &source_id);
                self.push(Read::Event { event, hash, columns });
            }
            Stage::Invalid(problem) => {
                tracing::debug!(%problem, %source_id, "a record of an agent's history");
                self.counts.malformed += 1;
            }
            Stage::Ready { .. } | Stage::Skipped(_) | Stage::Pending(_) | Stage::Filtered(_) => {
                self.counts.skipped += 1;
            }
        }
    }
}

/// Streams one session file through its reader into `prep`; the bytes of whole lines read.
fn read_file(
    path: &Path,
    open: fn(&FileContext<'_>) -> Box<dyn crate::adapter::history::SessionReader>,
    index: Option<&Value>,
    prep: &mut Preparer<'_>,
) -> Result<Option<u64>, String> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| e.to_string())?;
    let mut input = BufReader::with_capacity(256 * 1024, file);
    let mut reader = open(&FileContext { path: &name, index });
    let mut line = Vec::new();
    let mut records = Vec::new();
    let mut whole_bytes = 0u64;
    while let Some(end) = next_line(&mut input, &mut line).map_err(|e| e.to_string())? {
        // Only whole lines count as read: the agent may be writing the last one now.
        if end.broken {
            whole_bytes += end.bytes;
        }
        if !end.fits {
            prep.counts.malformed += 1;
            continue;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match reader.line(&line, &mut records) {
            LineRead::Known => {}
            LineRead::Unknown => prep.counts.unknown += 1,
            LineRead::Malformed => prep.counts.malformed += 1,
        }
        if !records.is_empty() {
            prep.take(std::mem::take(&mut records));
        }
        if prep.gone {
            return Err("the import stopped".to_owned());
        }
    }
    reader.finish(&mut records);
    prep.take(records);
    Ok(Some(whole_bytes))
}

/// The project each working directory resolves to, resolved once per directory.
struct Projects {
    roots: Vec<PathBuf>,
    known: HashMap<Option<String>, Arc<ProjectIdentity>>,
}

impl Projects {
    fn of(&mut self, cwd: Option<&str>, agent: &str) -> Arc<ProjectIdentity> {
        let key = cwd.map(str::to_owned);
        self.known
            .entry(key)
            .or_insert_with(|| {
                // The branch checked out now says nothing of the branch a past session was on.
                let found = capture::resolve_project(cwd, agent, &self.roots);
                Arc::new(ProjectIdentity { branch: None, ..found })
            })
            .clone()
    }
}

/// The writing side of one agent's import: prepared events screened against what the store
/// holds, given their uids and projects, and stored in batches with the marks of the sources
/// they complete.
struct Sink<'a> {
    store: &'a mut Store,
    agent: &'static str,
    projects: &'a mut Projects,
    items: Vec<Bulk>,
    /// Sources read whole whose last events are among `items`.
    marks: Vec<ReadMark>,
    /// Per session: when the hooks first captured it.
    cutoffs: HashMap<String, Option<i64>>,
    report: &'a mut Imported,
    batches: u64,
    /// How this agent's event uids begin ([`uid_prefix`]).
    uid_prefix: String,
    /// The thread that copies the write-ahead log back beside the writes; none for a store in
    /// memory.
    log_copy: Option<LogCopy>,
    /// Where a written batch goes back to the reading thread, to be freed where it was
    /// allocated.
    spent: SyncSender<Vec<Bulk>>,
}

/// How the writing side asks for the write-ahead log to be copied back beside it.
struct LogCopy {
    wake: SyncSender<()>,
    /// Set by the copier when a copy it was asked for has finished.
    done: Arc<AtomicBool>,
    /// A copy was asked for and what was written meanwhile is not yet copied.
    asked: bool,
}

impl Sink<'_> {
    fn take(&mut self, read: Read, progress: &mut dyn FnMut()) -> Result<(), StoreError> {
        match read {
            Read::Event { event, hash, columns } => {
                self.event(*event, hash, columns)?;
            }
            Read::Done(mark) => {
                progress();
                self.report.sessions += 1;
                self.marks.push(mark);
            }
            Read::Failed(error) => {
                progress();
                self.report.errors.push(error);
            }
        }
        if self.items.len() >= BATCH || self.marks.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn event(&mut self, event: Event, hash: String, columns: Columns) -> Result<(), StoreError> {
        if !self.cutoffs.contains_key(&event.session) {
            let since = self.store.captured_since(self.agent, &event.session, &self.uid_prefix)?;
            self.cutoffs.insert(event.session.clone(), since);
        }
        let at_ms = event.at_ms;
        if self.cutoffs[&event.session]
            .is_some_and(|captured| at_ms >= captured - CAPTURED_SLACK_MS)
        {
            self.report.already += 1;
            return Ok(());
        }
        let project = self.projects.of(event.cwd.as_deref(), self.agent);
        self.items.push(Bulk { event, hash, project, columns });
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if self.items.is_empty() && self.marks.is_empty() {
            return Ok(());
        }
        let added = self.store.write_many(&self.items, &self.marks, time::now_ms())?;
        self.batches += 1;
        let due = self.batches.is_multiple_of(LOG_BATCHES);
        match &mut self.log_copy {
            // The copy beside the writes has finished: what was written meanwhile (a batch or
            // two) is copied here, so that the next batch starts the log again from its
            // beginning rather than the log growing with the whole import.
            Some(copy) if copy.asked && copy.done.swap(false, Ordering::Acquire) => {
                copy.asked = false;
                self.store.copy_log_back()?;
            }
            Some(copy) if due && !copy.asked => match copy.wake.try_send(()) {
                Ok(()) => copy.asked = true,
                Err(_) => self.store.copy_log_back()?,
            },
            Some(_) => {}
            None if due => self.store.copy_log_back()?,
            None => {}
        }
        self.report.events += added as u64;
        self.report.already += (self.items.len() - added) as u64;
        let written = std::mem::replace(&mut self.items, Vec::with_capacity(BATCH));
        // Should the reading thread be behind in freeing, or gone, the batch is freed here.
        let _ = self.spent.try_send(written);
        self.marks.clear();
        Ok(())
    }
}

/// How the uids of events read from `agent`'s history begin.
pub fn uid_prefix(agent: &str) -> String {
    format!("{agent}-history-")
}

/// The uid of an event read from `agent`'s history: its session and the id of the record it
/// came from, after [`uid_prefix`].
fn history_uid(agent: &str, session: &str, source_id: &str) -> String {
    let mut uid = uid_prefix(agent);
    uid.reserve(session.len() + 1 + source_id.len());
    uid.push_str(session);
    uid.push('-');
    uid.push_str(source_id);
    uid
}

/// Whether `cwd` is `project` or inside it (always, without a project).
fn within(cwd: Option<&str>, project: Option<&Path>) -> bool {
    match (project, cwd) {
        (None, _) => true,
        (Some(project), Some(cwd)) => Path::new(cwd).starts_with(project),
        (Some(_), None) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_longer_than_the_cap_is_skipped_whole() {
        let long = "x".repeat(MAX_LINE + 10);
        let text = format!("a\n{long}\nb");
        let mut input = BufReader::with_capacity(1024, text.as_bytes());
        let mut line = Vec::new();
        let end = |fits, broken, bytes| Some(LineEnd { fits, broken, bytes });
        assert_eq!(next_line(&mut input, &mut line).expect("read"), end(true, true, 2));
        assert_eq!(line, b"a");
        let long_bytes = MAX_LINE as u64 + 11;
        assert_eq!(next_line(&mut input, &mut line).expect("read"), end(false, true, long_bytes));
        assert!(line.is_empty());
        assert_eq!(next_line(&mut input, &mut line).expect("read"), end(true, false, 1));
        assert_eq!(line, b"b");
        assert_eq!(next_line(&mut input, &mut line).expect("read"), None);
    }

    #[test]
    fn a_project_holds_what_is_inside_it() {
        assert!(within(Some("/p/sub"), Some(Path::new("/p"))));
        assert!(!within(Some("/pq"), Some(Path::new("/p"))));
        assert!(!within(None, Some(Path::new("/p"))));
        assert!(within(None, None));
    }
}
