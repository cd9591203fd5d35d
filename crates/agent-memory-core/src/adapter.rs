//! Adapters: one agent's hook payload in, one neutral [`Event`] out; and the agent registry.
//!
//! Owns the agent registry ([`AGENTS`]: one [`AgentSpec`] row per agent with everything
//! agent-memory knows about it: names, hook events and their routes, tool families, where and in
//! which shape it takes context, its program and config root, how it is installed, and whether
//! and what of its transcript is read), dispatch on the agent name, and what every adapter
//! shares: lenient field reading, the builders that write an event's summary, body, neutral
//! payload and [`ToolFacts`], tool-output text, file paths and timestamps. Only this module and
//! its children know agent wire formats, and no module outside `adapter/` and `install/` names an
//! agent: the rest of the code asks the registry. Each agent with its own adapter keeps its serde
//! structs in `adapter/<agent>/wire.rs`; agents without one are read by `generic`. `shell`
//! reads what any agent's shell call wrote by its command line and whether its output shows a
//! failure.
//!
//! Adapters must not redact, filter, touch the disk or print: the caller sanitizes the payload
//! before (secrets, injected context and `<private>` spans are already gone) and decides what to
//! store after.

mod claude_code;
mod codex;
mod copilot_log;
mod gemini;
mod generic;
mod hermes_db;
pub mod history;
mod opencode_db;
mod shell;

use std::collections::HashSet;

use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde_json::{Map, Value, json};

use crate::event::{CaptureContext, Event, EventKind, Sensitivity, ToolFacts, ToolKind};
use crate::install::{self, Installer};
use crate::text::{clip, one_line};

/// Longest event summary, in characters (the cut ends in `…`).
pub const SUMMARY_MAX_CHARS: usize = 200;
/// Most tool output an event keeps, in characters, in its body and in its payload's `output`.
pub const OUTPUT_MAX_CHARS: usize = 4_000;
/// Longest [`ToolFacts::added`], in characters (the cut ends in `…`).
const ADDED_MAX_CHARS: usize = 300;
/// What stands for a line break in [`ToolFacts::added`], which is one line.
const LINE_BREAK: &str = " ⏎ ";

const NOT_CAPTURED: &str = "event not captured";
/// Copilot sends no event name in its payloads; its hooks must pass `--event`.
const NO_EVENT: &str = "no event name";
/// Why a pre-tool event is never stored, and why one that cannot be read is skipped.
pub const PRE_TOOL: &str = "pre-tool event: answered, not stored";
/// Model requests and responses repeat what prompts, tools and stops already record.
const MODEL_LEVEL: &str = "model-level event: not stored";

/// What an adapter made of one hook payload.
#[derive(Debug, Clone, PartialEq)]
pub enum Normalized {
    /// The neutral event to store.
    Event(Box<Event>),
    /// A tool call about to run, from an event registered only to be answered.
    Pending(Box<PendingTool>),
    /// Deliberately not stored; the reason is for logs and tests.
    Skip { reason: &'static str },
}

/// A tool call an agent is about to make, read from a pre-tool event: enough to answer it (what
/// is known about the file it reads), never stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingTool {
    pub agent: String,
    /// The event name as given (argv or payload).
    pub source_event: String,
    pub session: String,
    pub cwd: Option<String>,
    /// The agent's own tool name.
    pub tool: String,
    pub tool_kind: ToolKind,
    /// Files the call names, as the agent named them.
    pub files: Vec<String>,
}

/// A payload an adapter could not read. Skipped events never produce one.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error("payload is not a JSON object")]
    NotAnObject,
    #[error("{agent} {event} payload: missing {field}")]
    Missing { agent: String, event: String, field: &'static str },
    #[error("{agent} {event} payload: {field}: {problem}")]
    Invalid { agent: String, event: String, field: &'static str, problem: String },
}

/// Reads one stored event's kind-specific fields.
type Reader = fn(&Hook<'_>) -> Result<Draft, AdapterError>;

/// Reads the tool name and input of a pre-tool event.
type ToolReader = fn(&Hook<'_>) -> Result<(Field<String>, Option<Value>), AdapterError>;

/// What becomes of one hook event.
#[derive(Debug, Clone, Copy)]
enum Route {
    /// Stored as an event of this kind, read by the function.
    Store(EventKind, Reader),
    /// Registered so agent-memory can answer it (file context before a tool runs); not stored.
    /// The function reads the tool call.
    Answer(ToolReader),
    /// Known and deliberately not stored, for this reason.
    Skip(&'static str),
}

/// One agent agent-memory knows by name: how to call it, which hook events it sends and what
/// becomes of each, the families of its tools, where and how it takes context, and how it is
/// found and wired. Everything outside `adapter/` that depends on an agent reads it from here.
#[derive(Debug)]
pub struct AgentSpec {
    /// Canonical name, stored as [`Event::agent`].
    pub name: &'static str,
    /// Other spellings accepted for the name, compared case-insensitively.
    pub aliases: &'static [&'static str],
    /// The agent's name for people.
    pub display: &'static str,
    /// The agent's program, looked for on `PATH` to tell whether it is installed.
    pub program: &'static str,
    /// Where the agent keeps its user-level configuration.
    pub config_root: ConfigRoot,
    /// Tool name → family, compared case-insensitively; a trailing `*` matches a prefix.
    pub tools: &'static [(&'static str, ToolKind)],
    /// Hook events in the agent's own spelling (compared case-insensitively); others are skipped.
    events: &'static [(&'static str, Route)],
    /// Reads the session id, cwd, transcript and time that every event of the agent carries.
    head: HeadReader,
    /// The hook events (in the agent's spelling) whose answer reaches the model, with what each
    /// is answered with. Events not listed are never answered.
    pub slots: &'static [(&'static str, Slot)],
    /// The shape of the agent's answer on standard output.
    pub answer: AnswerShape,
    /// Whether the agent shows a `systemMessage` of a hook's answer to the person, outside the
    /// model's context (checked in its source and with the real CLI); only those get the
    /// session-start sign.
    pub shows_message: bool,
    /// How `install` wires the agent, and what `doctor` checks beyond the common checks.
    pub install: Option<Installer>,
    /// Reads the agent's own transcript for tool calls its hooks never report, at a stop.
    pub transcript: Option<TranscriptReader>,
    /// Reads a turn's closing answer from the end of the agent's own transcript, for an agent
    /// whose stop hook does not hand it over; the work pass calls it, never the hook.
    pub closing_answer: Option<ClosingAnswerReader>,
    /// Where the agent keeps the sessions it already wrote, and how they are read: what
    /// `history import` turns into the events its hooks would have captured.
    pub history: Option<history::HistorySource>,
}

/// What a hook event can be answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The session-start briefing.
    SessionStart,
    /// Prompt-time recall (and, for an agent without a session-start slot, the briefing with
    /// the session's first prompt).
    Prompt,
    /// What earlier sessions did with a file being read.
    FileRead,
}

/// The JSON line an agent reads context from; inject renders it, the registry says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerShape {
    /// `{"hookSpecificOutput": {"hookEventName": E, "additionalContext": C}}`: Claude Code's,
    /// copied by Codex and Gemini CLI. Codex drops any output with a key outside its schema, so
    /// nothing else may be added.
    HookSpecificOutput,
    /// `{"additionalContext": C}`.
    AdditionalContext,
    /// `{"context": C}`, as our own plugins and providers read it.
    Context,
}

/// Where an agent's user-level configuration lives: `dir` under the home directory or under
/// the XDG config directory, unless the agent's own environment variable names another place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigRoot {
    /// The variable the agent reads for its directory (absolute or relative to the current
    /// directory), if it reads one.
    pub env: Option<&'static str>,
    pub base: ConfigBase,
    /// The directory under `base`.
    pub dir: &'static str,
}

/// What a [`ConfigRoot`]'s `dir` is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigBase {
    /// `$HOME`.
    Home,
    /// `$XDG_CONFIG_HOME`, or `~/.config`.
    ConfigHome,
    /// `$XDG_DATA_HOME`, or `~/.local/share`.
    DataHome,
}

impl ConfigRoot {
    /// The root as people write it: `~/.codex`, `~/.config/opencode`.
    pub fn display(&self) -> String {
        match self.base {
            ConfigBase::Home => format!("~/{}", self.dir),
            ConfigBase::ConfigHome => format!("~/.config/{}", self.dir),
            ConfigBase::DataHome => format!("~/.local/share/{}", self.dir),
        }
    }
}

/// A tool call an agent's transcript records but its hooks never reported, as the hook payload
/// the agent would have sent for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreported {
    /// The hook event the payload is read as.
    pub event_name: &'static str,
    pub payload: Value,
    pub at_ms: i64,
    /// The agent's id of the call: what keeps it from being stored twice.
    pub call_id: String,
}

/// Reads one transcript line as an [`Unreported`] call, given the stop that ended the turn and
/// the call ids already stored for the session.
pub type TranscriptReader =
    fn(line: &[u8], stop: &Event, known: &HashSet<String>) -> Option<Unreported>;

/// Reads the closing answer of a turn from the end of the agent's transcript: whole lines, the
/// first of which may be cut or malformed.
pub type ClosingAnswerReader = fn(tail: &[u8], turn: TurnSpan) -> ClosingAnswer;

/// When a turn began (its first stored event, when known) and when its stop came, in Unix
/// milliseconds of the agent's own clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnSpan {
    pub began_ms: Option<i64>,
    pub stop_ms: i64,
}

/// What the end of an agent's transcript says of a turn's closing answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClosingAnswer {
    /// The answer, as the agent wrote it (the caller sanitizes it).
    Found(String),
    /// The transcript holds the turn's end, and no answer with text.
    Absent,
    /// The transcript does not hold the turn's end yet: the agent writes it lazily.
    Unwritten,
}

