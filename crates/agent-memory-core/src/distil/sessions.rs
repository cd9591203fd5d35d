//! The distil step of a work pass: find sessions with new events, take each with a lease, turn every complete
//! turn into observations, and give a session that stopped, ended or went silent its summary.
//!
//! A turn is complete when its stop (or the session's end) has arrived; the turn still running
//! waits for the next pass unless the session has been silent past the threshold (a crashed
//! agent, a killed terminal). Two passes racing never store anything twice: each session is
//! leased to one pass, and observations are keyed by their source events. A stop whose hook
//! carried no closing answer gets it from its agent's transcript first (for an agent the
//! registry gives a reader), so both distillers, search and `show` see what the turn did; a turn
//! whose end the agent has not written to its transcript yet waits for a later pass, for at most
//! [`ANSWER_WAIT_MS`].
//!
//! Must not: open the store or read the clock itself; the caller passes both in.

use serde::Serialize;

use super::mode::Mode;
use super::{Distiller, ObservationDraft, StoredEvent};
use crate::capture::transcript::{self, Filled, Tails};
use crate::config::CaptureConfig;
use crate::event::EventKind;
use crate::store::distilled::{PendingSession, Provenance};
use crate::store::{Store, StoreError};
use crate::tokens;

/// How long after its stop a turn may wait for its closing answer to reach the agent's
/// transcript; an agent that writes it lazily has written it by then, or never will.
pub const ANSWER_WAIT_MS: i64 = 60_000;

/// How a pass runs.
#[derive(Debug, Clone)]
pub struct DistilOptions {
    /// Who holds the leases this pass takes (unique per process).
    pub owner: String,
    pub now_ms: i64,
    /// A session silent this long is summarized without a stop, its last turn observed.
    pub silence_ms: i64,
    pub lease_ms: i64,
    /// Most sessions one pass takes on.
    pub max_sessions: usize,
    /// The caps captured text gets, for closing answers read from transcripts.
    pub capture: CaptureConfig,
}

/// What a pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DistilReport {
    pub sessions: usize,
    pub observations: usize,
    pub summaries: usize,
    /// Sessions another pass was working on.
    pub busy: usize,
    /// Sessions with a turn held back until its closing answer reaches the agent's transcript.
    pub waiting: usize,
}

/// Runs one pass over every session with work left, up to `options.max_sessions`.
pub fn distil_pending(
    store: &mut Store,
    distiller: &dyn Distiller,
    distiller_name: &str,
    mode: &Mode,
    options: &DistilOptions,
) -> Result<DistilReport, StoreError> {
    let mut report = DistilReport::default();
    for session in store.pending_sessions(options.max_sessions)? {
        if !store.claim_session(
            session.session_id,
            &options.owner,
            options.now_ms,
            options.lease_ms,
        )? {
            report.busy += 1;
            continue;
        }
        let provenance = Provenance { mode: &mode.name, distiller: distiller_name };
        let worked =
            work_session(store, distiller, provenance, mode, &session, options, &mut report);
        store.release_session(session.session_id, &options.owner)?;
        worked?;
        report.sessions += 1;
    }
    Ok(report)
}

fn work_session(
    store: &mut Store,
    distiller: &dyn Distiller,
    provenance: Provenance<'_>,
    mode: &Mode,
    session: &PendingSession,
    options: &DistilOptions,
    report: &mut DistilReport,
) -> Result<(), StoreError> {
    let finished = session.ended || options.now_ms - session.last_event_at > options.silence_ms;
    let mut new = store.session_events(session.session_id, session.observed_through)?;
    let waiting = fill_closing_answers(store, &mut new, options);
    let mut complete =
        if finished { new.len() } else { new.iter().rposition(ends_turn).map_or(0, |i| i + 1) };
    // The turn whose answer is still to be written waits, and the turns after it with it.
    if let Some(stop) = waiting {
        complete = complete.min(new[..stop].iter().rposition(ends_turn).map_or(0, |i| i + 1));
        report.waiting += 1;
    }
    let mut pending = Pending { drafts: Vec::new(), through: session.observed_through, by: None };
    for turn in turns(&new[..complete]) {
        let observed = distiller.observe(turn, mode);
        let run = distiller.last_run();
        // The model's tokens are work behind the observations too, shared out evenly.
        let spent = run.as_ref().map_or(0, |r| r.tokens_spent);
        let model_share = spent / observed.len().max(1) as u64;
        let by = run.as_ref().map_or(provenance.distiller, |r| r.distiller.as_str()).to_owned();
        if pending.by.as_ref().is_some_and(|known| *known != by)
            && !pending.save(store, session, options, provenance, report)?
        {
            // The lease expired and another pass took over; leave the session to it.
            return Ok(());
        }
        pending.drafts.extend(observed.into_iter().map(|draft| {
            let own = tokens::estimate_all(
                [draft.title.as_str(), &draft.subtitle, &draft.narrative]
                    .into_iter()
                    .chain(draft.facts.iter().map(String::as_str)),
            );
            let events = turn.iter().filter(|e| draft.source_event_ids.contains(&e.id));
            let work = work_tokens(events) as u64 + model_share;
            (draft, own as i64, work as i64)
        }));
        pending.through = turn.last().map_or(pending.through, |e| e.id);
        pending.by = Some(by);
        if spent > 0 && !pending.save(store, session, options, provenance, report)? {
            return Ok(());
        }
    }
    if !pending.save(store, session, options, provenance, report)? {
        return Ok(());
    }
    let stopped_since_summary =
        new.iter().any(|e| e.id > session.summarized_through && ends_turn(e));
    if waiting.is_none()
        && session.summarized_through < session.last_event_id
        && (finished || stopped_since_summary)
    {
        let all = store.session_events(session.session_id, 0)?;
        let draft = distiller.summarize(&all, mode);
        let Some(last) = all.last() else { return Ok(()) };
        let own = tokens::estimate_all(
            std::iter::once(draft.request.as_str())
                .chain(draft.investigated.iter().map(String::as_str))
                .chain(draft.learned.iter().map(String::as_str))
                .chain(draft.completed.iter().map(String::as_str))
                .chain(draft.next_steps.iter().map(String::as_str)),
        );
        let run = distiller.last_run();
        let work = work_tokens(all.iter()) as u64 + run.as_ref().map_or(0, |r| r.tokens_spent);
        let figures = (last.event.at_ms, last.id, own as i64, work as i64);
        let provenance = Provenance {
            distiller: run.as_ref().map_or(provenance.distiller, |r| r.distiller.as_str()),
            ..provenance
        };
        if store.save_summary(session, &options.owner, provenance, &draft, figures)? {
            report.summaries += 1;
        }
    }
    Ok(())
}

