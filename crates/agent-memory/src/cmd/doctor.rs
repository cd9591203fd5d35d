//! `agent-memory doctor`: is every agent wired to agent-memory, and does it work end to end?
//!
//! Per agent: the binary its config runs exists and answers, the wiring is present and current
//! (for Codex, every hook trusted), a synthetic session start goes through that binary's hook
//! into a throw-away store and comes back in the agent's protocol, its hooks' recent errors, and
//! the MCP server answering `tools/list`. Before the agents: the store takes writes and nothing
//! waits in the spool. Every finding that is not fine names its fix; any failure makes the
//! command fail.
//!
//! Must not: write to the user's store or any agent's config (the round trip runs against a
//! temporary home), or wait on a child process without a deadline.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use agent_memory_core::adapter;
use agent_memory_core::capture::spool;
use agent_memory_core::event::EventKind;
use agent_memory_core::install::{self, Agent, Scope, Wiring};
use agent_memory_core::store::{Store, StoreError};
use agent_memory_core::{fsutil, time};

use super::Context;
use super::install::{Locations, is_present, read};
use crate::cli::DoctorArgs;
use crate::output;
use crate::report::{AgentReport, DoctorReport, Finding, Reported};

/// How long a child (the hook, `--version`, the MCP server) may take before it counts as hung.
const CHILD_DEADLINE: Duration = Duration::from_secs(10);
/// The window recent hook errors are counted over.
const ERROR_WINDOW_MS: i64 = 86_400_000;
/// The tools every agent-memory MCP server offers; doctor checks they are listed.
const MCP_TOOLS: &[&str] =
    &["search", "timeline", "get_observations", "briefing", "remember", "forget"];

pub fn run(ctx: &Context, args: DoctorArgs) -> anyhow::Result<()> {
    if args.health {
        return super::health::run(ctx, args.json);
    }
    let mut asked = args.agents.clone();
    let project = args.scope.project_dir(&mut asked);
    let loc = Locations::from_env(project.as_deref())?;
    let (store_findings, store) = store_checks(ctx);
    let mut agents = Vec::new();
    let named = super::install::agents(&asked, install::Op::Uninstall, &loc.user)?;
    let mut mcp = None;
    for agent in named {
        if matches!(loc.scope, Scope::Project(_)) && !agent.has_project_level() {
            continue;
        }
        let wiring = install::wiring(agent, &loc.scope, &loc.bin, &read);
        let wired = matches!(wiring, Ok((Wiring::Current | Wiring::Stale, _)));
        if asked.is_empty() && !wired && !is_present(agent, &loc.user) {
            continue;
        }
        let mut findings = Vec::new();
        let bins = binary_checks(agent, &loc, &mut findings);
        findings.push(wiring_finding(agent, &loc, wiring));
        findings.extend(trust(agent, &loc));
        let bin = bins.into_iter().next().unwrap_or_else(|| loc.bin.clone());
        findings.push(round_trip(agent, &bin));
        if let Some(store) = &store {
            findings.push(hook_errors(ctx, store, agent));
        }
        let answer = mcp.get_or_insert_with(|| mcp_check(&bin));
        findings.push(match answer {
            Ok(message) => Finding::ok("mcp", message.clone()),
            Err(message) => Finding::fail(
                "mcp",
                message.clone(),
                format!("run `{bin} mcp` by hand to see why; the log is in {}", log_file(ctx)),
            ),
        });
        agents.push(AgentReport { agent: agent.name(), findings });
    }
    let report = DoctorReport {
        binary: loc.bin.clone(),
        version: env!("CARGO_PKG_VERSION"),
        store: store_findings,
        agents,
    };
    output::doctor(&report, args.json)?;
    let failures = report.failures();
    if failures > 0 {
        let problems = if failures == 1 { "problem" } else { "problems" };
        return Err(Reported(format!(
            "doctor found {failures} {problems}; each has its fix above"
        ))
        .into());
    }
    Ok(())
}

fn log_file(ctx: &Context) -> String {
    ctx.home.log_dir().join("agent-memory.log").display().to_string()
}

