//! Wiring agents to agent-memory: here is an agent's config file as text, give it back with
//! our hooks and MCP server added (install) or with exactly those removed (uninstall).
//!
//! Owns the hook command line, how our entries are recognised (a command containing
//! `agent-memory` and ` hook --agent `, the MCP server named `agent-memory`), the
//! order-preserving JSON value the JSON configs go through, the kinds of wiring
//! ([`InstallKind`]), and the plan of which files an install touches. Which agents there are,
//! where their configs live and which events and kind of wiring each has is the agent registry's
//! (`adapter::AGENTS`, each row's [`Installer`]); this module reads it and never names an agent.
//! Each agent's files are in a child: `install/claude_code.rs`,
//! `install/codex.rs` (with Codex's hook trust hash), `install/gemini.rs`, `install/hermes.rs`
//! (a memory provider rather than hooks, and a line-based `config.yaml` edit),
//! `install/copilot.rs` (a hooks file of our own), `install/opencode.rs` (a plugin of our own,
//! shipped inside the binary).
//!
//! Must not: read or write files itself (a plan gets file contents through a callback, and the
//! binary writes the result atomically with a backup), print, or touch anything but our own
//! entries. Text that does not parse is an error, never rewritten.

pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod gemini;
pub mod hermes;
mod json;
pub mod locate;
pub mod opencode;

use std::path::{Path, PathBuf};

pub use json::Json;

use crate::adapter::{self, AgentSpec, ConfigBase, ConfigRoot};

/// The name our MCP server is registered under in every agent.
pub const MCP_SERVER_NAME: &str = "agent-memory";

/// Hook timeout in seconds (Gemini takes milliseconds: the same 5 s). The hook gives up after
/// its own deadline (1 s by default) long before this.
pub const HOOK_TIMEOUT_S: u64 = 5;
/// How long our OpenCode plugin waits for a hook run (`HOOK_LIMIT_MS` in the plugin).
pub const PLUGIN_HOOK_LIMIT_MS: u64 = 5000;
/// How long our Hermes provider waits for a hook run (`HOOK_TIMEOUT_S` in the provider).
pub const PROVIDER_HOOK_TIMEOUT_MS: u64 = 3000;

/// The timeout `install` writes for `agent`'s hook at `event`, in seconds: what the agent
/// accepts there (its [`HookSpec::timeout_s`]), else [`HOOK_TIMEOUT_S`].
pub fn hook_timeout_s(agent: &str, event: &str) -> u64 {
    Agent::from_name(agent)
        .and_then(|a| a.installer.hooks.iter().find(|spec| spec.event == event))
        .and_then(|spec| spec.timeout_s)
        .unwrap_or(HOOK_TIMEOUT_S)
}

/// How long `agent` gives one hook run before it stops waiting (or kills it), as `install`
/// wires it: the timeout written into its hook config, or the limit of our plugin or provider
/// that runs the hook. An agent `install` does not wire gets the shortest of them.
pub fn hook_timeout_ms(agent: &str, event: &str) -> u64 {
    let shortest = (HOOK_TIMEOUT_S * 1000).min(PLUGIN_HOOK_LIMIT_MS).min(PROVIDER_HOOK_TIMEOUT_MS);
    match Agent::from_name(agent).map(Agent::kind) {
        Some(
            InstallKind::JsonHooks
            | InstallKind::TrustedHooks { .. }
            | InstallKind::HooksFile { .. },
        ) => hook_timeout_s(agent, event) * 1000,
        Some(InstallKind::JsPlugin) => PLUGIN_HOOK_LIMIT_MS,
        Some(InstallKind::Provider { .. }) => PROVIDER_HOOK_TIMEOUT_MS,
        None => shortest,
    }
}

/// An agent `install` knows how to wire: a registry row with an [`Installer`].
#[derive(Clone, Copy)]
pub struct Agent {
    spec: &'static AgentSpec,
    installer: &'static Installer,
}

impl Agent {
    /// Every agent of the registry that can be installed, in the registry's order.
    pub fn all() -> impl Iterator<Item = Agent> {
        adapter::AGENTS.iter().filter_map(Agent::of)
    }

    fn of(spec: &'static AgentSpec) -> Option<Agent> {
        spec.install.as_ref().map(|installer| Agent { spec, installer })
    }

