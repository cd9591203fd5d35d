//! Everything the CLI prints goes through here (a lint denies printing elsewhere), so that
//! output stays consistent and a closed pipe is an `io::Error` the caller can treat as success.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{self, Write};

use agent_memory_core::capture::DrainReport;
use agent_memory_core::capture::spool::SpoolDepth;
use agent_memory_core::embed::{Manifest, ModelKind};
use agent_memory_core::promote::PromoteReport;
use agent_memory_core::recall::{self, Item, ItemId, Timeline};
use agent_memory_core::store::search::{Ranking, SearchResults};
use agent_memory_core::store::status::{ProjectCount, StoreStatus};
use agent_memory_core::store::transfer::TransferReport;
use agent_memory_core::store::vectors::EmbedPass;
use agent_memory_core::time::format_local;
use agent_memory_core::work::PassReport;
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

/// A hook's answer to its agent: one line of JSON on stdout, the only thing a hook prints.
pub fn hook_answer(json: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{json}")?;
    out.flush()
}

pub fn text(text: &str) -> io::Result<()> {
    io::stdout().lock().write_all(text.as_bytes())
}

pub fn line(text: &str) -> io::Result<()> {
    writeln!(io::stdout().lock(), "{text}")
}

pub fn search(
    results: &SearchResults,
    ranking: &Ranking,
    explain: bool,
    as_json: bool,
) -> io::Result<()> {
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
            "{:<7} {}  {:<11} {:<14} {:<11} {}  ({:.3})",
            hit_id(hit.kind, hit.id),
            format_local(hit.at_ms),
            hit.agent,
            clip(hit.project.as_deref().unwrap_or("-"), 14),
            clip(&hit.item_type, 11),
            clip(&hit.title, 100),
            hit.score,
        )?;
        if explain && !results.fallback {
            let p = &hit.parts;
            let bm25 = p.bm25.map_or("-".to_owned(), |b| format!("{b:.2}"));
            let sim = p.similarity.map_or("-".to_owned(), |s| format!("{s:.3}"));
            writeln!(
                out,
                "        = {:.2}×relevance {:.3} (bm25 {bm25} → {:.3}, similarity {sim})\n          \
                 + {:.2}×importance {:.2} ({} {})\n          \
                 + {:.2}×freshness {:.3} ({:.1} days old, half-life {} days)\n          \
                 + {:.2}×hits {:.3} ({} before)",
                ranking.weight_relevance,
                p.relevance,
                p.bm25_norm,
                ranking.weight_importance,
                p.importance,
                hit.kind,
                hit.item_type,
                ranking.weight_freshness,
                p.freshness,
                p.age_days,
                ranking.half_life_days,
                ranking.weight_hits,
                p.hits,
                p.hit_count,
            )?;
        }
    }
    if results.fallback {
        writeln!(out, "(ranked by time: the full-text index could not take this query)")?;
    } else if explain {
        let channels = if results.semantic { "full text and vectors" } else { "full text only" };
        writeln!(out, "(channels: {channels})")?;
    }
    Ok(())
}

