//! `agent-memory search`: one ranked list over everything stored, by full text and, once an
//! embedding model is installed, by meaning.

use agent_memory_core::recall::SearchRequest;

use super::Context;
use crate::cli::SearchArgs;
use crate::output;

pub fn run(ctx: &Context, args: SearchArgs) -> anyhow::Result<()> {
    if args.team {
        return super::team::search(ctx, &args);
    }
    let store = ctx.store()?;
    let settings = ctx.recall_settings(true);
    let reader = settings.reader(&store);
    // One `--type` flag for both filters: the kinds of item, and their types within a kind.
    let (kinds, types) = args.types.into_iter().partition(|t| {
        matches!(t.trim().to_lowercase().as_str(), "observation" | "event" | "memory")
    });
    let request = SearchRequest {
        query: args.query.join(" "),
        limit: args.limit,
        kinds,
        tiers: args.tier,
        types,
        agent: args.filters.agent,
        project: args.filters.project,
        since: args.filters.since,
        until: args.filters.until,
    };
    // A person's own searches are not hits: counting them would move the next ranking, so the
    // same search would answer in another order each time. What agents are handed counts.
    let (_, results) = reader.search(request)?;
    output::search(&results, &settings.ranking, args.explain, args.json)?;
    // The process ends here. Freeing the models (their vocabularies are tens of thousands of
    // strings) cost a search 8 ms for nothing.
    std::mem::forget(settings);
    Ok(())
}
