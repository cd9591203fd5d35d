//! Store: the one SQLite file that holds everything agent-memory knows.
//!
//! Owns the connection, its pragmas (WAL, busy timeout), the forward-only migrations in
//! `store/migrations/` applied by `PRAGMA user_version`, and every SQL statement. The hook path
//! opens the store, finds the schema current with one pragma read, and writes one event in one
//! short transaction. Files are created 0600 inside a 0700 directory.
//!
//! Must not: know agent formats, redact, or decide what is noise; callers hand it finished events
//! and the rules to apply (such as the near-duplicate test).

pub mod anchors;
pub mod branches;
pub mod browse;
pub mod distilled;
pub mod fts;
pub mod injections;
pub mod memories;
pub mod recall;
pub mod search;
pub mod status;
pub mod team;
pub mod transcripts;
pub mod transfer;
pub mod vectors;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use crate::event::{Event, EventKind, Sensitivity, ToolKind};
use crate::fsutil;
use crate::project::ProjectIdentity;

/// The migrations, in order. Never edit a shipped one: add the next.
const MIGRATIONS: &[&str] = &[
    include_str!("store/migrations/0001_capture.sql"),
    include_str!("store/migrations/0002_distil.sql"),
    include_str!("store/migrations/0003_llm_usage.sql"),
    include_str!("store/migrations/0004_recall.sql"),
    include_str!("store/migrations/0005_transcripts.sql"),
    include_str!("store/migrations/0006_memory.sql"),
    include_str!("store/migrations/0007_stems.sql"),
    include_str!("store/migrations/0008_dates.sql"),
    include_str!("store/migrations/0009_team.sql"),
    include_str!("store/migrations/0010_team_items.sql"),
    include_str!("store/migrations/0011_vector_changes.sql"),
    include_str!("store/migrations/0012_brief_files.sql"),
    include_str!("store/migrations/0013_store_id.sql"),
    include_str!("store/migrations/0014_event_order.sql"),
    include_str!("store/migrations/0015_event_stems.sql"),
    include_str!("store/migrations/0016_history.sql"),
    include_str!("store/migrations/0017_anchors.sql"),
    include_str!("store/migrations/0018_injections.sql"),
    include_str!("store/migrations/0019_reactions.sql"),
    include_str!("store/migrations/0020_session_order.sql"),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the store at {path}: {source}")]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error("cannot prepare the store directory {path}: {source}")]
    Dir { path: PathBuf, source: std::io::Error },
    #[error(
        "the store at {path} has schema version {found}, newer than this agent-memory ({supported}); upgrade agent-memory"
    )]
    TooNew { path: PathBuf, found: i64, supported: i64 },
    #[error("store migration to version {version} failed: {source}")]
    Migrate { version: i64, source: rusqlite::Error },
    #[error("store query failed: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("store data is malformed: {0}")]
    Data(String),
}

impl StoreError {
    /// The file is not a database, or SQLite found it damaged: a case for
    /// [`Store::move_aside`], not for waiting.
    pub fn is_damaged(&self) -> bool {
        matches!(
            self.sqlite_code(),
            Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
        )
    }

    /// The database was busy or locked past the busy timeout.
    pub fn is_busy(&self) -> bool {
        matches!(
            self.sqlite_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }

    fn sqlite_code(&self) -> Option<rusqlite::ErrorCode> {
        match self {
            StoreError::Open { source, .. } | StoreError::Migrate { source, .. } => source,
            StoreError::Sql(source) => source,
            _ => return None,
        }
        .sqlite_error_code()
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// An open store.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Read by `am_fts_deferred()`: while set, inserted events are not indexed by the trigger.
    fts_deferred: Arc<AtomicBool>,
}

/// A hook run to record beside its outcome.
#[derive(Debug, Clone)]
pub struct HookRun<'a> {
    pub at_ms: i64,
    pub agent: &'a str,
    pub event_name: &'a str,
    pub outcome: &'static str,
    pub detail: Option<String>,
    pub duration_us: i64,
    pub event_uid: Option<&'a str>,
}

/// A recent event of the same session, offered to the near-duplicate test.
#[derive(Debug, Clone)]
pub struct RecentEvent {
    pub id: i64,
    pub kind: String,
    pub at_ms: i64,
    pub content_hash: String,
    pub body: String,
}

/// Which recent events the near-duplicate test sees.
#[derive(Debug, Clone, Copy)]
pub struct DedupeWindow {
    pub events: usize,
    pub since_ms: i64,
}

/// The near-duplicate test: which recent events to look at, and the verdict on each.
pub type Dedupe<'a> = (DedupeWindow, &'a dyn Fn(&RecentEvent) -> bool);

/// What became of an event handed to [`Store::write_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    Stored {
        id: i64,
    },
    /// An event with this uid is already stored (a spool drained twice, an import repeated).
    AlreadyStored,
    /// The near-duplicate test matched this earlier event.
    NearDuplicate {
        of: i64,
    },
}

