//! `agent-memory review`: take memory candidates (L1) through review.
//!
//! Without flags, a walk over the candidates, most important first, one answer per line on
//! standard input (so a script or a test can drive it as a person would): approve into project
//! memory, approve into global memory, edit the text or kind, reject, skip, quit. A candidate
//! proposed as the successor of an active decision is shown beside it: approving it supersedes
//! the older one. With `--json`, `--approve`, `--reject` or `--edit`, one step and no questions.

use std::io::BufRead;

use agent_memory_core::store::Store;
use agent_memory_core::store::memories::{self, Edit, Filter, Memory, Status, Tier};

use super::Context;
use super::memories::{parse_kind, parse_memory_id};
use crate::cli::ReviewArgs;
use crate::output;
use crate::report::ReviewTally;

pub fn run(ctx: &Context, args: ReviewArgs) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    if !args.approve.is_empty() || !args.reject.is_empty() {
        return decide(ctx, &mut store, &args);
    }
    if let Some(id) = &args.edit {
        if args.text.is_none() && args.kind.is_none() && args.importance.is_none() {
            anyhow::bail!("--edit needs --text, --kind or --importance: say what to change");
        }
        let change = Edit {
            text: args.text.clone(),
            kind: args.kind.as_deref().map(parse_kind).transpose()?,
            importance: args.importance.map(memories::check_importance).transpose()?,
        };
        let memory = ctx.writer(&mut store).edit(parse_memory_id(id)?, change)?;
        return Ok(output::memory_changed("edited", &memory, args.json)?);
    }
    let candidates = candidates(ctx, &store, &args)?;
    if args.json {
        return Ok(output::review_list(&candidates)?);
    }
    // Reviewed memory that may no longer hold comes first: a file it rests on changed.
    let look = agent_memory_core::promote::tidy::needing_a_look(
        &store,
        agent_memory_core::time::now_ms(),
    )?;
    output::needs_a_look(&look)?;
    walk(ctx, &mut store, candidates, &mut std::io::stdin().lock())
}

/// What `--approve` and `--reject` take for every candidate the filters select.
const ALL: &str = "all";

/// `--approve` or `--reject`: one candidate, several by id, or `all` that the filters select
/// (most important first), so a long history imported at once is reviewed a project or a kind
/// at a time, not a memory at a time. Every id is checked before anything changes.
fn decide(ctx: &Context, store: &mut Store, args: &ReviewArgs) -> anyhow::Result<()> {
    let approve = !args.approve.is_empty();
    let named = if approve { &args.approve } else { &args.reject };
    let every = named.iter().any(|id| id.eq_ignore_ascii_case(ALL));
    if every && named.len() > 1 {
        anyhow::bail!(
            "`all` stands alone: give `all` with --project, --kind, --min-importance or --from, or give ids"
        );
    }
    if !every
        && (args.project.is_some()
            || args.kind.is_some()
            || args.min_importance.is_some()
            || args.from.is_some())
    {
        anyhow::bail!(
            "--project, --kind, --min-importance and --from choose among all candidates: give `all` with them, or give only ids"
        );
    }
    if !every && named.len() == 1 && !args.dry_run {
        // One candidate, answered with the memory it became (and the one it superseded).
        let id = parse_memory_id(&named[0])?;
        if approve {
            let approved = ctx.writer(store).approve(id, args.global)?;
            let superseded =
                approved.superseded.map(|old| memories::get(store, old)).transpose()?;
            return Ok(output::approved(
                &approved.memory,
                superseded.flatten().as_ref(),
                args.json,
            )?);
        }
        let memory = ctx.writer(store).reject(id)?;
        return Ok(output::memory_changed("rejected", &memory, args.json)?);
    }
    let chosen: Vec<Memory> = if every {
        candidates(ctx, store, args)?.into_iter().map(|(memory, _)| memory).collect()
    } else {
        let mut chosen: Vec<Memory> = Vec::with_capacity(named.len());
        for raw in named {
            let id = parse_memory_id(raw)?;
            if chosen.iter().any(|m| m.id == id) {
                continue;
            }
            let memory = memories::get(store, id)?.ok_or(memories::MemoryError::NotFound(id))?;
            if memory.status != Status::Candidate {
                anyhow::bail!(
                    "m{id} is {}, not a candidate; nothing was changed (`agent-memory review` lists the candidates)",
                    memory.status.as_str()
                );
            }
            chosen.push(memory);
        }
        chosen
    };
    let verb = if approve { "approve" } else { "reject" };
    if args.dry_run {
        if args.json {
            return Ok(output::json_value(&chosen)?);
        }
        return Ok(output::review_would(verb, args.global, &chosen)?);
    }
    let mut changed = Vec::with_capacity(chosen.len());
    let mut tally = ReviewTally::default();
    for memory in chosen {
        if approve {
            changed.push(ctx.writer(store).approve(memory.id, args.global)?.memory);
            tally.approved += 1;
        } else {
            changed.push(ctx.writer(store).reject(memory.id)?);
            tally.rejected += 1;
        }
    }
    if args.json {
        return Ok(output::json_value(&changed)?);
    }
    Ok(output::review_done(&tally)?)
}

