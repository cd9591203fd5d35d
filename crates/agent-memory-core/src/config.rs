//! Configuration: defaults → `config.toml` in the home → `AGENT_MEMORY_*` environment.
//!
//! The defaults live in `default.toml` beside this file, fully commented, embedded in the binary
//! and printed by `agent-memory config default`; a test keeps them equal to [`Config::default`],
//! which is what the hook path uses so that it never parses the embedded file.
//!
//! It also owns the one way the CLI changes that file ([`set_in_file`], for `agent-memory mode
//! use` and `agent-memory model install`/`remove`): an edit of single keys through `toml_edit`
//! that keeps the user's comments, order and other sections byte for byte, checked by parsing
//! the result (as TOML and as configuration) before it is written.
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
    pub team: TeamConfig,
    pub health: HealthConfig,
    /// `[[reactions]]`: what runs when an observation or memory of interest lands.
    pub reactions: Vec<ReactionConfig>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CaptureConfig {
    pub deadline_ms: u64,
    /// How long the agent gives a hook run; 0 for the timeout `install` wires for the agent.
    pub agent_timeout_ms: u64,
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
            agent_timeout_ms: 0,
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
    /// The installed learned sparse model that orders what search found; empty for none.
    pub sparse_model: String,
    pub candidates: usize,
    /// The candidates each channel brings when the sparse model orders them.
    pub sparse_candidates: usize,
    /// Unset: the model's own floor, else [`crate::store::search::Ranking::default`]'s.
    pub similarity_floor: Option<f32>,
    pub weight_relevance: f64,
    pub weight_importance: f64,
    pub weight_freshness: f64,
    pub weight_hits: f64,
    pub half_life_days: f64,
    /// The relevance levers' weights, for tuning; unset, [`crate::store::search::Ranking`]'s
    /// defaults, which the benchmarks chose.
    pub neighbour_weight: Option<f64>,
    pub answer_weight: Option<f64>,
    pub session_weight: Option<f64>,
    pub session_text_weight: Option<f64>,
    pub named_weight: Option<f64>,
    pub vector_share: Option<f64>,
    pub sparse_share: Option<f64>,
}

impl Default for SearchConfig {
    fn default() -> Self {
        let ranking = crate::store::search::Ranking::default();
        SearchConfig {
            limit: 20,
            max_query_terms: 12,
            semantic_recall: true,
            model: String::new(),
            sparse_model: String::new(),
            candidates: ranking.candidates,
            sparse_candidates: ranking.sparse_candidates,
            similarity_floor: None,
            weight_relevance: ranking.weight_relevance,
            weight_importance: ranking.weight_importance,
            weight_freshness: ranking.weight_freshness,
            weight_hits: ranking.weight_hits,
            half_life_days: ranking.half_life_days,
            neighbour_weight: None,
            answer_weight: None,
            session_weight: None,
            session_text_weight: None,
            named_weight: None,
            vector_share: None,
            sparse_share: None,
        }
    }
}

impl SearchConfig {
    /// How search ranks, as configured. `model_floor` is the similarity floor the embedding
    /// model in use comes with, if any; a configured `similarity_floor` wins over it.
    pub fn ranking(&self, model_floor: Option<f32>) -> crate::store::search::Ranking {
        let built_in = crate::store::search::Ranking::default();
        let default = built_in.similarity_floor;
        crate::store::search::Ranking {
            neighbour_weight: self.neighbour_weight.unwrap_or(built_in.neighbour_weight),
            answer_weight: self.answer_weight.unwrap_or(built_in.answer_weight),
            session_weight: self.session_weight.unwrap_or(built_in.session_weight),
            session_text_weight: self.session_text_weight.unwrap_or(built_in.session_text_weight),
            named_weight: self.named_weight.unwrap_or(built_in.named_weight),
            vector_share: self.vector_share.or(built_in.vector_share),
            sparse_share: self.sparse_share.unwrap_or(built_in.sparse_share),
            candidates: self.candidates,
            sparse_candidates: self.sparse_candidates,
            similarity_floor: self.similarity_floor.or(model_floor).unwrap_or(default),
            weight_relevance: self.weight_relevance,
            weight_importance: self.weight_importance,
            weight_freshness: self.weight_freshness,
            weight_hits: self.weight_hits,
            half_life_days: self.half_life_days,
            ..crate::store::search::Ranking::default()
        }
    }

