//! Distilled memory in the store: observations, session summaries, and the distil worker's
//! per-session progress and lease.
//!
//! Here is a session to distil: which events are new, may I work on it (a lease), and store
//! these drafts exactly once. Must not: decide what an observation says (that is
//! [`crate::distil`]).

use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use super::{EVENT_COLUMNS, Result, Store, event_from_row};
use crate::distil::{ObservationDraft, StoredEvent, SummaryDraft};

/// A session with events the distil worker has not finished with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSession {
    pub session_id: i64,
    pub agent: String,
    pub project_id: Option<i64>,
    pub observed_through: i64,
    pub summarized_through: i64,
    pub last_event_id: i64,
    pub last_event_at: i64,
    pub ended: bool,
}

/// What identifies the author of stored drafts.
#[derive(Debug, Clone, Copy)]
pub struct Provenance<'a> {
    pub mode: &'a str,
    pub distiller: &'a str,
}

/// A stored observation, as `show` and search present it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    pub id: i64,
    pub session: String,
    pub agent: String,
    pub project: Option<String>,
    pub mode: String,
    #[serde(flatten)]
    pub draft: ObservationDraft,
    pub tokens: i64,
    pub work_tokens: i64,
    pub distiller: String,
    /// The files it rests on, checked against the working tree when it was read for a person
    /// or a model (`show`, the tools); `None` when not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchors: Option<Vec<crate::anchor::Checked>>,
}

/// A stored session summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub id: i64,
    pub session: String,
    pub agent: String,
    pub project: Option<String>,
    pub mode: String,
    #[serde(flatten)]
    pub draft: SummaryDraft,
    pub at_ms: i64,
    pub through_event_id: i64,
    pub tokens: i64,
    pub work_tokens: i64,
    pub distiller: String,
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "[]".into())
}

fn list(text: String) -> Vec<String> {
    serde_json::from_str(&text).unwrap_or_default()
}

impl Store {
    /// How many sessions have events not yet observed or not yet summarized (those a pass
    /// holds back, waiting for a turn to end, among them). One look-up of each session's last
    /// event (`events_session`), so the cost grows with the sessions, not the events: `status`
    /// asks it.
    pub fn sessions_to_distil(&self) -> Result<i64> {
        Ok(self.conn().query_row(
            "SELECT count(*) FROM sessions s LEFT JOIN distil_progress p ON p.session_id = s.id
             WHERE (SELECT max(e.id) FROM events e WHERE e.session_id = s.id)
                   > min(coalesce(p.observed_through, 0), coalesce(p.summarized_through, 0))",
            [],
            |r| r.get(0),
        )?)
    }

