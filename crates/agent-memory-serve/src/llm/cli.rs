//! The CLI providers: an installed coding agent (`claude -p`, `codex exec`) run once as a child
//! process, the prompt on its stdin and the answer on its stdout, so the user's own login and
//! plan pay for distilling.
//!
//! Must not: retry or budget (the distiller in core does), or let the child's run be recorded:
//! the child gets `AGENT_MEMORY_DISABLE=1`, at which agent-memory's own hook exits at once.
//! Nor may a hung child hold the worker: past the timeout it is killed.

use std::process::Command;
use std::time::Duration;

use super::{Completion, Transport, TransportError};
use crate::child::{self, ChildError};

/// Completions from a coding agent's command line.
#[derive(Debug, Clone)]
pub struct CliTransport {
    name: &'static str,
    program: String,
    args: Vec<&'static str>,
    timeout: Duration,
}

impl CliTransport {
    /// `claude -p --output-format text`, reading the prompt from stdin. An empty `command`
    /// means `claude` on the PATH.
    pub fn claude(command: &str, timeout: Duration) -> CliTransport {
        CliTransport::new(
            "claude-cli",
            command,
            "claude",
            &["-p", "--output-format", "text"],
            timeout,
        )
    }

    /// `codex exec --skip-git-repo-check -`: `-` makes codex read the prompt from stdin, and
    /// the worker's directory need not be a git repository.
    pub fn codex(command: &str, timeout: Duration) -> CliTransport {
        CliTransport::new(
            "codex-cli",
            command,
            "codex",
            &["exec", "--skip-git-repo-check", "-"],
            timeout,
        )
    }

    fn new(
        name: &'static str,
        command: &str,
        default: &str,
        args: &[&'static str],
        timeout: Duration,
    ) -> CliTransport {
        let program = if command.trim().is_empty() { default } else { command.trim() };
        CliTransport { name, program: program.to_owned(), args: args.to_vec(), timeout }
    }
}

impl Transport for CliTransport {
    fn name(&self) -> &str {
        self.name
    }

    fn complete(&self, system: &str, user: &str) -> Result<Completion, TransportError> {
        // Neither CLI takes a separate system prompt on stdin, so it goes first, as one text.
        let prompt = format!("{system}\n\n{user}\n");
        let mut command = Command::new(&self.program);
        command.args(&self.args).env("AGENT_MEMORY_DISABLE", "1");
        let finished = match child::run(command, prompt.into_bytes(), self.timeout) {
            Ok(finished) => finished,
            Err(ChildError::Timeout { .. }) => return Err(TransportError::Timeout),
            Err(ChildError::NotFound { .. }) => {
                return Err(TransportError::Other(format!(
                    "`{}` was not found; install it or set [llm] command to its path",
                    self.program
                )));
            }
            Err(err) => return Err(TransportError::Other(err.to_string())),
        };
        if !finished.status.success() {
            return Err(TransportError::Other(finished.failure(&self.program)));
        }
        let text = finished.stdout.trim();
        if text.is_empty() {
            return Err(TransportError::Other(format!("{} printed no answer", self.program)));
        }
        // The CLIs do not report usage in text mode; the distiller charges its own estimate.
        Ok(Completion { text: text.to_owned(), input_tokens: 0, output_tokens: 0 })
    }
}
