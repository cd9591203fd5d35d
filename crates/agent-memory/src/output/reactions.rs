//! `agent-memory reactions list` and `reactions test`.

use std::io::{self, Write};

use agent_memory_core::config::ReactionConfig;
use agent_memory_core::react::{Item, Outcomes};
use serde::Serialize;

use super::json;

/// What both subcommands say when the configuration has no reactions.
const NONE: &str =
    "no reactions; add [[reactions]] to config.toml (`agent-memory config default` shows examples)";

/// One configured reaction, whether it can run, and how it went over the last day.
#[derive(Debug, Serialize)]
pub struct ReactionLine<'a> {
    #[serde(flatten)]
    pub reaction: &'a ReactionConfig,
    pub unusable: Option<String>,
    pub last_day: Outcomes,
}

/// The recent items one reaction would match.
#[derive(Debug, Serialize)]
pub struct Matched<'a> {
    pub reaction: &'a str,
    pub unusable: Option<String>,
    pub items: Vec<&'a Item>,
}

pub fn list(lines: &[ReactionLine<'_>], as_json: bool) -> io::Result<()> {
    write_list(&mut io::stdout().lock(), lines, as_json)
}

pub fn write_list(
    out: &mut impl Write,
    lines: &[ReactionLine<'_>],
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, &lines);
    }
    if lines.is_empty() {
        return writeln!(out, "{NONE}");
    }
    for line in lines {
        let r = line.reaction;
        let watch = [
            ("types", &r.types),
            ("concepts", &r.concepts),
            ("words", &r.words),
            ("projects", &r.projects),
            ("agents", &r.agents),
        ]
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k} {}", v.join(", ")))
        .collect::<Vec<_>>();
        let action = if !r.run.is_empty() {
            format!("runs {}", r.run.join(" "))
        } else if !r.append.is_empty() {
            format!("appends to {}", r.append)
        } else {
            format!("posts to {}", r.post)
        };
        let on = r.on.join(" and ");
        let watch =
            if watch.is_empty() { String::new() } else { format!(" with {}", watch.join("; ")) };
        writeln!(out, "{}: on each {on}{watch}, {action}", r.name.trim())?;
        match &line.unusable {
            Some(why) => writeln!(out, "  not run: {why}")?,
            None => {
                let day = &line.last_day;
                let mut said = format!("  last 24 h: {} ran, {} failed", day.fired, day.failed);
                if let Some(last) = &day.last_failure {
                    said.push_str(&format!(" (last: {last})"));
                }
                writeln!(out, "{said}")?;
            }
        }
    }
    Ok(())
}

pub fn tested(matched: &[Matched<'_>], looked_at: usize, as_json: bool) -> io::Result<()> {
    write_tested(&mut io::stdout().lock(), matched, looked_at, as_json)
}

pub fn write_tested(
    out: &mut impl Write,
    matched: &[Matched<'_>],
    looked_at: usize,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, &matched);
    }
    if matched.is_empty() {
        return writeln!(out, "{NONE}");
    }
    for m in matched {
        if let Some(why) = &m.unusable {
            writeln!(out, "{}: not run: {why}", m.reaction)?;
            continue;
        }
        writeln!(out, "{}: {} of the {looked_at} newest items", m.reaction, m.items.len())?;
        for item in &m.items {
            let place = item.project.as_deref().unwrap_or("global");
            writeln!(
                out,
                "  {} {} · {} · {}: {}",
                item.id, item.item_type, place, item.agent, item.title
            )?;
        }
    }
    Ok(())
}
