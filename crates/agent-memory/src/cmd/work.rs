//! `agent-memory work`: a work pass (core's `work`: drain the spool, judge branches, distil,
//! screen for long-term memory, anchor, embed, index older events again, sync the vault,
//! refresh brief files, checkpoint), run again until
//! no backlog is left, or `--watch` for one every interval. The stop hook starts a pass in the
//! background (`--background`), which quietly gives way when one is already running, and runs
//! again a few times, a second apart, while a turn waits for its agent to write its transcript;
//! `serve`'s worker runs the same pass in a process of its own (`--for-server`,
//! [`serve_pass`]). This module only builds what the pass is handed (mode, LLM transport,
//! embedding model) and prints its report.

use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_memory_core::distil::mode;
use agent_memory_core::embed::{Embedder, SparseEncoder};
use agent_memory_core::time;
use agent_memory_core::work::{self, Pass, PassReport, WorkLock};
use anyhow::Context as _;

use super::Context;
use crate::cli::WorkArgs;
use crate::output;

/// How many times, and how far apart, a background pass runs again while a turn waits for its
/// agent to write the turn's end to its transcript.
const WAIT_RETRIES: u32 = 5;
const WAIT_STEP: Duration = Duration::from_secs(1);

/// The niceness of a pass nobody waits for: the stop hook's, and the one `serve`'s worker runs.
/// Such a pass may encode hundreds of texts with a model (a history just imported is worked
/// through this way, a bounded pass at each stop), and the agent's own builds and tests
/// should have the processor first.
#[cfg(unix)]
const BACKGROUND_NICENESS: i32 = 10;

pub fn run(ctx: &Context, args: WorkArgs) -> anyhow::Result<()> {
    if args.background || args.for_server {
        // First, so that every thread the pass starts (the models' among them) inherits it.
        give_way();
    }
    if args.for_server {
        let owner = format!("serve-{}", std::process::id());
        let models = Models::load(ctx);
        let line = serve_pass(ctx, &owner, &models)?;
        return Ok(output::line(&line)?);
    }
    let Some(lock) = WorkLock::try_take(&ctx.home)? else {
        if args.background {
            return Ok(());
        }
        anyhow::bail!(
            "another work pass is running (it holds {}); wait for it, or stop `agent-memory work --watch`",
            WorkLock::path(&ctx.home).display()
        );
    };
    let owner = format!("work-{}-{}", std::process::id(), time::now_ms());
    // Loaded once: a sentence encoder takes a moment to load, and `--watch` embeds every pass.
    let models = Models::load(ctx);
    let stop = if args.background {
        None
    } else {
        super::on_interrupt("stopping after this pass (^C again stops at once)")
    };
    let stopped = || stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst));
    loop {
        let mut report = pass_once(ctx, &owner, &models)?;
        // Someone waiting sees how far a backlog has got (on a terminal, never under --json),
        // counted only once a pass has found one: counting costs a look at every session.
        let bar = if !args.background && !args.json && report.more_to_do() {
            let left = ctx.store()?.sessions_to_distil()?.max(0) as u64;
            let done = report.distil.sessions as u64;
            let bar = output::progress(left + done, "distilling sessions", left < PROGRESS_FROM);
            bar.inc(done);
            bar
        } else {
            indicatif::ProgressBar::hidden()
        };
        // The stop's own pass waits a little for an agent that writes its transcript lazily, so
        // the turn is distilled with its closing answer rather than at some later pass.
        let mut retries = 0;
        while args.background && report.distil.waiting > 0 && retries < WAIT_RETRIES {
            std::thread::sleep(WAIT_STEP);
            report = pass_once(ctx, &owner, &models)?;
            retries += 1;
        }
        // Someone waiting for the pass wants it done: a backlog (an import, a model installed
        // over a full store) is worked through pass after pass, each bounded, until none is
        // left. A background pass leaves the rest to the next stop.
        while !args.background && report.more_to_do() && report.problems.is_empty() {
            if stopped() {
                break;
            }
            let next = pass_once(ctx, &owner, &models)?;
            bar.inc(next.distil.sessions as u64);
            let more = next.more_to_do();
            report.absorb(next);
            if !more {
                break;
            }
        }
        bar.finish_and_clear();
        let team = team_sync_if_due(ctx);
        if !args.background {
            // A pass that found nothing new says what is there: the stop hook has usually
            // distilled each session already.
            let stored = if report.distil.observations + report.distil.summaries == 0 {
                let status = ctx.store()?.status(&[])?;
                Some((status.observations, status.summaries))
            } else {
                None
            };
            output::work(&report, stored, args.json)?;
            if !args.json
                && let Some(line) = team
            {
                output::line(&line)?;
            }
        }
        if !args.watch && !stopped() {
            drop(lock);
            return Ok(());
        }
        // Between passes a ^C stops at once: nothing is under way.
        let until = std::time::Instant::now() + Duration::from_secs(args.interval.max(1));
        while args.watch && std::time::Instant::now() < until && !stopped() {
            std::thread::sleep(Duration::from_millis(100));
        }
        if stopped() {
            let left = ctx.store()?.sessions_to_distil()?;
            output::work_stopped(left, args.json)?;
            drop(lock);
            return Ok(());
        }
    }
}

