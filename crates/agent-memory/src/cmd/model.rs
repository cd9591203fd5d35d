//! `agent-memory model`: install, list and remove embedding models and learned sparse models.
//! Installing is the only moment a model is ever fetched, and only for a known name without
//! `--from`. An embedding model is used as `[search] model`, a sparse one as
//! `[search] sparse_model`: search can use one of each.

use agent_memory_core::config::set_in_file;
use agent_memory_core::embed::ModelKind;

use super::Context;
use crate::cli::{ModelCommand, ModelInstallArgs};
use crate::output;

pub fn run(ctx: &Context, command: ModelCommand) -> anyhow::Result<()> {
    let models = ctx.home.models_dir();
    match command {
        ModelCommand::Install(args) => install(ctx, args),
        ModelCommand::List(args) => {
            // What an install stopped half way left goes on the next look, too.
            agent_memory_embed::clear_leftovers(&models);
            let installed = agent_memory_embed::installed(&models);
            let search = &ctx.config.search;
            let used: Vec<&str> =
                search.embedding_model().into_iter().chain(search.sparse_model()).collect();
            output::model_list(&installed, &used, args.json)?;
            Ok(())
        }
        ModelCommand::Remove { name } => {
            agent_memory_embed::remove(&models, &name)?;
            let search = &ctx.config.search;
            let was_used = if search.model.trim() == name {
                output::WasUsed::Embedding
            } else if search.sparse_model.trim() == name {
                output::WasUsed::Sparse
            } else {
                output::WasUsed::No
            };
            let key = match was_used {
                output::WasUsed::No => None,
                output::WasUsed::Embedding => Some("model"),
                output::WasUsed::Sparse => Some("sparse_model"),
            };
            if let Some(key) = key {
                set_in_file(
                    &ctx.home.config_path(),
                    &[("search", key, toml::Value::String(String::new()))],
                )?;
            }
            output::model_removed(&name, was_used)?;
            Ok(())
        }
    }
}

fn install(ctx: &Context, args: ModelInstallArgs) -> anyhow::Result<()> {
    agent_memory_core::fsutil::ensure_private_dir(ctx.home.root())?;
    // A ^C stops pip (it gets the signal too) and the install then removes what it had
    // fetched and copied, instead of leaving hundreds of MB in models/.
    let stop =
        super::on_interrupt("stopping: removing what was downloaded (^C again stops at once)");
    let installed =
        agent_memory_embed::install(&ctx.home.models_dir(), &args.name, args.from.as_deref());
    if stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst))
        && installed.is_err()
    {
        anyhow::bail!(
            "interrupted: {} was not installed and nothing of it was kept; run `agent-memory \
             model install {}` again to install it",
            args.name,
            args.name
        );
    }
    let manifest = installed?;
    if !args.no_use {
        let key = if manifest.kind == ModelKind::Sparse { "sparse_model" } else { "model" };
        set_in_file(
            &ctx.home.config_path(),
            &[("search", key, toml::Value::String(manifest.name.clone()))],
        )?;
    }
    let pending = ctx.store()?.vector_coverage(&manifest.name)?.1;
    output::model_installed(&manifest, !args.no_use, pending, args.json)?;
    Ok(())
}
