//! `agent-memory reindex`: embed what is stored with the configured embedding model, and encode
//! it with the configured sparse model (the worker keeps new items done afterwards).

use std::time::Duration;

use agent_memory_core::store::WAL_CHECKPOINT_BYTES;
use agent_memory_core::store::vectors::{embed_pending, encode_pending};
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
        if args.all {
            store.drop_vectors(embedder.model())?;
        }
        let (_, missing) = store.vector_coverage(embedder.model())?;
        let bar = output::progress(missing.max(0) as u64, "embedding", args.json);
        let pass =
            embed_pending(&mut store, embedder.as_ref(), BATCH, usize::MAX, &mut |done, _| {
                bar.set_position(done as u64)
            })?;
        bar.finish_and_clear();
        report.dense = Some((name.to_owned(), pass));
    }
    if let Some(name) = sparse {
        let encoder = agent_memory_embed::load_sparse(&ctx.home.models_dir().join(name))
            .with_context(|| format!("cannot load the sparse model {name}"))?;
        if args.all {
            store.drop_vectors(encoder.model())?;
        }
        let (_, missing) = store.vector_coverage(encoder.model())?;
        let bar = output::progress(missing.max(0) as u64, "encoding", args.json);
        let pass =
            encode_pending(&mut store, encoder.as_ref(), BATCH, usize::MAX, &mut |done, _| {
                bar.set_position(done as u64)
            })?;
        bar.finish_and_clear();
        report.sparse = Some((name.to_owned(), pass));
    }
    // A backlog's vectors grow the write-ahead log, and every process after this one would read
    // all of it to open the store (350 ms once 18,000 items were done). A busy store is no
    // failure: the next writer empties the log.
    if let Err(err) = store.checkpoint_if_large(WAL_CHECKPOINT_BYTES, Duration::from_secs(2)) {
        tracing::debug!(%err, "checkpoint skipped");
    }
    output::reindex(&report, args.json)?;
    Ok(())
}
