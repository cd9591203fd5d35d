//! `agent-memory install` / `uninstall`: find the agents, ask core for each one's plan, and
//! carry it out: the original of every changed file kept once as `<file>.agent-memory.bak`,
//! every write atomic. An agent whose config does not parse is reported and left untouched;
//! the others still get done, and the command fails at the end.

use std::io::{self, IsTerminal as _};
use std::path::{Path, PathBuf};

use agent_memory_core::install::{self, Agent, FilePlan, InstallKind, Op, Scope, UserDirs, locate};
use agent_memory_core::{fsutil, history};
use anyhow::Context as _;

use crate::cli::InstallArgs;
use crate::output;
use crate::report::{
    InstallFile, InstallMessage, InstallReport, InstallStatus, InstallTally, Reported,
};

/// What a run says as it goes: lines of text, or, under `--json`, one report at the end.
struct Say {
    json: bool,
    report: InstallReport,
}

impl Say {
    fn file(&mut self, agent: &str, path: &Path, status: InstallStatus) -> io::Result<()> {
        if self.json {
            let file = InstallFile { agent: agent.to_owned(), path: path.to_owned(), status };
            self.report.files.push(file);
            return Ok(());
        }
        output::install_file(agent, path, &status)
    }

    fn note(&mut self, agent: &str, note: &str) -> io::Result<()> {
        if self.json {
            let message = InstallMessage { agent: agent.to_owned(), message: note.to_owned() };
            self.report.notes.push(message);
            return Ok(());
        }
        output::install_note(agent, note)
    }

    fn error(&mut self, agent: &str, message: &str) {
        if self.json {
            let message = InstallMessage { agent: agent.to_owned(), message: message.to_owned() };
            self.report.errors.push(message);
            return;
        }
        output::install_error(agent, message);
    }
}

/// Where agents keep their config, and the binary their hooks run.
pub struct Locations {
    /// What the hooks and the MCP server run, by its absolute path: this binary, or, when this
    /// one is a build's output, the installed copy (see [`Locations::exe`]).
    pub bin: String,
    /// This binary, by its absolute path.
    pub exe: String,
    /// The user's configs, always [`Scope::User`]: where agents are looked for.
    pub user: Scope,
    /// The configs a command works on: the user's, or one project's.
    pub scope: Scope,
}

impl Locations {
    /// From the environment; `project` selects a project's config instead of the user's.
    pub fn from_env(project: Option<&Path>) -> anyhow::Result<Locations> {
        let bin = std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .context("cannot tell where the agent-memory binary is; run it by its full path")?;
        let exe = bin
            .to_str()
            .with_context(|| {
                format!("the binary's path {} is not UTF-8; move it to a plain path", bin.display())
            })?
            .to_owned();
        let dirs = user_dirs()?;
        // A build's output goes with the next `cargo clean`: hooks run the installed copy.
        let bin = locate::hooks_binary(&exe, &dirs.home);
        let user = Scope::User(dirs);
        let scope = match project {
            Some(dir) => Scope::Project(std::fs::canonicalize(dir).with_context(|| {
                format!(
                    "cannot use {} as the project directory; check that it exists",
                    dir.display()
                )
            })?),
            None => user.clone(),
        };
        Ok(Locations { bin, exe, user, scope })
    }
}

/// The user's folders, from the environment (see core's `install::locate`).
pub fn user_dirs() -> anyhow::Result<UserDirs> {
    Ok(locate::user_dirs()?)
}

pub use agent_memory_core::install::locate::{is_build_output, is_transient};

/// Copies this binary to `~/.local/bin/agent-memory` (through a temporary file and a rename,
/// so a running copy is never half-written) and returns the copy's path.
fn copy_self(exe: &str) -> anyhow::Result<String> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("HOME is not set; set it to your home directory")?;
    let target = locate::local_bin(&home);
    let dir = target.parent().unwrap_or(Path::new("."));
    let copied = (|| {
        std::fs::create_dir_all(dir)?;
        let mut from = std::fs::File::open(exe)?;
        // Executable by everyone, as an installed program is.
        let options = fsutil::WriteOptions::PRIVATE.mode(0o755);
        fsutil::write_atomic_with(&target, options, |file| io::copy(&mut from, file).map(drop))
    })();
    copied.with_context(|| {
        format!("cannot copy {exe} to {}; check that directory's permissions", target.display())
    })?;
    Ok(target.to_string_lossy().into_owned())
}