/// The id `show` takes: o12, s3, e45.
fn hit_id(kind: &str, id: i64) -> String {
    format!("{}{id}", kind.chars().next().unwrap_or('e'))
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
    for (i, spend) in status.llm_spend.iter().enumerate() {
        let label = if i == 0 { "llm" } else { "" };
        writeln!(
            out,
            "{label:<10} {}  {:<18} {:>9} tokens in {} calls",
            spend.day, spend.provider, spend.tokens, spend.calls
        )?;
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
    if report.memories + report.memories_present > 0 {
        line.push_str(&format!(", {} memories", report.memories));
        if report.memories_present > 0 {
            line.push_str(&format!(" ({} were already stored)", report.memories_present));
        }
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

// Modes (`agent-memory mode`). Imported here rather than at the top so this block stands alone.
use agent_memory_core::distil::mode::{Mode, ModeInfo, ModeSource};

#[derive(Serialize)]
struct ModeListJson<'a> {
    name: &'a str,
    description: &'a str,
    /// `built-in`, or the user file's path.
    source: String,
    built_in: bool,
    overrides_builtin: bool,
    in_use: bool,
    problem: Option<&'a str>,
}

/// `agent-memory mode list`: every mode, `*` on `in_use`, a broken user file with its problem.
pub fn mode_list(modes: &[ModeInfo], in_use: &str, as_json: bool) -> io::Result<()> {
    if as_json {
        let rows: Vec<ModeListJson> = modes
            .iter()
            .map(|m| ModeListJson {
                name: &m.name,
                description: &m.description,
                source: m.source.to_string(),
                built_in: m.source == ModeSource::BuiltIn,
                overrides_builtin: m.overrides_builtin,
                in_use: m.name == in_use,
                problem: m.problem.as_deref(),
            })
            .collect();
        return json(&rows);
    }
    let mut out = io::stdout().lock();
    let width = modes.iter().map(|m| m.name.chars().count()).max().unwrap_or(0);
    for m in modes {
        let marker = if m.name == in_use { '*' } else { ' ' };
        let source = match (&m.source, m.overrides_builtin) {
            (ModeSource::BuiltIn, _) => "built-in".to_owned(),
            (ModeSource::User(path), false) => path.display().to_string(),
            (ModeSource::User(path), true) => format!("{}, replaces the built-in", path.display()),
        };
        let description = if m.description.is_empty() { "-" } else { &m.description };
        writeln!(out, "{marker} {:<width$}  {}  ({source})", m.name, clip(description, 90))?;
        if let Some(problem) = &m.problem {
            writeln!(out, "  {:<width$}  problem: {problem}", "")?;
        }
    }
    if !modes.iter().any(|m| m.name == in_use) {
        writeln!(
            out,
            "\nthe configured mode `{in_use}` does not exist; choose one with `agent-memory mode use <name>`"
        )?;
    }
    Ok(())
}

/// `agent-memory mode show`: one mode as loaded, in one language.
pub fn mode_show(mode: &Mode, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(mode);
    }
    let mut out = io::stdout().lock();
    writeln!(out, "mode      {} ({})", mode.name, mode.language)?;
    writeln!(out, "role      {}", mode.role.trim())?;
    let width = mode.types.iter().chain(&mode.concepts).map(|t| t.key.chars().count()).max();
    let width = width.unwrap_or(0);
    for (heading, terms) in [("types", &mode.types), ("concepts", &mode.concepts)] {
        writeln!(out, "{heading}")?;
        for t in terms {
            let skipped = if heading == "types" && !mode.emits_type(&t.key) {
                "  (never emitted: in skip_types)"
            } else {
                ""
            };
            writeln!(
                out,
                "  {} {:<width$}  {}: {}{skipped}",
                t.emoji, t.key, t.label, t.description
            )?;
        }
    }
    for (heading, items) in [("record", &mode.record), ("skip", &mode.skip)] {
        if items.is_empty() {
            continue;
        }
        writeln!(out, "{heading}")?;
        for item in items {
            writeln!(out, "  - {}", item.trim())?;
        }
    }
    Ok(())
}

/// What a work pass did, a line per step that did something; a failed step on stderr.
pub fn work(report: &PassReport, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(report);
    }
    write_work(&mut io::stdout().lock(), report)?;
    for problem in &report.problems {
        eprintln!("agent-memory: the {} step failed: {}", problem.step.name(), problem.message);
    }
    Ok(())
}

fn write_work(out: &mut impl Write, report: &PassReport) -> io::Result<()> {
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

/// Items in full, in the compact text form the MCP tools answer with too.
pub fn show(items: &[Item], as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&items);
    }
    writeln!(io::stdout().lock(), "{}", recall::text::items(items).trim_end())
}

