//! Ranking policy: how a candidate's evidence is weighed once the store has found it. Pure
//! functions over numbers, tested without a store: the fusion of the full-text and vector
//! channels, what a candidate's context adds, the learned sparse model's reordering, and the
//! final score of relevance, importance, freshness and earlier hits. `store/search.rs` finds
//! the candidates and their context in SQLite and calls these; it decides nothing here.

use std::collections::HashMap;
use std::hash::Hash;

use crate::store::search::SearchHit;
use crate::store::vectors::gets_vectors;

/// How candidates are gathered and ranked; from `[search]` in the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Candidates each channel contributes before merging.
    pub candidates: usize,
    /// The least cosine similarity a hit found only by vectors must have.
    pub similarity_floor: f32,
    pub weight_relevance: f64,
    pub weight_importance: f64,
    pub weight_freshness: f64,
    pub weight_hits: f64,
    /// Freshness halves every this many days.
    pub half_life_days: f64,
    /// The time freshness is measured from; the clock when `None`.
    pub now_ms: Option<i64>,
    /// Whether a query word also finds its English stem's other forms (`failed` finds
    /// `failing`) in distilled items, which index stems beside their words.
    pub stemming: bool,
    /// How much of an adjacent item's evidence (same session, the next or previous of its
    /// kind) an item gets; the items two away give half as much. An answer often shares no word
    /// with the question while the turn before it does.
    pub neighbour_weight: f64,
    /// How much of a question's evidence the item right after it (its answer) gets, in place
    /// of `neighbour_weight`: an answer often shares no word with the question that a query
    /// repeats.
    pub answer_weight: f64,
    /// How much of its session's evidence (everything found in it, over the best session's)
    /// every item found in or next to it gets.
    pub session_weight: f64,
    /// How much of its session's own match every item found in it gets: the session's
    /// observations taken together as one text, weighed against the query with BM25, over the
    /// best session's. A question's words are often spread over several items of the session
    /// that answers it, none of which holds them all.
    pub session_text_weight: f64,
    /// How much more an item counts when the query names its agent, its project ("what did
    /// codex change in billing") or, by its file name, a file it read or changed ("why did
    /// config.rs change"): its evidence, neighbours and session included, times `1 +` this.
    pub named_weight: f64,
    /// When vectors take part: each channel's scores scaled between the weakest and strongest
    /// candidate and mixed, this share to vectors. `None` counts either channel's evidence,
    /// `1 - (1 - bm25)(1 - similarity)`.
    pub vector_share: Option<f64>,
    /// With a sparse query: how much of the order of the best `sparse_candidates` is their
    /// sparse match with the query, each scaled between the weakest and strongest among them.
    /// Items without a sparse vector (tool uses, memories, items not encoded yet) keep their
    /// place.
    pub sparse_share: f64,
    /// With a sparse query that takes part: the candidates each channel brings, and the sparse
    /// model orders, when that is more than `candidates`. A wider pool gives the sparse model
    /// more to lift into the top 10; without it, a wider pool only adds noise to the fusion.
    pub sparse_candidates: usize,
}

impl Default for Ranking {
    fn default() -> Self {
        Ranking {
            candidates: 30,
            similarity_floor: 0.72,
            weight_relevance: 0.70,
            weight_importance: 0.15,
            weight_freshness: 0.10,
            weight_hits: 0.05,
            half_life_days: 30.0,
            now_ms: None,
            stemming: true,
            neighbour_weight: 0.5,
            answer_weight: 1.0,
            session_weight: 0.1,
            session_text_weight: 0.5,
            named_weight: 0.7,
            vector_share: Some(0.4),
            sparse_share: 0.5,
            sparse_candidates: 50,
        }
    }
}

