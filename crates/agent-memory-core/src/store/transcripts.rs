//! What the store remembers about agents' own transcripts: how far each file has been read,
//! and which tool calls of a session are already stored, so reading a transcript again adds
//! nothing twice; and the closing answer a stop gets from its transcript after it was stored.

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
}
