//! The store's side of what agents are handed back: the figures and items of the session-start
//! briefing, candidates for prompt-time recall, what earlier sessions did with a file, and hit
//! counts for what was injected.
//!
//! Here is a project (and the session asking), give me rows. Every query here runs on the hook
//! path, so each is one statement over an index. Must not: decide what is relevant or how it
//! reads to an agent (that is [`crate::inject`]).

use std::path::PathBuf;

use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use super::distilled::TimelineItem;
use super::{Result, Store};
use crate::project::ProjectIdentity;

/// A project's distilled memory in tokens: what reading it costs against the work it stands for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Economics {
    pub observations: i64,
    /// Tokens to read every observation.
    pub read_tokens: i64,
    /// Tokens of the events behind them (and of the model that distilled them).
    pub work_tokens: i64,
}

/// One line of the briefing's timeline, with the file it is filed under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BriefingItem {
    #[serde(flatten)]
    pub item: TimelineItem,
    /// The first file the observation changed, else the first it read.
    pub file: Option<String>,
    /// The observation's one-line lesson (cause → fix), as the distiller wrote it.
    pub subtitle: String,
    /// An observation whose memory a later one replaced: history, not what holds now.
    pub replaced: bool,
    /// What changed in a file it rests on, as the briefing marks it; set by the caller
    /// ([`crate::anchor`]).
    #[serde(skip)]
    pub stale: Option<String>,
}

/// Which distilled item a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    Observation,
    Summary,
    /// A long-term memory (active, the project's or global).
    Memory,
}

impl ItemKind {
    /// As the `hits` table names it.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Observation => "observation",
            ItemKind::Summary => "summary",
            ItemKind::Memory => "memory",
        }
    }

    /// The id `agent-memory show` takes: `o12`, `s3`.
    pub fn show_id(self, id: i64) -> String {
        match self {
            ItemKind::Observation => format!("o{id}"),
            ItemKind::Summary => format!("s{id}"),
            ItemKind::Memory => format!("m{id}"),
        }
    }
}

/// The session asking, whose own items are never handed back to it.
#[derive(Debug, Clone, Copy)]
pub struct Asking<'a> {
    pub project_key: &'a str,
    pub agent: &'a str,
    /// The agent's own session id.
    pub session: &'a str,
    /// Asked where no project is (a general assistant's workspace, a home directory): recall
    /// looks across every project, naming each item's.
    pub across_projects: bool,
    /// The branch the asking checkout is on: work done on another branch is left out until
    /// it is merged into this one ([`seen_on_branch`]).
    pub branch: Option<&'a str>,
}

/// SQL, true when the work of the session aliased `s` belongs in the context of a checkout on
/// the branch the SQL expression `branch` names (a bound parameter such as `?3`): work on the repository's default branch (or outside git),
/// on that same branch, or on a branch whose work commit the work pass found merged into it
/// (`crate::branch`). A checkout on a detached head (a NULL branch) sees the first kind only.
pub(crate) fn seen_on_branch(s: &str, branch: &str) -> String {
    format!(
        "({s}.work_branch IS NULL OR {s}.work_branch = {branch}
          OR EXISTS (SELECT 1 FROM branch_merges bm
                     WHERE bm.project_id = {s}.project_id AND bm.commit_sha = {s}.work_commit
                       AND bm.into_branch = {branch}))"
    )
}

/// An observation or summary the full-text index found for a prompt, with all its text so the
/// caller can judge how well it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallCandidate {
    pub kind: ItemKind,
    pub id: i64,
    pub at_ms: i64,
    pub agent: String,
    /// The internal session id, to keep one session from filling every slot (a memory's own id,
    /// negated: memories come from no one session).
    pub session_id: i64,
    /// The observation's type, or `summary`.
    pub item_type: String,
    pub title: String,
    /// What was learned beyond the title: an observation's subtitle, a summary's first lesson
    /// (or failing that its first completed step); empty for a memory.
    pub lesson: String,
    /// What the item says, as indexed, its first [`TEXT_CHARS`] characters.
    pub text: String,
    /// The name of the project it belongs to; empty for global memory.
    pub project: String,
    /// What the item is about, for a query of one rare word: an observation's title, lesson
    /// and files, a summary's request and first lesson, a memory's text.
    pub subject: String,
    /// What changed in a file it rests on; set by the caller ([`crate::anchor`]).
    pub stale: Option<String>,
}

