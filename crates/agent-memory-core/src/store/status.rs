//! Status figures read from the store: size, counts per agent and project, open sessions, hook
//! outcomes and error rate over a window, and what each filter layer dropped.

use std::collections::BTreeMap;

use serde::Serialize;

use rusqlite::{OptionalExtension as _, params};

use super::{Result, SCHEMA_VERSION, Store};
use crate::fsutil;

#[derive(Debug, Clone, Serialize)]
pub struct StoreStatus {
    pub path: String,
    /// The database file plus its write-ahead log.
    pub bytes: u64,
    pub schema_version: i64,
    pub events: i64,
    pub sessions: i64,
    pub open_sessions: i64,
    /// What the work passes distilled.
    pub observations: i64,
    pub summaries: i64,
    /// Sessions with events no work pass has distilled yet ([`Store::sessions_to_distil`]).
    pub to_distil: i64,
    /// Active long-term memories (project and global).
    pub memories: i64,
    /// Memory candidates waiting for `agent-memory review`.
    pub candidates: i64,
    pub agents: Vec<AgentCount>,
    pub projects: Vec<ProjectCount>,
    pub hooks: Vec<HookWindow>,
    /// What the LLM distiller spent, per day and provider, newest first (last 7 days).
    pub llm_spend: Vec<LlmSpend>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LlmSpend {
    pub day: String,
    pub provider: String,
    pub tokens: i64,
    pub calls: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct AgentCount {
    pub agent: String,
    pub sessions: i64,
    pub events: i64,
    pub last_event_at: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectCount {
    pub name: String,
    pub key: String,
    pub root: String,
    pub sessions: i64,
    pub events: i64,
    /// A folder that is no project: neither in a repository nor a registered root (a scratch
    /// folder, a home directory, `/`); what was captured there belongs to no project.
    pub outside: bool,
}

/// Hook runs over one window of time.
#[derive(Debug, Clone, Serialize)]
pub struct HookWindow {
    pub window: String,
    pub runs: i64,
    /// Runs per outcome: stored, duplicate, skipped, filtered, spooled, partial (cut short by the
    /// deadline, salvaged), lost (cut short, nothing salvaged), invalid, failed.
    pub outcomes: BTreeMap<String, i64>,
    /// Filtered runs per filter layer.
    pub filtered: BTreeMap<String, i64>,
    /// Runs that did not reach the store cleanly (spooled, invalid, failed) over all runs.
    pub error_rate: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl StoreStatus {
    /// Adds the events lost while nothing could be written, which no hook run has moved into
    /// the store yet (`capture::lost`), to the windows (as passed to [`Store::status`]) their
    /// last loss falls in.
    pub fn add_lost(&mut self, windows: &[(&str, i64)], count: u64, last_ms: i64) {
        if count == 0 {
            return;
        }
        for (window, (_, since)) in self.hooks.iter_mut().zip(windows) {
            if last_ms >= *since {
                window.add_lost(i64::try_from(count).unwrap_or(i64::MAX));
            }
        }
    }
}

impl HookWindow {
    /// Counts `n` more runs whose event was lost, which the store has no record of yet.
    pub fn add_lost(&mut self, n: i64) {
        let lost = self.outcomes.entry("lost".to_owned()).or_insert(0);
        *lost = lost.saturating_add(n);
        self.runs = self.runs.saturating_add(n);
        let errors: i64 = ERROR_OUTCOMES.iter().filter_map(|o| self.outcomes.get(*o)).sum();
        self.error_rate = if self.runs == 0 { 0.0 } else { errors as f64 / self.runs as f64 };
    }
}

/// One agent's hook runs over a window: how many, how many failed, and the last failure.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentHooks {
    pub runs: i64,
    pub errors: i64,
    /// When the agent's last hook ran, whatever its outcome.
    pub last_run_at: Option<i64>,
    /// The last run that failed: when, its outcome and what went wrong.
    pub last_error: Option<(i64, String, String)>,
}

/// One hour's hook latency: its start, its runs, and their median and 95th percentile in ms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HourLatency {
    pub hour_ms: i64,
    pub runs: i64,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

/// Outcomes that count as errors in the error rate.
pub const ERROR_OUTCOMES: &[&str] = &["spooled", "partial", "lost", "invalid", "failed"];

impl Store {
    /// Reads the status figures; `windows` are (label, start in unix ms).
    pub fn status(&self, windows: &[(&str, i64)]) -> Result<StoreStatus> {
        let conn = self.conn();
        let count = |sql: &str| -> Result<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
        let mut agents = Vec::new();
        let mut stmt = conn.prepare(
            "SELECT agent, count(DISTINCT session_id), count(*), max(at) FROM events
             GROUP BY agent ORDER BY count(*) DESC, agent",
        )?;
        for row in stmt.query_map([], |r| {
            Ok(AgentCount {
                agent: r.get(0)?,
                sessions: r.get(1)?,
                events: r.get(2)?,
                last_event_at: r.get(3)?,
            })
        })? {
            agents.push(row?);
        }
        let mut projects = Vec::new();
        let mut stmt = conn.prepare(
            "SELECT p.name, p.key, p.root,
                    (SELECT count(*) FROM sessions s WHERE s.project_id = p.id),
                    (SELECT count(*) FROM events e WHERE e.project_id = p.id) AS n,
                    EXISTS (SELECT 1 FROM project_roots r WHERE r.project_id = p.id)
             FROM projects p ORDER BY n DESC, p.name",
        )?;
        for row in stmt.query_map([], |r| {
            let key: String = r.get(1)?;
            let root: String = r.get(2)?;
            let registered: bool = r.get(5)?;
            let outside =
                crate::project::is_outside_projects(&key, std::path::Path::new(&root), || {
                    registered
                });
            Ok(ProjectCount {
                name: r.get(0)?,
                key,
                root,
                sessions: r.get(3)?,
                events: r.get(4)?,
                outside,
            })
        })? {
            projects.push(row?);
        }
        // Projects first; folders that are no project after them.
        projects.sort_by_key(|p| p.outside);
        let hooks = windows
            .iter()
            .map(|(label, since)| self.hook_window(label, *since))
            .collect::<Result<_>>()?;
        let mut llm_spend = Vec::new();
        let mut stmt = conn.prepare(
            "SELECT day, provider, tokens, calls FROM llm_usage ORDER BY day DESC, provider LIMIT 14",
        )?;
        for row in stmt.query_map([], |r| {
            Ok(LlmSpend {
                day: r.get(0)?,
                provider: r.get(1)?,
                tokens: r.get(2)?,
                calls: r.get(3)?,
            })
        })? {
            llm_spend.push(row?);
        }
        let wal = super::wal_path(self.path());
        Ok(StoreStatus {
            path: self.path().display().to_string(),
            bytes: fsutil::file_len(self.path()) + fsutil::file_len(&wal),
            schema_version: SCHEMA_VERSION,
            events: count("SELECT count(*) FROM events")?,
            sessions: count("SELECT count(*) FROM sessions")?,
            open_sessions: count("SELECT count(*) FROM sessions WHERE ended_at IS NULL")?,
            observations: count("SELECT count(*) FROM observations")?,
            summaries: count("SELECT count(*) FROM summaries")?,
            to_distil: self.sessions_to_distil()?,
            memories: count("SELECT count(*) FROM memories WHERE status = 'active'")?,
            candidates: count("SELECT count(*) FROM memories WHERE status = 'candidate'")?,
            agents,
            projects,
            hooks,
            llm_spend,
        })
    }

    /// `agent`'s hook runs since `since_ms`.
    pub fn agent_hooks(&self, agent: &str, since_ms: i64) -> Result<AgentHooks> {
        let conn = self.conn();
        let errors = format!("'{}'", ERROR_OUTCOMES.join("','"));
        let (runs, failed, last_run_at) = conn.query_row(
            &format!(
                "SELECT count(*), coalesce(sum(outcome IN ({errors})), 0), max(at) FROM hook_runs
                 WHERE agent = ?1 AND at >= ?2"
            ),
            params![agent, since_ms],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let last_error = conn
            .query_row(
                &format!(
                    "SELECT at, outcome, coalesce(detail, '') FROM hook_runs
                     WHERE agent = ?1 AND at >= ?2 AND outcome IN ({errors})
                     ORDER BY at DESC, id DESC LIMIT 1"
                ),
                params![agent, since_ms],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        Ok(AgentHooks { runs, errors: failed, last_run_at, last_error })
    }

    /// Hook latency per hour since `since_ms`: each hour that saw a run (its start in unix ms),
    /// with its runs and the median and 95th percentile of their durations, oldest first.
    pub fn hook_latency_by_hour(&self, since_ms: i64) -> Result<Vec<HourLatency>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT (at / 3600000) * 3600000, duration_us FROM hook_runs WHERE at >= ?1
             ORDER BY 1, 2",
        )?;
        let rows =
            stmt.query_map([since_ms], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
        let mut hours: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
        for row in rows {
            let (hour, us) = row?;
            hours.entry(hour).or_default().push(us);
        }
        Ok(hours
            .into_iter()
            .map(|(hour_ms, durations)| {
                let pct = |p: f64| {
                    let index = ((durations.len() - 1) as f64 * p).round() as usize;
                    durations[index] as f64 / 1000.0
                };
                HourLatency {
                    hour_ms,
                    runs: durations.len() as i64,
                    p50_ms: pct(0.50),
                    p95_ms: pct(0.95),
                }
            })
            .collect())
    }

    fn hook_window(&self, label: &str, since_ms: i64) -> Result<HookWindow> {
        let conn = self.conn();
        let mut outcomes = BTreeMap::new();
        let mut filtered = BTreeMap::new();
        let mut stmt = conn.prepare_cached(
            "SELECT outcome, coalesce(detail, ''), count(*) FROM hook_runs WHERE at >= ?1
             GROUP BY outcome, detail",
        )?;
        let rows = stmt.query_map([since_ms], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?))
        })?;
        for row in rows {
            let (outcome, detail, n) = row?;
            if outcome == "filtered" {
                *filtered.entry(detail).or_insert(0) += n;
            }
            *outcomes.entry(outcome).or_insert(0) += n;
        }
        let runs: i64 = outcomes.values().sum();
        let errors: i64 = ERROR_OUTCOMES.iter().filter_map(|o| outcomes.get(*o)).sum();
        let mut durations: Vec<i64> = conn
            .prepare_cached(
                "SELECT duration_us FROM hook_runs WHERE at >= ?1 ORDER BY duration_us",
            )?
            .query_map([since_ms], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        durations.sort_unstable();
        let pct = |p: f64| -> f64 {
            if durations.is_empty() {
                return 0.0;
            }
            let index = ((durations.len() - 1) as f64 * p).round() as usize;
            durations[index] as f64 / 1000.0
        };
        Ok(HookWindow {
            window: label.to_owned(),
            runs,
            error_rate: if runs == 0 { 0.0 } else { errors as f64 / runs as f64 },
            p50_ms: pct(0.50),
            p99_ms: pct(0.99),
            outcomes,
            filtered,
        })
    }
}