/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 96;

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fsutil::ensure_private_dir(dir)
                .map_err(|source| StoreError::Dir { path: dir.to_owned(), source })?;
        }
        // An empty file is a store nothing has written yet (made here, or by another process
        // a moment ago): only such a store takes the page size.
        let new = match std::fs::metadata(path) {
            Ok(meta) => meta.len() == 0,
            Err(_) => {
                // Create the file ourselves so it is 0600 from the first byte; SQLite gives the
                // -wal and -shm files the same mode.
                fsutil::private_file_options()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|source| StoreError::Dir { path: path.to_owned(), source })?;
                true
            }
        };
        let open_err = |source| StoreError::Open { path: path.to_owned(), source };
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
        conn.busy_timeout(busy_timeout).map_err(open_err)?;
        // A search runs a few dozen statements whose text repeats from one search to the next;
        // parsing them again was a sixth of a search's CPU in a long-lived server.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // Every hook is a short-lived process. By default the last connection to close
        // checkpoints and deletes the write-ahead log, and the next hook creates it again: four
        // fsyncs, most of a hook's time. Instead the log stays, and writers empty it with
        // `checkpoint_if_large` once it has grown (SQLite's own automatic checkpoint is off: a
        // new process does not know what was copied already and would copy the whole log).
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true).map_err(open_err)?;
        let fts_deferred = Arc::new(AtomicBool::new(false));
        register_functions(&conn, &fts_deferred).map_err(open_err)?;
        let mut store = Store { conn, path: path.to_owned(), fts_deferred };
        store.prepare_connection(new).map_err(open_err)?;
        store.migrate()?;
        Ok(store)
    }

    /// An in-memory store, for tests and benchmarks of the query layer.
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory()?;
        let fts_deferred = Arc::new(AtomicBool::new(false));
        register_functions(&conn, &fts_deferred)?;
        let mut store = Store { conn, path: PathBuf::from(IN_MEMORY), fts_deferred };
        store.migrate()?;
        Ok(store)
    }

    /// Whether the store lives in memory ([`Store::open_in_memory`]): no file beside it.
    fn in_memory(&self) -> bool {
        self.path == Path::new(IN_MEMORY)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, for the submodules of this module.
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// A transaction that takes the write lock at once. A deferred one that reads before it
    /// writes cannot wait for the lock: when another process commits in between, SQLite fails
    /// it at once with "database is locked" instead of calling the busy handler. Every
    /// transaction that writes begins here (or with `TransactionBehavior::Immediate`).
    pub(crate) fn begin_write(&self) -> rusqlite::Result<rusqlite::Transaction<'_>> {
        rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
    }

    /// Sets the connection's pragmas; a `new` store (an empty file) first takes [`PAGE_SIZE`],
    /// before the switch to WAL writes its first page: SQLite fixes a file's page size then.
    fn prepare_connection(&self, new: bool) -> rusqlite::Result<()> {
        if new {
            self.conn.pragma_update(None, "page_size", PAGE_SIZE)?;
        }
        // journal_mode is persistent; switching costs a lock, so only switch when needed.
        let mode: String = self.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            self.conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))?;
        }
        // NORMAL in WAL mode loses at most the last transactions on power loss, never integrity.
        self.conn.execute_batch(
            "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF; PRAGMA wal_autocheckpoint = 0;
             PRAGMA journal_size_limit = 4194304;",
        )
    }

    /// Applies the migrations this file has not seen, each in one transaction. Two processes
    /// racing here is safe: the version is re-read under the write lock.
    fn migrate(&mut self) -> Result<()> {
        let version: i64 = self.conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version == SCHEMA_VERSION {
            return Ok(());
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        for (index, sql) in MIGRATIONS.iter().enumerate().skip(current.max(0) as usize) {
            let target = index as i64 + 1;
            tx.execute_batch(sql)
                .map_err(|source| StoreError::Migrate { version: target, source })?;
            tx.pragma_update(None, "user_version", target)
                .map_err(|source| StoreError::Migrate { version: target, source })?;
        }
        if current == 0 {
            size_event_index_leaves(&tx)
                .map_err(|source| StoreError::Migrate { version: 1, source })?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Roots registered by hand, for project resolution.
    pub fn registered_roots(&self) -> Result<Vec<PathBuf>> {
        let mut stmt = self.conn.prepare_cached("SELECT root FROM project_roots")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.filter_map(|r| r.ok()).map(PathBuf::from).collect())
    }

    /// Registers `identity.root` as a project root.
    pub fn register_root(&mut self, identity: &ProjectIdentity) -> Result<()> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let project_id = upsert_project(&tx, identity, crate::time::now_ms())?;
        tx.execute(
            "INSERT INTO project_roots (root, project_id) VALUES (?1, ?2)
             ON CONFLICT (root) DO UPDATE SET project_id = excluded.project_id",
            params![identity.root.to_string_lossy(), project_id],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Writes one captured event with its hook run, in one transaction.
    ///
    /// `is_near_duplicate` sees the session's recent events inside the write lock and may veto
    /// the event; the hook run is recorded either way with the outcome it got.
    pub fn write_event(
        &mut self,
        event: &Event,
        content_hash: &str,
        project: &ProjectIdentity,
        dedupe: Option<Dedupe<'_>>,
        run: &HookRun<'_>,
        started: Instant,
    ) -> Result<WriteOutcome> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let project_id = upsert_project(&tx, project, event.at_ms)?;
        let session_id = upsert_session(&tx, event, project_id, project.branch.as_deref())?;
        let mut outcome = None;
        if let Some((window, is_dup)) = dedupe {
            let recent = recent_events(&tx, session_id, window)?;
            // A tool run repeats only the session's last tool run: a run after an edit, or
            // after anything else the agent did, is new evidence even when it reads the same.
            let tool = event.kind == EventKind::ToolUse;
            let mut tools_seen = 0;
            let comparable = recent.iter().take_while(|r| {
                tools_seen += usize::from(r.kind == EventKind::ToolUse.as_str());
                !tool || tools_seen <= 1
            });
            if let Some(hit) = comparable
                .filter(|r| !tool || r.kind == EventKind::ToolUse.as_str())
                .find(|r| is_dup(r))
            {
                outcome = Some(WriteOutcome::NearDuplicate { of: hit.id });
            }
        }
        let outcome = match outcome {
            Some(dup) => dup,
            None => match insert_event(&tx, event, content_hash, session_id, project_id, false)? {
                Some(id) => WriteOutcome::Stored { id },
                None => WriteOutcome::AlreadyStored,
            },
        };
        let (label, detail) = match &outcome {
            WriteOutcome::Stored { .. } => ("stored", None),
            WriteOutcome::AlreadyStored => ("duplicate", Some("uid already stored")),
            WriteOutcome::NearDuplicate { .. } => ("filtered", Some("near_duplicate")),
        };
        let run = HookRun {
            outcome: label,
            detail: run.detail.clone().or(detail.map(str::to_owned)),
            duration_us: started.elapsed().as_micros() as i64,
            ..run.clone()
        };
        insert_hook_run(&tx, &run)?;
        tx.commit()?;
        Ok(outcome)
    }

    /// Inserts events recovered from a spool or an import in one transaction, skipping uids
    /// already stored. Returns how many were new.
    pub fn write_recovered(
        &mut self,
        items: &[(Event, String, ProjectIdentity)],
        runs: &[HookRun<'_>],
    ) -> Result<usize> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut added = 0;
        for (event, hash, project) in items {
            let project_id = upsert_project(&tx, project, event.at_ms)?;
            let session_id = upsert_session(&tx, event, project_id, project.branch.as_deref())?;
            if insert_event(&tx, event, hash, session_id, project_id, true)?.is_some() {
                added += 1;
            }
        }
        for run in runs {
            insert_hook_run(&tx, run)?;
        }
        tx.commit()?;
        Ok(added)
    }

    /// Inserts many events read after the fact (an agent's own history) in one transaction,
    /// skipping uids already stored, and indexes them in one statement at the end rather than
    /// a full-text segment per event; in the same transaction, records the sources read whole
    /// (`marks`), so a source counts as read only once everything it gave is stored. Returns
    /// how many events were new.
    pub fn write_many(
        &mut self,
        items: &[Bulk],
        marks: &[transcripts::ReadMark],
        now_ms: i64,
    ) -> Result<usize> {
        // A long bulk write touches every index page again and again; give it room (64 MiB),
        // as an import does.
        self.conn.pragma_update(None, "cache_size", -65_536)?;
        // Each insert fires triggers, so SQLite keeps a statement journal of the pages it
        // changes in case the statement fails half way; in memory, not in a file of its own.
        self.conn.pragma_update(None, "temp_store", "MEMORY")?;
        // The log grows to tens of megabytes between two copies back; cutting its file back
        // to 4 MiB each time it starts again only has the file system find the blocks anew.
        self.conn.pragma_update(None, "journal_size_limit", 128 * 1024 * 1024)?;
        // What each new event's full-text index is to hold, worked out by whoever prepared the
        // batch, waits here (in memory) until one statement indexes the whole batch.
        self.conn.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS pending_index (id INTEGER PRIMARY KEY, text TEXT)",
        )?;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        self.fts_deferred.store(true, Ordering::Relaxed);
        let written = (|| {
            let mut added = 0;
            let mut projects: HashMap<&str, i64> = HashMap::new();
            let mut sessions: HashMap<(&str, &str), i64> = HashMap::new();
            // Sessions a prompt of this batch has already offered a title to: only a
            // session's first prompt titles it.
            let mut titled: std::collections::HashSet<(&str, &str)> = Default::default();
            let mut pending =
                tx.prepare_cached("INSERT INTO temp.pending_index (id, text) VALUES (?1, ?2)")?;
            let mut rows = Vec::with_capacity(ROWS_PER_INSERT);
            let mut insert = |rows: &mut Vec<(Row<'_>, &Columns)>| {
                let stored = insert_rows(&tx, rows, |id, columns| {
                    pending.execute(params![id, columns.index_text])?;
                    Ok(())
                });
                rows.clear();
                stored
            };
            for (i, Bulk { event, hash, project, columns }) in items.iter().enumerate() {
                let project_id = match projects.get(project.key.as_str()) {
                    Some(id) => *id,
                    None => {
                        let id = upsert_project(&tx, project, event.at_ms)?;
                        projects.insert(&project.key, id);
                        id
                    }
                };
                // A session's row is brought up to date by its first event here, by each that
                // can change it (its first prompt may title it, an end closes it) and by its
                // last (which also reopens it after an end), not by every event between.
                let key = (event.agent.as_str(), event.session.as_str());
                let last = items.get(i + 1).is_none_or(|next| {
                    (next.event.agent.as_str(), next.event.session.as_str()) != key
                });
                let changes = match event.kind {
                    EventKind::Prompt => titled.insert(key),
                    EventKind::SessionEnd => true,
                    _ => false,
                };
                let session_id = match sessions.get(&key) {
                    Some(id) if !last && !changes => *id,
                    _ => {
                        let id = upsert_session(&tx, event, project_id, project.branch.as_deref())?;
                        sessions.insert(key, id);
                        id
                    }
                };
                rows.push((Row { event, hash, session_id, project_id, late: true }, columns));
                if rows.len() == ROWS_PER_INSERT {
                    added += insert(&mut rows)?;
                }
            }
            added += insert(&mut rows)?;
            Ok::<_, StoreError>(added)
        })();
        self.fts_deferred.store(false, Ordering::Relaxed);
        let added = written?;
        tx.execute_batch(
            "INSERT INTO events_fts (rowid, text) SELECT id, text FROM temp.pending_index;
             DELETE FROM temp.pending_index;",
        )?;
        transcripts::mark_read(&tx, marks, now_ms)?;
        tx.commit()?;
        Ok(added)
    }

    /// Records a hook run that wrote no event (skipped, filtered, invalid).
    pub fn record_hook_run(&mut self, run: &HookRun<'_>) -> Result<()> {
        insert_hook_run(&self.conn, run)
    }

    /// Deletes hook-run records older than `before_ms`; they only feed `status`.
    pub fn prune_hook_runs(&mut self, before_ms: i64) -> Result<usize> {
        Ok(self.conn.execute("DELETE FROM hook_runs WHERE at < ?1", [before_ms])?)
    }

    /// SQLite's own consistency check of every page and index: `None` when it finds nothing
    /// wrong, else its first complaint.
    pub fn quick_check(&self) -> Result<Option<String>> {
        let first: String = self.conn().query_row("PRAGMA quick_check(1)", [], |r| r.get(0))?;
        Ok((first != "ok").then_some(first))
    }

    /// Moves a damaged store file (with its write-ahead log and shared memory) aside as
    /// `memory.db.damaged-<time>`, so a fresh store can open in its place; returns where it
    /// went. Nothing is deleted: what can still be read of it is read from there.
    pub fn move_aside(path: &Path, now_ms: i64) -> std::io::Result<PathBuf> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let moved = path.with_file_name(format!("{name}.damaged-{now_ms}"));
        std::fs::rename(path, &moved)?;
        for suffix in ["-wal", "-shm"] {
            let side = path.with_file_name(format!("{name}{suffix}"));
            if side.exists() {
                let to = moved.with_file_name(format!(
                    "{}{suffix}",
                    moved.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
                ));
                std::fs::rename(&side, to)?;
            }
        }
        Ok(moved)
    }

    pub fn checkpoint(&self) -> Result<()> {
        self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Leaves the write-ahead log small for whoever opens the store next, at the end of work
    /// that wrote much (a work pass, an import, a reindex, a tidy, a recovery, a team sync):
    /// every new process reads the whole log, so a search after a pass that left 60 MB in it
    /// took four times as long. The log is checkpointed and truncated, waiting at most `wait`
    /// for readers; when a reader holds it, as much as the readers allow is copied back
    /// (`journal_size_limit` then cuts the file back when the log next restarts). A busy
    /// store is no failure: the next writer empties the log.
    pub fn leave_log_small(&self, wait: Duration) -> Result<()> {
        if fsutil::file_len(&wal_path(&self.path)) == 0 {
            return Ok(());
        }
        self.conn.busy_timeout(wait)?;
        let busy: i64 = self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
        if busy != 0 {
            self.conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        }
        Ok(())
    }

    /// [`Store::checkpoint`] when the write-ahead log has grown past `max_bytes`, waiting at
    /// most `wait` for other connections. Every new process reads the whole log when it opens
    /// the store, so the log must stay short; a busy store is left for the next writer.
    pub fn checkpoint_if_large(&self, max_bytes: u64, wait: Duration) -> Result<bool> {
        let wal = wal_path(&self.path);
        if fsutil::file_len(&wal) <= max_bytes {
            return Ok(false);
        }
        self.conn.busy_timeout(wait)?;
        let busy: i64 = self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
        Ok(busy == 0)
    }

    /// Between the batches of a long bulk write: copies the write-ahead log into the database
    /// as far as readers allow, without waiting for them, so that the log is reused from its
    /// start rather than growing with the whole write. (The file keeps its size until a
    /// truncating checkpoint; its length says nothing of how much of it is live.)
    pub fn copy_log_back(&self) -> Result<()> {
        copy_log_back(&self.conn)
    }

    /// A second connection to this store's file, to copy the write-ahead log back while this
    /// one goes on writing; `None` for a store in memory.
    pub fn log_copier(&self) -> Result<Option<LogCopier>> {
        if self.in_memory() {
            return Ok(None);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags)?;
        // As every connection here: closing it copies nothing (see `Store::open`).
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        Ok(Some(LogCopier { conn }))
    }

    /// Tokens the LLM distiller spent on `day` (YYYY-MM-DD, UTC), over all providers.
    pub fn llm_tokens_spent(&self, day: &str) -> Result<u64> {
        let spent: i64 = self.conn.query_row(
            "SELECT coalesce(sum(tokens), 0) FROM llm_usage WHERE day = ?1",
            [day],
            |r| r.get(0),
        )?;
        Ok(spent.max(0) as u64)
    }

    /// Adds what the LLM distiller spent.
    pub fn record_llm_spend(
        &mut self,
        day: &str,
        provider: &str,
        tokens: u64,
        calls: u64,
    ) -> Result<()> {
        self.conn.execute(
            "INSERT INTO llm_usage (day, provider, tokens, calls) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (day, provider) DO UPDATE SET
                 tokens = tokens + excluded.tokens, calls = calls + excluded.calls",
            params![day, provider, tokens as i64, calls as i64],
        )?;
        Ok(())
    }

    /// Whether a write would go through now: takes the write lock and gives it back, writing
    /// nothing.
    pub fn can_write(&self) -> Result<()> {
        self.conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;")?;
        Ok(())
    }

    /// Writes a consistent copy of the whole database to `path` (which must not exist), for a
    /// backup before a change in bulk; the copy is made private like the store.
    pub fn backup_to(&self, path: &Path) -> Result<()> {
        // SQLite writes into an empty file it finds; created here, it is 0600 from the start.
        fsutil::private_file_options()
            .create_new(true)
            .write(true)
            .open(path)
            .map_err(|source| StoreError::Dir { path: path.to_owned(), source })?;
        self.conn.execute("VACUUM INTO ?1", [path.to_string_lossy()])?;
        Ok(())
    }

    /// Checks the file with SQLite's own integrity check.
    pub fn integrity_ok(&self) -> Result<bool> {
        let result: String = self.conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        Ok(result == "ok")
    }
}

/// The columns [`event_from_row`] reads, in order (`e` is events, `s` its session).
pub(crate) const EVENT_COLUMNS: &str = "e.uid, e.agent, e.kind, e.source_event, s.source_id, \
     e.cwd, e.at, e.tool, e.tool_kind, e.summary, e.body, e.payload, e.files, e.sensitivity, \
     s.transcript_path";

/// An event from the columns of a row selected with [`EVENT_COLUMNS`], starting at column
/// `first`.
pub(crate) fn event_from_row(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Event> {
    let text = |i: usize| -> rusqlite::Result<String> { r.get(first + i) };
    // Rows are written by this code; an unknown kind can only come from a newer version.
    let kind = EventKind::parse(&text(2)?).unwrap_or(EventKind::Note);
    let tool_kind = r
        .get::<_, Option<String>>(first + 8)?
        .and_then(|k| serde_json::from_value::<ToolKind>(k.into()).ok());
    let files: Vec<String> = serde_json::from_str(&text(12)?).unwrap_or_default();
    let mut payload: serde_json::Value = serde_json::from_str(&text(11)?).unwrap_or_default();
    // Written with the event since they exist; derived, as the adapter would have, before.
    let facts = match payload.as_object_mut().and_then(|fields| fields.remove(FACTS_KEY)) {
        Some(stored) => serde_json::from_value(stored).unwrap_or_default(),
        None => crate::adapter::tool_facts(kind, tool_kind, &files, &payload),
    };
    Ok(Event {
        uid: text(0)?,
        agent: text(1)?,
        kind,
        source_event: text(3)?,
        session: text(4)?,
        cwd: r.get(first + 5)?,
        at_ms: r.get(first + 6)?,
        tool: r.get(first + 7)?,
        tool_kind,
        summary: text(9)?,
        body: text(10)?,
        payload,
        files,
        sensitivity: Sensitivity::parse(&text(13)?),
        transcript_path: r.get(first + 14)?,
        facts,
    })
}

/// The key an event's [`crate::event::ToolFacts`] are kept under in its stored payload: they
/// live in the JSON the payload column already holds, so no column was added for them.
pub(crate) const FACTS_KEY: &str = "facts";

/// An event the bulk writer ([`Store::write_many`]) stores: the event, its content hash, its
/// project, and its [`Columns`].
#[derive(Debug, Clone)]
pub struct Bulk {
    pub event: Event,
    pub hash: String,
    pub project: Arc<ProjectIdentity>,
    pub columns: Columns,
}

/// What writing an event works out beside its fields: its payload and files as stored, and the
/// text its full-text index holds. Apart from the write, so that a bulk writer can have them
/// worked out on another thread while it writes.
#[derive(Debug, Clone)]
pub struct Columns {
    payload: String,
    files: String,
    /// What the trigger of migration 0015 indexes: [`EVENT_INDEX_TEXT`], worked out here.
    index_text: String,
}

impl Columns {
    /// The columns of `event`, with its index text.
    pub fn of(event: &Event) -> Columns {
        let date = fts::date_words(event.at_ms);
        let text = format!("{} {} {date}", event.summary, event.body);
        Columns { index_text: fts::stemmed_text(&text), ..Columns::stored(event) }
    }

    /// The bytes of text they hold.
    pub fn bytes(&self) -> usize {
        self.payload.len() + self.files.len() + self.index_text.len()
    }

    /// The columns of `event` without its index text, which its trigger writes.
    fn stored(event: &Event) -> Columns {
        Columns {
            payload: stored_payload(event),
            // Straight into a string, without a copy of the list first.
            files: serde_json::to_string(&event.files).unwrap_or_else(|_| "[]".to_owned()),
            index_text: String::new(),
        }
    }
}

/// The payload column's text: the payload with the event's facts, when it has any.
fn stored_payload(event: &Event) -> String {
    // Straight into a string: `to_string` on a value goes through the formatter, byte by byte.
    let text = serde_json::to_string(&event.payload).unwrap_or_else(|_| "{}".to_owned());
    if event.facts.is_empty() || !event.payload.is_object() {
        return text;
    }
    // Spliced into the serialized object rather than into a clone of the payload: the hook
    // writes every event through here.
    match (text.strip_suffix('}'), serde_json::to_string(&event.facts)) {
        (Some(head), Ok(facts)) => {
            let separator = if head == "{" { "" } else { "," };
            format!("{head}{separator}\"{FACTS_KEY}\":{facts}}}")
        }
        _ => text,
    }
}

/// Copies a store's write-ahead log into its database from a connection of its own, beside a
/// long bulk write. A copy ends by flushing what it wrote to disk, which took a fifth of a
/// history import's writing thread when the writer copied the log itself; SQLite lets one
/// connection copy the log while another appends to it.
#[derive(Debug)]
pub struct LogCopier {
    conn: Connection,
}

impl LogCopier {
    /// Copies as much of the log as readers allow, without waiting for them. What was
    /// appended meanwhile stays in the log: the log starts again from its beginning only once
    /// all of it is copied, which the writer sees to ([`Store::copy_log_back`]).
    pub fn copy_log_back(&self) -> Result<()> {
        copy_log_back(&self.conn)
    }
}

/// Copies as much of the write-ahead log into the database as readers allow, without waiting
/// for them.
fn copy_log_back(conn: &Connection) -> Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
    Ok(())
}

