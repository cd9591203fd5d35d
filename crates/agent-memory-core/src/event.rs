//! The neutral event: one captured moment from any agent, in one shape.
//!
//! Owns the vocabulary for raw material (ARCHITECTURE.md, `event.rs`: agent, session, event kind,
//! tool kind, sensitivity) and the neutral facts of a tool call ([`ToolFacts`]: the command run,
//! the query searched, the files changed and created, the outcome) that every later stage reads
//! instead of an agent's tool input. Adapters build these from agent wire formats; capture redacts
//! and filters them; the store persists them. Nothing here knows an agent's wire format or touches
//! the disk.

use serde::{Deserialize, Serialize};

/// What kind of moment an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    SessionStart,
    Prompt,
    ToolUse,
    Stop,
    SessionEnd,
    Note,
}

impl EventKind {
    pub const ALL: [EventKind; 6] = [
        EventKind::SessionStart,
        EventKind::Prompt,
        EventKind::ToolUse,
        EventKind::Stop,
        EventKind::SessionEnd,
        EventKind::Note,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::SessionStart => "session_start",
            EventKind::Prompt => "prompt",
            EventKind::ToolUse => "tool_use",
            EventKind::Stop => "stop",
            EventKind::SessionEnd => "session_end",
            EventKind::Note => "note",
        }
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Lifecycle events are never dropped by the noise filters: they carry session structure.
    pub fn is_lifecycle(self) -> bool {
        matches!(self, EventKind::SessionStart | EventKind::Stop | EventKind::SessionEnd)
    }
}

/// The neutral family of a tool, so later stages need not know that Claude's `Bash`, Gemini's
/// `run_shell_command` and Hermes's `terminal` are the same thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    Shell,
    Read,
    Edit,
    Write,
    Search,
    Web,
    Mcp,
    Agent,
    Meta,
    Other,
}

impl ToolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Shell => "shell",
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Write => "write",
            ToolKind::Search => "search",
            ToolKind::Web => "web",
            ToolKind::Mcp => "mcp",
            ToolKind::Agent => "agent",
            ToolKind::Meta => "meta",
            ToolKind::Other => "other",
        }
    }
}

/// How far an event may travel. Redacted secrets are never stored at all, so they need no level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sensitivity {
    #[default]
    Normal,
    /// Never leaves the machine: no LLM, no sync, no export.
    Private,
}

impl Sensitivity {
    pub fn as_str(self) -> &'static str {
        match self {
            Sensitivity::Normal => "normal",
            Sensitivity::Private => "private",
        }
    }

    pub fn parse(s: &str) -> Sensitivity {
        if s == "private" { Sensitivity::Private } else { Sensitivity::Normal }
    }
}

/// One captured moment, agent-neutral.
///
/// `payload` is JSON whose keys depend on `kind`:
/// `session_start {source}`, `prompt {prompt}`, `tool_use {input, output, is_error}`,
/// `stop {last_message}`, `session_end {reason}`, plus whatever small extras an adapter keeps
/// (`model`, `duration_ms`, `mcp_server`). A tool use's `input` is the agent's own arguments,
/// kept for people and exports; only `adapter/` reads it. What later stages need from it is in
/// [`Event::facts`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Globally unique id, assigned once at capture; the key that makes spool recovery and
    /// import idempotent.
    pub uid: String,
    pub agent: String,
    pub kind: EventKind,
    /// The agent's own name for the moment (`PostToolUse`, `AfterTool`, …), kept for provenance.
    pub source_event: String,
    /// The agent's own session id.
    pub session: String,
    pub cwd: Option<String>,
    /// Unix time in milliseconds.
    pub at_ms: i64,
    pub tool: Option<String>,
    pub tool_kind: Option<ToolKind>,
    /// One human line: what happened.
    pub summary: String,
    /// The searchable text behind the summary (prompt, command, output excerpt).
    pub body: String,
    pub payload: serde_json::Value,
    /// Files the moment read or changed, as the agent named them.
    pub files: Vec<String>,
    pub sensitivity: Sensitivity,
    pub transcript_path: Option<String>,
    /// What a tool call did, in neutral terms; empty for every other kind. Events written
    /// before these facts existed get them derived from their payload when read
    /// (`adapter::tool_facts`).
    #[serde(default, skip_serializing_if = "ToolFacts::is_empty")]
    pub facts: ToolFacts,
}

/// What later stages need to know about a tool call, filled by the adapter from the agent's
/// arguments, so that nothing after the adapter reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolFacts {
    /// The command line a shell call ran (argv joined by spaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What a search looked for: its pattern, query, glob or regex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Files the call changed, as it named them: an edit or write tool's files (as in
    /// [`Event::files`]), and the files a shell command writes by its own words (redirections,
    /// `sed -i`, `perl -i`, `tee`, a heredoc patch given to `git apply` or `patch`); never files
    /// only read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<String>,
    /// Files the call created from scratch: every file of a write tool, and the files a patch
    /// adds (as the patch names them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
    /// Text the call put into files, short: an edit's new text, a write's content, a patch's
    /// added lines, a shell substitution's replacement. What a memory quotes of a change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<String>,
    /// The call failed: the agent said so, it exited non-zero, or its output shows a failure
    /// (a shell command's traceback, failed test or compiler error, even when a pipe or
    /// `; echo done` hid the exit code).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
}

impl ToolFacts {
    /// Nothing known: not a tool use, or one that said nothing of these.
    pub fn is_empty(&self) -> bool {
        *self == ToolFacts::default()
    }

    /// Every text of the facts, for sanitizing and capping them in place.
    pub fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
        self.command
            .iter_mut()
            .chain(self.query.iter_mut())
            .chain(self.written.iter_mut())
            .chain(self.created.iter_mut())
            .chain(self.added.iter_mut())
    }
}

/// Facts every adapter needs that do not come from the payload.
#[derive(Debug, Clone)]
pub struct CaptureContext<'a> {
    pub uid: &'a str,
    pub agent: &'a str,
    /// The event name from the hook's command line (`--event`); agents such as Copilot send none
    /// in the payload.
    pub event_name: &'a str,
    pub received_at_ms: i64,
}
