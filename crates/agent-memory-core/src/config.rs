//! Configuration: defaults → `config.toml` in the home → `AGENT_MEMORY_*` environment.
//!
//! The defaults live in `default.toml` beside this file, fully commented, embedded in the binary
//! and printed by `agent-memory config default`; a test keeps them equal to [`Config::default`],
//! which is what the hook path uses so that it never parses the embedded file.
//!
//! Must not: read anything but the one config file and the environment.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The commented default configuration.
pub const DEFAULT_TOML: &str = include_str!("default.toml");

/// Prefix of environment variables that override configuration keys.
pub const ENV_PREFIX: &str = "AGENT_MEMORY_";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub capture: CaptureConfig,
    pub filter: FilterConfig,
    pub search: SearchConfig,
    pub log: LogConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CaptureConfig {
    pub deadline_ms: u64,
    pub busy_timeout_ms: u64,
    pub max_stdin_bytes: usize,
    pub max_body_chars: usize,
    pub max_field_chars: usize,
    pub drain_per_hook: usize,
}

impl Default for CaptureConfig {
    fn default() -> Self {
        CaptureConfig {
            deadline_ms: 1000,
            busy_timeout_ms: 600,
            max_stdin_bytes: 4 * 1024 * 1024,
            max_body_chars: 8000,
            max_field_chars: 16000,
            drain_per_hook: 200,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilterConfig {
    pub min_prompt_chars: usize,
    pub min_tool_chars: usize,
    pub low_value: bool,
    pub meta_tools: Vec<String>,
    pub dedupe_window: usize,
    pub dedupe_seconds: u64,
    pub dedupe_similarity: f64,
}

impl Default for FilterConfig {
    fn default() -> Self {
        FilterConfig {
            min_prompt_chars: 3,
            min_tool_chars: 4,
            low_value: true,
            meta_tools: [
                "TodoWrite",
                "TodoRead",
                "ToolSearch",
                "ExitPlanMode",
                "update_plan",
                "write_todos",
                "todo",
                "todowrite",
                "todoread",
                "memory",
                "session_search",
                "mcp__agent-memory__*",
                "mcp__agent_memory__*",
                "mcp_agent-memory_*",
                "agent-memory-*",
                "agent-memory_*",
            ]
            .map(String::from)
            .to_vec(),
            dedupe_window: 20,
            dedupe_seconds: 600,
            dedupe_similarity: 0.9,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    pub limit: usize,
    pub max_query_terms: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig { limit: 20, max_query_terms: 12 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    pub level: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { level: "warn".into() }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error(
        "{path} is not valid configuration: {message}; compare with `agent-memory config default`"
    )]
    Invalid { path: PathBuf, message: String },
    #[error("environment variable(s) {var} do not fit the configuration: {message}")]
    Env { var: String, message: String },
}

impl Config {
    /// Loads the file at `path` (missing is fine) over the defaults, then the environment.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let vars = std::env::vars().filter(|(k, _)| k.starts_with(ENV_PREFIX));
        Config::load_with(path, vars)
    }

    /// [`Config::load`] with the environment given, for tests.
    pub fn load_with(
        path: &Path,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let mut table = match std::fs::read_to_string(path) {
            Ok(text) => text.parse::<toml::Table>().map_err(|e| ConfigError::Invalid {
                path: path.to_owned(),
                message: e.message().to_owned(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
            Err(source) => return Err(ConfigError::Read { path: path.to_owned(), source }),
        };
        let invalid_file = |e: toml::de::Error| ConfigError::Invalid {
            path: path.to_owned(),
            message: e.message().to_owned(),
        };
        let mut env_vars = Vec::new();
        for (var, value) in env {
            // Only nested keys are configuration; AGENT_MEMORY_HOME and AGENT_MEMORY_LOG are not.
            let Some(key) = var.strip_prefix(ENV_PREFIX).filter(|k| k.contains("__")) else {
                continue;
            };
            env_vars.push((
                key.split("__").map(str::to_ascii_lowercase).collect::<Vec<_>>(),
                value,
                var,
            ));
        }
        if env_vars.is_empty() {
            // The common case on the hook path: no file, no overrides.
            if table.is_empty() {
                return Ok(Config::default());
            }
            return Config::deserialize(toml::Value::Table(table)).map_err(invalid_file);
        }
        // Validate the file alone first, so an error names its real culprit.
        Config::deserialize(toml::Value::Table(table.clone())).map_err(invalid_file)?;
        let names: Vec<String> = env_vars.iter().map(|(_, _, var)| var.clone()).collect();
        for (parts, value, _) in env_vars {
            set_nested(&mut table, &parts, env_value(&value));
        }
        Config::deserialize(toml::Value::Table(table)).map_err(|e| ConfigError::Env {
            var: names.join(", "),
            message: e.message().to_owned(),
        })
    }
}

/// An environment value read as TOML when it is a number, boolean or array; else a string.
fn env_value(raw: &str) -> toml::Value {
    let probe = format!("v = {raw}");
    match probe.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(raw.to_owned())),
        Err(_) => toml::Value::String(raw.to_owned()),
    }
}

fn set_nested(table: &mut toml::Table, parts: &[String], value: toml::Value) {
    match parts {
        [] => {}
        [last] => {
            table.insert(last.clone(), value);
        }
        [first, rest @ ..] => {
            let entry = table
                .entry(first.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if !entry.is_table() {
                *entry = toml::Value::Table(toml::Table::new());
            }
            if let toml::Value::Table(inner) = entry {
                set_nested(inner, rest, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_toml_matches_code_defaults() {
        let parsed: Config = toml::from_str(DEFAULT_TOML).expect("default.toml parses");
        assert_eq!(parsed, Config::default());
    }

    #[test]
    fn file_then_env_layers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        crate::fsutil::write_atomic(
            &path,
            "[capture]\ndeadline_ms = 300\n[search]\nlimit = 5\n".as_bytes(),
        )
        .expect("w");
        let env = [
            ("AGENT_MEMORY_SEARCH__LIMIT".to_owned(), "7".to_owned()),
            ("AGENT_MEMORY_HOME".to_owned(), "/ignored".to_owned()),
            ("AGENT_MEMORY_LOG__LEVEL".to_owned(), "debug".to_owned()),
        ];
        let config = Config::load_with(&path, env).expect("loads");
        assert_eq!(config.capture.deadline_ms, 300);
        assert_eq!(config.capture.busy_timeout_ms, 600, "untouched keys keep defaults");
        assert_eq!(config.search.limit, 7, "environment wins over the file");
        assert_eq!(config.log.level, "debug");
    }

    #[test]
    fn errors_name_the_culprit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        crate::fsutil::write_atomic(&path, "[capture]\ndeadline = 3\n".as_bytes()).expect("w");
        let err = Config::load_with(&path, []).expect_err("unknown key");
        assert!(err.to_string().contains("config.toml"), "{err}");
        crate::fsutil::write_atomic(&path, "".as_bytes()).expect("w");
        let env = [("AGENT_MEMORY_CAPTURE__DEADLINE_MS".to_owned(), "soon".to_owned())];
        let err = Config::load_with(&path, env).expect_err("bad env");
        assert!(err.to_string().contains("AGENT_MEMORY_CAPTURE__DEADLINE_MS"), "{err}");
        let missing = dir.path().join("none.toml");
        assert_eq!(Config::load_with(&missing, []).expect("missing ok"), Config::default());
    }
}
