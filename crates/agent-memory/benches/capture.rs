//! Capture benchmarks, run as whole processes the way agents run them:
//! bulk import rate into an empty store, then hook wall time for a PostToolUse payload with
//! 100,000 events already stored, against the binary's bare start-up (`--version`) as a
//! baseline measured in the same run.
//!
//! `cargo bench -p agent-memory --bench capture` (release profile). Knobs: `BENCH_EVENTS`
//! (default 100000), `BENCH_RUNS` (default 300).

#![allow(clippy::print_stdout)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agent-memory");

fn main() {
    let events: usize = env_or("BENCH_EVENTS", 100_000);
    let runs: usize = env_or("BENCH_RUNS", 300);
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    let cmd = |args: &[&str]| {
        let mut c = Command::new(BIN);
        c.args(args).env("AGENT_MEMORY_HOME", &home).env("HOME", dir.path());
        c
    };

    // Bulk import.
    let export = dir.path().join("seed.jsonl");
    write_export(&export, events);
    let started = Instant::now();
    let status = cmd(&["import", export.to_str().expect("path")])
        .stderr(Stdio::null())
        .status()
        .expect("import");
    assert!(status.success(), "import failed");
    let import = started.elapsed();
    println!(
        "import: {events} events in {:.2} s = {:.0} events/s",
        import.as_secs_f64(),
        events as f64 / import.as_secs_f64()
    );

    // Process start-up alone, the floor under any hook.
    let baseline = measure(runs, |_| {
        let out = cmd(&["--version"]).stdout(Stdio::null()).status().expect("run");
        assert!(out.success());
    });
    report("start-up (--version)", &baseline);

    // The hook, storing a new tool use each run.
    let hook = measure(runs, |i| {
        let payload = serde_json::json!({
            "session_id": format!("bench-session-{}", i / 50),
            "transcript_path": "/tmp/t.jsonl",
            "cwd": "/tmp",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": format!("cargo test -p {} -- --nocapture", word(i))},
            "tool_response": {"stdout": format!("running 12 tests in {}\ntest result: ok. {i} passed; 0 failed", word(i * 7 + 3)), "stderr": ""},
            "tool_use_id": format!("toolu_{i}"),
        });
        let mut child = cmd(&["hook", "--agent", "claude-code", "--event", "PostToolUse"])
            .stdin(Stdio::piped())
            .spawn()
            .expect("spawn hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(payload.to_string().as_bytes())
            .expect("write");
        assert!(child.wait().expect("wait").success());
    });
    report("hook PostToolUse", &hook);
    println!(
        "hook / start-up, p50: {:.2}x",
        pct(&hook, 0.5).as_secs_f64() / pct(&baseline, 0.5).as_secs_f64()
    );
    let status = cmd(&["status", "--json"]).output().expect("status");
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).expect("status json");
    println!(
        "store: {} events, {} hook runs in 24h, error rate {}",
        status["events"], status["hooks"][0]["runs"], status["hooks"][0]["error_rate"]
    );
}

/// A distinct word for each number, so that no two runs are near-duplicates of each other.
fn word(n: usize) -> String {
    const SYLLABLES: &[&str] = &["ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze"];
    let mut n = n;
    let mut out = String::new();
    loop {
        out.push_str(SYLLABLES[n % SYLLABLES.len()]);
        n /= SYLLABLES.len();
        if n == 0 {
            return out;
        }
    }
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn measure(runs: usize, mut f: impl FnMut(usize)) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..runs)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn report(name: &str, sorted: &[Duration]) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name}: n={} p50 {:.2} ms  p95 {:.2} ms  p99 {:.2} ms  max {:.2} ms",
        sorted.len(),
        ms(pct(sorted, 0.5)),
        ms(pct(sorted, 0.95)),
        ms(pct(sorted, 0.99)),
        ms(sorted[sorted.len() - 1])
    );
}

/// A synthetic export: three agents, sessions of 50 events, prompts and tool uses with varied
/// text in English and Chinese.
fn write_export(path: &std::path::Path, events: usize) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create export"));
    let now = 1_790_000_000_000i64;
    let line = |out: &mut std::io::BufWriter<std::fs::File>, v: serde_json::Value| {
        serde_json::to_writer(&mut *out, &v).expect("write");
        out.write_all(b"\n").expect("newline");
    };
    line(
        &mut out,
        serde_json::json!({"type": "header", "data": {"format": "agent-memory-export", "version": 1, "exported_at": now}}),
    );
    line(
        &mut out,
        serde_json::json!({"type": "project", "data": {"key": "path:/bench", "name": "bench", "root": "/bench", "origin": null}}),
    );
    let agents = ["claude-code", "codex", "gemini"];
    let topics = [
        "payment webhook",
        "login flow",
        "支付回调",
        "数据库迁移",
        "flaky test",
        "build cache",
        "日志模块",
        "API rate limit",
    ];
    for i in 0..events {
        let agent = agents[i % 3];
        let session = format!("{agent}-{}", i / 150);
        let topic = topics[i % topics.len()];
        let (kind, summary, body) = if i % 5 == 0 {
            (
                "prompt",
                format!("Prompt: fix the {topic} issue #{i}"),
                format!("fix the {topic} issue #{i}"),
            )
        } else {
            (
                "tool_use",
                format!("Bash: cargo test {topic} {i}"),
                format!("cargo test {i}\ntest result: ok. {} passed; 0 failed; {topic}", i % 97),
            )
        };
        line(
            &mut out,
            serde_json::json!({"type": "event", "data": {"project": "path:/bench", "content_hash": format!("{i:032x}"), "event": {
                "uid": format!("bench-{i}"), "agent": agent, "kind": kind, "source_event": "bench", "session": session,
                "cwd": "/bench", "at_ms": now + i as i64 * 1000, "tool": if kind == "tool_use" { Some("Bash") } else { None },
                "tool_kind": if kind == "tool_use" { Some("shell") } else { None }, "summary": summary, "body": body,
                "payload": {}, "files": [], "sensitivity": "normal", "transcript_path": null}}}),
        );
    }
    out.flush().expect("flush");
}
