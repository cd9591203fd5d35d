//! The local side of team memory: which memories wait to be pushed (the outbox), the global ids
//! they are pushed under, what was pushed, memories pulled from the team, and the pull cursor.
//!
//! Here is a batch to push, give me the rows; here is a batch pulled, keep it with who learned
//! it. A memory is in the outbox while its `updated_at` is newer than the `updated_at` it was
//! last pushed with, so a sync that stopped anywhere resumes with what it had not finished, and
//! a row pushed twice is the same upsert twice. Pulled rows and the cursor are written in one
//! transaction, so a pull resumes where it stopped too.
//!
//! What may leave: reviewed project memory (L2) of a project known by its git origin (a path
//! means nothing on another machine), global memory (L3) only when the caller says so, and only
//! memory this member learned (a teammate's memory is never pushed back). Candidates, rejected
//! memory and raw events never leave through here, nor a memory drawn from an observation
//! distilled from a private event; observations and summaries of opted-in projects go through
//! [`items`].
//!
//! Must not: open a connection to anything but the store (the network side is the
//! `agent-memory-team` crate, never the hook).

pub mod items;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::memories::{Kind, Status, Tier};
use super::{Result, Store};

/// What the outbox shares, from the `[team]` configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Share {
    /// The member's name: their memories pulled from another of their machines may be pushed
    /// again when changed here.
    pub member: String,
    /// Whether global (L3) memory leaves too.
    pub global: bool,
    /// Projects (keys, names or roots) whose memory stays here.
    pub exclude_projects: Vec<String>,
}

/// A memory waiting to be pushed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outgoing {
    pub id: i64,
    /// Its global id, once it has one ([`assign_gids`]).
    pub gid: Option<String>,
    pub tier: Tier,
    pub kind: Kind,
    pub text: String,
    pub project_key: Option<String>,
    pub project_name: Option<String>,
    pub importance: u8,
    pub status: Status,
    /// The agent that learned it, or how it came to be (`remembered`, `distilled`).
    pub origin: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// The global ids of the memory it supersedes and of the one that superseded it, when they
    /// have been pushed.
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    /// The server's revision this machine last saw of it (pulled or pushed): a server row that
    /// another machine changed past it is a conflict.
    pub base: Option<i64>,
    /// For a version kept beside another after a conflict: that version's global id.
    pub conflict_of: Option<String>,
}

/// A memory pulled from the team.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    pub gid: String,
    pub member: String,
    pub machine: String,
    pub agent: String,
    pub project_key: Option<String>,
    pub project_name: Option<String>,
    pub tier: Tier,
    pub kind: Kind,
    pub text: String,
    pub importance: u8,
    pub status: Status,
    pub created_at: i64,
    pub updated_at: i64,
    /// The server's revision of this row; the pull cursor moves past it.
    pub revision: i64,
    /// For a version kept beside another after a conflict: that version's global id.
    pub conflict_of: Option<String>,
    /// The global ids of the memory it supersedes and of the one that superseded it.
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
}

/// What [`apply_pulled`] did with a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// Memories new to this machine.
    pub added: usize,
    /// Memories changed (edited, forgotten, superseded) by the member who owns them.
    pub updated: usize,
    /// Rows this machine already had, or a newer version of which waits here to be pushed.
    pub unchanged: usize,
}

/// The keys of [`state`].
pub mod keys {
    /// The highest server revision pulled.
    pub const PULL_CURSOR: &str = "pull_cursor";
    /// When the last sync ended (Unix milliseconds).
    pub const LAST_SYNC_AT: &str = "last_sync_at";
    /// `ok`, or the error the last sync ended with.
    pub const LAST_SYNC_OUTCOME: &str = "last_sync_outcome";
    /// When the last sync that reached the server ended.
    pub const LAST_SUCCESS_AT: &str = "last_success_at";
    /// Syncs failed in a row since the last success, for the worker's backoff.
    pub const FAILURES: &str = "failures";
    /// The teammates whose global memory the last pull took (`[team] teammates_global`).
    pub const TEAMMATES_GLOBAL: &str = "teammates_global";
}