pub fn timeline(timeline: &Timeline, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&timeline.items);
    }
    let mut out = io::stdout().lock();
    if timeline.items.is_empty() {
        return writeln!(
            out,
            "no observations around {} yet; run `agent-memory work`",
            format_local(timeline.at_ms)
        );
    }
    let marked = match timeline.anchor {
        ItemId::Observation(id) => Some(id),
        _ => None,
    };
    for item in &timeline.items {
        let mark = if Some(item.id) == marked { "→" } else { " " };
        writeln!(
            out,
            "{mark} {:<7} {}  {:<11} [{}] {}  (~{} tokens)",
            format!("o{}", item.id),
            format_local(item.at_ms),
            item.agent,
            item.kind,
            clip(&item.title, 100),
            item.tokens
        )?;
    }
    Ok(())
}

/// Installed embedding models; `*` marks the one search uses.
pub fn model_list(models: &[Manifest], current: Option<&str>, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&models);
    }
    let mut out = io::stdout().lock();
    if models.is_empty() {
        return writeln!(
            out,
            "no embedding model installed: search uses full text only. \
             `agent-memory model install all-minilm-l6-v2` adds search by meaning."
        );
    }
    for m in models {
        let mark = if current == Some(m.name.as_str()) { "*" } else { " " };
        let kind = match m.kind {
            ModelKind::Bert => "sentence encoder",
            ModelKind::Static => "static",
        };
        writeln!(out, "{mark} {:<24} {kind:<16} {:>5} dims  {}", m.name, m.dimensions, m.source)?;
    }
    Ok(())
}

pub fn model_installed(m: &Manifest, used: bool, pending: i64) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "installed {} ({} dimensions) from {}", m.name, m.dimensions, m.source)?;
    if used {
        writeln!(out, "search uses it now ([search] model = \"{}\")", m.name)?;
    }
    if pending > 0 {
        writeln!(out, "{pending} stored items have no vector yet: run `agent-memory reindex`")?;
    }
    Ok(())
}

pub fn model_removed(name: &str, was_used: bool) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "removed {name}")?;
    if was_used {
        writeln!(out, "search uses full text only until another model is installed")?;
    }
    Ok(())
}

/// A progress bar on standard error for long work; hidden for `--json` and when standard
/// error is not a terminal.
pub fn progress(total: u64, what: &'static str, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg} {bar:40} {pos}/{len} ({per_sec}, {eta} left)",
    ) {
        bar.set_style(style);
    }
    bar.set_message(what);
    bar
}

pub fn reindex(model: &str, pass: &EmbedPass, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(pass);
    }
    let mut out = io::stdout().lock();
    writeln!(out, "embedded {} items with {model}", pass.embedded)?;
    if pass.left > 0 {
        writeln!(
            out,
            "{} items still have no vector; run `agent-memory reindex` again",
            pass.left
        )?;
    }
    Ok(())
}

/// `agent-memory brief`: the briefing as Markdown, or (on stderr) why there is none.
pub fn brief(markdown: Option<&str>, project: &str) -> io::Result<()> {
    match markdown {
        Some(text) => writeln!(io::stdout().lock(), "{text}"),
        None => writeln!(
            io::stderr().lock(),
            "nothing distilled yet in project {project}; run `agent-memory work` after a session"
        ),
    }
}

/// `agent-memory brief --write`: where the file is, and whether it changed.
pub fn brief_written(path: &std::path::Path, changed: bool) -> io::Result<()> {
    let state = if changed { "wrote" } else { "up to date:" };
    writeln!(io::stdout().lock(), "{state} {}", path.display())
}

/// What `install`/`uninstall` did to one file.
#[derive(Debug)]
pub enum InstallStatus {
    UpToDate,
    WouldChange,
    Created,
    /// Changed; `backup` is where the original went, when this run kept it.
    Updated {
        backup: Option<std::path::PathBuf>,
    },
    /// Uninstall left nothing in a file install created, so it is gone.
    Removed,
}

