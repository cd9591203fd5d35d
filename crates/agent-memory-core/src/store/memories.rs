//! Long-term memory in the store (ARCHITECTURE.md, "Long-term memory API"): short statements of a
//! kind, in a tier, with a status, and the operations a reviewer performs on them.
//!
//! Here is a memory to keep, a candidate to approve, reject or edit, a memory to forget: change
//! its row, keep its id, move its `updated_at`. This is the one API every front end uses (the
//! CLI's `review`, `remember`, `forget` and `memories`, the MCP tools, the HTTP review queue and
//! the vault sync): [`insert`], [`approve`], [`reject`], [`edit`], [`forget`], [`restore`],
//! [`get`], [`list`]. Nothing is ever deleted: a forgotten or rejected memory keeps its row, so
//! a change can be undone and a sync can tell a deletion from an unknown id.
//!
//! Supersession is kept here because it is a rule about rows: a reviewed decision or convention
//! retires the older active one it names in `supersedes` (status `superseded`, the link kept
//! in `superseded_by`). Which memory supersedes which is decided by [`crate::promote`].
//!
//! Must not: decide what is worth remembering (that is [`crate::promote`]), or how memories
//! read in a briefing (that is [`crate::inject`]).

use rusqlite::types::Value;
use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use super::{Store, StoreError};

/// The most characters a memory's text may have.
pub const MAX_TEXT_CHARS: usize = 300;

/// The columns [`from_row`] reads (`m` is memories, `p` its project).
pub(crate) const COLUMNS: &str = "m.id, m.tier, m.kind, m.text, p.key, p.name, m.importance, m.hits, \
     m.last_hit, m.created_at, m.updated_at, m.status, m.superseded_by, m.supersedes, m.sources, \
     m.origin, m.team_member";

/// Which tier a memory is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub enum Tier {
    /// A candidate, produced from observations and summaries, waiting for review.
    L1,
    /// Reviewed memory of one project.
    L2,
    /// Reviewed memory for every project: preferences and cross-project conventions.
    L3,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::L1 => "L1",
            Tier::L2 => "L2",
            Tier::L3 => "L3",
        }
    }

    /// `L1`/`l1`/`1`/`candidate`, `L2`/`project`, `L3`/`global`.
    pub fn parse(text: &str) -> Option<Tier> {
        match text.trim().to_ascii_lowercase().as_str() {
            "l1" | "1" | "candidate" | "candidates" => Some(Tier::L1),
            "l2" | "2" | "project" => Some(Tier::L2),
            "l3" | "3" | "global" => Some(Tier::L3),
            _ => None,
        }
    }
}

/// What a memory says, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Project context: structure, stack, environment.
    Fact,
    /// A decision, with its reason.
    Decision,
    /// Naming, commits, layout.
    Convention,
    /// An error and its fix.
    Problem,
    /// The person's own, across projects.
    Preference,
}

impl Kind {
    pub const ALL: [Kind; 5] =
        [Kind::Fact, Kind::Decision, Kind::Convention, Kind::Problem, Kind::Preference];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Fact => "fact",
            Kind::Decision => "decision",
            Kind::Convention => "convention",
            Kind::Problem => "problem",
            Kind::Preference => "preference",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str().eq_ignore_ascii_case(text.trim()))
    }

    /// Kinds where a newer statement on the same subject replaces the older one: a person
    /// changes their mind about a choice, a rule or how they like things.
    pub fn supersedes_older(self) -> bool {
        matches!(self, Kind::Decision | Kind::Convention | Kind::Preference)
    }
}

/// Where a memory is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// An L1 candidate waiting for review.
    Candidate,
    /// Reviewed (or stated by the user): searched and injected.
    Active,
    /// Turned down in review; kept so the same statement is not offered again.
    Rejected,
    /// Replaced by a newer decision or convention (`superseded_by`).
    Superseded,
    /// Forgotten by the user: never searched or injected; kept for undo.
    Forgotten,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Candidate,
        Status::Active,
        Status::Rejected,
        Status::Superseded,
        Status::Forgotten,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Candidate => "candidate",
            Status::Active => "active",
            Status::Rejected => "rejected",
            Status::Superseded => "superseded",
            Status::Forgotten => "forgotten",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Memory {
    pub id: i64,
    pub tier: Tier,
    pub kind: Kind,
    pub text: String,
    /// The project's key; `None` for L3.
    pub project: Option<String>,
    pub project_name: Option<String>,
    pub importance: u8,
    pub hits: i64,
    pub last_hit: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub status: Status,
    pub superseded_by: Option<i64>,
    /// For a candidate: the active memory approving it retires.
    pub supersedes: Option<i64>,
    /// Ids of the observations and summaries it came from (`o12`, `s3`).
    pub sources: Vec<String>,
    /// `distilled`, `remembered`, `imported`, or the name of the agent that asked.
    pub origin: String,
    /// The teammate who learned it, for memory pulled from the team; `None` for memory
    /// learned on this machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// The files it rests on, checked against the working tree when it was read for a person
    /// or a model (`show`, the tools); `None` when not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchors: Option<Vec<crate::anchor::Checked>>,
    /// For a candidate made from work on a branch of its own (not the repository's default),
    /// that branch, as review shows it; `None` otherwise and when not looked up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

impl Memory {
    /// The id `show` and the tools print: `m12`.
    pub fn show_id(&self) -> String {
        format!("m{}", self.id)
    }

    /// Who it came from, as `show` says after "by": `you in hermes` for what the person told an
    /// agent, else the origin as stored (`distilled`, `remembered`, an agent's name).
    pub fn provenance(&self) -> String {
        match self.origin.strip_prefix("stated:") {
            Some(agent) => format!("you in {agent}"),
            None => self.origin.clone(),
        }
    }
}

/// A memory to insert.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemory {
    pub tier: Tier,
    pub kind: Kind,
    pub text: String,
    /// The project's row id; ignored for L3.
    pub project_id: Option<i64>,
    pub importance: u8,
    pub sources: Vec<String>,
    pub origin: String,
    /// For a candidate: the active memory approving it retires. For a reviewed memory: the one
    /// it retires at once.
    pub supersedes: Option<i64>,
}

