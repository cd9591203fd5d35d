//! `agent-memory work` and `recover`: what a work pass did, a line per step that did
//! something, and what a spool drain stored.

use std::io::{self, Write};

use agent_memory_core::capture::DrainReport;
use agent_memory_core::promote::PromoteReport;
use agent_memory_core::work::PassReport;

use super::json;

/// What a work pass did, a line per step that did something; a failed step on stderr.
pub fn work(report: &PassReport, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&mut io::stdout().lock(), report);
    }
    write_work(&mut io::stdout().lock(), report)?;
    write_problems(&mut io::stderr().lock(), report)
}

pub fn write_work(out: &mut impl Write, report: &PassReport) -> io::Result<()> {
    if report.drained.stored > 0 {
        writeln!(out, "spool: {} events stored", report.drained.stored)?;
    }
    let distil = &report.distil;
    let mut line = format!(
        "distilled {} sessions: {} new observations, {} summaries",
        distil.sessions, distil.observations, distil.summaries
    );
    if distil.busy > 0 {
        line.push_str(&format!(" ({} sessions were being distilled by another pass)", distil.busy));
    }
    if distil.waiting > 0 {
        line.push_str(&format!(
            " ({} sessions wait for their agent to write a turn's end to its transcript)",
            distil.waiting
        ));
    }
    writeln!(out, "{line}")?;
    if let Some(promoted) = &report.promoted {
        write_promoted(out, promoted, report.auto_promoted)?;
    }
    if let (Some(model), Some(embedded)) = (&report.model, &report.embedded)
        && embedded.embedded > 0
    {
        writeln!(out, "embedded {} items with {model}", embedded.embedded)?;
    }
    if let Some(sync) = &report.vault {
        writeln!(
            out,
            "vault: {} notes written, {} memories changed and {} created from notes, {} forgotten, {} approved, {} conflicts",
            sync.written,
            sync.updated_from_vault,
            sync.created_from_vault,
            sync.forgotten,
            sync.approved,
            sync.conflicts.len()
        )?;
    }
    Ok(())
}

/// The steps that failed, one line each; the pass went on without them.
pub fn write_problems(err: &mut impl Write, report: &PassReport) -> io::Result<()> {
    for problem in &report.problems {
        writeln!(
            err,
            "agent-memory: the {} step failed: {}",
            problem.step.name(),
            problem.message
        )?;
    }
    Ok(())
}

/// What screening for long-term memory did, when it did anything.
fn write_promoted(out: &mut impl Write, report: &PromoteReport, auto: bool) -> io::Result<()> {
    if report.candidates + report.merged == 0 {
        return Ok(());
    }
    if auto {
        return writeln!(
            out,
            "memory: {} new project memories ({} replacing an older decision), {} merged into existing ones",
            report.candidates, report.successors, report.merged
        );
    }
    let successors = if report.successors > 0 {
        format!(", {} replacing an older decision", report.successors)
    } else {
        String::new()
    };
    writeln!(
        out,
        "memory: {} new candidate(s){successors}, {} merged into existing ones; review them with \
         `agent-memory review`",
        report.candidates, report.merged
    )
}

/// `agent-memory recover`: what draining the spool stored, and what it set aside.
pub fn recover(report: &DrainReport, as_json: bool) -> io::Result<()> {
    write_recover(&mut io::stdout().lock(), report, as_json)
}

pub fn write_recover(out: &mut impl Write, report: &DrainReport, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, report);
    }
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
