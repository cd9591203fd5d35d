//! `agent-memory export` and `import`: what moved. The summary goes to standard error, so
//! standard output can carry an export.

use std::io::{self, Write};

use agent_memory_core::store::transfer::TransferReport;

use super::{count, json};

pub fn transfer(verb: &str, report: &TransferReport, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&mut io::stdout().lock(), report);
    }
    // Progress and summaries go to stderr so stdout can carry an export.
    write_transfer(&mut io::stderr().lock(), verb, report)
}

/// One line: `imported 12 events, 3 sessions, 1 project (…)`.
pub fn write_transfer(out: &mut impl Write, verb: &str, report: &TransferReport) -> io::Result<()> {
    let mut line = format!(
        "{verb} {}, {}, {}",
        count(report.events, "event"),
        count(report.sessions, "session"),
        count(report.projects, "project")
    );
    if report.already_present > 0 {
        line.push_str(&format!(" ({} already stored)", count(report.already_present, "event")));
    }
    if report.memories + report.memories_present + report.memories_updated > 0 {
        line.push_str(&format!(", {}", count(report.memories, "memory")));
        if report.memories_present > 0 {
            line.push_str(&format!(" ({} already stored)", report.memories_present));
        }
        if report.memories_for_review > 0 {
            line.push_str(&format!(
                ", {} to review (`agent-memory review`; `import --trust` keeps a file you trust as it is)",
                report.memories_for_review
            ));
        }
        if report.memories_updated > 0 {
            line.push_str(&format!(
                ", {} brought up to a later edit",
                count(report.memories_updated, "memory")
            ));
        }
    }
    writeln!(out, "{line}")
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::output::tests::rendered;

    #[test]
    fn what_moved_in_one_line() {
        let report = TransferReport {
            projects: 1,
            sessions: 2,
            events: 1,
            memories: 3,
            memories_present: 1,
            memories_updated: 1,
            ..TransferReport::default()
        };
        expect![[r#"
            imported 1 event, 2 sessions, 1 project, 3 memories (1 already stored), 1 memory brought up to a later edit
        "#]]
        .assert_eq(&rendered(|out| write_transfer(out, "imported", &report)));
    }
}