pub fn run(mut args: InstallArgs, op: Op) -> anyhow::Result<()> {
    let project = args.scope.project_dir(&mut args.agents);
    let mut loc = Locations::from_env(project.as_deref())?;
    let mut say = Say { json: args.json, report: InstallReport::default() };
    if op == Op::Install && is_transient(&loc.exe) {
        // `npx agent-memory install`: the hooks must outlive the runner's cache.
        let home = user_dirs()?.home;
        loc.bin = if args.dry_run {
            locate::local_bin(&home).to_string_lossy().into_owned()
        } else {
            copy_self(&loc.exe)?
        };
        let verb = if args.dry_run { "would copy" } else { "copied" };
        say.note(
            "agent-memory",
            &format!(
                "{verb} {} to {}: the hooks run that copy, which outlives the package runner's cache",
                loc.exe, loc.bin
            ),
        )?;
    } else if op == Op::Install && is_build_output(&loc.exe) {
        if args.copy_self && !args.dry_run {
            loc.bin = copy_self(&loc.exe)?;
            say.note("agent-memory", &format!("copied {} to {}", loc.exe, loc.bin))?;
        } else if loc.bin != loc.exe {
            say.note(
                "agent-memory",
                &format!(
                    "wiring the installed {}, not this build ({}), which `cargo clean` would remove",
                    loc.bin, loc.exe
                ),
            )?;
        } else if args.json {
            say.note(
                "agent-memory",
                &format!(
                    "the hooks will run {}, a build's output: the next `cargo clean` breaks every \
                 agent; add --copy-self to copy it to ~/.local/bin and wire that copy",
                    loc.exe
                ),
            )?;
        } else {
            output::warning(&format!(
                "the hooks will run {}, a build's output: the next `cargo clean` breaks every \
                 agent; run `agent-memory install --copy-self` to copy it to ~/.local/bin and \
                 wire that copy (or install with ./scripts/install)",
                loc.exe
            ));
        }
    }
    say.report.binary = loc.bin.clone();
    if matches!(loc.scope, Scope::User(_)) {
        let dirs = user_dirs()?;
        let places = super::schedule::places(&dirs.home, &dirs.config_home);
        let said = match op {
            Op::Install if args.schedule => {
                super::schedule::install(&loc.bin, &places, args.dry_run)?
            }
            Op::Install => Vec::new(),
            Op::Uninstall => super::schedule::remove(&places, args.dry_run)?,
        };
        for line in said {
            say.note("agent-memory", &line)?;
        }
    }
    let Locations { bin, user, scope, .. } = &loc;
    let agents = agents(&args.agents, op, user)?;
    if agents.is_empty() {
        let roots: Vec<String> =
            Agent::all().map(|agent| agent.spec().config_root.display()).collect();
        let programs: Vec<&str> = Agent::all().map(Agent::program).collect();
        let example = Agent::all().next().map_or("", Agent::name);
        say.note(
            "agent-memory",
            &format!(
                "no agent found (looked for {} and {} on PATH); \
             name one, e.g. `agent-memory install {example}`",
                roots.join(", "),
                programs.join(", ")
            ),
        )?;
        return Ok(());
    }
    let mut failed = Vec::new();
    let wired: Vec<Agent> = agents.clone();
    let mut tally = InstallTally::default();
    // Under --dry-run the summary comes first, so the files and their diffs wait.
    let mut planned: Vec<(&'static str, FilePlan, InstallStatus)> = Vec::new();
    for agent in agents {
        if matches!(scope, Scope::Project(_)) && !agent.has_project_level() {
            say.note(
                agent.name(),
                "has no project-level configuration; skipped (run without --project to wire it for your user)",
            )?;
            continue;
        }
        if let (Scope::Project(_), InstallKind::HooksFile { user_file }, Op::Install) =
            (scope, agent.kind(), op)
        {
            hooks_file_project_notes(&mut say, agent, user, user_file)?;
        }
        let plans = match install::plan(agent, op, scope, bin, &read) {
            Ok(plans) => plans,
            Err(err) => {
                say.error(agent.name(), &err.to_string());
                failed.push(agent.name());
                continue;
            }
        };
        for plan in &plans {
            if args.dry_run {
                let status = match (plan.changed(), &plan.before) {
                    (false, _) => InstallStatus::UpToDate,
                    (true, None) => InstallStatus::WouldCreate,
                    (true, Some(_)) => InstallStatus::WouldChange,
                };
                tally.add(agent.name(), &status);
                planned.push((agent.name(), plan.clone(), status));
                continue;
            }
            match apply(plan, op) {
                Ok(status) => {
                    tally.add(agent.name(), &status);
                    say.file(agent.name(), &plan.path, status)?
                }
                Err(err) => {
                    say.error(
                        agent.name(),
                        &format!(
                            "cannot write {}: {err}; check its permissions",
                            plan.path.display()
                        ),
                    );
                    failed.push(agent.name());
                }
            }
        }
        if let InstallKind::Provider { plugin_dir } = agent.kind()
            && op == Op::Uninstall
            && !args.dry_run
            && let Some(root) = install::user_root(agent, user)
        {
            let dir = plugin_dir(&root);
            if let Err(err) = remove_plugin_dir(&dir) {
                say.error(
                    agent.name(),
                    &format!("cannot remove {}: {err}; check its permissions", dir.display()),
                );
                failed.push(agent.name());
            }
        }
    }
    if args.dry_run && !args.json {
        output::install_summary(&tally, op == Op::Install, true)?;
    }
    for (agent, plan, status) in planned {
        say.file(agent, &plan.path, status)?;
        if !args.json {
            output::install_diff(&plan)?;
        }
    }
    if !args.dry_run && !args.json {
        output::install_summary(&tally, op == Op::Install, false)?;
    }
    if op == Op::Install && !args.dry_run && matches!(scope, Scope::User(_)) {
        offer_history(&mut say, &args, user, &wired)?;
    }
    if args.json {
        output::install_report(&say.report)?;
    }
    if !failed.is_empty() {
        failed.dedup();
        let verb = if op == Op::Install { "install" } else { "uninstall" };
        return Err(Reported(format!(
            "could not {verb} for {}; fix what is named above and run `agent-memory {verb}` again",
            failed.join(", ")
        ))
        .into());
    }
    Ok(())
}

/// What the wired agents already wrote is offered as memory: imported with
/// `--import-history`, or after a yes on a terminal; otherwise `install` says how.
fn offer_history(
    say: &mut Say,
    args: &InstallArgs,
    user: &Scope,
    wired: &[Agent],
) -> anyhow::Result<()> {
    let Scope::User(dirs) = user else { return Ok(()) };
    if args.no_import_history {
        return Ok(());
    }
    let specs: Vec<_> = wired.iter().map(|agent| agent.spec()).collect();
    let found = history::find(dirs, &specs);
    let sessions: usize = found.iter().map(|f| f.sources.len()).sum();
    if sessions == 0 {
        return Ok(());
    }
    let by_agent: Vec<String> = found
        .iter()
        .filter(|f| !f.sources.is_empty())
        .map(|f| format!("{} of {}", f.sources.len(), f.agent.display))
        .collect();
    let what = format!(
        "found {} your agents already wrote ({})",
        output::count(sessions, "session"),
        by_agent.join(", ")
    );
    let interactive = !args.json && io::stdin().is_terminal() && io::stderr().is_terminal();
    let import = args.import_history
        || (interactive && yes(&format!("{what}; import them into memory now? [Y/n] "))?);
    if !import {
        say.note(
            "agent-memory",
            &format!("{what}; `agent-memory history import` brings them into memory"),
        )?;
        return Ok(());
    }
    let ctx = super::Context::load()?;
    let options = history::Options::default();
    let report = super::history::run_import(&ctx, &found, &options, args.json, true)?;
    let events: u64 = report.iter().map(|r| r.events).sum();
    let imported: u64 = report.iter().map(|r| r.sessions).sum();
    say.note(
        "agent-memory",
        &format!(
            "imported {} from {} of your agents' history; a work pass distils them in the \
             background",
            output::count(events, "event"),
            output::count(imported, "session")
        ),
    )?;
    Ok(())
}

/// Asks on the terminal; an empty answer is yes, an ended input no.
fn yes(question: &str) -> anyhow::Result<bool> {
    output::review_ask(question)?;
    let mut answer = String::new();
    if io::stdin().read_line(&mut answer)? == 0 {
        return Ok(false);
    }
    let answer = answer.trim().to_lowercase();
    Ok(answer.is_empty() || answer == "y" || answer == "yes")
}

/// An agent wired by a hooks file takes only hooks from a repository, and runs its user's
/// hooks there too.
fn hooks_file_project_notes(
    say: &mut Say,
    agent: Agent,
    user: &Scope,
    user_file: fn(&Path) -> PathBuf,
) -> anyhow::Result<()> {
    let Some(root) = install::user_root(agent, user) else { return Ok(()) };
    let name = agent.name();
    let user_hooks = user_file(&root);
    if user_hooks.is_file() {
        say.note(
            name,
            &format!(
                "is also wired for your user ({}), so each event would run the hook twice; \
                 keep one: `agent-memory uninstall {name}` or `agent-memory uninstall {name} --project`",
                user_hooks.display()
            ),
        )?;
    }
    say.note(
        name,
        &format!(
            "takes only its hooks from a repository; run `agent-memory install {name}` for its MCP server"
        ),
    )?;
    Ok(())
}

/// A directory from the environment, made absolute; `None` when unset or empty.
/// The agents named, or when none is: on install every agent found here, on uninstall all.
pub fn agents(names: &[String], op: Op, user: &Scope) -> anyhow::Result<Vec<Agent>> {
    if names.is_empty() {
        return Ok(Agent::all().filter(|a| op == Op::Uninstall || is_present(*a, user)).collect());
    }
    named(names)
}

/// The agents `names` name, each once, in the order given; an unknown name is an error that
/// lists the names to use.
pub fn named(names: &[String]) -> anyhow::Result<Vec<Agent>> {
    let mut agents = Vec::new();
    for name in names {
        let agent = Agent::from_name(name).with_context(|| {
            let names: Vec<&str> = Agent::all().map(Agent::name).collect();
            let (last, rest) = names.split_last().map_or(("", &[][..]), |(l, r)| (*l, r));
            format!("unknown agent `{name}`; choose {} or {last}", rest.join(", "))
        })?;
        if !agents.contains(&agent) {
            agents.push(agent);
        }
    }
    Ok(agents)
}

pub use agent_memory_core::install::locate::{is_present, read};

/// Our Hermes plugin directory goes once its files are removed, with what Python and install
/// left in it (`__pycache__`, backups of older versions of our files); anything else the user
/// put there keeps it.
fn remove_plugin_dir(dir: &Path) -> io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err),
    };
    let names: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    let ours = |name: &String| name == "__pycache__" || name.ends_with(".agent-memory.bak");
    if names.iter().all(ours) { std::fs::remove_dir_all(dir) } else { Ok(()) }
}

