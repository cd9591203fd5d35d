//! Browsing the store page by page, as the HTTP API and the viewer do: sessions, events,
//! observations, summaries and projects, newest first, with the same filters as search
//! (agent, project, type, dates), a page of session cards (each session with its summary and
//! its observations one line each, in three statements whatever the page's size), the newest
//! row ids (the live feed polls them), and events per day per agent (the health chart).
//!
//! Here is a filter and a page, give me rows. Must not: return private events, or
//! observations distilled from one: what this module lists may reach a browser. Capture has
//! already redacted secrets; privacy is enforced here, in the SQL, so no caller can forget it.

use std::collections::HashSet;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Result, Store};

/// The parameters of [`filter_sql`] and the limit, in order.
macro_rules! bind {
    ($f:expr) => {
        params![
            $f.agent,
            $f.project,
            $f.item_type,
            $f.since_ms,
            $f.until_ms,
            $f.after_id,
            $f.before_id,
            $f.session_id,
            $f.limit as i64
        ]
    };
}

/// Which rows a listing returns: every filter optional, newest first.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub agent: Option<String>,
    /// A project key, name or root.
    pub project: Option<String>,
    /// An observation type or an event kind.
    pub item_type: Option<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Only rows with an id above this (the live feed's "what is new").
    pub after_id: Option<i64>,
    /// Only rows with an id below this (the next page).
    pub before_id: Option<i64>,
    /// Only this session (its row id).
    pub session_id: Option<i64>,
    pub limit: usize,
}

/// A session, with what it holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    pub id: i64,
    pub agent: String,
    /// The agent's own id of the session.
    pub source_id: String,
    pub project: Option<String>,
    pub project_key: Option<String>,
    pub cwd: Option<String>,
    pub title: Option<String>,
    /// The branch the hook saw its checkout on, when known.
    pub branch: Option<String>,
    pub started_at_ms: i64,
    pub last_event_at_ms: i64,
    pub ended_at_ms: Option<i64>,
    pub events: i64,
    pub observations: i64,
    pub summary_id: Option<i64>,
}

/// A session as the viewer's home shows it: who worked where, what was asked, done and
/// learned, its observations one line each, and how many events it holds (folded away).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionCard {
    pub id: i64,
    pub agent: String,
    /// The agent's own id of the session.
    pub source_id: String,
    pub project: Option<String>,
    pub project_key: Option<String>,
    /// The branch the hook saw its checkout on, when known.
    pub branch: Option<String>,
    pub started_at_ms: i64,
    pub last_event_at_ms: i64,
    pub ended_at_ms: Option<i64>,
    /// Every event it recorded (its private ones are counted, never listed).
    pub events: i64,
    /// Its observations that may be shown, of the type asked for when one is.
    pub observations: i64,
    pub summary: Option<CardSummary>,
    /// Its first prompt that may be shown, at most [`PROMPT_CHARS`] characters: what was asked
    /// when no summary says it yet.
    pub first_prompt: Option<String>,
    /// Its first observations, oldest first, at most as many as the page asked for.
    pub lines: Vec<ObservationLine>,
}

/// What a session's summary says on its card.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardSummary {
    pub id: i64,
    pub request: String,
    pub completed: Vec<String>,
    pub learned: Vec<String>,
    pub at_ms: i64,
}

/// One observation as one line of a session card.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObservationLine {
    pub id: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    /// The mode that named its type, whose emoji marks it.
    pub mode: String,
    pub at_ms: i64,
}

/// The most characters of a first prompt a card carries.
pub const PROMPT_CHARS: usize = 400;

/// An event as the viewer shows it (never a private one).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRow {
    pub id: i64,
    pub session_id: i64,
    pub agent: String,
    pub project: Option<String>,
    pub kind: String,
    pub tool: Option<String>,
    pub summary: String,
    pub body: String,
    pub files: Vec<String>,
    pub at_ms: i64,
}

/// One line of an observation list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObservationRow {
    pub id: i64,
    pub session_id: i64,
    pub agent: String,
    pub project: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub subtitle: String,
    pub at_ms: i64,
    pub tokens: i64,
}

