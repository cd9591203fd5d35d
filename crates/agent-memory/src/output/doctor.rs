//! `agent-memory doctor`: the store's findings, then each agent's, one line each with its fix
//! indented under it.

use std::io::{self, Write};

use super::json;
use crate::report::{DoctorReport, Finding, Level};

pub fn doctor(report: &DoctorReport, as_json: bool) -> io::Result<()> {
    write_doctor(&mut io::stdout().lock(), report, as_json)
}

pub fn write_doctor(out: &mut impl Write, report: &DoctorReport, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, report);
    }
    writeln!(out, "agent-memory {} ({})", report.version, report.binary)?;
    for f in &report.store {
        write_finding(out, f)?;
    }
    if report.agents.is_empty() {
        writeln!(
            out,
            "no agent wired or found; `agent-memory install` wires the ones on this machine"
        )?;
    }
    for agent in &report.agents {
        writeln!(out, "{}", agent.agent)?;
        for f in &agent.findings {
            write_finding(out, f)?;
        }
    }
    Ok(())
}

/// One finding, its fix (when it has one) on the next line under its message.
fn write_finding(out: &mut impl Write, f: &Finding) -> io::Result<()> {
    let mark = match f.level {
        Level::Ok => "ok  ",
        Level::Info => "info",
        Level::Warn => "warn",
        Level::Fail => "FAIL",
    };
    writeln!(out, "  {mark}  {:<12} {}", f.check, f.message)?;
    if let Some(fix) = &f.fix {
        writeln!(out, "        {:<12} fix: {fix}", "")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::output::tests::rendered;
    use crate::report::AgentReport;

    #[test]
    fn store_then_agents_with_fixes() {
        let report = DoctorReport {
            binary: "/usr/local/bin/agent-memory".to_owned(),
            version: "0.1.0",
            store: vec![
                Finding::ok("store", "/home/u/.agent-memory/memory.db opens and takes writes"),
                Finding::warn("spool", "3 events wait in the spool", "run `agent-memory recover`"),
            ],
            agents: vec![AgentReport {
                agent: "codex",
                findings: vec![
                    Finding::ok("wiring", "wired to agent-memory"),
                    Finding::info("round trip", "this agent has no session-start hook to try"),
                    Finding::fail(
                        "trust",
                        "2 hooks are not trusted",
                        "run `agent-memory install codex`",
                    ),
                ],
            }],
        };
        assert_eq!(report.failures(), 1);
        expect![[r#"
            agent-memory 0.1.0 (/usr/local/bin/agent-memory)
              ok    store        /home/u/.agent-memory/memory.db opens and takes writes
              warn  spool        3 events wait in the spool
                                 fix: run `agent-memory recover`
            codex
              ok    wiring       wired to agent-memory
              info  round trip   this agent has no session-start hook to try
              FAIL  trust        2 hooks are not trusted
                                 fix: run `agent-memory install codex`
        "#]]
        .assert_eq(&rendered(|out| write_doctor(out, &report, false)));
        let nothing = DoctorReport { agents: Vec::new(), store: Vec::new(), ..report };
        expect![[r#"
            agent-memory 0.1.0 (/usr/local/bin/agent-memory)
            no agent wired or found; `agent-memory install` wires the ones on this machine
        "#]]
        .assert_eq(&rendered(|out| write_doctor(out, &nothing, false)));
    }
}
