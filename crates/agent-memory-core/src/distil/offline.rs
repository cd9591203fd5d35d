//! The offline distiller: deterministic rules that turn a turn's events into observations and a
//! session into a summary, with no model behind them.
//!
//! Owns one per-batch analysis ([`Batch`]: prompts, checks run with their outcome, files changed
//! by edit tools, patches and shell commands, reads, searches, and each turn's closing answer)
//! and one small rule per pattern over it: a check failing, then files changed, then the check
//! passing (`bugfix`); a failure left standing, or a question answered without a fix
//! (`discovery`); new files with tests (`feature`); other edits (`change` or `refactor`); a
//! decision stated by the user or concluded by the agent (`decision`).
//!
//! What was learned comes from the agent's closing answer ([`answer`]), believed only as far as
//! the runs seen bear it out: a check counts as passed only when a run of it passed, a failure
//! is read from the output as well as the exit code, and a claim that a check passes is dropped
//! when no passing run was seen. Template text is in English and Simplified Chinese; names of
//! files, commands and errors, and the agent's own words, are kept as they are.
//!
//! Must not: touch the store, the network, the clock or randomness. The same events and mode
//! always give the same drafts; times come from the events.

mod answer;
mod shell;

use std::collections::BTreeMap;
use std::ops::Range;

use serde_json::Value;

use self::answer::{Role, Statement};
use self::shell::{check_key, error_line, is_look_around};
use super::mode::Mode;
use super::{Distiller, ObservationDraft, StoredEvent, SummaryDraft, cap_subtitle};
use crate::event::{EventKind, ToolKind};
use crate::text::{clip, dedup, one_line};

/// Longest title, in characters: a lesson's whole sentence, as the agent said it, fits (the
/// briefing and recall shorten what they show, by whole clauses).
const TITLE_MAX_CHARS: usize = 160;
/// Longest quoted prompt in a fact, in characters.
const QUOTE_MAX_CHARS: usize = 160;
/// Longest statement of a closing answer in a fact, in characters.
const STATEMENT_MAX_CHARS: usize = 240;
/// Longest excerpt of the text a change put into a file.
const ADDED_MAX_CHARS: usize = 120;
/// Longest text a change put in that a summary's `completed` quotes beside the file.
const COMPLETED_ADDED_CHARS: usize = 80;
/// Longest narrative, in characters.
const NARRATIVE_MAX_CHARS: usize = 700;
/// Longest session request in a summary, in characters.
const REQUEST_MAX_CHARS: usize = 300;
/// Most facts in one observation.
const MAX_FACTS: usize = 7;
/// Reads of one file in a batch that make it worth a note even when other work happened.
const REPEATED_READS: usize = 3;
/// Most files or names listed in one title.
const TITLE_FILES: usize = 3;

/// Observation types that record work done rather than something learned.
const DONE_KINDS: &[&str] = &["change", "refactor", "feature"];

/// The rule-based distiller: always available, no network.
#[derive(Debug, Clone, Default)]
pub struct OfflineDistiller;

impl OfflineDistiller {
    pub fn new() -> OfflineDistiller {
        OfflineDistiller
    }
}

impl Distiller for OfflineDistiller {
    fn observe(&self, events: &[StoredEvent], mode: &Mode) -> Vec<ObservationDraft> {
        let batch = Batch::new(events);
        let lang = Lang::of(mode);
        let mut found = bugfixes(&batch);
        found.extend(problems(&batch, &found));
        found.extend(feature(&batch, &found));
        found.extend(change(&batch, &found));
        found.extend(decisions(&batch, &found));
        found.extend(discoveries(&batch, found.is_empty()));
        let mut drafts: Vec<ObservationDraft> =
            found.into_iter().filter_map(|f| f.into_draft(&batch, mode, lang)).collect();
        // Stable: observations of the same moment keep the order the rules found them in.
        drafts.sort_by_key(|d| d.at_ms);
        drafts
    }

