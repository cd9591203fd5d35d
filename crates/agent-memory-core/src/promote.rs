//! Promote (ARCHITECTURE.md, `promote.rs`): here are new observations and summaries, give me L1
//! candidates for review, near-duplicates merged instead of piled up, and newer decisions marked as
//! the successors of the older ones they replace.
//!
//! One step ([`screen_new`]) runs in every work pass ([`crate::work`]) after distillation: every item not
//! screened yet goes through [`screen`] (deterministic rules, English and Chinese), and each
//! draft is placed by [`place`]:
//!
//! - only statements about the same subject are compared at all: two that name different
//!   files, code names or numbers are never one (a decision with a new name or value on the
//!   same subject is that decision taken again; [`similar::Subject::same_as`]);
//! - a near-duplicate of a memory already kept (terms overlapping at least `merge_overlap`, the
//!   shorter's terms nearly all in the longer, or vectors of their sources at least
//!   `merge_similarity` alike when both have one) is merged
//!   into it: sources added, importance raised; a duplicate of a rejected or forgotten memory
//!   is dropped, so review is not asked the same question twice;
//! - a decision or convention on the subject of an active one in the same project (subject
//!   terms shared at least `supersede_overlap`, but each saying something the other does not)
//!   becomes its proposed successor: approving it supersedes the older one;
//! - anything else is a new candidate.
//!
//! With `[promote] auto = true` drafts go straight to project memory (L2) and supersede at once.
//! Every item is screened once (a summary again when it was rewritten), so passes are
//! idempotent. `remember` places what the user states through the same [`place`], directly
//! into L2 or L3.
//!
//! Must not: load a model (vectors are those the work pass already stored), or print.

pub mod screen;
pub mod similar;
pub mod tidy;

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::config::PromoteConfig;
use crate::store::Store;
use crate::store::memories::{self, Kind, MemoryError, NewMemory, Status, Tier};

/// Items screened per pass, so a large backlog is taken in steps.
const ITEMS_PER_PASS: usize = 2000;

/// The share of the shorter statement's terms found in the longer at which the two are one.
const CONTAINED: f64 = 0.9;

/// How promotion decides; from `[promote]` in the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Promote drafts straight to L2 instead of offering them as candidates.
    pub auto: bool,
    /// Drafts less important than this are not kept at all.
    pub min_importance: u8,
    /// The kinds promotion keeps.
    pub kinds: Vec<Kind>,
    pub merge_overlap: f64,
    pub merge_similarity: f32,
    pub supersede_overlap: f64,
    /// The embedding model whose stored vectors may show two statements alike.
    pub model: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::from_config(&PromoteConfig::default(), None)
    }
}

impl Settings {
    pub fn from_config(config: &PromoteConfig, model: Option<&str>) -> Settings {
        Settings {
            auto: config.auto,
            min_importance: config.min_importance.clamp(1, 10),
            kinds: config.kinds.iter().filter_map(|k| Kind::parse(k)).collect(),
            merge_overlap: config.merge_overlap,
            merge_similarity: config.merge_similarity as f32,
            supersede_overlap: config.supersede_overlap,
            model: model.map(str::to_owned),
        }
    }
}

/// A statement to place: screened from distilled items, or stated by the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub kind: Kind,
    pub text: String,
    pub importance: u8,
    pub sources: Vec<String>,
    pub origin: String,
    /// What the statement says is no longer used (`Redis`): the active memory that names it as
    /// its choice is the one it replaces.
    pub replaces: Vec<String>,
}

/// What [`place`] did with a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Placed {
    /// Stored as memory `id`, proposed (a candidate) or made (reviewed memory) the successor of
    /// `supersedes`.
    New { id: i64, supersedes: Option<i64> },
    /// Folded into memory `into`, a near-duplicate.
    Merged { into: i64 },
    /// Left out: a near-duplicate of `like`, which was rejected or forgotten.
    Dropped { like: i64 },
}

/// What a pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PromoteReport {
    /// Observations and summaries screened.
    pub screened: usize,
    /// New candidates (or, with auto-promotion, new project memories).
    pub candidates: usize,
    pub merged: usize,
    /// Of the new ones, how many would supersede (or, with auto-promotion, superseded) an
    /// older decision.
    pub successors: usize,
    /// What people told their agents that became memory at once: a request to remember, a
    /// standing rule, or a change of a memory they had kept.
    pub stated: usize,
}

/// Screens every item not screened yet and places what it is worth.
pub fn screen_new(
    store: &mut Store,
    settings: &Settings,
    now_ms: i64,
) -> Result<PromoteReport, MemoryError> {
    let mut report = PromoteReport::default();
    // Every statement is compared with every memory in its scope: the scopes are read, and
    // their terms worked out, once per pass, not once per statement.
    let mut cache = PlaceCache::default();
    let mut room = HistoryRoom::default();
    for item in memories::unscreened(store, ITEMS_PER_PASS)? {
        for draft in screen::screen(&item) {
            if draft.importance < settings.min_importance || !settings.kinds.contains(&draft.kind) {
                continue;
            }
            if item.from_history && room.full(store, item.project_id)? {
                continue;
            }
            let statement = Statement {
                kind: draft.kind,
                text: draft.text,
                importance: draft.importance,
                sources: vec![draft.source],
                origin: if item.from_history { HISTORY.into() } else { "distilled".into() },
                replaces: Vec::new(),
            };
            // What an agent's old history holds waits for review, whatever the setting: it
            // may be long outdated.
            let tier = if settings.auto && !item.from_history { Tier::L2 } else { Tier::L1 };
            match place_with(
                store,
                &statement,
                item.project_id,
                tier,
                settings,
                now_ms,
                &mut cache,
            )? {
                Placed::New { supersedes, .. } => {
                    report.candidates += 1;
                    report.successors += usize::from(supersedes.is_some());
                    if item.from_history {
                        room.add(item.project_id);
                    }
                }
                Placed::Merged { .. } => report.merged += 1,
                Placed::Dropped { .. } => {}
            }
        }
        memories::mark_screened(store, &item)?;
        report.screened += 1;
    }
    Ok(report)
}