/// A recall candidate of `kind` from a row whose columns are, in order: id, time, agent,
/// session, type, title, lesson, text, project name, subject.
fn candidate_row(kind: ItemKind, r: &rusqlite::Row<'_>) -> rusqlite::Result<RecallCandidate> {
    Ok(RecallCandidate {
        kind,
        id: r.get(0)?,
        at_ms: r.get(1)?,
        agent: r.get(2)?,
        session_id: r.get(3)?,
        item_type: r.get(4)?,
        title: r.get(5)?,
        lesson: r.get(6)?,
        text: r.get(7)?,
        project: r.get(8)?,
        subject: r.get(9)?,
        stale: None,
    })
}

/// The most of an item's lesson a recall line is made from, in characters (a line shows less).
const LESSON_CHARS: usize = 600;

/// The most of an item's text a prompt is matched against, in characters: a summary of a long
/// session runs to kilobytes, and what it was about comes first (the request, what was
/// learned and done).
pub const TEXT_CHARS: usize = 3000;

/// An observation that read or changed a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileNote {
    pub id: i64,
    pub at_ms: i64,
    pub agent: String,
    pub kind: String,
    pub title: String,
    pub modified: bool,
    /// What changed in a file it rests on; set by the caller ([`crate::anchor`]).
    pub stale: Option<String>,
}

impl Store {
    /// Observation count and token figures of the project, over all its sessions.
    pub fn project_economics(&self, project_key: &str) -> Result<Economics> {
        // Kept by triggers (0004), so the hook reads one row however large the project.
        let mut stmt = self.conn().prepare_cached(
            "SELECT t.observations, t.tokens, t.work_tokens
             FROM project_totals t JOIN projects p ON p.id = t.project_id WHERE p.key = ?1",
        )?;
        let totals = stmt
            .query_row([project_key], |r| {
                Ok(Economics {
                    observations: r.get(0)?,
                    read_tokens: r.get(1)?,
                    work_tokens: r.get(2)?,
                })
            })
            .optional()?;
        Ok(totals.unwrap_or_default())
    }

