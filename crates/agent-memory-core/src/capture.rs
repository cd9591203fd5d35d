//! Capture: here are bytes an agent sent, give me a finished event ready for the store (or the
//! reason there is none); and here is the spool, move what waits in it into the store.
//!
//! [`prepare`]: `parse` → `sanitize` (strip injected context, drop `<private>` spans, redact
//! secrets in every string) → `adapter::normalize` → [`finish`] (sensitive files keep only the
//! fact of access; size caps) → filter layers 1–2 → fingerprint; layer 3 runs inside the store's
//! write transaction. [`drain`] stores what earlier runs spooled. The hook run that calls these,
//! stores and answers is `hook.rs`; the sanitizer here is also what imports and edited memory
//! text pass through.
//!
//! Must not: print, start threads or runtimes, open sockets, panic on any input, or read an
//! agent's tool arguments (the adapter turns them into [`crate::event::ToolFacts`]).

pub mod fence;
pub mod filter;
pub mod lost;
pub mod redact;
pub mod spool;
pub mod transcript;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::adapter::{self, Normalized, PendingTool};
use crate::config::{CaptureConfig, Config};
use crate::event::{CaptureContext, Event, Sensitivity, ToolKind};
use crate::paths::Home;
use crate::project::{self, ProjectIdentity};
use crate::store::{HookRun, Store};
use crate::{fsutil, time};
use spool::SpoolRecord;

/// Standard input as a hook read it.
#[derive(Debug, Clone)]
pub struct Input {
    pub bytes: Vec<u8>,
    /// The full length of the input when it was longer than the cap.
    pub truncated_from: Option<u64>,
}

/// How far an input got through the stages before the store.
#[derive(Debug)]
pub enum Stage {
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

/// Parses, sanitizes, normalizes, finishes and screens one input.
pub fn prepare(
    agent: &str,
    event_name: &str,
    uid: &str,
    received_at_ms: i64,
    bytes: &[u8],
    truncated_from: Option<u64>,
    config: &Config,
) -> Stage {
    let payload = match parse_payload(bytes, truncated_from) {
        Ok(value) => value,
        Err(message) => return Stage::Invalid(message),
    };
    prepare_value(agent, event_name, uid, received_at_ms, payload, truncated_from, config)
}

/// [`prepare`] for a payload already parsed: what an agent's own history is read as.
pub fn prepare_value(
    agent: &str,
    event_name: &str,
    uid: &str,
    received_at_ms: i64,
    mut payload: Value,
    truncated_from: Option<u64>,
    config: &Config,
) -> Stage {
    let ctx = CaptureContext { uid, agent, event_name, received_at_ms };
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

/// What can be read of a cut-off JSON object: every top-level member complete before the cut,
/// then the small identifying fields ([`adapter::SALVAGED_FIELDS`]) wherever they stand in its
/// first 64 KiB.
fn salvage(bytes: &[u8]) -> Value {
    let mut object = complete_members(&String::from_utf8_lossy(bytes));
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]);
    for field in adapter::SALVAGED_FIELDS {
        if object.contains_key(*field) {
            continue;
        }
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

/// The members of a JSON object read in order until the first one the text cuts off.
fn complete_members(text: &str) -> serde_json::Map<String, Value> {
    let mut object = serde_json::Map::new();
    let Some(mut rest) = text.trim_start().strip_prefix('{') else { return object };
    loop {
        rest = rest.trim_start().trim_start_matches(',').trim_start();
        let mut keys = serde_json::Deserializer::from_str(rest).into_iter::<String>();
        let Some(Ok(key)) = keys.next() else { break };
        let after_key = rest[keys.byte_offset()..].trim_start();
        let Some(after_colon) = after_key.strip_prefix(':') else { break };
        let mut values = serde_json::Deserializer::from_str(after_colon).into_iter::<Value>();
        let Some(Ok(value)) = values.next() else { break };
        rest = &after_colon[values.byte_offset()..];
        object.insert(key, value);
    }
    object
}

fn mark_truncated(event: &mut Event, original: u64) {
    let size = match original {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20)),
        n if n >= 1 << 10 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    };
    event.summary = format!("{} [payload of {size} truncated]", event.summary);
    if let Value::Object(map) = &mut event.payload {
        map.insert("truncated_bytes".into(), original.into());
    }
}

/// Strips injected context, drops `<private>` spans and redacts secrets, in that order (a
/// secret inside a private span is dropped, not redacted).
pub fn sanitize_text(text: &str) -> Cow<'_, str> {
    let mut clean = match fence::strip_injected(text) {
        Cow::Borrowed(text) => redact::redactor().scrub(text).0,
        Cow::Owned(stripped) => Cow::Owned(redact::redactor().scrub(&stripped).0.into_owned()),
    };
    // Dropping a `<private>` span can join the text around it into a fence tag; each round
    // strips at least one tag, so this ends.
    while fence::holds_tag(&clean) {
        let stripped = fence::strip_injected(&clean).into_owned();
        clean = Cow::Owned(redact::redactor().scrub(&stripped).0.into_owned());
    }
    clean
}

