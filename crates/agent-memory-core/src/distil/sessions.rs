//! The distil step of a work pass: find sessions with new events, take each with a lease, turn every complete
//! turn into observations, and give a session that stopped, ended or went silent its summary.
//!
//! A turn is complete when its stop (or the session's end) has arrived; the turn still running
//! waits for the next pass unless the session has been silent past the threshold (a crashed
//! agent, a killed terminal). Two passes racing never store anything twice: each session is
//! leased to one pass, and observations are keyed by their source events.
//!
//! Must not: open the store or read the clock itself; the caller passes both in.

use serde::Serialize;

use super::mode::Mode;
use super::{Distiller, StoredEvent};
use crate::event::EventKind;
use crate::store::distilled::{PendingSession, Provenance};
use crate::store::{Store, StoreError};
use crate::tokens;

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
}

/// What a pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DistilReport {
    pub sessions: usize,
    pub observations: usize,
    pub summaries: usize,
    /// Sessions another pass was working on.
    pub busy: usize,
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
    let new = store.session_events(session.session_id, session.observed_through)?;
    let complete =
        if finished { new.len() } else { new.iter().rposition(ends_turn).map_or(0, |i| i + 1) };
    for turn in turns(&new[..complete]) {
        let observed = distiller.observe(turn, mode);
        let run = distiller.last_run();
        // The model's tokens are work behind the observations too, shared out evenly.
        let model_share = run.as_ref().map_or(0, |r| r.tokens_spent) / observed.len().max(1) as u64;
        let drafts: Vec<_> = observed
            .into_iter()
            .map(|draft| {
                let own = tokens::estimate_all(
                    [draft.title.as_str(), &draft.subtitle, &draft.narrative]
                        .into_iter()
                        .chain(draft.facts.iter().map(String::as_str)),
                );
                let events = turn.iter().filter(|e| draft.source_event_ids.contains(&e.id));
                let work = work_tokens(events) as u64 + model_share;
                (draft, own as i64, work as i64)
            })
            .collect();
        let through = turn.last().map_or(session.observed_through, |e| e.id);
        let provenance = Provenance {
            distiller: run.as_ref().map_or(provenance.distiller, |r| r.distiller.as_str()),
            ..provenance
        };
        match store.save_observations(session, &options.owner, provenance, &drafts, through)? {
            Some(added) => report.observations += added,
            // The lease expired and another pass took over; leave the session to it.
            None => return Ok(()),
        }
    }
    let stopped_since_summary =
        new.iter().any(|e| e.id > session.summarized_through && ends_turn(e));
    if session.summarized_through < session.last_event_id && (finished || stopped_since_summary) {
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