/// The path an in-memory store reports.
const IN_MEMORY: &str = ":memory:";

/// The write-ahead log beside a database file.
pub fn wal_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// The page size of a new store, in bytes. SQLite's default is 4 KiB; with 8 KiB pages an
/// import of two million events took 12% less processor time and 14% less wall time (fewer
/// pages to read, split and copy through the log once the store outgrows its cache), a hook
/// under 1% more. 16 KiB cost a hook 8%, for no more gain. See bench/results/history.md.
const PAGE_SIZE: u32 = 8192;

/// The size of a leaf of the events' full-text index in a store of [`PAGE_SIZE`] pages: a
/// leaf is one row of `events_fts_data`, and this one fills a page with its row's header, as
/// FTS5's default of 4,050 bytes fills a page of 4 KiB. With half as many leaves an import of
/// two million events took 9% less wall time and 8–10% less processor time on each thread
/// (alternated, three runs each; bench/results/history.md).
const EVENT_INDEX_LEAF: u32 = 8_100;

/// Gives a store being created with [`PAGE_SIZE`] pages leaves of [`EVENT_INDEX_LEAF`] bytes in
/// its events' full-text index. A store of smaller pages keeps FTS5's default, which fits them.
fn size_event_index_leaves(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let page: u32 = tx.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    if page == PAGE_SIZE {
        tx.execute(
            "INSERT INTO events_fts (events_fts, rank) VALUES ('pgsz', ?1)",
            [EVENT_INDEX_LEAF],
        )?;
    }
    Ok(())
}

/// How long the write-ahead log may grow before a writer empties it.
pub const WAL_CHECKPOINT_BYTES: u64 = 512 * 1024;

/// Registers the SQL functions the schema's triggers call. Every connection that writes events
/// needs them.
fn register_functions(conn: &Connection, fts_deferred: &Arc<AtomicBool>) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "am_fts_text",
        1,
        FunctionFlags::SQLITE_UTF8
            | FunctionFlags::SQLITE_DETERMINISTIC
            | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx| {
            let text: Option<String> = ctx.get(0)?;
            Ok(text.map(|t| fts::shadow_text(&t).into_owned()))
        },
    )?;
    conn.create_scalar_function(
        "am_fts_stemmed",
        1,
        FunctionFlags::SQLITE_UTF8
            | FunctionFlags::SQLITE_DETERMINISTIC
            | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx| {
            let text: Option<String> = ctx.get(0)?;
            Ok(text.map(|t| fts::stemmed_text(&t)))
        },
    )?;
    // Not deterministic: the words are the local time zone's.
    conn.create_scalar_function(
        "am_date_words",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx| {
            let at: Option<i64> = ctx.get(0)?;
            Ok(at.map(fts::date_words))
        },
    )?;
    // Search reports what reading an event in full costs, with the one token estimate.
    conn.create_scalar_function(
        "am_tokens",
        1,
        FunctionFlags::SQLITE_UTF8
            | FunctionFlags::SQLITE_DETERMINISTIC
            | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx| {
            let text: Option<String> = ctx.get(0)?;
            Ok(text.map_or(0, |t| crate::tokens::estimate(&t) as i64))
        },
    )?;
    let deferred = Arc::clone(fts_deferred);
    conn.create_scalar_function(
        "am_fts_deferred",
        0,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_INNOCUOUS,
        move |_| Ok(deferred.load(Ordering::Relaxed)),
    )
}

/// What an event's full-text index holds, as the trigger of migration 0015 writes it: its
/// summary and body, the stems of their words, and the words of its local date.
const EVENT_INDEX_TEXT: &str = "am_fts_stemmed(summary || ' ' || body || ' ' || am_date_words(at))";

/// Indexes, in one statement, every event after `after_id`; for bulk writers that deferred
/// the trigger.
pub(crate) fn index_events_after(conn: &Connection, after_id: i64) -> Result<()> {
    conn.execute(
        &format!("INSERT INTO events_fts (rowid, text) SELECT id, {EVENT_INDEX_TEXT} FROM events WHERE id > ?1"),
        [after_id],
    )?;
    Ok(())
}

impl Store {
    /// Indexes again, with stems and date words, up to `limit` of the events stored before
    /// their index held them (schema 15), newest first, `batch` to a transaction so that a
    /// hook waiting to write is never held up for long. Returns how many it indexed. Once none
    /// is left, it writes nothing.
    pub fn restem_events(&mut self, batch: usize, limit: usize) -> Result<usize> {
        let mut done = 0;
        while self.events_partly_stemmed()? {
            let take = batch.max(1).min(limit - done);
            if take == 0 {
                break;
            }
            let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let below: i64 =
                tx.query_row("SELECT coalesce(min(below), 0) FROM events_restem", [], |r| {
                    r.get(0)
                })?;
            let ids: Vec<i64> = tx
                .prepare_cached("SELECT id FROM events WHERE id < ?1 ORDER BY id DESC LIMIT ?2")?
                .query_map(params![below, take as i64], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let Some(&lowest) = ids.last() else { break };
            tx.execute(
                "DELETE FROM events_fts WHERE rowid IN (SELECT value FROM json_each(?1))",
                [serde_json::to_string(&ids).unwrap_or_default()],
            )?;
            tx.execute(
                &format!(
                    "INSERT INTO events_fts (rowid, text)
                     SELECT id, {EVENT_INDEX_TEXT} FROM events WHERE id >= ?1 AND id < ?2"
                ),
                params![lowest, below],
            )?;
            tx.execute("UPDATE events_restem SET below = ?1", [lowest])?;
            tx.commit()?;
            done += ids.len();
        }
        Ok(done)
    }

    /// Whether some events still hold their plain words only, stored before the events'
    /// index held stems and not yet indexed again ([`Store::restem_events`]).
    pub(crate) fn events_partly_stemmed(&self) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM events
                                WHERE id < (SELECT coalesce(min(below), 0) FROM events_restem))",
            )?
            .query_row([], |r| r.get(0))?)
    }

    /// How many events stored before their index held stems and dates are still to be
    /// indexed again.
    pub fn events_to_restem(&self) -> Result<i64> {
        Ok(self.conn.query_row(
            "SELECT count(*) FROM events
             WHERE id < (SELECT coalesce(min(below), 0) FROM events_restem)",
            [],
            |r| r.get(0),
        )?)
    }
}

fn upsert_project(conn: &Connection, project: &ProjectIdentity, at_ms: i64) -> Result<i64> {
    // Look first: the project almost always exists, and an upsert would rewrite its row.
    let mut find = conn.prepare_cached("SELECT id FROM projects WHERE key = ?1")?;
    if let Some(id) = find.query_row([&project.key], |r| r.get(0)).optional()? {
        return Ok(id);
    }
    let mut stmt = conn.prepare_cached(
        "INSERT INTO projects (key, name, root, origin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
         RETURNING id",
    )?;
    Ok(stmt.query_row(
        params![project.key, project.name, project.root.to_string_lossy(), project.origin, at_ms],
        |r| r.get(0),
    )?)
}

/// Brings a session's row up to date with `event`; `branch` is the branch its checkout was on,
/// kept as last seen (a checkout may switch branches within a session).
fn upsert_session(
    conn: &Connection,
    event: &Event,
    project_id: i64,
    branch: Option<&str>,
) -> Result<i64> {
    let title = (event.kind == EventKind::Prompt).then(|| session_title(&event.body));
    let ended = (event.kind == EventKind::SessionEnd).then_some(event.at_ms);
    // Anything that happens after an end reopens the session (a resume, or an agent such as
    // Hermes that reports an end after every turn); a late spooled event from before does not.
    let mut stmt = conn.prepare_cached(
        "INSERT INTO sessions (agent, source_id, project_id, cwd, transcript_path, title,
                               started_at, last_event_at, ended_at, branch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9)
         ON CONFLICT (agent, source_id) DO UPDATE SET
             last_event_at = max(sessions.last_event_at, excluded.last_event_at),
             branch = CASE WHEN excluded.last_event_at >= sessions.last_event_at
                           THEN coalesce(excluded.branch, sessions.branch)
                           ELSE sessions.branch END,
             started_at = min(sessions.started_at, excluded.started_at),
             title = coalesce(sessions.title, excluded.title),
             transcript_path = coalesce(sessions.transcript_path, excluded.transcript_path),
             ended_at = CASE
                 WHEN excluded.ended_at IS NOT NULL THEN max(excluded.ended_at, coalesce(sessions.ended_at, 0))
                 WHEN sessions.ended_at IS NOT NULL AND excluded.last_event_at > sessions.ended_at THEN NULL
                 ELSE sessions.ended_at END
         RETURNING id",
    )?;
    Ok(stmt.query_row(
        params![
            event.agent,
            event.session,
            project_id,
            event.cwd,
            event.transcript_path,
            title,
            event.at_ms,
            ended,
            branch
        ],
        |r| r.get(0),
    )?)
}

/// A session's title: the first line of its first prompt, at most 120 characters.
fn session_title(prompt: &str) -> String {
    let line = prompt.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
    match line.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// Inserts the event unless its uid is stored already; returns the new row id.
/// Writes one event. `late`: stored after the fact (read from a transcript, drained from the
/// spool, imported), so its place among the session's events is found by its time, not its id
/// (see `Store::session_events`).
pub(crate) fn insert_event(
    conn: &Connection,
    event: &Event,
    content_hash: &str,
    session_id: i64,
    project_id: i64,
    late: bool,
) -> Result<Option<i64>> {
    let row = Row { event, hash: content_hash, session_id, project_id, late };
    insert_row(conn, &row, &Columns::stored(event))
}

/// An event about to be written, with where it goes.
struct Row<'a> {
    event: &'a Event,
    hash: &'a str,
    session_id: i64,
    project_id: i64,
    late: bool,
}

/// The columns an event is inserted with, in the order of [`Row::values`].
const INSERTED_COLUMNS: &str = "uid, session_id, project_id, agent, kind, source_event, at, tool, \
    tool_kind, summary, body, payload, files, sensitivity, content_hash, cwd, late";
const INSERTED_COLUMN_COUNT: usize = 17;

/// Events a bulk write inserts per statement. Every insert into `events` fires its triggers, so
/// SQLite journals each page a statement changes in case the statement fails half way: one
/// statement for many rows journals a page once rather than once a row. 32 rows of 17 values
/// stay far below SQLite's limit on a statement's parameters.
const ROWS_PER_INSERT: usize = 32;

impl Row<'_> {
    /// The values of [`INSERTED_COLUMNS`], `columns` worked out for the event.
    fn values<'v>(&'v self, columns: &'v Columns) -> [ToSqlOutput<'v>; INSERTED_COLUMN_COUNT] {
        let Row { event, hash, session_id, project_id, late } = *self;
        let text = |text: &'v str| ValueRef::Text(text.as_bytes());
        let maybe = |value: Option<&'v str>| value.map_or(ValueRef::Null, text);
        [
            text(&event.uid),
            ValueRef::Integer(session_id),
            ValueRef::Integer(project_id),
            text(&event.agent),
            text(event.kind.as_str()),
            text(&event.source_event),
            ValueRef::Integer(event.at_ms),
            maybe(event.tool.as_deref()),
            maybe(event.tool_kind.map(|k| k.as_str())),
            text(&event.summary),
            text(&event.body),
            text(&columns.payload),
            text(&columns.files),
            text(event.sensitivity.as_str()),
            text(hash),
            maybe(event.cwd.as_deref()),
            ValueRef::Integer(i64::from(late)),
        ]
        .map(ToSqlOutput::Borrowed)
    }
}

/// The insert of `rows` events at once, skipping uids stored already.
fn insert_sql(rows: usize) -> String {
    let row = format!("({})", ["?"; INSERTED_COLUMN_COUNT].join(", "));
    format!(
        "INSERT INTO events ({INSERTED_COLUMNS}) VALUES {} ON CONFLICT (uid) DO NOTHING",
        vec![row; rows].join(", ")
    )
}

/// [`insert_sql`], naming the rows it stored.
fn insert_returning_sql(rows: usize) -> String {
    format!("{} RETURNING id, uid", insert_sql(rows))
}

/// Inserts `row` with its worked-out `columns`; its id, or `None` when its uid was stored.
fn insert_row(conn: &Connection, row: &Row<'_>, columns: &Columns) -> Result<Option<i64>> {
    // Not `RETURNING id`, as `insert_rows` does: a store of a million events imported
    // through that answered the recall bench's searches of every kind 2 to 3 ms slower (p50,
    // three runs against three), for a reason not yet found.
    static SQL: LazyLock<String> = LazyLock::new(|| insert_sql(1));
    let mut stmt = conn.prepare_cached(&SQL)?;
    let changed = stmt.execute(rusqlite::params_from_iter(&row.values(columns)))?;
    Ok((changed == 1).then(|| conn.last_insert_rowid()))
}

