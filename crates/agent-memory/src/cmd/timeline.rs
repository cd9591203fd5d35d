//! `agent-memory timeline`: the project's observations around an item, from every agent.

use agent_memory_core::store::search::SearchQuery;

use super::Context;
use super::show::parse_id;
use crate::cli::TimelineArgs;
use crate::output;

/// What a timeline can be anchored on: items that happened at a point of a session.
const ANCHOR_KINDS: [&str; 3] = ["observation", "summary", "event"];

pub fn run(ctx: &Context, args: TimelineArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let text = args.anchor.join(" ");
    let (kind, id) = match parse_id(&text) {
        Ok(found) if args.anchor.len() == 1 => found,
        // Not an id: the best search hit anchors the timeline.
        _ => {
            let query = SearchQuery {
                text: text.clone(),
                limit: 1,
                max_terms: ctx.config.search.max_query_terms,
                kinds: ANCHOR_KINDS.iter().map(|k| (*k).to_owned()).collect(),
                ..SearchQuery::default()
            };
            let hit = store.search(&query)?.hits.into_iter().next().ok_or_else(|| {
                anyhow::anyhow!(
                    "nothing matches `{text}`; try other words or an id from `agent-memory search`"
                )
            })?;
            (hit.kind.chars().next().unwrap_or('e'), hit.id)
        }
    };
    let anchor = store.anchor(kind, id)?.ok_or_else(|| {
        anyhow::anyhow!("nothing stored under {kind}{id}; ids come from `agent-memory search`")
    })?;
    let items = store.timeline_around(&anchor, args.before, args.after)?;
    let marked = (kind == 'o').then_some(id);
    output::timeline(&items, marked, anchor.at_ms, args.json)?;
    Ok(())
}