    /// The embedding model search and the worker use, if vectors are on and one is chosen.
    pub fn embedding_model(&self) -> Option<&str> {
        (self.semantic_recall && !self.model.trim().is_empty()).then_some(self.model.trim())
    }

    /// The learned sparse model search and the worker use, if models are on and one is chosen.
    pub fn sparse_model(&self) -> Option<&str> {
        let name = self.sparse_model.trim();
        (self.semantic_recall && !name.is_empty()).then_some(name)
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
    /// Whether the session start also shows the person one line of what was loaded (and the
    /// viewer's address while `serve` runs), in agents that show hook messages to the user.
    pub sign: bool,
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
            sign: true,
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
    /// What agents remember or forget through their memory tools counts as the person's own
    /// (otherwise it waits for review, and an agent forgets only what it wrote).
    pub trust_agents: bool,
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
            trust_agents: false,
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

/// `[health]`: the limits of the health check (`agent-memory doctor --health`, the daily
/// timer `install --schedule` adds, and serve's worker once a day); past any, the check fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HealthConfig {
    pub max_store_mb: u64,
    pub max_growth_mb_per_day: u64,
    /// The hooks' error rate over the last day (0.05: 5%), judged from this many runs on.
    pub max_hook_error_rate: f64,
    pub min_hook_runs: u64,
    pub max_hook_p99_ms: u64,
    pub max_spool_events: usize,
    pub max_sessions_to_distil: u64,
    /// Items a search model has yet to encode.
    pub max_items_to_encode: u64,
}

impl Default for HealthConfig {
    fn default() -> Self {
        HealthConfig {
            max_store_mb: 4096,
            max_growth_mb_per_day: 512,
            max_hook_error_rate: 0.05,
            min_hook_runs: 20,
            max_hook_p99_ms: 250,
            max_spool_events: 500,
            max_sessions_to_distil: 500,
            max_items_to_encode: 20_000,
        }
    }
}

/// One `[[reactions]]` entry: a match over what the work pass distils or promotes, and one
/// action (a command, a line appended to a file, or a POST) that the work pass and serve's
/// worker run once per matching item; never the hook (see [`crate::react`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReactionConfig {
    /// How `status`, the log and `reactions` name it; unique.
    pub name: String,
    /// What it watches: `observation`, `memory` (a memory once it is active), or both.
    pub on: Vec<String>,
    /// Observation types or memory kinds (`bugfix`, `decision`, `security_alert`, `fact`…);
    /// empty: any.
    pub types: Vec<String>,
    /// Any of these concepts (observations); empty: any.
    pub concepts: Vec<String>,
    /// Any of these words in its text, ignoring case; empty: any.
    pub words: Vec<String>,
    /// Projects (names or keys); empty: any.
    pub projects: Vec<String>,
    /// Agents (for memory, the agent it was told to or that made it); empty: any.
    pub agents: Vec<String>,
    /// Run this program with these arguments, never through a shell; the item arrives as JSON
    /// on its standard input.
    pub run: Vec<String>,
    /// Or append one line about the item to this file (`~` is the home directory).
    pub append: String,
    /// Or POST the item as JSON to this URL (http or https).
    pub post: String,
    /// How long the action may take before it is stopped and counted as failed.
    pub timeout_ms: u64,
}

