//! `agent-memory mode`: list the modes, show one, and choose the one the distiller uses.
//!
//! Loading and validating modes is core's (`distil::mode`); editing `config.toml` is core's
//! too (`config::set_in_file`, which keeps the user's file byte for byte but for the one line).
//! This module only picks the defaults from `[distil]`.

use std::path::Path;

use agent_memory_core::config;
use agent_memory_core::distil::mode::{self, ModeError};

use super::Context;
use crate::cli::ModeCommand;
use crate::output;
use crate::report::ModeSet;

pub fn run(ctx: &Context, command: ModeCommand) -> anyhow::Result<()> {
    let user_dir = ctx.home.modes_dir();
    match command {
        ModeCommand::List(args) => {
            let modes = mode::list(Some(&user_dir));
            output::mode_list(&modes, &ctx.config.distil.mode, args.json)?;
        }
        ModeCommand::Show(args) => {
            let name = args.name.as_deref().unwrap_or(&ctx.config.distil.mode);
            let language = args.language.as_deref().unwrap_or(&ctx.config.distil.language);
            let loaded = load(name, language, &user_dir)?;
            output::mode_show(&loaded, args.json)?;
        }
        ModeCommand::Use(args) => {
            let language = args.language.as_deref().map(mode::canonical_language).transpose()?;
            // Load first, in the language it will be used in, so a broken mode is never set.
            let loaded =
                load(&args.name, language.unwrap_or(&ctx.config.distil.language), &user_dir)?;
            let mut edits = vec![("distil", "mode", toml::Value::String(loaded.name.clone()))];
            if let Some(language) = language {
                edits.push(("distil", "language", toml::Value::String(language.to_owned())));
            }
            let path = ctx.home.config_path();
            let changed = config::set_in_file(&path, &edits)?;
            if args.json {
                return Ok(output::json_value(&ModeSet {
                    mode: loaded.name.clone(),
                    language: loaded.language.clone(),
                    file: path,
                    changed,
                })?);
            }
            let verb = if changed { "set in" } else { "already set in" };
            output::line(&format!(
                "mode `{}` (language {}) {verb} {}",
                loaded.name,
                loaded.language,
                path.display()
            ))?;
            // The environment wins over the file; say so rather than let the change look lost.
            for var in ["AGENT_MEMORY_DISTIL__MODE", "AGENT_MEMORY_DISTIL__LANGUAGE"] {
                if std::env::var_os(var).is_some() {
                    output::line(&format!(
                        "note: {var} is set in the environment and overrides the file; unset it \
                         for this setting to take effect"
                    ))?;
                }
            }
        }
    }
    Ok(())
}

/// Where user modes live: `<home>/modes/NAME.toml`.
/// Loads a mode; when the name is unknown, the error also says where user modes go.
fn load(name: &str, language: &str, user_dir: &Path) -> anyhow::Result<mode::Mode> {
    mode::load(name, language, Some(user_dir)).map_err(|err| match err {
        ModeError::UnknownMode { .. } | ModeError::UnknownParent { .. } => {
            anyhow::anyhow!("{err} ({})", user_dir.display())
        }
        other => other.into(),
    })
}
