//! `agent-memory config`: the default configuration, its path, and what is in effect.

use agent_memory_core::config::DEFAULT_TOML;

use super::Context;
use crate::cli::ConfigCommand;
use crate::output;

pub fn run(ctx: &Context, command: ConfigCommand) -> anyhow::Result<()> {
    match command {
        ConfigCommand::Default => output::text(DEFAULT_TOML)?,
        ConfigCommand::Path => output::line(&ctx.home.config_path().display().to_string())?,
        ConfigCommand::Show(args) if args.json => output::json_value(&ctx.config)?,
        ConfigCommand::Show(_) => output::text(&toml::to_string(&ctx.config)?)?,
    }
    Ok(())
}
