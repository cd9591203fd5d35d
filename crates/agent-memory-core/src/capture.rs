//! Capture: one hook run, from the agent's stdin to a stored (or spooled) event.
//!
//! `read` → `parse` → `sanitize` (strip injected context, drop `<private>` spans, redact secrets
//! in every string) → `adapter::normalize` → `finish` (sensitive files keep only the fact of
//! access; size caps) → filter layers 1–2 → project → store (with layer 3 inside the write
//! transaction). Whatever cannot reach the store goes to the spool, and later runs drain it.
//!
//! The hook must never hurt the agent: this module never panics on input, never blocks past the
//! deadline it is given, and reports what happened instead of failing. [`InFlight`] lets the
//! binary's watchdog spool an unfinished event when the deadline passes.
//!
//! Must not: print (the binary answers the agent), start threads or runtimes, open sockets.

pub mod filter;
pub mod redact;
pub mod spool;
pub mod transcript;

use std::borrow::Cow;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::adapter::{self, Normalized, PendingTool};
use crate::config::Config;
use crate::event::{CaptureContext, Event, EventKind, Sensitivity, ToolKind};
use crate::paths::Home;
use crate::project::{self, ProjectIdentity};
use crate::store::{Dedupe, DedupeWindow, HookRun, Store, WAL_CHECKPOINT_BYTES, WriteOutcome};
use crate::{fsutil, inject, time};
use spool::{Prepared, SpoolRecord};

/// How long hook-run records (which only feed `status`) are kept: 30 days.
pub const HOOK_RUNS_KEPT_MS: i64 = 30 * 86_400_000;

/// Standard input as a hook read it.
#[derive(Debug, Clone)]
pub struct Input {
    pub bytes: Vec<u8>,
    /// The full length of the input when it was longer than the cap.
    pub truncated_from: Option<u64>,
}

/// Reads at most `cap` bytes of `reader`, then reads and drops the rest (an agent writing into
/// a closed pipe may report an error) and records how long the input really was.
pub fn read_capped(reader: &mut dyn Read, cap: usize) -> io::Result<Input> {
    let mut bytes = Vec::with_capacity(cap.min(64 * 1024));
    reader.take(cap as u64).read_to_end(&mut bytes)?;
    if bytes.len() < cap {
        return Ok(Input { bytes, truncated_from: None });
    }
    let rest = io::copy(reader, &mut io::sink())?;
    let truncated_from = (rest > 0).then_some(bytes.len() as u64 + rest);
    Ok(Input { bytes, truncated_from })
}

/// What one hook run did; the binary turns it into the agent's answer and a log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookReport {
    /// stored, duplicate, skipped, filtered, spooled, invalid.
    pub outcome: &'static str,
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

/// A hook run in progress, shared with the watchdog that spools it if the deadline passes.
#[derive(Debug)]
pub struct InFlight {
    state: Mutex<Pending>,
    spool_dirs: [PathBuf; 2],
}

#[derive(Debug)]
enum Pending {
    /// Input read but not yet turned into an event: the watchdog sanitizes and spools it raw.
    Raw { meta: Box<SpoolRecord>, bytes: Arc<Vec<u8>> },
    /// A finished event waiting for the store.
    Ready(Box<SpoolRecord>),
    /// Stored, deliberately dropped, or spooled already.
    Done,
}

impl InFlight {
    pub fn new(home: &Home) -> InFlight {
        InFlight { state: Mutex::new(Pending::Done), spool_dirs: home.spool_dirs() }
    }

    fn set(&self, pending: Pending) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = pending;
    }

    /// Spools the event unless the run finished, and marks the run over. Called by the
    /// watchdog at the deadline; returns the spool file, if one was written.
    pub fn spool_unfinished(&self, reason: &str) -> Option<io::Result<PathBuf>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut record = match std::mem::replace(&mut *state, Pending::Done) {
            Pending::Done => return None,
            Pending::Ready(record) => record,
            Pending::Raw { mut meta, bytes } => {
                meta.raw = Some(sanitize_text(&String::from_utf8_lossy(&bytes)).into_owned());
                meta
            }
        };
        record.reason = reason.to_owned();
        Some(spool::append(&self.spool_dirs, &record, time::now_ms()))
    }
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
    /// When the process started; the deadline counts from here.
    pub started: Instant,
}

