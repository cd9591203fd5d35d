//! The MCP server (DESIGN.md §4 serve): memory handed to any MCP client as tools — `search`,
//! `timeline`, `get_observations`, `briefing` to read, `remember` and `forget` to keep or drop
//! a long-term memory — over stdio, with rmcp.
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
use agent_memory_core::embed::Embedder;
use agent_memory_core::paths::Home;
use agent_memory_core::store::distilled::{TimelineItem, parse_item_id};
use agent_memory_core::store::memories;
use agent_memory_core::store::search::{Ranking, SearchHit, SearchQuery, VectorQuery};
use agent_memory_core::store::{Store, StoreError};
use agent_memory_core::{inject, project, promote, time};
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

/// The most results one `search` returns, and the most ids one `get_observations` takes.
const MAX_LIMIT: u32 = 100;

/// How many observations `timeline` shows on each side of the anchor unless asked.
const TIMELINE_SPAN: u32 = 5;

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
    /// How search ranks, with the similarity floor of the model in use.
    pub ranking: Ranking,
    /// The configured embedding model, loaded once; `None` keeps search to full text.
    pub embedder: Option<Box<dyn Embedder>>,
    /// The project directory `briefing` describes when its caller names none.
    pub cwd: PathBuf,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("home", &self.home)
            .field("ranking", &self.ranking)
            .field("embedder", &self.embedder.as_ref().map(|e| e.model().to_owned()))
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
    fn briefing(&self, Parameters(args): Parameters<Checked<BriefingArgs>>) -> CallToolResult {
        answer(args.0.and_then(|args| self.run_briefing(args)))
    }

    #[tool(description = "Remember one statement for every later session of every agent: a fact \
        about the project, a decision with its reason, a convention, a problem and its fix, or \
        (with `global`) the user's own preference. Use it when the user asks you to remember \
        something, or states a rule for the future. It is kept as reviewed memory and shown at \
        the start of later sessions; saying the same thing again merges, and a newer decision \
        on the same subject replaces the older one.")]
    fn remember(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<Checked<RememberArgs>>,
    ) -> CallToolResult {
        // The memory's origin is the client that asked, as it introduced itself.
        let origin = peer
            .peer_info()
            .map(|info| info.client_info.name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "remembered".to_owned());
        answer(args.0.and_then(|args| self.run_remember(args, &origin)))
    }

    #[tool(
        description = "Forget a long-term memory by its id (m12, from `search`): it is no longer \
        searched or shown at session start. Use it when the user says a memory is wrong or \
        outdated. The user can bring it back with `agent-memory forget m12 --undo`."
    )]
    fn forget(&self, Parameters(args): Parameters<Checked<ForgetArgs>>) -> CallToolResult {
        answer(args.0.and_then(|args| self.run_forget(args)))
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
        let request = SearchRequest {
            query: args.query,
            limit: args.limit,
            kinds: args.kind.iter().map(|k| k.as_str().to_owned()).collect(),
            tiers: args.tier.iter().map(|t| t.as_str().to_owned()).collect(),
            types: args.item_type.into_iter().collect(),
            agent: args.agent,
            project: args.project,
            since: args.since,
            until: args.until,
        };
        let (query, results) = search(&self.settings, &store, request)?;
        record_hits(&store, results.hits.iter().map(|h| (h.kind, h.id)));
        Ok(search_index(&query.text, &results.hits))
    }

    fn run_timeline(&self, args: TimelineArgs) -> Result<String, String> {
        let before = span("before", args.before)?;
        let after = span("after", args.after)?;
        let store = self.store()?;
        let (kind, id, items) = timeline(&self.settings, &store, &args.anchor, before, after)?;
        Ok(timeline_lines(&items, (kind == 'o').then_some(id), kind, id))
    }

    fn run_get(&self, args: GetObservationsArgs) -> Result<String, String> {
        if args.ids.is_empty() {
            return Err("`ids` is empty; pass the ids to read, such as [\"o12\", \"s3\"]".into());
        }
        if args.ids.len() > MAX_LIMIT as usize {
            return Err(format!(
                "{} ids in one call; pass at most {MAX_LIMIT}, the ones worth reading",
                args.ids.len()
            ));
        }
        let store = self.store()?;
        let mut out = String::new();
        let mut missing = Vec::new();
        for raw in &args.ids {
            let Some((kind, number)) = parse_item_id(raw) else {
                missing.push(format!(
                    "{raw}: not an id; use o12 (observation), s3 (summary) or e45 (event)"
                ));
                continue;
            };
            let before = out.len();
            let found = match kind {
                'o' => store.observation(number).map_err(store_failed)?.map(|o| {
                    render_observation(&mut out, &o);
                }),
                's' => store.summary(number).map_err(store_failed)?.map(|m| {
                    render_summary(&mut out, &m);
                }),
                'm' => memories::get(&store, number).map_err(memory_failed)?.map(|m| {
                    render_memory(&mut out, &m);
                }),
                _ => store.event(number).map_err(store_failed)?.map(|e| {
                    render_event(&mut out, &e);
                }),
            };
            match found {
                Some(()) if before > 0 => out.insert(before, '\n'),
                Some(()) => {}
                None => missing.push(format!("{kind}{number}: nothing is stored under this id")),
            }
        }
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

    fn run_briefing(&self, args: BriefingArgs) -> Result<String, String> {
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
        let markdown = inject::briefing_markdown(&store, &s.home, &s.config, &project.key, None)
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
        let kind = args.kind.map(MemoryKindArg::kind).unwrap_or(if args.global {
            memories::Kind::Preference
        } else {
            memories::Kind::Fact
        });
        let importance = match args.importance {
            None => 7,
            Some(n @ 1..=10) => n as u8,
            Some(n) => return Err(format!("`importance` is {n}; pass a number from 1 to 10")),
        };
        let text = memories::check_text(&args.text).map_err(|err| format!("`text`: {err}"))?;
        let mut store = self.store()?;
        let (tier, project_id, scope) = if args.global {
            (memories::Tier::L3, None, "global memory (every project)".to_owned())
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
            (memories::Tier::L2, Some(id), format!("the memory of project {}", identity.name))
        };
        let statement = promote::Statement {
            kind,
            text,
            importance,
            sources: Vec::new(),
            origin: origin.to_owned(),
        };
        let settings =
            promote::Settings::from_config(&s.config.promote, s.config.search.embedding_model());
        let placed =
            promote::place(&mut store, &statement, project_id, tier, &settings, time::now_ms())
                .map_err(memory_failed)?;
        Ok(match placed {
            promote::Placed::Merged { into } => {
                format!("already remembered as m{into} in {scope}; nothing new was added")
            }
            promote::Placed::New { id, supersedes: Some(old) } => format!(
                "remembered m{id} in {scope} as a {}; it replaces m{old}, which is no longer shown",
                kind.as_str()
            ),
            promote::Placed::New { id, .. } | promote::Placed::Dropped { like: id } => {
                format!("remembered m{id} in {scope} as a {}", kind.as_str())
            }
        })
    }

    fn run_forget(&self, args: ForgetArgs) -> Result<String, String> {
        let raw = args.id.trim();
        let id = match parse_item_id(raw) {
            Some(('m', id)) if raw.starts_with(['m', 'M', '#']) => id,
            _ => {
                return Err(format!(
                    "`id`: `{raw}` is not a memory id; pass the id `search` shows for a memory, such as m12"
                ));
            }
        };
        let mut store = self.store()?;
        let memory = memories::forget(&mut store, id, time::now_ms()).map_err(|err| match err {
            memories::MemoryError::NotFound(_) => {
                format!("`id`: no memory m{id}; find memories with `search` (ids m…)")
            }
            other => memory_failed(other),
        })?;
        Ok(format!(
            "forgot m{id}: {}; it is no longer searched or shown (undo: `agent-memory forget m{id} --undo`)",
            memory.text
        ))
    }
}

