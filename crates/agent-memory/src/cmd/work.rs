//! `agent-memory work`: distil new events into observations and session summaries.
//!
//! One pass by default; `--watch` keeps going. The offline distiller unless `[llm]` names a
//! provider; then the LLM distiller, within the day's token budget. A lock file keeps to one
//! pass at a time: the stop hook starts a pass in the background (`--background`), which
//! quietly gives way when one is already running. A pass that added observations or summaries
//! merges their full-text indexes, empties the write-ahead log, and refreshes the projects'
//! brief files (`agent-memory brief --write`). Each pass then screens what is distilled into
//! long-term memory candidates (`agent-memory review`).

use std::fs::File;
use std::time::Duration;

use agent_memory_core::distil::llm::{DayBudget, LlmDistiller};
use agent_memory_core::distil::offline::OfflineDistiller;
use agent_memory_core::distil::{mode, work};
use agent_memory_core::store::vectors::embed_pending;
use agent_memory_core::{fsutil, inject, promote, time};
use anyhow::Context as _;

use super::Context;
use crate::cli::WorkArgs;
use crate::output;

/// Sessions one pass takes on, so a huge backlog is worked through in steps.
const SESSIONS_PER_PASS: usize = 500;

/// Items one pass embeds, for the same reason; `agent-memory reindex` takes on a backlog at
/// once.
const EMBED_PER_PASS: usize = 512;

pub fn run(ctx: &Context, args: WorkArgs) -> anyhow::Result<()> {
    let (lock, lock_path) = open_lock(ctx)?;
    if !take_lock(&lock) {
        if args.background {
            return Ok(());
        }
        anyhow::bail!(
            "another distil pass is running (it holds {}); wait for it, or stop `agent-memory work --watch`",
            lock_path.display()
        );
    }
    let distil = &ctx.config.distil;
    let mode = mode::load(&distil.mode, &distil.language, Some(&ctx.home.modes_dir()))
        .context("cannot load the distil mode; see `agent-memory mode list`")?;
    let transport = agent_memory_serve::llm::transport(&ctx.config.llm)
        .context("the [llm] configuration cannot be used; fix it or set provider = \"none\"")?;
    let owner = format!("work-{}-{}", std::process::id(), time::now_ms());
    // Loaded once: a sentence encoder takes a moment to load, and `--watch` embeds every pass.
    let embedder = ctx.embedder();
    loop {
        let mut store = ctx.store()?;
        let report = distil_once(ctx, &mut store, transport.as_deref(), &mode, &owner)?;
        if report.observations + report.summaries > 0 {
            after_new_memory(ctx, &mut store);
        }
        if !args.background {
            output::work(&report, args.json)?;
        }
        // What was distilled (now or by an earlier pass) is screened for long-term memory.
        let settings = promote::Settings::from_config(
            &ctx.config.promote,
            ctx.config.search.embedding_model(),
        );
        match promote::run_pass(&mut store, &settings, time::now_ms()) {
            Ok(promoted) if !args.background && !args.json => {
                output::promoted(&promoted, settings.auto)?
            }
            Ok(_) => {}
            Err(err) => tracing::warn!("screening for long-term memory failed: {err}"),
        }
        if let Some(embedder) = &embedder {
            // New observations and summaries get their vectors here, off the hook path.
            match embed_pending(&mut store, embedder.as_ref(), 32, EMBED_PER_PASS, &mut |_, _| {}) {
                Ok(pass) if pass.embedded > 0 && !args.background && !args.json => {
                    output::reindex(embedder.model(), &pass, false)?;
                }
                Ok(_) => {}
                Err(err) => tracing::warn!("embedding new items failed: {err}"),
            }
        }
        if !args.watch {
            return Ok(());
        }
        drop(store);
        std::thread::sleep(Duration::from_secs(args.interval.max(1)));
    }
}

/// One distil pass over the store with the distiller the configuration names; the LLM's
/// spend is recorded even when the pass fails.
fn distil_once(
    ctx: &Context,
    store: &mut agent_memory_core::store::Store,
    transport: Option<&dyn agent_memory_core::distil::llm::Transport>,
    mode: &mode::Mode,
    owner: &str,
) -> anyhow::Result<work::WorkReport> {
    let distil = &ctx.config.distil;
    let now = time::now_ms();
    let options = work::WorkOptions {
        owner: owner.to_owned(),
        now_ms: now,
        silence_ms: distil.silence_minutes as i64 * 60_000,
        lease_ms: distil.lease_seconds as i64 * 1000,
        max_sessions: SESSIONS_PER_PASS,
    };
    let Some(transport) = transport else {
        return Ok(work::run_pass(store, &OfflineDistiller::new(), "offline", mode, &options)?);
    };
    // The day's budget is what the store says is left; the pass adds its spend.
    let day = time::utc_day(now);
    let spent = store.llm_tokens_spent(&day)?;
    let budget = DayBudget::new(ctx.config.llm.daily_token_budget.saturating_sub(spent));
    let distiller =
        LlmDistiller::new(transport, &budget).with_max_retries(ctx.config.llm.max_retries);
    let name = format!("llm:{}", transport.name());
    let report = work::run_pass(store, &distiller, &name, mode, &options);
    if budget.calls() > 0 {
        store.record_llm_spend(&day, transport.name(), budget.spent(), budget.calls())?;
    }
    Ok(report?)
}