/// A change to a memory's text, kind or importance.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Edit {
    pub text: Option<String>,
    pub kind: Option<Kind>,
    pub importance: Option<u8>,
}

/// Which memories [`list`] returns; every field narrows, empty lists mean any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub tiers: Vec<Tier>,
    pub kinds: Vec<Kind>,
    pub statuses: Vec<Status>,
    /// A project key, name or root; L3 memories match every project.
    pub project: Option<String>,
    /// Only memories changed at or after this time.
    pub updated_since_ms: Option<i64>,
    /// At most this many, newest change first; 0 for all.
    pub limit: usize,
}

/// What [`approve`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Approved {
    pub memory: Memory,
    /// The older memory it superseded, if any.
    pub superseded: Option<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("no memory m{0}; list them with `agent-memory memories`")]
    NotFound(i64),
    #[error("the memory text is empty; say in one sentence what to remember")]
    EmptyText,
    #[error(
        "the memory text is {0} characters; at most {MAX_TEXT_CHARS} fit, so shorten it to one statement"
    )]
    TooLong(usize),
    #[error("importance {0} is out of range; pass a number from 1 to 10")]
    Importance(i64),
    #[error("memory m{id} is {status}; only {wanted} can be changed this way")]
    State { id: i64, status: &'static str, wanted: &'static str },
    #[error(
        "memory m{id} was not written by {agent}; an agent may forget only what it wrote (the person can, with `agent-memory forget m{id}`)"
    )]
    NotYours { id: i64, agent: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl MemoryError {
    /// Another process held the store past the busy timeout: worth trying again.
    pub fn is_busy(&self) -> bool {
        matches!(self, MemoryError::Store(err) if err.is_busy())
    }
}

impl From<rusqlite::Error> for MemoryError {
    fn from(err: rusqlite::Error) -> Self {
        MemoryError::Store(StoreError::Sql(err))
    }
}

pub type Result<T, E = MemoryError> = std::result::Result<T, E>;

/// `text` on one line, checked against the limits: not empty, at most [`MAX_TEXT_CHARS`].
pub fn check_text(text: &str) -> Result<String> {
    let flat = crate::text::one_line(text);
    if flat.is_empty() {
        return Err(MemoryError::EmptyText);
    }
    let chars = flat.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(MemoryError::TooLong(chars));
    }
    Ok(flat)
}

/// `importance` checked to be 1 to 10.
pub fn check_importance(importance: i64) -> Result<u8> {
    if (1..=10).contains(&importance) {
        Ok(importance as u8)
    } else {
        Err(MemoryError::Importance(importance))
    }
}

pub(crate) fn from_row(r: &Row<'_>) -> rusqlite::Result<Memory> {
    let tier: String = r.get(1)?;
    let kind: String = r.get(2)?;
    let status: String = r.get(11)?;
    let sources: String = r.get(14)?;
    Ok(Memory {
        id: r.get(0)?,
        // Rows are written by this module; an unknown value can only come from a newer version.
        tier: Tier::parse(&tier).unwrap_or(Tier::L1),
        kind: Kind::parse(&kind).unwrap_or(Kind::Fact),
        text: r.get(3)?,
        project: r.get(4)?,
        project_name: r.get(5)?,
        importance: r.get::<_, i64>(6)?.clamp(1, 10) as u8,
        hits: r.get(7)?,
        last_hit: r.get(8)?,
        created_at: r.get(9)?,
        updated_at: r.get(10)?,
        status: Status::parse(&status).unwrap_or(Status::Candidate),
        superseded_by: r.get(12)?,
        supersedes: r.get(13)?,
        sources: serde_json::from_str(&sources).unwrap_or_default(),
        origin: r.get(15)?,
        member: r.get(16)?,
        anchors: None,
        branch: None,
    })
}

/// Stores a new memory: an L1 candidate (status `candidate`), or reviewed L2/L3 memory (status
/// `active`), which retires the memory it `supersedes` at once. Returns its id.
pub fn insert(store: &mut Store, new: &NewMemory, now_ms: i64) -> Result<i64> {
    let tx = store.begin_write()?;
    let id = insert_row(&tx, new, now_ms, now_ms)?;
    if new.tier != Tier::L1
        && let Some(old) = new.supersedes
    {
        supersede(&tx, old, id, now_ms)?;
    }
    tx.commit()?;
    Ok(id)
}

