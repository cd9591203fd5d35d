//! One sync with the team database: push this member's changed memory (and, through
//! [`crate::items`], the observations and summaries of opted-in projects), then pull what the
//! team changed since the last pull; what a sync would send; how things stand.
//!
//! The push goes in batches, each one server transaction of idempotent upserts keyed by the
//! memory's global id (given and committed locally before the batch is sent), and each marked
//! pushed locally only after the server committed it. The pull reads rows in revision order
//! and keeps each batch with the cursor in one local transaction. So a sync cut off anywhere
//! (the server gone, the process killed) resumes where it stopped, without duplicates. Pushes
//! take one advisory lock for their transaction, so revisions become visible in their order
//! and a pull never steps over a row committed late.
//!
//! One sync at a time per home: [`SyncLock`] is a file lock beside the store that every sync
//! holds (`team sync`, the work pass, serve's worker), so two syncs never hand the same memory
//! two global ids or pull the same rows twice. A manual sync waits a little for one that runs;
//! the work pass skips its sync and tries at its next pass.
//!
//! Everything pushed is sanitized again first (`capture::sanitize_text`), as a reviewer's
//! edit is; what is pulled is sanitized and checked too, since it was written elsewhere. With
//! an embedding model, each active row goes with its vector and the model's name, so the
//! team's search by meaning compares it only with queries of the same model.
//!
//! Must not: run on the hook path, or push a teammate's memory, a candidate, or anything the
//! `[team]` configuration keeps here.

use std::fs::File;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent_memory_core::capture::sanitize_text;
use agent_memory_core::config::TeamConfig;
use agent_memory_core::embed::Embedder;
use agent_memory_core::fsutil;
use agent_memory_core::paths::Home;
use agent_memory_core::store::Store;
use agent_memory_core::store::fts;
use agent_memory_core::store::memories::{Kind, Status, Tier, check_text};
use agent_memory_core::store::team::items::{AppliedItems, ItemShare, OutgoingItem};
use agent_memory_core::store::team::{self, Applied, Incoming, Outgoing, Share, keys};
use agent_memory_core::text::{clip, one_line};
use serde::Serialize;

use crate::{TeamError, connect, items, schema};

/// Who this machine syncs as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// The name teammates see.
    pub member: String,
    /// This machine's name.
    pub machine: String,
}

/// The member and machine `config` names, or their defaults: git's `user.name` (else the login
/// name) and the host name.
pub fn identity(config: &TeamConfig) -> Identity {
    let member = Some(config.member.trim().to_owned())
        .filter(|m| !m.is_empty())
        .or_else(git_user_name)
        .unwrap_or_else(connect::login_name);
    let machine = Some(config.machine.trim().to_owned())
        .filter(|m| !m.is_empty())
        .or_else(host_name)
        .unwrap_or_else(|| "unknown".to_owned());
    Identity { member: clip(&one_line(&member), 64), machine: clip(&one_line(&machine), 64) }
}

fn git_user_name() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["config", "--get", "user.name"])
        .env("AGENT_MEMORY_DISABLE", "1")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let name = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !name.is_empty()).then_some(name)
}

fn host_name() -> Option<String> {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
}

/// What the outbox shares under `config`.
pub fn share(config: &TeamConfig, identity: &Identity) -> Share {
    Share {
        member: identity.member.clone(),
        global: config.share_global,
        exclude_projects: config.exclude_projects.clone(),
    }
}

/// Which projects' observations and summaries the outbox shares under `config`.
pub fn item_share(config: &TeamConfig) -> ItemShare {
    ItemShare {
        projects: config.share_observations.clone(),
        exclude_projects: config.exclude_projects.clone(),
    }
}

/// A memory changed here while another machine of the same member changed it too: both
/// versions are kept, this one under a new global id, marked as the conflict copy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conflict {
    /// The local memory (this machine's version).
    pub id: i64,
    /// The global id this version now has.
    pub gid: String,
    /// The global id of the other machine's version, which the pull brings here.
    pub beside: String,
}

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SyncReport {
    /// Memories pushed to the server.
    pub pushed: usize,
    /// Memories changed on two machines: both versions kept.
    pub conflicts: Vec<Conflict>,
    /// What the pull did.
    pub pulled: Applied,
    /// The pull cursor afterwards (the highest server revision pulled).
    pub cursor: i64,
    /// Observations and summaries (and tombstones of forgotten ones) pushed.
    pub items_pushed: usize,
    /// What the pull of observations and summaries did.
    pub items_pulled: AppliedItems,
}