/// The origin of a memory drawn from an agent's history imported after the fact.
pub const HISTORY: &str = "history";

/// The most candidates drawn from imported history that wait for review in one project (or
/// for everyone): months of history must not bury what the hooks capture from now on. Once
/// reviewed (or rejected), room is made for more.
pub const HISTORY_CANDIDATES: i64 = 25;

/// How many history candidates wait in each scope, read once per pass and counted on.
#[derive(Debug, Default)]
struct HistoryRoom {
    waiting: HashMap<Option<i64>, i64>,
}

impl HistoryRoom {
    fn full(&mut self, store: &Store, scope: Option<i64>) -> Result<bool, MemoryError> {
        let waiting = match self.waiting.get(&scope) {
            Some(n) => *n,
            None => {
                let n = memories::history_candidates(store, scope)?;
                self.waiting.insert(scope, n);
                n
            }
        };
        Ok(waiting >= HISTORY_CANDIDATES)
    }

    fn add(&mut self, scope: Option<i64>) {
        *self.waiting.entry(scope).or_default() += 1;
    }
}

/// Prompts and agents' memory entries read per pass, so a long history is taken in steps.
const SAID_PER_PASS: usize = 50_000;

/// Reads what people told their agents since the last pass and places each statement
/// ([`crate::stated`]): a request to remember in the person's own prompt is their approval, so
/// it becomes memory at once (stated by them, `forget` undoes it), and so does a change of mind
/// about a memory they kept, which retires it; a preference about the person, and what an agent
/// wrote into its own memory, is a candidate. Other decisions and rules are left to the
/// distiller's decision observations, screened like everything distilled. What is about the
/// person, or said where no project is, is everyone's (L3); the rest the project's.
pub fn statements_new(
    store: &mut Store,
    settings: &Settings,
    now_ms: i64,
    report: &mut PromoteReport,
) -> Result<(), MemoryError> {
    let (said, last) = memories::said_since(store, SAID_PER_PASS)?;
    let mut cache = PlaceCache::default();
    let mut room = HistoryRoom::default();
    for event in said {
        let statements = match event.agent_memory.as_deref() {
            None => crate::stated::read(&event.text),
            // A rule file holds one rule a line (`- Always run make gen first`).
            // The change's text may come with its lines joined by `⏎`.
            Some(memories::AGENT_RULES) => event
                .text
                .split(['\n', '⏎'])
                .map(|line| line.trim().trim_start_matches(['-', '*', '#', '>', ' ']).trim())
                .filter(|line| line.split_whitespace().count() >= 3 || line.chars().count() >= 8)
                .flat_map(|line| crate::stated::read_entry(line, false))
                .collect(),
            Some(target) => crate::stated::read_entry(&event.text, target == "user"),
        };
        for stated in statements {
            let everyone = stated.personal || event.outside_projects;
            let kind = match stated.kind {
                crate::stated::StatedKind::Preference => Kind::Preference,
                crate::stated::StatedKind::Convention => Kind::Convention,
                crate::stated::StatedKind::Decision => Kind::Decision,
                crate::stated::StatedKind::Fact => Kind::Fact,
            };
            let kind = if everyone && kind == Kind::Fact { Kind::Preference } else { kind };
            let by_person = event.agent_memory.is_none();
            // Said before agent-memory was there: offered for review, never memory at once nor
            // a change of newer memory, since later sessions may have overruled it.
            let live = !event.from_history;
            let statement = Statement {
                kind,
                text: stated.text,
                importance: if stated.explicit { 8 } else { 6 },
                sources: vec![format!("e{}", event.event_id)],
                origin: match (live, by_person) {
                    (false, _) => format!("{HISTORY}:{}", event.agent),
                    (true, true) => format!("stated:{}", event.agent),
                    (true, false) => event.agent.clone(),
                },
                replaces: stated.replaces,
            };
            let scope = if everyone { None } else { event.project_id };
            // A change of mind about kept memory is the person's own approval of the change.
            let (reverses, outdates) = if by_person && live {
                cache.load(store, scope, settings.model.as_deref())?;
                let terms = similar::terms(&statement.text);
                let own = cache.scopes.get(&scope).map(Vec::as_slice).unwrap_or_default();
                (
                    !replaced(own, &statement, &terms, &[Status::Active]).is_empty(),
                    !replaced(own, &statement, &terms, &[Status::Candidate]).is_empty(),
                )
            } else {
                (false, false)
            };
            // Any other decision or rule the person stated is the distiller's decision
            // observation, screened into a candidate of its project like everything distilled:
            // placing it here too would offer it twice.
            if by_person && !stated.explicit && !reverses && !outdates && !stated.personal {
                continue;
            }
            let tier = match (live && by_person && (stated.explicit || reverses), everyone) {
                (true, true) => Tier::L3,
                (true, false) => Tier::L2,
                (false, _) => Tier::L1,
            };
            if !live && room.full(store, scope)? {
                continue;
            }
            // A candidate for everyone waits without a project; approving it makes it global.
            let placed = place_with(store, &statement, scope, tier, settings, now_ms, &mut cache)?;
            if let Placed::New { supersedes, .. } = placed {
                if !live {
                    room.add(scope);
                }
                if tier == Tier::L1 {
                    report.candidates += 1;
                } else {
                    report.stated += 1;
                }
                report.successors += usize::from(supersedes.is_some());
            } else if let Placed::Merged { .. } = placed {
                report.merged += 1;
            }
        }
    }
    if let Some(last) = last {
        memories::mark_said_read(store, last)?;
    }
    Ok(())
}