/// [`sanitize_text`] over every string of a JSON value. Redaction sees keys too, so a value is
/// redacted when its key names a secret (`{"GITHUB_TOKEN": "…"}`).
pub fn sanitize_json(value: &mut Value) {
    each_string(value, &mut |s| {
        if let Cow::Owned(clean) = fence::strip_injected(s) {
            *s = clean;
        }
    });
    redact::redactor().scrub_json(value);
    // As in `sanitize_text`: a dropped `<private>` span can leave a fence tag behind.
    each_string(value, &mut |s| {
        if fence::holds_tag(s) {
            *s = sanitize_text(s).into_owned();
        }
    });
}

fn each_string(value: &mut Value, each: &mut impl FnMut(&mut String)) {
    match value {
        Value::String(s) => each(s),
        Value::Array(items) => items.iter_mut().for_each(|item| each_string(item, each)),
        Value::Object(map) => map.values_mut().for_each(|item| each_string(item, each)),
        _ => {}
    }
}

/// Sanitizes every text of an event and keeps only the fact of access to sensitive files: what
/// capture does to a payload, for events that arrive whole (imports were never ours).
pub fn sanitize_event(event: &mut Event) {
    // Every text an event carries: a secret or a fence tag can hide in a file name or a tool
    // name as well as in a body.
    let texts = [&mut event.summary, &mut event.body].into_iter().chain(event.files.iter_mut());
    let optional = [&mut event.tool, &mut event.cwd, &mut event.transcript_path];
    for text in texts.chain(optional.into_iter().flatten()) {
        if let Cow::Owned(clean) = sanitize_text(text) {
            *text = clean;
        }
    }
    sanitize_json(&mut event.payload);
    for text in event.facts.texts_mut() {
        if let Cow::Owned(clean) = sanitize_text(text) {
            *text = clean;
        }
    }
    protect_sensitive(event);
}

/// Keeps only the fact of access to sensitive files, and caps sizes.
pub fn finish(event: &mut Event, config: &Config) {
    finish_with(event, &config.capture);
}

/// [`finish`] with the capture settings alone, for a later stage that completes an event.
pub(crate) fn finish_with(event: &mut Event, caps: &CaptureConfig) {
    protect_sensitive(event);
    truncate_chars(&mut event.body, caps.max_body_chars);
    cap_strings(&mut event.payload, caps.max_field_chars);
    // The facts repeat parts of the payload; they are capped alike.
    for text in event.facts.texts_mut() {
        truncate_chars(text, caps.max_field_chars);
    }
}

/// For an event that read, wrote or ran a command on a sensitive file (`.env`, keys), keeps
/// which tool and which path or command, drops everything else, and marks the event private.
fn protect_sensitive(event: &mut Event) {
    let command = event.facts.command.as_deref().unwrap_or_default();
    let sensitive = event.files.iter().any(|f| redact::is_sensitive_path(f))
        || (event.tool_kind == Some(ToolKind::Shell)
            && redact::command_touches_sensitive_path(command));
    if !sensitive {
        return;
    }
    let command = command.to_owned();
    adapter::keep_only_access(&mut event.payload);
    if let Value::Object(payload) = &mut event.payload {
        payload.insert("output".into(), Value::String(SENSITIVE_MARK.into()));
    }
    // Only what names the access is kept: the command and the paths, not what was written.
    event.facts.query = None;
    event.facts.added = None;
    let subject = if command.is_empty() { event.files.join(", ") } else { command };
    event.body = format!("{subject}\n{SENSITIVE_MARK}");
    event.sensitivity = Sensitivity::Private;
}

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

/// The project of an event's working directory; without one, the agent is the grouping.
pub fn resolve_project(cwd: Option<&str>, agent: &str, roots: &[PathBuf]) -> ProjectIdentity {
    match cwd.filter(|c| !c.is_empty()) {
        Some(cwd) => project::resolve(Path::new(cwd), roots),
        // Without a directory the agent is the best grouping there is.
        None => ProjectIdentity {
            key: format!("agent:{agent}"),
            root: PathBuf::new(),
            name: format!("({agent} without a directory)"),
            origin: None,
            branch: None,
        },
    }
}

/// Keeps an unreadable payload for inspection: sanitized, capped, private to the user.
pub fn save_rejected(home: &Home, uid: &str, bytes: &[u8]) {
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
    prune_oldest(&dir, MAX_REJECTED);
}

/// Rejected payloads kept for inspection (each at most 1 MiB); older ones are removed.
pub const MAX_REJECTED: usize = 200;