    fn summarize(&self, events: &[StoredEvent], mode: &Mode) -> SummaryDraft {
        let batch = Batch::new(events);
        let lang = Lang::of(mode);
        SummaryDraft {
            request: batch
                .prompts()
                .next()
                .map(|(_, text)| clip(&one_line(text), REQUEST_MAX_CHARS))
                .unwrap_or_default(),
            investigated: investigated(&batch, lang),
            learned: learned(&batch, self.observe(events, mode)),
            completed: completed(&batch, lang),
            next_steps: next_steps(&batch, lang),
            files_read: dedup(batch.reads().map(|(_, file)| file.to_owned())),
            files_modified: dedup(batch.changes().map(|(_, c)| c.file.clone())),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The analysis: one pass over the events, shared by every rule.

/// One event, reduced to what the rules look at.
#[derive(Debug)]
struct Item<'a> {
    id: i64,
    at_ms: i64,
    step: Step<'a>,
}

#[derive(Debug)]
enum Step<'a> {
    /// A real prompt (trivial ones and slash commands are dropped at analysis).
    Prompt(&'a str),
    Command(Command),
    /// One file changed by an edit or write tool, a patch or a shell command.
    Change(Change),
    /// A file read, and what the read returned.
    Read(String, &'a str),
    Search(String),
    /// The agent's closing answer to a turn.
    Answer(&'a str),
}

#[derive(Debug, Clone)]
struct Command {
    /// Whitespace-collapsed, as run.
    text: String,
    /// What reruns of the same check share ([`check_key`]).
    key: String,
    passed: bool,
    /// The first meaningful error line of a failed run.
    error: Option<String>,
}

#[derive(Debug)]
struct Change {
    file: String,
    /// Written from scratch (a write tool, or a patch's `Add File`) rather than edited.
    created: bool,
    /// What the change put into the file, short.
    added: Option<String>,
}

/// One turn: its items, and what its closing answer says.
#[derive(Debug)]
struct Turn {
    items: Range<usize>,
    said: Vec<Statement>,
}

/// A batch of events in the order they happened, analysed once.
#[derive(Debug)]
struct Batch<'a> {
    items: Vec<Item<'a>>,
    turns: Vec<Turn>,
}

impl<'a> Batch<'a> {
    fn new(events: &'a [StoredEvent]) -> Batch<'a> {
        // The order they happened in, as the store gives them (`Store::session_events`): hooks'
        // events by their row ids, whatever the clock said, and a transcript's tool calls, stored
        // at the stop that read them, placed by their time among the runs they came between.
        let ordered: Vec<&StoredEvent> = events.iter().collect();
        let mut items = Vec::new();
        let mut turns = Vec::new();
        let mut start = 0;
        for stored in ordered {
            let (id, at_ms) = (stored.id, stored.event.at_ms);
            for step in steps(stored) {
                let answer = match step {
                    Step::Answer(text) => Some(text),
                    _ => None,
                };
                items.push(Item { id, at_ms, step });
                if let Some(text) = answer {
                    turns.push(Turn { items: start..items.len(), said: answer::statements(text) });
                    start = items.len();
                }
            }
        }
        if start < items.len() {
            turns.push(Turn { items: start..items.len(), said: Vec::new() });
        }
        Batch { items, turns }
    }

    fn prompts(&self) -> impl Iterator<Item = (usize, &'a str)> + '_ {
        self.items.iter().enumerate().filter_map(|(at, item)| match item.step {
            Step::Prompt(text) => Some((at, text)),
            _ => None,
        })
    }

    fn commands(&self) -> impl Iterator<Item = (usize, &Command)> + '_ {
        self.items.iter().enumerate().filter_map(|(at, item)| match &item.step {
            Step::Command(command) => Some((at, command)),
            _ => None,
        })
    }

    fn changes(&self) -> impl Iterator<Item = (usize, &Change)> + '_ {
        self.items.iter().enumerate().filter_map(|(at, item)| match &item.step {
            Step::Change(change) => Some((at, change)),
            _ => None,
        })
    }

    fn reads(&self) -> impl Iterator<Item = (usize, &str)> + '_ {
        self.items.iter().enumerate().filter_map(|(at, item)| match &item.step {
            Step::Read(file, _) => Some((at, file.as_str())),
            _ => None,
        })
    }

    /// The last real prompt at or before item `at`: what the agent was asked to do.
    fn prompt_before(&self, at: usize) -> Option<(usize, &'a str)> {
        self.prompts().take_while(|(p, _)| *p <= at).last()
    }

    fn is_changed(&self, file: &str) -> bool {
        self.changes().any(|(_, c)| c.file == file)
    }

    /// The turn holding item `at`.
    fn turn_of(&self, at: usize) -> Option<&Turn> {
        self.turns.iter().find(|turn| turn.items.contains(&at))
    }

    /// What the answer closing the turn of item `at` says.
    fn said_at(&self, at: usize) -> &[Statement] {
        self.turn_of(at).map_or(&[], |turn| &turn.said)
    }

    /// The closing answer of the turn of item `at`, when it said something: a source of what
    /// is written from it.
    fn answer_item(&self, at: usize) -> Option<usize> {
        let turn = self.turn_of(at).filter(|turn| !turn.said.is_empty())?;
        let last = turn.items.end - 1;
        matches!(self.items[last].step, Step::Answer(_)).then_some(last)
    }

    /// Whether a run of the check `key` passed after item `at`.
    fn passes_after(&self, key: &str, at: usize) -> bool {
        self.commands().any(|(c, command)| c > at && command.key == key && command.passed)
    }
}

/// What one stored event contributes to the analysis.
fn steps(stored: &StoredEvent) -> Vec<Step<'_>> {
    let event = &stored.event;
    let payload = &event.payload;
    let cwd = event.cwd.as_deref();
    let facts = &event.facts;
    let changes = |created_too: bool| {
        facts.written.iter().map(move |file| {
            let file = relative(file, cwd);
            // A patch names the files it adds as the agent wrote them.
            let created = created_too && facts.created.iter().any(|added| added.ends_with(&file));
            let added = facts.added.as_deref().map(|text| clip(&one_line(text), ADDED_MAX_CHARS));
            Step::Change(Change { file, created, added })
        })
    };
    match event.kind {
        EventKind::Prompt => {
            let text = payload.get("prompt").and_then(Value::as_str).unwrap_or(&event.body);
            if is_trivial_prompt(text) { Vec::new() } else { vec![Step::Prompt(text)] }
        }
        EventKind::ToolUse => match event.tool_kind {
            // A shell call may change files (`sed -i`, a heredoc, `git apply`) and run a check.
            Some(ToolKind::Shell) => {
                let check = command(event);
                // A write that failed on its own (blocked, refused) wrote nothing; one chained
                // with a check may have written before the check failed.
                let wrote = !facts.failed || check.is_some();
                let mut steps: Vec<Step<'_>> =
                    if wrote { changes(false).collect() } else { Vec::new() };
                // A passing `A && B` is a passing run of each check it chains.
                let chained = match (&check, facts.command.as_deref()) {
                    (Some(first), Some(raw)) if first.passed => shell::chained_keys(raw)
                        .into_iter()
                        .filter(|key| *key != first.key)
                        .map(|key| Command { key, ..first.clone() })
                        .collect(),
                    _ => Vec::new(),
                };
                steps.extend(check.into_iter().chain(chained).map(Step::Command));
                steps
            }
            Some(ToolKind::Edit | ToolKind::Write) if !facts.failed => changes(true).collect(),
            Some(ToolKind::Read) if !facts.failed => {
                let output = payload.get("output").and_then(Value::as_str).unwrap_or_default();
                let files = event.files.iter().map(|file| relative(file, cwd));
                files.map(|file| Step::Read(file, output)).collect()
            }
            Some(ToolKind::Search) => {
                let query = facts.query.as_deref().map(one_line).filter(|q| !q.is_empty());
                query.map(Step::Search).into_iter().collect()
            }
            _ => Vec::new(),
        },
        EventKind::Stop => {
            let text = payload.get("last_message").and_then(Value::as_str).unwrap_or_default();
            // Every stop closes a turn, said something or not.
            vec![Step::Answer(text)]
        }
        EventKind::SessionStart | EventKind::SessionEnd | EventKind::Note => Vec::new(),
    }
}

/// A shell call as a check with its outcome; look-arounds, filters and file writes are not.
fn command(event: &crate::event::Event) -> Option<Command> {
    let raw = event.facts.command.as_deref()?;
    if is_look_around(raw) {
        return None;
    }
    let key = check_key(raw)?;
    let text = one_line(raw.lines().next().unwrap_or_default());
    // `failed` is the exit code or the output: a masked exit code never makes a pass.
    let passed = !event.facts.failed;
    let output = event.payload.get("output").and_then(Value::as_str).unwrap_or_default();
    let error = if passed { None } else { Some(error_line(output)) };
    Some(Command { text, key, passed, error })
}

/// The line of a failed run's output that names the problem, for the other distiller too.
pub(crate) fn failure_line(output: &str) -> String {
    error_line(output)
}

/// A path as event summaries show it: relative to the working directory when inside it.
fn relative(file: &str, cwd: Option<&str>) -> String {
    let inside = cwd.filter(|cwd| cwd.len() > 1).and_then(|cwd| {
        file.strip_prefix(cwd.trim_end_matches('/')).and_then(|rest| rest.strip_prefix('/'))
    });
    inside.unwrap_or(file).to_owned()
}

/// Prompts that carry no request: acknowledgements, one-word nudges, slash commands.
fn is_trivial_prompt(prompt: &str) -> bool {
    const TRIVIAL: &[&str] = &[
        "ok",
        "okay",
        "k",
        "yes",
        "y",
        "no",
        "n",
        "sure",
        "thanks",
        "thank you",
        "thx",
        "ty",
        "continue",
        "go on",
        "go ahead",
        "proceed",
        "lgtm",
        "done",
        "next",
        "好",
        "好的",
        "行",
        "可以",
        "是",
        "嗯",
        "谢谢",
        "继续",
        "对",
    ];
    let text = prompt.trim().trim_end_matches(['.', '!', '?', '。', '！', '？', '~']);
    let lower = text.to_lowercase();
    text.starts_with('/') || text.chars().count() < 2 || TRIVIAL.contains(&lower.as_str())
}

// ---------------------------------------------------------------------------------------------
// The rules: each finds one pattern in the batch and says which items it used.

/// What a rule found, before it is written up in the mode's language.
#[derive(Debug)]
struct Found {
    /// The preferred type, and the one to use when the mode has no such type.
    kind: &'static str,
    fallback: Option<&'static str>,
    concepts: Vec<&'static str>,
    /// Indexes into [`Batch::items`], in order.
    items: Vec<usize>,
    what: What,
}

/// A failed run as a memory states it.
#[derive(Debug, Clone)]
struct Failure {
    /// The command as run.
    command: String,
    error: String,
    /// Run again after the last change and failed again.
    still: bool,
}

#[derive(Debug)]
enum What {
    Bugfix {
        /// The check that passed, as run.
        check: String,
        failure: Failure,
        /// The last failed run's error when it differs from the first one's.
        last_error: Option<String>,
        failed_runs: usize,
        files: Vec<String>,
        added: Vec<(String, String)>,
        said: Vec<Statement>,
    },
    /// A failure left standing, or a question answered without a fix.
    Problem {
        failures: Vec<Failure>,
        changed: Vec<String>,
        read: Vec<String>,
        /// Names the files read define.
        names: Vec<String>,
        unresolved: bool,
        said: Vec<Statement>,
        ask: Option<String>,
    },
    Feature {
        created: Vec<String>,
        tests: Vec<String>,
        check: Option<String>,
        ask: Option<String>,
        said: Vec<Statement>,
    },
    Change {
        files: Vec<String>,
        ask: Option<String>,
        added: Vec<(String, String)>,
        said: Vec<Statement>,
    },
    Decision {
        decision: String,
        reason: Option<String>,
        /// The agent concluded it, rather than the user stating it.
        concluded: bool,
    },
    Discovery {
        files: Vec<String>,
        names: Vec<String>,
        ask: Option<String>,
    },
}

/// A check failing, then files changed, then the same check passing.
fn bugfixes(batch: &Batch<'_>) -> Vec<Found> {
    // The failed runs of each check since it last passed, by key.
    let mut open: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut found = Vec::new();
    for (at, command) in batch.commands() {
        if !command.passed {
            open.entry(&command.key).or_default().push(at);
            continue;
        }
        let Some(failures) = open.remove(command.key.as_str()) else { continue };
        let first = failures[0];
        let changes: Vec<usize> =
            batch.changes().map(|(c, _)| c).filter(|c| (first..at).contains(c)).collect();
        // It passed again without a change seen: flaky or environmental, unless the closing
        // answer says what was wrong or changed (the change may have come through a channel no
        // hook reports).
        let explained = batch.said_at(at).iter().any(|s| matches!(s.role, Role::Fix | Role::Cause));
        if changes.is_empty() && !explained {
            continue;
        }
        let error_of = |at: usize| match &batch.items[at].step {
            Step::Command(failed) => failed.error.clone().unwrap_or_default(),
            _ => String::new(),
        };
        let error = error_of(first);
        let last_error =
            failures.last().map(|at| error_of(*at)).filter(|e| !e.is_empty() && *e != error);
        let reads = batch.reads().map(|(r, _)| r).filter(|r| (first..at).contains(r));
        let mut items: Vec<usize> = failures.iter().copied().chain(changes).chain(reads).collect();
        items.push(at);
        asked(batch, first, &mut items);
        read_before_change(batch, &mut items);
        let mut concepts = vec!["problem-solution", "what-changed"];
        let said = batch.said_at(at).to_vec();
        items.extend(batch.answer_item(at));
        // Needing more than one try means the first fix was wrong: worth remembering.
        if failures.len() > 1 || said.iter().any(|s| s.role == Role::Gotcha) {
            concepts.push("gotcha");
        }
        let failed_command = match &batch.items[first].step {
            Step::Command(failed) => failed.text.clone(),
            _ => command.text.clone(),
        };
        found.push(Found {
            kind: "bugfix",
            fallback: Some("change"),
            concepts,
            what: What::Bugfix {
                check: command.text.clone(),
                failure: Failure { command: failed_command, error, still: false },
                last_error,
                failed_runs: failures.len(),
                files: changed_files(batch, &items),
                added: added_text(batch, &items),
                said,
            },
            items,
        });
    }
    found
}

/// Per turn without a fix: checks whose last run failed, and an answer that explains or says
/// the problem is still there.
fn problems(batch: &Batch<'_>, earlier: &[Found]) -> Vec<Found> {
    let mut found = Vec::new();
    for turn in &batch.turns {
        let in_turn = |at: &usize| turn.items.contains(at) && !is_used(earlier, *at);
        // The last run of each check in the turn, when it failed and never passed later.
        let mut last: BTreeMap<&str, usize> = BTreeMap::new();
        for (at, command) in batch.commands().filter(|(at, _)| in_turn(at)) {
            last.insert(&command.key, at);
        }
        // A turn whose check was fixed is told by its bug fix, unless something still fails.
        let fixed_here =
            earlier.iter().any(|f| f.items.last().is_some_and(|at| turn.items.contains(at)));
        let mut failed: Vec<usize> = last
            .into_iter()
            .filter(|(key, at)| match &batch.items[*at].step {
                Step::Command(c) => !c.passed && !batch.passes_after(key, *at),
                _ => false,
            })
            .map(|(_, at)| at)
            .collect();
        failed.sort_unstable();
        let said = &turn.said;
        let said_unresolved = answer::says_unresolved(said);
        let explains = said
            .iter()
            .any(|s| matches!(s.role, Role::Cause | Role::Gotcha | Role::Open | Role::Unresolved));
        let changes: Vec<usize> = batch.changes().map(|(c, _)| c).filter(in_turn).collect();
        // Nothing failing: a problem only when the answer says one is left, or explains
        // something in a turn that changed nothing.
        if failed.is_empty()
            && (fixed_here || !said_unresolved && (!changes.is_empty() || !explains))
        {
            continue;
        }
        let unresolved = said_unresolved || !failed.is_empty();
        let last_change = changes.last().copied();
        let failures = failed
            .iter()
            .filter_map(|at| match &batch.items[*at].step {
                Step::Command(c) => Some(Failure {
                    command: c.text.clone(),
                    error: c.error.clone().unwrap_or_default(),
                    still: last_change.is_some_and(|change| change < *at),
                }),
                _ => None,
            })
            .collect();
        let reads: Vec<usize> = batch.reads().map(|(r, _)| r).filter(in_turn).collect();
        // The answer itself stands on the turn's stop.
        let stop = turn.items.end - 1;
        let mut items: Vec<usize> = failed.iter().chain(&changes).chain(&reads).copied().collect();
        items.push(stop);
        items.sort_unstable();
        items.dedup();
        let ask = asked(batch, items[0], &mut items);
        let changed = changed_files(batch, &items);
        let read: Vec<String> = dedup(reads.iter().filter_map(|at| match &batch.items[*at].step {
            Step::Read(file, _) => Some(file.clone()),
            _ => None,
        }));
        let mut concepts = if unresolved { vec!["problem-solution"] } else { vec!["how-it-works"] };
        if said.iter().any(|s| s.role == Role::Gotcha) {
            concepts.push("gotcha");
        }
        found.push(Found {
            kind: "discovery",
            fallback: None,
            concepts,
            items,
            what: What::Problem {
                failures,
                changed,
                names: defined_names(batch, &reads),
                read,
                unresolved,
                said: said.clone(),
                ask,
            },
        });
    }
    found
}

/// New files written together with tests for them.
fn feature(batch: &Batch<'_>, earlier: &[Found]) -> Option<Found> {
    let fresh: Vec<(usize, &Change)> =
        batch.changes().filter(|(at, _)| !is_used(earlier, *at)).collect();
    let created: Vec<String> = fresh
        .iter()
        .filter(|(_, c)| c.created && !is_test_file(&c.file))
        .map(|(_, c)| c.file.clone())
        .collect();
    let tests: Vec<String> =
        fresh.iter().filter(|(_, c)| is_test_file(&c.file)).map(|(_, c)| c.file.clone()).collect();
    if created.is_empty() || tests.is_empty() {
        return None;
    }
    let mut items: Vec<usize> = fresh.iter().map(|(at, _)| *at).collect();
    let first = items[0];
    let check = batch
        .commands()
        .filter(|(at, c)| *at > first && c.passed && is_test_command(&c.text))
        .last();
    let check = check.map(|(at, c)| {
        items.push(at);
        c.text.clone()
    });
    let ask = asked(batch, first, &mut items);
    read_before_change(batch, &mut items);
    let said = batch.said_at(first).to_vec();
    items.extend(batch.answer_item(first));
    Some(Found {
        kind: "feature",
        fallback: Some("change"),
        concepts: vec!["what-changed", "how-it-works"],
        items,
        what: What::Feature { created: dedup(created), tests: dedup(tests), check, ask, said },
    })
}

/// Files changed outside any bug fix, problem or feature: one change per turn, or a refactor
/// when the prompt says so.
fn change(batch: &Batch<'_>, earlier: &[Found]) -> Vec<Found> {
    let mut found = Vec::new();
    for turn in &batch.turns {
        let mut items: Vec<usize> = batch
            .changes()
            .map(|(at, _)| at)
            .filter(|at| turn.items.contains(at) && !is_used(earlier, *at))
            .collect();
        let Some(&first) = items.first() else { continue };
        let files = changed_files(batch, &items);
        let added = added_text(batch, &items);
        let ask = asked(batch, first, &mut items);
        read_before_change(batch, &mut items);
        // The checks run after the change that passed stand behind it.
        let checks = batch
            .commands()
            .filter(|(at, c)| *at > first && turn.items.contains(at) && c.passed)
            .map(|(at, _)| at);
        items.extend(checks.collect::<Vec<_>>());
        items.extend(batch.answer_item(first));
        items.sort_unstable();
        items.dedup();
        let refactor = ask.as_deref().is_some_and(asks_for_refactor);
        found.push(Found {
            kind: if refactor { "refactor" } else { "change" },
            fallback: Some("change"),
            concepts: if refactor {
                vec!["what-changed", "pattern"]
            } else {
                vec!["what-changed", "how-it-works"]
            },
            items,
            what: What::Change { files, ask, added, said: turn.said.clone() },
        });
    }
    found
}

/// Decisions stated in prompts, with the reason when they give one, and decisions the agent
/// concluded in a closing answer in a turn whose prompt stated none.
fn decisions(batch: &Batch<'_>, earlier: &[Found]) -> Vec<Found> {
    let mut found = Vec::new();
    for turn in &batch.turns {
        let mut stated = false;
        for (at, prompt) in batch.prompts().filter(|(at, _)| turn.items.contains(at)) {
            let Some((decision, reason)) = stated_decision(prompt) else { continue };
            stated = true;
            let mut concepts = vec!["why-it-exists"];
            if reason.is_some()
                || prompt.to_lowercase().contains("instead")
                || prompt.contains("改用")
            {
                concepts.push("trade-off");
            }
            found.push(Found {
                kind: "decision",
                fallback: None,
                concepts,
                items: vec![at],
                what: What::Decision { decision, reason, concluded: false },
            });
        }
        if stated {
            continue;
        }
        let Some(said) = turn.said.iter().find(|s| s.role == Role::Decision) else { continue };
        let (decision, reason) = split_reason(&said.text);
        // Its source is the answer alone, so it never shares its sources with the turn's other
        // observations (they are keyed by their sources).
        let items = vec![turn.items.end - 1];
        if earlier.iter().any(|f| f.items == items) {
            continue;
        }
        found.push(Found {
            kind: "decision",
            fallback: None,
            concepts: if reason.is_some() {
                vec!["why-it-exists", "trade-off"]
            } else {
                vec!["why-it-exists"]
            },
            items,
            what: What::Decision { decision, reason, concluded: true },
        });
    }
    found
}

/// Files studied without being changed, when nothing else was found and no answer explains
/// them: each file read three times or more, or else every file read.
fn discoveries(batch: &Batch<'_>, nothing_else: bool) -> Vec<Found> {
    if !nothing_else {
        return Vec::new();
    }
    let mut reads: Vec<(&str, Vec<usize>)> = Vec::new();
    for (at, file) in batch.reads().filter(|(_, file)| !batch.is_changed(file)) {
        match reads.iter_mut().find(|(known, _)| *known == file) {
            Some((_, ats)) => ats.push(at),
            None => reads.push((file, vec![at])),
        }
    }
    let mut groups: Vec<Vec<&(&str, Vec<usize>)>> =
        reads.iter().filter(|(_, ats)| ats.len() >= REPEATED_READS).map(|r| vec![r]).collect();
    if groups.is_empty() && !reads.is_empty() {
        groups.push(reads.iter().collect());
    }
    let mut found = Vec::new();
    for group in groups {
        let mut items: Vec<usize> = group.iter().flat_map(|(_, ats)| ats.iter().copied()).collect();
        items.sort_unstable();
        let names = defined_names(batch, &items);
        let first = items[0];
        let ask = asked(batch, first, &mut items);
        found.push(Found {
            kind: "discovery",
            fallback: None,
            concepts: vec!["how-it-works"],
            what: What::Discovery {
                files: group.iter().map(|(file, _)| (*file).to_owned()).collect(),
                names,
                ask,
            },
            items,
        });
    }
    found
}

fn is_used(found: &[Found], at: usize) -> bool {
    found.iter().any(|f| f.items.contains(&at))
}

/// The files changed by the given items, first-seen order.
fn changed_files(batch: &Batch<'_>, items: &[usize]) -> Vec<String> {
    dedup(items.iter().filter_map(|at| match &batch.items[*at].step {
        Step::Change(change) => Some(change.file.clone()),
        _ => None,
    }))
}

/// What the given items' changes put into files: the last text per file.
fn added_text(batch: &Batch<'_>, items: &[usize]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for at in items {
        let Step::Change(change) = &batch.items[*at].step else { continue };
        let Some(added) = change.added.as_ref().filter(|a| !a.is_empty()) else { continue };
        out.retain(|(file, _)| *file != change.file);
        out.push((change.file.clone(), added.clone()));
    }
    out
}