/// Places one statement in `tier` for the project `project_id` (ignored for L3): merged into
/// a near-duplicate, stored as a successor of the decision it replaces, or stored new.
pub fn place(
    store: &mut Store,
    statement: &Statement,
    project_id: Option<i64>,
    tier: Tier,
    settings: &Settings,
    now_ms: i64,
) -> Result<Placed, MemoryError> {
    place_with(store, statement, project_id, tier, settings, now_ms, &mut PlaceCache::default())
}

/// What placing statements one after another reads again and again, kept for a pass: the
/// memories in each scope, their comparable terms, and which of them hold each term. A
/// statement is measured against every memory in its scope, so without it a pass reads and
/// parses the scope once per statement; with the postings, the terms two statements share are
/// counted from the statement's terms alone, not by walking each memory's term set.
#[derive(Debug, Default)]
struct PlaceCache {
    /// Live memories by scope (a project, or `None` for global), as last read or merged into.
    scopes: HashMap<Option<i64>, Vec<memories::Memory>>,
    /// By scope, where in its list the memories holding each term are.
    postings: HashMap<Option<i64>, HashMap<String, Vec<usize>>>,
    /// Terms and names by memory id, kept current with `scopes`: read when a scope is read,
    /// worked out again when a merge rewords a memory.
    terms: HashMap<i64, Known>,
}

impl PlaceCache {
    fn load(
        &mut self,
        store: &Store,
        scope: Option<i64>,
        model: Option<&str>,
    ) -> Result<(), MemoryError> {
        if self.scopes.contains_key(&scope) {
            return Ok(());
        }
        let live = [Status::Candidate, Status::Active, Status::Rejected, Status::Forgotten];
        let memories = memories::in_scope(store, scope, &live)?;
        let mut postings: HashMap<String, Vec<usize>> = HashMap::new();
        for (at, memory) in memories.iter().enumerate() {
            post(&mut postings, &known_of(&mut self.terms, memory, store, model)?.terms, at);
        }
        self.postings.insert(scope, postings);
        self.scopes.insert(scope, memories);
        Ok(())
    }

    /// Every scope is read again at its next use (a new memory may have retired another).
    fn forget_scopes(&mut self) {
        self.scopes.clear();
        self.postings.clear();
    }

    /// A merge changed one memory: its new state replaces the old, and new wording moves it
    /// between the postings of its terms.
    fn merged(
        &mut self,
        memory: memories::Memory,
        store: &Store,
        model: Option<&str>,
    ) -> Result<(), MemoryError> {
        let PlaceCache { scopes, postings, terms } = self;
        for (scope, list) in scopes.iter_mut() {
            let Some(at) = list.iter().position(|m| m.id == memory.id) else { continue };
            let known = &mut list[at];
            let first = known.sources.first().cloned();
            *known = memories::Memory { sources: first.into_iter().collect(), ..memory };
            let before = terms.get(&known.id).map(|k| k.terms.clone()).unwrap_or_default();
            let after = &known_of(terms, known, store, model)?.terms;
            if let Some(postings) = postings.get_mut(scope) {
                for term in before.difference(after) {
                    if let Some(places) = postings.get_mut(term) {
                        places.retain(|&place| place != at);
                    }
                }
                post(postings, after.difference(&before), at);
            }
            return Ok(());
        }
        Ok(())
    }

    /// A new memory joins the list and postings of its scope (its project, or `None`), if that
    /// scope has been read. Reading the scope again instead would make a pass that inserts many
    /// memories cost the square of the scope's size.
    fn inserted(
        &mut self,
        scope: Option<i64>,
        mut memory: memories::Memory,
        store: &Store,
        model: Option<&str>,
    ) -> Result<(), MemoryError> {
        let PlaceCache { scopes, postings, terms } = self;
        let (Some(list), Some(postings)) = (scopes.get_mut(&scope), postings.get_mut(&scope))
        else {
            return Ok(());
        };
        // As a scope is read: with its first source only.
        memory.sources.truncate(1);
        post(postings, &known_of(terms, &memory, store, model)?.terms, list.len());
        list.push(memory);
        Ok(())
    }

    /// How many of `terms` each memory of `scope` holds, in the order of its list.
    fn shared(&self, scope: Option<i64>, terms: &BTreeSet<String>) -> Vec<usize> {
        let mut counts = vec![0; self.scopes.get(&scope).map_or(0, Vec::len)];
        let Some(postings) = self.postings.get(&scope) else { return counts };
        for places in terms.iter().filter_map(|term| postings.get(term)) {
            for &at in places {
                if let Some(count) = counts.get_mut(at) {
                    *count += 1;
                }
            }
        }
        counts
    }
}