/// Candidates, most important first, each with the active memory it would supersede; only
/// those `--project`, `--kind`, `--min-importance` and `--from` select.
fn candidates(
    ctx: &Context,
    store: &Store,
    args: &ReviewArgs,
) -> anyhow::Result<Vec<(Memory, Option<Memory>)>> {
    let filter = Filter {
        tiers: vec![Tier::L1],
        statuses: vec![Status::Candidate],
        kinds: args.kind.as_deref().map(parse_kind).transpose()?.into_iter().collect(),
        project: ctx.project_filter(store, args.project.as_deref())?,
        ..Filter::default()
    };
    let least = args.min_importance.map(memories::check_importance).transpose()?;
    let mut list = memories::list(store, &filter)?;
    if let Some(from) = args.from.as_deref().map(str::to_lowercase) {
        list.retain(|m| m.origin == from || m.origin.starts_with(&format!("{from}:")));
    }
    if let Some(least) = least {
        list.retain(|m| m.importance >= least);
    }
    list.sort_by(|a, b| b.importance.cmp(&a.importance).then(a.id.cmp(&b.id)));
    let mut out = Vec::with_capacity(list.len());
    for mut memory in list {
        // Work on a branch not yet merged is that branch's until approved for the project.
        memory.branch = store.work_branch_of(&memory.sources)?;
        let older = match memory.supersedes {
            Some(id) => memories::get(store, id)?.filter(|m| m.status == Status::Active),
            None => None,
        };
        out.push((memory, older));
    }
    Ok(out)
}

/// The interactive walk: one answer per line; the end of input is a quit.
fn walk(
    ctx: &Context,
    store: &mut Store,
    candidates: Vec<(Memory, Option<Memory>)>,
    input: &mut dyn BufRead,
) -> anyhow::Result<()> {
    let mut tally = ReviewTally { left: candidates.len(), ..ReviewTally::default() };
    let total = candidates.len();
    'candidates: for (index, (mut memory, older)) in candidates.into_iter().enumerate() {
        output::review_candidate(index + 1, total, &memory, older.as_ref())?;
        loop {
            output::review_prompt()?;
            let Some(answer) = read_line(input)? else { break 'candidates };
            match answer.trim().to_lowercase().as_str() {
                "a" | "approve" | "g" | "global" => {
                    let global = answer.trim().starts_with(['g', 'G']);
                    let approved = ctx.writer(store).approve(memory.id, global)?;
                    output::approved(
                        &approved.memory,
                        older.as_ref().filter(|_| approved.superseded.is_some()),
                        false,
                    )?;
                    tally.approved += 1;
                    break;
                }
                "e" | "edit" => {
                    output::review_ask("new text (one line, at most 300 characters): ")?;
                    let Some(text) = read_line(input)? else { break 'candidates };
                    let change = Edit { text: Some(text), ..Edit::default() };
                    match ctx.writer(store).edit(memory.id, change) {
                        Ok(edited) => memory = edited,
                        Err(err) => output::review_problem(&err.to_string())?,
                    }
                    output::review_candidate(index + 1, total, &memory, older.as_ref())?;
                }
                "k" | "kind" => {
                    output::review_ask("kind (fact, decision, convention, problem, preference): ")?;
                    let Some(kind) = read_line(input)? else { break 'candidates };
                    match parse_kind(&kind) {
                        Ok(kind) => {
                            let change = Edit { kind: Some(kind), ..Edit::default() };
                            memory = ctx.writer(store).edit(memory.id, change)?;
                        }
                        Err(err) => output::review_problem(&err.to_string())?,
                    }
                    output::review_candidate(index + 1, total, &memory, older.as_ref())?;
                }
                "r" | "reject" => {
                    let rejected = ctx.writer(store).reject(memory.id)?;
                    output::memory_changed("rejected", &rejected, false)?;
                    tally.rejected += 1;
                    break;
                }
                "s" | "skip" | "" => {
                    tally.skipped += 1;
                    break;
                }
                "q" | "quit" => break 'candidates,
                _ => output::review_problem(
                    "answer a (approve), g (approve global), e (edit text), k (kind), r (reject), s (skip) or q (quit)",
                )?,
            }
        }
        tally.left -= 1;
    }
    output::review_done(&tally)?;
    Ok(())
}

fn read_line(input: &mut dyn BufRead) -> anyhow::Result<Option<String>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\n', '\r']).to_owned()))
}