fn memory_failed(err: memories::MemoryError) -> String {
    format!("changing memory failed: {err}")
}

/// Why a read could not be answered: the caller's mistake, an item not stored, or the store.
#[derive(Debug)]
pub enum Failure {
    Invalid(String),
    Missing(String),
    Store(String),
}

impl Failure {
    pub fn message(&self) -> &str {
        match self {
            Failure::Invalid(m) | Failure::Missing(m) | Failure::Store(m) => m,
        }
    }
}

impl From<Failure> for String {
    fn from(failure: Failure) -> String {
        match failure {
            Failure::Invalid(m) | Failure::Missing(m) | Failure::Store(m) => m,
        }
    }
}

impl From<StoreError> for Failure {
    fn from(err: StoreError) -> Failure {
        Failure::Store(store_failed(err))
    }
}

/// A search as the MCP tool and the HTTP API take it, every field as typed by the caller.
#[derive(Debug, Default)]
pub struct SearchRequest {
    pub query: String,
    pub limit: Option<u32>,
    /// `observation`, `summary`, `event`, `memory`; all when empty.
    pub kinds: Vec<String>,
    /// Memory tiers (`L1`, `L2`, `L3`); when given, only memories are searched.
    pub tiers: Vec<String>,
    pub types: Vec<String>,
    pub agent: Option<String>,
    pub project: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
}