/// Writes one memory row, checked, created at `created_ms`: a candidate in L1, active memory
/// in L2 and L3. For [`insert`] and the importer, which runs inside its own transaction.
pub(crate) fn insert_row(
    conn: &rusqlite::Connection,
    new: &NewMemory,
    created_ms: i64,
    now_ms: i64,
) -> Result<i64> {
    let text = check_text(&new.text)?;
    let importance = check_importance(i64::from(new.importance))?;
    let status = if new.tier == Tier::L1 { Status::Candidate } else { Status::Active };
    let project_id = if new.tier == Tier::L3 { None } else { new.project_id };
    conn.execute(
        "INSERT INTO memories (tier, kind, text, project_id, importance, created_at, updated_at,
                               status, supersedes, sources, origin)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            new.tier.as_str(),
            new.kind.as_str(),
            text,
            project_id,
            importance,
            created_ms,
            now_ms,
            status.as_str(),
            new.supersedes,
            serde_json::to_string(&new.sources).unwrap_or_else(|_| "[]".into()),
            new.origin,
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Marks `old` superseded by `new`, if it is still active; true when it was.
fn supersede(conn: &rusqlite::Connection, old: i64, new: i64, now_ms: i64) -> Result<bool> {
    let changed = conn.execute(
        "UPDATE memories SET status = 'superseded', superseded_by = ?2, updated_at = ?3
         WHERE id = ?1 AND status = 'active' AND id <> ?2",
        params![old, new, now_ms],
    )?;
    Ok(changed == 1)
}

/// Makes `old` current again when `new`, the memory that superseded it, is forgotten; true
/// when it was superseded by `new`.
pub fn reinstate(store: &mut Store, old: i64, new: i64, now_ms: i64) -> Result<bool> {
    let changed = store.conn().execute(
        "UPDATE memories SET status = 'active', superseded_by = NULL, updated_at = ?3
         WHERE id = ?1 AND status = 'superseded' AND superseded_by = ?2",
        params![old, new, now_ms],
    )?;
    Ok(changed == 1)
}

/// Marks the candidate `old` superseded by `new`, a later statement that outdates it before
/// anyone reviewed it; true when it was a candidate.
pub fn retire_candidate(store: &mut Store, old: i64, new: i64, now_ms: i64) -> Result<bool> {
    let changed = store.conn().execute(
        "UPDATE memories SET status = 'superseded', superseded_by = ?2, updated_at = ?3
         WHERE id = ?1 AND status = 'candidate' AND id <> ?2",
        params![old, new, now_ms],
    )?;
    Ok(changed == 1)
}

/// Marks `old` superseded by `new` (an active memory saying the same, or its successor).
pub fn supersede_by(store: &mut Store, old: i64, new: i64, now_ms: i64) -> Result<bool> {
    supersede(store.conn(), old, new, now_ms)
}

/// One memory by id, whatever its status.
pub fn get(store: &Store, id: i64) -> Result<Option<Memory>> {
    let mut stmt = store.conn().prepare_cached(&format!(
        "SELECT {COLUMNS} FROM memories m LEFT JOIN projects p ON p.id = m.project_id
         WHERE m.id = ?1"
    ))?;
    Ok(stmt.query_row([id], from_row).optional()?)
}

fn must_get(store: &Store, id: i64) -> Result<Memory> {
    get(store, id)?.ok_or(MemoryError::NotFound(id))
}

/// Approves a candidate (or a memory rejected earlier) into project memory (L2), or global
/// memory (L3) when `global`; a candidate proposed as the successor of an active decision
/// supersedes it now.
pub fn approve(store: &mut Store, id: i64, global: bool, now_ms: i64) -> Result<Approved> {
    let memory = must_get(store, id)?;
    if !matches!(memory.status, Status::Candidate | Status::Rejected) {
        return Err(MemoryError::State {
            id,
            status: memory.status.as_str(),
            wanted: "candidates and rejected memories",
        });
    }
    // A candidate of no project (a preference about the person, a statement made where no
    // project is) belongs to every project once approved.
    let tier = if global || memory.project.is_none() { Tier::L3 } else { Tier::L2 };
    let tx = store.begin_write()?;
    tx.execute(
        "UPDATE memories SET tier = ?2, status = 'active', updated_at = ?3,
                project_id = CASE WHEN ?2 = 'L3' THEN NULL ELSE project_id END
         WHERE id = ?1",
        params![id, tier.as_str(), now_ms],
    )?;
    let superseded = match memory.supersedes {
        Some(old) if supersede(&tx, old, id, now_ms)? => Some(old),
        _ => None,
    };
    tx.commit()?;
    Ok(Approved { memory: must_get(store, id)?, superseded })
}

/// Rejects a candidate: it stays, so promotion does not offer the same statement again.
pub fn reject(store: &mut Store, id: i64, now_ms: i64) -> Result<Memory> {
    let memory = must_get(store, id)?;
    if memory.status != Status::Candidate {
        return Err(MemoryError::State {
            id,
            status: memory.status.as_str(),
            wanted: "candidates",
        });
    }
    set_status(store, id, Status::Rejected, now_ms)
}

/// Changes a memory's text, kind or importance, whatever its tier.
pub fn edit(store: &mut Store, id: i64, change: &Edit, now_ms: i64) -> Result<Memory> {
    let memory = must_get(store, id)?;
    let text = change.text.as_deref().map(check_text).transpose()?.unwrap_or(memory.text);
    let importance = match change.importance {
        Some(n) => check_importance(i64::from(n))?,
        None => memory.importance,
    };
    let kind = change.kind.unwrap_or(memory.kind);
    store.conn().execute(
        "UPDATE memories SET text = ?2, kind = ?3, importance = ?4, updated_at = ?5 WHERE id = ?1",
        params![id, text, kind.as_str(), importance, now_ms],
    )?;
    must_get(store, id)
}

/// Forgets a memory: never searched or injected again, kept so [`restore`] can undo it.
pub fn forget(store: &mut Store, id: i64, now_ms: i64) -> Result<Memory> {
    let memory = must_get(store, id)?;
    if memory.status == Status::Forgotten {
        return Ok(memory);
    }
    set_status(store, id, Status::Forgotten, now_ms)
}

/// Undoes [`forget`] or [`reject`]: reviewed memory becomes active again, a candidate a
/// candidate.
pub fn restore(store: &mut Store, id: i64, now_ms: i64) -> Result<Memory> {
    let memory = must_get(store, id)?;
    if !matches!(memory.status, Status::Forgotten | Status::Rejected) {
        return Err(MemoryError::State {
            id,
            status: memory.status.as_str(),
            wanted: "forgotten and rejected memories",
        });
    }
    let status = if memory.tier == Tier::L1 { Status::Candidate } else { Status::Active };
    set_status(store, id, status, now_ms)
}

fn set_status(store: &mut Store, id: i64, status: Status, now_ms: i64) -> Result<Memory> {
    store.conn().execute(
        "UPDATE memories SET status = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, status.as_str(), now_ms],
    )?;
    must_get(store, id)
}

/// Memories matching `filter`, the most recently changed first.
pub fn list(store: &Store, filter: &Filter) -> Result<Vec<Memory>> {
    let mut sql = format!(
        "SELECT {COLUMNS} FROM memories m LEFT JOIN projects p ON p.id = m.project_id WHERE 1"
    );
    let mut args: Vec<Value> = Vec::new();
    let mut any_of = |sql: &mut String, column: &str, values: Vec<&'static str>| {
        if values.is_empty() {
            return;
        }
        let marks: Vec<String> = values
            .into_iter()
            .map(|v| {
                args.push(Value::Text(v.to_owned()));
                format!("?{}", args.len())
            })
            .collect();
        sql.push_str(&format!(" AND {column} IN ({})", marks.join(", ")));
    };
    any_of(&mut sql, "m.tier", filter.tiers.iter().map(|t| t.as_str()).collect());
    any_of(&mut sql, "m.kind", filter.kinds.iter().map(|k| k.as_str()).collect());
    any_of(&mut sql, "m.status", filter.statuses.iter().map(|s| s.as_str()).collect());
    if let Some(project) = &filter.project {
        args.push(Value::Text(project.clone()));
        let n = args.len();
        sql.push_str(&format!(
            " AND (m.tier = 'L3' OR m.project_id IN
                  (SELECT id FROM projects WHERE key = ?{n} OR name = ?{n} OR root = ?{n}))"
        ));
    }
    if let Some(since) = filter.updated_since_ms {
        args.push(Value::Integer(since));
        sql.push_str(&format!(" AND m.updated_at >= ?{}", args.len()));
    }
    sql.push_str(" ORDER BY m.updated_at DESC, m.id DESC");
    if filter.limit > 0 {
        sql.push_str(&format!(" LIMIT {}", filter.limit));
    }
    let mut stmt = store.conn().prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The memories of one project (or the global ones, `project_id` `None`) in the given