const OUTBOX_WHERE: &str = "
    (m.team_pushed IS NULL OR m.team_pushed < m.updated_at)
    AND (m.team_member IS NULL OR m.team_member = ?1)
    AND m.status IN ('active', 'superseded', 'forgotten')
    AND (m.team_gid IS NOT NULL OR m.status = 'active')
    AND ((m.tier = 'L2' AND p.key LIKE 'git:%'
          AND p.key NOT IN (SELECT value FROM json_each(?3))
          AND p.name NOT IN (SELECT value FROM json_each(?3))
          AND p.root NOT IN (SELECT value FROM json_each(?3)))
         OR (m.tier = 'L3' AND ?2))
    AND NOT EXISTS (
        SELECT 1 FROM json_each(CASE WHEN json_valid(m.sources) THEN m.sources ELSE '[]' END) j
        JOIN observation_sources os
          ON substr(j.value, 1, 1) = 'o' AND os.observation_id = CAST(substr(j.value, 2) AS INTEGER)
        JOIN events pe ON pe.id = os.event_id
        WHERE pe.sensitivity = 'private')";

fn share_args(share: &Share) -> (String, bool, String) {
    (
        share.member.clone(),
        share.global,
        serde_json::to_string(&share.exclude_projects).unwrap_or_else(|_| "[]".into()),
    )
}

/// How many memories wait to be pushed.
pub fn queue_depth(store: &Store, share: &Share) -> Result<i64> {
    let (member, global, exclude) = share_args(share);
    Ok(store.conn().query_row(
        &format!(
            "SELECT count(*) FROM memories m LEFT JOIN projects p ON p.id = m.project_id
             WHERE {OUTBOX_WHERE}"
        ),
        params![member, global, exclude],
        |r| r.get(0),
    )?)
}

