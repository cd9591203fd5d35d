//! Logging setup: `tracing` to `logs/agent-memory.log` in the home for hooks (an agent's hook
//! must keep stdout and stderr quiet), to stderr for interactive commands.

use std::io::Write;

use agent_memory_core::config::Config;
use agent_memory_core::fsutil;
use agent_memory_core::paths::Home;
use tracing_subscriber::EnvFilter;

/// The environment variable that overrides the log filter.
const LOG_ENV: &str = "AGENT_MEMORY_LOG";

fn filter(config: &Config) -> EnvFilter {
    let directive = std::env::var(LOG_ENV).unwrap_or_else(|_| config.log.level.clone());
    EnvFilter::try_new(&directive).unwrap_or_else(|_| EnvFilter::new("warn"))
}

/// Logs to the home's log file, opened only when something is written.
pub fn init_file(home: &Home, config: &Config) {
    let dir = home.log_dir();
    let path = dir.join("agent-memory.log");
    let make_writer = move || -> Box<dyn Write> {
        match fsutil::ensure_private_dir(&dir).and_then(|()| fsutil::open_private_append(&path)) {
            Ok(file) => Box::new(file),
            Err(_) => Box::new(std::io::sink()),
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter(config))
        .with_ansi(false)
        .with_writer(make_writer)
        .try_init();
}

/// Logs warnings to stderr, for commands a person runs.
pub fn init_stderr(config: &Config) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter(config))
        .without_time()
        .with_target(false)
        .with_writer(std::io::stderr)
        .try_init();
}