/// Runs a search the way the CLI does: the same filters, ranking and vectors. The caller
/// records the hits ([`record_hits`]), at once or in batches.
pub fn search(
    settings: &Settings,
    store: &Store,
    request: SearchRequest,
) -> Result<(SearchQuery, agent_memory_core::store::search::SearchResults), Failure> {
    let query_text = request.query.trim();
    if query_text.is_empty() {
        return Err(Failure::Invalid("`query` is empty; pass the words to look for".into()));
    }
    let limit = match request.limit {
        None => settings.config.search.limit,
        Some(n @ 1..=MAX_LIMIT) => n as usize,
        Some(n) => {
            return Err(Failure::Invalid(format!(
                "`limit` is {n}; pass a number from 1 to {MAX_LIMIT}"
            )));
        }
    };
    let query = SearchQuery {
        text: query_text.to_owned(),
        agent: request.agent.as_deref().map(agent_memory_core::adapter::canonical_agent),
        project: project_filter(store, request.project.as_deref()).map_err(Failure::Store)?,
        since_ms: parse_time("since", request.since.as_deref()).map_err(Failure::Invalid)?,
        until_ms: parse_time("until", request.until.as_deref()).map_err(Failure::Invalid)?,
        kinds: request.kinds,
        tiers: request.tiers,
        types: request.types,
        limit,
        max_terms: settings.config.search.max_query_terms,
        ranking: settings.ranking.clone(),
    };
    let semantic = settings
        .embedder
        .as_deref()
        .and_then(|e| agent_memory_core::embed::query_vector(store, e, &query.text));
    let vector = semantic.as_ref().map(|(index, vector)| VectorQuery { index, vector });
    let results = store.search_hybrid(&query, vector)?;
    Ok((query, results))
}

/// Counts search hits for ranking; a failure costs only the count, so it is logged, not
/// returned.
pub fn record_hits<'a>(store: &Store, hits: impl IntoIterator<Item = (&'a str, i64)>) {
    if let Err(err) = store.record_hits(hits, time::now_ms()) {
        tracing::debug!(%err, "hit counts not updated");
    }
}

