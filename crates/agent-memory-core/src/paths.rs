//! Where agent-memory keeps its files.
//!
//! One home directory, `$AGENT_MEMORY_HOME` or `~/.agent-memory`, private to the user (0700):
//! `memory.db` (the store), `config.toml`, `modes/` (the user's distil modes), `spool/` (events
//! waiting for the store), `logs/`,
//! `models/` (installed embedding models), `rejected/` (payloads that could not be read, kept for inspection), `lost-events` (the
//! count of events no place could take, see `capture::lost`). When the home itself is
//! unwritable, a second spool under the system temp directory keeps events safe.
//!
//! Must not: create anything on its own; callers decide when a directory is needed.

use std::path::{Path, PathBuf};

/// The environment variable that moves the home directory.
pub const HOME_ENV: &str = "AGENT_MEMORY_HOME";

/// No home directory could be determined.
#[derive(Debug, thiserror::Error)]
#[error("cannot find a home directory: set AGENT_MEMORY_HOME or HOME")]
pub struct NoHomeError;

/// The resolved home directory and the paths inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// Resolves the home from `AGENT_MEMORY_HOME`, else `$HOME/.agent-memory`.
    pub fn from_env() -> Result<Home, NoHomeError> {
        if let Some(dir) = std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
            return Ok(Home::at(PathBuf::from(dir)));
        }
        let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).ok_or(NoHomeError)?;
        Ok(Home::at(PathBuf::from(home).join(".agent-memory")))
    }

    pub fn at(root: PathBuf) -> Home {
        Home { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn db_path(&self) -> PathBuf {
        self.root.join("memory.db")
    }

    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    pub fn spool_dir(&self) -> PathBuf {
        self.root.join("spool")
    }

    /// The spool of last resort, used when the home cannot be written at all: in the user's
    /// own runtime directory (`XDG_RUNTIME_DIR`), else in a folder of the user's id under the
    /// temporary directory, keyed by a hash of the home path so two homes never share one.
    /// Others can compute the name, so the spool makes it one folder at a time and trusts it
    /// only while the user owns it, no one else may enter it, and no one else owns or may
    /// write any folder on its way (see `capture::spool` and `fsutil::ensure_private_chain`).
    pub fn fallback_spool_dir(&self) -> PathBuf {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(self.root.to_string_lossy().as_bytes());
        let tag = crate::text::hex(&digest[..6]);
        let runtime = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute() && crate::fsutil::is_private_dir(dir));
        match runtime {
            Some(dir) => dir.join(format!("agent-memory-spool-{tag}")),
            None => {
                let user =
                    crate::fsutil::own_uid().map_or_else(|| "user".to_owned(), |u| u.to_string());
                std::env::temp_dir()
                    .join(format!("agent-memory-{user}"))
                    .join(format!("spool-{tag}"))
            }
        }
    }

    /// Both spools, primary first.
    pub fn spool_dirs(&self) -> [PathBuf; 2] {
        [self.spool_dir(), self.fallback_spool_dir()]
    }

    /// The user's own distil modes, `NAME.toml` each.
    pub fn modes_dir(&self) -> PathBuf {
        self.root.join("modes")
    }

    pub fn log_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    pub fn rejected_dir(&self) -> PathBuf {
        self.root.join("rejected")
    }

    /// Installed embedding models, one directory each (see [`crate::embed::Manifest`]).
    pub fn models_dir(&self) -> PathBuf {
        self.root.join("models")
    }
}
