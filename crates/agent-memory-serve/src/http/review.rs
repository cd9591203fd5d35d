//! The review queue and the memory a person manages (ARCHITECTURE.md, code map:
//! `http/review.rs`): the candidates for long-term memory and the decisions on them, one at a
//! time or a selection at once (approve into the project (L2) or into global memory (L3),
//! edit, reject); and project and global memory itself, listed with what each replaced or was
//! replaced by and where it came from, to edit, forget and bring back. Every change goes
//! through core's `memory::Writer`, the same calls `agent-memory review`, `forget` and
//! `forget --undo` make and by the same rules (an edit of a forgotten, rejected or superseded
//! memory is a `conflict`; edited text is sanitized like anything captured; forgetting a
//! memory that replaced another brings the other back), behind the token gate every route
//! passes.
//!
//! Must not: change anything on a GET, or write memory rows other than through the writer.

use std::collections::HashSet;

use agent_memory_core::memory::{Actor, Writer};
use agent_memory_core::recall;
use agent_memory_core::store::Store;
use agent_memory_core::store::memories::{
    self, Edit, Filter, Kind, Memory, MemoryError, Status, Tier,
};
use agent_memory_core::time;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{Pairs, Params};
use super::{ApiError, Code, Shared};

/// The most memories one page of `GET /api/memories` returns (unless asked, 50).
const MAX_MEMORIES: usize = 200;
/// The most candidates one bulk decision takes; the viewer sends larger selections in parts.
const MAX_BULK: usize = 500;
/// The sources of a memory described in full; the rest are counted.
const SHOWN_SOURCES: usize = 5;
/// The longest supersession chain followed either way.
const MAX_CHAIN: usize = 20;

pub(super) fn routes() -> Router<Shared> {
    Router::new()
        .route("/api/review", get(queue).post(decide_many))
        .route("/api/review/{id}", post(decide))
        .route("/api/memories", get(memory_list))
        .route("/api/memories/{id}", get(memory_one).post(change))
}

/// The candidates, most important first, each with the active memory approving it would
/// retire (`supersedes_memory`), if any.
async fn queue(State(state): State<Shared>) -> Response {
    let result = state
        .with_store(|store| {
            let filter = Filter { statuses: vec![Status::Candidate], ..Filter::default() };
            let mut list = memories::list(store, &filter).map_err(memory_error)?;
            list.sort_by(|a, b| b.importance.cmp(&a.importance).then(a.id.cmp(&b.id)));
            let mut out = Vec::new();
            for m in list {
                let older = match m.supersedes {
                    Some(id) => memories::get(store, id).map_err(memory_error)?,
                    None => None,
                };
                let mut value = serde_json::to_value(&m).unwrap_or_default();
                value["supersedes_memory"] = serde_json::to_value(older).unwrap_or_default();
                out.push(value);
            }
            Ok(json!({ "candidates": out }))
        })
        .await;
    super::api::reply(result)
}

/// What the viewer asks for one candidate.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Decision {
    /// `approve`, `approve_global`, `edit` or `reject`.
    action: String,
    /// The new text, for `edit`.
    text: Option<String>,
    /// The new kind, for `edit`.
    kind: Option<String>,
}

/// A memory's id from a path or a body: `m12`, `#m12` or `12`.
fn memory_id(raw: &str) -> Result<i64, ApiError> {
    raw.trim().trim_start_matches(['m', '#']).parse::<i64>().map_err(|_| {
        ApiError::new(Code::BadRequest, format!("`{raw}` is not a memory id; pass one such as m12"))
    })
}

async fn decide(State(state): State<Shared>, Path(raw): Path<String>, body: Bytes) -> Response {
    let result = async {
        let id = memory_id(&raw)?;
        let decision: Decision = serde_json::from_slice(&body).map_err(|err| {
            ApiError::new(
                Code::BadRequest,
                format!(
                    "the body is not a decision ({err}); send {{\"action\": \"approve\" | \"approve_global\" | \"edit\" | \"reject\", \"text\"?, \"kind\"?}}"
                ),
            )
        })?;
        let config = state.settings.config.clone();
        state.with_store_mut(move |store| apply(store, &config, id, &decision)).await
    }
    .await;
    super::api::reply(result)
}

/// What the viewer asks for a selection of candidates.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Decisions {
    /// `approve`, `approve_global` or `reject`.
    action: String,
    /// The candidates, as numbers or ids such as `m12`.
    ids: Vec<Value>,
}

