//! The JSON API under `/api` (documented in `docs/http-api.md`): sessions (and a page of
//! session cards for the viewer's home, one request whatever the page holds), events,
//! observations, summaries, projects, search, timeline, items by id, the injections on
//! record, stats and health (with each agent's wiring and hook latency), and
//! the two mutating routes (`POST /api/work`, `POST /api/shutdown`).
//!
//! Here is a query string, give me JSON from the same core calls the CLI makes. Parameters
//! are checked by name: an unknown or malformed one is a `bad_request` naming it. Must not:
//! return a private event or an observation distilled from one.

use std::collections::{HashMap, HashSet};
use std::sync::PoisonError;

use agent_memory_core::capture::{lost, spool};
use agent_memory_core::distil::mode::{self, Mode};
use agent_memory_core::install::{self, locate};
use agent_memory_core::recall::{self, ItemId, SearchRequest};
use agent_memory_core::store::Store;
use agent_memory_core::store::browse::Listing;
use agent_memory_core::time;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::{ApiError, Code, Shared};

/// The most rows one page returns.
const MAX_PAGE: usize = 500;
/// The most session cards one page returns (unless asked, [`DEFAULT_PAGE`]).
const MAX_CARDS: usize = 100;
/// The most observation lines a session card carries; its page has the rest.
const CARD_LINES: usize = 12;
/// Rows per page unless asked.
const DEFAULT_PAGE: usize = 50;

pub(super) fn routes() -> Router<Shared> {
    Router::new()
        .route("/api/health", get(health))
        .route("/api/stats", get(stats))
        .route("/api/health/details", get(health_details))
        .route("/api/projects", get(projects))
        .route("/api/sessions", get(sessions))
        .route("/api/sessions/{id}", get(session))
        .route("/api/session-cards", get(session_cards))
        .route("/api/events", get(events))
        .route("/api/events/{id}", get(event))
        .route("/api/observations", get(observations))
        .route("/api/observations/{id}", get(observation))
        .route("/api/summaries", get(summaries))
        .route("/api/summaries/{id}", get(summary))
        .route("/api/search", get(search))
        .route("/api/timeline", get(timeline))
        .route("/api/items", get(items))
        .route("/api/injections", get(injections))
        .route("/api/live", get(super::live::feed))
        .route("/api/work", post(work))
        .route("/api/shutdown", post(shutdown))
}

/// A query string's pairs; one that cannot be decoded is a `bad_request` like any other.
pub(super) struct Pairs(Vec<(String, String)>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Pairs {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        match Query::<Vec<(String, String)>>::from_request_parts(parts, state).await {
            Ok(Query(pairs)) => Ok(Pairs(pairs)),
            Err(err) => Err(ApiError::new(
                Code::BadRequest,
                format!("the query string cannot be read ({err}); encode it as a URL query"),
            )),
        }
    }
}

/// A query string, read by name; every parameter must be one the route knows.
pub(super) struct Params(Vec<(String, String)>);

impl Params {
    pub(super) fn new(Pairs(pairs): Pairs, known: &[&str]) -> Result<Params, ApiError> {
        if let Some((name, _)) = pairs.iter().find(|(k, _)| !known.contains(&k.as_str())) {
            return Err(ApiError::new(
                Code::BadRequest,
                format!("unknown parameter `{name}`; this route takes {}", known.join(", ")),
            ));
        }
        Ok(Params(pairs))
    }