/// How far an input got through the stages before the store.
#[derive(Debug)]
enum Stage {
    Invalid(String),
    Skipped(&'static str),
    /// A tool call about to run: answered, not stored.
    Pending(Box<PendingTool>),
    Filtered(filter::Layer),
    Ready {
        event: Box<Event>,
        hash: String,
    },
}

/// Runs the capture pipeline for one hook call. Never fails: every problem becomes an outcome.
pub fn run_hook(req: HookRequest<'_>, in_flight: &InFlight) -> HookReport {
    let deadline = req.started + Duration::from_millis(req.config.capture.deadline_ms);
    let mut report = HookReport {
        outcome: "stored",
        detail: None,
        event_uid: req.uid.clone(),
        drained: 0,
        ends_turn: false,
        answer: None,
    };
    let mut record = SpoolRecord {
        v: spool::RECORD_VERSION,
        uid: req.uid.clone(),
        agent: req.agent.to_owned(),
        event_name: req.event_name.to_owned(),
        received_at_ms: req.received_at_ms,
        duration_us: 0,
        reason: String::new(),
        prepared: None,
        raw: None,
    };
    let truncated_from = req.input.truncated_from;
    let bytes = Arc::new(req.input.bytes);
    in_flight.set(Pending::Raw { meta: Box::new(record.clone()), bytes: Arc::clone(&bytes) });
    let stage = prepare(
        req.agent,
        req.event_name,
        &req.uid,
        req.received_at_ms,
        &bytes,
        truncated_from,
        req.config,
    );
    if !matches!(stage, Stage::Ready { .. }) {
        in_flight.set(Pending::Done);
    }

    // Every outcome is recorded as a hook run, so the store is opened whatever happened.
    let store = open_store(req.home, req.config, deadline);
    let run = |outcome: &'static str, detail: Option<&str>| -> HookRun<'_> {
        HookRun {
            at_ms: req.received_at_ms,
            agent: req.agent,
            event_name: req.event_name,
            outcome,
            detail: detail.map(str::to_owned),
            duration_us: req.started.elapsed().as_micros() as i64,
            event_uid: Some(&req.uid),
        }
    };
    let (event, hash) = match stage {
        Stage::Ready { event, hash } => (event, hash),
        Stage::Invalid(message) => {
            save_rejected(req.home, &req.uid, &bytes);
            return end_without_event(store, run("invalid", Some(&message)), report);
        }
        Stage::Skipped(reason) => {
            return end_without_event(store, run("skipped", Some(reason)), report);
        }
        Stage::Pending(tool) => {
            // Not stored, but answered: what is known about the file it is about to read.
            let responder = inject::Responder { home: req.home, config: req.config };
            if let Ok(store) = &store
                && responder.answers_pending(&tool)
            {
                let roots = store.registered_roots().unwrap_or_default();
                let project = resolve_project(tool.cwd.as_deref(), &tool.agent, &roots);
                report.answer = responder.pending(store, &tool, &project);
            }
            return end_without_event(store, run("skipped", Some(adapter::PRE_TOOL)), report);
        }
        Stage::Filtered(layer) => {
            return end_without_event(store, run("filtered", Some(layer.as_str())), report);
        }
    };

    let roots = store.as_ref().ok().and_then(|s| s.registered_roots().ok()).unwrap_or_default();
    let project = resolve_project(event.cwd.as_deref(), &event.agent, &roots);
    record.prepared = Some(Prepared {
        event: (*event).clone(),
        content_hash: hash.clone(),
        project: (&project).into(),
    });
    in_flight.set(Pending::Ready(Box::new(record.clone())));

    let written = store.and_then(|mut store| {
        // What the agent's transcript holds that its hooks never sent goes in before the stop
        // that ends the turn, so distilling sees it inside that turn.
        if transcript::reads_transcript(&event)
            && Instant::now() + Duration::from_millis(200) < deadline
        {
            match transcript::catch_up_codex(&mut store, req.config, &event) {
                Ok(caught) if caught.stored > 0 => {
                    tracing::debug!(stored = caught.stored, bytes = caught.bytes_read, "transcript read");
                }
                Ok(_) => {}
                Err(err) => tracing::warn!(%err, "reading the transcript failed; its edits wait for the next stop"),
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
            &run("stored", None),
            req.started,
        )?;
        Ok((store, outcome))
    });
    match written {
        Ok((mut store, outcome)) => {
            in_flight.set(Pending::Done);
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
                WriteOutcome::AlreadyStored => report.outcome = "duplicate",
                WriteOutcome::NearDuplicate { of } => {
                    report.outcome = "filtered";
                    report.detail =
                        Some(format!("{} of event {of}", filter::Layer::NearDuplicate.as_str()));
                }
            }
            let responder = inject::Responder { home: req.home, config: req.config };
            report.answer = responder.stored(&mut store, &event, &project);
            // Drain what earlier runs spooled while there is time left.
            if Instant::now() + Duration::from_millis(100) < deadline {
                let limit = req.config.capture.drain_per_hook;
                report.drained =
                    drain(&mut store, req.home, req.config, Some(deadline), limit).stored;
            }
        }
        Err(err) => {
            in_flight.set(Pending::Done);
            record.reason = err.to_string();
            record.duration_us = req.started.elapsed().as_micros() as i64;
            report.outcome = "spooled";
            report.detail = Some(err.to_string());
            if let Err(spool_err) = spool::append(&req.home.spool_dirs(), &record, time::now_ms()) {
                report.outcome = "failed";
                report.detail = Some(format!("{err}; spooling failed too: {spool_err}"));
            }
        }
    }
    report
}

/// Records the run of a hook that stores no event (unreadable, skipped or filtered input).
fn end_without_event(
    store: Result<Store, crate::store::StoreError>,
    run: HookRun<'_>,
    mut report: HookReport,
) -> HookReport {
    if let Ok(mut store) = store
        && let Err(err) = store.record_hook_run(&run)
    {
        tracing::warn!(%err, "could not record the hook run");
    }
    report.outcome = run.outcome;
    report.detail = run.detail;
    report
}

/// Opens the store with a busy timeout that still leaves time to spool before `deadline`.
fn open_store(
    home: &Home,
    config: &Config,
    deadline: Instant,
) -> Result<Store, crate::store::StoreError> {
    let left = deadline.saturating_duration_since(Instant::now());
    let reserve = Duration::from_millis(150);
    let busy = Duration::from_millis(config.capture.busy_timeout_ms)
        .min(left.saturating_sub(reserve))
        .max(Duration::from_millis(10));
    Store::open(&home.db_path(), busy)
}

/// Parses, sanitizes, normalizes, finishes and screens one input.
fn prepare(
    agent: &str,
    event_name: &str,
    uid: &str,
    received_at_ms: i64,
    bytes: &[u8],
    truncated_from: Option<u64>,
    config: &Config,
) -> Stage {
    let ctx = CaptureContext { uid, agent, event_name, received_at_ms };
    let mut payload = match parse_payload(bytes, truncated_from) {
        Ok(value) => value,
        Err(message) => return Stage::Invalid(message),
    };
    sanitize_json(&mut payload);
    let mut event = match adapter::normalize(&ctx, &payload) {
        Ok(Normalized::Event(event)) => event,
        Ok(Normalized::Skip { reason }) => return Stage::Skipped(reason),
        Ok(Normalized::Pending(tool)) => return Stage::Pending(tool),
        Err(err) => return Stage::Invalid(err.to_string()),
    };
    if let Some(original) = truncated_from {
        mark_truncated(&mut event, original);
    }
    finish(&mut event, config);
    // A truncated payload is recorded as such even when what survived looks like noise.
    if truncated_from.is_none()
        && let Some(layer) = filter::screen(&event, &config.filter)
    {
        return Stage::Filtered(layer);
    }
    let hash = filter::fingerprint(&event);
    Stage::Ready { event, hash }
}

/// The payload as JSON. An input cut at the stdin cap is not valid JSON; its small top-level
/// fields (ids, names, paths) are salvaged so the event is still recorded, marked truncated.
fn parse_payload(bytes: &[u8], truncated_from: Option<u64>) -> Result<Value, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err("empty payload on standard input".into());
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!("payload is JSON but not an object ({})", json_type(&other))),
        Err(err) => match truncated_from {
            Some(_) => Ok(salvage(bytes)),
            None if std::str::from_utf8(bytes).is_err() => {
                Err(format!("payload is not UTF-8 text ({} bytes of binary input)", bytes.len()))
            }
            None => Err(format!("payload is not valid JSON: {err}")),
        },
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Top-level string fields found in the first part of a cut-off JSON object.
fn salvage(bytes: &[u8]) -> Value {
    const FIELDS: &[&str] = &[
        "session_id",
        "sessionId",
        "sessionID",
        "hook_event_name",
        "cwd",
        "transcript_path",
        "tool_name",
        "toolName",
        "tool_use_id",
        "model",
        "source",
        "reason",
    ];
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]);
    let mut object = serde_json::Map::new();
    for field in FIELDS {
        let needle = format!("\"{field}\"");
        let Some(at) = head.find(&needle) else { continue };
        let rest = head[at + needle.len()..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else { continue };
        let mut stream = serde_json::Deserializer::from_str(rest.trim_start()).into_iter::<Value>();
        if let Some(Ok(value @ Value::String(_))) = stream.next() {
            object.insert((*field).to_owned(), value);
        }
    }
    Value::Object(object)
}