/// One line of a summary list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    pub id: i64,
    pub session_id: i64,
    pub agent: String,
    pub project: Option<String>,
    pub request: String,
    pub completed: Vec<String>,
    pub next_steps: Vec<String>,
    pub at_ms: i64,
    pub tokens: i64,
}

/// A project and how much is remembered about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectRow {
    pub key: String,
    pub name: String,
    pub root: String,
    pub sessions: i64,
    pub observations: i64,
    pub last_event_at_ms: Option<i64>,
}

/// The newest row id of each table the live feed follows; a change means something landed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Marks {
    pub events: i64,
    pub observations: i64,
    pub summaries: i64,
}

/// Events one agent recorded on one day (UTC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DayCount {
    pub day: String,
    pub agent: String,
    pub events: i64,
}

/// The SQL that keeps an observation distilled from a private event out of every listing.
const NOT_PRIVATE_OBSERVATION: &str = "NOT EXISTS (SELECT 1 FROM observation_sources os \
     JOIN events pe ON pe.id = os.event_id \
     WHERE os.observation_id = o.id AND pe.sensitivity = 'private')";

/// The shared filter clause; `t` is the table's alias, parameters ?1..?8 as [`bind`] orders them.
fn filter_sql(t: &str, type_column: Option<&str>) -> String {
    let type_clause = match type_column {
        Some(column) => format!("AND (?3 IS NULL OR {t}.{column} = ?3)"),
        None => String::new(),
    };
    format!(
        "(?1 IS NULL OR {t}.agent = ?1)
         AND (?2 IS NULL OR p.key = ?2 OR p.name = ?2 OR p.root = ?2)
         {type_clause}
         AND (?4 IS NULL OR {t}.at >= ?4) AND (?5 IS NULL OR {t}.at < ?5)
         AND (?6 IS NULL OR {t}.id > ?6) AND (?7 IS NULL OR {t}.id < ?7)
         AND (?8 IS NULL OR {t}.session_id = ?8)"
    )
}

fn list(text: String) -> Vec<String> {
    serde_json::from_str(&text).unwrap_or_default()
}

