//! Catching up on an agent's own transcript at a stop: the tool calls its hooks never
//! reported.
//!
//! Some agents record in their transcript (`transcript_path` in every hook payload) tool calls
//! no hook reports (Codex's patches). For an agent whose registry row has a transcript reader,
//! at a stop or session end, before that event is written, this reads what the transcript
//! gained since the last time, has the reader turn each such call into the hook payload the
//! agent would have sent, and passes it through the same sanitize → adapter → finish steps as
//! any hook input. Each becomes one event keyed by the call's id, so a second reading adds
//! nothing, and a call a hook already reported (same call id) is left out. Only the reader in
//! `adapter/` knows the transcript's format.
//!
//! Some agents hand their stop hook no closing answer (Copilot's `agentStop` names only its
//! session log). For an agent whose registry row has a closing-answer reader, the work pass (never
//! the hook) reads the end of that transcript, at most [`ANSWER_TAIL`] bytes, has the reader find
//! the turn's answer, and fills it into the stop after the same sanitizing and size caps as any
//! captured text ([`fill_closing_answer`]).
//!
//! Must not: read more than [`MAX_READ`] bytes in one hook run (the rest waits for the next
//! stop), take a partial last line, or fail the hook or the pass: every problem is logged and
//! skipped.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;

use super::{Stage, finish_with, prepare, resolve_project, sanitize_text};
use crate::adapter::{self, ClosingAnswer, TranscriptReader, TurnSpan};
use crate::config::{CaptureConfig, Config};
use crate::event::{Event, EventKind};
use crate::store::{Store, StoreError};
use crate::time;

/// The most of a transcript one hook run reads.
pub const MAX_READ: u64 = 4 * 1024 * 1024;

/// What one catch-up did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CatchUp {
    pub bytes_read: u64,
    /// Events stored from the transcript.
    pub stored: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum CatchUpError {
    #[error("cannot read the transcript {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The reader of `event`'s transcript, when it is one after which its agent's transcript is
/// read: a stop or session end, of an agent whose registry row has a reader, naming its file.
fn reader(event: &Event) -> Option<TranscriptReader> {
    if !matches!(event.kind, EventKind::Stop | EventKind::SessionEnd) {
        return None;
    }
    event.transcript_path.as_ref()?;
    adapter::find_agent(&event.agent)?.transcript
}

/// Whether `event` is one after which this agent's transcript is read.
pub fn reads_transcript(event: &Event) -> bool {
    reader(event).is_some()
}

/// Reads what the transcript of `event`'s session gained since the last reading and stores the
/// tool calls no hook reported.
pub fn catch_up(
    store: &mut Store,
    config: &Config,
    event: &Event,
) -> Result<CatchUp, CatchUpError> {
    let (Some(read), Some(path)) = (reader(event), event.transcript_path.as_deref()) else {
        return Ok(CatchUp::default());
    };
    let mut offset = store.transcript_offset(path)?;
    let read_err = |source| CatchUpError::Read { path: path.to_owned(), source };
    let mut file = File::open(path).map_err(read_err)?;
    let len = file.metadata().map_err(read_err)?.len();
    if len < offset {
        // Rewritten or replaced: read it again; event uids keep it from counting twice.
        offset = 0;
    }
    let want = (len - offset).min(MAX_READ);
    let mut bytes = Vec::with_capacity(want as usize);
    file.seek(SeekFrom::Start(offset)).map_err(read_err)?;
    file.take(want).read_to_end(&mut bytes).map_err(read_err)?;
    // Only whole lines: the agent may be writing the next one now.
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(whole);
    let mut report = CatchUp { bytes_read: whole as u64, stored: 0 };
    if whole == 0 {
        return Ok(report);
    }
    let known = store.session_call_ids(&event.agent, &event.session)?;
    let roots = store.registered_roots()?;
    let mut items = Vec::new();
    for line in bytes.split(|b| *b == b'\n') {
        let Some(call) = read(line, event, &known) else { continue };
        // `<agent>-rollout-<session>-<call>`: stable, so a second reading stores nothing.
        let uid = format!("{}-rollout-{}-{}", event.agent, event.session, call.call_id);
        let bytes = call.payload.to_string().into_bytes();
        match prepare(&event.agent, call.event_name, &uid, call.at_ms, &bytes, None, config) {
            Stage::Ready { event: change, hash } => {
                let project = resolve_project(change.cwd.as_deref(), &change.agent, &roots);
                items.push((*change, hash, project));
            }
            Stage::Invalid(problem) => {
                tracing::warn!(%problem, %uid, "a call read from the transcript")
            }
            _ => {}
        }
    }
    report.stored = store.write_recovered(&items, &[])?;
    store.set_transcript_offset(path, offset + whole as u64, time::now_ms())?;
    Ok(report)
}

/// The most of a transcript's end the work pass reads for closing answers.
pub const ANSWER_TAIL: u64 = 1024 * 1024;

/// The ends of transcripts read for closing answers, by path: the stops of one session share
/// one reading, and a transcript that could not be read is not tried again.
#[derive(Debug, Default)]
pub struct Tails {
    read: HashMap<String, Tail>,
}

/// One transcript's end, as far as it could be read.
#[derive(Debug)]
enum Tail {
    Read(Vec<u8>),
    /// No file there (yet: an agent that writes its transcript lazily may not have made it).
    Missing,
    Unreadable,
}

impl Tails {
    fn get(&mut self, path: &str) -> &Tail {
        self.read.entry(path.to_owned()).or_insert_with(|| {
            match read_tail(Path::new(path), ANSWER_TAIL) {
                Ok(tail) => Tail::Read(tail),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    tracing::debug!(path, "no transcript yet for a closing answer");
                    Tail::Missing
                }
                Err(err) => {
                    tracing::warn!(%err, path, "cannot read a transcript for a closing answer");
                    Tail::Unreadable
                }
            }
        })
    }
}

