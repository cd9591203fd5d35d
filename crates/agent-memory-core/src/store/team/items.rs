//! Observations and session summaries in team memory, for the projects a member opts in
//! (`[team] share_observations`): which items wait to be pushed, their global ids, what was
//! pushed, forgetting one (a tombstone for the team when it was shared), and items pulled from
//! teammates, kept with who they came from.
//!
//! Here is a batch to push, give me the rows; here is a batch pulled, keep it. An item is in
//! the outbox until it is pushed with its current `at` (a summary rewritten to cover more of its
//! session moves its `at`, and goes again). What may leave: items of a project known by its git
//! origin that the member opted in (and did not exclude), distilled on this machine, none of
//! whose events was private (for a summary: no private event of its session up to what it
//! covers). Raw events, candidates and a teammate's items never leave through here.
//!
//! A pulled item lives in the same tables as the member's own, in a session of its own
//! (`team:<session id>`), so search, the timeline and the briefing read it like any other and
//! name its member; promotion never screens it (it is marked screened), so a teammate's item
//! never turns into this member's candidate and goes back out as theirs.
//!
//! Must not: open a connection to anything but the store.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::super::{Result, Store};
use super::project_for;

/// An observation or a session summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    Observation,
    Summary,
}

impl ItemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Observation => "observation",
            ItemKind::Summary => "summary",
        }
    }

    pub fn parse(value: &str) -> Option<ItemKind> {
        match value {
            "observation" => Some(ItemKind::Observation),
            "summary" => Some(ItemKind::Summary),
            _ => None,
        }
    }

    /// The letter of its ids as people type them: `o12`, `s3`.
    pub fn letter(self) -> char {
        match self {
            ItemKind::Observation => 'o',
            ItemKind::Summary => 's',
        }
    }

    fn table(self) -> &'static str {
        match self {
            ItemKind::Observation => "observations",
            ItemKind::Summary => "summaries",
        }
    }
}

/// Which projects share their items, from the `[team]` configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemShare {
    /// Projects (keys, names or roots) whose observations and summaries leave.
    pub projects: Vec<String>,
    /// Projects (keys, names or roots) whose nothing leaves; wins over `projects`.
    pub exclude_projects: Vec<String>,
}

/// An item waiting to be pushed, or the tombstone of one forgotten here.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutgoingItem {
    pub kind: ItemKind,
    /// Its local id (0 for a tombstone: the row is gone).
    pub id: i64,
    /// Its global id, once it has one ([`assign_gids`]).
    pub gid: Option<String>,
    /// The agent and its own session id, from which the team's session id is derived.
    pub agent: String,
    pub session: String,
    pub project_key: String,
    pub project_name: String,
    /// An observation's type; `summary` for a summary.
    pub item_type: String,
    /// An observation's title; a summary's request.
    pub title: String,
    /// The rest of its fields, as the store keeps them, and `lead`: the line shown after the
    /// title.
    pub body: serde_json::Value,
    pub at: i64,
    /// A tombstone: the item was forgotten here after it was shared.
    pub forgotten: bool,
}

impl OutgoingItem {
    /// Its text, as one string: what the server indexes and a model embeds.
    pub fn text(&self) -> String {
        item_text(&self.title, &self.body)
    }
}

/// The item's title and every string of its body, one after another.
pub fn item_text(title: &str, body: &serde_json::Value) -> String {
    let mut text = title.to_owned();
    let mut add = |value: &serde_json::Value| {
        if let Some(s) = value.as_str().filter(|s| !s.trim().is_empty()) {
            text.push(' ');
            text.push_str(s);
        }
    };
    for field in TEXT_FIELDS {
        match body.get(field) {
            Some(serde_json::Value::Array(values)) => values.iter().for_each(&mut add),
            Some(value) => add(value),
            None => {}
        }
    }
    text
}

/// The fields of a body that hold what was learned, in the order they are read.
const TEXT_FIELDS: &[&str] = &[
    "subtitle",
    "facts",
    "narrative",
    "concepts",
    "investigated",
    "learned",
    "completed",
    "next_steps",
    "files_read",
    "files_modified",
];

