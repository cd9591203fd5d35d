//! `agent-memory plugin claude-code`: agent-memory packaged as a Claude Code plugin, in a
//! one-plugin local marketplace the user adds with Claude Code's own commands.

use agent_memory_core::fsutil;
use agent_memory_core::install::{Agent, claude_code};
use anyhow::Context as _;

use super::Context;
use super::install::Locations;
use crate::cli::PluginArgs;
use crate::output;

pub fn run(ctx: &Context, args: PluginArgs) -> anyhow::Result<()> {
    if Agent::from_name(&args.agent).map(Agent::name) != Some(claude_code::AGENT) {
        anyhow::bail!(
            "no plugin for `{}`: only Claude Code takes one; wire the others with `agent-memory install`",
            args.agent
        );
    }
    let loc = Locations::from_env(None)?;
    let dir = match args.dir {
        Some(dir) => std::path::absolute(dir)?,
        None => ctx.home.root().join("claude-plugin"),
    };
    for (path, text) in claude_code::plugin_files(&loc.bin, env!("CARGO_PKG_VERSION")) {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| {
                format!("cannot create {}; check its permissions", parent.display())
            })?;
        }
        fsutil::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}; check its permissions", path.display()))?;
    }
    let name = claude_code::PLUGIN_NAME;
    output::text(&format!(
        "wrote the {name} plugin marketplace to {dir}\n\
         install it in Claude Code with:\n  \
         claude plugin marketplace add {dir}\n  \
         claude plugin install {name}@{name}\n\
         or try it for one session: claude --plugin-dir {dir}/plugins/{name}\n\
         The plugin carries the hooks and the MCP server; if `agent-memory install claude-code` \
         wired your settings too, run `agent-memory uninstall claude-code` so each event is recorded once.\n",
        dir = dir.display()
    ))?;
    Ok(())
}
