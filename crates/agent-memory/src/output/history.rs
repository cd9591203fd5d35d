//! `agent-memory history` and `history import`: what each agent's own history holds, and what
//! an import stored of it.

use std::io::{self, Write};

use agent_memory_core::history::{Imported, Summary};
use agent_memory_core::time::local_day;

use super::{count, json};

/// A line per agent whose history was looked for, then how to import it.
pub fn history(summaries: &[Summary], as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&mut io::stdout().lock(), &summaries);
    }
    write_history(&mut io::stdout().lock(), summaries)
}

pub fn write_history(out: &mut impl Write, summaries: &[Summary]) -> io::Result<()> {
    let mut waiting = 0;
    for s in summaries {
        if s.sessions == 0 {
            writeln!(out, "{}: no history in {}", s.display, s.root)?;
        } else {
            let days = match (s.first_ms, s.last_ms) {
                (Some(first), Some(last)) => {
                    format!(", {} to {}", local_day(first), local_day(last))
                }
                _ => String::new(),
            };
            writeln!(
                out,
                "{}: {}{days}, {}, {} in {} ({} in the store)",
                s.display,
                count(s.sessions, "session"),
                count(s.projects, "project"),
                size(s.bytes),
                s.root,
                s.in_store
            )?;
            waiting += s.sessions.saturating_sub(s.in_store);
        }
        for error in &s.errors {
            writeln!(out, "  cannot read: {error}")?;
        }
    }
    if waiting > 0 {
        writeln!(
            out,
            "`agent-memory history import` brings {} into memory (`--since 30d` for the last \
             month only)",
            count(waiting, "session")
        )?;
    }
    Ok(())
}

/// What an import stored, a line per agent that had anything, and a total.
pub fn history_imported(report: &[Imported], distilling: bool, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&mut io::stdout().lock(), &report);
    }
    write_imported(&mut io::stdout().lock(), report, distilling)
}

pub fn write_imported(
    out: &mut impl Write,
    report: &[Imported],
    distilling: bool,
) -> io::Result<()> {
    for r in report {
        if r.sessions + r.unchanged == 0 && r.errors.is_empty() {
            continue;
        }
        if r.sessions == 0 && r.errors.is_empty() {
            let unchanged = count(r.unchanged, "session");
            writeln!(
                out,
                "{}: nothing new ({unchanged} unchanged since the last import)",
                r.agent
            )?;
            continue;
        }
        let mut line = format!(
            "{}: {} from {}",
            r.agent,
            count(r.events, "event"),
            count(r.sessions, "session")
        );
        let mut notes = Vec::new();
        if r.unchanged > 0 {
            notes.push(format!("{} unchanged since the last import", r.unchanged));
        }
        if r.already > 0 {
            notes.push(format!("{} already stored", r.already));
        }
        if r.skipped > 0 {
            notes.push(format!("{} left out", r.skipped));
        }
        if r.malformed > 0 {
            notes.push(format!("{} unreadable", count(r.malformed, "record")));
        }
        if !notes.is_empty() {
            line.push_str(&format!(" ({})", notes.join(", ")));
        }
        writeln!(out, "{line}")?;
        for error in &r.errors {
            writeln!(out, "  cannot read: {error}")?;
        }
    }
    let events: u64 = report.iter().map(|r| r.events).sum();
    let sessions: u64 = report.iter().map(|r| r.sessions).sum();
    let mut total =
        format!("imported {} from {}", count(events, "event"), count(sessions, "session"));
    if distilling {
        total.push_str(
            "; a work pass distils them in the background (`agent-memory status` shows it)",
        );
    }
    writeln!(out, "{total}")
}

/// Bytes for people: `12 KB`, `3.4 MB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::output::tests::{AT, rendered};

    #[test]
    fn each_agent_in_a_line_and_how_to_bring_it_in() {
        let summaries = [
            Summary {
                agent: "claude-code".into(),
                display: "Claude Code".into(),
                root: "/home/dev/.claude".into(),
                sessions: 12,
                bytes: 3_500_000,
                first_ms: Some(AT),
                last_ms: Some(AT),
                projects: 3,
                in_store: 2,
                errors: Vec::new(),
            },
            Summary {
                agent: "gemini".into(),
                display: "Gemini CLI".into(),
                root: "/home/dev/.gemini".into(),
                ..Summary::default()
            },
        ];
        let day = local_day(AT);
        let text = rendered(|out| write_history(out, &summaries)).replace(&day, "<day>");
        expect![[r#"
            Claude Code: 12 sessions, <day> to <day>, 3 projects, 3.3 MB in /home/dev/.claude (2 in the store)
            Gemini CLI: no history in /home/dev/.gemini
            `agent-memory history import` brings 10 sessions into memory (`--since 30d` for the last month only)
        "#]]
        .assert_eq(&text);
    }

    #[test]
    fn what_an_import_stored() {
        let report = [
            Imported {
                agent: "codex".into(),
                sessions: 4,
                unchanged: 1,
                events: 120,
                already: 6,
                skipped: 2,
                malformed: 1,
                ..Imported::default()
            },
            Imported { agent: "gemini".into(), unchanged: 3, ..Imported::default() },
        ];
        expect![[r#"
            codex: 120 events from 4 sessions (1 unchanged since the last import, 6 already stored, 2 left out, 1 record unreadable)
            gemini: nothing new (3 sessions unchanged since the last import)
            imported 120 events from 4 sessions; a work pass distils them in the background (`agent-memory status` shows it)
        "#]]
        .assert_eq(&rendered(|out| write_imported(out, &report, true)));
    }
}
