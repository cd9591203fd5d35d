//! `agent-memory search`: one ranked list over everything stored, by full text and, once an
//! embedding model is installed, by meaning.

use agent_memory_core::store::search::{SearchQuery, VectorQuery};
use agent_memory_core::time;

use super::{Context, parse_time};
use crate::cli::SearchArgs;
use crate::output;

pub fn run(ctx: &Context, args: SearchArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let ranking = ctx.ranking();
    let query = SearchQuery {
        text: args.query.join(" "),
        agent: args.filters.agent.map(|a| agent_memory_core::adapter::canonical_agent(&a)),
        project: ctx.project_filter(&store, args.filters.project.as_deref())?,
        since_ms: parse_time(args.filters.since.as_deref())?,
        until_ms: parse_time(args.filters.until.as_deref())?,
        kinds: args.kind,
        tiers: args.tier,
        types: args.types,
        limit: args.limit.unwrap_or(ctx.config.search.limit),
        max_terms: ctx.config.search.max_query_terms,
        ranking: ranking.clone(),
    };
    let semantic = ctx.query_vector(&store, &query.text);
    let vector = semantic.as_ref().map(|(index, vector)| VectorQuery { index, vector });
    let results = store.search_hybrid(&query, vector)?;
    if let Err(err) = store.record_hits(results.hits.iter().map(|h| (h.kind, h.id)), time::now_ms())
    {
        tracing::debug!(%err, "hit counts not updated");
    }
    output::search(&results, &ranking, args.explain, args.json)?;
    Ok(())
}
