//! The hook run: here are an agent's stdin bytes at one of its hook events, store them (or spool
//! them), answer the agent, and say what happened.
//!
//! The one home of the use case every agent's hooks call: capture turns the bytes into a
//! finished event ([`capture::prepare`]), the store writes it (with the near-duplicate check
//! inside its transaction), inject answers from the same open connection, and what earlier runs
//! spooled is drained while time is left. Every run is recorded as a hook run, whatever its
//! outcome. [`InFlight`] lets the binary's watchdog spool an unfinished event when the deadline
//! passes.
//!
//! Time. The agent writes the input, so waiting for it costs the agent nothing: it is read for
//! as long as the agent's own timeout for a hook run allows, less the deadline and a margin
//! ([`stdin_budget`]), and the deadline (`capture.deadline_ms`) counts from when the input is
//! complete. Past that, what came is spooled as a partial payload.
//!
//! Kills. An agent may kill a hook (at its timeout, or when the user interrupts it), and
//! nothing runs after a kill. So a run still reading its input [`HOLD_AFTER`] after it began,
//! or still waiting for the store that long after its input was complete, copies what it has to
//! the spool as a claim of its own process ([`spool::append_held`]): no drainer takes it while
//! the process lives, the first drain after a kill does, and the run removes it once its event
//! is stored, spooled or dropped. The trade-off: a run that finishes in the usual few
//! milliseconds writes nothing extra, and one slow enough to be at risk pays two fsyncs (the
//! copy is written again while more input arrives, every [`HOLD_EVERY`]); a kill in the first
//! [`HOLD_AFTER`] still loses the event, which no agent's timeout comes near. Input being
//! turned into an event is not copied: that is the run's own bounded work, and copying would
//! sanitize a large payload twice.
//!
//! The hook must never hurt the agent: this module never panics on input, never blocks past the
//! deadline it is given, and reports what happened instead of failing.
//!
//! Must not: print (the binary answers the agent), start threads or runtimes, open sockets.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::adapter;
use crate::capture::spool::{self, Prepared, SpoolRecord};
use crate::capture::{self, Input, Stage, filter, lost, sanitize_text, transcript};
use crate::config::Config;
use crate::event::EventKind;
use crate::paths::Home;
use crate::store::{
    Dedupe, DedupeWindow, HookRun, Store, StoreError, WAL_CHECKPOINT_BYTES, WriteOutcome,
};
use crate::{inject, time};

/// How long hook-run records (which only feed `status`) are kept: 30 days.
pub const HOOK_RUNS_KEPT_MS: i64 = 30 * 86_400_000;

/// What became of a hook run's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookOutcome {
    /// Written as a new event.
    Stored,
    /// Its event was stored already (the same uid).
    Duplicate,
    /// Deliberately not stored: an event not captured, or a tool call about to run.
    Skipped,
    /// Dropped by a noise filter.
    Filtered,
    /// The store could not take it; it waits in the spool.
    Spooled,
    /// Unreadable; kept in `rejected/`.
    Invalid,
    /// Neither stored nor spooled.
    Failed,
}

impl HookOutcome {
    /// The name recorded in `hook_runs` and shown by `status`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookOutcome::Stored => "stored",
            HookOutcome::Duplicate => "duplicate",
            HookOutcome::Skipped => "skipped",
            HookOutcome::Filtered => "filtered",
            HookOutcome::Spooled => "spooled",
            HookOutcome::Invalid => "invalid",
            HookOutcome::Failed => "failed",
        }
    }

    /// Whether the run lost its event's way into the store (it is kept elsewhere, or lost).
    pub fn is_problem(self) -> bool {
        matches!(self, HookOutcome::Invalid | HookOutcome::Spooled | HookOutcome::Failed)
    }
}

/// What one hook run did; the binary turns it into the agent's answer and a log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookReport {
    pub outcome: HookOutcome,
    pub detail: Option<String>,
    pub event_uid: String,
    /// Spooled events this run drained into the store.
    pub drained: usize,
    /// The stored event ended a turn or the session (a stop, a session end): distilling it
    /// is due.
    pub ends_turn: bool,
    /// The answer to print for the agent, in its protocol: the session-start briefing, recall
    /// for a prompt, or what is known about a file being read.
    pub answer: Option<String>,
}