/// Reads the fields every event of an agent carries.
type HeadReader = fn(&Hook<'_>) -> Result<Head, AdapterError>;

impl AgentSpec {
    /// The hook events whose payloads are stored, with the kind each becomes. Installers
    /// register these.
    pub fn captured(&self) -> impl Iterator<Item = (&'static str, EventKind)> + '_ {
        self.events.iter().filter_map(|(name, route)| match route {
            Route::Store(kind, _) => Some((*name, *kind)),
            Route::Answer(_) | Route::Skip(_) => None,
        })
    }

    /// The hook events registered only to be answered (file context before a tool runs).
    pub fn answered(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.events
            .iter()
            .filter(|(_, route)| matches!(route, Route::Answer(_)))
            .map(|(name, _)| *name)
    }

    fn route(&self, event: &str) -> Option<Route> {
        self.events
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(event))
            .map(|(_, route)| *route)
    }

    fn is_called(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    /// The slot of a hook event (compared case-insensitively), with the event's exact spelling.
    pub fn slot(&self, event: &str) -> Option<(&'static str, Slot)> {
        let event = event.trim();
        self.slots.iter().find(|(e, _)| e.eq_ignore_ascii_case(event)).copied()
    }

    /// Whether any of the agent's events is answered with `slot`.
    pub fn takes(&self, slot: Slot) -> bool {
        self.slots.iter().any(|(_, s)| *s == slot)
    }

    /// The kind a hook event is stored as, if it is stored.
    pub fn stores_as(&self, event: &str) -> Option<EventKind> {
        match self.route(event.trim())? {
            Route::Store(kind, _) => Some(kind),
            Route::Answer(_) | Route::Skip(_) => None,
        }
    }
}

/// Every agent with a name of its own. Any other name is still a valid agent: it is read by the
/// generic adapter, which knows every event spelling below.
pub static AGENTS: &[AgentSpec] = &[
    AgentSpec {
        name: "claude-code",
        aliases: &["claude", "claude_code"],
        display: "Claude Code",
        program: "claude",
        config_root: ConfigRoot { env: None, base: ConfigBase::Home, dir: ".claude" },
        tools: claude_code::TOOLS,
        events: claude_code::EVENTS,
        head: claude_code::head,
        slots: claude_code::SLOTS,
        answer: AnswerShape::HookSpecificOutput,
        shows_message: true,
        install: Some(Installer {
            kind: install::InstallKind::JsonHooks,
            hooks: install::claude_code::HOOKS,
            project_level: true,
            plan: install::claude_code::plan,
        }),
        transcript: None,
        closing_answer: None,
        history: Some(claude_code::history::SOURCE),
    },
    AgentSpec {
        name: "codex",
        aliases: &["codex-cli"],
        display: "Codex CLI",
        program: "codex",
        config_root: ConfigRoot { env: Some("CODEX_HOME"), base: ConfigBase::Home, dir: ".codex" },
        tools: codex::TOOLS,
        events: codex::EVENTS,
        head: claude_code::head,
        slots: codex::SLOTS,
        answer: AnswerShape::HookSpecificOutput,
        shows_message: false,
        install: Some(Installer {
            kind: install::InstallKind::TrustedHooks { untrusted: install::codex::untrusted_hooks },
            hooks: install::codex::HOOKS,
            project_level: false,
            plan: install::codex::plan,
        }),
        transcript: Some(codex::rollout::unreported),
        closing_answer: None,
        history: Some(codex::history::SOURCE),
    },
    AgentSpec {
        name: "gemini",
        aliases: &["gemini-cli"],
        display: "Gemini CLI",
        program: "gemini",
        config_root: ConfigRoot { env: None, base: ConfigBase::Home, dir: ".gemini" },
        tools: gemini::TOOLS,
        events: gemini::EVENTS,
        head: gemini::head,
        slots: gemini::SLOTS,
        answer: AnswerShape::HookSpecificOutput,
        shows_message: true,
        install: Some(Installer {
            kind: install::InstallKind::JsonHooks,
            hooks: install::gemini::HOOKS,
            project_level: true,
            plan: install::gemini::plan,
        }),
        transcript: None,
        closing_answer: None,
        history: Some(gemini::history::SOURCE),
    },
    AgentSpec {
        name: "opencode",
        aliases: &["opencode-ai"],
        display: "OpenCode",
        program: "opencode",
        config_root: ConfigRoot { env: None, base: ConfigBase::ConfigHome, dir: "opencode" },
        tools: generic::TOOLS,
        events: generic::OPENCODE_EVENTS,
        head: generic::head,
        slots: generic::OPENCODE_SLOTS,
        answer: AnswerShape::Context,
        shows_message: false,
        install: Some(Installer {
            kind: install::InstallKind::JsPlugin,
            hooks: &[],
            project_level: true,
            plan: install::opencode::plan,
        }),
        transcript: None,
        closing_answer: None,
        history: Some(opencode_db::SOURCE),
    },
    AgentSpec {
        name: "copilot",
        aliases: &["copilot-cli", "github-copilot"],
        display: "GitHub Copilot CLI",
        program: "copilot",
        config_root: ConfigRoot {
            env: Some("COPILOT_HOME"),
            base: ConfigBase::Home,
            dir: ".copilot",
        },
        tools: generic::TOOLS,
        events: generic::COPILOT_EVENTS,
        head: generic::head,
        slots: generic::COPILOT_SLOTS,
        answer: AnswerShape::AdditionalContext,
        shows_message: false,
        install: Some(Installer {
            kind: install::InstallKind::HooksFile { user_file: install::copilot::user_hooks_file },
            hooks: install::copilot::HOOKS,
            project_level: true,
            plan: install::copilot::plan,
        }),
        transcript: None,
        // Its `agentStop` names only the session log.
        closing_answer: Some(copilot_log::closing_answer),
        history: Some(copilot_log::history::SOURCE),
    },
    AgentSpec {
        name: "hermes",
        aliases: &["hermes-agent"],
        display: "Hermes Agent",
        program: "hermes",
        config_root: ConfigRoot {
            env: Some("HERMES_HOME"),
            base: ConfigBase::Home,
            dir: ".hermes",
        },
        tools: generic::TOOLS,
        events: generic::HERMES_EVENTS,
        head: generic::head,
        slots: generic::HERMES_SLOTS,
        answer: AnswerShape::Context,
        shows_message: false,
        install: Some(Installer {
            kind: install::InstallKind::Provider { plugin_dir: install::hermes::plugin_dir },
            hooks: &[],
            project_level: false,
            plan: install::hermes::plan,
        }),
        transcript: None,
        closing_answer: None,
        history: Some(hermes_db::SOURCE),
    },
];

/// The spec for an agent no table names: events are looked up in every table and read the
/// generic way. It takes no context, is not installed, and has no config root of its own.
static UNKNOWN: AgentSpec = AgentSpec {
    name: "generic",
    aliases: &[],
    display: "Any agent",
    program: "",
    config_root: ConfigRoot { env: None, base: ConfigBase::Home, dir: "" },
    tools: generic::TOOLS,
    events: &[],
    head: generic::head,
    slots: &[],
    answer: AnswerShape::Context,
    shows_message: false,
    install: None,
    transcript: None,
    closing_answer: None,
    history: None,
};

/// The spec for a canonical name or an alias, case-insensitively.
pub fn find_agent(name: &str) -> Option<&'static AgentSpec> {
    let name = name.trim();
    AGENTS.iter().find(|spec| spec.is_called(name))
}

/// Canonical agent name for an alias (case-insensitive); unknown names are kept as given
/// (lowercased, trimmed): any name is a valid agent.
pub fn canonical_agent(name: &str) -> String {
    let name = name.trim().to_lowercase();
    find_agent(&name).map_or(name, |spec| spec.name.to_owned())
}

/// The kind a hook event of `agent` is stored as, if it is stored; for an agent no table names,
/// the kind any table gives the event name.
pub fn stored_kind(agent: &str, event: &str) -> Option<EventKind> {
    match find_agent(agent) {
        Some(spec) => spec.stores_as(event),
        None => AGENTS.iter().find_map(|spec| spec.stores_as(event)),
    }
}

/// Maps one hook payload to the neutral event, or says why it is deliberately skipped.
///
/// `payload` has ALREADY been sanitized by the caller (secrets redacted, injected-context
/// sentinels and `<private>` spans stripped in every string leaf), so adapters do no redaction.
/// The event name is `ctx.event_name` (the hook's `--event`), or the payload's own
/// `hook_event_name` when the command line gave none.
pub fn normalize(ctx: &CaptureContext<'_>, payload: &Value) -> Result<Normalized, AdapterError> {
    let Some(fields) = payload.as_object() else {
        return Err(AdapterError::NotAnObject);
    };
    let event = event_name(ctx, fields);
    if event.is_empty() {
        return Ok(Normalized::Skip { reason: NO_EVENT });
    }
    let (spec, route) = match find_agent(ctx.agent) {
        Some(spec) => (spec, spec.route(event)),
        None => (&UNKNOWN, AGENTS.iter().find_map(|spec| spec.route(event)).map(generic::route)),
    };
    let read = match route {
        Some(Route::Store(_, read)) => read,
        Some(Route::Answer(read)) => {
            return Ok(pending(&Hook { ctx, spec, event, payload }, read));
        }
        Some(Route::Skip(reason)) => return Ok(Normalized::Skip { reason }),
        None => {
            return Ok(Normalized::Skip { reason: NOT_CAPTURED });
        }
    };
    let hook = Hook { ctx, spec, event, payload };
    // The session comes first: without it nothing else about the event matters.
    let mut head = (spec.head)(&hook)?;
    let session = hook.require(std::mem::take(&mut head.session), "session id")?;
    let draft = read(&hook)?;
    Ok(hook.finish(session, head, draft))
}

/// The tool call of a pre-tool event. Leniently: a payload it cannot read is skipped, as every
/// pre-tool event was before agent-memory answered them, never rejected.
fn pending(hook: &Hook<'_>, read: ToolReader) -> Normalized {
    let skip = Normalized::Skip { reason: PRE_TOOL };
    let Ok(mut head) = (hook.spec.head)(hook) else { return skip };
    let Some(session) = std::mem::take(&mut head.session).text() else { return skip };
    let Ok((name, input)) = read(hook) else { return skip };
    let Some(tool) = name.text() else { return skip };
    let tool_kind = tool_kind(hook.spec.tools, &tool);
    let files = files_in(tool_kind, input.as_ref().unwrap_or(&Value::Null));
    Normalized::Pending(Box::new(PendingTool {
        agent: hook.ctx.agent.to_owned(),
        source_event: hook.event.to_owned(),
        session,
        cwd: head.cwd,
        tool,
        tool_kind,
        files,
    }))
}

fn event_name<'a>(ctx: &CaptureContext<'a>, fields: &'a Map<String, Value>) -> &'a str {
    let argv = ctx.event_name.trim();
    if !argv.is_empty() {
        return argv;
    }
    // Copilot names only its permission event, as `hookName`.
    ["hook_event_name", "hookName"]
        .iter()
        .find_map(|key| fields.get(*key)?.as_str())
        .map_or("", str::trim)
}

/// Where agents put a tool call's id: Claude Code and Codex, Hermes, OpenCode.
const CALL_ID_KEYS: &[&str] = &["tool_use_id", "tool_call_id", "callID"];

/// One hook call being read.
#[derive(Debug)]
struct Hook<'a> {
    ctx: &'a CaptureContext<'a>,
    spec: &'static AgentSpec,
    /// The event name as given (argv or payload), kept as the event's `source_event`.
    event: &'a str,
    payload: &'a Value,
}