/// One line per file: the agent, what happened, the path.
pub fn install_file(agent: &str, path: &std::path::Path, status: &InstallStatus) -> io::Result<()> {
    let mut out = io::stdout().lock();
    let what = match status {
        InstallStatus::UpToDate => "up to date",
        InstallStatus::WouldChange => "would change",
        InstallStatus::Created => "created",
        InstallStatus::Updated { .. } => "updated",
        InstallStatus::Removed => "removed",
    };
    write!(out, "{agent:<12} {what:<12} {}", path.display())?;
    if let InstallStatus::Updated { backup: Some(backup) } = status {
        write!(out, " (original kept as {})", backup.display())?;
    }
    writeln!(out)
}

/// `install --dry-run`: a unified diff of one file's change, nothing when it has none.
pub fn install_diff(plan: &agent_memory_core::install::FilePlan) -> io::Result<()> {
    if !plan.changed() {
        return Ok(());
    }
    let before = plan.before.as_deref().unwrap_or("");
    let after = if plan.remove { "" } else { plan.after.as_str() };
    let path = plan.path.display().to_string();
    let old_name = if plan.before.is_some() { path.clone() } else { "/dev/null".to_owned() };
    let new_name = if plan.remove { "/dev/null".to_owned() } else { path };
    let diff = similar::TextDiff::from_lines(before, after);
    let mut out = io::stdout().lock();
    write!(out, "{}", diff.unified_diff().context_radius(3).header(&old_name, &new_name))
}

/// An agent that was skipped, and why.
pub fn install_note(agent: &str, note: &str) -> io::Result<()> {
    writeln!(io::stdout().lock(), "{agent:<12} {note}")
}

/// An agent whose config could not be changed (the run goes on with the next agent).
pub fn install_error(agent: &str, message: &str) {
    eprintln!("agent-memory: {agent}: {message}");
}

/// `agent-memory doctor`: the store's findings, then each agent's, one line each with its fix
/// indented under it.
pub fn doctor(report: &crate::cmd::doctor::Report, as_json: bool) -> io::Result<()> {
    use crate::cmd::doctor::{Finding, Level};
    if as_json {
        return json(report);
    }
    let mut out = io::stdout().lock();
    let show = |out: &mut io::StdoutLock<'_>, f: &Finding| -> io::Result<()> {
        let mark = match f.level {
            Level::Ok => "ok  ",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
        };
        writeln!(out, "  {mark}  {:<12} {}", f.check, f.message)?;
        if let Some(fix) = &f.fix {
            writeln!(out, "        {:<12} fix: {fix}", "")?;
        }
        Ok(())
    };
    writeln!(out, "agent-memory {} ({})", report.version, report.binary)?;
    for f in &report.store {
        show(&mut out, f)?;
    }
    if report.agents.is_empty() {
        writeln!(
            out,
            "no agent wired or found; `agent-memory install` wires the ones on this machine"
        )?;
    }
    for agent in &report.agents {
        writeln!(out, "{}", agent.agent)?;
        for f in &agent.findings {
            show(&mut out, f)?;
        }
    }
    Ok(())
}

/// One memory as a line: id, tier, kind, importance, status, project, text.
fn memory_line(m: &agent_memory_core::store::memories::Memory) -> String {
    let project = match m.tier {
        agent_memory_core::store::memories::Tier::L3 => "global".to_owned(),
        _ => m.project_name.clone().unwrap_or_else(|| "-".into()),
    };
    format!(
        "m{:<5} {} {:<10} {:>2}  {:<10} {:<14} {}",
        m.id,
        m.tier.as_str(),
        m.kind.as_str(),
        m.importance,
        m.status.as_str(),
        clip(&project, 14),
        m.text
    )
}

