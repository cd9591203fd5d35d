//! `agent-memory vault sync`: what moved which way, then the conflicts and problems by path.

use std::io::{self, Write};
use std::path::Path;

use agent_memory_core::vault::SyncReport;

use super::{count, json};

pub fn vault_sync(root: &Path, report: &SyncReport, as_json: bool) -> io::Result<()> {
    write_vault_sync(&mut io::stdout().lock(), root, report, as_json)
}

pub fn write_vault_sync(
    out: &mut impl Write,
    root: &Path,
    report: &SyncReport,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, report);
    }
    writeln!(
        out,
        "vault {}: {} written, {} changed and {} created from notes, {} forgotten (note deleted), {} removed, {} approved",
        root.display(),
        count(report.written, "note"),
        count(report.updated_from_vault, "memory"),
        report.created_from_vault,
        report.forgotten,
        count(report.removed, "note"),
        count(report.approved, "candidate")
    )?;
    for path in &report.conflicts {
        writeln!(
            out,
            "conflict: {} (both sides changed: the vault's version is kept beside it as *.conflict-*.md)",
            path.display()
        )?;
    }
    for (path, problem) in &report.problems {
        writeln!(out, "not applied: {}: {problem}", path.display())?;
    }
    Ok(())
}