impl Hook<'_> {
    /// The payload as one of the agent's wire structs.
    fn parse<T: DeserializeOwned>(&self) -> Result<T, AdapterError> {
        T::deserialize(self.payload).map_err(|e| self.invalid("payload", e.to_string()))
    }

    /// A field the event cannot do without: present, a string, and not blank.
    fn require(&self, field: Field<String>, what: &'static str) -> Result<String, AdapterError> {
        match field {
            Field::Present(text) if !text.trim().is_empty() => Ok(text),
            Field::Invalid(problem) => Err(self.invalid(what, problem)),
            Field::Present(_) | Field::Absent => Err(self.missing(what)),
        }
    }

    fn missing(&self, field: &'static str) -> AdapterError {
        AdapterError::Missing {
            agent: self.ctx.agent.to_owned(),
            event: self.event.to_owned(),
            field,
        }
    }

    fn invalid(&self, field: &'static str, problem: String) -> AdapterError {
        AdapterError::Invalid {
            agent: self.ctx.agent.to_owned(),
            event: self.event.to_owned(),
            field,
            problem,
        }
    }

    /// A tool call by the agent's own tool name (required), its family looked up in the agent's
    /// table; the adapter fills in the result.
    fn tool(&self, name: Field<String>, input: Option<Value>) -> Result<ToolCall, AdapterError> {
        let name = self.require(name, "tool name")?;
        let kind = tool_kind(self.spec.tools, &name);
        let mcp = match kind {
            ToolKind::Mcp => {
                split_mcp(&name).map(|(server, tool)| (server.to_owned(), tool.to_owned()))
            }
            _ => None,
        };
        Ok(ToolCall {
            name,
            kind,
            input: input.unwrap_or(Value::Null),
            output: String::new(),
            is_error: false,
            exit_code: None,
            duration_ms: None,
            mcp,
            call_id: CALL_ID_KEYS
                .iter()
                .find_map(|key| self.payload.get(*key)?.as_str())
                .filter(|id| !id.is_empty())
                .map(str::to_owned),
        })
    }

    fn finish(&self, session: String, head: Head, draft: Draft) -> Normalized {
        let summary = event_summary(draft.summary, head.cwd.as_deref());
        Normalized::Event(Box::new(Event {
            uid: self.ctx.uid.to_owned(),
            agent: self.ctx.agent.to_owned(),
            kind: draft.kind,
            source_event: self.event.to_owned(),
            session,
            cwd: head.cwd,
            at_ms: head.at_ms.unwrap_or(self.ctx.received_at_ms),
            tool: draft.tool,
            tool_kind: draft.tool_kind,
            summary,
            body: draft.body,
            payload: draft.payload,
            files: draft.files,
            sensitivity: Sensitivity::Normal,
            transcript_path: head.transcript_path,
            facts: draft.facts,
        }))
    }
}

/// An event's summary: one line of at most [`SUMMARY_MAX_CHARS`], paths inside the working
/// directory relative to it (the body keeps them whole).
fn event_summary(mut summary: String, cwd: Option<&str>) -> String {
    if let Some(cwd) =
        cwd.filter(|cwd| cwd.len() > 1 && summary.contains(cwd.trim_end_matches('/')))
    {
        summary = summary.replace(&format!("{}/", cwd.trim_end_matches('/')), "");
    }
    truncate(&one_line(&summary), SUMMARY_MAX_CHARS)
}

/// Gives a stop the closing answer its hook did not carry (read later from the agent's
/// transcript by its [`ClosingAnswerReader`]), as the adapter would have had the hook carried
/// it: the answer as the payload's `last_message`, the body when the body is empty, and the
/// summary. `answer` must already be sanitized; events of other kinds are left alone.
pub fn set_closing_answer(stop: &mut Event, answer: &str) {
    if stop.kind != EventKind::Stop {
        return;
    }
    let draft = Draft::stop(Some(answer.to_owned()));
    stop.summary = event_summary(draft.summary, stop.cwd.as_deref());
    if stop.body.trim().is_empty() {
        stop.body = draft.body;
    }
    match &mut stop.payload {
        Value::Object(fields) => {
            fields.insert("last_message".into(), Value::String(answer.to_owned()));
        }
        _ => stop.payload = draft.payload,
    }
}

/// The closing answer a stop carries (`last_message`), when it carries one with text.
pub fn closing_answer_of(stop: &Event) -> Option<&str> {
    stop.payload.get("last_message")?.as_str().filter(|text| !text.trim().is_empty())
}

/// A payload field read leniently. Optional fields treat a wrong type as absent; required ones
/// ([`Hook::require`]) turn it into an [`AdapterError`] naming the field, never a panic.
#[derive(Debug, Clone, PartialEq, Default)]
enum Field<T> {
    /// Not sent, or `null`.
    #[default]
    Absent,
    /// Sent with a type the agent is not known to send; serde's words for what was wrong.
    Invalid(String),
    Present(T),
}

impl<T: DeserializeOwned> Field<T> {
    fn from_value(value: Value) -> Self {
        if value.is_null() {
            return Field::Absent;
        }
        match T::deserialize(value) {
            Ok(v) => Field::Present(v),
            Err(e) => Field::Invalid(e.to_string()),
        }
    }

    /// The value, if present with the expected type.
    fn ok(self) -> Option<T> {
        match self {
            Field::Present(v) => Some(v),
            Field::Absent | Field::Invalid(_) => None,
        }
    }
}

impl Field<String> {
    /// The text, if present, a string, and not blank.
    fn text(self) -> Option<String> {
        self.ok().filter(|s| !s.trim().is_empty())
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Field::from_value)
    }
}

/// What every event of an agent carries besides its kind-specific fields.
#[derive(Debug, Default)]
struct Head {
    session: Field<String>,
    cwd: Option<String>,
    transcript_path: Option<String>,
    /// When the agent says the moment happened; the receive time otherwise.
    at_ms: Option<i64>,
}

/// The parts of an event an adapter decides; [`Hook::finish`] adds the rest.
#[derive(Debug)]
struct Draft {
    kind: EventKind,
    summary: String,
    body: String,
    payload: Value,
    tool: Option<String>,
    tool_kind: Option<ToolKind>,
    files: Vec<String>,
    facts: ToolFacts,
}

impl Draft {
    fn new(kind: EventKind, summary: String, body: String, payload: Value) -> Draft {
        Draft {
            kind,
            summary,
            body,
            payload,
            tool: None,
            tool_kind: None,
            files: Vec::new(),
            facts: ToolFacts::default(),
        }
    }

    fn session_start(source: Option<String>, model: Option<String>) -> Draft {
        let summary = labelled("Session started", source.as_deref());
        let mut payload = json!({ "source": source });
        if let Some(model) = model {
            payload["model"] = Value::String(model);
        }
        Draft::new(EventKind::SessionStart, summary, String::new(), payload)
    }

    fn prompt(prompt: String) -> Draft {
        let summary = format!("Prompt: {prompt}");
        let payload = json!({ "prompt": prompt });
        Draft::new(EventKind::Prompt, summary, prompt, payload)
    }

    fn stop(last_message: Option<String>) -> Draft {
        let summary = match &last_message {
            Some(message) => format!("Turn ended: {message}"),
            None => "Turn ended".to_owned(),
        };
        let payload = json!({ "last_message": last_message });
        Draft::new(EventKind::Stop, summary, last_message.unwrap_or_default(), payload)
    }

    fn session_end(reason: Option<String>) -> Draft {
        let summary = labelled("Session ended", reason.as_deref());
        Draft::new(EventKind::SessionEnd, summary, String::new(), json!({ "reason": reason }))
    }

    /// The agent compacted its context: earlier turns are now only a summary in its window.
    fn compacted(trigger: Option<String>, instructions: Option<String>) -> Draft {
        let summary = labelled("Context compacted", trigger.as_deref());
        let payload = json!({ "trigger": trigger, "instructions": instructions });
        Draft::new(EventKind::Note, summary, instructions.unwrap_or_default(), payload)
    }

    fn tool_use(call: ToolCall) -> Draft {
        let files = files_in(call.kind, &call.input);
        let is_error = call.is_error || call.exit_code.is_some_and(|code| code != 0);
        let (head, separator, detail) = describe(&call, &files);
        let summary = if is_error {
            let failed = match call.exit_code {
                Some(code) if code != 0 => format!("{head} failed (exit {code})"),
                _ => format!("{head} failed"),
            };
            join_nonempty(&[&failed, &detail], ": ")
        } else {
            join_nonempty(&[&head, &detail], separator)
        };
        let whole = call.output.trim_end();
        let output = truncate(whole, OUTPUT_MAX_CHARS);
        let body = join_nonempty(&[&truncate(&detail, OUTPUT_MAX_CHARS), &output], "\n");
        let mut payload = json!({ "input": call.input, "output": output, "is_error": is_error });
        if let Some(code) = call.exit_code {
            payload["exit_code"] = code.into();
        }
        if let Some(ms) = call.duration_ms {
            payload["duration_ms"] = ms.into();
        }
        if let Some((server, _)) = call.mcp {
            payload["mcp_server"] = server.into();
        }
        if let Some(id) = call.call_id {
            payload["call_id"] = id.into();
        }
        // Runners sum up at the end of a long output, past what the event keeps of it.
        let outputs = [output.as_str(), ending(whole, OUTPUT_MAX_CHARS)];
        let facts = facts_of(call.kind, &files, &call.input, &outputs, is_error, call.exit_code);
        Draft {
            kind: EventKind::ToolUse,
            summary,
            body,
            payload,
            tool: Some(call.name),
            tool_kind: Some(call.kind),
            files,
            facts,
        }
    }
}

/// `Session started (startup)`, or just `Session started` when the agent gave no reason.
fn labelled(what: &str, label: Option<&str>) -> String {
    match label {
        Some(label) => format!("{what} ({label})"),
        None => what.to_owned(),
    }
}

/// One finished tool call, in neutral terms; adapters fill it from their wire structs.
#[derive(Debug)]
struct ToolCall {
    /// The agent's own tool name (`Bash`, `run_shell_command`, `mcp__mem__mem_search`).
    name: String,
    kind: ToolKind,
    input: Value,
    /// The result as text (see [`text_of`]); capped when stored.
    output: String,
    is_error: bool,
    exit_code: Option<i64>,
    duration_ms: Option<u64>,
    /// MCP server and tool, for MCP tools.
    mcp: Option<(String, String)>,
    /// The agent's id of this call, when it gives one: what tells a call read from a
    /// transcript from the same call its hook already reported.
    call_id: Option<String>,
}

/// The family of a tool by the agent's table; `Other` when the table does not know it.
fn tool_kind(table: &[(&str, ToolKind)], name: &str) -> ToolKind {
    let matches = |pattern: &str| match pattern.strip_suffix('*') {
        Some(prefix) => {
            name.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix))
        }
        None => pattern.eq_ignore_ascii_case(name),
    };
    table.iter().find(|(pattern, _)| matches(pattern)).map_or(ToolKind::Other, |(_, kind)| *kind)
}

/// Server and tool of an MCP tool name: `mcp__srv__tool` (Claude Code, Codex, Hermes) or
/// `mcp_srv_tool` (Gemini CLI, whose server aliases cannot contain `_`).
fn split_mcp(name: &str) -> Option<(&str, &str)> {
    match name.strip_prefix("mcp__") {
        Some(rest) => rest.split_once("__"),
        None => name.strip_prefix("mcp_")?.split_once('_'),
    }
}

/// Which input fields say what a tool of each family was about, best first.
fn detail_keys(kind: ToolKind) -> &'static [&'static str] {
    match kind {
        ToolKind::Shell => &["command", "cmd"],
        ToolKind::Search => &["pattern", "query", "glob", "regex"],
        ToolKind::Web => &["url", "query", "prompt"],
        ToolKind::Agent => &["description", "prompt"],
        _ => &[],
    }
}