/// Records that the memory at `at` in its scope's list holds each of `terms`.
fn post<'t>(
    postings: &mut HashMap<String, Vec<usize>>,
    terms: impl IntoIterator<Item = &'t String>,
    at: usize,
) {
    for term in terms {
        postings.entry(term.clone()).or_default().push(at);
    }
}

/// A memory's text as comparisons need it, worked out once; and, with a model, the vector of
/// the item it came from, read once a pass rather than once for every statement placed.
#[derive(Debug)]
struct Known {
    text: String,
    terms: BTreeSet<String>,
    names: similar::Names,
    vector: Option<Vec<f32>>,
}

fn known_of<'c>(
    cache: &'c mut HashMap<i64, Known>,
    memory: &memories::Memory,
    store: &Store,
    model: Option<&str>,
) -> Result<&'c Known, MemoryError> {
    let fresh = || -> Result<Known, MemoryError> {
        let vector = match (model, memory.sources.first()) {
            (Some(model), Some(source)) => memories::source_vector(store, model, source)?,
            _ => None,
        };
        Ok(Known {
            text: memory.text.clone(),
            terms: similar::terms(&memory.text),
            names: similar::Names::of(&memory.text),
            vector,
        })
    };
    let entry = match cache.entry(memory.id) {
        std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
        std::collections::hash_map::Entry::Vacant(entry) => entry.insert(fresh()?),
    };
    // A merge may have given it newer wording (its first source, and so its vector, stays).
    if entry.text != memory.text {
        *entry = fresh()?;
    }
    Ok(entry)
}

#[allow(clippy::too_many_arguments)]
fn place_with(
    store: &mut Store,
    statement: &Statement,
    project_id: Option<i64>,
    tier: Tier,
    settings: &Settings,
    now_ms: i64,
    cache: &mut PlaceCache,
) -> Result<Placed, MemoryError> {
    // What a person or agent states is input like any captured event: sanitized first.
    let text = memories::check_text(&crate::capture::sanitize_text(&statement.text))?;
    let project_id = if tier == Tier::L3 { None } else { project_id };
    let action = decide(store, statement, &text, project_id, tier, settings, cache)?;
    match action {
        Action::Drop { like } => Ok(Placed::Dropped { like }),
        // What an agent repeats of what it was handed confirms nothing: the merge changes
        // nothing (no source, importance, freshness or approval), so a memory is never made
        // surer by its own reflection.
        Action::Merge { into, .. } if echoes(store, statement, tier, into)? => {
            Ok(Placed::Merged { into })
        }
        Action::Merge { into, newer } => {
            let newer = newer.then_some(text.as_str());
            let merged = memories::merge_into(
                store,
                into,
                &statement.sources,
                statement.importance,
                newer,
                now_ms,
            )?;
            // Said again by someone who may approve it, a waiting candidate is approved.
            let merged = if tier != Tier::L1 && merged.status == Status::Candidate {
                memories::approve(store, into, tier == Tier::L3, now_ms)?.memory
            } else {
                merged
            };
            cache.merged(merged, store, settings.model.as_deref())?;
            Ok(Placed::Merged { into })
        }
        Action::Insert { supersedes } => {
            let placed = insert(store, statement, &text, project_id, tier, supersedes, now_ms)?;
            if let Placed::New { id, .. } = placed
                && !statement.replaces.is_empty()
            {
                retire_replaced(store, statement, id, project_id, tier, now_ms, cache)?;
            }
            if supersedes.is_some() || !statement.replaces.is_empty() {
                // A successor may retire the memory it replaces: read the scopes again.
                cache.forget_scopes();
            } else if let Placed::New { id, .. } = placed
                && let Some(memory) = memories::get(store, id)?
            {
                cache.inserted(project_id, memory, store, settings.model.as_deref())?;
            }
            Ok(placed)
        }
    }
}

