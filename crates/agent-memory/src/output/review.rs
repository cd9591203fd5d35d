//! `agent-memory review`: the candidates as JSON, or one candidate at a time with the question
//! it asks, and what the walk did at the end.

use std::io::{self, Write};

use agent_memory_core::store::memories::Memory;
use serde::Serialize;

use super::json;
use crate::report::ReviewTally;

#[derive(Serialize)]
struct CandidateJson<'a> {
    #[serde(flatten)]
    memory: &'a Memory,
    would_supersede: Option<&'a Memory>,
}

/// `agent-memory review --json`: every candidate with the memory approving it would retire.
pub fn review_list(candidates: &[(Memory, Option<Memory>)]) -> io::Result<()> {
    write_review_list(&mut io::stdout().lock(), candidates)
}

pub fn write_review_list(
    out: &mut impl Write,
    candidates: &[(Memory, Option<Memory>)],
) -> io::Result<()> {
    let list: Vec<CandidateJson<'_>> = candidates
        .iter()
        .map(|(memory, older)| CandidateJson { memory, would_supersede: older.as_ref() })
        .collect();
    json(out, &list)
}

/// One candidate of the walk: where it is in the queue, what it says, what it would retire.
pub fn review_candidate(
    index: usize,
    total: usize,
    m: &Memory,
    older: Option<&Memory>,
) -> io::Result<()> {
    write_review_candidate(&mut io::stdout().lock(), index, total, m, older)
}

/// A candidate as review names it: `m12 decision · importance 7 · shop`.
fn heading(m: &Memory) -> String {
    let scope = m.project_name.as_deref().unwrap_or("global");
    format!("m{} {} · importance {} · {scope}", m.id, m.kind.as_str(), m.importance)
}

pub fn write_review_candidate(
    out: &mut impl Write,
    index: usize,
    total: usize,
    m: &Memory,
    older: Option<&Memory>,
) -> io::Result<()> {
    let sources = if m.sources.is_empty() { "-".to_owned() } else { m.sources.join(" ") };
    writeln!(out, "\n[{index}/{total}] {} · from {sources}", heading(m))?;
    writeln!(out, "  {}", m.text)?;
    if let Some(branch) = &m.branch {
        writeln!(out, "  made on branch {branch}: approving it makes it the whole project's")?;
    }
    if let Some(old) = older {
        writeln!(out, "  supersedes m{} (approving it retires this one): {}", old.id, old.text)?;
    }
    Ok(())
}

pub fn review_prompt() -> io::Result<()> {
    review_ask("[a]pprove  approve [g]lobal  [e]dit  [k]ind  [r]eject  [s]kip  [q]uit > ")
}

/// A question without a line end, flushed so it shows before the answer is read.
pub fn review_ask(question: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    write!(out, "{question}")?;
    out.flush()
}

pub fn review_problem(message: &str) -> io::Result<()> {
    writeln!(io::stdout().lock(), "  {message}")
}

/// `review --approve … --dry-run` (or `--reject`): each candidate it would change, one line
/// each, and how many.
pub fn review_would(verb: &str, global: bool, chosen: &[Memory]) -> io::Result<()> {
    write_review_would(&mut io::stdout().lock(), verb, global, chosen)
}

pub fn write_review_would(
    out: &mut impl Write,
    verb: &str,
    global: bool,
    chosen: &[Memory],
) -> io::Result<()> {
    for m in chosen {
        writeln!(out, "{}: {}", heading(m), m.text)?;
    }
    let into = match (verb, global) {
        ("approve", true) => " into global memory",
        ("approve", false) => " into project memory",
        _ => "",
    };
    let noun = if chosen.len() == 1 { "candidate" } else { "candidates" };
    writeln!(
        out,
        "would {verb} {} {noun}{into}; nothing changed (run it again without --dry-run)",
        chosen.len()
    )
}

/// What the walk did; or, when there was nothing to walk, where candidates come from.
pub fn review_done(tally: &ReviewTally) -> io::Result<()> {
    write_review_done(&mut io::stdout().lock(), tally)
}

pub fn write_review_done(out: &mut impl Write, tally: &ReviewTally) -> io::Result<()> {
    if tally.approved + tally.rejected + tally.skipped + tally.left == 0 {
        return writeln!(
            out,
            "no candidates to review; `agent-memory work` screens new observations"
        );
    }
    writeln!(
        out,
        "\nreview: {} approved, {} rejected, {} skipped, {} left for later",
        tally.approved, tally.rejected, tally.skipped, tally.left
    )
}
