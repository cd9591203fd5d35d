//! `agent-memory reindex`: embed what is stored with the configured embedding model, and encode
//! it with the configured sparse model (the worker keeps new items done afterwards).

use agent_memory_core::store::Store;
use agent_memory_core::store::vectors::{EmbedPass, EmbedPassError, embed_pending, encode_pending};
use anyhow::Context as _;

use super::Context;
use crate::cli::ReindexArgs;
use crate::output;

/// Texts embedded per call to the model.
const BATCH: usize = 32;

pub fn run(ctx: &Context, args: ReindexArgs) -> anyhow::Result<()> {
    let search = &ctx.config.search;
    if !search.semantic_recall {
        anyhow::bail!(
            "search by meaning is off (`semantic_recall = false` in [search]); turn it on to reindex"
        );
    }
    let (dense, sparse) = (search.embedding_model(), search.sparse_model());
    if dense.is_none() && sparse.is_none() {
        anyhow::bail!(
            "no embedding model is chosen; install one with `agent-memory model install potion-base-8m`"
        );
    }
    let mut store = ctx.store()?;
    let mut report = output::Reindexed::default();
    if let Some(name) = dense {
        let embedder = agent_memory_embed::load(&ctx.home.models_dir().join(name))
            .with_context(|| format!("cannot load the embedding model {name}"))?;
        let pass =
            one_pass(&mut store, embedder.model(), "embedding", &args, |store, progress| {
                embed_pending(store, embedder.as_ref(), BATCH, usize::MAX, progress)
            })?;
        report.dense = Some((name.to_owned(), pass));
    }
    if let Some(name) = sparse {
        let encoder = agent_memory_embed::load_sparse(&ctx.home.models_dir().join(name))
            .with_context(|| format!("cannot load the sparse model {name}"))?;
        let pass = one_pass(&mut store, encoder.model(), "encoding", &args, |store, progress| {
            encode_pending(store, encoder.as_ref(), BATCH, usize::MAX, progress)
        })?;
        report.sparse = Some((name.to_owned(), pass));
    }
    // A backlog's vectors grow the write-ahead log, and every process after this one would read
    // all of it to open the store (350 ms once 18,000 items were done).
    ctx.leave_log_small(&store);
    output::reindex(&report, args.json)?;
    Ok(())
}

/// One model's pass over what it has not done yet (everything with `--all`), with a progress
/// bar labelled `what`.
fn one_pass(
    store: &mut Store,
    model: &str,
    what: &'static str,
    args: &ReindexArgs,
    run: impl FnOnce(&mut Store, &mut dyn FnMut(usize, usize)) -> Result<EmbedPass, EmbedPassError>,
) -> anyhow::Result<EmbedPass> {
    if args.all {
        store.drop_vectors(model)?;
    }
    let (_, missing) = store.vector_coverage(model)?;
    let bar = output::progress(missing.max(0) as u64, what, args.json);
    let pass = run(store, &mut |done, _| bar.set_position(done as u64))?;
    bar.finish_and_clear();
    Ok(pass)
}
