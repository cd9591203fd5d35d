//! `agent-memory vault sync`: one two-way pass between the store and the Obsidian vault.

use agent_memory_core::{time, vault};

use super::Context;
use crate::cli::VaultCommand;
use crate::output;

pub fn run(ctx: &Context, command: VaultCommand) -> anyhow::Result<()> {
    let VaultCommand::Sync { vault: dir, json } = command;
    let root = match dir {
        Some(dir) => std::path::absolute(dir)?,
        None => ctx.config.vault.root().ok_or(vault::VaultError::NotConfigured)?,
    };
    let mut store = ctx.store()?;
    let state = ctx.home.root().join("vault-state.json");
    let report = vault::sync(&mut store, &root, &state, time::now_ms())?;
    output::vault_sync(&root, &report, json)?;
    Ok(())
}