/// The prompt that asked for the work starting at `first`, added to the items it stands on.
fn asked(batch: &Batch<'_>, first: usize, items: &mut Vec<usize>) -> Option<String> {
    let (at, prompt) = batch.prompt_before(first)?;
    items.insert(0, at);
    items.sort_unstable();
    items.dedup();
    Some(clip(&one_line(prompt), QUOTE_MAX_CHARS))
}

/// Reads of the changed files before their last change: the looking that led to it.
fn read_before_change(batch: &Batch<'_>, items: &mut Vec<usize>) {
    let files = changed_files(batch, items);
    let last = items.iter().copied().max().unwrap_or_default();
    let reads = batch.reads().filter(|(at, file)| *at < last && files.iter().any(|f| f == file));
    items.extend(reads.map(|(at, _)| at));
    items.sort_unstable();
    items.dedup();
}

fn is_test_file(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    let stem = name.split('.').next().unwrap_or(name);
    file.starts_with("tests/")
        || file.contains("/tests/")
        || file.starts_with("test/")
        || file.contains("/test/")
        || file.contains("__tests__/")
        || stem.ends_with("_test")
        || stem.starts_with("test_")
        || name.contains(".spec.")
        || name.contains(".test.")
}

fn is_test_command(command: &str) -> bool {
    ["test", "pytest", "jest", "vitest", "spec", "nextest"].iter().any(|w| command.contains(w))
}

fn asks_for_refactor(prompt: &str) -> bool {
    let lower = prompt.to_lowercase();
    ["refactor", "rename", "extract", "restructure", "clean up", "重构", "重命名", "提取", "抽取"]
        .iter()
        .any(|w| lower.contains(w))
}

/// Markers of a reason inside a sentence.
const BECAUSE: &[&str] = &[" because ", " since ", "因为", "由于"];

/// A statement cut at its reason: `cap X at 3, because Y` → (`cap X at 3`, `Y`).
fn split_reason(text: &str) -> (String, Option<String>) {
    let cut = BECAUSE.iter().filter_map(|m| Some((text.find(m)?, m.len()))).min();
    let trim = |s: &str| s.trim().trim_matches([',', '，', '、', ':', '：', ' ']).trim().to_owned();
    match cut {
        Some((at, len)) => {
            let reason = trim(&text[at + len..]);
            (
                clip(&trim(&text[..at]), STATEMENT_MAX_CHARS),
                (!reason.is_empty()).then(|| clip(&reason, STATEMENT_MAX_CHARS)),
            )
        }
        None => (clip(&trim(text), STATEMENT_MAX_CHARS), None),
    }
}

/// The decision or standing rule a prompt states and its reason, if any, read by the one set
/// of rules for what people state ([`crate::stated`]): a request to act now is none.
fn stated_decision(prompt: &str) -> Option<(String, Option<String>)> {
    use crate::stated::StatedKind;
    let stated = crate::stated::read(prompt)
        .into_iter()
        .find(|s| matches!(s.kind, StatedKind::Decision | StatedKind::Convention))?;
    Some((
        clip(&one_line(&stated.gist), QUOTE_MAX_CHARS),
        stated.reason.map(|r| clip(&one_line(&r), QUOTE_MAX_CHARS)),
    ))
}

/// Names a read file defines (functions, types, classes), from what the read returned.
fn defined_names(batch: &Batch<'_>, items: &[usize]) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "fn ",
        "struct ",
        "enum ",
        "trait ",
        "def ",
        "class ",
        "function ",
        "interface ",
        "type ",
    ];
    const MODIFIERS: &[&str] =
        &["pub(crate) ", "pub ", "export ", "default ", "async ", "abstract ", "public "];
    let mut names = Vec::new();
    for at in items {
        let Step::Read(_, text) = batch.items[*at].step else { continue };
        for line in text.lines() {
            let mut line = line.trim_start();
            while let Some(rest) = MODIFIERS.iter().find_map(|m| line.strip_prefix(m)) {
                line = rest;
            }
            let Some(rest) = KEYWORDS.iter().find_map(|k| line.strip_prefix(k)) else { continue };
            let name: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && !names.contains(&name) && names.len() < 4 {
                names.push(name);
            }
        }
    }
    names
}