/// statuses, for promotion to compare a new statement with: each memory's sources are only its
/// first (a merged memory gathers thousands, and placing a statement reads every memory in
/// scope).
pub fn in_scope(
    store: &Store,
    project_id: Option<i64>,
    statuses: &[Status],
) -> Result<Vec<Memory>> {
    let statuses: Vec<String> = statuses.iter().map(|s| format!("'{}'", s.as_str())).collect();
    let columns = COLUMNS.replace("m.sources", "json_array(json_extract(m.sources, '$[0]'))");
    let mut stmt = store.conn().prepare_cached(&format!(
        "SELECT {columns} FROM memories m LEFT JOIN projects p ON p.id = m.project_id
         WHERE m.project_id IS ?1 AND m.status IN ({}) ORDER BY m.id",
        statuses.join(", ")
    ))?;
    let rows = stmt.query_map([project_id], from_row)?;
    let mut out: Vec<Memory> = rows.collect::<rusqlite::Result<_>>()?;
    for memory in &mut out {
        memory.sources.retain(|s| !s.is_empty());
    }
    Ok(out)
}

/// Folds a near-duplicate statement into memory `id`: its sources are added, its importance
/// raised to the higher of the two, and, for a candidate, its text replaced by `text` when
/// given (the newer wording of a decision).
pub fn merge_into(
    store: &mut Store,
    id: i64,
    sources: &[String],
    importance: u8,
    text: Option<&str>,
    now_ms: i64,
) -> Result<Memory> {
    let memory = must_get(store, id)?;
    let mut all = memory.sources.clone();
    for source in sources {
        if !all.contains(source) {
            all.push(source.clone());
        }
    }
    let text = match text {
        Some(t) if memory.status == Status::Candidate => check_text(t)?,
        _ => memory.text.clone(),
    };
    let importance = importance.clamp(1, 10).max(memory.importance);
    if all == memory.sources && importance == memory.importance && text == memory.text {
        return Ok(memory);
    }
    // The text only when it changed: setting it re-indexes the memory's full text.
    let sources = serde_json::to_string(&all).unwrap_or_else(|_| "[]".into());
    if text == memory.text {
        store
            .conn()
            .prepare_cached(
                "UPDATE memories SET sources = ?2, importance = ?3, updated_at = ?4 WHERE id = ?1",
            )?
            .execute(params![id, sources, importance, now_ms])?;
    } else {
        store
            .conn()
            .prepare_cached(
                "UPDATE memories SET sources = ?2, importance = ?3, text = ?4, updated_at = ?5
                 WHERE id = ?1",
            )?
            .execute(params![id, sources, importance, text, now_ms])?;
    }
    Ok(Memory { sources: all, importance, text, updated_at: now_ms, ..memory })
}

