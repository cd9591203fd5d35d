//! `agent-memory remember`, `forget` and `memories`: state a memory directly, forget one (or
//! bring it back), and list what is kept. Changes go through core's `memory::Writer`, as the
//! MCP tools' and the viewer's do.

use std::path::Path;

use agent_memory_core::memory::{Actor, Remember, Scope};
use agent_memory_core::store::Store;
use agent_memory_core::store::memories::{self, Filter, Kind, Status, Tier};
use agent_memory_core::store::team::items::{self as team_items, ItemKind};
use agent_memory_core::{project, time};
use anyhow::Context as _;

use super::Context;
use crate::cli::{ForgetArgs, MemoriesArgs, RememberArgs};
use crate::output;

pub fn remember(ctx: &Context, args: RememberArgs) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let kind = args.kind.as_deref().map(parse_kind).transpose()?;
    let importance = memories::check_importance(args.importance)?;
    let scope = if args.global {
        Scope::Global
    } else {
        Scope::Project(project_row(&mut store, args.project.as_deref())?)
    };
    let what = Remember { text: args.text.join(" "), kind, importance: Some(importance), scope };
    let done = ctx.writer(&mut store).remember(&Actor::Person, what)?;
    output::remembered(&done.memory, &done.placed, args.json)?;
    Ok(())
}

/// Forgets (or with `--undo` restores) every memory named, or forgets the observations (`o12`)
/// and summaries (`s3`) named; every id is checked first, so a typo changes nothing.
pub fn forget(ctx: &Context, args: ForgetArgs) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let items = args.ids.iter().filter_map(|raw| item_id(raw)).collect::<Vec<_>>();
    if !items.is_empty() {
        return forget_items(&store, &args, &items);
    }
    let ids =
        args.ids.iter().map(|raw| parse_memory_id(raw)).collect::<anyhow::Result<Vec<_>>>()?;
    for &id in &ids {
        memories::get(&store, id)?.ok_or(memories::MemoryError::NotFound(id))?;
    }
    let mut changed = Vec::with_capacity(ids.len());
    for id in ids {
        let mut writer = ctx.writer(&mut store);
        changed.push(if args.undo {
            writer.restore(id)?
        } else {
            writer.forget(&Actor::Person, id)?
        });
    }
    output::memories_changed(if args.undo { "restored" } else { "forgot" }, &changed, args.json)?;
    Ok(())
}

/// An observation's (`o12`) or a summary's (`s3`) id as typed.
fn item_id(raw: &str) -> Option<(ItemKind, i64)> {
    let raw = raw.trim().trim_start_matches('#');
    let kind = match raw.chars().next()?.to_ascii_lowercase() {
        'o' => ItemKind::Observation,
        's' => ItemKind::Summary,
        _ => return None,
    };
    raw[1..].parse::<i64>().ok().filter(|id| *id > 0).map(|id| (kind, id))
}

/// Forgets observations and summaries: each is deleted here, and one that was shared with the
/// team leaves a tombstone for the next sync. Every id named must be one of them, and here.
fn forget_items(store: &Store, args: &ForgetArgs, items: &[(ItemKind, i64)]) -> anyhow::Result<()> {
    if args.undo {
        anyhow::bail!(
            "a forgotten observation or summary cannot be brought back (it is deleted); `--undo` is for memories (m12)"
        );
    }
    if items.len() != args.ids.len() {
        anyhow::bail!(
            "forget memories (m12) and observations or summaries (o12, s3) in separate commands"
        );
    }
    for &(kind, id) in items {
        if !team_items::exists(store, kind, id)? {
            anyhow::bail!(
                "there is no {} {}{id}; `agent-memory search` shows the ids",
                kind.as_str(),
                kind.letter()
            );
        }
    }
    let mut forgotten = Vec::with_capacity(items.len());
    for &(kind, id) in items {
        team_items::forget(store, kind, id, time::now_ms())?;
        forgotten.push(format!("{}{id}", kind.letter()));
    }
    output::items_forgotten(&forgotten, args.json)?;
    Ok(())
}

pub fn list(ctx: &Context, args: MemoriesArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let filter = Filter {
        tiers: args.tier.iter().filter_map(|t| Tier::parse(t)).collect(),
        kinds: args.kind.iter().filter_map(|k| Kind::parse(k)).collect(),
        statuses: if args.all { Vec::new() } else { vec![Status::Active, Status::Candidate] },
        project: ctx.project_filter(&store, args.project.as_deref())?,
        ..Filter::default()
    };
    output::memories(&memories::list(&store, &filter)?, args.json)?;
    Ok(())
}

/// `m12`, `#m12` or `12`.
pub fn parse_memory_id(raw: &str) -> anyhow::Result<i64> {
    let digits = raw.trim().trim_start_matches('#');
    let digits = digits.strip_prefix(['m', 'M']).unwrap_or(digits);
    digits.parse::<i64>().ok().filter(|id| *id > 0).ok_or_else(|| {
        anyhow::anyhow!(
            "`{raw}` is not a memory id; use the id `agent-memory memories` shows (m12)"
        )
    })
}

pub fn parse_kind(raw: &str) -> anyhow::Result<Kind> {
    Kind::parse(raw).ok_or_else(|| {
        anyhow::anyhow!(
            "`{raw}` is not a memory kind; use fact, decision, convention, problem or preference"
        )
    })
}

/// The row id of the project named by `value` (a key, a name, or a directory inside it), or of
/// the current directory's project; a directory not seen before (even one that does not exist
/// here, as hooks from another machine's paths do) is recorded as a project.
fn project_row(store: &mut Store, value: Option<&str>) -> anyhow::Result<i64> {
    let dir = match value {
        // A known key or name first; then anything that is, or reads as, a directory path.
        Some(value) if let Some(id) = memories::project_id(store, value)? => return Ok(id),
        Some(value) if !Path::new(value).is_dir() && !value.contains(std::path::MAIN_SEPARATOR) => {
            return memories::project_id(store, value)?.with_context(|| {
                format!(
                    "no project is called `{value}`; pass a directory inside it, or see \
                     `agent-memory project list`"
                )
            });
        }
        Some(value) => Path::new(value).to_owned(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let roots = store.registered_roots()?;
    let identity = project::resolve(&dir, &roots);
    // A folder named with --project is the person's word; the current one is checked.
    if value.is_none() {
        super::within_a_project(
            &identity,
            &roots,
            "pass --global to keep it for every project, or --project with a project's folder",
        )?;
    }
    Ok(memories::ensure_project(store, &identity)?)
}