// ---------------------------------------------------------------------------------------------
// Writing up: the mode's language, its types and concepts.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    En,
    Zh,
}

impl Lang {
    fn of(mode: &Mode) -> Lang {
        if mode.language.to_lowercase().starts_with("zh") { Lang::Zh } else { Lang::En }
    }

    /// The same words in the mode's language.
    fn pick(self, en: String, zh: String) -> String {
        match self {
            Lang::En => en,
            Lang::Zh => zh,
        }
    }

    /// A list of names: `a, b and 2 more` / `a、b 等 4 个`.
    fn list(self, names: &[String], max: usize) -> String {
        let shown = names.iter().take(max).cloned().collect::<Vec<_>>();
        let more = names.len().saturating_sub(max);
        match (self, more) {
            (Lang::En, 0) => shown.join(", "),
            (Lang::En, more) => format!("{} and {more} more", shown.join(", ")),
            (Lang::Zh, 0) => shown.join("、"),
            (Lang::Zh, _) => format!("{} 等 {} 个", shown.join("、"), names.len()),
        }
    }
}

/// The words of one observation, before the mode's keys are checked.
#[derive(Debug)]
struct Text {
    title: String,
    subtitle: String,
    facts: Vec<String>,
    narrative: String,
}

impl Found {
    fn into_draft(self, batch: &Batch<'_>, mode: &Mode, lang: Lang) -> Option<ObservationDraft> {
        let usable = |kind: &str| mode.has_type(kind) && !mode.skip_types.iter().any(|s| s == kind);
        // A type the mode skips is dropped; one it lacks falls back (a bug fix is still a change).
        if mode.skip_types.iter().any(|s| s == self.kind) {
            return None;
        }
        let kind = [Some(self.kind), self.fallback].into_iter().flatten().find(|k| usable(k))?;
        let text = self.what.write(lang);
        let last = batch.items[*self.items.iter().max()?].at_ms;
        let mut ids: Vec<i64> = self.items.iter().map(|at| batch.items[*at].id).collect();
        ids.sort_unstable();
        ids.dedup();
        Some(ObservationDraft {
            title: title_clip(&text.title),
            subtitle: cap_subtitle(&one_line(&text.subtitle)),
            facts: dedup(text.facts.into_iter().filter(|f| !f.is_empty()))
                .into_iter()
                .take(MAX_FACTS)
                .collect(),
            narrative: clip(&one_line(&text.narrative), NARRATIVE_MAX_CHARS),
            kind: kind.to_owned(),
            concepts: self
                .concepts
                .iter()
                .filter(|c| mode.has_concept(c))
                .map(|c| (*c).to_owned())
                .collect(),
            files_read: dedup(self.items.iter().filter_map(|at| match &batch.items[*at].step {
                Step::Read(file, _) => Some(file.clone()),
                _ => None,
            })),
            files_modified: changed_files(batch, &self.items),
            source_event_ids: ids,
            at_ms: last,
        })
    }
}

/// A title cut at a word boundary when it is too long.
fn title_clip(text: &str) -> String {
    let text = one_line(text);
    if text.chars().count() <= TITLE_MAX_CHARS {
        return text;
    }
    let cut = clip(&text, TITLE_MAX_CHARS);
    let body = cut.trim_end_matches('…');
    match body.rfind(' ') {
        Some(at) if at > TITLE_MAX_CHARS / 2 => {
            format!("{}…", body[..at].trim_end_matches([',', ';', ':']))
        }
        _ => cut,
    }
}

/// The statements of `said` with one of `roles`, clipped, in order.
fn said_as(said: &[Statement], roles: &[Role]) -> Vec<String> {
    said.iter()
        .filter(|s| roles.contains(&s.role))
        .map(|s| sentence(&clip(&s.text, STATEMENT_MAX_CHARS)))
        .collect()
}

/// The first statement of `said` with a role in `roles`, tried in the order given.
fn first_said<'s>(said: &'s [Statement], roles: &[Role]) -> Option<&'s str> {
    roles.iter().find_map(|role| said.iter().find(|s| s.role == *role).map(|s| s.text.as_str()))
}

/// A statement as a fact: ends with a full stop in its own script.
fn sentence(text: &str) -> String {
    let text = text.trim();
    if text.ends_with(['.', '。', '!', '?', '！', '？', '…', ')', '）', '`']) {
        return text.to_owned();
    }
    let wide = text.chars().last().is_some_and(|c| !c.is_ascii());
    format!("{text}{}", if wide { "。" } else { "." })
}

/// What the agent said, in order, for a narrative: claims of a pass only when `verified`.
fn account(said: &[Statement], verified: bool) -> String {
    said.iter()
        .filter(|s| verified || s.role != Role::Verify)
        .map(|s| sentence(&s.text))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `Changed FILE: TEXT` lines for what changes put into files.
fn added_facts(lang: Lang, added: &[(String, String)]) -> Vec<String> {
    added
        .iter()
        .take(2)
        .map(|(file, text)| {
            lang.pick(format!("{file} now has: {text}"), format!("{file} 现在是：{text}"))
        })
        .collect()
}

impl What {
    fn write(&self, lang: Lang) -> Text {
        match self {
            What::Bugfix { check, failure, last_error, failed_runs, files, added, said } => {
                bugfix_text(
                    lang,
                    check,
                    failure,
                    last_error.as_deref(),
                    *failed_runs,
                    files,
                    added,
                    said,
                )
            }
            What::Problem { failures, changed, read, names, unresolved, said, ask } => {
                let seen = Seen { failures, changed, read, names };
                problem_text(lang, &seen, *unresolved, said, ask.as_deref())
            }
            What::Feature { created, tests, check, ask, said } => {
                feature_text(lang, created, tests, check.as_deref(), ask.as_deref(), said)
            }
            What::Change { files, ask, added, said } => {
                change_text(lang, files, ask.as_deref(), added, said)
            }
            What::Decision { decision, reason, concluded } => {
                decision_text(lang, decision, reason.as_deref(), *concluded)
            }
            What::Discovery { files, names, ask } => {
                discovery_text(lang, files, names, ask.as_deref())
            }
        }
    }
}

/// An error as a memory quotes it: in quotation marks, since the words are a tool's output,
/// not the agent's or the person's (wherever it is shown, it reads as what the tool printed);
/// a bare non-zero exit when the output named none.
fn error_words(lang: Lang, error: &str) -> String {
    if error.is_empty() {
        lang.pick("a non-zero exit".to_owned(), "非零退出码".to_owned())
    } else {
        quoted(error)
    }
}

/// Tool output inside a sentence: in quotation marks, with any of its own marks made plain so
/// the quote cannot be closed early.
fn quoted(text: &str) -> String {
    format!("“{}”", text.replace(['“', '”'], "\""))
}

#[allow(clippy::too_many_arguments)]
fn bugfix_text(
    lang: Lang,
    check: &str,
    failure: &Failure,
    last_error: Option<&str>,
    runs: usize,
    files: &[String],
    added: &[(String, String)],
    said: &[Statement],
) -> Text {
    let file_list = lang.list(files, TITLE_FILES);
    let error = error_words(lang, &failure.error);
    let failed = &failure.command;
    let observed = match files.is_empty() {
        false => lang.pick(
            format!(
                "`{failed}` failed with {error}; after changing {file_list}, `{check}` passed."
            ),
            format!("`{failed}` 报错 {error}；修改 {file_list} 后 `{check}` 通过。"),
        ),
        true => lang.pick(
            format!("`{failed}` failed with {error}; later `{check}` passed."),
            format!("`{failed}` 报错 {error}；之后 `{check}` 通过。"),
        ),
    };
    // A plain statement before the fix is, in a fix's closing answer, what was wrong.
    let first_fix = said.iter().position(|s| s.role == Role::Fix).unwrap_or(said.len());
    let cause = first_said(said, &[Role::Cause, Role::Gotcha])
        .or_else(|| first_said(&said[..first_fix], &[Role::Plain]));
    let fix = first_said(said, &[Role::Fix]).or_else(|| {
        said.iter()
            .find(|s| s.role == Role::Plain && Some(s.text.as_str()) != cause)
            .map(|s| s.text.as_str())
    });
    // A fix is only seen when its check passed, so an answer that explains it in the same
    // breath as the pass ("sorted the parameters before signing, and the test passes") is
    // believed: it is the lesson, not the command that ran.
    let (cause, fix) = match (cause, fix) {
        (None, None) => (
            None,
            said.iter()
                .find(|s| s.role == Role::Verify && explains(&s.text))
                .map(|s| s.text.as_str()),
        ),
        found => found,
    };
    // Causes first, else what was seen: the first fact is what a summary learns from it.
    let mut facts = said_as(said, &[Role::Cause]);
    facts.extend(cause.filter(|c| !facts.iter().any(|f| f.starts_with(c))).map(sentence));
    facts.push(observed.clone());
    facts.extend(said_as(said, &[Role::Fix]));
    facts.extend(added_facts(lang, added));
    facts.extend(said_as(said, &[Role::Gotcha, Role::Decision, Role::Plain]));
    match (runs, last_error.map(quoted)) {
        (_, Some(last)) => facts.push(lang.pick(
            format!("A first fix got `{check}` past that, to {last}, before it passed."),
            format!("第一次修改后 `{check}` 又报 {last}，再改后才通过。"),
        )),
        (2.., None) => facts.push(lang.pick(
            format!("It took {runs} failed runs before the fix held."),
            format!("修复前失败了 {runs} 次。"),
        )),
        _ => {}
    }
    // Never a command line as the title: what failed, and where it was fixed.
    let plain_title = match files.is_empty() {
        false => lang.pick(
            format!("Fixed {error} in {file_list}"),
            format!("修复 {file_list} 中的 {error}"),
        ),
        true => lang.pick(format!("Fixed {error}"), format!("修复 {error}")),
    };
    // The lesson carries the fix: what the change put in, when the answer did not say.
    let plain_lesson = match added.first() {
        Some((file, text)) => lang.pick(
            format!("{error} fixed in {file}: {text}"),
            format!("{error}：改 {file} 为 {text}"),
        ),
        None => lang.pick(
            format!("{error} fixed by changing {file_list}"),
            format!("改 {file_list} 修复 {error}"),
        ),
    };
    let (title, subtitle) = match (cause, fix) {
        (Some(cause), Some(fix)) => (cause.to_owned(), format!("{fix} ({file_list}; was {error})")),
        (Some(cause), None) => (cause.to_owned(), plain_lesson),
        (None, Some(fix)) => (fix.to_owned(), plain_lesson),
        (None, None) => (plain_title, plain_lesson),
    };
    let told = account(said, true);
    Text {
        title,
        subtitle,
        facts,
        narrative: lang.pick(
            format!("{told} `{failed}` failed with {error}, and `{check}` passed once the agent changed {file_list}. When this error comes back, look at {file_list} first."),
            format!("{told} `{failed}` 失败，报错 {error}。修改 {file_list} 后 `{check}` 通过。再次遇到这个错误时，先看 {file_list}。"),
        ),
    }
}

/// Whether a statement says why or how, beyond a bare claim that a check passes.
fn explains(text: &str) -> bool {
    const WHY: &[&str] = &[
        "because",
        "so that",
        "caused",
        "was missing",
        "wasn't",
        "didn't",
        "instead of",
        "before ",
        "after ",
        "by ",
        "now ",
        "原因",
        "因为",
        "导致",
        "之前",
        "改为",
        "改成",
        "加上",
        "按",
        "排序",
        "现在",
    ];
    let lower = text.to_lowercase();
    text.chars().count() >= 20 && WHY.iter().any(|w| lower.contains(w))
}

/// What a problem's turn was seen to do.
struct Seen<'a> {
    failures: &'a [Failure],
    changed: &'a [String],
    read: &'a [String],
    names: &'a [String],
}