/// The lock that keeps to one sync at a time per home; released when dropped or when the
/// process ends.
#[derive(Debug)]
pub struct SyncLock {
    // Held for its lock.
    _file: File,
}

impl SyncLock {
    /// The lock file of a home.
    pub fn path(home: &Home) -> PathBuf {
        home.root().join("team-sync.lock")
    }

    /// Takes the lock, waiting up to `wait` for a sync that holds it to finish; `None` when it
    /// is held still.
    pub fn take(home: &Home, wait: Duration) -> Result<Option<SyncLock>, TeamError> {
        let path = SyncLock::path(home);
        let start = Instant::now();
        loop {
            let file = fsutil::try_lock_file(&path)
                .map_err(|source| TeamError::Lock { path: path.clone(), source })?;
            if let Some(file) = file {
                return Ok(Some(SyncLock { _file: file }));
            }
            if start.elapsed() >= wait {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(50).min(wait));
        }
    }

    /// [`SyncLock::take`], or [`TeamError::Busy`] when the wait was not enough.
    pub fn wait_for(home: &Home, wait: Duration) -> Result<SyncLock, TeamError> {
        SyncLock::take(home, wait)?.ok_or_else(|| TeamError::Busy { path: SyncLock::path(home) })
    }
}

/// Pushes this member's changed memory (and the observations and summaries of opted-in
/// projects), then pulls the team's, under the home's [`SyncLock`] (which the caller holds).
/// With an `embedder`, what is pushed carries its vector and the model's name. Records the
/// outcome in the store (for `team status` and the worker's backoff) whatever it is.
pub fn sync(
    _lock: &SyncLock,
    store: &Store,
    config: &TeamConfig,
    embedder: Option<&dyn Embedder>,
    now_ms: i64,
) -> Result<SyncReport, TeamError> {
    let result = sync_once(store, config, embedder, now_ms);
    record_outcome(store, result.as_ref().map(|_| ()).map_err(ToString::to_string), now_ms)?;
    result
}

fn sync_once(
    store: &Store,
    config: &TeamConfig,
    embedder: Option<&dyn Embedder>,
    now_ms: i64,
) -> Result<SyncReport, TeamError> {
    if !config.enabled() {
        return Err(TeamError::NotConfigured);
    }
    let me = identity(config);
    let mut client = connect::connect(&config.url)?;
    schema::check(&mut client)?;
    let team: Option<String> = client.query_one("SELECT agent_memory.my_team()", &[])?.get(0);
    if team.is_none() {
        let role: String = client.query_one("SELECT current_user::text", &[])?.get(0);
        return Err(TeamError::NotMember { role });
    }
    // Teammates see the name the server gives this role; the rows pulled back carry it.
    let shown: Option<String> = client.query_opt(SHOWN_NAME, &[])?.map(|row| row.get(0));
    let me = Identity { member: shown.map_or(me.member, |name| clip(&one_line(&name), 64)), ..me };
    take_teammates_global(store, config, &me)?;
    let batch = config.batch_size.clamp(1, 10_000);
    let vectors = match embedder {
        Some(embedder) => Some(Vectors::new(&mut client, embedder)?),
        None => None,
    };
    let (pushed, conflicts) =
        push(store, &mut client, &share(config, &me), &me, batch, vectors.as_ref())?;
    let items_pushed =
        items::push(store, &mut client, &item_share(config), &me, batch, vectors.as_ref())?;
    let (pulled, cursor) = pull(store, &mut client, config, batch, now_ms)?;
    let items_pulled = items::pull(store, &mut client, batch, now_ms)?;
    Ok(SyncReport { pushed, conflicts, pulled, cursor, items_pushed, items_pulled })
}

