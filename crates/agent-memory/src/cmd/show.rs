//! `agent-memory show`: print observations (`o12`, or just `12`), summaries (`s3`), memories
//! (`m7`) and events (`e45`) in full, each with when it was last handed to an agent.

use agent_memory_core::recall::ItemId;

use super::Context;
use crate::cli::ShowArgs;
use crate::output;

pub fn run(ctx: &Context, args: ShowArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let ids = args.ids.iter().map(|raw| raw.parse::<ItemId>()).collect::<Result<Vec<_>, _>>()?;
    let settings = ctx.recall_settings(false);
    let shown = settings.reader(&store).show(&ids)?;
    output::show(&shown, args.json)?;
    Ok(())
}
