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
//! Must not: read more than [`MAX_READ`] bytes in one hook run (the rest waits for the next
//! stop), take a partial last line, or fail the hook: every problem is logged and skipped.

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};

use super::{Stage, prepare, resolve_project};
use crate::adapter::{self, TranscriptReader};
use crate::config::Config;
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
}
