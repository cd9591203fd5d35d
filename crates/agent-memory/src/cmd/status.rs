//! `agent-memory status`: what is stored, how the hooks are doing, when the last work pass ran,
//! how far the search models have come and whether the local server is running.

use agent_memory_core::capture::{self, spool};
use agent_memory_core::store::Store;
use agent_memory_core::{react, time, work};
use agent_memory_serve::instance::Instance;

use super::Context;
use crate::cli::StatusArgs;
use crate::output;
use crate::report::{Activity, ModelCoverage, Reactions, ServeRunning};

pub fn run(ctx: &Context, args: StatusArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let now = time::now_ms();
    let windows = [("24h", now - 86_400_000), ("7d", now - 7 * 86_400_000)];
    let mut status = store.status(&windows)?;
    let lost = capture::lost::peek(&ctx.home);
    status.add_lost(&windows, lost.count, lost.last_ms);
    let spool = spool::depth(&ctx.home.spool_dirs(), now);
    let instance = Instance::new(&ctx.home);
    let serve = instance
        .is_running()
        .then(|| instance.state())
        .flatten()
        .map(|state| ServeRunning { url: state.url, pid: state.pid });
    let search_models = search_models(ctx, &store)?;
    let reactions = &ctx.config.reactions;
    let reactions = match reactions.is_empty() {
        true => None,
        false => Some(Reactions {
            configured: reactions.len(),
            unusable: reactions.iter().filter_map(|r| react::unusable(r, reactions)).collect(),
            last_day: react::outcomes(&store, now - 86_400_000)?,
        }),
    };
    let activity = Activity {
        last_work_pass_ms: work::last_pass(&ctx.home),
        search_models,
        events_to_index: store.events_to_restem()?,
        serve,
        reactions,
    };
    output::status(&status, &spool, &activity, args.json)?;
    Ok(())
}

/// Each search model in use (embedding, then sparse), with how far it has come through the
/// store: what `status` shows and `doctor --health` judges.
pub fn search_models(ctx: &Context, store: &Store) -> anyhow::Result<Vec<ModelCoverage>> {
    let search = &ctx.config.search;
    let mut models = Vec::new();
    for model in [search.embedding_model(), search.sparse_model()].into_iter().flatten() {
        let (encoded, waiting) = store.vector_coverage(model)?;
        models.push(ModelCoverage { model: model.to_owned(), encoded, waiting });
    }
    Ok(models)
}
