//! `agent-memory reactions`: the configured `[[reactions]]` and how they went (`list`), and
//! which recent items each would match (`test`), running nothing. The work pass runs them.

use agent_memory_core::{react, time};

use super::Context;
use crate::cli::ReactionsCommand;
use crate::output;
use crate::output::reactions::{Matched, ReactionLine};

pub fn run(ctx: &Context, command: ReactionsCommand) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let reactions = &ctx.config.reactions;
    match command {
        ReactionsCommand::List(args) => {
            let since = time::now_ms() - 86_400_000;
            let mut lines = Vec::with_capacity(reactions.len());
            for reaction in reactions {
                lines.push(ReactionLine {
                    reaction,
                    unusable: react::unusable(reaction, reactions),
                    last_day: react::outcomes_of(&store, reaction.name.trim(), since)?,
                });
            }
            output::reactions::list(&lines, args.json)?;
        }
        ReactionsCommand::Test { limit, json } => {
            let items = react::recent(&store, limit.max(1))?;
            let matched: Vec<Matched<'_>> = reactions
                .iter()
                .map(|reaction| Matched {
                    reaction: reaction.name.trim(),
                    unusable: react::unusable(reaction, reactions),
                    items: items.iter().filter(|item| react::matches(reaction, item)).collect(),
                })
                .collect();
            output::reactions::tested(&matched, items.len(), json)?;
        }
    }
    Ok(())
}
