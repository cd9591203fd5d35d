//! What a command found or did that is none of core's types: doctor's findings, what install
//! did to one file, what a review walk did.
//!
//! Data only. `cmd/` builds these and `output/` renders them, so neither depends on the other's
//! logic: `output` never reaches into a command, and a command never defines what is printed.

use std::path::PathBuf;

use serde::Serialize;

/// How bad a doctor finding is; the order is severity, so the worst of a list is its `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Ok,
    Info,
    Warn,
    Fail,
}

/// One thing doctor looked at.
#[derive(Debug, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub level: Level,
    pub message: String,
    /// What to do about it, when it is not fine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    pub fn ok(check: &'static str, message: impl Into<String>) -> Finding {
        Finding { check, level: Level::Ok, message: message.into(), fix: None }
    }

    pub fn info(check: &'static str, message: impl Into<String>) -> Finding {
        Finding { check, level: Level::Info, message: message.into(), fix: None }
    }

    pub fn warn(
        check: &'static str,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding { check, level: Level::Warn, message: message.into(), fix: Some(fix.into()) }
    }

    pub fn fail(
        check: &'static str,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding { check, level: Level::Fail, message: message.into(), fix: Some(fix.into()) }
    }
}

/// Doctor's findings for one agent.
#[derive(Debug, Serialize)]
pub struct AgentReport {
    pub agent: &'static str,
    pub findings: Vec<Finding>,
}

/// Everything `agent-memory doctor` found: the store first, then each agent.
#[derive(Debug, Serialize)]
pub struct DoctorReport {
    pub binary: String,
    pub version: &'static str,
    pub store: Vec<Finding>,
    pub agents: Vec<AgentReport>,
}

impl DoctorReport {
    /// How many findings failed; any makes `doctor` fail.
    pub fn failures(&self) -> usize {
        self.store
            .iter()
            .chain(self.agents.iter().flat_map(|a| &a.findings))
            .filter(|f| f.level == Level::Fail)
            .count()
    }
}

/// What `install`/`uninstall` did to one file.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum InstallStatus {
    UpToDate,
    /// `--dry-run`: a file that does not exist yet would be written.
    WouldCreate,
    WouldChange,
    Created,
    /// Changed; `backup` is where the original went, when this run kept it.
    Updated {
        backup: Option<PathBuf>,
    },
    /// Uninstall left nothing in a file install created, so it is gone.
    Removed,
}

/// What a whole `install` or `uninstall` run did (or, with `--dry-run`, would do), for the
/// line that ends it.
#[derive(Debug, Default)]
pub struct InstallTally {
    /// The agents it touched or checked, in order.
    pub agents: Vec<&'static str>,
    pub created: usize,
    pub changed: usize,
    pub up_to_date: usize,
    pub removed: usize,
}

impl InstallTally {
    pub fn add(&mut self, agent: &'static str, status: &InstallStatus) {
        if !self.agents.contains(&agent) {
            self.agents.push(agent);
        }
        match status {
            InstallStatus::UpToDate => self.up_to_date += 1,
            InstallStatus::WouldCreate | InstallStatus::Created => self.created += 1,
            InstallStatus::WouldChange | InstallStatus::Updated { .. } => self.changed += 1,
            InstallStatus::Removed => self.removed += 1,
        }
    }
}

/// What one review walk did.
#[derive(Debug, Default)]
pub struct ReviewTally {
    pub approved: usize,
    pub rejected: usize,
    pub skipped: usize,
    pub left: usize,
}

/// A failure a command has already told in its own answer (doctor's report with its fixes):
/// the process still exits non-zero, but under `--json` no second document follows the first.
#[derive(Debug)]
pub struct Reported(pub String);

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Reported {}

/// What `status` tells besides the store's figures: when the last work pass ran, how far the
/// search models and indexes have come, and whether the local server is running.
#[derive(Debug, Default, Serialize)]
pub struct Activity {
    pub last_work_pass_ms: Option<i64>,
    /// Each search model in use (embedding, then sparse), with how many items have its vector.
    pub search_models: Vec<ModelCoverage>,
    /// Events stored before their index held stems and dates, still to be indexed again.
    pub events_to_index: i64,
    /// The running `agent-memory serve`, if one is.
    pub serve: Option<ServeRunning>,
    /// How the configured `[[reactions]]` went over the last day; `None` when none is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reactions: Option<Reactions>,
}

/// The configured reactions and how they went over the last day.
#[derive(Debug, Serialize)]
pub struct Reactions {
    pub configured: usize,
    /// Each entry that cannot run, and why.
    pub unusable: Vec<String>,
    #[serde(flatten)]
    pub last_day: agent_memory_core::react::Outcomes,
}

/// How far a search model has come through the store.
#[derive(Debug, Serialize)]
pub struct ModelCoverage {
    pub model: String,
    /// Items with its vector, and items the work pass has yet to encode.
    pub encoded: i64,
    pub waiting: i64,
}

/// Where the running server listens.
#[derive(Debug, Serialize)]
pub struct ServeRunning {
    pub url: String,
    pub pid: u32,
}

/// What `install --json` and `uninstall --json` print: the binary wired, what happened to each
/// file, the notes, and the agents whose config could not be changed.
#[derive(Debug, Default, Serialize)]
pub struct InstallReport {
    pub binary: String,
    pub files: Vec<InstallFile>,
    pub notes: Vec<InstallMessage>,
    pub errors: Vec<InstallMessage>,
}

/// One file install changed or checked.
#[derive(Debug, Serialize)]
pub struct InstallFile {
    pub agent: String,
    pub path: PathBuf,
    #[serde(flatten)]
    pub status: InstallStatus,
}

/// A note or an error about one agent.
#[derive(Debug, Serialize)]
pub struct InstallMessage {
    pub agent: String,
    pub message: String,
}

/// `brief --json`: the project, its briefing (null before anything is distilled) and, with
/// `--write`, the file and whether it changed.
#[derive(Debug, Serialize)]
pub struct BriefAnswer {
    pub project: String,
    pub markdown: Option<String>,
    pub file: Option<PathBuf>,
    pub changed: Option<bool>,
}

/// `mode use --json`: the mode and language now set, in which file, and whether it changed.
#[derive(Debug, Serialize)]
pub struct ModeSet {
    pub mode: String,
    pub language: String,
    pub file: PathBuf,
    pub changed: bool,
}

/// What a `pack` command did, under `--json`.
#[derive(Debug, Serialize)]
pub struct PackDone {
    pub pack: String,
    /// `built`, `mounted`, `approved` or `removed`.
    pub action: &'static str,
    /// The memories it wrote, added, approved or forgot.
    pub memories: usize,
    /// `pack add`: memories the store already had.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_known: Option<usize>,
}
