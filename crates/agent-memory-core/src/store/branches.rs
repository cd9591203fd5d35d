//! The store's side of branches: which sessions worked on a branch of their own, the commit
//! that holds their work, and which branches reach it (schema 17). The work pass writes these
//! ([`crate::branch`]); the hooks read them through
//! [`seen_on_branch`](super::recall::seen_on_branch).

use rusqlite::{OptionalExtension, params};

use super::{Result, Store};

/// A project with sessions whose branch has not been judged since it was last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unjudged {
    pub project_id: i64,
    pub root: String,
    /// The distinct branches its unjudged sessions were on.
    pub branches: Vec<String>,
}

/// A branch with work of its own not yet pinned to a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncommitted {
    pub project_id: i64,
    pub root: String,
    pub branch: String,
    pub default_branch: Option<String>,
}

/// A project whose sessions' work sits on commits of their own branches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkCommits {
    pub project_id: i64,
    pub root: String,
    pub commits: Vec<String>,
}

impl Store {
    /// Projects with sessions whose branch changed since it was judged, at most `limit`.
    pub fn unjudged_branches(&self, limit: usize) -> Result<Vec<Unjudged>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT s.project_id, p.root, json_group_array(DISTINCT s.branch)
             FROM sessions s JOIN projects p ON p.id = s.project_id
             WHERE s.branch IS NOT s.branch_seen
             GROUP BY s.project_id LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit as i64], |r| {
            let branches: String = r.get(2)?;
            Ok(Unjudged {
                project_id: r.get(0)?,
                root: r.get(1)?,
                branches: serde_json::from_str(&branches).unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Judges the sessions of a project against its default branch: work on any other
    /// branch is that branch's until merged. A session whose branch changed forgets the
    /// commit it had.
    pub fn judge_branches(&mut self, project_id: i64, default_branch: &str) -> Result<usize> {
        let tx = self.begin_write()?;
        tx.execute(
            "UPDATE projects SET default_branch = ?2 WHERE id = ?1",
            params![project_id, default_branch],
        )?;
        let judged = tx.execute(
            "UPDATE sessions SET
                 work_commit = CASE WHEN work_branch IS (CASE WHEN branch = ?2 THEN NULL ELSE branch END)
                                    THEN work_commit END,
                 work_branch = CASE WHEN branch = ?2 THEN NULL ELSE branch END,
                 branch_seen = branch
             WHERE project_id = ?1 AND branch IS NOT branch_seen",
            params![project_id, default_branch],
        )?;
        tx.commit()?;
        Ok(judged)
    }

    /// Branches with sessions whose work is not yet pinned to a commit, at most `limit`.
    pub fn uncommitted_work(&self, limit: usize) -> Result<Vec<Uncommitted>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT DISTINCT s.project_id, p.root, s.work_branch, p.default_branch
             FROM sessions s JOIN projects p ON p.id = s.project_id
             WHERE s.work_branch IS NOT NULL AND s.work_commit IS NULL LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit as i64], |r| {
            Ok(Uncommitted {
                project_id: r.get(0)?,
                root: r.get(1)?,
                branch: r.get(2)?,
                default_branch: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Pins the work of a branch's sessions (those that ended by `until_ms`) to `commit`.
    pub fn pin_work(
        &self,
        project_id: i64,
        branch: &str,
        commit: &str,
        until_ms: i64,
    ) -> Result<usize> {
        Ok(self.conn().execute(
            "UPDATE sessions SET work_commit = ?3
             WHERE project_id = ?1 AND work_branch = ?2 AND work_commit IS NULL
               AND last_event_at <= ?4",
            params![project_id, branch, commit, until_ms],
        )?)
    }

    /// The branch of its own that the work behind `sources` (`o12`, `s3`) was done on, if any.
    pub fn work_branch_of(&self, sources: &[String]) -> Result<Option<String>> {
        let ids = serde_json::to_string(sources).unwrap_or_else(|_| "[]".into());
        let mut stmt = self.conn().prepare_cached(
            "SELECT s.work_branch FROM json_each(?1) j
             CROSS JOIN observations o ON o.id = CAST(substr(j.value, 2) AS INTEGER)
             JOIN sessions s ON s.id = o.session_id
             WHERE j.value LIKE 'o%' AND s.work_branch IS NOT NULL
             UNION ALL
             SELECT s.work_branch FROM json_each(?1) j
             CROSS JOIN summaries m ON m.id = CAST(substr(j.value, 2) AS INTEGER)
             JOIN sessions s ON s.id = m.session_id
             WHERE j.value LIKE 's%' AND s.work_branch IS NOT NULL
             LIMIT 1",
        )?;
        Ok(stmt.query_row([ids], |r| r.get(0)).optional()?)
    }

    /// Every project's distinct work commits, for finding where they were merged.
    pub fn work_commits(&self) -> Result<Vec<WorkCommits>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT s.project_id, p.root, json_group_array(DISTINCT s.work_commit)
             FROM sessions s JOIN projects p ON p.id = s.project_id
             WHERE s.work_branch IS NOT NULL AND s.work_commit IS NOT NULL
             GROUP BY s.project_id",
        )?;
        let rows = stmt.query_map([], |r| {
            let commits: String = r.get(2)?;
            Ok(WorkCommits {
                project_id: r.get(0)?,
                root: r.get(1)?,
                commits: serde_json::from_str(&commits).unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The tips of a project's branches at the last look, sorted.
    pub fn branch_tips(&self, project_id: i64) -> Result<Vec<(String, String)>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT branch, tip FROM branch_tips WHERE project_id = ?1 ORDER BY branch",
        )?;
        let rows = stmt.query_map([project_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Keeps which branches reach each work commit, and the tips they were found at.
    pub fn save_merges(
        &mut self,
        project_id: i64,
        merges: &[(String, String)],
        tips: &[(String, String)],
    ) -> Result<()> {
        let tx = self.begin_write()?;
        tx.execute("DELETE FROM branch_merges WHERE project_id = ?1", [project_id])?;
        tx.execute("DELETE FROM branch_tips WHERE project_id = ?1", [project_id])?;
        {
            let mut merge = tx.prepare_cached(
                "INSERT OR IGNORE INTO branch_merges (project_id, commit_sha, into_branch)
                 VALUES (?1, ?2, ?3)",
            )?;
            for (commit, branch) in merges {
                merge.execute(params![project_id, commit, branch])?;
            }
            let mut tip = tx.prepare_cached(
                "INSERT INTO branch_tips (project_id, branch, tip) VALUES (?1, ?2, ?3)",
            )?;
            for (branch, commit) in tips {
                tip.execute(params![project_id, branch, commit])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