    /// Sessions with events not yet observed or not yet summarized, oldest activity first.
    pub fn pending_sessions(&self, limit: usize) -> Result<Vec<PendingSession>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT s.id, s.agent, s.project_id, coalesce(p.observed_through, 0),
                    coalesce(p.summarized_through, 0), max(e.id), s.last_event_at,
                    s.ended_at IS NOT NULL
             FROM sessions s JOIN events e ON e.session_id = s.id
             LEFT JOIN distil_progress p ON p.session_id = s.id
             GROUP BY s.id
             HAVING max(e.id) > min(coalesce(p.observed_through, 0), coalesce(p.summarized_through, 0))
             ORDER BY s.last_event_at LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit as i64], |r| {
            Ok(PendingSession {
                session_id: r.get(0)?,
                agent: r.get(1)?,
                project_id: r.get(2)?,
                observed_through: r.get(3)?,
                summarized_through: r.get(4)?,
                last_event_id: r.get(5)?,
                last_event_at: r.get(6)?,
                ended: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Takes the session for `owner` until `now_ms + lease_ms`, unless another owner holds an
    /// unexpired lease. True when taken. A lease that ends further ahead than any lease taken now
    /// could (beyond [`LEASE_CLOCK_TOLERANCE_MS`]) was taken by a clock ahead of this one, or
    /// before this clock went back: it counts as expired, so a wrong clock never holds a
    /// session for as long as it was wrong.
    pub fn claim_session(
        &mut self,
        session_id: i64,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<bool> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("INSERT OR IGNORE INTO distil_progress (session_id) VALUES (?1)", [session_id])?;
        let taken = tx.execute(
            "UPDATE distil_progress SET lease_owner = ?2, lease_until = ?3
             WHERE session_id = ?1
               AND (lease_owner IS NULL OR lease_owner = ?2 OR lease_until < ?4
                    OR lease_until > ?3 + ?5)",
            params![session_id, owner, now_ms + lease_ms, now_ms, LEASE_CLOCK_TOLERANCE_MS],
        )? == 1;
        tx.commit()?;
        Ok(taken)
    }

    /// Gives the session back.
    pub fn release_session(&mut self, session_id: i64, owner: &str) -> Result<()> {
        self.conn().execute(
            "UPDATE distil_progress SET lease_owner = NULL, lease_until = NULL
             WHERE session_id = ?1 AND lease_owner = ?2",
            params![session_id, owner],
        )?;
        Ok(())
    }

    /// The session's events after `after_id`, in the order they happened: see
    /// [`session_order`].
    pub fn session_events(&self, session_id: i64, after_id: i64) -> Result<Vec<StoredEvent>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT e.id, e.late, {EVENT_COLUMNS} FROM events e JOIN sessions s ON s.id = e.session_id
             WHERE e.session_id = ?1 AND e.id > ?2 ORDER BY e.id"
        ))?;
        let rows = stmt.query_map(params![session_id, after_id], |r| {
            Ok((r.get::<_, bool>(1)?, StoredEvent { id: r.get(0)?, event: event_from_row(r, 2)? }))
        })?;
        let rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(session_order(rows))
    }

    /// Stores observations distilled from a session's events up to `through_event_id`, and moves
    /// the session's progress there, in one transaction; only while `owner` holds the lease.
    /// Returns how many observations were new (a repeated batch adds none).
    pub fn save_observations(
        &mut self,
        session: &PendingSession,
        owner: &str,
        provenance: Provenance<'_>,
        drafts: &[(ObservationDraft, i64, i64)],
        through_event_id: i64,
    ) -> Result<Option<usize>> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if !holds_lease(&tx, session.session_id, owner)? {
            return Ok(None);
        }
        let mut added = 0;
        for (draft, tokens, work_tokens) in drafts {
            let source_key = source_key(session.session_id, &draft.source_event_ids);
            let inserted = tx.prepare_cached(INSERT_OBSERVATION)?.execute(params![
                session.session_id,
                session.project_id,
                session.agent,
                provenance.mode,
                draft.kind,
                draft.title,
                draft.subtitle,
                json(&draft.facts),
                draft.narrative,
                json(&draft.concepts),
                json(&draft.files_read),
                json(&draft.files_modified),
                draft.at_ms,
                tokens,
                work_tokens,
                provenance.distiller,
                source_key,
            ])?;
            if inserted == 1 {
                let id = tx.last_insert_rowid();
                for event_id in &draft.source_event_ids {
                    tx.prepare_cached(
                        "INSERT OR IGNORE INTO observation_sources (observation_id, event_id) VALUES (?1, ?2)",
                    )?
                    .execute(params![id, event_id])?;
                }
                added += 1;
            }
        }
        tx.execute(
            "UPDATE distil_progress SET observed_through = max(observed_through, ?2) WHERE session_id = ?1",
            params![session.session_id, through_event_id],
        )?;
        tx.commit()?;
        Ok(Some(added))
    }

    /// For benchmarks only: says observation `id` was made by `agent`, where a benchmark's
    /// sessions have more than one speaker (a dialogue's turns) and each turn's speaker stands
    /// for the agent that did the work.
    #[doc(hidden)]
    pub fn set_observation_agent_for_bench(&self, id: i64, agent: &str) -> Result<()> {
        self.conn()
            .execute("UPDATE observations SET agent = ?2 WHERE id = ?1", params![id, agent])?;
        Ok(())
    }

    /// For benchmarks only: stores `drafts` as observations of `session` in one statement, with
    /// no lease, no progress and no source rows. The full-text and file triggers run as they do
    /// under [`Store::save_observations`], but FTS5 flushes one index segment per call rather
    /// than one per row (it flushes at every statement savepoint), which takes about 40% off the
    /// time to build a store of a million observations. Returns how many were new.
    #[doc(hidden)]
    pub fn bulk_insert_observations_for_bench(
        &mut self,
        session: &PendingSession,
        provenance: Provenance<'_>,
        drafts: &[(ObservationDraft, i64, i64)],
    ) -> Result<usize> {
        let rows: Vec<serde_json::Value> = drafts
            .iter()
            .map(|(draft, tokens, work_tokens)| {
                serde_json::json!({
                    "kind": draft.kind, "title": draft.title, "subtitle": draft.subtitle,
                    "facts": draft.facts, "narrative": draft.narrative,
                    "concepts": draft.concepts, "files_read": draft.files_read,
                    "files_modified": draft.files_modified, "at": draft.at_ms,
                    "tokens": tokens, "work_tokens": work_tokens,
                    "source_key": source_key(session.session_id, &draft.source_event_ids),
                })
            })
            .collect();
        // A bulk write touches every index page again and again: the room import gives it, for
        // this call only, so that queries measured afterwards see the usual cache.
        let cache: i64 = self.conn.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
        self.conn.pragma_update(None, "cache_size", -65_536)?;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let added = tx.execute(
            "INSERT INTO observations (session_id, project_id, agent, mode, kind, title, subtitle,
                 facts, narrative, concepts, files_read, files_modified, at, tokens,
                 work_tokens, distiller, source_key)
             SELECT ?1, ?2, ?3, ?4, r.value ->> 'kind', r.value ->> 'title',
                 r.value ->> 'subtitle', r.value -> 'facts', r.value ->> 'narrative',
                 r.value -> 'concepts', r.value -> 'files_read', r.value -> 'files_modified',
                 r.value ->> 'at', r.value ->> 'tokens', r.value ->> 'work_tokens', ?5,
                 r.value ->> 'source_key'
             FROM json_each(?6) r WHERE true
             ON CONFLICT (source_key) DO NOTHING",
            params![
                session.session_id,
                session.project_id,
                session.agent,
                provenance.mode,
                provenance.distiller,
                serde_json::Value::Array(rows).to_string(),
            ],
        )?;
        tx.commit()?;
        self.conn.pragma_update(None, "cache_size", cache)?;
        Ok(added)
    }

    /// Stores (or replaces) the session's summary, covering events up to `through_event_id`;
    /// only while `owner` holds the lease. False when the lease was lost.
    pub fn save_summary(
        &mut self,
        session: &PendingSession,
        owner: &str,
        provenance: Provenance<'_>,
        draft: &SummaryDraft,
        (at_ms, through_event_id, tokens, work_tokens): (i64, i64, i64, i64),
    ) -> Result<bool> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if !holds_lease(&tx, session.session_id, owner)? {
            return Ok(false);
        }
        tx.prepare_cached(UPSERT_SUMMARY)?.execute(params![
            session.session_id,
            session.project_id,
            session.agent,
            provenance.mode,
            draft.request,
            json(&draft.investigated),
            json(&draft.learned),
            json(&draft.completed),
            json(&draft.next_steps),
            json(&draft.files_read),
            json(&draft.files_modified),
            at_ms,
            through_event_id,
            tokens,
            work_tokens,
            provenance.distiller,
        ])?;
        tx.execute(
            "UPDATE distil_progress SET summarized_through = max(summarized_through, ?2) WHERE session_id = ?1",
            params![session.session_id, through_event_id],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// One observation by id; a teammate's names who made it where it names its agent
    /// (`Alice, codex`), as search and the briefing do.
    pub fn observation(&self, id: i64) -> Result<Option<Observation>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT o.id, s.source_id,
                    CASE WHEN o.team_member IS NULL THEN o.agent
                         ELSE o.team_member || ', ' || o.agent END,
                    p.name, o.mode, o.title, o.subtitle, o.facts,
                    o.narrative, o.kind, o.concepts, o.files_read, o.files_modified, o.at,
                    o.tokens, o.work_tokens, o.distiller,
                    (SELECT json_group_array(event_id) FROM observation_sources WHERE observation_id = o.id)
             FROM observations o JOIN sessions s ON s.id = o.session_id
             LEFT JOIN projects p ON p.id = o.project_id WHERE o.id = ?1",
        )?;
        Ok(stmt
            .query_row([id], |r| {
                Ok(Observation {
                    id: r.get(0)?,
                    session: r.get(1)?,
                    agent: r.get(2)?,
                    project: r.get(3)?,
                    mode: r.get(4)?,
                    draft: ObservationDraft {
                        title: r.get(5)?,
                        subtitle: r.get(6)?,
                        facts: list(r.get(7)?),
                        narrative: r.get(8)?,
                        kind: r.get(9)?,
                        concepts: list(r.get(10)?),
                        files_read: list(r.get(11)?),
                        files_modified: list(r.get(12)?),
                        source_event_ids: serde_json::from_str(&r.get::<_, String>(17)?)
                            .unwrap_or_default(),
                        at_ms: r.get(13)?,
                    },
                    tokens: r.get(14)?,
                    work_tokens: r.get(15)?,
                    distiller: r.get(16)?,
                    anchors: None,
                })
            })
            .optional()?)
    }

    /// One summary by id.
    pub fn summary(&self, id: i64) -> Result<Option<Summary>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT m.id, s.source_id,
                    CASE WHEN m.team_member IS NULL THEN m.agent
                         ELSE m.team_member || ', ' || m.agent END,
                    p.name, m.mode, m.request, m.investigated,
                    m.learned, m.completed, m.next_steps, m.files_read, m.files_modified, m.at,
                    m.through_event_id, m.tokens, m.work_tokens, m.distiller
             FROM summaries m JOIN sessions s ON s.id = m.session_id
             LEFT JOIN projects p ON p.id = m.project_id WHERE m.id = ?1",
        )?;
        Ok(stmt
            .query_row([id], |r| {
                Ok(Summary {
                    id: r.get(0)?,
                    session: r.get(1)?,
                    agent: r.get(2)?,
                    project: r.get(3)?,
                    mode: r.get(4)?,
                    draft: SummaryDraft {
                        request: r.get(5)?,
                        investigated: list(r.get(6)?),
                        learned: list(r.get(7)?),
                        completed: list(r.get(8)?),
                        next_steps: list(r.get(9)?),
                        files_read: list(r.get(10)?),
                        files_modified: list(r.get(11)?),
                    },
                    at_ms: r.get(12)?,
                    through_event_id: r.get(13)?,
                    tokens: r.get(14)?,
                    work_tokens: r.get(15)?,
                    distiller: r.get(16)?,
                })
            })
            .optional()?)
    }

    /// One event by id.
    pub fn event(&self, id: i64) -> Result<Option<StoredEvent>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.id = ?1"
        ))?;
        Ok(stmt
            .query_row([id], |r| event_from_row(r, 0))
            .optional()?
            .map(|event| StoredEvent { id, event }))
    }
}