fn record_outcome(
    store: &Store,
    outcome: Result<(), String>,
    now_ms: i64,
) -> Result<(), TeamError> {
    team::set_state(store, keys::LAST_SYNC_AT, &now_ms.to_string())?;
    match outcome {
        Ok(()) => {
            team::set_state(store, keys::LAST_SYNC_OUTCOME, "ok")?;
            team::set_state(store, keys::LAST_SUCCESS_AT, &now_ms.to_string())?;
            team::set_state(store, keys::FAILURES, "0")?;
        }
        Err(message) => {
            let failures = failures(store)? + 1;
            team::set_state(store, keys::LAST_SYNC_OUTCOME, &message)?;
            team::set_state(store, keys::FAILURES, &failures.to_string())?;
        }
    }
    Ok(())
}

/// Syncs failed in a row since the last one that reached the server.
pub fn failures(store: &Store) -> Result<u32, TeamError> {
    Ok(team::state(store, keys::FAILURES)?.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// The longest wait between the automatic syncs while the server cannot be reached.
const MAX_BACKOFF_MS: i64 = 6 * 3_600_000;

/// Whether the work pass (or serve's worker) should sync now: a team is configured with an
/// interval, and the interval has passed since the last attempt; after failed attempts the
/// wait doubles with each one (up to six hours), so an unreachable server is not asked every
/// pass.
pub fn due(store: &Store, config: &TeamConfig, now_ms: i64) -> Result<bool, TeamError> {
    if !config.enabled() || config.sync_interval_minutes == 0 {
        return Ok(false);
    }
    let Some(last) = team::state(store, keys::LAST_SYNC_AT)?.and_then(|v| v.parse::<i64>().ok())
    else {
        return Ok(true);
    };
    Ok(now_ms - last >= wait_ms(config.sync_interval_minutes, failures(store)?))
}

/// The wait after the last attempt, given the failures in a row before it.
fn wait_ms(interval_minutes: u64, failures: u32) -> i64 {
    let interval = i64::try_from(interval_minutes).unwrap_or(i64::MAX / 2).saturating_mul(60_000);
    if failures == 0 {
        return interval;
    }
    interval.saturating_mul(1 << failures.min(10)).min(MAX_BACKOFF_MS.max(interval))
}

/// What the next sync would send.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DryRun {
    pub memories: Vec<Outgoing>,
    /// Observations and summaries of opted-in projects, and tombstones of forgotten ones.
    pub items: Vec<OutgoingItem>,
}

/// What would leave this machine at the next sync, sanitized as it would be sent; nothing is
/// sent and nothing changes.
pub fn dry_run(store: &Store, config: &TeamConfig) -> Result<DryRun, TeamError> {
    let me = identity(config);
    let mut memories = team::outbox(store, &share(config, &me), 1_000_000)?;
    for row in &mut memories {
        row.text = sanitize_text(&row.text).into_owned();
    }
    let items = team::items::outbox(store, &item_share(config), 1_000_000)?
        .into_iter()
        .map(items::sanitized)
        .collect();
    Ok(DryRun { memories, items })
}

/// The vectors that go with pushed rows: the member's model, its name, and how the server
/// spells pgvector's type (the extension may live in any schema).
pub(crate) struct Vectors<'a> {
    pub embedder: &'a dyn Embedder,
    pub vector_type: String,
}

impl<'a> Vectors<'a> {
    fn new(client: &mut postgres::Client, embedder: &'a dyn Embedder) -> Result<Self, TeamError> {
        let schema: Option<String> = client
            .query_opt(
                "SELECT quote_ident(n.nspname) FROM pg_extension e
                 JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'",
                &[],
            )?
            .map(|r| r.get(0));
        let vector_type = match schema {
            Some(schema) => format!("{schema}.vector"),
            None => "vector".to_owned(),
        };
        Ok(Vectors { embedder, vector_type })
    }

    pub fn model(&self) -> &str {
        self.embedder.model()
    }

    /// pgvector's text form of each of `texts`' vectors; all `None` when the model fails (the
    /// rows go without: a vector is a help to search, never a condition of the push).
    pub fn embed(&self, texts: &[&str]) -> Vec<Option<String>> {
        match self.embedder.embed(texts) {
            Ok(vectors) => vectors.iter().map(|v| Some(vector_text(v))).collect(),
            Err(err) => {
                tracing::warn!(%err, "cannot embed what is pushed; it goes without vectors");
                vec![None; texts.len()]
            }
        }
    }
}

