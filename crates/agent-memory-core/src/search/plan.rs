//! What one search asks and how much it reads: the query with its filters and ranking, the
//! models' parts of it (a sparse query, a query vector and the rows nearest it), and how many
//! candidates each channel brings. Pure: `store/search.rs` finds what the plan says, and
//! [`super::rank`] orders it.

use super::rank::Ranking;
use crate::embed::QueryWeights;
use crate::store::vectors::VectorIndex;

/// What to search for.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    pub text: String,
    pub agent: Option<String>,
    /// A project key, name or root.
    pub project: Option<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Only these kinds of item (`observation`, `summary`, `event`, `memory`); all when empty.
    pub kinds: Vec<String>,
    /// Only memories of these tiers (`L1`, `L2`, `L3`); when given, only memories are searched.
    pub tiers: Vec<String>,
    /// Only these types: an observation's type, an event's kind, or `summary`.
    pub types: Vec<String>,
    pub limit: usize,
    pub max_terms: usize,
    pub ranking: Ranking,
    /// The query's sparse vector, to order the candidates with; see [`Ranking::sparse_share`].
    pub sparse: Option<SparseQuery>,
}

/// A query as a learned sparse model read it, and that model's name, whose stored vectors it
/// is compared with.
#[derive(Clone)]
pub struct SparseQuery {
    pub model: String,
    pub weights: std::sync::Arc<dyn QueryWeights>,
}

impl std::fmt::Debug for SparseQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseQuery").field("model", &self.model).finish_non_exhaustive()
    }
}

/// A query vector and the matrix to compare it with.
#[derive(Debug, Clone, Copy)]
pub struct VectorQuery<'a> {
    pub index: &'a VectorIndex,
    pub vector: &'a [f32],
}

impl VectorQuery<'_> {
    /// The stored rows nearest the query vector, as many as a search of `query` reads:
    /// widened as for a sparse query when `sparse_coming`. Reads no store, so that it can run
    /// beside a search's full-text channels (`Store::search_meanwhile`).
    pub fn nearest(&self, query: &SearchQuery, sparse_coming: bool) -> Nearest {
        let query = widened(query, sparse_coming);
        Nearest { rows: self.index.top(self.vector, vector_cut(&query)) }
    }
}

/// The stored rows nearest a query vector, best first: the kind of item, its id, and its
/// similarity.
#[derive(Debug, Clone, Default)]
pub struct Nearest {
    pub(crate) rows: Vec<(&'static str, i64, f32)>,
}

/// `query` with the wider candidate pool a sparse query orders, when one is coming and takes
/// part.
pub(crate) fn widened(
    query: &SearchQuery,
    sparse_coming: bool,
) -> std::borrow::Cow<'_, SearchQuery> {
    let r = &query.ranking;
    if sparse_coming && r.sparse_share > 0.0 && r.sparse_candidates > r.candidates {
        let ranking = Ranking { candidates: r.sparse_candidates, ..r.clone() };
        std::borrow::Cow::Owned(SearchQuery { ranking, ..query.clone() })
    } else {
        std::borrow::Cow::Borrowed(query)
    }
}

/// The candidates each channel brings for `query`.
pub(crate) fn channel_candidates(query: &SearchQuery) -> usize {
    query.ranking.candidates.max(query.limit).max(1)
}

/// How many of the nearest rows the vector channel reads: its candidates, or eight times as
/// many when filters, which run after the scan, may drop some.
pub(crate) fn vector_cut(query: &SearchQuery) -> usize {
    let filtered = query.agent.is_some()
        || query.project.is_some()
        || query.since_ms.is_some()
        || query.until_ms.is_some()
        || !query.types.is_empty();
    let candidates = channel_candidates(query);
    if filtered { candidates * 8 } else { candidates }
}
