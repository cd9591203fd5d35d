//! Pipeline benchmarks, run as whole processes the way agents and people run them: bulk import
//! rate into an empty store; hook wall time for a PostToolUse payload with the imported events
//! stored, against the binary's bare start-up (`--version`) as a baseline measured in the same
//! run; the offline distiller's throughput over the whole store (`agent-memory work`); and,
//! over what it distilled, the hooks that answer: the session-start briefing, prompt-time
//! recall, and file context before a read, each with the record of what it handed (one
//! `injections` row per answer, which `agent-memory log` lists), against the same hook with
//! that answer switched off.
//!
//! `cargo bench -p agent-memory --bench pipeline` (release profile). Knobs: `BENCH_EVENTS`
//! (default 100000), `BENCH_RUNS` (default 300), `BENCH_HOME` (run in this directory and keep it).

#![allow(clippy::print_stdout)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agent-memory");

fn main() {
    let events: usize = env_or("BENCH_EVENTS", 100_000);
    let runs: usize = env_or("BENCH_RUNS", 300);
    let temp = tempfile::tempdir().expect("temp dir");
    // `BENCH_HOME=DIR` runs in DIR (created, then kept) so a profiler can replay its steps,
    // the seed export `seed.jsonl` among them.
    let root = std::env::var_os("BENCH_HOME")
        .map_or_else(|| temp.path().to_path_buf(), std::path::PathBuf::from);
    std::fs::create_dir_all(&root).expect("create BENCH_HOME");
    let dir = root.as_path();
    let home = dir.join("home");
    let cmd = |args: &[&str]| {
        let mut c = Command::new(BIN);
        c.args(args).env("AGENT_MEMORY_HOME", &home).env("HOME", dir);
        c
    };

    // Bulk import.
    let export = dir.join("seed.jsonl");
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
    // The offline distiller over every stored session.
    let started = Instant::now();
    let out = cmd(&["work", "--json"]).output().expect("work");
    assert!(out.status.success(), "work failed: {}", String::from_utf8_lossy(&out.stderr));
    let elapsed = started.elapsed();
    let work: serde_json::Value = serde_json::from_slice(&out.stdout).expect("work json");
    println!(
        "distil: {} events in {} sessions in {:.2} s = {:.0} events/s ({} observations, {} summaries)",
        events + runs,
        work["sessions"],
        elapsed.as_secs_f64(),
        (events + runs) as f64 / elapsed.as_secs_f64(),
        work["observations"],
        work["summaries"]
    );

    // What a person meets right after a pass: the log the pass left, and a CLI search then,
    // beside the same searches once the log is checkpointed by hand.
    let wal = home.join("memory.db-wal");
    let wal_len = || std::fs::metadata(&wal).map_or(0, |m| m.len());
    println!("write-ahead log after the work pass: {} bytes", wal_len());
    let searches = runs.clamp(5, 30);
    let search = |i: usize| {
        let query = format!("payment webhook module{}", i % 50);
        let out = cmd(&["search", &query, "--limit", "10"]).output().expect("search");
        assert!(out.status.success(), "search failed");
    };
    report("CLI search right after the work pass", &measure(searches, search));
    let store = agent_memory_core::store::Store::open(
        &home.join("memory.db"),
        std::time::Duration::from_secs(5),
    )
    .expect("store");
    store.checkpoint().expect("checkpoint");
    drop(store);
    println!("write-ahead log after a checkpoint by hand: {} bytes", wal_len());
    report("CLI search after a checkpoint by hand", &measure(searches, search));

    // Hooks that answer, over the distilled store: the session-start briefing, prompt-time
    // recall (a prompt about one of the synthetic bugs), and file context before a read; each
    // against the same hook with that answer switched off, measured alternately.
    let answering = |agent: &str, event: &str, payload: serde_json::Value, off: &str| -> bool {
        let mut command = cmd(&["hook", "--agent", agent, "--event", event]);
        if !off.is_empty() {
            command.env(off, "false");
        }
        let mut child =
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawn hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(payload.to_string().as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success());
        !out.stdout.is_empty()
    };
    let payload = |i: usize, event: &str| {
        let mut payload = serde_json::json!({"session_id": format!("{event}-{}", i / 50),
            "transcript_path": "/tmp/t.jsonl", "cwd": "/bench", "hook_event_name": event});
        match event {
            "SessionStart" => payload["session_id"] = serde_json::json!(format!("start-{i}")),
            "UserPromptSubmit" => {
                payload["prompt"] = serde_json::json!(format!(
                    "the payment webhook in module{} cannot find value depth again ({})",
                    i % 50,
                    word(i)
                ))
            }
            _ => {
                payload["tool_name"] = serde_json::json!("Read");
                payload["tool_input"] =
                    serde_json::json!({"file_path": format!("/bench/src/module{}.rs", i % 50)});
            }
        }
        payload
    };
    for (event, switch, what) in [
        ("SessionStart", "AGENT_MEMORY_INJECT__SESSION_START", "briefing"),
        ("UserPromptSubmit", "AGENT_MEMORY_INJECT__PROMPT_RECALL", "prompt recall"),
        ("PreToolUse", "AGENT_MEMORY_INJECT__FILE_CONTEXT", "file context"),
    ] {
        let (mut on, mut off, mut answered) = (Vec::new(), Vec::new(), 0);
        for i in 0..runs {
            let t = Instant::now();
            answered += usize::from(answering("claude-code", event, payload(i, event), ""));
            on.push(t.elapsed());
            let t = Instant::now();
            answering("claude-code", event, payload(i + runs, event), switch);
            off.push(t.elapsed());
        }
        on.sort();
        off.sort();
        report(&format!("hook {event} with {what} (answered {answered} of {runs})"), &on);
        report(&format!("hook {event} without it"), &off);
    }
    // Every answer above was recorded as it was handed: the timings include that write.
    let log = cmd(&["log", "--json", "--limit", "1000"]).output().expect("log");
    let log: serde_json::Value = serde_json::from_slice(&log.stdout).expect("log json");
    let rows = log.as_array().map_or(0, Vec::len);
    println!("injections on record (up to 1000 listed): {rows}");

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

/// One synthetic event, by its place in a ten-event turn: a prompt, a failing test run, a read,
/// an edit, the test passing, a second prompt (now and then a decision), a new test file, a
/// passing run, a read, and the stop. `(kind, tool, tool kind, summary, body, payload, files)`.
fn synthetic(
    i: usize,
    topic: &str,
) -> (
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    String,
    String,
    serde_json::Value,
    Vec<String>,
) {
    let slug = format!("module{}", i / 10 % 50);
    let file = format!("/bench/src/{slug}.rs");
    let test = format!("cargo test -p {slug}");
    let shell = |ok: bool, output: String| {
        let summary =
            if ok { format!("Bash: {test}") } else { format!("Bash failed (exit 101): {test}") };
        let payload =
            serde_json::json!({"input": {"command": test}, "output": output, "is_error": !ok});
        (
            "tool_use",
            Some("Bash"),
            Some("shell"),
            summary,
            format!("{test}\n{output}"),
            payload,
            vec![],
        )
    };
    let file_tool = |tool: &'static str, kind: &'static str, path: String| {
        let payload =
            serde_json::json!({"input": {"file_path": path}, "output": "", "is_error": false});
        (
            "tool_use",
            Some(tool),
            Some(kind),
            format!("{tool} {path}"),
            path.clone(),
            payload,
            vec![path],
        )
    };
    let prompt = |text: String| {
        let payload = serde_json::json!({"prompt": text});
        ("prompt", None, None, format!("Prompt: {text}"), text, payload, vec![])
    };
    match i % 10 {
        0 => prompt(format!("fix the {topic} issue in {slug}")),
        1 => {
            shell(false, format!("error[E0425]: cannot find value `depth` in this scope ({topic})"))
        }
        2 => file_tool("Read", "read", file),
        3 => file_tool("Edit", "edit", file),
        4 => shell(true, "test result: ok. 12 passed; 0 failed".into()),
        5 if (i / 10).is_multiple_of(3) => prompt(format!(
            "from now on use the {topic} helpers instead of raw SQL, because they escape input"
        )),
        5 => prompt(format!("now add a test for {topic}")),
        6 => file_tool("Write", "write", format!("/bench/tests/{slug}_test.rs")),
        7 => shell(true, "test result: ok. 13 passed; 0 failed".into()),
        8 => file_tool("Read", "read", "/bench/README.md".into()),
        _ => (
            "stop",
            None,
            None,
            "Turn ended".into(),
            format!("done with {topic}"),
            serde_json::json!({"last_message": "done"}),
            vec![],
        ),
    }
}

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
        // 150 consecutive events a session, each agent in turn.
        let agent = agents[i / 150 % 3];
        let session = format!("{agent}-{}", i / 150);
        let topic = topics[i / 10 % topics.len()];
        let (kind, tool, tool_kind, summary, body, payload, files) = synthetic(i, topic);
        line(
            &mut out,
            serde_json::json!({"type": "event", "data": {"project": "path:/bench", "content_hash": format!("{i:032x}"), "event": {
                "uid": format!("bench-{i}"), "agent": agent, "kind": kind, "source_event": "bench", "session": session,
                "cwd": "/bench", "at_ms": now + i as i64 * 1000, "tool": tool, "tool_kind": tool_kind,
                "summary": summary, "body": body, "payload": payload, "files": files,
                "sensitivity": "normal", "transcript_path": null}}}),
        );
    }
    out.flush().expect("flush");
}
