//! `agent-memory hook`: the capture path every agent's hooks call.
//!
//! A plain synchronous run: read stdin (capped), hand it to core's hook run (`hook::run_hook`:
//! capture, store, answer), print the answer in the agent's protocol (the session-start
//! briefing, recall for a prompt, what is known about a file being read), exit 0. After a stop or a session end it starts one detached distil pass and does not wait.
//! Standard input is waited for as long as the agent's own timeout for a hook run allows (less
//! the deadline and a margin, `hook::stdin_budget`): the agent is the one writing it. The
//! deadline (`capture.deadline_ms`) counts from when the input is complete. A watchdog thread
//! enforces both: if the main thread is still reading, or still waiting (on a locked database,
//! a slow disk) when its time is up, the watchdog spools what it has and ends the process with
//! success. A run still going a moment after it began reading or finished reading gets its
//! input copied to the spool first, so an agent killing the hook loses nothing
//! (`hook::HOLD_AFTER`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_memory_core::adapter;
use agent_memory_core::capture::Input;
use agent_memory_core::capture::spool::SpoolRecord;
use agent_memory_core::config::Config;
use agent_memory_core::event::EventKind;
use agent_memory_core::hook::{self, HookRequest, InFlight};
use agent_memory_core::paths::Home;
use agent_memory_core::time;

use crate::cli::HookArgs;

pub fn run(args: HookArgs, started: Instant, exit_now: fn() -> !) {
    let Ok(home) = Home::from_env() else {
        // Nowhere to store or log; the agent must not notice.
        return;
    };
    // A setting that does not fit is left out and logged; every other one applies.
    let (config, problems) = Config::load_lenient(&home.config_path());
    crate::logging::init_file(&home, &config);
    for problem in problems {
        tracing::warn!("{problem}");
    }

    let agent = adapter::canonical_agent(&args.agent);
    let in_flight =
        Arc::new(InFlight::new(&home, started + hook::stdin_budget(&config, &agent, &args.event)));
    arm_watchdog(Arc::clone(&in_flight), exit_now);

    // The agent may still be writing when the deadline passes: what came so far is in reach
    // of the watchdog, which spools it rather than lose the event.
    let uid = new_uid();
    let received_at_ms = time::now_ms();
    let meta = SpoolRecord::new(&uid, &agent, &args.event, received_at_ms);
    let input = in_flight
        .read_input(&mut std::io::stdin().lock(), config.capture.max_stdin_bytes, meta)
        .unwrap_or_else(|err| {
            tracing::warn!(%err, "reading the hook's standard input failed");
            Input { bytes: Vec::new(), truncated_from: None }
        });
    let deadline = Instant::now() + Duration::from_millis(config.capture.deadline_ms);
    in_flight.set_deadline(deadline);
    if let Some(len) = input.truncated_from {
        tracing::warn!(
            agent,
            event = args.event,
            bytes = len,
            "hook payload over the stdin cap; truncated"
        );
    }
    let request = HookRequest {
        home: &home,
        config: &config,
        agent: &agent,
        event_name: &args.event,
        input,
        uid,
        received_at_ms,
        started,
        deadline,
    };
    let report = hook::run_hook(request, &in_flight);
    if let Some(answer) = report.answer.as_deref()
        && let Err(err) = crate::output::hook_answer(answer)
    {
        tracing::warn!(%err, "could not answer the agent");
    }
    if report.ends_turn && config.distil.auto_work {
        spawn_detached(
            &["work", "--background"],
            "the background distil pass; run `agent-memory work`",
        );
    }
    if config.serve.autostart
        && adapter::stored_kind(&agent, &args.event) == Some(EventKind::SessionStart)
        && !agent_memory_serve::instance::Instance::new(&home).is_running()
    {
        spawn_detached(&["serve"], "the local server; run `agent-memory serve`");
    }
    let outcome = report.outcome.as_str();
    if report.outcome.is_problem() {
        tracing::warn!(
            agent,
            event = args.event,
            outcome,
            detail = report.detail.as_deref().unwrap_or(""),
            "hook run did not store its event"
        );
    } else {
        tracing::debug!(agent, event = args.event, outcome, "hook run");
    }
}

/// Starts `agent-memory ARGS` so that it outlives this hook, in its own process group so an
/// agent ending the hook's group leaves it running; never waits for it. `what` names it in the
/// log when it cannot start.
pub(crate) fn spawn_detached(args: &[&str], what: &str) {
    let Ok(exe) = std::env::current_exe() else { return };
    let mut command = std::process::Command::new(exe);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    if let Err(err) = command.spawn() {
        tracing::warn!(%err, "cannot start {what}");
    }
}

fn arm_watchdog(in_flight: Arc<InFlight>, exit_now: fn() -> !) {
    // The watchdog only waits, spools and exits: a small stack keeps its start cheap.
    let spawned = std::thread::Builder::new().name("deadline".into()).stack_size(256 * 1024).spawn(
        move || {
            in_flight.watch();
            match in_flight.spool_unfinished("hook deadline reached before the store answered") {
                Some(Ok(path)) => {
                    tracing::warn!(path = %path.display(), "hook deadline reached; event spooled")
                }
                Some(Err(err)) => {
                    tracing::error!(%err, "hook deadline reached and spooling failed")
                }
                None => {}
            }
            exit_now()
        },
    );
    if let Err(err) = spawned {
        tracing::warn!(%err, "cannot start the deadline watchdog");
    }
}

/// A unique event id: time, process and a random part, so ids from many processes and
/// machines never collide and sort roughly by time.
fn new_uid() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    let random = hasher.finish();
    format!("{:011x}-{:05x}-{random:016x}", time::now_ms(), std::process::id() & 0xfffff)
}