/// The store opens and takes writes; nothing waits in the spool.
fn store_checks(ctx: &Context) -> (Vec<Finding>, Option<Store>) {
    let mut findings = Vec::new();
    if let Some(problem) = &ctx.config_problem {
        findings.push(Finding::fail(
            "config",
            problem.clone(),
            format!(
                "fix it in {} (`agent-memory config default` shows every setting with its \
                 comment); until then what is named is left out and every other setting applies",
                ctx.home.config_path().display()
            ),
        ));
    }
    let path = ctx.home.db_path();
    let store = match ctx.store() {
        Ok(store) => store,
        Err(err) => {
            let damaged = err
                .chain()
                .any(|c| c.downcast_ref::<StoreError>().is_some_and(StoreError::is_damaged));
            let fix = if damaged {
                "the file is damaged: run `agent-memory recover --repair`, which moves it aside, \
                 opens a fresh store with whatever of it can still be read, and stores what \
                 hooks spooled meanwhile"
                    .to_owned()
            } else {
                format!(
                    "check the file and its directory's permissions; hooks spool events meanwhile, and `agent-memory recover` moves them in once {} opens",
                    path.display()
                )
            };
            findings.push(Finding::fail("store", format!("{err:#}"), fix));
            return (findings, None);
        }
    };
    findings.push(match store.can_write() {
        Ok(()) => Finding::ok("store", format!("{} opens and takes writes", path.display())),
        Err(err) => Finding::fail(
            "store",
            format!("{} opens but takes no writes: {err}", path.display()),
            "another process holds the write lock or the disk is full or read-only; hooks spool events meanwhile; free the disk or stop the process, then run `agent-memory recover`",
        ),
    });
    let depth = spool::depth(&ctx.home.spool_dirs(), time::now_ms());
    if depth.records > 0 {
        findings.push(Finding::warn(
            "spool",
            format!(
                "{} in {} wait for the store",
                output::count(depth.records, "event"),
                output::count(depth.files, "spool file")
            ),
            "run `agent-memory recover` (the next hook that finds the store free drains it too)",
        ));
    }
    if depth.quarantined > 0 {
        findings.push(Finding::warn(
            "spool",
            format!(
                "{} could not be read and were set aside (*.bad)",
                output::count(depth.quarantined, "spool file")
            ),
            format!("look at the *.bad files in {}", ctx.home.spool_dir().display()),
        ));
    }
    (findings, Some(store))
}

/// The binaries the agent's config runs: each exists, runs and is this version. Returns them,
/// so the round trip goes through what the agent really runs.
fn binary_checks(agent: Agent, loc: &Locations, findings: &mut Vec<Finding>) -> Vec<String> {
    let bins = install::configured_binaries(agent, &loc.scope, &loc.bin, &read).unwrap_or_default();
    let reinstall = reinstall(agent, loc);
    for bin in &bins {
        let finding = match version_of(bin) {
            Err(problem) => Finding::fail(
                "binary",
                format!("the hooks run {bin}, which {problem}"),
                format!("{reinstall} to point them at {}", loc.bin),
            ),
            Ok(version) if version != env!("CARGO_PKG_VERSION") => Finding::warn(
                "binary",
                format!(
                    "the hooks run {bin}, version {version}; this is {}",
                    env!("CARGO_PKG_VERSION")
                ),
                format!("{reinstall} to point them at {}", loc.bin),
            ),
            Ok(_) if super::install::is_build_output(bin) => Finding::warn(
                "binary",
                format!(
                    "the hooks run {bin}, a build's output: the next `cargo clean` breaks them"
                ),
                format!(
                    "{reinstall} from an installed copy (./scripts/install puts one in \
                     ~/.local/bin), or add --copy-self to copy this one there"
                ),
            ),
            Ok(version) => {
                Finding::ok("binary", format!("the hooks run {bin} (version {version})"))
            }
        };
        findings.push(finding);
    }
    bins
}

/// Every file an install writes for the agent in this scope.
fn config_files(agent: Agent, loc: &Locations) -> Vec<PathBuf> {
    install::plan(agent, install::Op::Install, &loc.scope, &loc.bin, &read)
        .map(|plans| plans.into_iter().map(|p| p.path).collect())
        .unwrap_or_default()
}

fn reinstall(agent: Agent, loc: &Locations) -> String {
    match &loc.scope {
        Scope::User { .. } => format!("run `agent-memory install {}`", agent.name()),
        Scope::Project(dir) => {
            format!("run `agent-memory install {} --project={}`", agent.name(), dir.display())
        }
    }
}

/// What `bin --version` says its version is, or what is wrong with it.
fn version_of(bin: &str) -> Result<String, String> {
    let path = Path::new(bin);
    if !path.is_file() {
        return Err("does not exist".to_owned());
    }
    let output = run_child(Command::new(path).arg("--version"), b"")
        .map_err(|err| format!("does not run: {err}"))?;
    let version = output.stdout.split_whitespace().last().unwrap_or("").to_owned();
    if !output.success || version.is_empty() {
        return Err(format!("does not answer `--version` (exit {})", output.code));
    }
    Ok(version)
}