    /// The agent by its name or an alias, if it can be installed.
    pub fn from_name(name: &str) -> Option<Agent> {
        adapter::find_agent(name).and_then(Agent::of)
    }

    /// The name on the command line and in `hook --agent`.
    pub fn name(self) -> &'static str {
        self.spec.name
    }

    /// The agent's registry row.
    pub fn spec(self) -> &'static AgentSpec {
        self.spec
    }

    /// The agent's program, looked for on `PATH` to tell whether it is installed.
    pub fn program(self) -> &'static str {
        self.spec.program
    }

    /// How the agent is wired.
    pub fn kind(self) -> InstallKind {
        self.installer.kind
    }

    /// Whether the agent reads hooks and MCP servers from a project directory.
    pub fn has_project_level(self) -> bool {
        self.installer.project_level
    }

    /// The events wired as shell hooks, each with its matcher, if any; none for an agent whose
    /// plugin or provider runs the hook itself.
    pub fn hooks(self) -> &'static [HookSpec] {
        self.installer.hooks
    }
}

impl PartialEq for Agent {
    fn eq(&self, other: &Agent) -> bool {
        self.spec.name == other.spec.name
    }
}

impl Eq for Agent {}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.spec.name)
    }
}

/// One agent's wiring, in its registry row: what kind, which hooks, and its install module's
/// plan.
#[derive(Debug, Clone, Copy)]
pub struct Installer {
    pub kind: InstallKind,
    /// The events wired as shell hooks (none for a plugin or a provider).
    pub hooks: &'static [HookSpec],
    /// Whether the agent reads hooks and MCP servers from a project directory.
    pub project_level: bool,
    /// The files an install or uninstall changes, from the agent's install module.
    pub plan: PlanFn,
}

/// An install module's plan: the files `op` changes in `place`, with their new text.
pub type PlanFn = fn(Op, &Place<'_>, &str, ReadFile<'_>) -> Result<Vec<FilePlan>, ConfigError>;

/// How an agent is wired. Beyond the plan, `install`, `uninstall` and `doctor` dispatch on it.
#[derive(Debug, Clone, Copy)]
pub enum InstallKind {
    /// Hooks in the agent's JSON settings, our MCP server in its JSON config.
    JsonHooks,
    /// Hooks in a JSON hooks file that the agent runs only once its TOML config trusts each by
    /// hash; `doctor` checks the hashes with `untrusted`.
    TrustedHooks { untrusted: UntrustedFn },
    /// A JavaScript plugin of our own that the agent loads and that runs the hook itself.
    JsPlugin,
    /// A hooks file of our own, in the user's hooks directory (`user_file`, from the config
    /// root) or a repository's; a repository takes only the hooks, not the MCP server.
    HooksFile { user_file: fn(&Path) -> PathBuf },
    /// A memory provider of ours that runs inside the agent and calls the hook; uninstall
    /// removes its directory (`plugin_dir`, from the config root) once its files are gone.
    Provider { plugin_dir: fn(&Path) -> PathBuf },
}

/// Our hooks the agent would skip because its config does not trust them, given its config
/// root; `None` when it has no hooks file of ours to check.
pub type UntrustedFn =
    fn(root: &Path, bin: &str, read: ReadFile<'_>) -> Option<Result<Untrusted, ConfigError>>;

/// Hooks of ours an agent does not trust yet, and the config file that should.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    pub config: PathBuf,
    /// Each untrusted hook, as the config names it.
    pub hooks: Vec<String>,
}

/// One hook to wire: the agent's event name and the matcher its group carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSpec {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    /// The timeout the agent accepts at this event, in seconds, when less than
    /// [`HOOK_TIMEOUT_S`].
    pub timeout_s: Option<u64>,
}

/// Install or uninstall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Install,
    Uninstall,
}

/// Where agents' configs live: the user's own, or one project's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    User(UserDirs),
    Project(PathBuf),
}