/// One line of the session-start timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimelineItem {
    pub id: i64,
    pub at_ms: i64,
    pub agent: String,
    pub kind: String,
    pub title: String,
    pub tokens: i64,
    pub work_tokens: i64,
}

impl Store {
    /// The summary of the last session in the project, other than (`agent`, `session`), that
    /// did or decided something (changed files, or left an observation other than a look
    /// around); the newest summary when none did. A one-line question asked since does not
    /// push the real work out of the briefing. Only work seen on `branch` counts
    /// ([`super::recall::seen_on_branch`]).
    pub fn last_summary(
        &self,
        project_key: &str,
        agent: &str,
        session: &str,
        branch: Option<&str>,
    ) -> Result<Option<Summary>> {
        let newest = format!(
            "SELECT m.id FROM summaries m JOIN projects p ON p.id = m.project_id
             JOIN sessions s ON s.id = m.session_id
             WHERE p.key = ?1 AND NOT (s.agent = ?2 AND s.source_id = ?3) AND {}",
            super::recall::seen_on_branch("s", "?4")
        );
        // Newest first through the index on time, so the first that did something ends it.
        let meaningful = format!(
            "{newest} AND (m.files_modified <> '[]'
                  OR EXISTS (SELECT 1 FROM observations o
                             WHERE o.session_id = m.session_id AND o.kind <> 'discovery'))
             ORDER BY m.at DESC LIMIT 1"
        );
        let newest = format!("{newest} ORDER BY m.at DESC LIMIT 1");
        let mut id: Option<i64> = None;
        for sql in [meaningful, newest] {
            id = self
                .conn()
                .prepare_cached(&sql)?
                .query_row(params![project_key, agent, session, branch], |r| r.get(0))
                .optional()?;
            if id.is_some() {
                break;
            }
        }
        match id {
            Some(id) => self.summary(id),
            None => Ok(None),
        }
    }
}

