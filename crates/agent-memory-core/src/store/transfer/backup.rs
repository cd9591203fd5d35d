//! What a whole backup (`export --all`) carries beyond events and memories: the observations
//! and summaries distilled from the events, how far distillation and promotion got, what search
//! found and which files memory rests on. Restored with `import --trust` into a fresh home, the
//! store answers the same and a work pass finds nothing to distil or propose again.
//!
//! Rows travel under identities that survive a move to another store: a session as its agent
//! and the agent's session id, an event as its capture uid, an observation or summary as its id
//! in the exporting store, which only the same file's memory lines refer to. A position in the
//! stream of events (how far a session was distilled, how far prompts were read for statements)
//! is written as the uid of the last event at or before it that the file carries, so a private
//! event left out of the file moves the position back, never forward.

use std::collections::HashMap;
use std::io::Write;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Importer, Line, Source, TransferError, TransferReport, write_line};
use crate::store::Store;
use crate::store::distilled::{INSERT_OBSERVATION, UPSERT_SUMMARY};
use crate::store::recall::ItemKind;

/// An observation in a whole backup.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObservationRecord {
    /// Its id in the exporting store: the file's memory lines name it as `o<id>`.
    pub id: i64,
    pub session: SessionRef,
    /// The project key.
    pub project: Option<String>,
    pub agent: String,
    pub mode: String,
    pub kind: String,
    pub title: String,
    #[serde(default)]
    pub subtitle: String,
    #[serde(default)]
    pub facts: Vec<String>,
    #[serde(default)]
    pub narrative: String,
    #[serde(default)]
    pub concepts: Vec<String>,
    #[serde(default)]
    pub files_read: Vec<String>,
    #[serde(default)]
    pub files_modified: Vec<String>,
    pub at: i64,
    pub tokens: i64,
    pub work_tokens: i64,
    pub distiller: String,
    /// The uids of the events it was distilled from.
    pub sources: Vec<String>,
    /// Promotion has looked at it already.
    #[serde(default)]
    pub screened: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<HitsRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<AnchorRecord>,
}

/// A session summary in a whole backup.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SummaryRecord {
    /// Its id in the exporting store: the file's memory lines name it as `s<id>`.
    pub id: i64,
    pub session: SessionRef,
    pub project: Option<String>,
    pub agent: String,
    pub mode: String,
    #[serde(default)]
    pub request: String,
    #[serde(default)]
    pub investigated: Vec<String>,
    #[serde(default)]
    pub learned: Vec<String>,
    #[serde(default)]
    pub completed: Vec<String>,
    #[serde(default)]
    pub next_steps: Vec<String>,
    #[serde(default)]
    pub files_read: Vec<String>,
    #[serde(default)]
    pub files_modified: Vec<String>,
    pub at: i64,
    /// The uid of the last event it covers.
    pub through: Option<String>,
    pub tokens: i64,
    pub work_tokens: i64,
    pub distiller: String,
    /// The uid of the last event it covered when promotion looked at it; `None`: not looked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screened_through: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<HitsRecord>,
}

/// How far one session was distilled, as the uids of the last events observed and summarized.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProgressRecord {
    pub session: SessionRef,
    pub observed_through: Option<String>,
    pub summarized_through: Option<String>,
}

/// A read position over every event: `said` is how far prompts were read for statements.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CursorRecord {
    pub name: String,
    /// The uid of the last event read.
    pub through: String,
}

/// A session as another store finds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SessionRef {
    pub agent: String,
    pub id: String,
}

/// How often search found an item, and when last.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct HitsRecord {
    pub count: i64,
    pub last_at: i64,
}

/// A file an observation or memory rests on, as it was when the work pass anchored it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnchorRecord {
    pub path: String,
    pub size: i64,
    pub mtime_ms: i64,
    pub hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_sha: Option<String>,
    pub anchored_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_size: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_mtime: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_at: Option<i64>,
}

/// The item kind `memory_screened` keeps the statement reader's position under (see
/// `memories::said_since`).
const SAID_CURSOR: &str = "said";

/// The last event at or before event id `?1` that an export carries (`?2`: within this session,
/// or any when NULL): the position a file can say.
const CARRIED_AT_OR_BEFORE: &str = "SELECT uid FROM events
     WHERE id <= ?1 AND sensitivity <> 'private' AND (?2 IS NULL OR session_id = ?2)
     ORDER BY id DESC LIMIT 1";