impl Default for ReactionConfig {
    fn default() -> Self {
        ReactionConfig {
            name: String::new(),
            on: vec!["observation".into(), "memory".into()],
            types: Vec::new(),
            concepts: Vec::new(),
            words: Vec::new(),
            projects: Vec::new(),
            agents: Vec::new(),
            run: Vec::new(),
            append: String::new(),
            post: String::new(),
            timeout_ms: 10_000,
        }
    }
}

/// Team memory: the shared PostgreSQL database reviewed memory is synced with (`agent-memory
/// team`). Only the work pass, serve's worker and `team sync` read it; never the hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TeamConfig {
    /// The database, libpq style (`postgres://member@host/db?sslmode=require`); empty: no team.
    pub url: String,
    /// What this machine calls the member in `team status`; empty: git's `user.name`, else
    /// the login name. Teammates see the name the server gives the role.
    pub member: String,
    /// The name of this machine on the server; empty: the host name.
    pub machine: String,
    /// Projects whose memory is not shared (keys, names or roots).
    pub exclude_projects: Vec<String>,
    /// Whether global (L3) memory (preferences, cross-project conventions) is shared too.
    pub share_global: bool,
    /// Teammates (by their shown name, or `*`) whose global memory reaches this member's
    /// projects; empty: none.
    pub teammates_global: Vec<String>,
    /// Projects (keys, names or roots) whose observations and session summaries are shared
    /// too; `exclude_projects` wins.
    pub share_observations: Vec<String>,
    /// Minutes between the syncs of the work pass and serve's worker; 0: only `team sync`.
    pub sync_interval_minutes: u64,
    /// Memories pushed or pulled per database transaction.
    pub batch_size: usize,
}

impl Default for TeamConfig {
    fn default() -> Self {
        TeamConfig {
            url: String::new(),
            member: String::new(),
            machine: String::new(),
            exclude_projects: Vec::new(),
            share_global: false,
            teammates_global: Vec::new(),
            share_observations: Vec::new(),
            sync_interval_minutes: 10,
            batch_size: 200,
        }
    }
}

impl TeamConfig {
    /// Whether a team database is configured.
    pub fn enabled(&self) -> bool {
        !self.url.trim().is_empty()
    }

    /// Whether the global memory of the teammate shown as `member` reaches this member.
    pub fn takes_global_of(&self, member: &str) -> bool {
        self.teammates_global.iter().any(|name| name == "*" || name.trim() == member)
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
        let table = match std::fs::read_to_string(path) {
            Ok(text) => text.parse::<toml::Table>().map_err(|e| {
                // Where in the file, so a person can go straight to it.
                let line = e
                    .span()
                    .and_then(|span| text.get(..span.start))
                    .map(|before| before.matches('\n').count() + 1);
                ConfigError::Invalid {
                    path: path.to_owned(),
                    message: match line {
                        Some(line) => format!("line {line}: {}", plain_words(e.message())),
                        None => plain_words(e.message()),
                    },
                }
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
            Err(source) => return Err(ConfigError::Read { path: path.to_owned(), source }),
        };
        Config::from_table(path, table, env)
    }

    /// The configuration `table` (read from `path`) makes, with the environment over it.
    fn from_table(
        path: &Path,
        mut table: toml::Table,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        // A file that parses but does not fit is read again from its text, whose errors know
        // the line they are on.
        let invalid_file = |e: toml::de::Error| {
            let located = std::fs::read_to_string(path)
                .ok()
                .and_then(|text| toml::from_str::<Config>(&text).err().map(|e| (text, e)));
            let message = match &located {
                Some((text, e)) => match e.span().and_then(|span| text.get(..span.start)) {
                    Some(before) => format!(
                        "line {}: {}",
                        before.matches('\n').count() + 1,
                        plain_words(e.message())
                    ),
                    None => plain_words(e.message()),
                },
                None => plain_words(e.message()),
            };
            ConfigError::Invalid { path: path.to_owned(), message }
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
            message: plain_words(e.message()),
        })
    }
}

impl Config {
    /// [`Config::load`], keeping every setting that fits when some do not: a key the
    /// configuration does not know, or a value of the wrong kind, is left out (and named in the
    /// problems returned, with why) rather than throwing the whole file away. A file that is
    /// not TOML at all, or that cannot be read, gives the defaults and that problem.
    pub fn load_lenient(path: &Path) -> (Config, Vec<String>) {
        let vars: Vec<(String, String)> =
            std::env::vars().filter(|(k, _)| k.starts_with(ENV_PREFIX)).collect();
        Config::load_lenient_with(path, vars)
    }