/// Every term of a hit's score.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Parts {
    /// BM25 with the sign flipped (higher is better); `None` when full text did not find it.
    pub bm25: Option<f64>,
    /// BM25 over the best BM25 of this search, 0 to 1.
    pub bm25_norm: f64,
    /// Cosine similarity to the query; `None` when vectors did not find it.
    pub similarity: Option<f32>,
    /// What the items next to it in its session added to its own evidence, `1 - (1 -
    /// bm25_norm)(1 - similarity)`: half of each adjacent item's, a quarter of the next ones'.
    pub neighbours: f64,
    /// What its session added: a share of the evidence of everything found in that session,
    /// and a share of how well the session's observations taken together match the query.
    pub session: f64,
    /// What the query naming its agent, project or a file it touched added.
    pub named: f64,
    /// Its learned sparse match with the query (a dot product); `None` without a sparse query
    /// or a stored sparse vector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sparse: Option<f32>,
    /// Its own evidence plus what its neighbours and session added, over the best of this
    /// search: 0 to 1.
    pub relevance: f64,
    pub importance: f64,
    pub freshness: f64,
    /// Earlier searches that returned it.
    pub hit_count: i64,
    /// `1 - 1 / (1 + hit_count)`.
    pub hits: f64,
    pub age_days: f64,
}

/// How much an item is worth by what it is, before its relevance to the query: distilled
/// conclusions over raw events, decisions and fixes over routine changes.
pub fn importance(kind: &str, item_type: &str) -> f64 {
    match (kind, item_type) {
        ("memory", _) => 1.0,
        ("summary", _) => 0.7,
        ("event", "prompt") => 0.4,
        ("event", _) => 0.3,
        (_, "decision") => 1.0,
        (_, "bugfix" | "security_alert") => 0.9,
        (_, "feature" | "security_note") => 0.8,
        (_, "discovery") => 0.7,
        (_, "refactor") => 0.6,
        _ => 0.5,
    }
}

/// Whether an item asks a question (a `?` in its title): the item right after it is its
/// answer.
pub fn asks(title: &str) -> bool {
    title.contains(['?', '？'])
}

/// The share of an item's own evidence its neighbour `distance` away (1 or 2) gets: the answer
/// right after a question (`after` an item that `asks`) all of [`Ranking::answer_weight`], any
/// other next item [`Ranking::neighbour_weight`], an item two away half of that.
pub fn neighbour_share(ranking: &Ranking, distance: usize, after: bool, asks: bool) -> f64 {
    match (distance, after && asks) {
        (1, true) => ranking.answer_weight,
        (1, false) => ranking.neighbour_weight,
        _ => 0.5 * ranking.neighbour_weight,
    }
}

/// How a candidate's two channels make its own evidence.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fusion {
    vector_share: Option<f64>,
    /// The lowest and highest similarity among the candidates.
    similarity: (f64, f64),
}

impl Fusion {
    /// The fusion of a search whose candidates have these similarities (those vectors found).
    pub(crate) fn new(
        vector_share: Option<f64>,
        similarities: impl Iterator<Item = f32>,
    ) -> Fusion {
        let similarity = similarities
            .map(f64::from)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
        Fusion { vector_share, similarity }
    }

    /// Either channel's evidence, `1 - (1 - bm25_norm)(1 - similarity)`; or, with a vector
    /// share, the similarity scaled between the weakest and strongest candidate's (similarities
    /// of one model crowd into a narrow band) and mixed with `bm25_norm` in that share. A
    /// channel that did not find the item gives it nothing; a channel that cannot see its kind
    /// at all (vectors, for tool uses and memories) does not judge it either, so its full-text
    /// match counts in full: otherwise a summary found by meaning alone would outrank the event
    /// that holds every word of the question.
    pub(crate) fn own(&self, bm25_norm: f64, similarity: Option<f32>, has_vectors: bool) -> f64 {
        let (lo, hi) = self.similarity;
        match self.vector_share {
            Some(_) if !has_vectors => bm25_norm,
            Some(share) if hi >= lo => {
                let sim = match similarity.map(f64::from) {
                    Some(s) if hi > lo => (s - lo) / (hi - lo),
                    Some(_) => 1.0,
                    None => 0.0,
                };
                share * sim + (1.0 - share) * bm25_norm
            }
            _ => {
                let sim = similarity.map_or(0.0, |s| f64::from(s).clamp(0.0, 1.0));
                1.0 - (1.0 - bm25_norm) * (1.0 - sim)
            }
        }
    }
}

/// A candidate's evidence while it is ranked: its own (either channel's) and what its context
/// adds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Evidence {
    /// Its own evidence from either channel, 0 to 1.
    pub own: f64,
    pub neighbours: f64,
    pub session: f64,
    /// Whether the query names its agent, its project or a file it read or changed.
    pub named: bool,
}

