//! `agent-memory doctor --health`: the health check of `agent_memory_core::health`, with the
//! readings `status` shows, a note in the vault's inbox when a vault is configured, and a
//! non-zero exit past any limit. serve's worker runs the same check once a day.

use agent_memory_core::capture::{self, spool};
use agent_memory_core::health::{self, Readings, Report};
use agent_memory_core::{fsutil, time};

use super::Context;
use crate::output;
use crate::report::Reported;

pub fn run(ctx: &Context, as_json: bool) -> anyhow::Result<()> {
    let report = check(ctx)?;
    output::health(&report, as_json)?;
    if report.ok {
        return Ok(());
    }
    let over = report.checks.iter().filter(|c| !c.ok).count();
    Err(Reported(format!("{over} of the health checks are over their limits")).into())
}

/// Reads the store, the hooks' last day, the spool and the models' coverage, judges them
/// against `[health]`, and writes the note into the vault's inbox when a vault is configured.
pub fn check(ctx: &Context) -> anyhow::Result<Report> {
    let store = ctx.store()?;
    let now = time::now_ms();
    let windows = [("24h", now - 86_400_000)];
    let mut status = store.status(&windows)?;
    let lost = capture::lost::peek(&ctx.home);
    status.add_lost(&windows, lost.count, lost.last_ms);
    let day = status.hooks.first();
    let waiting = super::status::search_models(ctx, &store)?
        .into_iter()
        .map(|coverage| (coverage.model, coverage.waiting))
        .collect();
    let readings = Readings {
        store_bytes: status.bytes,
        hook_runs: day.map_or(0, |w| w.runs),
        hook_error_rate: day.map_or(0.0, |w| w.error_rate),
        hook_p99_ms: day.map_or(0.0, |w| w.p99_ms),
        lost: day.and_then(|w| w.outcomes.get("lost").copied()).unwrap_or(0),
        spooled: spool::depth(&ctx.home.spool_dirs(), now).records,
        to_distil: status.to_distil,
        waiting,
    };
    let grown = health::record_size(&ctx.home, status.bytes, now);
    let mut report = health::check(&readings, grown, &ctx.config.health, now);
    if let Some(root) = ctx.config.vault.root() {
        let path = health::note_path(&root, &time::local_day(now));
        let written = path
            .parent()
            .map_or(Ok(()), fsutil::ensure_private_dir)
            .and_then(|()| fsutil::write_atomic(&path, health::note(&report).as_bytes()));
        match written {
            Ok(()) => report.note = Some(path),
            Err(err) => tracing::warn!(%err, path = %path.display(), "health note not written"),
        }
    }
    health::ran(&ctx.home, now);
    Ok(report)
}
