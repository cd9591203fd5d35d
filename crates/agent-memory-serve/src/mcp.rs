//! The MCP server (ARCHITECTURE.md, code map: `agent-memory-serve`): memory handed to any MCP
//! client as tools — `search`, `timeline`, `get_observations`, `briefing` to read, `remember` and
//! `forget` to keep or drop a long-term memory — over stdio, with rmcp.
//!
//! Owns the tools' argument types (their JSON schemas are what a client's model reads), the
//! compact text each tool answers with, and the stdio loop. Every tool is a thin call into
//! core, the same calls the CLI makes: the store is opened per call and the work is
//! synchronous, because SQLite answers in milliseconds. The tools teach a cheap-first
//! workflow: `search` returns a one-line index whose every line names an id and what
//! fetching it costs in tokens, `timeline` shows what happened around one id, and only then
//! `get_observations` fetches the few items worth reading, several ids in one call.
//!
//! Argument mistakes and unknown ids are answered as tool errors a model can read and act on,
//! never as a panic or a dropped connection. Must not: write to stdout other than through the
//! transport (stdout carries JSON-RPC only), or write to the store beyond search hit counts and
//! the memories `remember` and `forget` change (through `store::memories`, as the CLI does).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_memory_core::config::Config;
use agent_memory_core::paths::Home;
use agent_memory_core::recall::{self, ItemId, RecallError, SearchRequest, text};
use agent_memory_core::store::memories;
use agent_memory_core::store::{Store, StoreError};
use agent_memory_core::{inject, memory, project, promote, time};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The name the server introduces itself with.
pub const SERVER_NAME: &str = "agent-memory";

/// How long a tool call waits for a store another process is writing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a tool that writes memory keeps trying a store a background work pass holds. A
/// write transaction that began as a read cannot wait in SQLite's busy handler (the snapshot
/// it read is stale once another writer commits), so the whole write is tried again instead,
/// well within the time an agent gives a tool call.
const WRITE_DEADLINE: Duration = Duration::from_secs(25);

const INSTRUCTIONS: &str = "agent-memory is the shared memory of every coding agent on this \
machine: what was done, decided and learned in earlier sessions, by any agent. Read cheaply: \
`search` first for a compact index (one line per hit with its id and token cost), then \
`timeline` around an interesting id, then `get_observations` with the few ids worth reading, \
all in one call. `briefing` gives a project's session-start overview. `remember` keeps a \
fact, decision, convention, solved problem or preference the user states for later sessions; \
`forget` drops one.";

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start the MCP server on stdio: {0}")]
    Start(String),
    #[error("the MCP server stopped with an error: {0}")]
    Stopped(String),
}

/// What the server reads memory with: the same home, configuration and ranking as the CLI.
pub struct Settings {
    pub home: Home,
    pub config: Config,
    /// How reads search and rank, with the embedding model loaded once.
    pub recall: recall::Settings,
    /// The project directory `briefing` describes when its caller names none.
    pub cwd: PathBuf,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("home", &self.home)
            .field("recall", &self.recall)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

/// Serves `settings`' memory over stdin and stdout until the client closes the connection.
pub async fn serve_stdio(settings: Settings) -> Result<(), McpError> {
    let server = MemoryServer::new(settings);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|err| McpError::Start(err.to_string()))?;
    let reason = running.waiting().await.map_err(|err| McpError::Stopped(err.to_string()))?;
    tracing::debug!(?reason, "mcp client disconnected");
    Ok(())
}

/// The MCP server: memory, read through core, as tools.
#[derive(Debug, Clone)]
pub struct MemoryServer {
    settings: Arc<Settings>,
    tool_router: ToolRouter<Self>,
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words to look for, in any language (English, Chinese, code identifiers, file names).
    pub query: String,
    /// How many results at most, 1 to 100 (default 20).
    pub limit: Option<u32>,
    /// Only these kinds of item; all kinds when omitted.
    #[serde(default)]
    pub kind: Vec<ItemKind>,
    /// Only memories of these tiers: L1 (candidates awaiting review), L2 (project), L3
    /// (global); when omitted, active memories (L2, L3) are searched with everything else.
    #[serde(default)]
    pub tier: Vec<MemoryTier>,
    /// Only this type: an observation type (bugfix, decision, …), an event kind or `summary`.
    #[serde(rename = "type")]
    pub item_type: Option<String>,
    /// Only what this agent recorded (claude-code, codex, gemini, …).
    pub agent: Option<String>,
    /// Only this project: its name, its key, or a directory inside it.
    pub project: Option<String>,
    /// From this time on: a date (2026-12-01), a date and time (2026-12-01T10:00), an age (3d).
    pub since: Option<String>,
    /// Before this time, in the same forms as `since`.
    pub until: Option<String>,
}

