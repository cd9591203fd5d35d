//! Search over everything stored — events, observations, session summaries and long-term
//! memories: here is a query
//! and filters, give me ranked hits, and say why each one ranks where it does.
//!
//! Two channels (ARCHITECTURE.md, `store/search.rs`). Full text: FTS5 BM25 over the CJK-bigram
//! shadow text (see [`super::fts`]), each kind from its own index, top candidates each. Its cost is
//! bounded by what it returns, not by the size of the table: FTS5's BM25 reads every row holding a
//! term to weigh it, so in a table larger than `SCORED_ROWS` (1,500 rows) each term's share is
//! estimated from its newest rows, only the rarest terms (together under that many rows) are
//! scored by BM25, and the common ones add their estimated weight to the rows that hold them,
//! read from those rows' own text. A query of common words only takes the newest rows holding
//! them. A small table is scored exactly, as before. Vectors, when the
//! caller brings a query vector and a [`VectorIndex`]: cosine similarity over observations,
//! summaries and what was said (prompts, closing answers, notes), top candidates, and a hit
//! found by vectors alone must reach a similarity floor.
//! Context adds to a candidate's own evidence: its neighbours in its session (observations
//! next to an observation; a prompt, closing answer or note next to another; the item right
//! after a question, its answer, more than the others), everything else
//! found in its session,
//! and the session channel (the session's observations, and its events, each taken together
//! as one text, BM25 over sessions, from the rarest terms' rows only), and a query naming its
//! agent, its project or a file it read or changed multiplies it. Every lever reaches raw
//! events as it reaches distilled items: most of what a person captured is never distilled.
//! A learned sparse model, when the caller brings the query's [`SparseQuery`], orders the best
//! candidates the channels found again: each one's match with the query (the dot product of
//! their sparse vectors, read by key for those candidates alone) and its relevance, both scaled
//! between the weakest and strongest among them, are mixed, `sparse_share` to the match. The
//! channels then bring `sparse_candidates` each instead of `candidates`, so that it has more to
//! order.
//! A channel judges only the kinds it can see: tool uses, session starts and ends and memories
//! have no vectors, so their own evidence is their full-text match in full, not the full-text
//! share of it.
//! Candidates are merged by item, then ranked by a weighted sum of relevance (both channels),
//! importance (what kind of item it is), freshness (a half-life) and how often search found it
//! before, weighed by [`crate::search::rank`] (this module finds; that one decides); [`Parts`] keeps every term for `--explain`. A raw event found with the observation
//! made from it is folded into that observation, so one answer takes one place; a summary
//! that holds nothing but its session's first prompt is left to that prompt's event. If FTS5
//! rejects a query, `LIKE` over
//! event summaries and bodies keeps a search from failing on odd input.
//!
//! Memories take part through full text only (they are short and few); by default only active
//! ones (L2, L3), with candidates (L1) when a tier filter asks for them. Forgotten, rejected
//! and superseded memories are never found.

use std::collections::HashMap;

use rusqlite::types::Value;

use super::vectors::{SAID_EVENTS, is_said};
use super::{Result, Store, fts};
use crate::embed::{SparseVector, sparse_dot};
use crate::search::context::{Neighbour, session_shares, spread};
pub use crate::search::plan::{Nearest, SearchQuery, SparseQuery, VectorQuery};
use crate::search::plan::{channel_candidates, vector_cut, widened};
use crate::search::query::NamedIn;
use crate::search::rank::{self, Scored, asks, sparse_mix};
pub use crate::search::rank::{Parts, Ranking, importance};

/// An item by kind and id.
type ItemKey = (&'static str, i64);

/// One ranked result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchHit {
    /// What was found: `observation`, `summary`, `event` or `memory`.
    pub kind: &'static str,
    pub id: i64,
    pub at_ms: i64,
    pub agent: String,
    pub project: Option<String>,
    pub session: String,
    /// The event's kind, the observation's type, or `summary`.
    #[serde(rename = "type")]
    pub item_type: String,
    pub tool: Option<String>,
    /// A memory's tier (`L1`, `L2`, `L3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    pub title: String,
    /// What a distilled item teaches in one line, beside its title: an observation's subtitle
    /// (cause → fix), a summary's first thing learned or done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lesson: Option<String>,
    /// About how many tokens reading the item in full costs (`agent-memory show`): an
    /// observation's or summary's stored size, an event's summary and body estimated.
    pub tokens: i64,
    /// Higher is better: the weighted sum of `parts`; 0 for fallback hits.
    pub score: f64,
    pub parts: Parts,
    /// Raw events found with this observation that it was made from, best first: shown
    /// beneath it rather than beside it, so that one answer takes one place.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<SearchHit>,
    /// The files an observation or memory rests on, checked against the working tree
    /// ([`crate::anchor`]); empty when it has none or is of another kind.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<crate::anchor::Checked>,
    /// What changed in them, as a person reads it (`src/pay.py changed since 2026-12-01`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<String>,
}

#[cfg(test)]
impl SearchHit {
    /// A hit of `kind` with nothing else said of it, for tests to fill in.
    pub(crate) fn bare(kind: &'static str, id: i64) -> SearchHit {
        SearchHit {
            kind,
            id,
            at_ms: 0,
            agent: String::new(),
            project: None,
            session: String::new(),
            item_type: String::new(),
            tool: None,
            tier: None,
            title: String::new(),
            lesson: None,
            tokens: 0,
            score: 0.0,
            parts: Parts::default(),
            folded: Vec::new(),
            anchors: Vec::new(),
            stale: None,
        }
    }
}

/// Hits, and whether the fallback produced them.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    pub fallback: bool,
    /// Whether the vector channel took part.
    pub semantic: bool,
}

/// Where each kind of hit comes from: its table, its index, and its id, type, tool and title.
struct Source {
    kind: &'static str,
    table: &'static str,
    fts: &'static str,
    /// Id, time, agent, project, session, type, tool, tier, title, tokens, lesson.
    columns: &'static str,
    /// What `x` (the table) is joined with: `s` its session, `p` its project.
    joins: &'static str,
    type_column: &'static str,
    agent_column: &'static str,
    at_column: &'static str,
    /// The text its full-text trigger indexes, for checking in memory which terms a row holds.
    text: &'static str,
    /// Whether its index holds the stems of its words too ([`fts::stemmed_text`]).
    stemmed: bool,
    /// Whether its items have neighbours: the ones before and after in the same session.
    /// Memories have no session, and a summary is its session's only one. Of events, only
    /// what was said ([`is_said`]): a prompt's neighbour is the answer to it, not a file read
    /// in between, and a session's start or end, which say nothing, is never lifted.
    neighbours: bool,
    /// Whether its items follow each other in their session by id (events, whose ids a hook
    /// hands out in the order things happened) rather than by time.
    ordered_by_id: bool,
    /// What a row must be for search to find it at all (SQL over `x`, after `AND`), or empty.
    searchable: &'static str,
}

impl Source {
    /// Whether `hit`, of this source, spreads evidence to its neighbours and receives theirs.
    fn has_neighbours(&self, hit: &SearchHit) -> bool {
        self.neighbours && (self.kind != "event" || is_said(&hit.item_type))
    }
}