    /// The long-term memories a session of the project starts with: active global memory (L3)
    /// and the project's active memory (L2), most important first, at most `limit`. Ranking
    /// them for the briefing is [`crate::inject`]'s.
    pub fn briefing_memories(
        &self,
        project_key: &str,
        limit: usize,
    ) -> Result<Vec<super::memories::Memory>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT {} FROM memories m LEFT JOIN projects p ON p.id = m.project_id
             WHERE m.status = 'active'
               AND (m.tier = 'L3' OR (m.tier = 'L2' AND
                    m.project_id = (SELECT id FROM projects WHERE key = ?1)))
             ORDER BY m.importance DESC, m.updated_at DESC LIMIT ?2",
            super::memories::COLUMNS
        ))?;
        let rows = stmt.query_map(params![project_key, limit as i64], super::memories::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The project's most recent observations seen on `branch` ([`seen_on_branch`]), newest
    /// first, each with its file.
    pub fn briefing_timeline(
        &self,
        project_key: &str,
        branch: Option<&str>,
        limit: usize,
    ) -> Result<Vec<BriefingItem>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT o.id, o.at,
                    CASE WHEN o.team_member IS NULL THEN o.agent
                         ELSE o.team_member || ', ' || o.agent END,
                    o.kind, o.title, o.tokens, o.work_tokens,
                    coalesce(
                        CASE WHEN json_valid(o.files_modified) THEN o.files_modified ->> '$[0]' END,
                        CASE WHEN json_valid(o.files_read) THEN o.files_read ->> '$[0]' END),
                    o.subtitle,
                    EXISTS (
                        SELECT 1 FROM memories m
                        WHERE m.project_id = o.project_id AND m.status = 'superseded'
                          AND (instr(m.sources, '\"o' || o.id || '\"') > 0
                               OR length(o.subtitle) >= 12 AND instr(m.text, o.subtitle) > 0))
             FROM observations o JOIN projects p ON p.id = o.project_id
             JOIN sessions s ON s.id = o.session_id
             WHERE p.key = ?1 AND {}
             ORDER BY o.at DESC, o.id DESC LIMIT ?2",
            seen_on_branch("s", "?3")
        ))?;
        let rows = stmt.query_map(params![project_key, limit as i64, branch], |r| {
            Ok(BriefingItem {
                item: TimelineItem {
                    id: r.get(0)?,
                    at_ms: r.get(1)?,
                    agent: r.get(2)?,
                    kind: r.get(3)?,
                    title: r.get(4)?,
                    tokens: r.get(5)?,
                    work_tokens: r.get(6)?,
                },
                file: r.get::<_, Option<String>>(7)?.filter(|f| !f.trim().is_empty()),
                subtitle: r.get(8)?,
                replaced: r.get(9)?,
                stale: None,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many observations match the FTS5 expression, counting at most `cap`: enough to tell
    /// a rare term from a common one without reading a common term's whole list.
    pub fn term_documents(&self, fts_query: &str, cap: usize) -> Result<usize> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT count(*) FROM (SELECT rowid FROM observations_fts
                                   WHERE observations_fts MATCH ?1 LIMIT ?2)",
        )?;
        let n: i64 = stmt.query_row(params![fts_query, cap as i64], |r| r.get(0))?;
        Ok(n.max(0) as usize)
    }

    /// Observations, summaries and active memories of the asking project (and global memories)
    /// that match the FTS5 expression `fts_query`, newest first, at most `limit` of each kind;
    /// the asking session's own items are left out. Newest first, because the index yields that order as it goes: ranking
    /// every match by BM25 costs tens of milliseconds once a project holds thousands of items.
    pub fn recall_candidates(
        &self,
        asking: &Asking<'_>,
        fts_query: &str,
        limit: usize,
    ) -> Result<Vec<RecallCandidate>> {
        const OBSERVATIONS: &str = "SELECT x.id, x.at, x.agent, x.session_id, x.kind, x.title,
                    substr(x.subtitle, 1, ?7), substr(x.title || ' ' || x.subtitle || ' ' || x.facts || ' ' || x.narrative ||
                           ' ' || x.concepts || ' ' || x.files_read || ' ' || x.files_modified,
                           1, ?6),
                    coalesce((SELECT name FROM projects WHERE id = x.project_id), ''),
                    x.title || ' ' || x.subtitle || ' ' || x.files_modified
             FROM observations_fts f JOIN observations x ON x.id = f.rowid
             JOIN sessions s ON s.id = x.session_id
             WHERE observations_fts MATCH ?1
               AND (?8 OR +x.project_id = (SELECT id FROM projects WHERE key = ?2))
               AND NOT (s.agent = ?3 AND s.source_id = ?4)
               AND BRANCH
             ORDER BY f.rowid DESC LIMIT ?5";
        // A summary shows what was learned, or failing that what got done, never what was
        // asked (a summary with neither has nothing to tell and is left out by the caller).
        const SUMMARIES: &str = "SELECT x.id, x.at, x.agent, x.session_id, 'summary',
                    coalesce(x.learned ->> '$[0]', x.completed ->> '$[0]', ''),
                    CASE WHEN x.learned ->> '$[0]' IS NOT NULL
                         THEN substr(coalesce(x.learned ->> '$[1]', x.completed ->> '$[0]', ''),
                                     1, ?7)
                         ELSE '' END,
                    substr(x.request || ' ' || x.learned || ' ' || x.completed || ' ' ||
                           x.investigated || ' ' || x.next_steps, 1, ?6),
                    coalesce((SELECT name FROM projects WHERE id = x.project_id), ''),
                    x.request || ' ' || coalesce(x.learned ->> '$[0]', '')
             FROM summaries_fts f JOIN summaries x ON x.id = f.rowid
             JOIN sessions s ON s.id = x.session_id
             WHERE summaries_fts MATCH ?1
               AND (?8 OR x.project_id = (SELECT id FROM projects WHERE key = ?2))
               AND NOT (s.agent = ?3 AND s.source_id = ?4)
               AND BRANCH
             ORDER BY f.rowid DESC LIMIT ?5";
        // Active memories of the project and global ones; the asking session has none of its own.
        // A memory has no lesson beside its text (`?7` is named only because every kind's
        // statement is bound with the same parameters).
        const MEMORIES: &str = "SELECT x.id, x.updated_at,
                    CASE WHEN x.origin LIKE 'stated:%' THEN substr(x.origin, 8) ELSE x.origin END,
                    -x.id, x.kind, x.text,
                    substr('', 1, ?7),
                    substr(x.text, 1, ?6),
                    coalesce((SELECT name FROM projects WHERE id = x.project_id), ''),
                    x.text
             FROM memories_fts f JOIN memories x ON x.id = f.rowid
             WHERE memories_fts MATCH ?1 AND x.status = 'active'
               AND (x.tier = 'L3' OR ?8 OR x.project_id = (SELECT id FROM projects WHERE key = ?2))
               AND ?3 IS NOT NULL AND ?4 IS NOT NULL AND (?9 IS NULL OR 1)
             ORDER BY f.rowid DESC LIMIT ?5";
        let mut found = Vec::new();
        for (kind, sql) in [
            (ItemKind::Observation, OBSERVATIONS),
            (ItemKind::Summary, SUMMARIES),
            (ItemKind::Memory, MEMORIES),
        ] {
            // Reviewed memory is project-wide; distilled work is seen on its own branch.
            let sql = sql.replace("BRANCH", &seen_on_branch("s", "?9"));
            let mut stmt = self.conn().prepare_cached(&sql)?;
            let rows = stmt.query_map(
                params![
                    fts_query,
                    asking.project_key,
                    asking.agent,
                    asking.session,
                    limit as i64,
                    TEXT_CHARS as i64,
                    LESSON_CHARS as i64,
                    asking.across_projects,
                    asking.branch
                ],
                |r| candidate_row(kind, r),
            )?;
            for row in rows {
                found.push(row?);
            }
        }
        Ok(found)
    }

    /// The project a prompt names by one of `words` (its name, any case), the most recently
    /// active when several are; `None` when it names none.
    pub fn project_named(&self, words: &[String]) -> Result<Option<String>> {
        if words.is_empty() {
            return Ok(None);
        }
        let mut stmt = self.conn().prepare_cached(
            "SELECT p.key FROM projects p, json_each(?1) w
             WHERE lower(p.name) = lower(w.value) AND p.key NOT LIKE 'agent:%'
             ORDER BY (SELECT max(s.last_event_at) FROM sessions s WHERE s.project_id = p.id) DESC
             LIMIT 1",
        )?;
        let words = serde_json::to_string(words).unwrap_or_else(|_| "[]".into());
        Ok(stmt.query_row([words], |r| r.get(0)).optional()?)
    }

    /// The newest observations and summaries of the project `project_key`, at most `limit` of
    /// each, as recall candidates: what a prompt that names the project is handed when it is
    /// asked from outside any project.
    /// Asked from outside the project, there is no checkout: work on a branch of its own is
    /// left out until merged into the default branch.
    pub fn recent_candidates(
        &self,
        project_key: &str,
        limit: usize,
    ) -> Result<Vec<RecallCandidate>> {
        const OBSERVATIONS: &str = "SELECT x.id, x.at, x.agent, x.session_id, x.kind, x.title,
                    substr(x.subtitle, 1, ?3), '', p.name, x.title
             FROM observations x JOIN projects p ON p.id = x.project_id
             JOIN sessions s ON s.id = x.session_id
             WHERE p.key = ?1 AND BRANCH ORDER BY x.at DESC LIMIT ?2";
        const SUMMARIES: &str = "SELECT x.id, x.at, x.agent, x.session_id, 'summary',
                    coalesce(x.learned ->> '$[0]', x.completed ->> '$[0]', ''),
                    CASE WHEN x.learned ->> '$[0]' IS NOT NULL
                         THEN substr(coalesce(x.learned ->> '$[1]', x.completed ->> '$[0]', ''),
                                     1, ?3)
                         ELSE '' END,
                    '', p.name, x.request
             FROM summaries x JOIN projects p ON p.id = x.project_id
             JOIN sessions s ON s.id = x.session_id
             WHERE p.key = ?1 AND BRANCH ORDER BY x.at DESC LIMIT ?2";
        let mut found = Vec::new();
        for (kind, sql) in [(ItemKind::Observation, OBSERVATIONS), (ItemKind::Summary, SUMMARIES)] {
            let sql = sql.replace(
                "BRANCH",
                &seen_on_branch("s", "(SELECT default_branch FROM projects WHERE key = ?1)"),
            );
            let mut stmt = self.conn().prepare_cached(&sql)?;
            let rows = stmt
                .query_map(params![project_key, limit as i64, LESSON_CHARS as i64], |r| {
                    candidate_row(kind, r)
                })?;
            for row in rows {
                found.push(row?);
            }
        }
        Ok(found)
    }

    /// Observations of the asking project that changed or read a file known by any of `paths`
    /// (observations name files relative to their session's directory, agents usually give
    /// them whole), changes first, then newest first; the asking session's own are left out.
    pub fn file_notes(
        &self,
        asking: &Asking<'_>,
        paths: &[&str],
        limit: usize,
    ) -> Result<Vec<FileNote>> {
        let Some(first) = paths.first() else { return Ok(Vec::new()) };
        // Four forms at most (as given, whole, relative to the session and to the project); a
        // fixed statement keeps it prepared once. The unary `+` keeps SQLite from walking the
        // project's observations by their project index instead of the file's few rows.
        let form = |i: usize| paths.get(i).copied().unwrap_or(first);
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT o.id, o.at, o.agent, o.kind, o.title, max(f.modified)
             FROM observation_files f JOIN observations o ON o.id = f.observation_id
             JOIN sessions s ON s.id = o.session_id
             WHERE f.path IN (?1, ?2, ?3, ?4)
               AND +o.project_id = (SELECT id FROM projects WHERE key = ?5)
               AND NOT (s.agent = ?6 AND s.source_id = ?7)
               AND {}
             GROUP BY o.id
             ORDER BY max(f.modified) DESC, o.at DESC, o.id DESC LIMIT ?8",
            seen_on_branch("s", "?9")
        ))?;
        let rows = stmt.query_map(
            params![
                form(0),
                form(1),
                form(2),
                form(3),
                asking.project_key,
                asking.agent,
                asking.session,
                limit as i64,
                asking.branch
            ],
            |r| {
                Ok(FileNote {
                    id: r.get(0)?,
                    at_ms: r.get(1)?,
                    agent: r.get(2)?,
                    kind: r.get(3)?,
                    title: r.get(4)?,
                    modified: r.get::<_, i64>(5)? != 0,
                    stale: None,
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Merges the observation and summary indexes into one segment each. Every hook is a new
    /// process with a cold page cache, and a term lookup visits every segment: after a distil
    /// pass had added rows one turn at a time, the lookups of one prompt cost 12 ms on a store
    /// of 17,500 observations, and 3 ms once merged. For the distil pass that added them, not
    /// the hook path: it rewrites both indexes.
    pub fn optimize_recall_indexes(&mut self) -> Result<()> {
        self.conn().execute_batch(
            "INSERT INTO observations_fts (observations_fts) VALUES ('optimize');
             INSERT INTO summaries_fts (summaries_fts) VALUES ('optimize');",
        )?;
        Ok(())
    }

    /// How many prompts the store holds for one agent session.
    pub fn session_prompts(&self, agent: &str, session: &str) -> Result<i64> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT count(*) FROM events e JOIN sessions s ON s.id = e.session_id
             WHERE s.agent = ?1 AND s.source_id = ?2 AND e.kind = 'prompt'",
        )?;
        Ok(stmt.query_row(params![agent, session], |r| r.get(0))?)
    }

    /// Records that the person asked for the brief file of `project` (with global memory in it
    /// when `global`); the work pass refreshes only the files asked for.
    pub fn keep_brief_file(&mut self, project: &ProjectIdentity, global: bool) -> Result<()> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let project_id = super::upsert_project(&tx, project, crate::time::now_ms())?;
        tx.execute(
            "INSERT INTO brief_files (project_id, root, global, asked_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (project_id) DO UPDATE SET root = excluded.root, global = excluded.global,
                                                    asked_at = excluded.asked_at",
            params![project_id, project.root.to_string_lossy(), global, crate::time::now_ms()],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The brief files the person asked for: each project's key, root and whether global
    /// memory goes in.
    pub fn kept_brief_files(&self) -> Result<Vec<KeptBrief>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT p.key, b.root, b.global FROM brief_files b JOIN projects p ON p.id = b.project_id
             ORDER BY p.key",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(KeptBrief {
                project_key: r.get(0)?,
                root: PathBuf::from(r.get::<_, String>(1)?),
                global: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// A brief file the person asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptBrief {
    pub project_key: String,
    pub root: PathBuf,
    /// Whether the file may hold global memory (the person's, from every project).
    pub global: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distil::ObservationDraft;
    use crate::project::ProjectIdentity;
    use crate::store::distilled::Provenance;
    use crate::store::tests::event;

    fn project(root: &str) -> ProjectIdentity {
        ProjectIdentity {
            key: format!("path:{root}"),
            root: root.into(),
            name: "app".into(),
            origin: None,
            branch: None,
        }
    }

    /// A store with one session per (agent, session, project root, observations), each
    /// observation distilled from an event of its own.
    fn store_with(sessions: &[(&str, &str, &str, Vec<ObservationDraft>)]) -> Store {
        let mut store = Store::open_in_memory().expect("store");
        let mut written = 0;
        for (agent, session, root, drafts) in sessions {
            let events: Vec<_> = drafts
                .iter()
                .map(|_| {
                    written += 1;
                    let mut e = event(&format!("u{written}"), session, "a prompt");
                    e.agent = (*agent).into();
                    e.cwd = Some((*root).into());
                    (e, format!("h{written}"), project(root))
                })
                .collect();
            store.write_recovered(&events, &[]).expect("write");
            let pending = store
                .pending_sessions(100)
                .expect("pending")
                .into_iter()
                .find(|p| p.agent == *agent && p.last_event_id == written)
                .expect("the session");
            assert!(store.claim_session(pending.session_id, "t", 0, 1000).expect("claim"));
            let first = written - drafts.len() as i64 + 1;
            let drafts: Vec<_> = drafts
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let source_event_ids = vec![first + i as i64];
                    (ObservationDraft { source_event_ids, ..d.clone() }, 10, 200)
                })
                .collect();
            let provenance = Provenance { mode: "code", distiller: "offline" };
            store
                .save_observations(&pending, "t", provenance, &drafts, pending.last_event_id)
                .expect("save");
        }
        store
    }

    fn draft(title: &str, at_ms: i64, read: &[&str], modified: &[&str]) -> ObservationDraft {
        ObservationDraft {
            title: title.into(),
            subtitle: String::new(),
            facts: vec![],
            narrative: String::new(),
            kind: "bugfix".into(),
            concepts: vec![],
            files_read: read.iter().map(|s| s.to_string()).collect(),
            files_modified: modified.iter().map(|s| s.to_string()).collect(),
            source_event_ids: vec![],
            at_ms,
        }
    }

    #[test]
    fn economics_and_the_briefing_timeline_are_per_project() {
        let store = store_with(&[
            (
                "codex",
                "a",
                "/w/app",
                vec![
                    draft("one", 1, &["src/a.rs"], &[]),
                    draft("two", 2, &["src/a.rs"], &["src/b.rs"]),
                ],
            ),
            ("gemini", "b", "/w/other", vec![draft("elsewhere", 3, &[], &[])]),
        ]);
        let economics = store.project_economics("path:/w/app").expect("economics");
        assert_eq!(economics, Economics { observations: 2, read_tokens: 20, work_tokens: 400 });
        assert_eq!(store.project_economics("path:/nowhere").expect("none"), Economics::default());
        let items = store.briefing_timeline("path:/w/app", None, 10).expect("timeline");
        let files: Vec<_> =
            items.iter().map(|i| (i.item.title.as_str(), i.file.as_deref())).collect();
        assert_eq!(files, [("two", Some("src/b.rs")), ("one", Some("src/a.rs"))]);
    }

    #[test]
    fn file_notes_match_any_form_put_changes_first_and_skip_the_asking_session() {
        let store = store_with(&[
            ("codex", "a", "/w/app", vec![draft("changed it", 1, &["src/a.rs"], &["src/a.rs"])]),
            ("gemini", "b", "/w/app", vec![draft("read it later", 5, &["/w/app/src/a.rs"], &[])]),
            ("claude-code", "c", "/w/app", vec![draft("mine", 9, &[], &["src/a.rs"])]),
            ("codex", "d", "/w/other", vec![draft("other project", 9, &[], &["src/a.rs"])]),
        ]);
        let asking = Asking {
            project_key: "path:/w/app",
            agent: "claude-code",
            session: "c",
            across_projects: false,
            branch: None,
        };
        let notes = store.file_notes(&asking, &["/w/app/src/a.rs", "src/a.rs"], 5).expect("notes");
        let got: Vec<_> = notes.iter().map(|n| (n.title.as_str(), n.modified)).collect();
        assert_eq!(got, [("changed it", true), ("read it later", false)]);
        assert!(store.file_notes(&asking, &["src/zzz.rs"], 5).expect("none").is_empty());
    }

    #[test]
    fn candidates_come_from_the_project_without_the_asking_session_and_hits_count_up() {
        let mut store = store_with(&[
            ("codex", "a", "/w/app", vec![draft("Fixed the parser depth lookup", 1, &[], &[])]),
            ("claude-code", "c", "/w/app", vec![draft("parser again", 2, &[], &[])]),
        ]);
        let asking = Asking {
            project_key: "path:/w/app",
            agent: "claude-code",
            session: "c",
            across_projects: false,
            branch: None,
        };
        let found = store.recall_candidates(&asking, "\"parser\"", 10).expect("candidates");
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].kind, found[0].title.as_str()),
            (ItemKind::Observation, "Fixed the parser depth lookup")
        );
        assert!(found[0].text.contains("depth"));
        assert_eq!(store.term_documents("\"parser\"", 500).expect("df"), 2);
        assert_eq!(store.term_documents("\"parser\"", 1).expect("capped"), 1);
        assert_eq!(store.term_documents("\"nowhere\"", 500).expect("none"), 0);
        store.record_hits([("observation", found[0].id)], 7).expect("hit");
        store.record_hits([("observation", found[0].id)], 9).expect("hit again");
        let (count, last): (i64, i64) = store
            .conn()
            .query_row("SELECT count, last_at FROM hits", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("hits row");
        assert_eq!((count, last), (2, 9));
        assert_eq!(store.session_prompts("codex", "a").expect("prompts"), 1);
        store.optimize_recall_indexes().expect("optimize");
        assert_eq!(
            store.recall_candidates(&asking, "\"parser\"", 10).expect("still found").len(),
            1
        );
        assert!(store.kept_brief_files().expect("none asked").is_empty());
        store.keep_brief_file(&project("/w/app"), true).expect("asked");
        store.keep_brief_file(&project("/w/app"), false).expect("asked again");
        let kept = store.kept_brief_files().expect("kept");
        assert_eq!(kept.len(), 1);
        assert_eq!((kept[0].root.clone(), kept[0].global), (PathBuf::from("/w/app"), false));
    }
}
