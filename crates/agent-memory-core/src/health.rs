//! The health check (`agent-memory doctor --health`, daily from the timer `install --schedule`
//! adds, and from serve's worker while it runs): the store's size and growth, the hooks' error
//! rate and latency over the last day, events no place could take, the spool, the sessions
//! still to distil and the items still to encode, each against a limit of `[health]`. This
//! module owns the limits' meaning and the words of each finding; the caller gathers the
//! readings (the same ones `status` shows).
//!
//! Must not: change anything but its own record of the store's size, which growth is measured
//! against.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::HealthConfig;
use crate::paths::Home;
use crate::{fsutil, time};

/// What the check reads, gathered by the caller.
#[derive(Debug, Clone, Default)]
pub struct Readings {
    pub store_bytes: u64,
    /// Hook runs over the last day, the share of them that failed, and their p99 in ms.
    pub hook_runs: i64,
    pub hook_error_rate: f64,
    pub hook_p99_ms: f64,
    /// Events over the last day that no place could take (the store nor any spool).
    pub lost: i64,
    pub spooled: usize,
    pub to_distil: i64,
    /// Each search model with the items it has yet to encode.
    pub waiting: Vec<(String, i64)>,
}

/// One finding: what was read, against which limit, and whether it is within it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    /// What was found, in words, with the limit.
    pub message: String,
    /// What to do when it is over; empty when it is not.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fix: String,
}

/// The whole check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub ok: bool,
    pub at: i64,
    pub checks: Vec<Check>,
    /// The note written to the vault's inbox, when a vault is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<PathBuf>,
}

const MIB: f64 = 1024.0 * 1024.0;

/// Judges `readings` against `limits`; `grown` is how much the store grew over about the last
/// day, when an earlier reading says.
pub fn check(
    readings: &Readings,
    grown: Option<i64>,
    limits: &HealthConfig,
    now_ms: i64,
) -> Report {
    let mut checks = Vec::new();
    let mut add = |name, ok: bool, message: String, fix: &str| {
        let fix = if ok { String::new() } else { fix.to_owned() };
        checks.push(Check { name, ok, message, fix });
    };
    let mib = readings.store_bytes as f64 / MIB;
    add(
        "store size",
        mib <= limits.max_store_mb as f64,
        format!("the store is {mib:.1} MiB (limit {} MiB)", limits.max_store_mb),
        "`agent-memory tidy` reports what can go; `export` then a fresh home keeps it all",
    );
    if let Some(grown) = grown {
        let grown = grown as f64 / MIB;
        add(
            "store growth",
            grown <= limits.max_growth_mb_per_day as f64,
            format!(
                "the store grew {grown:.1} MiB over the last day (limit {} MiB)",
                limits.max_growth_mb_per_day
            ),
            "an agent may be looping; `agent-memory status` shows which agent's events grew",
        );
    }
    if readings.hook_runs >= limits.min_hook_runs as i64 {
        let rate = readings.hook_error_rate * 100.0;
        add(
            "hook errors",
            readings.hook_error_rate <= limits.max_hook_error_rate,
            format!(
                "{rate:.1}% of {} hook runs over the last day failed (limit {:.1}%)",
                readings.hook_runs,
                limits.max_hook_error_rate * 100.0
            ),
            "`agent-memory doctor` checks every agent's wiring; the log says which hook failed",
        );
        add(
            "hook latency",
            readings.hook_p99_ms <= limits.max_hook_p99_ms as f64,
            format!(
                "hooks took {:.1} ms at p99 over the last day (limit {} ms)",
                readings.hook_p99_ms, limits.max_hook_p99_ms
            ),
            "a busy disk or a locked store slows hooks; `agent-memory status` shows their outcomes",
        );
    }
    add(
        "lost events",
        readings.lost == 0,
        format!("{} events over the last day could be stored nowhere", readings.lost),
        "the home and the temporary folder were not writable; check free space and permissions",
    );
    add(
        "spool",
        readings.spooled <= limits.max_spool_events,
        format!(
            "{} events wait in the spool (limit {})",
            readings.spooled, limits.max_spool_events
        ),
        "`agent-memory recover` stores them; `agent-memory doctor` says why the store refused them",
    );
    add(
        "distil queue",
        readings.to_distil <= limits.max_sessions_to_distil as i64,
        format!(
            "{} sessions wait to be distilled (limit {})",
            readings.to_distil, limits.max_sessions_to_distil
        ),
        "`agent-memory work` distils them; `agent-memory serve` keeps up on its own",
    );
    for (model, waiting) in &readings.waiting {
        add(
            "vectors",
            *waiting <= limits.max_items_to_encode as i64,
            format!("{waiting} items wait for {model} (limit {})", limits.max_items_to_encode),
            "`agent-memory work` encodes them (or `agent-memory reindex` at once)",
        );
    }
    let ok = checks.iter().all(|c| c.ok);
    Report { ok, at: now_ms, checks, note: None }
}