    /// [`Config::load_lenient`] with the environment given, for tests.
    pub fn load_lenient_with(
        path: &Path,
        env: impl IntoIterator<Item = (String, String)> + Clone,
    ) -> (Config, Vec<String>) {
        let err = match Config::load_with(path, env.clone()) {
            Ok(config) => return (config, Vec::new()),
            Err(err) => err,
        };
        // Only a file that parses but does not fit is mended; the rest is as before.
        let defaults = |err: &ConfigError| {
            (Config::default(), vec![format!("{err}; every setting is the default until then")])
        };
        let ConfigError::Invalid { .. } = &err else {
            return defaults(&err);
        };
        let Ok(mut table) = std::fs::read_to_string(path)
            .map_err(drop)
            .and_then(|t| t.parse::<toml::Table>().map_err(drop))
        else {
            return defaults(&err);
        };
        let mut dropped = Vec::new();
        prune(&mut Vec::new(), &mut table, &mut dropped);
        // The file's own error names the first culprit by its line; the rest by their keys.
        let problems: Vec<String> = match dropped.as_slice() {
            [] => Vec::new(),
            [(key, _)] => vec![format!("{err}; `{key}` is left out, every other setting applies")],
            [(first, _), rest @ ..] => {
                let others: Vec<String> =
                    rest.iter().map(|(key, why)| format!("`{key}` ({why})")).collect();
                vec![format!(
                    "{err}; `{first}` is left out, and so are {}; every other setting applies",
                    others.join(", ")
                )]
            }
        };
        match Config::from_table(path, table, env) {
            Ok(config) if !problems.is_empty() => (config, problems),
            _ => defaults(&err),
        }
    }
}

/// Removes from `table` (at `path` in the configuration) every key whose value does not fit,
/// each tried alone; a section is tried whole first and entered only when it does not fit.
fn prune(path: &mut Vec<String>, table: &mut toml::Table, dropped: &mut Vec<(String, String)>) {
    let keys: Vec<String> = table.keys().cloned().collect();
    for key in keys {
        let Some(value) = table.get(&key).cloned() else { continue };
        path.push(key.clone());
        if let Err(why) = fits(path, value.clone()) {
            let mut keep = false;
            if let toml::Value::Table(mut inner) = value {
                prune(path, &mut inner, dropped);
                keep = !inner.is_empty() && fits(path, toml::Value::Table(inner.clone())).is_ok();
                if keep {
                    table.insert(key.clone(), toml::Value::Table(inner));
                }
            }
            if !keep {
                table.remove(&key);
                if !dropped
                    .iter()
                    .any(|(name, _)| name.starts_with(&format!("{}.", path.join("."))))
                {
                    dropped.push((path.join("."), why));
                }
            }
        }
        path.pop();
    }
}

/// Whether `value` at `path`, and nothing else, makes a configuration.
fn fits(path: &[String], value: toml::Value) -> Result<(), String> {
    let mut table = toml::Table::new();
    set_nested(&mut table, path, value);
    Config::deserialize(toml::Value::Table(table)).map(drop).map_err(|e| plain_words(e.message()))
}

/// A TOML or serde message in a person's words: what was found and what belongs there, never
/// a Rust type name ("expected usize").
pub fn plain_words(message: &str) -> String {
    let message = message.trim().trim_end_matches('.');
    let message = message.lines().next().unwrap_or_default();
    if let Some(rest) = message.strip_prefix("invalid type: ")
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        return format!("{} where {} belongs", found_words(found), expected_words(expected));
    }
    if let Some(rest) = message.strip_prefix("invalid value: ")
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        return format!(
            "{} does not fit here; {} belongs here",
            found_words(found),
            expected_words(expected)
        );
    }
    if let Some(rest) = message.strip_prefix("unknown field ")
        && let Some((field, known)) = rest.split_once(", expected one of ")
    {
        return format!(
            "{field} is no setting here; the settings here are {}",
            known.replace('`', "")
        );
    }
    if let Some(rest) = message.strip_prefix("unknown field ")
        && let Some((field, known)) = rest.split_once(", expected ")
    {
        return format!(
            "{field} is no setting here; the one setting here is {}",
            known.replace('`', "")
        );
    }
    if let Some(rest) = message.strip_prefix("unknown variant ")
        && let Some((value, known)) = rest.split_once(", expected one of ")
    {
        return format!("{value} is not one of the choices: {}", known.replace('`', ""));
    }
    if let Some(field) = message.strip_prefix("missing field ") {
        return format!("{field} is missing");
    }
    message.to_owned()
}