fn wiring_finding(
    agent: Agent,
    loc: &Locations,
    wiring: Result<(Wiring, Vec<PathBuf>), install::ConfigError>,
) -> Finding {
    let reinstall = reinstall(agent, loc);
    let files = |paths: &[PathBuf]| {
        paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    };
    match wiring {
        Ok((Wiring::Current, _)) => Finding::ok(
            "wiring",
            format!("hooks and MCP server current in {}", files(&config_files(agent, loc))),
        ),
        Ok((Wiring::Stale, changed)) => Finding::fail(
            "wiring",
            format!("installed, but out of date in {}", files(&changed)),
            format!("{reinstall} (`--dry-run` shows what changes)"),
        ),
        Ok((Wiring::Missing, _)) => Finding::fail("wiring", "not wired to agent-memory", reinstall),
        Err(err) => Finding::fail("wiring", err.to_string(), "fix the file, then run doctor again"),
    }
}

/// An agent that runs a hook only once its config trusts it skips an untrusted one silently.
fn trust(agent: Agent, loc: &Locations) -> Option<Finding> {
    let untrusted = install::untrusted(agent, &loc.scope, &loc.bin, &read)?;
    // The agent as its users say it: "Codex", not "Codex CLI".
    let display = agent.spec().display;
    let who = display.split_whitespace().next().unwrap_or(display);
    Some(match untrusted {
        Ok(found) if found.hooks.is_empty() => {
            let file = found.config.file_name().unwrap_or_default().to_string_lossy();
            Finding::ok("trust", format!("every agent-memory hook is trusted in {file}"))
        }
        Ok(found) => Finding::fail(
            "trust",
            format!(
                "{} no current trusted_hash in {} ({}), so {who} skips {} without a word",
                match found.hooks.len() {
                    1 => "1 hook has".to_owned(),
                    n => format!("{n} hooks have"),
                },
                found.config.display(),
                found.hooks.join(", "),
                if found.hooks.len() == 1 { "it" } else { "them" },
            ),
            format!(
                "run `agent-memory install {}` (it writes the hash {who} computes)",
                agent.name()
            ),
        ),
        Err(err) => Finding::fail("trust", err.to_string(), "fix the file, then run doctor again"),
    })
}

/// A synthetic session start through the agent's own binary and hook, into a throw-away
/// home: stored as the agent's event, answered in a shape the agent takes.
fn round_trip(agent: Agent, bin: &str) -> Finding {
    let fix = "run the same hook by hand with `AGENT_MEMORY_LOG=debug` to see why";
    let Some(event) = adapter::find_agent(agent.name()).and_then(|spec| {
        spec.captured().find(|(_, kind)| *kind == EventKind::SessionStart).map(|(e, _)| e)
    }) else {
        return Finding::info("round trip", "this agent has no session-start hook to try");
    };
    let dir = std::env::temp_dir().join(format!(
        "agent-memory-doctor-{}-{}",
        std::process::id(),
        time::now_ms()
    ));
    let result = try_round_trip(agent, bin, event, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(answer) => Finding::ok(
            "round trip",
            format!("a synthetic {event} was stored as a {} event{answer}", agent.name()),
        ),
        Err(problem) => Finding::fail("round trip", format!("a synthetic {event}: {problem}"), fix),
    }
}

