//! `agent-memory serve` under load: idle memory, and API search latency with many concurrent
//! clients on loopback over a store of many observations.
//!
//! `cargo bench -p agent-memory --bench serve` (release profile). Knobs: `BENCH_OBSERVATIONS`
//! (default 100000), `BENCH_CLIENTS` (50), `BENCH_REQUESTS` (per client, 40). Fills a temp home
//! through core's bulk insert (the same triggers as the worker's writes), starts the real
//! binary on 127.0.0.1:0 without its worker, reads its resident memory after it settles, then
//! has every client send searches over one keep-alive connection each. The baseline, measured
//! in the same run: `/api/health` under the same load (the server's floor without the store),
//! and one client searching alone. Prints medians and p95/p99; asserts nothing.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent_memory_core::distil::ObservationDraft;
use agent_memory_core::event::{Event, EventKind, Sensitivity};
use agent_memory_core::paths::Home;
use agent_memory_core::project::ProjectIdentity;
use agent_memory_core::store::Store;
use agent_memory_core::store::distilled::Provenance;

use agent_memory_testkit::synthetic::{Rng, vocabulary};

const BIN: &str = env!("CARGO_BIN_EXE_agent-memory");
const PER_SESSION: usize = 100;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn fill(home: &Home, target: usize) {
    agent_memory_core::fsutil::ensure_private_dir(home.root()).unwrap();
    let mut store = Store::open(&home.db_path(), Duration::from_secs(5)).unwrap();
    let words = vocabulary();
    let mut rng = Rng(7);
    let agents = ["claude-code", "codex", "gemini"];
    let epoch = 1_760_000_000_000i64;
    let sessions = target.div_ceil(PER_SESSION);
    for s in 0..sessions {
        let root = format!("/bench/project-{}", s % 12);
        let identity = ProjectIdentity {
            key: format!("path:{root}"),
            root: root.clone().into(),
            name: format!("project-{}", s % 12),
            origin: None,
            branch: None,
        };
        let at_ms = epoch + s as i64 * 3_600_000;
        let event = Event {
            uid: format!("bench-{s}"),
            agent: agents[s % 3].into(),
            kind: EventKind::Prompt,
            source_event: "UserPromptSubmit".into(),
            session: format!("bench-session-{s}"),
            cwd: Some(root),
            at_ms,
            tool: None,
            tool_kind: None,
            summary: "Prompt: continue".into(),
            body: "continue".into(),
            payload: serde_json::json!({"prompt": "continue"}),
            files: vec![],
            sensitivity: Sensitivity::Normal,
            transcript_path: None,
            facts: Default::default(),
        };
        store.write_recovered(&[(event, format!("{s:032x}"), identity)], &[]).unwrap();
        let pending = store.pending_sessions(1).unwrap();
        let session = pending.into_iter().next().unwrap();
        let first_event = store.session_events(session.session_id, 0).unwrap()[0].id;
        assert!(store.claim_session(session.session_id, "bench", 0, i64::MAX / 4).unwrap());
        let rows = PER_SESSION.min(target - s * PER_SESSION);
        let drafts: Vec<(ObservationDraft, i64, i64)> = (0..rows)
            .map(|k| {
                let mut w =
                    |n: usize| (0..n).map(|_| rng.word(&words)).collect::<Vec<_>>().join(" ");
                let file = format!("src/{}.rs", w(1));
                let draft = ObservationDraft {
                    kind: ["bugfix", "feature", "change", "discovery", "decision"][k % 5].into(),
                    title: format!("Fixed {} in {file}", w(3)),
                    subtitle: w(8),
                    facts: (0..3).map(|_| w(8)).collect(),
                    narrative: w(30),
                    concepts: vec![],
                    files_read: vec![file.clone()],
                    files_modified: vec![file],
                    source_event_ids: vec![
                        first_event,
                        1_000_000_000 + (s * PER_SESSION + k) as i64,
                    ],
                    at_ms: at_ms + k as i64 * 60_000,
                };
                (draft, 120, 1_500)
            })
            .collect();
        let provenance = Provenance { mode: "code", distiller: "offline" };
        store.bulk_insert_observations_for_bench(&session, provenance, &drafts).unwrap();
        // Moves the session's progress on, as the worker's save would have.
        store.save_observations(&session, "bench", provenance, &[], first_event).unwrap();
    }
    store.optimize_recall_indexes().unwrap();
    store.checkpoint().unwrap();
}