/// Gives the stops among `events` the closing answers their hooks did not carry, read from their
/// agents' transcripts: in memory for the distillers, and in the store for search, `show` and
/// the summary. Returns the index of the first stop whose turn's end is not in its transcript
/// yet, while it may still come ([`ANSWER_WAIT_MS`]); the stops after it are left for then. A
/// transcript that cannot be read, or a row that cannot be updated, is logged and the pass goes
/// on.
fn fill_closing_answers(
    store: &Store,
    events: &mut [StoredEvent],
    options: &DistilOptions,
) -> Option<usize> {
    let mut tails = Tails::default();
    // The time of the first event of the turn under way; a turn ends at a stop or session end.
    let mut began_ms = None;
    for (index, stored) in events.iter_mut().enumerate() {
        let began = began_ms;
        began_ms = if ends_turn(stored) { None } else { began.or(Some(stored.event.at_ms)) };
        let caps = &options.capture;
        match transcript::fill_closing_answer(&mut stored.event, began, caps, &mut tails) {
            Filled::Nothing => {}
            Filled::Unwritten if options.now_ms - stored.event.at_ms < ANSWER_WAIT_MS => {
                tracing::debug!(uid = %stored.event.uid, "the turn waits for its end in the transcript");
                return Some(index);
            }
            Filled::Unwritten => {
                let uid = &stored.event.uid;
                tracing::debug!(uid, "the turn's end never reached the transcript");
            }
            Filled::Answer => {
                tracing::debug!(uid = %stored.event.uid, "a closing answer from the transcript");
                if let Err(err) = store.set_stop_answer(stored.id, &stored.event) {
                    tracing::warn!(%err, id = stored.id, "a closing answer was not stored");
                }
            }
        }
    }
    None
}

/// Observations of a run of turns waiting to be saved together: one transaction per run of
/// turns the same distiller wrote without a model (a commit per turn cost more than the rules);
/// a model's turn is saved at once, so no paid-for work waits on later turns.
struct Pending {
    drafts: Vec<(ObservationDraft, i64, i64)>,
    /// The last event of the last turn.
    through: i64,
    /// Who wrote them; `None` when nothing waits.
    by: Option<String>,
}