/// Inserts `rows` (at most [`ROWS_PER_INSERT`]) in one statement; calls `stored` with the id
/// and columns of each whose uid was new, and returns how many were.
fn insert_rows(
    conn: &Connection,
    rows: &[(Row<'_>, &Columns)],
    mut stored: impl FnMut(i64, &Columns) -> Result<()>,
) -> Result<usize> {
    static FULL: LazyLock<String> = LazyLock::new(|| insert_returning_sql(ROWS_PER_INSERT));
    if rows.is_empty() {
        return Ok(0);
    }
    // A batch's last few rows go in a statement of their own size, not kept: kept, such
    // statements would push the statements every write uses out of the connection's cache.
    let (mut cached, mut once);
    let stmt: &mut rusqlite::Statement<'_> = if rows.len() == ROWS_PER_INSERT {
        cached = conn.prepare_cached(&FULL)?;
        &mut cached
    } else {
        once = conn.prepare(&insert_returning_sql(rows.len()))?;
        &mut once
    };
    let values = rows.iter().flat_map(|(row, columns)| row.values(columns));
    let mut new = stmt.query(rusqlite::params_from_iter(values))?;
    let mut count = 0;
    // Past the last row found: new rows come back in the order they were given, so each is
    // looked for from there rather than among every row before it.
    let mut next = 0;
    while let Some(r) = new.next()? {
        let id: i64 = r.get(0)?;
        let uid = r.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
        // Its own row: a uid twice among `rows` was stored the first time.
        let of = |from: usize| rows[from..].iter().position(|(row, _)| row.event.uid == uid);
        let own = of(next).map(|at| next + at).or_else(|| of(0));
        if let Some(at) = own {
            stored(id, rows[at].1)?;
            count += 1;
            next = at + 1;
        }
    }
    Ok(count)
}

fn insert_hook_run(conn: &Connection, run: &HookRun<'_>) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO hook_runs (at, agent, event_name, outcome, detail, duration_us, event_uid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    stmt.execute(params![
        run.at_ms,
        run.agent,
        run.event_name,
        run.outcome,
        run.detail,
        run.duration_us,
        run.event_uid
    ])?;
    Ok(())
}