/// `POST /api/review`: one decision on many candidates, each through the writer as if decided
/// alone; a candidate that cannot take it (decided meanwhile, gone) is reported, and the rest
/// are decided all the same.
async fn decide_many(State(state): State<Shared>, body: Bytes) -> Response {
    let result = async {
        let asked: Decisions = serde_json::from_slice(&body).map_err(|err| {
            ApiError::new(
                Code::BadRequest,
                format!(
                    "the body is not a decision on candidates ({err}); send {{\"action\": \"approve\" | \"approve_global\" | \"reject\", \"ids\": [12, \"m13\"]}}"
                ),
            )
        })?;
        if !matches!(asked.action.as_str(), "approve" | "approve_global" | "reject") {
            return Err(ApiError::new(
                Code::BadRequest,
                format!("`action` is `{}`; pass approve, approve_global or reject", asked.action),
            ));
        }
        if asked.ids.is_empty() || asked.ids.len() > MAX_BULK {
            return Err(ApiError::new(
                Code::BadRequest,
                format!("`ids` holds {}; pass 1 to {MAX_BULK} candidates", asked.ids.len()),
            ));
        }
        let mut ids = Vec::with_capacity(asked.ids.len());
        let mut seen = HashSet::new();
        for raw in &asked.ids {
            let text = match raw {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let id = memory_id(&text)?;
            if seen.insert(id) {
                ids.push(id);
            }
        }
        let config = state.settings.config.clone();
        state
            .with_store_mut(move |store| {
                let mut done = Vec::new();
                let mut failed = Vec::new();
                for id in ids {
                    let mut writer = Writer::configured(store, &config, time::now_ms());
                    let outcome = match asked.action.as_str() {
                        "reject" => writer.reject(id).map(|m| (m, None)),
                        action => writer
                            .approve(id, action == "approve_global")
                            .map(|a| (a.memory, a.superseded)),
                    };
                    match outcome {
                        Ok((memory, superseded)) => {
                            done.push(json!({ "memory": memory, "superseded": superseded }));
                        }
                        Err(err) => {
                            let err = memory_error(err);
                            if err.code == Code::StoreUnavailable || err.code == Code::Internal {
                                return Err(err);
                            }
                            failed.push(json!({ "id": id, "code": err.code, "message": err.message }));
                        }
                    }
                }
                Ok(json!({ "action": asked.action, "done": done, "failed": failed }))
            })
            .await
    }
    .await;
    super::api::reply(result)
}

/// `GET /api/memories`: project (L2) and global (L3) memory, the most recently changed first,
/// by project, kind, tier and status (in use unless asked), a page at a time (`offset`), each
/// with its chain of replacements and where it came from.
async fn memory_list(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let params = Params::new(query, &["project", "kind", "tier", "status", "offset", "limit"])?;
        let mut tiers = Vec::new();
        for raw in params.list("tier") {
            tiers.push(Tier::parse(&raw).ok_or_else(|| {
                ApiError::new(Code::BadRequest, format!("`tier` is `{raw}`; pass L2 (project) or L3 (global), or L1 for candidates"))
            })?);
        }
        if tiers.is_empty() {
            tiers = vec![Tier::L2, Tier::L3];
        }
        let mut kinds = Vec::new();
        for raw in params.list("kind") {
            kinds.push(parse_kind(&raw)?);
        }
        let mut statuses = Vec::new();
        for raw in params.list("status") {
            if raw == "all" {
                statuses.clear();
                statuses.extend(Status::ALL);
                break;
            }
            statuses.push(Status::parse(&raw).ok_or_else(|| {
                ApiError::new(
                    Code::BadRequest,
                    format!("`status` is `{raw}`; pass active, forgotten, superseded, rejected, candidate or all"),
                )
            })?);
        }
        if statuses.is_empty() {
            statuses.push(Status::Active);
        }
        let offset = params.number("offset", u32::MAX as u64)?.unwrap_or(0) as usize;
        let limit = params.number("limit", MAX_MEMORIES as u64)?.unwrap_or(50) as usize;
        let project = params.get("project");
        state
            .with_store(move |store| {
                let project =
                    project.as_deref().map(|p| recall::known_project(store, p)).transpose()?;
                let filter = Filter {
                    tiers,
                    kinds,
                    statuses,
                    project,
                    limit: offset + limit + 1,
                    ..Filter::default()
                };
                let list = memories::list(store, &filter).map_err(memory_error)?;
                let more = list.len() > offset + limit;
                let mut out = Vec::new();
                for memory in list.into_iter().skip(offset).take(limit) {
                    out.push(memory_view(store, memory)?);
                }
                Ok(json!({ "memories": out, "next_offset": more.then_some(offset + limit) }))
            })
            .await
    }
    .await;
    super::api::reply(result)
}

