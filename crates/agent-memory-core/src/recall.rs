//! Reading memory back: the one API that `search`, `timeline` and `get` take on every front end
//! (the command line, the MCP tools and the HTTP API).
//!
//! Owns what a read means: the search request and its checks (limits, kinds, tiers, types,
//! agents, projects and times), timeline anchors, the typed item id (`o12`, `s3`, `m7`, `e45`)
//! and reading items by it, and counting what a search handed out. Front ends parse their own
//! input into a [`SearchRequest`] or [`ItemId`]s and render what comes back; they never check a
//! filter or dispatch on an id's letter themselves, so the same mistake gets the same answer
//! everywhere. Must not: render (front ends do), or decide what an agent is handed unasked
//! (that is [`crate::inject`]).

pub mod text;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::Serialize;

use crate::config::SearchConfig;
use crate::distil::StoredEvent;
use crate::embed::{Embedder, SparseEncoder};
use crate::event::EventKind;
use crate::store::browse::Listing;
use crate::store::distilled::{Observation, Summary, TimelineItem};
use crate::store::injections::{Injection, InjectionFilter, LastHanded};
use crate::store::memories::{self, Memory, MemoryError};
use crate::store::recall::ItemKind;
use crate::store::search::{Ranking, SearchHit, SearchQuery, SearchResults};
use crate::store::{Store, StoreError};
use crate::{adapter, project, time};

/// The most results one search returns, ids one read takes, and items a timeline spans.
pub const MAX_LIMIT: usize = 100;
/// Observations on each side of a timeline's anchor unless asked.
pub const TIMELINE_SPAN: usize = 5;

/// Why a read could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum RecallError {
    /// The caller asked for something malformed or unknown; the message says what to pass.
    #[error("{0}")]
    Invalid(String),
    /// Nothing is stored under what was asked for.
    #[error("{0}")]
    Missing(String),
    #[error("reading the store failed: {0}; run `agent-memory status` to check it")]
    Store(#[from] StoreError),
    #[error("reading memory failed: {0}; run `agent-memory status` to check it")]
    Memory(#[from] MemoryError),
}

/// The id of one stored item, as search results, timelines and briefings print it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemId {
    /// `o12`, or just `12`.
    Observation(i64),
    /// `s3`.
    Summary(i64),
    /// `m7`.
    Memory(i64),
    /// `e45`.
    Event(i64),
}

impl ItemId {
    /// The row id, without its kind.
    pub fn number(self) -> i64 {
        match self {
            ItemId::Observation(n) | ItemId::Summary(n) | ItemId::Memory(n) | ItemId::Event(n) => n,
        }
    }

    /// The id's letter: `o`, `s`, `m` or `e`.
    pub fn letter(self) -> char {
        match self {
            ItemId::Observation(_) => 'o',
            ItemId::Summary(_) => 's',
            ItemId::Memory(_) => 'm',
            ItemId::Event(_) => 'e',
        }
    }

    /// The kind as search results name it: `observation`, `summary`, `memory`, `event`.
    pub fn kind(self) -> &'static str {
        match self {
            ItemId::Observation(_) => "observation",
            ItemId::Summary(_) => "summary",
            ItemId::Memory(_) => "memory",
            ItemId::Event(_) => "event",
        }
    }

    /// The id of a search hit of `kind` (as [`crate::store::search::SearchHit::kind`] names it).
    pub fn of_kind(kind: &str, number: i64) -> Option<ItemId> {
        match kind {
            "observation" => Some(ItemId::Observation(number)),
            "summary" => Some(ItemId::Summary(number)),
            "memory" => Some(ItemId::Memory(number)),
            "event" => Some(ItemId::Event(number)),
            _ => None,
        }
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.letter(), self.number())
    }
}

impl FromStr for ItemId {
    type Err = RecallError;