/// A hook run in progress, shared with the watchdog that keeps its input safe and spools it if
/// the deadline passes.
#[derive(Debug)]
pub struct InFlight {
    state: Mutex<Held>,
    /// Held while a copy is being written ([`InFlight::hold`]), so a run that ends waits for
    /// it and never leaves a copy behind. Taken before `state` whenever both are.
    holding: Mutex<()>,
    timing: Mutex<Timing>,
    moved: Condvar,
    spool_dirs: [PathBuf; 2],
    home: Home,
}

/// The run's state and the spool file that keeps it while the run works, if one was written.
#[derive(Debug)]
struct Held {
    run: Unfinished,
    /// A copy of the run in the spool, held as this process's claim ([`spool::append_held`]).
    file: Option<PathBuf>,
    /// How much of the input that copy holds, so it is written again only when more came.
    file_bytes: usize,
}

/// When the watchdog acts.
#[derive(Debug, Clone, Copy)]
struct Timing {
    /// The run is ended at this moment: what is unfinished is spooled.
    deadline: Instant,
    /// The run's input is copied to the spool at this moment, if the run is still going.
    hold_at: Instant,
}

/// How far the run in flight got, as far as the watchdog is concerned.
#[derive(Debug)]
enum Unfinished {
    /// Standard input still arriving: what came so far, spooled as a partial payload.
    Reading { meta: Box<SpoolRecord>, bytes: Vec<u8> },
    /// Input read but not yet turned into an event: the watchdog sanitizes and spools it raw.
    Raw { meta: Box<SpoolRecord>, bytes: Arc<Vec<u8>> },
    /// A finished event waiting for the store.
    Ready(Box<SpoolRecord>),
    /// Stored, deliberately dropped, or spooled already.
    Done,
}

/// A run still going this long after it started reading, or after its input was complete, has
/// its input copied to the spool, so a kill from here on loses nothing. Shorter than any agent
/// kills a hook after; longer than a run normally takes, which so writes no extra file.
pub const HOLD_AFTER: Duration = Duration::from_millis(100);
/// While input keeps arriving, the copy is written again this often when more came.
pub const HOLD_EVERY: Duration = Duration::from_millis(500);
/// What is kept back from the agent's own timeout: the process must be gone before it.
pub const AGENT_TIMEOUT_MARGIN: Duration = Duration::from_millis(500);

/// How long a hook waits for its standard input: the agent's timeout for a hook run less the
/// deadline for the work after it and a margin, but never less than the deadline itself. The
/// agent writes the input, so waiting for it costs the agent nothing.
pub fn stdin_budget(config: &Config, agent: &str, event: &str) -> Duration {
    let timeout = match config.capture.agent_timeout_ms {
        0 => crate::install::hook_timeout_ms(agent, event),
        ms => ms,
    };
    let deadline = config.capture.deadline_ms;
    let left = timeout.saturating_sub(deadline + AGENT_TIMEOUT_MARGIN.as_millis() as u64);
    Duration::from_millis(left.max(deadline))
}