/// The project's observations around an anchor: an id (`o12`, `s3`, `e45`) or words, whose
/// best search hit anchors it. Returns the anchor's kind and id with the items.
pub fn timeline(
    settings: &Settings,
    store: &Store,
    anchor: &str,
    before: usize,
    after: usize,
) -> Result<(char, i64, Vec<TimelineItem>), Failure> {
    let text = anchor.trim();
    if text.is_empty() {
        return Err(Failure::Invalid(
            "`anchor` is empty; pass an id from `search` (o12, s3, e45) or words".into(),
        ));
    }
    let (kind, id) = match parse_item_id(text) {
        Some(found) => found,
        // Not an id: the best search hit anchors the timeline, as on the command line.
        None => {
            let query = SearchQuery {
                text: text.to_owned(),
                limit: 1,
                max_terms: settings.config.search.max_query_terms,
                // A timeline is anchored on something that happened in a session.
                kinds: vec!["observation".into(), "summary".into(), "event".into()],
                ..SearchQuery::default()
            };
            let hit = store.search(&query)?.hits.into_iter().next();
            let hit = hit.ok_or_else(|| {
                Failure::Missing(format!(
                    "nothing matches `{text}`; try other words or an id from `search`"
                ))
            })?;
            (hit.kind.chars().next().unwrap_or('e'), hit.id)
        }
    };
    let anchor = store.anchor(kind, id)?.ok_or_else(|| {
        Failure::Missing(format!("nothing is stored under {kind}{id}; ids come from `search`"))
    })?;
    let items = store.timeline_around(&anchor, before, after)?;
    Ok((kind, id, items))
}

pub(crate) fn store_failed(err: StoreError) -> String {
    format!("reading the store failed: {err}; run `agent-memory status` to check it")
}

/// A project filter as typed: a directory becomes its project's key; anything else is matched
/// as a key, name or root.
fn project_filter(store: &Store, value: Option<&str>) -> Result<Option<String>, String> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(None) };
    let path = std::path::Path::new(value);
    if path.is_dir() {
        let roots = store.registered_roots().map_err(store_failed)?;
        return Ok(Some(project::resolve(path, &roots).key));
    }
    Ok(Some(value.to_owned()))
}

pub(crate) fn parse_time(field: &str, value: Option<&str>) -> Result<Option<i64>, String> {
    let Some(value) = value else { return Ok(None) };
    time::parse_when(value, time::now_ms()).map(Some).map_err(|err| format!("`{field}`: {err}"))
}

fn span(field: &str, value: Option<u32>) -> Result<usize, String> {
    match value {
        None => Ok(TIMELINE_SPAN as usize),
        Some(n @ 0..=MAX_LIMIT) => Ok(n as usize),
        Some(n) => Err(format!("`{field}` is {n}; pass a number from 0 to {MAX_LIMIT}")),
    }
}

/// The id `agent-memory show` and `get_observations` take: `o12`, `s3`, `e45`.
fn item_id(kind: &str, id: i64) -> String {
    format!("{}{id}", kind.chars().next().unwrap_or('e'))
}

fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// `search`'s answer: one line per hit, best first, and how to go on.
fn search_index(query: &str, hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return format!("no matches for `{query}`; try fewer or other words, or drop a filter");
    }
    let total: i64 = hits.iter().map(|h| h.tokens).sum();
    let mut out = format!(
        "{} results for `{query}`, best first (id | time | agent | project | type | title | \
         tokens to read in full; {total} in all):\n",
        hits.len()
    );
    for hit in hits {
        let _ = writeln!(
            out,
            "{} | {} | {} | {} | {} | {} | ~{}",
            item_id(hit.kind, hit.id),
            time::format_local(hit.at_ms),
            hit.agent,
            hit.project.as_deref().unwrap_or("-"),
            hit.item_type,
            one_line(&hit.title, 120),
            hit.tokens,
        );
    }
    out.push_str(
        "next: `timeline` around an id for context, `get_observations` with the ids worth \
         reading (all in one call)",
    );
    out
}