impl Store {
    /// The lines of a whole backup after its events: observations, summaries, each session's
    /// distil progress and the statement reader's position. Items pulled from a team come back
    /// by pulling, so they stay out.
    pub(super) fn distilled_lines(
        &self,
        out: &mut dyn Write,
        report: &mut TransferReport,
    ) -> Result<(), TransferError> {
        let conn = self.conn();
        let list = |text: String| serde_json::from_str::<Vec<String>>(&text).unwrap_or_default();
        let mut sources = conn.prepare(
            "SELECT e.uid FROM observation_sources os JOIN events e ON e.id = os.event_id
             WHERE os.observation_id = ?1 AND e.sensitivity <> 'private' ORDER BY e.id",
        )?;
        let mut stmt = conn.prepare(
            "SELECT o.id, s.agent, s.source_id, p.key, o.agent, o.mode, o.kind, o.title,
                    o.subtitle, o.facts, o.narrative, o.concepts, o.files_read, o.files_modified,
                    o.at, o.tokens, o.work_tokens, o.distiller,
                    EXISTS (SELECT 1 FROM memory_screened m
                            WHERE m.item_kind = 'observation' AND m.item_id = o.id),
                    h.count, h.last_at
             FROM observations o JOIN sessions s ON s.id = o.session_id
             LEFT JOIN projects p ON p.id = o.project_id
             LEFT JOIN hits h ON h.item_kind = 'observation' AND h.item_id = o.id
             WHERE o.team_machine IS NULL ORDER BY o.id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let uids: Vec<String> =
                sources.query_map([id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            // Distilled from private events only: it stays with them.
            if uids.is_empty() {
                continue;
            }
            let record = ObservationRecord {
                id,
                session: SessionRef { agent: r.get(1)?, id: r.get(2)? },
                project: r.get(3)?,
                agent: r.get(4)?,
                mode: r.get(5)?,
                kind: r.get(6)?,
                title: r.get(7)?,
                subtitle: r.get(8)?,
                facts: list(r.get(9)?),
                narrative: r.get(10)?,
                concepts: list(r.get(11)?),
                files_read: list(r.get(12)?),
                files_modified: list(r.get(13)?),
                at: r.get(14)?,
                tokens: r.get(15)?,
                work_tokens: r.get(16)?,
                distiller: r.get(17)?,
                sources: uids,
                screened: r.get(18)?,
                hits: hits(r.get(19)?, r.get(20)?),
                anchors: self.anchor_records(ItemKind::Observation, id)?,
            };
            write_line(out, &Line::Observation(Box::new(record)))?;
            report.observations += 1;
        }

        let mut carried = conn.prepare(CARRIED_AT_OR_BEFORE)?;
        let mut position = |through: Option<i64>, session: Option<i64>| -> rusqlite::Result<_> {
            match through {
                Some(id) => carried.query_row(params![id, session], |r| r.get(0)).optional(),
                None => Ok(None),
            }
        };
        let mut stmt = conn.prepare(
            "SELECT x.id, s.agent, s.source_id, p.key, x.agent, x.mode, x.request,
                    x.investigated, x.learned, x.completed, x.next_steps, x.files_read,
                    x.files_modified, x.at, x.through_event_id, x.tokens, x.work_tokens,
                    x.distiller, m.version, h.count, h.last_at, x.session_id
             FROM summaries x JOIN sessions s ON s.id = x.session_id
             LEFT JOIN projects p ON p.id = x.project_id
             LEFT JOIN memory_screened m ON m.item_kind = 'summary' AND m.item_id = x.id
             LEFT JOIN hits h ON h.item_kind = 'summary' AND h.item_id = x.id
             WHERE x.team_machine IS NULL ORDER BY x.id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let session_id: i64 = r.get(21)?;
            let through = position(r.get(14)?, Some(session_id))?;
            let screened_through = position(r.get(18)?, Some(session_id))?;
            let record = SummaryRecord {
                id: r.get(0)?,
                session: SessionRef { agent: r.get(1)?, id: r.get(2)? },
                project: r.get(3)?,
                agent: r.get(4)?,
                mode: r.get(5)?,
                request: r.get(6)?,
                investigated: list(r.get(7)?),
                learned: list(r.get(8)?),
                completed: list(r.get(9)?),
                next_steps: list(r.get(10)?),
                files_read: list(r.get(11)?),
                files_modified: list(r.get(12)?),
                at: r.get(13)?,
                through,
                tokens: r.get(15)?,
                work_tokens: r.get(16)?,
                distiller: r.get(17)?,
                screened_through,
                hits: hits(r.get(19)?, r.get(20)?),
            };
            write_line(out, &Line::Summary(Box::new(record)))?;
            report.summaries += 1;
        }

        let mut stmt = conn.prepare(
            "SELECT s.agent, s.source_id, d.observed_through, d.summarized_through, d.session_id
             FROM distil_progress d JOIN sessions s ON s.id = d.session_id ORDER BY d.session_id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let session_id: i64 = r.get(4)?;
            let observed: i64 = r.get(2)?;
            let summarized: i64 = r.get(3)?;
            let record = ProgressRecord {
                session: SessionRef { agent: r.get(0)?, id: r.get(1)? },
                observed_through: position(Some(observed).filter(|&t| t > 0), Some(session_id))?,
                summarized_through: position(
                    Some(summarized).filter(|&t| t > 0),
                    Some(session_id),
                )?,
            };
            if record.observed_through.is_some() || record.summarized_through.is_some() {
                write_line(out, &Line::Progress(record))?;
            }
        }

        let said: Option<i64> = conn
            .query_row(
                "SELECT version FROM memory_screened WHERE item_kind = ?1 AND item_id = 0",
                [SAID_CURSOR],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(through) = position(said, None)? {
            write_line(out, &Line::Cursor(CursorRecord { name: SAID_CURSOR.into(), through }))?;
        }
        Ok(())
    }

    /// The files an item rests on.
    pub(super) fn anchor_records(
        &self,
        kind: ItemKind,
        id: i64,
    ) -> Result<Vec<AnchorRecord>, TransferError> {
        let rows = self.anchors_of(&[(kind, id)])?;
        Ok(rows
            .into_iter()
            .map(|a| AnchorRecord {
                path: a.path,
                size: a.size,
                mtime_ms: a.mtime_ms,
                hash: a.hash,
                commit_sha: a.commit,
                anchored_at: a.anchored_at,
                checked_size: a.checked_size,
                checked_mtime: a.checked_mtime,
                changed_at: a.changed_at,
            })
            .collect())
    }
}

fn hits(count: Option<i64>, last_at: Option<i64>) -> Option<HitsRecord> {
    Some(HitsRecord { count: count?, last_at: last_at? })
}

/// Where the store stood before an import, so the import moves a read position only where the
/// store had read everything before it (a position carried over would otherwise skip events
/// of this store's own that were never read).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Before {
    said_caught_up: bool,
    observations_anchored: bool,
    memories_anchored: bool,
}

impl Before {
    pub(super) fn read(tx: &rusqlite::Transaction<'_>) -> Result<Before, TransferError> {
        let one = |sql: &str| -> rusqlite::Result<bool> { tx.query_row(sql, [], |r| r.get(0)) };
        Ok(Before {
            said_caught_up: one(
                "SELECT coalesce((SELECT version FROM memory_screened
                                  WHERE item_kind = 'said' AND item_id = 0), 0)
                        >= coalesce((SELECT max(id) FROM events), 0)",
            )?,
            observations_anchored: one(
                "SELECT coalesce((SELECT after_id FROM anchor_cursor
                                  WHERE item_kind = 'observation'), 0)
                        >= coalesce((SELECT max(id) FROM observations), 0)",
            )?,
            memories_anchored: one(
                "SELECT coalesce((SELECT after_id FROM anchor_cursor WHERE item_kind = 'memory'), 0)
                        >= coalesce((SELECT max(id) FROM memories), 0)",
            )?,
        })
    }
}