fn problem_text(
    lang: Lang,
    seen: &Seen<'_>,
    unresolved: bool,
    said: &[Statement],
    ask: Option<&str>,
) -> Text {
    let Seen { failures, changed, read, names } = *seen;
    let status: Vec<String> = failures
        .iter()
        .map(|f| {
            let error = error_words(lang, &f.error);
            match (f.still, lang) {
                (true, Lang::En) => format!("Not fixed: `{}` still fails with {error} after the change.", f.command),
                (false, Lang::En) if changed.is_empty() => format!("`{}` fails with {error}; not fixed in that session.", f.command),
                (false, Lang::En) => format!("`{}` failed with {error}; no passing run of it was recorded after the change, so the fix is not verified.", f.command),
                (true, Lang::Zh) => format!("未修复：修改后 `{}` 仍然报错 {error}。", f.command),
                (false, Lang::Zh) => format!("`{}` 报错 {error}，尚未修复。", f.command),
            }
        })
        .collect();
    let mut facts = said_as(said, &[Role::Cause]);
    facts.extend(status.iter().cloned());
    facts.extend(said_as(said, &[Role::Unresolved, Role::Open, Role::Gotcha, Role::Decision]));
    if !changed.is_empty() {
        let files = lang.list(changed, TITLE_FILES);
        facts.push(lang.pick(format!("Tried changing {files}."), format!("尝试修改了 {files}。")));
    }
    if !names.is_empty() && !read.is_empty() {
        let files = lang.list(read, TITLE_FILES);
        let (en, zh) = (Lang::En.list(names, 4), Lang::Zh.list(names, 4));
        let verb = if read.len() == 1 { "defines" } else { "define" };
        facts.push(lang.pick(format!("{files} {verb} {en}."), format!("{files} 定义了 {zh}。")));
    }
    facts.extend(said_as(said, &[Role::Plain, Role::Fix]));
    if let Some(ask) = ask {
        facts.push(lang.pick(format!("Asked: {ask}"), format!("问题：{ask}")));
    }
    let first_failure = failures.first();
    let plain_title = match first_failure {
        Some(f) => lang.pick(
            format!("`{}` fails: {}", f.command, error_words(lang, &f.error)),
            format!("`{}` 报错：{}", f.command, error_words(lang, &f.error)),
        ),
        None => {
            let files = lang.list(read, TITLE_FILES);
            if files.is_empty() {
                ask.map(str::to_owned).unwrap_or_default()
            } else {
                lang.pick(format!("How {files} works"), format!("{files} 的工作方式"))
            }
        }
    };
    let title =
        first_said(said, &[Role::Cause, Role::Gotcha, Role::Plain, Role::Open, Role::Unresolved])
            .map_or(plain_title, str::to_owned);
    let subtitle = if unresolved {
        match (first_failure, first_said(said, &[Role::Unresolved, Role::Open])) {
            (_, Some(open)) if open != title => open.to_owned(),
            (Some(f), _) => lang.pick(
                format!(
                    "Not fixed yet: `{}` fails with {}",
                    f.command,
                    error_words(lang, &f.error)
                ),
                format!("尚未修复：`{}` 报错 {}", f.command, error_words(lang, &f.error)),
            ),
            (None, _) => lang.pick("Not fixed yet".to_owned(), "尚未修复".to_owned()),
        }
    } else {
        said.iter()
            .filter(|s| s.text != title && s.role != Role::Verify)
            .map(|s| s.text.clone())
            .next()
            .unwrap_or_else(|| ask.unwrap_or_default().to_owned())
    };
    let told = account(said, false);
    let observed = status.join(" ");
    Text { title, subtitle, facts, narrative: format!("{told} {observed}") }
}

fn feature_text(
    lang: Lang,
    created: &[String],
    tests: &[String],
    check: Option<&str>,
    ask: Option<&str>,
    said: &[Statement],
) -> Text {
    let new = lang.list(created, TITLE_FILES);
    let tested = lang.list(tests, TITLE_FILES);
    let mut facts = said_as(said, &[Role::Fix, Role::Plain, Role::Cause]);
    facts.push(lang.pick(
        format!("Added {new}, tested by {tested}."),
        format!("新增 {new}，测试：{tested}。"),
    ));
    if let Some(check) = check {
        facts.push(lang.pick(
            format!("`{check}` passed with the new code."),
            format!("`{check}` 在新代码上通过。"),
        ));
    }
    facts.extend(said_as(said, &[Role::Gotcha, Role::Decision]));
    if let Some(ask) = ask {
        facts.push(lang.pick(format!("Asked for: {ask}"), format!("需求：{ask}")));
    }
    let verified = match check {
        Some(check) => lang.pick(format!(" `{check}` passed."), format!("`{check}` 通过。")),
        None => String::new(),
    };
    let told = account(said, check.is_some());
    Text {
        title: first_said(said, &[Role::Fix, Role::Plain]).map_or_else(
            || lang.pick(format!("Added {new} with tests"), format!("新增 {new}（含测试）")),
            str::to_owned,
        ),
        subtitle: lang
            .pick(format!("New {new}, tested by {tested}"), format!("新增 {new}，测试见 {tested}")),
        facts,
        narrative: lang.pick(
            format!("{told} The agent wrote {new} and covered it with {tested}.{verified}"),
            format!("{told} 新写了 {new}，并用 {tested} 覆盖。{verified}"),
        ),
    }
}

fn change_text(
    lang: Lang,
    files: &[String],
    ask: Option<&str>,
    added: &[(String, String)],
    said: &[Statement],
) -> Text {
    let file_list = lang.list(files, TITLE_FILES);
    let refactor = ask.is_some_and(asks_for_refactor);
    let (en_verb, zh_verb) =
        if refactor { ("Refactored", "重构") } else { ("Changed", "修改") };
    let plain = lang.pick(format!("{en_verb} {file_list}"), format!("{zh_verb} {file_list}"));
    let title = first_said(said, &[Role::Fix, Role::Plain, Role::Cause, Role::Decision])
        .map_or_else(|| plain.clone(), str::to_owned);
    let mut facts =
        said_as(said, &[Role::Fix, Role::Plain, Role::Cause, Role::Decision, Role::Gotcha]);
    facts.push(sentence(&plain));
    facts.extend(added_facts(lang, added));
    if let Some(ask) = ask {
        facts.push(lang.pick(format!("Asked for: {ask}"), format!("需求：{ask}")));
    }
    // The lesson: why, when the agent said; else what the files hold now.
    let why =
        said.iter().find(|s| s.text != title && matches!(s.role, Role::Cause | Role::Decision));
    let subtitle = match (why, added.first()) {
        (Some(why), _) => why.text.clone(),
        (None, Some((file, text))) => format!("{file}: {text}"),
        // Never the request: it is what was asked, not what was learned.
        (None, None) => plain.clone(),
    };
    let told = account(said, false);
    let why_asked = match ask {
        Some(ask) => lang.pick(format!(" The request was: {ask}"), format!("需求是：{ask}")),
        None => String::new(),
    };
    Text {
        title,
        subtitle,
        facts,
        narrative: lang.pick(
            format!("{told} The agent {} {file_list}.{why_asked}", en_verb.to_lowercase()),
            format!("{told} {zh_verb}了 {file_list}。{why_asked}"),
        ),
    }
}

fn decision_text(lang: Lang, decision: &str, reason: Option<&str>, concluded: bool) -> Text {
    let mut facts =
        vec![lang.pick(format!("Decision: {decision}."), format!("决定：{decision}。"))];
    if let Some(reason) = reason {
        facts.push(lang.pick(format!("Reason: {reason}."), format!("原因：{reason}。")));
    }
    let because = match reason {
        Some(reason) => {
            lang.pick(format!(" The reason given: {reason}."), format!("理由：{reason}。"))
        }
        None => String::new(),
    };
    let (en_who, zh_who) = if concluded {
        ("The agent concluded", "经分析决定")
    } else {
        ("The user stated a decision", "用户明确了一个决定")
    };
    Text {
        title: lang.pick(format!("Decision: {decision}"), format!("决定：{decision}")),
        subtitle: reason.map_or_else(
            || decision.to_owned(),
            |r| lang.pick(format!("because {r}"), format!("原因：{r}")),
        ),
        facts,
        narrative: lang.pick(
            format!(
                "{en_who}: {decision}.{because} Later work should follow it rather than reopen it."
            ),
            format!("{zh_who}：{decision}。{because}之后的工作应遵循它，不要重新讨论。"),
        ),
    }
}