/// The directories a user's agent configs are found from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserDirs {
    /// `$HOME`.
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME` or `~/.config`.
    pub config_home: PathBuf,
    /// `$XDG_DATA_HOME` or `~/.local/share`: where some agents keep their sessions.
    pub data_home: PathBuf,
    /// Directories agents' own environment variables name (`(variable, absolute dir)`), which
    /// take the place of their default config roots.
    pub env: Vec<(String, PathBuf)>,
}

impl UserDirs {
    /// Home and config home, with no agent's variable set.
    pub fn new(home: PathBuf, config_home: PathBuf) -> UserDirs {
        let data_home = home.join(".local").join("share");
        UserDirs { home, config_home, data_home, env: Vec::new() }
    }

    /// The directory `root` stands for here.
    pub fn root(&self, root: &ConfigRoot) -> PathBuf {
        let named = root.env.and_then(|var| self.env.iter().find(|(v, _)| v == var));
        match (named, root.base) {
            (Some((_, dir)), _) => dir.clone(),
            (None, ConfigBase::Home) => self.home.join(root.dir),
            (None, ConfigBase::ConfigHome) => self.config_home.join(root.dir),
            (None, ConfigBase::DataHome) => self.data_home.join(root.dir),
        }
    }
}

/// Where one agent's config is, as its install module plans for it: the user's (`home` and
/// the agent's config root, its variable applied) or one project's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place<'a> {
    User { home: &'a Path, root: PathBuf },
    Project(&'a Path),
}

impl Place<'_> {
    fn of(agent: Agent, scope: &Scope) -> Place<'_> {
        match scope {
            Scope::User(dirs) => {
                Place::User { home: &dirs.home, root: dirs.root(&agent.spec.config_root) }
            }
            Scope::Project(dir) => Place::Project(dir),
        }
    }
}

/// A config file that could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "{path} is not valid JSON (line {line}, column {column}: {message}); fix the file or move it aside, then run the command again"
    )]
    Json { path: PathBuf, line: usize, column: usize, message: String },
    #[error(
        "{path} is not valid TOML ({message}); fix the file or move it aside, then run the command again"
    )]
    Toml { path: PathBuf, message: String },
    #[error(
        "{path}: `{key}` is not {expected}; fix that entry or move the file aside, then run the command again"
    )]
    Shape { path: PathBuf, key: String, expected: &'static str },
    #[error(
        "{path} line {line}: {message}, which agent-memory cannot edit safely; write that part as a plain indented block (or add the entries by hand), then run the command again"
    )]
    Yaml { path: PathBuf, line: usize, message: String },
    #[error("cannot read {path}: {source}; check its permissions")]
    Read { path: PathBuf, source: std::io::Error },
    #[error(
        "{agent} has no project-level configuration; install it for the user instead (without --project)"
    )]
    NoProjectLevel { agent: &'static str },
}

/// One file's change: its text before (`None` when it does not exist) and after; `remove` when
/// uninstall leaves nothing in a file install created, so the file goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePlan {
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: String,
    pub remove: bool,
}

impl FilePlan {
    pub fn changed(&self) -> bool {
        self.remove || self.before.as_deref() != Some(self.after.as_str())
    }
}

/// One file's transform: the op, the file's text (`None` when missing), its path; the new text.
type EditFile<'a> = &'a dyn Fn(Op, Option<&str>, &Path) -> Result<String, ConfigError>;

/// Reads a file's text; `Ok(None)` when it does not exist.
pub type ReadFile<'a> = &'a dyn Fn(&Path) -> Result<Option<String>, ConfigError>;

/// The files `op` changes for `agent`, in order, with their new text. `bin` is the absolute path
/// of the agent-memory binary the hooks and MCP server run.
pub fn plan(
    agent: Agent,
    op: Op,
    scope: &Scope,
    bin: &str,
    read: ReadFile<'_>,
) -> Result<Vec<FilePlan>, ConfigError> {
    if matches!(scope, Scope::Project(_)) && !agent.has_project_level() {
        return Err(ConfigError::NoProjectLevel { agent: agent.name() });
    }
    (agent.installer.plan)(op, &Place::of(agent, scope), bin, read)
}

/// The agent's user-level config root in `scope`; `None` for a project's.
pub fn user_root(agent: Agent, scope: &Scope) -> Option<PathBuf> {
    match scope {
        Scope::User(dirs) => Some(dirs.root(&agent.spec.config_root)),
        Scope::Project(_) => None,
    }
}

/// Our hooks `agent` would skip because its config does not trust them, for an agent wired that
/// way, in the user's scope, with a hooks file of ours.
pub fn untrusted(
    agent: Agent,
    scope: &Scope,
    bin: &str,
    read: ReadFile<'_>,
) -> Option<Result<Untrusted, ConfigError>> {
    let InstallKind::TrustedHooks { untrusted } = agent.kind() else { return None };
    untrusted(&user_root(agent, scope)?, bin, read)
}

/// The command an agent runs for `event`: the binary (quoted for the shell when it needs it)
/// and `hook --agent A --event E`.
pub fn hook_command(bin: &str, agent: &str, event: &str) -> String {
    format!("{} hook --agent {agent} --event {event}", shell_quote(bin))
}

/// Whether a hook command is one of ours: `agent-memory hook --agent …` with any path before
/// it, or this binary (`bin`, whatever its name) running `hook --agent …`.
pub fn is_our_command(command: &str, bin: &str) -> bool {
    let this_binary = command
        .strip_prefix(&shell_quote(bin))
        .is_some_and(|rest| rest.starts_with(" hook --agent "));
    this_binary
        || ["agent-memory hook --agent ", "agent-memory' hook --agent "]
            .iter()
            .any(|ours| command.contains(ours))
}

fn shell_quote(s: &str) -> String {
    let plain =
        !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+,=:@%".contains(c));
    if plain { s.to_owned() } else { format!("'{}'", s.replace('\'', r"'\''")) }
}

/// Our handler for `event`: a command hook with the agent's timeout (`timeout` in the agent's
/// unit: seconds, or milliseconds for Gemini).
fn command_handler(bin: &str, agent: &str, event: &str, timeout: u64) -> Json {
    Json::Object(vec![
        ("type".to_owned(), Json::str("command")),
        ("command".to_owned(), Json::String(hook_command(bin, agent, event))),
        ("timeout".to_owned(), Json::uint(timeout)),
    ])
}

/// Adds `agent`'s hook groups (`specs`) to a Claude-shaped `hooks` object
/// (`{Event: [{matcher?, hooks: [..]}]}`), used by every agent wired with JSON hooks, each with
/// the timeout the agent accepts at its event ([`hook_timeout_s`]) in the agent's unit
/// (`per_second`: 1 for seconds, 1000 for milliseconds). An event whose only entry of ours is
/// already exactly right is left where it is, so a second install changes nothing.
fn install_hook_groups(
    root: &mut Json,
    path: &Path,
    agent: &str,
    specs: &[HookSpec],
    bin: &str,
    per_second: u64,
) -> Result<(), ConfigError> {
    let hooks = root.object_entry(path, "hooks")?;
    for spec in specs {
        let mut group = Vec::new();
        if let Some(m) = spec.matcher {
            group.push(("matcher".to_owned(), Json::String(m.to_owned())));
        }
        let timeout = spec.timeout_s.unwrap_or(HOOK_TIMEOUT_S) * per_second;
        let handler = command_handler(bin, agent, spec.event, timeout);
        group.push(("hooks".to_owned(), Json::Array(vec![handler])));
        let group = Json::Object(group);
        let key = format!("hooks.{}", spec.event);
        let groups = hooks.array_entry(path, spec.event, &key)?;
        let ours = groups.iter().flat_map(group_handlers).filter(|h| is_ours(h, bin)).count();
        if ours == 1 && groups.contains(&group) {
            continue;
        }
        remove_our_handlers(groups, bin);
        groups.push(group);
    }
    Ok(())
}

/// Removes every hook of ours from a `hooks` object, and the groups, events and the object
/// itself when that leaves them empty.
fn uninstall_hook_groups(root: &mut Json, path: &Path, bin: &str) -> Result<(), ConfigError> {
    let Some(hooks) = root.get_mut("hooks") else { return Ok(()) };
    let Json::Object(events) = hooks else {
        return Err(shape(path, "hooks", "an object"));
    };
    // Only what our removal emptied goes; an empty list the user wrote stays.
    let had = events.len();
    events.retain_mut(|(_, groups)| match groups {
        Json::Array(groups) if !groups.is_empty() => {
            remove_our_handlers(groups, bin);
            !groups.is_empty()
        }
        _ => true,
    });
    if events.is_empty() && had > 0 {
        root.remove("hooks");
    }
    Ok(())
}

fn group_handlers(group: &Json) -> &[Json] {
    match group.get("hooks") {
        Some(Json::Array(handlers)) => handlers,
        _ => &[],
    }
}

fn is_ours(handler: &Json, bin: &str) -> bool {
    matches!(handler.get("command"), Some(Json::String(c)) if is_our_command(c, bin))
}

/// Drops our handlers; a group that held only ours goes with them, other groups keep theirs.
fn remove_our_handlers(groups: &mut Vec<Json>, bin: &str) {
    groups.retain_mut(|group| {
        let Some(Json::Array(handlers)) = group.get_mut("hooks") else { return true };
        let had = handlers.len();
        handlers.retain(|h| !is_ours(h, bin));
        !(handlers.is_empty() && had > 0)
    });
}

/// Sets `mcpServers.agent-memory` to `server` (unless it already is exactly that).
fn install_mcp_server(root: &mut Json, path: &Path, server: Json) -> Result<(), ConfigError> {
    install_server_in(root, path, "mcpServers", server)
}

/// Removes `mcpServers.agent-memory`, and `mcpServers` when nothing else is left in it.
fn uninstall_mcp_server(root: &mut Json, path: &Path) -> Result<(), ConfigError> {
    uninstall_server_in(root, path, "mcpServers")
}

/// Sets `<table>.agent-memory` to `server`, for an agent whose servers sit under `table`.
fn install_server_in(
    root: &mut Json,
    path: &Path,
    table: &str,
    server: Json,
) -> Result<(), ConfigError> {
    root.object_entry(path, table)?.set(MCP_SERVER_NAME, server);
    Ok(())
}

/// Removes `<table>.agent-memory`, and `table` when nothing else is left in it.
fn uninstall_server_in(root: &mut Json, path: &Path, table: &str) -> Result<(), ConfigError> {
    let Some(servers) = root.get_mut(table) else { return Ok(()) };
    if !matches!(servers, Json::Object(_)) {
        return Err(shape(path, table, "an object"));
    }
    servers.remove(MCP_SERVER_NAME);
    if matches!(servers, Json::Object(m) if m.is_empty()) {
        root.remove(table);
    }
    Ok(())
}

/// A file holding only MCP servers under `mcpServers` (Claude Code's, Copilot's): `server`
/// added as ours, or ours removed.
fn mcp_servers_file(
    op: Op,
    text: Option<&str>,
    path: &Path,
    server: Json,
) -> Result<String, ConfigError> {
    edit_json(path, text, |root| match op {
        Op::Install => install_mcp_server(root, path, server),
        Op::Uninstall => uninstall_mcp_server(root, path),
    })
}

/// Parses a JSON config (an empty or missing file is `{}`), applies `edit`, and gives the new
/// text in the file's own indentation; the original text when nothing changed.
fn edit_json(
    path: &Path,
    text: Option<&str>,
    edit: impl FnOnce(&mut Json) -> Result<(), ConfigError>,
) -> Result<String, ConfigError> {
    let original = text.unwrap_or("");
    let mut root = if original.trim().is_empty() {
        Json::Object(Vec::new())
    } else {
        Json::parse(original).map_err(|e| ConfigError::Json {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?
    };
    if !matches!(root, Json::Object(_)) {
        return Err(shape(path, "(top level)", "an object"));
    }
    let before = root.clone();
    edit(&mut root)?;
    if root == before {
        return Ok(original.to_owned());
    }
    Ok(root.to_text(original))
}

fn shape(path: &Path, key: &str, expected: &'static str) -> ConfigError {
    ConfigError::Shape { path: path.to_owned(), key: key.to_owned(), expected }
}

/// Reads `path` through `read` and gives its new text from `edit`. On uninstall a missing file
/// stays missing (no plan), and when the file is still exactly what install made of its backup
/// (modulo our own entries), the backup's bytes come back; a file install created and uninstall
/// emptied is removed.
fn file_plan(
    path: PathBuf,
    op: Op,
    read: ReadFile<'_>,
    edit: EditFile<'_>,
) -> Result<Option<FilePlan>, ConfigError> {
    let before = read(&path)?;
    if op == Op::Install {
        let after = edit(op, before.as_deref(), &path)?;
        return Ok(Some(FilePlan { path, before, after, remove: false }));
    }
    let Some(current) = before else { return Ok(None) };
    let mut after = edit(op, Some(&current), &path)?;
    let backup = read(&backup_path(&path))?;
    if let Some(original) = &backup
        && after != *original
    {
        let reinstalled = edit(Op::Install, Some(original), &path)
            .and_then(|text| edit(Op::Uninstall, Some(&text), &path));
        if reinstalled.ok().as_ref() == Some(&after) {
            after = original.clone();
        }
    }
    let t = after.trim();
    let remove = backup.is_none() && (t.is_empty() || t == "{}");
    Ok(Some(FilePlan { path, before: Some(current), after, remove }))
}

/// How an agent's wiring stands, as `doctor` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Wiring {
    /// Installing again would change nothing.
    Current,
    /// Some of our entries are there, but installing again would change them (another binary,
    /// events added since, a stale Codex trust hash).
    Stale,
    /// None of our entries are there.
    Missing,
}

/// Whether `agent` is wired to `bin` in `scope`, and the files that would change if it were
/// installed again.
pub fn wiring(
    agent: Agent,
    scope: &Scope,
    bin: &str,
    read: ReadFile<'_>,
) -> Result<(Wiring, Vec<PathBuf>), ConfigError> {
    let install = plan(agent, Op::Install, scope, bin, read)?;
    let changed: Vec<PathBuf> =
        install.iter().filter(|p| p.changed()).map(|p| p.path.clone()).collect();
    if changed.is_empty() {
        return Ok((Wiring::Current, changed));
    }
    let ours = plan(agent, Op::Uninstall, scope, bin, read)?.iter().any(FilePlan::changed);
    Ok((if ours { Wiring::Stale } else { Wiring::Missing }, changed))
}

/// The agent-memory binaries `agent`'s wiring in `scope` runs, by absolute path, read from the
/// files install writes: the hook commands of a hooks config, the path baked into OpenCode's
/// plugin (`const BIN = "…"`), the `bin` of Hermes's provider `config.json`.
pub fn configured_binaries(
    agent: Agent,
    scope: &Scope,
    bin: &str,
    read: ReadFile<'_>,
) -> Result<Vec<String>, ConfigError> {
    let mut found: Vec<String> = Vec::new();
    for file in plan(agent, Op::Install, scope, bin, read)? {
        let Some(text) = read(&file.path)? else { continue };
        let name = file.path.file_name().unwrap_or_default().to_string_lossy();
        let bins = if name.ends_with(".js") {
            text.lines()
                .filter_map(|line| line.trim().strip_prefix("const BIN = "))
                .filter_map(|rest| serde_json::from_str::<String>(rest.trim_end_matches(';')).ok())
                .collect()
        } else if matches!(agent.kind(), InstallKind::Provider { .. }) && name == "config.json" {
            serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["bin"].as_str().map(str::to_owned))
                .into_iter()
                .collect()
        } else if name.ends_with(".py") {
            Vec::new()
        } else {
            hook_binaries(&text)
        };
        for bin in bins {
            if bin.starts_with('/') && !found.contains(&bin) {
                found.push(bin);
            }
        }
    }
    Ok(found)
}

/// The binaries hook commands in a config file's text run: the word before each
/// ` hook --agent ` (unquoted when the shell would unquote it), without repeats.
fn hook_binaries(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(" hook --agent ") {
        let before = &rest[..at];
        rest = &rest[at + 1..];
        let word = if let Some(quoted) = before.strip_suffix('\'') {
            // `'…'`, with `'\''` for a quote inside (its backslash doubled in JSON): take back
            // to the opening quote.
            let start = quoted.rfind(['"', '[', '\n']).map_or(0, |i| i + 1);
            let inner = quoted[start..].trim_start();
            let inner = inner.strip_prefix('\'').unwrap_or(inner);
            inner.replace("\\\\", "\\").replace("'\\''", "'")
        } else {
            let start = before
                .rfind(|c: char| c.is_whitespace() || c == '"' || c == '[' || c == ',')
                .map_or(0, |i| i + 1);
            before[start..].to_owned()
        };
        if !word.is_empty() && !found.contains(&word) {
            found.push(word);
        }
    }
    found
}

/// A file install owns whole (its name is ours): install writes `content`, uninstall removes
/// it, or brings back from its backup what was there before install.
fn owned_file_plan(
    path: PathBuf,
    op: Op,
    read: ReadFile<'_>,
    content: &str,
) -> Result<Option<FilePlan>, ConfigError> {
    file_plan(path, op, read, &|op, _, _| {
        Ok(if op == Op::Install { content.to_owned() } else { String::new() })
    })
}

/// The skill install gives every agent that reads skills (`SKILL.md` in a folder of its own):
/// how to search, follow a timeline and read items in full, and the review commands.
pub const SKILL: &str = include_str!("install/skill.md");

/// The skills install writes, each in the folder of its name: the search skill above, a
/// project's story week by week (`agent-memory report`), and the mode creator.
pub const SKILLS: &[(&str, &str)] = &[
    ("agent-memory", SKILL),
    ("agent-memory-report", include_str!("install/skill-report.md")),
    ("agent-memory-mode", include_str!("install/skill-mode.md")),
];

/// The skills' files in a skills directory: `<dir>/<name>/SKILL.md`, written whole and removed
/// whole like every file of ours.
fn skill_plan(skills_dir: &Path, op: Op, read: ReadFile<'_>) -> Result<Vec<FilePlan>, ConfigError> {
    let mut plans = Vec::new();
    for (name, text) in SKILLS {
        plans.extend(owned_file_plan(skills_dir.join(name).join("SKILL.md"), op, read, text)?);
    }
    Ok(plans)
}

/// Where the original of a file install changes is kept, once.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".agent-memory.bak");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_s_hook_timeout_is_what_its_wiring_says() {
        assert!(
            opencode::PLUGIN.contains(&format!("const HOOK_LIMIT_MS = {PLUGIN_HOOK_LIMIT_MS}\n"))
        );
        let seconds = PROVIDER_HOOK_TIMEOUT_MS as f64 / 1000.0;
        assert!(hermes::PROVIDER_PY.contains(&format!("HOOK_TIMEOUT_S = {seconds:.1}\n")));
        for agent in Agent::all() {
            let timeout = hook_timeout_ms(agent.name(), "Stop");
            assert!((3000..=5000).contains(&timeout), "{}: {timeout}", agent.name());
        }
        assert_eq!(hook_timeout_ms("some-agent-nobody-wired", "Stop"), 3000, "the shortest");
        // Codex clamps its session-end hook to 3 s: that is what is written and waited for.
        assert_eq!(hook_timeout_ms("codex", "SessionEnd"), 3000);
        assert_eq!(hook_timeout_ms("codex", "Stop"), 5000);
    }

    #[test]
    fn hook_command_quotes_only_when_needed() {
        assert_eq!(
            hook_command("/usr/bin/agent-memory", "codex", "Stop"),
            "/usr/bin/agent-memory hook --agent codex --event Stop"
        );
        let odd = hook_command("/home/a b/it's/agent-memory", "gemini", "AfterTool");
        assert_eq!(odd, r"'/home/a b/it'\''s/agent-memory' hook --agent gemini --event AfterTool");
        assert!(is_our_command(&odd, "/elsewhere/agent-memory"));
        assert!(is_our_command("/tmp/am hook --agent codex --event Stop", "/tmp/am"));
        assert!(!is_our_command("/tmp/am hook --agent codex --event Stop", "/tmp/other"));
        assert!(!is_our_command("my-script hook --agent x", "/usr/bin/agent-memory"));
    }

    fn user_scope() -> Scope {
        Scope::User(UserDirs::new("/h".into(), "/h/.config".into()))
    }

    fn agent(name: &str) -> Agent {
        Agent::from_name(name).expect("a known agent")
    }

    /// Files in memory, read as `plan` reads them.
    fn plan_with(
        files: &std::collections::HashMap<PathBuf, String>,
        agent: Agent,
        op: Op,
    ) -> Vec<FilePlan> {
        let scope = user_scope();
        let read: ReadFile<'_> = &|path| Ok(files.get(path).cloned());
        plan(agent, op, &scope, "/opt/agent-memory", read).expect("plan")
    }

    fn apply(files: &mut std::collections::HashMap<PathBuf, String>, plans: &[FilePlan], op: Op) {
        for p in plans {
            if op == Op::Install
                && let Some(before) = &p.before
            {
                files.entry(backup_path(&p.path)).or_insert_with(|| before.clone());
            }
            if p.remove {
                files.remove(&p.path);
            } else {
                files.insert(p.path.clone(), p.after.clone());
            }
        }
    }

    #[test]
    fn uninstall_brings_back_the_original_bytes_or_removes_what_install_created() {
        let mut files = std::collections::HashMap::new();
        // Compact JSON and an empty hook list: formatting the transform alone would not keep.
        let gemini = "{\"theme\":\"x\",\"hooks\":{\"BeforeTool\":[]}}";
        files.insert(PathBuf::from("/h/.gemini/settings.json"), gemini.to_owned());
        files.insert(PathBuf::from("/h/.codex/config.toml"), "# mine\nmodel = \"m\"\n".to_owned());
        let original = files.clone();
        for agent in Agent::all() {
            let plans = plan_with(&files, agent, Op::Install);
            assert!(plans.iter().all(FilePlan::changed), "{plans:?}");
            apply(&mut files, &plans, Op::Install);
            let again = plan_with(&files, agent, Op::Install);
            assert!(
                again.iter().all(|p| !p.changed()),
                "second install changes nothing: {again:?}"
            );
        }
        // New: Claude Code's two files and three skills, Codex's hooks.json and three skills,
        // Copilot's hooks and MCP files, OpenCode's plugin and opencode.json, Hermes's config
        // and three plugin files.
        assert_eq!(files.len(), original.len() + 2 + 9 + 4 + 4, "two backups, seventeen new files");
        for agent in Agent::all() {
            let plans = plan_with(&files, agent, Op::Uninstall);
            apply(&mut files, &plans, Op::Uninstall);
        }
        files.retain(|path, _| !path.to_string_lossy().ends_with(".agent-memory.bak"));
        assert_eq!(files, original);
    }

    #[test]
    fn a_broken_file_stops_only_its_agent() {
        let mut files = std::collections::HashMap::new();
        files.insert(PathBuf::from("/h/.claude.json"), "{\"a\": ".to_owned());
        let scope = user_scope();
        let read: ReadFile<'_> = &|path| Ok(files.get(path).cloned());
        let err = plan(agent("claude-code"), Op::Install, &scope, "/b/agent-memory", read)
            .expect_err("broken");
        assert!(err.to_string().starts_with("/h/.claude.json is not valid JSON"), "{err}");
        assert!(plan(agent("gemini"), Op::Install, &scope, "/b/agent-memory", read).is_ok());
    }

    #[test]
    fn wiring_tells_current_stale_and_missing() {
        let mut files = std::collections::HashMap::new();
        let scope = user_scope();
        let state = |files: &std::collections::HashMap<PathBuf, String>, bin: &str| {
            let read: ReadFile<'_> = &|path| Ok(files.get(path).cloned());
            wiring(agent("codex"), &scope, bin, read).expect("wiring").0
        };
        assert_eq!(state(&files, "/opt/agent-memory"), Wiring::Missing);
        let plans = plan_with(&files, agent("codex"), Op::Install);
        apply(&mut files, &plans, Op::Install);
        assert_eq!(state(&files, "/opt/agent-memory"), Wiring::Current);
        assert_eq!(state(&files, "/usr/local/bin/agent-memory"), Wiring::Stale);
        // A trust hash that no longer matches its hook: Codex would skip the hook silently.
        let config = PathBuf::from("/h/.codex/config.toml");
        let text =
            files[&config].replacen("trusted_hash = \"sha256:", "trusted_hash = \"sha256:0", 1);
        files.insert(config, text);
        assert_eq!(state(&files, "/opt/agent-memory"), Wiring::Stale);
    }

    #[test]
    fn hook_binaries_reads_plain_and_quoted_paths() {
        let text = r#"{"command": "/opt/am/agent-memory hook --agent codex --event Stop"},
            {"command": "'/home/a b/it'\\''s/agent-memory' hook --agent gemini --event X"},
            {"command": "/opt/am/agent-memory hook --agent codex --event SessionStart"}"#;
        assert_eq!(hook_binaries(text), ["/opt/am/agent-memory", "/home/a b/it's/agent-memory"]);
        assert!(hook_binaries("{}").is_empty());
    }

    #[test]
    fn configured_binaries_of_every_agent() {
        let mut files = std::collections::HashMap::new();
        for agent in Agent::all() {
            let plans = plan_with(&files, agent, Op::Install);
            apply(&mut files, &plans, Op::Install);
            let read: ReadFile<'_> = &|path| Ok(files.get(path).cloned());
            let found =
                configured_binaries(agent, &user_scope(), "/elsewhere/am", read).expect("binaries");
            assert_eq!(found, ["/opt/agent-memory"], "{agent:?}");
        }
    }

    #[test]
    fn agent_names_round_trip() {
        for agent in Agent::all() {
            assert_eq!(Agent::from_name(agent.name()), Some(agent));
        }
        assert_eq!(Agent::from_name("cursor"), None);
    }
}