    /// The value of `name`, trimmed; empty counts as absent.
    pub(super) fn get(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// Every value of `name`, repeated or comma-separated.
    pub(super) fn list(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .flat_map(|(_, v)| v.split(','))
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect()
    }

    pub(super) fn number(&self, name: &str, max: u64) -> Result<Option<u64>, ApiError> {
        let Some(value) = self.get(name) else { return Ok(None) };
        match value.parse::<u64>() {
            Ok(n) if n <= max => Ok(Some(n)),
            _ => Err(ApiError::new(
                Code::BadRequest,
                format!("`{name}` is `{value}`; pass a whole number from 0 to {max}"),
            )),
        }
    }

    fn flag(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
    }

    fn time(&self, name: &str) -> Result<Option<i64>, ApiError> {
        Ok(recall::parse_time(name, self.get(name).as_deref())?)
    }

    /// The filters and page every listing shares.
    pub(super) fn listing(&self) -> Result<Listing, ApiError> {
        self.listing_within(MAX_PAGE)
    }

    /// [`Params::listing`] with pages of at most `max` rows.
    fn listing_within(&self, max: usize) -> Result<Listing, ApiError> {
        Ok(Listing {
            agent: self.get("agent").map(|a| agent_memory_core::adapter::canonical_agent(&a)),
            project: self.get("project"),
            item_type: self.get("type"),
            since_ms: self.time("since")?,
            until_ms: self.time("until")?,
            after_id: self.number("after", i64::MAX as u64)?.map(|n| n as i64),
            before_id: self.number("before", i64::MAX as u64)?.map(|n| n as i64),
            session_id: None,
            limit: self.number("limit", max as u64)?.map_or(DEFAULT_PAGE.min(max), |n| n as usize),
        })
    }
}

const LIST_PARAMS: &[&str] =
    &["agent", "project", "type", "since", "until", "after", "before", "limit"];

/// A row id from a path: a number, or the id search prints for this kind (`o12` on the
/// observation route, never `e12`).
fn id_of(raw: &str, what: &str, letter: Option<char>) -> Result<i64, ApiError> {
    let digits = raw.trim_start_matches('#');
    let digits = letter.and_then(|l| digits.strip_prefix(l)).unwrap_or(digits);
    digits.parse::<i64>().map_err(|_| {
        ApiError::new(
            Code::BadRequest,
            format!("`{raw}` is not {what} id; pass a number such as 12"),
        )
    })
}

fn private(kind: &str, id: &str) -> ApiError {
    ApiError::new(
        Code::Private,
        format!("{kind} {id} is private (it touched a sensitive file) and is not shown here"),
    )
}

fn missing(kind: &str, id: i64) -> ApiError {
    ApiError::new(Code::NotFound, format!("no {kind} is stored under id {id}"))
}

async fn health(State(state): State<Shared>) -> Json<Value> {
    Json(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "pid": std::process::id(),
        "uptime_ms": state.started.elapsed().as_millis() as u64,
        "language": state.settings.config.distil.language,
    }))
}

async fn stats(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let params = Params::new(query, &["days"])?;
        let days = params.number("days", 366)?.unwrap_or(14) as i64;
        let home = state.settings.home.clone();
        let worker = state.worker.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let marks = *state.marks.borrow();
        state
            .with_store(move |store| {
                let now = time::now_ms();
                let windows = [("24h", now - 86_400_000), ("7d", now - 7 * 86_400_000)];
                let mut status = store.status(&windows)?;
                let lost = lost::peek(&home);
                status.add_lost(&windows, lost.count, lost.last_ms);
                let per_day = store.events_per_day(now - days * 86_400_000)?;
                let spool = spool::depth(&home.spool_dirs(), now);
                Ok(json!({
                    "store": status,
                    "spool": spool,
                    "events_per_day": per_day,
                    "worker": worker,
                    "marks": marks,
                }))
            })
            .await
    }
    .await;
    reply(result)
}

/// `GET /api/health/details`: each agent this user has (wired, or its config or program found)
/// with its wiring as `agent-memory doctor` checks it (`current`, `stale` or `missing`) and when
/// its last hook ran; and hook latency per hour over the last day (median and 95th percentile).
async fn health_details(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        Params::new(query, &[])?;
        state
            .with_store(move |store| {
                let now = time::now_ms();
                let mut agents = Vec::new();
                if let Some((dirs, bin)) = wiring_locations() {
                    let scope = install::Scope::User(dirs);
                    for agent in install::Agent::all() {
                        let state = match install::wiring(agent, &scope, &bin, &locate::read) {
                            Ok((install::Wiring::Current, _)) => "current",
                            Ok((install::Wiring::Stale, _)) => "stale",
                            Ok((install::Wiring::Missing, _)) => "missing",
                            Err(_) => "unreadable",
                        };
                        if state == "missing" && !locate::is_present(agent, &scope) {
                            continue;
                        }
                        let hooks = store.agent_hooks(agent.name(), 0)?;
                        agents.push(json!({
                            "agent": agent.name(),
                            "wiring": state,
                            "last_hook_at_ms": hooks.last_run_at,
                        }));
                    }
                }
                let latency = store.hook_latency_by_hour(now - 86_400_000)?;
                Ok(json!({ "agents": agents, "hook_latency": latency }))
            })
            .await
    }
    .await;
    reply(result)
}

