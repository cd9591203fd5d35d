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
    let agents = named_agents(&args.agents)?;
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
    let report = run_import(ctx, &found, &Options { since_ms, project }, args.json)?;
    let stored: u64 = report.iter().map(|r| r.events).sum();
    if stored > 0 && !args.no_work && ctx.config.distil.auto_work {
        super::hook::spawn_detached(
            &["work", "--background"],
            "the work pass that distils the imported history; run `agent-memory work`",
        );
    }
    output::history_imported(&report, !args.no_work && stored > 0, args.json)?;
    Ok(())
}

/// Imports `found` with a progress bar (sessions handled, their rate and what is left).
pub fn run_import(
    ctx: &Context,
    found: &[Found],
    options: &Options,
    quiet: bool,
) -> anyhow::Result<Vec<history::Imported>> {
    let total: usize = found.iter().map(|f| f.sources.len()).sum();
    let bar = output::progress(total as u64, "history", quiet);
    let mut store = ctx.store()?;
    let report = history::import(&mut store, &ctx.config, found, options, &mut || bar.inc(1))?;
    bar.finish_and_clear();
    ctx.leave_log_small(&store);
    Ok(report)
}

/// The agents named on the command line, each once; none named: every agent.
fn named_agents(names: &[String]) -> anyhow::Result<Vec<&'static AgentSpec>> {
    let mut agents: Vec<&'static AgentSpec> = Vec::new();
    for name in names {
        let agent = Agent::from_name(name).with_context(|| {
            let names: Vec<&str> = Agent::all().map(Agent::name).collect();
            format!("unknown agent `{name}`; choose among {}", names.join(", "))
        })?;
        if !agents.iter().any(|a| a.name == agent.spec().name) {
            agents.push(agent.spec());
        }
    }
    Ok(agents)
}