/// Backlogs this many sessions long get a progress bar; a pass over a few is over at once.
const PROGRESS_FROM: u64 = 50;

/// The models a pass encodes new items with, as the configuration names them; each reads its
/// weights only when there is something to encode.
struct Models {
    embedder: Option<Box<dyn Embedder>>,
    sparse: Option<Box<dyn SparseEncoder>>,
}

impl Models {
    fn load(ctx: &Context) -> Models {
        Models { embedder: ctx.embedder(), sparse: ctx.sparse_encoder() }
    }
}

/// One work pass with what the configuration names: its mode, its LLM transport (or the
/// offline distiller) and the models handed in. The caller holds the lock.
fn pass_once(ctx: &Context, owner: &str, models: &Models) -> anyhow::Result<PassReport> {
    let distil = &ctx.config.distil;
    let mode = mode::load(&distil.mode, &distil.language, Some(&ctx.home.modes_dir()))
        .context("cannot load the distil mode; see `agent-memory mode list`")?;
    let transport = agent_memory_serve::llm::transport(&ctx.config.llm)
        .context("the [llm] configuration cannot be used; fix it or set provider = \"none\"")?;
    let mut store = ctx.store()?;
    let actions = agent_memory_serve::reactions::Actions::new(super::install::user_dirs()?.home);
    let pass = Pass {
        home: &ctx.home,
        config: &ctx.config,
        mode: &mode,
        transport: transport.as_deref(),
        embedder: models.embedder.as_deref(),
        sparse: models.sparse.as_deref(),
        act: Some(&actions),
        owner,
        now_ms: time::now_ms(),
    };
    Ok(work::run(&mut store, &pass)?)
}

/// The pass `serve`'s worker runs every interval (`work --for-server`, in a process of its
/// own): the same pass as `work`, one line saying what it did. Gives way (and says so) when
/// another pass holds the lock; a pass whose steps failed is an error, so the worker retries
/// it with backoff and the health page shows why.
fn serve_pass(ctx: &Context, owner: &str, models: &Models) -> anyhow::Result<String> {
    let Some(_lock) = WorkLock::try_take(&ctx.home)? else {
        return Ok("another work pass is running; skipped".into());
    };
    let report = pass_once(ctx, owner, models)?;
    let team = team_sync_if_due(ctx);
    let health = health_if_due(ctx);
    if !report.problems.is_empty() {
        anyhow::bail!("{}", report.summary());
    }
    let mut line = report.summary();
    for part in [team, health].into_iter().flatten() {
        line.push_str(&format!("; {part}"));
    }
    Ok(line)
}