/// This user's config directories and the binary hooks run, found as `agent-memory install`
/// finds them (core's `install::locate`).
fn wiring_locations() -> Option<(install::UserDirs, String)> {
    let exe = std::env::current_exe().and_then(std::fs::canonicalize).ok()?;
    let dirs = locate::user_dirs().ok()?;
    let bin = locate::hooks_binary(exe.to_str()?, &dirs.home);
    Some((dirs, bin))
}

async fn projects(State(state): State<Shared>) -> Response {
    reply(state.with_store(|store| Ok(json!({ "projects": store.list_projects()? }))).await)
}

async fn sessions(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let listing =
            Params::new(query, &["agent", "project", "since", "until", "before", "limit"])?
                .listing()?;
        state
            .with_store(move |store| {
                let listing = recall::checked_listing(store, listing)?;
                Ok(json!({ "sessions": store.list_sessions(&listing)? }))
            })
            .await
    }
    .await;
    reply(result)
}

/// `GET /api/session-cards`: a page of sessions as the viewer's home shows them, each with its
/// summary (or first prompt), its observations one line each with their type's emoji, and its
/// event count; the next page starts after `next`. The first page also names the filters'
/// choices: the agents that recorded sessions and the configured mode's observation types.
async fn session_cards(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let params = Params::new(
            query,
            &["agent", "project", "type", "since", "until", "before", "session", "limit"],
        )?;
        let listing = Listing {
            session_id: params.number("session", i64::MAX as u64)?.map(|n| n as i64),
            ..params.listing_within(MAX_CARDS)?
        };
        let first_page = listing.before_id.is_none() && listing.session_id.is_none();
        let shared = std::sync::Arc::clone(&state.settings);
        state
            .with_store(move |store| {
                let listing = recall::checked_listing(store, listing)?;
                let cards = store.session_cards(&listing, CARD_LINES)?;
                let next = (cards.len() == listing.limit && listing.limit > 0)
                    .then(|| cards.last().map(|c| c.id))
                    .flatten();
                let mut marks = TypeMarks::new(&shared);
                let mut sessions = Vec::with_capacity(cards.len());
                for card in &cards {
                    let mut value = serde_json::to_value(card).unwrap_or_default();
                    if let Some(lines) = value["lines"].as_array_mut() {
                        for (line, of) in lines.iter_mut().zip(&card.lines) {
                            line["emoji"] = json!(marks.emoji(&of.mode, &of.kind));
                        }
                    }
                    sessions.push(value);
                }
                let mut page = json!({ "sessions": sessions, "next": next });
                if first_page {
                    page["agents"] = json!(store.session_agents()?);
                    page["types"] = json!(marks.configured_types());
                }
                Ok(page)
            })
            .await
    }
    .await;
    reply(result)
}

/// The emoji of observation types, from the modes that named them (read once per request; a
/// mode that no longer loads marks nothing, and the viewer shows a plain mark instead).
struct TypeMarks<'a> {
    settings: &'a crate::mcp::Settings,
    /// Each mode by name and language, or `None` when it does not load.
    modes: HashMap<String, Option<Mode>>,
}

