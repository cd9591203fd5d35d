//! The store's side of anchors: which files an observation or memory rests on, as the work
//! pass fingerprinted them, and what the last check of each found (schema 17).
//!
//! Here is an item, give me its anchors; here is what a check found, keep it. Must not: read
//! files or decide what a change means (that is [`crate::anchor`]).

use rusqlite::{OptionalExtension, params};

use super::recall::ItemKind;
use super::{Result, Store};

/// One file an item rests on, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorRow {
    pub kind: ItemKind,
    pub id: i64,
    /// The project whose top level `path` is relative to; `None` for an absolute path.
    pub project_id: Option<i64>,
    pub path: String,
    pub size: i64,
    pub mtime_ms: i64,
    pub hash: String,
    pub commit: Option<String>,
    pub anchored_at: i64,
    pub checked_size: Option<i64>,
    pub checked_mtime: Option<i64>,
    pub changed_at: Option<i64>,
}

/// A new anchor: the file as the item knew it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAnchor {
    pub project_id: Option<i64>,
    pub path: String,
    pub size: i64,
    pub mtime_ms: i64,
    pub hash: String,
    pub commit: Option<String>,
    /// Set when the file already changed after the item's session ended.
    pub changed_at: Option<i64>,
}

/// An observation not yet anchored, with what anchoring it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unanchored {
    pub id: i64,
    pub project_id: Option<i64>,
    /// The project's stored top level.
    pub root: Option<String>,
    /// The directory its session worked in.
    pub cwd: Option<String>,
    /// When its session's last event happened: a file modified later changed after it.
    pub session_last_at: i64,
    /// The files it changed, then the text that may name others.
    pub files_modified: Vec<String>,
    /// The files it read: not what it rests on, but a look that renews others' anchors.
    pub files_read: Vec<String>,
    /// The branch its session's checkout was on.
    pub branch: Option<String>,
    pub text: String,
}

/// A memory not yet anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnanchoredMemory {
    pub id: i64,
    pub project_id: Option<i64>,
    pub root: Option<String>,
    pub sources: Vec<String>,
    pub text: String,
    pub created_at: i64,
}

const COLUMNS: &str = "item_kind, item_id, project_id, path, size, mtime_ms, hash, commit_sha,
                       anchored_at, checked_size, checked_mtime, changed_at";

/// [`COLUMNS`] of the table aliased `alias`.
fn prefixed(alias: &str) -> String {
    COLUMNS.split(',').map(|c| format!("{alias}.{}", c.trim())).collect::<Vec<_>>().join(", ")
}