/// What kind of item a search returns.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    /// A distilled note of what happened (ids `o…`).
    Observation,
    /// A session's summary (ids `s…`).
    Summary,
    /// A raw captured event: a prompt, a tool call (ids `e…`).
    Event,
    /// A long-term memory: a fact, decision, convention, solved problem or preference (ids
    /// `m…`).
    Memory,
}

impl ItemKind {
    fn as_str(self) -> &'static str {
        match self {
            ItemKind::Observation => "observation",
            ItemKind::Summary => "summary",
            ItemKind::Event => "event",
            ItemKind::Memory => "memory",
        }
    }
}

/// A memory tier.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum MemoryTier {
    /// Candidates promoted from observations, not reviewed yet.
    L1,
    /// Reviewed memory of one project.
    L2,
    /// Reviewed memory for every project.
    L3,
}

impl MemoryTier {
    fn as_str(self) -> &'static str {
        match self {
            MemoryTier::L1 => "L1",
            MemoryTier::L2 => "L2",
            MemoryTier::L3 => "L3",
        }
    }
}

/// Arguments of `timeline`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineArgs {
    /// An id from `search` (o12, s3, e45), or words to search for: the best hit is the anchor.
    pub anchor: String,
    /// Observations before the anchor, 0 to 100 (default 5).
    pub before: Option<u32>,
    /// Observations after the anchor, 0 to 100 (default 5).
    pub after: Option<u32>,
}

/// Arguments of `get_observations`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetObservationsArgs {
    /// Ids from `search` or `timeline`: o12 (observation), s3 (summary), e45 (event), m7
    /// (memory); all at once.
    pub ids: Vec<String>,
}

/// Arguments of `remember`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberArgs {
    /// The statement to remember, one sentence of at most 300 characters, self-contained (name
    /// the file, tool or command it is about).
    pub text: String,
    /// What kind of statement it is (default `fact`; `preference` when `global`).
    pub kind: Option<MemoryKindArg>,
    /// A directory inside the project it belongs to (default: the directory the server was
    /// started in). Ignored when `global` is true.
    pub project: Option<String>,
    /// True for the person's own preferences and conventions that hold in every project.
    #[serde(default)]
    pub global: bool,
    /// How much it matters, 1 to 10 (default 7).
    pub importance: Option<u32>,
}

/// The kinds of long-term memory.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryKindArg {
    /// Project context: structure, stack, environment.
    Fact,
    /// A decision, with its reason.
    Decision,
    /// Naming, commits, layout.
    Convention,
    /// An error and its fix.
    Problem,
    /// The person's own way of working.
    Preference,
}

impl MemoryKindArg {
    fn kind(self) -> memories::Kind {
        match self {
            MemoryKindArg::Fact => memories::Kind::Fact,
            MemoryKindArg::Decision => memories::Kind::Decision,
            MemoryKindArg::Convention => memories::Kind::Convention,
            MemoryKindArg::Problem => memories::Kind::Problem,
            MemoryKindArg::Preference => memories::Kind::Preference,
        }
    }
}

/// Arguments of `forget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetArgs {
    /// The memory's id, as `search` shows it (m12).
    pub id: String,
}

/// Arguments of `briefing`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BriefingArgs {
    /// A directory inside the project (default: the directory the server was started in).
    pub project: Option<String>,
}

#[tool_router]
impl MemoryServer {
    pub fn new(settings: Settings) -> MemoryServer {
        MemoryServer::shared(Arc::new(settings))
    }

    /// A server over settings shared with others (the HTTP API, one server per MCP session).
    pub fn shared(settings: Arc<Settings>) -> MemoryServer {
        MemoryServer { settings, tool_router: Self::tool_router() }
    }