fn mark_truncated(event: &mut Event, original: u64) {
    let mib = original as f64 / (1024.0 * 1024.0);
    event.summary = format!("{} [payload of {mib:.1} MiB truncated]", event.summary);
    if let Value::Object(map) = &mut event.payload {
        map.insert("truncated_bytes".into(), original.into());
    }
}

/// Strips injected context, drops `<private>` spans and redacts secrets, in that order (a
/// secret inside a private span is dropped, not redacted).
pub fn sanitize_text(text: &str) -> Cow<'_, str> {
    match inject::strip_injected(text) {
        Cow::Borrowed(text) => redact::redactor().scrub(text).0,
        Cow::Owned(stripped) => Cow::Owned(redact::redactor().scrub(&stripped).0.into_owned()),
    }
}

/// [`sanitize_text`] over every string of a JSON value. Redaction sees keys too, so a value is
/// redacted when its key names a secret (`{"GITHUB_TOKEN": "…"}`).
pub fn sanitize_json(value: &mut Value) {
    strip_injected_json(value);
    redact::redactor().scrub_json(value);
}

fn strip_injected_json(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(clean) = inject::strip_injected(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_injected_json),
        Value::Object(map) => map.values_mut().for_each(strip_injected_json),
        _ => {}
    }
}

/// Sanitizes every text of an event and keeps only the fact of access to sensitive files: what
/// capture does to a payload, for events that arrive whole (imports were never ours).
pub fn sanitize_event(event: &mut Event) {
    for text in [&mut event.summary, &mut event.body] {
        if let Cow::Owned(clean) = sanitize_text(text) {
            *text = clean;
        }
    }
    sanitize_json(&mut event.payload);
    protect_sensitive(event);
}