/// Whether `statement` only echoes memory `into`: every source of it was said in a session
/// that had been handed that memory, with no tool use behind it (prompts and closing answers
/// only; [`Store::echoes`]). A person's own request to remember (stated, and placed as kept
/// memory) is their word, never an echo.
fn echoes(
    store: &Store,
    statement: &Statement,
    tier: Tier,
    into: i64,
) -> Result<bool, MemoryError> {
    if tier != Tier::L1 && statement.origin.starts_with("stated:") {
        return Ok(false);
    }
    let memory = crate::recall::ItemId::Memory(into).to_string();
    let mut sources = statement.sources.iter().peekable();
    if sources.peek().is_none() {
        return Ok(false);
    }
    for source in sources {
        let Ok(id) = source.parse::<crate::recall::ItemId>() else { return Ok(false) };
        if !store.echoes(&memory, id.kind(), id.number())? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Everything else a change of mind replaces in its scope, beside the memory it supersedes:
/// other kept memories that chose the same thing, when the new one is kept too, and waiting
/// candidates that did, whatever the new one is (a newer word of the person outdates them).
fn retire_replaced(
    store: &mut Store,
    statement: &Statement,
    new: i64,
    scope: Option<i64>,
    tier: Tier,
    now_ms: i64,
    cache: &mut PlaceCache,
) -> Result<(), MemoryError> {
    let terms = similar::terms(&statement.text);
    let own = cache.scopes.get(&scope).map(Vec::as_slice).unwrap_or_default();
    let statuses: &[Status] =
        if tier == Tier::L1 { &[Status::Candidate] } else { &[Status::Active, Status::Candidate] };
    for old in replaced(own, statement, &terms, statuses).into_iter().filter(|old| *old != new) {
        memories::supersede_by(store, old, new, now_ms)?;
        memories::retire_candidate(store, old, new, now_ms)?;
    }
    Ok(())
}

/// What placing a statement comes to.
enum Action {
    Drop { like: i64 },
    Merge { into: i64, newer: bool },
    Insert { supersedes: Option<i64> },
}

/// Finds what a statement is, among the memories of its scope: a near-duplicate to merge into,
/// a decision it replaces, or nothing like it.
fn decide(
    store: &Store,
    statement: &Statement,
    text: &str,
    project_id: Option<i64>,
    tier: Tier,
    settings: &Settings,
    cache: &mut PlaceCache,
) -> Result<Action, MemoryError> {
    let terms = similar::terms(text);
    let vector = match (&settings.model, statement.sources.first()) {
        (Some(model), Some(source)) => memories::source_vector(store, model, source)?,
        _ => None,
    };
    let model = settings.model.as_deref();
    cache.load(store, project_id, model)?;
    cache.load(store, None, model)?;
    // Terms each memory shares with the statement, in the order of `existing`.
    let mut shared = cache.shared(project_id, &terms);
    if project_id.is_some() {
        shared.extend(cache.shared(None, &terms));
    }
    let PlaceCache { scopes, terms: known_terms, .. } = cache;
    // A change of mind names what it replaces: the active memory of its own scope that chose it.
    let own = scopes.get(&project_id).map(Vec::as_slice).unwrap_or_default();
    if let Some(&old) = replaced(own, statement, &terms, &[Status::Active]).first() {
        return Ok(Action::Insert { supersedes: Some(old) });
    }
    let global = if project_id.is_some() { scopes.get(&None) } else { None };
    let existing: Vec<&memories::Memory> =
        scopes.get(&project_id).into_iter().chain(global).flatten().collect();
    // The most alike statement kept so far, if alike enough to be the same one. Statements
    // about different files, code or values are never one, however alike their other words.
    let mine = similar::Subject::of(text);
    let mut duplicate: Option<(f64, &memories::Memory)> = None;
    for (&memory, &common) in existing.iter().zip(&shared) {
        // Loading the scope worked its terms out, so this never reads the store.
        let Some(known) = known_terms.get(&memory.id) else { continue };
        // The shared terms were counted from the postings.
        let (mine_n, theirs_n) = (terms.len(), known.terms.len());
        let mut score = similar::overlap_of(common, mine_n, theirs_n);
        // One statement wholly inside the other (a summary's lesson restating an observation
        // without its reason) is the same statement, however different their lengths.
        if similar::containment_of(common, mine_n, theirs_n) >= CONTAINED {
            score = score.max(settings.merge_overlap);
        }
        if let (Some(mine), Some(theirs)) = (&vector, &known.vector)
            && let Some(cos) = similar::cosine(mine, theirs)
            && cos >= settings.merge_similarity
        {
            score = score.max(1.0);
        }
        if score < settings.merge_overlap || duplicate.is_some_and(|(best, _)| score <= best) {
            continue;
        }
        // Alike enough: one statement only when about the same files, code and values.
        let deciding = statement.kind.supersedes_older() && memory.kind.supersedes_older();
        if mine.same_as(&similar::Subject::with_names(&known.text, &known.names), deciding) {
            duplicate = Some((score, memory));
        }
    }
    let subject = similar::subject_terms(text);
    if let Some((_, memory)) = duplicate {
        let differs = similar::says_more(&subject, &similar::subject_terms(&memory.text));
        let decided_otherwise =
            statement.kind.supersedes_older() && memory.kind.supersedes_older() && differs;
        // A project decides for itself: it never retires global memory, nor is folded into it.
        let same_scope = (memory.tier == Tier::L3) == (tier == Tier::L3);
        if decided_otherwise && !same_scope {
            return Ok(Action::Insert { supersedes: None });
        }
        let replaces = decided_otherwise && memory.status == Status::Active;
        if !replaces {
            return match memory.status {
                Status::Rejected | Status::Forgotten if tier == Tier::L1 => {
                    Ok(Action::Drop { like: memory.id })
                }
                Status::Rejected | Status::Forgotten => Ok(Action::Insert { supersedes: None }),
                _ => {
                    // A candidate decision takes newer wording that says more; kept memory
                    // keeps its own.
                    let newer = statement.kind.supersedes_older() && differs;
                    Ok(Action::Merge { into: memory.id, newer })
                }
            };
        }
        return Ok(Action::Insert { supersedes: Some(memory.id) });
    }
    let predecessor = if statement.kind.supersedes_older() && project_id.is_some() {
        existing
            .iter()
            .filter(|m| m.status == Status::Active && m.kind.supersedes_older())
            .filter(|m| m.project.is_some())
            .filter(|m| mine.same_as(&similar::Subject::of(&m.text), true))
            .map(|m| (similar::containment(&subject, &similar::subject_terms(&m.text)), m))
            .filter(|(score, _)| *score >= settings.supersede_overlap)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.id.cmp(&b.1.id)))
            .map(|(_, m)| m.id)
    } else {
        None
    };
    Ok(Action::Insert { supersedes: predecessor })
}