const SESSION_JOINS: &str =
    "JOIN sessions s ON s.id = x.session_id LEFT JOIN projects p ON p.id = x.project_id";

const SOURCES: &[Source] = &[
    Source {
        kind: "observation",
        table: "observations",
        fts: "observations_fts",
        // A teammate's observation names who made it where an item names its agent.
        columns: "x.id, x.at, coalesce(x.team_member || ', ' || x.agent, x.agent), p.name,
                  s.source_id, x.kind, NULL, NULL, x.title, x.tokens, NULLIF(x.subtitle, '')",
        joins: SESSION_JOINS,
        type_column: "x.kind",
        agent_column: "x.agent",
        at_column: "x.at",
        text: "x.title || ' ' || x.subtitle || ' ' || x.facts || ' ' || x.narrative || ' ' ||
               x.concepts || ' ' || x.files_read || ' ' || x.files_modified || ' ' ||
               am_date_words(x.at)",
        stemmed: true,
        neighbours: true,
        ordered_by_id: false,
        searchable: "",
    },
    Source {
        kind: "summary",
        table: "summaries",
        fts: "summaries_fts",
        columns: "x.id, x.at, coalesce(x.team_member || ', ' || x.agent, x.agent), p.name,
                  s.source_id, 'summary', NULL, NULL, x.request,
                  x.tokens, COALESCE(json_extract(x.learned, '$[0]'), json_extract(x.completed, '$[0]'))",
        joins: SESSION_JOINS,
        type_column: "'summary'",
        agent_column: "x.agent",
        at_column: "x.at",
        text: "x.request || ' ' || x.investigated || ' ' || x.learned || ' ' || x.completed ||
               ' ' || x.next_steps || ' ' || am_date_words(x.at)",
        stemmed: true,
        neighbours: false,
        ordered_by_id: false,
        // A summary that holds nothing but what was asked is the session's first prompt said
        // again: the prompt's own event answers for it, with its time and its neighbours, and
        // the two would take two places for one thing said.
        searchable: "(x.investigated <> '[]' OR x.learned <> '[]' OR x.completed <> '[]'
                      OR x.next_steps <> '[]')",
    },
    Source {
        kind: "event",
        table: "events",
        fts: "events_fts",
        columns: "x.id, x.at, x.agent, p.name, s.source_id, x.kind, x.tool, NULL, x.summary,
                  am_tokens(x.summary || ' ' || x.body), NULL",
        joins: SESSION_JOINS,
        type_column: "x.kind",
        agent_column: "x.agent",
        at_column: "x.at",
        text: "x.summary || ' ' || x.body || ' ' || am_date_words(x.at)",
        stemmed: true,
        neighbours: true,
        ordered_by_id: true,
        searchable: "",
    },
    Source {
        kind: "memory",
        table: "memories",
        fts: "memories_fts",
        // A teammate's memory names who learned it where an item names its agent.
        columns: "x.id, x.updated_at,
                  CASE WHEN x.team_member IS NULL THEN x.origin
                       WHEN x.origin IN ('', 'remembered', 'distilled', 'imported')
                           THEN x.team_member
                       ELSE x.team_member || ', ' || x.origin END,
                  p.name, '', x.kind, NULL, x.tier, x.text, am_tokens(x.text), NULL",
        joins: "LEFT JOIN projects p ON p.id = x.project_id",
        type_column: "x.kind",
        agent_column: "x.origin",
        at_column: "x.updated_at",
        text: "x.text",
        stemmed: true,
        neighbours: false,
        ordered_by_id: false,
        searchable: "",
    },
];

impl Store {
    /// Searches with full text only.
    pub fn search(&self, query: &SearchQuery) -> Result<SearchResults> {
        self.search_hybrid(query, None)
    }

    /// Searches with full text and, when `vector` is given, vector similarity; best first.
    pub fn search_hybrid(
        &self,
        query: &SearchQuery,
        vector: Option<VectorQuery<'_>>,
    ) -> Result<SearchResults> {
        let sparse_coming = query.sparse.is_some();
        let nearest =
            vector.filter(|v| !v.index.is_empty()).map(|v| v.nearest(query, sparse_coming));
        self.search_meanwhile(query, sparse_coming, || nearest, || query.sparse.clone())
    }

    /// [`Store::search_hybrid`] for a caller whose query vector and sparse query may still be
    /// at work on other threads while the full-text channels run: `nearest` is called once
    /// the vector channel is needed (its rows taken as for `sparse_coming`), `sparse` once the
    /// candidates are ordered again, which is after the context has been read. `sparse_coming`
    /// says whether a sparse query is expected, which widens the channels from the start; when
    /// it then does not come (its model failed), the search runs again as one without it, so
    /// the answer is the one a search without it gives.
    pub(crate) fn search_meanwhile(
        &self,
        query: &SearchQuery,
        sparse_coming: bool,
        nearest: impl FnOnce() -> Option<Nearest>,
        sparse: impl FnOnce() -> Option<SparseQuery>,
    ) -> Result<SearchResults> {
        let mut nearest = Some(nearest);
        let mut found_nearest = None;
        let mut take_nearest = || {
            if let Some(call) = nearest.take() {
                found_nearest = call();
            }
            found_nearest.clone()
        };
        let first = self.search_with(query, sparse_coming, &mut take_nearest, sparse)?;
        match first {
            Ok(results) => Ok(results),
            Err(()) => {
                tracing::debug!("the sparse query did not come; searching again without it");
                let query = SearchQuery { sparse: None, ..query.clone() };
                let results = self.search_with(&query, false, &mut take_nearest, || None)?;
                Ok(results.unwrap_or_default())
            }
        }
    }