impl<'a> TypeMarks<'a> {
    fn new(settings: &'a crate::mcp::Settings) -> TypeMarks<'a> {
        TypeMarks { settings, modes: HashMap::new() }
    }

    fn mode(&mut self, name: &str, language: &str) -> Option<&Mode> {
        let dir = self.settings.home.modes_dir();
        self.modes
            .entry(format!("{name}\n{language}"))
            .or_insert_with(|| mode::load(name, language, Some(&dir)).ok())
            .as_ref()
    }

    fn emoji(&mut self, mode: &str, kind: &str) -> Option<String> {
        Some(self.mode(mode, "en")?.type_term(kind)?.emoji.clone())
    }

    /// The configured mode's types, each with its emoji and its label in both languages.
    fn configured_types(&mut self) -> Vec<Value> {
        let name = self.settings.config.distil.mode.clone();
        let zh: HashMap<String, String> = self
            .mode(&name, "zh-CN")
            .map(|m| m.types.iter().map(|t| (t.key.clone(), t.label.clone())).collect())
            .unwrap_or_default();
        let Some(mode) = self.mode(&name, "en") else { return Vec::new() };
        mode.types
            .iter()
            .filter(|t| mode.emits_type(&t.key))
            .map(|t| {
                json!({
                    "key": t.key,
                    "emoji": t.emoji,
                    "label": { "en": t.label, "zh": zh.get(&t.key).unwrap_or(&t.label) },
                })
            })
            .collect()
    }
}

async fn session(State(state): State<Shared>, Path(raw): Path<String>) -> Response {
    let result = async {
        let id = id_of(&raw, "a session", None)?;
        state.with_store(move |store| session_page(store, id)).await
    }
    .await;
    reply(result)
}

/// A session with its summary, its observations and events, and the project's observations
/// from every agent while it ran (the timeline across agents).
fn session_page(store: &Store, id: i64) -> Result<Value, ApiError> {
    let session = store.session_row(id)?.ok_or_else(|| missing("session", id))?;
    let summary = match session.summary_id {
        Some(sid) => store.summary(sid)?,
        None => None,
    };
    let own = Listing { session_id: Some(id), limit: MAX_PAGE, ..Listing::default() };
    let mut observations = store.list_observations(&own)?;
    observations.reverse();
    let mut events = store.list_events(&own)?;
    events.reverse();
    let mut across = Vec::new();
    if let Some(key) = &session.project_key {
        let window = Listing {
            project: Some(key.clone()),
            since_ms: Some(session.started_at_ms),
            until_ms: Some(session.last_event_at_ms + 1),
            limit: MAX_PAGE,
            ..Listing::default()
        };
        across = store.list_observations(&window)?;
        across.reverse();
    }
    Ok(json!({
        "session": session,
        "summary": summary,
        "observations": observations,
        "events": events,
        "timeline": across,
    }))
}

async fn events(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let listing = Params::new(query, LIST_PARAMS)?.listing()?;
        state
            .with_store(move |store| {
                let listing = recall::checked_listing(store, listing)?;
                Ok(json!({ "events": store.list_events(&listing)? }))
            })
            .await
    }
    .await;
    reply(result)
}

async fn event(State(state): State<Shared>, Path(raw): Path<String>) -> Response {
    let result = async {
        let id = id_of(&raw, "an event", Some('e'))?;
        state.with_store(move |store| event_json(store, id)).await
    }
    .await;
    reply(result)
}

fn event_json(store: &Store, id: i64) -> Result<Value, ApiError> {
    if store.is_private('e', id)? {
        return Err(private("event", &format!("e{id}")));
    }
    let stored = store.event(id)?.ok_or_else(|| missing("event", id))?;
    let e = &stored.event;
    let session_id = store.session_row_id(&e.agent, &e.session)?;
    Ok(json!({
        "id": id,
        "session_id": session_id,
        "session": e.session,
        "agent": e.agent,
        "kind": e.kind.as_str(),
        "tool": e.tool,
        "summary": e.summary,
        "body": e.body,
        "files": e.files,
        "cwd": e.cwd,
        "at_ms": e.at_ms,
    }))
}

async fn observations(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let listing = Params::new(query, LIST_PARAMS)?.listing()?;
        state
            .with_store(move |store| {
                let listing = recall::checked_listing(store, listing)?;
                Ok(json!({ "observations": store.list_observations(&listing)? }))
            })
            .await
    }
    .await;
    reply(result)
}

async fn observation(State(state): State<Shared>, Path(raw): Path<String>) -> Response {
    let result = async {
        let id = id_of(&raw, "an observation", Some('o'))?;
        state.with_store(move |store| observation_json(store, id)).await
    }
    .await;
    reply(result)
}