/// What serde says it found, in words: `string "ten"` is `the text "ten"`.
fn found_words(found: &str) -> String {
    let value = |rest: &str| rest.trim().trim_matches('`').to_owned();
    if let Some(rest) = found.strip_prefix("string ") {
        return format!("the text {}", rest.trim());
    }
    for prefix in ["integer ", "floating point "] {
        if let Some(rest) = found.strip_prefix(prefix) {
            return format!("the number {}", value(rest));
        }
    }
    if let Some(rest) = found.strip_prefix("boolean ") {
        return value(rest);
    }
    match found {
        "sequence" => "a list".to_owned(),
        "map" => "a table".to_owned(),
        other => other.to_owned(),
    }
}

/// What serde says belongs, in words: `usize` is `a whole number of 0 or more`.
fn expected_words(expected: &str) -> String {
    match expected.trim() {
        "usize" | "u64" | "u32" | "u16" | "u8" => "a whole number of 0 or more".to_owned(),
        "i64" | "i32" | "i16" | "i8" | "isize" => "a whole number".to_owned(),
        "f64" | "f32" => "a number".to_owned(),
        "bool" | "a boolean" => "true or false".to_owned(),
        "a string" | "string" => "text in quotes".to_owned(),
        "a sequence" => "a list in [ ]".to_owned(),
        other if other.starts_with("struct ") || other == "a map" => "a table".to_owned(),
        other => other.replace('`', ""),
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

/// Why a key cannot be set in the user's file.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error(
        "the file is not valid TOML: {message}; fix it first (compare with `agent-memory config default`)"
    )]
    Unparsable { message: String },
    #[error(
        "cannot set `{section}.{key}`: {reason}; set `{key} = {value}` under `[{section}]` by hand"
    )]
    Unsupported { section: String, key: String, value: String, reason: String },
}