/// `timeline`'s answer: the anchor's project's observations, oldest first; `→` marks the
/// anchor when it is an observation.
fn timeline_lines(items: &[TimelineItem], marked: Option<i64>, kind: char, id: i64) -> String {
    if items.is_empty() {
        return format!(
            "no observations around {kind}{id} yet (events are distilled into observations by \
             `agent-memory work`)"
        );
    }
    let mut out = format!(
        "observations around {kind}{id}, oldest first (id | time | agent | type | title | \
         tokens to read in full):\n"
    );
    for item in items {
        let mark = if Some(item.id) == marked { "→ " } else { "" };
        let _ = writeln!(
            out,
            "{mark}o{} | {} | {} | {} | {} | ~{}",
            item.id,
            time::format_local(item.at_ms),
            item.agent,
            item.kind,
            one_line(&item.title, 120),
            item.tokens,
        );
    }
    out.pop();
    out
}

fn list(out: &mut String, label: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "{label}:");
    for item in items {
        let _ = writeln!(out, "- {item}");
    }
}

fn render_observation(out: &mut String, o: &agent_memory_core::store::distilled::Observation) {
    let d = &o.draft;
    let _ = writeln!(out, "## o{} [{}] {}", o.id, d.kind, d.title);
    let _ = writeln!(
        out,
        "{} | {} | {} | session {}",
        time::format_local(d.at_ms),
        o.agent,
        o.project.as_deref().unwrap_or("-"),
        o.session
    );
    if !d.subtitle.is_empty() {
        let _ = writeln!(out, "{}", d.subtitle);
    }
    list(out, "facts", &d.facts);
    if !d.narrative.is_empty() {
        let _ = writeln!(out, "narrative: {}", d.narrative);
    }
    list(out, "concepts", &d.concepts);
    list(out, "files read", &d.files_read);
    list(out, "files modified", &d.files_modified);
    let sources: Vec<String> = d.source_event_ids.iter().map(|id| format!("e{id}")).collect();
    if !sources.is_empty() {
        let _ = writeln!(out, "from events: {}", sources.join(" "));
    }
}

fn render_summary(out: &mut String, m: &agent_memory_core::store::distilled::Summary) {
    let d = &m.draft;
    let _ = writeln!(out, "## s{} summary of session {}", m.id, m.session);
    let _ = writeln!(
        out,
        "{} | {} | {}",
        time::format_local(m.at_ms),
        m.agent,
        m.project.as_deref().unwrap_or("-")
    );
    let _ = writeln!(out, "request: {}", d.request);
    list(out, "investigated", &d.investigated);
    list(out, "learned", &d.learned);
    list(out, "completed", &d.completed);
    list(out, "next steps", &d.next_steps);
    list(out, "files read", &d.files_read);
    list(out, "files modified", &d.files_modified);
}

fn render_memory(out: &mut String, m: &memories::Memory) {
    let scope = m.project_name.as_deref().unwrap_or("global");
    let _ =
        writeln!(out, "## m{} [{}] {} memory, {}", m.id, m.kind.as_str(), m.tier.as_str(), scope);
    let _ = writeln!(
        out,
        "{} | importance {} | {} | {} hits",
        time::format_local(m.updated_at),
        m.importance,
        m.status.as_str(),
        m.hits
    );
    let _ = writeln!(out, "{}", m.text);
    if !m.sources.is_empty() {
        let _ = writeln!(out, "from: {}", m.sources.join(" "));
    }
}

fn render_event(out: &mut String, e: &agent_memory_core::distil::StoredEvent) {
    let ev = &e.event;
    let _ = writeln!(out, "## e{} [{}] {}", e.id, ev.kind.as_str(), one_line(&ev.summary, 200));
    let _ = writeln!(
        out,
        "{} | {} | session {}{}",
        time::format_local(ev.at_ms),
        ev.agent,
        ev.session,
        ev.tool.as_deref().map(|t| format!(" | tool {t}")).unwrap_or_default()
    );
    if !ev.body.is_empty() {
        let _ = writeln!(out, "{}", ev.body.trim_end());
    }
    list(out, "files", &ev.files);
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
                    let hint = one_line(&hint, 300);
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