/// Keeps only the fact of access to sensitive files, and caps sizes.
fn finish(event: &mut Event, config: &Config) {
    protect_sensitive(event);
    truncate_chars(&mut event.body, config.capture.max_body_chars);
    cap_strings(&mut event.payload, config.capture.max_field_chars);
}

/// For an event that read, wrote or ran a command on a sensitive file (`.env`, keys), keeps
/// which tool and which path or command, drops everything else, and marks the event private.
fn protect_sensitive(event: &mut Event) {
    let command =
        event.payload.pointer("/input/command").and_then(|c| c.as_str()).unwrap_or("").to_owned();
    let sensitive = event.files.iter().any(|f| redact::is_sensitive_path(f))
        || (event.tool_kind == Some(ToolKind::Shell)
            && redact::command_touches_sensitive_path(&command));
    if !sensitive {
        return;
    }
    let keep: serde_json::Map<String, Value> = event
        .payload
        .get("input")
        .and_then(|i| i.as_object())
        .map(|input| {
            input
                .iter()
                .filter(|(k, _)| PATH_AND_COMMAND_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    if let Value::Object(payload) = &mut event.payload {
        payload.insert("input".into(), Value::Object(keep));
        payload.insert("output".into(), Value::String(SENSITIVE_MARK.into()));
    }
    let subject = if command.is_empty() { event.files.join(", ") } else { command };
    event.body = format!("{subject}\n{SENSITIVE_MARK}");
    event.sensitivity = Sensitivity::Private;
}

/// The input fields that name what was accessed, kept for sensitive files.
const PATH_AND_COMMAND_KEYS: &[&str] =
    &["file_path", "path", "absolute_path", "notebook_path", "filePath", "command"];

/// What stands in for the content of a sensitive file.
pub const SENSITIVE_MARK: &str = "[content not stored: sensitive file]";

fn cap_strings(value: &mut Value, max: usize) {
    match value {
        Value::String(s) => truncate_chars(s, max),
        Value::Array(items) => items.iter_mut().for_each(|v| cap_strings(v, max)),
        Value::Object(map) => map.values_mut().for_each(|v| cap_strings(v, max)),
        _ => {}
    }
}

/// Cuts `text` to `max` characters on a character boundary, with a marker.
fn truncate_chars(text: &mut String, max: usize) {
    if let Some((cut, _)) = text.char_indices().nth(max) {
        let dropped = text[cut..].chars().count();
        text.truncate(cut);
        text.push_str(&format!("… [{dropped} characters truncated]"));
    }
}

fn resolve_project(cwd: Option<&str>, agent: &str, roots: &[PathBuf]) -> ProjectIdentity {
    match cwd.filter(|c| !c.is_empty()) {
        Some(cwd) => project::resolve(Path::new(cwd), roots),
        // Without a directory the agent is the best grouping there is.
        None => ProjectIdentity {
            key: format!("agent:{agent}"),
            root: PathBuf::new(),
            name: format!("({agent} without a directory)"),
            origin: None,
        },
    }
}

/// Keeps an unreadable payload for inspection: sanitized, capped, private to the user.
fn save_rejected(home: &Home, uid: &str, bytes: &[u8]) {
    const KEEP: usize = 1024 * 1024;
    let dir = home.rejected_dir();
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(KEEP)]);
    let clean = sanitize_text(&text);
    let saved = fsutil::ensure_private_dir(&dir).and_then(|()| {
        use std::io::Write;
        let path = dir.join(format!("{}-{uid}.txt", time::now_ms()));
        fsutil::private_file_options()
            .create_new(true)
            .write(true)
            .open(path)?
            .write_all(clean.as_bytes())
    });
    if let Err(err) = saved {
        tracing::warn!(%err, "could not keep the rejected payload");
    }
}

/// What a drain did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DrainReport {
    /// Events newly stored.
    pub stored: usize,
    /// Records whose event was stored already (a drain repeated after a crash).
    pub already_stored: usize,
    /// Records that became no event (skipped, filtered or unreadable once re-read).
    pub dropped: usize,
    pub files: usize,
    /// Files set aside because some of their lines could not be read.
    pub quarantined: usize,
}