/// Sets `key` in the table `section` (dotted for a sub-table: `inject.weights`) of a TOML
/// file's text to `value`, changing nothing else.
///
/// The file goes through `toml_edit`, which keeps comments, blank lines, key order, quoting and
/// the spelling of every other value. An existing value is replaced in place with its
/// surrounding spaces and trailing comment; a new key goes after the table's last setting,
/// whether the table is a `[section]`, an inline table or dotted keys; a missing table is
/// appended at the end after a blank line. A value that already means `value` is left as the
/// user spelled it. A file whose lines all end in CRLF stays CRLF. The result is parsed and
/// compared with the original plus this one change, so an edit that would mean anything else
/// is refused rather than written.
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
    let unsupported = |reason: String| EditError::Unsupported {
        section: section.to_owned(),
        key: key.to_owned(),
        value: value_text.clone(),
        reason,
    };
    let path: Vec<&str> = section.split('.').collect();
    let mut expected = before.clone();
    let slot = expected_table(&mut expected, &path).map_err(&unsupported)?;
    if slot.get(key) == Some(value) {
        // Already so: keep the user's spelling (`'quiet'` stays single-quoted).
        return Ok(text.to_owned());
    }
    slot.insert(key.to_owned(), value.clone());

    // toml_edit ends every line it writes with `\n`; a CRLF file is edited as LF and turned
    // back. A file that mixes both is edited as it is, so its LF lines are not rewritten.
    let crlf = text.contains("\r\n") && !text.replace("\r\n", "").contains('\n');
    let source = if crlf { text.replace("\r\n", "\n") } else { text.to_owned() };
    let mut doc = source
        .parse::<toml_edit::DocumentMut>()
        .map_err(|e| EditError::Unparsable { message: e.message().to_owned() })?;
    let new_value = value_text
        .parse::<toml_edit::Value>()
        .map_err(|e| unsupported(format!("{value_text} is not a TOML value ({})", e.message())))?;
    let table = edit_table(doc.as_table_mut(), &path).map_err(&unsupported)?;
    if let Some(inline) = table.as_inline_table_mut()
        && !inline.contains_key(key)
    {
        // The space before `}` is the last value's suffix: it moves to the new last value, so
        // `{ a = 1 }` becomes `{ a = 1, b = 2 }` and not `{ a = 1 , b = 2}`.
        let mut new_value = new_value;
        if let Some((_, last)) = inline.iter_mut().last() {
            let suffix = last.decor().suffix().cloned();
            last.decor_mut().set_suffix("");
            if let Some(suffix) = suffix {
                new_value.decor_mut().set_suffix(suffix);
            }
        }
        inline.insert(key, new_value);
    } else if let Some(table) = table.as_table_like_mut() {
        match table.get_mut(key) {
            Some(toml_edit::Item::Value(old)) if !old.is_inline_table() => {
                // The old value's spaces and trailing comment belong to the line, not the value.
                let decor = old.decor().clone();
                *old = new_value;
                *old.decor_mut() = decor;
            }
            None | Some(toml_edit::Item::None) => {
                table.insert(key, toml_edit::Item::Value(new_value));
            }
            Some(_) => {
                return Err(unsupported(format!("`{section}.{key}` is a table, not a value")));
            }
        }
    }
    let mut out = doc.to_string();
    if crlf {
        out = out.replace('\n', "\r\n");
    }

    // The check that makes the edit safe: the new file must mean exactly the old one with this
    // key set.
    match out.parse::<toml::Table>() {
        Ok(after) if after == expected => Ok(out),
        _ => Err(unsupported("the edited file would change more than this key".to_owned())),
    }
}

/// The table at `path` in a parsed file, created when missing; the reason when a part of the
/// path is not a table.
fn expected_table<'t>(
    mut table: &'t mut toml::Table,
    path: &[&str],
) -> Result<&'t mut toml::Table, String> {
    for (depth, part) in path.iter().enumerate() {
        let entry = table
            .entry((*part).to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match entry {
            toml::Value::Table(inner) => inner,
            toml::Value::Array(_) => {
                return Err(format!("`{}` is an array of tables", path[..=depth].join(".")));
            }
            _ => return Err(format!("`{}` holds a value, not a table", path[..=depth].join("."))),
        };
    }
    Ok(table)
}

