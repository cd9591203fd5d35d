//! The `agent-memory` binary: parse the command line, dispatch to `cmd::<name>::run`, and own
//! the exit-code policy. `hook` always exits 0 (an agent must never be hurt by its memory); a
//! broken pipe (`agent-memory search … | head`) is success, `--json` included; any other error
//! is printed with its remedy and exits 1: as plain text on stderr, or, when `--json` was asked
//! for, as `{"error": {"code", "message"}}` on stdout, so a script always reads JSON.

mod cli;
mod cmd;
mod logging;
mod output;
mod report;

use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let started = Instant::now();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // An agent run that agent-memory itself started (the LLM distiller's `claude -p`) must not
    // be recorded: it carries AGENT_MEMORY_DISABLE, and every hook in it returns at once.
    if args.get(1).is_some_and(|a| a == "hook")
        && std::env::var_os("AGENT_MEMORY_DISABLE").is_some_and(|v| !v.is_empty() && v != "0")
    {
        return ExitCode::SUCCESS;
    }
    // The hook runs on every agent event: its two flags are read without building the whole
    // command-line parser, which costs as much as the rest of the hook's start-up.
    if args.get(1).is_some_and(|a| a == "hook")
        && let Some(hook) = cli::HookArgs::parse_fast(&args[2..])
    {
        cmd::hook::run(hook, started, exit_success_now);
        return ExitCode::SUCCESS;
    }
    let command = <cli::Cli as clap::CommandFactory>::command().color(color_choice(&args));
    let parsed = command.try_get_matches_from(&args).and_then(|mut matches| {
        <cli::Cli as clap::FromArgMatches>::from_arg_matches_mut(&mut matches)
    });
    let cli = match parsed {
        Ok(cli) => cli,
        // A hook command line with a typo must still not fail the agent's hook; a person asking
        // for its help gets it.
        Err(err)
            if args.get(1).is_some_and(|a| a == "hook")
                && !matches!(
                    err.kind(),
                    clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
                ) =>
        {
            return ExitCode::SUCCESS;
        }
        Err(err)
            if wants_json(&args)
                && !matches!(
                    err.kind(),
                    clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
                ) =>
        {
            // clap's first line says what is wrong; its usage and tips are for a person.
            let text = err.to_string();
            let first = text.lines().next().unwrap_or_default();
            let message = format!(
                "{}; see `agent-memory {} --help`",
                first.trim_start_matches("error: "),
                args.get(1).and_then(|a| a.to_str()).unwrap_or_default()
            );
            output::json_error("bad_request", &message);
            return ExitCode::from(2);
        }
        Err(err) => err.exit(),
    };
    let as_json = wants_json(&args);
    match cli.command {
        cli::Command::Hook(args) => {
            cmd::hook::run(args, started, exit_success_now);
            ExitCode::SUCCESS
        }
        command => match cmd::run(command) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
            // Its answer already says what failed; a second JSON document would break it.
            Err(err) if as_json && err.downcast_ref::<report::Reported>().is_some() => {
                ExitCode::FAILURE
            }
            Err(err) if as_json => {
                output::json_error(error_code(&err), &output::error_text(&err));
                ExitCode::FAILURE
            }
            Err(err) => {
                output::error(&err);
                ExitCode::FAILURE
            }
        },
    }
}

/// Ends the process at once with success; the hook watchdog calls it at the deadline, after
/// spooling the event, while the main thread may still be waiting on the database.
#[allow(clippy::disallowed_methods)] // main.rs owns the exit code; this is that policy.
fn exit_success_now() -> ! {
    std::process::exit(0)
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Whether the command line asks for JSON: `--json` among the flags (words after `--` are a
/// query's, not flags).
fn wants_json(args: &[std::ffi::OsString]) -> bool {
    args.iter().skip(1).take_while(|a| *a != "--").any(|a| a == "--json")
}

/// The stable code of an error under `--json`, in the words of the HTTP API's error table
/// (`docs/json.md` lists them): what a script can branch on without reading the message.
fn error_code(err: &anyhow::Error) -> &'static str {
    use agent_memory_core::recall::RecallError;
    use agent_memory_core::store::StoreError;
    use agent_memory_core::store::memories::MemoryError;
    for cause in err.chain() {
        if let Some(err) = cause.downcast_ref::<RecallError>() {
            return match err {
                RecallError::Invalid(_) => "bad_request",
                RecallError::Missing(_) => "not_found",
                RecallError::Memory(MemoryError::NotFound(_)) => "not_found",
                RecallError::Memory(MemoryError::State { .. }) => "conflict",
                RecallError::Store(_) | RecallError::Memory(_) => "store_unavailable",
            };
        }
        if let Some(err) = cause.downcast_ref::<MemoryError>() {
            return match err {
                MemoryError::NotFound(_) => "not_found",
                MemoryError::State { .. } | MemoryError::NotYours { .. } => "conflict",
                MemoryError::Store(_) => "store_unavailable",
                _ => "bad_request",
            };
        }
        if cause.downcast_ref::<StoreError>().is_some() {
            return "store_unavailable";
        }
        if cause.downcast_ref::<agent_memory_core::time::TimeParseError>().is_some() {
            return "bad_request";
        }
    }
    "failed"
}

/// `--color WHEN` as given, read before parsing so that clap's own help and errors obey it.
fn color_choice(args: &[std::ffi::OsString]) -> clap::ColorChoice {
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    let mut chosen = None;
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        if let Some(value) = word.strip_prefix("--color=") {
            chosen = Some(value.to_owned());
        } else if word == "--color" {
            chosen = words.next().map(|v| v.into_owned());
        }
    }
    match chosen.as_deref() {
        Some("always") => clap::ColorChoice::Always,
        Some("never") => clap::ColorChoice::Never,
        _ => clap::ColorChoice::Auto,
    }
}