/// What [`fill_closing_answer`] did to a stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filled {
    /// The stop got its closing answer.
    Answer,
    /// Nothing to do, or nothing to be had: the stop carries an answer, its agent's transcript
    /// is not read, cannot be read, or holds no answer for the turn.
    Nothing,
    /// The transcript does not hold the turn's end yet, or is not there yet; a later reading
    /// may find the answer.
    Unwritten,
}

/// Gives `stop` the closing answer its hook did not carry, read from the end of its agent's
/// transcript, sanitized and capped as captured text is. Only a stop without one, of an agent
/// whose registry row has a closing-answer reader, that names its transcript. `began_ms` is the
/// time of the turn's first event, when known: nothing the transcript holds from before it is
/// the turn's.
pub fn fill_closing_answer(
    stop: &mut Event,
    began_ms: Option<i64>,
    caps: &CaptureConfig,
    tails: &mut Tails,
) -> Filled {
    if stop.kind != EventKind::Stop || adapter::closing_answer_of(stop).is_some() {
        return Filled::Nothing;
    }
    let Some(read) = adapter::find_agent(&stop.agent).and_then(|spec| spec.closing_answer) else {
        return Filled::Nothing;
    };
    let Some(path) = stop.transcript_path.clone() else { return Filled::Nothing };
    let tail = match tails.get(&path) {
        Tail::Read(tail) => tail,
        Tail::Missing => return Filled::Unwritten,
        Tail::Unreadable => return Filled::Nothing,
    };
    let answer = match read(tail, TurnSpan { began_ms, stop_ms: stop.at_ms }) {
        ClosingAnswer::Found(answer) => answer,
        ClosingAnswer::Absent => return Filled::Nothing,
        ClosingAnswer::Unwritten => return Filled::Unwritten,
    };
    let clean = sanitize_text(&answer);
    let clean = clean.trim();
    if clean.is_empty() {
        return Filled::Nothing;
    }
    adapter::set_closing_answer(stop, clean);
    finish_with(stop, caps);
    Filled::Answer
}