    /// `o12`/`12`, `s3`, `m7`, `e45`, in either case; a leading `#` is fine.
    fn from_str(raw: &str) -> Result<ItemId, RecallError> {
        let id = raw.trim().trim_start_matches('#');
        let (letter, digits) = match id.chars().next() {
            Some(c) if c.is_ascii_alphabetic() => (c.to_ascii_lowercase(), &id[1..]),
            _ => ('o', id),
        };
        let number = digits.parse::<i64>().ok().filter(|n| *n >= 0);
        let made = match (letter, number) {
            ('o', Some(n)) => Some(ItemId::Observation(n)),
            ('s', Some(n)) => Some(ItemId::Summary(n)),
            ('m', Some(n)) => Some(ItemId::Memory(n)),
            ('e', Some(n)) => Some(ItemId::Event(n)),
            _ => None,
        };
        made.ok_or_else(|| {
            RecallError::Invalid(format!(
                "`{}` is not an id; use o12 (observation), s3 (summary), m7 (memory) or e45 \
                 (event)",
                raw.trim()
            ))
        })
    }
}

/// One stored item, read in full. As JSON it is `{"kind": "observation", "item": {…}}`: the
/// item's own fields stay under `item`, because observations and memories have a `kind` of
/// their own.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", content = "item", rename_all = "snake_case")]
pub enum Item {
    Observation(Observation),
    Summary(Summary),
    Memory(Memory),
    Event(StoredEvent),
}

/// An item as `show` prints it: the item in full, and when it was last handed to an agent.
/// As JSON the item's own `{"kind", "item"}` with `last_handed` beside them (`null` when it
/// never was).
#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    #[serde(flatten)]
    pub item: Item,
    pub last_handed: Option<LastHanded>,
}

/// A listing of injections as a caller typed it, before it is checked.
#[derive(Debug, Clone, Default)]
pub struct InjectionRequest {
    /// The agent's own session id, matched as given.
    pub session: Option<String>,
    /// An agent's name or alias.
    pub agent: Option<String>,
    /// A project's key, name or root, or a directory inside it.
    pub project: Option<String>,
    /// 1 to [`MAX_INJECTIONS`]; [`DEFAULT_INJECTIONS`] when `None`.
    pub limit: Option<usize>,
}

/// Injections one listing returns unless asked for more.
pub const DEFAULT_INJECTIONS: usize = 20;
/// The most injections one listing returns.
pub const MAX_INJECTIONS: usize = 1000;

/// Injections newest first, for `agent-memory log` and `GET /api/injections`: an agent or a
/// project that nothing stored has is an error naming the valid ones; a session nothing was
/// handed to is an empty list.
pub fn injections(store: &Store, request: InjectionRequest) -> Result<Vec<Injection>, RecallError> {
    let limit = match request.limit {
        None => DEFAULT_INJECTIONS,
        Some(n @ 1..=MAX_INJECTIONS) => n,
        Some(n) => {
            return Err(invalid(format!(
                "`limit` is {n}; pass a number from 1 to {MAX_INJECTIONS}"
            )));
        }
    };
    let filter = InjectionFilter {
        session: request.session.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()),
        agent: request.agent.as_deref().map(|raw| known_agent(store, raw)).transpose()?,
        project: request.project.as_deref().map(|raw| known_project(store, raw)).transpose()?,
        limit,
    };
    Ok(store.injections(&filter)?)
}

/// A search as a caller typed it, before it is checked.
#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: String,
    /// 1 to [`MAX_LIMIT`]; the configured limit when `None`.
    pub limit: Option<usize>,
    /// `observation`, `summary`, `event`, `memory`; every kind when empty.
    pub kinds: Vec<String>,
    /// Memory tiers (`L1`, `L2`, `L3`); when given, only memories are searched.
    pub tiers: Vec<String>,
    /// Observation types, event kinds, `summary` or memory kinds.
    pub types: Vec<String>,
    /// An agent's name or alias.
    pub agent: Option<String>,
    /// A project's key, name or root, or a directory inside it.
    pub project: Option<String>,
    /// A date, a date and time, or an age (see [`time::parse_when`]).
    pub since: Option<String>,
    pub until: Option<String>,
}