    #[tool(description = "Search the shared memory of every coding agent (observations, session \
        summaries, raw events) by words and meaning. Start here: it returns a compact ranked \
        index, one line per hit: id, time, agent, project, type, title and ~tokens, what reading \
        the item in full costs. Then use `timeline` around an interesting id, and \
        `get_observations` with the few ids worth reading, all in one call.")]
    fn search(&self, Parameters(args): Parameters<Checked<SearchArgs>>) -> CallToolResult {
        answer(args.0.and_then(|args| self.run_search(args)))
    }

    #[tool(
        description = "What happened around one item, across agents: the project's observations \
        just before and after it, oldest first, one line each with its id and ~tokens. Pass an \
        id from `search` (o12, s3, e45) or words (the best search hit anchors it). Then read the \
        ones worth it with `get_observations`."
    )]
    fn timeline(&self, Parameters(args): Parameters<Checked<TimelineArgs>>) -> CallToolResult {
        answer(args.0.and_then(|args| self.run_timeline(args)))
    }

    #[tool(
        description = "Read observations (o12), session summaries (s3) or events (e45) in full. \
        Pass every id you need in ONE call; an id that is not stored is reported on its own \
        line while the others are returned. Fetch only what `search` or `timeline` showed to be \
        worth its tokens."
    )]
    fn get_observations(
        &self,
        Parameters(args): Parameters<Checked<GetObservationsArgs>>,
    ) -> CallToolResult {
        answer(args.0.and_then(|args| self.run_get(args)))
    }

    #[tool(
        description = "A project's session-start briefing as Markdown: what earlier sessions of \
        every agent did there (recent observations by day and file with ids and token costs, \
        the last session's next steps, token economics). Pass a directory inside the project, \
        or nothing for the directory the server was started in."
    )]
    fn briefing(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<Checked<BriefingArgs>>,
    ) -> CallToolResult {
        let client = client_name(&peer);
        answer(args.0.and_then(|args| self.run_briefing(args, &client)))
    }

    #[tool(description = "Remember one statement for every later session of every agent: a fact \
        about the project, a decision with its reason, a convention, a problem and its fix, or \
        (with `global`) the user's own preference. Use it for what you learned that the user \
        did not say themselves: what the user tells you in their own words (\"remember that…\", \
        \"from now on…\") is kept without this tool. It is proposed for the user's review and \
        shown at the start of later sessions once approved; saying the same thing again merges.")]
    fn remember(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<Checked<RememberArgs>>,
    ) -> CallToolResult {
        let origin = client_name(&peer);
        answer(args.0.and_then(|args| self.run_remember(args, &origin)))
    }

    #[tool(description = "Forget a long-term memory you remembered earlier, by its id (m12, from \
        `search`): it is no longer searched or shown at session start. Memories the user kept are \
        theirs to forget (`agent-memory forget m12`). Undo: `agent-memory forget m12 --undo`.")]
    fn forget(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<Checked<ForgetArgs>>,
    ) -> CallToolResult {
        let origin = client_name(&peer);
        answer(args.0.and_then(|args| self.run_forget(args, &origin)))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
                    .with_title("agent-memory")
                    .with_description("The shared local memory of every coding agent"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}

/// A tool's text, or the message of a tool error.
fn answer(result: Result<String, String>) -> CallToolResult {
    match result {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}

impl MemoryServer {
    fn store(&self) -> Result<Store, String> {
        let path = self.settings.home.db_path();
        Store::open(&path, BUSY_TIMEOUT).map_err(|err| {
            format!(
                "cannot use the store at {}: {err}; run `agent-memory status` to check it",
                path.display()
            )
        })
    }

    fn run_search(&self, args: SearchArgs) -> Result<String, String> {
        let store = self.store()?;
        let reader = self.settings.recall.reader(&store);
        let request = SearchRequest {
            query: args.query,
            limit: args.limit.map(|n| n as usize),
            kinds: args.kind.iter().map(|k| k.as_str().to_owned()).collect(),
            tiers: args.tier.iter().map(|t| t.as_str().to_owned()).collect(),
            types: args.item_type.into_iter().collect(),
            agent: args.agent,
            project: args.project,
            since: args.since,
            until: args.until,
        };
        let (query, results) = reader.search(request).map_err(failed)?;
        reader.record_hits(results.hits.iter().map(|h| (h.kind, h.id)));
        let mut answer = text::search_index(&query.text, &results.hits);
        if !results.hits.is_empty() {
            answer.push_str(
                "\nnext: `timeline` around an id for context, `get_observations` with the ids \
                 worth reading (all in one call)",
            );
        }
        Ok(answer)
    }

    fn run_timeline(&self, args: TimelineArgs) -> Result<String, String> {
        let store = self.store()?;
        let span = |n: Option<u32>| n.map_or(recall::TIMELINE_SPAN, |n| n as usize);
        let timeline = self
            .settings
            .recall
            .reader(&store)
            .timeline(&args.anchor, span(args.before), span(args.after))
            .map_err(failed)?;
        Ok(text::timeline(timeline.anchor, &timeline.items))
    }

    fn run_get(&self, args: GetObservationsArgs) -> Result<String, String> {
        if args.ids.is_empty() {
            return Err("`ids` is empty; pass the ids to read, such as [\"o12\", \"s3\"]".into());
        }
        let mut ids = Vec::with_capacity(args.ids.len());
        let mut missing = Vec::new();
        for raw in &args.ids {
            match raw.parse::<ItemId>() {
                Ok(id) => ids.push(id),
                Err(err) => missing.push(format!("{raw}: {err}")),
            }
        }
        let store = self.store()?;
        let found = if ids.is_empty() {
            Vec::new()
        } else {
            self.settings.recall.reader(&store).get(&ids).map_err(failed)?
        };
        let mut items = Vec::with_capacity(found.len());
        for (id, item) in found {
            match item {
                Some(item) => items.push(item),
                None => missing.push(format!("{id}: nothing is stored under this id")),
            }
        }
        let mut out = text::items(&items);
        if !missing.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str("not found (ids come from `search` and `timeline`):\n");
            for line in &missing {
                let _ = writeln!(out, "- {line}");
            }
        }
        Ok(out)
    }

    /// The briefing, recorded as handed to `client` (the MCP client's name, as an agent's).
    fn run_briefing(&self, args: BriefingArgs, client: &str) -> Result<String, String> {
        let s = &self.settings;
        let dir = args.project.map_or_else(|| s.cwd.clone(), PathBuf::from);
        if !dir.is_dir() {
            return Err(format!(
                "{} is not a directory; pass `project` as a directory inside the project, or \
                 leave it out for the directory the server was started in",
                dir.display()
            ));
        }
        let store = self.store()?;
        let roots = store.registered_roots().map_err(store_failed)?;
        let project = project::resolve(&dir, &roots);
        let client = agent_memory_core::adapter::canonical_agent(client);
        let markdown = inject::briefing_on_request(&store, &s.home, &s.config, &project, &client)
            .map_err(store_failed)?;
        Ok(markdown.unwrap_or_else(|| {
            format!(
                "Nothing is remembered about {} ({}) yet: no observations from any agent. \
                 Use `search` to look across every project.",
                project.name,
                project.root.display()
            )
        }))
    }
}

impl MemoryServer {
    fn run_remember(&self, args: RememberArgs, origin: &str) -> Result<String, String> {
        let s = &self.settings;
        let importance = match args.importance {
            None => None,
            Some(n @ 1..=10) => Some(n as u8),
            Some(n) => return Err(format!("`importance` is {n}; pass a number from 1 to 10")),
        };
        let text = memories::check_text(&args.text).map_err(|err| format!("`text`: {err}"))?;
        let mut store = self.store()?;
        let (scope, where_) = if args.global {
            (memory::Scope::Global, "global memory (every project)".to_owned())
        } else {
            let dir = args.project.map_or_else(|| s.cwd.clone(), PathBuf::from);
            if !dir.is_dir() {
                return Err(format!(
                    "`project`: {} is not a directory; pass a directory inside the project, or \
                     leave it out for the directory the server was started in",
                    dir.display()
                ));
            }
            let roots = store.registered_roots().map_err(store_failed)?;
            let identity = project::resolve(&dir, &roots);
            let id = memories::ensure_project(&mut store, &identity).map_err(memory_failed)?;
            (memory::Scope::Project(id), format!("the memory of project {}", identity.name))
        };
        let kind = args.kind.map(MemoryKindArg::kind);
        drop(store);
        let done = self
            .writing(|writer| {
                let what = memory::Remember { text: text.clone(), kind, importance, scope };
                writer.remember(&self.actor(origin), what)
            })
            .map_err(memory_failed)?;
        let (id, kind) = (done.memory.id, done.memory.kind.as_str());
        if done.for_review {
            return Ok(match done.placed {
                promote::Placed::Merged { into } => {
                    format!("already proposed or remembered as m{into}; nothing new was added")
                }
                _ => format!(
                    "proposed m{id} as a {kind} for the user to review (`agent-memory review`); \
                     it is shown to agents once approved"
                ),
            });
        }
        Ok(match done.placed {
            promote::Placed::Merged { into } => {
                format!("already remembered as m{into} in {where_}; nothing new was added")
            }
            promote::Placed::New { supersedes: Some(old), .. } => format!(
                "remembered m{id} in {where_} as a {kind}; it replaces m{old}, which is no longer shown"
            ),
            promote::Placed::New { .. } | promote::Placed::Dropped { .. } => {
                format!("remembered m{id} in {where_} as a {kind}")
            }
        })
    }

    fn run_forget(&self, args: ForgetArgs, origin: &str) -> Result<String, String> {
        let raw = args.id.trim();
        let id = match raw.parse::<ItemId>() {
            Ok(ItemId::Memory(id)) => id,
            _ => {
                return Err(format!(
                    "`id`: `{raw}` is not a memory id; pass the id `search` shows for a memory, such as m12"
                ));
            }
        };
        let memory = self.writing(|writer| writer.forget(&self.actor(origin), id)).map_err(
            |err| match err {
                memories::MemoryError::NotFound(_) => {
                    format!("`id`: no memory m{id}; find memories with `search` (ids m…)")
                }
                other => memory_failed(other),
            },
        )?;
        Ok(format!(
            "forgot m{id}: {}; it is no longer searched or shown (undo: `agent-memory forget m{id} --undo`)",
            memory.text
        ))
    }

    /// The client that asks, as it introduced itself: an agent, not the person.
    fn actor(&self, origin: &str) -> memory::Actor {
        memory::Actor::Agent(origin.to_owned())
    }

    /// Runs one memory write, tried again while another process holds the store, until
    /// [`WRITE_DEADLINE`].
    fn writing<T>(
        &self,
        mut write: impl FnMut(&mut memory::Writer<'_>) -> Result<T, memories::MemoryError>,
    ) -> Result<T, memories::MemoryError> {
        let deadline = std::time::Instant::now() + WRITE_DEADLINE;
        let mut pause = Duration::from_millis(20);
        loop {
            let attempt = Store::open(&self.settings.home.db_path(), BUSY_TIMEOUT)
                .map_err(memories::MemoryError::from)
                .and_then(|mut store| {
                    let now = time::now_ms();
                    write(&mut memory::Writer::configured(&mut store, &self.settings.config, now))
                });
            match attempt {
                Err(err) if err.is_busy() && std::time::Instant::now() + pause < deadline => {
                    tracing::debug!(%err, "the store is busy; trying the write again");
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                done => return done,
            }
        }
    }
}

/// The memory's origin: the client that asked, as it introduced itself.
fn client_name(peer: &Peer<RoleServer>) -> String {
    peer.peer_info()
        .map(|info| info.client_info.name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .map_or_else(|| "an agent".to_owned(), |name| text::one_line(&name, 64))
}

fn memory_failed(err: memories::MemoryError) -> String {
    format!("changing memory failed: {err}")
}

pub(crate) fn store_failed(err: StoreError) -> String {
    format!("reading the store failed: {err}; run `agent-memory status` to check it")
}

/// A failed read as a tool error: the message already says what to do.
fn failed(err: RecallError) -> String {
    err.to_string()
}

/// Tool arguments, or what was wrong with them: deserializing never fails the call, so that a
/// mistake comes back as a tool error naming the field and what to pass, which the client's
/// model reads and can correct, instead of a protocol error it is never shown.
#[derive(Debug)]
pub struct Checked<T>(pub Result<T, String>);

impl<'de, T: DeserializeOwned + JsonSchema> Deserialize<'de> for Checked<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(Checked(serde_path_to_error::deserialize(value).map_err(|err| {
            let path = err.path().to_string();
            let inner = err.into_inner().to_string();
            // A missing field is reported at its struct; name the field itself.
            let field = match inner.strip_prefix("missing field `") {
                Some(rest) => rest.split('`').next().unwrap_or_default().to_owned(),
                None => path.split(['.', '[']).next().unwrap_or_default().to_owned(),
            };
            let mut message = format!("invalid arguments: {inner}");
            if !field.is_empty() && field != "?" {
                if path != "." && !inner.starts_with("missing field") {
                    message = format!("invalid arguments: `{path}`: {inner}");
                }
                if let Some(hint) = field_description::<T>(&field) {
                    let hint = text::one_line(&hint, 300);
                    let _ = write!(message, "; pass `{field}`: {hint}");
                }
            }
            message
        })))
    }
}

impl<T: JsonSchema> JsonSchema for Checked<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// The description a field of `T` carries in its schema: what to pass for it.
fn field_description<T: JsonSchema>(field: &str) -> Option<String> {
    let schema = schemars::schema_for!(T);
    let text = schema.get("properties")?.get(field)?.get("description")?.as_str()?;
    Some(text.to_owned())
}