/// The packs mounted with `pack add`: each name with how many of its memories are active and
/// how many wait for review.
pub fn packs(store: &Store) -> Result<Vec<(String, i64, i64)>> {
    let mut stmt = store.conn().prepare_cached(
        "SELECT substr(origin, 6), sum(status = 'active'), sum(status = 'candidate') FROM memories
         WHERE origin LIKE 'pack:%' GROUP BY origin ORDER BY origin",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Approves every candidate a pack brought: a memory with a project into that project's
/// memory (L2), one without into global memory (L3). Returns how many.
pub fn approve_pack(store: &mut Store, name: &str, now_ms: i64) -> Result<usize> {
    let ids: Vec<(i64, bool)> = {
        let mut stmt = store.conn().prepare_cached(
            "SELECT id, project_id IS NULL FROM memories
             WHERE origin = 'pack:' || ?1 AND status = 'candidate' ORDER BY id",
        )?;
        let rows = stmt.query_map([name], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for &(id, global) in &ids {
        approve(store, id, global, now_ms)?;
    }
    Ok(ids.len())
}

/// Unmounts a pack: every memory it brought is forgotten (kept, as any forgotten memory).
/// Returns how many.
pub fn forget_pack(store: &mut Store, name: &str, now_ms: i64) -> Result<usize> {
    Ok(store.conn().execute(
        "UPDATE memories SET status = 'forgotten', updated_at = ?2
         WHERE origin = 'pack:' || ?1 AND status <> 'forgotten'",
        params![name, now_ms],
    )?)
}

/// Finds a project's row id by key, name or root.
pub fn project_id(store: &Store, project: &str) -> Result<Option<i64>> {
    let mut stmt = store.conn().prepare_cached(
        "SELECT id FROM projects WHERE key = ?1 OR name = ?1 OR root = ?1 ORDER BY key = ?1 DESC
         LIMIT 1",
    )?;
    Ok(stmt.query_row([project], |r| r.get(0)).optional()?)
}

/// Records a project by its identity (as a hook would), and returns its row id.
pub fn ensure_project(
    store: &mut Store,
    identity: &crate::project::ProjectIdentity,
) -> Result<i64> {
    let now = crate::time::now_ms();
    Ok(super::upsert_project(store.conn(), identity, now)?)
}

/// Counts one more hit on each memory at `at_ms`.
pub(crate) fn record_hits(
    conn: &rusqlite::Connection,
    ids: impl IntoIterator<Item = i64>,
    at_ms: i64,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(
        "UPDATE memories SET hits = hits + 1, last_hit = max(coalesce(last_hit, 0), ?2)
         WHERE id = ?1",
    )?;
    for id in ids {
        stmt.execute(params![id, at_ms])?;
    }
    Ok(())
}

/// Candidates drawn from agents' imported history waiting for review in one project (`None`:
/// those for everyone).
pub fn history_candidates(store: &Store, project_id: Option<i64>) -> Result<i64> {
    Ok(store.conn().query_row(
        "SELECT count(*) FROM memories
         WHERE status = 'candidate' AND project_id IS ?1 AND origin LIKE 'history%'",
        [project_id],
        |r| r.get(0),
    )?)
}

/// Whether the event `e` was read from an agent's history rather than captured by a hook:
/// its uid is `<agent>-history-…` (`crate::history::uid_prefix`).
const FROM_HISTORY: &str = "instr(e.uid, '-history-') > 0";

/// A distilled item promotion has not screened yet: an observation, or a summary's lessons.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unscreened {
    /// `o12` or `s3`.
    pub source: String,
    pub project_id: Option<i64>,
    /// The observation's type, or `summary`.
    pub item_type: String,
    pub title: String,
    pub subtitle: String,
    pub facts: Vec<String>,
    pub concepts: Vec<String>,
    /// A summary's `learned` list.
    pub learned: Vec<String>,
    /// A summary's last covered event, so a rewritten summary is screened again.
    pub version: i64,
    /// Whether the item stands only on what the person typed (a decision they stated): its
    /// sources are all prompts. Anything else is the agent's words or tool output.
    pub from_person: bool,
    /// Whether it was distilled from an agent's history imported after the fact, not from
    /// what the hooks captured.
    pub from_history: bool,
}

/// Observations and summaries not screened yet (a summary again once rewritten to cover more
/// of its session), oldest first, at most `limit` of each.
pub fn unscreened(store: &Store, limit: usize) -> Result<Vec<Unscreened>> {
    let mut found = Vec::new();
    let mut stmt = store.conn().prepare_cached(&format!(
        "SELECT o.id, o.project_id, o.kind, o.title, o.subtitle, o.facts, o.concepts,
                (SELECT count(*) > 0 AND coalesce(sum(e.kind <> 'prompt'), 0) = 0
                 FROM observation_sources s JOIN events e ON e.id = s.event_id
                 WHERE s.observation_id = o.id),
                EXISTS (SELECT 1 FROM observation_sources s JOIN events e ON e.id = s.event_id
                        WHERE s.observation_id = o.id AND {FROM_HISTORY})
         FROM observations o
         WHERE NOT EXISTS (SELECT 1 FROM memory_screened m
                           WHERE m.item_kind = 'observation' AND m.item_id = o.id)
         ORDER BY o.id LIMIT ?1"
    ))?;
    let list = |text: String| serde_json::from_str::<Vec<String>>(&text).unwrap_or_default();
    let rows = stmt.query_map([limit as i64], |r| {
        Ok(Unscreened {
            source: format!("o{}", r.get::<_, i64>(0)?),
            project_id: r.get(1)?,
            item_type: r.get(2)?,
            title: r.get(3)?,
            subtitle: r.get(4)?,
            facts: list(r.get(5)?),
            concepts: list(r.get(6)?),
            from_person: r.get(7)?,
            from_history: r.get(8)?,
            ..Unscreened::default()
        })
    })?;
    for row in rows {
        found.push(row?);
    }
    let mut stmt = store.conn().prepare_cached(&format!(
        "SELECT x.id, x.project_id, x.request, x.learned, x.through_event_id,
                EXISTS (SELECT 1 FROM events e WHERE e.session_id = x.session_id
                        AND {FROM_HISTORY})
         FROM summaries x LEFT JOIN memory_screened m
              ON m.item_kind = 'summary' AND m.item_id = x.id
         WHERE m.item_id IS NULL OR m.version < x.through_event_id
         ORDER BY x.id LIMIT ?1"
    ))?;
    let rows = stmt.query_map([limit as i64], |r| {
        Ok(Unscreened {
            source: format!("s{}", r.get::<_, i64>(0)?),
            project_id: r.get(1)?,
            item_type: "summary".into(),
            title: r.get(2)?,
            learned: list(r.get(3)?),
            version: r.get(4)?,
            from_history: r.get(5)?,
            ..Unscreened::default()
        })
    })?;
    for row in rows {
        found.push(row?);
    }
    Ok(found)
}

/// Records that `item` was screened, at its version.
pub fn mark_screened(store: &Store, item: &Unscreened) -> Result<()> {
    let (kind, id) = match item.source.split_at(1) {
        ("s", id) => ("summary", id),
        (_, id) => ("observation", id),
    };
    let id: i64 =
        id.parse().map_err(|_| StoreError::Data(format!("bad item id {}", item.source)))?;
    store.conn().execute(
        "INSERT INTO memory_screened (item_kind, item_id, version) VALUES (?1, ?2, ?3)
         ON CONFLICT (item_kind, item_id) DO UPDATE SET version = excluded.version",
        params![kind, id, item.version],
    )?;
    Ok(())
}

/// A prompt a person typed, or an entry an agent wrote into its own memory, not read for
/// statements yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub event_id: i64,
    pub agent: String,
    pub project_id: Option<i64>,
    /// Said where no project is: a folder that is neither a repository nor a registered root
    /// (a general assistant's workspace, a home directory), or with no folder at all.
    pub outside_projects: bool,
    /// The person's words, or the agent's memory entry.
    pub text: String,
    /// For an agent's own memory entry: its target (`memory`, or `user` for the person).
    pub agent_memory: Option<String>,
    pub at_ms: i64,
    /// Said in an agent's history imported after the fact, not captured by the hooks.
    pub from_history: bool,
}

/// The item kind `memory_screened` keeps the read position of prompts under.
const SAID_CURSOR: &str = "said";

/// Prompts and agents' memory entries stored after the last one read, oldest first, at most
/// `limit` events looked at; with the id of the last event looked at, to pass to
/// [`mark_said_read`]. Private events are never read.
pub fn said_since(store: &Store, limit: usize) -> Result<(Vec<Said>, Option<i64>)> {
    let after: i64 = store
        .conn()
        .query_row(
            "SELECT version FROM memory_screened WHERE item_kind = ?1 AND item_id = 0",
            [SAID_CURSOR],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0);
    // Read up to the newest event now stored, so one stored while reading waits for next time.
    let newest: Option<i64> =
        store.conn().query_row("SELECT max(id) FROM events", [], |r| r.get(0))?;
    let Some(newest) = newest.filter(|n| *n > after) else { return Ok((Vec::new(), None)) };
    // Prompts, notes, and changes to the files agents take their rules from; nothing else is
    // read, so the cost follows what people and agents said, not every tool call.
    let mut stmt = store.conn().prepare_cached(&format!(
        "SELECT e.id, e.kind, e.agent, e.project_id, p.key, p.root,
                EXISTS (SELECT 1 FROM project_roots r WHERE r.project_id = e.project_id),
                e.payload, e.body, e.at, e.tool_kind, e.files, {FROM_HISTORY}
         FROM events e LEFT JOIN projects p ON p.id = e.project_id
         WHERE e.id > ?1 AND e.id <= ?2 AND e.sensitivity <> 'private'
           AND (e.kind IN ('prompt', 'note')
                OR e.kind = 'tool_use' AND e.tool_kind IN ('edit', 'write', 'shell')
                   AND (instr(e.payload, 'CLAUDE.md') OR instr(e.payload, 'AGENTS.md')
                        OR instr(e.payload, 'GEMINI.md')
                        OR instr(e.payload, 'copilot-instructions.md')))
         ORDER BY e.id LIMIT ?3"
    ))?;
    let mut last = None;
    let mut found = Vec::new();
    let mut outside: std::collections::HashMap<Option<i64>, bool> = Default::default();
    let mut rows = stmt.query(params![after, newest, limit as i64])?;
    let mut read = 0;
    while let Some(r) = rows.next()? {
        read += 1;
        let id: i64 = r.get(0)?;
        last = Some(id);
        let kind: String = r.get(1)?;
        let payload: serde_json::Value =
            serde_json::from_str(&r.get::<_, String>(7)?).unwrap_or_default();
        let body: String = r.get(8)?;
        let field = |name: &str| payload.get(name).and_then(serde_json::Value::as_str);
        let (text, agent_memory) = match kind.as_str() {
            "prompt" => (field("prompt").map_or(body, str::to_owned), None),
            "note" => {
                // Only an agent's writes into its own memory are statements; other notes are not.
                let (Some(content), Some(action)) = (field("content"), field("action")) else {
                    continue;
                };
                if action == "remove" {
                    continue;
                }
                (content.to_owned(), Some(field("target").unwrap_or("memory").to_owned()))
            }
            _ => {
                // The facts stored with the event, or worked out as the adapter would have.
                let facts: crate::event::ToolFacts = match payload.get(super::FACTS_KEY) {
                    Some(stored) => serde_json::from_value(stored.clone()).unwrap_or_default(),
                    None => {
                        let tool_kind = r.get::<_, Option<String>>(10)?.and_then(|k| {
                            serde_json::from_value::<crate::event::ToolKind>(k.into()).ok()
                        });
                        let files: Vec<String> =
                            serde_json::from_str(&r.get::<_, String>(11)?).unwrap_or_default();
                        let kind = crate::event::EventKind::ToolUse;
                        crate::adapter::tool_facts(kind, tool_kind, &files, &payload)
                    }
                };
                let wrote_rules = facts.written.iter().any(|f| is_rules_file(f));
                match facts.added.filter(|_| wrote_rules && !facts.failed) {
                    Some(added) => (added, Some(AGENT_RULES.to_owned())),
                    None => continue,
                }
            }
        };
        let project_id: Option<i64> = r.get(3)?;
        let key: Option<String> = r.get(4)?;
        let root: Option<String> = r.get(5)?;
        let registered: bool = r.get(6)?;
        let outside_projects = *outside.entry(project_id).or_insert_with(|| match (&key, &root) {
            (Some(key), Some(root)) => {
                crate::project::is_outside_projects(key, std::path::Path::new(root), || registered)
            }
            _ => true,
        });
        found.push(Said {
            event_id: id,
            agent: r.get(2)?,
            project_id,
            outside_projects,
            text,
            agent_memory,
            at_ms: r.get(9)?,
            from_history: r.get(12)?,
        });
    }
    // Everything up to the newest event was looked at, unless the limit stopped the reading.
    let through = if read < limit { Some(newest) } else { last };
    Ok((found, through))
}

/// The target an agent's own memory entry has when it is a rule the agent wrote into the file
/// its agent reads instructions from (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`).
pub const AGENT_RULES: &str = "rules";

/// Whether a file is one an agent takes standing instructions from.
fn is_rules_file(file: &str) -> bool {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    matches!(name, "CLAUDE.md" | "AGENTS.md" | "GEMINI.md" | "copilot-instructions.md")
}

/// Records that everything up to event `through` was read for statements.
pub fn mark_said_read(store: &Store, through: i64) -> Result<()> {
    store.conn().execute(
        "INSERT INTO memory_screened (item_kind, item_id, version) VALUES (?1, 0, ?2)
         ON CONFLICT (item_kind, item_id) DO UPDATE SET version = max(version, excluded.version)",
        params![SAID_CURSOR, through],
    )?;
    Ok(())
}

/// The stored vector of an observation or summary (`o12`, `s3`) under `model`, if it has one.
pub fn source_vector(store: &Store, model: &str, source: &str) -> Result<Option<Vec<f32>>> {
    let (kind, id) = match source.split_at(1.min(source.len())) {
        ("s", id) => ("summary", id),
        ("o", id) => ("observation", id),
        _ => return Ok(None),
    };
    let Ok(id) = id.parse::<i64>() else { return Ok(None) };
    let mut stmt = store.conn().prepare_cached(
        "SELECT vec FROM vectors WHERE model = ?1 AND item_kind = ?2 AND item_id = ?3",
    )?;
    let blob: Option<Vec<u8>> =
        stmt.query_row(params![model, kind, id], |r| r.get(0)).optional()?;
    Ok(blob
        .map(|b| b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(tier: Tier, kind: Kind, text: &str) -> NewMemory {
        NewMemory {
            tier,
            kind,
            text: text.into(),
            project_id: None,
            importance: 5,
            sources: vec![],
            origin: "remembered".into(),
            supersedes: None,
        }
    }

    #[test]
    fn a_candidate_goes_through_review_and_keeps_its_id() {
        let mut store = Store::open_in_memory().expect("store");
        let id = insert(&mut store, &new(Tier::L1, Kind::Fact, "The store is SQLite."), 1)
            .expect("insert");
        let candidate = get(&store, id).expect("get").expect("there");
        assert_eq!((candidate.status, candidate.tier), (Status::Candidate, Tier::L1));
        let edited = edit(
            &mut store,
            id,
            &Edit { text: Some("The store is one SQLite file.".into()), ..Edit::default() },
            2,
        )
        .expect("edit");
        assert_eq!((edited.text.as_str(), edited.updated_at), ("The store is one SQLite file.", 2));
        let approved = approve(&mut store, id, true, 3).expect("approve");
        assert_eq!((approved.memory.tier, approved.memory.status), (Tier::L3, Status::Active));
        assert!(matches!(reject(&mut store, id, 4), Err(MemoryError::State { .. })));
        let forgotten = forget(&mut store, id, 5).expect("forget");
        assert_eq!((forgotten.id, forgotten.status), (id, Status::Forgotten));
        assert_eq!(restore(&mut store, id, 6).expect("restore").status, Status::Active);
        assert!(matches!(forget(&mut store, 99, 7), Err(MemoryError::NotFound(99))));
    }

    #[test]
    fn text_and_importance_are_checked() {
        let mut store = Store::open_in_memory().expect("store");
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        assert!(matches!(
            insert(&mut store, &new(Tier::L2, Kind::Fact, &long), 1),
            Err(MemoryError::TooLong(301))
        ));
        assert!(matches!(
            insert(&mut store, &new(Tier::L2, Kind::Fact, " \n "), 1),
            Err(MemoryError::EmptyText)
        ));
        let zero = NewMemory { importance: 0, ..new(Tier::L2, Kind::Fact, "ok") };
        assert!(matches!(insert(&mut store, &zero, 1), Err(MemoryError::Importance(0))));
        let ok = "支".repeat(MAX_TEXT_CHARS);
        assert!(insert(&mut store, &new(Tier::L2, Kind::Fact, &ok), 1).is_ok(), "characters");
    }

    #[test]
    fn approving_a_successor_supersedes_the_older_decision() {
        let mut store = Store::open_in_memory().expect("store");
        let old = insert(&mut store, &new(Tier::L2, Kind::Decision, "Use chrono for time."), 1)
            .expect("old");
        let successor = NewMemory {
            supersedes: Some(old),
            ..new(Tier::L1, Kind::Decision, "Use jiff for time.")
        };
        let id = insert(&mut store, &successor, 2).expect("candidate");
        assert_eq!(get(&store, old).expect("get").expect("old").status, Status::Active);
        let approved = approve(&mut store, id, false, 3).expect("approve");
        assert_eq!(approved.superseded, Some(old));
        let old = get(&store, old).expect("get").expect("old");
        assert_eq!((old.status, old.superseded_by), (Status::Superseded, Some(id)));
        let active = list(&store, &Filter { statuses: vec![Status::Active], ..Filter::default() })
            .expect("list");
        assert_eq!(active.iter().map(|m| m.id).collect::<Vec<_>>(), [id]);
    }

    #[test]
    fn search_finds_active_memories_and_candidates_only_by_tier() {
        use crate::store::search::SearchQuery;
        let mut store = Store::open_in_memory().expect("store");
        let active =
            insert(&mut store, &new(Tier::L2, Kind::Fact, "支付回调 uses HMAC signatures"), 1)
                .expect("active");
        let candidate = insert(
            &mut store,
            &new(Tier::L1, Kind::Problem, "HMAC check failed on 回调 retries"),
            1,
        )
        .expect("candidate");
        let query = |tiers: &[&str]| SearchQuery {
            text: "回调 HMAC".into(),
            tiers: tiers.iter().map(|t| (*t).to_owned()).collect(),
            limit: 10,
            max_terms: 12,
            ..SearchQuery::default()
        };
        let ids = |store: &Store, q: &SearchQuery| -> Vec<i64> {
            store.search(q).expect("search").hits.iter().map(|h| h.id).collect()
        };
        assert_eq!(ids(&store, &query(&[])), [active]);
        assert_eq!(ids(&store, &query(&["L1"])), [candidate]);
        let hit = &store.search(&query(&["L2"])).expect("search").hits[0];
        assert_eq!(
            (hit.kind, hit.tier.as_deref(), hit.item_type.as_str()),
            ("memory", Some("L2"), "fact")
        );
        store.record_hits([("memory", active)], 50).expect("hits");
        let memory = get(&store, active).expect("get").expect("there");
        assert_eq!((memory.hits, memory.last_hit), (1, Some(50)));
        assert_eq!(store.search(&query(&[])).expect("search").hits[0].parts.hit_count, 1);
        forget(&mut store, active, 60).expect("forget");
        assert!(ids(&store, &query(&[])).is_empty(), "forgotten memories are never found");
    }
}