/// An item pulled from the team.
#[derive(Debug, Clone, PartialEq)]
pub struct IncomingItem {
    pub gid: String,
    pub kind: ItemKind,
    pub member: String,
    pub machine: String,
    pub agent: String,
    /// The team's id of its session.
    pub session: String,
    pub project_key: String,
    pub project_name: Option<String>,
    pub item_type: String,
    pub title: String,
    pub body: serde_json::Value,
    pub at: i64,
    pub forgotten: bool,
    pub revision: i64,
}

/// What [`apply_pulled`] did with a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AppliedItems {
    /// Items new to this machine.
    pub added: usize,
    /// Items rewritten or forgotten by the member who distilled them.
    pub updated: usize,
    /// Rows this machine already had (its own among them), or forgot itself.
    pub unchanged: usize,
}

/// The key of the items' pull cursor in `team_sync`.
pub const PULL_CURSOR: &str = "items_pull_cursor";

/// The condition that a project (`p`) shares its items: a git project, opted in (?1), not
/// excluded (?2).
const PROJECT_SHARES: &str = "
    p.key LIKE 'git:%'
    AND (p.key IN (SELECT value FROM json_each(?1)) OR p.name IN (SELECT value FROM json_each(?1))
         OR p.root IN (SELECT value FROM json_each(?1)))
    AND p.key NOT IN (SELECT value FROM json_each(?2))
    AND p.name NOT IN (SELECT value FROM json_each(?2))
    AND p.root NOT IN (SELECT value FROM json_each(?2))";

fn observation_outbox() -> String {
    format!(
        "SELECT 'observation', o.id, o.team_gid, s.agent, s.source_id, p.key, p.name, o.kind,
                o.title,
                json_object('subtitle', o.subtitle, 'facts', json(o.facts),
                            'narrative', o.narrative, 'concepts', json(o.concepts),
                            'files_read', json(o.files_read),
                            'files_modified', json(o.files_modified), 'mode', o.mode,
                            'tokens', o.tokens, 'work_tokens', o.work_tokens,
                            'distiller', o.distiller, 'lead', o.subtitle),
                o.at, 0 AS forgotten
         FROM observations o JOIN sessions s ON s.id = o.session_id
         JOIN projects p ON p.id = o.project_id
         WHERE o.team_member IS NULL AND (o.team_pushed IS NULL OR o.team_pushed <> o.at)
           AND json_valid(o.facts) AND json_valid(o.concepts) AND json_valid(o.files_read)
           AND json_valid(o.files_modified)
           AND {PROJECT_SHARES}
           AND NOT EXISTS (
               SELECT 1 FROM observation_sources os JOIN events e ON e.id = os.event_id
               WHERE os.observation_id = o.id AND e.sensitivity = 'private')"
    )
}

fn summary_outbox() -> String {
    format!(
        "SELECT 'summary', m.id, m.team_gid, s.agent, s.source_id, p.key, p.name, 'summary',
                m.request,
                json_object('investigated', json(m.investigated), 'learned', json(m.learned),
                            'completed', json(m.completed), 'next_steps', json(m.next_steps),
                            'files_read', json(m.files_read),
                            'files_modified', json(m.files_modified), 'mode', m.mode,
                            'tokens', m.tokens, 'work_tokens', m.work_tokens,
                            'distiller', m.distiller,
                            'lead', coalesce(json_extract(m.learned, '$[0]'),
                                             json_extract(m.completed, '$[0]'), '')),
                m.at, 0
         FROM summaries m JOIN sessions s ON s.id = m.session_id
         JOIN projects p ON p.id = m.project_id
         WHERE m.team_member IS NULL AND (m.team_pushed IS NULL OR m.team_pushed <> m.at)
           AND json_valid(m.investigated) AND json_valid(m.learned) AND json_valid(m.completed)
           AND json_valid(m.next_steps) AND json_valid(m.files_read)
           AND json_valid(m.files_modified)
           AND {PROJECT_SHARES}
           AND NOT EXISTS (
               SELECT 1 FROM events e
               WHERE e.session_id = m.session_id AND e.id <= m.through_event_id
                 AND e.sensitivity = 'private')"
    )
}

/// Tombstones of items forgotten here after they were shared, not pushed yet.
const TOMBSTONES: &str = "
    SELECT item_kind, 0, gid, '', '', '', '', '', '', '{}', forgotten_at, 1
    FROM team_forgotten WHERE mine = 1 AND pushed = 0";

fn share_args(share: &ItemShare) -> (String, String) {
    let json = |v: &Vec<String>| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
    (json(&share.projects), json(&share.exclude_projects))
}

