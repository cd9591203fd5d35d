//! Distil: turns a session's events into observations and, at stop, a session summary.
//!
//! Two distillers stand behind one trait: the offline one (deterministic rules, always there,
//! no network) and the LLM one driven by the mode's prompts ([`llm`]: prompts, strict parsing,
//! retries, budget and the offline fallback; the network sits behind its `Transport` trait,
//! implemented outside this crate). A [`mode::Mode`] says what
//! to watch: the closed sets of observation types and concepts, what to record and skip, and
//! the output language. The distillers are pure, events in and drafts out; [`sessions`] feeds
//! them each session's new events and stores what they return (one step of the work pass,
//! [`crate::work`]).
//!
//! Must not: touch the network, or read the clock (times come from the events and the caller).

pub mod llm;
pub mod mode;
pub mod offline;
pub mod sessions;

use serde::{Deserialize, Serialize};

use crate::event::Event;

/// Most words in a subtitle.
pub(crate) const SUBTITLE_MAX_WORDS: usize = 24;
/// Text without spaces (Chinese) cannot be counted in words; it is capped in characters.
pub(crate) const SUBTITLE_MAX_CJK_CHARS: usize = 48;

/// A subtitle within the word limit, whoever wrote it.
pub(crate) fn cap_subtitle(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() > SUBTITLE_MAX_WORDS {
        return format!("{}…", words[..SUBTITLE_MAX_WORDS - 1].join(" "));
    }
    let wide = text.chars().filter(|c| !c.is_ascii()).count();
    if wide > SUBTITLE_MAX_CJK_CHARS / 2 {
        return crate::text::clip(text, SUBTITLE_MAX_CJK_CHARS);
    }
    text.to_owned()
}

/// A stored event: its row id and the event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredEvent {
    pub id: i64,
    pub event: Event,
}

/// One distilled note, the same shape every time.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ObservationDraft {
    /// One line, specific: names the file, function, command or error.
    pub title: String,
    /// At most 24 words.
    pub subtitle: String,
    /// About three self-contained one-sentence statements with concrete names.
    pub facts: Vec<String>,
    /// A short story: what was done, what was tried, what was learned, why it matters.
    pub narrative: String,
    /// A key of the mode's observation types (code mode: bugfix, feature, refactor, change,
    /// discovery, decision, security_alert, security_note, sensitive).
    pub kind: String,
    /// Two to five keys of the mode's concepts.
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    /// The events it was distilled from.
    pub source_event_ids: Vec<i64>,
    /// The time of its last source event, Unix milliseconds.
    pub at_ms: i64,
}

/// What a session was about, written at stop.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SummaryDraft {
    /// The session's first real prompt.
    pub request: String,
    /// Files read, and what was looked into.
    pub investigated: Vec<String>,
    pub learned: Vec<String>,
    /// Files changed, commands that passed.
    pub completed: Vec<String>,
    /// The last prompt's unfinished ask, or a command still failing.
    pub next_steps: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
}

/// Turns events into observations and summaries.
pub trait Distiller {
    /// Observations for a batch of a session's new events, in order (usually one turn).
    /// Events the mode says to skip yield nothing; an empty batch yields nothing.
    fn observe(&self, events: &[StoredEvent], mode: &mode::Mode) -> Vec<ObservationDraft>;

    /// The summary of a whole session, given all its events in order.
    fn summarize(&self, events: &[StoredEvent], mode: &mode::Mode) -> SummaryDraft;

    /// Who produced the last drafts and what the model cost, when that varies from call to
    /// call (a model that falls back to the offline rules); `None` means the distiller's own
    /// name and no model tokens.
    fn last_run(&self) -> Option<LastRun> {
        None
    }
}

/// Who produced a distiller's last drafts, and the model tokens they cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastRun {
    /// `offline` or `llm:<provider>`.
    pub distiller: String,
    pub tokens_spent: u64,
}