/// Carries out one file's plan: on install the original is kept once, then an atomic write (or
/// the removal of a file install created), keeping the file's permissions.
fn apply(plan: &FilePlan, op: Op) -> io::Result<InstallStatus> {
    if !plan.changed() {
        return Ok(InstallStatus::UpToDate);
    }
    let mut backup = None;
    if let (Some(before), Op::Install) = (&plan.before, op) {
        let path = install::backup_path(&plan.path);
        if !path.exists() {
            fsutil::write_atomic(&path, before.as_bytes())?;
            backup = Some(path);
        }
    }
    if plan.remove {
        std::fs::remove_file(&plan.path)?;
        // A folder of ours (a skill's) goes with its last file; an error leaves it, harmless.
        let ours = |dir: &&Path| {
            let name = dir.file_name().and_then(|n| n.to_str());
            install::SKILLS.iter().any(|(skill, _)| name == Some(*skill))
        };
        if let Some(dir) = plan.path.parent().filter(ours) {
            let _ = std::fs::remove_dir(dir);
        }
        return Ok(InstallStatus::Removed);
    }
    if let Some(dir) = plan.path.parent()
        && !dir.exists()
    {
        std::fs::create_dir_all(dir)?;
    }
    // An agent's config the user keeps as a link into their dotfiles is written through.
    let path = fsutil::own_link_target(&plan.path);
    let options = fsutil::WriteOptions::PRIVATE.keeping_mode_of(&path);
    fsutil::write_atomic_with(&path, options, |file| {
        io::Write::write_all(file, plan.after.as_bytes())
    })?;
    Ok(if plan.before.is_some() {
        InstallStatus::Updated { backup }
    } else {
        InstallStatus::Created
    })
}