pub fn memories(
    list: &[agent_memory_core::store::memories::Memory],
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(&list);
    }
    let mut out = io::stdout().lock();
    if list.is_empty() {
        return writeln!(
            out,
            "no memories yet: `agent-memory work` offers candidates, `agent-memory remember` adds one"
        );
    }
    writeln!(out, "id     tier kind       imp  status     project        text")?;
    for m in list {
        writeln!(out, "{}", memory_line(m))?;
    }
    Ok(())
}

/// A memory after a change: `forgot m12 …`.
pub fn memory_changed(
    verb: &str,
    m: &agent_memory_core::store::memories::Memory,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(m);
    }
    writeln!(io::stdout().lock(), "{verb} m{}: {}", m.id, m.text)
}

#[derive(Serialize)]
struct RememberedJson<'a> {
    memory: &'a agent_memory_core::store::memories::Memory,
    #[serde(flatten)]
    placed: &'a agent_memory_core::promote::Placed,
}

pub fn remembered(
    m: &agent_memory_core::store::memories::Memory,
    placed: &agent_memory_core::promote::Placed,
    as_json: bool,
) -> io::Result<()> {
    use agent_memory_core::promote::Placed;
    if as_json {
        return json(&RememberedJson { memory: m, placed });
    }
    let mut out = io::stdout().lock();
    let scope = if m.project.is_none() { "global memory (L3)" } else { "project memory (L2)" };
    match placed {
        Placed::Merged { .. } => writeln!(out, "already remembered as m{}: {}", m.id, m.text),
        _ => {
            writeln!(out, "remembered m{} in {scope} as a {}: {}", m.id, m.kind.as_str(), m.text)?;
            if let Placed::New { supersedes: Some(old), .. } = placed {
                writeln!(out, "  it supersedes m{old}")?;
            }
            Ok(())
        }
    }
}

pub fn approved(
    m: &agent_memory_core::store::memories::Memory,
    superseded: Option<&agent_memory_core::store::memories::Memory>,
) -> io::Result<()> {
    let mut out = io::stdout().lock();
    let scope = if m.project.is_none() { "global memory (L3)" } else { "project memory (L2)" };
    writeln!(out, "approved m{} into {scope}: {}", m.id, m.text)?;
    if let Some(old) = superseded {
        writeln!(out, "  superseded m{}: {}", old.id, old.text)?;
    }
    Ok(())
}

#[derive(Serialize)]
struct CandidateJson<'a> {
    #[serde(flatten)]
    memory: &'a agent_memory_core::store::memories::Memory,
    would_supersede: Option<&'a agent_memory_core::store::memories::Memory>,
}

pub fn review_list(
    candidates: &[(
        agent_memory_core::store::memories::Memory,
        Option<agent_memory_core::store::memories::Memory>,
    )],
) -> io::Result<()> {
    let list: Vec<CandidateJson<'_>> = candidates
        .iter()
        .map(|(memory, older)| CandidateJson { memory, would_supersede: older.as_ref() })
        .collect();
    json(&list)
}

pub fn review_candidate(
    index: usize,
    total: usize,
    m: &agent_memory_core::store::memories::Memory,
    older: Option<&agent_memory_core::store::memories::Memory>,
) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "\n[{index}/{total}] m{} {} · importance {} · {} · from {}",
        m.id,
        m.kind.as_str(),
        m.importance,
        m.project_name.as_deref().unwrap_or("global"),
        if m.sources.is_empty() { "-".to_owned() } else { m.sources.join(" ") }
    )?;
    writeln!(out, "  {}", m.text)?;
    if let Some(old) = older {
        writeln!(out, "  supersedes m{} (approving it retires this one): {}", old.id, old.text)?;
    }
    Ok(())
}

pub fn review_prompt() -> io::Result<()> {
    review_ask("[a]pprove  approve [g]lobal  [e]dit  [k]ind  [r]eject  [s]kip  [q]uit > ")
}

