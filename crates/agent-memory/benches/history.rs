//! Day-zero import benchmark: a synthetic history written where the agents write theirs, under
//! a temporary HOME, imported by the built binary as a user would (`agent-memory history import
//! --no-work`), then imported again (nothing new: every session unchanged).
//!
//! The history is `BENCH_SESSIONS` (default 20,000) Claude Code transcripts of 20 turns each:
//! a prompt, three shell calls with their output and a closing answer per turn, plus the
//! session start, so 101 events a session (about 2 million in all), spread over 60 projects
//! and a year, each call's command and output distinct so no capture filter drops it. Beside
//! it, every agent's recorded real history under `agent-memory-testkit/fixtures/history/`
//! (copied as is) shows that each format goes through the same run.
//!
//! Reported: wall time and events per second of the first import, peak resident memory of the
//! importing process (`VmHWM`, polled), and the second import's time.
//!
//! `cargo bench -p agent-memory --bench history` (release profile). Knobs: `BENCH_SESSIONS`,
//! `BENCH_TURNS` (default 20), `BENCH_HOME` (run in this directory and keep it).

#![allow(clippy::print_stdout)]

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_agent-memory");
/// 2025-12-01T00:00:00Z: the history's first day.
const START_MS: i64 = 1_764_547_200_000;

fn main() {
    let sessions: usize = env_or("BENCH_SESSIONS", 20_000);
    let turns: usize = env_or("BENCH_TURNS", 20);
    let temp = tempfile::tempdir().expect("temp dir");
    let root =
        std::env::var_os("BENCH_HOME").map_or_else(|| temp.path().to_path_buf(), PathBuf::from);
    std::fs::create_dir_all(&root).expect("create BENCH_HOME");
    let user = root.join("user");

    let started = Instant::now();
    let (bytes, events) = write_history(&user, sessions, turns);
    let fixtures = copy_fixtures(&user);
    println!(
        "history: {sessions} Claude Code sessions, {events} events, {:.0} MB written in {:.1} s; \
         {fixtures} recorded sessions of the other formats beside them",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );

    let run = |label: &str| {
        let mut cmd = Command::new(BIN);
        cmd.args(["history", "import", "--no-work", "--json"])
            .env("HOME", &user)
            .env("AGENT_MEMORY_HOME", root.join("home"))
            .env("XDG_CONFIG_HOME", user.join(".config"))
            .env("XDG_DATA_HOME", user.join(".local/share"))
            .env_remove("CODEX_HOME")
            .env_remove("HERMES_HOME")
            .env_remove("COPILOT_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let started = Instant::now();
        let mut child = cmd.spawn().expect("run history import");
        let mut peak = 0;
        loop {
            peak = peak.max(rss_kib(child.id()));
            if let Some(status) = child.try_wait().expect("wait") {
                assert!(status.success(), "{label} failed");
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let took = started.elapsed();
        let mut out = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().expect("stdout"), &mut out)
            .expect("read report");
        let report: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
        let stored: u64 = report
            .as_array()
            .map(|a| a.iter().filter_map(|r| r["events"].as_u64()).sum())
            .unwrap_or(0);
        (took, peak, stored, report)
    };

    let (first, peak, stored, report) = run("the first import");
    println!(
        "first import: {stored} events in {:.1} s = {:.0} events/s, peak RSS {:.0} MB",
        first.as_secs_f64(),
        stored as f64 / first.as_secs_f64(),
        peak as f64 / 1024.0
    );
    for agent in report.as_array().into_iter().flatten() {
        println!(
            "  {}: {} sessions, {} events, {} already, {} left out, {} unreadable",
            agent["agent"],
            agent["sessions"],
            agent["events"],
            agent["already"],
            agent["skipped"],
            agent["malformed"]
        );
    }
    let (second, _, again, _) = run("the second import");
    println!(
        "second import: {again} new events in {:.2} s ({:.1}% of the first)",
        second.as_secs_f64(),
        100.0 * second.as_secs_f64() / first.as_secs_f64()
    );
}

/// Writes the synthetic Claude Code history; returns its bytes and events.
fn write_history(user: &Path, sessions: usize, turns: usize) -> (u64, usize) {
    let mut bytes = 0;
    let mut events = 0;
    let span_ms = 365 * 24 * 3_600_000_i64;
    for s in 0..sessions {
        let project = format!("/home/dev/work/project-{:02}", s % 60);
        let dir = user.join(".claude/projects").join(project.replace('/', "-"));
        std::fs::create_dir_all(&dir).expect("project folder");
        let session = format!("{:08x}-0000-4000-8000-{:012x}", s, s * 7919);
        let path = dir.join(format!("{session}.jsonl"));
        let mut out = BufWriter::new(std::fs::File::create(&path).expect("transcript"));
        let mut at = START_MS + span_ms / sessions as i64 * s as i64;
        let mut line = |kind: &str, uuid: String, extra: serde_json::Value| {
            at += 1_500;
            let mut line = json!({
                "type": kind, "uuid": uuid, "sessionId": session, "cwd": project,
                "timestamp": agent_memory_core::time::format_rfc3339(at), "isSidechain": false,
                "version": "2.1.332", "userType": "external",
            });
            if let (Some(line), serde_json::Value::Object(extra)) = (line.as_object_mut(), extra) {
                line.extend(extra);
            }
            let text = line.to_string();
            writeln!(out, "{text}").expect("write");
            text.len() as u64 + 1
        };
        events += 1;
        for t in 0..turns {
            let n = s * turns + t;
            bytes += line(
                "user",
                format!("u{n}"),
                json!({"message": {"role": "user", "content": format!(
                    "Turn {n}: the invoice total for customer {} is off by a cent again, find out why",
                    n % 997
                )}}),
            );
            for c in 0..3 {
                let call = format!("toolu_{n}_{c}");
                let command = format!("python3 -m pytest tests/test_invoice_{c}.py -k case_{n}");
                bytes += line(
                    "assistant",
                    format!("a{n}-{c}"),
                    json!({"message": {"role": "assistant", "content": [
                        {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}
                    ]}}),
                );
                let stdout = format!(
                    "collected 14 items\ntests/test_invoice_{c}.py::test_case_{n} FAILED\nE assert {} == {}\n{}",
                    n * 3 + c,
                    n * 3 + c + 1,
                    "=".repeat(40)
                );
                bytes += line(
                    "user",
                    format!("r{n}-{c}"),
                    json!({"message": {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": call, "content": stdout}
                    ]}, "toolUseResult": {"stdout": stdout, "stderr": "", "interrupted": false}}),
                );
            }
            bytes += line(
                "assistant",
                format!("t{n}"),
                json!({"message": {"role": "assistant", "content": [{"type": "text", "text": format!(
                    "Case {n}: rounding per line item lost a cent; the total is now rounded once."
                )}]}}),
            );
            bytes += line("system", format!("s{n}"), json!({"subtype": "stop_hook_summary"}));
            events += 5;
        }
        out.flush().expect("flush");
    }
    (bytes, events)
}

/// Copies every agent's recorded real history into the user's HOME; returns how many
/// recordings there were.
fn copy_fixtures(user: &Path) -> usize {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-memory-testkit/fixtures/history");
    let mut copied = 0;
    for entry in std::fs::read_dir(&fixtures).into_iter().flatten().flatten() {
        let home = entry.path().join("home");
        if home.is_dir() {
            copy_tree(&home, user);
            copied += 1;
        }
    }
    copied
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("create folder");
            copy_tree(&entry.path(), &target);
        } else if !target.exists() {
            std::fs::copy(entry.path(), &target).expect("copy fixture");
        }
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
