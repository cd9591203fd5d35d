//! Every injection on record: each time context is handed to an agent, one row says when, to
//! which agent and session, in which project, through which channel (the session-start
//! briefing, prompt-time recall, a file's context, the MCP `briefing` tool), the items it held
//! with their tokens, and how many candidates the budget left out.
//!
//! Here is what an answer handed, write it in one short transaction; here is a filter, give me
//! the injections newest first; here is an item, when was it last handed and to whom. And the
//! one question promotion asks ([`Store::echoes`]): was a statement said in a session that had
//! been handed the memory it repeats, with no tool use behind it?
//!
//! Must not: decide what is handed (that is `inject`), or prune from the hook: the work pass
//! keeps the table bounded ([`Store::prune_injections`]).

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Result, Store};

/// How context reached an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Channel {
    /// The session-start briefing, or the opening briefing at the first prompt of an agent
    /// without a session-start slot.
    #[serde(rename = "briefing")]
    Briefing,
    /// Prompt-time recall, including the recent work of a project a prompt names.
    #[serde(rename = "recall")]
    Recall,
    /// What earlier sessions did with a file the agent reads.
    #[serde(rename = "file")]
    File,
    /// The briefing an MCP client asked for with the `briefing` tool.
    #[serde(rename = "mcp-briefing")]
    McpBriefing,
}

impl Channel {
    /// As the `channel` column and `agent-memory log` name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Briefing => "briefing",
            Channel::Recall => "recall",
            Channel::File => "file",
            Channel::McpBriefing => "mcp-briefing",
        }
    }
}

/// One injection to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInjection<'a> {
    pub at_ms: i64,
    pub agent: &'a str,
    /// The agent's own session id; `None` where there is no session (MCP).
    pub session: Option<&'a str>,
    /// The key of the project the agent was in, when it is a stored project.
    pub project_key: Option<&'a str>,
    pub channel: Channel,
    /// The whole context's tokens, as handed (wrapped).
    pub tokens: usize,
    /// Each item handed, as its typed id (`o12`, `s3`, `m7`), with the tokens of its line or
    /// block, in the order the context shows them.
    pub items: &'a [(String, usize)],
    /// Candidates the budget left out.
    pub cut: usize,
}

/// One recorded injection, as `agent-memory log` and `GET /api/injections` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Injection {
    #[serde(skip)]
    pub id: i64,
    pub at_ms: i64,
    pub agent: String,
    pub session: Option<String>,
    /// The project's name; `None` when the agent was in no stored project.
    pub project: Option<String>,
    pub channel: String,
    /// Typed ids, in the order the context showed them.
    pub items: Vec<String>,
    pub tokens: i64,
    pub cut: i64,
}

/// Which injections a listing returns: every filter optional, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InjectionFilter {
    /// The agent's own session id.
    pub session: Option<String>,
    /// A canonical agent name.
    pub agent: Option<String>,
    /// A project's key, name or root.
    pub project: Option<String>,
    pub limit: usize,
}

/// When an item was last handed, to whom, and how often in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastHanded {
    pub at_ms: i64,
    pub agent: String,
    pub session: Option<String>,
    pub channel: String,
    /// Injections that held the item, the last one included (as many as are still kept).
    pub times: i64,
}

/// Injections kept at most, however recent: a busy machine's record stays small.
pub const KEPT_INJECTIONS: i64 = 50_000;

/// Injections older than this are pruned by the work pass.
pub const KEPT_INJECTION_MS: i64 = 90 * 86_400_000;