/// Where an item sits in time: its project and moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    pub project_id: Option<i64>,
    pub at_ms: i64,
}

impl Store {
    /// The project and time of an observation (`o`), summary (`s`), event (`e`) or memory (`m`,
    /// when it last changed).
    pub fn anchor(&self, kind: char, id: i64) -> Result<Option<Anchor>> {
        let (table, at) = match kind {
            'o' => ("observations", "at"),
            's' => ("summaries", "at"),
            'm' => ("memories", "updated_at"),
            _ => ("events", "at"),
        };
        Ok(self
            .conn()
            .query_row(&format!("SELECT project_id, {at} FROM {table} WHERE id = ?1"), [id], |r| {
                Ok(Anchor { project_id: r.get(0)?, at_ms: r.get(1)? })
            })
            .optional()?)
    }

    /// Observations of the anchor's project around its time, from every agent, oldest first:
    /// `before` from before it (the anchor itself included when it is an observation) and
    /// `after` from after it.
    pub fn timeline_around(
        &self,
        anchor: &Anchor,
        before: usize,
        after: usize,
    ) -> Result<Vec<TimelineItem>> {
        let select = |sql: &str, limit: usize| -> Result<Vec<TimelineItem>> {
            let mut stmt = self.conn().prepare_cached(sql)?;
            let rows = stmt
                .query_map(params![anchor.project_id, anchor.at_ms, limit as i64], timeline_item)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let mut items = select(
            "SELECT id, at, agent, kind, title, tokens, work_tokens FROM observations
             WHERE project_id IS ?1 AND at <= ?2 ORDER BY at DESC, id DESC LIMIT ?3",
            before,
        )?;
        items.reverse();
        items.extend(select(
            "SELECT id, at, agent, kind, title, tokens, work_tokens FROM observations
             WHERE project_id IS ?1 AND at > ?2 ORDER BY at, id LIMIT ?3",
            after,
        )?);
        Ok(items)
    }
}

/// A [`TimelineItem`] from `id, at, agent, kind, title, tokens, work_tokens`.
fn timeline_item(r: &rusqlite::Row<'_>) -> rusqlite::Result<TimelineItem> {
    Ok(TimelineItem {
        id: r.get(0)?,
        at_ms: r.get(1)?,
        agent: r.get(2)?,
        kind: r.get(3)?,
        title: r.get(4)?,
        tokens: r.get(5)?,
        work_tokens: r.get(6)?,
    })
}

/// How far past the longest lease one taken now could end a lease may end before it is taken
/// for the work of a wrong clock.
pub const LEASE_CLOCK_TOLERANCE_MS: i64 = 5_000;

/// A session's events (`(late, event)`, in id order) in the order they happened. A hook stores
/// its event as it happens, so the ids of those are their order, even when the wall clock went
/// back between them; an event stored after the fact (`late`: read from the transcript at a
/// stop, drained from the spool, imported) goes before the first of those that happened after
/// it by the clock, the best its time can tell.
pub(crate) fn session_order(rows: Vec<(bool, StoredEvent)>) -> Vec<StoredEvent> {
    let (late, in_line): (Vec<_>, Vec<_>) = rows.into_iter().partition(|(late, _)| *late);
    let mut late: Vec<StoredEvent> = late.into_iter().map(|(_, e)| e).collect();
    late.sort_by_key(|e| (e.event.at_ms, e.id));
    let mut late = late.into_iter().peekable();
    let mut ordered = Vec::with_capacity(in_line.len() + late.len());
    for (_, event) in in_line {
        while let Some(before) = late.next_if(|l| l.event.at_ms < event.event.at_ms) {
            ordered.push(before);
        }
        ordered.push(event);
    }
    ordered.extend(late);
    ordered
}

/// Stores an observation (the columns in table order, the source key last); a repeated pass
/// over the same events adds nothing. An import of a backup writes through it too.
pub(crate) const INSERT_OBSERVATION: &str = "INSERT INTO observations (session_id, project_id,
         agent, mode, kind, title, subtitle, facts, narrative, concepts, files_read,
         files_modified, at, tokens, work_tokens, distiller, source_key)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
     ON CONFLICT (source_key) DO NOTHING";