/// Moves spooled events into the store, oldest first, until `limit` records or `deadline`.
pub fn drain(
    store: &mut Store,
    home: &Home,
    config: &Config,
    deadline: Option<Instant>,
    limit: usize,
) -> DrainReport {
    let mut report = DrainReport::default();
    let dirs = home.spool_dirs();
    let mut budget = limit;
    for path in spool::pending(&dirs, time::now_ms()) {
        if budget == 0 || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let Some(claimed) = spool::claim(&path, time::now_ms()) else { continue };
        let (records, bad) = match spool::read(&claimed) {
            Ok(read) => read,
            Err(err) => {
                tracing::warn!(%err, path = %claimed.display(), "cannot read spool file");
                spool::release(&claimed);
                continue;
            }
        };
        budget = budget.saturating_sub(records.len().max(1));
        match store_records(store, &records, config) {
            Ok((stored, dropped)) => {
                report.stored += stored;
                report.dropped += dropped;
                report.already_stored += records.len() - stored - dropped;
                report.files += 1;
                if bad.is_empty() {
                    let _ = std::fs::remove_file(&claimed);
                } else {
                    tracing::warn!(path = %claimed.display(), errors = ?bad, "spool file has unreadable lines; kept aside");
                    report.quarantined += 1;
                    let _ = spool::quarantine(&claimed);
                }
            }
            Err(err) => {
                tracing::warn!(%err, "cannot drain the spool now; will retry");
                spool::release(&claimed);
                break;
            }
        }
    }
    report
}