pub fn review_ask(question: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    write!(out, "{question}")?;
    out.flush()
}

pub fn review_problem(message: &str) -> io::Result<()> {
    writeln!(io::stdout().lock(), "  {message}")
}

/// What one review walk did.
#[derive(Debug, Default)]
pub struct ReviewTally {
    pub approved: usize,
    pub rejected: usize,
    pub skipped: usize,
    pub left: usize,
}

pub fn review_done(tally: &ReviewTally) -> io::Result<()> {
    let mut out = io::stdout().lock();
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

#[derive(Serialize)]
struct TidyJson<'a> {
    #[serde(flatten)]
    report: &'a agent_memory_core::promote::tidy::Tidy,
    applied: Option<&'a agent_memory_core::promote::tidy::Applied>,
    backup: Option<&'a std::path::Path>,
}

pub fn tidy(
    report: &agent_memory_core::promote::tidy::Tidy,
    stale_days: u32,
    applied: Option<(&agent_memory_core::promote::tidy::Applied, &std::path::Path)>,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(&TidyJson {
            report,
            applied: applied.map(|(a, _)| a),
            backup: applied.map(|(_, b)| b),
        });
    }
    let mut out = io::stdout().lock();
    writeln!(out, "not found or changed for {stale_days} days ({}):", report.stale.len())?;
    for m in &report.stale {
        writeln!(out, "  {}", memory_line(m))?;
    }
    writeln!(
        out,
        "saying the same thing ({} groups; the first is kept):",
        report.duplicates.len()
    )?;
    for cluster in &report.duplicates {
        for (i, m) in cluster.iter().enumerate() {
            writeln!(out, "  {} {}", if i == 0 { "keep " } else { "merge" }, memory_line(m))?;
        }
    }
    writeln!(out, "superseded ({}; kept as history, never injected):", report.superseded.len())?;
    for m in &report.superseded {
        let by = m.superseded_by.map_or(String::new(), |id| format!(" (by m{id})"));
        writeln!(out, "  {}{by}", memory_line(m))?;
    }
    match applied {
        Some((done, backup)) => writeln!(
            out,
            "applied: {} forgotten (undo with `agent-memory forget <id> --undo`), {} merged; backup at {}",
            done.forgotten,
            done.merged,
            backup.display()
        ),
        None => writeln!(out, "nothing changed; `agent-memory tidy --apply` acts on this report"),
    }
}

pub fn packs(packs: &[(String, i64)], as_json: bool) -> io::Result<()> {
    if as_json {
        let list: Vec<serde_json::Value> = packs
            .iter()
            .map(|(name, active)| serde_json::json!({ "name": name, "active": active }))
            .collect();
        return json(&list);
    }
    let mut out = io::stdout().lock();
    if packs.is_empty() {
        return writeln!(out, "no packs mounted; `agent-memory pack add FILE` mounts one");
    }
    for (name, active) in packs {
        writeln!(out, "{name:<24} {active} active memories")?;
    }
    Ok(())
}

/// `agent-memory vault sync`: what moved which way, then the conflicts and problems by path.
pub fn vault_sync(
    root: &std::path::Path,
    report: &agent_memory_core::vault::SyncReport,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(report);
    }
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "vault {}: {} note(s) written, {} memory(ies) changed and {} created from notes, {} forgotten (note deleted), {} note(s) removed, {} candidate(s) approved",
        root.display(),
        report.written,
        report.updated_from_vault,
        report.created_from_vault,
        report.forgotten,
        report.removed,
        report.approved
    )?;
    for path in &report.conflicts {
        writeln!(
            out,
            "conflict: {} (both sides changed: the vault's version is kept beside it as *.conflict-*.md)",
            path.display()
        )?;
    }
    for (path, problem) in &report.problems {
        writeln!(out, "not applied: {}: {problem}", path.display())?;
    }
    Ok(())
}
