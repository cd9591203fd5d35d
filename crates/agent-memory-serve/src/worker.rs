//! The background worker `serve` hosts: one `work` pass (spool drain, distil, embed) every
//! interval, on a blocking thread so that requests never wait for it.
//!
//! A failed pass is retried with a growing backoff (never silently dropped: every failure is
//! logged and shown on the health page), and a pass in flight always finishes before the
//! server stops. The pass itself is handed in by the binary, which knows the distillers and
//! models; this module knows only when to run it. Must not: run two passes at once.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{Notify, watch};

/// One pass: what it did, in a line, or why it failed.
pub type Pass = Box<dyn FnMut() -> Result<String, String> + Send>;

/// The longest wait between retries of a failing pass.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// How the worker is doing, for the health page.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WorkerStatus {
    pub enabled: bool,
    pub passes: u64,
    pub running: bool,
    pub last_started_at_ms: Option<i64>,
    pub last_finished_at_ms: Option<i64>,
    /// What the last successful pass did.
    pub last_report: Option<String>,
    /// Why the last pass failed, until one succeeds.
    pub last_error: Option<String>,
    pub consecutive_failures: u32,
}

/// Shared view of the worker's status.
pub type StatusCell = Arc<Mutex<WorkerStatus>>;

/// Runs `pass` every `interval`, or at once when nudged, until `stop` turns true; returns once the pass in flight, if
/// any, has finished.
pub async fn run(
    pass: Pass,
    interval: Duration,
    status: StatusCell,
    mut stop: watch::Receiver<bool>,
    nudge: Arc<Notify>,
) {
    let pass = Arc::new(Mutex::new(pass));
    edit(&status, |s| s.enabled = true);
    let mut failures: u32 = 0;
    loop {
        if *stop.borrow() {
            return;
        }
        edit(&status, |s| {
            s.running = true;
            s.last_started_at_ms = Some(agent_memory_core::time::now_ms());
        });
        let job = Arc::clone(&pass);
        // A pass that panics poisons nothing for the next one: the closure is taken back out
        // of the poisoned lock and tried again after the backoff.
        let outcome = tokio::task::spawn_blocking(move || {
            let mut pass = job.lock().unwrap_or_else(PoisonError::into_inner);
            (pass)()
        })
        .await
        .unwrap_or_else(|err| Err(format!("the pass stopped abruptly: {err}")));
        let wait = match outcome {
            Ok(report) => {
                failures = 0;
                tracing::debug!(%report, "work pass");
                edit(&status, |s| {
                    s.passes += 1;
                    s.last_report = Some(report);
                    s.last_error = None;
                    s.consecutive_failures = 0;
                });
                interval
            }
            Err(err) => {
                failures = failures.saturating_add(1);
                let wait = backoff(interval, failures);
                tracing::warn!(%err, failures, retry_in = ?wait, "work pass failed; will retry");
                edit(&status, |s| {
                    s.passes += 1;
                    s.last_error = Some(err);
                    s.consecutive_failures = failures;
                });
                wait
            }
        };
        edit(&status, |s| {
            s.running = false;
            s.last_finished_at_ms = Some(agent_memory_core::time::now_ms());
        });
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stop.changed() => {}
            () = nudge.notified() => {}
        }
    }
}

/// The wait before the next try after `failures` failed passes in a row: a few seconds at
/// first, doubling, never more than [`MAX_BACKOFF`] nor less than a second.
pub fn backoff(interval: Duration, failures: u32) -> Duration {
    if failures == 0 {
        return interval;
    }
    let base = Duration::from_secs(2);
    let doubled = base.saturating_mul(1u32 << failures.min(10).saturating_sub(1));
    doubled.min(MAX_BACKOFF).max(Duration::from_secs(1))
}

fn edit(status: &StatusCell, change: impl FnOnce(&mut WorkerStatus)) {
    change(&mut status.lock().unwrap_or_else(PoisonError::into_inner));
}
