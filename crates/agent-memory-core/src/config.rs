//! Configuration: defaults → `config.toml` in the home → `AGENT_MEMORY_*` environment.
//!
//! The defaults live in `default.toml` beside this file, fully commented, embedded in the binary
//! and printed by `agent-memory config default`; a test keeps them equal to [`Config::default`],
//! which is what the hook path uses so that it never parses the embedded file.
//!
//! It also owns the one way the CLI changes that file ([`set_in_file`], for `agent-memory mode
//! use`): a text edit of a single key that keeps the user's comments, order and other sections
//! byte for byte, checked by parsing the result before it is written.
//!
//! Must not: read or write anything but the one config file and the environment.

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
    pub distil: DistilConfig,
    pub llm: LlmConfig,
    pub inject: InjectConfig,
    pub promote: PromoteConfig,
    pub vault: VaultConfig,
    pub log: LogConfig,
    pub serve: ServeConfig,
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
    pub semantic_recall: bool,
    pub model: String,
    pub candidates: usize,
    /// Unset: the model's own floor, else [`crate::store::search::Ranking::default`]'s.
    pub similarity_floor: Option<f32>,
    pub weight_relevance: f64,
    pub weight_importance: f64,
    pub weight_freshness: f64,
    pub weight_hits: f64,
    pub half_life_days: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        let ranking = crate::store::search::Ranking::default();
        SearchConfig {
            limit: 20,
            max_query_terms: 12,
            semantic_recall: true,
            model: String::new(),
            candidates: ranking.candidates,
            similarity_floor: None,
            weight_relevance: ranking.weight_relevance,
            weight_importance: ranking.weight_importance,
            weight_freshness: ranking.weight_freshness,
            weight_hits: ranking.weight_hits,
            half_life_days: ranking.half_life_days,
        }
    }
}

impl SearchConfig {
    /// How search ranks, as configured. `model_floor` is the similarity floor the embedding
    /// model in use comes with, if any; a configured `similarity_floor` wins over it.
    pub fn ranking(&self, model_floor: Option<f32>) -> crate::store::search::Ranking {
        let default = crate::store::search::Ranking::default().similarity_floor;
        crate::store::search::Ranking {
            candidates: self.candidates,
            similarity_floor: self.similarity_floor.or(model_floor).unwrap_or(default),
            weight_relevance: self.weight_relevance,
            weight_importance: self.weight_importance,
            weight_freshness: self.weight_freshness,
            weight_hits: self.weight_hits,
            half_life_days: self.half_life_days,
            now_ms: None,
        }
    }

    /// The embedding model search and the worker use, if vectors are on and one is chosen.
    pub fn embedding_model(&self) -> Option<&str> {
        (self.semantic_recall && !self.model.trim().is_empty()).then_some(self.model.trim())
    }
}

/// How sessions are turned into observations and summaries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DistilConfig {
    /// The mode's name: a built-in (`code`, `code-quiet`, `meeting-notes`) or a user file.
    pub mode: String,
    /// The output language of observations and summaries: `en` or `zh-CN`.
    pub language: String,
    /// A session with no event for this long gets its summary even without a stop event.
    pub silence_minutes: u64,
    /// How long a distil pass holds a session before another pass may take it over.
    pub lease_seconds: u64,
    /// Whether the stop and session-end hooks start one detached distil pass.
    pub auto_work: bool,
}

impl Default for DistilConfig {
    fn default() -> Self {
        DistilConfig {
            mode: crate::distil::mode::DEFAULT_MODE.to_owned(),
            language: "en".into(),
            silence_minutes: 30,
            lease_seconds: 120,
            auto_work: true,
        }
    }
}

