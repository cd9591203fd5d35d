//! Commands: one module per subcommand, each a `run` that calls core and hands results to
//! [`crate::output`]. Shared here: loading the home, the configuration and the store.

pub mod brief;
pub mod config;
pub mod doctor;
pub mod export;
pub mod health;
pub mod history;
pub mod hook;
pub mod import;
pub mod install;
pub mod log;
pub mod mcp;
pub mod memories;
pub mod mode;
pub mod model;
pub mod pack;
pub mod plugin;
pub mod project;
pub mod reactions;
pub mod recover;
pub mod reindex;
pub mod report;
pub mod review;
pub mod schedule;
pub mod search;
pub mod serve;
pub mod show;
pub mod status;
pub mod team;
pub mod tidy;
pub mod timeline;
pub mod vault;
pub mod work;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_memory_core::config::Config;
use agent_memory_core::embed::{Embedder, Manifest, SparseEncoder};
use agent_memory_core::paths::Home;
use agent_memory_core::recall;
use agent_memory_core::store::Store;
use agent_memory_core::store::search::Ranking;
use anyhow::Context as _;

use crate::cli::Command;
use crate::output;

/// Runs every command but `hook`, which has its own policy.
pub fn run(command: Command) -> anyhow::Result<()> {
    let ctx = Context::load()?;
    // The MCP server's stdout carries JSON-RPC alone and its stderr is often shown to the user
    // by the client as errors: it logs to the home's log file, as the hook does.
    // So do the server and the work passes started in the background, whose stderr nobody
    // reads.
    let to_file = matches!(command, Command::Mcp)
        || matches!(&command, Command::Serve(a) if !a.status && !a.stop)
        || matches!(&command, Command::Work(a) if a.background || a.for_server);
    if to_file {
        crate::logging::init_file(&ctx.home, &ctx.config);
    } else {
        crate::logging::init_stderr(&ctx.config);
    }
    // A broken config.toml locks nobody out: a setting that does not fit is left out (a file
    // that is no TOML at all gives the defaults), as in the hooks, and every command says so
    // once; doctor reports it as a failure with what to fix.
    if let Some(problem) = &ctx.config_problem {
        match command {
            Command::Doctor(_) => {}
            _ if to_file => tracing::warn!("{problem}"),
            _ => problem.lines().for_each(output::warning),
        }
    }
    match command {
        Command::Hook(_) => Ok(()),
        Command::Search(args) => search::run(&ctx, args),
        Command::Status(args) => status::run(&ctx, args),
        Command::Export(args) => export::run(&ctx, args),
        Command::Import(args) => import::run(&ctx, args),
        Command::History(args) => history::run(&ctx, args),
        Command::Recover(args) => recover::run(&ctx, args),
        Command::Config(args) => config::run(&ctx, args),
        Command::Project(args) => project::run(&ctx, args),
        Command::Work(args) => work::run(&ctx, args),
        Command::Show(args) => show::run(&ctx, args),
        Command::Timeline(args) => timeline::run(&ctx, args),
        Command::Report(args) => report::run(&ctx, args),
        Command::Log(args) => log::run(&ctx, args),
        Command::Mode(args) => mode::run(&ctx, args),
        Command::Model(args) => model::run(&ctx, args),
        Command::Reindex(args) => reindex::run(&ctx, args),
        Command::Reactions(command) => reactions::run(&ctx, command),
        Command::Brief(args) => brief::run(&ctx, args),
        Command::Review(args) => review::run(&ctx, args),
        Command::Remember(args) => memories::remember(&ctx, args),
        Command::Forget(args) => memories::forget(&ctx, args),
        Command::Memories(args) => memories::list(&ctx, args),
        Command::Tidy(args) => tidy::run(&ctx, args),
        Command::Vault(command) => vault::run(&ctx, command),
        Command::Team(command) => team::run(&ctx, command),
        Command::Pack(command) => pack::run(&ctx, command),
        Command::Mcp => mcp::run(&ctx),
        Command::Completions(args) => Ok(output::completions(args.shell)?),
        Command::Plugin(args) => plugin::run(&ctx, args),
        Command::Doctor(args) => doctor::run(&ctx, args),
        Command::Serve(args) => serve::run(&ctx, args),
        Command::Install(args) => install::run(args, agent_memory_core::install::Op::Install),
        Command::Uninstall(args) => install::run(args, agent_memory_core::install::Op::Uninstall),
    }
}

/// What every interactive command starts from.
pub struct Context {
    pub home: Home,
    pub config: Config,
    /// What of `config.toml` (or an `AGENT_MEMORY_*` variable) could not be used, a line each,
    /// when something could not: `config` then holds every setting that fits.
    pub config_problem: Option<String>,
}

/// A flag a first `^C` raises, saying `first` on standard error: the command finishes the step
/// under way (a bounded pass, a download that the same `^C` stopped) and stops there,
/// cleaning up; a second `^C` stops at once. `None` when no handler can be set.
pub fn on_interrupt(first: &'static str) -> Option<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&flag);
    // The handler runs on a thread of its own while main is inside a step: a second ^C can
    // only stop the process from here, with the shell's code for an interrupt.
    #[allow(clippy::disallowed_methods)]
    let set = ctrlc::set_handler(move || {
        if seen.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        crate::output::warning(first);
    });
    set.ok().map(|()| flag)
}