/// A tool call as (head, separator, detail): `Bash` `: ` `cargo test`, `Read` ` ` `src/main.rs`,
/// `MCP mem/mem_search` `: ` `query=answer`.
fn describe(call: &ToolCall, files: &[String]) -> (String, &'static str, String) {
    let verb = match call.kind {
        ToolKind::Read => Some("Read"),
        ToolKind::Edit => Some("Edit"),
        ToolKind::Write => Some("Write"),
        _ => None,
    };
    if let (Some(verb), false) = (verb, files.is_empty()) {
        return (verb.to_owned(), " ", files.join(", "));
    }
    let head = match &call.mcp {
        Some((server, tool)) => format!("MCP {server}/{tool}"),
        None => call.name.clone(),
    };
    let keyed = detail_keys(call.kind).iter().find_map(|key| match call.input.get(key)? {
        Value::String(text) => Some(text.clone()),
        // Some agents send a command as argv.
        Value::Array(words) => Some(words.iter().map(scalar_text).collect::<Vec<_>>().join(" ")),
        _ => None,
    });
    let detail = keyed.unwrap_or_else(|| render_args(&call.input));
    (head, ": ", detail)
}

/// Tool arguments on one line: `query=answer, limit=5`.
fn render_args(input: &Value) -> String {
    match input {
        Value::Object(args) => args
            .iter()
            .map(|(key, value)| format!("{key}={}", scalar_text(value)))
            .collect::<Vec<_>>()
            .join(", "),
        other => scalar_text(other),
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Fields that hold the text of a tool result, best first, across agents.
const TEXT_KEYS: &[&str] = &[
    "content",
    "filenames",
    "output",
    "text",
    "textResultForLlm",
    "llmContent",
    "returnDisplay",
    "result",
    "file",
];

/// The readable text of a tool result, whatever its shape: a string as is; MCP content blocks
/// (`[{type: "text", text}]`) joined by lines, other blocks as `[image]`; a shell result as
/// stdout then stderr; an object by its first text-bearing field; anything else as JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(block_text).collect();
            join_nonempty(&parts.iter().map(String::as_str).collect::<Vec<_>>(), "\n")
        }
        Value::Object(fields) => {
            if let Some(stdout) = fields.get("stdout") {
                let stderr = fields.get("stderr").map(text_of).unwrap_or_default();
                return join_nonempty(&[&text_of(stdout), &stderr], "\n");
            }
            TEXT_KEYS
                .iter()
                .find_map(|key| fields.get(*key).filter(|v| !is_empty(v)))
                .map_or_else(|| value.to_string(), text_of)
        }
        other => other.to_string(),
    }
}

