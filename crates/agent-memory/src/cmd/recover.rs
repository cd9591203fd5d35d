//! `agent-memory recover`: drain every spool into the store now; with `--repair`, first put a
//! damaged store aside and rebuild it from what can still be read of it.

use std::time::Duration;

use agent_memory_core::store::Store;
use agent_memory_core::store::memories::{Filter, Status};
use agent_memory_core::store::transfer::{ExportFilter, ImportTrust};
use agent_memory_core::{capture, time};
use anyhow::Context as _;

use super::Context;
use crate::cli::RecoverArgs;
use crate::output;

pub fn run(ctx: &Context, args: RecoverArgs) -> anyhow::Result<()> {
    if args.repair {
        repair(ctx)?;
    }
    let mut store = ctx.store()?;
    let report = capture::drain(&mut store, &ctx.home, &ctx.config, None, usize::MAX);
    ctx.leave_log_small(&store);
    output::recover(&report, args.json)?;
    Ok(())
}

/// Moves a damaged store aside and opens a fresh one holding what the old one still gives up.
/// A healthy store, or one that is only busy, is left as it is.
fn repair(ctx: &Context) -> anyhow::Result<()> {
    let path = ctx.home.db_path();
    if !path.exists() {
        return Ok(output::line("no store yet; nothing to repair")?);
    }
    let problem = match Store::open(&path, Duration::from_secs(5)) {
        Ok(store) => match store.quick_check() {
            Ok(None) => {
                return Ok(output::line("the store passes SQLite's check; nothing to repair")?);
            }
            Ok(Some(problem)) => problem,
            Err(err) if err.is_damaged() => err.to_string(),
            Err(err) => return Err(err).context("cannot check the store"),
        },
        Err(err) if err.is_busy() => {
            anyhow::bail!(
                "the store at {} is locked by another process; stop it (see `agent-memory serve \
                 --status`) and run this again",
                path.display()
            )
        }
        Err(err) => err.to_string(),
    };
    let moved = Store::move_aside(&path, time::now_ms())
        .with_context(|| format!("cannot move {} aside; check its directory", path.display()))?;
    output::line(&format!("the store was damaged ({problem}); moved it to {}", moved.display()))?;

    // What the old file still gives up, as an export, read into the fresh store.
    let mut carried = Vec::new();
    let readable =
        Store::open(&moved, Duration::from_secs(5)).map_err(anyhow::Error::from).and_then(|old| {
            let all = Filter {
                statuses: vec![
                    Status::Candidate,
                    Status::Active,
                    Status::Rejected,
                    Status::Forgotten,
                ],
                ..Filter::default()
            };
            let now = time::now_ms();
            // Memories first: they are few and worth the most; events may fail part way.
            old.export_memories(&mut carried, &all, now)?;
            old.export(&mut carried, &ExportFilter::default(), now)?;
            Ok(())
        });
    if let Err(err) = &readable {
        output::line(&format!("read what could be read of it, then stopped: {err:#}"))?;
    }
    // A line cut short by the failure is left out.
    let end = carried.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
    let mut fresh = ctx.store()?;
    let mut input = std::io::Cursor::new(&carried[..end]);
    let report = fresh
        .import(
            &mut input,
            &capture::sanitize_event,
            &|t| capture::sanitize_text(t).into_owned(),
            // This home's own store, carried over.
            ImportTrust::Everything,
        )
        .context("cannot carry the readable part over into the fresh store")?;
    ctx.leave_log_small(&fresh);
    output::line(&format!(
        "a fresh store holds what could be read: {} events, {} memories",
        report.events, report.memories
    ))?;
    Ok(())
}
