//! Maintenance of long-term memory (ARCHITECTURE.md, `promote/tidy.rs`): here is the store, tell me
//! which active memories have not been found for a long time, which say the same thing (about
//! the same files, code and values: [`super::similar::same_subject`]), and which were
//! superseded; on request, act on it.
//!
//! A report first ([`plan`]); [`apply`] then forgets the stale ones (undoable) and folds every
//! duplicate cluster into its most important member (the others superseded by it, their
//! sources kept). Superseded memories are only reported: they are history, already out of
//! search and briefings. The caller backs the database file up before applying.
//!
//! Must not: delete a row.

use serde::Serialize;

use super::{Settings, similar};
use crate::store::Store;
use crate::store::memories::{self, Filter, Memory, MemoryError, Status};

/// What tidying would do.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tidy {
    /// Active memories neither found nor changed for `stale_days`.
    pub stale: Vec<Memory>,
    /// Groups of active memories that say the same thing, the one to keep first.
    pub duplicates: Vec<Vec<Memory>>,
    pub superseded: Vec<Memory>,
    /// Active memories a file they rest on changed under, or is gone from: they may no longer
    /// hold. Reported with their anchors, never acted on.
    pub needs_a_look: Vec<Memory>,
}

/// What [`apply`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Applied {
    pub forgotten: usize,
    pub merged: usize,
}

/// The report, as of `now_ms`.
pub fn plan(
    store: &Store,
    settings: &Settings,
    stale_days: u32,
    now_ms: i64,
) -> Result<Tidy, MemoryError> {
    let all = memories::list(store, &Filter::default())?;
    let cutoff = now_ms - i64::from(stale_days) * 86_400_000;
    let mut active: Vec<Memory> =
        all.iter().filter(|m| m.status == Status::Active).cloned().collect();
    // The keeper of a cluster is the most important, then the oldest.
    active.sort_by(|a, b| b.importance.cmp(&a.importance).then(a.id.cmp(&b.id)));
    let stale = active
        .iter()
        .filter(|m| m.last_hit.unwrap_or(0).max(m.updated_at) < cutoff)
        .cloned()
        .collect();
    let mut taken = vec![false; active.len()];
    let mut duplicates = Vec::new();
    for i in 0..active.len() {
        if taken[i] {
            continue;
        }
        let terms = similar::terms(&active[i].text);
        let mut cluster = vec![active[i].clone()];
        for j in i + 1..active.len() {
            if taken[j] || active[j].project != active[i].project {
                continue;
            }
            let theirs = similar::terms(&active[j].text);
            if similar::overlap(&terms, &theirs) >= settings.merge_overlap
                && similar::same_subject(&active[i].text, &active[j].text, false)
            {
                taken[j] = true;
                cluster.push(active[j].clone());
            }
        }
        if cluster.len() > 1 {
            duplicates.push(cluster);
        }
    }
    let needs_a_look = needing_a_look(store, now_ms)?;
    let superseded = all.into_iter().filter(|m| m.status == Status::Superseded).collect();
    Ok(Tidy { stale, duplicates, superseded, needs_a_look })
}

/// Active memories whose files changed or are gone, newest first, each with its anchors.
pub fn needing_a_look(store: &Store, now_ms: i64) -> Result<Vec<Memory>, MemoryError> {
    let mut found = Vec::new();
    for (id, anchors) in crate::anchor::needing_a_look(store, now_ms)? {
        if let Some(mut memory) = memories::get(store, id)? {
            memory.anchors = Some(anchors.0);
            found.push(memory);
        }
    }
    Ok(found)
}

/// Carries a report out: stale memories forgotten, each duplicate folded into its keeper.
pub fn apply(store: &mut Store, tidy: &Tidy, now_ms: i64) -> Result<Applied, MemoryError> {
    let mut applied = Applied::default();
    for cluster in &tidy.duplicates {
        let Some((keeper, rest)) = cluster.split_first() else { continue };
        for other in rest {
            memories::merge_into(store, keeper.id, &other.sources, other.importance, None, now_ms)?;
            memories::supersede_by(store, other.id, keeper.id, now_ms)?;
            applied.merged += 1;
        }
    }
    for memory in &tidy.stale {
        let current = memories::get(store, memory.id)?;
        if current.is_some_and(|m| m.status == Status::Active) {
            memories::forget(store, memory.id, now_ms)?;
            applied.forgotten += 1;
        }
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memories::{Kind, NewMemory, Tier, insert};

    const DAY: i64 = 86_400_000;

    #[test]
    fn stale_duplicate_and_superseded_memories_are_reported_then_tidied() {
        let mut store = Store::open_in_memory().expect("store");
        let mut add = |text: &str, importance: u8, at: i64| {
            let new = NewMemory {
                tier: Tier::L3,
                kind: Kind::Fact,
                text: text.into(),
                project_id: None,
                importance,
                sources: vec![format!("o{importance}")],
                origin: "remembered".into(),
                supersedes: None,
            };
            insert(&mut store, &new, at).expect("insert")
        };
        let old = add("The release script lives in scripts/release.sh", 4, 0);
        let keep = add("Builds run with cargo build --locked in CI", 8, 100 * DAY);
        let same = add("CI builds run with cargo build --locked", 5, 100 * DAY);
        // Alike in every word but the file they name: two memories, not a cluster.
        add("src/deploy.ts is read before every release", 6, 100 * DAY);
        add("src/api.ts is read before every release", 6, 100 * DAY);
        let settings = Settings::default();
        let tidy = plan(&store, &settings, 60, 100 * DAY).expect("plan");
        assert_eq!(tidy.stale.iter().map(|m| m.id).collect::<Vec<_>>(), [old]);
        let clusters: Vec<Vec<i64>> =
            tidy.duplicates.iter().map(|c| c.iter().map(|m| m.id).collect()).collect();
        assert_eq!(clusters, [[keep, same]]);
        let applied = apply(&mut store, &tidy, 101 * DAY).expect("apply");
        assert_eq!(applied, Applied { forgotten: 1, merged: 1 });
        let merged = memories::get(&store, same).expect("get").expect("same");
        assert_eq!((merged.status, merged.superseded_by), (Status::Superseded, Some(keep)));
        let kept = memories::get(&store, keep).expect("get").expect("keep");
        assert_eq!(kept.sources, ["o8", "o5"]);
        let again = plan(&store, &settings, 60, 101 * DAY).expect("plan");
        assert!(again.stale.is_empty() && again.duplicates.is_empty());
        assert_eq!(again.superseded.len(), 1);
    }
}
