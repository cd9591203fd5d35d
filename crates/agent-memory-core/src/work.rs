//! The work pass: everything that happens to captured events after the hook stored them, in
//! one place and one order. `agent-memory work`, the background pass the stop hook starts and
//! `serve`'s worker all run this same pass:
//!
//! drain the spool → judge branches → distil sessions → screen for long-term memory → anchor
//! what was distilled to its files → run the reactions that match what landed → embed and
//! sparse-encode → index older events again → sync
//! the vault → refresh brief files → merge indexes → prune the injection log → checkpoint
//! (ARCHITECTURE.md lists the same steps).
//!
//! One pass at a time per home: [`WorkLock`] is a file lock that goes with the process, so a
//! crashed pass never leaves it taken. Each step reports what it did; a step that fails is
//! recorded in [`PassReport::problems`] and the pass goes on with the next, because what one
//! step cannot do (a vault folder gone, a model that will not load) must not hold back the
//! others. Only a store that cannot be read fails the whole pass.
//!
//! Must not: read the clock or build transports and models itself; the caller hands in the
//! time, the LLM transport and the reactions' actions (the serve crate owns the network and
//! child processes) and the embedder (the embed crate owns model formats), so this module stays
//! synchronous and testable.

use std::fs::File;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::capture::{self, DrainReport};
use crate::config::Config;
use crate::distil::llm::{DayBudget, LlmDistiller, Transport};
use crate::distil::mode::Mode;
use crate::distil::offline::OfflineDistiller;
use crate::distil::sessions::{self, DistilOptions, DistilReport};
use crate::embed::{Embedder, SparseEncoder};
use crate::paths::Home;
use crate::promote::{self, PromoteReport};
use crate::store::vectors::{EmbedPass, embed_pending, encode_pending};
use crate::store::{Store, StoreError};
use crate::vault::{self, SyncReport};
use crate::{fsutil, inject, time};

/// Sessions one pass takes on, so a huge backlog is worked through in steps.
pub const SESSIONS_PER_PASS: usize = 500;

/// Items one pass embeds, for the same reason; `agent-memory reindex` takes on a backlog at
/// once.
pub const EMBED_PER_PASS: usize = 512;

/// Events stored before their index held stems and dates that one pass indexes again, and how
/// many to a transaction.
const RESTEM_PER_PASS: usize = 50_000;
const RESTEM_BATCH: usize = 2_000;

/// Spooled records one pass stores at most; the spool is drained over several passes.
const SPOOL_PER_PASS: usize = 1000;

/// Why a pass could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum WorkError {
    #[error("cannot open the work lock {path}: {source}; check that the folder is writable")]
    Lock { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The lock that keeps to one pass at a time per home.
#[derive(Debug)]
pub struct WorkLock {
    // Held for its lock; released when dropped or when the process ends.
    _file: File,
}

impl WorkLock {
    /// The lock file of a home.
    pub fn path(home: &Home) -> PathBuf {
        home.root().join("work.lock")
    }

    /// Takes the lock without waiting: `None` when another process holds it.
    pub fn try_take(home: &Home) -> Result<Option<WorkLock>, WorkError> {
        let path = WorkLock::path(home);
        let file =
            fsutil::try_lock_file(&path).map_err(|source| WorkError::Lock { path, source })?;
        Ok(file.map(|file| WorkLock { _file: file }))
    }
}

/// What a pass is handed.
pub struct Pass<'a> {
    pub home: &'a Home,
    pub config: &'a Config,
    pub mode: &'a Mode,
    /// The LLM transport, when `[llm]` names a provider; else the offline distiller runs.
    pub transport: Option<&'a dyn Transport>,
    /// The embedding model, when one is installed and used.
    pub embedder: Option<&'a dyn Embedder>,
    /// The learned sparse model, when one is installed and used.
    pub sparse: Option<&'a dyn SparseEncoder>,
    /// What runs the `[[reactions]]` actions; `None`: reactions wait for a pass that has it.
    pub act: Option<&'a dyn crate::react::Act>,
    /// Who holds the session leases this pass takes (unique per process).
    pub owner: &'a str,
    pub now_ms: i64,
}

