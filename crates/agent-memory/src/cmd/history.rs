//! `agent-memory history`: what the agents' own history holds on this machine; `history
//! import`: core's `history::import` of it, with a progress bar, then a background work pass
//! that distils it.

use agent_memory_core::adapter::AgentSpec;
use agent_memory_core::history::{self, Found, Options};
use agent_memory_core::install::Agent;
use agent_memory_core::time;
use anyhow::Context as _;

use super::Context;
use crate::cli::{HistoryArgs, HistoryCommand, HistoryImportArgs};
use crate::output;

pub fn run(ctx: &Context, args: HistoryArgs) -> anyhow::Result<()> {
    match args.command {
        None => list(ctx, args.json),
        Some(HistoryCommand::Import(import_args)) => import(ctx, import_args),
    }
}

fn list(ctx: &Context, json: bool) -> anyhow::Result<()> {
    let dirs = super::install::user_dirs()?;
    let found = history::find(&dirs, &[]);
    let store = ctx.store()?;
    let summaries = history::survey(&store, &found)?;
    output::history(&summaries, json)?;
    Ok(())
}

fn import(ctx: &Context, args: HistoryImportArgs) -> anyhow::Result<()> {
    let agents: Vec<&'static AgentSpec> =
        super::install::named(&args.agents)?.into_iter().map(Agent::spec).collect();
    let since_ms =
        args.since.as_deref().map(|s| time::parse_when(s, time::now_ms())).transpose()?;
    let project = args
        .project
        .as_deref()
        .map(|dir| {
            std::fs::canonicalize(dir).or_else(|_| std::path::absolute(dir)).with_context(|| {
                format!("cannot use {} as a project directory; check the path", dir.display())
            })
        })
        .transpose()?;
    let dirs = super::install::user_dirs()?;
    let found = history::find(&dirs, &agents);
    let options = Options { since_ms, project };
    let report = run_import(ctx, &found, &options, args.json, !args.no_work)?;
    let stored: u64 = report.iter().map(|r| r.events).sum();
    output::history_imported(&report, !args.no_work && stored > 0, args.json)?;
    Ok(())
}

/// Imports `found` with a progress bar (sessions handled, their rate and what is left); with
/// `distil`, a work pass then distils what was stored, in the background, unless the
/// configuration leaves distilling to be run by hand.
pub fn run_import(
    ctx: &Context,
    found: &[Found],
    options: &Options,
    quiet: bool,
    distil: bool,
) -> anyhow::Result<Vec<history::Imported>> {
    let total: usize = found.iter().map(|f| f.sources.len()).sum();
    let bar = output::progress(total as u64, "history", quiet);
    let mut store = ctx.store()?;
    let report = history::import(&mut store, &ctx.config, found, options, &mut || bar.inc(1))?;
    bar.finish_and_clear();
    ctx.leave_log_small(&store);
    if distil && ctx.config.distil.auto_work && report.iter().any(|r| r.events > 0) {
        super::hook::spawn_detached(
            &["work", "--background"],
            "the work pass that distils the imported history; run `agent-memory work`",
        );
    }
    Ok(report)
}