/// Stores one spool file's records in one transaction; returns (new events, dropped records).
fn store_records(
    store: &mut Store,
    records: &[SpoolRecord],
    config: &Config,
) -> crate::store::Result<(usize, usize)> {
    let mut items = Vec::new();
    let mut runs = Vec::new();
    let mut dropped = 0;
    for record in records {
        let prepared = match (&record.prepared, &record.raw) {
            (Some(p), _) => Some((
                p.event.clone(),
                p.content_hash.clone(),
                ProjectIdentity::from(p.project.clone()),
            )),
            (None, Some(raw)) => {
                match prepare(
                    &record.agent,
                    &record.event_name,
                    &record.uid,
                    record.received_at_ms,
                    raw.as_bytes(),
                    None,
                    config,
                ) {
                    Stage::Ready { event, hash } => {
                        let roots = store.registered_roots().unwrap_or_default();
                        let project = resolve_project(event.cwd.as_deref(), &event.agent, &roots);
                        Some((*event, hash, project))
                    }
                    _ => None,
                }
            }
            (None, None) => None,
        };
        match prepared {
            Some(item) => items.push(item),
            None => dropped += 1,
        }
        runs.push(HookRun {
            at_ms: record.received_at_ms,
            agent: &record.agent,
            event_name: &record.event_name,
            outcome: "spooled",
            detail: Some(record.reason.clone()),
            duration_us: record.duration_us,
            event_uid: Some(&record.uid),
        });
    }
    let stored = store.write_recovered(&items, &runs)?;
    Ok((stored, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_capped_keeps_the_head_and_counts_the_rest() {
        let data = vec![b'a'; 1000];
        let input = read_capped(&mut &data[..], 100).expect("read");
        assert_eq!((input.bytes.len(), input.truncated_from), (100, Some(1000)));
        let input = read_capped(&mut &data[..100], 100).expect("read");
        assert_eq!((input.bytes.len(), input.truncated_from), (100, None));
    }

    #[test]
    fn a_cut_payload_keeps_its_small_fields() {
        let head = br#"{"session_id": "abc", "cwd": "/w", "tool_name": "Bash", "tool_response": {"stdout": "xxxxx"#;
        let value = parse_payload(head, Some(10_000_000)).expect("salvaged");
        assert_eq!(value["session_id"], "abc");
        assert_eq!(value["tool_name"], "Bash");
        assert!(value.get("tool_response").is_none());
        assert!(parse_payload(head, None).expect_err("not salvaged").contains("not valid JSON"));
    }

    #[test]
    fn the_watchdog_spools_an_unfinished_run_once_and_sanitized() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = Home::at(dir.path().join("home"));
        let in_flight = InFlight::new(&home);
        assert!(in_flight.spool_unfinished("deadline").is_none(), "nothing in flight");
        let meta = SpoolRecord {
            v: spool::RECORD_VERSION,
            uid: "u1".into(),
            agent: "codex".into(),
            event_name: "UserPromptSubmit".into(),
            received_at_ms: 1,
            duration_us: 0,
            reason: String::new(),
            prepared: None,
            raw: None,
        };
        let raw = br#"{"prompt": "keep <private>drop this</private> rest"}"#.to_vec();
        in_flight.set(Pending::Raw { meta: Box::new(meta), bytes: Arc::new(raw) });
        let path = in_flight.spool_unfinished("deadline").expect("spooled").expect("written");
        let (records, bad) = spool::read(&path).expect("read back");
        assert!(bad.is_empty());
        let raw = records[0].raw.as_deref().expect("raw kept");
        assert!(raw.contains("keep") && !raw.contains("drop this"), "{raw}");
        assert_eq!(records[0].reason, "deadline");
        assert!(in_flight.spool_unfinished("deadline").is_none(), "spooled only once");
    }
}
