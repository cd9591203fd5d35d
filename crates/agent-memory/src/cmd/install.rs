//! `agent-memory install` / `uninstall`: find the agents, ask core for each one's plan, and
//! carry it out: the original of every changed file kept once as `<file>.agent-memory.bak`,
//! every write atomic. An agent whose config does not parse is reported and left untouched;
//! the others still get done, and the command fails at the end.

use std::io;
use std::path::{Path, PathBuf};

use agent_memory_core::fsutil;
use agent_memory_core::install::{self, Agent, ConfigError, FilePlan, Op, Scope};
use anyhow::Context as _;

use crate::cli::InstallArgs;
use crate::output;
use crate::report::InstallStatus;

/// Where agents keep their config, and the binary their hooks run.
pub struct Locations {
    /// This binary, by its absolute path: what the hooks and the MCP server run.
    pub bin: String,
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
        let bin = bin
            .to_str()
            .with_context(|| {
                format!("the binary's path {} is not UTF-8; move it to a plain path", bin.display())
            })?
            .to_owned();
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .context("HOME is not set; set it to your home directory")?;
        let user = Scope::User {
            home: home.clone(),
            codex_home: env_dir("CODEX_HOME")?.unwrap_or_else(|| home.join(".codex")),
            copilot_home: env_dir("COPILOT_HOME")?.unwrap_or_else(|| home.join(".copilot")),
            config_home: env_dir("XDG_CONFIG_HOME")?.unwrap_or_else(|| home.join(".config")),
            hermes_home: env_dir("HERMES_HOME")?.unwrap_or_else(|| home.join(".hermes")),
        };
        let scope = match project {
            Some(dir) => Scope::Project(std::fs::canonicalize(dir).with_context(|| {
                format!(
                    "cannot use {} as the project directory; check that it exists",
                    dir.display()
                )
            })?),
            None => user.clone(),
        };
        Ok(Locations { bin, user, scope })
    }
}

pub fn run(args: InstallArgs, op: Op) -> anyhow::Result<()> {
    let loc = Locations::from_env(args.scope.project.as_deref())?;
    let Locations { bin, user, scope } = &loc;
    let agents = agents(&args.agents, op, user)?;
    if agents.is_empty() {
        output::line(
            "no agent found (looked for ~/.claude, ~/.codex, ~/.gemini, ~/.config/opencode, ~/.copilot, \
             ~/.hermes and claude, codex, gemini, opencode, copilot, hermes on PATH); \
             name one, e.g. `agent-memory install claude-code`",
        )?;
        return Ok(());
    }
    let mut failed = Vec::new();
    for agent in agents {
        if matches!(scope, Scope::Project(_)) && !agent.has_project_level() {
            output::install_note(
                agent.name(),
                "has no project-level configuration; skipped (run without --project to wire it for your user)",
            )?;
            continue;
        }
        if matches!(scope, Scope::Project(_)) && agent == Agent::Copilot && op == Op::Install {
            copilot_project_notes(user)?;
        }
        let plans = match install::plan(agent, op, scope, bin, &read) {
            Ok(plans) => plans,
            Err(err) => {
                output::install_error(agent.name(), &err.to_string());
                failed.push(agent.name());
                continue;
            }
        };
        for plan in &plans {
            if args.dry_run {
                let status = if plan.changed() {
                    InstallStatus::WouldChange
                } else {
                    InstallStatus::UpToDate
                };
                output::install_file(agent.name(), &plan.path, &status)?;
                output::install_diff(plan)?;
                continue;
            }
            match apply(plan, op) {
                Ok(status) => output::install_file(agent.name(), &plan.path, &status)?,
                Err(err) => {
                    output::install_error(
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
        if agent == Agent::Hermes
            && op == Op::Uninstall
            && !args.dry_run
            && let Scope::User { hermes_home, .. } = user
        {
            let dir = install::hermes::plugin_dir(hermes_home);
            if let Err(err) = remove_plugin_dir(&dir) {
                output::install_error(
                    agent.name(),
                    &format!("cannot remove {}: {err}; check its permissions", dir.display()),
                );
                failed.push(agent.name());
            }
        }
    }
    if !failed.is_empty() {
        failed.dedup();
        let verb = if op == Op::Install { "install" } else { "uninstall" };
        anyhow::bail!(
            "could not {verb} for {}; fix what is named above and run `agent-memory {verb}` again",
            failed.join(", ")
        );
    }
    Ok(())
}

/// Copilot takes only hooks from a repository, and runs its user's hooks there too.
fn copilot_project_notes(user: &Scope) -> anyhow::Result<()> {
    let Scope::User { copilot_home, .. } = user else { return Ok(()) };
    let name = Agent::Copilot.name();
    let user_hooks = copilot_home.join("hooks/agent-memory.json");
    if user_hooks.is_file() {
        output::install_note(
            name,
            &format!(
                "is also wired for your user ({}), so each event would run the hook twice; \
                 keep one: `agent-memory uninstall copilot` or `agent-memory uninstall copilot --project`",
                user_hooks.display()
            ),
        )?;
    }
    output::install_note(
        name,
        "takes only its hooks from a repository; run `agent-memory install copilot` for its MCP server",
    )?;
    Ok(())
}

/// A directory from the environment, made absolute; `None` when unset or empty.
fn env_dir(name: &str) -> anyhow::Result<Option<PathBuf>> {
    std::env::var_os(name)
        .filter(|dir| !dir.is_empty())
        .map(|dir| {
            std::path::absolute(PathBuf::from(&dir)).with_context(|| {
                format!("cannot use {name}={} as a directory; fix or unset it", dir.display())
            })
        })
        .transpose()
}

/// The agents named, or when none is: on install every agent found here, on uninstall all.
pub fn agents(names: &[String], op: Op, user: &Scope) -> anyhow::Result<Vec<Agent>> {
    if names.is_empty() {
        return Ok(Agent::ALL
            .into_iter()
            .filter(|a| op == Op::Uninstall || is_present(*a, user))
            .collect());
    }
    let mut agents = Vec::new();
    for name in names {
        let agent = Agent::from_name(name).with_context(|| {
            format!(
                "unknown agent `{name}`; choose claude-code, codex, gemini, opencode, copilot or hermes"
            )
        })?;
        if !agents.contains(&agent) {
            agents.push(agent);
        }
    }
    Ok(agents)
}

pub fn is_present(agent: Agent, user: &Scope) -> bool {
    let Scope::User { home, codex_home, copilot_home, config_home, hermes_home } = user else {
        return false;
    };
    let dir = match agent {
        Agent::ClaudeCode => home.join(".claude"),
        Agent::Codex => codex_home.to_owned(),
        Agent::Gemini => home.join(".gemini"),
        Agent::OpenCode => config_home.join("opencode"),
        Agent::Copilot => copilot_home.to_owned(),
        Agent::Hermes => hermes_home.to_owned(),
    };
    dir.is_dir() || on_path(agent.program())
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

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

pub fn read(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read { path: path.to_owned(), source }),
    }
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
        return Ok(InstallStatus::Removed);
    }
    let permissions = std::fs::metadata(&plan.path).map(|m| m.permissions()).ok();
    if let Some(dir) = plan.path.parent()
        && !dir.exists()
    {
        std::fs::create_dir_all(dir)?;
    }
    fsutil::write_atomic(&plan.path, plan.after.as_bytes())?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(&plan.path, permissions)?;
    }
    Ok(if plan.before.is_some() {
        InstallStatus::Updated { backup }
    } else {
        InstallStatus::Created
    })
}