impl InFlight {
    /// A run whose watchdog ends it at `deadline` unless the deadline moves.
    pub fn new(home: &Home, deadline: Instant) -> InFlight {
        InFlight {
            state: Mutex::new(Held { run: Unfinished::Done, file: None, file_bytes: 0 }),
            holding: Mutex::new(()),
            timing: Mutex::new(Timing { deadline, hold_at: Instant::now() + HOLD_AFTER }),
            moved: Condvar::new(),
            spool_dirs: home.spool_dirs(),
            home: home.clone(),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set(&self, run: Unfinished) {
        // A run that ends waits for a copy being written, which then sees the run over.
        let _holding = matches!(run, Unfinished::Done)
            .then(|| self.holding.lock().unwrap_or_else(|p| p.into_inner()));
        let mut held = self.held();
        held.run = run;
        if matches!(held.run, Unfinished::Done)
            && let Some(file) = held.file.take()
        {
            // Stored, dropped or spooled for good: the copy is not needed.
            spool::discard(&file);
        }
    }

    /// Moves the deadline: the work after the input counts from when the input is complete.
    /// The input is copied to the spool if the run is still going [`HOLD_AFTER`] from now.
    pub fn set_deadline(&self, deadline: Instant) {
        let mut timing = self.timing.lock().unwrap_or_else(|p| p.into_inner());
        timing.deadline = deadline;
        timing.hold_at = Instant::now() + HOLD_AFTER;
        self.moved.notify_all();
    }

    /// The watchdog's loop: blocks until the deadline passes, meanwhile copying the input of a
    /// run that takes long to the spool (see [`HOLD_AFTER`]). The caller then spools what is
    /// unfinished ([`InFlight::spool_unfinished`]) and ends the process.
    pub fn watch(&self) {
        let mut timing = self.timing.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = Instant::now();
            if now >= timing.deadline {
                return;
            }
            if now >= timing.hold_at {
                timing.hold_at = now + HOLD_EVERY;
                drop(timing);
                self.hold();
                timing = self.timing.lock().unwrap_or_else(|p| p.into_inner());
                continue;
            }
            let wake = timing.deadline.min(timing.hold_at);
            timing = self
                .moved
                .wait_timeout(timing, wake.saturating_duration_since(now))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Copies the run's input to the spool as this process's claim, unless the copy there is
    /// as new; the copy goes once the run stores, spools or drops its event. Input still
    /// arriving and a finished event waiting for the store are copied; input being turned into
    /// an event is not, since that is bounded work of this process's own and copying it would
    /// mean sanitizing it twice. The copy is made outside the state's lock, so reading and
    /// capture never wait for it; only a run that ends waits for a copy being written.
    fn hold(&self) {
        enum Snapshot {
            Reading(Box<SpoolRecord>, Vec<u8>),
            Ready(Box<SpoolRecord>),
        }
        let _holding = self.holding.lock().unwrap_or_else(|p| p.into_inner());
        let snapshot = {
            let held = self.held();
            match &held.run {
                Unfinished::Reading { meta, bytes }
                    if held.file.is_none() || held.file_bytes < bytes.len() =>
                {
                    Snapshot::Reading(meta.clone(), bytes.clone())
                }
                Unfinished::Ready(record) if held.file_bytes != usize::MAX => {
                    Snapshot::Ready(record.clone())
                }
                _ => return,
            }
        };
        let (record, len) = match snapshot {
            Snapshot::Reading(mut record, bytes) => {
                record.raw = Some(raw_for_spool(&bytes));
                record.partial = true;
                record.reason = format!(
                    "the hook was ended while its standard input was still arriving, with {} \
                     bytes read",
                    bytes.len()
                );
                (record, bytes.len())
            }
            Snapshot::Ready(mut record) => {
                record.reason = "the hook was ended before the store took its event".to_owned();
                (record, usize::MAX)
            }
        };
        let path = match spool::append_held(&self.spool_dirs, &record, time::now_ms()) {
            Ok(path) => path,
            Err(err) => {
                tracing::debug!(%err, "cannot keep the hook's input in the spool yet");
                return;
            }
        };
        let mut held = self.held();
        if matches!(held.run, Unfinished::Done) {
            // The run ended meanwhile: the copy is not needed.
            spool::discard(&path);
            return;
        }
        if let Some(old) = held.file.replace(path) {
            spool::discard(&old);
        }
        held.file_bytes = len;
    }

    /// Reads the hook's standard input (at most `cap` bytes, the rest counted and dropped)
    /// where the watchdog can see it: if the deadline passes while the agent is still writing,
    /// what came so far is spooled, not lost. `meta` names the run.
    pub fn read_input(
        &self,
        reader: &mut dyn io::Read,
        cap: usize,
        meta: SpoolRecord,
    ) -> io::Result<Input> {
        self.set(Unfinished::Reading { meta: Box::new(meta), bytes: Vec::new() });
        let mut chunk = vec![0u8; 64 * 1024];
        let mut total: u64 = 0;
        let result = loop {
            let n = match reader.read(&mut chunk) {
                Ok(0) => break Ok(()),
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => break Err(err),
            };
            total += n as u64;
            let mut held = self.held();
            match &mut held.run {
                Unfinished::Reading { bytes, .. } => {
                    let room = cap.saturating_sub(bytes.len());
                    bytes.extend_from_slice(&chunk[..n.min(room)]);
                }
                // The watchdog took it: the process is ending.
                _ => break Ok(()),
            }
        };
        let mut held = self.held();
        let bytes = match std::mem::replace(&mut held.run, Unfinished::Done) {
            Unfinished::Reading { bytes, .. } => bytes,
            _ => Vec::new(),
        };
        // The copy of a partial input stays until the run turns the whole one into its state.
        drop(held);
        result?;
        let truncated_from = (total > bytes.len() as u64).then_some(total);
        Ok(Input { bytes, truncated_from })
    }

    /// Spools the event unless the run finished, and marks the run over. Called by the
    /// watchdog at the deadline; returns the spool file, if one was written. When no spool
    /// takes it, the loss is counted where `status` shows it ([`lost`]).
    pub fn spool_unfinished(&self, reason: &str) -> Option<io::Result<PathBuf>> {
        let _holding = self.holding.lock().unwrap_or_else(|p| p.into_inner());
        let mut held = self.held();
        let mut record = match std::mem::replace(&mut held.run, Unfinished::Done) {
            Unfinished::Done => {
                // A copy written while reading, of a run that ended between its reading and
                // its next state, is the event: it stays, given up to drainers.
                return held.file.take().map(|file| Ok(release_held(&file)));
            }
            Unfinished::Ready(record) => record,
            Unfinished::Raw { mut meta, bytes } => {
                meta.raw = Some(raw_for_spool(&bytes));
                meta
            }
            Unfinished::Reading { mut meta, bytes } => {
                meta.raw = Some(raw_for_spool(&bytes));
                meta.partial = true;
                meta.reason =
                    format!("{reason}, with {} bytes of standard input read", bytes.len());
                meta.duration_us = 0;
                meta
            }
        };
        if !record.partial {
            reason.clone_into(&mut record.reason);
        }
        let written = spool::append(&self.spool_dirs, &record, time::now_ms());
        match &written {
            Ok(_) => {
                if let Some(file) = held.file.take() {
                    spool::discard(&file);
                }
            }
            Err(err) => {
                // The copy made earlier, if any, is the best there is: given up to drainers.
                if let Some(file) = held.file.take() {
                    return Some(Ok(release_held(&file)));
                }
                count_lost(&self.home, &record.agent, &record.event_name, err);
            }
        }
        Some(written)
    }
}

impl InFlight {
    /// Spools `record` for good, the run's own choice (the store refused it), and marks the run
    /// over. When no spool takes it, a copy held earlier is given up to drainers instead, or
    /// else the loss is counted.
    pub fn spool_now(&self, record: &SpoolRecord) -> io::Result<PathBuf> {
        let _holding = self.holding.lock().unwrap_or_else(|p| p.into_inner());
        let mut held = self.held();
        held.run = Unfinished::Done;
        let written = spool::append(&self.spool_dirs, record, time::now_ms());
        match (written, held.file.take()) {
            (Ok(path), earlier) => {
                if let Some(file) = earlier {
                    spool::discard(&file);
                }
                Ok(path)
            }
            (Err(_), Some(earlier)) => Ok(release_held(&earlier)),
            (Err(err), None) => {
                count_lost(&self.home, &record.agent, &record.event_name, &err);
                Err(err)
            }
        }
    }
}

/// Gives a spool file this process held up to drainers: renamed to its plain name.
fn release_held(file: &Path) -> PathBuf {
    spool::release(file);
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match name.split_once(".claimed-") {
        Some((base, _)) => file.with_file_name(base),
        None => file.to_owned(),
    }
}

/// Counts an event no spool took where `status` finds it; the log says so too.
fn count_lost(home: &Home, agent: &str, event_name: &str, err: &io::Error) {
    match lost::count_one(home, agent, event_name, time::now_ms()) {
        Ok(n) => tracing::error!(
            %err,
            lost = n,
            "no spool could take the event; it is lost and counted (`agent-memory status`)"
        ),
        Err(count_err) => tracing::error!(
            %err,
            %count_err,
            "no spool could take the event, and the lost-event counter could not count it"
        ),
    }
}

/// A payload that capture did not finish, as the spool may keep it: sanitized, and with no
/// content at all when it names a sensitive file, since capture had no chance to keep only the
/// fact of the access. A whole JSON payload is sanitized leaf by leaf, as capture would: the
/// rules that read lines (tables, a command's output) and the context between leaves (a token
/// command in one, its output in another) need the strings unescaped.
fn raw_for_spool(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if capture::redact::command_touches_sensitive_path(&text) {
        return String::new();
    }
    if let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&text) {
        capture::sanitize_json(&mut value);
        return value.to_string();
    }
    sanitize_text(&text).into_owned()
}

/// Everything one hook run needs.
#[derive(Debug)]
pub struct HookRequest<'a> {
    pub home: &'a Home,
    pub config: &'a Config,
    pub agent: &'a str,
    pub event_name: &'a str,
    pub input: Input,
    pub uid: String,
    pub received_at_ms: i64,
    /// When the process started; hook-run durations count from here.
    pub started: Instant,
    /// When the run gives up on the store and spools: `deadline_ms` after the input was
    /// complete.
    pub deadline: Instant,
}

/// Runs one hook call: capture, store, answer, drain. Never fails: every problem becomes an
/// outcome.
pub fn run_hook(req: HookRequest<'_>, in_flight: &InFlight) -> HookReport {
    let deadline = req.deadline;
    let mut report = HookReport {
        outcome: HookOutcome::Stored,
        detail: None,
        event_uid: req.uid.clone(),
        drained: 0,
        ends_turn: false,
        answer: None,
    };
    let mut record = SpoolRecord::new(&req.uid, req.agent, req.event_name, req.received_at_ms);
    let truncated_from = req.input.truncated_from;
    let bytes = Arc::new(req.input.bytes);
    in_flight.set(Unfinished::Raw { meta: Box::new(record.clone()), bytes: Arc::clone(&bytes) });
    let stage = capture::prepare(
        req.agent,
        req.event_name,
        &req.uid,
        req.received_at_ms,
        &bytes,
        truncated_from,
        req.config,
    );
    if !matches!(stage, Stage::Ready { .. }) {
        in_flight.set(Unfinished::Done);
    }

    // Every outcome is recorded as a hook run, so the store is opened whatever happened.
    let store = open_store(req.home, req.config, deadline);
    let run = |outcome: HookOutcome, detail: Option<&str>| -> HookRun<'_> {
        HookRun {
            at_ms: req.received_at_ms,
            agent: req.agent,
            event_name: req.event_name,
            outcome: outcome.as_str(),
            detail: detail.map(str::to_owned),
            duration_us: req.started.elapsed().as_micros() as i64,
            event_uid: Some(&req.uid),
        }
    };
    let (event, hash) = match stage {
        Stage::Ready { event, hash } => (event, hash),
        Stage::Invalid(message) => {
            capture::save_rejected(req.home, &req.uid, &bytes);
            let outcome = HookOutcome::Invalid;
            return end_without_event(store, run(outcome, Some(&message)), outcome, report);
        }
        Stage::Skipped(reason) => {
            let outcome = HookOutcome::Skipped;
            return end_without_event(store, run(outcome, Some(reason)), outcome, report);
        }
        Stage::Pending(tool) => {
            // Not stored, but answered: what is known about the file it is about to read.
            let responder = inject::Responder { home: req.home, config: req.config };
            if let Ok(store) = &store
                && responder.answers_pending(&tool)
            {
                let roots = store.registered_roots().unwrap_or_default();
                let project = capture::resolve_project(tool.cwd.as_deref(), &tool.agent, &roots);
                report.answer = responder.pending(store, &tool, &project);
            }
            let outcome = HookOutcome::Skipped;
            return end_without_event(
                store,
                run(outcome, Some(adapter::PRE_TOOL)),
                outcome,
                report,
            );
        }
        Stage::Filtered(layer) => {
            let outcome = HookOutcome::Filtered;
            return end_without_event(store, run(outcome, Some(layer.as_str())), outcome, report);
        }
    };

