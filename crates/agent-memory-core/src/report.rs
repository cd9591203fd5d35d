//! The story of a project week by week (`agent-memory report`, which the timeline skill that
//! `install` writes builds on): its observations grouped by the week they happened in (ISO
//! weeks, in the local time zone) and by what they were (built, fixed, decided, changed,
//! learned), with what its sessions' summaries say was learned and who worked in it.
//!
//! Must not: write; the report is read from what the work pass distilled.

use std::collections::BTreeMap;

use jiff::Timestamp;
use rusqlite::params;
use serde::Serialize;

use crate::store::{Store, StoreError};

/// One week of a project.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Week {
    /// `2026-W49`.
    pub week: String,
    /// Its Monday, `2026-11-30`.
    pub starts: String,
    /// Sessions that worked in the project that week, and per agent.
    pub sessions: i64,
    pub agents: Vec<(String, i64)>,
    pub sections: Vec<Section>,
}

/// What happened in one way in a week: `built`, `fixed`, `decided`…
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub heading: String,
    pub items: Vec<Entry>,
}

/// One observation (`o12`, its title) or one lesson of a summary (`s3`, the lesson).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    pub id: String,
    pub text: String,
    pub agent: String,
    pub at: i64,
}

/// The headings in the order a report gives them, for the code mode's types; a type of
/// another mode is a heading of its own after these.
const ORDER: &[&str] = &["built", "fixed", "decided", "changed", "learned", "security"];

/// The heading an observation type goes under.
fn heading(kind: &str) -> String {
    match kind {
        "feature" => "built",
        "bugfix" => "fixed",
        "decision" => "decided",
        "refactor" | "change" => "changed",
        "discovery" => "learned",
        "security_alert" | "security_note" => "security",
        other => return other.replace('_', " "),
    }
    .to_owned()
}

/// The id and name of the project stored under `value`: its key, else its root, else its name.
pub fn project(store: &Store, value: &str) -> Result<Option<(i64, String)>, StoreError> {
    use rusqlite::OptionalExtension;
    Ok(store
        .conn()
        .query_row(
            "SELECT id, name FROM projects WHERE key = ?1 OR root = ?1 OR name = ?1
             ORDER BY key = ?1 DESC, root = ?1 DESC, id LIMIT 1",
            [value],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// The weeks of `project_id` (a project's id; `None`: every project) from `since_ms` on,
/// oldest first; weeks with nothing distilled are left out.
pub fn weeks(
    store: &Store,
    project_id: Option<i64>,
    since_ms: i64,
) -> Result<Vec<Week>, StoreError> {
    let mut by_week: BTreeMap<String, Week> = BTreeMap::new();
    let conn = store.conn();
    let mut stmt = conn.prepare(
        "SELECT o.id, o.kind, o.title, o.agent, o.at FROM observations o
         WHERE (?1 IS NULL OR o.project_id = ?1) AND o.at >= ?2 ORDER BY o.at, o.id",
    )?;
    let rows = stmt.query_map(params![project_id, since_ms], |r| {
        let id: i64 = r.get(0)?;
        let kind: String = r.get(1)?;
        let entry =
            Entry { id: format!("o{id}"), text: r.get(2)?, agent: r.get(3)?, at: r.get(4)? };
        Ok((heading(&kind), entry))
    })?;
    for row in rows {
        let (heading, entry) = row?;
        add(week_at(&mut by_week, entry.at), heading, entry);
    }
    let mut stmt = conn.prepare(
        "SELECT x.id, x.learned, x.agent, x.at FROM summaries x
         WHERE (?1 IS NULL OR x.project_id = ?1) AND x.at >= ?2 ORDER BY x.at, x.id",
    )?;
    let rows = stmt.query_map(params![project_id, since_ms], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
        ))
    })?;
    for row in rows {
        let (id, learned, agent, at) = row?;
        let learned: Vec<String> = serde_json::from_str(&learned).unwrap_or_default();
        for lesson in learned {
            let entry = Entry { id: format!("s{id}"), text: lesson, agent: agent.clone(), at };
            add(week_at(&mut by_week, at), "learned".to_owned(), entry);
        }
    }
    // Who worked in the project, counted in the weeks that have something to tell.
    let mut stmt = conn.prepare(
        "SELECT agent, started_at FROM sessions
         WHERE (?1 IS NULL OR project_id = ?1) AND last_event_at >= ?2",
    )?;
    let rows = stmt.query_map(params![project_id, since_ms], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
    })?;
    for row in rows {
        let (agent, started) = row?;
        let (week, _) = iso_week(started.max(since_ms));
        let Some(week) = by_week.get_mut(&week) else { continue };
        week.sessions += 1;
        match week.agents.iter_mut().find(|(a, _)| *a == agent) {
            Some((_, n)) => *n += 1,
            None => week.agents.push((agent, 1)),
        }
    }
    let rank = |h: &str| ORDER.iter().position(|o| *o == h).unwrap_or(ORDER.len());
    let mut weeks: Vec<Week> = by_week.into_values().collect();
    for week in &mut weeks {
        week.sections.sort_by(|a, b| {
            rank(&a.heading).cmp(&rank(&b.heading)).then(a.heading.cmp(&b.heading))
        });
        week.agents.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    Ok(weeks)
}

/// The week `at` falls in, made when first needed.
fn week_at(by_week: &mut BTreeMap<String, Week>, at: i64) -> &mut Week {
    let (week, starts) = iso_week(at);
    by_week.entry(week.clone()).or_insert_with(|| Week {
        week,
        starts,
        sessions: 0,
        agents: Vec::new(),
        sections: Vec::new(),
    })
}

fn add(week: &mut Week, heading: String, entry: Entry) {
    match week.sections.iter_mut().find(|s| s.heading == heading) {
        Some(section) => section.items.push(entry),
        None => week.sections.push(Section { heading, items: vec![entry] }),
    }
}

/// The ISO week of `ms` in the local time zone (`2026-W49`) and its Monday (`2026-11-30`).
fn iso_week(ms: i64) -> (String, String) {
    let Ok(ts) = Timestamp::from_millisecond(ms) else { return ("?".into(), "?".into()) };
    let date = ts.to_zoned_datetime(crate::time::local_zone()).date();
    let iso = date.iso_week_date();
    let monday = iso.first_of_week().map(|d| d.to_string()).unwrap_or_default();
    (format!("{}-W{:02}", iso.year(), iso.week()), monday)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_follow_what_was_done() {
        assert_eq!(heading("feature"), "built");
        assert_eq!(heading("bugfix"), "fixed");
        assert_eq!(heading("decision"), "decided");
        assert_eq!(heading("action_item"), "action item");
        // 2026-12-07 is a Monday, in ISO week 50 (UTC; near midnight the local zone may
        // move it a day, never out of the week's form).
        let (week, monday) = iso_week(1_796_601_600_000);
        assert!(week.starts_with("2026-W"), "{week}");
        assert_eq!(monday.len(), 10, "{monday}");
    }
}