/// How many items (and tombstones) wait to be pushed.
pub fn queue_depth(store: &Store, share: &ItemShare) -> Result<i64> {
    if share.projects.is_empty() {
        return Ok(store.conn().query_row(
            "SELECT count(*) FROM team_forgotten WHERE mine = 1 AND pushed = 0",
            [],
            |r| r.get(0),
        )?);
    }
    let (projects, exclude) = share_args(share);
    Ok(store.conn().query_row(
        &format!(
            "SELECT count(*) FROM ({} UNION ALL {} UNION ALL {TOMBSTONES})",
            observation_outbox(),
            summary_outbox()
        ),
        params![projects, exclude],
        |r| r.get(0),
    )?)
}

/// The next `limit` items waiting to be pushed, oldest first, tombstones among them.
pub fn outbox(store: &Store, share: &ItemShare, limit: usize) -> Result<Vec<OutgoingItem>> {
    // With no project opted in only tombstones can wait (of items shared before).
    if share.projects.is_empty() {
        let mut stmt = store.conn().prepare(&format!("{TOMBSTONES} ORDER BY 11 LIMIT ?1"))?;
        let rows = stmt.query_map(params![limit as i64], outgoing)?;
        return Ok(rows.collect::<rusqlite::Result<_>>()?);
    }
    let (projects, exclude) = share_args(share);
    let mut stmt = store.conn().prepare(&format!(
        "SELECT * FROM ({} UNION ALL {} UNION ALL {TOMBSTONES}) ORDER BY 11, 2 LIMIT ?3",
        observation_outbox(),
        summary_outbox()
    ))?;
    let rows = stmt.query_map(params![projects, exclude, limit as i64], outgoing)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A row of the outbox's queries.
fn outgoing(r: &rusqlite::Row<'_>) -> rusqlite::Result<OutgoingItem> {
    let kind: String = r.get(0)?;
    let body: String = r.get(9)?;
    Ok(OutgoingItem {
        kind: ItemKind::parse(&kind).unwrap_or(ItemKind::Observation),
        id: r.get(1)?,
        gid: r.get(2)?,
        agent: r.get(3)?,
        session: r.get(4)?,
        project_key: r.get(5)?,
        project_name: r.get(6)?,
        item_type: r.get(7)?,
        title: r.get(8)?,
        body: serde_json::from_str(&body).unwrap_or_default(),
        at: r.get(10)?,
        forgotten: r.get::<_, i64>(11)? == 1,
    })
}

/// Gives each of `rows` without a global id the one `new_gid` makes, committed before anything
/// is pushed, so a push that is cut off and run again sends the same ids.
pub fn assign_gids(
    store: &Store,
    rows: &mut [OutgoingItem],
    mut new_gid: impl FnMut() -> String,
) -> Result<()> {
    let tx = store.begin_write()?;
    for row in rows.iter_mut().filter(|r| r.gid.is_none()) {
        let gid = new_gid();
        tx.execute(
            &format!(
                "UPDATE {} SET team_gid = ?2 WHERE id = ?1 AND team_gid IS NULL",
                row.kind.table()
            ),
            params![row.id, gid],
        )?;
        row.gid = Some(gid);
    }
    tx.commit()?;
    Ok(())
}

/// Records that `pushed` reached the server, each with the server's revision of it: the item
/// with the `at` it was pushed with (one rewritten since stays in the outbox), the tombstone
/// as sent.
pub fn mark_pushed(store: &Store, pushed: &[(&OutgoingItem, i64)]) -> Result<()> {
    let tx = store.begin_write()?;
    for (row, revision) in pushed {
        if row.forgotten {
            tx.execute("UPDATE team_forgotten SET pushed = 1 WHERE gid = ?1", params![row.gid])?;
        } else {
            tx.execute(
                &format!(
                    "UPDATE {} SET team_pushed = ?2, team_rev = max(coalesce(team_rev, 0), ?3)
                     WHERE id = ?1",
                    row.kind.table()
                ),
                params![row.id, row.at, revision],
            )?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Whether item `id` of `kind` is here.
pub fn exists(store: &Store, kind: ItemKind, id: i64) -> Result<bool> {
    Ok(store
        .conn()
        .query_row(&format!("SELECT 1 FROM {} WHERE id = ?1", kind.table()), [id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Forgets item `id` of `kind`: the row goes (and with it its index entries, vector and file
/// notes, by the store's triggers). One that was shared leaves its global id behind: for an
/// item distilled here, the tombstone the next sync pushes; for a teammate's, the mark that
/// keeps a pull from bringing it back. False when there is no such item.
pub fn forget(store: &Store, kind: ItemKind, id: i64, now_ms: i64) -> Result<bool> {
    let tx = store.begin_write()?;
    let found: Option<(Option<String>, Option<String>)> = tx
        .query_row(
            &format!("SELECT team_gid, team_member FROM {} WHERE id = ?1", kind.table()),
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((gid, member)) = found else { return Ok(false) };
    if let Some(gid) = gid {
        tx.execute(
            "INSERT INTO team_forgotten (gid, item_kind, forgotten_at, mine) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (gid) DO NOTHING",
            params![gid, kind.as_str(), now_ms, member.is_none()],
        )?;
    }
    // The events it came from keep their sources: a memory drawn from it still knows whether
    // one of them was private.
    tx.execute(&format!("DELETE FROM {} WHERE id = ?1", kind.table()), [id])?;
    tx.commit()?;
    Ok(true)
}

/// Keeps a batch of items pulled from the team and moves their pull cursor to `cursor`, in one
/// transaction. A row this machine distilled itself, already has at that revision, or forgot
/// is left alone; a tombstone removes a teammate's item; a rewritten one replaces it.
pub fn apply_pulled(
    store: &Store,
    rows: &[IncomingItem],
    cursor: i64,
    now_ms: i64,
) -> Result<AppliedItems> {
    let tx = store.begin_write()?;
    let mut applied = AppliedItems::default();
    for row in rows {
        let table = row.kind.table();
        let forgotten_here = tx
            .query_row("SELECT 1 FROM team_forgotten WHERE gid = ?1", [&row.gid], |_| Ok(()))
            .optional()?
            .is_some();
        let local: Option<(i64, Option<String>, i64)> = tx
            .query_row(
                &format!(
                    "SELECT id, team_member, coalesce(team_rev, 0) FROM {table} WHERE team_gid = ?1"
                ),
                [&row.gid],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        match local {
            _ if forgotten_here => applied.unchanged += 1,
            // Distilled here: the pull only says which revision the server gave it.
            Some((id, None, _)) => {
                tx.execute(
                    &format!(
                        "UPDATE {table} SET team_rev = max(coalesce(team_rev, 0), ?2) WHERE id = ?1"
                    ),
                    params![id, row.revision],
                )?;
                applied.unchanged += 1;
            }
            Some((_, Some(_), seen)) if seen >= row.revision => applied.unchanged += 1,
            Some((id, Some(_), _)) => {
                tx.execute(&format!("DELETE FROM {table} WHERE id = ?1"), [id])?;
                if !row.forgotten {
                    insert(&tx, row, Some(id), now_ms)?;
                }
                applied.updated += 1;
            }
            None if row.forgotten => applied.unchanged += 1,
            None => {
                insert(&tx, row, None, now_ms)?;
                applied.added += 1;
            }
        }
    }
    super::set_state_in(&tx, PULL_CURSOR, &cursor.to_string())?;
    tx.commit()?;
    Ok(applied)
}

/// Writes a pulled item (under `id` when it replaces one), in its session and project, marked
/// screened so that promotion leaves it alone.
fn insert(
    conn: &rusqlite::Connection,
    row: &IncomingItem,
    id: Option<i64>,
    now_ms: i64,
) -> Result<()> {
    let project_id = project_for(conn, &row.project_key, row.project_name.as_deref(), now_ms)?;
    let source_id = format!("team:{}", row.session);
    let session_id: i64 = conn.query_row(
        "INSERT INTO sessions (agent, source_id, project_id, started_at, last_event_at, ended_at)
         VALUES (?1, ?2, ?3, ?4, ?4, ?4)
         ON CONFLICT (agent, source_id) DO UPDATE SET
             started_at = min(started_at, excluded.started_at),
             last_event_at = max(last_event_at, excluded.last_event_at)
         RETURNING id",
        params![row.agent, source_id, project_id, row.at],
        |r| r.get(0),
    )?;
    let body = &row.body;
    let text = |field: &str| body.get(field).and_then(|v| v.as_str()).unwrap_or("").to_owned();
    let list = |field: &str| match body.get(field) {
        Some(value @ serde_json::Value::Array(_)) => value.to_string(),
        _ => "[]".to_owned(),
    };
    let number = |field: &str| body.get(field).and_then(serde_json::Value::as_i64).unwrap_or(0);
    let mode = Some(text("mode")).filter(|m| !m.is_empty()).unwrap_or_else(|| "code".into());
    let distiller = format!("team:{}", text("distiller"));
    let new_id: i64 = match row.kind {
        ItemKind::Observation => conn.query_row(
            "INSERT INTO observations (id, session_id, project_id, agent, mode, kind, title,
                 subtitle, facts, narrative, concepts, files_read, files_modified, at, tokens,
                 work_tokens, distiller, source_key, team_gid, team_member, team_machine,
                 team_rev, team_pushed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                     ?18, ?19, ?20, ?21, ?22, ?14)
             RETURNING id",
            params![
                id,
                session_id,
                project_id,
                row.agent,
                mode,
                row.item_type,
                row.title,
                text("subtitle"),
                list("facts"),
                text("narrative"),
                list("concepts"),
                list("files_read"),
                list("files_modified"),
                row.at,
                number("tokens"),
                number("work_tokens"),
                distiller,
                format!("team:{}", row.gid),
                row.gid,
                row.member,
                row.machine,
                row.revision,
            ],
            |r| r.get(0),
        )?,
        ItemKind::Summary => conn.query_row(
            "INSERT INTO summaries (id, session_id, project_id, agent, mode, request,
                 investigated, learned, completed, next_steps, files_read, files_modified, at,
                 through_event_id, tokens, work_tokens, distiller, team_gid, team_member,
                 team_machine, team_rev, team_pushed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 0, ?14, ?15, ?16,
                     ?17, ?18, ?19, ?20, ?13)
             ON CONFLICT (session_id) DO UPDATE SET
                 request = excluded.request, investigated = excluded.investigated,
                 learned = excluded.learned, completed = excluded.completed,
                 next_steps = excluded.next_steps, files_read = excluded.files_read,
                 files_modified = excluded.files_modified, at = excluded.at,
                 tokens = excluded.tokens, work_tokens = excluded.work_tokens,
                 team_gid = excluded.team_gid, team_rev = excluded.team_rev,
                 team_pushed = excluded.team_pushed
             RETURNING id",
            params![
                id,
                session_id,
                project_id,
                row.agent,
                mode,
                row.title,
                list("investigated"),
                list("learned"),
                list("completed"),
                list("next_steps"),
                list("files_read"),
                list("files_modified"),
                row.at,
                number("tokens"),
                number("work_tokens"),
                distiller,
                row.gid,
                row.member,
                row.machine,
                row.revision,
            ],
            |r| r.get(0),
        )?,
    };
    conn.execute(
        "INSERT INTO memory_screened (item_kind, item_id, version) VALUES (?1, ?2, ?3)
         ON CONFLICT (item_kind, item_id) DO UPDATE SET version = excluded.version",
        params![row.kind.as_str(), new_id, i64::MAX],
    )?;
    Ok(())
}

/// How many items here came from teammates.
pub fn pulled_count(store: &Store) -> Result<i64> {
    Ok(store.conn().query_row(
        "SELECT (SELECT count(*) FROM observations WHERE team_member IS NOT NULL)
              + (SELECT count(*) FROM summaries WHERE team_member IS NOT NULL)",
        [],
        |r| r.get(0),
    )?)
}

/// The vector of each of `items` that the store already has for `model`, by local id; an item
/// without one gets `None`.
pub fn stored_vectors(
    store: &Store,
    model: &str,
    items: &[OutgoingItem],
) -> Result<Vec<Option<Vec<f32>>>> {
    let mut stmt = store.conn().prepare_cached(
        "SELECT vec FROM vectors WHERE model = ?1 AND item_kind = ?2 AND item_id = ?3",
    )?;
    items
        .iter()
        .map(|item| {
            if item.forgotten {
                return Ok(None);
            }
            let blob: Option<Vec<u8>> = stmt
                .query_row(params![model, item.kind.as_str(), item.id], |r| r.get(0))
                .optional()?;
            Ok(blob.map(|b| {
                b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
            }))
        })
        .collect()
}

#[cfg(test)]
mod tests;