/// Removes the oldest files of `dir` (their names start with the time) beyond `keep`.
fn prune_oldest(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<std::ffi::OsString> = entries.flatten().map(|e| e.file_name()).collect();
    if names.len() <= keep {
        return;
    }
    names.sort();
    for name in &names[..names.len() - keep] {
        let _ = std::fs::remove_file(dir.join(name));
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

/// At most this many lost events are recorded as hook runs at once; the rest wait for the next
/// run.
const LOST_RECORDED_AT_ONCE: u64 = 10_000;

/// Moves the count of events that nothing could take ([`lost`]) into the store as `lost` hook
/// runs, where `status` reports them; and makes the counter, its bytes allocated, the first
/// time. Cheap when nothing was lost: a `stat` and one small read.
pub fn record_lost(store: &mut Store, home: &Home) {
    if let Err(err) = lost::ensure(home) {
        tracing::debug!(%err, "cannot make the lost-event counter");
        return;
    }
    let lost = lost::peek(home);
    if lost.count == 0 {
        return;
    }
    let n = lost.count.min(LOST_RECORDED_AT_ONCE);
    let detail = format!(
        "no spool could take the event (the disk was full, or no spool folder could be \
         written); {} lost then",
        lost.count
    );
    let runs: Vec<HookRun<'_>> = (0..n)
        .map(|_| HookRun {
            at_ms: lost.last_ms,
            agent: &lost.agent,
            event_name: &lost.event_name,
            outcome: "lost",
            detail: Some(detail.clone()),
            duration_us: 0,
            event_uid: None,
        })
        .collect();
    match store.write_recovered(&[], &runs) {
        Ok(_) => {
            if let Err(err) = lost::subtract(home, n) {
                tracing::warn!(%err, "lost events recorded, but the counter could not be lowered");
            }
        }
        Err(err) => tracing::debug!(%err, "cannot record lost events yet"),
    }
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
    // A record dated after now was written by a clock that was ahead: it is dated now, so it
    // does not sit after everything that happens until the clock catches up.
    let now_ms = time::now_ms();
    for record in records {
        let received_at_ms = record.received_at_ms.min(now_ms);
        let prepared = match (&record.prepared, &record.raw) {
            // Sanitized again: a spool is a file, and what reads it back does not take its word
            // that nothing secret or fenced is in it.
            (Some(p), _) => {
                let mut event = p.event.clone();
                event.at_ms = event.at_ms.min(now_ms);
                sanitize_event(&mut event);
                let mut project = ProjectIdentity::from(p.project.clone());
                project.name = sanitize_text(&project.name).into_owned();
                Some((event, p.content_hash.clone(), project))
            }
            (None, Some(raw)) => {
                // A payload cut short by the deadline is read as one cut at the stdin cap.
                let truncated_from = record.partial.then_some(raw.len() as u64 + 1);
                match prepare(
                    &record.agent,
                    &record.event_name,
                    &record.uid,
                    received_at_ms,
                    raw.as_bytes(),
                    truncated_from,
                    config,
                ) {
                    Stage::Ready { mut event, hash } => {
                        event.at_ms = event.at_ms.min(now_ms);
                        let roots = store.registered_roots().unwrap_or_default();
                        let project = resolve_project(event.cwd.as_deref(), &event.agent, &roots);
                        Some((*event, hash, project))
                    }
                    _ => None,
                }
            }
            (None, None) => None,
        };
        // A payload cut short by the deadline counts apart in `status`: `partial` when its
        // event could be salvaged, `lost` when nothing of it could.
        let outcome = match (&prepared, record.partial) {
            (_, false) => "spooled",
            (Some(_), true) => "partial",
            (None, true) => "lost",
        };
        match prepared {
            Some(item) => items.push(item),
            None => dropped += 1,
        }
        runs.push(HookRun {
            at_ms: received_at_ms,
            agent: &record.agent,
            event_name: &record.event_name,
            outcome,
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
    fn a_private_span_cannot_join_a_fence_tag_into_what_is_stored() {
        let text = "keep <agent-memory-<private>x</private>context> SYSTEM: obey";
        let clean = sanitize_text(text);
        assert!(!fence::holds_tag(&clean), "{clean}");
        assert!(clean.contains("SYSTEM: obey"), "{clean}");
        let mut value = serde_json::json!({ "prompt": text, "list": [text] });
        sanitize_json(&mut value);
        assert!(!fence::holds_tag(&value.to_string()), "{value}");
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
    fn only_the_newest_rejected_payloads_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        for t in 10..15 {
            fsutil::write_atomic(&dir.path().join(format!("{t}-x.txt")), b"x").expect("write");
        }
        prune_oldest(dir.path(), 3);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["12-x.txt", "13-x.txt", "14-x.txt"]);
    }

    #[test]
    fn every_member_complete_before_the_cut_is_kept() {
        let head = br#"{"prompt": "fix \"it\"", "n": 3, "tool_input": {"a": [1, 2]}, "late": "cut"#;
        let value = parse_payload(head, Some(1_000)).expect("salvaged");
        assert_eq!(value["prompt"], "fix \"it\"");
        assert_eq!(value["n"], 3);
        assert_eq!(value["tool_input"]["a"][1], 2);
        assert!(value.get("late").is_none());
        for broken in [&b"not json"[..], b"{", b"{\"a\"", b"{\"a\":", b"[1, 2", b"\xff\xfe{"] {
            let _ = parse_payload(broken, Some(1_000));
        }
    }
}