/// The next `limit` memories waiting to be pushed, the longest waiting first.
pub fn outbox(store: &Store, share: &Share, limit: usize) -> Result<Vec<Outgoing>> {
    let (member, global, exclude) = share_args(share);
    let mut stmt = store.conn().prepare(&format!(
        "SELECT m.id, m.team_gid, m.tier, m.kind, m.text, p.key, p.name, m.importance, m.status,
                m.origin, m.created_at, m.updated_at,
                (SELECT team_gid FROM memories s WHERE s.id = m.supersedes),
                (SELECT team_gid FROM memories s WHERE s.id = m.superseded_by),
                m.team_rev, m.team_conflict
         FROM memories m LEFT JOIN projects p ON p.id = m.project_id
         WHERE {OUTBOX_WHERE}
         ORDER BY m.updated_at, m.id LIMIT ?4"
    ))?;
    let rows = stmt.query_map(params![member, global, exclude, limit as i64], |r| {
        let tier: String = r.get(2)?;
        let kind: String = r.get(3)?;
        let status: String = r.get(8)?;
        let tier = Tier::parse(&tier).unwrap_or(Tier::L2);
        Ok(Outgoing {
            id: r.get(0)?,
            gid: r.get(1)?,
            tier,
            kind: Kind::parse(&kind).unwrap_or(Kind::Fact),
            text: r.get(4)?,
            project_key: if tier == Tier::L3 { None } else { r.get(5)? },
            project_name: if tier == Tier::L3 { None } else { r.get(6)? },
            importance: r.get::<_, i64>(7)?.clamp(1, 10) as u8,
            status: Status::parse(&status).unwrap_or(Status::Active),
            origin: r.get(9)?,
            created_at: r.get(10)?,
            updated_at: r.get(11)?,
            supersedes: r.get(12)?,
            superseded_by: r.get(13)?,
            base: r.get(14)?,
            conflict_of: r.get(15)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Gives each of `rows` without a global id the one `new_gid` makes, committed before anything
/// is pushed, so a push that is cut off and run again sends the same ids.
pub fn assign_gids(
    store: &Store,
    rows: &mut [Outgoing],
    mut new_gid: impl FnMut() -> String,
) -> Result<()> {
    let tx = store.begin_write()?;
    {
        let mut stmt = tx.prepare_cached(
            "UPDATE memories SET team_gid = ?2 WHERE id = ?1 AND team_gid IS NULL",
        )?;
        for row in rows.iter_mut().filter(|r| r.gid.is_none()) {
            let gid = new_gid();
            stmt.execute(params![row.id, gid])?;
            row.gid = Some(gid);
        }
    }
    tx.commit()?;
    Ok(())
}

/// Records that `pushed` (a memory id, the `updated_at` it was pushed with, and the server's
/// revision of it) reached the server. A memory changed since it was read stays in the outbox.
pub fn mark_pushed(store: &Store, pushed: &[(i64, i64, i64)]) -> Result<()> {
    let tx = store.begin_write()?;
    {
        let mut stmt = tx.prepare_cached(
            "UPDATE memories SET team_pushed = ?2, team_rev = max(coalesce(team_rev, 0), ?3)
             WHERE id = ?1",
        )?;
        for (id, updated_at, revision) in pushed {
            stmt.execute(params![id, updated_at, revision])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Moves memory `id` to the global id `gid` of the version of it this machine pushed beside
/// `beside`, which another machine changed meanwhile: both versions are kept, each under its
/// own id, and this one is marked as the conflict copy.
pub fn rekey_conflict(store: &Store, id: i64, gid: &str, beside: &str) -> Result<()> {
    store.conn().execute(
        "UPDATE memories SET team_gid = ?2, team_conflict = ?3 WHERE id = ?1",
        params![id, gid, beside],
    )?;
    Ok(())
}

/// Keeps a batch pulled from the team and moves the pull cursor to `cursor`, in one
/// transaction. A row this machine already has at that revision is left alone; a row with a
/// newer local change waiting to be pushed keeps the local change; a teammate's memory hidden
/// here (forgotten locally) stays hidden when its owner changes it, unless they forget it too.
pub fn apply_pulled(store: &Store, rows: &[Incoming], cursor: i64, now_ms: i64) -> Result<Applied> {
    let tx = store.begin_write()?;
    let mut applied = Applied::default();
    for row in rows {
        let local = tx
            .query_row(
                "SELECT id, coalesce(team_rev, 0), updated_at, coalesce(team_pushed, 0),
                        team_member, status
                 FROM memories WHERE team_gid = ?1",
                [&row.gid],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, Option<String>>(4)?,
                        r.get::<_, String>(5)?,
                    ))
                },
            )
            .optional()?;
        let project_id = match (&row.tier, &row.project_key) {
            (Tier::L3, _) | (_, None) => None,
            (_, Some(key)) => Some(project_for(&tx, key, row.project_name.as_deref(), now_ms)?),
        };
        match local {
            Some((_, seen, ..)) if seen >= row.revision => applied.unchanged += 1,
            Some((id, _, updated_at, pushed, _, _))
                if pushed < updated_at && updated_at > row.updated_at =>
            {
                // A newer change made here waits to be pushed; it wins over this one.
                tx.execute(
                    "UPDATE memories SET team_rev = ?2 WHERE id = ?1",
                    params![id, row.revision],
                )?;
                applied.unchanged += 1;
            }
            Some((id, _, _, _, member, status)) => {
                let hidden = member.is_some() && status == Status::Forgotten.as_str();
                let new_status = if hidden && row.status != Status::Forgotten {
                    Status::Forgotten
                } else {
                    row.status
                };
                tx.execute(
                    "UPDATE memories SET tier = ?2, kind = ?3, text = ?4, project_id = ?5,
                            importance = ?6, status = ?7, updated_at = ?8, team_rev = ?9,
                            team_pushed = ?8
                     WHERE id = ?1",
                    params![
                        id,
                        row.tier.as_str(),
                        row.kind.as_str(),
                        row.text,
                        project_id,
                        row.importance,
                        new_status.as_str(),
                        row.updated_at,
                        row.revision
                    ],
                )?;
                applied.updated += 1;
            }
            // A tombstone or a retired memory this machine never had: nothing to hide.
            None if row.status != Status::Active => applied.unchanged += 1,
            None => {
                tx.execute(
                    "INSERT INTO memories (tier, kind, text, project_id, importance, created_at,
                                           updated_at, status, sources, origin, team_gid,
                                           team_member, team_machine, team_rev, team_pushed,
                                           team_conflict)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'active', '[]', ?8, ?9, ?10, ?11, ?12,
                             ?7, ?13)",
                    params![
                        row.tier.as_str(),
                        row.kind.as_str(),
                        row.text,
                        project_id,
                        row.importance,
                        row.created_at,
                        row.updated_at,
                        row.agent,
                        row.gid,
                        row.member,
                        row.machine,
                        row.revision,
                        row.conflict_of
                    ],
                )?;
                applied.added += 1;
            }
        }
    }
    // Supersession links by global id, once every row of the batch is here: a link to a
    // memory this machine does not have (yet) stays unset.
    {
        let mut link = tx.prepare_cached(
            "UPDATE memories SET
                 supersedes = coalesce((SELECT id FROM memories WHERE team_gid = ?2), supersedes),
                 superseded_by = coalesce((SELECT id FROM memories WHERE team_gid = ?3), superseded_by)
             WHERE team_gid = ?1",
        )?;
        for row in rows.iter().filter(|r| r.supersedes.is_some() || r.superseded_by.is_some()) {
            link.execute(params![row.gid, row.supersedes, row.superseded_by])?;
        }
    }
    set_state_in(&tx, keys::PULL_CURSOR, &cursor.to_string())?;
    tx.commit()?;
    Ok(applied)
}

/// The local project with `key`, made when this machine has not worked in it yet (no root: a
/// session in a clone of it finds it by its key).
fn project_for(
    conn: &rusqlite::Connection,
    key: &str,
    name: Option<&str>,
    now_ms: i64,
) -> Result<i64> {
    if let Some(id) =
        conn.query_row("SELECT id FROM projects WHERE key = ?1", [key], |r| r.get(0)).optional()?
    {
        return Ok(id);
    }
    let name = name.filter(|n| !n.trim().is_empty()).unwrap_or(key);
    Ok(conn.query_row(
        "INSERT INTO projects (key, name, root, origin, created_at) VALUES (?1, ?2, '', NULL, ?3)
         RETURNING id",
        params![key, name, now_ms],
        |r| r.get(0),
    )?)
}

/// One fact of the sync ([`keys`]), if set.
/// Removes the teammates' global memory this member no longer takes (`takes` says whose it
/// takes); what `me` learned on other machines stays. The next pull from the start brings back
/// what is taken. Returns how many were removed.
pub fn drop_teammates_global(
    store: &Store,
    me: &str,
    takes: &dyn Fn(&str) -> bool,
) -> Result<usize> {
    let tx = store.begin_write()?;
    let members: Vec<String> = tx
        .prepare(
            "SELECT DISTINCT team_member FROM memories
             WHERE tier = 'L3' AND team_member IS NOT NULL AND team_member <> ?1",
        )?
        .query_map([me], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut removed = 0;
    for member in members.iter().filter(|m| !takes(m)) {
        let ids = "SELECT id FROM memories WHERE tier = 'L3' AND team_member = ?1";
        tx.execute(
            &format!("UPDATE memories SET superseded_by = NULL WHERE superseded_by IN ({ids})"),
            [member],
        )?;
        tx.execute(
            &format!("UPDATE memories SET supersedes = NULL WHERE supersedes IN ({ids})"),
            [member],
        )?;
        removed +=
            tx.execute("DELETE FROM memories WHERE tier = 'L3' AND team_member = ?1", [member])?;
    }
    tx.commit()?;
    Ok(removed)
}

pub fn state(store: &Store, key: &str) -> Result<Option<String>> {
    Ok(store
        .conn()
        .query_row("SELECT value FROM team_sync WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

/// Sets one fact of the sync.
pub fn set_state(store: &Store, key: &str, value: &str) -> Result<()> {
    set_state_in(store.conn(), key, value)
}

fn set_state_in(conn: &rusqlite::Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO team_sync (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// How many active memories here came from teammates (or from this member's other machines).
pub fn pulled_count(store: &Store) -> Result<i64> {
    Ok(store.conn().query_row(
        "SELECT count(*) FROM memories WHERE team_member IS NOT NULL AND status = 'active'",
        [],
        |r| r.get(0),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memories::{self, NewMemory};

    fn project(store: &Store, key: &str) -> i64 {
        project_for(store.conn(), key, Some(key), 0).expect("project")
    }

    fn remember(store: &mut Store, tier: Tier, project_id: Option<i64>, text: &str) -> i64 {
        let new = NewMemory {
            tier,
            kind: Kind::Decision,
            text: text.into(),
            project_id,
            importance: 5,
            sources: vec![],
            origin: "codex".into(),
            supersedes: None,
        };
        memories::insert(store, &new, 10).expect("insert")
    }

    fn texts(rows: &[Outgoing]) -> Vec<&str> {
        rows.iter().map(|r| r.text.as_str()).collect()
    }

    fn incoming(gid: &str, text: &str, status: Status, updated_at: i64, revision: i64) -> Incoming {
        Incoming {
            gid: gid.into(),
            member: "Bob".into(),
            machine: "bob-laptop".into(),
            agent: "claude-code".into(),
            project_key: Some("git:github.com/acme/shop".into()),
            project_name: Some("shop".into()),
            tier: Tier::L2,
            kind: Kind::Fact,
            text: text.into(),
            importance: 6,
            status,
            created_at: 1,
            updated_at,
            revision,
            conflict_of: None,
            supersedes: None,
            superseded_by: None,
        }
    }

    #[test]
    fn the_outbox_holds_reviewed_memory_of_git_projects_and_what_is_opted_in() {
        let mut store = Store::open_in_memory().expect("store");
        let shop = project(&store, "git:github.com/acme/shop");
        let secret = project(&store, "git:github.com/acme/secret");
        let local = project(&store, "path:/home/a/scratch");
        remember(&mut store, Tier::L2, Some(shop), "shop decision");
        remember(&mut store, Tier::L2, Some(secret), "secret decision");
        remember(&mut store, Tier::L2, Some(local), "scratch decision");
        remember(&mut store, Tier::L1, Some(shop), "a candidate");
        remember(&mut store, Tier::L3, None, "a preference");
        let mut share = Share { member: "Alice".into(), ..Share::default() };
        let rows = outbox(&store, &share, 100).expect("outbox");
        assert_eq!(texts(&rows), ["shop decision", "secret decision"]);
        share.global = true;
        share.exclude_projects = vec!["git:github.com/acme/secret".into()];
        let rows = outbox(&store, &share, 100).expect("outbox");
        assert_eq!(texts(&rows), ["shop decision", "a preference"]);
        assert_eq!(queue_depth(&store, &share).expect("depth"), 2);

        // Pushed: out of the queue until it changes again, under the same global id.
        let mut rows = outbox(&store, &share, 1).expect("outbox");
        assign_gids(&store, &mut rows, || "g1".into()).expect("gids");
        mark_pushed(&store, &[(rows[0].id, rows[0].updated_at, 7)]).expect("pushed");
        assert_eq!(texts(&outbox(&store, &share, 100).expect("outbox")), ["a preference"]);
        memories::forget(&mut store, rows[0].id, 20).expect("forget");
        // A memory drawn from what a private event taught stays here.
        let private = remember(&mut store, Tier::L2, Some(shop), "from a private session");
        assert!(outbox(&store, &share, 10).expect("outbox").iter().any(|r| r.id == private));
        store
            .conn()
            .execute_batch(&format!(
                "PRAGMA foreign_keys = OFF;
                 INSERT INTO events (id, uid, session_id, project_id, agent, kind, source_event,
                                     at, summary, body, content_hash, sensitivity)
                     VALUES (900, 'p1', 1, 1, 'codex', 'prompt', 'x', 0, 's', 'b', 'h', 'private');
                 INSERT INTO observation_sources (observation_id, event_id) VALUES (77, 900);
                 UPDATE memories SET sources = '[\"o77\"]' WHERE id = {private};"
            ))
            .expect("private source");
        let again = outbox(&store, &share, 10).expect("outbox");
        assert!(again.iter().all(|r| r.id != private), "{again:?}");
        let again = again.iter().find(|r| r.id == rows[0].id).expect("back in the queue");
        assert_eq!((again.gid.as_deref(), again.status), (Some("g1"), Status::Forgotten));
    }

    #[test]
    fn pulled_memory_keeps_its_member_and_a_local_hide_survives_an_edit() {
        let mut store = Store::open_in_memory().expect("store");
        let rows = [incoming("g1", "The shop uses Postgres", Status::Active, 5, 1)];
        let applied = apply_pulled(&store, &rows, 1, 0).expect("pull");
        assert_eq!(applied.added, 1);
        assert_eq!(state(&store, keys::PULL_CURSOR).expect("state").as_deref(), Some("1"));
        let pulled = memories::list(&store, &memories::Filter::default()).expect("list");
        assert_eq!(pulled[0].member.as_deref(), Some("Bob"));
        assert_eq!(pulled[0].project.as_deref(), Some("git:github.com/acme/shop"));
        // A teammate's memory never goes back out, whatever happens to it here.
        let share = Share { member: "Alice".into(), ..Share::default() };
        memories::forget(&mut store, pulled[0].id, 6).expect("hide");
        assert!(outbox(&store, &share, 10).expect("outbox").is_empty());
        // The same revision again changes nothing; Bob's edit keeps it hidden here; his forget
        // is kept.
        assert_eq!(apply_pulled(&store, &rows, 1, 0).expect("again").unchanged, 1);
        let edited = [incoming("g1", "The shop uses Postgres 15", Status::Active, 7, 2)];
        assert_eq!(apply_pulled(&store, &edited, 2, 0).expect("edit").updated, 1);
        let memory = memories::get(&store, pulled[0].id).expect("get").expect("there");
        assert_eq!(
            (memory.text.as_str(), memory.status),
            ("The shop uses Postgres 15", Status::Forgotten)
        );
        // A newer decision from Bob supersedes it: the link is kept by local id.
        let mut newer = incoming("g3", "The shop uses Postgres 16", Status::Active, 9, 4);
        newer.supersedes = Some("g1".into());
        let mut older = incoming("g1", "The shop uses Postgres 15", Status::Superseded, 9, 5);
        older.superseded_by = Some("g3".into());
        apply_pulled(&store, &[newer, older], 5, 0).expect("supersede");
        let memory = memories::get(&store, pulled[0].id).expect("get").expect("there");
        let newer_id: i64 = store
            .conn()
            .query_row("SELECT id FROM memories WHERE team_gid = 'g3'", [], |r| r.get(0))
            .expect("newer");
        assert_eq!((memory.status, memory.superseded_by), (Status::Forgotten, Some(newer_id)));
        // A tombstone of a memory never seen here adds nothing.
        let gone = [incoming("g2", "Never seen", Status::Forgotten, 8, 6)];
        assert_eq!(apply_pulled(&store, &gone, 6, 0).expect("tombstone").added, 0);
    }

    #[test]
    fn a_newer_local_change_waiting_to_be_pushed_wins_over_an_older_pulled_one() {
        let mut store = Store::open_in_memory().expect("store");
        let shop = project(&store, "git:github.com/acme/shop");
        let id = remember(&mut store, Tier::L2, Some(shop), "mine, edited later");
        let share = Share { member: "Alice".into(), ..Share::default() };
        let mut rows = outbox(&store, &share, 10).expect("outbox");
        assign_gids(&store, &mut rows, || "g1".into()).expect("gids");
        let older = [incoming("g1", "mine, from the other machine", Status::Active, 5, 4)];
        apply_pulled(&store, &older, 4, 0).expect("pull");
        let memory = memories::get(&store, id).expect("get").expect("there");
        assert_eq!(memory.text, "mine, edited later");
        assert_eq!(queue_depth(&store, &share).expect("depth"), 1);
    }
}