    /// One pass of [`Store::search_meanwhile`]; `Err(())` inside when the sparse query it
    /// widened for did not come.
    fn search_with(
        &self,
        query: &SearchQuery,
        sparse_coming: bool,
        nearest: &mut dyn FnMut() -> Option<Nearest>,
        sparse: impl FnOnce() -> Option<SparseQuery>,
    ) -> Result<std::result::Result<SearchResults, ()>> {
        let query = widened(query, sparse_coming);
        let query = query.as_ref();
        let sources: Vec<&Source> = SOURCES
            .iter()
            .filter(|s| query.kinds.is_empty() || query.kinds.iter().any(|k| k == s.kind))
            .filter(|s| query.tiers.is_empty() || s.kind == "memory")
            .collect();
        let candidates = channel_candidates(query);
        let mut found: Vec<(SearchHit, Option<f64>, Option<f32>)> = Vec::new();
        let terms: Vec<Term> = fts::search_terms(&query.text)
            .into_iter()
            .take(query.max_terms.max(1))
            .map(|term| Term::new(&term, query.ranking.stemming))
            .collect();
        let mut plans: Vec<Option<Plan>> = sources.iter().map(|_| None).collect();
        // Whether every hit found holds every term.
        let mut every_term = true;
        // Rows holding every term first: a short list to score, and what a person typing
        // several words expects at the top. When that is fewer than asked for, any term.
        for join in [" AND ", " OR "] {
            if join == " AND " && terms.len() < 2 {
                continue;
            }
            every_term = join == " AND " || terms.len() < 2;
            found.clear();
            for (source, plan) in sources.iter().zip(plans.iter_mut()) {
                let plan = match plan {
                    Some(plan) => plan,
                    None => plan.insert(self.plan(source, &terms)?),
                };
                match self.search_text(source, plan, join, query, candidates) {
                    Ok(hits) => found.extend(hits.into_iter().map(|(h, s)| (h, Some(s), None))),
                    Err(err) => {
                        tracing::warn!(%err, "full-text query failed; falling back to LIKE");
                        let hits = self.search_like(query)?;
                        return Ok(Ok(SearchResults { hits, fallback: true, semantic: false }));
                    }
                }
            }
            if found.len() >= query.limit.max(1) {
                break;
            }
        }
        let nearest = nearest();
        let semantic = nearest.is_some();
        if let Some(nearest) = nearest {
            for (hit, sim) in self.search_vectors(&sources, &nearest, query, candidates)? {
                match found.iter_mut().find(|(h, _, _)| h.kind == hit.kind && h.id == hit.id) {
                    Some(existing) => existing.2 = Some(sim),
                    None if sim >= query.ranking.similarity_floor => {
                        found.push((hit, None, Some(sim)))
                    }
                    None => {}
                }
            }
        }
        let mut scored = rank::scored(found, every_term, query.ranking.vector_share);
        self.add_context(&mut scored, query)?;
        if query.ranking.session_text_weight > 0.0 {
            // A session matches as well as its observations or its raw events, whichever
            // match better: what was distilled from it, or what was captured. (A summary is
            // one item of its session, and a memory belongs to none.)
            let mut sessions: HashMap<String, f64> = HashMap::new();
            for (source, plan) in sources.iter().zip(&plans) {
                let Some(plan) =
                    plan.as_ref().filter(|_| matches!(source.kind, "observation" | "event"))
                else {
                    continue;
                };
                for (session, m) in self.session_matches(source, plan, query)? {
                    let best = sessions.entry(session).or_default();
                    *best = best.max(m);
                }
            }
            for s in &mut scored {
                if let Some(m) = sessions.get(&s.hit.session) {
                    s.session += query.ranking.session_text_weight * m;
                }
            }
        }
        if query.ranking.named_weight > 0.0 {
            let names = NamedIn::new(&query.text);
            let touched = self.files_named(&names, &scored)?;
            for s in &mut scored {
                s.named = names.names(&s.hit) || touched.contains(&(s.hit.kind, s.hit.id));
            }
        }
        let r = &query.ranking;
        let top = scored.iter().map(|s| s.total(r)).fold(0.0_f64, f64::max);
        let sparse_query = sparse();
        if sparse_coming && sparse_query.is_none() {
            return Ok(Err(()));
        }
        let sparse = self.sparse_reorder(query, sparse_query.as_ref(), &scored, top)?;
        let hit_counts = self.hit_counts(scored.iter().map(|s| (s.hit.kind, s.hit.id)))?;
        let now = query.ranking.now_ms.unwrap_or_else(crate::time::now_ms);
        let mut hits: Vec<SearchHit> = scored
            .into_iter()
            .map(|scored| {
                let key = (scored.hit.kind, scored.hit.id);
                let count = hit_counts.get(&key).copied().unwrap_or(0);
                rank::weighed(scored, top, sparse.get(&key).copied(), count, now, r)
            })
            .collect();
        self.fold_into_distilled(&mut hits)?;
        // Stable on ties: newer first.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.at_ms.cmp(&a.at_ms)));
        hits.truncate(query.limit.max(1));
        Ok(Ok(SearchResults { hits, fallback: false, semantic }))
    }

    /// The best candidates by relevance (as many as `candidates`, widened for a sparse query
    /// by the caller, or the limit when that is more) ordered again with the query's sparse
    /// vector ([`sparse_mix`]): each gets its match, when it has a stored vector, and its new
    /// relevance; empty without a sparse query, a share, or two matches to tell apart.
    fn sparse_reorder(
        &self,
        query: &SearchQuery,
        sparse: Option<&SparseQuery>,
        scored: &[Scored],
        top: f64,
    ) -> Result<HashMap<ItemKey, (Option<f32>, f64)>> {
        let r = &query.ranking;
        let Some(sparse) = sparse else {
            return Ok(HashMap::new());
        };
        if r.sparse_share <= 0.0 || scored.len() < 2 || top <= 0.0 {
            return Ok(HashMap::new());
        }
        let mut best: Vec<(ItemKey, f64)> =
            scored.iter().map(|s| ((s.hit.kind, s.hit.id), s.total(r) / top)).collect();
        best.sort_by(|a, b| b.1.total_cmp(&a.1));
        best.truncate(r.candidates.max(query.limit).max(2));
        let keys: Vec<ItemKey> = best.iter().map(|(key, _)| *key).collect();
        let stored = self.sparse_vectors(&sparse.model, &keys)?;
        // The query is weighed on the words these candidates hold, not the whole vocabulary.
        let mut words: Vec<u32> = stored.values().flatten().map(|(id, _)| *id).collect();
        words.sort_unstable();
        words.dedup();
        let weights = match sparse.weights.weights(&words) {
            Ok(weights) => weights,
            Err(err) => {
                tracing::warn!("searching without the sparse model: {err}");
                return Ok(HashMap::new());
            }
        };
        let query: SparseVector =
            words.into_iter().zip(weights).filter(|(_, w)| *w > 0.0).collect();
        let dots: HashMap<ItemKey, f32> =
            stored.iter().map(|(key, v)| (*key, sparse_dot(&query, v))).collect();
        Ok(sparse_mix(&best, &dots, r.sparse_share))
    }

