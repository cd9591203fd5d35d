//! `agent-memory doctor --health`: one line per check, `ok` or `over` with what to do.

use std::io::{self, Write};

use agent_memory_core::health::Report;

use super::json;

pub fn health(report: &Report, as_json: bool) -> io::Result<()> {
    write_health(&mut io::stdout().lock(), report, as_json)
}

pub fn write_health(out: &mut impl Write, report: &Report, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, report);
    }
    for c in &report.checks {
        let mark = if c.ok { "ok  " } else { "OVER" };
        writeln!(out, "{mark}  {:<13} {}", c.name, c.message)?;
        if !c.fix.is_empty() {
            writeln!(out, "      {:<13} fix: {}", "", c.fix)?;
        }
    }
    if let Some(note) = &report.note {
        writeln!(out, "noted in {}", note.display())?;
    }
    let over = report.checks.iter().filter(|c| !c.ok).count();
    match over {
        0 => writeln!(out, "healthy: every check is within its limit ([health] in config.toml)"),
        n => writeln!(out, "{n} over the limit ([health] in config.toml sets the limits)"),
    }
}