/// A vector as pgvector reads it: `[0.1,0.2,…]`.
pub(crate) fn vector_text(vector: &[f32]) -> String {
    let parts: Vec<String> = vector.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// The index text of a memory on the server: the same CJK-bigram shadow text, with English
/// stems, that the local store indexes.
pub(crate) fn search_text(text: &str) -> String {
    fts::stemmed_text(text)
}

/// A batch of memories upserted by their global ids in one statement, each with its vector
/// when `vector_type` names pgvector's type. An existing row is replaced only when this machine
/// wrote it last or it has not changed since this machine last saw it (the row's base
/// revision); the rows written come back with their revisions, and a row that does not is a
/// conflict: the push keeps both versions.
fn upsert_batch(vector_type: Option<&str>) -> String {
    // Without a model no vector type is named at all: the extension's schema need not be on
    // the member's search path.
    let embedding = match vector_type {
        Some(vector_type) => format!("b.embedding::{vector_type}"),
        None => "NULL".to_owned(),
    };
    format!(
        "
    INSERT INTO agent_memory.memories AS m
        (gid, team, member_role, member, machine, agent, project_key, project_name, tier, kind,
         text, importance, status, supersedes, superseded_by, conflict_of, created_at,
         updated_at, revision, search_text, model, embedding)
    SELECT b.gid::uuid, '', '', $2, $3, b.agent, b.project_key, b.project_name, b.tier, b.kind,
           b.text, b.importance, b.status, b.supersedes::uuid, b.superseded_by::uuid,
           b.conflict_of::uuid, b.created_at, b.updated_at, 0, to_tsvector('simple', b.index_text),
           CASE WHEN b.embedding IS NOT NULL THEN $19::text END, {embedding}
    FROM unnest($1::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                $9::text[], $10::integer[], $11::text[], $12::text[], $13::text[], $14::text[],
                $15::bigint[], $16::bigint[], $17::text[], $18::bigint[], $20::text[])
         AS b (gid, agent, project_key, project_name, tier, kind, text, importance, status,
               supersedes, superseded_by, conflict_of, created_at, updated_at, index_text, base,
               embedding)
    ON CONFLICT (gid) DO UPDATE SET
        member = excluded.member, machine = excluded.machine, agent = excluded.agent,
        project_key = excluded.project_key, project_name = excluded.project_name,
        tier = excluded.tier, kind = excluded.kind, text = excluded.text,
        importance = excluded.importance, status = excluded.status,
        supersedes = excluded.supersedes, superseded_by = excluded.superseded_by,
        conflict_of = excluded.conflict_of, updated_at = excluded.updated_at,
        search_text = excluded.search_text, model = excluded.model,
        embedding = excluded.embedding
    WHERE m.machine = excluded.machine
       OR m.revision IS NOT DISTINCT FROM
          (SELECT b2.base FROM unnest($1::text[], $18::bigint[]) AS b2 (gid, base)
           WHERE b2.gid::uuid = m.gid)
    RETURNING gid::text, revision"
    )
}

/// Sends `rows` in one statement; the revision of each row written, by global id.
fn send_batch(
    tx: &mut postgres::Transaction<'_>,
    rows: &[Outgoing],
    me: &Identity,
    vectors: Option<&Vectors<'_>>,
) -> Result<std::collections::HashMap<String, i64>, TeamError> {
    let texts: Vec<String> = rows.iter().map(|r| sanitize_text(&r.text).into_owned()).collect();
    // A tombstone or a retired memory is never searched: no vector for it.
    let embeddings: Vec<Option<String>> = match vectors {
        Some(vectors) => {
            let live: Vec<&str> = rows
                .iter()
                .zip(&texts)
                .filter(|(r, _)| r.status == Status::Active)
                .map(|(_, t)| t.as_str())
                .collect();
            let mut made = vectors.embed(&live).into_iter();
            rows.iter()
                .map(|r| if r.status == Status::Active { made.next().flatten() } else { None })
                .collect()
        }
        None => vec![None; rows.len()],
    };
    let model = vectors.map(|v| v.model().to_owned());
    let column = |f: fn(&Outgoing) -> Option<String>| rows.iter().map(f).collect::<Vec<_>>();
    let gids = column(|r| r.gid.clone());
    let agents = column(|r| Some(r.origin.clone()));
    let keys = column(|r| r.project_key.clone());
    let names = column(|r| r.project_name.clone());
    let tiers = column(|r| Some(r.tier.as_str().to_owned()));
    let kinds = column(|r| Some(r.kind.as_str().to_owned()));
    let importance: Vec<i32> = rows.iter().map(|r| i32::from(r.importance)).collect();
    let statuses = column(|r| Some(r.status.as_str().to_owned()));
    let supersedes = column(|r| r.supersedes.clone());
    let superseded_by = column(|r| r.superseded_by.clone());
    let conflict_of = column(|r| r.conflict_of.clone());
    let created: Vec<i64> = rows.iter().map(|r| r.created_at).collect();
    let updated: Vec<i64> = rows.iter().map(|r| r.updated_at).collect();
    let index_texts: Vec<String> = texts.iter().map(|t| search_text(t)).collect();
    let bases: Vec<Option<i64>> = rows.iter().map(|r| r.base).collect();
    let written = tx.query(
        &upsert_batch(vectors.map(|v| v.vector_type.as_str())),
        &[
            &gids,
            &me.member,
            &me.machine,
            &agents,
            &keys,
            &names,
            &tiers,
            &kinds,
            &texts,
            &importance,
            &statuses,
            &supersedes,
            &superseded_by,
            &conflict_of,
            &created,
            &updated,
            &index_texts,
            &bases,
            &model,
            &embeddings,
        ],
    )?;
    Ok(written.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// The global id of the version of memory `gid` that `machine` changed at `updated_at` and
/// keeps beside another machine's: derived, not drawn, so a push cut off after the server took
/// it and run again sends the same id.
fn conflict_gid(gid: &str, machine: &str, updated_at: i64) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("conflict\n{gid}\n{machine}\n{updated_at}"));
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid().to_string()
}

fn push(
    store: &Store,
    client: &mut postgres::Client,
    share: &Share,
    me: &Identity,
    batch: usize,
    vectors: Option<&Vectors<'_>>,
) -> Result<(usize, Vec<Conflict>), TeamError> {
    let mut pushed = 0;
    let mut conflicts = Vec::new();
    loop {
        let mut rows = team::outbox(store, share, batch)?;
        if rows.is_empty() {
            return Ok((pushed, conflicts));
        }
        team::assign_gids(store, &mut rows, || uuid::Uuid::now_v7().to_string())?;
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock(hashtext('agent_memory.push'))", &[])?;
        let written = send_batch(&mut tx, &rows, me, vectors)?;
        // A row the server kept from another machine of this member, changed since this one
        // last saw it: this version goes beside that one, under an id of its own.
        let mut kept_beside = Vec::new();
        let copies: Vec<Outgoing> = rows
            .iter()
            .filter(|row| !row.gid.as_ref().is_some_and(|gid| written.contains_key(gid)))
            .map(|row| {
                let beside = row.gid.clone().unwrap_or_default();
                let gid = conflict_gid(&beside, &me.machine, row.updated_at);
                kept_beside.push(Conflict { id: row.id, gid: gid.clone(), beside: beside.clone() });
                Outgoing { gid: Some(gid), base: None, conflict_of: Some(beside), ..row.clone() }
            })
            .collect();
        let written_copies = if copies.is_empty() {
            Default::default()
        } else {
            send_batch(&mut tx, &copies, me, vectors)?
        };
        let done: Vec<(i64, i64, i64)> = rows
            .iter()
            .map(|row| {
                let copy = kept_beside.iter().find(|c| c.id == row.id);
                let revision = match copy {
                    Some(copy) => written_copies.get(&copy.gid),
                    None => row.gid.as_ref().and_then(|gid| written.get(gid)),
                };
                (row.id, row.updated_at, revision.copied().unwrap_or(0))
            })
            .collect();
        tx.commit()?;
        for conflict in &kept_beside {
            team::rekey_conflict(store, conflict.id, &conflict.gid, &conflict.beside)?;
        }
        team::mark_pushed(store, &done)?;
        pushed += rows.len();
        conflicts.extend(kept_beside);
    }
}

const PULL: &str = "
    SELECT gid::text, member, machine, agent, project_key, project_name, tier, kind, text,
           importance, status, created_at, updated_at, revision, conflict_of::text,
           supersedes::text, superseded_by::text, member_role = session_user
    FROM agent_memory.memories WHERE revision > $1 ORDER BY revision LIMIT $2";

/// The name the server shows this member under: the one the owner gave the role, or the role.
pub(crate) const SHOWN_NAME: &str = "
    SELECT coalesce(nullif(btrim(display_name), ''), role::text) FROM agent_memory.members
    WHERE role = session_user";

/// Brings the teammates whose global memory this member takes in step with the configuration:
/// when it changed (or was never recorded), what is no longer taken goes, and the next pull
/// reads from the start to bring what now is.
fn take_teammates_global(
    store: &Store,
    config: &TeamConfig,
    me: &Identity,
) -> Result<(), TeamError> {
    let mut wanted: Vec<&str> = config.teammates_global.iter().map(|n| n.trim()).collect();
    wanted.sort_unstable();
    let wanted = serde_json::to_string(&wanted).unwrap_or_default();
    if team::state(store, keys::TEAMMATES_GLOBAL)?.as_deref() == Some(wanted.as_str()) {
        return Ok(());
    }
    team::drop_teammates_global(store, &me.member, &|member| config.takes_global_of(member))?;
    team::set_state(store, keys::PULL_CURSOR, "0")?;
    team::set_state(store, keys::TEAMMATES_GLOBAL, &wanted)?;
    Ok(())
}

fn pull(
    store: &Store,
    client: &mut postgres::Client,
    config: &TeamConfig,
    batch: usize,
    now_ms: i64,
) -> Result<(Applied, i64), TeamError> {
    let mut cursor: i64 =
        team::state(store, keys::PULL_CURSOR)?.and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut total = Applied::default();
    loop {
        let rows = client.query(PULL, &[&cursor, &(batch as i64)])?;
        let Some(last) = rows.last() else { break };
        let last: i64 = last.get(13);
        // A teammate's global memory reaches this member's projects only when asked for.
        let taken = |row: &&postgres::Row| {
            row.get::<_, &str>(6) != Tier::L3.as_str()
                || row.get::<_, bool>(17)
                || config.takes_global_of(row.get(1))
        };
        let incoming: Vec<Incoming> = rows.iter().filter(taken).filter_map(incoming).collect();
        let applied = team::apply_pulled(store, &incoming, last, now_ms)?;
        total.added += applied.added;
        total.updated += applied.updated;
        total.unchanged += applied.unchanged + (rows.len() - incoming.len());
        cursor = last;
        if rows.len() < batch {
            break;
        }
    }
    Ok((total, cursor))
}

/// A server row as a local memory, sanitized and checked; `None` for a row this build cannot
/// read (a tier or kind of a newer version, text that no longer fits), which is skipped.
fn incoming(row: &postgres::Row) -> Option<Incoming> {
    let tier = Tier::parse(row.get(6)).filter(|t| *t != Tier::L1)?;
    let kind = Kind::parse(row.get(7))?;
    let status = Status::parse(row.get(10))?;
    let text = check_text(&sanitize_text(row.get(8))).ok()?;
    let name = |i: usize| -> String { clip(&one_line(&sanitize_text(row.get::<_, &str>(i))), 64) };
    Some(Incoming {
        gid: row.get(0),
        member: name(1),
        machine: name(2),
        agent: name(3),
        project_key: row.get(4),
        project_name: row.get(5),
        tier,
        kind,
        text,
        importance: row.get::<_, i32>(9).clamp(1, 10) as u8,
        status,
        created_at: row.get(11),
        updated_at: row.get(12),
        revision: row.get(13),
        conflict_of: row.get(14),
        supersedes: row.get(15),
        superseded_by: row.get(16),
    })
}

/// How team memory stands: the configuration, the local queue, and the server when reachable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TeamStatus {
    pub configured: bool,
    pub identity: Identity,
    /// What leaves this machine, in words.
    pub shared: Vec<String>,
    /// Memories waiting to be pushed.
    pub queue_depth: i64,
    /// Observations and summaries (and tombstones) waiting to be pushed.
    pub items_queue_depth: i64,
    /// Active memories here that came from the team.
    pub from_team: i64,
    /// Observations and summaries here that came from the team.
    pub items_from_team: i64,
    pub last_sync_at: Option<i64>,
    /// `ok`, or the error the last sync ended with.
    pub last_outcome: Option<String>,
    pub last_success_at: Option<i64>,
    /// The server's side, or why it could not be read.
    pub server: Option<Result<ServerStatus, String>>,
}

