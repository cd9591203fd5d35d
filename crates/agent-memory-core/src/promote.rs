//! Promote (DESIGN.md §4): here are new observations and summaries, give me L1 candidates for
//! review, near-duplicates merged instead of piled up, and newer decisions marked as the
//! successors of the older ones they replace.
//!
//! One step ([`screen_new`]) runs in every work pass ([`crate::work`]) after distillation: every item not
//! screened yet goes through [`screen`] (deterministic rules, English and Chinese), and each
//! draft is placed by [`place`]:
//!
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
}

/// Screens every item not screened yet and places what it is worth.
pub fn screen_new(
    store: &mut Store,
    settings: &Settings,
    now_ms: i64,
) -> Result<PromoteReport, MemoryError> {
    let mut report = PromoteReport::default();
    for item in memories::unscreened(store, ITEMS_PER_PASS)? {
        for draft in screen::screen(&item) {
            if draft.importance < settings.min_importance || !settings.kinds.contains(&draft.kind) {
                continue;
            }
            let statement = Statement {
                kind: draft.kind,
                text: draft.text,
                importance: draft.importance,
                sources: vec![draft.source],
                origin: "distilled".into(),
            };
            let tier = if settings.auto { Tier::L2 } else { Tier::L1 };
            match place(store, &statement, item.project_id, tier, settings, now_ms)? {
                Placed::New { supersedes, .. } => {
                    report.candidates += 1;
                    report.successors += usize::from(supersedes.is_some());
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
    // What a person or agent states is input like any captured event: sanitized first.
    let text = memories::check_text(&crate::capture::sanitize_text(&statement.text))?;
    let project_id = if tier == Tier::L3 { None } else { project_id };
    let terms = similar::terms(&text);
    let vector = match (&settings.model, statement.sources.first()) {
        (Some(model), Some(source)) => memories::source_vector(store, model, source)?,
        _ => None,
    };
    let live = [Status::Candidate, Status::Active, Status::Rejected, Status::Forgotten];
    let mut existing = memories::in_scope(store, project_id, &live)?;
    if project_id.is_some() {
        existing.extend(memories::in_scope(store, None, &live)?);
    }
    // The most alike statement kept so far, if alike enough to be the same one.
    let mut duplicate: Option<(f64, &memories::Memory)> = None;
    for memory in &existing {
        let theirs = similar::terms(&memory.text);
        let mut score = similar::overlap(&terms, &theirs);
        // One statement wholly inside the other (a summary's lesson restating an observation
        // without its reason) is the same statement, however different their lengths.
        if similar::containment(&terms, &theirs) >= CONTAINED {
            score = score.max(settings.merge_overlap);
        }
        if let (Some(model), Some(mine), Some(source)) =
            (&settings.model, &vector, memory.sources.first())
            && let Some(theirs) = memories::source_vector(store, model, source)?
            && let Some(cos) = similar::cosine(mine, &theirs)
            && cos >= settings.merge_similarity
        {
            score = score.max(1.0);
        }
        if score >= settings.merge_overlap && duplicate.is_none_or(|(best, _)| score > best) {
            duplicate = Some((score, memory));
        }
    }
    let subject = similar::subject_terms(&text);
    if let Some((_, memory)) = duplicate {
        let differs = similar::says_more(&subject, &similar::subject_terms(&memory.text));
        let decided_otherwise =
            statement.kind.supersedes_older() && memory.kind.supersedes_older() && differs;
        // A project decides for itself: it never retires global memory, nor is folded into it.
        let same_scope = (memory.tier == Tier::L3) == (tier == Tier::L3);
        if decided_otherwise && !same_scope {
            return insert(store, statement, &text, project_id, tier, None, now_ms);
        }
        let replaces = decided_otherwise && memory.status == Status::Active;
        if !replaces {
            return match memory.status {
                Status::Rejected | Status::Forgotten if tier == Tier::L1 => {
                    Ok(Placed::Dropped { like: memory.id })
                }
                Status::Rejected | Status::Forgotten => {
                    insert(store, statement, &text, project_id, tier, None, now_ms)
                }
                _ => {
                    // A candidate decision takes newer wording that says more; kept memory
                    // keeps its own.
                    let newer =
                        (statement.kind.supersedes_older() && differs).then_some(text.as_str());
                    let id = memory.id;
                    memories::merge_into(
                        store,
                        id,
                        &statement.sources,
                        statement.importance,
                        newer,
                        now_ms,
                    )?;
                    Ok(Placed::Merged { into: id })
                }
            };
        }
        let old = memory.id;
        return insert(store, statement, &text, project_id, tier, Some(old), now_ms);
    }
    let predecessor = if statement.kind.supersedes_older() && project_id.is_some() {
        existing
            .iter()
            .filter(|m| m.status == Status::Active && m.kind.supersedes_older())
            .filter(|m| m.project.is_some())
            .map(|m| (similar::containment(&subject, &similar::subject_terms(&m.text)), m))
            .filter(|(score, _)| *score >= settings.supersede_overlap)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.id.cmp(&b.1.id)))
            .map(|(_, m)| m.id)
    } else {
        None
    };
    insert(store, statement, &text, project_id, tier, predecessor, now_ms)
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
        };
        memories::ensure_project(store, &identity).expect("project")
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