/// A timeline: the project's observations around an anchor.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The item it is anchored on: the id asked for, or the best hit for the words.
    pub anchor: ItemId,
    pub at_ms: i64,
    pub items: Vec<TimelineItem>,
}

/// What every read needs besides the store: the search settings, the ranking, the embedding
/// and sparse models when search by meaning is on, and the observation types of the configured
/// mode. Built once by a front end (loading a model is not free) and shared by all its reads.
pub struct Settings {
    pub search: SearchConfig,
    pub ranking: Ranking,
    pub embedder: Option<Box<dyn Embedder>>,
    /// The learned sparse model that orders what search found.
    pub sparse: Option<Box<dyn SparseEncoder>>,
    /// Types a search may filter on beyond those already stored.
    pub mode_types: Vec<String>,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("search", &self.search)
            .field("ranking", &self.ranking)
            .field("embedder", &self.embedder.as_ref().map(|e| e.model()))
            .field("sparse", &self.sparse.as_ref().map(|e| e.model()))
            .field("mode_types", &self.mode_types)
            .finish()
    }
}

impl Settings {
    /// A reader of `store` with these settings.
    pub fn reader<'a>(&'a self, store: &'a Store) -> Reader<'a> {
        Reader { store, settings: self }
    }
}

/// Reads one store: search, timeline and get.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    pub store: &'a Store,
    pub settings: &'a Settings,
}

/// Marks the observations and memories among `hits` whose files changed or are gone, and lets
/// them yield their place to hits that still hold (a search in ranked order stays ranked; the
/// fallback's order is left as it is). A search only ever checks its own results.
fn mark_anchors(store: &Store, hits: &mut [SearchHit]) {
    let kind_of = |hit: &SearchHit| match hit.kind {
        "observation" => Some((ItemKind::Observation, hit.id)),
        "memory" => Some((ItemKind::Memory, hit.id)),
        _ => None,
    };
    let items: Vec<(ItemKind, i64)> = hits.iter().filter_map(kind_of).collect();
    if items.is_empty() {
        return;
    }
    let checked = crate::anchor::check(store, None, &items, time::now_ms());
    if checked.is_empty() {
        return;
    }
    let ranked = hits.is_sorted_by(|a, b| a.score >= b.score);
    for hit in hits.iter_mut() {
        let Some(anchors) = kind_of(hit).and_then(|key| checked.get(&key)) else { continue };
        hit.stale = anchors.mark(false, time::local_day);
        hit.score *= anchors.weight();
        hit.anchors = anchors.0.clone();
    }
    if ranked {
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    }
}

