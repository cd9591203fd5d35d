//! `agent-memory reindex`: embed what is stored with the configured model (the worker keeps
//! new items embedded afterwards).

use agent_memory_core::store::vectors::embed_pending;
use anyhow::Context as _;

use super::Context;
use crate::cli::ReindexArgs;
use crate::output;

/// Texts embedded per call to the model.
const BATCH: usize = 32;

pub fn run(ctx: &Context, args: ReindexArgs) -> anyhow::Result<()> {
    if !ctx.config.search.semantic_recall {
        anyhow::bail!(
            "search by meaning is off (`semantic_recall = false` in [search]); turn it on to reindex"
        );
    }
    let Some(name) = ctx.config.search.embedding_model() else {
        anyhow::bail!(
            "no embedding model is chosen; install one with `agent-memory model install potion-base-8m`"
        );
    };
    let embedder = agent_memory_embed::load(&ctx.home.models_dir().join(name))
        .with_context(|| format!("cannot load the embedding model {name}"))?;
    let mut store = ctx.store()?;
    if args.all {
        store.drop_vectors(embedder.model())?;
    }
    let (_, missing) = store.vector_coverage(embedder.model())?;
    let bar = output::progress(missing.max(0) as u64, "embedding", args.json);
    let pass = embed_pending(&mut store, embedder.as_ref(), BATCH, usize::MAX, &mut |done, _| {
        bar.set_position(done as u64)
    })?;
    bar.finish_and_clear();
    output::reindex(embedder.model(), &pass, args.json)?;
    Ok(())
}