/// An observation in full, with its session's row id and its source events (never private
/// ones; an observation with a private source is itself private).
fn observation_json(store: &Store, id: i64) -> Result<Value, ApiError> {
    if store.is_private('o', id)? {
        return Err(private("observation", &format!("o{id}")));
    }
    let o = store.observation(id)?.ok_or_else(|| missing("observation", id))?;
    let session_id = store.session_row_id(&o.agent, &o.session)?;
    let mut sources = Vec::new();
    for event_id in &o.draft.source_event_ids {
        if let Ok(event) = event_json(store, *event_id) {
            sources.push(event);
        }
    }
    let mut value = serde_json::to_value(&o).unwrap_or_default();
    value["session_id"] = json!(session_id);
    value["source_events"] = Value::Array(sources);
    // The files it rests on, as the project's folder holds them now.
    let kind = agent_memory_core::store::recall::ItemKind::Observation;
    let checked = agent_memory_core::anchor::check(store, None, &[(kind, id)], time::now_ms());
    value["anchors"] = json!(checked.get(&(kind, id)).map(|a| a.0.clone()).unwrap_or_default());
    Ok(value)
}

async fn summaries(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let listing = Params::new(query, LIST_PARAMS)?.listing()?;
        state
            .with_store(move |store| {
                let listing = recall::checked_listing(store, listing)?;
                Ok(json!({ "summaries": store.list_summaries(&listing)? }))
            })
            .await
    }
    .await;
    reply(result)
}

async fn summary(State(state): State<Shared>, Path(raw): Path<String>) -> Response {
    let result = async {
        let id = id_of(&raw, "a summary", Some('s'))?;
        state.with_store(move |store| summary_json(store, id)).await
    }
    .await;
    reply(result)
}

fn summary_json(store: &Store, id: i64) -> Result<Value, ApiError> {
    let m = store.summary(id)?.ok_or_else(|| missing("summary", id))?;
    let session_id = store.session_row_id(&m.agent, &m.session)?;
    let mut value = serde_json::to_value(&m).unwrap_or_default();
    value["session_id"] = json!(session_id);
    Ok(value)
}

/// A memory in full: candidates, active and retired ones alike, as `agent-memory show` reads
/// them.
fn memory_json(store: &Store, id: i64) -> Result<Value, ApiError> {
    let found = agent_memory_core::store::memories::get(store, id)
        .map_err(|err| ApiError::from(recall::RecallError::Memory(err)))?;
    let memory = found.ok_or_else(|| missing("memory", id))?;
    Ok(serde_json::to_value(&memory).unwrap_or_default())
}

async fn search(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let params = Params::new(
            query,
            &[
                "q", "limit", "kind", "tier", "type", "agent", "project", "since", "until",
                "explain",
            ],
        )?;
        let request = SearchRequest {
            query: params.get("q").unwrap_or_default(),
            limit: params.number("limit", u32::MAX as u64)?.map(|n| n as usize),
            kinds: params.list("kind"),
            tiers: params.list("tier"),
            types: params.list("type"),
            agent: params.get("agent"),
            project: params.get("project"),
            since: params.get("since"),
            until: params.get("until"),
        };
        if request.query.trim().is_empty() {
            return Err(ApiError::new(
                Code::BadRequest,
                "`q` is empty; pass the words to look for",
            ));
        }
        let explain = params.flag("explain");
        let shared = std::sync::Arc::clone(&state.settings);
        let hit_log = std::sync::Arc::clone(&state.hits);
        state
            .with_store(move |store| {
                let (query, results) = shared.recall.reader(store).search(request)?;
                hit_log.add(results.hits.iter().map(|h| (h.kind, h.id)));
                let ids: Vec<(ItemId, &agent_memory_core::store::search::SearchHit)> = results
                    .hits
                    .iter()
                    .filter_map(|hit| Some((ItemId::of_kind(hit.kind, hit.id)?, hit)))
                    .collect();
                let private = store.private_among(
                    &ids.iter().map(|(id, hit)| (id.letter(), hit.id)).collect::<Vec<_>>(),
                )?;
                let mut hits = Vec::new();
                for (id, hit) in ids {
                    if private.contains(&(id.letter(), hit.id)) {
                        continue;
                    }
                    let mut value = serde_json::to_value(hit).unwrap_or_default();
                    value["ref"] = json!(id.to_string());
                    if !explain && let Some(map) = value.as_object_mut() {
                        map.remove("parts");
                    }
                    hits.push(value);
                }
                Ok(json!({
                    "query": query.text,
                    "hits": hits,
                    "fallback": results.fallback,
                    "semantic": results.semantic,
                    "explain": explain,
                }))
            })
            .await
    }
    .await;
    reply(result)
}