impl Pending {
    /// Saves what waits; false when the session's lease was lost to another pass.
    fn save(
        &mut self,
        store: &mut Store,
        session: &PendingSession,
        options: &DistilOptions,
        provenance: Provenance<'_>,
        report: &mut DistilReport,
    ) -> Result<bool, StoreError> {
        let Some(by) = self.by.take() else { return Ok(true) };
        let drafts = std::mem::take(&mut self.drafts);
        let provenance = Provenance { distiller: &by, ..provenance };
        match store.save_observations(session, &options.owner, provenance, &drafts, self.through)? {
            Some(added) => {
                report.observations += added;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

fn ends_turn(event: &StoredEvent) -> bool {
    matches!(event.event.kind, EventKind::Stop | EventKind::SessionEnd)
}

/// Splits events into turns, each ending with its stop (the last may have none).
fn turns(events: &[StoredEvent]) -> impl Iterator<Item = &[StoredEvent]> {
    events.split_inclusive(ends_turn).filter(|turn| !turn.is_empty())
}

/// The tokens of work the events stand for: what an agent would have to read to redo them.
fn work_tokens<'a>(events: impl Iterator<Item = &'a StoredEvent>) -> usize {
    events.map(|e| tokens::estimate(&e.event.summary) + tokens::estimate(&e.event.body)).sum()
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::capture::{self, Stage};
    use crate::config::Config;
    use crate::distil::offline::OfflineDistiller;

    /// A Copilot turn through capture into the store: a prompt, a command, a stop naming `log`,
    /// a second apart from `t0`.
    fn copilot_turn(store: &mut Store, session: &str, log: &Path, t0: i64) {
        let cwd = "/w/proj";
        let payloads = [
            ("userPromptSubmitted", json!({"prompt": "Fix transpose in matrix.py."})),
            (
                "postToolUse",
                json!({"toolName": "bash", "toolArgs": {"command": "python3 -m unittest"},
                       "toolResult": {"resultType": "success", "textResultForLlm": "OK"}}),
            ),
            (
                "agentStop",
                json!({"transcriptPath": log.display().to_string(), "stopReason": "end_turn"}),
            ),
        ];
        let mut items = Vec::new();
        for (n, (event, mut payload)) in payloads.into_iter().enumerate() {
            let at = t0 + 1000 * n as i64;
            payload["sessionId"] = json!(session);
            payload["timestamp"] = json!(at);
            payload["cwd"] = json!(cwd);
            let uid = format!("{session}-{n}");
            let bytes = payload.to_string().into_bytes();
            let Stage::Ready { event, hash } =
                capture::prepare("copilot", event, &uid, at, &bytes, None, &Config::default())
            else {
                panic!("{event} is stored")
            };
            items.push((*event, hash, capture::resolve_project(Some(cwd), "copilot", &[])));
        }
        store.write_recovered(&items, &[]).expect("write");
    }

    fn log_line(path: &Path, kind: &str, at_ms: i64, content: &str, tools: bool) {
        let at = jiff::Timestamp::from_millisecond(at_ms).expect("an instant").to_string();
        let requests = if tools { json!([{"name": "bash"}]) } else { json!([]) };
        let line = json!({"type": kind, "timestamp": at,
                          "data": {"content": content, "toolRequests": requests}});
        let mut file =
            std::fs::OpenOptions::new().create(true).append(true).open(path).expect("log");
        writeln!(file, "{line}").expect("append");
    }

    fn pass(store: &mut Store, now_ms: i64) -> DistilReport {
        let mode = crate::distil::mode::load("code", "en", None).expect("the code mode");
        let options = DistilOptions {
            owner: "test".into(),
            now_ms,
            silence_ms: 30 * 60_000,
            lease_ms: 60_000,
            max_sessions: 10,
            capture: CaptureConfig::default(),
        };
        distil_pending(store, &OfflineDistiller::new(), "offline", &mode, &options).expect("pass")
    }

    fn stop_body(store: &Store, session: &str) -> String {
        store
            .conn()
            .query_row(
                "SELECT e.body FROM events e JOIN sessions s ON s.id = e.session_id
                 WHERE s.source_id = ?1 AND e.kind = 'stop'",
                [session],
                |r| r.get(0),
            )
            .expect("the stop")
    }

    #[test]
    fn a_turn_waits_for_its_answer_to_reach_the_transcript() {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("events.jsonl");
        let t0 = 1_796_406_030_000;
        let mut store = Store::open_in_memory().expect("store");
        copilot_turn(&mut store, "s1", &log, t0);
        // The agent has written its log up to a model call that asked for a tool.
        log_line(&log, "user.message", t0 + 100, "Fix transpose in matrix.py.", false);
        log_line(&log, "assistant.message", t0 + 200, "", true);

        let first = pass(&mut store, t0 + 3_000);
        assert_eq!((first.waiting, first.observations, first.summaries), (1, 0, 0), "{first:?}");
        assert_eq!(stop_body(&store, "s1"), "");

        // Then it writes the turn's end.
        log_line(&log, "assistant.message", t0 + 1_500, "Transpose iterates columns now.", false);
        let second = pass(&mut store, t0 + 4_000);
        assert_eq!((second.waiting, second.summaries), (0, 1), "{second:?}");
        assert_eq!(stop_body(&store, "s1"), "Transpose iterates columns now.");
        let summary: String = store
            .conn()
            .query_row("SELECT completed || learned || request FROM summaries", [], |r| r.get(0))
            .expect("the summary");
        assert!(!summary.is_empty());
    }

    #[test]
    fn a_turn_waits_for_a_transcript_not_there_yet_but_no_longer_than_the_wait() {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("events.jsonl");
        let t0 = 1_796_406_030_000;
        let mut store = Store::open_in_memory().expect("store");
        copilot_turn(&mut store, "s1", &log, t0);
        log_line(&log, "assistant.message", t0 + 200, "", true);
        // The agent has not made this one's log yet.
        copilot_turn(&mut store, "s2", &dir.path().join("later.jsonl"), t0);

        let soon = pass(&mut store, t0 + 3_000);
        assert_eq!((soon.waiting, soon.summaries), (2, 0), "{soon:?}");
        let late = pass(&mut store, t0 + 2_000 + ANSWER_WAIT_MS);
        assert_eq!((late.waiting, late.summaries), (0, 2), "{late:?}");
        assert_eq!(stop_body(&store, "s1"), "");
        assert_eq!(stop_body(&store, "s2"), "");
    }
}