/// Which language model, if any, distils events; `none` keeps to the offline distiller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// `none`, `anthropic`, `openai` (any OpenAI-compatible chat-completions endpoint),
    /// `claude-cli` or `codex-cli`.
    pub provider: String,
    /// The model name the provider expects; empty means the provider's default.
    pub model: String,
    /// The API's base URL; empty means the provider's public endpoint.
    pub base_url: String,
    /// The environment variable holding the API key; empty means the provider's usual one.
    pub api_key_env: String,
    /// A file holding the API key, read when the variable is unset.
    pub key_file: String,
    /// For the CLI providers: the program to run; empty means `claude` or `codex`.
    pub command: String,
    pub timeout_seconds: u64,
    /// Retries after the first attempt, on timeouts, rate limits and server errors.
    pub max_retries: u32,
    /// Tokens the distiller may spend per day (UTC); past it, the offline distiller takes over.
    pub daily_token_budget: u64,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: "none".into(),
            model: String::new(),
            base_url: String::new(),
            api_key_env: String::new(),
            key_file: String::new(),
            command: String::new(),
            timeout_seconds: 60,
            max_retries: 3,
            daily_token_budget: 200_000,
        }
    }
}

/// What agents are handed back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InjectConfig {
    /// Whether session-start hooks answer with the context of earlier sessions.
    pub session_start: bool,
    /// The most tokens that context may take.
    pub budget_tokens: usize,
    /// Whether prompt hooks answer with earlier items that strongly match the prompt.
    pub prompt_recall: bool,
    /// How strongly an item must match: the share (0 to 1) of the prompt's content words, up
    /// to eight of them, found in the item.
    pub prompt_recall_min_score: f64,
    /// The most items one prompt is answered with.
    pub prompt_recall_max_items: usize,
    /// The most tokens that answer may take.
    pub prompt_recall_max_tokens: usize,
    /// Whether a file about to be read comes with what earlier sessions did with it.
    pub file_context: bool,
    /// How the briefing ranks long-term memories: weights of importance, freshness and hit
    /// frequency, and the half-life of freshness in days.
    pub memory_weight_importance: f64,
    pub memory_weight_freshness: f64,
    pub memory_weight_hits: f64,
    pub memory_half_life_days: f64,
}

impl Default for InjectConfig {
    fn default() -> Self {
        InjectConfig {
            session_start: true,
            budget_tokens: 1500,
            prompt_recall: true,
            prompt_recall_min_score: 0.6,
            prompt_recall_max_items: 3,
            prompt_recall_max_tokens: 300,
            file_context: true,
            memory_weight_importance: 0.6,
            memory_weight_freshness: 0.3,
            memory_weight_hits: 0.1,
            memory_half_life_days: 90.0,
        }
    }
}

/// How observations and summaries become long-term memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PromoteConfig {
    /// Promote straight to project memory instead of offering candidates for review.
    pub auto: bool,
    /// Statements less important than this (1 to 10) are not kept.
    pub min_importance: u8,
    /// The kinds promotion keeps.
    pub kinds: Vec<String>,
    /// Term overlap (0 to 1) at which two statements are one.
    pub merge_overlap: f64,
    /// Vector similarity at which two statements are one, when both have vectors.
    pub merge_similarity: f64,
    /// Share of subject terms at which a newer decision replaces an older one.
    pub supersede_overlap: f64,
}

impl Default for PromoteConfig {
    fn default() -> Self {
        PromoteConfig {
            auto: false,
            min_importance: 3,
            kinds: ["fact", "decision", "convention", "problem", "preference"]
                .map(String::from)
                .to_vec(),
            merge_overlap: 0.6,
            merge_similarity: 0.9,
            supersede_overlap: 0.5,
        }
    }
}

/// The local server `agent-memory serve` runs: HTTP API, viewer, MCP over HTTP, worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// The address to listen on; anything but a loopback address must be set on purpose.
    pub bind: String,
    /// The port to listen on; 0 takes any free port.
    pub port: u16,
    /// Seconds between the worker's passes (spool drain, distil, embed).
    pub work_interval_seconds: u64,
    /// Whether the session-start hook starts the server, detached, when it is not running.
    pub autostart: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            bind: "127.0.0.1".into(),
            port: 37777,
            work_interval_seconds: 30,
            autostart: false,
        }
    }
}

/// The Obsidian vault reviewed memories live in as notes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VaultConfig {
    /// The vault's directory (`~` for the home directory); empty: no vault.
    pub path: String,
    /// The folder inside the vault that agent-memory keeps.
    pub folder: String,
}

impl Default for VaultConfig {
    fn default() -> Self {
        VaultConfig { path: String::new(), folder: "agent-memory".into() }
    }
}