/// The last `max` bytes of the file at `path`, from the first whole line on.
fn read_tail(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    // Only a regular file: opening a pipe would wait for a writer.
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    // One byte before the window tells whether its first line is whole.
    let start = len.saturating_sub(max + 1);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if start > 0 || bytes.len() as u64 > max {
        let first = bytes.iter().position(|b| *b == b'\n').map_or(bytes.len(), |i| i + 1);
        bytes.drain(..first);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Value, json};

    use super::*;

    fn stop(dir: &Path, transcript: &Path) -> Event {
        Event {
            uid: "stop-1".into(),
            agent: "codex".into(),
            kind: EventKind::Stop,
            source_event: "Stop".into(),
            session: "019-thread".into(),
            cwd: Some(dir.display().to_string()),
            at_ms: 1_796_276_390_000,
            tool: None,
            tool_kind: None,
            summary: "Turn ended".into(),
            body: String::new(),
            payload: Value::Null,
            files: Vec::new(),
            sensitivity: crate::event::Sensitivity::Normal,
            transcript_path: Some(transcript.display().to_string()),
            facts: Default::default(),
        }
    }

    fn change_line(dir: &Path, call: &str, file: &str, change: Value) -> String {
        let mut changes = serde_json::Map::new();
        changes.insert(dir.join(file).display().to_string(), change);
        json!({"timestamp": "2026-12-03T05:39:49.294Z", "type": "event_msg", "payload": {
            "type": "item_completed", "thread_id": "019-thread", "item": {
                "type": "FileChange", "id": call, "changes": changes, "status": "completed",
                "stdout": format!("Success. Updated the following files:\nA {file}\n"), "stderr": ""}}})
        .to_string()
    }

    fn append(path: &Path, text: &str) {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("open");
        f.write_all(text.as_bytes()).expect("append");
    }

    fn tool_events(store: &Store) -> Vec<(String, String, String)> {
        let mut stmt = store
            .conn()
            .prepare("SELECT tool, files, summary FROM events WHERE kind = 'tool_use' ORDER BY id")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("rows")
    }

    #[test]
    fn file_changes_are_stored_once_and_only_new_lines_are_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let rollout = dir.path().join("rollout.jsonl");
        let token_line = r#"{"type":"event_msg","payload":{"type":"token_count"}}"#;
        let added = change_line(
            dir.path(),
            "call_1",
            "notes.txt",
            json!({"type": "add", "content": "hello quartz\nsecond line\n"}),
        );
        append(&rollout, &format!("{token_line}\n{added}\n"));
        let mut store = Store::open_in_memory().expect("store");
        let config = Config::default();
        let event = stop(dir.path(), &rollout);

        let first = catch_up(&mut store, &config, &event).expect("catch up");
        assert_eq!(first.stored, 1);
        let events = tool_events(&store);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].0, "apply_patch");
        assert_eq!(events[0].1, r#"["notes.txt"]"#);

        // Nothing new: nothing read, nothing stored.
        let again = catch_up(&mut store, &config, &event).expect("catch up");
        assert_eq!(again, CatchUp { bytes_read: 0, stored: 0 });

        // An update, and a half-written line that waits for the next stop.
        let diff = "@@ -1 +1 @@\n-hello quartz\n+hello granite\n";
        let updated = change_line(
            dir.path(),
            "call_2",
            "notes.txt",
            json!({"type": "update", "unified_diff": diff, "move_path": null}),
        );
        let partial = change_line(dir.path(), "call_3", "b.txt", json!({"type": "delete"}));
        append(&rollout, &format!("{updated}\n{}", &partial[..40]));
        let third = catch_up(&mut store, &config, &event).expect("catch up");
        assert_eq!(third.stored, 1);
        assert_eq!(third.bytes_read, updated.len() as u64 + 1);
        append(&rollout, &format!("{}\n", &partial[40..]));
        assert_eq!(catch_up(&mut store, &config, &event).expect("catch up").stored, 1);
        let events = tool_events(&store);
        assert_eq!(events.len(), 3, "{events:?}");
        assert!(events[1].2.contains("notes.txt"), "{events:?}");
        assert_eq!(events[2].1, r#"["b.txt"]"#);

        // Read from the start again (a new home, say): the uids keep every change single.
        store.set_transcript_offset(&rollout.display().to_string(), 0, 0).expect("reset");
        assert_eq!(catch_up(&mut store, &config, &event).expect("catch up").stored, 0);
        assert_eq!(tool_events(&store).len(), 3);
    }

    #[test]
    fn a_change_a_hook_already_reported_is_left_out_and_secrets_are_redacted() {
        let dir = tempfile::tempdir().expect("temp dir");
        let rollout = dir.path().join("rollout.jsonl");
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let line = change_line(
            dir.path(),
            "call_9",
            "env.sh",
            json!({"type": "add", "content": format!("export TOKEN={secret}\n")}),
        );
        let known = change_line(dir.path(), "call_hooked", "x.txt", json!({"type": "add"}));
        append(&rollout, &format!("{line}\n{known}\n"));
        let mut store = Store::open_in_memory().expect("store");
        let config = Config::default();
        let event = stop(dir.path(), &rollout);
        // The hook reported call_hooked itself.
        let hooked = json!({"session_id": event.session, "cwd": event.cwd,
            "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "cargo test --workspace"},
            "tool_response": "test result: ok. 12 passed", "tool_use_id": "call_hooked"});
        let Stage::Ready { event: e, hash } = prepare(
            "codex",
            "PostToolUse",
            "hooked",
            1,
            hooked.to_string().as_bytes(),
            None,
            &config,
        ) else {
            panic!("hook payload not ready")
        };
        let project = resolve_project(e.cwd.as_deref(), "codex", &[]);
        store.write_recovered(&[(*e, hash, project)], &[]).expect("write");

        let report = catch_up(&mut store, &config, &event).expect("catch up");
        assert_eq!(report.stored, 1, "only the change no hook reported");
        let body: String = store
            .conn()
            .query_row("SELECT body FROM events WHERE tool = 'apply_patch'", [], |r| r.get(0))
            .expect("body");
        assert!(!body.contains(secret), "{body}");
        assert!(body.contains("env.sh"), "{body}");
    }

    #[test]
    fn a_missing_transcript_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut store = Store::open_in_memory().expect("store");
        let event = stop(dir.path(), &dir.path().join("gone.jsonl"));
        let err = catch_up(&mut store, &Config::default(), &event).expect_err("missing");
        assert!(err.to_string().starts_with("cannot read the transcript"), "{err}");
    }

    /// A stop as the Copilot hook stores it: no answer, the session log named.
    fn bare_stop(log: &Path) -> Event {
        let payload = json!({
            "sessionId": "00000001-0000-4000-8000-000000000000", "timestamp": 1_796_406_032_752_i64,
            "cwd": "/home/dev/work/proj", "transcriptPath": log.display().to_string(),
            "stopReason": "end_turn", "stop_hook_active": false,
        });
        let Stage::Ready { event, .. } = prepare(
            "copilot",
            "agentStop",
            "stop-c1",
            1,
            payload.to_string().as_bytes(),
            None,
            &Config::default(),
        ) else {
            panic!("the stop is stored")
        };
        *event
    }

    fn log_line(kind: &str, at: &str, content: &str) -> String {
        json!({"type": kind, "data": {"content": content, "toolRequests": []},
               "id": "7bde33a4-fcf4-4c69-81c5-04acd41172a5", "timestamp": at, "parentId": null})
        .to_string()
    }

    #[test]
    fn a_stop_gets_its_answer_sanitized_and_stored_where_search_finds_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("events.jsonl");
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let answer = format!(
            "Fixed /home/dev/work/proj/matrix.py: range(len(rows[0])) granite. Token {secret}.\n\
             <agent-memory-context>\nremembered: old note\n</agent-memory-context>\n\
             <private>internal hostname</private>done"
        );
        append(
            &log,
            &format!(
                "{}\n{}\n{}\n",
                log_line("user.message", "2026-12-04T17:40:31.677Z", "Fix matrix.py."),
                log_line("assistant.message", "2026-12-04T17:40:31.771Z", ""),
                log_line("assistant.message", "2026-12-04T17:40:32.743Z", &answer),
            ),
        );
        let mut stop = bare_stop(&log);
        assert_eq!(stop.summary, "Turn ended");
        let mut store = Store::open_in_memory().expect("store");
        let project = resolve_project(stop.cwd.as_deref(), "copilot", &[]);
        store.write_recovered(&[(stop.clone(), "h".into(), project)], &[]).expect("write");
        let id: i64 =
            store.conn().query_row("SELECT id FROM events", [], |r| r.get(0)).expect("id");

        let mut tails = Tails::default();
        assert_eq!(
            Filled::Answer,
            fill_closing_answer(&mut stop, None, &CaptureConfig::default(), &mut tails)
        );
        let last = stop.payload["last_message"].as_str().expect("an answer").to_owned();
        for text in [&last, &stop.body, &stop.summary] {
            assert!(text.contains("granite"), "{text}");
            for gone in [secret, "remembered", "internal hostname", "agent-memory-context"] {
                assert!(!text.contains(gone), "{gone} in {text}");
            }
        }
        assert_eq!(stop.body, last);
        assert!(stop.summary.starts_with("Turn ended: Fixed matrix.py: range"), "{}", stop.summary);
        // A second reading changes nothing: the stop has its answer.
        assert_eq!(
            Filled::Nothing,
            fill_closing_answer(&mut stop, None, &CaptureConfig::default(), &mut tails)
        );

        assert!(store.set_stop_answer(id, &stop).expect("update"));
        let (body, payload): (String, String) = store
            .conn()
            .query_row("SELECT body, payload FROM events WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("row");
        assert_eq!(body, stop.body);
        assert!(payload.contains("granite") && !payload.contains(secret), "{payload}");
        let found: i64 = store
            .conn()
            .query_row(
                "SELECT count(*) FROM events_fts WHERE events_fts MATCH 'granite'",
                [],
                |r| r.get(0),
            )
            .expect("search");
        assert_eq!(found, 1, "the index follows the update");
        let stale: i64 = store
            .conn()
            .query_row("SELECT count(*) FROM events_fts WHERE events_fts MATCH 'ended'", [], |r| {
                r.get(0)
            })
            .expect("search");
        assert_eq!(stale, 1, "one row for the event, not two");
        // Only a stop row is ever rewritten.
        let mut prompt = bare_stop(&log);
        prompt.uid = "p1".into();
        prompt.kind = EventKind::Prompt;
        let project = resolve_project(prompt.cwd.as_deref(), "copilot", &[]);
        store.write_recovered(&[(prompt, "h2".into(), project)], &[]).expect("write");
        let prompt_id: i64 = store
            .conn()
            .query_row("SELECT id FROM events WHERE uid = 'p1'", [], |r| r.get(0))
            .expect("id");
        assert!(!store.set_stop_answer(prompt_id, &stop).expect("update"));
    }

    #[test]
    fn the_answer_is_capped_like_captured_text() {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("events.jsonl");
        let long = "word ".repeat(5_000);
        append(
            &log,
            &format!("{}\n", log_line("assistant.message", "2026-12-04T17:40:32.743Z", &long)),
        );
        let mut stop = bare_stop(&log);
        let caps =
            CaptureConfig { max_body_chars: 100, max_field_chars: 200, ..Default::default() };
        assert_eq!(
            Filled::Answer,
            fill_closing_answer(&mut stop, None, &caps, &mut Tails::default())
        );
        assert!(stop.body.chars().count() < 150, "{}", stop.body);
        assert!(stop.body.contains("characters truncated"), "{}", stop.body);
        let last = stop.payload["last_message"].as_str().expect("an answer");
        assert!(last.chars().count() < 250, "{last}");
        assert!(stop.summary.chars().count() <= adapter::SUMMARY_MAX_CHARS);
    }

    #[test]
    fn stops_that_need_no_reading_or_cannot_be_read_are_left_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let caps = CaptureConfig::default();
        let mut tails = Tails::default();
        // No file there, not yet: the agent may still write it.
        let mut missing = bare_stop(&dir.path().join("gone.jsonl"));
        let before = missing.clone();
        assert_eq!(Filled::Unwritten, fill_closing_answer(&mut missing, None, &caps, &mut tails));
        assert_eq!(missing, before);
        // A directory, not a file.
        let mut folder = bare_stop(dir.path());
        assert_eq!(Filled::Nothing, fill_closing_answer(&mut folder, None, &caps, &mut tails));
        // Nothing but rubbish in it.
        let junk = dir.path().join("junk.jsonl");
        append(&junk, "\u{0}\u{1}{\"type\": \"assistant.message\"\nnot json\n");
        let mut rubbish = bare_stop(&junk);
        assert_eq!(Filled::Unwritten, fill_closing_answer(&mut rubbish, None, &caps, &mut tails));
        assert_eq!(rubbish.summary, "Turn ended");
        // Written up to a model call that asked for tools: the answer may come yet.
        let stale = dir.path().join("stale.jsonl");
        let asking = json!({"type": "assistant.message", "timestamp": "2026-12-04T17:40:31.771Z",
            "data": {"content": "Running the tests.", "toolRequests": [{"name": "bash"}]}});
        append(&stale, &format!("{asking}\n"));
        let mut waiting = bare_stop(&stale);
        assert_eq!(Filled::Unwritten, fill_closing_answer(&mut waiting, None, &caps, &mut tails));
        assert_eq!(waiting.summary, "Turn ended");
        // No transcript named.
        let mut unnamed = bare_stop(&junk);
        unnamed.transcript_path = None;
        assert_eq!(Filled::Nothing, fill_closing_answer(&mut unnamed, None, &caps, &mut tails));

        // An agent whose hook hands the answer over, or that has no reader, is never read.
        let log = dir.path().join("events.jsonl");
        append(
            &log,
            &format!(
                "{}\n",
                log_line("assistant.message", "2026-12-04T17:40:32.743Z", "from the log")
            ),
        );
        let mut answered = bare_stop(&log);
        answered.payload["last_message"] = json!("from the hook");
        assert_eq!(Filled::Nothing, fill_closing_answer(&mut answered, None, &caps, &mut tails));
        let mut other = bare_stop(&log);
        other.agent = "claude-code".into();
        assert_eq!(Filled::Nothing, fill_closing_answer(&mut other, None, &caps, &mut tails));
        let mut prompt = bare_stop(&log);
        prompt.kind = EventKind::Prompt;
        assert_eq!(Filled::Nothing, fill_closing_answer(&mut prompt, None, &caps, &mut tails));
        let mut copilot = bare_stop(&log);
        assert_eq!(Filled::Answer, fill_closing_answer(&mut copilot, None, &caps, &mut tails));
        assert_eq!(copilot.body, "from the log");
    }

    #[test]
    fn only_the_end_of_a_large_transcript_is_read_from_a_whole_line() {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("events.jsonl");
        let filler =
            log_line("tool.execution_complete", "2026-12-04T17:40:30.000Z", &"x".repeat(1000));
        let early = log_line("assistant.message", "2026-12-04T17:40:30.500Z", "early answer");
        let mut text = format!("{early}\n");
        while (text.len() as u64) < ANSWER_TAIL + 10_000 {
            text.push_str(&filler);
            text.push('\n');
        }
        text.push_str(&log_line("assistant.message", "2026-12-04T17:40:32.743Z", "late answer"));
        text.push('\n');
        append(&log, &text);

        let tail = read_tail(&log, ANSWER_TAIL).expect("read");
        assert!(tail.len() as u64 <= ANSWER_TAIL);
        assert!(
            tail.starts_with(b"{\"data\"") || tail.starts_with(b"{\"type\""),
            "a whole line first"
        );
        assert!(!contains(&tail, b"early answer"));
        // A window that starts right after a newline keeps that whole line.
        let small = dir.path().join("small.jsonl");
        append(&small, "aaaa\nbbbb\ncccc\n");
        assert_eq!(read_tail(&small, 10).expect("read"), b"bbbb\ncccc\n");
        assert_eq!(read_tail(&small, 9).expect("read"), b"cccc\n");
        assert_eq!(read_tail(&small, 100).expect("read"), b"aaaa\nbbbb\ncccc\n");
        assert_eq!(read_tail(&small, 15).expect("read"), b"aaaa\nbbbb\ncccc\n");

        let mut stop = bare_stop(&log);
        assert_eq!(
            Filled::Answer,
            fill_closing_answer(&mut stop, None, &CaptureConfig::default(), &mut Tails::default())
        );
        assert_eq!(stop.body, "late answer");
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }
}
