//! The offline distiller: deterministic rules that turn a batch of events into observations and
//! a session into a summary, with no model behind them.
//!
//! Owns one per-batch analysis ([`Batch`]: prompts, shell commands with their outcome, file
//! changes, reads, searches) and one small rule per pattern over it: a failing command fixed by
//! an edit (`bugfix`), new files with tests (`feature`), other edits (`change` or `refactor`), a
//! decision stated in a prompt (`decision`), files studied without being changed (`discovery`).
//! Text comes from templates in English and Simplified Chinese; names of files, commands and
//! errors are kept as they are.
//!
//! Must not: touch the store, the network, the clock or randomness. The same events and mode
//! always give the same drafts; times come from the events.

use std::collections::BTreeMap;

use serde_json::Value;

use super::mode::Mode;
use super::{Distiller, ObservationDraft, StoredEvent, SummaryDraft, cap_subtitle};
use crate::event::{EventKind, ToolKind};
use crate::text::{clip, dedup, one_line};

/// Longest title, in characters.
const TITLE_MAX_CHARS: usize = 100;
/// Longest error line or quoted prompt in a fact, in characters.
const QUOTE_MAX_CHARS: usize = 160;
/// Longest session request in a summary, in characters.
const REQUEST_MAX_CHARS: usize = 300;
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
        found.extend(feature(&batch, &found));
        found.extend(change(&batch, &found));
        found.extend(decisions(&batch));
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
        // Changes are listed under `completed`; what was learned is the rest's key fact.
        let learned = self
            .observe(events, mode)
            .into_iter()
            .filter(|d| !DONE_KINDS.contains(&d.kind.as_str()))
            .filter_map(|d| d.facts.into_iter().next());
        SummaryDraft {
            request: batch
                .prompts()
                .next()
                .map(|(_, text)| clip(&one_line(text), REQUEST_MAX_CHARS))
                .unwrap_or_default(),
            investigated: investigated(&batch, lang),
            learned: dedup(learned),
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
    /// One file changed by an edit or write tool.
    Change(Change),
    /// A file read, and what the read returned.
    Read(String, &'a str),
    Search(String),
}

#[derive(Debug)]
struct Command {
    /// Whitespace-collapsed, so reruns compare equal.
    text: String,
    passed: bool,
    /// The first meaningful error line of a failed run.
    error: Option<String>,
}

#[derive(Debug)]
struct Change {
    file: String,
    /// Written from scratch (a write tool, or a patch's `Add File`) rather than edited.
    created: bool,
}

/// A batch of events in order, analysed once.
#[derive(Debug)]
struct Batch<'a> {
    items: Vec<Item<'a>>,
}

