//! `agent-memory search`: ranked full-text search over everything captured.

use agent_memory_core::store::search::SearchQuery;

use super::{Context, parse_time};
use crate::cli::SearchArgs;
use crate::output;

pub fn run(ctx: &Context, args: SearchArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let query = SearchQuery {
        text: args.query.join(" "),
        agent: args.filters.agent.map(|a| agent_memory_core::adapter::canonical_agent(&a)),
        project: ctx.project_filter(&store, args.filters.project.as_deref())?,
        since_ms: parse_time(args.filters.since.as_deref())?,
        until_ms: parse_time(args.filters.until.as_deref())?,
        limit: args.limit.unwrap_or(ctx.config.search.limit),
        max_terms: ctx.config.search.max_query_terms,
        ..SearchQuery::default()
    };
    let results = store.search(&query)?;
    output::search(&results, args.json)?;
    Ok(())
}
