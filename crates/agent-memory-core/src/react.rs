//! Reactions: the `[[reactions]]` of the configuration, run by the work pass (and so by serve's
//! worker) after it distils and promotes, once per item each one matches. This module owns the
//! matching, the record of what fired and how it went, and the item as an action receives it;
//! the actions themselves (a process, a line in a file, an HTTP request) are the caller's
//! [`Act`], so this crate keeps no sockets.
//!
//! Each reaction looks only at what landed after it was first seen: [`prepare`] runs at the
//! start of a pass and sets a new reaction's cursor to what is stored then, so adding one never
//! runs it over the whole history, and what that pass distils is the first it sees.
//!
//! Must not: run from the hook, or hand captured text to an action other than as data (the
//! JSON an [`Act`] receives).

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::ReactionConfig;
use crate::store::{Store, StoreError};

/// Runs one reaction's action with the item as JSON; `Err` says what went wrong, in words.
pub trait Act {
    fn act(&self, reaction: &ReactionConfig, item: &Value) -> Result<(), String>;
}

/// What one pass's reactions did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Actions run that succeeded.
    pub fired: usize,
    /// Actions run that failed or timed out (each is recorded and not run again).
    pub failed: usize,
    /// Reactions left out because their configuration cannot work, each with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unusable: Vec<String>,
}

/// The most items one reaction looks at in one pass, of each kind; the rest wait for the next.
const PER_PASS: i64 = 500;

/// Failed actions in a row after which a reaction waits for the next pass.
const FAILURES_BEFORE_PAUSE: usize = 3;

/// An observation or memory as a reaction matches it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    /// `o12` or `m3`.
    pub id: String,
    /// `observation` or `memory`.
    pub kind: &'static str,
    /// The observation's type, or the memory's kind.
    #[serde(rename = "type")]
    pub item_type: String,
    pub title: String,
    /// Everything its words may be matched in.
    #[serde(skip)]
    pub text: String,
    #[serde(skip)]
    pub concepts: Vec<String>,
    pub project: Option<String>,
    #[serde(skip)]
    pub project_key: Option<String>,
    pub agent: String,
    pub at: i64,
}

/// What keeps a reaction from running, if anything: a name, one action, and watched kinds
/// that exist.
pub fn unusable(reaction: &ReactionConfig, all: &[ReactionConfig]) -> Option<String> {
    let name = reaction.name.trim();
    if name.is_empty() {
        return Some("a [[reactions]] entry has no name; give it `name = \"…\"`".into());
    }
    if all.iter().filter(|r| r.name.trim() == name).count() > 1 {
        return Some(format!("two reactions are named {name:?}; give each its own name"));
    }
    let actions =
        [!reaction.run.is_empty(), !reaction.append.is_empty(), !reaction.post.is_empty()];
    if actions.iter().filter(|a| **a).count() != 1 {
        return Some(format!("reaction {name:?} needs exactly one of `run`, `append` and `post`"));
    }
    if let Some(kind) = reaction.on.iter().find(|k| !matches!(k.as_str(), "observation" | "memory"))
    {
        return Some(format!(
            "reaction {name:?} watches {kind:?}; `on` takes observation and memory"
        ));
    }
    let web = ["http://", "https://"].iter().any(|scheme| reaction.post.starts_with(scheme));
    if !reaction.post.is_empty() && !web {
        return Some(format!(
            "reaction {name:?} posts to {:?}, which is not an http or https URL",
            reaction.post
        ));
    }
    None
}

/// Whether `item` is one `reaction` watches.
pub fn matches(reaction: &ReactionConfig, item: &Item) -> bool {
    let any = |wanted: &[String], test: &dyn Fn(&str) -> bool| {
        wanted.is_empty() || wanted.iter().any(|w| test(w.trim()))
    };
    let text = item.text.to_lowercase();
    reaction.on.iter().any(|k| k == item.kind)
        && any(&reaction.types, &|t| t.eq_ignore_ascii_case(&item.item_type))
        && any(&reaction.concepts, &|c| item.concepts.iter().any(|i| i.eq_ignore_ascii_case(c)))
        && any(&reaction.words, &|w| !w.is_empty() && text.contains(&w.to_lowercase()))
        && any(&reaction.projects, &|p| {
            item.project.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(p))
                || item.project_key.as_deref() == Some(p)
        })
        && any(&reaction.agents, &|a| item.agent.eq_ignore_ascii_case(a))
}