impl std::fmt::Debug for Pass<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pass")
            .field("home", &self.home.root())
            .field("mode", &self.mode.name)
            .field("transport", &self.transport.map(|t| t.name()))
            .field("embedder", &self.embedder.map(|e| e.model()))
            .field("sparse", &self.sparse.map(|e| e.model()))
            .field("owner", &self.owner)
            .field("now_ms", &self.now_ms)
            .finish_non_exhaustive()
    }
}

/// The steps of a pass, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Drain,
    Branches,
    Distil,
    Promote,
    Anchors,
    React,
    Embed,
    Index,
    Vault,
    Briefs,
    Checkpoint,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Drain => "spool",
            Step::Branches => "branches",
            Step::Distil => "distil",
            Step::Promote => "memory",
            Step::Anchors => "anchors",
            Step::React => "reactions",
            Step::Embed => "embed",
            Step::Index => "index",
            Step::Vault => "vault",
            Step::Briefs => "briefs",
            Step::Checkpoint => "checkpoint",
        }
    }
}

/// A step that failed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub step: Step,
    pub message: String,
}

/// What one pass did, step by step. The distil counts stay at the top level of the JSON form
/// (`sessions`, `observations`, `summaries`, `busy`), as `work --json` has always printed them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PassReport {
    pub drained: DrainReport,
    #[serde(flatten)]
    pub distil: DistilReport,
    /// `None` when screening failed (see `problems`).
    pub promoted: Option<PromoteReport>,
    /// Whether screening placed memories straight into L2 (`[promote] auto`).
    pub auto_promoted: bool,
    /// `None` when no embedding model is in use or embedding failed.
    pub embedded: Option<EmbedPass>,
    /// The embedding model's name, when one ran.
    pub model: Option<String>,
    /// `None` when no sparse model is in use or encoding failed.
    pub sparse_encoded: Option<EmbedPass>,
    /// The sparse model's name, when one ran.
    pub sparse_model: Option<String>,
    /// Sessions judged by the branch they worked on, and branch work pinned and found merged.
    pub branches: crate::branch::Report,
    /// Items anchored to the files they rest on, and anchors renewed.
    pub anchors: crate::anchor::Report,
    /// Events indexed again with stems and dates (stored before their index held them).
    #[serde(skip_serializing_if = "is_zero")]
    pub reindexed: usize,
    /// `None` when no vault is configured or its sync failed.
    pub vault: Option<SyncReport>,
    /// Brief files rewritten because their content changed.
    pub briefs_written: usize,
    /// What the reactions did; `None` when none is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reactions: Option<crate::react::Report>,
    pub problems: Vec<Problem>,
}

impl PassReport {
    /// Whether the pass added anything a reader of the store would see.
    pub fn added_memory(&self) -> bool {
        self.distil.observations + self.distil.summaries > 0
            || self
                .promoted
                .as_ref()
                .is_some_and(|p| p.stated > 0 || self.auto_promoted && p.candidates > 0)
    }

    /// Whether the pass stopped at one of its bounds with work left (sessions to distil, items
    /// to encode or events to index again) and got on with it, so that another pass would
    /// too. A pass someone waits for runs again; one the stop hook started leaves the rest to
    /// the next. Sessions held back for a closing answer are taken on by every pass and
    /// distilled by none: a pass that stored nothing is never followed by another.
    pub fn more_to_do(&self) -> bool {
        let encoded = |pass: &Option<EmbedPass>| pass.map_or(0, |p| p.embedded);
        let left = |pass: &Option<EmbedPass>| pass.is_some_and(|p| p.embedded > 0 && p.left > 0);
        let stored = self.distil.observations
            + self.distil.summaries
            + encoded(&self.embedded)
            + encoded(&self.sparse_encoded)
            + self.reindexed;
        stored > 0
            && (self.distil.sessions >= SESSIONS_PER_PASS
                || left(&self.embedded)
                || left(&self.sparse_encoded)
                || self.reindexed >= RESTEM_PER_PASS)
    }

