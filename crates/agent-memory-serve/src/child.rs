//! One child process run to the end or to a deadline: its input written and its output read on
//! threads of their own (a child that answers before it has read all its input must not
//! deadlock against us), killed once the deadline passes. The CLI LLM transports and the
//! reactions' commands both run their programs through here.

use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a running child is checked on.
const POLL: Duration = Duration::from_millis(25);

/// A child that ran to its end.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// `exited with status 2: <the first line of stderr>`, or how a signal ended it.
    pub fn failure(&self, program: &str) -> String {
        let first_line =
            self.stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message");
        let how = match self.status.code() {
            Some(code) => format!("exited with status {code}"),
            None => "was killed by a signal".to_owned(),
        };
        format!("{program} {how}: {first_line}")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    #[error("`{program}` was not found")]
    NotFound { program: String },
    #[error("cannot run `{program}`: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("`{program}` did not finish within {seconds:.1} s and was stopped")]
    Timeout { program: String, seconds: f64 },
    #[error("cannot wait for `{program}`: {source}")]
    Wait { program: String, source: std::io::Error },
}

/// Runs `command` with `input` on its standard input, its output captured, for at most
/// `timeout`.
pub fn run(
    mut command: Command,
    input: Vec<u8>,
    timeout: Duration,
) -> Result<Finished, ChildError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => ChildError::NotFound { program: program.clone() },
            _ => ChildError::Spawn { program: program.clone(), source },
        })?;
    let writer = child.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            // A child that exits without reading everything closes the pipe; its exit status,
            // not this write error, is what explains a failure.
            let _ = stdin.write_all(&input);
        })
    });
    let stdout = child.stdout.take().map(read_all);
    let stderr = child.stderr.take().map(read_all);
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                // The reader threads are left to finish on their own: a grandchild may still
                // hold the pipes open, and joining them would wait for it.
                let _ = child.kill();
                let _ = child.wait();
                return Err(ChildError::Timeout { program, seconds: timeout.as_secs_f64() });
            }
            Ok(None) => std::thread::sleep(POLL),
            Err(source) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ChildError::Wait { program, source });
            }
        }
    };
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    Ok(Finished { status, stdout: joined(stdout), stderr: joined(stderr) })
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