/// Sets the cursor of every reaction seen for the first time to what is stored now. Run at
/// the start of a pass, so the pass's own new items are the first a new reaction sees.
pub fn prepare(store: &Store, reactions: &[ReactionConfig], now_ms: i64) -> Result<(), StoreError> {
    for reaction in reactions.iter().filter(|r| !r.name.trim().is_empty()) {
        store.conn().execute(
            "INSERT INTO reaction_cursors (reaction, observation_after, memory_since)
             VALUES (?1, (SELECT coalesce(max(id), 0) FROM observations), ?2)
             ON CONFLICT (reaction) DO NOTHING",
            params![reaction.name.trim(), now_ms],
        )?;
    }
    Ok(())
}

/// Runs every usable reaction over what landed since it last looked, once per matching item.
pub fn run(
    store: &Store,
    reactions: &[ReactionConfig],
    act: &dyn Act,
    now_ms: i64,
) -> Result<Report, StoreError> {
    let mut report = Report::default();
    for reaction in reactions {
        if let Some(why) = unusable(reaction, reactions) {
            report.unusable.push(why);
            continue;
        }
        let name = reaction.name.trim();
        let cursor: Option<(i64, i64)> = store
            .conn()
            .query_row(
                "SELECT observation_after, memory_since FROM reaction_cursors WHERE reaction = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        // Not prepared (a pass that began before the reaction existed): the next pass starts it.
        let Some((after, since)) = cursor else { continue };
        let watches = |kind: &str| reaction.on.iter().any(|k| k == kind);
        let observations =
            if watches("observation") { observations_after(store, after)? } else { Vec::new() };
        let memories = if watches("memory") { memories_since(store, since)? } else { Vec::new() };
        // The cursor moves over what was looked at; a reaction whose action keeps failing (a
        // command that hangs until its timeout, a server that is down) stops for this pass
        // after a few, so it cannot hold the pass for its whole backlog.
        let (mut next_after, mut next_since) = (after, since);
        let mut failing = 0;
        let items = observations
            .into_iter()
            .map(|(id, item)| (Some(id), None, item))
            .chain(memories.into_iter().map(|(at, item)| (None, Some(at), item)));
        for (observation, memory_at, item) in items {
            if failing >= FAILURES_BEFORE_PAUSE {
                tracing::warn!(
                    reaction = name,
                    "reaction paused until the next pass: its last actions failed"
                );
                break;
            }
            next_after = observation.unwrap_or(next_after);
            next_since = memory_at.unwrap_or(next_since);
            if !matches(reaction, &item) || fired(store, name, &item.id)? {
                continue;
            }
            let payload = payload(store, name, &item)?;
            let outcome = act.act(reaction, &payload);
            if let Err(why) = &outcome {
                tracing::warn!(reaction = name, item = %item.id, %why, "reaction failed");
            }
            store.conn().execute(
                "INSERT OR IGNORE INTO reactions_fired (reaction, item, at, ok, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    name,
                    item.id,
                    now_ms,
                    outcome.is_ok(),
                    outcome.as_ref().err().map(|w| crate::text::clip(w, 300)).unwrap_or_default()
                ],
            )?;
            match outcome {
                Ok(()) => {
                    report.fired += 1;
                    failing = 0;
                }
                Err(_) => {
                    report.failed += 1;
                    failing += 1;
                }
            }
        }
        store.conn().execute(
            "UPDATE reaction_cursors SET observation_after = ?2, memory_since = ?3 WHERE reaction = ?1",
            params![name, next_after, next_since],
        )?;
    }
    Ok(report)
}

