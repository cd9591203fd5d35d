//! `search --team`: here is a query (and, with a model, its vector), ask the team database for
//! its memories, observations and summaries, best first, with who learned each.
//!
//! One connection and one round trip: `agent_memory.find` takes the full-text query (every
//! term, then any) and the query vector together, sent unprepared with its parameter types, so
//! the server neither describes a statement first nor is asked for its schema version. A
//! server too old for the call, or a role of no team, fails that one call, and only then is
//! the reason asked, to say what to do. The two channels' scores are fused here, as local
//! search fuses them: each scaled between its weakest and strongest hit and mixed in the
//! vector share (`[search.ranking] vector_share`).
//!
//! Must not: run on the hook path, or read the local store (the binary names the project).

use std::collections::HashMap;

use agent_memory_core::config::TeamConfig;
use agent_memory_core::store::fts;
use postgres::error::SqlState;
use postgres::types::Type;
use serde::Serialize;

use crate::{TeamError, connect, schema};

/// One memory, observation or summary the server found for `search --team`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TeamHit {
    /// `memory`, `observation` or `summary`.
    pub source: String,
    pub gid: String,
    pub member: String,
    pub agent: String,
    pub project: Option<String>,
    /// A memory's tier (L2, L3); for an observation or summary, what it is.
    pub tier: String,
    /// A memory's kind; an observation's type; `summary`.
    pub kind: String,
    pub text: String,
    pub updated_at: i64,
    /// The full-text rank (0 when only the vector found it).
    pub rank: f32,
    /// The cosine similarity to the query's vector, when the vector channel found it.
    pub similarity: Option<f32>,
    /// Both channels fused, 0 to 1: what the hits are ordered by.
    pub score: f64,
}

/// What to ask the team database.
#[derive(Debug, Clone, Default)]
pub struct TeamQuery<'a> {
    pub text: &'a str,
    /// A project key: that project, and global memory.
    pub project: Option<&'a str>,
    pub limit: usize,
    /// The query's vector and the model that made it; rows of other models are not compared.
    pub vector: Option<(&'a str, Vec<f32>)>,
    /// The vectors' share of the fused score, as local search has it; `None` counts either
    /// channel's evidence, `1 - (1 - text)(1 - similarity)`.
    pub vector_share: Option<f64>,
    /// The similarity below which a row the text did not find is left out.
    pub similarity_floor: f32,
}

/// The query as a `tsquery` over the indexed text: each search term (its CJK bigrams in a row,
/// or the word or its English stem), any of them; `None` when no term is left. Tokens are
/// letters and digits only, so nothing a person types is read as query syntax.
pub fn ts_query(query: &str) -> Option<String> {
    let terms = ts_terms(query);
    (!terms.is_empty()).then(|| terms.join(" | "))
}

/// The same terms, every one of them; `None` unless there are two or more.
pub fn ts_query_all(query: &str) -> Option<String> {
    let terms = ts_terms(query);
    (terms.len() > 1).then(|| terms.join(" & "))
}

fn ts_terms(query: &str) -> Vec<String> {
    fts::search_terms(query)
        .iter()
        .take(12)
        .filter_map(|term| {
            let tokens = fts::index_tokens(term);
            match tokens.as_slice() {
                [] => None,
                [word] => Some(match fts::stem(word) {
                    Some(stem) => format!("({word} | {stem})"),
                    None => word.clone(),
                }),
                many => Some(format!("({})", many.join(" <-> "))),
            }
        })
        .collect()
}