fn block_text(block: &Value) -> String {
    match (block.get("text").and_then(Value::as_str), block.get("type").and_then(Value::as_str)) {
        (Some(text), _) => text.to_owned(),
        (None, Some(kind)) => format!("[{kind}]"),
        (None, None) => text_of(block),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// An exit code stated in a tool's own words at the start of a line: `Exit code 1` (Claude
/// Code's failure text), `Exit Code: 1` (Gemini CLI's shell output).
fn exit_code_in(text: &str) -> Option<i64> {
    text.lines().find_map(|line| {
        let line = line.trim_start();
        let rest = line
            .get(..9)
            .filter(|head| head.eq_ignore_ascii_case("exit code"))
            .map(|_| &line[9..])?;
        rest.trim_start_matches([':', ' ']).split_whitespace().next()?.parse().ok()
    })
}

/// The facts of a tool call of family `kind` that changed or read `files`, from its arguments
/// (`input`), what it printed (`outputs`: parts of its output) and outcome. The one place that
/// reads a command, a query, a created file or a change's text out of an agent's tool
/// arguments.
fn facts_of(
    kind: ToolKind,
    files: &[String],
    input: &Value,
    outputs: &[&str],
    failed: bool,
    exit_code: Option<i64>,
) -> ToolFacts {
    let mut facts = ToolFacts { failed, exit_code, ..ToolFacts::default() };
    match kind {
        ToolKind::Shell => {
            facts.command = command_in(input);
            // An exit code hidden by `| tail` or `; echo done` never turns a failure into a pass.
            facts.failed |= outputs.iter().any(|output| shell::output_failed(output));
            let writes = shell_line(input).map(|line| shell::writes(&line)).unwrap_or_default();
            facts.added = added_text(writes.texts.iter().map(String::as_str));
            facts.written = writes.files;
        }
        ToolKind::Search => facts.query = query_in(input),
        ToolKind::Write => {
            facts.written = files.to_vec();
            facts.created = files.to_vec();
            facts.added = edit_added(input);
        }
        ToolKind::Edit => {
            facts.written = files.to_vec();
            facts.created = added_files(input);
            facts.added = edit_added(input);
        }
        _ => {}
    }
    facts
}

/// The facts of a stored tool use, derived from its neutral payload (`input`, `output`,
/// `is_error`, `exit_code`) as the adapter would have filled them: for events stored before the
/// facts existed, and for imports from such versions. Only the output the event kept is read.
/// Empty for every other kind of event.
pub fn tool_facts(
    kind: EventKind,
    tool_kind: Option<ToolKind>,
    files: &[String],
    payload: &Value,
) -> ToolFacts {
    let Some(tool_kind) = tool_kind.filter(|_| kind == EventKind::ToolUse) else {
        return ToolFacts::default();
    };
    let exit_code = payload.get("exit_code").and_then(Value::as_i64);
    let failed = payload.get("is_error").and_then(Value::as_bool) == Some(true)
        || exit_code.is_some_and(|code| code != 0);
    let output = payload.get("output").and_then(Value::as_str).unwrap_or_default();
    let input = payload.get("input").unwrap_or(&Value::Null);
    facts_of(tool_kind, files, input, &[output], failed, exit_code)
}

/// The command of a shell call: its `command` or `cmd` argument (some agents send argv, joined
/// here by spaces), or the whole input when the agent sends it as one string.
fn command_in(input: &Value) -> Option<String> {
    let text = match input {
        Value::String(text) => text.clone(),
        _ => match input.get("command").or_else(|| input.get("cmd"))? {
            Value::String(text) => text.clone(),
            Value::Array(words) => {
                words.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")
            }
            _ => return None,
        },
    };
    (!text.trim().is_empty()).then_some(text)
}

/// A shell call's command as a shell reads it: argv quoted back into one line, so that
/// `["bash", "-lc", "sed -i … f"]` keeps its script whole.
fn shell_line(input: &Value) -> Option<String> {
    match input.get("command").or_else(|| input.get("cmd")) {
        Some(Value::Array(words)) => {
            let words: Vec<String> = words.iter().filter_map(Value::as_str).map(quoted).collect();
            Some(words.join(" "))
        }
        _ => command_in(input),
    }
}

/// One argv word as a shell would need it written.
fn quoted(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// What a search looked for, by the first of its arguments that says so.
fn query_in(input: &Value) -> Option<String> {
    ["pattern", "query", "glob", "regex"]
        .iter()
        .find_map(|key| input.get(key)?.as_str())
        .filter(|query| !query.trim().is_empty())
        .map(str::to_owned)
}

/// The files a patch in any string argument adds (`*** Add File: `), as the patch names them.
fn added_files(input: &Value) -> Vec<String> {
    let mut added: Vec<String> = Vec::new();
    for line in string_args(input).iter().flat_map(|text| text.lines()) {
        if let Some(file) = line.strip_prefix("*** Add File: ").map(str::trim)
            && !file.is_empty()
            && !added.iter().any(|known| known == file)
        {
            added.push(file.to_owned());
        }
    }
    added
}

/// Input fields that hold the text an edit or write tool puts into a file, across agents:
/// `new_string` (Claude Code, Gemini CLI, Hermes), `new_str` and `file_text` (Copilot),
/// `newString` (OpenCode), a write's `content`, a notebook cell's `new_source`.
const NEW_TEXT_KEYS: &[&str] =
    &["new_string", "new_str", "newString", "content", "file_text", "new_source"];

/// What an edit or write tool put into files: its new text (also each of `edits`, as Claude
/// Code's `MultiEdit` sends them), or else the lines a patch in any string argument adds.
fn edit_added(input: &Value) -> Option<String> {
    fn keyed(fields: &Value) -> impl Iterator<Item = &str> {
        NEW_TEXT_KEYS.iter().filter_map(|key| fields.get(key)?.as_str())
    }
    let edits = input.get("edits").and_then(Value::as_array).into_iter().flatten();
    let texts: Vec<&str> = keyed(input).chain(edits.flat_map(keyed)).collect();
    if let Some(added) = added_text(texts) {
        return Some(added);
    }
    let patches: Vec<String> = string_args(input)
        .into_iter()
        .filter(|text| is_patch(text))
        .filter_map(|text| patch_additions(text, false))
        .collect();
    added_text(patches.iter().map(String::as_str))
}

/// Whether a text is a patch: Codex's format, or a unified diff's hunks.
fn is_patch(text: &str) -> bool {
    text.lines().any(|line| {
        line.starts_with("@@")
            || line.starts_with("*** Begin Patch")
            || PATCH_HEADERS.iter().any(|header| line.starts_with(header))
    })
}

/// The lines a patch adds, without their `+`, one per line: a unified diff's (its `---`/`+++`
/// file headers left out) or Codex's format's. With `reverse`, the lines it removes, which
/// applying it in reverse adds. `None` when it adds none.
fn patch_additions(patch: &str, reverse: bool) -> Option<String> {
    let mark = if reverse { '-' } else { '+' };
    let lines: Vec<&str> = patch.lines().collect();
    let mut added: Vec<&str> = Vec::new();
    let mut at = 0;
    while let Some(line) = lines.get(at) {
        let header = line.starts_with("--- ")
            && lines.get(at + 1).is_some_and(|next| next.starts_with("+++ "));
        if header {
            at += 2;
            continue;
        }
        added.extend(line.strip_prefix(mark));
        at += 1;
    }
    (!added.is_empty()).then(|| added.join("\n"))
}

/// The text a change put into files as one readable line: the lines that say something (blank
/// ones and lone brackets left out, whitespace collapsed) joined by [`LINE_BREAK`], cut at
/// [`ADDED_MAX_CHARS`]. `None` when nothing is left.
fn added_text<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut out = String::new();
    let mut chars = 0;
    for line in texts.into_iter().flat_map(str::lines) {
        let line = one_line(line);
        if line.chars().all(|c| "{}()[];,".contains(c)) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(LINE_BREAK);
            chars += LINE_BREAK.chars().count();
        }
        chars += line.chars().count();
        out.push_str(&line);
        if chars > ADDED_MAX_CHARS {
            break;
        }
    }
    (!out.is_empty()).then(|| clip(&out, ADDED_MAX_CHARS))
}

/// The string arguments of a tool call: the input itself when it is a string, else its
/// top-level string fields.
fn string_args(input: &Value) -> Vec<&str> {
    match input {
        Value::String(text) => vec![text],
        Value::Object(fields) => fields.values().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Drops every argument from a tool use's payload but those that name the file it touched or
/// the command it ran: all a sensitive event keeps of its call.
pub fn keep_only_access(payload: &mut Value) {
    let keep: Map<String, Value> = payload
        .get("input")
        .and_then(Value::as_object)
        .map(|input| {
            input
                .iter()
                .filter(|(key, _)| *key == "command" || PATH_KEYS.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        })
        .unwrap_or_default();
    if let Value::Object(payload) = payload {
        payload.insert("input".into(), Value::Object(keep));
    }
}

/// Top-level fields of a hook payload worth keeping when the payload was cut off at the stdin
/// cap and is no longer JSON: ids, names and paths, in every agent's spelling.
pub const SALVAGED_FIELDS: &[&str] = &[
    "session_id",
    "sessionId",
    "sessionID",
    "hook_event_name",
    "cwd",
    "transcript_path",
    "tool_name",
    "toolName",
    "tool_use_id",
    "model",
    "source",
    "reason",
];

/// Input fields that name the one file a tool works on, across agents.
const PATH_KEYS: &[&str] = &["file_path", "path", "absolute_path", "notebook_path", "filePath"];
/// Lines of Codex's patch format that name a file.
const PATCH_HEADERS: &[&str] =
    &["*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: "];

/// Files a tool call read or changed, as the agent named them: path fields and `paths` lists of
/// file tools, and the file lines of a patch in any string argument (Codex's `apply_patch`,
/// also when run through the shell).
fn files_in(kind: ToolKind, input: &Value) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let mut add = |file: &str| {
        let file = file.trim();
        if !file.is_empty() && !files.iter().any(|known| known == file) {
            files.push(file.to_owned());
        }
    };
    // A search or shell tool's `path` is where it looked, not a file it read.
    if matches!(
        kind,
        ToolKind::Read | ToolKind::Edit | ToolKind::Write | ToolKind::Mcp | ToolKind::Other
    ) {
        PATH_KEYS.iter().filter_map(|key| input.get(key)?.as_str()).for_each(&mut add);
        let paths = input.get("paths").and_then(Value::as_array).into_iter().flatten();
        paths.filter_map(Value::as_str).for_each(&mut add);
    }
    for line in string_args(input).iter().flat_map(|text| text.lines()) {
        PATCH_HEADERS.iter().filter_map(|header| line.strip_prefix(header)).for_each(&mut add);
    }
    files
}

/// `text` cut to at most `max` characters on a char boundary, ending in `…` when cut.
fn truncate(text: &str, max: usize) -> String {
    if text.chars().nth(max).is_none() {
        return text.to_owned();
    }
    let end = text.char_indices().nth(max.saturating_sub(1)).map_or(text.len(), |(at, _)| at);
    format!("{}…", &text[..end])
}

/// The last `max` characters of `text` from a line's start, when `text` is longer; else empty.
fn ending(text: &str, max: usize) -> &str {
    let Some((cut, _)) = text.char_indices().nth_back(max) else { return "" };
    let tail = &text[cut..];
    tail.split_once('\n').map_or("", |(_, whole_lines)| whole_lines)
}

fn join_nonempty(parts: &[&str], separator: &str) -> String {
    parts.iter().filter(|part| !part.is_empty()).copied().collect::<Vec<_>>().join(separator)
}

/// Unix milliseconds of a timestamp field: epoch milliseconds (or seconds, if small enough to
/// be seconds), or an ISO 8601 string.
fn timestamp_ms(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => {
            let n = n.as_i64()?;
            // 1e11 seconds is the year 5138, 1e11 milliseconds is 1973.
            let per_unit = if n.unsigned_abs() < 100_000_000_000 { 1000 } else { 1 };
            Some(n * per_unit)
        }
        Value::String(text) => parse_iso_ms(text),
        _ => None,
    }
}

/// Unix milliseconds of an RFC 3339 timestamp (`2026-12-02T14:33:59.561Z`).
fn parse_iso_ms(text: &str) -> Option<i64> {
    text.trim().parse::<jiff::Timestamp>().ok().map(|t| t.as_millisecond())
}

#[cfg(test)]
mod boundary;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::fmt::Write as _;
    use std::path::PathBuf;

    use expect_test::{Expect, expect};
    use serde_json::json;

    use super::*;

    const RECEIVED_AT_MS: i64 = 1_700_000_000_000;

    fn ctx<'a>(agent: &'a str, event: &'a str) -> CaptureContext<'a> {
        CaptureContext { uid: "test-uid", agent, event_name: event, received_at_ms: RECEIVED_AT_MS }
    }

    /// The payloads `scripts/record-fixtures` recorded from the real agents, one directory per
    /// agent, committed in the testkit crate.
    fn fixtures_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../agent-memory-testkit/fixtures/agents")
    }

    fn read_sample(dir: &str, file: &str) -> Value {
        let path = fixtures_dir().join(dir).join(file);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// One directory of captured payloads: the agent that sent them and every file in it that
    /// is a hook's stdin. The event name is the file name's first dot-segment.
    struct Samples {
        agent: &'static str,
        dir: &'static str,
        hook_payloads: &'static [&'static str],
    }

    const SAMPLES: &[Samples] = &[
        Samples {
            agent: "claude-code",
            dir: "claude-code",
            hook_payloads: &[
                "SessionStart.json",
                "SessionStart.plugin.json",
                "InstructionsLoaded.json",
                "UserPromptSubmit.json",
                "PreToolUse.json",
                "PreToolUse.mcp.json",
                "PostToolUse.json",
                "PostToolUse.mcp.json",
                "PostToolBatch.json",
                "MessageDisplay.json",
                "Stop.json",
                "SessionEnd.json",
            ],
        },
        Samples {
            agent: "codex",
            dir: "codex",
            hook_payloads: &[
                "SessionStart.json",
                "UserPromptSubmit.json",
                "PreModelRequest.json",
                "PreToolUse.json",
                "PreToolUse.mcp.json",
                "PostToolUse.json",
                "PostToolUse.mcp.json",
                "Stop.json",
                "SessionEnd.json",
            ],
        },
        Samples {
            agent: "gemini",
            dir: "gemini",
            hook_payloads: &[
                "SessionStart.json",
                "SessionStart.resume.json",
                "BeforeAgent.json",
                "PreCompress.json",
                "BeforeModel.json",
                "BeforeToolSelection.json",
                "AfterModel.json",
                "AfterModel.functionCall-chunk.json",
                "BeforeTool.json",
                "BeforeTool.mcp.json",
                "AfterTool.json",
                "AfterTool.mcp.json",
                "AfterAgent.json",
                "SessionEnd.json",
            ],
        },
        Samples {
            agent: "copilot",
            dir: "copilot",
            hook_payloads: &[
                "sessionStart.json",
                "userPromptSubmitted.json",
                "permissionRequest.json",
                "permissionRequest.mcp.json",
                "preToolUse.json",
                "preToolUse.mcp.json",
                "postToolUse.json",
                "postToolUse.mcp.json",
                "agentStop.json",
                "sessionEnd.json",
            ],
        },
        Samples {
            agent: "hermes",
            dir: "hermes/shell",
            hook_payloads: &[
                "on_session_start.json",
                "pre_llm_call.json",
                "pre_tool_call.json",
                "post_tool_call.json",
                "post_llm_call.json",
                "on_session_end.json",
                "on_session_finalize.json",
            ],
        },
    ];

    /// `.json` files beside the hook payloads that are not a hook's stdin: a model request with
    /// injected context, Gemini CLI's `-o json` output, Codex's notify argv. (`.jsonl` and
    /// `.txt` files are transcripts and logs.)
    const NOT_HOOK_PAYLOADS: &[&str] =
        &["model-request.injected.json", "output-json.sample.json", "notify.argv.json"];

    /// A compact rendering of everything an adapter decided.
    fn render(result: &Result<Normalized, AdapterError>) -> String {
        let event = match result {
            Err(error) => return format!("error: {error}"),
            Ok(Normalized::Skip { reason }) => return format!("skip: {reason}"),
            Ok(Normalized::Pending(tool)) => {
                return format!(
                    "pending session={} cwd={}\ntool: {} ({}) files={:?}",
                    tool.session,
                    tool.cwd.as_deref().unwrap_or("-"),
                    tool.tool,
                    tool.tool_kind.as_str(),
                    tool.files
                );
            }
            Ok(Normalized::Event(event)) => event,
        };
        let mut out = String::new();
        let at = match event.at_ms {
            RECEIVED_AT_MS => "received".to_owned(),
            at => at.to_string(),
        };
        let _ = write!(out, "{} session={} at={at}", event.kind.as_str(), event.session);
        if let Some(cwd) = &event.cwd {
            let _ = write!(out, " cwd={cwd}");
        }
        if event.transcript_path.is_some() {
            out.push_str(" transcript");
        }
        assert_eq!((event.uid.as_str(), event.sensitivity), ("test-uid", Sensitivity::Normal));
        if let (Some(tool), Some(kind)) = (&event.tool, event.tool_kind) {
            let _ = write!(out, "\ntool: {tool} ({}) files={:?}", kind.as_str(), event.files);
        }
        let _ = write!(out, "\nsummary: {}", event.summary);
        let _ = write!(out, "\nbody: {:?}", truncate(&event.body, 100));
        let payload: Vec<String> = event
            .payload
            .as_object()
            .into_iter()
            .flatten()
            .map(|(key, value)| match value {
                Value::Bool(_) | Value::Number(_) | Value::Null => format!("{key}={value}"),
                _ => key.clone(),
            })
            .collect();
        let _ = write!(out, "\npayload: {}", payload.join(" "));
        out
    }

    fn check(agent: &str, event: &str, payload: Value, expect: Expect) {
        expect.assert_eq(&render(&normalize(&ctx(agent, event), &payload)));
    }

    fn check_samples(agent: &str, expect: Expect) {
        let samples =
            SAMPLES.iter().find(|samples| samples.agent == agent).expect("agent has samples");
        let mut out = String::new();
        for file in samples.hook_payloads {
            let event = file.split('.').next().unwrap_or_default();
            let result = normalize(&ctx(agent, event), &read_sample(samples.dir, file));
            let _ = writeln!(out, "{file}\n    {}", render(&result).replace('\n', "\n    "));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn claude_code_samples() {
        check_samples(
            "claude-code",
            expect![[r#"
            SessionStart.json
                session_start session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                summary: Session started (startup)
                body: ""
                payload: source
            SessionStart.plugin.json
                session_start session=00000007-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                summary: Session started (startup)
                body: ""
                payload: source
            InstructionsLoaded.json
                skip: event not captured
            UserPromptSubmit.json
                prompt session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                summary: Prompt: Run echo hello in the shell, then say done.
                body: "Run echo hello in the shell, then say done."
                payload: prompt
            PreToolUse.json
                pending session=00000001-0000-4000-8000-000000000000 cwd=/home/dev/work/proj
                tool: Bash (shell) files=[]
            PreToolUse.mcp.json
                pending session=00000005-0000-4000-8000-000000000000 cwd=/home/dev/work/proj
                tool: mcp__mem__mem_search (mcp) files=[]
            PostToolUse.json
                tool_use session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                tool: Bash (shell) files=[]
                summary: Bash: echo hello-from-tool
                body: "echo hello-from-tool\nhello-from-tool"
                payload: call_id duration_ms=100 input is_error=false output
            PostToolUse.mcp.json
                tool_use session=00000005-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                tool: mcp__mem__mem_search (mcp) files=[]
                summary: MCP mem/mem_search: query=answer
                body: "query=answer\nMCPRESULT for 'answer': the answer is 42"
                payload: call_id duration_ms=100 input is_error=false mcp_server output
            PostToolBatch.json
                skip: duplicate of PostToolUse
            MessageDisplay.json
                skip: event not captured
            Stop.json
                stop session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                summary: Turn ended: FAKE_FINAL_ANSWER: done.
                body: "FAKE_FINAL_ANSWER: done."
                payload: last_message
            SessionEnd.json
                session_end session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                summary: Session ended (other)
                body: ""
                payload: reason
        "#]],
        );
    }

    #[test]
    fn codex_samples() {
        check_samples(
            "codex",
            expect![[r#"
            SessionStart.json
                session_start session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                summary: Session started (startup)
                body: ""
                payload: model source
            UserPromptSubmit.json
                prompt session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                summary: Prompt: Run echo hello in the shell, then say done.
                body: "Run echo hello in the shell, then say done."
                payload: prompt
            PreModelRequest.json
                skip: model-level event: not stored
            PreToolUse.json
                pending session=00000001-0000-4000-8000-000000000000 cwd=/home/dev/work/proj
                tool: Bash (shell) files=[]
            PreToolUse.mcp.json
                pending session=00000004-0000-4000-8000-000000000000 cwd=/home/dev/work/proj
                tool: mcp__mem__mem_search (mcp) files=[]
            PostToolUse.json
                tool_use session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                tool: Bash (shell) files=[]
                summary: Bash: echo hello-from-tool
                body: "echo hello-from-tool\nhello-from-tool"
                payload: call_id input is_error=false output
            PostToolUse.mcp.json
                tool_use session=00000004-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                tool: mcp__mem__mem_search (mcp) files=[]
                summary: MCP mem/mem_search: query=answer
                body: "query=answer\nMCPRESULT for 'answer': the answer is 42"
                payload: call_id input is_error=false mcp_server output
            Stop.json
                stop session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                summary: Turn ended: FAKE_FINAL_ANSWER: done.
                body: "FAKE_FINAL_ANSWER: done."
                payload: last_message
            SessionEnd.json
                session_end session=00000001-0000-4000-8000-000000000000 at=received cwd=/home/dev/work/proj transcript
                summary: Session ended (other)
                body: ""
                payload: reason
        "#]],
        );
    }

    #[test]
    fn gemini_samples() {
        check_samples(
            "gemini",
            expect![[r#"
                SessionStart.json
                    session_start session=00000001-0000-4000-8000-000000000000 at=1767225600000 cwd=/home/dev/work/proj transcript
                    summary: Session started (startup)
                    body: ""
                    payload: source
                SessionStart.resume.json
                    session_start session=00000001-0000-4000-8000-000000000000 at=1767225611000 cwd=/home/dev/work/proj transcript
                    summary: Session started (resume)
                    body: ""
                    payload: source
                BeforeAgent.json
                    prompt session=00000001-0000-4000-8000-000000000000 at=1767225601000 cwd=/home/dev/work/proj transcript
                    summary: Prompt: Run echo hello in the shell, then say done.
                    body: "Run echo hello in the shell, then say done."
                    payload: prompt
                PreCompress.json
                    skip: model-level event: not stored
                BeforeModel.json
                    skip: model-level event: not stored
                BeforeToolSelection.json
                    skip: model-level event: not stored
                AfterModel.json
                    skip: model-level event: not stored
                AfterModel.functionCall-chunk.json
                    skip: model-level event: not stored
                BeforeTool.json
                    pending session=00000001-0000-4000-8000-000000000000 cwd=/home/dev/work/proj
                    tool: run_shell_command (shell) files=[]
                BeforeTool.mcp.json
                    pending session=00000002-0000-4000-8000-000000000000 cwd=/home/dev/work/proj
                    tool: mcp_mem_mem_search (mcp) files=[]
                AfterTool.json
                    tool_use session=00000001-0000-4000-8000-000000000000 at=1767225607000 cwd=/home/dev/work/proj transcript
                    tool: run_shell_command (shell) files=[]
                    summary: run_shell_command: echo hello-from-tool
                    body: "echo hello-from-tool\nhello-from-tool"
                    payload: input is_error=false output
                AfterTool.mcp.json
                    tool_use session=00000002-0000-4000-8000-000000000000 at=1767225613000 cwd=/home/dev/work/proj transcript
                    tool: mcp_mem_mem_search (mcp) files=[]
                    summary: MCP mem/mem_search: query=answer
                    body: "query=answer\nMCPRESULT for 'answer': the answer is 42"
                    payload: input is_error=false mcp_server output
                AfterAgent.json
                    stop session=00000001-0000-4000-8000-000000000000 at=1767225609000 cwd=/home/dev/work/proj transcript
                    summary: Turn ended: FAKE_FINAL_ANSWER: done.
                    body: "FAKE_FINAL_ANSWER: done."
                    payload: last_message
                SessionEnd.json
                    session_end session=00000001-0000-4000-8000-000000000000 at=1767225610000 cwd=/home/dev/work/proj transcript
                    summary: Session ended (exit)
                    body: ""
                    payload: reason
            "#]],
        );
    }

    #[test]
    fn copilot_samples_through_the_generic_adapter() {
        check_samples(
            "copilot",
            expect![[r#"
            sessionStart.json
                session_start session=00000001-0000-4000-8000-000000000000 at=1767225600000 cwd=/home/dev/work/proj
                summary: Session started (new)
                body: ""
                payload: source
            userPromptSubmitted.json
                prompt session=00000001-0000-4000-8000-000000000000 at=1767225601000 cwd=/home/dev/work/proj
                summary: Prompt: Run echo hello in the shell, then say done.
                body: "Run echo hello in the shell, then say done."
                payload: prompt
            permissionRequest.json
                skip: event not captured
            permissionRequest.mcp.json
                skip: event not captured
            preToolUse.json
                pending session=00000001-0000-4000-8000-000000000000 cwd=/home/dev/work/proj
                tool: bash (shell) files=[]
            preToolUse.mcp.json
                pending session=00000002-0000-4000-8000-000000000000 cwd=/home/dev/work/proj
                tool: mem-mem_search (other) files=[]
            postToolUse.json
                tool_use session=00000001-0000-4000-8000-000000000000 at=1767225604000 cwd=/home/dev/work/proj
                tool: bash (shell) files=[]
                summary: bash: echo hello-from-tool
                body: "echo hello-from-tool\nhello-from-tool\n<shellId: 0 completed with exit code 0>"
                payload: input is_error=false output
            postToolUse.mcp.json
                tool_use session=00000002-0000-4000-8000-000000000000 at=1767225609000 cwd=/home/dev/work/proj
                tool: mem-mem_search (other) files=[]
                summary: mem-mem_search: query=answer
                body: "query=answer\nMCPRESULT for 'answer': the answer is 42"
                payload: input is_error=false output
            agentStop.json
                stop session=00000001-0000-4000-8000-000000000000 at=1767225605000 cwd=/home/dev/work/proj transcript
                summary: Turn ended
                body: ""
                payload: last_message=null
            sessionEnd.json
                session_end session=00000001-0000-4000-8000-000000000000 at=1767225606000 cwd=/home/dev/work/proj
                summary: Session ended (complete)
                body: ""
                payload: reason
        "#]],
        );
    }

    #[test]
    fn hermes_shell_samples_through_the_generic_adapter() {
        check_samples(
            "hermes",
            expect![[r#"
            on_session_start.json
                session_start session=20260101_000000_000001 at=received cwd=/home/dev/work/proj
                summary: Session started
                body: ""
                payload: model source=null
            pre_llm_call.json
                prompt session=20260101_000000_000001 at=received cwd=/home/dev/work/proj
                summary: Prompt: Run echo hello in the shell, then say done.
                body: "Run echo hello in the shell, then say done."
                payload: prompt
            pre_tool_call.json
                pending session=20260101_000000_000001 cwd=/home/dev/work/proj
                tool: terminal (shell) files=[]
            post_tool_call.json
                tool_use session=20260101_000000_000001 at=received cwd=/home/dev/work/proj
                tool: terminal (shell) files=[]
                summary: terminal: echo hello-from-tool
                body: "echo hello-from-tool\nhello-from-tool"
                payload: duration_ms=100 exit_code=0 input is_error=false output
            post_llm_call.json
                stop session=20260101_000000_000001 at=received cwd=/home/dev/work/proj
                summary: Turn ended: FAKE_FINAL_ANSWER: done.
                body: "FAKE_FINAL_ANSWER: done."
                payload: last_message
            on_session_end.json
                session_end session=20260101_000000_000001 at=received cwd=/home/dev/work/proj
                summary: Session ended
                body: ""
                payload: reason=null
            on_session_finalize.json
                session_end session=20260101_000000_000001 at=received cwd=/home/dev/work/proj
                summary: Session ended (shutdown)
                body: ""
                payload: reason
        "#]],
        );
    }

    /// A new sample must be classified (hook payload or not) before this passes.
    #[test]
    fn every_sample_file_is_classified() {
        for samples in SAMPLES {
            let dir = fixtures_dir().join(samples.dir);
            let entries =
                std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            let on_disk: BTreeSet<String> = entries
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .filter(|name| {
                    name.ends_with(".json") && !NOT_HOOK_PAYLOADS.contains(&name.as_str())
                })
                .collect();
            let listed: BTreeSet<String> =
                samples.hook_payloads.iter().map(|f| (*f).to_owned()).collect();
            assert_eq!(on_disk, listed, "hook payload samples in {}", dir.display());
        }
    }

    /// OpenCode's plugin hands `{input, output}` to its hooks; a plugin that forwards them as is
    /// is read by the generic adapter.
    #[test]
    fn opencode_plugin_payloads_through_the_generic_adapter() {
        let cases = [
            ("event.session.created.json", "session.created"),
            ("chat.message.json", "chat.message"),
            ("tool.execute.before.json", "tool.execute.before"),
            ("tool.execute.after.json", "tool.execute.after"),
            ("tool.execute.after.mcp.json", "tool.execute.after"),
            ("event.session.idle.json", "session.idle"),
        ];
        let mut out = String::new();
        for (file, event) in cases {
            let result = normalize(&ctx("opencode", event), &read_sample("opencode", file));
            let _ = writeln!(out, "{file}\n    {}", render(&result).replace('\n', "\n    "));
        }
        expect![[r#"
            event.session.created.json
                session_start session=ses_00000000000000000000000001 at=received cwd=/home/dev/work/proj
                summary: Session started
                body: ""
                payload: source=null
            chat.message.json
                prompt session=ses_00000000000000000000000001 at=received
                summary: Prompt: "Run echo hello in the shell, then say done."
                body: "\"Run echo hello in the shell, then say done.\""
                payload: prompt
            tool.execute.before.json
                pending session=ses_00000000000000000000000001 cwd=-
                tool: bash (shell) files=[]
            tool.execute.after.json
                tool_use session=ses_00000000000000000000000001 at=received
                tool: bash (shell) files=[]
                summary: bash: echo hello-from-tool
                body: "echo hello-from-tool\nhello-from-tool"
                payload: exit_code=0 input is_error=false output
            tool.execute.after.mcp.json
                tool_use session=ses_00000000000000000000000002 at=received
                tool: mem_mem_search (other) files=[]
                summary: mem_mem_search: query=answer
                body: "query=answer\nMCPRESULT for 'answer': the answer is 42"
                payload: input is_error=false output
            event.session.idle.json
                stop session=ses_00000000000000000000000001 at=received
                summary: Turn ended
                body: ""
                payload: last_message=null
        "#]]
        .assert_eq(&out);
    }

    #[test]
    fn unknown_events_are_skipped_not_rejected() {
        let payload = json!({ "session_id": "s1", "hook_event_name": "Notification" });
        check("claude-code", "Notification", payload.clone(), expect!["skip: event not captured"]);
        check("claude-code", "BrandNewEvent", json!({}), expect!["skip: event not captured"]);
        check("some-new-agent", "somethingHappened", payload, expect!["skip: event not captured"]);
        check("codex", "", json!({ "session_id": "s1" }), expect!["skip: no event name"]);
    }

    #[test]
    fn event_name_falls_back_to_the_payload() {
        let payload =
            json!({ "session_id": "s1", "hook_event_name": "SessionEnd", "reason": "clear" });
        check(
            "claude-code",
            " ",
            payload,
            expect![[r#"
                session_end session=s1 at=received
                summary: Session ended (clear)
                body: ""
                payload: reason"#]],
        );
    }

    #[test]
    fn unknown_fields_are_ignored_and_wrong_optional_types_are_absent() {
        let payload = json!({
            "session_id": "s1",
            "cwd": 42,
            "transcript_path": ["not", "a", "path"],
            "prompt": "Fix the build",
            "brand_new_field": { "nested": true },
            "permission_mode": 7,
        });
        check(
            "claude-code",
            "UserPromptSubmit",
            payload,
            expect![[r#"
                prompt session=s1 at=received
                summary: Prompt: Fix the build
                body: "Fix the build"
                payload: prompt"#]],
        );
    }

    #[test]
    fn required_fields_missing_or_mistyped_are_errors() {
        let prompt = |session: Value| json!({ "session_id": session, "prompt": ["x"] });
        check(
            "claude-code",
            "UserPromptSubmit",
            prompt(json!(5)),
            expect![
                "error: claude-code UserPromptSubmit payload: session id: invalid type: integer `5`, expected a string"
            ],
        );
        check(
            "gemini",
            "BeforeAgent",
            prompt(Value::Null),
            expect!["error: gemini BeforeAgent payload: missing session id"],
        );
        check(
            "codex",
            "PostToolUse",
            json!({ "session_id": "s1", "tool_input": {} }),
            expect!["error: codex PostToolUse payload: missing tool name"],
        );
        check(
            "copilot",
            "userPromptSubmitted",
            json!({ "sessionId": "s1" }),
            expect!["error: copilot userPromptSubmitted payload: missing prompt"],
        );
        check(
            "hermes",
            "post_tool_call",
            json!({ "session_id": { "id": 1 }, "tool_name": "terminal" }),
            expect![
                "error: hermes post_tool_call payload: session id: invalid type: map, expected a string"
            ],
        );
    }

    #[test]
    fn payloads_that_are_not_objects_are_errors() {
        for payload in [json!([1, 2]), json!("text"), Value::Null, json!(3)] {
            let error = normalize(&ctx("claude-code", "Stop"), &payload).err();
            assert_eq!(
                error.map(|e| e.to_string()).as_deref(),
                Some("payload is not a JSON object")
            );
        }
    }

    #[test]
    fn claude_code_tool_failure() {
        let payload = json!({
            "session_id": "s1",
            "cwd": "/w/app",
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": { "command": "cargo test\n  --workspace", "description": "Run tests" },
            "tool_use_id": "toolu_1",
            "error": "Exit code 101\nerror: test failed, to rerun pass `--lib`",
            "is_interrupt": false,
        });
        check(
            "claude-code",
            "PostToolUseFailure",
            payload,
            expect![[r#"
                tool_use session=s1 at=received cwd=/w/app
                tool: Bash (shell) files=[]
                summary: Bash failed (exit 101): cargo test --workspace
                body: "cargo test\n  --workspace\nExit code 101\nerror: test failed, to rerun pass `--lib`"
                payload: call_id exit_code=101 input is_error=true output"#]],
        );
    }

    #[test]
    fn claude_code_file_tools_name_their_files() {
        let read = json!({
            "session_id": "s1",
            "cwd": "/w/app",
            "tool_name": "Read",
            "tool_input": { "file_path": "/w/app/src/main.rs" },
            "tool_response": { "type": "text", "file": { "filePath": "/w/app/src/main.rs", "content": "fn main() {}" } },
        });
        check(
            "claude-code",
            "PostToolUse",
            read,
            expect![[r#"
                tool_use session=s1 at=received cwd=/w/app
                tool: Read (read) files=["/w/app/src/main.rs"]
                summary: Read src/main.rs
                body: "/w/app/src/main.rs\nfn main() {}"
                payload: input is_error=false output"#]],
        );
        let interrupted = json!({
            "session_id": "s1",
            "tool_name": "Bash",
            "tool_input": { "command": "sleep 100" },
            "tool_response": { "stdout": "", "stderr": "killed", "interrupted": true },
        });
        check(
            "claude-code",
            "PostToolUse",
            interrupted,
            expect![[r#"
                tool_use session=s1 at=received
                tool: Bash (shell) files=[]
                summary: Bash failed: sleep 100
                body: "sleep 100\nkilled"
                payload: input is_error=true output"#]],
        );
    }

    #[test]
    fn codex_mcp_error_and_apply_patch() {
        let mcp = json!({
            "session_id": "s1",
            "tool_name": "mcp__mem__mem_search",
            "tool_input": { "query": "answer", "limit": 5 },
            "tool_response": { "content": [{ "type": "text", "text": "index locked" }], "isError": true },
        });
        check(
            "codex",
            "PostToolUse",
            mcp,
            expect![[r#"
                tool_use session=s1 at=received
                tool: mcp__mem__mem_search (mcp) files=[]
                summary: MCP mem/mem_search failed: limit=5, query=answer
                body: "limit=5, query=answer\nindex locked"
                payload: input is_error=true mcp_server output"#]],
        );
        let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Add File: src/new.rs\n+x\n*** End Patch\n";
        let apply = json!({
            "session_id": "s1",
            "tool_name": "apply_patch",
            "tool_input": { "command": patch },
            "tool_response": "Success. Updated the following files:\nM src/lib.rs\nA src/new.rs\n",
        });
        check(
            "codex",
            "PostToolUse",
            apply,
            expect![[r#"
                tool_use session=s1 at=received
                tool: apply_patch (edit) files=["src/lib.rs", "src/new.rs"]
                summary: Edit src/lib.rs, src/new.rs
                body: "src/lib.rs, src/new.rs\nSuccess. Updated the following files:\nM src/lib.rs\nA src/new.rs"
                payload: input is_error=false output"#]],
        );
    }

    #[test]
    fn gemini_shell_output_without_display_and_failures() {
        let payload = json!({
            "session_id": "s1",
            "timestamp": "not a time",
            "tool_name": "run_shell_command",
            "tool_input": { "command": "false" },
            "tool_response": {
                "llmContent": "<untrusted_context>\nOutput: (empty)\nExit Code: 1\nProcess Group PGID: 7\n</untrusted_context>",
                "returnDisplay": "",
            },
        });
        check(
            "gemini",
            "AfterTool",
            payload,
            expect![[r#"
                tool_use session=s1 at=received
                tool: run_shell_command (shell) files=[]
                summary: run_shell_command failed (exit 1): false
                body: "false\n(empty)\nExit Code: 1"
                payload: exit_code=1 input is_error=true output"#]],
        );
        let failed_read = json!({
            "session_id": "s1",
            "tool_name": "read_file",
            "tool_input": { "absolute_path": "/w/app/missing.rs" },
            "tool_response": { "llmContent": "", "error": { "message": "File not found", "type": "FILE_NOT_FOUND" } },
        });
        check(
            "gemini",
            "AfterTool",
            failed_read,
            expect![[r#"
                tool_use session=s1 at=received
                tool: read_file (read) files=["/w/app/missing.rs"]
                summary: Read failed: /w/app/missing.rs
                body: "/w/app/missing.rs\nFile not found"
                payload: input is_error=true output"#]],
        );
    }

    #[test]
    fn claude_code_compaction_is_a_note() {
        check(
            "claude",
            "PreCompact",
            json!({ "session_id": "s1", "trigger": "manual", "custom_instructions": "keep the API notes" }),
            expect![[r#"
                note session=s1 at=received
                summary: Context compacted (manual)
                body: "keep the API notes"
                payload: instructions trigger"#]],
        );
    }

    #[test]
    fn unknown_agents_are_read_the_generic_way() {
        let payload = json!({
            "sessionId": "x-1",
            "directory": "/w/app",
            "toolName": "Read",
            "toolArgs": { "path": "/w/app/README.md" },
            "toolResult": { "resultType": "failure", "textResultForLlm": "permission denied" },
            "timestamp": 1_796_222_096,
        });
        check(
            "cursor",
            "PostToolUse",
            payload,
            expect![[r#"
                tool_use session=x-1 at=1796222096000 cwd=/w/app
                tool: Read (read) files=["/w/app/README.md"]
                summary: Read failed: README.md
                body: "/w/app/README.md\npermission denied"
                payload: input is_error=true output"#]],
        );
    }

    /// Our Hermes memory provider hands over the agent's own memory writes; they are notes.
    #[test]
    fn hermes_memory_writes_are_notes() {
        let payload = json!({
            "hook_event_name": "on_memory_write",
            "session_id": "20261202_142921_bec072",
            "cwd": "/w/app",
            "action": "add",
            "target": "user",
            "content": "Prefers tabs",
        });
        check(
            "hermes",
            "on_memory_write",
            payload,
            expect![[r#"
                note session=20261202_142921_bec072 at=received cwd=/w/app
                summary: Memory add (user): Prefers tabs
                body: "Prefers tabs"
                payload: action content target"#]],
        );
        let empty = json!({ "session_id": "s", "action": "add" });
        check(
            "hermes",
            "on_memory_write",
            empty,
            expect!["error: hermes on_memory_write payload: missing content"],
        );
    }

    /// The registry and the readers agree: every captured event reads into the kind the table
    /// declares, and every answered one reads as a pending tool call.
    #[test]
    fn every_registered_event_reads_as_declared() {
        let minimal = json!({
            "session_id": "s1",
            "prompt": "p",
            "tool_name": "Bash",
            "tool_input": { "command": "true" },
            "content": "c",
        });
        for spec in AGENTS {
            for (event, kind) in spec.captured() {
                match normalize(&ctx(spec.name, event), &minimal) {
                    Ok(Normalized::Event(read)) => {
                        assert_eq!(read.kind, kind, "{} {event}", spec.name)
                    }
                    other => panic!("{} {event}: {other:?}", spec.name),
                }
            }
            for event in spec.answered() {
                match normalize(&ctx(spec.name, event), &minimal) {
                    Ok(Normalized::Pending(tool)) => assert_eq!(tool.tool, "Bash"),
                    other => panic!("{} {event}: {other:?}", spec.name),
                }
                let unreadable = normalize(&ctx(spec.name, event), &json!({"session_id": "s1"}));
                assert_eq!(
                    unreadable.ok(),
                    Some(Normalized::Skip { reason: PRE_TOOL }),
                    "{} {event}",
                    spec.name
                );
            }
        }
    }

    #[test]
    fn agent_names_and_aliases() {
        let names: Vec<String> =
            ["Claude", " claude_code ", "CODEX-CLI", "gemini-cli", "Hermes", "Cursor "]
                .iter()
                .map(|name| canonical_agent(name))
                .collect();
        assert_eq!(names, ["claude-code", "claude-code", "codex", "gemini", "hermes", "cursor"]);
        let mut seen = BTreeSet::new();
        for spec in AGENTS {
            for name in std::iter::once(&spec.name).chain(spec.aliases) {
                assert!(seen.insert(name.to_lowercase()), "{name} names two agents");
            }
        }
    }

    #[test]
    fn tool_kinds_by_table() {
        let claude = find_agent("claude").map_or(&[][..], |spec| spec.tools);
        let kinds: Vec<&str> =
            ["Bash", "MultiEdit", "Glob", "mcp__github__create_issue", "Unknown"]
                .iter()
                .map(|name| tool_kind(claude, name).as_str())
                .collect();
        assert_eq!(kinds, ["shell", "edit", "search", "mcp", "other"]);
        assert_eq!(
            split_mcp("mcp__plugin_x_mem__mem_search"),
            Some(("plugin_x_mem", "mem_search"))
        );
        assert_eq!(split_mcp("mcp_mem_mem_search"), Some(("mem", "mem_search")));
        assert_eq!(split_mcp("mcp_"), None);
    }

    #[test]
    fn summaries_are_one_line_and_cut_on_a_char_boundary() {
        let prompt = format!("{}\n\n{}", "記憶".repeat(150), "tail");
        let read = normalize(
            &ctx("codex", "UserPromptSubmit"),
            &json!({ "session_id": "s", "prompt": prompt }),
        );
        let Ok(Normalized::Event(event)) = read else { panic!("{read:?}") };
        assert_eq!(event.summary.chars().count(), SUMMARY_MAX_CHARS);
        assert!(event.summary.ends_with("記…") && !event.summary.contains('\n'));
        assert_eq!(event.body, prompt, "the body keeps the whole prompt");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "ab…");
        assert_eq!(truncate("ééé", 0), "…");
    }

    #[test]
    fn tool_output_is_capped() {
        let long = "x".repeat(OUTPUT_MAX_CHARS * 2);
        let payload = json!({
            "session_id": "s",
            "tool_name": "Bash",
            "tool_input": { "command": "yes x" },
            "tool_response": long,
        });
        let read = normalize(&ctx("codex", "PostToolUse"), &payload);
        let Ok(Normalized::Event(event)) = read else { panic!("{read:?}") };
        let output = event.payload["output"].as_str().unwrap_or_default();
        assert_eq!(output.chars().count(), OUTPUT_MAX_CHARS);
        assert_eq!(event.body.chars().count(), "yes x\n".len() + OUTPUT_MAX_CHARS);
    }

    #[test]
    fn text_of_every_result_shape() {
        let shapes = [
            json!("plain"),
            json!([{ "type": "text", "text": "a" }, { "type": "image", "data": "…" }, { "type": "text", "text": "b" }]),
            json!({ "stdout": "out", "stderr": "err", "interrupted": false }),
            json!({ "resultType": "success", "textResultForLlm": "copilot" }),
            json!({ "filenames": ["a.rs", "b.rs"], "numFiles": 2 }),
            json!({ "mode": 1 }),
            Value::Null,
        ];
        let texts: Vec<String> = shapes.iter().map(text_of).collect();
        assert_eq!(
            texts,
            ["plain", "a\n[image]\nb", "out\nerr", "copilot", "a.rs\nb.rs", r#"{"mode":1}"#, ""]
        );
    }

    #[test]
    fn exit_codes_in_tool_text() {
        let found: Vec<Option<i64>> =
            ["Exit code 1\nboom", "Output: x\nExit Code: 127", "exited 2", "Exit code: -9"]
                .iter()
                .map(|text| exit_code_in(text))
                .collect();
        assert_eq!(found, [Some(1), Some(127), None, Some(-9)]);
    }

    #[test]
    fn files_from_paths_and_patches() {
        let edit = json!({ "file_path": "a.rs", "path": "a.rs", "paths": ["b.rs", 3] });
        assert_eq!(files_in(ToolKind::Edit, &edit), ["a.rs", "b.rs"]);
        // A search tool's path is where it looked, not a file it read.
        assert!(files_in(ToolKind::Search, &json!({ "pattern": "x", "path": "src" })).is_empty());
        let shell = json!({ "command": "apply_patch <<'EOF'\n*** Delete File: old.rs\n*** End Patch\nEOF" });
        assert_eq!(files_in(ToolKind::Shell, &shell), ["old.rs"]);
    }

    /// What a change put into files, in every agent's spelling of it; the recorded sessions'
    /// own edits are in `adapter/shell/tests.rs`.
    #[test]
    fn added_text_of_changes() {
        let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n def f():\n-    return 1\n+    return 2\n*** Add File: b.py\n+B = 1\n*** End Patch";
        let calls = [
            (
                "claude-code",
                "MultiEdit",
                json!({ "file_path": "a.rs", "edits": [{ "old_string": "a", "new_string": "let x = 1;\n\n" }, { "old_string": "b", "new_string": "}\n  let y =   2;" }] }),
            ),
            ("copilot", "create", json!({ "path": "n.md", "file_text": "# Title\n\nBody" })),
            ("hermes", "patch", json!({ "mode": "patch", "patch": patch })),
            ("codex", "apply_patch", json!({ "input": patch })),
            (
                "opencode",
                "write",
                json!({ "filePath": "long.txt", "content": "word ".repeat(100) }),
            ),
            (
                "claude-code",
                "Edit",
                json!({ "file_path": "x.rs", "old_string": "a", "new_string": "" }),
            ),
            (
                "claude-code",
                "Bash",
                json!({ "command": ["bash", "-lc", "sed -i 's/a/it'\\''s/' q.txt"] }),
            ),
        ];
        let mut out = String::new();
        for (agent, tool, input) in calls {
            let kind = tool_kind(find_agent(agent).map_or(&[][..], |spec| spec.tools), tool);
            let facts = facts_of(kind, &files_in(kind, &input), &input, &[""], false, None);
            let _ = writeln!(out, "{agent} {tool}: {:?} {:?}", facts.written, facts.added);
        }
        expect![[r##"
            claude-code MultiEdit: ["a.rs"] Some("let x = 1; ⏎ let y = 2;")
            copilot create: ["n.md"] Some("# Title ⏎ Body")
            hermes patch: ["a.py", "b.py"] Some("return 2 ⏎ B = 1")
            codex apply_patch: ["a.py", "b.py"] Some("return 2 ⏎ B = 1")
            opencode write: ["long.txt"] Some("word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word…")
            claude-code Edit: ["x.rs"] None
            claude-code Bash: ["q.txt"] Some("it's")
        "##]].assert_eq(&out);
        assert_eq!(ending("short", 10), "");
        assert_eq!(ending("one\ntwo\nthree\nfour", 9), "four", "from a line's start");
        assert_eq!(ending("記憶\n記憶\n記憶", 4), "記憶");
    }

    /// A shell call that failed by its output alone and edited a file through the shell reads
    /// back the same from its stored payload; the exit code stays as the agent reported it.
    #[test]
    fn shell_facts_from_the_output_and_the_command_line() {
        let payload = json!({
            "session_id": "s",
            "tool_name": "Bash",
            "tool_input": { "command": "python3 -m unittest t 2>&1; echo done > log.txt" },
            "tool_response": { "stdout": "F\nFAILED (failures=1)\n", "stderr": "", "interrupted": false },
        });
        let Ok(Normalized::Event(event)) = normalize(&ctx("claude-code", "PostToolUse"), &payload)
        else {
            panic!("a tool use")
        };
        assert!(event.facts.failed && event.facts.exit_code.is_none(), "{:?}", event.facts);
        assert_eq!(event.payload["is_error"], json!(false), "the agent's own flag is kept");
        assert_eq!(event.facts.written, ["log.txt"]);
        assert_eq!(event.facts.added.as_deref(), Some("done"));
        assert!(event.facts.created.is_empty());
        let derived = tool_facts(event.kind, event.tool_kind, &event.files, &event.payload);
        assert_eq!(derived, event.facts);

        // A summing-up past what the event keeps of a long output still counts.
        let long = format!("{}\n=== 1 failed, 900 passed in 9s ===", "test ok\n".repeat(900));
        let mut payload = payload;
        payload["tool_response"]["stdout"] = json!(long);
        let Ok(Normalized::Event(event)) = normalize(&ctx("claude-code", "PostToolUse"), &payload)
        else {
            panic!("a tool use")
        };
        assert!(event.facts.failed);
    }

    #[test]
    fn iso_timestamps() {
        let parsed: Vec<Option<i64>> = [
            "2026-12-02T14:33:59.561Z",
            "2000-02-29T23:59:59Z",
            "1969-12-31T23:59:59.999Z",
            "2024-03-01T00:00:00+05:30",
            "2024-03-01T00:00:00.1234567Z",
            "2024-13-01T00:00:00Z",
            "2024-03-01",
            "2024-03-01T00:00:00",
            "2024-03-01T00:00:00.Z",
            "２０24-03-01T00:00:00Z",
        ]
        .iter()
        .map(|text| parse_iso_ms(text))
        .collect();
        assert_eq!(
            parsed,
            [
                Some(1_796_222_039_561),
                Some(951_868_799_000),
                Some(-1),
                Some(1_709_231_400_000),
                Some(1_709_251_200_123),
                None,
                None,
                None,
                None,
                None,
            ]
        );
    }

    /// Whatever type a field arrives as, an adapter answers instead of panicking.
    #[test]
    fn odd_field_types_never_panic() {
        let odd = [
            Value::Null,
            json!(true),
            json!(i64::MIN),
            json!(-1.5),
            json!(""),
            json!("x"),
            json!([]),
            json!([null, 1, "a", { "text": 2 }]),
            json!({}),
            json!({ "content": 7, "stdout": [], "llmContent": {}, "error": "e" }),
        ];
        let fields = [
            "session_id",
            "sessionId",
            "cwd",
            "transcript_path",
            "timestamp",
            "source",
            "model",
            "prompt",
            "parts",
            "tool_name",
            "toolName",
            "tool_input",
            "toolArgs",
            "tool_response",
            "toolResult",
            "result",
            "error",
            "is_interrupt",
            "duration_ms",
            "mcp_server",
            "mcp_context",
            "last_assistant_message",
            "prompt_response",
            "reason",
            "trigger",
            "extra",
            "input",
            "output",
            "status",
        ];
        // Every event of every table, as its own agent and as an agent no table names.
        let calls = AGENTS.iter().flat_map(|spec| {
            spec.events.iter().flat_map(|(event, _)| [(spec.name, *event), ("cursor", *event)])
        });
        for (agent, event) in calls {
            for field in fields {
                for value in &odd {
                    let mut payload =
                        json!({ "session_id": "s", "tool_name": "Bash", "prompt": "p" });
                    payload[field] = value.clone();
                    let _answered = normalize(&ctx(agent, event), &payload);
                }
            }
        }
    }
}