fn recent_events(
    conn: &Connection,
    session_id: i64,
    window: DedupeWindow,
) -> Result<Vec<RecentEvent>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, kind, at, content_hash, body FROM events
         WHERE session_id = ?1 AND at >= ?2 ORDER BY id DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![session_id, window.since_ms, window.events as i64], |r| {
        Ok(RecentEvent {
            id: r.get(0)?,
            kind: r.get(1)?,
            at_ms: r.get(2)?,
            content_hash: r.get(3)?,
            body: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventKind, Sensitivity};
    use crate::store::search::SearchQuery;

    pub(crate) fn event(uid: &str, session: &str, body: &str) -> Event {
        Event {
            uid: uid.into(),
            agent: "codex".into(),
            kind: EventKind::Prompt,
            source_event: "UserPromptSubmit".into(),
            session: session.into(),
            cwd: Some("/w/app".into()),
            at_ms: 1_000,
            tool: None,
            tool_kind: None,
            summary: format!("Prompt: {body}"),
            body: body.into(),
            payload: serde_json::json!({ "prompt": body }),
            files: vec![],
            sensitivity: Sensitivity::Normal,
            transcript_path: None,
            facts: Default::default(),
        }
    }

    fn project() -> ProjectIdentity {
        ProjectIdentity {
            key: "path:/w/app".into(),
            root: "/w/app".into(),
            name: "app".into(),
            origin: None,
            branch: None,
        }
    }

    fn seeded(bodies: &[&str]) -> Store {
        let mut store = Store::open_in_memory().expect("store");
        let items: Vec<_> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| (event(&format!("u{i}"), "s", b), format!("h{i}"), project()))
            .collect();
        assert_eq!(store.write_recovered(&items, &[]).expect("write"), bodies.len());
        store
    }

    fn query(text: &str) -> SearchQuery {
        SearchQuery { text: text.into(), limit: 10, max_terms: 12, ..SearchQuery::default() }
    }

    /// [`query`] with no context: only what holds the words is found, not what is next to it
    /// or in its session.
    fn words_only(text: &str) -> SearchQuery {
        let mut q = query(text);
        q.ranking.neighbour_weight = 0.0;
        q.ranking.session_weight = 0.0;
        q.ranking.session_text_weight = 0.0;
        q
    }

    /// An event as the store reads it back, by uid.
    fn read_back(store: &Store, uid: &str) -> Event {
        store
            .conn()
            .query_row(
                &format!(
                    "SELECT {EVENT_COLUMNS} FROM events e JOIN sessions s ON s.id = e.session_id
                     WHERE e.uid = ?1"
                ),
                [uid],
                |r| event_from_row(r, 0),
            )
            .expect("read back")
    }

    /// The record of a Codex prompt hook at `at_ms`, as a hook's writer is handed it.
    fn prompt_run(at_ms: i64) -> HookRun<'static> {
        HookRun {
            at_ms,
            agent: "codex",
            event_name: "UserPromptSubmit",
            outcome: "",
            detail: None,
            duration_us: 0,
            event_uid: None,
        }
    }

    /// The bulk writer, which has its columns and index text worked out on another thread,
    /// stores an event exactly as the hook's writer does: the same row, and the same text in
    /// the full-text index as the trigger writes.
    #[test]
    fn a_bulk_write_stores_and_indexes_an_event_as_the_hook_does() {
        let mut one = event("u1", "s", "Deployed the Büro service in März, ran `cargo test`");
        one.at_ms = 1_773_100_800_000;
        one.files = vec!["src/büro.rs".into()];
        one.facts.command = Some("cargo test".into());
        let mut hooked = Store::open_in_memory().expect("store");
        hooked
            .write_event(&one, "h", &project(), None, &prompt_run(one.at_ms), Instant::now())
            .expect("hook write");
        let mut bulk = Store::open_in_memory().expect("store");
        let item = Bulk {
            event: one.clone(),
            hash: "h".into(),
            project: Arc::new(project()),
            columns: Columns::of(&one),
        };
        assert_eq!(bulk.write_many(&[item], &[], 0).expect("bulk write"), 1);
        let row = |store: &Store| -> (String, String, String) {
            store
                .conn()
                .query_row("SELECT payload, files, summary || body FROM events", [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .expect("row")
        };
        assert_eq!(row(&bulk), row(&hooked));
        let indexed = |store: &Store| -> Vec<String> {
            let mut stmt = store
                .conn()
                .prepare("SELECT term FROM events_fts_terms WHERE col = 'text' ORDER BY term")
                .expect("prepare");
            stmt.query_map([], |r| r.get(0)).expect("terms").map(|t| t.expect("term")).collect()
        };
        for store in [&hooked, &bulk] {
            store
                .conn()
                .execute_batch(
                    "CREATE VIRTUAL TABLE temp.events_fts_terms USING fts5vocab(main, events_fts, instance)",
                )
                .expect("vocabulary");
        }
        let terms = indexed(&hooked);
        assert!(terms.iter().any(|t| t == "deploy"), "{terms:?}");
        assert_eq!(indexed(&bulk), terms);
    }

    /// A bulk write inserts many rows a statement: across more than one statement, with uids
    /// stored already and a uid given twice, it stores each new event once and indexes each
    /// under its own row.
    #[test]
    fn a_bulk_write_indexes_each_new_row_under_its_own_id_and_skips_stored_uids() {
        let mut store = Store::open_in_memory().expect("store");
        let item = |n: usize| {
            let one = event(&format!("u{n}"), "s", &format!("step{n} of the rollout"));
            let columns = Columns::of(&one);
            Bulk { event: one, hash: format!("h{n}"), project: Arc::new(project()), columns }
        };
        let first: Vec<Bulk> = (0..5).map(item).collect();
        assert_eq!(store.write_many(&first, &[], 0).expect("first write"), 5);
        let mut items: Vec<Bulk> = (0..ROWS_PER_INSERT + 10).map(item).collect();
        items.insert(20, item(12));
        let added = store.write_many(&items, &[], 0).expect("second write");
        assert_eq!(added, ROWS_PER_INSERT + 10 - 5);
        let count: i64 =
            store.conn().query_row("SELECT count(*) FROM events", [], |r| r.get(0)).expect("count");
        assert_eq!(count, ROWS_PER_INSERT as i64 + 10);
        for n in [0, 7, 12, ROWS_PER_INSERT, ROWS_PER_INSERT + 9] {
            let uid: String = store
                .conn()
                .query_row(
                    "SELECT e.uid FROM events_fts f JOIN events e ON e.id = f.rowid
                     WHERE events_fts MATCH ?1",
                    [format!("step{n}")],
                    |r| r.get(0),
                )
                .expect("one row holds the word");
            assert_eq!(uid, format!("u{n}"));
        }
    }

    /// The copier copies the log from its own connection while the store stays open, and once
    /// all of it is copied the next write starts the log again from its beginning instead of
    /// growing it.
    #[test]
    fn the_log_is_copied_back_beside_the_writer_and_then_starts_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store =
            Store::open(&dir.path().join("memory.db"), Duration::from_millis(100)).expect("store");
        let batch = |from: usize| -> Vec<Bulk> {
            (from..from + 50)
                .map(|n| {
                    let one = event(&format!("u{n}"), "s", &format!("step{n} of the rollout"));
                    let columns = Columns::of(&one);
                    Bulk {
                        event: one,
                        hash: format!("h{n}"),
                        project: Arc::new(project()),
                        columns,
                    }
                })
                .collect()
        };
        // (busy, frames in the log, frames copied back), without copying anything more.
        let log = |store: &Store| -> (i64, i64, i64) {
            let copier = store.log_copier().expect("open").expect("a file");
            copier
                .conn
                .query_row("PRAGMA wal_checkpoint(NOOP)", [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .unwrap_or((1, -1, -1))
        };
        store.write_many(&batch(0), &[], 0).expect("first batch");
        store.write_many(&batch(50), &[], 0).expect("second batch");
        let copier = store.log_copier().expect("open").expect("a file");
        copier.copy_log_back().expect("copy beside");
        let (_, frames, copied) = log(&store);
        assert!(frames > 0 && copied == frames, "copied {copied} of {frames} frames");
        store.write_many(&batch(100), &[], 0).expect("a batch after");
        let (_, restarted, _) = log(&store);
        assert!(restarted < frames, "the log started again: {restarted} frames, {frames} before");
        let count: i64 =
            store.conn().query_row("SELECT count(*) FROM events", [], |r| r.get(0)).expect("count");
        assert_eq!(count, 150);
    }

    /// A tool use's facts round-trip through the store and an export; an event written before
    /// they existed (a payload without them) reads with them derived, as the adapter would have.
    #[test]
    fn tool_facts_round_trip_and_are_derived_for_older_events() {
        let payload = serde_json::json!({
            "session_id": "s", "cwd": "/w/app", "tool_name": "apply_patch",
            "tool_input": { "command": "*** Begin Patch\n*** Add File: src/new.rs\n+x\n*** End Patch" },
            "tool_response": "Success",
        });
        let ctx = crate::event::CaptureContext {
            uid: "t1",
            agent: "codex",
            event_name: "PostToolUse",
            received_at_ms: 1_000,
        };
        let Ok(crate::adapter::Normalized::Event(tool)) = crate::adapter::normalize(&ctx, &payload)
        else {
            panic!("a tool use")
        };
        assert_eq!(tool.facts.created, ["src/new.rs"]);
        let mut store = Store::open_in_memory().expect("store");
        let items = [((*tool).clone(), "h".to_owned(), project())];
        store.write_recovered(&items, &[]).expect("write");
        assert_eq!(read_back(&store, "t1"), *tool, "facts round-trip; the payload is as given");

        // As a version without facts wrote it: they come back derived.
        store
            .conn()
            .execute("UPDATE events SET payload = ?1 WHERE uid = 't1'", [tool.payload.to_string()])
            .expect("older row");
        assert_eq!(read_back(&store, "t1").facts, tool.facts);

        let mut exported = Vec::new();
        store.export(&mut exported, &transfer::ExportFilter::default(), 2_000).expect("export");
        let mut other = Store::open_in_memory().expect("store");
        other
            .import(
                &mut &exported[..],
                &|_| {},
                &|t| t.to_owned(),
                transfer::ImportTrust::OwnExports,
            )
            .expect("import");
        assert_eq!(read_back(&other, "t1").facts, tool.facts);
    }

    #[test]
    fn migrations_apply_once_and_refuse_a_newer_schema() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("home/memory.db");
        drop(Store::open(&path, Duration::from_millis(100)).expect("create"));
        drop(Store::open(&path, Duration::from_millis(100)).expect("reopen is a no-op"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().expect("dir")), 0o700);
        }
        let conn = Connection::open(&path).expect("raw");
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).expect("bump");
        drop(conn);
        let err = Store::open(&path, Duration::from_millis(100)).expect_err("too new");
        assert!(err.to_string().contains("upgrade agent-memory"), "{err}");
    }

    #[test]
    fn a_new_store_takes_the_page_size_and_an_older_one_keeps_its_own() {
        let dir = tempfile::tempdir().expect("tempdir");
        let page_size = |store: &Store| -> i64 {
            store.conn().query_row("PRAGMA page_size", [], |r| r.get(0)).expect("page size")
        };
        let leaf = |store: &Store| -> Option<i64> {
            store
                .conn()
                .query_row("SELECT v FROM events_fts_config WHERE k = 'pgsz'", [], |r| r.get(0))
                .optional()
                .expect("index config")
        };
        let fresh = dir.path().join("fresh/memory.db");
        let store = Store::open(&fresh, Duration::from_millis(100)).expect("create");
        assert_eq!(page_size(&store), i64::from(PAGE_SIZE));
        assert_eq!(leaf(&store), Some(i64::from(EVENT_INDEX_LEAF)));
        drop(store);
        let store = Store::open(&fresh, Duration::from_millis(100)).expect("reopen");
        assert_eq!(page_size(&store), i64::from(PAGE_SIZE));
        drop(store);
        // A store made with SQLite's default pages, as every store was before, keeps them, and
        // its events stay readable and writable.
        let older = dir.path().join("older/memory.db");
        std::fs::create_dir_all(older.parent().expect("dir")).expect("dir");
        let conn = Connection::open(&older).expect("raw");
        conn.execute_batch("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;").expect("old");
        drop(conn);
        let mut store = Store::open(&older, Duration::from_millis(100)).expect("migrate");
        assert_eq!(page_size(&store), 4096);
        assert_eq!(leaf(&store), None, "FTS5's default leaf fits a 4 KiB page");
        let said = event("t1", "s", "Kept the older pages");
        store
            .write_event(&said, "h1", &project(), None, &prompt_run(1), Instant::now())
            .expect("write");
        drop(store);
        let store = Store::open(&older, Duration::from_millis(100)).expect("reopen");
        assert_eq!(page_size(&store), 4096);
        assert_eq!(read_back(&store, "t1").uid, "t1");
    }

    /// A store file at `path` as the version with schema `version` left it.
    fn schema_at(path: &Path, version: i64) -> Connection {
        let conn = Connection::open(path).expect("raw");
        let deferred = Arc::new(AtomicBool::new(false));
        register_functions(&conn, &deferred).expect("functions");
        for sql in &MIGRATIONS[..version as usize] {
            conn.execute_batch(sql).expect("old migration");
        }
        conn.pragma_update(None, "user_version", version).expect("version");
        conn
    }

    #[test]
    fn every_earlier_schema_upgrades_with_its_data() {
        // A store as each earlier version left it: its migrations applied, an event written.
        for version in 1..SCHEMA_VERSION {
            let dir = tempfile::tempdir().expect("tempdir");
            let path = dir.path().join("memory.db");
            {
                let conn = schema_at(&path, version);
                conn.execute_batch(
                    "INSERT INTO projects (id, key, name, root, created_at) VALUES (1, 'path:/w', 'w', '/w', 0);
                     INSERT INTO sessions (id, agent, source_id, project_id, started_at, last_event_at)
                         VALUES (1, 'codex', 's', 1, 0, 0);
                     INSERT INTO events (uid, session_id, project_id, agent, kind, source_event, at,
                                         summary, body, content_hash)
                         VALUES ('u1', 1, 1, 'codex', 'prompt', 'x', 0, 'Prompt: 支付回调', '支付回调', 'h');",
                )
                .expect("old data");
                if version >= 2 {
                    conn.execute_batch(
                        "INSERT INTO observations (session_id, project_id, agent, mode, kind, title,
                                                   at, tokens, work_tokens, distiller, source_key)
                             VALUES (1, 1, 'codex', 'code', 'bugfix', 'Tests failing on parsing',
                                     0, 5, 50, 'offline', 'k1');",
                    )
                    .expect("old observation");
                }
            }
            if version >= 4 {
                let conn = Connection::open(&path).expect("raw");
                conn.execute(
                    "INSERT INTO vectors (item_kind, item_id, model, dim, vec)
                     VALUES ('observation', 1, 'm', 2, x'0000803f00000000')",
                    [],
                )
                .expect("old vector");
            }
            let mut store = Store::open(&path, Duration::from_millis(100)).expect("upgrade");
            let now: i64 =
                store.conn().query_row("PRAGMA user_version", [], |r| r.get(0)).expect("v");
            assert_eq!(now, SCHEMA_VERSION, "from version {version}");
            if version >= 4 {
                // The vector moved with its table, and the counts of changes did not move.
                assert_eq!(store.vector_index("m", 2).expect("index").len(), 1, "from {version}");
                let added: i64 = store
                    .conn()
                    .query_row("SELECT added FROM vector_changes WHERE model = 'm'", [], |r| {
                        r.get(0)
                    })
                    .unwrap_or(0);
                assert_eq!(added, 1, "from {version}");
                store.save_vectors("m", &[("observation", 1, vec![0.0, 1.0])]).expect("upsert");
                assert_eq!(store.vector_index("m", 2).expect("index").len(), 1, "from {version}");
            }
            assert_eq!(
                store.search(&query("回调")).expect("search").hits.len(),
                1,
                "from {version}"
            );
            if version >= 2 {
                // The index was rebuilt with stems: other forms of its words find it.
                let mut failed = query("failed test parse");
                failed.kinds = vec!["observation".into()];
                let hits = store.search(&failed).expect("search").hits;
                assert_eq!(hits.len(), 1, "from {version}: {hits:?}");
            }
        }
    }

    #[test]
    fn raw_events_are_found_by_other_forms_of_their_words_their_date_and_their_neighbours() {
        // Noon UTC, so the local day is the same in any zone a test machine has.
        const MARCH_10_2026: i64 = 1_773_144_000_000;
        let mut store = Store::open_in_memory().expect("store");
        let said = [
            "The parser failed on tests with tabs",
            "Which queue does the billing worker read from?",
            "It reads jobs from the redis stream named invoices",
            "Sourdough needs a long rise",
            "Lunch was good",
        ];
        let items: Vec<_> = said
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut e = event(&format!("u{i}"), "s", b);
                e.at_ms = MARCH_10_2026 + i as i64 * 60_000;
                (e, format!("h{i}"), project())
            })
            .collect();
        store.write_recovered(&items, &[]).expect("write");
        let mut q = query("parsing fails");
        q.kinds = vec!["event".into()];
        let hits = store.search(&q).expect("search").hits;
        assert_eq!(
            hits.first().map(|h| h.title.as_str()),
            Some("Prompt: The parser failed on tests with tabs")
        );
        // The answer shares no word with the question; the prompt before it does.
        q.text = "billing worker queue".into();
        let hits = store.search(&q).expect("search").hits;
        // The question and its answer, which holds all of the question's evidence.
        let first_two: Vec<&str> = hits.iter().take(2).map(|h| h.title.as_str()).collect();
        assert!(first_two.iter().any(|t| t.contains("Which queue")), "{first_two:?}");
        let answer = hits.iter().take(2).find(|h| h.title.contains("It reads jobs"));
        let answer = answer.unwrap_or_else(|| panic!("the answer: {hits:?}"));
        assert!(answer.parts.bm25.is_none() && answer.parts.neighbours > 0.0, "{hits:?}");
        q.text = "sourdough in March".into();
        q.ranking.neighbour_weight = 0.0;
        let hits = store.search(&q).expect("search").hits;
        assert!(hits[0].title.contains("Sourdough"), "{hits:?}");
        assert_eq!(hits.len(), said.len(), "every event of that March day: {hits:?}");
    }

    #[test]
    fn events_stored_before_their_index_held_stems_are_found_meanwhile_and_indexed_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("memory.db");
        {
            // The store as the version before left it: events indexed by their words only.
            let conn = schema_at(&path, 14);
            conn.execute_batch(
                "INSERT INTO projects (id, key, name, root, created_at) VALUES (1, 'path:/w', 'w', '/w', 0);
                 INSERT INTO sessions (id, agent, source_id, project_id, started_at, last_event_at)
                     VALUES (1, 'codex', 's', 1, 0, 0);
                 INSERT INTO events (uid, session_id, project_id, agent, kind, source_event, at,
                                     summary, body, content_hash)
                     VALUES ('u1', 1, 1, 'codex', 'prompt', 'x', 0, 'Prompt: tests failing', 'tests failing', 'h1'),
                            ('u2', 1, 1, 'codex', 'prompt', 'x', 0, 'Prompt: deploy', 'deploy', 'h2');",
            )
            .expect("old data");
        }
        let mut store = Store::open(&path, Duration::from_millis(100)).expect("upgrade");
        let found =
            |store: &Store, text: &str| store.search(&words_only(text)).expect("search").hits.len();
        // Meanwhile the words as written still find the old events, and a new event is indexed
        // with its stems at once.
        assert_eq!(found(&store, "failing"), 1);
        assert_eq!(found(&store, "failed"), 0, "not indexed again yet");
        store
            .write_recovered(&[(event("u3", "s", "builds failing"), "h3".into(), project())], &[])
            .expect("write");
        assert_eq!(found(&store, "build"), 1);
        assert_eq!(store.restem_events(1, 10).expect("restem"), 2);
        assert_eq!(store.events_to_restem().expect("left"), 0);
        assert_eq!(found(&store, "failed"), 2);
        assert_eq!(found(&store, "deploying"), 1);
        assert_eq!(store.restem_events(1, 10).expect("again"), 0, "nothing is done twice");
    }

    #[test]
    fn other_forms_of_a_word_find_distilled_items() {
        let store = observed(&[
            ("bugfix", "The parser failed on tests with tabs", 1_000),
            ("bugfix", "Parsing fails when a test has tabs", 1_000),
            ("discovery", "Sourdough needs a long rise", 1_000),
        ]);
        let mut q = query("parsing failed tests");
        q.kinds = vec!["observation".into()];
        q.ranking.neighbour_weight = 0.0;
        q.ranking.session_weight = 0.0;
        q.ranking.session_text_weight = 0.0;
        let hits = store.search(&q).expect("search").hits;
        let titles: Vec<&str> = hits.iter().map(|h| h.title.as_str()).collect();
        assert_eq!(titles.len(), 2, "{titles:?}");
        q.ranking.stemming = false;
        let exact = store.search(&q).expect("search").hits;
        assert!(exact.iter().all(|h| !h.title.contains("Sourdough")));
        // `fails` and `failed` share the stem `fail`; `parser` and `parsing` do not share one.
        q.text = "fails".into();
        q.ranking.stemming = true;
        assert_eq!(store.search(&q).expect("search").hits.len(), 2);
        q.ranking.stemming = false;
        assert_eq!(store.search(&q).expect("search").hits.len(), 1);
    }

    #[test]
    fn an_item_next_to_a_match_is_found_through_its_neighbour() {
        // The answer shares no word with the question; the item before it does.
        let store = observed(&[
            ("discovery", "Which queue does the billing worker read from?", 1_000),
            ("discovery", "It reads jobs from the redis stream named invoices", 2_000),
            ("discovery", "Sourdough needs a long rise", 3_000),
            ("discovery", "Lunch was good", 4_000),
            ("discovery", "Weather is fine", 5_000),
            ("discovery", "Nothing else here", 6_000),
        ]);
        let mut q = query("billing worker queue");
        q.kinds = vec!["observation".into()];
        let hits = store.search(&q).expect("search").hits;
        let titles: Vec<&str> = hits.iter().map(|h| h.title.as_str()).collect();
        assert!(titles[..2].iter().any(|t| t.starts_with("Which queue")), "{titles:?}");
        let answer = hits.iter().take(2).find(|h| h.title.starts_with("It reads jobs"));
        let answer = answer.unwrap_or_else(|| panic!("the answer: {titles:?}"));
        assert!(answer.parts.bm25.is_none() && answer.parts.neighbours > 0.0, "{hits:?}");
        assert!(!titles.contains(&"Weather is fine"), "three away is no neighbour: {titles:?}");
        q.ranking.neighbour_weight = 0.0;
        assert_eq!(store.search(&q).expect("search").hits.len(), 1);
        // A neighbour must pass the filters too.
        q.ranking.neighbour_weight = 0.5;
        q.types = vec!["bugfix".into()];
        assert!(store.search(&q).expect("search").hits.is_empty());
    }

    #[test]
    fn a_summary_holding_only_what_was_asked_leaves_search_to_the_prompt_it_quotes() {
        let mut store = Store::open_in_memory().expect("store");
        let items: Vec<_> = [("a", "Rotate the staging keys"), ("b", "Rotate the staging certs")]
            .iter()
            .map(|(session, text)| {
                (event(session, session, text), format!("h{session}"), project())
            })
            .collect();
        store.write_recovered(&items, &[]).expect("write");
        store
            .conn
            .execute_batch(
                "INSERT INTO summaries (session_id, project_id, agent, mode, request, learned, at,
                                        through_event_id, tokens, work_tokens, distiller)
                 SELECT s.id, s.project_id, 'codex', 'code', e.body,
                        CASE s.source_id WHEN 'b' THEN '[\"certs expire yearly\"]' ELSE '[]' END,
                        e.at, e.id, 10, 10, 'offline'
                 FROM sessions s JOIN events e ON e.session_id = s.id",
            )
            .expect("summaries");
        let hits = store.search(&query("rotate staging")).expect("search").hits;
        let found: Vec<(&str, &str)> = hits.iter().map(|h| (h.kind, h.session.as_str())).collect();
        assert!(found.contains(&("event", "a")) && found.contains(&("event", "b")), "{found:?}");
        assert!(found.contains(&("summary", "b")), "a summary that learned something: {found:?}");
        assert!(!found.contains(&("summary", "a")), "the prompt said again: {found:?}");
    }

    #[test]
    fn the_answer_right_after_a_question_gets_more_of_its_evidence_than_other_neighbours() {
        let store = observed(&[
            ("discovery", "Lunch was good", 1_000),
            ("discovery", "Which queue does the billing worker read from?", 2_000),
            ("discovery", "The redis stream named invoices", 3_000),
            ("discovery", "Sourdough needs a long rise", 4_000),
            ("discovery", "The billing worker was rewritten in Rust", 5_000),
            ("discovery", "Weather is fine", 6_000),
        ]);
        let mut q = query("billing worker queue");
        q.kinds = vec!["observation".into()];
        q.ranking.session_weight = 0.0;
        q.ranking.session_text_weight = 0.0;
        let hits = store.search(&q).expect("search").hits;
        let lifted = |title: &str| {
            hits.iter().find(|h| h.title == title).map_or(0.0, |h| h.parts.neighbours)
        };
        // The answer to the question gets all of the question's evidence; the item before it,
        // and the item after a statement, half.
        let answer = lifted("The redis stream named invoices");
        assert!(answer > 1.5 * lifted("Lunch was good"), "{hits:?}");
        assert!(answer > 1.5 * lifted("Weather is fine"), "{hits:?}");
        let at = |title: &str| hits.iter().position(|h| h.title == title);
        assert!(at("The redis stream named invoices") < at("Lunch was good"), "{hits:?}");
        q.ranking.answer_weight = q.ranking.neighbour_weight;
        let even = store.search(&q).expect("search").hits;
        let even_answer = even.iter().find(|h| h.title.starts_with("The redis")).expect("found");
        assert!(even_answer.parts.neighbours < answer, "{even:?}");
    }

    #[test]
    fn a_query_naming_a_month_or_weekday_finds_what_was_done_then() {
        // Noon UTC, so the local day is the same in any zone a test machine has.
        const MARCH_10_2026: i64 = 1_773_144_000_000;
        const MAY_20_2026: i64 = 1_779_278_400_000;
        let store = observed(&[
            ("bugfix", "Upload retries fixed", MARCH_10_2026),
            ("bugfix", "Upload timeouts fixed", MAY_20_2026),
        ]);
        assert!(fts::date_words(MARCH_10_2026).contains("March 2026"));
        let mut q = query("upload fix in March");
        q.kinds = vec!["observation".into()];
        q.ranking.neighbour_weight = 0.0;
        q.ranking.session_weight = 0.0;
        q.ranking.session_text_weight = 0.0;
        let hits = store.search(&q).expect("search").hits;
        assert_eq!(hits[0].title, "Upload retries fixed", "{hits:?}");
        q.text = "upload fix on Wednesday".into();
        let hits = store.search(&q).expect("search").hits;
        assert_eq!(hits[0].title, "Upload timeouts fixed", "{hits:?}");
    }

    #[test]
    fn a_session_holding_the_query_words_between_its_items_ranks_them_first() {
        // Session `s-a` holds both words, each in another item; `s-b` holds one, in a shorter
        // item that full text alone ranks first.
        let sessions: [(&str, &[&str]); 3] = [
            (
                "s-a",
                &[
                    "The deploy failed yesterday after a long merge of many branches",
                    "Staging was rolled back by hand",
                ],
            ),
            ("s-b", &["Deploy docs updated"]),
            ("s-c", &["Lunch was good", "Weather is fine", "Sourdough needs a rise", "Tea"]),
        ];
        let mut events = Vec::new();
        for (session, titles) in sessions {
            for n in 0..titles.len() {
                let e = event(&format!("u-{session}-{n}"), session, "work");
                events.push((e, format!("h-{session}-{n}"), project()));
            }
        }
        let mut store = Store::open_in_memory().expect("open");
        store.write_recovered(&events, &[]).expect("write");
        let provenance = distilled::Provenance { mode: "code", distiller: "offline" };
        for session in store.pending_sessions(10).expect("pending") {
            assert!(store.claim_session(session.session_id, "t", 0, 60_000).expect("claim"));
            let stored = store.session_events(session.session_id, 0).expect("events");
            let titles = sessions.iter().find(|(s, _)| *s == stored[0].event.session).expect("s").1;
            let drafts: Vec<_> = stored
                .iter()
                .zip(titles)
                .map(|(e, title)| {
                    let draft = crate::distil::ObservationDraft {
                        title: (*title).into(),
                        kind: "change".into(),
                        source_event_ids: vec![e.id],
                        at_ms: e.event.at_ms,
                        ..Default::default()
                    };
                    (draft, 10, 100)
                })
                .collect();
            store.save_observations(&session, "t", provenance, &drafts, i64::MAX).expect("save");
        }
        let mut q = query("deploy staging");
        q.kinds = vec!["observation".into()];
        q.ranking.neighbour_weight = 0.0;
        q.ranking.session_weight = 0.0;
        q.ranking.session_text_weight = 0.0;
        let place =
            |hits: &[search::SearchHit], title: &str| hits.iter().position(|h| h.title == title);
        let (short, long) = (
            "Deploy docs updated",
            "The deploy failed yesterday after a long merge of many branches",
        );
        let alone = store.search(&q).expect("search").hits;
        assert!(place(&alone, short) < place(&alone, long), "{alone:?}");
        q.ranking.session_text_weight = 0.5;
        let hits = store.search(&q).expect("search").hits;
        assert!(place(&hits, long) < place(&hits, short), "{hits:?}");
        assert_eq!(hits.last().map(|h| h.title.as_str()), Some(short), "{hits:?}");
        assert!(hits.iter().all(|h| h.parts.session > 0.0), "{hits:?}");
    }

    #[test]
    fn a_query_naming_a_file_ranks_what_changed_it_first() {
        let bodies: Vec<String> = (0..8).map(|i| format!("event {i}")).collect();
        let mut store = seeded(&bodies.iter().map(String::as_str).collect::<Vec<_>>());
        let session = store.pending_sessions(10).expect("pending")[0].clone();
        assert!(store.claim_session(session.session_id, "t", 0, 60_000).expect("claim"));
        let draft = |i: i64, title: &str, files: &[&str]| {
            let draft = crate::distil::ObservationDraft {
                title: title.into(),
                kind: "change".into(),
                source_event_ids: vec![i],
                at_ms: i * 1_000,
                files_modified: files.iter().map(|f| (*f).to_owned()).collect(),
                ..Default::default()
            };
            (draft, 10, 100)
        };
        let mut drafts = vec![
            draft(1, "config.rs retry limit", &[]),
            draft(2, "Raised the retry limit of the upload worker", &["src/config.rs"]),
        ];
        for (i, filler) in
            ["Lunch", "Weather", "Sourdough", "Tea", "Coffee", "Rain"].iter().enumerate()
        {
            drafts.push(draft(i as i64 + 3, filler, &[]));
        }
        let provenance = distilled::Provenance { mode: "code", distiller: "offline" };
        store.save_observations(&session, "t", provenance, &drafts, 8).expect("save");
        let mut q = query("retry limit config.rs");
        q.kinds = vec!["observation".into()];
        q.ranking.neighbour_weight = 0.0;
        q.ranking.session_weight = 0.0;
        q.ranking.session_text_weight = 0.0;
        q.ranking.named_weight = 0.0;
        let hits = store.search(&q).expect("search").hits;
        assert_eq!(hits[0].title, "config.rs retry limit", "{hits:?}");
        q.ranking.named_weight = 0.7;
        let hits = store.search(&q).expect("search").hits;
        assert!(hits[0].title.starts_with("Raised the retry limit"), "{hits:?}");
        assert!(hits[0].parts.named > 0.0 && hits[1].parts.named == 0.0, "{hits:?}");
        // A version number is no file name.
        q.text = "retry limit 1.2".into();
        let hits = store.search(&q).expect("search").hits;
        assert!(hits.iter().all(|h| h.parts.named == 0.0), "{hits:?}");

        // An event that touched the file counts more, as an observation does.
        let mut edit = event("u-edit", "s2", "Edit the retry limit");
        edit.kind = EventKind::ToolUse;
        edit.files = vec!["src/config.rs".into()];
        let other = event("u-other", "s2", "Talk about the retry limit");
        store
            .write_recovered(
                &[(edit, "h-edit".into(), project()), (other, "h-other".into(), project())],
                &[],
            )
            .expect("write");
        q.text = "retry limit config.rs".into();
        q.kinds = vec!["event".into()];
        let hits = store.search(&q).expect("search").hits;
        assert_eq!(hits[0].title, "Prompt: Edit the retry limit", "{hits:?}");
        assert!(hits[0].parts.named > 0.0 && hits[1].parts.named == 0.0, "{hits:?}");
    }

    #[test]
    fn a_query_naming_an_agent_or_project_ranks_its_items_first() {
        let mut events = Vec::new();
        for (agent, session) in [("codex", "s-codex"), ("claude-code", "s-claude")] {
            let mut e = event(&format!("u-{agent}"), session, "make the upload test pass");
            e.agent = agent.into();
            events.push((e, format!("h-{agent}"), project()));
        }
        let mut store = Store::open_in_memory().expect("open");
        store.write_recovered(&events, &[]).expect("write");
        let provenance = distilled::Provenance { mode: "code", distiller: "offline" };
        for session in store.pending_sessions(10).expect("pending") {
            assert!(store.claim_session(session.session_id, "t", 0, 60_000).expect("claim"));
            let made_from = store.session_events(session.session_id, 0).expect("events")[0].id;
            let draft = crate::distil::ObservationDraft {
                title: "The upload test retries three times".into(),
                kind: "bugfix".into(),
                source_event_ids: vec![made_from],
                at_ms: 1_000,
                ..Default::default()
            };
            store
                .save_observations(&session, "t", provenance, &[(draft, 10, 100)], i64::MAX)
                .expect("save");
        }
        let mut q = query("how did claude fix the upload test");
        q.kinds = vec!["observation".into()];
        q.ranking.named_weight = 0.4;
        let hits = store.search(&q).expect("search").hits;
        assert_eq!(hits.len(), 2, "{hits:?}");
        assert_eq!(hits[0].agent, "claude-code", "an alias names the agent: {hits:?}");
        assert!(hits[0].parts.named > 0.0 && hits[1].parts.named == 0.0, "{hits:?}");
        q.text = "what did Codex's run change in the upload test".into();
        assert_eq!(store.search(&q).expect("search").hits[0].agent, "codex");
        // A name written against Chinese text still names its agent.
        for (text, agent) in
            [("claude修改了 upload test", "claude-code"), ("codex修改了 upload test", "codex")]
        {
            q.text = text.into();
            let hits = store.search(&q).expect("search").hits;
            assert!(hits[0].agent == agent && hits[0].parts.named > 0.0, "{text}: {hits:?}");
        }
        // A project named boosts every item of it alike.
        q.text = "upload test in app".into();
        let hits = store.search(&q).expect("search").hits;
        assert!(hits.iter().all(|h| h.parts.named > 0.0), "{hits:?}");
    }

    #[test]
    fn uids_make_writes_idempotent() {
        let mut store = seeded(&["first"]);
        let again = vec![(event("u0", "s", "first"), "h0".to_owned(), project())];
        assert_eq!(store.write_recovered(&again, &[]).expect("write"), 0);
    }

    #[test]
    fn fts_finds_cjk_words_and_ranks_by_bm25() {
        let store = seeded(&["修复支付回调的签名校验", "支付页面", "回调 回调 回调 webhook 回调"]);
        let hits = store.search(&words_only("回调")).expect("search").hits;
        assert_eq!(hits.len(), 2);
        assert!(hits[0].title.contains("webhook"), "more occurrences rank first: {hits:?}");
        assert_eq!(store.search(&words_only("支付回调")).expect("search").hits.len(), 1);
        assert!(store.search(&query("?!")).expect("search").hits.is_empty());
    }

    #[test]
    fn rows_with_every_term_come_first_and_any_term_fills_up() {
        let store = seeded(&[
            "webhook signature check",
            "webhook retry policy",
            "signature of the release",
            "the unrelated note",
        ]);
        let narrow = SearchQuery { limit: 1, ..words_only("the webhook signature") };
        let hits = store.search(&narrow).expect("search").hits;
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].title, "Prompt: webhook signature check");
        // Fewer rows hold both words than asked for: rows with either come in, none with only
        // the function word.
        let wide = store.search(&words_only("the webhook signature")).expect("search").hits;
        let mut titles: Vec<&str> = wide.iter().map(|h| h.title.as_str()).collect();
        assert_eq!(titles.remove(0), "Prompt: webhook signature check");
        titles.sort_unstable();
        assert_eq!(titles, ["Prompt: signature of the release", "Prompt: webhook retry policy"]);
    }

    #[test]
    fn like_fallback_matches_terms_and_escapes_wildcards() {
        let store = seeded(&["100% done with the_parser", "plain text"]);
        let hits = store.search_like(&query("100%")).expect("like");
        assert_eq!(hits.len(), 1);
        assert_eq!(store.search_like(&query("the_parser")).expect("like").len(), 1);
        assert!(store.search_like(&query("t_e")).expect("like").is_empty(), "_ is not a wildcard");
    }

    #[test]
    fn a_session_lease_keeps_a_second_pass_out_until_it_expires() {
        let mut store = seeded(&["first prompt"]);
        let session = store.pending_sessions(10).expect("pending")[0].clone();
        assert!(store.claim_session(session.session_id, "a", 1_000, 500).expect("claim"));
        assert!(!store.claim_session(session.session_id, "b", 1_200, 500).expect("held"));
        assert!(store.claim_session(session.session_id, "b", 1_600, 500).expect("expired"));
        // The first pass lost its lease: what it tries to store now is refused.
        let saved = store
            .save_observations(
                &session,
                "a",
                distilled::Provenance { mode: "code", distiller: "offline" },
                &[],
                1,
            )
            .expect("save");
        assert_eq!(saved, None);
        store.release_session(session.session_id, "b").expect("release");
        assert!(store.claim_session(session.session_id, "a", 1_700, 500).expect("free again"));
    }

    #[test]
    fn a_lease_taken_by_a_clock_far_ahead_does_not_hold_the_session() {
        let mut store = seeded(&["first prompt"]);
        let session = store.pending_sessions(10).expect("pending")[0].clone();
        let year = 365 * 86_400_000;
        let lease = 120_000;
        assert!(store.claim_session(session.session_id, "ahead", 1_000 + year, lease).expect("a"));
        assert!(
            store.claim_session(session.session_id, "now", 1_000, lease).expect("b"),
            "a lease ending a year from now was not taken by this clock"
        );
        // A lease this clock could have given stays held.
        assert!(!store.claim_session(session.session_id, "other", 2_000, lease).expect("c"));
    }

    #[test]
    fn near_duplicate_veto_runs_inside_the_write() {
        let mut store = seeded(&["run the migrations"]);
        let run = HookRun {
            at_ms: 1_000,
            agent: "codex",
            event_name: "UserPromptSubmit",
            outcome: "stored",
            detail: None,
            duration_us: 0,
            event_uid: Some("u9"),
        };
        let window = DedupeWindow { events: 5, since_ms: 0 };
        let same_hash = |r: &RecentEvent| r.content_hash == "h0";
        let outcome = store
            .write_event(
                &event("u9", "s", "run the migrations"),
                "h0",
                &project(),
                Some((window, &same_hash)),
                &run,
                Instant::now(),
            )
            .expect("write");
        assert_eq!(outcome, WriteOutcome::NearDuplicate { of: 1 });
        let n: i64 =
            store.conn().query_row("SELECT count(*) FROM events", [], |r| r.get(0)).expect("count");
        assert_eq!(n, 1);
        let outcome: String = store
            .conn()
            .query_row("SELECT detail FROM hook_runs ORDER BY id DESC LIMIT 1", [], |r| r.get(0))
            .expect("run");
        assert_eq!(outcome, "near_duplicate");
    }

    /// A store whose one session holds an observation per `(type, title, at_ms)`.
    fn observed(items: &[(&str, &str, i64)]) -> Store {
        let fillers: Vec<String> = (1..items.len()).map(|i| format!("filler {i}")).collect();
        let mut bodies = vec!["first prompt"];
        bodies.extend(fillers.iter().map(String::as_str));
        let mut store = seeded(&bodies);
        let session = store.pending_sessions(10).expect("pending")[0].clone();
        assert!(store.claim_session(session.session_id, "t", 0, 60_000).expect("claim"));
        let drafts: Vec<_> = items
            .iter()
            .enumerate()
            .map(|(i, (kind, title, at_ms))| {
                let draft = crate::distil::ObservationDraft {
                    title: (*title).into(),
                    kind: (*kind).into(),
                    source_event_ids: vec![i as i64 + 1],
                    at_ms: *at_ms,
                    ..Default::default()
                };
                (draft, 10, 100)
            })
            .collect();
        let provenance = distilled::Provenance { mode: "code", distiller: "offline" };
        store.save_observations(&session, "t", provenance, &drafts, 1).expect("save");
        store
    }

    /// The ids of the stored observations, oldest first.
    fn observation_ids(store: &Store) -> Vec<i64> {
        store
            .conn()
            .prepare("SELECT id FROM observations ORDER BY id")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("ids")
    }

    fn unit(v: &[f32]) -> Vec<f32> {
        let mut v = v.to_vec();
        crate::embed::normalize(&mut v);
        v
    }

    #[test]
    fn hybrid_search_merges_channels_and_keeps_weak_vector_hits_out() {
        const DAY: i64 = 86_400_000;
        let mut store = observed(&[
            ("bugfix", "payment callback signature check fixed", 10 * DAY),
            ("change", "webhook verification rewritten", 10 * DAY),
            ("discovery", "sourdough needs a long rise", 10 * DAY),
        ]);
        let ids = observation_ids(&store);
        // Vectors: the query is close to both payment items, far from bread.
        let vectors = vec![
            ("observation", ids[0], unit(&[1.0, 0.2, 0.0])),
            ("observation", ids[1], unit(&[0.9, 0.35, 0.0])),
            ("observation", ids[2], unit(&[0.0, 0.1, 1.0])),
        ];
        store.save_vectors("m", &vectors).expect("vectors");
        // The three prompts they were made from have none yet.
        assert_eq!(store.vector_coverage("m").expect("coverage"), (3, 3));
        let index = store.vector_index("m", 3).expect("index");
        let query_vec = unit(&[1.0, 0.25, 0.0]);
        let vector = search::VectorQuery { index: &index, vector: &query_vec };
        let mut q = query("payment signature");
        // The two channels alone: the context levers are tested on their own.
        q.ranking.neighbour_weight = 0.0;
        q.ranking.session_weight = 0.0;
        q.ranking.session_text_weight = 0.0;
        q.ranking.now_ms = Some(10 * DAY);
        // Either channel's evidence counts in full; the default mix is checked below.
        q.ranking.vector_share = None;

        let bm25_only = store.search(&q).expect("bm25");
        assert_eq!(bm25_only.hits.len(), 1, "only one item has the words: {bm25_only:?}");
        let hybrid = store.search_hybrid(&q, Some(vector)).expect("hybrid");
        assert!(hybrid.semantic);
        let found: Vec<i64> = hybrid.hits.iter().map(|h| h.id).collect();
        assert_eq!(
            found,
            vec![ids[0], ids[1]],
            "the paraphrase comes in through vectors, bread does not"
        );
        let (both, vector_only) = (&hybrid.hits[0].parts, &hybrid.hits[1].parts);
        assert!(both.bm25.is_some() && both.similarity.is_some());
        assert!(vector_only.bm25.is_none() && vector_only.similarity.expect("sim") >= 0.72);
        assert!((both.relevance - 1.0).abs() < 1e-9, "best BM25 normalises to 1: {both:?}");
        let expected = 1.0 - (1.0 - 0.0) * (1.0 - f64::from(vector_only.similarity.expect("sim")));
        assert!((vector_only.relevance - expected).abs() < 1e-6);

        // Mixed in a share: each channel scaled between its weakest and strongest candidate.
        q.ranking.vector_share = Some(0.3);
        let mixed = store.search_hybrid(&q, Some(vector)).expect("hybrid").hits;
        assert_eq!(mixed.iter().map(|h| h.id).collect::<Vec<_>>(), vec![ids[0], ids[1]]);
        let (lo, hi) = (
            f64::from(mixed[1].parts.similarity.expect("sim")),
            f64::from(mixed[0].parts.similarity.expect("sim")),
        );
        assert!(hi > lo, "{mixed:?}");
        assert!((mixed[0].parts.relevance - 1.0).abs() < 1e-9, "{mixed:?}");
        assert!(mixed[1].parts.relevance.abs() < 1e-9, "the weakest similarity scales to 0");

        // A higher floor keeps the vector-only hit out.
        q.ranking.similarity_floor = 0.999;
        assert_eq!(store.search_hybrid(&q, Some(vector)).expect("hybrid").hits.len(), 1);
    }

    /// A model for [`a_search_with_models_on_threads_answers_as_the_search_given_their_output`]:
    /// a fixed query vector, or a failure, or a panic.
    struct Model {
        name: &'static str,
        vector: Option<Vec<f32>>,
        sparse: Option<crate::embed::SparseVector>,
        panics: bool,
    }

    impl Model {
        fn answer<T: Clone>(&self, value: &Option<T>) -> Result<T, crate::embed::EmbedError> {
            assert!(!self.panics, "the model broke");
            value.clone().ok_or_else(|| crate::embed::EmbedError::Failed("no answer".into()))
        }
    }

    impl crate::embed::Embedder for Model {
        fn model(&self) -> &str {
            self.name
        }
        fn dimensions(&self) -> usize {
            3
        }
        fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, crate::embed::EmbedError> {
            Ok(vec![self.answer(&self.vector)?])
        }
    }

    impl crate::embed::SparseEncoder for Model {
        fn model(&self) -> &str {
            self.name
        }
        fn encode(
            &self,
            _: &[&str],
        ) -> Result<Vec<crate::embed::SparseVector>, crate::embed::EmbedError> {
            Ok(vec![self.answer(&self.sparse)?])
        }
        fn encode_queries(
            &self,
            texts: &[&str],
        ) -> Result<Vec<crate::embed::SparseVector>, crate::embed::EmbedError> {
            self.encode(texts)
        }
    }

    #[test]
    fn a_search_with_models_on_threads_answers_as_the_search_given_their_output() {
        const DAY: i64 = 86_400_000;
        let mut store = observed(&[
            ("bugfix", "payment callback signature check fixed", 10 * DAY),
            ("change", "webhook verification rewritten", 10 * DAY),
            ("discovery", "sourdough needs a long rise", 10 * DAY),
            ("bugfix", "payment retries back off", 10 * DAY),
        ]);
        let ids = observation_ids(&store);
        let vectors: Vec<_> = [[1.0, 0.2, 0.0], [0.9, 0.35, 0.0], [0.0, 0.1, 1.0], [0.7, 0.0, 0.3]]
            .iter()
            .zip(&ids)
            .map(|(v, &id)| ("observation", id, unit(v)))
            .collect();
        store.save_vectors("dense", &vectors).expect("vectors");
        let sparse: Vec<_> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| {
                ("observation", id, vec![(1, 0.5 + i as f32), (7, 2.0 - i as f32 / 2.0)])
            })
            .collect();
        store.save_sparse("sparse", &sparse).expect("sparse");
        let query_vector = unit(&[1.0, 0.25, 0.0]);
        let query_sparse: crate::embed::SparseVector = vec![(1, 1.0), (7, 0.3)];
        let model = |name, works: bool, panics: bool| Model {
            name,
            vector: works.then(|| query_vector.clone()),
            sparse: works.then(|| query_sparse.clone()),
            panics,
        };
        let ranking = search::Ranking { now_ms: Some(10 * DAY), ..search::Ranking::default() };
        let settings = |dense: Model, sparse: Model| crate::recall::Settings {
            search: crate::config::SearchConfig::default(),
            ranking: ranking.clone(),
            embedder: Some(Box::new(dense)),
            sparse: Some(Box::new(sparse)),
            mode_types: Vec::new(),
        };
        let request = || crate::recall::SearchRequest {
            query: "payment signature".into(),
            ..Default::default()
        };
        let ranked = |results: &search::SearchResults| -> Vec<(i64, String)> {
            results.hits.iter().map(|h| (h.id, format!("{:.9} {:?}", h.score, h.parts))).collect()
        };
        let index = store.vector_index("dense", 3).expect("index");

        // Both models answer: the same as the search handed their answers up front.
        let both = settings(model("dense", true, false), model("sparse", true, false));
        let (asked, found) = both.reader(&store).search(request()).expect("search");
        assert!(asked.sparse.is_some() && found.semantic);
        assert!(found.hits.iter().any(|h| h.parts.sparse.is_some()), "{found:?}");
        let vector = search::VectorQuery { index: &index, vector: &query_vector };
        let expected = store.search_hybrid(&asked, Some(vector)).expect("hybrid");
        assert_eq!(ranked(&found), ranked(&expected));

        // The sparse model fails, or panics: the answer of a search without it.
        let without_sparse = SearchQuery { sparse: None, ..asked.clone() };
        let expected = store.search_hybrid(&without_sparse, Some(vector)).expect("hybrid");
        for broken in [model("sparse", false, false), model("sparse", true, true)] {
            let settings = settings(model("dense", true, false), broken);
            let (asked, found) = settings.reader(&store).search(request()).expect("search");
            assert!(asked.sparse.is_none() && found.semantic);
            assert_eq!(ranked(&found), ranked(&expected));
        }

        // The embedder panics: full text and the sparse model alone.
        let settings_of = settings;
        let settings = settings_of(model("dense", true, true), model("sparse", true, false));
        let (asked, found) = settings.reader(&store).search(request()).expect("search");
        assert!(!found.semantic);
        let expected = store.search_hybrid(&asked, None).expect("hybrid");
        assert_eq!(ranked(&found), ranked(&expected));

        // Models with nothing stored to match: their answers are left out.
        let settings = settings_of(model("other", true, false), model("another", true, false));
        let (asked, found) = settings.reader(&store).search(request()).expect("search");
        assert!(asked.sparse.is_none() && !found.semantic);
        let expected = store.search_hybrid(&asked, None).expect("hybrid");
        assert_eq!(ranked(&found), ranked(&expected));
    }

    #[test]
    fn a_process_keeps_the_vectors_it_read_and_adds_what_was_embedded_since() {
        use std::sync::Arc;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("memory.db");
        let mut store = Store::open(&path, Duration::from_secs(1)).expect("open");
        let one = vec![("observation", 1, vec![1.0, 0.0]), ("summary", 1, vec![0.0, 1.0])];
        store.save_vectors("m", &one).expect("save");
        let first = store.shared_vector_index("m", 2).expect("index");
        assert_eq!(first.len(), 2);
        // The first search read the rows and wrote the vector file; a process starting now
        // scans that file, and takes its codes into memory on its second search.
        let fresh = Store::open(&path, Duration::from_secs(1)).expect("open");
        let from_file = fresh.load_vector_index("m", 2).expect("from the file");
        assert_eq!(from_file.top(&[0.0, 1.0], 1), first.top(&[0.0, 1.0], 1));
        let again = store.shared_vector_index("m", 2).expect("index");
        assert!(Arc::ptr_eq(&first, &again), "nothing new: the same matrix, not read again");

        // Another connection embeds a new observation and a new summary; the next search sees
        // them without reading the rest again.
        let mut other = Store::open(&path, Duration::from_secs(1)).expect("open");
        let two = vec![("observation", 2, vec![0.6, 0.8]), ("summary", 2, vec![0.8, 0.6])];
        other.save_vectors("m", &two).expect("save");
        let grown = store.shared_vector_index("m", 2).expect("index");
        assert_eq!(grown.len(), 4);
        let best = grown.top(&[0.6, 0.8], 1);
        assert_eq!((best[0].0, best[0].1), ("observation", 2), "{best:?}");
        assert_eq!(store.shared_vector_index("m", 3).expect("other size").len(), 0);
        assert_eq!(store.shared_vector_index("other", 2).expect("other model").len(), 0);
    }

    #[test]
    fn a_sparse_match_reorders_what_the_channels_found_and_nothing_more() {
        use std::sync::Arc;
        const DAY: i64 = 86_400_000;
        let mut store = observed(&[
            ("discovery", "support group on tuesday", 10 * DAY),
            ("discovery", "she went to the group picnic with her friends", 10 * DAY),
            ("discovery", "sourdough needs a long rise", 10 * DAY),
        ]);
        let ids = observation_ids(&store);
        // Word ids of a made-up vocabulary: 1 group, 2 support, 3 picnic, 4 charity, 5 bread.
        let vectors = vec![
            ("observation", ids[0], vec![(1, 1.0), (2, 0.2)]),
            ("observation", ids[1], vec![(1, 1.2), (3, 1.5), (4, 1.8)]),
            ("observation", ids[2], vec![(5, 2.0)]),
        ];
        store.save_sparse("sp", &vectors).expect("sparse");
        assert!(store.has_vectors("sp").expect("has"));
        assert_eq!(store.vector_index("sp", 0).expect("index").len(), 0, "never a dense row");
        let mut q = query("group");
        q.ranking.neighbour_weight = 0.0;
        q.ranking.session_weight = 0.0;
        q.ranking.session_text_weight = 0.0;
        q.ranking.now_ms = Some(10 * DAY);
        let plain: Vec<i64> = store.search(&q).expect("bm25").hits.iter().map(|h| h.id).collect();
        assert_eq!(plain, vec![ids[0], ids[1]], "the shorter match first: {plain:?}");

        // The query means a charity group: its sparse vector says so, and the second item
        // matches that better.
        let weights = Arc::new(vec![(1, 1.0), (4, 2.0)]);
        q.sparse = Some(search::SparseQuery { model: "sp".into(), weights });
        q.ranking.sparse_share = 0.9;
        let hits = store.search(&q).expect("sparse").hits;
        assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), vec![ids[1], ids[0]]);
        let parts: Vec<f32> = hits.iter().map(|h| h.parts.sparse.expect("match")).collect();
        assert!((parts[0] - 4.8).abs() < 1e-2 && (parts[1] - 1.0).abs() < 1e-2, "{parts:?}");
        assert!(hits.iter().all(|h| h.id != ids[2]), "the sparse model never adds an item");

        // No share, another model's query, or an empty one leave the order as it was.
        q.ranking.sparse_share = 0.0;
        let off: Vec<i64> = store.search(&q).expect("off").hits.iter().map(|h| h.id).collect();
        assert_eq!(off, plain);
        q.ranking.sparse_share = 0.9;
        let weights = Arc::new(vec![(4, 2.0)]);
        q.sparse = Some(search::SparseQuery { model: "other".into(), weights });
        let other = store.search(&q).expect("other").hits;
        assert_eq!(other.iter().map(|h| h.id).collect::<Vec<_>>(), plain);
        assert!(other.iter().all(|h| h.parts.sparse.is_none()));
        let weights = Arc::new(Vec::new());
        q.sparse = Some(search::SparseQuery { model: "sp".into(), weights });
        let empty: Vec<i64> = store.search(&q).expect("empty").hits.iter().map(|h| h.id).collect();
        assert_eq!(empty, plain);

        // With a sparse query the channels bring `sparse_candidates` each, so an item past
        // `candidates` is there to be ordered up; without one, `candidates` holds.
        let weights = Arc::new(vec![(1, 1.0), (4, 2.0)]);
        q.sparse = Some(search::SparseQuery { model: "sp".into(), weights });
        q.limit = 1;
        q.ranking.candidates = 1;
        q.ranking.sparse_candidates = 1;
        let narrow: Vec<i64> =
            store.search(&q).expect("narrow").hits.iter().map(|h| h.id).collect();
        assert_eq!(narrow, vec![ids[0]], "one candidate: nothing to order");
        q.ranking.sparse_candidates = 2;
        let wide: Vec<i64> = store.search(&q).expect("wide").hits.iter().map(|h| h.id).collect();
        assert_eq!(wide, vec![ids[1]], "two candidates, and the better sparse match first");
        q.ranking.sparse_share = 0.0;
        let off: Vec<i64> = store.search(&q).expect("off").hits.iter().map(|h| h.id).collect();
        assert_eq!(off, vec![ids[0]], "no share: the channels bring `candidates`");
    }

    #[test]
    fn score_parts_add_up_and_hits_count() {
        const DAY: i64 = 86_400_000;
        let store = observed(&[
            ("decision", "use sqlite for the cache", 0),
            ("change", "sqlite cache size raised", 30 * DAY),
        ]);
        let mut q = query("sqlite cache");
        q.ranking.now_ms = Some(30 * DAY);
        let hits = store.search(&q).expect("search").hits;
        assert_eq!(hits.len(), 2);
        for hit in &hits {
            let p = &hit.parts;
            let r = &q.ranking;
            let sum = r.weight_relevance * p.relevance
                + r.weight_importance * p.importance
                + r.weight_freshness * p.freshness
                + r.weight_hits * p.hits;
            assert!((hit.score - sum).abs() < 1e-9, "{hit:?}");
        }
        let decision = hits.iter().find(|h| h.item_type == "decision").expect("decision");
        assert!((decision.parts.freshness - 0.5).abs() < 1e-9, "one half-life old");
        assert_eq!(decision.parts.importance, 1.0);
        assert_eq!(decision.parts.hit_count, 0);

        store
            .record_hits([(decision.kind, decision.id)], q.ranking.now_ms.expect("fixed now"))
            .expect("hit");
        store
            .record_hits([(decision.kind, decision.id)], q.ranking.now_ms.expect("fixed now"))
            .expect("hit");
        let again = store.search(&q).expect("search").hits;
        let decision = again.iter().find(|h| h.item_type == "decision").expect("decision");
        assert_eq!(decision.parts.hit_count, 2);
        assert!((decision.parts.hits - 2.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn kind_and_type_filters() {
        let store = observed(&[
            ("decision", "first prompt decided", 5),
            ("change", "first prompt changed", 6),
        ]);
        let mut q = words_only("first");
        let all = store.search(&q).expect("all").hits;
        // The event is folded into the observation made from it: one answer, one place.
        assert_eq!(all.iter().map(|h| h.kind).collect::<Vec<_>>(), ["observation"; 2]);
        let made = all.iter().find(|h| h.title == "first prompt decided").expect("made from it");
        assert_eq!(made.folded.iter().map(|h| (h.kind, h.id)).collect::<Vec<_>>(), [("event", 1)]);
        assert!(made.score >= all[1].score, "it keeps the better score of the two: {all:?}");
        q.kinds = vec!["event".into()];
        let events = store.search(&q).expect("events").hits;
        assert_eq!(events.iter().map(|h| h.kind).collect::<Vec<_>>(), vec!["event"]);
        q.kinds = vec![];
        q.types = vec!["change".into(), "prompt".into()];
        let mut types: Vec<_> =
            store.search(&q).expect("types").hits.into_iter().map(|h| h.item_type).collect();
        types.sort();
        assert_eq!(
            types,
            vec!["change", "prompt"],
            "the decision made from the prompt is left out"
        );
    }

    #[test]
    fn the_benchmark_bulk_insert_stores_what_the_worker_stores() {
        let mut store = seeded(&["first prompt"]);
        let session = store.pending_sessions(10).expect("pending")[0].clone();
        assert!(store.claim_session(session.session_id, "t", 0, 60_000).expect("claim"));
        let draft = |title: &str, source: i64| crate::distil::ObservationDraft {
            title: title.into(),
            subtitle: "修复支付回调".into(),
            facts: vec!["a \"quoted\" fact".into()],
            narrative: "why it matters".into(),
            kind: "bugfix".into(),
            concepts: vec!["gotcha".into()],
            files_read: vec!["src/a.rs".into()],
            files_modified: vec!["src/b.rs".into()],
            source_event_ids: vec![source],
            at_ms: 5,
        };
        let provenance = distilled::Provenance { mode: "code", distiller: "offline" };
        let saved = [(draft("saved", 1), 10, 100)];
        store.save_observations(&session, "t", provenance, &saved, 1).expect("save");
        let bulk = [(draft("bulk", 2), 10, 100), (draft("bulk again", 2), 10, 100)];
        let added =
            store.bulk_insert_observations_for_bench(&session, provenance, &bulk).expect("bulk");
        assert_eq!(added, 1, "a repeated source key adds nothing");

        let saved = store.observation(1).expect("read").expect("saved");
        let bulk = store.observation(2).expect("read").expect("bulk");
        let expected = crate::distil::ObservationDraft {
            title: "bulk".into(),
            source_event_ids: vec![],
            ..saved.draft.clone()
        };
        assert_eq!(bulk.draft, expected, "the bulk path keeps no source rows");
        assert_eq!((bulk.tokens, bulk.work_tokens, bulk.mode), (10, 100, saved.mode));
        let hits = store.search(&query("回调 quoted")).expect("search").hits;
        assert_eq!(hits.len(), 2, "both are indexed: {hits:?}");
    }

    /// A table larger than BM25 may score in full: rare terms are scored exactly, common ones
    /// weighed from an estimate, and a query of common words only gets the newest rows holding
    /// them; filters hold on every path.
    #[test]
    fn a_large_table_is_searched_within_a_bounded_cost() {
        let mut store = Store::open_in_memory().expect("store");
        let rows = 4_000;
        let items: Vec<_> = (0..rows)
            .map(|i| {
                let rare = if i % 777 == 7 { " zebra" } else { "" };
                // Two rows in five common: more than BM25 may score, and not so many that
                // it weighs nothing. Every row has as many words.
                let common = if i % 5 < 2 { "common " } else { "other " };
                let mut e = event(&format!("u{i}"), "s", &format!("{common}filler {i}{rare}"));
                if i % 2 == 1 {
                    e.agent = "gemini".into();
                }
                (e, format!("h{i}"), project())
            })
            .collect();
        assert_eq!(store.write_recovered(&items, &[]).expect("write"), rows);
        let ids = |q: &SearchQuery| -> Vec<i64> {
            store.search(q).expect("search").hits.iter().map(|h| h.id).collect()
        };
        let zebras: Vec<i64> = (0..rows as i64).filter(|i| i % 777 == 7).map(|i| i + 1).collect();

        // The rare term decides; its rows come first, each found, and of those the ones that
        // also hold the common term first.
        let found = ids(&words_only("zebra common"));
        let mut top: Vec<i64> = found[..zebras.len()].to_vec();
        top.sort_unstable();
        assert_eq!(top, zebras, "{found:?}");
        assert_eq!(found.len(), 10, "common rows fill the rest: {found:?}");
        let with_common = zebras.iter().filter(|id| (*id - 1) % 5 < 2).count();
        assert!(with_common > 0 && with_common < zebras.len());
        assert!(found[..with_common].iter().all(|id| (id - 1) % 5 < 2), "{found:?}");

        // Common words only: the newest rows holding them.
        let found = ids(&words_only("common filler"));
        let newest: Vec<i64> =
            (1..=rows as i64).rev().filter(|id| (id - 1) % 5 < 2).take(10).collect();
        assert_eq!(found, newest);

        // A filter holds on both paths.
        let mut q = words_only("zebra common");
        q.agent = Some("gemini".into());
        let hits = store.search(&q).expect("search").hits;
        assert!(hits.iter().all(|h| h.agent == "gemini"), "{hits:?}");
        let gemini_zebras = zebras.iter().filter(|id| *id % 2 == 0).count();
        assert!(hits.iter().take(gemini_zebras).all(|h| zebras.contains(&h.id)), "{hits:?}");
        let mut q = words_only("common");
        q.agent = Some("codex".into());
        let hits = store.search(&q).expect("search").hits;
        assert_eq!(hits.len(), 10);
        assert!(hits.iter().all(|h| h.agent == "codex"), "{hits:?}");
    }
}