/// Searches the team's active memories, observations and summaries on the server, best first.
pub fn search(config: &TeamConfig, query: &TeamQuery<'_>) -> Result<Vec<TeamHit>, TeamError> {
    if !config.enabled() {
        return Err(TeamError::NotConfigured);
    }
    if ts_query(query.text).is_none() && query.vector.is_none() {
        return Ok(Vec::new());
    }
    let mut client = connect::connect(&config.url)?;
    let mut hits = search_on(&mut client, query)?;
    // A teammate's global memory is found only when this member takes it (`teammates_global`).
    if hits.iter().any(|hit| hit.tier == "L3") {
        let me: Option<String> =
            client.query_opt(crate::sync::SHOWN_NAME, &[])?.map(|row| row.get(0));
        hits.retain(|hit| {
            hit.tier != "L3"
                || me.as_deref() == Some(hit.member.as_str())
                || config.takes_global_of(&hit.member)
        });
    }
    Ok(hits)
}

const FIND: &str = "SELECT source, gid, member, agent, project_name, tier, kind, text, updated_at,
                           rank, similarity
                    FROM agent_memory.find($1, $2, $3, $4, $5, $6)";

/// [`search`] over an open connection.
pub fn search_on(
    client: &mut postgres::Client,
    query: &TeamQuery<'_>,
) -> Result<Vec<TeamHit>, TeamError> {
    let limit = query.limit.clamp(1, 1000);
    let all = ts_query_all(query.text);
    let any = ts_query(query.text);
    let (model, vector) = match &query.vector {
        Some((model, vector)) => (Some(*model), Some(vector.as_slice())),
        None => (None, None),
    };
    let rows = match client.query_typed(
        FIND,
        &[
            (&all, Type::TEXT),
            (&any, Type::TEXT),
            (&query.project, Type::TEXT),
            (&(limit as i32), Type::INT4),
            (&model, Type::TEXT),
            (&vector, Type::FLOAT4_ARRAY),
        ],
    ) {
        Ok(rows) => rows,
        Err(err) => return Err(explain(client, err)),
    };
    let found = rows.iter().map(|r| {
        let hit = TeamHit {
            source: r.get(0),
            gid: r.get(1),
            member: r.get(2),
            agent: r.get(3),
            project: r.get(4),
            tier: r.get::<_, Option<String>>(5).unwrap_or_else(|| r.get(0)),
            kind: r.get(6),
            text: r.get(7),
            updated_at: r.get(8),
            rank: 0.0,
            similarity: None,
            score: 0.0,
        };
        (hit, r.get::<_, Option<f32>>(9), r.get::<_, Option<f32>>(10))
    });
    Ok(fuse(found, query, limit))
}

/// Why the call failed, in words that say what to do: a server without the call is of an
/// older schema (or none), a role without the right to make it is of no team.
fn explain(client: &mut postgres::Client, err: postgres::Error) -> TeamError {
    let code = err.code().cloned();
    if code == Some(SqlState::UNDEFINED_FUNCTION)
        || code == Some(SqlState::INVALID_SCHEMA_NAME)
        || code == Some(SqlState::INSUFFICIENT_PRIVILEGE)
    {
        // The one failing path that asks the server more: its schema and the role's team.
        if let Err(reason) = schema::check(client) {
            return reason;
        }
    }
    if code == Some(SqlState::INSUFFICIENT_PRIVILEGE)
        && let Ok(row) = client.query_one("SELECT current_user::text", &[])
    {
        return TeamError::NotMember { role: row.get(0) };
    }
    err.into()
}

