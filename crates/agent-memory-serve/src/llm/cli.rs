//! The CLI providers: an installed coding agent (`claude -p`, `codex exec`) run once as a child
//! process, the prompt on its stdin and the answer on its stdout, so the user's own login and
//! plan pay for distilling.
//!
//! Must not: retry or budget (the distiller in core does), or let the child's run be recorded:
//! the child gets `AGENT_MEMORY_DISABLE=1`, at which agent-memory's own hook exits at once.
//! Nor may a hung child hold the worker: past the timeout it is killed.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{Completion, Transport, TransportError};

/// How often a running child is checked on: short next to any real model call.
const POLL: Duration = Duration::from_millis(25);

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

    fn spawn(&self) -> Result<Child, TransportError> {
        Command::new(&self.program)
            .args(&self.args)
            .env("AGENT_MEMORY_DISABLE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    TransportError::Other(format!(
                        "`{}` was not found; install it or set [llm] command to its path",
                        self.program
                    ))
                } else {
                    TransportError::Other(format!("cannot run `{}`: {e}", self.program))
                }
            })
    }
}

impl Transport for CliTransport {
    fn name(&self) -> &str {
        self.name
    }

    fn complete(&self, system: &str, user: &str) -> Result<Completion, TransportError> {
        // Neither CLI takes a separate system prompt on stdin, so it goes first, as one text.
        let prompt = format!("{system}\n\n{user}\n");
        let mut child = self.spawn()?;
        // Stdin is written and stdout/stderr read on their own threads: a child that answers
        // before it has read all its input must not deadlock against us.
        let writer = child.stdin.take().map(|mut stdin| {
            std::thread::spawn(move || {
                // A child that exits without reading everything closes the pipe; its exit
                // status, not this write error, is what explains the failure.
                let _ = stdin.write_all(prompt.as_bytes());
            })
        });
        let stdout = child.stdout.take().map(read_all);
        let stderr = child.stderr.take().map(read_all);

        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    // The reader threads are left to finish on their own: a grandchild may
                    // still hold the pipes open, and joining them would wait for it.
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(TransportError::Timeout);
                }
                Ok(None) => std::thread::sleep(POLL),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(TransportError::Other(format!(
                        "cannot wait for `{}`: {e}",
                        self.program
                    )));
                }
            }
        };
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        let stdout = joined(stdout);
        let stderr = joined(stderr);
        if !status.success() {
            let first_line =
                stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message");
            let how = match status.code() {
                Some(code) => format!("exited with status {code}"),
                None => "was killed by a signal".to_owned(),
            };
            return Err(TransportError::Other(format!("{} {how}: {first_line}", self.program)));
        }
        let text = stdout.trim();
        if text.is_empty() {
            return Err(TransportError::Other(format!("{} printed no answer", self.program)));
        }
        // The CLIs do not report usage in text mode; the distiller charges its own estimate.
        Ok(Completion { text: text.to_owned(), input_tokens: 0, output_tokens: 0 })
    }
}

fn read_all(mut pipe: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn joined(handle: Option<JoinHandle<String>>) -> String {
    handle.and_then(|h| h.join().ok()).unwrap_or_default()
}
