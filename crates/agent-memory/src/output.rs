//! Everything the CLI prints goes through here (a lint denies printing elsewhere), so that
//! output stays consistent and a closed pipe is an `io::Error` the caller can treat as success.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{self, Write};

use agent_memory_core::capture::DrainReport;
use agent_memory_core::capture::spool::SpoolDepth;
use agent_memory_core::store::search::SearchResults;
use agent_memory_core::store::status::{ProjectCount, StoreStatus};
use agent_memory_core::store::transfer::TransferReport;
use agent_memory_core::time::format_local;
use serde::Serialize;

/// Prints an error and its causes to stderr.
pub fn error(err: &anyhow::Error) {
    let mut message = format!("agent-memory: {err}");
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(&format!("\n  caused by: {cause}"));
        }
    }
    eprintln!("{message}");
}

fn json(value: &impl Serialize) -> io::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value).map_err(io::Error::other)?;
    writeln!(out)
}

pub fn text(text: &str) -> io::Result<()> {
    io::stdout().lock().write_all(text.as_bytes())
}

pub fn line(text: &str) -> io::Result<()> {
    writeln!(io::stdout().lock(), "{text}")
}

pub fn search(results: &SearchResults, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(results);
    }
    let mut out = io::stdout().lock();
    if results.hits.is_empty() {
        return writeln!(out, "no matches");
    }
    for hit in &results.hits {
        writeln!(
            out,
            "{:<6} {}  {:<11} {:<14} {}  ({:.2})",
            format!("#{}", hit.id),
            format_local(hit.at_ms),
            hit.agent,
            clip(hit.project.as_deref().unwrap_or("-"), 14),
            clip(&hit.title, 100),
            hit.score,
        )?;
    }
    if results.fallback {
        writeln!(out, "(ranked by time: the full-text index could not take this query)")?;
    }
    Ok(())
}

fn clip(text: &str, max: usize) -> String {
    let flat = text.replace(['\n', '\r', '\t'], " ");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[derive(Serialize)]
struct StatusJson<'a> {
    #[serde(flatten)]
    store: &'a StoreStatus,
    spool: &'a SpoolDepth,
}

pub fn status(status: &StoreStatus, spool: &SpoolDepth, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&StatusJson { store: status, spool });
    }
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "store      {}  ({}, schema {})",
        status.path,
        human_bytes(status.bytes),
        status.schema_version
    )?;
    writeln!(
        out,
        "events     {} in {} sessions ({} open)",
        status.events, status.sessions, status.open_sessions
    )?;
    for (i, a) in status.agents.iter().enumerate() {
        let last = a.last_event_at.map(format_local).unwrap_or_default();
        let label = if i == 0 { "agents" } else { "" };
        writeln!(
            out,
            "{label:<10} {:<12} {:>7} events {:>5} sessions  last {last}",
            a.agent, a.events, a.sessions
        )?;
    }
    for (i, p) in status.projects.iter().enumerate() {
        let label = if i == 0 { "projects" } else { "" };
        writeln!(
            out,
            "{label:<10} {:<20} {:>7} events {:>5} sessions  {}",
            clip(&p.name, 20),
            p.events,
            p.sessions,
            p.key
        )?;
    }
    for w in &status.hooks {
        let outcomes: Vec<String> = w.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(
            out,
            "hooks {:<4} {} runs, {:.1}% errors, p50 {:.1} ms, p99 {:.1} ms  ({})",
            w.window,
            w.runs,
            w.error_rate * 100.0,
            w.p50_ms,
            w.p99_ms,
            outcomes.join(", ")
        )?;
    }
    for w in &status.hooks {
        let layers: Vec<String> = ["too_short", "low_value", "near_duplicate"]
            .iter()
            .map(|layer| format!("{layer} {}", w.filtered.get(*layer).copied().unwrap_or(0)))
            .collect();
        writeln!(out, "filtered {:<4} {}", w.window, layers.join(", "))?;
    }
    writeln!(
        out,
        "spool      {} events waiting in {} files{}",
        spool.records,
        spool.files,
        if spool.quarantined > 0 {
            format!(", {} files set aside (.bad)", spool.quarantined)
        } else {
            String::new()
        }
    )?;
    if spool.records > 0 {
        writeln!(out, "           run `agent-memory recover` to store them now")?;
    }
    if status.events == 0 && status.hooks.iter().all(|w| w.runs == 0) {
        writeln!(
            out,
            "\nnothing captured yet: point your agents' hooks at `agent-memory hook` (README: \"Wiring an agent's hooks\")"
        )?;
    }
    Ok(())
}

fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

pub fn projects(projects: &[ProjectCount], as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&projects);
    }
    let mut out = io::stdout().lock();
    for p in projects {
        writeln!(out, "{:<20} {:>7} events  {}  {}", clip(&p.name, 20), p.events, p.key, p.root)?;
    }
    Ok(())
}

pub fn transfer(verb: &str, report: &TransferReport, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(report);
    }
    let mut line = format!(
        "{verb} {} events, {} sessions, {} projects",
        report.events, report.sessions, report.projects
    );
    if report.already_present > 0 {
        line.push_str(&format!(" ({} events were already stored)", report.already_present));
    }
    // Progress and summaries go to stderr so stdout can carry an export.
    writeln!(io::stderr().lock(), "{line}")
}

pub fn recover(report: &DrainReport, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(report);
    }
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "recovered {} events from {} spool files ({} already stored, {} dropped as noise or unreadable)",
        report.stored, report.files, report.already_stored, report.dropped
    )?;
    if report.quarantined > 0 {
        writeln!(
            out,
            "{} files had unreadable lines and were set aside as .bad",
            report.quarantined
        )?;
    }
    Ok(())
}
