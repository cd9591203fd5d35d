//! `agent-memory export` and `import`: what moved. The summary goes to standard error, so
//! standard output can carry an export.

use std::io::{self, Write};

use agent_memory_core::store::transfer::TransferReport;

use super::json;

pub fn transfer(verb: &str, report: &TransferReport, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&mut io::stdout().lock(), report);
    }
    // Progress and summaries go to stderr so stdout can carry an export.
    write_transfer(&mut io::stderr().lock(), verb, report)
}

/// One line: `imported 12 events, 3 sessions, 1 projects (…)`.
pub fn write_transfer(out: &mut impl Write, verb: &str, report: &TransferReport) -> io::Result<()> {
    let mut line = format!(
        "{verb} {} events, {} sessions, {} projects",
        report.events, report.sessions, report.projects
    );
    if report.already_present > 0 {
        line.push_str(&format!(" ({} events were already stored)", report.already_present));
    }
    if report.memories + report.memories_present > 0 {
        line.push_str(&format!(", {} memories", report.memories));
        if report.memories_present > 0 {
            line.push_str(&format!(" ({} were already stored)", report.memories_present));
        }
    }
    writeln!(out, "{line}")
}
