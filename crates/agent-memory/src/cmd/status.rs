//! `agent-memory status`: what is stored and how the hooks are doing.

use agent_memory_core::capture::spool;
use agent_memory_core::time;

use super::Context;
use crate::cli::StatusArgs;
use crate::output;

pub fn run(ctx: &Context, args: StatusArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let now = time::now_ms();
    let windows = [("24h", now - 86_400_000), ("7d", now - 7 * 86_400_000)];
    let status = store.status(&windows)?;
    let spool = spool::depth(&ctx.home.spool_dirs(), now);
    output::status(&status, &spool, args.json)?;
    Ok(())
}
