//! `agent-memory show`: print observations (`o12`, or just `12`), summaries (`s3`), memories
//! (`m7`) and events (`e45`) in full.

use agent_memory_core::recall::{self, ItemId};

use super::Context;
use crate::cli::ShowArgs;
use crate::output;

pub fn run(ctx: &Context, args: ShowArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let ids = args.ids.iter().map(|raw| raw.parse::<ItemId>()).collect::<Result<Vec<_>, _>>()?;
    let settings = ctx.recall_settings(false);
    let mut shown = Vec::with_capacity(ids.len());
    for (id, item) in settings.reader(&store).get(&ids)? {
        shown.push(item.ok_or_else(|| recall::not_stored(id))?);
    }
    output::show(&shown, args.json)?;
    Ok(())
}
