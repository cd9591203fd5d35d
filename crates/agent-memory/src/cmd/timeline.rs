//! `agent-memory timeline`: the project's observations around an item, from every agent.

use super::Context;
use crate::cli::TimelineArgs;
use crate::output;

pub fn run(ctx: &Context, args: TimelineArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let settings = ctx.recall_settings(false);
    let timeline =
        settings.reader(&store).timeline(&args.anchor.join(" "), args.before, args.after)?;
    output::timeline(&timeline, args.json)?;
    Ok(())
}
