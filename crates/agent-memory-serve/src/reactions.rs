//! The actions of `[[reactions]]` (see `agent_memory_core::react`): a command run with the item
//! as JSON on its standard input, a line appended to a file, or the item POSTed as JSON. The
//! work pass calls [`Actions`] once per matching item, never the hook.
//!
//! Must not: put captured text on a command line or through a shell (the command is the
//! person's own, the item only its input), or send anything anywhere the person did not name.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use agent_memory_core::config::ReactionConfig;
use agent_memory_core::react::Act;
use serde_json::Value;

use crate::child;

/// Runs reactions' actions for one home: `~` in an `append` path is `home_dir`, and commands
/// run there.
#[derive(Debug, Clone)]
pub struct Actions {
    home_dir: PathBuf,
}

impl Actions {
    pub fn new(home_dir: PathBuf) -> Actions {
        Actions { home_dir }
    }
}

impl Act for Actions {
    fn act(&self, reaction: &ReactionConfig, item: &Value) -> Result<(), String> {
        // A zero timeout would fail every action at once; a tenth of a second is the least.
        let timeout = Duration::from_millis(reaction.timeout_ms.max(100));
        if let Some((program, args)) = reaction.run.split_first() {
            return self.run(reaction, program, args, item, timeout);
        }
        if !reaction.append.is_empty() {
            return append(&expand(&reaction.append, &self.home_dir), item);
        }
        post(&reaction.post, item, timeout)
    }
}

impl Actions {
    fn run(
        &self,
        reaction: &ReactionConfig,
        program: &str,
        args: &[String],
        item: &Value,
        timeout: Duration,
    ) -> Result<(), String> {
        let mut command = Command::new(expand(program, &self.home_dir));
        command
            .args(args)
            .current_dir(&self.home_dir)
            .env("AGENT_MEMORY_REACTION", reaction.name.trim())
            // A command that starts an agent must not have that agent's session recorded.
            .env("AGENT_MEMORY_DISABLE", "1");
        let input = format!("{item}\n").into_bytes();
        let finished = child::run(command, input, timeout).map_err(|e| e.to_string())?;
        if finished.status.success() { Ok(()) } else { Err(finished.failure(program)) }
    }
}

/// `~/x` as `home/x`; any other path as it is.
fn expand(path: &str, home: &Path) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(path),
    }
}

/// The line `append` writes: `- 2026-12-07 14:03 decision (o12, shop, codex): the title`, on
/// one line whatever the title holds.
fn line(item: &Value) -> String {
    let field = |name: &str| item.get(name).and_then(Value::as_str).unwrap_or_default();
    let when = item
        .get("at")
        .and_then(Value::as_i64)
        .map(agent_memory_core::time::format_local)
        .unwrap_or_default();
    let mut place = vec![field("id")];
    place.extend([field("project"), field("agent")].into_iter().filter(|f| !f.is_empty()));
    let title: String =
        field("title").chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let title = agent_memory_core::text::clip(
        title.split_whitespace().collect::<Vec<_>>().join(" ").as_str(),
        500,
    );
    format!("- {when} {} ({}): {title}\n", field("type"), place.join(", "))
}

fn append(path: &Path, item: &Value) -> Result<(), String> {
    let written = (|| {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        file.write_all(line(item).as_bytes())
    })();
    written.map_err(|e| format!("cannot append to {}: {e}", path.display()))
}

fn post(url: &str, item: &Value, timeout: Duration) -> Result<(), String> {
    let agent = crate::llm::http::agent(timeout);
    let response = agent
        .post(url)
        .header("content-type", "application/json")
        .send(item.to_string())
        .map_err(|e| format!("POST {url} failed: {e}"))?;
    let status = response.status().as_u16();
    if (200..300).contains(&status) { Ok(()) } else { Err(format!("POST {url} answered {status}")) }
}