/// The memories among `memories` in one of `statuses` that a statement saying it no longer
/// uses something replaces, newest first: a decision, convention or preference that names the
/// thing (as a word, any case) and, unless the thing is a name (`Redis`, `pytest`,
/// `消息队列`), shares another word with the statement; and a fact that names it and shares
/// another word ("Redis is the job queue", never "Redis also holds the cache").
fn replaced(
    memories: &[memories::Memory],
    statement: &Statement,
    terms: &BTreeSet<String>,
    statuses: &[Status],
) -> Vec<i64> {
    if statement.replaces.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<i64> = memories
        .iter()
        .filter(|m| statuses.contains(&m.status))
        .filter(|m| m.kind.supersedes_older() || m.kind == Kind::Fact)
        .filter(|m| {
            statement.replaces.iter().any(|object| {
                let Some(words) = names_word(&m.text, object) else { return false };
                let theirs = similar::subject_terms(&m.text);
                let other =
                    terms.iter().filter(|t| !words.contains(*t)).any(|t| theirs.contains(t));
                match m.kind {
                    Kind::Fact => other,
                    _ => is_name(object) || !object.contains(' ') || other,
                }
            })
        })
        .map(|m| m.id)
        .collect();
    found.sort_unstable_by(|a, b| b.cmp(a));
    found
}