/// `GET /api/memories/{id}`: one memory, whatever its status, as the list shows it.
async fn memory_one(State(state): State<Shared>, Path(raw): Path<String>) -> Response {
    let result = async {
        let id = memory_id(&raw)?;
        state
            .with_store(move |store| {
                let memory = memories::get(store, id)
                    .map_err(memory_error)?
                    .ok_or_else(|| memory_error(MemoryError::NotFound(id)))?;
                memory_view(store, memory)
            })
            .await
    }
    .await;
    super::api::reply(result)
}

/// What the viewer asks for one memory.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    /// `edit`, `forget` or `restore`.
    action: String,
    text: Option<String>,
    kind: Option<String>,
    importance: Option<i64>,
}

/// `POST /api/memories/{id}`: edit (text, kind, importance), forget, or restore what was
/// forgotten, as `review --edit`, `forget` and `forget --undo` do.
async fn change(State(state): State<Shared>, Path(raw): Path<String>, body: Bytes) -> Response {
    let result = async {
        let id = memory_id(&raw)?;
        let asked: Change = serde_json::from_slice(&body).map_err(|err| {
            ApiError::new(
                Code::BadRequest,
                format!(
                    "the body is not a change ({err}); send {{\"action\": \"edit\" | \"forget\" | \"restore\", \"text\"?, \"kind\"?, \"importance\"?}}"
                ),
            )
        })?;
        let edit = match asked.action.as_str() {
            "edit" => {
                let kind = asked.kind.as_deref().map(parse_kind).transpose()?;
                let importance = asked
                    .importance
                    .map(memories::check_importance)
                    .transpose()
                    .map_err(|err| ApiError::new(Code::BadRequest, format!("`importance`: {err}")))?;
                if asked.text.is_none() && kind.is_none() && importance.is_none() {
                    return Err(ApiError::new(
                        Code::BadRequest,
                        "an edit needs `text`, `kind` or `importance`: say what to change",
                    ));
                }
                Some(Edit { text: asked.text.clone(), kind, importance })
            }
            "forget" | "restore" => None,
            other => {
                return Err(ApiError::new(
                    Code::BadRequest,
                    format!("`action` is `{other}`; pass edit, forget or restore"),
                ));
            }
        };
        let config = state.settings.config.clone();
        state
            .with_store_mut(move |store| {
                let mut writer = Writer::configured(store, &config, time::now_ms());
                let memory = match (asked.action.as_str(), edit) {
                    ("edit", Some(change)) => writer.edit(id, change).map_err(|err| match err {
                        MemoryError::EmptyText | MemoryError::TooLong(_) => {
                            ApiError::new(Code::BadRequest, format!("`text`: {err}"))
                        }
                        other => memory_error(other),
                    })?,
                    ("forget", _) => writer.forget(&Actor::Person, id).map_err(memory_error)?,
                    _ => writer.restore(id).map_err(memory_error)?,
                };
                Ok(json!({ "action": asked.action, "memory": memory_view(store, memory)? }))
            })
            .await
    }
    .await;
    super::api::reply(result)
}

fn parse_kind(raw: &str) -> Result<Kind, ApiError> {
    Kind::parse(raw).ok_or_else(|| {
        ApiError::new(
            Code::BadRequest,
            format!("`kind` is `{raw}`; pass fact, decision, convention, problem or preference"),
        )
    })
}

/// A memory as the viewer's memory page shows it: the memory, its chain of replacements
/// (`chain`, oldest first, itself among them; empty when it replaced nothing and nothing
/// replaced it), the files it rests on (`anchors`, each `fresh`, `changed` or `gone`) and its
/// provenance (`source_items`: the first of its sources with their agent
/// and session, never a private one; `sources_total`).
fn memory_view(store: &Store, mut memory: Memory) -> Result<Value, ApiError> {
    // The files it rests on, checked against the working tree as `agent-memory show` checks
    // them; none for a memory that rests on no file.
    let kind = agent_memory_core::store::recall::ItemKind::Memory;
    let checked = agent_memory_core::anchor::check(
        store,
        None,
        &[(kind, memory.id)],
        agent_memory_core::time::now_ms(),
    );
    memory.anchors = Some(checked.get(&(kind, memory.id)).map(|a| a.0.clone()).unwrap_or_default());
    let chain = chain_of(store, &memory)?;
    let mut items = Vec::new();
    for source in memory.sources.iter().take(SHOWN_SOURCES) {
        if let Some(item) = source_item(store, source)? {
            items.push(item);
        }
    }
    let mut value = serde_json::to_value(&memory).unwrap_or_default();
    value["chain"] = Value::Array(chain);
    value["source_items"] = Value::Array(items);
    value["sources_total"] = json!(memory.sources.len());
    Ok(value)
}

