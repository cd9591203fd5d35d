//! `agent-memory log`: every injection on record, newest first: when context was handed to
//! which agent and session, by which channel, with which items, what it cost and what the
//! budget left out.

use agent_memory_core::recall::{self, InjectionRequest};

use super::Context;
use crate::cli::LogArgs;
use crate::output;

pub fn run(ctx: &Context, args: LogArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let request = InjectionRequest {
        session: args.session,
        agent: args.agent,
        project: args.project,
        limit: args.limit,
    };
    let injections = recall::injections(&store, request)?;
    output::injections(&injections, args.json)?;
    Ok(())
}