impl Evidence {
    /// Its evidence with its context's, before the query's naming it counts.
    pub fn context_total(&self) -> f64 {
        self.own + self.neighbours + self.session
    }

    /// What the query naming it adds.
    pub fn named_share(&self, ranking: &Ranking) -> f64 {
        if self.named { ranking.named_weight * self.context_total() } else { 0.0 }
    }

    pub fn total(&self, ranking: &Ranking) -> f64 {
        self.context_total() + self.named_share(ranking)
    }
}

impl Parts {
    /// The parts of an item `age_days` old, found `hit_count` times before, of this kind and
    /// type, with this relevance: everything but the channels' own terms.
    pub fn weighed(&mut self, ranking: &Ranking, kind: &str, item_type: &str) {
        self.importance = importance(kind, item_type);
        self.freshness = 0.5_f64.powf(self.age_days / ranking.half_life_days.max(0.01));
        self.hits = 1.0 - 1.0 / (1.0 + self.hit_count as f64);
    }

    /// The score: the weighted sum of relevance, importance, freshness and earlier hits.
    pub fn score(&self, ranking: &Ranking) -> f64 {
        ranking.weight_relevance * self.relevance
            + ranking.weight_importance * self.importance
            + ranking.weight_freshness * self.freshness
            + ranking.weight_hits * self.hits
    }
}

/// A candidate while it is ranked: what the channels found of it, its own evidence and what
/// its context adds.
#[derive(Debug)]
pub(crate) struct Scored {
    pub hit: SearchHit,
    pub bm25: Option<f64>,
    pub bm25_norm: f64,
    pub similarity: Option<f32>,
    /// Its own evidence from either channel, 0 to 1.
    pub own: f64,
    pub neighbours: f64,
    pub session: f64,
    /// Whether the query names its agent, its project or a file it read or changed.
    pub named: bool,
}

impl Scored {
    /// A candidate no channel found, there for what its found neighbours add to it.
    pub fn context(hit: SearchHit, neighbours: f64) -> Scored {
        Scored {
            hit,
            bm25: None,
            bm25_norm: 0.0,
            similarity: None,
            own: 0.0,
            neighbours,
            session: 0.0,
            named: false,
        }
    }

    pub fn evidence(&self) -> Evidence {
        Evidence {
            own: self.own,
            neighbours: self.neighbours,
            session: self.session,
            named: self.named,
        }
    }

    pub fn total(&self, ranking: &Ranking) -> f64 {
        self.evidence().total(ranking)
    }
}

/// The candidates as the channels found them (a BM25 score, higher better, and a similarity,
/// either or both), each given its own evidence: its BM25 over the best, fused with its
/// similarity ([`Fusion`]). BM25 is comparable only within one table (each has its own term
/// statistics; a table of a few rows gives every term almost no weight). When every hit holds
/// every term (`every_term`), each kind's best match is a full match, so each kind is measured
/// against its own best; otherwise against the best of all.
pub(crate) fn scored(
    found: Vec<(SearchHit, Option<f64>, Option<f32>)>,
    every_term: bool,
    vector_share: Option<f64>,
) -> Vec<Scored> {
    let best_of = |kind: &str| {
        found
            .iter()
            .filter(|(h, _, _)| !every_term || h.kind == kind)
            .filter_map(|(_, b, _)| *b)
            .fold(0.0_f64, f64::max)
    };
    let best: HashMap<&str, f64> =
        found.iter().map(|(h, _, _)| (h.kind, best_of(h.kind))).collect();
    let fuse = Fusion::new(vector_share, found.iter().filter_map(|f| f.2));
    found
        .into_iter()
        .map(|(hit, bm25, similarity)| {
            let best_bm25 = best.get(hit.kind).copied().unwrap_or_default();
            let bm25_norm = match bm25 {
                Some(b) if best_bm25 > 0.0 => (b / best_bm25).clamp(0.0, 1.0),
                _ => 0.0,
            };
            let own = fuse.own(bm25_norm, similarity, gets_vectors(hit.kind, &hit.item_type));
            Scored { bm25, bm25_norm, similarity, own, ..Scored::context(hit, 0.0) }
        })
        .collect()
}