    /// Adds what a later pass of the same run did, so that the run reports once.
    pub fn absorb(&mut self, later: PassReport) {
        let d = &mut self.drained;
        d.stored += later.drained.stored;
        d.already_stored += later.drained.already_stored;
        d.dropped += later.drained.dropped;
        d.files += later.drained.files;
        d.quarantined += later.drained.quarantined;
        let (s, l) = (&mut self.distil, later.distil);
        s.sessions += l.sessions;
        s.observations += l.observations;
        s.summaries += l.summaries;
        (s.busy, s.waiting) = (l.busy, l.waiting);
        self.promoted = match (self.promoted.take(), later.promoted) {
            (Some(mut p), Some(l)) => {
                p.screened += l.screened;
                p.candidates += l.candidates;
                p.merged += l.merged;
                p.successors += l.successors;
                p.stated += l.stated;
                Some(p)
            }
            (p, l) => l.or(p),
        };
        let encoded = |earlier: Option<EmbedPass>, later: Option<EmbedPass>| match (earlier, later)
        {
            (Some(e), Some(l)) => {
                Some(EmbedPass { embedded: e.embedded + l.embedded, left: l.left })
            }
            (e, l) => l.or(e),
        };
        self.embedded = encoded(self.embedded, later.embedded);
        self.sparse_encoded = encoded(self.sparse_encoded, later.sparse_encoded);
        self.reindexed += later.reindexed;
        self.branches.judged += later.branches.judged;
        self.branches.pinned += later.branches.pinned;
        self.branches.looked += later.branches.looked;
        self.anchors.anchored += later.anchors.anchored;
        self.anchors.renewed += later.anchors.renewed;
        self.briefs_written += later.briefs_written;
        self.reactions = match (self.reactions.take(), later.reactions) {
            (Some(mut r), Some(l)) => {
                r.fired += l.fired;
                r.failed += l.failed;
                r.unusable = l.unusable;
                Some(r)
            }
            (r, l) => l.or(r),
        };
        if later.vault.is_some() {
            self.vault = later.vault;
        }
        self.problems.extend(later.problems);
    }

    /// Whether the pass stored vectors of either kind.
    pub fn wrote_vectors(&self) -> bool {
        [&self.embedded, &self.sparse_encoded]
            .iter()
            .any(|pass| pass.is_some_and(|p| p.embedded > 0))
    }

    /// The pass in one line, for logs and `serve`'s health page.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "spool: {} stored; distil: {} sessions, {} observations, {} summaries",
            self.drained.stored,
            self.distil.sessions,
            self.distil.observations,
            self.distil.summaries
        );
        if let Some(promoted) = &self.promoted {
            let what = if self.auto_promoted { "memories" } else { "candidates" };
            line.push_str(&format!(
                "; memory: {} {what}, {} merged",
                promoted.candidates, promoted.merged
            ));
        }
        if let Some(embedded) = &self.embedded {
            line.push_str(&format!("; embedded: {}", embedded.embedded));
        }
        if let Some(encoded) = self.sparse_encoded.as_ref().filter(|e| e.embedded > 0) {
            line.push_str(&format!("; sparse: {}", encoded.embedded));
        }
        if let Some(sync) = &self.vault {
            let from_notes = sync.updated_from_vault + sync.created_from_vault + sync.forgotten;
            line.push_str(&format!(
                "; vault: {} written, {from_notes} from notes, {} conflicts",
                sync.written,
                sync.conflicts.len()
            ));
        }
        if let Some(reacted) = self.reactions.as_ref().filter(|r| r.fired + r.failed > 0) {
            line.push_str(&format!(
                "; reactions: {} ran, {} failed",
                reacted.fired, reacted.failed
            ));
        }
        for problem in &self.problems {
            line.push_str(&format!("; {} failed: {}", problem.step.name(), problem.message));
        }
        line
    }

    fn problem(&mut self, step: Step, message: impl std::fmt::Display) {
        tracing::warn!(step = step.name(), %message, "work pass step failed");
        self.problems.push(Problem { step, message: message.to_string() });
    }
}

