//! `agent-memory work` and `recover`: what a work pass did, a line per step that did
//! something, and what a spool drain stored.

use std::io::{self, Write};

use agent_memory_core::capture::DrainReport;
use agent_memory_core::promote::PromoteReport;
use agent_memory_core::work::PassReport;

use super::{count, json};

/// What a work pass did, a line per step that did something; a failed step on stderr.
/// `stored` is what the store already holds (observations, summaries), told when the pass
/// found nothing new, since the stop hook's own pass has usually done the work.
pub fn work(report: &PassReport, stored: Option<(i64, i64)>, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&mut io::stdout().lock(), report);
    }
    write_work(&mut io::stdout().lock(), report, stored)?;
    write_problems(&mut io::stderr().lock(), report)
}

/// A run stopped by `^C` between passes: what is left, and that the next run goes on. Under
/// `--json` on standard error, so standard output stays one document.
pub fn work_stopped(left: i64, as_json: bool) -> io::Result<()> {
    let line = format!(
        "stopped: {} left to distil; `agent-memory work` goes on from there",
        count(left, "session")
    );
    if as_json {
        super::warning(&line);
        return Ok(());
    }
    writeln!(io::stdout().lock(), "{line}")
}

pub fn write_work(
    out: &mut impl Write,
    report: &PassReport,
    stored: Option<(i64, i64)>,
) -> io::Result<()> {
    if report.drained.stored > 0 {
        writeln!(out, "spool: {} stored", count(report.drained.stored, "event"))?;
    }
    let distil = &report.distil;
    let mut line = match (distil.observations + distil.summaries, stored) {
        (0, Some((observations, summaries))) => format!(
            "nothing new to distil; the store holds {} and {} (the stop hook distils each \
             session in the background as it stops)",
            count(observations, "observation"),
            count(summaries, "summary")
        ),
        _ => format!(
            "distilled {}: {}, {}",
            count(distil.sessions, "session"),
            count(distil.observations, "new observation"),
            count(distil.summaries, "summary")
        ),
    };
    if distil.busy > 0 {
        line.push_str(&format!(
            " ({} being distilled by another pass)",
            count(distil.busy, "session")
        ));
    }
    if distil.waiting > 0 {
        line.push_str(&format!(
            " ({} waiting for their agent to write a turn's end to its transcript)",
            count(distil.waiting, "session")
        ));
    }
    writeln!(out, "{line}")?;
    if let Some(promoted) = &report.promoted {
        write_promoted(out, promoted, report.auto_promoted)?;
    }
    if let (Some(model), Some(embedded)) = (&report.model, &report.embedded)
        && embedded.embedded > 0
    {
        writeln!(out, "embedded {} with {model}", count(embedded.embedded, "item"))?;
    }
    if let (Some(model), Some(encoded)) = (&report.sparse_model, &report.sparse_encoded)
        && encoded.embedded > 0
    {
        writeln!(out, "encoded {} with {model}", count(encoded.embedded, "item"))?;
    }
    if let Some(sync) = &report.vault {
        writeln!(
            out,
            "vault: {} written, {} changed and {} created from notes, {} forgotten, {} approved, {}",
            count(sync.written, "note"),
            count(sync.updated_from_vault, "memory"),
            sync.created_from_vault,
            sync.forgotten,
            sync.approved,
            count(sync.conflicts.len(), "conflict")
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
    if report.candidates + report.merged + report.stated == 0 {
        return Ok(());
    }
    if report.stated > 0 {
        writeln!(
            out,
            "memory: kept {} you told your agents (undo one with `agent-memory forget <id>`)",
            count(report.stated, "statement")
        )?;
        if report.candidates + report.merged == 0 {
            return Ok(());
        }
    }
    if auto {
        return writeln!(
            out,
            "memory: {} ({} replacing an older decision), {} merged into existing ones",
            count(report.candidates, "new project memory"),
            report.successors,
            report.merged
        );
    }
    let successors = if report.successors > 0 {
        format!(", {} replacing an older decision", report.successors)
    } else {
        String::new()
    };
    writeln!(
        out,
        "memory: {}{successors}, {} merged into existing ones; review them with \
         `agent-memory review`",
        count(report.candidates, "new candidate"),
        report.merged
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
        "recovered {} from {} ({} already stored, {} dropped as noise or unreadable)",
        count(report.stored, "event"),
        count(report.files, "spool file"),
        report.already_stored,
        report.dropped
    )?;
    if report.quarantined > 0 {
        writeln!(
            out,
            "{} unreadable lines and set aside as .bad",
            if report.quarantined == 1 {
                "1 file had".to_owned()
            } else {
                format!("{} files had", report.quarantined)
            }
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use agent_memory_core::distil::sessions::DistilReport;
    use expect_test::expect;

    use super::*;
    use crate::output::tests::rendered;

    #[test]
    fn a_pass_says_what_it_did_with_its_numbers() {
        let distil =
            DistilReport { sessions: 1, observations: 1, summaries: 1, busy: 0, waiting: 0 };
        let report = PassReport { distil, ..PassReport::default() };
        expect![[r#"
            distilled 1 session: 1 new observation, 1 summary
        "#]]
        .assert_eq(&rendered(|out| write_work(out, &report, None)));
    }

    #[test]
    fn a_pass_that_found_nothing_new_says_what_is_there() {
        let distil = DistilReport { sessions: 2, ..DistilReport::default() };
        let report = PassReport { distil, ..PassReport::default() };
        expect![[r#"
            nothing new to distil; the store holds 3 observations and 1 summary (the stop hook distils each session in the background as it stops)
        "#]]
        .assert_eq(&rendered(|out| write_work(out, &report, Some((3, 1)))));
    }
}