/// One keep-alive connection speaking HTTP/1.1, with the server's token as every reader of
/// the API sends it.
struct Client {
    reader: BufReader<TcpStream>,
    host: String,
    token: String,
}

impl Client {
    fn connect(port: u16, token: &str) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_nodelay(true).unwrap();
        let host = format!("127.0.0.1:{port}");
        Client { reader: BufReader::new(stream), host, token: token.to_owned() }
    }

    /// Sends one GET and reads the whole answer; returns its status.
    fn get(&mut self, path: &str) -> u16 {
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\r\n",
            self.host, self.token
        );
        self.reader.get_mut().write_all(request.as_bytes()).unwrap();
        let mut status = 0;
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if status == 0 {
                status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            } else if line == "\r\n" {
                break;
            } else if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        status
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summary(name: &str, mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    let (p50, p95, p99) = (percentile(&ms, 0.5), percentile(&ms, 0.95), percentile(&ms, 0.99));
    println!("{name}: n={} p50={p50:.2} ms p95={p95:.2} ms p99={p99:.2} ms", ms.len());
    p50
}

/// Latencies of `per_client` requests from each of `clients` threads at once.
fn load(
    port: u16,
    token: &str,
    clients: usize,
    per_client: usize,
    path: impl Fn(usize) -> String + Sync,
) -> Vec<f64> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let path = &path;
                scope.spawn(move || {
                    let mut client = Client::connect(port, token);
                    (0..per_client)
                        .map(|i| {
                            let start = Instant::now();
                            assert_eq!(client.get(&path(c * per_client + i)), 200);
                            start.elapsed().as_secs_f64() * 1000.0
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

fn rss_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let observations = env_or("BENCH_OBSERVATIONS", 100_000);
    let clients = env_or("BENCH_CLIENTS", 50);
    let per_client = env_or("BENCH_REQUESTS", 40);
    let dir = tempfile::tempdir().unwrap();
    let home = Home::at(dir.path().join("home"));
    let started = Instant::now();
    fill(&home, observations);
    println!("filled {observations} observations in {:.1} s", started.elapsed().as_secs_f64());

    let mut child = Command::new(BIN)
        .args(["serve", "--port", "0", "--no-worker"])
        .env("AGENT_MEMORY_HOME", home.root())
        .env("HOME", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port: u16 = line.trim().rsplit(':').next().unwrap().parse().unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let token = std::fs::read_to_string(home.root().join("serve.token")).unwrap();
    let token = token.trim();
    println!("idle RSS: {:.1} MB", rss_kib(child.id(), "VmRSS:") as f64 / 1024.0);

    let words = vocabulary();
    let mut rng = Rng(99);
    let queries: Vec<String> = (0..clients * per_client)
        .map(|_| format!("{}%20{}", rng.word(&words), rng.word(&words)))
        .collect();
    let search = |i: usize| format!("/api/search?q={}&limit=20", queries[i % queries.len()]);
    // Warm the page cache and the pool once, then measure.
    load(port, token, 4, 5, search);
    let alone = summary("search, 1 client", load(port, token, 1, per_client * 2, search));
    let health = summary(
        &format!("health, {clients} clients"),
        load(port, token, clients, per_client, |_| "/api/health".to_owned()),
    );
    let busy = summary(
        &format!("search, {clients} clients"),
        load(port, token, clients, per_client, search),
    );
    println!(
        "search p50 under load / alone: {:.1}x; / health under load: {:.1}x",
        busy / alone,
        busy / health.max(0.001)
    );
    println!(
        "RSS after load: {:.1} MB (peak {:.1} MB)",
        rss_kib(child.id(), "VmRSS:") as f64 / 1024.0,
        rss_kib(child.id(), "VmHWM:") as f64 / 1024.0
    );

    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /api/shutdown HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = child.wait().unwrap();
    println!("server stopped: {status}");
}