/// The hit a ranked candidate becomes. Its relevance is its total over the best candidate's
/// (`top`), or what the sparse model moved it to (`sparse`: its match and new relevance); its
/// score weighs that with its importance, its freshness at `now_ms` and the `hit_count`
/// earlier searches that returned it.
pub(crate) fn weighed(
    scored: Scored,
    top: f64,
    sparse: Option<(Option<f32>, f64)>,
    hit_count: i64,
    now_ms: i64,
    ranking: &Ranking,
) -> SearchHit {
    let total = if top > 0.0 { scored.total(ranking) / top } else { 0.0 };
    let (sparse, relevance) = sparse.unwrap_or((None, total));
    let named = scored.evidence().named_share(ranking);
    let mut hit = scored.hit;
    let mut parts = Parts {
        bm25: scored.bm25,
        bm25_norm: scored.bm25_norm,
        similarity: scored.similarity,
        neighbours: scored.neighbours,
        session: scored.session,
        named,
        sparse,
        relevance,
        hit_count,
        age_days: ((now_ms - hit.at_ms).max(0) as f64) / 86_400_000.0,
        ..Parts::default()
    };
    parts.weighed(ranking, hit.kind, &hit.item_type);
    hit.score = parts.score(ranking);
    hit.parts = parts;
    hit
}