/// Refuses a folder that is no project (in no git repository and under no registered root) as
/// the implicit target of a command that keeps something for a project: kept there, it would
/// reach no agent's work. `instead` says what the command offers in its place.
pub fn within_a_project(
    identity: &agent_memory_core::project::ProjectIdentity,
    roots: &[std::path::PathBuf],
    instead: &str,
) -> anyhow::Result<()> {
    let outside =
        agent_memory_core::project::is_outside_projects(&identity.key, &identity.root, || {
            roots.contains(&identity.root)
        });
    if outside {
        anyhow::bail!(
            "{} is in no git repository and no registered project, so what is kept for it would \
             reach no agent's work; {instead}, or make the folder a project with \
             `agent-memory project add {}`",
            identity.root.display(),
            identity.root.display()
        );
    }
    Ok(())
}

impl Context {
    fn load() -> anyhow::Result<Context> {
        let home = Home::from_env()?;
        let (config, problems) = Config::load_lenient(&home.config_path());
        let config_problem = (!problems.is_empty()).then(|| problems.join("\n"));
        Ok(Context { home, config, config_problem })
    }

    /// Opens the store; interactive commands may wait longer for a lock than a hook.
    pub fn store(&self) -> anyhow::Result<Store> {
        let path = self.home.db_path();
        Store::open(&path, Duration::from_secs(5)).with_context(|| {
            format!(
                "cannot use the store at {}; `agent-memory doctor` says what to do, and if the \
                 file is damaged `agent-memory recover --repair` moves it aside and rebuilds it",
                path.display()
            )
        })
    }

    /// Leaves the store's write-ahead log small after a command that wrote much, so the next
    /// process to open the store does not read it all again; a busy store is left to the next
    /// writer.
    pub fn leave_log_small(&self, store: &Store) {
        if let Err(err) = store.leave_log_small(Duration::from_secs(2)) {
            tracing::debug!(%err, "checkpoint skipped");
        }
    }

    /// The one way commands change long-term memory, as the person.
    pub fn writer<'s>(&self, store: &'s mut Store) -> agent_memory_core::memory::Writer<'s> {
        agent_memory_core::memory::Writer::configured(
            store,
            &self.config,
            agent_memory_core::time::now_ms(),
        )
    }

    /// A project filter as typed: a directory (such as `.`) becomes that directory's project
    /// key; anything else must be a stored project's key, name or root (core's one check,
    /// shared with search, the MCP tools and the HTTP API).
    pub fn project_filter(
        &self,
        store: &Store,
        value: Option<&str>,
    ) -> anyhow::Result<Option<String>> {
        Ok(value.map(|value| recall::known_project(store, value)).transpose()?)
    }
}

impl Context {
    /// The configured embedding model, loaded; `None` when vectors are off or no model is
    /// chosen, and, with a warning, when the chosen one cannot be loaded (search then keeps to
    /// full text rather than fail).
    pub fn embedder(&self) -> Option<Box<dyn Embedder>> {
        let name = self.config.search.embedding_model()?;
        match agent_memory_embed::load_on_first_use(&self.home.models_dir().join(name)) {
            Ok(embedder) => Some(embedder),
            Err(err) => {
                tracing::warn!("searching by full text only: {err}");
                None
            }
        }
    }

    /// The configured learned sparse model, loaded when first asked to encode; `None` when
    /// models are off or none is chosen, and, with a warning, when it cannot be loaded.
    pub fn sparse_encoder(&self) -> Option<Box<dyn SparseEncoder>> {
        let name = self.config.search.sparse_model()?;
        match agent_memory_embed::load_sparse_on_first_use(&self.home.models_dir().join(name)) {
            Ok(encoder) => Some(encoder),
            Err(err) => {
                tracing::warn!("searching without the sparse model: {err}");
                None
            }
        }
    }

    /// How search ranks: the configuration, with the similarity floor of the model in use when
    /// the configuration leaves it unset.
    pub fn ranking(&self) -> Ranking {
        let model_floor = self.config.search.embedding_model().and_then(|name| {
            Manifest::read(&self.home.models_dir().join(name)).ok()?.similarity_floor
        });
        self.config.search.ranking(model_floor)
    }

    /// What `search`, `timeline` and `show` read memory with, here and in the MCP tools and
    /// the HTTP API: the search settings, ranking, the configured mode's types and, when
    /// `by_meaning` (only search uses it; loading it is not free), the embedding model.
    pub fn recall_settings(&self, by_meaning: bool) -> recall::Settings {
        let distil = &self.config.distil;
        let mode_types = match agent_memory_core::distil::mode::load(
            &distil.mode,
            &distil.language,
            Some(&self.home.modes_dir()),
        ) {
            Ok(mode) => mode.types.into_iter().map(|t| t.key).collect(),
            Err(err) => {
                tracing::debug!(%err, "searching with the stored observation types only");
                Vec::new()
            }
        };
        recall::Settings {
            search: self.config.search.clone(),
            ranking: self.ranking(),
            embedder: if by_meaning { self.embedder() } else { None },
            sparse: if by_meaning { self.sparse_encoder() } else { None },
            mode_types,
        }
    }

    /// What the MCP tools and the HTTP API read memory with: this home and configuration,
    /// [`Context::recall_settings`], and the current directory as the default project.
    pub fn serve_settings(&self) -> anyhow::Result<agent_memory_serve::mcp::Settings> {
        Ok(agent_memory_serve::mcp::Settings {
            home: self.home.clone(),
            config: self.config.clone(),
            recall: self.recall_settings(true),
            cwd: std::env::current_dir().context("cannot read the current directory")?,
        })
    }
}

/// Parses an optional `--since`/`--until` value.
pub fn parse_time(value: Option<&str>) -> anyhow::Result<Option<i64>> {
    let now = agent_memory_core::time::now_ms();
    value.map(|v| agent_memory_core::time::parse_when(v, now)).transpose().map_err(Into::into)
}
