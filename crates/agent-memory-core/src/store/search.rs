//! Search over stored events: here is a query and filters, give me ranked hits.
//!
//! Ranks by FTS5 BM25 over the CJK-bigram shadow text (see [`super::fts`]); if FTS5 rejects a
//! query, falls back to `LIKE` over summaries and bodies so a search never fails on odd input.

use rusqlite::types::Value;

use super::{Result, Store, fts};

/// What to search for.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    pub text: String,
    pub agent: Option<String>,
    /// A project key, name or root.
    pub project: Option<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub limit: usize,
    pub max_terms: usize,
}

/// One ranked result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchHit {
    /// What was found: `event` for now; observations, summaries and memories later.
    pub kind: &'static str,
    pub id: i64,
    pub uid: String,
    pub at_ms: i64,
    pub agent: String,
    pub project: Option<String>,
    pub session: String,
    pub event_kind: String,
    pub tool: Option<String>,
    pub title: String,
    /// Higher is better. BM25 with the sign flipped; 0 for fallback hits.
    pub score: f64,
}

/// Hits, and whether the fallback produced them.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    pub fallback: bool,
}

const SELECT: &str =
    "SELECT e.id, e.uid, e.at, e.agent, p.name, s.source_id, e.kind, e.tool, e.summary";

impl Store {
    /// Searches events, best first.
    pub fn search_events(&self, query: &SearchQuery) -> Result<SearchResults> {
        let Some(fts_query) = fts::to_match_query(&query.text, query.max_terms) else {
            return Ok(SearchResults::default());
        };
        match self.search_fts(&fts_query, query) {
            Ok(hits) => Ok(SearchResults { hits, fallback: false }),
            Err(err) => {
                tracing::warn!(%err, "full-text query failed; falling back to LIKE");
                Ok(SearchResults { hits: self.search_like(query)?, fallback: true })
            }
        }
    }

    fn search_fts(&self, fts_query: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let mut args = vec![Value::Text(fts_query.to_owned())];
        let filters = filter_sql(query, &mut args);
        let sql = format!(
            "{SELECT}, -bm25(events_fts) AS score
             FROM events_fts JOIN events e ON e.id = events_fts.rowid
             JOIN sessions s ON s.id = e.session_id LEFT JOIN projects p ON p.id = e.project_id
             WHERE events_fts MATCH ?1 {filters}
             ORDER BY bm25(events_fts), e.id DESC LIMIT {}",
            query.limit.max(1)
        );
        self.collect_hits(&sql, &args)
    }

    /// The `LIKE` path: events containing any term, newest first.
    pub fn search_like(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let terms: Vec<String> =
            fts::query_terms(&query.text).into_iter().take(query.max_terms.max(1)).collect();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = Vec::new();
        let mut ors = Vec::new();
        for term in &terms {
            args.push(Value::Text(format!("%{}%", escape_like(term))));
            let n = args.len();
            ors.push(format!("e.summary LIKE ?{n} ESCAPE '\\' OR e.body LIKE ?{n} ESCAPE '\\'"));
        }
        let filters = filter_sql(query, &mut args);
        let sql = format!(
            "{SELECT}, 0.0 AS score
             FROM events e JOIN sessions s ON s.id = e.session_id
             LEFT JOIN projects p ON p.id = e.project_id
             WHERE ({}) {filters} ORDER BY e.at DESC, e.id DESC LIMIT {}",
            ors.join(" OR "),
            query.limit.max(1)
        );
        self.collect_hits(&sql, &args)
    }

    fn collect_hits(&self, sql: &str, args: &[Value]) -> Result<Vec<SearchHit>> {
        let mut stmt = self.conn().prepare(sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
            Ok(SearchHit {
                kind: "event",
                id: r.get(0)?,
                uid: r.get(1)?,
                at_ms: r.get(2)?,
                agent: r.get(3)?,
                project: r.get(4)?,
                session: r.get(5)?,
                event_kind: r.get(6)?,
                tool: r.get(7)?,
                title: r.get(8)?,
                score: r.get(9)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// The filter clauses for `query`, pushing their values onto `args` as numbered parameters.
fn filter_sql(query: &SearchQuery, args: &mut Vec<Value>) -> String {
    let mut sql = String::new();
    // Each clause names its value as `?N`, N being the value's position in `args`.
    let mut push = |clause: &str, value: Value| {
        args.push(value);
        sql.push_str(&clause.replace("?N", &format!("?{}", args.len())));
    };
    if let Some(agent) = &query.agent {
        push(" AND e.agent = ?N", Value::Text(agent.clone()));
    }
    if let Some(project) = &query.project {
        push(
            " AND e.project_id IN (SELECT id FROM projects WHERE key = ?N OR name = ?N OR root = ?N)",
            Value::Text(project.clone()),
        );
    }
    if let Some(since) = query.since_ms {
        push(" AND e.at >= ?N", Value::Integer(since));
    }
    if let Some(until) = query.until_ms {
        push(" AND e.at < ?N", Value::Integer(until));
    }
    sql
}

fn escape_like(term: &str) -> String {
    term.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}