/// The best candidates by relevance (best first, as many as the sparse model orders) ordered
/// again with their sparse match with the query (`dots`, for those with a stored vector):
/// each one's relevance and match, both scaled between the weakest and strongest among them,
/// mixed in `share` and put back within the same range, so that what ranked below them stays
/// below. Gives each its match, when it has one, and its new relevance; empty when there are
/// no two matches or relevances to tell apart. An item without a vector keeps its own place.
pub(crate) fn sparse_mix<K: Copy + Eq + Hash>(
    best: &[(K, f64)],
    dots: &HashMap<K, f32>,
    share: f64,
) -> HashMap<K, (Option<f32>, f64)> {
    let (lo, hi) = dots
        .values()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &d| (lo.min(d), hi.max(d)));
    let (Some(first), Some(last)) = (best.first(), best.last()) else { return HashMap::new() };
    let (floor, ceiling) = (last.1, first.1);
    if hi <= lo || ceiling <= floor {
        return HashMap::new();
    }
    let share = share.clamp(0.0, 1.0);
    best.iter()
        .map(|&(key, relevance)| {
            let own = (relevance - floor) / (ceiling - floor);
            let dot = dots.get(&key).copied();
            let matched = dot.map_or(own, |d| f64::from((d - lo) / (hi - lo)));
            let mixed = (1.0 - share) * own + share * matched;
            (key, (dot, floor + (ceiling - floor) * mixed))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_measured_against_its_own_best_only_when_every_hit_holds_every_term() {
        let found = || {
            vec![
                (SearchHit::bare("event", 1), Some(10.0), None),
                (SearchHit::bare("memory", 2), Some(2.0), None),
            ]
        };
        let norms = |every_term| -> Vec<f64> {
            scored(found(), every_term, None).iter().map(|s| s.bm25_norm).collect()
        };
        assert_eq!(norms(true), [1.0, 1.0]);
        assert_eq!(norms(false), [1.0, 0.2]);
        // A memory has no vector: its full-text match is its own evidence in full.
        let own: Vec<f64> = scored(found(), false, Some(0.5)).iter().map(|s| s.own).collect();
        assert_eq!(own[1], 0.2);
    }

    #[test]
    fn a_hit_is_weighed_by_its_share_of_the_best_unless_the_sparse_model_moved_it() {
        let ranking = Ranking { weight_hits: 0.0, ..Ranking::default() };
        let candidate = |own| Scored { own, ..Scored::context(SearchHit::bare("event", 1), 0.25) };
        let plain = weighed(candidate(0.25), 1.0, None, 0, 0, &ranking);
        assert_eq!(plain.parts.relevance, 0.5);
        let moved = weighed(candidate(0.25), 1.0, Some((Some(3.0), 0.9)), 2, 0, &ranking);
        assert_eq!((moved.parts.relevance, moved.parts.sparse), (0.9, Some(3.0)));
        assert_eq!(moved.parts.hit_count, 2);
        assert!(moved.score > plain.score);
        assert_eq!(moved.score, moved.parts.score(&ranking));
    }

    #[test]
    fn a_channel_judges_only_the_kinds_it_can_see() {
        let fuse = Fusion::new(Some(0.4), [0.5_f32, 0.9].into_iter());
        // Found by vectors alone at the strongest similarity: the vector share.
        assert!((fuse.own(0.0, Some(0.9), true) - 0.4).abs() < 1e-9);
        // An item vectors can see but did not find gets the full-text share only.
        assert!((fuse.own(1.0, None, true) - 0.6).abs() < 1e-9);
        // An item vectors cannot see counts its full-text match in full.
        assert!((fuse.own(1.0, None, false) - 1.0).abs() < 1e-9);
        // Without a share, either channel's evidence.
        let either = Fusion::new(None, [0.5_f32].into_iter());
        assert!((either.own(0.5, Some(0.5), true) - 0.75).abs() < 1e-9);
    }

    #[test]
    fn an_answer_gets_more_of_its_questions_evidence_than_other_neighbours() {
        let ranking = Ranking::default();
        assert!(
            asks("Which queue does it read?") && asks("用哪个队列？") && !asks("It reads jobs")
        );
        let answer = neighbour_share(&ranking, 1, true, true);
        assert_eq!(answer, ranking.answer_weight);
        assert!(answer > neighbour_share(&ranking, 1, false, true), "before a question");
        assert!(answer > neighbour_share(&ranking, 1, true, false), "after a statement");
        assert_eq!(neighbour_share(&ranking, 2, true, true), 0.5 * ranking.neighbour_weight);
    }

    #[test]
    fn naming_multiplies_the_evidence_with_its_context() {
        let ranking = Ranking::default();
        let plain = Evidence { own: 0.5, neighbours: 0.2, session: 0.1, named: false };
        assert!((plain.total(&ranking) - 0.8).abs() < 1e-9);
        let named = Evidence { named: true, ..plain };
        assert!((named.total(&ranking) - 0.8 * (1.0 + ranking.named_weight)).abs() < 1e-9);
    }

    #[test]
    fn the_score_is_the_weighted_sum_of_its_parts() {
        let ranking = Ranking::default();
        let mut parts = Parts {
            relevance: 0.5,
            age_days: ranking.half_life_days,
            hit_count: 1,
            ..Parts::default()
        };
        parts.weighed(&ranking, "observation", "decision");
        assert_eq!(parts.importance, 1.0);
        assert!((parts.freshness - 0.5).abs() < 1e-9 && (parts.hits - 0.5).abs() < 1e-9);
        let sum = 0.7 * 0.5 + 0.15 * 1.0 + 0.1 * 0.5 + 0.05 * 0.5;
        assert!((parts.score(&ranking) - sum).abs() < 1e-9);
        // Distilled conclusions over raw events, decisions over routine changes.
        assert!(importance("memory", "") > importance("summary", "summary"));
        assert!(importance("summary", "summary") > importance("event", "prompt"));
        assert!(importance("event", "prompt") > importance("event", "tool_use"));
        assert!(importance("observation", "decision") > importance("observation", "change"));
    }

    #[test]
    fn the_sparse_model_reorders_within_the_range_and_leaves_items_without_a_vector_be() {
        let best = [("a", 1.0), ("b", 0.8), ("c", 0.6)];
        let dots: HashMap<&str, f32> = [("a", 1.0), ("b", 5.0)].into_iter().collect();
        let mixed = sparse_mix(&best, &dots, 0.5);
        let relevance = |k: &str| mixed[k].1;
        // b matches best and rises above a; c has no vector and keeps its place.
        assert!(relevance("b") > relevance("a"), "{mixed:?}");
        assert!((relevance("c") - 0.6).abs() < 1e-9);
        assert!(mixed.values().all(|(_, r)| (0.6..=1.0).contains(r)), "within the range");
        assert_eq!(mixed["c"].0, None);
        // Nothing to tell apart: no reordering.
        let same: HashMap<&str, f32> = [("a", 2.0), ("b", 2.0)].into_iter().collect();
        assert!(sparse_mix(&best, &same, 0.5).is_empty());
    }
}
