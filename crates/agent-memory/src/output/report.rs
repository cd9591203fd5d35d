//! `agent-memory report`: a project's weeks as Markdown, newest last, each item with the id
//! `show` reads in full.

use std::io::{self, Write};

use agent_memory_core::report::Week;
use serde::Serialize;

use super::json;

#[derive(Serialize)]
struct ReportJson<'a> {
    project: &'a str,
    weeks: &'a [Week],
}

pub fn report(project: &str, since: &str, weeks: &[Week], as_json: bool) -> io::Result<()> {
    write_report(&mut io::stdout().lock(), project, since, weeks, as_json)
}

pub fn write_report(
    out: &mut impl Write,
    project: &str,
    since: &str,
    weeks: &[Week],
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, &ReportJson { project, weeks });
    }
    writeln!(out, "# {project}, week by week (since {since})")?;
    if weeks.is_empty() {
        writeln!(
            out,
            "\nNothing was distilled in this project in that time; `agent-memory work` distils what was captured."
        )?;
        return Ok(());
    }
    for week in weeks {
        let who: Vec<String> = week.agents.iter().map(|(a, n)| format!("{a} {n}")).collect();
        let sessions = if week.sessions == 1 { "session" } else { "sessions" };
        writeln!(out, "\n## Week of {} ({})", week.starts, week.week)?;
        if week.sessions > 0 {
            writeln!(out, "\n{} {sessions}: {}", week.sessions, who.join(", "))?;
        }
        for section in &week.sections {
            let mut heading = section.heading.clone();
            if let Some(first) = heading.get(..1) {
                heading = first.to_uppercase() + &heading[1..];
            }
            writeln!(out, "\n### {heading}\n")?;
            for item in &section.items {
                let text: String = item.text.split_whitespace().collect::<Vec<_>>().join(" ");
                writeln!(out, "- {} {text} ({})", item.id, item.agent)?;
            }
        }
    }
    Ok(())
}
