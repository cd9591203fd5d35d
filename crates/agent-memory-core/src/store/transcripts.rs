//! What the store remembers about agents' own transcripts: how far each file has been read,
//! and which tool calls of a session are already stored, so reading a transcript again adds
//! nothing twice; the closing answer a stop gets from its transcript after it was stored; and
//! which sessions of an agent's history were read whole, and where its hooks took over.

use std::collections::HashSet;

use rusqlite::{OptionalExtension as _, params};

use super::{Result, Store, stored_payload};
use crate::event::Event;

impl Store {
    /// How many bytes of the transcript at `path` have been read; 0 for one never read.
    pub fn transcript_offset(&self, path: &str) -> Result<u64> {
        let offset: Option<i64> = self
            .conn()
            .query_row("SELECT offset FROM transcript_cursors WHERE path = ?1", [path], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(offset.map_or(0, |o| o.max(0) as u64))
    }

    pub fn set_transcript_offset(&mut self, path: &str, offset: u64, now_ms: i64) -> Result<()> {
        self.conn().execute(
            "INSERT INTO transcript_cursors (path, offset, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (path) DO UPDATE SET offset = excluded.offset, updated_at = excluded.updated_at",
            params![path, offset as i64, now_ms],
        )?;
        Ok(())
    }

    /// The ids of the tool calls stored for one session of `agent` (its own session id).
    pub fn session_call_ids(&self, agent: &str, source_id: &str) -> Result<HashSet<String>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT json_extract(e.payload, '$.call_id') FROM events e
             JOIN sessions s ON s.id = e.session_id
             WHERE s.agent = ?1 AND s.source_id = ?2 AND e.kind = 'tool_use'
               AND json_extract(e.payload, '$.call_id') IS NOT NULL",
        )?;
        let ids = stmt.query_map(params![agent, source_id], |r| r.get::<_, String>(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    }

    /// Writes the closing answer a stored stop got later (from its agent's transcript): its
    /// summary, body and payload as `stop` holds them, already sanitized and capped by capture.
    /// The full-text index follows by its update trigger. Returns whether a stop row changed.
    pub fn set_stop_answer(&self, id: i64, stop: &Event) -> Result<bool> {
        let changed = self.conn().execute(
            "UPDATE events SET summary = ?2, body = ?3, payload = ?4
             WHERE id = ?1 AND kind = 'stop'",
            params![id, stop.summary, stop.body, stored_payload(stop)],
        )?;
        Ok(changed == 1)
    }

    /// The size and time a history source (a session file, or a database's session) had when
    /// it was last read whole; `None` for one never read.
    pub fn history_read(&self, source: &str) -> Result<Option<(u64, i64)>> {
        let read: Option<(i64, i64)> = self
            .conn()
            .query_row("SELECT size, modified FROM history_read WHERE source = ?1", [source], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        Ok(read.map(|(size, modified)| (size.max(0) as u64, modified)))
    }

    /// When the hooks (or anything but a reading of history, whose event uids begin with
    /// `history_uid`) first stored an event of one session of `agent`: what the history holds
    /// from then on is already captured.
    pub fn captured_since(
        &self,
        agent: &str,
        source_id: &str,
        history_uid: &str,
    ) -> Result<Option<i64>> {
        let at = self
            .conn()
            .prepare_cached(
                "SELECT min(e.at) FROM events e JOIN sessions s ON s.id = e.session_id
                 WHERE s.agent = ?1 AND s.source_id = ?2
                   AND substr(e.uid, 1, length(?3)) <> ?3",
            )?
            .query_row(params![agent, source_id, history_uid], |r| r.get(0))?;
        Ok(at)
    }

    /// The agent's own ids of its sessions in the store.
    pub fn session_source_ids(&self, agent: &str) -> Result<HashSet<String>> {
        let mut stmt =
            self.conn().prepare_cached("SELECT source_id FROM sessions WHERE agent = ?1")?;
        let ids = stmt.query_map([agent], |r| r.get::<_, String>(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    }
}

/// A source of an agent's history read whole: a session file (or a database's session), at
/// the size and time it had, and for a file, the bytes of whole lines read, past which the
/// catch-up at a stop goes on reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadMark {
    pub source: String,
    pub size: u64,
    pub modified_ms: i64,
    pub transcript: Option<(String, u64)>,
}

/// Records `marks` within the caller's transaction.
pub(super) fn mark_read(
    conn: &rusqlite::Connection,
    marks: &[ReadMark],
    now_ms: i64,
) -> Result<()> {
    let mut read = conn.prepare_cached(
        "INSERT INTO history_read (source, size, modified, read_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (source) DO UPDATE SET size = excluded.size,
           modified = excluded.modified, read_at = excluded.read_at",
    )?;
    // Never back: a stop's catch-up may have read further since.
    let mut offset = conn.prepare_cached(
        "INSERT INTO transcript_cursors (path, offset, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (path) DO UPDATE SET offset = max(offset, excluded.offset),
           updated_at = excluded.updated_at",
    )?;
    for mark in marks {
        read.execute(params![mark.source, mark.size as i64, mark.modified_ms, now_ms])?;
        if let Some((path, bytes)) = &mark.transcript {
            offset.execute(params![path, *bytes as i64, now_ms])?;
        }
    }
    Ok(())
}