fn try_round_trip(agent: Agent, bin: &str, event: &str, dir: &Path) -> Result<String, String> {
    fsutil::ensure_private_dir(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let session = format!("agent-memory-doctor-{}", std::process::id());
    let cwd = dir.display().to_string();
    let payload = serde_json::json!({
        "session_id": session, "sessionId": session, "sessionID": session,
        "cwd": cwd, "hook_event_name": event, "source": "startup",
    });
    let output = run_child(
        Command::new(bin)
            .args(["hook", "--agent", agent.name(), "--event", event])
            .env("AGENT_MEMORY_HOME", dir)
            .env_remove("AGENT_MEMORY_DISABLE")
            .current_dir(dir),
        payload.to_string().as_bytes(),
    )
    .map_err(|err| format!("the hook did not run: {err}"))?;
    if !output.success {
        return Err(format!("the hook exited {} (a hook must always exit 0)", output.code));
    }
    let answer = output.stdout.trim();
    if !answer.is_empty() && serde_json::from_str::<serde_json::Value>(answer).is_err() {
        return Err(format!("the hook printed what {} cannot read: {answer:.80}", agent.name()));
    }
    let store = Store::open(&dir.join("memory.db"), Duration::from_secs(2))
        .map_err(|err| format!("the hook left no store: {err}"))?;
    let stored = store
        .status(&[])
        .map_err(|err| err.to_string())?
        .agents
        .iter()
        .any(|a| a.agent == agent.name() && a.events > 0);
    if !stored {
        return Err("the hook ran but stored nothing (see the log in the temporary home)".into());
    }
    Ok(if answer.is_empty() { String::new() } else { " and answered in its protocol".to_owned() })
}

/// Hook runs that did not reach the store cleanly in the last day.
fn hook_errors(ctx: &Context, store: &Store, agent: Agent) -> Finding {
    let now = time::now_ms();
    let recent = match store.agent_hooks(agent.name(), now - ERROR_WINDOW_MS) {
        Ok(recent) => recent,
        Err(err) => {
            return Finding::warn("hook errors", err.to_string(), "run `agent-memory status`");
        }
    };
    if let Some((at, outcome, detail)) = &recent.last_error {
        let fix = match outcome.as_str() {
            "spooled" => "the store was busy or unavailable, nothing was lost: `agent-memory recover` moves the spooled events in".to_owned(),
            "invalid" => format!(
                "the agent sent payloads agent-memory could not read; they are kept in {}",
                ctx.home.rejected_dir().display()
            ),
            _ => format!("see {}", log_file(ctx)),
        };
        return Finding::warn(
            "hook errors",
            format!(
                "{} of {} hook runs in the last 24 h did not reach the store; last {}: {outcome} {detail}",
                recent.errors,
                recent.runs,
                time::format_local(*at),
            ),
            fix,
        );
    }
    if recent.runs > 0 {
        return Finding::ok(
            "hook errors",
            format!("{} hook runs in the last 24 h, none failed", recent.runs),
        );
    }
    match store.agent_hooks(agent.name(), 0).ok().and_then(|all| all.last_run_at) {
        Some(at) => Finding::info(
            "hook errors",
            format!("no hook runs in the last 24 h (last one {})", time::format_local(at)),
        ),
        None => Finding::info(
            "hook errors",
            format!("no hook of {} has run yet; start a session to see it here", agent.name()),
        ),
    }
}

/// `bin mcp` answers `initialize` and lists the tools.
fn mcp_check(bin: &str) -> Result<String, String> {
    let mut child = Command::new(bin)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("`{bin} mcp` did not start: {err}"))?;
    let requests = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "agent-memory-doctor", "version": env!("CARGO_PKG_VERSION")}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    for request in &requests {
        let _ = writeln!(stdin, "{request}");
    }
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&line)
                && value["id"] == 2
            {
                let _ = tx.send(Ok(value));
                return;
            }
            if serde_json::from_str::<serde_json::Value>(&line).is_err() {
                let _ = tx.send(Err(format!("printed something that is not JSON-RPC: {line:.80}")));
                return;
            }
        }
    });
    let answer = rx.recv_timeout(CHILD_DEADLINE);
    drop(stdin);
    stop(&mut child);
    let value = match answer {
        Ok(Ok(value)) => value,
        Ok(Err(problem)) => return Err(format!("`{bin} mcp` {problem}")),
        Err(_) => {
            return Err(format!(
                "`{bin} mcp` did not list its tools within {} s",
                CHILD_DEADLINE.as_secs()
            ));
        }
    };
    let tools: Vec<&str> = value["result"]["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    let missing: Vec<&&str> = MCP_TOOLS.iter().filter(|t| !tools.contains(t)).collect();
    if !missing.is_empty() {
        return Err(format!("`{bin} mcp` lists {tools:?}, without {missing:?}"));
    }
    Ok(format!("`{bin} mcp` answers with {} tools ({})", tools.len(), tools.join(", ")))
}

/// A finished child's exit and stdout.
struct ChildOutput {
    success: bool,
    code: String,
    stdout: String,
}

/// Runs a child with `input` on stdin, killed at [`CHILD_DEADLINE`].
fn run_child(command: &mut Command, input: &[u8]) -> Result<ChildOutput, String> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    let Ok(text) = rx.recv_timeout(CHILD_DEADLINE) else {
        stop(&mut child);
        return Err(format!("gave no answer within {} s", CHILD_DEADLINE.as_secs()));
    };
    let status = child.wait().map_err(|e| e.to_string())?;
    let code = status.code().map_or_else(|| "by a signal".to_owned(), |c| c.to_string());
    Ok(ChildOutput { success: status.success(), code, stdout: text })
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}
