//! `agent-memory tidy`: stale memories, groups saying the same thing and superseded ones, then
//! what `--apply` did or how to make it act.

use std::io::{self, Write};
use std::path::Path;

use agent_memory_core::promote::tidy::{Applied, Tidy};
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