    /// Spreads each candidate's evidence to its neighbours in its session and to its session
    /// as a whole. Only the best candidates spread (their neighbours are looked up by index, two
    /// each side), so the cost is bounded by the candidates, not the store; a neighbour that
    /// was not a candidate joins the candidates if it passes the query's filters.
    fn add_context(&self, scored: &mut Vec<Scored>, query: &SearchQuery) -> Result<()> {
        let r = &query.ranking;
        if r.neighbour_weight > 0.0 {
            let mut order: Vec<usize> = (0..scored.len()).collect();
            order.sort_by(|&a, &b| scored[b].own.total_cmp(&scored[a].own));
            order.truncate(r.candidates.max(query.limit));
            let mut gets: HashMap<(&'static str, i64), f64> = HashMap::new();
            for source in SOURCES.iter().filter(|s| s.neighbours) {
                let spreading: Vec<(i64, f64)> = order
                    .iter()
                    .map(|&at| &scored[at])
                    .filter(|s| s.hit.kind == source.kind && s.own > 0.0)
                    .filter(|s| source.has_neighbours(&s.hit))
                    .map(|s| (s.hit.id, s.own))
                    .collect();
                if spreading.is_empty() {
                    continue;
                }
                // What asks a question: the item right after it is its answer, which often
                // shares none of the question's words ("How often?" "Three times a week.").
                let asking: std::collections::HashSet<i64> = order
                    .iter()
                    .map(|&at| &scored[at].hit)
                    .filter(|h| h.kind == source.kind && asks(&h.title))
                    .map(|h| h.id)
                    .collect();
                let next_to = self.neighbours(source, &spreading)?;
                for (neighbour, add) in spread(r, &spreading, &next_to, &asking) {
                    *gets.entry((source.kind, neighbour)).or_default() += add;
                }
            }
            let mut new: HashMap<&'static str, Vec<(i64, f64)>> = HashMap::new();
            for ((kind, id), add) in gets {
                match scored.iter_mut().find(|s| s.hit.kind == kind && s.hit.id == id) {
                    Some(existing) => existing.neighbours += add,
                    None => new.entry(kind).or_default().push((id, add)),
                }
            }
            for (kind, ids) in new {
                let Some(source) = SOURCES.iter().find(|s| s.kind == kind) else { continue };
                let mut args = Vec::new();
                let filters = filter_sql(query, source, &mut args);
                let kept = self.passing(source, &ids, &filters, &args)?;
                let ids: Vec<(i64, f64)> =
                    ids.into_iter().filter(|(id, _)| kept.contains(id)).collect();
                for (hit, add) in self.hits_by_id(source, &ids)? {
                    scored.push(Scored::context(hit, add));
                }
            }
        }
        if r.session_weight > 0.0 {
            let sessions = session_shares(
                r,
                scored
                    .iter()
                    .filter(|s| !s.hit.session.is_empty())
                    .map(|s| (s.hit.session.clone(), s.own)),
            );
            if !sessions.is_empty() {
                for s in scored.iter_mut() {
                    s.session = sessions.get(&s.hit.session).copied().unwrap_or_default();
                }
            }
        }
        Ok(())
    }

    /// The items of `source` next to each of `items` in its session, two each side, with their
    /// distance and side ([`Neighbour`]): one statement for where the items are, then two walks
    /// of the session's `(session_id, at)` index each, so the cost does not grow with the
    /// session.
    fn neighbours(
        &self,
        source: &Source,
        items: &[(i64, f64)],
    ) -> Result<HashMap<i64, Vec<Neighbour>>> {
        let sql = format!(
            "SELECT id, session_id, at FROM {table} WHERE id IN {IDS_1}",
            table = source.table,
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let places: Vec<(i64, i64, i64)> = stmt
            .query_map([id_list(items)], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = HashMap::with_capacity(places.len());
        for (cmp, order, after) in [("<", "DESC", false), (">", "ASC", true)] {
            let sql = if source.ordered_by_id {
                format!(
                    "SELECT id FROM {table} INDEXED BY {table}_said_session
                     WHERE session_id = ?1 AND ?2 IS NOT NULL AND id {cmp} ?3
                       AND kind IN {SAID_EVENTS}
                     ORDER BY id {order} LIMIT 2",
                    table = source.table,
                )
            } else {
                format!(
                    "SELECT id FROM {table} INDEXED BY {table}_session
                     WHERE session_id = ?1 AND (at, id) {cmp} (?2, ?3)
                     ORDER BY at {order}, id {order} LIMIT 2",
                    table = source.table,
                )
            };
            let mut stmt = self.conn().prepare_cached(&sql)?;
            for &(id, session, at) in &places {
                let found = stmt.query_map([session, at, id], |r| r.get::<_, i64>(0))?;
                let entry: &mut Vec<Neighbour> = out.entry(id).or_default();
                for (n, neighbour) in found.enumerate() {
                    entry.push((n + 1, after, neighbour?));
                }
            }
        }
        Ok(out)
    }

    /// The session channel: how well each session's items of `source`, taken together as one
    /// text, match the query (BM25 over sessions, counting a term once per item that holds it),
    /// over the best session's; keyed by the session's id as hits carry it. Only the terms the
    /// plan scores exactly take part, so the cost is bounded as the full-text channel's is; and
    /// only the sessions with the most matches are weighed.
    fn session_matches(
        &self,
        source: &Source,
        plan: &Plan,
        query: &SearchQuery,
    ) -> Result<HashMap<String, f64>> {
        const SESSIONS: usize = 50;
        const K1: f64 = 1.2;
        const B: f64 = 0.75;
        // Each row holding a term is read for its session, so only the rarest terms take part,
        // as many as hold `SESSION_ROWS` rows between them: a word in many sessions says little
        // about which one answers.
        let mut rows = 0.0;
        let terms: Vec<&Term> = plan.terms[..plan.rare]
            .iter()
            .take_while(|t| {
                rows += t.docs;
                !plan.bounded || rows <= SESSION_ROWS as f64
            })
            .collect();
        if terms.is_empty() {
            return Ok(HashMap::new());
        }
        // The filters name the table's own columns only, so no join is needed to apply them.
        let mut args = vec![Value::Null];
        let filters = filter_sql(query, source, &mut args);
        let sql = format!(
            "SELECT x.session_id, count(*) FROM {fts} JOIN {table} x ON x.id = {fts}.rowid
             WHERE {fts} MATCH ?1 {filters} GROUP BY x.session_id",
            fts = source.fts,
            table = source.table,
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        // Per term: the sessions holding it and in how many of their items.
        let mut per_term: Vec<Vec<(i64, f64)>> = Vec::with_capacity(terms.len());
        for term in &terms {
            args[0] = Value::Text(term.phrase_for(source));
            let found = stmt.query_map(rusqlite::params_from_iter(&args), |r| {
                Ok((r.get(0)?, r.get::<_, i64>(1)? as f64))
            })?;
            per_term.push(found.collect::<rusqlite::Result<_>>()?);
        }
        let sessions: f64 = self
            .conn()
            .prepare_cached("SELECT coalesce(max(id), 0) FROM sessions")?
            .query_row([], |r| r.get(0))?;
        let idf = |df: usize| {
            let df = df as f64;
            ((sessions - df + 0.5) / (df + 0.5) + 1.0).ln()
        };
        // The sessions with the most weighted matches, then their lengths in items.
        let mut rough: HashMap<i64, f64> = HashMap::new();
        for found in &per_term {
            let w = idf(found.len());
            for &(id, tf) in found {
                *rough.entry(id).or_default() += w * tf.min(3.0);
            }
        }
        let mut top: Vec<(i64, f64)> = rough.into_iter().collect();
        top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        top.truncate(SESSIONS);
        if top.len() < 2 {
            // One session found: it lifts every item found alike, which changes no order.
            return Ok(HashMap::new());
        }
        let mut count = self.conn().prepare_cached(&format!(
            "SELECT count(*), (SELECT source_id FROM sessions WHERE id = ?1)
             FROM {table} WHERE session_id = ?1",
            table = source.table
        ))?;
        let mut lengths: HashMap<i64, f64> = HashMap::with_capacity(top.len());
        let mut names: HashMap<i64, String> = HashMap::with_capacity(top.len());
        for &(id, _) in &top {
            let (n, name): (i64, Option<String>) =
                count.query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            lengths.insert(id, n.max(1) as f64);
            names.insert(id, name.unwrap_or_default());
        }
        let average = lengths.values().sum::<f64>() / lengths.len().max(1) as f64;
        let mut scores: HashMap<i64, f64> = HashMap::new();
        for found in &per_term {
            let w = idf(found.len());
            for &(id, tf) in found {
                let Some(len) = lengths.get(&id) else { continue };
                let norm = K1 * (1.0 - B + B * len / average.max(1.0));
                *scores.entry(id).or_default() += w * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let best = scores.values().copied().fold(0.0_f64, f64::max);
        if best <= 0.0 {
            return Ok(HashMap::new());
        }
        Ok(scores
            .into_iter()
            .filter_map(|(id, score)| Some((names.remove(&id)?, score / best)))
            .collect())
    }

    /// The observations, summaries and events among `scored` that read or changed a file the
    /// query names by its file name (`why did config.rs change`); nothing is read when it
    /// names none.
    fn files_named(
        &self,
        names: &NamedIn,
        scored: &[Scored],
    ) -> Result<std::collections::HashSet<(&'static str, i64)>> {
        let mut touched = std::collections::HashSet::new();
        let files: Vec<&str> = names.files().collect();
        if files.is_empty() {
            return Ok(touched);
        }
        for kind in ["observation", "summary", "event"] {
            let ids: Vec<(i64, f64)> =
                scored.iter().filter(|s| s.hit.kind == kind).map(|s| (s.hit.id, 0.0)).collect();
            let Some(source) = SOURCES.iter().find(|s| s.kind == kind).filter(|_| !ids.is_empty())
            else {
                continue;
            };
            // An event lists the files it touched in one column.
            let sql = if kind == "event" {
                format!(
                    "SELECT x.id, f.value FROM events x, json_each(
                         CASE WHEN json_valid(x.files) THEN x.files ELSE '[]' END) f
                     WHERE x.id IN {IDS_1}"
                )
            } else {
                format!(
                    "SELECT x.id, f.value FROM {table} x, json_each(
                     CASE WHEN json_valid(x.files_modified) THEN x.files_modified ELSE '[]' END) f
                 WHERE x.id IN {IDS_1}
                 UNION ALL
                 SELECT x.id, f.value FROM {table} x, json_each(
                     CASE WHEN json_valid(x.files_read) THEN x.files_read ELSE '[]' END) f
                 WHERE x.id IN {IDS_1}",
                    table = source.table,
                )
            };
            let mut stmt = self.conn().prepare_cached(&sql)?;
            let mut rows = stmt.query([id_list(&ids)])?;
            while let Some(row) = rows.next()? {
                let path: String = row.get::<_, Option<String>>(1)?.unwrap_or_default();
                let name = path.rsplit(['/', '\\']).next().unwrap_or_default();
                if files.iter().any(|f| f.eq_ignore_ascii_case(name)) {
                    touched.insert((source.kind, row.get(0)?));
                }
            }
        }
        Ok(touched)
    }

    /// Folds each raw event found into the best observation found that was made from it: the
    /// observation says the same thing, distilled, and the two would take two places for one
    /// answer. The observation takes the better score of the two (an event's words may match a
    /// query better than the lesson drawn from them) and shows the event beneath it
    /// ([`SearchHit::folded`]). A session's summary folds nothing: it stands for the whole
    /// session, not for any one thing in it, and ranks by its own match.
    fn fold_into_distilled(&self, hits: &mut Vec<SearchHit>) -> Result<()> {
        if !hits.iter().any(|h| h.kind == "event") || !hits.iter().any(|h| h.kind == "observation")
        {
            return Ok(());
        }
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT observation_id FROM observation_sources WHERE event_id = ?1")?;
        let mut folded: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut gone = std::collections::HashSet::new();
        for (at, event) in hits.iter().enumerate().filter(|(_, h)| h.kind == "event") {
            let made: Vec<i64> =
                stmt.query_map([event.id], |row| row.get(0))?.collect::<rusqlite::Result<_>>()?;
            let into = hits
                .iter()
                .enumerate()
                .filter(|(_, h)| h.kind == "observation" && made.contains(&h.id))
                .max_by(|a, b| a.1.score.total_cmp(&b.1.score));
            if let Some((into, _)) = into {
                folded.entry(into).or_default().push(at);
                gone.insert(at);
            }
        }
        for (into, events) in folded {
            let mut events: Vec<SearchHit> =
                events.into_iter().map(|at| hits[at].clone()).collect();
            events.sort_by(|a, b| b.score.total_cmp(&a.score));
            let hit = &mut hits[into];
            hit.score = hit.score.max(events[0].score);
            hit.folded = events;
        }
        let mut at = 0;
        hits.retain(|_| {
            at += 1;
            !gone.contains(&(at - 1))
        });
        Ok(())
    }

    /// Counts one more hit at `at_ms` for each item search found or an agent was handed; the
    /// count and last hit time feed the ranking's hit part.
    pub fn record_hits<'a>(
        &self,
        items: impl IntoIterator<Item = (&'a str, i64)>,
        at_ms: i64,
    ) -> Result<()> {
        let tx = self.begin_write()?;
        let mut memories = Vec::new();
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO hits (item_kind, item_id, count, last_at) VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT (item_kind, item_id) DO UPDATE SET
                     count = count + 1, last_at = max(last_at, excluded.last_at)",
            )?;
            for (kind, id) in items {
                // A memory keeps its own count, which its briefing rank reads.
                if kind == "memory" {
                    memories.push(id);
                } else {
                    stmt.execute(rusqlite::params![kind, id, at_ms])?;
                }
            }
        }
        super::memories::record_hits(&tx, memories, at_ms)?;
        tx.commit()?;
        Ok(())
    }

    fn hit_counts<'a>(
        &self,
        items: impl Iterator<Item = (&'a str, i64)>,
    ) -> Result<HashMap<(&'a str, i64), i64>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT count FROM hits WHERE item_kind = ?1 AND item_id = ?2 AND ?1 <> 'memory'
             UNION ALL SELECT hits FROM memories WHERE ?1 = 'memory' AND id = ?2",
        )?;
        let mut counts = HashMap::new();
        for (kind, id) in items {
            let mut rows = stmt.query(rusqlite::params![kind, id])?;
            if let Some(row) = rows.next()? {
                counts.insert((kind, id), row.get(0)?);
            }
        }
        Ok(counts)
    }

    fn search_fts(
        &self,
        source: &Source,
        fts_query: &str,
        query: &SearchQuery,
        limit: usize,
    ) -> Result<Vec<(SearchHit, f64)>> {
        let mut args = vec![Value::Text(fts_query.to_owned())];
        let filters = filter_sql(query, source, &mut args);
        let sql = format!(
            "SELECT {columns}, -bm25({fts}) AS score
             FROM {fts} JOIN {table} x ON x.id = {fts}.rowid {joins}
             WHERE {fts} MATCH ?1 {filters}
             ORDER BY bm25({fts}), x.id DESC LIMIT {limit}",
            columns = source.columns,
            joins = source.joins,
            fts = source.fts,
            table = source.table,
        );
        self.collect_hits(source.kind, &sql, &args)
    }

    /// Decides how `source`'s full text is asked for `terms`: in a small table every term is
    /// scored exactly; in a large one each term's rows are counted from its newest few, and only
    /// the rarest terms, whose rows together stay under [`SCORED_ROWS`], go to BM25.
    fn plan(&self, source: &Source, terms: &[Term]) -> Result<Plan> {
        let rows: i64 = self
            .conn()
            .prepare_cached(&format!("SELECT coalesce(max(id), 0) FROM {}", source.table))?
            .query_row([], |r| r.get(0))?;
        let mut terms = terms.to_vec();
        if source.kind == "event" && self.events_partly_stemmed()? {
            terms.iter_mut().for_each(|t| t.either_form = true);
        }
        if rows <= SCORED_ROWS {
            return Ok(Plan { rare: terms.len(), terms, bounded: false });
        }
        let probe = format!(
            "SELECT rowid FROM {fts} WHERE {fts} MATCH ?1 ORDER BY rowid DESC LIMIT {PROBE_ROWS}",
            fts = source.fts
        );
        let mut stmt = self.conn().prepare_cached(&probe)?;
        for term in &mut terms {
            let newest: Vec<i64> = stmt
                .query_map([term.phrase_for(source)], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let found = newest.len() as f64;
            term.probed_to = rows;
            term.docs = match newest.last() {
                // The newest rows holding it spread over this many of the table's ids: the
                // same share of the whole table holds it.
                Some(&oldest) if newest.len() as i64 >= PROBE_ROWS => {
                    let span = (rows - oldest + 1).max(1) as f64;
                    (found * rows as f64 / span).max(found)
                }
                _ => found,
            };
            // BM25's inverse document frequency, as FTS5 computes it, so that estimated and
            // exact scores add up on one scale.
            let n = rows as f64;
            term.idf = ((n - term.docs + 0.5) / (term.docs + 0.5)).ln().max(1e-6);
            term.newest = newest;
        }
        terms.sort_by(|a, b| a.docs.total_cmp(&b.docs));
        let mut rare = 0;
        let mut scored = 0.0;
        for term in &terms {
            scored += term.docs;
            if scored > SCORED_ROWS as f64 {
                break;
            }
            rare += 1;
        }
        Ok(Plan { terms, rare, bounded: true })
    }

    /// One full-text channel for one round: its terms `join`ed (` AND ` or ` OR `), ranked.
    fn search_text(
        &self,
        source: &Source,
        plan: &Plan,
        join: &str,
        query: &SearchQuery,
        limit: usize,
    ) -> Result<Vec<(SearchHit, f64)>> {
        let phrase = |terms: &[Term]| {
            terms.iter().map(|t| t.phrase_for(source)).collect::<Vec<_>>().join(join)
        };
        if plan.terms.is_empty() {
            return Ok(Vec::new());
        }
        if !plan.bounded {
            return self.search_fts(source, &phrase(&plan.terms), query, limit);
        }
        let (rare, common) = plan.terms.split_at(plan.rare);
        let mut args = Vec::new();
        let filters = filter_sql(query, source, &mut args);
        let mut scored = Vec::new();
        if !rare.is_empty() {
            // BM25 over every row holding the rare terms, in the index alone; the rows that
            // pass the filters and the common terms' share are found after.
            let wide = if filters.is_empty() && common.is_empty() {
                limit as i64
            } else {
                SCORED_ROWS * 2
            };
            let sql = format!(
                "SELECT rowid, -bm25({fts}) FROM {fts} WHERE {fts} MATCH ?1
                 ORDER BY 2 DESC, rowid DESC LIMIT {wide}",
                fts = source.fts,
            );
            scored = self.id_scores(&sql, &[Value::Text(phrase(rare))])?;
            if !filters.is_empty() && !scored.is_empty() {
                let kept = self.passing(source, &scored, &filters, &args)?;
                scored.retain(|(id, _)| kept.contains(id));
            }
            scored.truncate(limit * 4);
            if !common.is_empty() && !scored.is_empty() {
                self.add_terms(source, &mut scored, common)?;
            }
        }
        // Every term is common, or the rare ones leave room: the newest rows holding the
        // common ones, weighed by the terms they hold.
        let fill = rare.is_empty() || (join == " OR " && scored.len() < limit);
        if fill && !common.is_empty() {
            let mut with_args = vec![Value::Text(phrase(common))];
            with_args.extend(args.iter().cloned());
            let sql = format!(
                "SELECT {fts}.rowid, 0.0 FROM {fts} JOIN {table} x ON x.id = {fts}.rowid
                 WHERE {fts} MATCH ?1 {filters} ORDER BY {fts}.rowid DESC LIMIT {wide}",
                fts = source.fts,
                table = source.table,
                filters = renumber(&filters, 1),
                wide = limit * 4,
            );
            let mut newest = self.id_scores(&sql, &with_args)?;
            newest.retain(|(id, _)| !scored.iter().any(|(seen, _)| seen == id));
            if join == " AND " {
                // No term is rare here, and every row found holds every common one.
                let every: f64 = plan.terms.iter().map(|t| t.idf).sum();
                newest.iter_mut().for_each(|row| row.1 += every);
            } else if !newest.is_empty() {
                self.add_terms(source, &mut newest, &plan.terms)?;
            }
            scored.extend(newest);
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        scored.truncate(limit);
        self.hits_by_id(source, &scored)
    }

    fn id_scores(&self, sql: &str, args: &[Value]) -> Result<Vec<(i64, f64)>> {
        let mut stmt = self.conn().prepare_cached(sql)?;
        let rows =
            stmt.query_map(rusqlite::params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Which of `scored`'s rows pass the filters. The filters name the table's own columns only
    /// ([`filter_sql`]), so here and wherever rows are only filtered no join is needed.
    fn passing(
        &self,
        source: &Source,
        scored: &[(i64, f64)],
        filters: &str,
        args: &[Value],
    ) -> Result<std::collections::HashSet<i64>> {
        let sql = format!(
            "SELECT x.id FROM {table} x
             WHERE x.id IN (SELECT value FROM json_each(?{ids})) {filters}",
            table = source.table,
            ids = args.len() + 1,
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let ids = Value::Text(id_list(scored));
        let rows =
            stmt.query_map(rusqlite::params_from_iter(args.iter().chain([&ids])), |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Adds to each row's score the inverse document frequency of each of `terms` it holds,
    /// read from the row's own text: BM25's share of a term seen once in a row of usual length.
    fn add_terms(&self, source: &Source, scored: &mut [(i64, f64)], terms: &[Term]) -> Result<()> {
        // Most rows are among the newest holding a term, which the plan's probe listed: only
        // the others are read.
        let mut unread: HashMap<i64, usize> = HashMap::new();
        for (n, (id, score)) in scored.iter_mut().enumerate() {
            for term in terms {
                match term.known_in(*id) {
                    Some(true) => *score += term.idf,
                    Some(false) => {}
                    None => {
                        unread.insert(*id, n);
                    }
                }
            }
        }
        if unread.is_empty() {
            return Ok(());
        }
        let sql = format!(
            "SELECT x.id, {text} FROM {table} x WHERE x.id IN {IDS_1}",
            text = source.text,
            table = source.table,
        );
        let ids: Vec<(i64, f64)> = unread.keys().map(|&id| (id, 0.0)).collect();
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let mut rows = stmt.query([id_list(&ids)])?;
        // Stemming every word of every row was most of a search's CPU; a word is stemmed only
        // when it could have a term's stem, and once per search.
        let mut stems = Stems::default();
        let mut words = fts::RowWords::default();
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let Some(&n) = unread.get(&id) else { continue };
            let text = match row.get_ref(1)? {
                rusqlite::types::ValueRef::Text(text) => std::str::from_utf8(text).unwrap_or(""),
                _ => "",
            };
            words.read(text);
            let tokens = words.words().collect::<Vec<_>>();
            scored[n].1 += terms
                .iter()
                .filter(|t| t.known_in(id).is_none())
                .filter(|t| t.is_in(&tokens, source.stemmed, &mut stems))
                .map(|t| t.idf)
                .sum::<f64>();
        }
        Ok(())
    }

    /// The hits for these row ids, with their scores, best first.
    fn hits_by_id(&self, source: &Source, scored: &[(i64, f64)]) -> Result<Vec<(SearchHit, f64)>> {
        if scored.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {columns}, 0.0 FROM {table} x {joins} WHERE x.id IN {IDS_1}",
            columns = source.columns,
            table = source.table,
            joins = source.joins,
        );
        let scores: HashMap<i64, f64> = scored.iter().copied().collect();
        let mut hits = self.collect_hits(source.kind, &sql, &[Value::Text(id_list(scored))])?;
        for (hit, score) in &mut hits {
            *score = scores.get(&hit.id).copied().unwrap_or_default();
        }
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.id.cmp(&a.0.id)));
        Ok(hits)
    }

    /// The vector channel: the most similar observations and summaries that pass the filters.
    fn search_vectors(
        &self,
        sources: &[&Source],
        nearest: &Nearest,
        query: &SearchQuery,
        limit: usize,
    ) -> Result<Vec<(SearchHit, f32)>> {
        // Filters run in SQL after the scan, so the scan takes a wider cut to leave enough.
        let top = &nearest.rows[..nearest.rows.len().min(vector_cut(query))];
        let mut out = Vec::new();
        for source in sources.iter().filter(|s| s.kind != "memory") {
            let sims: HashMap<i64, f32> = top
                .iter()
                .filter(|(k, _, _)| *k == source.kind)
                .map(|(_, id, s)| (*id, *s))
                .collect();
            if sims.is_empty() {
                continue;
            }
            let ids: Vec<(i64, f64)> = sims.keys().map(|&id| (id, 0.0)).collect();
            let mut args = Vec::new();
            let filters = filter_sql(query, source, &mut args);
            let sql = format!(
                "SELECT {columns}, 0.0 FROM {table} x {joins}
                 WHERE x.id IN (SELECT value FROM json_each(?{n})) {filters}",
                columns = source.columns,
                joins = source.joins,
                table = source.table,
                n = args.len() + 1,
            );
            args.push(Value::Text(id_list(&ids)));
            for (hit, _) in self.collect_hits(source.kind, &sql, &args)? {
                let sim = sims[&hit.id];
                out.push((hit, sim));
            }
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out.truncate(limit);
        Ok(out)
    }

    /// The `LIKE` path: events containing any term, newest first.
    pub fn search_like(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let terms: Vec<String> =
            fts::search_terms(&query.text).into_iter().take(query.max_terms.max(1)).collect();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = Vec::new();
        let mut ors = Vec::new();
        for term in &terms {
            args.push(Value::Text(format!("%{}%", escape_like(term))));
            let n = args.len();
            ors.push(format!("x.summary LIKE ?{n} ESCAPE '\\' OR x.body LIKE ?{n} ESCAPE '\\'"));
        }
        let events = &SOURCES[2];
        debug_assert_eq!(events.kind, "event");
        let filters = filter_sql(query, events, &mut args);
        let sql = format!(
            "SELECT {}, 0.0 AS score
             FROM events x JOIN sessions s ON s.id = x.session_id
             LEFT JOIN projects p ON p.id = x.project_id
             WHERE ({}) {filters} ORDER BY x.at DESC, x.id DESC LIMIT {}",
            events.columns,
            ors.join(" OR "),
            query.limit.max(1)
        );
        Ok(self.collect_hits("event", &sql, &args)?.into_iter().map(|(h, _)| h).collect())
    }

    fn collect_hits(
        &self,
        kind: &'static str,
        sql: &str,
        args: &[Value],
    ) -> Result<Vec<(SearchHit, f64)>> {
        let mut stmt = self.conn().prepare_cached(sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
            let score: f64 = r.get(11)?;
            let hit = SearchHit {
                kind,
                id: r.get(0)?,
                at_ms: r.get(1)?,
                agent: r.get(2)?,
                project: r.get(3)?,
                session: r.get(4)?,
                item_type: r.get(5)?,
                tool: r.get(6)?,
                tier: r.get(7)?,
                title: r.get(8)?,
                tokens: r.get(9)?,
                lesson: r.get(10)?,
                score: 0.0,
                parts: Parts::default(),
                folded: Vec::new(),
                anchors: Vec::new(),
                stale: None,
            };
            Ok((hit, score))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// The filter clauses (`AND …`) for `query` over `source`'s table aliased `x`, pushing their
/// values onto `args` as numbered parameters. They name only the table's own columns, so they
/// apply without joining sessions or projects.
fn filter_sql(query: &SearchQuery, source: &Source, args: &mut Vec<Value>) -> String {
    let mut sql = String::new();
    if !source.searchable.is_empty() {
        sql.push_str(" AND ");
        sql.push_str(source.searchable);
    }
    // Each clause names its value as `?N`, N being the value's position in `args`.
    let mut push = |clause: &str, value: Value| {
        args.push(value);
        sql.push_str(&clause.replace("?N", &format!("?{}", args.len())));
    };
    if let Some(agent) = &query.agent {
        push(&format!(" AND {} = ?N", source.agent_column), Value::Text(agent.clone()));
    }
    let memory = source.kind == "memory";
    if let Some(project) = &query.project {
        // Global memory (L3) belongs to every project.
        let global = if memory { "x.project_id IS NULL OR " } else { "" };
        push(
            &format!(
                " AND ({global}x.project_id IN
                   (SELECT id FROM projects WHERE key = ?N OR name = ?N OR root = ?N))"
            ),
            Value::Text(project.clone()),
        );
    }
    if let Some(since) = query.since_ms {
        push(&format!(" AND {} >= ?N", source.at_column), Value::Integer(since));
    }
    if let Some(until) = query.until_ms {
        push(&format!(" AND {} < ?N", source.at_column), Value::Integer(until));
    }
    if memory {
        if query.tiers.is_empty() {
            sql.push_str(" AND x.status = 'active'");
        } else {
            sql.push_str(" AND x.status IN ('active', 'candidate')");
            let mut list = Vec::new();
            for tier in &query.tiers {
                let tier = super::memories::Tier::parse(tier).map_or("", |t| t.as_str());
                args.push(Value::Text(tier.to_owned()));
                list.push(format!("?{}", args.len()));
            }
            sql.push_str(&format!(" AND x.tier IN ({})", list.join(", ")));
        }
    }
    if !query.types.is_empty() {
        let mut list = Vec::new();
        for t in &query.types {
            args.push(Value::Text(t.clone()));
            list.push(format!("?{}", args.len()));
        }
        sql.push_str(&format!(" AND {} IN ({})", source.type_column, list.join(", ")));
    }
    sql
}

/// Rows one full-text channel scores with BM25 at most. FTS5's BM25 reads every row holding a
/// term to weigh it, so a term in a large share of a large table would make a search as slow as
/// the table is large; such terms are weighed from an estimate instead.
const SCORED_ROWS: i64 = 1_500;

/// Rows the session channel reads at most (for their session) in a table large enough to be
/// bounded.
const SESSION_ROWS: i64 = 600;

/// The newest rows one term is looked up in to estimate how many rows hold it.
const PROBE_ROWS: i64 = 256;

/// One term of a query as a full-text channel weighs it.
#[derive(Debug, Clone)]
struct Term {
    /// The quoted term.
    exact: String,
    /// The tokens the index holds for it, to find it in a row's text in memory.
    tokens: Vec<String>,
    /// Its stem, when it has one of its own and stemming is on: what an index of stems is
    /// asked for.
    stem: Option<String>,
    /// Rows holding it: counted when few, estimated from the newest ones when many.
    docs: f64,
    /// BM25's inverse document frequency.
    idf: f64,
    /// The newest rows holding it, newest first, as the plan's probe found them.
    newest: Vec<i64>,
    /// The rows up to this id (the table's last when probed) from the oldest of `newest` on,
    /// or all of them when `newest` holds every row with the term, are known to hold it
    /// exactly when `newest` lists them; 0 when not probed.
    probed_to: i64,
    /// Whether the index is asked for the word or its stem: events stored before their index
    /// held stems keep their plain words until the work pass indexes them again.
    either_form: bool,
}

impl Term {
    fn new(term: &str, stemming: bool) -> Term {
        Term {
            exact: fts::quote(term),
            tokens: fts::index_tokens(term),
            stem: stemming.then(|| fts::stem(&term.to_lowercase())).flatten(),
            docs: 0.0,
            idf: 0.0,
            newest: Vec::new(),
            probed_to: 0,
            either_form: false,
        }
    }

    /// Whether row `id` holds this term, when the plan's probe tells without reading the row.
    fn known_in(&self, id: i64) -> Option<bool> {
        // `newest` is in descending order.
        if self.newest.binary_search_by(|probe| id.cmp(probe)).is_ok() {
            return Some(true);
        }
        let complete = (self.newest.len() as i64) < PROBE_ROWS;
        let covered = id <= self.probed_to
            && (complete || self.newest.last().is_some_and(|&oldest| id > oldest));
        covered.then_some(false)
    }

    /// What `source`'s index is asked for. An index that holds stems holds the stem of every
    /// form of a word beside it (`failing` is indexed with `fail`), so the stem alone finds
    /// every row any form would, in one phrase rather than two. Events stored before their
    /// index held stems are asked for either form until they are indexed again.
    fn phrase_for(&self, source: &Source) -> String {
        match (&self.stem, source.stemmed) {
            (Some(stem), true) if self.either_form => {
                format!("({} OR {})", self.exact, fts::quote(stem))
            }
            (Some(stem), true) => fts::quote(stem),
            _ => self.exact.clone(),
        }
    }

    /// Whether `tokens` (a row's words, as the index splits them) hold this term's tokens, or,
    /// in an index of stems (`stemmed`), a word with its stem: the rows [`Term::phrase_for`]
    /// finds, since such an index holds each word's stem beside it ([`fts::stemmed_text`]).
    fn is_in(&self, tokens: &[&str], stemmed: bool, stems: &mut Stems) -> bool {
        let exact = match self.tokens.len() {
            0 => false,
            1 => tokens.contains(&self.tokens[0].as_str()),
            n => tokens.windows(n).any(|w| w.iter().zip(&self.tokens).all(|(a, b)| a == b)),
        };
        if exact {
            return true;
        }
        if !stemmed {
            return false;
        }
        // A word that is its own stem (`die`) is also the stem of other words (`dying`).
        let stem = match (&self.stem, self.tokens.as_slice()) {
            (Some(stem), _) => stem,
            (None, [word]) => word,
            _ => return false,
        };
        tokens.iter().any(|&word| word == stem || stems.is(word, stem))
    }
}

/// English stems of a row's words, each word stemmed once per search.
#[derive(Debug, Default)]
struct Stems {
    of: HashMap<String, Option<String>>,
}

impl Stems {
    /// Whether `word`'s stem is `stem`. A Snowball stem is never longer than its word and
    /// starts with the word's first letter, so most words are ruled out without stemming.
    fn is(&mut self, word: &str, stem: &str) -> bool {
        if word.len() < stem.len() || word.as_bytes().first() != stem.as_bytes().first() {
            return false;
        }
        if !self.of.contains_key(word) {
            self.of.insert(word.to_owned(), fts::stem(word));
        }
        self.of.get(word).and_then(Option::as_deref) == Some(stem)
    }
}

/// How one source's full text is asked for a query's terms.
#[derive(Debug)]
struct Plan {
    /// The terms, rarest first when `bounded`.
    terms: Vec<Term>,
    /// How many of the first terms BM25 scores; the rest are weighed from their estimate.
    rare: usize,
    /// Whether the table is large enough to need it; a small one is scored exactly.
    bounded: bool,
}

/// Row ids as a JSON array, bound to a statement that reads them with `json_each`: the
/// statement's text stays the same from one search to the next, so it is prepared once.
fn id_list(scored: &[(i64, f64)]) -> String {
    let mut out = String::with_capacity(scored.len() * 8 + 2);
    out.push('[');
    for (n, (id, _)) in scored.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(&id.to_string());
    }
    out.push(']');
    out
}

/// `IN` this, with the [`id_list`] as the statement's first parameter.
const IDS_1: &str = "(SELECT value FROM json_each(?1))";

/// `filters` with each `?N` moved up by `by`, for a statement with that many parameters before.
fn renumber(filters: &str, by: usize) -> String {
    let mut out = String::with_capacity(filters.len());
    let mut rest = filters;
    while let Some(at) = rest.find('?') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        match rest[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + by).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

fn escape_like(term: &str) -> String {
    term.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_holds_a_term_exactly_when_its_indexed_stems_do() {
        let text = "Dying tests were failing; the generously sized skies, early hoping, \
                    yelling at flaky parsers, happily retried uploads in 修复回调";
        let indexed = fts::index_tokens(&fts::stemmed_text(text));
        let lowered = fts::shadow_text(text).to_lowercase();
        let words = fts::words(&lowered).collect::<Vec<_>>();
        let mut stems = Stems::default();
        for term in [
            "die", "tests", "fail", "generous", "sky", "early", "hope", "yell", "flake", "parser",
            "happy", "retry", "upload", "回调", "missing", "dye",
        ] {
            let term = Term::new(term, true);
            let by_index = term.tokens.iter().all(|t| indexed.contains(t))
                && !term.tokens.is_empty()
                || term.stem.as_ref().is_some_and(|s| indexed.contains(s));
            assert_eq!(term.is_in(&words, true, &mut stems), by_index, "{term:?}");
        }
    }
}