impl Reader<'_> {
    /// Checks `request` and runs it ([`crate::search::run`]): full text, and the models that
    /// are loaded. The query it ran is returned with the results; the caller counts the hits
    /// ([`Reader::record_hits`]) once it has handed them out.
    pub fn search(
        &self,
        request: SearchRequest,
    ) -> Result<(SearchQuery, SearchResults), RecallError> {
        let query = self.check(request)?;
        let models = crate::search::run::Models {
            embedder: self.settings.embedder.as_deref(),
            sparse: self.settings.sparse.as_deref(),
        };
        let (query, mut results) = crate::search::run::run(self.store, query, models)?;
        mark_anchors(self.store, &mut results.hits);
        Ok((query, results))
    }

    /// Counts search hits for ranking. A failure costs only the count, so it is logged, not
    /// returned.
    pub fn record_hits<'h>(&self, hits: impl IntoIterator<Item = (&'h str, i64)>) {
        if let Err(err) = self.store.record_hits(hits, time::now_ms()) {
            tracing::debug!(%err, "hit counts not updated");
        }
    }

    /// The project's observations around `anchor`: an id, or words whose best hit among
    /// observations, summaries and events anchors it.
    pub fn timeline(
        &self,
        anchor: &str,
        before: usize,
        after: usize,
    ) -> Result<Timeline, RecallError> {
        let text = anchor.trim();
        if text.is_empty() {
            return Err(RecallError::Invalid(
                "the anchor is empty; pass an id (o12, s3, e45) or words to search for".into(),
            ));
        }
        for (name, span) in [("before", before), ("after", after)] {
            if span > MAX_LIMIT {
                return Err(RecallError::Invalid(format!(
                    "`{name}` is {span}; pass a number from 0 to {MAX_LIMIT}"
                )));
            }
        }
        let single_word = !text.contains(char::is_whitespace);
        let id = match text.parse::<ItemId>() {
            Ok(id) if single_word => id,
            // Not an id: the best hit anchors the timeline on something that happened in a
            // session.
            _ => {
                let query = SearchQuery {
                    text: text.to_owned(),
                    limit: 1,
                    max_terms: self.settings.search.max_query_terms,
                    kinds: vec!["observation".into(), "summary".into(), "event".into()],
                    ..SearchQuery::default()
                };
                let hit = self.store.search(&query)?.hits.into_iter().next();
                hit.and_then(|hit| ItemId::of_kind(hit.kind, hit.id)).ok_or_else(|| {
                    RecallError::Missing(format!(
                        "nothing matches `{text}`; try other words or an id from a search"
                    ))
                })?
            }
        };
        if matches!(id, ItemId::Memory(_)) {
            return Err(RecallError::Invalid(format!(
                "{id} is a memory, which belongs to no point of a session; anchor a timeline on \
                 an observation, summary or event"
            )));
        }
        let found = self.store.anchor(id.letter(), id.number())?;
        let anchor = found.ok_or_else(|| not_stored(id))?;
        let items = self.store.timeline_around(&anchor, before, after)?;
        Ok(Timeline { anchor: id, at_ms: anchor.at_ms, items })
    }

    /// Each id with its item, or `None` when nothing is stored under it, in the order asked
    /// and without repeats.
    pub fn get(&self, ids: &[ItemId]) -> Result<Vec<(ItemId, Option<Item>)>, RecallError> {
        if ids.is_empty() {
            return Err(RecallError::Invalid(
                "no ids given; pass the ids to read, such as o12 s3 m7".into(),
            ));
        }
        if ids.len() > MAX_LIMIT {
            return Err(RecallError::Invalid(format!(
                "{} ids in one read; pass at most {MAX_LIMIT}, the ones worth reading",
                ids.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            if seen.insert(id) {
                out.push((id, get_one(self.store, id)?));
            }
        }
        // What each observation and memory rests on, as the files are now.
        let items: Vec<(ItemKind, i64)> = out
            .iter()
            .filter_map(|(_, item)| match item {
                Some(Item::Observation(o)) => Some((ItemKind::Observation, o.id)),
                Some(Item::Memory(m)) => Some((ItemKind::Memory, m.id)),
                _ => None,
            })
            .collect();
        let checked = crate::anchor::check(self.store, None, &items, time::now_ms());
        for (_, item) in &mut out {
            match item {
                Some(Item::Observation(o)) => {
                    let found = checked.get(&(ItemKind::Observation, o.id));
                    o.anchors = Some(found.map(|a| a.0.clone()).unwrap_or_default());
                }
                Some(Item::Memory(m)) => {
                    let found = checked.get(&(ItemKind::Memory, m.id));
                    m.anchors = Some(found.map(|a| a.0.clone()).unwrap_or_default());
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Items for `show`: each in full (in the order asked, each once), with when it was last
    /// handed to an agent; an id nothing is stored under is an error naming it.
    pub fn show(&self, ids: &[ItemId]) -> Result<Vec<Shown>, RecallError> {
        let mut shown = Vec::with_capacity(ids.len());
        for (id, item) in self.get(ids)? {
            let item = item.ok_or_else(|| not_stored(id))?;
            let last_handed = self.store.last_handed(&id.to_string())?;
            shown.push(Shown { item, last_handed });
        }
        Ok(shown)
    }

    /// Turns a request into the store's query, or says which field is wrong and what to pass.
    fn check(&self, request: SearchRequest) -> Result<SearchQuery, RecallError> {
        let text = request.query.trim();
        if text.is_empty() {
            return Err(invalid("`query` is empty; pass the words to look for"));
        }
        let limit = match request.limit {
            None => self.settings.search.limit.clamp(1, MAX_LIMIT),
            Some(n @ 1..=MAX_LIMIT) => n,
            Some(n) => {
                return Err(invalid(format!(
                    "`limit` is {n}; pass a number from 1 to {MAX_LIMIT}"
                )));
            }
        };
        let kinds = request.kinds.iter().map(|k| k.trim().to_lowercase()).collect::<Vec<_>>();
        for kind in &kinds {
            if ItemId::of_kind(kind, 0).is_none() {
                return Err(invalid(format!(
                    "`kind` is `{kind}`; pass observation, summary, event or memory"
                )));
            }
        }
        let mut tiers = Vec::with_capacity(request.tiers.len());
        for tier in &request.tiers {
            let parsed = memories::Tier::parse(tier).ok_or_else(|| {
                invalid(format!(
                    "`tier` is `{tier}`; pass L1 (candidates), L2 (project) or L3 (global)"
                ))
            })?;
            tiers.push(parsed.as_str().to_owned());
        }
        let types = request.types.iter().map(|t| t.trim().to_owned()).collect::<Vec<_>>();
        for item_type in &types {
            if !self.is_known_type(item_type)? {
                let observation_types = if self.settings.mode_types.is_empty() {
                    "bugfix, decision, …".to_owned()
                } else {
                    self.settings.mode_types.join(", ")
                };
                return Err(invalid(format!(
                    "`type` is `{item_type}`, which nothing stored has; pass an observation type \
                     ({observation_types}), an event kind ({}), `summary` or a memory kind ({})",
                    EventKind::ALL.map(EventKind::as_str).join(", "),
                    memories::Kind::ALL.map(memories::Kind::as_str).join(", ")
                )));
            }
        }
        Ok(SearchQuery {
            text: text.to_owned(),
            agent: request.agent.as_deref().map(|a| self.agent(a)).transpose()?,
            project: request.project.as_deref().map(|p| self.project(p)).transpose()?,
            since_ms: parse_time("since", request.since.as_deref())?,
            until_ms: parse_time("until", request.until.as_deref())?,
            kinds,
            tiers,
            types,
            limit,
            max_terms: self.settings.search.max_query_terms,
            ranking: self.settings.ranking.clone(),
            sparse: None,
        })
    }

    fn agent(&self, raw: &str) -> Result<String, RecallError> {
        known_agent(self.store, raw)
    }

    fn project(&self, raw: &str) -> Result<String, RecallError> {
        known_project(self.store, raw)
    }

    fn is_known_type(&self, item_type: &str) -> Result<bool, RecallError> {
        if item_type == "summary"
            || EventKind::parse(item_type).is_some()
            || memories::Kind::parse(item_type).is_some()
            || self.settings.mode_types.iter().any(|t| t == item_type)
        {
            return Ok(true);
        }
        // A type of an earlier mode is still searchable while observations carry it.
        Ok(self.store.has_observation_type(item_type)?)
    }
}

fn get_one(store: &Store, id: ItemId) -> Result<Option<Item>, RecallError> {
    Ok(match id {
        ItemId::Observation(n) => store.observation(n)?.map(Item::Observation),
        ItemId::Summary(n) => store.summary(n)?.map(Item::Summary),
        ItemId::Memory(n) => memories::get(store, n)?.map(Item::Memory),
        ItemId::Event(n) => store.event(n)?.map(Item::Event),
    })
}

/// The error for an id with nothing stored under it.
pub fn not_stored(id: ItemId) -> RecallError {
    RecallError::Missing(format!("nothing is stored under {id}; ids come from a search"))
}

/// Parses an optional `since`/`until` value, naming the field when it is malformed.
pub fn parse_time(field: &str, value: Option<&str>) -> Result<Option<i64>, RecallError> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(None) };
    time::parse_when(value, time::now_ms())
        .map(Some)
        .map_err(|err| invalid(format!("`{field}`: {err}")))
}

fn invalid(message: impl Into<String>) -> RecallError {
    RecallError::Invalid(message.into())
}

/// A project filter as typed, for every front end: a directory becomes its project's key;
/// anything else must be a stored project's key, name or root, so a misspelt name is an error
/// that lists the stored ones rather than an empty answer.
pub fn known_project(store: &Store, raw: &str) -> Result<String, RecallError> {
    let value = raw.trim();
    let path = Path::new(value);
    if !value.is_empty() && path.is_dir() {
        let roots = store.registered_roots()?;
        return Ok(project::resolve(path, &roots).key);
    }
    if store.has_project(value)? {
        return Ok(value.to_owned());
    }
    const SHOWN: usize = 8;
    let projects = store.list_projects()?;
    let names = projects.iter().take(SHOWN).map(|p| p.name.as_str()).collect::<Vec<_>>();
    let known = match projects.len() {
        0 => "no project is stored yet; pass a directory inside one".to_owned(),
        n if n > SHOWN => format!(
            "pass one of {} (and {} more: `agent-memory project list`), or a directory inside it",
            names.join(", "),
            n - SHOWN
        ),
        _ => format!("pass one of {}, or a directory inside it", names.join(", ")),
    };
    Err(invalid(format!("`project` is `{value}`, which is no stored project; {known}")))
}

/// A listing's filters checked like a search's, for the HTTP API's lists: an agent or a
/// project that nothing stored has is an error naming the valid ones, not an empty page.
pub fn checked_listing(store: &Store, mut listing: Listing) -> Result<Listing, RecallError> {
    listing.agent = listing.agent.as_deref().map(|raw| known_agent(store, raw)).transpose()?;
    listing.project =
        listing.project.as_deref().map(|raw| known_project(store, raw)).transpose()?;
    Ok(listing)
}

/// The canonical name of an agent the registry knows or `store` has sessions of: what every
/// filter by agent takes, so a misspelt name is an error that lists the right ones rather
/// than an empty answer.
pub fn known_agent(store: &Store, raw: &str) -> Result<String, RecallError> {
    let name = adapter::canonical_agent(raw);
    if adapter::find_agent(&name).is_some() || store.has_agent(&name)? {
        return Ok(name);
    }
    let known = adapter::AGENTS.iter().map(|spec| spec.name).collect::<Vec<_>>();
    Err(invalid(format!(
        "`agent` is `{}`, which has recorded nothing; pass one of {}",
        raw.trim(),
        known.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_keeps_its_kind() {
        let parse = |raw: &str| raw.parse::<ItemId>().ok();
        assert_eq!(parse("m7"), Some(ItemId::Memory(7)));
        assert_eq!(parse("o7"), Some(ItemId::Observation(7)));
        assert_eq!(parse("7"), Some(ItemId::Observation(7)));
        assert_eq!(parse("#E45"), Some(ItemId::Event(45)));
        assert_eq!(parse(" s3 "), Some(ItemId::Summary(3)));
        for bad in ["x7", "m", "", "o-1", "m7x", "🙂7"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(ItemId::Memory(7).to_string(), "m7");
    }
}