/// One list out of both channels: a row either found comes once, with its rank and its
/// similarity, scored as local search scores it; rows only the vector found, below the
/// similarity floor, are left out.
fn fuse(
    found: impl Iterator<Item = (TeamHit, Option<f32>, Option<f32>)>,
    query: &TeamQuery<'_>,
    limit: usize,
) -> Vec<TeamHit> {
    let mut hits: Vec<(TeamHit, Option<f32>, Option<f32>)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for (hit, rank, similarity) in found {
        match at.get(&hit.gid) {
            Some(&i) => {
                hits[i].1 = hits[i].1.or(rank);
                hits[i].2 = hits[i].2.or(similarity);
            }
            None => {
                at.insert(hit.gid.clone(), hits.len());
                hits.push((hit, rank, similarity));
            }
        }
    }
    hits.retain(|(_, rank, sim)| {
        rank.is_some() || sim.is_some_and(|s| s >= query.similarity_floor)
    });
    let span = |values: Vec<f64>| {
        values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)))
    };
    let scale = |(lo, hi): (f64, f64), v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
    let ranks = span(hits.iter().filter_map(|h| h.1.map(f64::from)).collect());
    let sims = span(hits.iter().filter_map(|h| h.2.map(f64::from)).collect());
    let semantic = hits.iter().any(|h| h.2.is_some());
    let mut out: Vec<TeamHit> = hits
        .into_iter()
        .map(|(mut hit, rank, similarity)| {
            let text = rank.map_or(0.0, |r| scale(ranks, f64::from(r)));
            hit.rank = rank.unwrap_or(0.0);
            hit.similarity = similarity;
            hit.score = match (semantic, query.vector_share) {
                (false, _) => text,
                (true, Some(share)) => {
                    let sim = similarity.map_or(0.0, |s| scale(sims, f64::from(s)));
                    share * sim + (1.0 - share) * text
                }
                (true, None) => {
                    let sim = similarity.map_or(0.0, |s| f64::from(s).clamp(0.0, 1.0));
                    1.0 - (1.0 - text) * (1.0 - sim)
                }
            };
            hit
        })
        .collect();
    // Stable: among equal scores the server's order (rank, then newest) stands.
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out.truncate(limit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ts_query_quotes_nothing_and_keeps_cjk_bigrams_together() {
        assert_eq!(ts_query("the"), Some("the".into()));
        assert_eq!(ts_query("failing tests").as_deref(), Some("(failing | fail) | (tests | test)"));
        assert_eq!(ts_query("支付回调").as_deref(), Some("(支付 <-> 付回 <-> 回调)"));
        assert_eq!(ts_query("'; DROP --"), Some("drop".into()));
        assert_eq!(ts_query("!!"), None);
        assert_eq!(ts_query_all("webhook retry").as_deref(), Some("webhook & (retry | retri)"));
        assert_eq!(ts_query_all("webhook"), None);
    }

    fn hit(gid: &str) -> TeamHit {
        TeamHit {
            source: "memory".into(),
            gid: gid.into(),
            member: "Alice".into(),
            agent: "codex".into(),
            project: None,
            tier: "L2".into(),
            kind: "fact".into(),
            text: gid.into(),
            updated_at: 0,
            rank: 0.0,
            similarity: None,
            score: 0.0,
        }
    }

    fn gids(hits: &[TeamHit]) -> Vec<&str> {
        hits.iter().map(|h| h.gid.as_str()).collect()
    }

    #[test]
    fn both_channels_fuse_min_max_in_the_vector_share() {
        let query = TeamQuery {
            vector_share: Some(0.4),
            similarity_floor: 0.5,
            limit: 10,
            ..TeamQuery::default()
        };
        let found = vec![
            (hit("text-best"), Some(0.5), None),
            (hit("both"), Some(0.3), None),
            (hit("text-worst"), Some(0.1), None),
            (hit("both"), None, Some(0.9)),
            (hit("meaning"), None, Some(0.8)),
            (hit("noise"), None, Some(0.2)),
        ];
        let fused = fuse(found.into_iter(), &query, 10);
        // both: 0.4 * 1 + 0.6 * 0.5 = 0.7; text-best: 0.6; meaning: 0.4 * (0.8-0.8)/(0.9-0.8)…
        assert_eq!(gids(&fused), ["both", "text-best", "text-worst", "meaning"]);
        let both = &fused[0];
        assert_eq!((both.rank, both.similarity), (0.3, Some(0.9)));
        assert!((both.score - 0.7).abs() < 1e-6, "{}", both.score);
        // Without vectors the text order stands.
        let text_only = vec![(hit("a"), Some(0.2), None), (hit("b"), Some(0.4), None)];
        assert_eq!(gids(&fuse(text_only.into_iter(), &query, 1)), ["b"]);
    }
}
