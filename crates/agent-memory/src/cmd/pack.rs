//! `agent-memory pack`: memory packs, read-only files of reviewed memory to share.
//!
//! `build` writes a project's reviewed memory (and, with `--global`, global memory) as a JSONL
//! memory export and makes the file read-only; `add` mounts a pack: its memories arrive as
//! candidates with `pack:NAME` as their origin (their provenance), because a pack is someone
//! else's file, and join search, prompt recall and the briefing once `approve` (or `review`)
//! accepts them, or at once with `--trust`; `list` shows what is mounted; `remove` forgets
//! every memory a pack brought.

use std::io::BufReader;
use std::path::Path;

use agent_memory_core::store::memories::{self, Filter, Status, Tier};
use agent_memory_core::{capture, fsutil, time};
use anyhow::Context as _;

use super::Context;
use crate::cli::PackCommand;
use crate::output;
use crate::report::PackDone;

pub fn run(ctx: &Context, command: PackCommand) -> anyhow::Result<()> {
    match command {
        PackCommand::Build { file, project, global, json } => {
            build(ctx, &file, project.as_deref(), global, json)
        }
        PackCommand::Add { file, name, trust, json } => add(ctx, &file, name, trust, json),
        PackCommand::Approve { name, json } => {
            let mut store = ctx.store()?;
            let approved = memories::approve_pack(&mut store, &name, time::now_ms())?;
            if approved == 0 && !memories::packs(&store)?.iter().any(|(n, ..)| *n == name) {
                anyhow::bail!("no pack is called `{name}`; see `agent-memory pack list`");
            }
            changed(name, "approved", approved, "now active", json)
        }
        PackCommand::List(args) => {
            let store = ctx.store()?;
            Ok(output::packs(&memories::packs(&store)?, args.json)?)
        }
        PackCommand::Remove { name, json } => {
            let mut store = ctx.store()?;
            let forgotten = memories::forget_pack(&mut store, &name, time::now_ms())?;
            if forgotten == 0 && !memories::packs(&store)?.iter().any(|(n, ..)| *n == name) {
                anyhow::bail!("no pack is called `{name}`; see `agent-memory pack list`");
            }
            changed(name, "removed", forgotten, "forgotten", json)
        }
    }
}

/// What `pack approve` or `pack remove` did to the pack's memories: `approved pack team: 3
/// memories now active`, or its JSON.
fn changed(
    name: String,
    action: &'static str,
    memories: usize,
    state: &str,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let done = PackDone { pack: name, action, memories, already_known: None };
        return Ok(output::json_value(&done)?);
    }
    let count = output::count(memories, "memory");
    Ok(output::line(&format!("{action} pack {name}: {count} {state}"))?)
}

fn build(
    ctx: &Context,
    file: &Path,
    project: Option<&str>,
    global: bool,
    json: bool,
) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let project = match project {
        Some(value) => ctx.project_filter(&store, Some(value))?,
        None if global => None,
        None => ctx.project_filter(&store, Some("."))?,
    };
    let tiers = match (&project, global) {
        (Some(_), true) => vec![Tier::L2, Tier::L3],
        (Some(_), false) => vec![Tier::L2],
        (None, _) => vec![Tier::L3],
    };
    let filter = Filter { tiers, statuses: vec![Status::Active], project, ..Filter::default() };
    let mut buffer = Vec::new();
    let report = store.export_memories(&mut buffer, &filter, time::now_ms())?;
    fsutil::write_atomic(file, &buffer)
        .with_context(|| format!("cannot write {}", file.display()))?;
    // A pack is a snapshot to hand around, not a file to edit.
    let mut permissions = std::fs::metadata(file)?.permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(file, permissions)
        .with_context(|| format!("cannot make {} read-only", file.display()))?;
    if json {
        let pack = file.display().to_string();
        let done =
            PackDone { pack, action: "built", memories: report.memories, already_known: None };
        return Ok(output::json_value(&done)?);
    }
    output::line(&format!(
        "built pack {} with {}",
        file.display(),
        output::count(report.memories, "memory")
    ))?;
    Ok(())
}

fn add(
    ctx: &Context,
    file: &Path,
    name: Option<String>,
    trust: bool,
    json: bool,
) -> anyhow::Result<()> {
    let name = match name {
        Some(name) => name,
        None => file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .context("the pack file has no name; pass --name")?,
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        anyhow::bail!("`{name}` cannot name a pack; pass --name with one word, such as team-rules");
    }
    let mut store = ctx.store()?;
    let opened = std::fs::File::open(file)
        .with_context(|| format!("cannot open the pack {}", file.display()))?;
    let sanitize = |text: &str| capture::sanitize_text(text).into_owned();
    let report = store.import_pack(&mut BufReader::new(opened), &name, trust, &sanitize)?;
    if json {
        let done = PackDone {
            pack: name,
            action: "mounted",
            memories: report.memories,
            already_known: Some(report.memories_present),
        };
        return Ok(output::json_value(&done)?);
    }
    output::line(&format!(
        "mounted pack {name}: {} added, {} already known",
        output::count(report.memories, "memory"),
        report.memories_present
    ))?;
    if !trust && report.memories > 0 {
        output::line(&format!(
            "they wait as candidates: read them with `agent-memory review`, then `agent-memory \
             pack approve {name}` (or approve them one by one)"
        ))?;
    }
    Ok(())
}