fn discovery_text(lang: Lang, files: &[String], names: &[String], ask: Option<&str>) -> Text {
    let file_list = lang.list(files, TITLE_FILES);
    // What the files hold is the key fact, when the reads show it.
    let mut facts = Vec::new();
    if !names.is_empty() {
        let (en, zh) = (Lang::En.list(names, 4), Lang::Zh.list(names, 4));
        facts.push(
            lang.pick(format!("{file_list} defines {en}."), format!("{file_list} 定义了 {zh}。")),
        );
    }
    if let Some(ask) = ask {
        facts.push(lang.pick(format!("Asked: {ask}"), format!("问题：{ask}")));
    }
    Text {
        title: lang.pick(format!("Studied {file_list}"), format!("查看了 {file_list}")),
        subtitle: match names.is_empty() {
            false => lang.pick(
                format!("{file_list} defines {}", Lang::En.list(names, 4)),
                format!("{file_list} 定义了 {}", Lang::Zh.list(names, 4)),
            ),
            true => lang.pick(format!("Read {file_list}"), format!("读取 {file_list}")),
        },
        facts,
        narrative: lang.pick(
            format!("The agent read {file_list} to understand it and changed nothing."),
            format!("为了理解代码读取了 {file_list}，没有修改。"),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// The summary's parts.

fn investigated(batch: &Batch<'_>, lang: Lang) -> Vec<String> {
    let items = batch.items.iter().filter_map(|item| match &item.step {
        Step::Read(file, _) => Some(file.clone()),
        Step::Search(query) => {
            Some(lang.pick(format!("search: {query}"), format!("搜索：{query}")))
        }
        _ => None,
    });
    dedup(items)
}

/// Causes and explanations: what the answers explain, decisions, and the first fact of every
/// observation that records something learned.
fn learned(batch: &Batch<'_>, observed: Vec<ObservationDraft>) -> Vec<String> {
    let mut out: Vec<String> = batch
        .turns
        .iter()
        .flat_map(|turn| said_as(&turn.said, &[Role::Cause, Role::Gotcha, Role::Decision]))
        .collect();
    let from_observations = observed
        .into_iter()
        .filter(|d| !DONE_KINDS.contains(&d.kind.as_str()))
        .filter_map(|d| d.facts.into_iter().next());
    out.extend(from_observations);
    dedup(out)
}

/// What the agent said it did, the files it changed, and the checks whose last run passed.
fn completed(batch: &Batch<'_>, lang: Lang) -> Vec<String> {
    let passed: Vec<&Command> = last_runs(batch).filter(|c| c.passed).collect();
    let failing = last_runs(batch).any(|c| !c.passed);
    let mut done: Vec<String> = Vec::new();
    for turn in &batch.turns {
        // A claim of a pass stands only when a run passed and none is left failing.
        let verified = !passed.is_empty() && !failing;
        let roles: &[Role] = if verified { &[Role::Fix, Role::Verify] } else { &[Role::Fix] };
        done.extend(said_as(&turn.said, roles));
    }
    // Each file once, with what its last change put in when that is short enough to read.
    let mut files: Vec<(&str, bool, Option<&str>)> = Vec::new();
    for (_, change) in batch.changes() {
        let added = change.added.as_deref().filter(|a| a.chars().count() <= COMPLETED_ADDED_CHARS);
        match files.iter_mut().find(|(file, _, _)| *file == change.file) {
            Some(known) => known.2 = added.or(known.2),
            None => files.push((&change.file, change.created, added)),
        }
    }
    for (file, created, added) in files {
        let verb = match (created, lang) {
            (true, Lang::En) => "created",
            (false, Lang::En) => "changed",
            (true, Lang::Zh) => "新增",
            (false, Lang::Zh) => "修改",
        };
        done.push(match added {
            Some(added) => format!("{verb} {file}: `{added}`"),
            None => format!("{verb} {file}"),
        });
    }
    for command in passed {
        // A check that also failed says so: which run passed is then plain.
        let failed_before = batch.commands().any(|(_, c)| c.key == command.key && !c.passed);
        done.push(match (failed_before, lang) {
            (false, Lang::En) => format!("`{}` passed", command.text),
            (true, Lang::En) => {
                format!("`{}` passed after the change (it had failed before)", command.text)
            }
            (false, Lang::Zh) => format!("`{}` 通过", command.text),
            (true, Lang::Zh) => format!("修改后 `{}` 通过（之前失败）", command.text),
        });
    }
    dedup(done)
}

/// Only what is said to remain: the last answer's open points, and checks still failing.
fn next_steps(batch: &Batch<'_>, lang: Lang) -> Vec<String> {
    let mut next: Vec<String> = batch
        .turns
        .iter()
        .rev()
        .find(|turn| !turn.said.is_empty())
        .map(|turn| said_as(&turn.said, &[Role::Open, Role::Unresolved]))
        .unwrap_or_default();
    // A check still failing is a next step of its own only when the agent said nothing of
    // what remains; otherwise its words are the next steps.
    let said_nothing = batch.turns.last().is_none_or(|turn| turn.said.is_empty());
    for command in last_runs(batch).filter(|c| !c.passed && said_nothing) {
        let error = error_words(lang, command.error.as_deref().unwrap_or_default());
        next.push(lang.pick(
            format!("`{}` still fails: {error}", command.text),
            format!("`{}` 仍然失败：{error}", command.text),
        ));
    }
    dedup(next)
}

/// Each check's last run, in order of first run.
fn last_runs<'b>(batch: &'b Batch<'_>) -> impl Iterator<Item = &'b Command> {
    let mut order: Vec<&str> = Vec::new();
    let mut last: BTreeMap<&str, &Command> = BTreeMap::new();
    for (_, command) in batch.commands() {
        if last.insert(&command.key, command).is_none() {
            order.push(&command.key);
        }
    }
    order.into_iter().filter_map(move |key| last.get(key).copied())
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};
    use serde_json::json;

    use super::*;
    use crate::adapter::{Normalized, normalize};
    use crate::distil::mode::Term;
    use crate::event::CaptureContext;

    const T0: i64 = 1_796_000_000_000;

    fn terms(keys: &[&str]) -> Vec<Term> {
        keys.iter()
            .map(|key| Term {
                key: (*key).to_owned(),
                label: (*key).to_owned(),
                description: String::new(),
                emoji: String::new(),
            })
            .collect()
    }

    /// Code mode's keys, built by hand so these tests do not depend on the mode loader.
    fn code_mode(language: &str, skip_types: &[&str]) -> Mode {
        Mode {
            name: "code".to_owned(),
            language: language.to_owned(),
            role: String::new(),
            types: terms(&[
                "bugfix",
                "feature",
                "refactor",
                "change",
                "discovery",
                "decision",
                "security_alert",
                "security_note",
                "sensitive",
            ]),
            concepts: terms(&[
                "how-it-works",
                "why-it-exists",
                "what-changed",
                "problem-solution",
                "gotcha",
                "pattern",
                "trade-off",
            ]),
            record: Vec::new(),
            skip: Vec::new(),
            skip_types: skip_types.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// A session as the store holds it: each (hook event, payload) read by the real adapter,
    /// ids from 1, one second apart.
    fn session(agent: &str, hooks: &[(&str, Value)]) -> Vec<StoredEvent> {
        let mut events = Vec::new();
        for (n, (name, payload)) in hooks.iter().enumerate() {
            let mut payload = payload.clone();
            payload["session_id"] = json!("s1");
            payload["cwd"] = json!("/w/app");
            let uid = format!("u{n}");
            let at = T0 + 1000 * i64::try_from(n).unwrap_or_default();
            let ctx = CaptureContext { uid: &uid, agent, event_name: name, received_at_ms: at };
            match normalize(&ctx, &payload) {
                Ok(Normalized::Event(event)) => events.push(StoredEvent {
                    id: i64::try_from(events.len() + 1).unwrap_or_default(),
                    event: *event,
                }),
                other => panic!("{agent} {name}: {other:?}"),
            }
        }
        events
    }

    fn prompt(text: &str) -> (&'static str, Value) {
        ("UserPromptSubmit", json!({ "prompt": text }))
    }

    fn bash_ok(command: &str, stdout: &str) -> (&'static str, Value) {
        let response = json!({ "stdout": stdout, "stderr": "", "interrupted": false });
        (
            "PostToolUse",
            json!({ "tool_name": "Bash", "tool_input": { "command": command }, "tool_response": response }),
        )
    }

    fn bash_failed(command: &str, error: &str) -> (&'static str, Value) {
        let input = json!({ "command": command });
        ("PostToolUseFailure", json!({ "tool_name": "Bash", "tool_input": input, "error": error }))
    }

    fn file_tool(tool: &str, file: &str, content: &str) -> (&'static str, Value) {
        let path = format!("/w/app/{file}");
        let input = match tool {
            "Write" => json!({ "file_path": path, "content": content }),
            _ => json!({ "file_path": path, "old_string": "x", "new_string": content }),
        };
        let response = json!({ "type": "text", "file": { "filePath": path, "content": content } });
        (
            "PostToolUse",
            json!({ "tool_name": tool, "tool_input": input, "tool_response": response }),
        )
    }

    fn stop(message: &str) -> (&'static str, Value) {
        ("Stop", json!({ "last_assistant_message": message }))
    }

    const RUSTC_ERROR: &str = "Exit code 101\n   Compiling parser v0.1.0 (/w/app)\n\
        error[E0425]: cannot find value `depth` in this scope\n  --> src/parser.rs:42:17\n   |\n\
        42 |         if depth > MAX_DEPTH {\n   |            ^^^^^ not found in this scope\n\n\
        error: could not compile `parser` (lib) due to 1 previous error";
    const TEST_FAILURE: &str = "Exit code 101\nrunning 4 tests\n\
        test parser::tests::parses_flat ... ok\ntest parser::tests::parses_nested ... FAILED\n\n\
        failures:\n\n---- parser::tests::parses_nested stdout ----\n\n\
        thread 'parser::tests::parses_nested' panicked at src/parser.rs:88:9:\n\
        assertion `left == right` failed\n  left: 2\n right: 3\n\n\
        error: test failed, to rerun pass `--lib`";

    fn bugfix_session() -> Vec<StoredEvent> {
        session(
            "claude-code",
            &[
                ("SessionStart", json!({ "source": "startup" })),
                prompt("the parser rejects nested lists, fix it"),
                file_tool(
                    "Read",
                    "src/parser.rs",
                    "pub fn parse(input: &str) -> Ast {\n}\nfn parse_list() {}",
                ),
                bash_failed("cargo test", RUSTC_ERROR),
                file_tool("Edit", "src/parser.rs", "let depth = 0;"),
                bash_failed("cargo  test", TEST_FAILURE),
                file_tool("Edit", "src/parser.rs", "depth += 1;"),
                bash_ok("cargo test", "running 4 tests\ntest result: ok. 4 passed"),
                stop("Fixed: nested lists now parse."),
                prompt("thanks"),
            ],
        )
    }

    fn feature_session() -> Vec<StoredEvent> {
        session(
            "claude-code",
            &[
                prompt("add a CSV export of sessions"),
                file_tool("Write", "src/export.rs", "pub fn export_csv(rows: &[Row]) -> String {}"),
                file_tool("Write", "tests/export_test.rs", "#[test]\nfn exports_header() {}"),
                file_tool("Edit", "src/lib.rs", "pub mod export;"),
                bash_ok("cargo test --test export_test", "test result: ok. 1 passed"),
                stop("Added the CSV export."),
            ],
        )
    }

    fn refactor_session() -> Vec<StoredEvent> {
        session(
            "claude-code",
            &[
                prompt("refactor the config loader: extract the env layer into its own function"),
                file_tool("Read", "src/config.rs", "pub fn load() -> Config {}\nstruct Layers;"),
                file_tool("Edit", "src/config.rs", "fn env_layer() {}"),
                file_tool("Edit", "src/main.rs", "config::load()"),
                bash_ok("cargo build", ""),
                stop("Done."),
            ],
        )
    }

    /// A decision in Chinese, made in Codex, then a patch that follows it.
    fn decision_session() -> Vec<StoredEvent> {
        let patch = "*** Begin Patch\n*** Update File: src/time.rs\n@@\n-use chrono::Utc;\n+use jiff::Timestamp;\n*** End Patch\n";
        session(
            "codex",
            &[
                ("SessionStart", json!({ "source": "startup" })),
                (
                    "UserPromptSubmit",
                    json!({ "prompt": "从现在起统一用 jiff 处理时间，因为 chrono 的时区 API 太容易用错" }),
                ),
                (
                    "PostToolUse",
                    json!({ "tool_name": "apply_patch", "tool_input": { "command": patch }, "tool_response": "Success. Updated the following files:\nM src/time.rs\n" }),
                ),
                ("Stop", json!({ "last_assistant_message": "已改用 jiff。" })),
            ],
        )
    }

    /// Reading one file over and over to understand it, then an ask left for later and a test
    /// that still fails.
    fn study_session() -> Vec<StoredEvent> {
        let store = "pub struct Store {}\nimpl Store {\n    pub fn open(path: &Path) -> Result<Store> {}\n}\nfn migrate(conn: &Connection) {}";
        session(
            "claude-code",
            &[
                prompt("how does the store open its database?"),
                file_tool("Read", "src/store.rs", store),
                (
                    "PostToolUse",
                    json!({ "tool_name": "Grep", "tool_input": { "pattern": "busy_timeout" }, "tool_response": { "filenames": ["src/store.rs"] } }),
                ),
                file_tool("Read", "src/store.rs", store),
                file_tool("Read", "src/store.rs", store),
                file_tool("Read", "README.md", "# app"),
                bash_failed(
                    "cargo test store::",
                    "Exit code 101\nthread 'store::tests::opens' panicked at src/store.rs:9:5:\ndatabase is locked\nnote: run with `RUST_BACKTRACE=1`",
                ),
                prompt("next time, add a --readonly flag to open"),
                stop("Noted."),
            ],
        )
    }

    fn noise_session() -> Vec<StoredEvent> {
        session(
            "claude-code",
            &[
                ("SessionStart", json!({ "source": "startup" })),
                prompt("ok"),
                bash_ok("ls", ""),
                stop("Nothing to do."),
                ("SessionEnd", json!({ "reason": "exit" })),
            ],
        )
    }

    fn render_observations(drafts: &[ObservationDraft]) -> String {
        let mut out = String::new();
        for d in drafts {
            let _ = writeln!(out, "[{}] {}", d.kind, d.title);
            let _ = writeln!(out, "  subtitle: {}", d.subtitle);
            let _ = writeln!(out, "  concepts: {}", d.concepts.join(", "));
            for fact in &d.facts {
                let _ = writeln!(out, "  - {fact}");
            }
            let _ = writeln!(out, "  narrative: {}", d.narrative);
            let _ = writeln!(out, "  read: {:?} modified: {:?}", d.files_read, d.files_modified);
            let _ = writeln!(
                out,
                "  sources: {:?} at: +{}s",
                d.source_event_ids,
                (d.at_ms - T0) / 1000
            );
        }
        out
    }

    fn render_summary(summary: &SummaryDraft) -> String {
        let mut out = format!("request: {}\n", summary.request);
        let lists = [
            ("investigated", &summary.investigated),
            ("learned", &summary.learned),
            ("completed", &summary.completed),
            ("next_steps", &summary.next_steps),
            ("files_read", &summary.files_read),
            ("files_modified", &summary.files_modified),
        ];
        for (name, items) in lists {
            let _ = writeln!(out, "{name}:");
            for item in items {
                let _ = writeln!(out, "  - {item}");
            }
        }
        out
    }

    fn check(events: &[StoredEvent], mode: &Mode, observations: Expect, summary: Expect) {
        let distiller = OfflineDistiller::new();
        observations.assert_eq(&render_observations(&distiller.observe(events, mode)));
        summary.assert_eq(&render_summary(&distiller.summarize(events, mode)));
    }

    #[test]
    fn failing_command_fixed_by_an_edit_is_a_bugfix() {
        check(
            &bugfix_session(),
            &code_mode("en", &[]),
            expect![[r#"
                [bugfix] nested lists now parse
                  subtitle: “error[E0425]: cannot find value `depth` in this scope” fixed in src/parser.rs: depth += 1;
                  concepts: problem-solution, what-changed, gotcha
                  - `cargo test` failed with “error[E0425]: cannot find value `depth` in this scope”; after changing src/parser.rs, `cargo test` passed.
                  - nested lists now parse.
                  - src/parser.rs now has: depth += 1;
                  - A first fix got `cargo test` past that, to “thread 'parser::tests::parses_nested' panicked at src/parser.rs:88:9: assertion `left == right` failed”, before it passed.
                  narrative: nested lists now parse. `cargo test` failed with “error[E0425]: cannot find value `depth` in this scope”, and `cargo test` passed once the agent changed src/parser.rs. When this error comes back, look at src/parser.rs first.
                  read: ["src/parser.rs"] modified: ["src/parser.rs"]
                  sources: [2, 3, 4, 5, 6, 7, 8, 9] at: +8s
            "#]],
            expect![[r#"
                request: the parser rejects nested lists, fix it
                investigated:
                  - src/parser.rs
                learned:
                  - `cargo test` failed with “error[E0425]: cannot find value `depth` in this scope”; after changing src/parser.rs, `cargo test` passed.
                completed:
                  - nested lists now parse.
                  - changed src/parser.rs: `depth += 1;`
                  - `cargo test` passed after the change (it had failed before)
                next_steps:
                files_read:
                  - src/parser.rs
                files_modified:
                  - src/parser.rs
            "#]],
        );
    }

    /// The clock set back an hour in the middle of a turn: the events a hook stored keep the
    /// order they happened in, so the fix still follows the failure it fixed; and a tool call
    /// read late from the transcript still lands among them by its time.
    #[test]
    fn a_clock_set_back_mid_turn_keeps_the_fix_after_the_failure() {
        use crate::project::ProjectIdentity;
        use crate::store::{HookRun, Store};
        let original = bugfix_session();
        let mut store = Store::open_in_memory().expect("store");
        let project = ProjectIdentity {
            key: "path:/w/app".into(),
            root: "/w/app".into(),
            name: "app".into(),
            origin: None,
            branch: None,
        };
        let run = HookRun {
            at_ms: T0,
            agent: "claude-code",
            event_name: "PostToolUse",
            outcome: "stored",
            detail: None,
            duration_us: 0,
            event_uid: None,
        };
        // The read of src/parser.rs is left to the transcript, stored after the fact.
        let (late, in_line): (Vec<_>, Vec<_>) = original.iter().partition(|stored| stored.id == 3);
        for (n, stored) in in_line.iter().enumerate() {
            let mut event = stored.event.clone();
            // From the first edit on, the clock reads an hour earlier.
            if stored.id >= 5 {
                event.at_ms -= 3_600_000;
            }
            let hash = format!("h{n}");
            store
                .write_event(&event, &hash, &project, None, &run, std::time::Instant::now())
                .expect("write");
        }
        let late: Vec<_> =
            late.iter().map(|s| (s.event.clone(), "late".to_owned(), project.clone())).collect();
        store.write_recovered(&late, &[]).expect("write late");
        let session = store.pending_sessions(10).expect("pending")[0].clone();
        let read = store.session_events(session.session_id, 0).expect("read");
        let uids: Vec<&str> = read.iter().map(|s| s.event.uid.as_str()).collect();
        let expected: Vec<&str> = original.iter().map(|s| s.event.uid.as_str()).collect();
        assert_eq!(uids, expected, "the order they happened in");
        let mode = code_mode("en", &[]);
        let distiller = OfflineDistiller::new();
        let titles = |drafts: Vec<ObservationDraft>| -> Vec<String> {
            drafts.into_iter().map(|d| format!("[{}] {}", d.kind, d.title)).collect()
        };
        assert_eq!(
            titles(distiller.observe(&read, &mode)),
            titles(distiller.observe(&original, &mode))
        );
    }

    /// A generation step chained before the failing build, then passing: the build passed (a
    /// fix explained by the answer, no edit seen), never "not fixed", and the step to run first
    /// is the lesson.
    #[test]
    fn a_chained_step_that_makes_the_build_pass_is_a_fix() {
        let events = session(
            "claude-code",
            &[
                prompt(
                    "node build.js 报错 Cannot find module './locales/zh.json'，帮我查一下原因。",
                ),
                bash_failed("node build.js", "Error: Cannot find module './locales/zh.json'"),
                bash_ok("node scripts/gen-locales.js && node build.js", "built"),
                stop(
                    "原因：locales/*.json 是生成的，被 .gitignore 忽略。构建前要先运行 node scripts/gen-locales.js，之后 node build.js 就通过了。",
                ),
            ],
        );
        let drafts = OfflineDistiller::new().observe(&events, &code_mode("zh-CN", &[]));
        let text = render_observations(&drafts);
        assert!(text.starts_with("[bugfix]"), "{text}");
        assert!(!text.contains("未修复") && !text.contains("Not fixed"), "{text}");
        assert!(text.contains("构建前要先运行 node scripts/gen-locales.js"), "{text}");
    }

    #[test]
    fn bugfix_in_chinese() {
        let drafts = OfflineDistiller::new().observe(&bugfix_session(), &code_mode("zh-CN", &[]));
        expect![[r#"
            [bugfix] nested lists now parse
              subtitle: “error[E0425]: cannot find value `depth` in this scope”：改 src/parser.rs 为 depth += 1;
              concepts: problem-solution, what-changed, gotcha
              - `cargo test` 报错 “error[E0425]: cannot find value `depth` in this scope”；修改 src/parser.rs 后 `cargo test` 通过。
              - nested lists now parse.
              - src/parser.rs 现在是：depth += 1;
              - 第一次修改后 `cargo test` 又报 “thread 'parser::tests::parses_nested' panicked at src/parser.rs:88:9: assertion `left == right` failed”，再改后才通过。
              narrative: nested lists now parse. `cargo test` 失败，报错 “error[E0425]: cannot find value `depth` in this scope”。修改 src/parser.rs 后 `cargo test` 通过。再次遇到这个错误时，先看 src/parser.rs。
              read: ["src/parser.rs"] modified: ["src/parser.rs"]
              sources: [2, 3, 4, 5, 6, 7, 8, 9] at: +8s
        "#]].assert_eq(&render_observations(&drafts));
    }

    #[test]
    fn new_files_with_tests_are_a_feature() {
        check(
            &feature_session(),
            &code_mode("en", &[]),
            expect![[r#"
                [feature] Added the CSV export
                  subtitle: New src/export.rs, tested by tests/export_test.rs
                  concepts: what-changed, how-it-works
                  - Added the CSV export.
                  - Added src/export.rs, tested by tests/export_test.rs.
                  - `cargo test --test export_test` passed with the new code.
                  - Asked for: add a CSV export of sessions
                  narrative: Added the CSV export. The agent wrote src/export.rs and covered it with tests/export_test.rs. `cargo test --test export_test` passed.
                  read: [] modified: ["src/export.rs", "tests/export_test.rs", "src/lib.rs"]
                  sources: [1, 2, 3, 4, 5, 6] at: +5s
            "#]],
            expect![[r#"
                request: add a CSV export of sessions
                investigated:
                learned:
                completed:
                  - Added the CSV export.
                  - created src/export.rs: `pub fn export_csv(rows: &[Row]) -> String {}`
                  - created tests/export_test.rs: `#[test] ⏎ fn exports_header() {}`
                  - changed src/lib.rs: `pub mod export;`
                  - `cargo test --test export_test` passed
                next_steps:
                files_read:
                files_modified:
                  - src/export.rs
                  - tests/export_test.rs
                  - src/lib.rs
            "#]],
        );
    }

    #[test]
    fn edits_asked_as_a_refactor_are_a_refactor() {
        check(
            &refactor_session(),
            &code_mode("en", &[]),
            expect![[r#"
                [refactor] Refactored src/config.rs, src/main.rs
                  subtitle: src/config.rs: fn env_layer() {}
                  concepts: what-changed, pattern
                  - Refactored src/config.rs, src/main.rs.
                  - src/config.rs now has: fn env_layer() {}
                  - src/main.rs now has: config::load()
                  - Asked for: refactor the config loader: extract the env layer into its own function
                  narrative: The agent refactored src/config.rs, src/main.rs. The request was: refactor the config loader: extract the env layer into its own function
                  read: ["src/config.rs"] modified: ["src/config.rs", "src/main.rs"]
                  sources: [1, 2, 3, 4, 5] at: +4s
            "#]],
            expect![[r#"
                request: refactor the config loader: extract the env layer into its own function
                investigated:
                  - src/config.rs
                learned:
                completed:
                  - changed src/config.rs: `fn env_layer() {}`
                  - changed src/main.rs: `config::load()`
                  - `cargo build` passed
                next_steps:
                files_read:
                  - src/config.rs
                files_modified:
                  - src/config.rs
                  - src/main.rs
            "#]],
        );
    }

    #[test]
    fn a_decision_stated_in_chinese() {
        check(
            &decision_session(),
            &code_mode("zh-CN", &[]),
            expect![[r#"
                [decision] 决定：从现在起统一用 jiff 处理时间
                  subtitle: 原因：chrono 的时区 API 太容易用错
                  concepts: why-it-exists, trade-off
                  - 决定：从现在起统一用 jiff 处理时间。
                  - 原因：chrono 的时区 API 太容易用错。
                  narrative: 用户明确了一个决定：从现在起统一用 jiff 处理时间。理由：chrono 的时区 API 太容易用错。之后的工作应遵循它，不要重新讨论。
                  read: [] modified: []
                  sources: [2] at: +1s
                [change] 已改用 jiff
                  subtitle: src/time.rs: use jiff::Timestamp;
                  concepts: what-changed, how-it-works
                  - 已改用 jiff.
                  - 修改 src/time.rs.
                  - src/time.rs 现在是：use jiff::Timestamp;
                  - 需求：从现在起统一用 jiff 处理时间，因为 chrono 的时区 API 太容易用错
                  narrative: 已改用 jiff. 修改了 src/time.rs。需求是：从现在起统一用 jiff 处理时间，因为 chrono 的时区 API 太容易用错
                  read: [] modified: ["src/time.rs"]
                  sources: [2, 3, 4] at: +3s
            "#]],
            expect![[r#"
                request: 从现在起统一用 jiff 处理时间，因为 chrono 的时区 API 太容易用错
                investigated:
                learned:
                  - 已改用 jiff.
                  - 决定：从现在起统一用 jiff 处理时间。
                completed:
                  - 修改 src/time.rs: `use jiff::Timestamp;`
                next_steps:
                files_read:
                files_modified:
                  - src/time.rs
            "#]],
        );
    }

    #[test]
    fn files_read_again_and_again_are_a_discovery() {
        check(
            &study_session(),
            &code_mode("en", &[]),
            expect![[r#"
                [discovery] `cargo test store::` fails: “thread 'store::tests::opens' panicked at src/store.rs:9:5: database is locked”
                  subtitle: Not fixed yet: `cargo test store::` fails with “thread 'store::tests::opens' panicked at src/store.rs:9:5: database is locked”
                  concepts: problem-solution
                  - `cargo test store::` fails with “thread 'store::tests::opens' panicked at src/store.rs:9:5: database is locked”; not fixed in that session.
                  - src/store.rs, README.md define Store, open, migrate.
                  - Asked: how does the store open its database?
                  narrative: `cargo test store::` fails with “thread 'store::tests::opens' panicked at src/store.rs:9:5: database is locked”; not fixed in that session.
                  read: ["src/store.rs", "README.md"] modified: []
                  sources: [1, 2, 4, 5, 6, 7, 9] at: +8s
            "#]],
            expect![[r#"
                request: how does the store open its database?
                investigated:
                  - src/store.rs
                  - search: busy_timeout
                  - README.md
                learned:
                  - `cargo test store::` fails with “thread 'store::tests::opens' panicked at src/store.rs:9:5: database is locked”; not fixed in that session.
                completed:
                next_steps:
                  - `cargo test store::` still fails: “thread 'store::tests::opens' panicked at src/store.rs:9:5: database is locked”
                files_read:
                  - src/store.rs
                  - README.md
                files_modified:
            "#]],
        );
    }

    #[test]
    fn noise_yields_nothing() {
        let distiller = OfflineDistiller::new();
        let mode = code_mode("en", &[]);
        assert_eq!(distiller.observe(&noise_session(), &mode), Vec::new());
        assert_eq!(distiller.summarize(&noise_session(), &mode), SummaryDraft::default());
        assert_eq!(distiller.observe(&[], &mode), Vec::new());
    }

    #[test]
    fn skipped_types_are_dropped() {
        let events = session(
            "claude-code",
            &[
                prompt("bump the request timeout to 30 seconds"),
                file_tool("Edit", "src/client.rs", "const TIMEOUT: u64 = 30;"),
            ],
        );
        let distiller = OfflineDistiller::new();
        let kinds = |mode: &Mode| -> Vec<String> {
            distiller.observe(&events, mode).into_iter().map(|d| d.kind).collect()
        };
        assert_eq!(kinds(&code_mode("en", &[])), ["change"]);
        assert_eq!(kinds(&code_mode("en", &["change"])), Vec::<String>::new());
        // A mode without `bugfix` still records the fix, as the type it has.
        let mut plain = code_mode("en", &[]);
        plain.types.retain(|t| t.key != "bugfix");
        let fixed = distiller.observe(&bugfix_session(), &plain);
        assert_eq!(fixed.iter().map(|d| d.kind.as_str()).collect::<Vec<_>>(), ["change"]);
    }

    #[test]
    fn same_events_same_drafts() {
        let distiller = OfflineDistiller::new();
        let mode = code_mode("en", &[]);
        let sessions = [
            bugfix_session(),
            feature_session(),
            refactor_session(),
            decision_session(),
            study_session(),
        ];
        for events in sessions {
            assert_eq!(distiller.observe(&events, &mode), distiller.observe(&events, &mode));
            assert_eq!(distiller.summarize(&events, &mode), distiller.summarize(&events, &mode));
        }
    }

    #[test]
    fn first_meaningful_error_lines() {
        let lines: Vec<String> = [
            RUSTC_ERROR,
            TEST_FAILURE,
            "============ FAILURES ============\nFAILED tests/test_x.py::test_y - AssertionError: 2 != 3",
            "Traceback (most recent call last):\n  File \"x.py\"\nKeyError: 'id'",
            "Exit code 1\nsomething odd happened",
            "Exit code 2",
        ]
        .iter()
        .map(|output| error_line(output))
        .collect();
        expect![[r#"
            [
                "error[E0425]: cannot find value `depth` in this scope",
                "thread 'parser::tests::parses_nested' panicked at src/parser.rs:88:9: assertion `left == right` failed",
                "FAILED tests/test_x.py::test_y - AssertionError: 2 != 3",
                "KeyError: 'id'",
                "something odd happened",
                "",
            ]
        "#]].assert_debug_eq(&lines);
    }

    #[test]
    fn decisions_in_prompts() {
        let found: Vec<Option<(String, Option<String>)>> = [
            "From now on, run clippy before every commit because CI rejects warnings.",
            "We'll use tracing instead of log.",
            "Never push to main directly",
            "don't use unwrap anymore",
            "let's go with SQLite. Since it ships everywhere.",
            "以后不要再用 println 调试，由于会污染 MCP 的 stdout",
            "改用 rustls",
            "fix the failing test",
            "this never compiles on windows",
        ]
        .iter()
        .map(|prompt| stated_decision(prompt))
        .collect();
        expect![[r#"
            [
                Some(
                    (
                        "From now on, run clippy before every commit",
                        Some(
                            "CI rejects warnings",
                        ),
                    ),
                ),
                Some(
                    (
                        "We'll use tracing instead of log",
                        None,
                    ),
                ),
                Some(
                    (
                        "Never push to main directly",
                        None,
                    ),
                ),
                Some(
                    (
                        "don't use unwrap anymore",
                        None,
                    ),
                ),
                Some(
                    (
                        "let's go with SQLite",
                        Some(
                            "it ships everywhere",
                        ),
                    ),
                ),
                Some(
                    (
                        "以后不要再用 println 调试",
                        Some(
                            "会污染 MCP 的 stdout",
                        ),
                    ),
                ),
                Some(
                    (
                        "改用 rustls",
                        None,
                    ),
                ),
                None,
                None,
            ]
        "#]]
        .assert_debug_eq(&found);
    }
}