impl Store {
    /// Sessions, the most recently active first.
    pub fn list_sessions(&self, f: &Listing) -> Result<Vec<SessionRow>> {
        let sql = "SELECT s.id, s.agent, s.source_id, p.name, p.key, s.cwd, s.title, s.started_at,
                    s.last_event_at, s.ended_at, s.branch,
                    (SELECT count(*) FROM events e WHERE e.session_id = s.id),
                    (SELECT count(*) FROM observations o WHERE o.session_id = s.id),
                    (SELECT m.id FROM summaries m WHERE m.session_id = s.id)
             FROM sessions s LEFT JOIN projects p ON p.id = s.project_id
             WHERE (?1 IS NULL OR s.agent = ?1)
               AND (?2 IS NULL OR p.key = ?2 OR p.name = ?2 OR p.root = ?2)
               AND (?3 IS NULL OR s.last_event_at >= ?3) AND (?4 IS NULL OR s.started_at < ?4)
               AND (?5 IS NULL OR s.id < ?5) AND (?6 IS NULL OR s.id = ?6)
             ORDER BY s.last_event_at DESC, s.id DESC LIMIT ?7";
        let mut stmt = self.conn().prepare_cached(sql)?;
        let rows = stmt.query_map(
            params![
                f.agent,
                f.project,
                f.since_ms,
                f.until_ms,
                f.before_id,
                f.session_id,
                f.limit as i64
            ],
            |r| {
                Ok(SessionRow {
                    id: r.get(0)?,
                    agent: r.get(1)?,
                    source_id: r.get(2)?,
                    project: r.get(3)?,
                    project_key: r.get(4)?,
                    cwd: r.get(5)?,
                    title: r.get(6)?,
                    started_at_ms: r.get(7)?,
                    last_event_at_ms: r.get(8)?,
                    ended_at_ms: r.get(9)?,
                    branch: r.get(10)?,
                    events: r.get(11)?,
                    observations: r.get(12)?,
                    summary_id: r.get(13)?,
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One session by its row id.
    pub fn session_row(&self, id: i64) -> Result<Option<SessionRow>> {
        let filter = Listing { session_id: Some(id), limit: 1, ..Listing::default() };
        Ok(self.list_sessions(&filter)?.into_iter().next())
    }

    /// A page of session cards, the most recently started first: `f.before_id` is the last
    /// card of the previous page (its session id), `f.item_type` an observation type (only
    /// sessions with one, and only those lines), `f.since_ms` keeps the sessions active since,
    /// `f.session_id` asks for one card. Three statements, whatever the page's size: the
    /// sessions, then their summaries, then at most `lines` observations of each.
    pub fn session_cards(&self, f: &Listing, lines: usize) -> Result<Vec<SessionCard>> {
        let sql = format!(
            "SELECT s.id, s.agent, s.source_id, p.name, p.key, s.branch, s.started_at,
                    s.last_event_at, s.ended_at,
                    (SELECT count(*) FROM events e WHERE e.session_id = s.id),
                    (SELECT count(*) FROM observations o
                     WHERE o.session_id = s.id AND (?3 IS NULL OR o.kind = ?3)
                       AND {NOT_PRIVATE_OBSERVATION}),
                    (SELECT substr(e.body, 1, {PROMPT_CHARS}) FROM events e
                     WHERE e.session_id = s.id AND e.kind = 'prompt'
                       AND e.sensitivity != 'private'
                     ORDER BY e.id LIMIT 1)
             FROM sessions s LEFT JOIN projects p ON p.id = s.project_id
             WHERE (?1 IS NULL OR s.agent = ?1)
               AND (?2 IS NULL OR p.key = ?2 OR p.name = ?2 OR p.root = ?2)
               AND (?3 IS NULL OR EXISTS (SELECT 1 FROM observations o
                    WHERE o.session_id = s.id AND o.kind = ?3 AND {NOT_PRIVATE_OBSERVATION}))
               AND (?4 IS NULL OR s.last_event_at >= ?4) AND (?5 IS NULL OR s.started_at < ?5)
               AND (?6 IS NULL OR (s.started_at, s.id) <
                    (SELECT c.started_at, c.id FROM sessions c WHERE c.id = ?6))
               AND (?7 IS NULL OR s.id = ?7)
             ORDER BY s.started_at DESC, s.id DESC LIMIT ?8"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map(
            params![
                f.agent,
                f.project,
                f.item_type,
                f.since_ms,
                f.until_ms,
                f.before_id,
                f.session_id,
                f.limit as i64
            ],
            |r| {
                Ok(SessionCard {
                    id: r.get(0)?,
                    agent: r.get(1)?,
                    source_id: r.get(2)?,
                    project: r.get(3)?,
                    project_key: r.get(4)?,
                    branch: r.get(5)?,
                    started_at_ms: r.get(6)?,
                    last_event_at_ms: r.get(7)?,
                    ended_at_ms: r.get(8)?,
                    events: r.get(9)?,
                    observations: r.get(10)?,
                    first_prompt: r
                        .get::<_, Option<String>>(11)?
                        .map(|p| p.trim().to_owned())
                        .filter(|p| !p.is_empty()),
                    summary: None,
                    lines: Vec::new(),
                })
            },
        )?;
        let mut cards: Vec<SessionCard> = rows.collect::<rusqlite::Result<_>>()?;
        if cards.is_empty() {
            return Ok(cards);
        }
        let at: std::collections::HashMap<i64, usize> =
            cards.iter().enumerate().map(|(n, c)| (c.id, n)).collect();
        let ids = serde_json::to_string(&cards.iter().map(|c| c.id).collect::<Vec<_>>())
            .unwrap_or_else(|_| "[]".into());

        let mut stmt = self.conn().prepare_cached(
            "SELECT m.session_id, m.id, m.request, m.completed, m.learned, m.at
             FROM summaries m WHERE m.session_id IN (SELECT value FROM json_each(?1))",
        )?;
        let mut rows = stmt.query([&ids])?;
        while let Some(r) = rows.next()? {
            let session: i64 = r.get(0)?;
            if let Some(&n) = at.get(&session) {
                cards[n].summary = Some(CardSummary {
                    id: r.get(1)?,
                    request: r.get(2)?,
                    completed: list(r.get(3)?),
                    learned: list(r.get(4)?),
                    at_ms: r.get(5)?,
                });
            }
        }

        if lines > 0 {
            let sql = format!(
                "SELECT session_id, id, kind, title, mode, at FROM (
                     SELECT o.session_id, o.id, o.kind, o.title, o.mode, o.at,
                            row_number() OVER (PARTITION BY o.session_id ORDER BY o.id) AS n
                     FROM observations o
                     WHERE o.session_id IN (SELECT value FROM json_each(?1))
                       AND (?2 IS NULL OR o.kind = ?2) AND {NOT_PRIVATE_OBSERVATION})
                 WHERE n <= ?3 ORDER BY session_id, id"
            );
            let mut stmt = self.conn().prepare_cached(&sql)?;
            let mut rows = stmt.query(params![ids, f.item_type, lines as i64])?;
            while let Some(r) = rows.next()? {
                let session: i64 = r.get(0)?;
                if let Some(&n) = at.get(&session) {
                    cards[n].lines.push(ObservationLine {
                        id: r.get(1)?,
                        kind: r.get(2)?,
                        title: r.get(3)?,
                        mode: r.get(4)?,
                        at_ms: r.get(5)?,
                    });
                }
            }
        }
        Ok(cards)
    }

    /// The agents that recorded a session, by name.
    pub fn session_agents(&self) -> Result<Vec<String>> {
        let mut stmt =
            self.conn().prepare_cached("SELECT DISTINCT agent FROM sessions ORDER BY agent")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Events, newest first; private events are never listed.
    pub fn list_events(&self, f: &Listing) -> Result<Vec<EventRow>> {
        let sql = format!(
            "SELECT e.id, e.session_id, e.agent, p.name, e.kind, e.tool, e.summary, e.body,
                    e.files, e.at
             FROM events e LEFT JOIN projects p ON p.id = e.project_id
             WHERE e.sensitivity != 'private' AND {}
             ORDER BY e.id DESC LIMIT ?9",
            filter_sql("e", Some("kind"))
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map(bind!(f), |r| {
            Ok(EventRow {
                id: r.get(0)?,
                session_id: r.get(1)?,
                agent: r.get(2)?,
                project: r.get(3)?,
                kind: r.get(4)?,
                tool: r.get(5)?,
                summary: r.get(6)?,
                body: r.get(7)?,
                files: list(r.get(8)?),
                at_ms: r.get(9)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Observations, newest first; none distilled from a private event.
    pub fn list_observations(&self, f: &Listing) -> Result<Vec<ObservationRow>> {
        let sql = format!(
            "SELECT o.id, o.session_id, o.agent, p.name, o.kind, o.title, o.subtitle, o.at,
                    o.tokens
             FROM observations o LEFT JOIN projects p ON p.id = o.project_id
             WHERE {NOT_PRIVATE_OBSERVATION} AND {}
             ORDER BY o.id DESC LIMIT ?9",
            filter_sql("o", Some("kind"))
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map(bind!(f), |r| {
            Ok(ObservationRow {
                id: r.get(0)?,
                session_id: r.get(1)?,
                agent: r.get(2)?,
                project: r.get(3)?,
                kind: r.get(4)?,
                title: r.get(5)?,
                subtitle: r.get(6)?,
                at_ms: r.get(7)?,
                tokens: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Summaries, newest first (a summary covers a whole session; type filters do not apply).
    pub fn list_summaries(&self, f: &Listing) -> Result<Vec<SummaryRow>> {
        let sql = format!(
            "SELECT m.id, m.session_id, m.agent, p.name, m.request, m.completed, m.next_steps,
                    m.at, m.tokens
             FROM summaries m LEFT JOIN projects p ON p.id = m.project_id
             WHERE (?3 IS NULL OR ?3 = 'summary') AND {}
             ORDER BY m.id DESC LIMIT ?9",
            filter_sql("m", None)
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map(bind!(f), |r| {
            Ok(SummaryRow {
                id: r.get(0)?,
                session_id: r.get(1)?,
                agent: r.get(2)?,
                project: r.get(3)?,
                request: r.get(4)?,
                completed: list(r.get(5)?),
                next_steps: list(r.get(6)?),
                at_ms: r.get(7)?,
                tokens: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every project, the most recently active first.
    pub fn list_projects(&self) -> Result<Vec<ProjectRow>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT p.key, p.name, p.root,
                    (SELECT count(*) FROM sessions s WHERE s.project_id = p.id),
                    coalesce((SELECT t.observations FROM project_totals t WHERE t.project_id = p.id), 0),
                    (SELECT max(s.last_event_at) FROM sessions s WHERE s.project_id = p.id)
             FROM projects p ORDER BY 6 DESC, p.name",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ProjectRow {
                key: r.get(0)?,
                name: r.get(1)?,
                root: r.get(2)?,
                sessions: r.get(3)?,
                observations: r.get(4)?,
                last_event_at_ms: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The newest row ids: three reads of a b-tree's last page each, cheap enough to poll.
    pub fn marks(&self) -> Result<Marks> {
        let max = |table: &str| -> Result<i64> {
            Ok(self.conn().query_row(
                &format!("SELECT coalesce(max(id), 0) FROM {table}"),
                [],
                |r| r.get(0),
            )?)
        };
        Ok(Marks {
            events: max("events")?,
            observations: max("observations")?,
            summaries: max("summaries")?,
        })
    }

    /// Events per UTC day and agent since `since_ms`, oldest day first.
    pub fn events_per_day(&self, since_ms: i64) -> Result<Vec<DayCount>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT strftime('%Y-%m-%d', at / 1000, 'unixepoch') AS day, agent, count(*)
             FROM events WHERE at >= ?1 GROUP BY day, agent ORDER BY day, agent",
        )?;
        let rows = stmt.query_map([since_ms], |r| {
            Ok(DayCount { day: r.get(0)?, agent: r.get(1)?, events: r.get(2)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether an item must stay out of the browser: a private event, or an observation
    /// distilled from one. Unknown items are not private (the caller reports them missing).
    pub fn is_private(&self, kind: char, id: i64) -> Result<bool> {
        Ok(!self.private_among(&[(kind, id)])?.is_empty())
    }

    /// Which of `items` ([`Store::is_private`]) must stay out of the browser, one statement
    /// per kind: a search asks this of every hit it returns.
    pub fn private_among(&self, items: &[(char, i64)]) -> Result<HashSet<(char, i64)>> {
        let mut private = HashSet::new();
        for kind in ['e', 'o'] {
            let ids: Vec<i64> =
                items.iter().filter(|(k, _)| *k == kind).map(|&(_, id)| id).collect();
            if ids.is_empty() {
                continue;
            }
            let sql = match kind {
                'e' => {
                    "SELECT id FROM events
                     WHERE id IN (SELECT value FROM json_each(?1)) AND sensitivity = 'private'"
                }
                _ => {
                    "SELECT DISTINCT os.observation_id
                     FROM observation_sources os JOIN events e ON e.id = os.event_id
                     WHERE os.observation_id IN (SELECT value FROM json_each(?1))
                       AND e.sensitivity = 'private'"
                }
            };
            let ids = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into());
            let mut stmt = self.conn().prepare_cached(sql)?;
            for id in stmt.query_map([ids], |r| r.get::<_, i64>(0))? {
                private.insert((kind, id?));
            }
        }
        Ok(private)
    }

    /// Whether a project with this key, name or root is stored.
    pub fn has_project(&self, key_name_or_root: &str) -> Result<bool> {
        self.exists(
            "SELECT 1 FROM projects WHERE key = ?1 OR name = ?1 OR root = ?1 LIMIT 1",
            key_name_or_root,
        )
    }

    /// Whether any session of this agent (its canonical name) is stored.
    pub fn has_agent(&self, agent: &str) -> Result<bool> {
        self.exists("SELECT 1 FROM sessions WHERE agent = ?1 LIMIT 1", agent)
    }

    /// Whether any observation of this type is stored. Not indexed: a fallback for types the
    /// configured mode does not name, so it scans observations, never events.
    pub fn has_observation_type(&self, item_type: &str) -> Result<bool> {
        self.exists("SELECT 1 FROM observations WHERE kind = ?1 LIMIT 1", item_type)
    }

    fn exists(&self, sql: &str, value: &str) -> Result<bool> {
        let mut stmt = self.conn().prepare_cached(sql)?;
        Ok(stmt.query_row([value], |_| Ok(())).optional()?.is_some())
    }

    /// The row id of a session by its agent's own id, the form observations and summaries
    /// name it by.
    pub fn session_row_id(&self, agent: &str, source_id: &str) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id FROM sessions WHERE agent = ?1 AND source_id = ?2",
                params![agent, source_id],
                |r| r.get(0),
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_store_lists_nothing_and_marks_zero() {
        let store = Store::open_in_memory().expect("store");
        let all = Listing { limit: 10, ..Listing::default() };
        assert!(store.list_sessions(&all).expect("sessions").is_empty());
        assert!(store.list_events(&all).expect("events").is_empty());
        assert!(store.list_observations(&all).expect("observations").is_empty());
        assert!(store.list_summaries(&all).expect("summaries").is_empty());
        assert!(store.list_projects().expect("projects").is_empty());
        assert_eq!(store.marks().expect("marks"), Marks::default());
        assert!(store.events_per_day(0).expect("days").is_empty());
        assert!(!store.is_private('e', 1).expect("private"));
    }

    #[test]
    fn private_items_are_the_private_events_and_what_was_distilled_from_them() {
        let store = Store::open_in_memory().expect("store");
        store
            .conn()
            .execute_batch(
                "INSERT INTO sessions (id, agent, source_id, started_at, last_event_at)
                 VALUES (1, 'codex', 's1', 0, 0);
                 INSERT INTO events (id, uid, session_id, agent, kind, source_event, at, summary,
                                     sensitivity, content_hash)
                 VALUES (1, 'u1', 1, 'codex', 'tool', 'PostToolUse', 1, 'Read .env', 'private', 'h1'),
                        (2, 'u2', 1, 'codex', 'tool', 'PostToolUse', 2, 'Read a.rs', 'normal', 'h2');
                 INSERT INTO observations (id, session_id, agent, mode, kind, title, at, tokens,
                                           work_tokens, distiller, source_key)
                 VALUES (1, 1, 'codex', 'code', 'discovery', 'from both', 3, 1, 1, 'offline', 'k1'),
                        (2, 1, 'codex', 'code', 'discovery', 'from a.rs', 4, 1, 1, 'offline', 'k2');
                 INSERT INTO observation_sources (observation_id, event_id)
                 VALUES (1, 1), (1, 2), (2, 2);",
            )
            .expect("rows");
        let asked = [('e', 1), ('e', 2), ('o', 1), ('o', 2), ('s', 1), ('e', 99)];
        let private = store.private_among(&asked).expect("private");
        assert_eq!(private, HashSet::from([('e', 1), ('o', 1)]));
        for (kind, id) in asked {
            assert_eq!(store.is_private(kind, id).expect("one"), private.contains(&(kind, id)));
        }
    }
    #[test]
    fn session_cards_page_by_start_with_their_summary_and_lines() {
        let store = Store::open_in_memory().expect("store");
        store
            .conn()
            .execute_batch(
                "INSERT INTO sessions (id, agent, source_id, started_at, last_event_at, branch)
                 VALUES (1, 'codex', 'old', 10, 90, 'main'), (2, 'claude-code', 'mid', 20, 30, NULL),
                        (3, 'codex', 'new', 40, 50, NULL);
                 INSERT INTO events (id, uid, session_id, agent, kind, source_event, at, summary,
                                     body, sensitivity, content_hash)
                 VALUES (1, 'u1', 1, 'codex', 'prompt', 'UserPromptSubmit', 11, 'Prompt: read .env',
                         'read .env', 'private', 'h1'),
                        (2, 'u2', 1, 'codex', 'prompt', 'UserPromptSubmit', 12, 'Prompt: fix it',
                         'fix the parser', 'normal', 'h2'),
                        (3, 'u3', 2, 'claude-code', 'tool_use', 'PostToolUse', 21, 'Bash: ls', '',
                         'normal', 'h3');
                 INSERT INTO observations (id, session_id, agent, mode, kind, title, at, tokens,
                                           work_tokens, distiller, source_key)
                 VALUES (1, 1, 'codex', 'code', 'bugfix', 'from the secret', 13, 1, 1, 'offline', 'k1'),
                        (2, 1, 'codex', 'code', 'bugfix', 'parser fixed', 14, 1, 1, 'offline', 'k2'),
                        (3, 1, 'codex', 'code', 'discovery', 'depth is read', 15, 1, 1, 'offline', 'k3'),
                        (4, 1, 'codex', 'code', 'discovery', 'tabs too', 16, 1, 1, 'offline', 'k4'),
                        (5, 2, 'claude-code', 'code', 'discovery', 'ls works', 22, 1, 1, 'offline', 'k5');
                 INSERT INTO observation_sources (observation_id, event_id) VALUES (1, 1), (2, 2);
                 INSERT INTO summaries (id, session_id, agent, mode, request, completed, learned, at,
                                        through_event_id, tokens, work_tokens, distiller)
                 VALUES (1, 1, 'codex', 'code', 'fix the parser', '[\"fixed it\"]', '[\"depth\"]', 17,
                         2, 1, 1, 'offline');",
            )
            .expect("rows");
        let page = |f: Listing| store.session_cards(&f, 2).expect("cards");
        let ids = |cards: &[SessionCard]| cards.iter().map(|c| c.id).collect::<Vec<_>>();

        // The most recently started first, a page at a time after the last card shown.
        let first = page(Listing { limit: 2, ..Listing::default() });
        assert_eq!(ids(&first), [3, 2]);
        assert_eq!(ids(&page(Listing { limit: 2, before_id: Some(2), ..Listing::default() })), [1]);

        // A card: its summary, its first prompt that may be shown, at most two lines of what
        // may be shown (nothing distilled from a private event), and its counts.
        let old = &page(Listing { session_id: Some(1), limit: 1, ..Listing::default() })[0];
        assert_eq!(old.first_prompt.as_deref(), Some("fix the parser"));
        assert_eq!(old.branch.as_deref(), Some("main"));
        let summary = old.summary.as_ref().expect("summary");
        assert_eq!(
            (summary.completed.as_slice(), summary.learned.as_slice()),
            (&["fixed it".to_owned()][..], &["depth".to_owned()][..])
        );
        let titles: Vec<&str> = old.lines.iter().map(|l| l.title.as_str()).collect();
        assert_eq!(titles, ["parser fixed", "depth is read"]);
        assert_eq!((old.observations, old.events), (3, 2));
        assert!(first[0].summary.is_none() && first[0].lines.is_empty());

        // A type keeps the sessions with one, and only those lines.
        let fixes =
            page(Listing { item_type: Some("bugfix".into()), limit: 10, ..Listing::default() });
        assert_eq!(ids(&fixes), [1]);
        assert_eq!((fixes[0].observations, fixes[0].lines.len()), (1, 1));
        // Agent and time: sessions active since.
        let codex = page(Listing {
            agent: Some("codex".into()),
            since_ms: Some(60),
            limit: 10,
            ..Listing::default()
        });
        assert_eq!(ids(&codex), [1]);
        assert_eq!(store.session_agents().expect("agents"), ["claude-code", "codex"]);
    }
}