impl Store {
    /// Writes `injections` in one transaction that takes the write lock at once; an empty
    /// slice writes nothing.
    pub fn record_injections(&self, injections: &[NewInjection<'_>]) -> Result<()> {
        if injections.is_empty() {
            return Ok(());
        }
        let tx = self.begin_write()?;
        {
            // One row each, the items as JSON: on the hook path a row per item cost twice the
            // rest of the record.
            let mut insert = tx.prepare_cached(
                "INSERT INTO injections (at, agent, session, project_id, channel, tokens, cut, items)
                 VALUES (?1, ?2, ?3, (SELECT id FROM projects WHERE key = ?4), ?5, ?6, ?7, ?8)",
            )?;
            for injection in injections {
                let items = serde_json::to_string(injection.items).unwrap_or_else(|_| "[]".into());
                insert.execute(params![
                    injection.at_ms,
                    injection.agent,
                    injection.session,
                    injection.project_key,
                    injection.channel.as_str(),
                    injection.tokens as i64,
                    injection.cut as i64,
                    items,
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Injections matching `filter`, newest first, each with its items in the order handed.
    pub fn injections(&self, filter: &InjectionFilter) -> Result<Vec<Injection>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT i.id, i.at, i.agent, i.session, p.name, i.channel, i.tokens, i.cut, i.items
             FROM injections i LEFT JOIN projects p ON p.id = i.project_id
             WHERE (?1 IS NULL OR i.session = ?1) AND (?2 IS NULL OR i.agent = ?2)
               AND (?3 IS NULL OR p.key = ?3 OR p.name = ?3 OR p.root = ?3)
             ORDER BY i.at DESC, i.id DESC LIMIT ?4",
        )?;
        let rows = stmt.query_map(
            params![filter.session, filter.agent, filter.project, filter.limit as i64],
            |r| {
                let items: String = r.get(8)?;
                let items: Vec<(String, i64)> = serde_json::from_str(&items).unwrap_or_default();
                Ok(Injection {
                    id: r.get(0)?,
                    at_ms: r.get(1)?,
                    agent: r.get(2)?,
                    session: r.get(3)?,
                    project: r.get(4)?,
                    channel: r.get(5)?,
                    items: items.into_iter().map(|(id, _)| id).collect(),
                    tokens: r.get(6)?,
                    cut: r.get(7)?,
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// When `item` (a typed id such as `m7`) was last handed to an agent, and how many kept
    /// injections held it; `None` when it never was (or those injections were pruned).
    pub fn last_handed(&self, item: &str) -> Result<Option<LastHanded>> {
        // A look through the kept record (bounded by pruning) for the id as JSON writes it:
        // `"m7"` is not found in `"m70"`.
        let mut stmt = self.conn().prepare_cached(
            "SELECT i.at, i.agent, i.session, i.channel,
                    (SELECT count(*) FROM injections WHERE instr(items, ?1) > 0)
             FROM injections i WHERE instr(i.items, ?1) > 0 ORDER BY i.id DESC LIMIT 1",
        )?;
        Ok(stmt
            .query_row([quoted(item)], |r| {
                Ok(LastHanded {
                    at_ms: r.get(0)?,
                    agent: r.get(1)?,
                    session: r.get(2)?,
                    channel: r.get(3)?,
                    times: r.get(4)?,
                })
            })
            .optional()?)
    }

    /// Whether a statement drawn from `source` (an item of kind `observation`, `summary` or
    /// `event` with row id `source_id`) repeats what its session had been handed: `item` was
    /// injected into that session (same agent, same session id) no later than the source was
    /// said, and the source stands on no tool use: only prompts and closing answers. Such a
    /// repeat is the agent echoing its context, not a confirmation. Unknown sources are no
    /// echo.
    pub fn echoes(&self, item: &str, source_kind: &str, source_id: i64) -> Result<bool> {
        let sql = match source_kind {
            "observation" => {
                "SELECT s.agent, s.source_id,
                        EXISTS (SELECT 1 FROM observation_sources os JOIN events e ON e.id = os.event_id
                                WHERE os.observation_id = o.id AND e.kind = 'tool_use'),
                        coalesce((SELECT max(e.at) FROM observation_sources os
                                  JOIN events e ON e.id = os.event_id
                                  WHERE os.observation_id = o.id), o.at)
                 FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.id = ?1"
            }
            "summary" => {
                "SELECT s.agent, s.source_id,
                        EXISTS (SELECT 1 FROM events e WHERE e.session_id = m.session_id
                                AND e.id <= m.through_event_id AND e.kind = 'tool_use'),
                        m.at
                 FROM summaries m JOIN sessions s ON s.id = m.session_id WHERE m.id = ?1"
            }
            "event" => {
                "SELECT s.agent, s.source_id, e.kind = 'tool_use', e.at
                 FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.id = ?1"
            }
            _ => return Ok(false),
        };
        let said: Option<(String, String, bool, i64)> = self
            .conn()
            .prepare_cached(sql)?
            .query_row([source_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?;
        let Some((agent, session, used_tools, at_ms)) = said else { return Ok(false) };
        if used_tools {
            return Ok(false);
        }
        let mut handed = self.conn().prepare_cached(
            "SELECT 1 FROM injections
             WHERE session = ?2 AND agent = ?3 AND at <= ?4 AND instr(items, ?1) > 0 LIMIT 1",
        )?;
        Ok(handed
            .query_row(params![quoted(item), session, agent, at_ms], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Removes injections older than `before_ms`, and the oldest beyond the newest `keep`,
    /// with their items; returns how many injections went. For the work pass, never the hook.
    pub fn prune_injections(&self, before_ms: i64, keep: i64) -> Result<usize> {
        let tx = self.begin_write()?;
        let last_dropped: i64 = tx.query_row(
            "SELECT coalesce((SELECT id FROM injections ORDER BY id DESC LIMIT 1 OFFSET ?1), 0)",
            [keep],
            |r| r.get(0),
        )?;
        let removed = tx.execute(
            "DELETE FROM injections WHERE at < ?1 OR id <= ?2",
            params![before_ms, last_dropped],
        )?;
        tx.commit()?;
        Ok(removed)
    }
}

/// A typed id as the `items` JSON holds it, quotes and all.
fn quoted(item: &str) -> String {
    serde_json::to_string(item).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Store {
        let store = Store::open_in_memory().expect("store");
        store
            .conn()
            .execute_batch(
                "INSERT INTO projects (id, key, name, root, created_at)
                     VALUES (1, 'path:/w/app', 'app', '/w/app', 0);
                 INSERT INTO sessions (id, agent, source_id, project_id, started_at, last_event_at)
                     VALUES (1, 'codex', 'c-1', 1, 0, 0);
                 INSERT INTO events (id, uid, session_id, project_id, agent, kind, source_event, at,
                                     summary, content_hash)
                     VALUES (1, 'u1', 1, 1, 'codex', 'prompt', 'x', 500, 'p', 'h1'),
                            (2, 'u2', 1, 1, 'codex', 'tool_use', 'x', 600, 't', 'h2');",
            )
            .expect("rows");
        store
    }

    fn items(ids: &[&str]) -> Vec<(String, usize)> {
        ids.iter().map(|id| ((*id).to_owned(), 12)).collect()
    }

    fn handed<'a>(
        at_ms: i64,
        agent: &'a str,
        session: Option<&'a str>,
        channel: Channel,
        items: &'a [(String, usize)],
    ) -> NewInjection<'a> {
        NewInjection {
            at_ms,
            agent,
            session,
            project_key: Some("path:/w/app"),
            channel,
            tokens: 40,
            items,
            cut: 2,
        }
    }

    #[test]
    fn an_id_is_not_found_inside_a_longer_one() {
        let store = store();
        let a = items(&["m70", "o12"]);
        store
            .record_injections(&[handed(100, "codex", Some("c-1"), Channel::Recall, &a)])
            .expect("record");
        assert_eq!(store.last_handed("m7").expect("read"), None);
        assert_eq!(store.last_handed("m70").expect("read").map(|l| l.times), Some(1));
    }

    #[test]
    fn injections_are_listed_newest_first_with_their_items_in_order() {
        let store = store();
        let (a, b) = (items(&["m3", "s2", "o12", "o4"]), items(&["o12"]));
        store
            .record_injections(&[
                handed(100, "claude-code", Some("c-1"), Channel::Briefing, &a),
                handed(200, "claude-code", Some("c-1"), Channel::Recall, &b),
            ])
            .expect("record");
        let mcp = NewInjection {
            project_key: None,
            ..handed(300, "cursor", None, Channel::McpBriefing, &b)
        };
        store.record_injections(&[mcp]).expect("record");
        store.record_injections(&[]).expect("nothing to record");

        let all =
            store.injections(&InjectionFilter { limit: 10, ..Default::default() }).expect("list");
        let seen: Vec<(&str, Option<&str>, Option<&str>, &str)> = all
            .iter()
            .map(|i| {
                (i.agent.as_str(), i.session.as_deref(), i.project.as_deref(), i.channel.as_str())
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("cursor", None, None, "mcp-briefing"),
                ("claude-code", Some("c-1"), Some("app"), "recall"),
                ("claude-code", Some("c-1"), Some("app"), "briefing"),
            ]
        );
        assert_eq!(all[2].items, ["m3", "s2", "o12", "o4"], "in the order handed");
        assert_eq!((all[2].tokens, all[2].cut), (40, 2));
        expect_test::expect![[r#"{"at_ms":100,"agent":"claude-code","session":"c-1","project":"app","channel":"briefing","items":["m3","s2","o12","o4"],"tokens":40,"cut":2}"#]]
            .assert_eq(&serde_json::to_string(&all[2]).expect("json"));

        let filter = |session: Option<&str>, agent: Option<&str>, project: Option<&str>| {
            let filter = InjectionFilter {
                session: session.map(str::to_owned),
                agent: agent.map(str::to_owned),
                project: project.map(str::to_owned),
                limit: 10,
            };
            store.injections(&filter).expect("list").len()
        };
        assert_eq!(filter(Some("c-1"), None, None), 2);
        assert_eq!(filter(None, Some("cursor"), None), 1);
        assert_eq!(filter(None, None, Some("path:/w/app")), 2);
        assert_eq!(filter(Some("other"), None, None), 0);
        assert_eq!(
            store
                .injections(&InjectionFilter { limit: 1, ..Default::default() })
                .expect("list")
                .len(),
            1
        );
    }

    #[test]
    fn the_last_time_an_item_was_handed_and_how_often() {
        let store = store();
        let (a, b) = (items(&["m3", "o12"]), items(&["o12"]));
        store
            .record_injections(&[handed(100, "codex", Some("c-1"), Channel::Briefing, &a)])
            .expect("record");
        store
            .record_injections(&[handed(200, "gemini", Some("g-1"), Channel::File, &b)])
            .expect("record");
        assert_eq!(
            store.last_handed("o12").expect("read"),
            Some(LastHanded {
                at_ms: 200,
                agent: "gemini".into(),
                session: Some("g-1".into()),
                channel: "file".into(),
                times: 2,
            })
        );
        assert_eq!(
            store.last_handed("m3").expect("read").map(|l| (l.agent, l.times)),
            Some(("codex".into(), 1))
        );
        assert_eq!(store.last_handed("m4").expect("read"), None);
    }

    #[test]
    fn a_statement_echoes_only_what_its_own_session_was_handed_before_without_tools() {
        let store = store();
        let m = items(&["m7"]);
        store
            .record_injections(&[handed(100, "codex", Some("c-1"), Channel::Briefing, &m)])
            .expect("record");
        // e1 is a prompt of session c-1 after the briefing; e2 a tool use.
        assert!(store.echoes("m7", "event", 1).expect("read"));
        assert!(!store.echoes("m7", "event", 2).expect("read"), "a tool use is evidence");
        assert!(!store.echoes("m8", "event", 1).expect("read"), "another memory");
        assert!(!store.echoes("m7", "event", 99).expect("read"), "no such event");
        assert!(!store.echoes("m7", "memory", 1).expect("read"));
        // Handed to another session, or only after it was said: no echo.
        store.conn().execute("UPDATE injections SET at = 900", []).expect("later");
        assert!(!store.echoes("m7", "event", 1).expect("read"), "handed after it was said");
        store.conn().execute("UPDATE injections SET at = 100, session = 'c-2'", []).expect("other");
        assert!(!store.echoes("m7", "event", 1).expect("read"), "another session");
    }

    #[test]
    fn pruning_drops_old_rows_and_keeps_the_newest_few() {
        let store = store();
        let a = items(&["m3", "o12"]);
        for at in [100, 200, 300, 400] {
            store
                .record_injections(&[handed(at, "codex", Some("c-1"), Channel::Recall, &a)])
                .expect("record");
        }
        assert_eq!(store.prune_injections(150, 100).expect("prune"), 1, "older than the cutoff");
        assert_eq!(store.prune_injections(0, 2).expect("prune"), 1, "beyond the newest two");
        let left =
            store.injections(&InjectionFilter { limit: 10, ..Default::default() }).expect("list");
        assert_eq!(left.iter().map(|i| i.at_ms).collect::<Vec<_>>(), [400, 300]);
        assert_eq!(store.last_handed("m3").expect("read").map(|l| l.times), Some(2));
    }
}