/// What a memory replaced and what replaced it, followed both ways, oldest first.
fn chain_of(store: &Store, memory: &Memory) -> Result<Vec<Value>, ApiError> {
    let link = |m: &Memory| {
        json!({
            "id": m.id, "text": m.text, "status": m.status, "tier": m.tier,
            "created_at": m.created_at, "updated_at": m.updated_at,
            "superseded_by": m.superseded_by,
        })
    };
    let mut seen = HashSet::from([memory.id]);
    let mut older = Vec::new();
    let mut at = memory.supersedes;
    while let Some(id) = at.filter(|id| seen.insert(*id)).filter(|_| older.len() < MAX_CHAIN) {
        let Some(m) = memories::get(store, id).map_err(memory_error)? else { break };
        at = m.supersedes;
        older.push(m);
    }
    let mut newer = Vec::new();
    let mut at = memory.superseded_by;
    while let Some(id) = at.filter(|id| seen.insert(*id)).filter(|_| newer.len() < MAX_CHAIN) {
        let Some(m) = memories::get(store, id).map_err(memory_error)? else { break };
        at = m.superseded_by;
        newer.push(m);
    }
    if older.is_empty() && newer.is_empty() {
        return Ok(Vec::new());
    }
    let mut chain: Vec<Value> = older.iter().rev().map(link).collect();
    chain.push(link(memory));
    chain.extend(newer.iter().map(link));
    Ok(chain)
}

/// One source of a memory (`o12`, `s3`, `e45`) with its title, agent and session; `None` for
/// one that is private or no longer stored.
fn source_item(store: &Store, raw: &str) -> Result<Option<Value>, ApiError> {
    let Ok(id) = raw.parse::<recall::ItemId>() else { return Ok(None) };
    if store.is_private(id.letter(), id.number())? {
        return Ok(None);
    }
    let found = match id {
        recall::ItemId::Observation(n) => store
            .observation(n)?
            .map(|o| ("observation", o.draft.title, o.agent, o.session, o.draft.at_ms)),
        recall::ItemId::Summary(n) => {
            store.summary(n)?.map(|m| ("summary", m.draft.request, m.agent, m.session, m.at_ms))
        }
        recall::ItemId::Event(n) => store.event(n)?.map(|e| {
            let e = e.event;
            ("event", e.summary, e.agent, e.session, e.at_ms)
        }),
        recall::ItemId::Memory(_) => None,
    };
    let Some((kind, title, agent, session, at_ms)) = found else { return Ok(None) };
    // A teammate's item names them first (`alice, codex`); the session is the agent's.
    let own_agent = agent.rsplit(", ").next().unwrap_or(&agent).to_owned();
    let session_id = store.session_row_id(&own_agent, &session)?;
    Ok(Some(json!({
        "ref": id.to_string(), "kind": kind, "title": title, "agent": agent,
        "session": session, "session_id": session_id, "at_ms": at_ms,
    })))
}

fn apply(
    store: &mut agent_memory_core::store::Store,
    config: &agent_memory_core::config::Config,
    id: i64,
    decision: &Decision,
) -> Result<Value, ApiError> {
    let mut writer = Writer::configured(store, config, time::now_ms());
    let memory = match decision.action.as_str() {
        "approve" | "approve_global" => {
            let approved =
                writer.approve(id, decision.action == "approve_global").map_err(memory_error)?;
            return Ok(json!({ "memory": approved.memory, "superseded": approved.superseded }));
        }
        "reject" => writer.reject(id).map_err(memory_error)?,
        "edit" => {
            let kind = decision.kind.as_deref().map(parse_kind).transpose()?;
            let change = Edit { text: decision.text.clone(), kind, importance: None };
            writer.edit(id, change).map_err(|err| match err {
                MemoryError::EmptyText | MemoryError::TooLong(_) => {
                    ApiError::new(Code::BadRequest, format!("`text`: {err}"))
                }
                other => memory_error(other),
            })?
        }
        other => {
            return Err(ApiError::new(
                Code::BadRequest,
                format!("`action` is `{other}`; pass approve, approve_global, edit or reject"),
            ));
        }
    };
    Ok(json!({ "memory": memory }))
}

fn memory_error(err: MemoryError) -> ApiError {
    match err {
        MemoryError::NotFound(_) => ApiError::new(Code::NotFound, err.to_string()),
        MemoryError::State { .. } | MemoryError::NotYours { .. } => {
            ApiError::new(Code::Conflict, err.to_string())
        }
        MemoryError::EmptyText | MemoryError::TooLong(_) | MemoryError::Importance(_) => {
            ApiError::new(Code::BadRequest, err.to_string())
        }
        MemoryError::Store(err) => err.into(),
    }
}
