//! `agent-memory team init|sync|status` and `search --team`: team memory on PostgreSQL. The
//! network side is the `agent-memory-team` crate; the hook never comes here.

use std::time::Duration;

use agent_memory_core::time;
use agent_memory_team::sync::SyncLock;
use agent_memory_team::{TeamError, connect, schema, sync};

use super::Context;
use crate::cli::{SearchArgs, TeamCommand};
use crate::output;

/// How long `team sync` waits for a sync that is running (the work pass's or serve's) before it
/// says so: long enough for a sync of many batches.
const SYNC_WAIT: Duration = Duration::from_secs(120);

pub fn run(ctx: &Context, command: TeamCommand) -> anyhow::Result<()> {
    let team = &ctx.config.team;
    match command {
        TeamCommand::Init { json } => {
            if !team.enabled() {
                return Err(TeamError::NotConfigured.into());
            }
            let mut client = connect::connect(&team.url)?;
            let migrated = schema::init(&mut client)?;
            output::team_init(&migrated, json)?;
        }
        TeamCommand::Sync { dry_run: true, json } => {
            let store = ctx.store()?;
            let rows = sync::dry_run(&store, team)?;
            output::team_dry_run(&rows, json)?;
        }
        TeamCommand::Sync { dry_run: false, json } => {
            if !team.enabled() {
                return Err(TeamError::NotConfigured.into());
            }
            // A sync of the work pass or serve's worker may be running: wait for it a while.
            let lock = SyncLock::wait_for(&ctx.home, SYNC_WAIT)?;
            let store = ctx.store()?;
            let report = sync::sync(&lock, &store, team, time::now_ms())?;
            output::team_sync(&report, json)?;
        }
        TeamCommand::Status { offline, json } => {
            let store = ctx.store()?;
            let status = sync::status(&store, team, !offline)?;
            output::team_status(&status, json)?;
        }
    }
    Ok(())
}

/// `search --team`: the query asked of the team database, narrowed by --project when given.
pub fn search(
    ctx: &Context,
    store: &agent_memory_core::store::Store,
    args: &SearchArgs,
) -> anyhow::Result<()> {
    let project = ctx.project_filter(store, args.filters.project.as_deref())?;
    let limit = args.limit.unwrap_or(ctx.config.search.limit);
    let hits = sync::search(&ctx.config.team, &args.query.join(" "), project.as_deref(), limit)?;
    output::team_search(&hits, args.json)?;
    Ok(())
}
