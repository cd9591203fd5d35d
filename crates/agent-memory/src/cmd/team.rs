//! `agent-memory team init|sync|status` and `search --team`: team memory on PostgreSQL. The
//! network side is the `agent-memory-team` crate; the hook never comes here.

use std::time::Duration;

use agent_memory_core::time;
use agent_memory_team::search::TeamQuery;
use agent_memory_team::sync::SyncLock;
use agent_memory_team::{TeamError, connect, schema, search as team_search, sync};

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
            // With a model, what is pushed carries its vector for the team's search by meaning.
            let embedder = ctx.embedder();
            let report = sync::sync(&lock, &store, team, embedder.as_deref(), time::now_ms())?;
            ctx.leave_log_small(&store);
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

/// `search --team`: the query asked of the team database, narrowed by --project when given,
/// and with a model configured, its vector too (embedded here; the server compares it with
/// the vectors of the same model only).
pub fn search(ctx: &Context, args: &SearchArgs) -> anyhow::Result<()> {
    // The store is opened only to name a project: a plain team search needs nothing local.
    let project = match args.filters.project.as_deref() {
        Some(value) => ctx.project_filter(&ctx.store()?, Some(value))?,
        None => None,
    };
    let text = args.query.join(" ");
    let embedder = ctx.embedder();
    let vector =
        embedder.as_deref().and_then(|embedder| match embedder.embed_queries(&[text.as_str()]) {
            Ok(mut vectors) => vectors.pop().map(|v| (embedder.model(), v)),
            Err(err) => {
                tracing::warn!(%err, "cannot embed the query; the team search keeps to full text");
                None
            }
        });
    let ranking = ctx.ranking();
    let query = TeamQuery {
        text: &text,
        project: project.as_deref(),
        limit: args.limit.unwrap_or(ctx.config.search.limit),
        vector,
        vector_share: ranking.vector_share,
        similarity_floor: ranking.similarity_floor,
    };
    let hits = team_search::search(&ctx.config.team, &query)?;
    output::team_search(&hits, args.json)?;
    Ok(())
}