impl VaultConfig {
    /// The folder agent-memory keeps, when a vault is configured.
    pub fn root(&self) -> Option<PathBuf> {
        let path = self.path.trim();
        if path.is_empty() {
            return None;
        }
        let path = match path.strip_prefix("~/") {
            Some(rest) => PathBuf::from(std::env::var_os("HOME")?).join(rest),
            None => PathBuf::from(path),
        };
        Some(if self.folder.is_empty() { path } else { path.join(&self.folder) })
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
    #[error("cannot change {path}: {source}")]
    Edit { path: PathBuf, source: EditError },
    #[error("cannot write {path}: {source}; check that its directory is writable")]
    Write { path: PathBuf, source: std::io::Error },
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
            Ok(text) => text.parse::<toml::Table>().map_err(|e| {
                // Where in the file, so a person can go straight to it.
                let line = e
                    .span()
                    .and_then(|span| text.get(..span.start))
                    .map(|before| before.matches('\n').count() + 1);
                ConfigError::Invalid {
                    path: path.to_owned(),
                    message: match line {
                        Some(line) => format!("line {line}: {}", e.message()),
                        None => e.message().to_owned(),
                    },
                }
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

/// Why a key cannot be set by a text edit.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error(
        "the file is not valid TOML: {message}; fix it first (compare with `agent-memory config default`)"
    )]
    Unparsable { message: String },
    #[error(
        "cannot set `{section}.{key}` without rewriting your formatting (it is written as an \
         inline table, a dotted key or a multi-line value); set `{key} = {value}` under \
         `[{section}]` by hand"
    )]
    Unsupported { section: String, key: String, value: String },
}

/// Sets `key` in `[section]` of a TOML file's text to `value`, changing nothing else.
///
/// It replaces the value of an existing `key = …` line inside `[section]` (keeping its
/// indentation and any trailing comment), or adds `key = value` after the last setting of an
/// existing `[section]` (right under its header if it has none), or appends a new `[section]` at the end. The file's line ending (LF or
/// CRLF) is kept. The result is parsed and compared with the original plus this one change; any
/// layout the edit does not understand is refused rather than guessed at.
pub fn set_key(
    text: &str,
    section: &str,
    key: &str,
    value: &toml::Value,
) -> Result<String, EditError> {
    let before = text
        .parse::<toml::Table>()
        .map_err(|e| EditError::Unparsable { message: e.message().to_owned() })?;
    let value_text = value.to_string();
    let unsupported = || EditError::Unsupported {
        section: section.to_owned(),
        key: key.to_owned(),
        value: value_text.clone(),
    };
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();

    // Where `[section]` starts and ends (as line indices), and the key's line inside it.
    // `last` is the section's last line that is neither blank nor a comment: a new key goes
    // after it, so keys keep the order they were set in and comments before the next header
    // stay with that header.
    let mut last = None;
    let mut key_line = None;
    let mut current: Option<String> = None;
    for (i, line) in lines.iter().enumerate() {
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(name) = header_name(content) {
            if name == section && last.is_none() {
                last = Some(i);
            }
            current = Some(name);
            continue;
        }
        if current.as_deref() != Some(section) {
            continue;
        }
        let trimmed = content.trim();
        if !trimmed.is_empty() && !trimmed.starts_with('#') {
            last = Some(i);
        }
        if key_line.is_none() && line_key(content) == Some(key) {
            key_line = Some(i);
        }
    }

    let mut out = String::with_capacity(text.len() + value_text.len() + 32);
    match (last, key_line) {
        (_, Some(i)) => {
            let content = lines[i].trim_end_matches(['\n', '\r']);
            let ending = &lines[i][content.len()..];
            let (head, rest) = content.split_once('=').ok_or_else(unsupported)?;
            let value_start = rest.len() - rest.trim_start().len();
            let tail = value_tail(&rest[value_start..]).ok_or_else(unsupported)?;
            lines[..i].iter().for_each(|l| out.push_str(l));
            out.push_str(head);
            out.push('=');
            out.push_str(&rest[..value_start]);
            out.push_str(&value_text);
            out.push_str(tail);
            out.push_str(ending);
            lines[i + 1..].iter().for_each(|l| out.push_str(l));
        }
        (Some(h), None) => {
            lines[..=h].iter().for_each(|l| out.push_str(l));
            if !lines[h].ends_with('\n') {
                out.push_str(eol);
            }
            out.push_str(&format!("{key} = {value_text}{eol}"));
            lines[h + 1..].iter().for_each(|l| out.push_str(l));
        }
        (None, None) => {
            out.push_str(text);
            if !text.is_empty() {
                if !text.ends_with('\n') {
                    out.push_str(eol);
                }
                out.push_str(eol);
            }
            out.push_str(&format!("[{section}]{eol}{key} = {value_text}{eol}"));
        }
    }

    // The check that makes a line-based edit safe: the new file must mean exactly the old one
    // with this key set. Multi-line strings, inline tables and dotted keys fail it and are refused.
    let mut expected = before;
    let table = expected
        .entry(section.to_owned())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let toml::Value::Table(table) = table else { return Err(unsupported()) };
    table.insert(key.to_owned(), value.clone());
    match out.parse::<toml::Table>() {
        Ok(after) if after == expected => Ok(out),
        _ => Err(unsupported()),
    }
}

