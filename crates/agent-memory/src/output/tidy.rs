//! `agent-memory tidy`: stale memories, groups saying the same thing and superseded ones, then
//! what `--apply` did or how to make it act.

use std::io::{self, Write};
use std::path::Path;

use agent_memory_core::promote::tidy::{Applied, Tidy};
use agent_memory_core::store::memories::Memory;
use agent_memory_core::time;
use serde::Serialize;

use super::memory::memory_line;
use super::{count, json};

#[derive(Serialize)]
struct TidyJson<'a> {
    #[serde(flatten)]
    report: &'a Tidy,
    applied: Option<&'a Applied>,
    backup: Option<&'a Path>,
}

pub fn tidy(
    report: &Tidy,
    stale_days: u32,
    applied: Option<(&Applied, &Path)>,
    as_json: bool,
) -> io::Result<()> {
    write_tidy(&mut io::stdout().lock(), report, stale_days, applied, as_json)
}

pub fn write_tidy(
    out: &mut impl Write,
    report: &Tidy,
    stale_days: u32,
    applied: Option<(&Applied, &Path)>,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(
            out,
            &TidyJson { report, applied: applied.map(|(a, _)| a), backup: applied.map(|(_, b)| b) },
        );
    }
    writeln!(out, "not found or changed for {stale_days} days ({}):", report.stale.len())?;
    for m in &report.stale {
        writeln!(out, "  {}", memory_line(m))?;
    }
    writeln!(
        out,
        "saying the same thing ({}; the first is kept):",
        count(report.duplicates.len(), "group")
    )?;
    for cluster in &report.duplicates {
        for (i, m) in cluster.iter().enumerate() {
            writeln!(out, "  {} {}", if i == 0 { "keep " } else { "merge" }, memory_line(m))?;
        }
    }
    writeln!(out, "superseded ({}; kept as history, never injected):", report.superseded.len())?;
    for m in &report.superseded {
        let by = m.superseded_by.map_or(String::new(), |id| format!(" (by m{id})"));
        writeln!(out, "  {}{by}", memory_line(m))?;
    }
    write_needs_a_look(out, &report.needs_a_look)?;
    match applied {
        Some((done, backup)) => writeln!(
            out,
            "applied: {} forgotten (undo with `agent-memory forget <id> --undo`), {} merged; backup at {}",
            done.forgotten,
            done.merged,
            backup.display()
        ),
        None => writeln!(out, "nothing changed; `agent-memory tidy --apply` acts on this report"),
    }
}

/// Active memories a file they rest on changed under or is gone from, with what changed.
pub fn needs_a_look(memories: &[Memory]) -> io::Result<()> {
    write_needs_a_look(&mut io::stdout().lock(), memories)
}

pub fn write_needs_a_look(out: &mut impl Write, memories: &[Memory]) -> io::Result<()> {
    if memories.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "needs a look ({}; a file each rests on changed since, `agent-memory review --edit <id>` \
         or `agent-memory forget <id>` if it no longer holds):",
        memories.len()
    )?;
    for m in memories {
        let changed: Vec<String> = m
            .anchors
            .iter()
            .flatten()
            .filter(|a| a.state != agent_memory_core::anchor::State::Fresh)
            .map(|a| {
                let state = match a.state {
                    agent_memory_core::anchor::State::Gone => "gone",
                    _ => "changed",
                };
                let since = a.since.map(time::local_day).unwrap_or_default();
                format!("{} {state} since {since}", a.path)
            })
            .collect();
        writeln!(out, "  {} ({})", memory_line(m), changed.join(", "))?;
    }
    Ok(())
}