/// The newest `limit` observations and active memories, newest first: what `reactions test`
/// matches against.
pub fn recent(store: &Store, limit: usize) -> Result<Vec<Item>, StoreError> {
    let mut items: Vec<Item> = Vec::new();
    let newest: i64 =
        store
            .conn()
            .query_row("SELECT coalesce(max(id), 0) FROM observations", [], |r| r.get(0))?;
    let from = (newest - limit as i64).max(0);
    items.extend(observations_after(store, from)?.into_iter().map(|(_, i)| i));
    let since: Option<i64> = store
        .conn()
        .query_row(
            "SELECT updated_at FROM memories WHERE status = 'active'
             ORDER BY updated_at DESC LIMIT 1 OFFSET ?1",
            [limit as i64 - 1],
            |r| r.get(0),
        )
        .optional()?;
    items.extend(memories_since(store, since.unwrap_or(0))?.into_iter().map(|(_, i)| i));
    items.sort_by_key(|item| std::cmp::Reverse(item.at));
    items.truncate(limit);
    Ok(items)
}

/// How reactions went since `since_ms`, for `status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Outcomes {
    pub fired: i64,
    pub failed: i64,
    /// The latest failure: the reaction, the item and what went wrong.
    pub last_failure: Option<String>,
}

pub fn outcomes(store: &Store, since_ms: i64) -> Result<Outcomes, StoreError> {
    outcomes_where(store, None, since_ms)
}

/// [`outcomes`] of one reaction.
pub fn outcomes_of(store: &Store, reaction: &str, since_ms: i64) -> Result<Outcomes, StoreError> {
    outcomes_where(store, Some(reaction), since_ms)
}