/// The server's side of [`TeamStatus`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerStatus {
    pub team: String,
    /// The team's members: role, and the name they sync as (once they have pushed).
    pub members: Vec<(String, Option<String>)>,
    /// Memories on the server the member may read, active ones.
    pub memories: i64,
    /// Observations and summaries on the server the member may read, active ones.
    pub items: i64,
}

/// How team memory stands; the server is asked only when `ask_server`.
pub fn status(
    store: &Store,
    config: &TeamConfig,
    ask_server: bool,
) -> Result<TeamStatus, TeamError> {
    let me = identity(config);
    let mut shared = vec!["reviewed project memory (L2) of projects with a git origin".to_owned()];
    if config.share_global {
        shared.push("global memory (L3)".to_owned());
    }
    if !config.share_observations.is_empty() {
        shared.push(format!(
            "observations and session summaries of projects {}",
            config.share_observations.join(", ")
        ));
    }
    if !config.exclude_projects.is_empty() {
        shared.push(format!("except projects {}", config.exclude_projects.join(", ")));
    }
    let number = |key: &str| -> Result<Option<i64>, TeamError> {
        Ok(team::state(store, key)?.and_then(|v| v.parse().ok()))
    };
    let server = (ask_server && config.enabled())
        .then(|| server_status(&config.url).map_err(|e| e.to_string()));
    Ok(TeamStatus {
        configured: config.enabled(),
        queue_depth: team::queue_depth(store, &share(config, &me))?,
        items_queue_depth: team::items::queue_depth(store, &item_share(config))?,
        from_team: team::pulled_count(store)?,
        items_from_team: team::items::pulled_count(store)?,
        identity: me,
        shared,
        last_sync_at: number(keys::LAST_SYNC_AT)?,
        last_outcome: team::state(store, keys::LAST_SYNC_OUTCOME)?,
        last_success_at: number(keys::LAST_SUCCESS_AT)?,
        server,
    })
}

