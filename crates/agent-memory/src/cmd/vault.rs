//! `agent-memory vault sync`: one two-way pass between the store and the Obsidian vault.

use agent_memory_core::{time, vault};
use anyhow::Context as _;

use super::Context;
use crate::cli::VaultCommand;
use crate::output;

pub fn run(ctx: &Context, command: VaultCommand) -> anyhow::Result<()> {
    let VaultCommand::Sync { vault: dir, create, json } = command;
    let root = match dir {
        // A folder named on the command line is used as it is: a mistyped path is refused
        // rather than made into an empty vault, unless --create asks for a new one.
        Some(dir) => {
            let dir = std::path::absolute(dir)?;
            if !dir.is_dir() {
                if !create {
                    anyhow::bail!(
                        "the vault folder {} does not exist; check the path, or add --create to \
                         start a new vault folder there",
                        dir.display()
                    );
                }
                std::fs::create_dir_all(&dir).with_context(|| {
                    format!("cannot create {}; check its parent's permissions", dir.display())
                })?;
            }
            dir
        }
        None => ctx.config.vault.root().ok_or(vault::VaultError::NotConfigured)?,
    };
    let mut store = ctx.store()?;
    let state = ctx.home.root().join("vault-state.json");
    let report = vault::sync(&mut store, &root, &state, time::now_ms())?;
    output::vault_sync(&root, &report, json)?;
    Ok(())
}