/// The table name of a `[name]` header line (with an optional comment), or `None` for any other
/// line. `[[array]]` headers count too: they end the section before them.
fn header_name(line: &str) -> Option<String> {
    let line = line.trim();
    let inner = line.strip_prefix('[')?;
    let (inner, rest) = match inner.strip_prefix('[') {
        Some(array) => array.split_once("]]")?,
        None => inner.split_once(']')?,
    };
    let rest = rest.trim_start();
    if !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    // A header's name is dotted keys; quoted parts are unquoted so `["distil"]` matches too.
    let parts: Vec<String> = inner
        .split('.')
        .map(|p| p.trim().trim_matches(|c| c == '"' || c == '\'').to_owned())
        .collect();
    let valid = |p: &String| {
        !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    parts.iter().all(valid).then(|| parts.join("."))
}

/// The bare or quoted key of a `key = value` line, or `None`.
fn line_key(line: &str) -> Option<&str> {
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    let unquoted = key
        .strip_prefix('"')
        .and_then(|k| k.strip_suffix('"'))
        .or_else(|| key.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
        .unwrap_or(key);
    Some(unquoted)
}

/// What follows a one-line value (white space and a comment, or nothing); `None` when the
/// value does not end on this line.
fn value_tail(rest: &str) -> Option<&str> {
    let parses = |value: &str| format!("v = {value}").parse::<toml::Table>().is_ok();
    if !parses(rest) {
        return None;
    }
    // The first `#` that is not inside the value starts the comment: before it, the value parses.
    for (at, _) in rest.match_indices('#') {
        let value = rest[..at].trim_end();
        if !value.is_empty() && parses(value) {
            return Some(&rest[value.len()..]);
        }
    }
    let value = rest.trim_end();
    Some(&rest[value.len()..])
}

/// Sets each `(section, key, value)` in the configuration file at `path` with [`set_key`] and
/// writes it atomically; a missing file is created. Returns whether the file changed.
///
/// The result must still be a valid configuration, so a typo'd key is refused here rather
/// than breaking every later command.
pub fn set_in_file(path: &Path, edits: &[(&str, &str, toml::Value)]) -> Result<bool, ConfigError> {
    let before = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(ConfigError::Read { path: path.to_owned(), source }),
    };
    let mut text = before.clone();
    for (section, key, value) in edits {
        text = set_key(&text, section, key, value)
            .map_err(|source| ConfigError::Edit { path: path.to_owned(), source })?;
    }
    let invalid =
        |message: &str| ConfigError::Invalid { path: path.to_owned(), message: message.to_owned() };
    let table = text.parse::<toml::Table>().map_err(|e| invalid(e.message()))?;
    Config::deserialize(toml::Value::Table(table)).map_err(|e| invalid(e.message()))?;
    if text == before {
        return Ok(false);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::fsutil::ensure_private_dir(dir)
            .map_err(|source| ConfigError::Write { path: path.to_owned(), source })?;
    }
    crate::fsutil::write_atomic(path, text.as_bytes())
        .map_err(|source| ConfigError::Write { path: path.to_owned(), source })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_does_not_parse_is_reported_with_its_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        crate::fsutil::write_atomic(&path, b"[search]\nlimit = 5\n\n[search]\nlimit = 6\n")
            .expect("w");
        let err = Config::load_with(&path, []).expect_err("duplicate table").to_string();
        assert!(err.contains("line 4:"), "{err}");
        assert!(err.contains("agent-memory config default"), "{err}");
    }

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

    #[test]
    fn distil_section_defaults_and_overrides() {
        let distil = Config::default().distil;
        assert_eq!(distil.mode, crate::distil::mode::DEFAULT_MODE);
        assert_eq!(distil.language, "en");
        assert_eq!(
            (distil.silence_minutes, distil.lease_seconds, distil.auto_work),
            (30, 120, true)
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        let text = "[distil]\nmode = \"code-quiet\"\nlanguage = \"zh-CN\"\nauto_work = false\n";
        crate::fsutil::write_atomic(&path, text.as_bytes()).expect("w");
        let env = [("AGENT_MEMORY_DISTIL__SILENCE_MINUTES".to_owned(), "5".to_owned())];
        let distil = Config::load_with(&path, env).expect("loads").distil;
        assert_eq!(distil.mode, "code-quiet");
        assert_eq!(distil.language, "zh-CN");
        assert!(!distil.auto_work);
        assert_eq!(distil.silence_minutes, 5);
        assert_eq!(distil.lease_seconds, 120, "untouched keys keep defaults");
        crate::fsutil::write_atomic(&path, "[distil]\nmodes = \"x\"\n".as_bytes()).expect("w");
        let err = Config::load_with(&path, []).expect_err("unknown key");
        assert!(err.to_string().contains("unknown field `modes`"), "{err}");
    }

    fn mode_value(name: &str) -> toml::Value {
        toml::Value::String(name.to_owned())
    }

    #[test]
    fn set_key_edits_one_line_and_keeps_the_rest() {
        // (what the case shows, file before, file after setting `[distil] mode = "quiet"`)
        let cases: &[(&str, &str, &str)] = &[
            ("empty file", "", "[distil]\nmode = \"quiet\"\n"),
            (
                "no section: appended after a blank line, comments kept",
                "# mine\n[search]\nlimit = 5 # fewer\n",
                "# mine\n[search]\nlimit = 5 # fewer\n\n[distil]\nmode = \"quiet\"\n",
            ),
            (
                "no final newline",
                "[search]\nlimit = 5",
                "[search]\nlimit = 5\n\n[distil]\nmode = \"quiet\"\n",
            ),
            (
                "section without the key: added after its last setting",
                "[distil]\n# quick\nsilence_minutes = 5\n\n[log]\nlevel = \"info\"\n",
                "[distil]\n# quick\nsilence_minutes = 5\nmode = \"quiet\"\n\n[log]\nlevel = \"info\"\n",
            ),
            (
                "header on the last line without a newline",
                "[distil]",
                "[distil]\nmode = \"quiet\"\n",
            ),
            (
                "key replaced; indentation, spacing and comment kept",
                "[distil]\n  mode   =  \"code\"   # was code\nlanguage = \"en\"\n",
                "[distil]\n  mode   =  \"quiet\"   # was code\nlanguage = \"en\"\n",
            ),
            (
                "a # inside the old value is not a comment",
                "[distil]\nmode = 'a#b' # c\n",
                "[distil]\nmode = \"quiet\" # c\n",
            ),
            (
                "the same key in another section is not touched",
                "[other]\nmode = \"x\"\n[distil]\nlanguage = \"en\"\n[more]\nmode = 1\n",
                "[other]\nmode = \"x\"\n[distil]\nlanguage = \"en\"\nmode = \"quiet\"\n[more]\nmode = 1\n",
            ),
            (
                "last setting without a final newline",
                "[distil]\nlanguage = \"en\"",
                "[distil]\nlanguage = \"en\"\nmode = \"quiet\"\n",
            ),
            (
                "a multi-line array ends the section's settings at its closing bracket",
                "[distil]\nlist = [\n  \"a\",\n]\n# next\n[log]\n",
                "[distil]\nlist = [\n  \"a\",\n]\nmode = \"quiet\"\n# next\n[log]\n",
            ),
            (
                "a commented-out key is not the key",
                "[distil]\n# mode = \"code\"\n",
                "[distil]\nmode = \"quiet\"\n# mode = \"code\"\n",
            ),
            (
                "a sub-table is another section",
                "[distil.extra]\nmode = \"x\"\n",
                "[distil.extra]\nmode = \"x\"\n\n[distil]\nmode = \"quiet\"\n",
            ),
            (
                "a header with a comment and a quoted name",
                "[ \"distil\" ] # mine\nmode = \"code\"\n",
                "[ \"distil\" ] # mine\nmode = \"quiet\"\n",
            ),
            (
                "CRLF files stay CRLF",
                "# c\r\n[distil]\r\nmode = \"code\" # x\r\nlanguage = \"en\"\r\n",
                "# c\r\n[distil]\r\nmode = \"quiet\" # x\r\nlanguage = \"en\"\r\n",
            ),
            (
                "CRLF, section without the key",
                "[distil]\r\nlanguage = \"en\"\r\n",
                "[distil]\r\nlanguage = \"en\"\r\nmode = \"quiet\"\r\n",
            ),
            (
                "CRLF, no section",
                "[log]\r\nlevel = \"warn\"\r\n",
                "[log]\r\nlevel = \"warn\"\r\n\r\n[distil]\r\nmode = \"quiet\"\r\n",
            ),
        ];
        for (what, before, after) in cases {
            let edited = set_key(before, "distil", "mode", &mode_value("quiet"))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(edited, *after, "{what}");
            // Setting the same value again changes nothing.
            let again = set_key(&edited, "distil", "mode", &mode_value("quiet")).expect("again");
            assert_eq!(again, edited, "{what}: idempotent");
        }
    }

    #[test]
    fn set_key_refuses_layouts_it_cannot_edit_faithfully() {
        let cases: &[(&str, &str)] = &[
            ("inline table", "distil = { language = \"en\" }\n"),
            ("dotted key at the top", "distil.language = \"en\"\n"),
            ("multi-line value", "[distil]\nmode = \"\"\"\ncode\"\"\"\n"),
            ("not a table", "distil = 3\n"),
        ];
        for (what, before) in cases {
            let err = set_key(before, "distil", "mode", &mode_value("quiet")).expect_err(what);
            assert!(matches!(err, EditError::Unsupported { .. }), "{what}: {err}");
        }
        let err =
            set_key("[distil]\nmode = \"\"\"\ncode\"\"\"\n", "distil", "mode", &mode_value("q"))
                .expect_err("multi-line");
        expect_test::expect![[r#"cannot set `distil.mode` without rewriting your formatting (it is written as an inline table, a dotted key or a multi-line value); set `mode = "q"` under `[distil]` by hand"#]]
            .assert_eq(&err.to_string());
        let err = set_key("[distil\n", "distil", "mode", &mode_value("q")).expect_err("bad toml");
        assert!(matches!(err, EditError::Unparsable { .. }), "{err}");
    }

    #[test]
    fn set_in_file_creates_edits_and_validates() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("home").join("config.toml");
        let edits = [
            ("distil", "mode", mode_value("code-quiet")),
            ("distil", "language", mode_value("zh-CN")),
        ];
        assert!(set_in_file(&path, &edits).expect("creates the file"));
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text, "[distil]\nmode = \"code-quiet\"\nlanguage = \"zh-CN\"\n");
        assert!(!set_in_file(&path, &edits).expect("same again"), "nothing to change");
        let config = Config::load_with(&path, []).expect("loads");
        assert_eq!(
            (config.distil.mode.as_str(), config.distil.language.as_str()),
            ("code-quiet", "zh-CN")
        );

        let original =
            "# my settings\n[search]\nlimit = 5\n\n[distil]\nmode = \"code\" # default\n";
        crate::fsutil::write_atomic(&path, original.as_bytes()).expect("w");
        assert!(
            set_in_file(&path, &[("distil", "mode", mode_value("meeting-notes"))]).expect("edits")
        );
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text, original.replace("\"code\"", "\"meeting-notes\""));

        // A key the configuration does not know is refused and the file is left alone.
        let err =
            set_in_file(&path, &[("distil", "colour", mode_value("x"))]).expect_err("unknown");
        assert!(err.to_string().contains("unknown field `colour`"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
    }
}