impl<'a> Batch<'a> {
    fn new(events: &'a [StoredEvent]) -> Batch<'a> {
        let mut items = Vec::new();
        for stored in events {
            let (id, at_ms) = (stored.id, stored.event.at_ms);
            for step in steps(stored) {
                items.push(Item { id, at_ms, step });
            }
        }
        Batch { items }
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
}

/// What one stored event contributes to the analysis.
fn steps(stored: &StoredEvent) -> Vec<Step<'_>> {
    let event = &stored.event;
    let payload = &event.payload;
    let cwd = event.cwd.as_deref();
    match event.kind {
        EventKind::Prompt => {
            let text = payload.get("prompt").and_then(Value::as_str).unwrap_or(&event.body);
            if is_trivial_prompt(text) { Vec::new() } else { vec![Step::Prompt(text)] }
        }
        EventKind::ToolUse => {
            let facts = &event.facts;
            match event.tool_kind {
                Some(ToolKind::Shell) => command(event).into_iter().map(Step::Command).collect(),
                Some(ToolKind::Edit | ToolKind::Write) if !facts.failed => facts
                    .written
                    .iter()
                    .map(|file| {
                        let file = relative(file, cwd);
                        // A patch names the files it adds as the agent wrote them.
                        let created = facts.created.iter().any(|added| added.ends_with(&file));
                        Step::Change(Change { file, created })
                    })
                    .collect(),
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
            }
        }
        EventKind::SessionStart | EventKind::Stop | EventKind::SessionEnd | EventKind::Note => {
            Vec::new()
        }
    }
}

/// A shell call as a command with its outcome; listings and other look-arounds are not work.
fn command(event: &crate::event::Event) -> Option<Command> {
    let text = one_line(event.facts.command.as_deref()?);
    if text.is_empty() || is_look_around(&text) {
        return None;
    }
    let passed = !event.facts.failed;
    let output = event.payload.get("output").and_then(Value::as_str).unwrap_or_default();
    let error = if passed { None } else { Some(error_line(output)) };
    Some(Command { text, passed, error })
}

/// Commands that only look at things: their outcome says nothing about the work.
fn is_look_around(command: &str) -> bool {
    const LOOKS: &[&str] = &[
        "ls", "ll", "pwd", "cat", "head", "tail", "less", "echo", "cd", "tree", "find", "which",
        "wc", "file", "stat", "grep", "rg", "clear", "true",
    ];
    const GIT_LOOKS: &[&str] = &["status", "log", "diff", "show", "branch"];
    let mut words = command.split_whitespace();
    match (words.next(), words.next()) {
        (Some("git"), Some(sub)) => GIT_LOOKS.contains(&sub),
        (Some(first), _) => LOOKS.contains(&first),
        (None, _) => true,
    }
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

/// The first line of a failed command's output that names the problem: a compiler error, a
/// panic, an exception, a failed test. Generic wrap-up lines (`error: test failed, to rerun…`,
/// `error: could not compile…`) and bare exit codes are passed over.
fn error_line(output: &str) -> String {
    const GENERIC: &[&str] =
        &["error: test failed", "error: could not compile", "error: aborting", "exit code"];
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    // Lines that state the error beat lines that only point at it (`test x ... FAILED`).
    let states = |line: &&str| {
        let lower = line.to_lowercase();
        !GENERIC.iter().any(|g| lower.starts_with(g))
            && (lower.starts_with("error")
                || lower.starts_with("failed ")
                || lower.contains("panicked at")
                || lower.contains("assertion")
                || line.contains("Error:")
                || line.contains("Exception:"))
    };
    let points = |line: &&str| line.to_lowercase().ends_with("... failed");
    let found = lines.iter().position(states).or_else(|| lines.iter().position(points));
    let Some(at) = found else {
        let fallback = lines.iter().find(|l| !l.to_lowercase().starts_with("exit code"));
        return fallback.map(|l| clip(&one_line(l), QUOTE_MAX_CHARS)).unwrap_or_default();
    };
    let line = lines[at];
    // Rust puts a panic's message on the line after `panicked at`.
    let text = match lines.get(at + 1) {
        Some(next) if line.contains("panicked at") && !next.starts_with("note:") => {
            format!("{}: {next}", line.trim_end_matches(':'))
        }
        _ => line.to_owned(),
    };
    clip(&one_line(&text), QUOTE_MAX_CHARS)
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

#[derive(Debug)]
enum What {
    Bugfix {
        command: String,
        /// The first failed run's error, and the last one's when it differs.
        error: String,
        last_error: Option<String>,
        failed_runs: usize,
        files: Vec<String>,
    },
    Feature {
        created: Vec<String>,
        tests: Vec<String>,
        check: Option<String>,
        ask: Option<String>,
    },
    Change {
        files: Vec<String>,
        ask: Option<String>,
    },
    Decision {
        decision: String,
        reason: Option<String>,
    },
    Discovery {
        files: Vec<String>,
        reads: usize,
        names: Vec<String>,
        ask: Option<String>,
    },
}

/// A command failing, then files changed, then the same command passing.
fn bugfixes(batch: &Batch<'_>) -> Vec<Found> {
    // The failed runs of each command since it last passed, by command text.
    let mut open: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut found = Vec::new();
    for (at, command) in batch.commands() {
        if !command.passed {
            open.entry(&command.text).or_default().push(at);
            continue;
        }
        let Some(failures) = open.remove(command.text.as_str()) else { continue };
        let first = failures[0];
        let changes: Vec<usize> =
            batch.changes().map(|(c, _)| c).filter(|c| (first..at).contains(c)).collect();
        if changes.is_empty() {
            // It passed again without a change: flaky or environmental, not a fix.
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
        read_before_change(batch, &mut items);
        let mut concepts = vec!["problem-solution", "what-changed"];
        // Needing more than one try means the first fix was wrong: worth remembering.
        if failures.len() > 1 {
            concepts.push("gotcha");
        }
        found.push(Found {
            kind: "bugfix",
            fallback: Some("change"),
            concepts,
            what: What::Bugfix {
                command: command.text.clone(),
                error,
                last_error,
                failed_runs: failures.len(),
                files: changed_files(batch, &items),
            },
            items,
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
    Some(Found {
        kind: "feature",
        fallback: Some("change"),
        concepts: vec!["what-changed", "how-it-works"],
        items,
        what: What::Feature { created: dedup(created), tests: dedup(tests), check, ask },
    })
}

/// Files changed outside any bug fix or feature: a change, or a refactor when the prompt says so.
fn change(batch: &Batch<'_>, earlier: &[Found]) -> Option<Found> {
    let mut items: Vec<usize> =
        batch.changes().map(|(at, _)| at).filter(|at| !is_used(earlier, *at)).collect();
    let first = *items.first()?;
    let files = changed_files(batch, &items);
    let ask = asked(batch, first, &mut items);
    read_before_change(batch, &mut items);
    let refactor = ask.as_deref().is_some_and(asks_for_refactor);
    Some(Found {
        kind: if refactor { "refactor" } else { "change" },
        fallback: Some("change"),
        concepts: if refactor {
            vec!["what-changed", "pattern"]
        } else {
            vec!["what-changed", "how-it-works"]
        },
        items,
        what: What::Change { files, ask },
    })
}

/// Prompts that state a decision, with the reason when they give one.
fn decisions(batch: &Batch<'_>) -> Vec<Found> {
    let mut found = Vec::new();
    for (at, prompt) in batch.prompts() {
        let Some((decision, reason)) = stated_decision(prompt) else { continue };
        let mut concepts = vec!["why-it-exists"];
        if reason.is_some() || prompt.to_lowercase().contains("instead") || prompt.contains("改用")
        {
            concepts.push("trade-off");
        }
        found.push(Found {
            kind: "decision",
            fallback: None,
            concepts,
            items: vec![at],
            what: What::Decision { decision, reason },
        });
    }
    found
}

/// Files studied without being changed: each file read three times or more, and, when the batch
/// did nothing else worth a note, the files it read.
fn discoveries(batch: &Batch<'_>, nothing_else: bool) -> Vec<Found> {
    let mut reads: Vec<(&str, Vec<usize>)> = Vec::new();
    for (at, file) in batch.reads().filter(|(_, file)| !batch.is_changed(file)) {
        match reads.iter_mut().find(|(known, _)| *known == file) {
            Some((_, ats)) => ats.push(at),
            None => reads.push((file, vec![at])),
        }
    }
    let mut groups: Vec<Vec<&(&str, Vec<usize>)>> =
        reads.iter().filter(|(_, ats)| ats.len() >= REPEATED_READS).map(|r| vec![r]).collect();
    if groups.is_empty() && nothing_else && !reads.is_empty() {
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
            concepts: vec!["how-it-works", "why-it-exists"],
            what: What::Discovery {
                files: group.iter().map(|(file, _)| (*file).to_owned()).collect(),
                reads: group.iter().map(|(_, ats)| ats.len()).sum(),
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

/// The decision a prompt states and its reason, if any: the sentence holding a decision marker,
/// cut at `because`/`since`/`因为`/`由于`.
fn stated_decision(prompt: &str) -> Option<(String, Option<String>)> {
    const EN: &[&str] = &[
        "from now on",
        "going forward",
        "we'll use",
        "we will use",
        "let's go with",
        "let's use",
        " instead of ",
        "anymore",
        "any more",
        "stop using",
        "switch to",
    ];
    const EN_START: &[&str] = &["always ", "never ", "don't ever ", "do not ever "];
    const ZH: &[&str] = &[
        "从现在起",
        "从现在开始",
        "以后",
        "今后",
        "统一用",
        "统一使用",
        "不要再",
        "别再",
        "改用",
        "一律",
    ];
    let sentences = prompt
        .split_inclusive(['.', '!', '?', '。', '！', '？', '\n', ';', '；'])
        .map(|s| s.trim().trim_end_matches(['.', '!', '?', '。', '！', '？', ';', '；']).trim())
        .filter(|s| !s.is_empty());
    let is_decision = |sentence: &str| {
        let lower = sentence.to_lowercase();
        let bare = lower.trim_start_matches("please ").trim_start_matches("and ");
        let bare = bare.trim_start_matches("we ");
        EN.iter().any(|m| lower.contains(m))
            || EN_START.iter().any(|m| bare.starts_with(m))
            || ZH.iter().any(|m| sentence.contains(m))
    };
    let sentence = sentences.clone().find(|s| is_decision(s))?;
    const BECAUSE: &[&str] = &[" because ", " since ", "因为", "由于"];
    let cut = BECAUSE.iter().filter_map(|m| Some((sentence.find(m)?, m.len()))).min();
    let (decision, reason) = match cut {
        Some((at, len)) => (&sentence[..at], Some(&sentence[at + len..])),
        None => {
            // The reason may be the next sentence: "Use jiff. Because chrono…".
            let next = sentences.skip_while(|s| *s != sentence).nth(1);
            let reason = next.and_then(|n| {
                BECAUSE.iter().find_map(|m| {
                    let lower = n.to_lowercase();
                    lower.starts_with(m.trim()).then(|| &n[m.trim().len()..])
                })
            });
            (sentence, reason)
        }
    };
    let trim = |s: &str| s.trim().trim_matches([',', '，', '、', ':', '：', ' ']).trim().to_owned();
    let reason = reason.map(trim).filter(|r| !r.is_empty());
    Some((
        clip(&one_line(&trim(decision)), QUOTE_MAX_CHARS),
        reason.map(|r| clip(&one_line(&r), QUOTE_MAX_CHARS)),
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
        let last = batch.items[*self.items.last()?].at_ms;
        let mut ids: Vec<i64> = self.items.iter().map(|at| batch.items[*at].id).collect();
        ids.dedup();
        Some(ObservationDraft {
            title: clip(&one_line(&text.title), TITLE_MAX_CHARS),
            subtitle: cap_subtitle(&text.subtitle),
            facts: text.facts,
            narrative: text.narrative,
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

impl What {
    fn write(&self, lang: Lang) -> Text {
        match self {
            What::Bugfix { command, error, last_error, failed_runs, files } => {
                bugfix_text(lang, command, error, last_error.as_deref(), *failed_runs, files)
            }
            What::Feature { created, tests, check, ask } => {
                feature_text(lang, created, tests, check.as_deref(), ask.as_deref())
            }
            What::Change { files, ask } => change_text(lang, files, ask.as_deref()),
            What::Decision { decision, reason } => decision_text(lang, decision, reason.as_deref()),
            What::Discovery { files, reads, names, ask } => {
                discovery_text(lang, files, *reads, names, ask.as_deref())
            }
        }
    }
}

fn bugfix_text(
    lang: Lang,
    command: &str,
    error: &str,
    last_error: Option<&str>,
    runs: usize,
    files: &[String],
) -> Text {
    let en_files = Lang::En.list(files, TITLE_FILES);
    let zh_files = Lang::Zh.list(files, TITLE_FILES);
    let (en_error, zh_error) = if error.is_empty() {
        ("a non-zero exit".to_owned(), "非零退出码".to_owned())
    } else {
        (error.to_owned(), error.to_owned())
    };
    // The first fact is the one a summary keeps: the error and what fixed it.
    let mut facts = vec![
        lang.pick(
            format!("`{command}` failed with {en_error}; changing {en_files} fixed it."),
            format!("`{command}` 报错 {zh_error}；修改 {zh_files} 后修复。"),
        ),
        lang.pick(
            format!("`{command}` passed after the change."),
            format!("修改后 `{command}` 通过。"),
        ),
    ];
    match (runs, last_error) {
        (_, Some(last)) => facts.push(lang.pick(
            format!("A first fix got `{command}` past that, to {last}, before it passed."),
            format!("第一次修改后 `{command}` 又报 {last}，再改后才通过。"),
        )),
        (2.., None) => facts.push(lang.pick(
            format!("It took {runs} failed runs before the fix held."),
            format!("修复前失败了 {runs} 次。"),
        )),
        _ => {}
    }
    Text {
        title: lang.pick(
            format!("Fixed `{command}` failure in {en_files}: {en_error}"),
            format!("修复 `{command}` 失败（{zh_files}）：{zh_error}"),
        ),
        subtitle: lang.pick(
            format!("{en_error} fixed by changing {en_files}"),
            format!("改 {zh_files} 修复 {zh_error}"),
        ),
        facts,
        narrative: lang.pick(
            format!(
                "`{command}` failed with {en_error}. The agent changed {en_files} and ran \
                 `{command}` again, which passed. When this error comes back, look at {en_files} \
                 first."
            ),
            format!(
                "`{command}` 失败，报错 {zh_error}。修改 {zh_files} 后重新运行 `{command}`，通过了。\
                 再次遇到这个错误时，先看 {zh_files}。"
            ),
        ),
    }
}

fn feature_text(
    lang: Lang,
    created: &[String],
    tests: &[String],
    check: Option<&str>,
    ask: Option<&str>,
) -> Text {
    let (en_new, zh_new) =
        (Lang::En.list(created, TITLE_FILES), Lang::Zh.list(created, TITLE_FILES));
    let (en_tests, zh_tests) =
        (Lang::En.list(tests, TITLE_FILES), Lang::Zh.list(tests, TITLE_FILES));
    let mut facts = vec![
        lang.pick(format!("Added {en_new}."), format!("新增 {zh_new}。")),
        lang.pick(format!("Tested by {en_tests}."), format!("测试：{zh_tests}。")),
    ];
    if let Some(check) = check {
        facts.push(lang.pick(
            format!("`{check}` passed with the new code."),
            format!("`{check}` 在新代码上通过。"),
        ));
    }
    if let Some(ask) = ask {
        facts.push(lang.pick(format!("Asked for: {ask}"), format!("需求：{ask}")));
    }
    let verified = match check {
        Some(check) => lang.pick(format!(" `{check}` passed."), format!("`{check}` 通过。")),
        None => String::new(),
    };
    Text {
        title: lang.pick(format!("Added {en_new} with tests"), format!("新增 {zh_new}（含测试）")),
        subtitle: lang.pick(format!("New {en_new}, tested by {en_tests}"), format!("新增 {zh_new}，测试见 {zh_tests}")),
        facts,
        narrative: lang.pick(
            format!("The agent wrote {en_new} and covered it with {en_tests}.{verified} The new code is where this feature lives."),
            format!("新写了 {zh_new}，并用 {zh_tests} 覆盖。{verified}这个功能的代码在这里。"),
        ),
    }
}

fn change_text(lang: Lang, files: &[String], ask: Option<&str>) -> Text {
    let (en_files, zh_files) =
        (Lang::En.list(files, TITLE_FILES), Lang::Zh.list(files, TITLE_FILES));
    let refactor = ask.is_some_and(asks_for_refactor);
    let (en_verb, zh_verb) =
        if refactor { ("Refactored", "重构") } else { ("Changed", "修改") };
    let mut facts =
        vec![lang.pick(format!("{en_verb} {en_files}."), format!("{zh_verb}了 {zh_files}。"))];
    if let Some(ask) = ask {
        facts.push(lang.pick(format!("Asked for: {ask}"), format!("需求：{ask}")));
    }
    let why = match ask {
        Some(ask) => lang.pick(format!(" The request was: {ask}"), format!("需求是：{ask}")),
        None => String::new(),
    };
    Text {
        title: lang.pick(format!("{en_verb} {en_files}"), format!("{zh_verb} {zh_files}")),
        subtitle: match ask {
            Some(ask) => ask.to_owned(),
            None => lang.pick(format!("{en_verb} {en_files}"), format!("{zh_verb} {zh_files}")),
        },
        facts,
        narrative: lang.pick(
            format!("The agent {} {en_files}.{why}", en_verb.to_lowercase()),
            format!("{zh_verb}了 {zh_files}。{why}"),
        ),
    }
}

fn decision_text(lang: Lang, decision: &str, reason: Option<&str>) -> Text {
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
    Text {
        title: lang.pick(format!("Decision: {decision}"), format!("决定：{decision}")),
        subtitle: reason.map_or_else(
            || decision.to_owned(),
            |r| lang.pick(format!("because {r}"), format!("原因：{r}")),
        ),
        facts,
        narrative: lang.pick(
            format!("The user stated a decision: {decision}.{because} Later work should follow it rather than reopen it."),
            format!("用户明确了一个决定：{decision}。{because}之后的工作应遵循它，不要重新讨论。"),
        ),
    }
}

fn discovery_text(
    lang: Lang,
    files: &[String],
    reads: usize,
    names: &[String],
    ask: Option<&str>,
) -> Text {
    let (en_files, zh_files) =
        (Lang::En.list(files, TITLE_FILES), Lang::Zh.list(files, TITLE_FILES));
    // What the files hold is the key fact, when the reads show it.
    let mut facts = Vec::new();
    if !names.is_empty() {
        let (en, zh) = (Lang::En.list(names, 4), Lang::Zh.list(names, 4));
        facts.push(
            lang.pick(format!("{en_files} defines {en}."), format!("{zh_files} 定义了 {zh}。")),
        );
    }
    facts.push(lang.pick(
        format!("{en_files} was read {reads} times without being changed."),
        format!("{zh_files} 被读取 {reads} 次，未修改。"),
    ));
    if let Some(ask) = ask {
        facts.push(lang.pick(format!("Asked: {ask}"), format!("问题：{ask}")));
    }
    Text {
        title: lang.pick(format!("Studied {en_files}"), format!("查看了 {zh_files}")),
        subtitle: match ask {
            Some(ask) => ask.to_owned(),
            None => lang.pick(format!("Read {reads} times"), format!("读取 {reads} 次")),
        },
        facts,
        narrative: lang.pick(
            format!("The agent read {en_files} to understand it and changed nothing. Knowing what it holds saves reading it again."),
            format!("为了理解代码读取了 {zh_files}，没有修改。记下其内容可免去再次阅读。"),
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

fn completed(batch: &Batch<'_>, lang: Lang) -> Vec<String> {
    let mut done = Vec::new();
    for (_, change) in batch.changes() {
        done.push(match (change.created, lang) {
            (true, Lang::En) => format!("created {}", change.file),
            (false, Lang::En) => format!("changed {}", change.file),
            (true, Lang::Zh) => format!("新增 {}", change.file),
            (false, Lang::Zh) => format!("修改 {}", change.file),
        });
    }
    for command in last_runs(batch).filter(|c| c.passed) {
        done.push(
            lang.pick(format!("`{}` passed", command.text), format!("`{}` 通过", command.text)),
        );
    }
    dedup(done)
}

fn next_steps(batch: &Batch<'_>, lang: Lang) -> Vec<String> {
    let mut next = Vec::new();
    if let Some((at, prompt)) = batch.prompts().last() {
        let acted =
            batch.items[at..].iter().any(|i| matches!(i.step, Step::Command(_) | Step::Change(_)));
        if !acted {
            next.push(clip(&one_line(prompt), QUOTE_MAX_CHARS));
        }
    }
    for command in last_runs(batch).filter(|c| !c.passed) {
        let error = command.error.as_deref().unwrap_or_default();
        next.push(lang.pick(
            format!("`{}` still fails: {error}", command.text),
            format!("`{}` 仍然失败：{error}", command.text),
        ));
    }
    next
}

/// Each command's last run, in order of first run.
fn last_runs<'b>(batch: &'b Batch<'_>) -> impl Iterator<Item = &'b Command> {
    let mut order: Vec<&str> = Vec::new();
    let mut last: BTreeMap<&str, &Command> = BTreeMap::new();
    for (_, command) in batch.commands() {
        if last.insert(&command.text, command).is_none() {
            order.push(&command.text);
        }
    }
    order.into_iter().filter_map(move |text| last.get(text).copied())
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
                [bugfix] Fixed `cargo test` failure in src/parser.rs: error[E0425]: cannot find value `depth` in this scope
                  subtitle: error[E0425]: cannot find value `depth` in this scope fixed by changing src/parser.rs
                  concepts: problem-solution, what-changed, gotcha
                  - `cargo test` failed with error[E0425]: cannot find value `depth` in this scope; changing src/parser.rs fixed it.
                  - `cargo test` passed after the change.
                  - A first fix got `cargo test` past that, to thread 'parser::tests::parses_nested' panicked at src/parser.rs:88:9: assertion `left == right` failed, before it passed.
                  narrative: `cargo test` failed with error[E0425]: cannot find value `depth` in this scope. The agent changed src/parser.rs and ran `cargo test` again, which passed. When this error comes back, look at src/parser.rs first.
                  read: ["src/parser.rs"] modified: ["src/parser.rs"]
                  sources: [3, 4, 5, 6, 7, 8] at: +7s
            "#]],
            expect![[r#"
            request: the parser rejects nested lists, fix it
            investigated:
              - src/parser.rs
            learned:
              - `cargo test` failed with error[E0425]: cannot find value `depth` in this scope; changing src/parser.rs fixed it.
            completed:
              - changed src/parser.rs
              - `cargo test` passed
            next_steps:
            files_read:
              - src/parser.rs
            files_modified:
              - src/parser.rs
        "#]],
        );
    }

    #[test]
    fn bugfix_in_chinese() {
        let drafts = OfflineDistiller::new().observe(&bugfix_session(), &code_mode("zh-CN", &[]));
        expect![[r#"
            [bugfix] 修复 `cargo test` 失败（src/parser.rs）：error[E0425]: cannot find value `depth` in this scope
              subtitle: 改 src/parser.rs 修复 error[E0425]: cannot find value `depth` in this scope
              concepts: problem-solution, what-changed, gotcha
              - `cargo test` 报错 error[E0425]: cannot find value `depth` in this scope；修改 src/parser.rs 后修复。
              - 修改后 `cargo test` 通过。
              - 第一次修改后 `cargo test` 又报 thread 'parser::tests::parses_nested' panicked at src/parser.rs:88:9: assertion `left == right` failed，再改后才通过。
              narrative: `cargo test` 失败，报错 error[E0425]: cannot find value `depth` in this scope。修改 src/parser.rs 后重新运行 `cargo test`，通过了。再次遇到这个错误时，先看 src/parser.rs。
              read: ["src/parser.rs"] modified: ["src/parser.rs"]
              sources: [3, 4, 5, 6, 7, 8] at: +7s
        "#]].assert_eq(&render_observations(&drafts));
    }

    #[test]
    fn new_files_with_tests_are_a_feature() {
        check(
            &feature_session(),
            &code_mode("en", &[]),
            expect![[r#"
            [feature] Added src/export.rs with tests
              subtitle: New src/export.rs, tested by tests/export_test.rs
              concepts: what-changed, how-it-works
              - Added src/export.rs.
              - Tested by tests/export_test.rs.
              - `cargo test --test export_test` passed with the new code.
              - Asked for: add a CSV export of sessions
              narrative: The agent wrote src/export.rs and covered it with tests/export_test.rs. `cargo test --test export_test` passed. The new code is where this feature lives.
              read: [] modified: ["src/export.rs", "tests/export_test.rs", "src/lib.rs"]
              sources: [1, 2, 3, 4, 5] at: +4s
        "#]],
            expect![[r#"
            request: add a CSV export of sessions
            investigated:
            learned:
            completed:
              - created src/export.rs
              - created tests/export_test.rs
              - changed src/lib.rs
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
              subtitle: refactor the config loader: extract the env layer into its own function
              concepts: what-changed, pattern
              - Refactored src/config.rs, src/main.rs.
              - Asked for: refactor the config loader: extract the env layer into its own function
              narrative: The agent refactored src/config.rs, src/main.rs. The request was: refactor the config loader: extract the env layer into its own function
              read: ["src/config.rs"] modified: ["src/config.rs", "src/main.rs"]
              sources: [1, 2, 3, 4] at: +3s
        "#]],
            expect![[r#"
            request: refactor the config loader: extract the env layer into its own function
            investigated:
              - src/config.rs
            learned:
            completed:
              - changed src/config.rs
              - changed src/main.rs
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
            [change] 修改 src/time.rs
              subtitle: 从现在起统一用 jiff 处理时间，因为 chrono 的时区 API 太容易用错
              concepts: what-changed, how-it-works
              - 修改了 src/time.rs。
              - 需求：从现在起统一用 jiff 处理时间，因为 chrono 的时区 API 太容易用错
              narrative: 修改了 src/time.rs。需求是：从现在起统一用 jiff 处理时间，因为 chrono 的时区 API 太容易用错
              read: [] modified: ["src/time.rs"]
              sources: [2, 3] at: +2s
        "#]],
            expect![[r#"
            request: 从现在起统一用 jiff 处理时间，因为 chrono 的时区 API 太容易用错
            investigated:
            learned:
              - 决定：从现在起统一用 jiff 处理时间。
            completed:
              - 修改 src/time.rs
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
                [discovery] Studied src/store.rs
                  subtitle: how does the store open its database?
                  concepts: how-it-works, why-it-exists
                  - src/store.rs defines Store, open, migrate.
                  - src/store.rs was read 3 times without being changed.
                  - Asked: how does the store open its database?
                  narrative: The agent read src/store.rs to understand it and changed nothing. Knowing what it holds saves reading it again.
                  read: ["src/store.rs"] modified: []
                  sources: [1, 2, 4, 5] at: +4s
            "#]],
            expect![[r#"
                request: how does the store open its database?
                investigated:
                  - src/store.rs
                  - search: busy_timeout
                  - README.md
                learned:
                  - src/store.rs defines Store, open, migrate.
                completed:
                next_steps:
                  - next time, add a --readonly flag to open
                  - `cargo test store::` still fails: thread 'store::tests::opens' panicked at src/store.rs:9:5: database is locked
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