fn server_status(url: &str) -> Result<ServerStatus, TeamError> {
    let mut client = connect::connect(url)?;
    schema::check(&mut client)?;
    let team: Option<String> = client.query_one("SELECT agent_memory.my_team()", &[])?.get(0);
    let Some(team) = team else {
        let role: String = client.query_one("SELECT current_user::text", &[])?.get(0);
        return Err(TeamError::NotMember { role });
    };
    let members = client
        .query(
            "SELECT b.role::text, (SELECT m.member FROM agent_memory.memories m
                                  WHERE m.member_role = b.role ORDER BY m.revision DESC LIMIT 1)
             FROM agent_memory.members b ORDER BY b.role",
            &[],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let counts = client.query_one(
        "SELECT (SELECT count(*) FROM agent_memory.memories WHERE status = 'active'),
                (SELECT count(*) FROM agent_memory.items WHERE status = 'active')",
        &[],
    )?;
    Ok(ServerStatus { team, members, memories: counts.get(0), items: counts.get(1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sync_holds_the_lock_and_another_waits_then_says_it_is_busy() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = Home::at(dir.path().join("home"));
        let held = SyncLock::take(&home, Duration::ZERO).expect("lock").expect("free");
        assert!(SyncLock::take(&home, Duration::from_millis(120)).expect("lock").is_none());
        let err = SyncLock::wait_for(&home, Duration::ZERO).expect_err("busy");
        assert!(err.to_string().starts_with("another team sync is running"), "{err}");
        drop(held);
        assert!(SyncLock::wait_for(&home, Duration::ZERO).is_ok(), "free again once dropped");
    }

    #[test]
    fn the_wait_doubles_with_each_failure_up_to_a_cap() {
        assert_eq!(wait_ms(10, 0), 600_000);
        assert_eq!(wait_ms(10, 1), 1_200_000);
        assert_eq!(wait_ms(10, 3), 4_800_000);
        assert_eq!(wait_ms(10, 30), MAX_BACKOFF_MS);
        assert_eq!(wait_ms(24 * 60, 2), 24 * 3_600_000, "never shorter than the interval");
    }
}