/// The table at `path` in the document being edited (a `[table]`, an inline table or dotted
/// keys), created when missing: only the last part gets a header of its own, the parts above
/// it stay implicit as a person would write them (`[a.b]`, not `[a]` then `[a.b]`).
fn edit_table<'d>(
    root: &'d mut toml_edit::Table,
    path: &[&str],
) -> Result<&'d mut toml_edit::Item, String> {
    let mut table: &mut dyn toml_edit::TableLike = root;
    for (depth, part) in path.iter().enumerate() {
        let leaf = depth + 1 == path.len();
        if table.get(part).is_none_or(toml_edit::Item::is_none) {
            let mut new = toml_edit::Table::new();
            new.set_implicit(!leaf);
            table.insert(part, toml_edit::Item::Table(new));
        }
        let name = || path[..=depth].join(".");
        let Some(item) = table.get_mut(part) else {
            return Err(format!("`{}` cannot be created", name()));
        };
        if item.is_array_of_tables() {
            return Err(format!("`{}` is an array of tables", name()));
        }
        if !item.is_table_like() {
            return Err(format!("`{}` holds a value, not a table", name()));
        }
        if leaf {
            return Ok(item);
        }
        table = match item.as_table_like_mut() {
            Some(inner) => inner,
            None => return Err(format!("`{}` holds a value, not a table", name())),
        };
    }
    Err("the table has no name".to_owned())
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
    // The user's own link into their dotfiles is written through, not refused.
    crate::fsutil::write_atomic(&crate::fsutil::own_link_target(path), text.as_bytes())
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
    fn a_value_that_does_not_fit_names_its_line_in_plain_words() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        let check = |text: &str, expect: expect_test::Expect| {
            crate::fsutil::write_atomic(&path, text.as_bytes()).expect("w");
            let err = Config::load_with(&path, []).expect_err(text).to_string();
            let shown = err.replace(&path.display().to_string(), "<config.toml>");
            assert!(!shown.contains("usize") && !shown.contains("invalid type"), "{shown}");
            expect.assert_eq(&shown);
        };
        check(
            "[capture]\ndeadline_ms = 300\n[search]\nlimit = \"ten\"\n",
            expect_test::expect![[
                r#"<config.toml> is not valid configuration: line 4: the text "ten" where a whole number of 0 or more belongs; compare with `agent-memory config default`"#
            ]],
        );
        check(
            "[search]\nlimit = -3\n",
            expect_test::expect![[
                r#"<config.toml> is not valid configuration: line 2: the number -3 does not fit here; a whole number of 0 or more belongs here; compare with `agent-memory config default`"#
            ]],
        );
        check(
            "[search]\nsemantic_recall = \"yes\"\n",
            expect_test::expect![[
                r#"<config.toml> is not valid configuration: line 2: the text "yes" where true or false belongs; compare with `agent-memory config default`"#
            ]],
        );
        check(
            "[serch]\nlimit = 3\n",
            expect_test::expect![
                "<config.toml> is not valid configuration: line 1: `serch` is no setting here; the settings here are capture, filter, search, distil, llm, inject, promote, vault, log, serve, team, health, reactions; compare with `agent-memory config default`"
            ],
        );
        check(
            "[search\nlimit = 3\n",
            expect_test::expect![[
                r#"<config.toml> is not valid configuration: line 1: unclosed table, expected `]`; compare with `agent-memory config default`"#
            ]],
        );
    }

    #[test]
    fn a_setting_that_does_not_fit_is_left_out_and_the_rest_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        let load = |text: &str, env: Vec<(String, String)>| {
            crate::fsutil::write_atomic(&path, text.as_bytes()).expect("write");
            Config::load_lenient_with(&path, env)
        };
        let (config, problems) = load(
            "[capture]\ndeadline_ms = 300\ncolour = 1\n[search]\nlimit = \"ten\"\n[serch]\nlimit = 3\n",
            vec![("AGENT_MEMORY_SEARCH__LIMIT".to_owned(), "7".to_owned())],
        );
        assert_eq!(config.capture.deadline_ms, 300, "{problems:?}");
        assert_eq!(config.search.limit, 7, "the environment still applies over what is kept");
        assert_eq!(problems.len(), 1, "{problems:?}");
        let problem = &problems[0];
        for key in ["`capture.colour`", "`search.limit`", "`serch`", "every other setting applies"]
        {
            assert!(problem.contains(key), "{key} in {problem}");
        }
        // Nothing to mend: no problem. Not TOML at all: the defaults, and why.
        assert_eq!(load("[capture]\ndeadline_ms = 300\n", Vec::new()).1, Vec::<String>::new());
        let (config, problems) = load("[search\nlimit = 3\n", Vec::new());
        assert_eq!(config, Config::default());
        assert!(problems[0].contains("line 1") && problems[0].contains("default"), "{problems:?}");
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
        assert!(err.to_string().contains("line 2: `modes` is no setting here"), "{err}");
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
                "[distil]\nmode = \"quiet\"\n[distil.extra]\nmode = \"x\"\n",
            ),
            (
                "a header with a comment and a quoted name",
                "[ \"distil\" ] # mine\nmode = \"code\"\n",
                "[ \"distil\" ] # mine\nmode = \"quiet\"\n",
            ),
            (
                "a multi-line value is replaced whole",
                "[distil]\nmode = \"\"\"\ncode\"\"\" # old\nlanguage = \"en\"\n",
                "[distil]\nmode = \"quiet\" # old\nlanguage = \"en\"\n",
            ),
            (
                "an inline table takes the key inline",
                "distil = { language = \"en\" } # mine\n",
                "distil = { language = \"en\", mode = \"quiet\" } # mine\n",
            ),
            (
                "a key inside an inline table is replaced there",
                "distil = { mode = \"code\", language = \"en\" }\n",
                "distil = { mode = \"quiet\", language = \"en\" }\n",
            ),
            (
                "dotted keys take the key as another dotted key",
                "distil.language = \"en\"\n[log]\nlevel = \"info\"\n",
                "distil.language = \"en\"\ndistil.mode = \"quiet\"\n[log]\nlevel = \"info\"\n",
            ),
            (
                "a value already set is left as the user spelled it",
                "[distil]\nmode = 'quiet'   # mine\n",
                "[distil]\nmode = 'quiet'   # mine\n",
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
    fn set_key_reaches_sub_tables() {
        let weight = toml::Value::Float(0.5);
        // (what the case shows, file before, file after setting `[inject.weights] recency`)
        let cases: &[(&str, &str, &str)] = &[
            ("empty file: one header", "", "[inject.weights]\nrecency = 0.5\n"),
            (
                "under its parent, before the next table",
                "[inject]\nbudget = 1\n\n[log]\nlevel = \"info\"\n",
                "[inject]\nbudget = 1\n\n[inject.weights]\nrecency = 0.5\n\n[log]\nlevel = \"info\"\n",
            ),
            (
                "an existing sub-table",
                "[inject.weights]\nrecency = 1.0 # most\n",
                "[inject.weights]\nrecency = 0.5 # most\n",
            ),
        ];
        for (what, before, after) in cases {
            let edited = set_key(before, "inject.weights", "recency", &weight)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(edited, *after, "{what}");
        }
    }

    #[test]
    fn set_key_refuses_layouts_it_cannot_edit_faithfully() {
        // What toml_edit cannot do without losing what the user wrote: turn a value or an
        // array of tables into a table, or a table into a value.
        let cases: &[(&str, &str, &str)] = &[
            ("not a table", "distil = 3\n", "`distil` holds a value, not a table"),
            ("an array of tables", "[[distil]]\nmode = \"x\"\n", "`distil` is an array of tables"),
            (
                "the key is a table",
                "[distil.mode]\nname = \"x\"\n",
                "`distil.mode` is a table, not a value",
            ),
        ];
        for (what, before, reason) in cases {
            let err = set_key(before, "distil", "mode", &mode_value("quiet")).expect_err(what);
            assert!(
                matches!(&err, EditError::Unsupported { reason: r, .. } if r == reason),
                "{what}: {err}"
            );
        }
        let err = set_key("distil = 3\n", "distil", "mode", &mode_value("q")).expect_err("value");
        expect_test::expect![[r#"cannot set `distil.mode`: `distil` holds a value, not a table; set `mode = "q"` under `[distil]` by hand"#]]
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