/// The health check, once a day while serve runs: one line when something is over its limit
/// (the log keeps it, and the vault's inbox its note), nothing otherwise.
fn health_if_due(ctx: &Context) -> Option<String> {
    if !agent_memory_core::health::due(&ctx.home, time::now_ms()) {
        return None;
    }
    match super::health::check(ctx) {
        Ok(report) if report.ok => None,
        Ok(report) => {
            let over: Vec<String> =
                report.checks.iter().filter(|c| !c.ok).map(|c| c.message.clone()).collect();
            tracing::warn!(over = %over.join("; "), "health check over its limits");
            Some(format!("health: {}", over.join("; ")))
        }
        Err(err) => Some(format!("health check failed: {err}")),
    }
}

/// The team sync the work pass runs when one is due (`[team] sync_interval_minutes`, longer
/// after failures): one line saying what it did, or why it failed. A failure never fails the
/// pass: the server may be away for days, and local work goes on. A sync already running (a
/// manual `team sync`) is left to finish; this pass skips its own, and the next tries again.
fn team_sync_if_due(ctx: &Context) -> Option<String> {
    use agent_memory_team::sync::{self, SyncLock};
    let store = ctx.store().ok()?;
    let due = |now| match sync::due(&store, &ctx.config.team, now) {
        Ok(due) => Ok(due),
        Err(err) => Err(format!("team sync: {err}")),
    };
    match due(time::now_ms()) {
        Ok(true) => {}
        Ok(false) => return None,
        Err(line) => return Some(line),
    }
    let lock = match SyncLock::take(&ctx.home, Duration::ZERO) {
        Ok(Some(lock)) => lock,
        Ok(None) => return Some("team sync: another sync is running; skipped".into()),
        Err(err) => return Some(format!("team sync failed: {err}")),
    };
    // The sync that held the lock may have just done what this one would.
    let now = time::now_ms();
    match due(now) {
        Ok(true) => {}
        Ok(false) => return None,
        Err(line) => return Some(line),
    }
    let embedder = ctx.embedder();
    let synced = sync::sync(&lock, &store, &ctx.config.team, embedder.as_deref(), now);
    ctx.leave_log_small(&store);
    Some(match synced {
        Ok(report) => format!(
            "team sync: {} pushed, {} pulled, {} changed",
            report.pushed, report.pulled.added, report.pulled.updated
        ),
        Err(err) => {
            tracing::warn!(%err, "team sync failed; the next pass tries again later");
            format!("team sync failed: {err}")
        }
    })
}

/// Lowers this process's priority to [`BACKGROUND_NICENESS`], unless it already runs lower. A
/// refusal only leaves the pass at its priority: it is logged, never an error.
#[cfg(unix)]
fn give_way() {
    use rustix::process::{getpriority_process, setpriority_process};
    let now = getpriority_process(None).unwrap_or(0);
    if now < BACKGROUND_NICENESS
        && let Err(err) = setpriority_process(None, BACKGROUND_NICENESS)
    {
        tracing::debug!(%err, "cannot lower the background pass's priority");
    }
}

#[cfg(not(unix))]
fn give_way() {}

#[cfg(all(test, unix))]
mod tests {
    use rustix::process::{getpriority_process, setpriority_process};

    use super::{BACKGROUND_NICENESS, give_way};

    // Each runs on a thread of its own: on Linux a niceness is a thread's, so the rest of the
    // test binary keeps its own.
    #[test]
    fn a_pass_nobody_waits_for_gives_the_processor_to_the_agent() {
        let after = std::thread::spawn(|| {
            give_way();
            give_way();
            getpriority_process(None).expect("read the priority")
        });
        assert_eq!(after.join().expect("the thread ends"), BACKGROUND_NICENESS);
    }

    #[test]
    fn a_pass_already_running_lower_is_left_there() {
        let after = std::thread::spawn(|| {
            setpriority_process(None, BACKGROUND_NICENESS + 5).expect("lower the priority");
            give_way();
            getpriority_process(None).expect("read the priority")
        });
        assert_eq!(after.join().expect("the thread ends"), BACKGROUND_NICENESS + 5);
    }
}
