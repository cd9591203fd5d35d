//! `agent-memory tidy`: report long-term memories not found for a long time, duplicates and
//! superseded ones; with `--apply`, back the database file up, then forget the stale ones and
//! fold each duplicate into the one kept.

use agent_memory_core::promote::{self, tidy};
use agent_memory_core::time;

use super::Context;
use crate::cli::TidyArgs;
use crate::output;

pub fn run(ctx: &Context, args: TidyArgs) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let settings =
        promote::Settings::from_config(&ctx.config.promote, ctx.config.search.embedding_model());
    let now = time::now_ms();
    let report = tidy::plan(&store, &settings, args.stale_days, now)?;
    if !args.apply {
        return Ok(output::tidy(&report, args.stale_days, None, args.json)?);
    }
    let mut backup = ctx.home.db_path().into_os_string();
    backup.push(format!(".before-tidy-{now}.bak"));
    let backup = std::path::PathBuf::from(backup);
    store.backup_to(&backup).map_err(|err| {
        anyhow::anyhow!(
            "cannot back the store up to {} ({err}); nothing was changed, check free space and try again",
            backup.display()
        )
    })?;
    let applied = tidy::apply(&mut store, &report, now)?;
    ctx.leave_log_small(&store);
    output::tidy(&report, args.stale_days, Some((&applied, &backup)), args.json)?;
    Ok(())
}
