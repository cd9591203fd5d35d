//! Search over everything stored — events, observations, session summaries: here is a query
//! and filters, give me ranked hits.
//!
//! Ranks by FTS5 BM25 over the CJK-bigram shadow text (see [`super::fts`]), each kind from its
//! own index, merged by score; if FTS5 rejects a query, falls back to `LIKE` over event
//! summaries and bodies so a search never fails on odd input.

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
    /// What was found: `observation`, `summary` or `event`.
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

/// Where each kind of hit comes from: its table, its index, and its id, type, tool and title.
struct Source {
    kind: &'static str,
    table: &'static str,
    fts: &'static str,
    columns: &'static str,
}

const SOURCES: &[Source] = &[
    Source {
        kind: "observation",
        table: "observations",
        fts: "observations_fts",
        columns: "x.id, x.at, x.agent, p.name, s.source_id, x.kind, NULL, x.title",
    },
    Source {
        kind: "summary",
        table: "summaries",
        fts: "summaries_fts",
        columns: "x.id, x.at, x.agent, p.name, s.source_id, 'summary', NULL, x.request",
    },
    Source {
        kind: "event",
        table: "events",
        fts: "events_fts",
        columns: "x.id, x.at, x.agent, p.name, s.source_id, x.kind, x.tool, x.summary",
    },
];

impl Store {
    /// Searches observations, summaries and events, best first.
    pub fn search(&self, query: &SearchQuery) -> Result<SearchResults> {
        let Some(fts_query) = fts::to_match_query(&query.text, query.max_terms) else {
            return Ok(SearchResults::default());
        };
        let mut hits = Vec::new();
        for source in SOURCES {
            match self.search_fts(source, &fts_query, query) {
                Ok(found) => hits.extend(found),
                Err(err) => {
                    tracing::warn!(%err, "full-text query failed; falling back to LIKE");
                    return Ok(SearchResults { hits: self.search_like(query)?, fallback: true });
                }
            }
        }
        // Stable on ties: newer first.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.at_ms.cmp(&a.at_ms)));
        hits.truncate(query.limit.max(1));
        Ok(SearchResults { hits, fallback: false })
    }

    fn search_fts(
        &self,
        source: &Source,
        fts_query: &str,
        query: &SearchQuery,
    ) -> Result<Vec<SearchHit>> {
        let mut args = vec![Value::Text(fts_query.to_owned())];
        let filters = filter_sql(query, &mut args);
        let sql = format!(
            "SELECT {columns}, -bm25({fts}) AS score
             FROM {fts} JOIN {table} x ON x.id = {fts}.rowid
             JOIN sessions s ON s.id = x.session_id LEFT JOIN projects p ON p.id = x.project_id
             WHERE {fts} MATCH ?1 {filters}
             ORDER BY bm25({fts}), x.id DESC LIMIT {limit}",
            columns = source.columns,
            fts = source.fts,
            table = source.table,
            limit = query.limit.max(1),
        );
        self.collect_hits(source.kind, &sql, &args)
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
            ors.push(format!("x.summary LIKE ?{n} ESCAPE '\\' OR x.body LIKE ?{n} ESCAPE '\\'"));
        }
        let filters = filter_sql(query, &mut args);
        let sql = format!(
            "SELECT {}, 0.0 AS score
             FROM events x JOIN sessions s ON s.id = x.session_id
             LEFT JOIN projects p ON p.id = x.project_id
             WHERE ({}) {filters} ORDER BY x.at DESC, x.id DESC LIMIT {}",
            SOURCES[2].columns,
            ors.join(" OR "),
            query.limit.max(1)
        );
        self.collect_hits("event", &sql, &args)
    }

    fn collect_hits(
        &self,
        kind: &'static str,
        sql: &str,
        args: &[Value],
    ) -> Result<Vec<SearchHit>> {
        let mut stmt = self.conn().prepare(sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
            Ok(SearchHit {
                kind,
                id: r.get(0)?,
                at_ms: r.get(1)?,
                agent: r.get(2)?,
                project: r.get(3)?,
                session: r.get(4)?,
                item_type: r.get(5)?,
                tool: r.get(6)?,
                title: r.get(7)?,
                score: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// The filter clauses for `query` over the table aliased `x`, pushing their values onto `args`
/// as numbered parameters.
fn filter_sql(query: &SearchQuery, args: &mut Vec<Value>) -> String {
    let mut sql = String::new();
    // Each clause names its value as `?N`, N being the value's position in `args`.
    let mut push = |clause: &str, value: Value| {
        args.push(value);
        sql.push_str(&clause.replace("?N", &format!("?{}", args.len())));
    };
    if let Some(agent) = &query.agent {
        push(" AND x.agent = ?N", Value::Text(agent.clone()));
    }
    if let Some(project) = &query.project {
        push(
            " AND x.project_id IN (SELECT id FROM projects WHERE key = ?N OR name = ?N OR root = ?N)",
            Value::Text(project.clone()),
        );
    }
    if let Some(since) = query.since_ms {
        push(" AND x.at >= ?N", Value::Integer(since));
    }
    if let Some(until) = query.until_ms {
        push(" AND x.at < ?N", Value::Integer(until));
    }
    sql
}

fn escape_like(term: &str) -> String {
    term.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}
