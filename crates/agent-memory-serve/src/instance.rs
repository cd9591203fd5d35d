//! The one running server per home: its lock, its state file, and the local token.
//!
//! `serve.lock` is held (an OS file lock, released when the process dies, so a crash never
//! leaves it taken) for as long as the server runs; `serve.json` says where it listens, for
//! `serve --status`, `serve --stop` and providers; `serve.token` is the bearer token every
//! mutating route and `/mcp` require, created once, 0600, readable by the CLI and providers of
//! the same user. Must not: open sockets (the HTTP side is [`crate::http`]).

use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use agent_memory_core::fsutil;
use agent_memory_core::paths::Home;
use serde::{Deserialize, Serialize};

/// Why the instance files could not be used.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error("cannot use {path}: {source}; check that the agent-memory home is writable")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "cannot reach the server at {url}: {message}; is it running? see `agent-memory serve --status`"
    )]
    Unreachable { url: String, message: String },
    #[error(
        "agent-memory serve is already running for this home{where_}; stop it with `agent-memory serve --stop`"
    )]
    Running { where_: String },
}

/// Where a running server listens: written once it listens, removed when it stops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServeState {
    pub pid: u32,
    pub url: String,
    pub port: u16,
    pub started_at_ms: i64,
}

/// The files of the server in a home.
#[derive(Debug, Clone)]
pub struct Instance {
    root: PathBuf,
}

/// The lock of the running server; dropping it lets another start.
#[derive(Debug)]
pub struct Held {
    _file: File,
    state_path: PathBuf,
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.state_path);
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> InstanceError + '_ {
    move |source| InstanceError::Io { path: path.to_owned(), source }
}

impl Instance {
    pub fn new(home: &Home) -> Instance {
        Instance { root: home.root().to_owned() }
    }

    pub fn lock_path(&self) -> PathBuf {
        self.root.join("serve.lock")
    }

    pub fn state_path(&self) -> PathBuf {
        self.root.join("serve.json")
    }

    pub fn token_path(&self) -> PathBuf {
        self.root.join("serve.token")
    }

    /// Takes the single-instance lock, or says where the running server is.
    pub fn lock(&self) -> Result<Held, InstanceError> {
        fsutil::ensure_private_dir(&self.root).map_err(io_err(&self.root))?;
        let path = self.lock_path();
        let file = fsutil::private_file_options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err(&path))?;
        if file.try_lock().is_err() {
            let where_ = self.state().map(|s| format!(" at {} (pid {})", s.url, s.pid));
            return Err(InstanceError::Running { where_: where_.unwrap_or_default() });
        }
        Ok(Held { _file: file, state_path: self.state_path() })
    }

    /// Whether a server holds the lock now.
    pub fn is_running(&self) -> bool {
        agent_memory_core::fsutil::lock_held(&self.lock_path())
    }

    /// Records where the server listens (atomically: readers never see half a file).
    pub fn write_state(&self, state: &ServeState) -> Result<(), InstanceError> {
        let path = self.state_path();
        let bytes = serde_json::to_vec_pretty(state).unwrap_or_default();
        fsutil::write_atomic(&path, &bytes).map_err(io_err(&path))
    }

    /// Where the running server listens, when one recorded it.
    pub fn state(&self) -> Option<ServeState> {
        let text = std::fs::read_to_string(self.state_path()).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The local token: read, or created (0600) with fresh randomness on first use.
    pub fn token(&self) -> Result<String, InstanceError> {
        let path = self.token_path();
        if let Ok(text) = std::fs::read_to_string(&path) {
            let token = text.trim();
            if token.len() >= 32 {
                return Ok(token.to_owned());
            }
        }
        fsutil::ensure_private_dir(&self.root).map_err(io_err(&self.root))?;
        let token = fresh_token().map_err(io_err(&path))?;
        fsutil::write_atomic(&path, token.as_bytes()).map_err(io_err(&path))?;
        Ok(token)
    }

    /// The token, only when it exists (the CLI never creates one).
    pub fn existing_token(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.token_path()).ok()?;
        Some(text.trim().to_owned()).filter(|t| !t.is_empty())
    }
}

/// 32 random bytes from the kernel, hex-encoded.
fn fresh_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(agent_memory_core::text::hex(&bytes))
}

impl Instance {
    /// Asks the running server to stop (`POST /api/shutdown` with the token) and waits, up to
    /// `wait`, for it to let go of its lock. False when none was running.
    pub fn stop(&self, wait: std::time::Duration) -> Result<bool, InstanceError> {
        let Some(state) = self.state().filter(|_| self.is_running()) else { return Ok(false) };
        let token = self.existing_token().unwrap_or_default();
        let url = format!("{}/api/shutdown", state.url);
        ureq::post(&url).header("Authorization", &format!("Bearer {token}")).send_empty().map_err(
            |err| InstanceError::Unreachable { url: url.clone(), message: err.to_string() },
        )?;
        let deadline = std::time::Instant::now() + wait;
        while self.is_running() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Ok(true)
    }

    /// What the running server says of itself (`GET /api/health`), when one is running.
    pub fn health(&self) -> Option<(ServeState, serde_json::Value)> {
        let state = self.state().filter(|_| self.is_running())?;
        let url = format!("{}/api/health", state.url);
        let mut response = ureq::get(&url).call().ok()?;
        let text = response.body_mut().read_to_string().ok()?;
        Some((state, serde_json::from_str(&text).ok()?))
    }
}