/// The terms of `object` when `text` names it as a word (case aside), else `None`.
fn names_word(text: &str, object: &str) -> Option<BTreeSet<String>> {
    let hay = text.to_lowercase();
    let needle = object.to_lowercase();
    let found = hay.match_indices(&needle).any(|(at, _)| {
        let before = hay[..at].chars().next_back();
        let after = hay[at + needle.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
        boundary(before) && boundary(after)
    });
    found.then(|| similar::terms(object))
}

/// Whether `object` reads as a name rather than a common word: capitals, digits or marks
/// inside (`Redis`, `NATS`, `S3`, `node-cron`), or Chinese of two characters or more.
fn is_name(object: &str) -> bool {
    let first_word = object.split_whitespace().next().unwrap_or(object);
    first_word.chars().skip(1).any(|c| c.is_ascii_uppercase())
        || first_word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        || first_word.chars().any(|c| c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
        || object.chars().filter(|c| crate::store::fts::is_cjk(*c)).count() >= 2
}

fn insert(
    store: &mut Store,
    statement: &Statement,
    text: &str,
    project_id: Option<i64>,
    tier: Tier,
    supersedes: Option<i64>,
    now_ms: i64,
) -> Result<Placed, MemoryError> {
    let new = NewMemory {
        tier,
        kind: statement.kind,
        text: text.to_owned(),
        project_id,
        importance: statement.importance,
        sources: statement.sources.clone(),
        origin: statement.origin.clone(),
        supersedes,
    };
    let id = memories::insert(store, &new, now_ms)?;
    Ok(Placed::New { id, supersedes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memories::get;

    fn said(kind: Kind, text: &str, source: &str) -> Statement {
        Statement {
            replaces: Vec::new(),
            kind,
            text: text.into(),
            importance: 6,
            sources: vec![source.into()],
            origin: "distilled".into(),
        }
    }

    fn project(store: &mut Store) -> i64 {
        let identity = crate::project::ProjectIdentity {
            key: "path:/w/app".into(),
            root: "/w/app".into(),
            name: "app".into(),
            origin: None,
            branch: None,
        };
        memories::ensure_project(store, &identity).expect("project")
    }

    /// Session `s-1` of codex in the project: observation o1 distilled from a prompt and a
    /// stop, o2 from the prompt and a tool use; memory `into` handed to it by the briefing.
    fn session_handed(store: &mut Store, into: i64) {
        use crate::store::injections::{Channel, NewInjection};
        store
            .conn()
            .execute_batch(
                "INSERT INTO sessions (id, agent, source_id, project_id, started_at, last_event_at)
                     VALUES (1, 'codex', 's-1', 1, 0, 0);
                 INSERT INTO events (id, uid, session_id, project_id, agent, kind, source_event, at,
                                     summary, content_hash)
                     VALUES (1, 'u1', 1, 1, 'codex', 'prompt', 'x', 20, 'p', 'h1'),
                            (2, 'u2', 1, 1, 'codex', 'stop', 'x', 30, 's', 'h2'),
                            (3, 'u3', 1, 1, 'codex', 'tool_use', 'x', 40, 't', 'h3');
                 INSERT INTO observations (id, session_id, project_id, agent, mode, kind, title, at,
                                           tokens, work_tokens, distiller, source_key)
                     VALUES (1, 1, 1, 'codex', 'code', 'decision', 't', 30, 1, 1, 'offline', 'k1'),
                            (2, 1, 1, 'codex', 'code', 'decision', 't', 40, 1, 1, 'offline', 'k2');
                 INSERT INTO observation_sources VALUES (1, 1), (1, 2), (2, 1), (2, 3);",
            )
            .expect("rows");
        let items = [(format!("m{into}"), 20)];
        let handed = NewInjection {
            at_ms: 10,
            agent: "codex",
            session: Some("s-1"),
            project_key: Some("path:/w/app"),
            channel: Channel::Briefing,
            tokens: 100,
            items: &items,
            cut: 0,
        };
        store.record_injections(&[handed]).expect("record");
    }

    #[test]
    fn an_agent_repeating_what_it_was_handed_confirms_nothing() {
        let mut store = Store::open_in_memory().expect("store");
        let p = Some(project(&mut store));
        let s = Settings::default();
        let kept = said(Kind::Decision, "Use jiff for every time in the store, not chrono.", "o9");
        let Placed::New { id, .. } = place(&mut store, &kept, p, Tier::L2, &s, 1).expect("place")
        else {
            panic!("new")
        };
        session_handed(&mut store, id);
        let before = get(&store, id).expect("get").expect("there");
        // Said back in a closing answer of the session it was handed to: no bump at all.
        let mut echo =
            said(Kind::Decision, "Use jiff for every time in the store, not chrono", "o1");
        echo.importance = 9;
        assert_eq!(
            place(&mut store, &echo, p, Tier::L1, &s, 50).expect("place"),
            Placed::Merged { into: id }
        );
        assert_eq!(get(&store, id).expect("get").expect("there"), before, "nothing changed");
        // The same words with a tool run behind them are evidence: the merge counts.
        let mut checked = echo.clone();
        checked.sources = vec!["o2".into()];
        place(&mut store, &checked, p, Tier::L1, &s, 60).expect("place");
        let after = get(&store, id).expect("get").expect("there");
        assert_eq!(
            (after.sources, after.importance, after.updated_at),
            (vec!["o9".to_owned(), "o2".to_owned()], 9, 60)
        );
        // The person asking to remember it is their word, never an echo.
        let mut stated = echo.clone();
        stated.sources = vec!["e1".into()];
        stated.origin = "stated:codex".into();
        place(&mut store, &stated, p, Tier::L2, &s, 70).expect("place");
        let stated = get(&store, id).expect("get").expect("there");
        assert!(stated.sources.contains(&"e1".to_owned()), "{:?}", stated.sources);
    }

    #[test]
    fn near_duplicates_merge_and_rejected_ones_stay_out() {
        let mut store = Store::open_in_memory().expect("store");
        let p = Some(project(&mut store));
        let s = Settings::default();
        let first = said(
            Kind::Problem,
            "`cargo test` failed with E0425; changing src/parser.rs fixed it.",
            "o1",
        );
        let Placed::New { id, .. } = place(&mut store, &first, p, Tier::L1, &s, 1).expect("place")
        else {
            panic!("new")
        };
        let again = said(
            Kind::Problem,
            "cargo test failed with E0425, fixed by changing src/parser.rs",
            "s2",
        );
        assert_eq!(
            place(&mut store, &again, p, Tier::L1, &s, 2).expect("place"),
            Placed::Merged { into: id }
        );
        let merged = get(&store, id).expect("get").expect("there");
        assert_eq!(merged.sources, ["o1", "s2"]);
        memories::reject(&mut store, id, 3).expect("reject");
        let third =
            said(Kind::Problem, "cargo test failed: E0425; changing src/parser.rs fixed it", "o9");
        assert_eq!(
            place(&mut store, &third, p, Tier::L1, &s, 4).expect("place"),
            Placed::Dropped { like: id }
        );
    }

    #[test]
    fn a_pass_compares_with_what_it_inserted_without_reading_the_scope_again() {
        let mut store = Store::open_in_memory().expect("store");
        let p = Some(project(&mut store));
        let s = Settings::default();
        let mut cache = PlaceCache::default();
        let mut place = |store: &mut Store, statement: &Statement| {
            place_with(store, statement, p, Tier::L1, &s, 1, &mut cache).expect("place")
        };
        let first =
            said(Kind::Problem, "`cargo test` failed with E0425; src/parser.rs fixed", "o1");
        let Placed::New { id, .. } = place(&mut store, &first) else { panic!("new") };
        let other = said(Kind::Problem, "npm test timed out in the checkout webhook", "o2");
        assert!(matches!(place(&mut store, &other), Placed::New { .. }));
        let again = said(Kind::Problem, "cargo test failed with E0425, src/parser.rs fixed", "s3");
        assert_eq!(place(&mut store, &again), Placed::Merged { into: id });
        let merged = get(&store, id).expect("get").expect("there");
        assert_eq!(merged.sources, ["o1", "s3"]);
    }

    #[test]
    fn a_newer_decision_on_the_same_subject_is_proposed_as_successor() {
        let mut store = Store::open_in_memory().expect("store");
        let p = Some(project(&mut store));
        let s = Settings::default();
        let old = said(Kind::Decision, "Decision: use chrono for every timestamp.", "o1");
        let Placed::New { id: old, .. } =
            place(&mut store, &old, p, Tier::L2, &s, 1).expect("place")
        else {
            panic!("new")
        };
        let unrelated = said(Kind::Decision, "Decision: use redis for the job queue.", "o2");
        assert!(matches!(
            place(&mut store, &unrelated, p, Tier::L1, &s, 2).expect("place"),
            Placed::New { supersedes: None, .. }
        ));
        let newer =
            said(Kind::Decision, "Decision: use jiff for every timestamp, not chrono.", "o3");
        let placed = place(&mut store, &newer, p, Tier::L1, &s, 3).expect("place");
        let Placed::New { id, supersedes: Some(replaced) } = placed else { panic!("{placed:?}") };
        assert_eq!(replaced, old);
        let approved = memories::approve(&mut store, id, false, 4).expect("approve");
        assert_eq!(approved.superseded, Some(old));
        assert_eq!(get(&store, old).expect("get").expect("old").status, Status::Superseded);
    }

    #[test]
    fn template_alike_statements_about_distinct_files_stay_distinct() {
        let mut store = Store::open_in_memory().expect("store");
        let p = Some(project(&mut store));
        let s = Settings::default();
        let mut ids = Vec::new();
        for i in 0..60 {
            let text = format!("src/module_{i}/deploy.ts was read 3 times");
            let placed =
                place(&mut store, &said(Kind::Fact, &text, &format!("o{i}")), p, Tier::L1, &s, i)
                    .expect("place");
            let Placed::New { id, supersedes: None } = placed else { panic!("{text}: {placed:?}") };
            ids.push(id);
        }
        for (i, (a, b)) in
            [("parse_list", "parse_expr"), ("fetchUser", "fetchOrder")].into_iter().enumerate()
        {
            let first = format!("`{a}` returns early when the input is empty");
            let second = format!("`{b}` returns early when the input is empty");
            let Placed::New { id, .. } =
                place(&mut store, &said(Kind::Problem, &first, "o90"), p, Tier::L1, &s, 90)
                    .expect("place")
            else {
                panic!("new")
            };
            let placed =
                place(&mut store, &said(Kind::Problem, &second, "o91"), p, Tier::L1, &s, 91)
                    .expect("place");
            assert!(matches!(placed, Placed::New { supersedes: None, .. }), "{i}: {placed:?}");
            assert_ne!(placed, Placed::Merged { into: id });
        }
        // A fact with a new value is a statement of its own, for review to weigh against the old.
        let timeout = said(Kind::Fact, "The API client times out after 30 seconds.", "o92");
        place(&mut store, &timeout, p, Tier::L1, &s, 92).expect("place");
        let longer = said(Kind::Fact, "The API client times out after 60 seconds.", "o93");
        assert!(matches!(
            place(&mut store, &longer, p, Tier::L1, &s, 93).expect("place"),
            Placed::New { .. }
        ));

        // The same statement restated still merges, its file written from the project root or not.
        let again = said(Kind::Fact, "/w/app/src/module_7/deploy.ts was read 3 times.", "s1");
        assert_eq!(
            place(&mut store, &again, p, Tier::L1, &s, 100).expect("place"),
            Placed::Merged { into: ids[7] }
        );
        assert_eq!(get(&store, ids[7]).expect("get").expect("there").sources, ["o7", "s1"]);
        let candidates = memories::in_scope(&store, p, &[Status::Candidate]).expect("list");
        assert_eq!(candidates.len(), 60 + 4 + 2);
    }

    #[test]
    fn a_decision_with_a_new_name_or_value_supersedes_not_duplicates() {
        let mut store = Store::open_in_memory().expect("store");
        let p = Some(project(&mut store));
        let s = Settings::default();
        let pairs = [
            (
                "Decision: keep the database pool at 5 connections.",
                "Decision: keep the database pool at 8 connections.",
            ),
            (
                "Decision: use `chrono` for every timestamp.",
                "Decision: use `jiff` for every timestamp.",
            ),
        ];
        for (i, (old, new)) in pairs.into_iter().enumerate() {
            let at = i as i64 * 10;
            let Placed::New { id: old_id, .. } =
                place(&mut store, &said(Kind::Decision, old, "o1"), p, Tier::L2, &s, at + 1)
                    .expect("place")
            else {
                panic!("new")
            };
            let placed =
                place(&mut store, &said(Kind::Decision, new, "o2"), p, Tier::L1, &s, at + 2)
                    .expect("place");
            assert!(
                matches!(placed, Placed::New { supersedes: Some(o), .. } if o == old_id),
                "{new}: {placed:?}"
            );
        }
        // A candidate not yet reviewed takes the new value in its own row instead.
        let first = said(Kind::Decision, "Decision: retry failed uploads 3 times.", "o5");
        let Placed::New { id, .. } = place(&mut store, &first, p, Tier::L1, &s, 30).expect("place")
        else {
            panic!("new")
        };
        let second = said(Kind::Decision, "Decision: retry failed uploads 5 times.", "o6");
        assert_eq!(
            place(&mut store, &second, p, Tier::L1, &s, 31).expect("place"),
            Placed::Merged { into: id }
        );
        assert_eq!(
            get(&store, id).expect("get").expect("there").text,
            "Decision: retry failed uploads 5 times."
        );
    }

    #[test]
    fn a_project_decision_never_retires_global_memory() {
        let mut store = Store::open_in_memory().expect("store");
        let p = Some(project(&mut store));
        let s = Settings::default();
        let global = said(Kind::Decision, "Decision: use jiff for every timestamp.", "o1");
        let Placed::New { id: global, .. } =
            place(&mut store, &global, None, Tier::L3, &s, 1).expect("place")
        else {
            panic!("new")
        };
        let local = said(Kind::Decision, "Decision: use chrono for every timestamp here.", "o2");
        let placed = place(&mut store, &local, p, Tier::L2, &s, 2).expect("place");
        assert!(matches!(placed, Placed::New { supersedes: None, .. }), "{placed:?}");
        assert_eq!(get(&store, global).expect("get").expect("global").status, Status::Active);
    }
}