fn kind_of(name: &str) -> ItemKind {
    if name == "memory" { ItemKind::Memory } else { ItemKind::Observation }
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<AnchorRow> {
    Ok(AnchorRow {
        kind: kind_of(&r.get::<_, String>(0)?),
        id: r.get(1)?,
        project_id: r.get(2)?,
        path: r.get(3)?,
        size: r.get(4)?,
        mtime_ms: r.get(5)?,
        hash: r.get(6)?,
        commit: r.get(7)?,
        anchored_at: r.get(8)?,
        checked_size: r.get(9)?,
        checked_mtime: r.get(10)?,
        changed_at: r.get(11)?,
    })
}

impl Store {
    /// The anchors of `items`, in one statement.
    pub fn anchors_of(&self, items: &[(ItemKind, i64)]) -> Result<Vec<AnchorRow>> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<(&str, i64)> = items.iter().map(|(kind, id)| (kind.as_str(), *id)).collect();
        let keys = serde_json::to_string(&keys).unwrap_or_else(|_| "[]".into());
        let mut stmt = self.conn().prepare_cached(&format!(
            // The items drive the join, each a lookup of the primary key: a row-value `IN`
            // would use only its first column and walk every anchor of the kind.
            "SELECT {} FROM json_each(?1) j CROSS JOIN anchors a
             WHERE a.item_kind = j.value ->> 0 AND a.item_id = j.value ->> 1
             ORDER BY a.item_kind, a.item_id, a.path",
            prefixed("a")
        ))?;
        let rows = stmt.query_map([keys], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Keeps what a check of an anchor found: the file's size and time then, and when it
    /// changed (`None`: unchanged, in which case the anchor takes the new size and time as its
    /// own, so the next check is a stat alone).
    pub fn note_anchor_check(
        &self,
        anchor: &AnchorRow,
        size: i64,
        mtime_ms: i64,
        changed_at: Option<i64>,
    ) -> Result<()> {
        let sql = if changed_at.is_some() {
            "UPDATE anchors SET checked_size = ?4, checked_mtime = ?5, changed_at = ?6
             WHERE item_kind = ?1 AND item_id = ?2 AND path = ?3"
        } else {
            "UPDATE anchors SET size = ?4, mtime_ms = ?5, checked_size = NULL,
                                checked_mtime = NULL, changed_at = ?6
             WHERE item_kind = ?1 AND item_id = ?2 AND path = ?3"
        };
        self.conn().prepare_cached(sql)?.execute(params![
            anchor.kind.as_str(),
            anchor.id,
            anchor.path,
            size,
            mtime_ms,
            changed_at
        ])?;
        Ok(())
    }

    /// How far anchoring has looked at items of `kind`.
    fn anchor_cursor(&self, kind: ItemKind) -> Result<i64> {
        Ok(self
            .conn()
            .prepare_cached("SELECT after_id FROM anchor_cursor WHERE item_kind = ?1")?
            .query_row([kind.as_str()], |r| r.get(0))
            .optional()?
            .unwrap_or(0))
    }

    /// Observations made since anchoring last looked, oldest first, at most `limit`.
    pub fn unanchored_observations(&self, limit: usize) -> Result<Vec<Unanchored>> {
        let after = self.anchor_cursor(ItemKind::Observation)?;
        let mut stmt = self.conn().prepare_cached(
            "SELECT o.id, o.project_id, p.root, s.cwd, s.last_event_at, o.files_modified,
                    o.title || ' ' || o.subtitle || ' ' || o.narrative || ' ' || o.facts,
                    o.files_read, s.branch
             FROM observations o JOIN sessions s ON s.id = o.session_id
             LEFT JOIN projects p ON p.id = o.project_id
             WHERE o.id > ?1 ORDER BY o.id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![after, limit as i64], |r| {
            let files: String = r.get(5)?;
            Ok(Unanchored {
                id: r.get(0)?,
                project_id: r.get(1)?,
                root: r.get(2)?,
                cwd: r.get(3)?,
                session_last_at: r.get(4)?,
                files_modified: serde_json::from_str(&files).unwrap_or_default(),
                text: r.get(6)?,
                files_read: serde_json::from_str(&r.get::<_, String>(7)?).unwrap_or_default(),
                branch: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Memories made since anchoring last looked, oldest first, at most `limit`.
    pub fn unanchored_memories(&self, limit: usize) -> Result<Vec<UnanchoredMemory>> {
        let after = self.anchor_cursor(ItemKind::Memory)?;
        let mut stmt = self.conn().prepare_cached(
            "SELECT m.id, m.project_id, p.root, m.sources, m.text, m.created_at
             FROM memories m LEFT JOIN projects p ON p.id = m.project_id
             WHERE m.id > ?1 ORDER BY m.id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![after, limit as i64], |r| {
            let sources: String = r.get(3)?;
            Ok(UnanchoredMemory {
                id: r.get(0)?,
                project_id: r.get(1)?,
                root: r.get(2)?,
                sources: serde_json::from_str(&sources).unwrap_or_default(),
                text: r.get(4)?,
                created_at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Stores the anchors of items and moves the cursor of `kind` past `through`, in one
    /// transaction; an anchor already stored is kept as it was.
    pub fn save_anchors(
        &mut self,
        kind: ItemKind,
        anchors: &[(i64, NewAnchor)],
        through: i64,
        now_ms: i64,
    ) -> Result<()> {
        let tx = self.begin_write()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT OR IGNORE INTO anchors (item_kind, item_id, project_id, path, size,
                                                mtime_ms, hash, commit_sha, anchored_at,
                                                changed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for (id, a) in anchors {
                stmt.execute(params![
                    kind.as_str(),
                    id,
                    a.project_id,
                    a.path,
                    a.size,
                    a.mtime_ms,
                    a.hash,
                    a.commit,
                    now_ms,
                    a.changed_at
                ])?;
            }
            tx.execute(
                "INSERT INTO anchor_cursor (item_kind, after_id) VALUES (?1, ?2)
                 ON CONFLICT (item_kind) DO UPDATE SET after_id = max(after_id, excluded.after_id)",
                params![kind.as_str(), through],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The anchors on the file `path` of project `project_id`, of every item but the
    /// observation `except`.
    pub fn anchors_at(
        &self,
        project_id: Option<i64>,
        path: &str,
        except: i64,
    ) -> Result<Vec<AnchorRow>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT {COLUMNS} FROM anchors
             WHERE path = ?1 AND project_id IS ?2
               AND NOT (item_kind = 'observation' AND item_id = ?3)"
        ))?;
        let rows = stmt.query_map(params![path, project_id, except], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Renews an anchor: the file as it is now is what the item rests on.
    pub fn renew_anchor(&self, anchor: &AnchorRow, new: &NewAnchor, now_ms: i64) -> Result<()> {
        self.conn().execute(
            "UPDATE anchors SET size = ?4, mtime_ms = ?5, hash = ?6, commit_sha = ?7,
                                anchored_at = ?8, checked_size = NULL, checked_mtime = NULL,
                                changed_at = NULL
             WHERE item_kind = ?1 AND item_id = ?2 AND path = ?3",
            params![
                anchor.kind.as_str(),
                anchor.id,
                anchor.path,
                new.size,
                new.mtime_ms,
                new.hash,
                new.commit,
                now_ms
            ],
        )?;
        Ok(())
    }

    /// The anchors of active (reviewed) memories, newest memory first, at most `limit`: what
    /// `tidy` and `review` check to list memories that need a look.
    pub fn active_memory_anchors(&self, limit: usize) -> Result<Vec<AnchorRow>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT {} FROM anchors a JOIN memories m ON m.id = a.item_id
             WHERE a.item_kind = 'memory' AND m.status = 'active'
             ORDER BY a.item_id DESC LIMIT ?1",
            prefixed("a")
        ))?;
        let rows = stmt.query_map([limit as i64], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The top level of a stored project, by id.
    pub fn project_root(&self, project_id: i64) -> Result<Option<String>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT root FROM projects WHERE id = ?1")?
            .query_row([project_id], |r| r.get(0))
            .optional()?)
    }
}