    let roots = store.as_ref().ok().and_then(|s| s.registered_roots().ok()).unwrap_or_default();
    let project = capture::resolve_project(event.cwd.as_deref(), &event.agent, &roots);
    record.prepared = Some(Prepared {
        event: (*event).clone(),
        content_hash: hash.clone(),
        project: (&project).into(),
    });
    in_flight.set(Unfinished::Ready(Box::new(record.clone())));

    let written = store.and_then(|mut store| {
        // What the agent's transcript holds that its hooks never sent goes in before the stop
        // that ends the turn, so distilling sees it inside that turn.
        if transcript::reads_transcript(&event)
            && Instant::now() + Duration::from_millis(200) < deadline
        {
            match transcript::catch_up(&mut store, req.config, &event) {
                Ok(caught) if caught.stored > 0 => {
                    tracing::debug!(stored = caught.stored, bytes = caught.bytes_read, "transcript read");
                }
                Ok(_) => {}
                Err(err) => tracing::warn!(%err, "reading the transcript failed; its calls wait for the next stop"),
            }
        }
        let window = DedupeWindow {
            events: req.config.filter.dedupe_window,
            since_ms: event.at_ms.saturating_sub(req.config.filter.dedupe_seconds as i64 * 1000),
        };
        let is_dup = |recent: &crate::store::RecentEvent| {
            filter::is_near_duplicate(&event, &hash, recent, &req.config.filter)
        };
        let dedupe: Dedupe<'_> = (window, &is_dup);
        let outcome = store.write_event(
            &event,
            &hash,
            &project,
            Some(dedupe),
            &run(HookOutcome::Stored, None),
            req.started,
        )?;
        Ok((store, outcome))
    });
    match written {
        Ok((mut store, outcome)) => {
            in_flight.set(Unfinished::Done);
            match store.checkpoint_if_large(WAL_CHECKPOINT_BYTES, Duration::from_millis(50)) {
                // Now and then, with the log just emptied, old hook-run records go too.
                Ok(true) => {
                    if let Err(err) = store.prune_hook_runs(time::now_ms() - HOOK_RUNS_KEPT_MS) {
                        tracing::debug!(%err, "pruning hook runs failed");
                    }
                }
                Ok(false) => {}
                Err(err) => tracing::debug!(%err, "checkpoint skipped"),
            }
            match outcome {
                WriteOutcome::Stored { .. } => {
                    report.ends_turn =
                        matches!(event.kind, EventKind::Stop | EventKind::SessionEnd);
                }
                WriteOutcome::AlreadyStored => report.outcome = HookOutcome::Duplicate,
                WriteOutcome::NearDuplicate { of } => {
                    report.outcome = HookOutcome::Filtered;
                    report.detail =
                        Some(format!("{} of event {of}", filter::Layer::NearDuplicate.as_str()));
                }
            }
            // Losses counted while nothing could be written go where `status` reads them.
            capture::record_lost(&mut store, req.home);
            let responder = inject::Responder { home: req.home, config: req.config };
            report.answer = responder.stored(&mut store, &event, &project);
            // Drain what earlier runs spooled while there is time left.
            if Instant::now() + Duration::from_millis(100) < deadline {
                let limit = req.config.capture.drain_per_hook;
                report.drained =
                    capture::drain(&mut store, req.home, req.config, Some(deadline), limit).stored;
            }
        }
        Err(err) => {
            record.reason = err.to_string();
            record.duration_us = req.started.elapsed().as_micros() as i64;
            report.outcome = HookOutcome::Spooled;
            report.detail = Some(err.to_string());
            if let Err(spool_err) = in_flight.spool_now(&record) {
                report.outcome = HookOutcome::Failed;
                report.detail = Some(format!("{err}; spooling failed too: {spool_err}"));
            }
        }
    }
    report
}