/// Runs one pass over the store. The caller holds the [`WorkLock`].
pub fn run(store: &mut Store, pass: &Pass<'_>) -> Result<PassReport, WorkError> {
    let config = pass.config;
    let mut report = PassReport {
        drained: capture::drain(
            store,
            pass.home,
            config,
            None,
            config.capture.drain_per_hook.max(SPOOL_PER_PASS),
        ),
        ..PassReport::default()
    };

    // A reaction seen for the first time starts with what this pass distils.
    if let Err(err) = crate::react::prepare(store, &config.reactions, pass.now_ms) {
        report.problem(Step::React, err);
    }

    // Before distilling, so what a session on a feature branch teaches is that branch's from
    // the moment it exists.
    match crate::branch::settle(store, pass.now_ms) {
        Ok(settled) => report.branches = settled,
        Err(err) => report.problem(Step::Branches, err),
    }

    match distil(store, pass) {
        Ok(distilled) => report.distil = distilled,
        Err(err) => report.problem(Step::Distil, err),
    }

    // What was distilled, now or by an earlier pass, is screened for long-term memory.
    let settings = promote::Settings::from_config(&config.promote, config.search.embedding_model());
    report.auto_promoted = settings.auto;
    // What people told their agents first, so that a distilled item saying the same joins the
    // memory it became rather than waiting as a candidate of its own.
    let mut promoted = PromoteReport::default();
    if let Err(err) = promote::statements_new(store, &settings, pass.now_ms, &mut promoted) {
        report.problem(Step::Promote, err);
    }
    match promote::screen_new(store, &settings, pass.now_ms) {
        Ok(screened) => {
            report.promoted = Some(PromoteReport {
                screened: screened.screened,
                candidates: screened.candidates + promoted.candidates,
                merged: screened.merged + promoted.merged,
                successors: screened.successors + promoted.successors,
                stated: promoted.stated,
            })
        }
        Err(err) => report.problem(Step::Promote, err),
    }

    // What was distilled and promoted rests on files as they are now.
    match crate::anchor::run(store, pass.now_ms) {
        Ok(anchored) => report.anchors = anchored,
        Err(err) => report.problem(Step::Anchors, err),
    }

    // What landed and matches a reaction sets it off, once per item.
    if let (false, Some(act)) = (config.reactions.is_empty(), pass.act) {
        match crate::react::run(store, &config.reactions, act, pass.now_ms) {
            Ok(reacted) => {
                // A reaction that cannot run is the person's to fix (`status` and `reactions
                // list` say why); it is no failure of the pass, which serve's worker would retry.
                for why in &reacted.unusable {
                    tracing::warn!(%why, "reaction not run");
                }
                report.reactions = Some(reacted);
            }
            Err(err) => report.problem(Step::React, err),
        }
    }

    // New observations and summaries get their vectors here, off the hook path.
    if let Some(embedder) = pass.embedder {
        report.model = Some(embedder.model().to_owned());
        match embed_pending(store, embedder, 32, EMBED_PER_PASS, &mut |_, _| {}) {
            Ok(embedded) => report.embedded = Some(embedded),
            Err(err) => report.problem(Step::Embed, err),
        }
    }
    if let Some(encoder) = pass.sparse {
        report.sparse_model = Some(encoder.model().to_owned());
        match encode_pending(store, encoder, 32, EMBED_PER_PASS, &mut |_, _| {}) {
            Ok(encoded) => report.sparse_encoded = Some(encoded),
            Err(err) => report.problem(Step::Embed, err),
        }
    }

    // Events stored before their index held stems and dates, newest first.
    match store.restem_events(RESTEM_BATCH, RESTEM_PER_PASS) {
        Ok(done) => report.reindexed = done,
        Err(err) => report.problem(Step::Index, err),
    }

    // Edits made in Obsidian reach the store within one pass, and new memories reach the vault.
    if let Some(root) = config.vault.root() {
        match vault::sync(store, &root, &vault_state_path(pass.home), pass.now_ms) {
            Ok(sync) => report.vault = Some(sync),
            Err(err) => report.problem(Step::Vault, err),
        }
    }

    if report.added_memory() {
        refresh_briefs(store, pass, &mut report);
        if let Err(err) = store.optimize_recall_indexes() {
            report.problem(Step::Checkpoint, format!("recall indexes not merged: {err}"));
        }
    }
    // The record of injections stays bounded; the hook only appends to it.
    let before = pass.now_ms - crate::store::injections::KEPT_INJECTION_MS;
    if let Err(err) = store.prune_injections(before, crate::store::injections::KEPT_INJECTIONS) {
        tracing::debug!(%err, "old injections not pruned");
    }
    // Whatever the pass wrote (events drained, distilled items, vectors, the indexes merged),
    // the next process to open the store must not read it all again from the log.
    if let Err(err) = store.leave_log_small(Duration::from_secs(2)) {
        tracing::debug!(%err, "checkpoint skipped");
    }
    // When the last pass ran, for `status`; a file that cannot be written costs only that line.
    let _ = fsutil::write_atomic(&last_pass_path(pass.home), pass.now_ms.to_string().as_bytes());
    Ok(report)
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Where the time of the last finished pass is kept.
fn last_pass_path(home: &Home) -> PathBuf {
    home.root().join("work.last")
}

/// When the last pass finished (Unix milliseconds), by any process: `work`, the stop hook's
/// background pass or `serve`'s worker; `None` before the first.
pub fn last_pass(home: &Home) -> Option<i64> {
    std::fs::read_to_string(last_pass_path(home)).ok()?.trim().parse().ok()
}

/// Where vault sync keeps what each note and memory looked like at the last sync.
pub fn vault_state_path(home: &Home) -> PathBuf {
    home.root().join("vault-state.json")
}

/// One distil pass with the distiller the configuration names; the LLM's spend is recorded
/// even when the pass fails.
fn distil(store: &mut Store, pass: &Pass<'_>) -> Result<DistilReport, StoreError> {
    let distil = &pass.config.distil;
    let options = DistilOptions {
        owner: pass.owner.to_owned(),
        now_ms: pass.now_ms,
        silence_ms: distil.silence_minutes as i64 * 60_000,
        lease_ms: distil.lease_seconds as i64 * 1000,
        max_sessions: SESSIONS_PER_PASS,
        capture: pass.config.capture.clone(),
    };
    let Some(transport) = pass.transport else {
        return sessions::distil_pending(
            store,
            &OfflineDistiller::new(),
            "offline",
            pass.mode,
            &options,
        );
    };
    // The day's budget is what the store says is left; the pass adds its spend.
    let day = time::utc_day(pass.now_ms);
    let spent = store.llm_tokens_spent(&day)?;
    let budget = DayBudget::new(pass.config.llm.daily_token_budget.saturating_sub(spent));
    let distiller =
        LlmDistiller::new(transport, &budget).with_max_retries(pass.config.llm.max_retries);
    let name = format!("llm:{}", transport.name());
    let report = sessions::distil_pending(store, &distiller, &name, pass.mode, &options);
    if budget.calls() > 0 {
        store.record_llm_spend(&day, transport.name(), budget.spent(), budget.calls())?;
    }
    report
}

/// Brings the brief files of the projects that keep one up to date.
fn refresh_briefs(store: &Store, pass: &Pass<'_>, report: &mut PassReport) {
    match inject::refresh_briefs(store, pass.home, pass.config) {
        Ok(files) => {
            for (path, written) in files {
                match written {
                    Ok(changed) => report.briefs_written += usize::from(changed),
                    Err(err) => report
                        .problem(Step::Briefs, format!("{} not refreshed: {err}", path.display())),
                }
            }
        }
        Err(err) => report.problem(Step::Briefs, err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_is_followed_by_another_only_when_it_stopped_at_a_bound_and_got_on() {
        assert!(!PassReport::default().more_to_do());
        let mut at_bound = PassReport::default();
        at_bound.distil.sessions = SESSIONS_PER_PASS;
        // Sessions held back for their closing answers: every pass takes them on, none stores.
        assert!(!at_bound.more_to_do());
        at_bound.distil.summaries = 3;
        assert!(at_bound.more_to_do());
        let embedding = |embedded, left| PassReport {
            embedded: Some(EmbedPass { embedded, left }),
            ..PassReport::default()
        };
        assert!(embedding(EMBED_PER_PASS, 10).more_to_do());
        assert!(!embedding(EMBED_PER_PASS, 0).more_to_do());
        assert!(!embedding(0, 10).more_to_do(), "a model that embeds nothing is not run again");

        let mut run = embedding(EMBED_PER_PASS, 10);
        run.distil.summaries = 2;
        let mut later = embedding(10, 0);
        later.distil.summaries = 1;
        later.problems.push(Problem { step: Step::Vault, message: "gone".into() });
        run.absorb(later);
        assert_eq!(run.embedded, Some(EmbedPass { embedded: EMBED_PER_PASS + 10, left: 0 }));
        assert_eq!((run.distil.summaries, run.problems.len()), (3, 1));
        assert!(!run.more_to_do());
    }
}
