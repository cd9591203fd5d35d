//! `agent-memory model`: install, list and remove embedding models. Installing is the only
//! moment a model is ever fetched, and only for a known name without `--from`.

use agent_memory_core::config::set_in_file;

use super::Context;
use crate::cli::{ModelCommand, ModelInstallArgs};
use crate::output;

pub fn run(ctx: &Context, command: ModelCommand) -> anyhow::Result<()> {
    let models = ctx.home.models_dir();
    match command {
        ModelCommand::Install(args) => install(ctx, args),
        ModelCommand::List(args) => {
            let installed = agent_memory_embed::installed(&models);
            output::model_list(&installed, ctx.config.search.embedding_model(), args.json)?;
            Ok(())
        }
        ModelCommand::Remove { name } => {
            agent_memory_embed::remove(&models, &name)?;
            let was_used = ctx.config.search.model.trim() == name;
            if was_used {
                set_in_file(
                    &ctx.home.config_path(),
                    &[("search", "model", toml::Value::String(String::new()))],
                )?;
            }
            output::model_removed(&name, was_used)?;
            Ok(())
        }
    }
}

fn install(ctx: &Context, args: ModelInstallArgs) -> anyhow::Result<()> {
    agent_memory_core::fsutil::ensure_private_dir(ctx.home.root())?;
    let manifest =
        agent_memory_embed::install(&ctx.home.models_dir(), &args.name, args.from.as_deref())?;
    if !args.no_use {
        set_in_file(
            &ctx.home.config_path(),
            &[("search", "model", toml::Value::String(manifest.name.clone()))],
        )?;
    }
    let pending = ctx.store()?.vector_coverage(&manifest.name)?.1;
    output::model_installed(&manifest, !args.no_use, pending, args.json)?;
    Ok(())
}