/// Records the run of a hook that stores no event (unreadable, skipped or filtered input).
fn end_without_event(
    store: Result<Store, StoreError>,
    run: HookRun<'_>,
    outcome: HookOutcome,
    mut report: HookReport,
) -> HookReport {
    if let Ok(mut store) = store
        && let Err(err) = store.record_hook_run(&run)
    {
        tracing::warn!(%err, "could not record the hook run");
    }
    report.outcome = outcome;
    report.detail = run.detail;
    report
}

/// Opens the store with a busy timeout that still leaves time to spool before `deadline`.
fn open_store(home: &Home, config: &Config, deadline: Instant) -> Result<Store, StoreError> {
    let left = deadline.saturating_duration_since(Instant::now());
    let reserve = Duration::from_millis(150);
    let busy = Duration::from_millis(config.capture.busy_timeout_ms)
        .min(left.saturating_sub(reserve))
        .max(Duration::from_millis(10));
    Store::open(&home.db_path(), busy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_keeps_its_head_and_counts_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let in_flight = InFlight::new(&Home::at(dir.path().join("home")), Instant::now());
        let meta = || SpoolRecord::new("u1", "codex", "UserPromptSubmit", 1);
        let data = vec![b'a'; 1000];
        let input = in_flight.read_input(&mut &data[..], 100, meta()).expect("read");
        assert_eq!((input.bytes.len(), input.truncated_from), (100, Some(1000)));
        let input = in_flight.read_input(&mut &data[..100], 100, meta()).expect("read");
        assert_eq!((input.bytes.len(), input.truncated_from), (100, None));
        assert!(in_flight.spool_unfinished("deadline").is_none(), "read, nothing in flight");
    }

    #[test]
    fn the_watchdog_spools_an_unfinished_run_once_and_sanitized() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = Home::at(dir.path().join("home"));
        let in_flight = InFlight::new(&home, Instant::now());
        assert!(in_flight.spool_unfinished("deadline").is_none(), "nothing in flight");
        let meta = SpoolRecord::new("u1", "codex", "UserPromptSubmit", 1);
        let raw = br#"{"prompt": "keep <private>drop this</private> rest"}"#.to_vec();
        // Input slow to arrive is held first: a claim of this process, out of drainers' reach
        // while it lives, sanitized like any spooled record.
        let reading = Unfinished::Reading { meta: Box::new(meta.clone()), bytes: raw.clone() };
        in_flight.set(reading);
        in_flight.hold();
        let dirs = home.spool_dirs();
        assert!(spool::pending(&dirs, time::now_ms()).is_empty(), "held by a live process");
        assert_eq!(spool::depth(&dirs, time::now_ms()).claimed, 1, "but counted as waiting");
        let held = in_flight.held().file.clone().expect("held");
        let text = std::fs::read_to_string(&held).expect("read");
        assert!(text.contains("keep") && !text.contains("drop this"), "{text}");
        in_flight.hold();
        assert_eq!(in_flight.held().file.as_ref(), Some(&held), "nothing new came: not again");

        in_flight.set(Unfinished::Raw { meta: Box::new(meta), bytes: Arc::new(raw) });
        let path = in_flight.spool_unfinished("deadline").expect("spooled").expect("written");
        assert_eq!(
            spool::pending(&dirs, time::now_ms()),
            std::slice::from_ref(&path),
            "the held copy went"
        );
        let (records, bad) = spool::read(&path).expect("read back");
        assert!(bad.is_empty());
        let raw = records[0].raw.as_deref().expect("raw kept");
        assert!(raw.contains("keep") && !raw.contains("drop this"), "{raw}");
        assert_eq!(records[0].reason, "deadline");
        assert!(in_flight.spool_unfinished("deadline").is_none(), "spooled only once");
    }

    #[test]
    fn outcomes_keep_the_names_the_store_records() {
        let names: Vec<&str> = [
            HookOutcome::Stored,
            HookOutcome::Duplicate,
            HookOutcome::Skipped,
            HookOutcome::Filtered,
            HookOutcome::Spooled,
            HookOutcome::Invalid,
            HookOutcome::Failed,
        ]
        .iter()
        .map(|o| o.as_str())
        .collect();
        assert_eq!(
            names,
            ["stored", "duplicate", "skipped", "filtered", "spooled", "invalid", "failed"]
        );
    }
}