/// The injections on record, newest first: the same JSON as `agent-memory log --json`.
async fn injections(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let params = Params::new(query, &["session", "agent", "project", "limit"])?;
        let request = recall::InjectionRequest {
            session: params.get("session"),
            agent: params.get("agent"),
            project: params.get("project"),
            limit: params.number("limit", recall::MAX_INJECTIONS as u64)?.map(|n| n as usize),
        };
        state.with_store(move |store| Ok(json!(recall::injections(store, request)?))).await
    }
    .await;
    reply(result)
}

async fn timeline(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let params = Params::new(query, &["anchor", "before", "after"])?;
        let anchor = params.get("anchor").unwrap_or_default();
        let span = |name| -> Result<usize, ApiError> {
            let n = params.number(name, recall::MAX_LIMIT as u64)?;
            Ok(n.map_or(recall::TIMELINE_SPAN, |n| n as usize))
        };
        let (before, after) = (span("before")?, span("after")?);
        let shared = std::sync::Arc::clone(&state.settings);
        state
            .with_store(move |store| {
                let timeline = shared.recall.reader(store).timeline(&anchor, before, after)?;
                Ok(json!({ "anchor": timeline.anchor.to_string(), "items": timeline.items }))
            })
            .await
    }
    .await;
    reply(result)
}

async fn items(State(state): State<Shared>, query: Pairs) -> Response {
    let result = async {
        let params = Params::new(query, &["ids"])?;
        let ids = params.list("ids");
        if ids.is_empty() || ids.len() > 100 {
            return Err(ApiError::new(
                Code::BadRequest,
                "`ids` takes 1 to 100 ids such as o12,s3,e45",
            ));
        }
        state
            .with_store(move |store| {
                let mut found = Vec::new();
                let mut missing = Vec::new();
                let mut seen = HashSet::new();
                for raw in ids {
                    let Ok(id) = raw.parse::<ItemId>() else {
                        missing.push(json!({ "id": raw, "code": "bad_request" }));
                        continue;
                    };
                    if !seen.insert(id) {
                        continue;
                    }
                    let item = match id {
                        ItemId::Observation(n) => observation_json(store, n),
                        ItemId::Summary(n) => summary_json(store, n),
                        ItemId::Memory(n) => memory_json(store, n),
                        ItemId::Event(n) => event_json(store, n),
                    };
                    match item {
                        Ok(item) => found.push(json!({ "id": id.to_string(), "item": item })),
                        Err(err) if err.code == Code::StoreUnavailable => return Err(err),
                        Err(err) => missing.push(json!({ "id": id.to_string(), "code": err.code })),
                    }
                }
                Ok(json!({ "items": found, "missing": missing }))
            })
            .await
    }
    .await;
    reply(result)
}

/// Starts a `work` pass now instead of at the next interval.
async fn work(State(state): State<Shared>) -> Response {
    state.nudge.notify_one();
    (StatusCode::ACCEPTED, Json(json!({ "accepted": true }))).into_response()
}

/// Stops the server gracefully, as `agent-memory serve --stop` asks.
async fn shutdown(State(state): State<Shared>) -> Response {
    state.request_stop();
    (StatusCode::ACCEPTED, Json(json!({ "stopping": true }))).into_response()
}

/// A handler's answer: its JSON, or the error in the API's one shape.
pub(super) fn reply(result: Result<Value, ApiError>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(err) => err.into_response(),
    }
}
