//! `agent-memory recover`: drain every spool into the store now.

use super::Context;
use crate::cli::JsonFlag;
use crate::output;

pub fn run(ctx: &Context, args: JsonFlag) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let report =
        agent_memory_core::capture::drain(&mut store, &ctx.home, &ctx.config, None, usize::MAX);
    output::recover(&report, args.json)?;
    Ok(())
}
