//! Where things are for `install`, `doctor` and serve's health page alike: the user's folders
//! from the environment (each agent's own variable included), the binary the hooks should
//! run (a build's output or a package runner's cache stands for the installed copy), whether
//! an agent is on this machine, and a config file read as the planners want it.
//!
//! Must not: write anything.

use std::path::{Path, PathBuf};

use super::{Agent, ConfigError, Scope, UserDirs, user_root};

#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error("HOME is not set; set it to your home directory")]
    NoHome,
    #[error("cannot use {name}={value} as a directory; fix or unset it")]
    BadDir { name: String, value: String },
}

/// The user's home, config and data homes, and the folders agents' own variables name, from
/// the environment.
pub fn user_dirs() -> Result<UserDirs, LocateError> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or(LocateError::NoHome)?;
    let config_home = env_dir("XDG_CONFIG_HOME")?.unwrap_or_else(|| home.join(".config"));
    let data_home = env_dir("XDG_DATA_HOME")?;
    let mut dirs = UserDirs::new(home, config_home);
    if let Some(data_home) = data_home {
        dirs.data_home = data_home;
    }
    // Each agent that reads a variable for its config or history folder gets it from there.
    let roots = Agent::all().flat_map(|agent| {
        let spec = agent.spec();
        [Some(spec.config_root), spec.history.map(|h| h.root)]
    });
    for var in roots.flatten().filter_map(|root| root.env) {
        if !dirs.env.iter().any(|(v, _)| v == var)
            && let Some(dir) = env_dir(var)?
        {
            dirs.env.push((var.to_owned(), dir));
        }
    }
    Ok(dirs)
}

fn env_dir(name: &str) -> Result<Option<PathBuf>, LocateError> {
    std::env::var_os(name)
        .filter(|dir| !dir.is_empty())
        .map(|dir| {
            std::path::absolute(PathBuf::from(&dir)).map_err(|_| LocateError::BadDir {
                name: name.to_owned(),
                value: dir.to_string_lossy().into_owned(),
            })
        })
        .transpose()
}

/// Whether `bin` is a build's output rather than an installed copy: in a `target/debug` or
/// `target/release` directory, or in any directory cargo builds into (one holding its
/// `.fingerprint`). Hooks wired to it break on the next `cargo clean`.
pub fn is_build_output(bin: &str) -> bool {
    let path = Path::new(bin);
    let named = ["/target/debug/", "/target/release/"].iter().any(|dir| bin.contains(dir));
    named || path.parent().is_some_and(|dir| dir.join(".fingerprint").is_dir())
}

/// Whether `bin` runs from a package runner's cache (`npx`, `pnpm dlx`, `bunx`, `uvx`,
/// `pipx run`): a copy that goes when that cache is cleaned, so `install` copies it to
/// `~/.local/bin` and wires the copy.
pub fn is_transient(bin: &str) -> bool {
    let bin = bin.replace('\\', "/");
    ["/_npx/", "/dlx-", "/bunx-", "/uv/archive-v", "/pipx/.cache/"]
        .iter()
        .any(|dir| bin.contains(dir))
}

/// The installed agent-memory a build's output should wire instead of itself: the first on
/// `PATH` that is neither a build's output nor in a runner's cache, else
/// `~/.local/bin/agent-memory`.
pub fn installed_copy(home: &Path) -> Option<String> {
    let on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|dir| dir.join("agent-memory")).collect())
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain([local_bin(home)])
        .filter(|candidate| candidate.is_file())
        .filter_map(|candidate| std::fs::canonicalize(candidate).ok())
        .filter_map(|candidate| candidate.to_str().map(str::to_owned))
        .find(|candidate| !is_build_output(candidate) && !is_transient(candidate))
}

/// Where `install --copy-self` (and an install from a runner's cache) puts the binary.
pub fn local_bin(home: &Path) -> PathBuf {
    home.join(".local").join("bin").join("agent-memory")
}

/// What the hooks run when `exe` is this binary: `exe` itself, or, when it is a build's
/// output, the installed copy (when there is one).
pub fn hooks_binary(exe: &str, home: &Path) -> String {
    if is_build_output(exe) {
        installed_copy(home).unwrap_or_else(|| exe.to_owned())
    } else {
        exe.to_owned()
    }
}

/// Whether `agent` is on this machine: its config folder exists or its program is on `PATH`.
pub fn is_present(agent: Agent, user: &Scope) -> bool {
    let Some(dir) = user_root(agent, user) else { return false };
    dir.is_dir() || on_path(agent.program())
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// A config file as the planners read it: its text, `None` when it does not exist.
pub fn read(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read { path: path.to_owned(), source }),
    }
}