/// The report as a short Markdown note, for the vault's inbox.
pub fn note(report: &Report) -> String {
    let day = time::local_day(report.at);
    let mut text = format!(
        "# agent-memory health, {day}\n\n{}\n\n",
        if report.ok { "Everything is within its limits." } else { "Something is over its limit." }
    );
    for c in &report.checks {
        let mark = if c.ok { "ok" } else { "**over**" };
        text.push_str(&format!("- {mark}: {}", c.message));
        if !c.fix.is_empty() {
            text.push_str(&format!(": {}", c.fix));
        }
        text.push('\n');
    }
    text
}

/// Where the note of `day` goes in a vault: beside the daily candidate notes, under a name the
/// inbox sync leaves alone.
pub fn note_path(vault_root: &Path, day: &str) -> PathBuf {
    vault_root.join(crate::vault::INBOX).join(format!("health-{day}.md"))
}

/// The store's size at each check, newest last: what growth is measured against.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Sizes {
    readings: Vec<(i64, u64)>,
}

fn sizes_path(home: &Home) -> PathBuf {
    home.root().join("health.json")
}

/// Keeps this reading of the store's size and says how much it grew since the reading
/// closest to a day ago (at least 20 hours old), if there is one.
pub fn record_size(home: &Home, bytes: u64, now_ms: i64) -> Option<i64> {
    const DAY: i64 = 86_400_000;
    let path = sizes_path(home);
    let mut sizes: Sizes =
        std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    let grown = sizes
        .readings
        .iter()
        .filter(|(at, _)| now_ms - at >= DAY * 5 / 6)
        .min_by_key(|(at, _)| (now_ms - at - DAY).abs())
        .map(|(_, before)| bytes as i64 - *before as i64);
    sizes.readings.push((now_ms, bytes));
    // A week of readings at most, and no more than one an hour.
    sizes.readings.retain(|(at, _)| now_ms - at <= 7 * DAY);
    sizes.readings.dedup_by(|later, earlier| later.0 - earlier.0 < 3_600_000);
    if let Ok(text) = serde_json::to_vec(&sizes) {
        // A record that cannot be written costs only the next growth figure.
        let _ = fsutil::write_atomic(&path, &text);
    }
    grown
}

/// When serve's worker last ran the check, and whether a day has passed since.
pub fn due(home: &Home, now_ms: i64) -> bool {
    let last = std::fs::read_to_string(home.root().join("health.last"))
        .ok()
        .and_then(|t| t.trim().parse::<i64>().ok());
    last.is_none_or(|last| now_ms - last >= 86_400_000)
}

/// Notes that the check ran now (for [`due`]).
pub fn ran(home: &Home, now_ms: i64) {
    let _ = fsutil::write_atomic(&home.root().join("health.last"), now_ms.to_string().as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reading_over_its_limit_is_a_finding_with_its_fix() {
        let limits = HealthConfig { min_hook_runs: 1, ..HealthConfig::default() };
        let calm = Readings { hook_runs: 50, hook_error_rate: 0.0, ..Readings::default() };
        let report = check(&calm, Some(0), &limits, 0);
        assert!(report.ok, "{report:#?}");
        assert!(report.checks.iter().all(|c| c.fix.is_empty()));

        let busy = Readings {
            hook_runs: 10,
            hook_error_rate: 0.5,
            spooled: limits.max_spool_events + 1,
            waiting: vec![("potion-base-8m".into(), 3)],
            ..Readings::default()
        };
        let report = check(&busy, None, &limits, 0);
        let over: Vec<&str> = report.checks.iter().filter(|c| !c.ok).map(|c| c.name).collect();
        assert_eq!(over, ["hook errors", "spool"]);
        assert!(!report.ok);
        let text = note(&report);
        assert!(
            text.contains("- **over**: 50.0% of 10 hook runs over the last day failed"),
            "{text}"
        );
        assert!(text.contains("`agent-memory recover` stores them"), "{text}");
        // Too few runs to judge a rate: no hook findings at all.
        let quiet = Readings { hook_runs: 3, hook_error_rate: 1.0, ..Readings::default() };
        let report = check(&quiet, None, &HealthConfig::default(), 0);
        assert!(report.checks.iter().all(|c| !c.name.starts_with("hook")), "{report:#?}");
    }
}