/// What an import learned about the file's items as it read them: their ids here, and links
/// to memories further down the file.
#[derive(Debug, Default)]
pub(super) struct Restored {
    /// `o12` or `s3` in the file to the same item's id here.
    items: HashMap<String, String>,
    /// A memory's id in the file to its id here.
    memories: HashMap<i64, i64>,
    /// (memory here, the file's id of the memory it supersedes, of the one superseding it).
    links: Vec<(i64, Option<i64>, Option<i64>)>,
    /// How far the file's store had read prompts for statements, as an event id here.
    said: Option<i64>,
    /// The file is a whole backup (its header says so): it carries what was distilled, how far
    /// its store read, and where each memory came from.
    whole: bool,
}

impl Importer<'_> {
    /// The id and project of a session here (the file's session lines are stored by now).
    fn session_here(
        &self,
        session: &SessionRef,
    ) -> Result<Option<(i64, Option<i64>)>, TransferError> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT id, project_id FROM sessions WHERE agent = ?1 AND source_id = ?2",
            )?
            .query_row(params![session.agent, session.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    fn event_here(&self, uid: &str) -> Result<Option<i64>, TransferError> {
        Ok(self
            .tx
            .prepare_cached("SELECT id FROM events WHERE uid = ?1")?
            .query_row([uid], |r| r.get(0))
            .optional()?)
    }

    fn project_here(&self, key: Option<&str>) -> Result<Option<i64>, TransferError> {
        let Some(key) = key else { return Ok(None) };
        if let Some(id) = self.projects.get(key) {
            return Ok(Some(*id));
        }
        Ok(self
            .tx
            .prepare_cached("SELECT id FROM projects WHERE key = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()?)
    }

    /// Takes the file as a whole backup, as its header says.
    pub(super) fn whole_backup(&mut self) {
        self.restored.whole = true;
    }

    /// A whole backup of this store or one the person vouches for: restored as it was, origins
    /// and read positions included.
    pub(super) fn restoring(&self) -> bool {
        self.restored.whole && self.keeps_state()
    }

    /// Whether what the file says about promotion and search (screened items, hits, read
    /// positions, anchors) is taken as it is: only from this store's own export or a file the
    /// person vouches for. Anyone else's items are screened here, their memory proposed for
    /// review.
    fn keeps_state(&self) -> bool {
        matches!(self.source, Source::Own | Source::Trusted)
    }

    /// Stores one observation, sanitized; false when it was stored already or rests on
    /// nothing the store holds.
    pub(super) fn observation(
        &mut self,
        record: &ObservationRecord,
        clean: &dyn Fn(&str) -> String,
    ) -> Result<bool, TransferError> {
        let Some((session_id, session_project)) = self.session_here(&record.session)? else {
            return Ok(false);
        };
        let mut events = Vec::with_capacity(record.sources.len());
        for uid in &record.sources {
            if let Some(id) = self.event_here(uid)? {
                events.push(id);
            }
        }
        if events.is_empty() {
            return Ok(false);
        }
        events.sort_unstable();
        let project_id = self.project_here(record.project.as_deref())?.or(session_project);
        let list = |items: &[String]| cleaned_list(items, clean);
        let key = crate::store::distilled::source_key(session_id, &events);
        let added = self.tx.prepare_cached(INSERT_OBSERVATION)?.execute(params![
            session_id,
            project_id,
            clip(&record.agent),
            clip(&record.mode),
            clip(&record.kind),
            clean(&record.title),
            clean(&record.subtitle),
            list(&record.facts),
            clean(&record.narrative),
            list(&record.concepts),
            list(&record.files_read),
            list(&record.files_modified),
            record.at.min(crate::time::now_ms()),
            record.tokens,
            record.work_tokens,
            clip(&record.distiller),
            key,
        ])? == 1;
        let id: i64 = self.tx.query_row(
            "SELECT id FROM observations WHERE source_key = ?1",
            [&key],
            |r| r.get(0),
        )?;
        self.restored.items.insert(format!("o{}", record.id), format!("o{id}"));
        if !added {
            return Ok(false);
        }
        for event_id in events {
            self.tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO observation_sources (observation_id, event_id) VALUES (?1, ?2)",
                )?
                .execute(params![id, event_id])?;
        }
        if self.keeps_state() {
            if record.screened {
                self.tx.execute(
                    "INSERT OR IGNORE INTO memory_screened (item_kind, item_id, version)
                     VALUES ('observation', ?1, 0)",
                    [id],
                )?;
            }
            self.hits("observation", id, record.hits)?;
            self.anchors("observation", id, project_id, &record.anchors)?;
        }
        Ok(true)
    }

    /// Stores one session summary, sanitized, unless the session has one covering as much.
    pub(super) fn summary(
        &mut self,
        record: &SummaryRecord,
        clean: &dyn Fn(&str) -> String,
    ) -> Result<bool, TransferError> {
        let Some((session_id, session_project)) = self.session_here(&record.session)? else {
            return Ok(false);
        };
        let through = match record.through.as_deref() {
            Some(uid) => self.event_here(uid)?,
            None => None,
        };
        let through = match through {
            Some(id) => id,
            None => self.tx.query_row(
                "SELECT coalesce(max(id), 0) FROM events WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )?,
        };
        let project_id = self.project_here(record.project.as_deref())?.or(session_project);
        let list = |items: &[String]| cleaned_list(items, clean);
        let upsert = format!(
            "{UPSERT_SUMMARY} WHERE excluded.through_event_id > summaries.through_event_id"
        );
        let written = self.tx.prepare_cached(&upsert)?.execute(params![
            session_id,
            project_id,
            clip(&record.agent),
            clip(&record.mode),
            clean(&record.request),
            list(&record.investigated),
            list(&record.learned),
            list(&record.completed),
            list(&record.next_steps),
            list(&record.files_read),
            list(&record.files_modified),
            record.at.min(crate::time::now_ms()),
            through,
            record.tokens,
            record.work_tokens,
            clip(&record.distiller),
        ])? == 1;
        let id: i64 = self.tx.query_row(
            "SELECT id FROM summaries WHERE session_id = ?1",
            [session_id],
            |r| r.get(0),
        )?;
        self.restored.items.insert(format!("s{}", record.id), format!("s{id}"));
        if written && self.keeps_state() {
            let screened = match &record.screened_through {
                Some(uid) => self.event_here(uid)?,
                None => None,
            };
            if let Some(version) = screened {
                self.tx.execute(
                    "INSERT INTO memory_screened (item_kind, item_id, version)
                     VALUES ('summary', ?1, ?2)
                     ON CONFLICT (item_kind, item_id) DO UPDATE
                     SET version = max(version, excluded.version)",
                    params![id, version],
                )?;
            }
            self.hits("summary", id, record.hits)?;
        }
        Ok(written)
    }

    /// Moves a session's distil progress up to what the file says was distilled.
    pub(super) fn progress(&mut self, record: &ProgressRecord) -> Result<(), TransferError> {
        let Some((session_id, _)) = self.session_here(&record.session)? else { return Ok(()) };
        let here = |uid: Option<&str>| -> Result<i64, TransferError> {
            Ok(match uid {
                Some(uid) => self.event_here(uid)?.unwrap_or(0),
                None => 0,
            })
        };
        let observed = here(record.observed_through.as_deref())?;
        let summarized = here(record.summarized_through.as_deref())?;
        self.tx.execute(
            "INSERT INTO distil_progress (session_id, observed_through, summarized_through)
             VALUES (?1, ?2, ?3)
             ON CONFLICT (session_id) DO UPDATE SET
                 observed_through = max(observed_through, excluded.observed_through),
                 summarized_through = max(summarized_through, excluded.summarized_through)",
            params![session_id, observed, summarized],
        )?;
        Ok(())
    }

    /// Notes a read position; applied at the end, where the store had read everything.
    pub(super) fn cursor(&mut self, record: &CursorRecord) -> Result<(), TransferError> {
        if record.name == SAID_CURSOR && self.keeps_state() {
            let id = self.event_here(&record.through)?;
            self.restored.said = self.restored.said.max(id);
        }
        Ok(())
    }

    /// The file's `o12` / `s3` as the same item's id here; `None` when the file did not carry it.
    pub(super) fn item_here(&self, source: &str) -> Option<String> {
        self.restored.items.get(source).cloned()
    }

    /// Records a memory's id here, with its links to other memories of the file.
    pub(super) fn memory_here(
        &mut self,
        file_id: i64,
        id: i64,
        supersedes: Option<i64>,
        superseded_by: Option<i64>,
    ) {
        self.restored.memories.insert(file_id, id);
        if supersedes.is_some() || superseded_by.is_some() {
            self.restored.links.push((id, supersedes, superseded_by));
        }
    }

    /// What search found of a memory, and the files it rests on.
    pub(super) fn memory_state(
        &mut self,
        id: i64,
        project_id: Option<i64>,
        hits: Option<HitsRecord>,
        anchors: &[AnchorRecord],
    ) -> Result<(), TransferError> {
        if !self.keeps_state() {
            return Ok(());
        }
        if let Some(hits) = hits {
            self.tx.execute(
                "UPDATE memories SET hits = max(hits, ?2), last_hit = ?3 WHERE id = ?1",
                params![id, hits.count, hits.last_at],
            )?;
        }
        self.anchors("memory", id, project_id, anchors)
    }

    /// The end of the file: links between its memories, and the read positions it carried.
    pub(super) fn finish(&mut self, before: Before) -> Result<(), TransferError> {
        let here = |file_id: Option<i64>| file_id.and_then(|f| self.restored.memories.get(&f));
        for (id, supersedes, superseded_by) in &self.restored.links {
            self.tx.execute(
                "UPDATE memories SET supersedes = coalesce(supersedes, ?2),
                                     superseded_by = coalesce(superseded_by, ?3)
                 WHERE id = ?1",
                params![id, here(*supersedes), here(*superseded_by)],
            )?;
        }
        // Only a whole backup says how far its store read and anchored; a memories-only file
        // or a pack leaves its memories to this store's work pass.
        if !self.restoring() {
            return Ok(());
        }
        if let Some(through) = self.restored.said.filter(|_| before.said_caught_up) {
            self.tx.execute(
                "INSERT INTO memory_screened (item_kind, item_id, version) VALUES (?1, 0, ?2)
                 ON CONFLICT (item_kind, item_id) DO UPDATE SET version = max(version, excluded.version)",
                params![SAID_CURSOR, through],
            )?;
        }
        // What the file brought was anchored where it was made (or never was); anchoring it
        // now would call files fresh that may have changed since.
        for (kind, table, caught_up) in [
            ("observation", "observations", before.observations_anchored),
            ("memory", "memories", before.memories_anchored),
        ] {
            if caught_up {
                self.tx.execute(
                    &format!(
                        "INSERT INTO anchor_cursor (item_kind, after_id)
                         SELECT ?1, coalesce(max(id), 0) FROM {table} WHERE true
                         ON CONFLICT (item_kind) DO UPDATE SET after_id = max(after_id, excluded.after_id)"
                    ),
                    [kind],
                )?;
            }
        }
        Ok(())
    }

    fn hits(&self, kind: &str, id: i64, hits: Option<HitsRecord>) -> Result<(), TransferError> {
        let Some(hits) = hits else { return Ok(()) };
        self.tx.execute(
            "INSERT INTO hits (item_kind, item_id, count, last_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (item_kind, item_id) DO UPDATE
             SET count = max(count, excluded.count), last_at = max(last_at, excluded.last_at)",
            params![kind, id, hits.count, hits.last_at],
        )?;
        Ok(())
    }

    /// Stores the hits an event had in the file, for this store's own export or a trusted one.
    pub(super) fn event_hits(
        &self,
        uid: &str,
        hits: Option<HitsRecord>,
    ) -> Result<(), TransferError> {
        if hits.is_none() || !self.keeps_state() {
            return Ok(());
        }
        match self.event_here(uid)? {
            Some(id) => self.hits("event", id, hits),
            None => Ok(()),
        }
    }

    fn anchors(
        &self,
        kind: &str,
        id: i64,
        project_id: Option<i64>,
        anchors: &[AnchorRecord],
    ) -> Result<(), TransferError> {
        for a in anchors {
            self.tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO anchors (item_kind, item_id, project_id, path, size,
                         mtime_ms, hash, commit_sha, anchored_at, checked_size, checked_mtime,
                         changed_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )?
                .execute(params![
                    kind,
                    id,
                    project_id,
                    clip_path(&a.path),
                    a.size,
                    a.mtime_ms,
                    clip(&a.hash),
                    a.commit_sha.as_deref().map(clip),
                    a.anchored_at,
                    a.checked_size,
                    a.checked_mtime,
                    a.changed_at,
                ])?;
        }
        Ok(())
    }
}

/// A list field (facts, concepts, files, lessons) sanitized item by item, as stored: JSON text.
fn cleaned_list(items: &[String], clean: &dyn Fn(&str) -> String) -> String {
    let cleaned: Vec<String> = items.iter().map(|i| clean(i)).collect();
    serde_json::to_string(&cleaned).unwrap_or_else(|_| "[]".into())
}

/// A name-like field (an agent, a mode, a kind, a hash) cut to what any store writes.
fn clip(text: &str) -> String {
    crate::text::clip(text, super::MAX_NAME_CHARS)
}

fn clip_path(text: &str) -> String {
    crate::text::clip(text, super::MAX_PATH_BYTES)
}