fn outcomes_where(
    store: &Store,
    reaction: Option<&str>,
    since_ms: i64,
) -> Result<Outcomes, StoreError> {
    let (fired, failed) = store.conn().query_row(
        "SELECT coalesce(sum(ok), 0), coalesce(sum(NOT ok), 0) FROM reactions_fired
         WHERE at >= ?1 AND (?2 IS NULL OR reaction = ?2)",
        params![since_ms, reaction],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let last_failure = store
        .conn()
        .query_row(
            "SELECT reaction, item, detail FROM reactions_fired
             WHERE NOT ok AND at >= ?1 AND (?2 IS NULL OR reaction = ?2)
             ORDER BY at DESC LIMIT 1",
            params![since_ms, reaction],
            |r| {
                let (name, item, detail): (String, String, String) =
                    (r.get(0)?, r.get(1)?, r.get(2)?);
                Ok(format!("{name} on {item}: {detail}"))
            },
        )
        .optional()?;
    Ok(Outcomes { fired, failed, last_failure })
}

fn fired(store: &Store, reaction: &str, item: &str) -> Result<bool, StoreError> {
    Ok(store.conn().query_row(
        "SELECT EXISTS (SELECT 1 FROM reactions_fired WHERE reaction = ?1 AND item = ?2)",
        params![reaction, item],
        |r| r.get(0),
    )?)
}

/// Observations after id `after`, oldest first, with their ids.
fn observations_after(store: &Store, after: i64) -> Result<Vec<(i64, Item)>, StoreError> {
    let mut stmt = store.conn().prepare_cached(
        "SELECT o.id, o.kind, o.title, o.subtitle, o.facts, o.narrative, o.concepts, p.name,
                p.key, o.agent, o.at
         FROM observations o LEFT JOIN projects p ON p.id = o.project_id
         WHERE o.id > ?1 ORDER BY o.id LIMIT ?2",
    )?;
    let list = |text: String| serde_json::from_str::<Vec<String>>(&text).unwrap_or_default();
    let rows = stmt.query_map(params![after, PER_PASS], |r| {
        let id: i64 = r.get(0)?;
        let title: String = r.get(2)?;
        let facts = list(r.get(4)?);
        let text = format!(
            "{title}\n{}\n{}\n{}",
            r.get::<_, String>(3)?,
            facts.join("\n"),
            r.get::<_, String>(5)?
        );
        Ok((
            id,
            Item {
                id: format!("o{id}"),
                kind: "observation",
                item_type: r.get(1)?,
                title,
                text,
                concepts: list(r.get(6)?),
                project: r.get(7)?,
                project_key: r.get(8)?,
                agent: r.get(9)?,
                at: r.get(10)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Active memories changed at or after `since`, oldest change first, with that time.
fn memories_since(store: &Store, since: i64) -> Result<Vec<(i64, Item)>, StoreError> {
    let mut stmt = store.conn().prepare_cached(
        "SELECT m.id, m.kind, m.text, p.name, p.key, m.origin, m.updated_at
         FROM memories m LEFT JOIN projects p ON p.id = m.project_id
         WHERE m.status = 'active' AND m.updated_at >= ?1 ORDER BY m.updated_at, m.id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![since, PER_PASS], |r| {
        let id: i64 = r.get(0)?;
        let text: String = r.get(2)?;
        let origin: String = r.get(5)?;
        let at: i64 = r.get(6)?;
        Ok((
            at,
            Item {
                id: format!("m{id}"),
                kind: "memory",
                item_type: r.get(1)?,
                title: text.clone(),
                text,
                concepts: Vec::new(),
                project: r.get(3)?,
                project_key: r.get(4)?,
                // `stated:hermes`: what the person told Hermes; else who made it.
                agent: origin.strip_prefix("stated:").unwrap_or(&origin).to_owned(),
                at,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The item as an action receives it: which reaction, what kind of item, and the item whole
/// (an observation as `show` gives it, a memory as `memories --json` does).
pub fn payload(store: &Store, reaction: &str, item: &Item) -> Result<Value, StoreError> {
    let number: i64 = item.id[1..].parse().unwrap_or_default();
    let whole = match item.kind {
        "observation" => serde_json::to_value(store.observation(number)?).unwrap_or_default(),
        _ => crate::store::memories::get(store, number)
            .ok()
            .flatten()
            .and_then(|m| serde_json::to_value(m).ok())
            .unwrap_or_default(),
    };
    let mut payload = json!({
        "reaction": reaction,
        "id": item.id,
        "kind": item.kind,
        "type": item.item_type,
        "title": item.title,
        "project": item.project,
        "agent": item.agent,
        "at": item.at,
    });
    if let Some(fields) = payload.as_object_mut() {
        fields.insert(item.kind.to_owned(), whole);
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    /// An action that fails every time and counts what it was handed.
    struct Failing(RefCell<Vec<String>>);

    impl Act for Failing {
        fn act(&self, _: &ReactionConfig, item: &Value) -> Result<(), String> {
            self.0.borrow_mut().push(item["id"].as_str().unwrap_or_default().to_owned());
            Err("exited with status 1".into())
        }
    }

    #[test]
    fn an_action_that_keeps_failing_waits_for_the_next_pass_and_runs_once_per_item() {
        let store = Store::open_in_memory().expect("store");
        let reaction = ReactionConfig {
            name: "fixes".into(),
            types: vec!["bugfix".into()],
            run: vec!["false".into()],
            ..ReactionConfig::default()
        };
        let reactions = [reaction];
        prepare(&store, &reactions, 0).expect("prepare");
        let mut rows = String::from(
            "INSERT INTO sessions (id, agent, source_id, started_at, last_event_at)
                 VALUES (1, 'codex', 'c1', 0, 0);",
        );
        for id in 1..=5 {
            rows.push_str(&format!(
                "INSERT INTO observations (id, session_id, agent, mode, kind, title, at, tokens,
                                           work_tokens, distiller, source_key)
                     VALUES ({id}, 1, 'codex', 'code', 'bugfix', 'Fix {id}', {id}, 5, 50,
                             'offline', 'k{id}');"
            ));
        }
        store.conn().execute_batch(&rows).expect("fixture");
        let act = Failing(RefCell::new(Vec::new()));
        let first = run(&store, &reactions, &act, 10).expect("run");
        assert_eq!((first.fired, first.failed), (0, FAILURES_BEFORE_PAUSE));
        assert_eq!(*act.0.borrow(), ["o1", "o2", "o3"]);
        // The next pass goes on from there, and no item is handed twice.
        run(&store, &reactions, &act, 20).expect("run");
        run(&store, &reactions, &act, 30).expect("run");
        assert_eq!(*act.0.borrow(), ["o1", "o2", "o3", "o4", "o5"]);
        let outcomes = outcomes(&store, 0).expect("outcomes");
        assert_eq!((outcomes.fired, outcomes.failed), (0, 5));
        assert!(outcomes.last_failure.is_some_and(|l| l.starts_with("fixes on o")));
    }
}