/// Stores a session's summary, replacing the one it had; an import of a backup adds a
/// condition so that only a summary covering more replaces it.
pub(crate) const UPSERT_SUMMARY: &str = "INSERT INTO summaries (session_id, project_id, agent,
         mode, request, investigated, learned, completed, next_steps, files_read,
         files_modified, at, through_event_id, tokens, work_tokens, distiller)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
     ON CONFLICT (session_id) DO UPDATE SET
         mode = excluded.mode, request = excluded.request,
         investigated = excluded.investigated, learned = excluded.learned,
         completed = excluded.completed, next_steps = excluded.next_steps,
         files_read = excluded.files_read, files_modified = excluded.files_modified,
         at = excluded.at, through_event_id = excluded.through_event_id,
         tokens = excluded.tokens, work_tokens = excluded.work_tokens,
         distiller = excluded.distiller";

/// What makes an observation unique: its session and source events, so a repeated pass over
/// the same events adds nothing.
pub(crate) fn source_key(session_id: i64, source_event_ids: &[i64]) -> String {
    let ids: Vec<String> = source_event_ids.iter().map(i64::to_string).collect();
    format!("{session_id}:{}", ids.join(","))
}

fn holds_lease(conn: &rusqlite::Connection, session_id: i64, owner: &str) -> Result<bool> {
    let holder: Option<Option<String>> = conn
        .query_row(
            "SELECT lease_owner FROM distil_progress WHERE session_id = ?1",
            [session_id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(holder.flatten().as_deref() == Some(owner))
}