/// The pass `serve`'s worker runs every interval: drain the spool, distil, embed; one line
/// saying what it did. Gives way (and says so) when another pass holds the lock.
pub fn serve_pass(
    ctx: &Context,
    owner: &str,
    embedder: Option<&dyn agent_memory_core::embed::Embedder>,
) -> anyhow::Result<String> {
    let (lock, _) = open_lock(ctx)?;
    if !take_lock(&lock) {
        return Ok("another distil pass is running; skipped".into());
    }
    let mut store = ctx.store()?;
    let drained = agent_memory_core::capture::drain(
        &mut store,
        &ctx.home,
        &ctx.config,
        None,
        ctx.config.capture.drain_per_hook.max(1000),
    );
    let distil = &ctx.config.distil;
    let mode = mode::load(&distil.mode, &distil.language, Some(&ctx.home.modes_dir()))
        .context("cannot load the distil mode; see `agent-memory mode list`")?;
    let transport = agent_memory_serve::llm::transport(&ctx.config.llm)
        .context("the [llm] configuration cannot be used; fix it or set provider = \"none\"")?;
    let report = distil_once(ctx, &mut store, transport.as_deref(), &mode, owner)?;
    if report.observations + report.summaries > 0 {
        after_new_memory(ctx, &mut store);
    }
    let mut embedded = 0;
    if let Some(embedder) = embedder {
        let pass = embed_pending(&mut store, embedder, 32, EMBED_PER_PASS, &mut |_, _| {})
            .map_err(|err| anyhow::anyhow!("embedding new items failed: {err}"))?;
        embedded = pass.embedded;
    }
    // The vault, when one is configured, is kept in step on every pass: edits made in
    // Obsidian reach the store within one interval.
    let mut vault = String::new();
    if let Some(root) = ctx.config.vault.root() {
        let state = ctx.home.root().join("vault-state.json");
        let sync = agent_memory_core::vault::sync(
            &mut store,
            &root,
            &state,
            agent_memory_core::time::now_ms(),
        )
        .map_err(|err| anyhow::anyhow!("the vault sync failed: {err}"))?;
        vault = format!(
            "; vault: {} written, {} changed, {} created, {} forgotten, {} approved, {} conflicts",
            sync.written,
            sync.updated_from_vault,
            sync.created_from_vault,
            sync.forgotten,
            sync.approved,
            sync.conflicts.len()
        );
    }
    Ok(format!(
        "spool: {} stored; distil: {} sessions, {} observations, {} summaries; embedded: {embedded}{vault}",
        drained.stored, report.sessions, report.observations, report.summaries
    ))
}

/// After a pass that added observations or summaries: merges their full-text indexes (so the
/// next hooks' lookups visit one segment, not dozens), empties the write-ahead log the pass
/// grew (else the next hook would copy it, past its deadline), and brings the brief files of
/// the projects that keep one up to date. Nothing here fails the pass; problems are logged.
fn after_new_memory(ctx: &Context, store: &mut agent_memory_core::store::Store) {
    if let Err(err) = store.optimize_recall_indexes() {
        tracing::warn!(%err, "recall indexes not merged");
    }
    let wal = agent_memory_core::store::WAL_CHECKPOINT_BYTES;
    if let Err(err) = store.checkpoint_if_large(wal, Duration::from_secs(2)) {
        tracing::debug!(%err, "checkpoint skipped");
    }
    match inject::refresh_briefs(store, &ctx.home, &ctx.config) {
        Ok(files) => {
            for (path, written) in files {
                match written {
                    Ok(changed) => tracing::debug!(path = %path.display(), changed, "brief file"),
                    Err(err) => tracing::warn!(%err, "brief file not refreshed"),
                }
            }
        }
        Err(err) => tracing::warn!(%err, "brief files not refreshed"),
    }
}

/// The file whose lock keeps to one distil pass at a time.
fn open_lock(ctx: &Context) -> anyhow::Result<(File, std::path::PathBuf)> {
    fsutil::ensure_private_dir(ctx.home.root())?;
    let lock_path = ctx.home.root().join("work.lock");
    let lock = fsutil::private_file_options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("cannot open {}", lock_path.display()))?;
    Ok((lock, lock_path))
}

/// Takes the pass lock without waiting; false when another process holds it. The lock goes
/// with the process, so a crashed pass never leaves it taken.
fn take_lock(file: &File) -> bool {
    file.try_lock().is_ok()
}
