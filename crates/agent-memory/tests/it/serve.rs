//! `agent-memory serve`: the real binary listening on 127.0.0.1:0, spoken to over real HTTP.
//! The JSON API over a store filled by real hooks and a `work` pass; the security gate (token
//! on mutations and `/mcp`, foreign Host and Origin refused, loopback by default); private
//! events never served; the live feed showing a hook run in another process; the worker
//! distilling on its own; one instance per home, `--status` and a graceful `--stop`; MCP over
//! streamable HTTP with the official Python SDK client; and the viewer in real headless
//! Chromium through playwright-core (`serve/browser.cjs`; `serve/tour.cjs`, which reads every
//! page in both languages; `serve/home.cjs`, the sessions home, its filters and live cards;
//! `serve/memory.cjs`, memory managed and review in bulk; `serve/details.cjs`, agents' wiring,
//! hook latency, what each session was handed and memories' file marks; `serve/speed.cjs`, two
//! hundred cards timed), with screenshots kept under `target/serve-screenshots/`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use agent_memory_testkit::TestHome;
use agent_memory_testkit::trickle::Tricklers;
use serde_json::{Value, json};

use crate::mcp::seeded;
use crate::recall_inject::{CODEX_PROMPT, codex_fixes_the_parser};
use crate::trust::git;
use crate::{assert_quiet_success, home, payload};

/// Servers of this module take turns: each one's worker and blocking pool would otherwise
/// compete for the same two cores as every other running test.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// This test's turn at running servers.
pub(crate) fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running `agent-memory serve` and where it listens.
pub(crate) struct Server {
    child: Child,
    url: String,
    port: u16,
    token: String,
}

impl Server {
    pub(crate) fn start(home: &TestHome, extra_env: &[(&str, &str)]) -> Server {
        let mut cmd = home.cmd();
        cmd.args(["serve", "--port", "0"]).stdout(Stdio::piped()).stderr(Stdio::piped());
        for (key, value) in extra_env {
            cmd.env(key, value);
        }
        let mut child = cmd.spawn().expect("spawn agent-memory serve");
        let mut line = String::new();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        stdout.read_line(&mut line).expect("read the first line");
        // The rest of what serve prints is read and dropped, so its pipe never closes on it.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        // One address: the viewer's, with the token it needs.
        let Some((url, printed)) = line
            .trim()
            .strip_prefix("agent-memory serve: viewer at ")
            .and_then(|address| address.split_once("/?token="))
        else {
            let _ = child.kill();
            let out = child.wait_with_output().expect("wait");
            panic!(
                "serve did not say where its viewer is: {line:?}\n{}",
                agent_memory_testkit::describe(&out)
            );
        };
        let url = url.to_owned();
        let port = url.rsplit(':').next().and_then(|p| p.parse().ok()).expect("a port");
        let token = std::fs::read_to_string(home.home().join("serve.token")).expect("token file");
        let token = token.trim().to_owned();
        assert_eq!(printed, token, "the printed address carries the token serve checks");
        Server { child, url, port, token }
    }

    /// The address `serve` printed, which opens the viewer.
    fn viewer(&self) -> String {
        format!("{}/?token={}", self.url, self.token)
    }

    /// A GET with the token, as the viewer and the CLI send it.
    fn get(&self, path: &str) -> Response {
        request(self.port, "GET", path, &[("Authorization", &format!("Bearer {}", self.token))], "")
    }

    pub(crate) fn json(&self, path: &str) -> Value {
        let response = self.get(path);
        assert_eq!(response.status, 200, "GET {path}: {}", response.body);
        response.json()
    }

    /// `serve --stop`, and the process ends with success.
    pub(crate) fn stop(mut self, home: &TestHome) {
        let out = home.cmd().args(["serve", "--stop"]).output().expect("serve --stop");
        assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("stopped"));
        let status = self.child.wait().expect("wait for serve");
        assert!(status.success(), "serve exits cleanly: {status}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One HTTP answer.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: String,
    body: String,
}

impl Response {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// One HTTP/1.1 request with `Connection: close`; `headers` may replace the Host.
fn request(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(head.as_bytes()).expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (headers, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = headers.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status");
    let body = if headers.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Response { status, headers: headers.to_owned(), body }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// A Claude Code read of a sensitive file: stored as a private event.
fn read_env_file(home: &TestHome, session: &str, cwd: &str) {
    let body = payload(
        session,
        "PostToolUse",
        cwd,
        json!({
            "tool_name": "Read",
            "tool_input": {"file_path": format!("{cwd}/.env")},
            "tool_response": {"type": "text", "file": {"filePath": format!("{cwd}/.env"), "content": "DB_HOST=internal-db-7\n"}},
            "tool_use_id": "toolu_env",
        }),
    );
    assert_quiet_success(&home.hook("claude-code", "PostToolUse", &body));
}

#[test]
fn the_api_answers_from_the_store_and_stops_gracefully() {
    let _turn = turn();
    let (home, app) = seeded();
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600")]);
    assert!(server.url.starts_with("http://127.0.0.1:"), "loopback by default: {}", server.url);
    use std::os::unix::fs::PermissionsExt as _;
    let mode =
        std::fs::metadata(home.home().join("serve.token")).expect("token").permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the token is private");
    assert_eq!(server.token.len(), 64);

    let health = server.json("/api/health");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["language"], "en");

    let sessions = server.json("/api/sessions?agent=codex");
    let session = &sessions["sessions"][0];
    assert_eq!(session["agent"], "codex");
    assert_eq!(session["source_id"], "codex-fix");
    assert!(session["summary_id"].is_i64(), "{session}");

    let observations = server.json("/api/observations?agent=codex&limit=10");
    let list = observations["observations"].as_array().expect("list");
    assert!(!list.is_empty(), "{observations}");
    let first = list.iter().map(|o| o["id"].as_i64().expect("id")).min().expect("one");
    let observation = server.json(&format!("/api/observations/{first}"));
    assert_eq!(observation["agent"], "codex");
    assert!(observation["facts"].is_array() && observation["source_events"].is_array());
    assert_eq!(observation["session_id"], session["id"]);

    // The home's cards: the session with its summary and its observations one line each, the
    // filters' choices on the first page only.
    let cards = server.json("/api/session-cards?agent=codex");
    let card = &cards["sessions"][0];
    assert_eq!((&card["id"], &card["source_id"]), (&session["id"], &json!("codex-fix")), "{cards}");
    assert_eq!(card["summary"]["id"], session["summary_id"], "{card}");
    assert_eq!(card["first_prompt"], CODEX_PROMPT, "{card}");
    let lines = card["lines"].as_array().expect("lines");
    assert!(!lines.is_empty() && lines.iter().all(|l| l["emoji"].is_string()), "{card}");
    assert_eq!(card["observations"].as_u64(), Some(lines.len() as u64), "{card}");
    assert_eq!((&cards["next"], &cards["agents"]), (&Value::Null, &json!(["codex"])), "{cards}");
    assert!(cards["types"].as_array().is_some_and(|t| t.iter().any(|t| t["key"] == "bugfix")));
    let one = server.json(&format!("/api/session-cards?session={}", session["id"]));
    assert_eq!(one["sessions"][0]["lines"], card["lines"]);
    assert!(one.get("types").is_none(), "{one}");
    let paged = server.json("/api/session-cards?limit=1");
    assert_eq!(paged["next"], paged["sessions"][0]["id"], "{paged}");
    let after = server.json(&format!("/api/session-cards?limit=1&before={}", paged["next"]));
    assert_eq!(after["sessions"], json!([]), "one session: {after}");

    let page = server.json(&format!("/api/sessions/{}", session["id"]));
    assert_eq!(page["summary"]["id"], session["summary_id"]);
    assert!(!page["events"].as_array().expect("events").is_empty());
    assert!(!page["timeline"].as_array().expect("timeline").is_empty());

    let found = server.json("/api/search?q=parser%20depth&limit=5");
    let hits = found["hits"].as_array().expect("hits");
    assert!(!hits.is_empty(), "{found}");
    assert!(hits[0].get("parts").is_none(), "parts only with explain");
    let explained = server.json("/api/search?q=parser%20depth&limit=5&explain=1&agent=codex");
    assert!(explained["hits"][0]["parts"]["relevance"].is_f64(), "{explained}");
    let none = server.json("/api/search?q=parser&agent=gemini");
    assert_eq!(none["hits"], json!([]));

    let reference = hits[0]["ref"].as_str().expect("ref").to_owned();
    let items = server.json(&format!("/api/items?ids={reference},o999999"));
    assert_eq!(items["items"][0]["id"], reference);
    assert_eq!(items["missing"], json!([{ "id": "o999999", "code": "not_found" }]));
    let timeline = server.json(&format!("/api/timeline?anchor=o{first}&before=2&after=2"));
    assert_eq!(timeline["anchor"], format!("o{first}"));
    assert!(!timeline["items"].as_array().expect("items").is_empty());

    let projects = server.json("/api/projects");
    assert_eq!(projects["projects"][0]["root"], app);
    assert!(!server.json("/api/summaries")["summaries"].as_array().expect("list").is_empty());
    assert!(!server.json("/api/events?type=prompt")["events"].as_array().expect("e").is_empty());
    let stats = server.json("/api/stats");
    assert!(stats["store"]["events"].as_i64().expect("events") >= 6, "{stats}");
    assert!(stats["events_per_day"][0]["agent"] == "codex", "{stats}");
    assert_eq!(stats["spool"]["files"], 0);

    // The injections on record: the same list as `log --json`.
    assert_eq!(server.json("/api/injections"), json!([]));
    let start = crate::recall_inject::with(
        crate::recall_inject::sample("claude-code", "SessionStart"),
        json!({ "session_id": "claude-api", "cwd": app }),
    );
    let out = home.hook("claude-code", "SessionStart", &start);
    assert!(!out.stdout.is_empty(), "a briefing: {}", agent_memory_testkit::describe(&out));
    let injections = server.json("/api/injections?session=claude-api&agent=claude-code&limit=5");
    assert_eq!(injections, home.json(&["log"]), "as `log --json` lists them");
    assert_eq!(injections[0]["channel"], "briefing", "{injections}");

    // Errors are `{message, code}` with stable codes; the bodies are what a caller reads.
    let errors: Vec<(String, u16, Value)> = [
        "/api/search?q=",
        "/api/search?q=x&colour=red",
        "/api/observations/999999",
        "/api/sessions?limit=100000",
        "/api/search?q=x&kind=memo",
        "/api/observations?agent=nosuch",
        "/api/events?project=nosuchproj",
        "/api/injections?agent=nosuch",
        "/api/injections?limit=0",
        "/api/session-cards?limit=101",
        "/api/memories?status=gone",
        "/api/nothing-here",
    ]
    .iter()
    .map(|path| {
        let r = server.get(path);
        ((*path).to_owned(), r.status, r.json())
    })
    .collect();
    let shown: String =
        errors.iter().map(|(path, status, body)| format!("{path} {status} {body}\n")).collect();
    expect_test::expect![[r#"
        /api/search?q= 400 {"code":"bad_request","message":"`q` is empty; pass the words to look for"}
        /api/search?q=x&colour=red 400 {"code":"bad_request","message":"unknown parameter `colour`; this route takes q, limit, kind, tier, type, agent, project, since, until, explain"}
        /api/observations/999999 404 {"code":"not_found","message":"no observation is stored under id 999999"}
        /api/sessions?limit=100000 400 {"code":"bad_request","message":"`limit` is `100000`; pass a whole number from 0 to 500"}
        /api/search?q=x&kind=memo 400 {"code":"bad_request","message":"`kind` is `memo`; pass observation, summary, event or memory"}
        /api/observations?agent=nosuch 400 {"code":"bad_request","message":"`agent` is `nosuch`, which has recorded nothing; pass one of claude-code, codex, gemini, opencode, copilot, hermes"}
        /api/events?project=nosuchproj 400 {"code":"bad_request","message":"`project` is `nosuchproj`, which is no stored project; pass one of app, or a directory inside it"}
        /api/injections?agent=nosuch 400 {"code":"bad_request","message":"`agent` is `nosuch`, which has recorded nothing; pass one of claude-code, codex, gemini, opencode, copilot, hermes"}
        /api/injections?limit=0 400 {"code":"bad_request","message":"`limit` is 0; pass a number from 1 to 1000"}
        /api/session-cards?limit=101 400 {"code":"bad_request","message":"`limit` is `101`; pass a whole number from 0 to 100"}
        /api/memories?status=gone 400 {"code":"bad_request","message":"`status` is `gone`; pass active, forgotten, superseded, rejected, candidate or all"}
        /api/nothing-here 404 {"code":"not_found","message":"no such route; see docs/http-api.md"}
    "#]]
    .assert_eq(&shown);

    // One instance per home; `--status` finds it; `--stop` ends it gracefully.
    let second = home.cmd().args(["serve", "--port", "0"]).output().expect("second serve");
    assert!(!second.status.success());
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains("already running") && said.contains(&server.url), "{said}");
    let status = home.json(&["serve", "--status"]);
    assert_eq!(status["running"], true, "{status}");
    assert_eq!(status["state"]["url"], server.url.as_str());
    let said = home.ok(&["serve", "--status"]);
    assert!(said.trim_end().ends_with(&format!("viewer at {}", server.viewer())), "{said}");
    server.stop(&home);
    assert!(!home.home().join("serve.json").exists(), "the state file goes with the server");
    let status = home.json(&["serve", "--status"]);
    assert_eq!(status["running"], false, "{status}");
}

/// A home whose `work` pass left a memory candidate: a Codex session stating a decision.
fn with_candidate() -> (TestHome, i64) {
    let home = home();
    crate::memory::codex_decides(&home, "s-jiff", crate::memory::JIFF, "src/time.rs");
    crate::recall_inject::work(&home, &[]);
    let candidates = home.json(&["review"]);
    let id = candidates[0]["id"].as_i64().unwrap_or_else(|| panic!("no candidate: {candidates}"));
    (home, id)
}

#[test]
fn the_review_queue_approves_edits_and_rejects_with_the_token() {
    let _turn = turn();
    let (home, id) = with_candidate();
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600")]);
    let queue = server.json("/api/review");
    assert_eq!(queue["candidates"][0]["id"], id, "{queue}");
    assert_eq!(queue["candidates"][0]["status"], "candidate");
    let path = format!("/api/review/m{id}");
    let auth = format!("Bearer {}", server.token);
    let post = |body: &str, token: bool| {
        let headers: Vec<(&str, &str)> =
            if token { vec![("Authorization", auth.as_str())] } else { Vec::new() };
        request(server.port, "POST", &path, &headers, body)
    };
    assert_eq!(post(r#"{"action": "approve"}"#, false).status, 401, "no token, no decision");
    let bad = post(r#"{"action": "bless"}"#, true);
    assert_eq!((bad.status, bad.json()["code"].clone()), (400, json!("bad_request")));
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let edited = post(
        &format!(r#"{{"action": "edit", "text": "Use jiff for timestamps; token {secret}"}}"#),
        true,
    );
    assert_eq!(edited.status, 200, "{}", edited.body);
    let text = edited.json()["memory"]["text"].as_str().expect("text").to_owned();
    assert!(
        text.starts_with("Use jiff for timestamps; token ") && !text.contains(secret),
        "{text}"
    );
    let approved = post(r#"{"action": "approve"}"#, true);
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(approved.json()["memory"]["status"], "active");
    assert_eq!(approved.json()["memory"]["tier"], "L2");
    let again = post(r#"{"action": "reject"}"#, true);
    assert_eq!(
        (again.status, again.json()["code"].clone()),
        (409, json!("conflict")),
        "{}",
        again.body
    );
    assert_eq!(server.json("/api/review")["candidates"], json!([]));

    // The approved memory is managed on the memory routes: forgotten, brought back and edited
    // through the same writer, with the token.
    let listed = server.json("/api/memories");
    assert_eq!(listed["memories"][0]["id"], id, "{listed}");
    assert_eq!(listed["memories"][0]["source_items"][0]["agent"], "codex", "{listed}");
    let memory = format!("/api/memories/m{id}");
    let change = |body: &str, token: bool| {
        let headers: Vec<(&str, &str)> =
            if token { vec![("Authorization", auth.as_str())] } else { Vec::new() };
        request(server.port, "POST", &memory, &headers, body)
    };
    assert_eq!(change(r#"{"action": "forget"}"#, false).status, 401, "no token, no change");
    let forgot = change(r#"{"action": "forget"}"#, true);
    assert_eq!(forgot.json()["memory"]["status"], "forgotten", "{}", forgot.body);
    assert_eq!(server.json("/api/memories")["memories"], json!([]), "only memory in use");
    let refused = change(r#"{"action": "edit", "importance": 3}"#, true);
    assert_eq!((refused.status, refused.json()["code"].clone()), (409, json!("conflict")));
    let back = change(r#"{"action": "restore"}"#, true);
    assert_eq!(back.json()["memory"]["status"], "active", "{}", back.body);
    let edited = change(r#"{"action": "edit", "importance": 3, "kind": "convention"}"#, true);
    let edited = edited.json();
    assert_eq!(
        (&edited["memory"]["importance"], &edited["memory"]["kind"]),
        (&json!(3), &json!("convention"))
    );
    let shown = home.json(&["memories", "--all"]);
    assert_eq!(
        (&shown[0]["importance"], &shown[0]["status"]),
        (&json!(3), &json!("active")),
        "{shown}"
    );
    // Many at once: each as if decided alone; one no longer a candidate is reported.
    let bulk = request(
        server.port,
        "POST",
        "/api/review",
        &[("Authorization", auth.as_str())],
        &format!(r#"{{"action": "reject", "ids": ["m{id}"]}}"#),
    );
    assert_eq!(bulk.status, 200, "{}", bulk.body);
    assert_eq!(
        (bulk.json()["done"].clone(), bulk.json()["failed"][0]["code"].clone()),
        (json!([]), json!("conflict"))
    );
    let empty = request(
        server.port,
        "POST",
        "/api/review",
        &[("Authorization", auth.as_str())],
        r#"{"action": "approve", "ids": []}"#,
    );
    assert_eq!(empty.status, 400, "{}", empty.body);
    server.stop(&home);
}

#[test]
fn the_gate_wants_the_token_the_own_host_and_the_own_origin() {
    let _turn = turn();
    let home = home();
    let server = Server::start(&home, &[]);
    let port = server.port;
    let auth = format!("Bearer {}", server.token);
    let own_origin = format!("http://127.0.0.1:{port}");
    let code = |r: &Response| r.json()["code"].as_str().unwrap_or_default().to_owned();

    for path in ["/api/work", "/api/shutdown"] {
        let r = request(port, "POST", path, &[], "");
        assert_eq!((r.status, code(&r)), (401, "unauthorized".into()), "{path}");
        let r = request(port, "POST", path, &[("Authorization", "Bearer not-the-token")], "");
        assert_eq!(r.status, 401, "{path}");
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let mcp_headers =
        [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    let r = request(port, "POST", "/mcp", &mcp_headers, &init);
    assert_eq!((r.status, code(&r)), (401, "unauthorized".into()));
    let r = request(port, "GET", "/mcp", &[], "");
    assert_eq!(r.status, 401, "every method of /mcp needs the token");
    // Reads need it too: the store is the user's alone. Only the health probe and the
    // viewer's own files are open; the live feed may carry the token in its query, since a
    // browser's EventSource sends no header.
    for path in [
        "/api/events",
        "/api/search?q=x",
        "/api/review",
        "/api/items?ids=e1",
        "/api/injections",
        "/api/live",
        "/api/session-cards",
        "/api/memories",
    ] {
        let r = request(port, "GET", path, &[], "");
        assert_eq!((r.status, code(&r)), (401, "unauthorized".into()), "{path}");
    }
    let r = request(port, "GET", "/api/live?token=not-the-token", &[], "");
    assert_eq!(r.status, 401);
    let r = request(port, "GET", "/api/events?token=not-the-token", &[], "");
    assert_eq!(r.status, 401, "only the feed takes the token in its query");
    assert_eq!(request(port, "GET", "/api/events", &[("Authorization", &auth)], "").status, 200);
    for path in ["/api/health", "/", "/assets/app.js"] {
        assert_eq!(request(port, "GET", path, &[], "").status, 200, "{path}");
    }

    // DNS rebinding: a name that resolves here but is not this server's.
    let r = request(port, "GET", "/api/health", &[("Host", &format!("evil.example:{port}"))], "");
    assert_eq!((r.status, code(&r)), (403, "forbidden_host".into()));
    let r = request(port, "GET", "/", &[("Host", "127.0.0.1:1")], "");
    assert_eq!(r.status, 403, "another port is another origin");
    // Cross-site requests, even with the token.
    for origin in ["http://evil.example", "null", &format!("http://127.0.0.1:{}", port + 1)] {
        let r = request(port, "GET", "/api/health", &[("Origin", origin)], "");
        assert_eq!((r.status, code(&r)), (403, "forbidden_origin".into()), "{origin}");
        let r =
            request(port, "POST", "/api/work", &[("Origin", origin), ("Authorization", &auth)], "");
        assert_eq!(r.status, 403, "{origin}");
    }
    // The server's own pages and callers without an Origin (the CLI, providers) pass.
    let r = request(port, "GET", "/api/health", &[("Origin", &own_origin)], "");
    assert_eq!(r.status, 200);
    let r = request(port, "GET", "/api/health", &[("Host", &format!("localhost:{port}"))], "");
    assert_eq!(r.status, 200);
    let r = request(
        port,
        "POST",
        "/api/work",
        &[("Authorization", &auth), ("Origin", &own_origin)],
        "",
    );
    assert_eq!(r.status, 202, "{}", r.body);
    let mut with_auth = mcp_headers.to_vec();
    with_auth.push(("Authorization", &auth));
    let r = request(port, "POST", "/mcp", &with_auth, &init);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("agent-memory"), "{}", r.body);

    let page = server.get("/");
    assert!(
        page.headers.to_ascii_lowercase().contains("content-security-policy: default-src 'self'")
    );
    assert!(!page.body.contains(&server.token), "the page never carries the token");
    server.stop(&home);
}

#[test]
fn private_events_never_reach_the_api() {
    let _turn = turn();
    let home = home();
    let cwd = home.user_home().to_string_lossy().into_owned();
    read_env_file(&home, "s-private", &cwd);
    let prompt = payload(
        "s-private",
        "UserPromptSubmit",
        &cwd,
        json!({"prompt": "check the database settings in env"}),
    );
    assert_quiet_success(&home.hook("claude-code", "UserPromptSubmit", &prompt));
    let private_id = crate::count(&home, "SELECT id FROM events WHERE sensitivity = 'private'");
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600")]);

    let events = server.json("/api/events");
    let listed: Vec<i64> = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["id"].as_i64())
        .collect();
    assert!(!listed.is_empty() && !listed.contains(&private_id), "{events}");
    let r = server.get(&format!("/api/events/{private_id}"));
    assert_eq!((r.status, r.json()["code"].clone()), (403, json!("private")));
    let items = server.json(&format!("/api/items?ids=e{private_id}"));
    assert_eq!(items["missing"][0]["code"], "private");
    let found = server.json("/api/search?q=env&kind=event");
    assert!(!found.to_string().contains(&format!("\"e{private_id}\"")), "{found}");
    let session = &server.json("/api/sessions")["sessions"][0];
    let page = server.json(&format!("/api/sessions/{}", session["id"]));
    assert!(!page.to_string().contains(".env"), "{page}");
    server.stop(&home);
}

/// Reads SSE lines until one `data:` line of event `name` contains `needle`.
fn read_feed_until(reader: &mut BufReader<TcpStream>, name: &str, needle: &str) -> String {
    let mut current = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader.read_line(&mut line).expect("read the live feed");
        assert!(n > 0, "the live feed ended before `{name}` with {needle:?}");
        if let Some(event) = line.strip_prefix("event: ") {
            current = event.trim().to_owned();
        } else if let Some(data) = line.strip_prefix("data: ")
            && current == name
            && data.contains(needle)
        {
            return data.trim().to_owned();
        }
    }
}

#[test]
fn the_live_feed_shows_hooks_of_other_processes_and_the_workers_distillations() {
    let _turn = turn();
    let home = home();
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "1")]);
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    // A bound on a stuck feed, not a timing assertion: the test fails instead of hanging.
    stream.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    write!(
        stream,
        "GET /api/live?token={} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\n\r\n",
        server.token, server.port
    )
    .expect("subscribe");
    let mut reader = BufReader::new(stream);
    read_feed_until(&mut reader, "hello", "marks");

    let app = home.user_home().join("app");
    std::fs::create_dir_all(&app).expect("dir");
    codex_fixes_the_parser(&home, "codex-live", &app.to_string_lossy(), CODEX_PROMPT);
    let event = read_feed_until(&mut reader, "event", "codex");
    let event: Value = serde_json::from_str(&event).expect("event json");
    assert_eq!(event["agent"], "codex");
    // The worker distils the session without anyone running `work`.
    let observation = read_feed_until(&mut reader, "observation", "codex");
    let observation: Value = serde_json::from_str(&observation).expect("observation json");
    assert!(observation["title"].as_str().is_some_and(|t| !t.is_empty()), "{observation}");
    read_feed_until(&mut reader, "summary", "codex");
    let stats = server.json("/api/stats");
    assert!(stats["worker"]["passes"].as_u64().expect("passes") >= 1, "{stats}");
    assert_eq!(stats["worker"]["last_error"], Value::Null, "{stats}");
    drop(reader);
    server.stop(&home);
}

#[test]
fn the_official_python_sdk_client_speaks_mcp_over_http() {
    let _turn = turn();
    let test = "the_official_python_sdk_client_speaks_mcp_over_http";
    let Some(python) =
        crate::needed(test, crate::mcp::MCP_PYTHON_ENV, "scripts/mcp-test-client", |p| p.is_file())
    else {
        return;
    };
    let (home, _) = seeded();
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600")]);
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/serve/mcp_http_client.py");
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(format!("{}/mcp", server.url))
        .arg(&server.token)
        .output()
        .expect("run the python client");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", agent_memory_testkit::describe(&out)));
    assert_eq!(seen["server"], "agent-memory", "{seen}");
    assert_eq!(
        seen["tools"],
        json!(["briefing", "forget", "get_observations", "remember", "search", "timeline"])
    );
    assert!(!seen["ids"].as_array().expect("ids").is_empty(), "search found the fix: {seen}");
    assert_eq!(seen["get_error"], false, "{seen}");
    assert_eq!(seen["bad_error"], true, "{seen}");
    assert_eq!(seen["unauthorized"], 401, "{seen}");
    server.stop(&home);
}

/// Where the browser tests keep their screenshots: under the target directory.
fn screenshot_dir() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_agent-memory"));
    let target = exe.parent().and_then(|p| p.parent()).expect("target dir").to_owned();
    let dir = target.join("serve-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

/// Where playwright-core and Chromium are, or `None` (the test is skipped, except on CI) when
/// `scripts/browser-test-deps` has not installed them.
fn browser(test: &str) -> Option<(PathBuf, String)> {
    let playwright =
        crate::needed(test, "AGENT_MEMORY_TEST_PLAYWRIGHT", "scripts/browser-test-deps", |p| {
            p.join("node_modules/playwright-core").is_dir()
        })?;
    let chromium =
        std::env::var("AGENT_MEMORY_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !std::path::Path::new(&chromium).is_file() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test} needs {chromium}: run scripts/browser-test-deps"
        );
        return None;
    }
    Some((playwright, chromium))
}

#[test]
fn the_viewer_in_chromium_shows_live_items_searches_switches_language_and_reviews() {
    let _turn = turn();
    let test = "the_viewer_in_chromium_shows_live_items_searches_switches_language_and_reviews";
    let Some(deps) = browser(test) else { return };
    let (home, app) = seeded();
    crate::memory::codex_decides(&home, "s-jiff", crate::memory::JIFF, "src/time.rs");
    crate::recall_inject::work(&home, &[]);
    // A session start in the project: the briefing it is handed goes on record.
    let start = payload("claude-viewer", "SessionStart", &app, json!({"source": "startup"}));
    let out = home.hook("claude-code", "SessionStart", &start);
    assert!(
        out.status.success() && !out.stdout.is_empty(),
        "{}",
        agent_memory_testkit::describe(&out)
    );
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "1")]);
    let shots = screenshot_dir();
    // The browser script pauses at "waiting-for-hook"; the hook then runs here, in another
    // process than the server and the browser.
    let env = [("VIEWER_TOKEN", server.token.clone())];
    let (result, _) = drive(&deps, "browser.cjs", &server, &env, |pause| {
        assert_eq!(pause, "waiting-for-hook");
        let prompt = payload(
            "claude-live",
            "UserPromptSubmit",
            &app,
            json!({"prompt": "rename the tokenizer module to lexer everywhere"}),
        );
        assert_quiet_success(&home.hook("claude-code", "UserPromptSubmit", &prompt));
    });
    assert_eq!(result["live_item_seen"], true, "{result}");
    assert!(result["hits"].as_u64().expect("hits") > 0, "{result}");
    assert_eq!(result["explain_shown"], true, "{result}");
    assert_eq!(result["observation_has_facts"], true, "{result}");
    assert_eq!(result["nav_zh"], "搜索", "{result}");
    assert_eq!(result["nav_en"], "Search", "{result}");
    assert_eq!(result["chart_bars"].as_u64().map(|n| n > 0), Some(true), "{result}");
    assert_eq!(result["console_errors"], json!([]), "{result}");
    assert_eq!(result["token_left_in_address"], false, "{result}");
    assert!(result["handed_briefings"].as_u64().is_some_and(|n| n >= 1), "{result}");
    assert!(result["handed_links"].as_u64().is_some_and(|n| n >= 1), "{result}");
    let approved = result["review_approved"].as_i64().expect("a candidate was approved");
    let all = home.json(&["memories", "--all"]);
    let memory = all
        .as_array()
        .expect("list")
        .iter()
        .find(|m| m["id"] == approved)
        .unwrap_or_else(|| panic!("no m{approved}: {all:#}"));
    assert_eq!(memory["status"], "active", "{memory}");
    for name in ["feed", "search", "observation", "session", "health", "zh", "handed", "review"] {
        assert!(shots.join(format!("{name}.png")).is_file(), "screenshot {name}.png");
    }
    server.stop(&home);
}

/// A decision stated at length: its candidate is longer than a text box's first lines.
const LONG_DECISION: &str = "From now on use jiff for every timestamp in the scheduler, the exporter, the audit log, the billing reports, the retention sweeper and the nightly backup job, and keep chrono out of all new code, because chrono's time zone API is too easy to misuse";

/// Every page of the viewer, in English and in Chinese, read as a person reads it: no page shows
/// `null`, `undefined`, `NaN`, an empty badge, a bullet outside its card or a translation key;
/// each search hit (memory, observation, summary, event) and each handed item opens its own
/// item; a long review candidate is read whole; the health page says things in words and
/// counts what the store holds; the plain address explains where the token is.
#[test]
fn the_viewer_in_chromium_shows_every_page_whole_in_english_and_chinese() {
    let _turn = turn();
    let test = "the_viewer_in_chromium_shows_every_page_whole_in_english_and_chinese";
    let Some(deps) = browser(test) else { return };
    let (home, app) = seeded();
    home.ok(&["remember", "The parser keeps a depth limit of 64 levels", "--project", &app]);
    // A decision and its successor: the memory page shows what replaced what.
    for pool in ["5", "8"] {
        let text = format!("Use a pool of {pool} database connections");
        home.ok(&["remember", &text, "--kind", "decision", "--project", &app]);
    }
    crate::memory::codex_decides(&home, "s-long", LONG_DECISION, "src/time.rs");
    crate::recall_inject::work(&home, &[]);
    let start = payload("claude-tour", "SessionStart", &app, json!({"source": "startup"}));
    let out = home.hook("claude-code", "SessionStart", &start);
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "1")]);

    let candidates = server.json("/api/review");
    let long = candidates["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .find(|c| c["text"].as_str().is_some_and(|t| t.chars().count() > 200))
        .unwrap_or_else(|| panic!("no long candidate: {candidates:#}"))
        .clone();
    // Searches that together find an item of every kind.
    let queries = ["parser depth", "jiff timestamp"];
    let mut kinds = std::collections::BTreeSet::new();
    for query in queries {
        let found = server.json(&format!("/api/search?q={}&limit=50", query.replace(' ', "%20")));
        for hit in found["hits"].as_array().expect("hits") {
            kinds.insert(hit["kind"].as_str().unwrap_or_default().to_owned());
        }
    }
    assert_eq!(kinds.iter().collect::<Vec<_>>(), ["event", "memory", "observation", "summary"]);
    // The health page tells of a finished work pass.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while server.json("/api/stats")["worker"]["passes"].as_u64().unwrap_or(0) == 0 {
        assert!(std::time::Instant::now() < deadline, "the worker never finished a pass");
        std::thread::sleep(Duration::from_millis(200));
    }

    let shots = screenshot_dir();
    let env = [("QUERIES", json!(queries).to_string()), ("CANDIDATE", long["id"].to_string())];
    let (result, _) =
        drive(&deps, "tour.cjs", &server, &env, |p| panic!("the tour does not pause: {p}"));
    assert_eq!(result["missing_zh"], json!([]), "every string has its Chinese");

    // No page shows a script's missing value, a key, an empty badge or a stray bullet.
    let pages = result["pages"].as_array().expect("pages");
    let wrong: Vec<String> = pages
        .iter()
        .flat_map(|p| {
            let at = format!("{} {}", p["lang"].as_str().unwrap_or("?"), p["name"]);
            p["problems"].as_array().into_iter().flatten().map(move |x| format!("{at}: {x}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for lang in ["en", "zh"] {
        let seen: Vec<&str> =
            pages.iter().filter(|p| p["lang"] == lang).filter_map(|p| p["name"].as_str()).collect();
        for name in [
            "home", "feed", "search-1", "search-2", "item-m", "item-o", "item-s", "item-e",
            "session", "memory", "review", "health", "handed",
        ] {
            assert!(seen.contains(&name), "{lang} {name} not visited: {seen:?}");
            assert!(shots.join(format!("{lang}-{name}.png")).is_file(), "{lang}-{name}.png");
        }
    }

    // Every hit's link opens that item, in both languages, for every kind.
    let links = result["hit_links"].as_array().expect("hit links");
    let broken: Vec<&Value> = links
        .iter()
        .filter(|l| !(l["opened"] == true && l["shows_id"] == true && l["shows_title"] == true))
        .collect();
    assert!(broken.is_empty(), "hits that do not open their item: {broken:#?}");
    for lang in ["en", "zh"] {
        let opened: std::collections::BTreeSet<char> = links
            .iter()
            .filter(|l| l["lang"] == lang)
            .filter_map(|l| l["ref"].as_str()?.chars().next())
            .collect();
        assert_eq!(opened.into_iter().collect::<String>(), "emos", "{lang}: {links:#?}");
    }
    let handed = result["handed_links"].as_array().expect("handed links");
    assert!(!handed.is_empty() && handed.iter().all(|l| l["opened"] == true), "{handed:#?}");

    // The kind filter offers memory, named in each language, and finds only memories; a
    // memory's origin is said in words.
    assert!(
        result["search_kinds_en"].as_array().expect("en").contains(&json!(["memory", "memory"])),
        "{result:#}"
    );
    assert!(result["search_kinds_zh"].as_array().expect("zh").contains(&json!(["memory", "记忆"])));
    let only = result["memory_only_en"].as_array().expect("memory hits");
    assert!(
        !only.is_empty() && only.iter().all(|r| r.as_str().is_some_and(|r| r.starts_with('m')))
    );
    let by = result["memory_by_en"].as_array().expect("origins");
    assert!(by.contains(&json!("remembered on request")), "{by:?}");
    assert!(!by.contains(&json!("distilled")), "{by:?}");

    // An observation's page shows its type and its whole title, though the store keeps a long
    // one cut (its facts hold it whole).
    let shown = result["observations"].as_array().expect("observations");
    assert!(shown.len() >= 4, "{shown:#?}");
    let mut cut = 0;
    for page in shown {
        let id = page["ref"].as_str().expect("ref").trim_start_matches('o');
        let stored = server.json(&format!("/api/observations/{id}"));
        let kind = stored["kind"].as_str().expect("kind");
        let named = page["type"].as_str().expect("type");
        match page["lang"].as_str() {
            Some("en") => assert_eq!(named, kind.replace('_', " "), "{page} {stored}"),
            _ => assert!(!named.is_empty() && named != kind, "in Chinese: {page} {stored}"),
        }
        let title = stored["title"].as_str().expect("title");
        let whole = match title.strip_suffix('…') {
            None => title.to_owned(),
            Some(head) => {
                cut += 1;
                let fact = stored["facts"]
                    .as_array()
                    .expect("facts")
                    .iter()
                    .find_map(|f| f.as_str().filter(|f| f.starts_with(head.trim_end())));
                fact.expect("a fact holds the title whole").trim_end_matches('.').to_owned()
            }
        };
        assert_eq!(page["title"], whole.as_str(), "{stored}");
    }
    assert!(cut > 0, "a long title is among them: {shown:#?}");

    // The long candidate is read whole: its box is wide and as tall as its text.
    for lang in ["en", "zh"] {
        let review = &result[format!("review_{lang}")];
        assert_eq!(review["text"], long["text"], "{review}");
        let f = |k: &str| review[k].as_f64().unwrap_or(f64::NAN);
        assert!(f("width") >= 400.0, "{lang}: {review}");
        assert!(f("scroll_height") <= f("client_height") + f("line_height"), "{lang}: {review}");
    }

    // Health in words, with the store's counts.
    let health = &result["health_en"];
    let spool = health["spool"].as_str().expect("spool");
    assert!(spool.contains("nothing waits") || spool.contains(" wait"), "{health}");
    let worker = health["worker"].as_str().expect("worker");
    assert!(
        worker.starts_with("last work pass ")
            && worker.contains(", ok; ")
            && worker.ends_with(" since start"),
        "{health}"
    );
    assert!(result["health_zh"]["worker"].as_str().is_some_and(|w| w.starts_with("上次处理")));
    for lang in ["en", "zh"] {
        let health = &result[format!("health_{lang}")];
        assert!(health["latency_bars"].as_u64().is_some_and(|n| n > 0), "{lang}: {health}");
        assert!(health["agents"].as_str().is_some_and(|a| !a.is_empty()), "{lang}: {health}");
        let heads = result[format!("handed_sessions_{lang}")].as_array().expect("handed sessions");
        assert!(
            heads.iter().any(|h| h.as_str().is_some_and(|h| h.contains("claude-tour"))),
            "{heads:?}"
        );
    }
    for lang in ["en", "zh"] {
        for count in result[format!("health_{lang}")]["counts"].as_array().expect("counts") {
            assert_eq!(count[1], count[2], "{lang}: the page shows the store's count: {count}");
        }
    }

    // The plain address explains where the token is instead of failing.
    let plain = result["plain_address"].as_str().expect("plain address page");
    assert!(plain.contains("agent-memory serve --status") && !plain.contains("Error"), "{plain}");
    assert!(shots.join("plain-address.png").is_file());
    assert_eq!(result["token_left_in_address"], false);
    server.stop(&home);
}

#[test]
fn a_session_start_hook_starts_the_server_when_asked_to() {
    let _turn = turn();
    let home = home();
    let cwd = home.user_home().to_string_lossy().into_owned();
    let start = payload("s-auto", "SessionStart", &cwd, json!({"source": "startup"}));
    // Off by default: nothing is started.
    let out = home.hook("claude-code", "SessionStart", &start);
    assert!(out.status.success());
    assert!(!home.home().join("serve.json").exists());

    let mut hook = home.cmd();
    hook.args(["hook", "--agent", "claude-code", "--event", "SessionStart"])
        .env("AGENT_MEMORY_SERVE__AUTOSTART", "true")
        .env("AGENT_MEMORY_SERVE__PORT", "0")
        .env("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600");
    let out = agent_memory_testkit::run_with_stdin(&mut hook, &start);
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    // The server starts on its own; wait for it to say where it listens (a bound, not a
    // timing assertion).
    let state = home.home().join("serve.json");
    for _ in 0..600 {
        if state.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = home.json(&["serve", "--status"]);
    assert_eq!(status["running"], true, "{status}");
    assert_eq!(status["health"]["status"], "ok", "{status}");
    let out = home.cmd().args(["serve", "--stop"]).output().expect("stop");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("stopped"),
        "{}",
        agent_memory_testkit::describe(&out)
    );
}

#[test]
fn the_worker_keeps_the_vault_in_step() {
    let _turn = turn();
    let home = home();
    let vault = home.user_home().join("Vault");
    std::fs::create_dir_all(&vault).expect("vault");
    let server = Server::start(
        &home,
        &[
            ("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "1"),
            ("AGENT_MEMORY_VAULT__PATH", vault.to_str().expect("utf-8")),
        ],
    );
    home.ok(&["remember", "Prefer rebase over merge for feature branches", "--global"]);
    let notes = vault.join("agent-memory/Global/Preferences");
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "the worker never {what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    // The note itself, not the hidden temporary file an atomic write renames into place.
    let note = || {
        std::fs::read_dir(&notes).ok()?.flatten().map(|e| e.path()).find(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with('.') && name.ends_with(".md")
        })
    };
    wait_for("wrote the note", &|| note().is_some());
    let path = note().expect("note");
    let text = std::fs::read_to_string(&path).expect("note");
    // A person edits the note in Obsidian; the next pass takes it into the store.
    #[allow(clippy::disallowed_methods)]
    std::fs::write(&path, text.replace("feature branches", "every branch")).expect("edit");
    wait_for("took the edit", &|| {
        home.ok(&["memories", "--json"]).contains("Prefer rebase over merge for every branch")
    });
    server.stop(&home);
}

#[test]
fn a_failing_pass_is_reported_with_its_reason_and_the_server_serves_on() {
    let _turn = turn();
    let home = home();
    // A vault path that is a file: every pass's vault step fails, in the pass's own process.
    let not_a_directory = home.user_home().join("Vault");
    agent_memory_core::fsutil::write_atomic(&not_a_directory, b"a file").expect("file");
    let server = Server::start(
        &home,
        &[
            ("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "1"),
            ("AGENT_MEMORY_VAULT__PATH", not_a_directory.to_str().expect("utf-8")),
        ],
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let worker = loop {
        let stats = server.json("/api/stats");
        if stats["worker"]["consecutive_failures"].as_u64().is_some_and(|n| n >= 1) {
            break stats["worker"].clone();
        }
        assert!(std::time::Instant::now() < deadline, "no failed pass reported: {stats}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let error = worker["last_error"].as_str().expect("the reason");
    assert!(error.contains("vault failed"), "{worker}");
    assert!(!error.starts_with("agent-memory:"), "the reason as the pass gave it: {worker}");
    assert_eq!(worker["running"], false, "{worker}");
    // The failures are the pass's, not the server's: it still answers and stops cleanly.
    assert_eq!(server.json("/api/stats")["worker"]["enabled"], true);
    server.stop(&home);
}

#[test]
fn the_worker_screens_what_it_distils_into_memory_candidates() {
    let _turn = turn();
    let home = home();
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "1")]);
    // Nobody runs `work`: the worker's pass distils the session and screens it.
    crate::memory::codex_decides(&home, "s-worker", crate::memory::JIFF, "src/time.rs");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let candidate = loop {
        let queue = server.json("/api/review");
        let found = queue["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["text"].as_str().is_some_and(|t| t.contains("jiff")))
            .cloned();
        if let Some(candidate) = found {
            break candidate;
        }
        assert!(std::time::Instant::now() < deadline, "no candidate from the worker: {queue}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(candidate["status"], "candidate", "{candidate}");
    let stats = server.json("/api/stats");
    assert_eq!(stats["worker"]["last_error"], Value::Null, "{stats}");
    assert!(
        stats["worker"]["last_report"].as_str().is_some_and(|r| r.contains("memory:")),
        "the pass reports its memory step: {stats}"
    );
    server.stop(&home);
}

/// The ids every front end prints (`o1`, `s1`, `m1`, `e1`) each read their own kind, on the
/// command line, over MCP and over HTTP; and one search answers the same items on all three.
#[test]
fn every_front_end_reads_the_same_items_by_the_same_ids() {
    let _turn = turn();
    let (home, app) = seeded();
    home.ok(&["remember", "The parser keeps a depth limit of 64 levels", "--project", &app]);
    for table in ["observations", "summaries", "memories", "events"] {
        assert!(crate::count(&home, &format!("SELECT count(*) FROM {table} WHERE id = 1")) == 1);
    }
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600")]);

    // HTTP: each id its own kind, a missing one reported as such.
    let items = server.json("/api/items?ids=m1,o1,e1,s1,m999999");
    let found: Vec<(String, bool)> = items["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            let item = &i["item"];
            let own_kind = match i["id"].as_str().unwrap_or_default() {
                "m1" => item["tier"].is_string() && item["text"].is_string(),
                "o1" => item["facts"].is_array() && item["source_events"].is_array(),
                "e1" => item["body"].is_string() && item["session_id"].is_i64(),
                "s1" => item["request"].is_string(),
                _ => false,
            };
            (i["id"].as_str().unwrap_or_default().to_owned(), own_kind)
        })
        .collect();
    assert_eq!(found, ["m1", "o1", "e1", "s1"].map(|id| (id.to_owned(), true)).to_vec(), "{items}");
    assert_eq!(items["missing"], json!([{ "id": "m999999", "code": "not_found" }]));

    // The command line: the same ids, and a clear not-found.
    let shown = home.json(&["show", "m1", "o1", "e1", "s1"]);
    let kinds: Vec<&str> =
        shown.as_array().expect("list").iter().filter_map(|i| i["kind"].as_str()).collect();
    assert_eq!(kinds, ["memory", "observation", "event", "summary"], "{shown}");
    assert_eq!(shown[0]["item"]["id"], 1);
    let missing = home.run(&["show", "m999999"], b"");
    assert!(!missing.status.success());
    let said = String::from_utf8_lossy(&missing.stderr);
    assert!(said.contains("nothing is stored under m999999"), "{said}");

    // MCP: the same ids, each in its own text form.
    let mut mcp = crate::mcp::initialized(&home);
    let (error, text) =
        mcp.call("get_observations", json!({ "ids": ["m1", "o1", "e1", "m999999"] }));
    assert!(!error, "{text}");
    for head in ["## m1 [", "## o1 [", "## e1 ["] {
        assert!(text.contains(head), "`{head}` missing from: {text}");
    }
    assert!(text.contains("m999999"), "{text}");

    // One search, three front ends, the same items. Hit counts move the order between calls,
    // so the comparison is over every match (the limit is above what the store holds).
    let query = "parser depth";
    let cli = home.json(&["search", query, "--limit", "100"]);
    let mut from_cli: Vec<String> = cli["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| format!("{}{}", &h["kind"].as_str().unwrap_or("?")[..1], h["id"]))
        .collect();
    let http = server.json("/api/search?q=parser%20depth&limit=100");
    let mut from_http: Vec<String> = http["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["ref"].as_str().unwrap_or_default().to_owned())
        .collect();
    let (error, text) = mcp.call("search", json!({ "query": query, "limit": 100 }));
    assert!(!error, "{text}");
    let mut from_mcp: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|line| line.split(" | ").next())
        .filter(|id| {
            let mut chars = id.chars();
            chars.next().is_some_and(|c| "osme".contains(c))
                && !chars.as_str().is_empty()
                && chars.all(|c| c.is_ascii_digit())
        })
        .map(str::to_owned)
        .collect();
    for list in [&mut from_cli, &mut from_http, &mut from_mcp] {
        list.sort();
    }
    assert!(!from_cli.is_empty(), "{cli}");
    assert_eq!(from_cli, from_http, "CLI and HTTP");
    assert_eq!(from_cli, from_mcp, "CLI and MCP: {text}");

    // Unknown filter values are the same mistake everywhere.
    let bad = home.run(&["search", "parser", "--agent", "nosuch"], b"");
    assert!(!bad.status.success());
    let said = String::from_utf8_lossy(&bad.stderr).into_owned();
    assert!(said.contains("`agent` is `nosuch`"), "{said}");
    let http = server.get("/api/search?q=parser&agent=nosuch");
    assert_eq!(http.status, 400);
    assert!(http.body.contains("`agent` is `nosuch`"), "{}", http.body);
    let (error, text) = mcp.call("search", json!({ "query": "parser", "agent": "nosuch" }));
    assert!(error && text.contains("`agent` is `nosuch`"), "{text}");
    mcp.finish();
    server.stop(&home);
}

/// Sockets that connect and trickle a request head one byte a second cannot lock the server
/// out: a new connection takes the place of the oldest unauthenticated one, which is closed, so
/// the health probe and the token's holder are answered with hundreds of them open.
#[test]
fn trickling_connections_cannot_lock_out_the_probe_or_the_token() {
    let _turn = turn();
    let home = home();
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600")]);
    let tricklers = Tricklers::open(server.port, 300, Duration::from_secs(1));
    assert!(tricklers.sockets().len() >= 200, "{} trickling sockets", tricklers.sockets().len());

    // The server closes the oldest by itself (the read ends instead of hanging).
    let mut first = &tricklers.sockets()[0];
    first.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let mut byte = [0u8; 1];
    let read = first.read(&mut byte);
    let closed = match &read {
        Ok(n) => *n == 0,
        Err(err) => {
            !matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
        }
    };
    assert!(closed, "closed by the server, not by the test's own timeout: {read:?}");
    // And the probe and the token's holder are answered while the rest trickle on.
    let health = request(server.port, "GET", "/api/health", &[], "");
    assert_eq!(health.status, 200, "{}", health.body);
    let stats = server.json("/api/stats");
    assert!(stats["store"].is_object(), "{stats}");

    drop(tricklers);
    server.stop(&home);
}

/// `serve --detach` returns once the server listens, with the address that opens the viewer;
/// the server runs on without it, `--status` finds it, a second `--detach` says it runs, and
/// `--stop` ends it.
#[test]
fn serve_detach_runs_in_the_background_until_stopped() {
    let _turn = turn();
    let home = home();
    let out = home
        .cmd()
        .args(["serve", "--detach", "--port", "0", "--no-worker"])
        .output()
        .expect("detach");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let address = said
        .trim()
        .strip_prefix("agent-memory serve: viewer at ")
        .and_then(|rest| rest.split_once("/?token="))
        .map(|(url, _)| url.to_owned())
        .unwrap_or_else(|| panic!("no address: {said}"));
    let port: u16 = address.rsplit(':').next().and_then(|p| p.parse().ok()).expect("a port");
    let token = std::fs::read_to_string(home.home().join("serve.token")).expect("token");
    let auth = format!("Bearer {}", token.trim());
    let stats = request(port, "GET", "/api/stats", &[("Authorization", &auth)], "");
    assert_eq!(stats.status, 200, "the detached server answers: {}", stats.body);

    let status = home.ok(&["serve", "--status"]);
    assert!(status.contains("is running") && status.contains(&address), "{status}");
    let again = home.run(&["serve", "--detach"], b"");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already running"), "{again:?}");

    let stopped = home.ok(&["serve", "--stop"]);
    assert!(stopped.contains("stopped"), "{stopped}");
    let status = home.ok(&["serve", "--status"]);
    assert!(status.contains("not running"), "{status}");
}

/// Runs the browser script `serve/<name>` against `server`, with `env` beside what every script
/// gets; each line it prints that is not its result (a pause) goes to `pause`, which acts in
/// other processes, and the script is then told to go on. The script's result line, and
/// everything it printed for messages.
fn drive(
    (playwright, chromium): &(PathBuf, String),
    name: &str,
    server: &Server,
    env: &[(&str, String)],
    mut pause: impl FnMut(&str),
) -> (Value, String) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/serve").join(name);
    let profile = tempfile::tempdir().expect("profile dir");
    let mut cmd = std::process::Command::new("node");
    cmd.arg(&script)
        .env("NODE_PATH", playwright.join("node_modules"))
        .env("VIEWER_URL", &server.url)
        .env("VIEWER_ADDRESS", server.viewer())
        .env("CHROMIUM", chromium)
        .env("PROFILE_DIR", profile.path())
        .env("SCREENSHOTS", screenshot_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        cmd.env(key, value);
    }
    let mut child = cmd.spawn().expect("run node");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut stdin = child.stdin.take().expect("stdin");
    let mut seen = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if stdout.read_line(&mut line).expect("read the browser script") == 0 {
            break;
        }
        let said = line.trim().to_owned();
        if !said.starts_with('{') && !said.is_empty() {
            pause(&said);
            writeln!(stdin, "go").expect("tell the browser");
        }
        seen.push(said);
    }
    let out = child.wait_with_output().expect("browser script");
    let report = seen.join("\n");
    let result: Value =
        seen.iter().rev().find_map(|l| serde_json::from_str(l).ok()).unwrap_or_else(|| {
            panic!("no result line: {report}\n{}", agent_memory_testkit::describe(&out))
        });
    assert!(out.status.success(), "{result:#}\n{}", agent_memory_testkit::describe(&out));
    assert_eq!(result["console_errors"], json!([]), "{result:#}");
    (result, report)
}

/// A Claude Code session in `cwd` that fixes a failing test: the prompt, the failure, an edit,
/// the passing run and the turn's end.
fn claude_fixes(home: &TestHome, session: &str, cwd: &str, prompt: &str) {
    let file = format!("{cwd}/src/uploader.rs");
    let steps = [
        ("SessionStart", json!({"source": "startup"})),
        ("UserPromptSubmit", json!({"prompt": prompt})),
        (
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_use_id": "t1",
                "tool_input": {"command": "cargo test -p uploader"},
                "error": "Exit code 101\nerror[E0599]: no method named `send_with_retry` found for struct `Client`\n --> src/uploader.rs:17:14"}),
        ),
        (
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_use_id": "t2",
                "tool_input": {"file_path": file, "old_string": "client.send()", "new_string": "client.send_with_retry(3)"},
                "tool_response": {"filePath": file}}),
        ),
        (
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": "t3",
                "tool_input": {"command": "cargo test -p uploader"},
                "tool_response": {"stdout": "test result: ok. 4 passed; 0 failed", "stderr": "", "interrupted": false}}),
        ),
        (
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": "Uploads retry three times now."}),
        ),
    ];
    for (event, extra) in steps {
        let out = home.hook("claude-code", event, &payload(session, event, cwd, extra));
        assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    }
}

/// An export line of one event, as another store writes it.
fn event_line(
    uid: &str,
    agent: &str,
    session: &str,
    project: &str,
    at_ms: i64,
    prompt: Option<&str>,
) -> Value {
    let (kind, source, tool, summary, body) = match prompt {
        Some(prompt) => (
            "prompt",
            "UserPromptSubmit",
            Value::Null,
            format!("Prompt: {prompt}"),
            prompt.to_owned(),
        ),
        None => (
            "tool_use",
            "PostToolUse",
            json!("Bash"),
            "Bash: cargo test".to_owned(),
            "test result: ok".to_owned(),
        ),
    };
    json!({"type": "event", "data": {"project": project, "content_hash": format!("h-{uid}"), "event": {
        "uid": uid, "agent": agent, "kind": kind, "source_event": source, "session": session,
        "cwd": project.trim_start_matches("path:"), "at_ms": at_ms, "tool": tool, "tool_kind": null,
        "summary": summary, "body": body, "payload": {}, "files": [], "sensitivity": "normal",
        "transcript_path": null}}})
}

/// Imports `lines` (after a header and the projects named) as a file another store wrote.
fn import_lines(home: &TestHome, projects: &[(&str, &str)], lines: &[Value]) -> Value {
    use std::fmt::Write as _;
    let mut file = String::new();
    let header = json!({"type": "header", "data": {"format": "agent-memory-export", "version": 2, "exported_at": 0}});
    writeln!(file, "{header}").expect("line");
    for (key, name) in projects {
        let root = key.trim_start_matches("path:");
        let project = json!({"type": "project", "data": {"key": key, "name": name, "root": root, "origin": null}});
        writeln!(file, "{project}").expect("line");
    }
    for line in lines {
        writeln!(file, "{line}").expect("line");
    }
    let path = home.user_home().join(format!("import-{}.jsonl", lines.len()));
    agent_memory_core::fsutil::write_atomic(&path, file.as_bytes()).expect("export file");
    home.json(&["import", path.to_str().expect("utf-8 path")])
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_millis()
        as i64
}

/// The home page reads sessions as cards, newest first, across agents and projects: each with
/// its agent, project, branch, what was asked and done, its observations a line each behind
/// their type's mark, and its events folded until a click; every filter (agent, project,
/// observation type, time) narrows them to the sessions that match; and hooks run in other
/// processes update a shown card in place and put a new session's card on top, without a
/// reload.
#[test]
fn the_home_shows_sessions_as_cards_that_filters_narrow_and_hooks_update_live() {
    let _turn = turn();
    let test = "the_home_shows_sessions_as_cards_that_filters_narrow_and_hooks_update_live";
    let Some(deps) = browser(test) else { return };
    let (home, app) = seeded();
    // A Claude Code session in another project, a repository on a branch of its own.
    let shop = crate::statements::repository(&home, "shop");
    let out = std::process::Command::new("git")
        .args(["symbolic-ref", "HEAD", "refs/heads/feature/retry"])
        .current_dir(&shop)
        .output()
        .expect("git");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let shop = shop.to_string_lossy().into_owned();
    claude_fixes(
        &home,
        "claude-shop",
        &shop,
        "The uploader test fails; make uploads retry three times",
    );
    // And a Gemini session of twelve days ago, from another store's export.
    let old = now_ms() - 12 * 86_400_000;
    let prompt = "Tidy the archive exporter";
    let lines = [event_line("old-1", "gemini", "gemini-old", "path:/w/archive", old, Some(prompt))];
    import_lines(&home, &[("path:/w/archive", "archive")], &lines);
    crate::recall_inject::work(&home, &[]);
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600")]);

    let stored = server.json("/api/sessions?limit=500");
    let sessions = stored["sessions"].as_array().expect("sessions").clone();
    let by_source = |source: &str| {
        sessions
            .iter()
            .find(|s| s["source_id"] == source)
            .unwrap_or_else(|| panic!("no session {source}: {stored:#}"))
            .clone()
    };
    let codex = by_source("codex-fix");
    let codex_id = codex["id"].as_i64().expect("id");
    let codex_page = server.json(&format!("/api/sessions/{codex_id}"));
    let shop_key = by_source("claude-shop")["project_key"].as_str().expect("key").to_owned();
    let marks: std::collections::HashMap<String, String> = server
        .json("/api/session-cards?limit=1")["types"]
        .as_array()
        .expect("types")
        .iter()
        .map(|t| {
            (
                t["key"].as_str().unwrap_or("").to_owned(),
                t["emoji"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let bugfix_sessions: std::collections::BTreeSet<i64> = server
        .json("/api/observations?type=bugfix&limit=500")["observations"]
        .as_array()
        .expect("observations")
        .iter()
        .filter_map(|o| o["session_id"].as_i64())
        .collect();
    assert!(bugfix_sessions.len() >= 2, "two sessions fixed a bug: {bugfix_sessions:?}");

    let live_prompt = "Now make the lexer accept tabs as well";
    let new_prompt = "Add a progress bar to the uploader";
    let filters = json!([
        ["agent", "codex"],
        ["project", shop_key],
        ["type", "bugfix"],
        ["when", "today"],
        ["when", "7d"],
        ["when", "30d"]
    ]);
    let env = [
        ("SESSION", codex_id.to_string()),
        ("FILTERS", filters.to_string()),
        ("LIVE_PROMPT", live_prompt.to_owned()),
        ("NEW_PROMPT", new_prompt.to_owned()),
    ];
    let (result, _) = drive(&deps, "home.cjs", &server, &env, |pause| {
        assert_eq!(pause, "waiting-for-hooks");
        // A new prompt in the shown Codex session, and a new Claude Code session.
        let body = crate::recall_inject::with(
            crate::recall_inject::sample("codex", "UserPromptSubmit"),
            json!({ "session_id": "codex-fix", "cwd": app, "prompt": live_prompt }),
        );
        assert!(home.hook("codex", "UserPromptSubmit", &body).status.success());
        for (event, extra) in [
            ("SessionStart", json!({"source": "startup"})),
            ("UserPromptSubmit", json!({"prompt": new_prompt})),
        ] {
            let out = home.hook("claude-code", event, &payload("claude-new", event, &shop, extra));
            assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
        }
    });

    // Every session is a card, newest first.
    let cards = result["cards"].as_array().expect("cards");
    let shown: Vec<i64> = cards.iter().filter_map(|c| c["session"].as_i64()).collect();
    let mut newest_first: Vec<(i64, i64)> = sessions
        .iter()
        .map(|s| (s["started_at_ms"].as_i64().unwrap_or(0), s["id"].as_i64().unwrap_or(0)))
        .collect();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(shown, newest_first.iter().map(|(_, id)| *id).collect::<Vec<_>>(), "{result:#}");
    assert_eq!(result["heading"], "Sessions");
    assert_eq!(result["count_label"], format!("{} sessions", sessions.len()));

    // The Codex card: who, where, what was asked and done, and its observations a line each,
    // behind the mark of their type.
    let card = cards.iter().find(|c| c["session"] == codex_id).expect("codex card");
    assert_eq!(card["agent"], "codex", "{card}");
    assert_eq!(card["project"], "app", "{card}");
    let summary = &codex_page["summary"];
    assert_eq!(card["asked"], summary["request"], "what was asked: {card} {summary}");
    let done = summary["completed"].as_array().expect("completed");
    assert!(
        !done.is_empty()
            && card["done"].as_str().is_some_and(|d| {
                d.contains(done[0].as_str().unwrap_or("?").trim_end_matches('.'))
            }),
        "what was done: {card} {summary}"
    );
    let lines = card["lines"].as_array().expect("lines");
    let observations = codex_page["observations"].as_array().expect("observations");
    assert_eq!(lines.len(), observations.len().min(12), "{card}");
    for (line, stored) in lines.iter().zip(observations) {
        assert_eq!(line["title"], stored["title"], "{card}");
        let kind = stored["type"].as_str().expect("type");
        assert_eq!(line["mark"], marks[kind].as_str(), "the mode's emoji of {kind}: {card}");
        assert_eq!(line["name"], kind.replace('_', " "), "{card}");
    }
    // The other agent's card names its branch; the old one says what was asked from its prompt.
    let claude =
        cards.iter().find(|c| c["session"] == by_source("claude-shop")["id"]).expect("claude");
    assert_eq!(
        (claude["agent"].as_str(), claude["project"].as_str()),
        (Some("claude-code"), Some("shop"))
    );
    assert_eq!(claude["branch"], "⎇ feature/retry", "{claude}");
    let gemini =
        cards.iter().find(|c| c["session"] == by_source("gemini-old")["id"]).expect("gemini");
    assert_eq!(gemini["asked"], prompt, "{gemini}");
    assert_eq!(gemini["no_lines"], "No observations yet.", "{gemini}");

    // Events are folded: none shows until one click opens them, then all of them.
    let events = codex_page["events"].as_array().expect("events");
    assert_eq!(card["events_shown"], json!([]), "{card}");
    assert_eq!(card["events_label"], format!("{} events", events.len()), "{card}");
    let opened = &result["opened"];
    let shown_events = opened["events_shown"].as_array().expect("events shown");
    assert_eq!(shown_events.len(), events.len(), "{opened}");
    for (line, event) in shown_events.iter().zip(events) {
        let summary = event["summary"].as_str().expect("summary");
        assert!(line.as_str().is_some_and(|l| l.contains(summary)), "{line} / {summary}");
    }

    // Each filter narrows the cards to the sessions that match, and only to them.
    let filtered = result["filtered"].as_array().expect("filtered");
    let of = |name: &str, value: &str| -> Vec<Value> {
        filtered
            .iter()
            .find(|f| f["name"] == name && f["value"] == value)
            .and_then(|f| f["cards"].as_array().cloned())
            .unwrap_or_else(|| panic!("no {name}={value}: {result:#}"))
    };
    let ids = |cards: &[Value]| -> std::collections::BTreeSet<i64> {
        cards.iter().filter_map(|c| c["session"].as_i64()).collect()
    };
    let codex_cards = of("agent", "codex");
    assert!(
        !codex_cards.is_empty() && codex_cards.iter().all(|c| c["agent"] == "codex"),
        "{codex_cards:#?}"
    );
    let codex_sessions = sessions.iter().filter(|s| s["agent"] == "codex").count();
    assert_eq!(codex_cards.len(), codex_sessions);
    let shop_cards = of("project", &shop_key);
    assert!(
        !shop_cards.is_empty() && shop_cards.iter().all(|c| c["project"] == "shop"),
        "{shop_cards:#?}"
    );
    let fixes = of("type", "bugfix");
    assert_eq!(ids(&fixes), bugfix_sessions, "{fixes:#?}");
    for card in &fixes {
        let lines = card["lines"].as_array().expect("lines");
        assert!(
            !lines.is_empty() && lines.iter().all(|l| l["mark"] == marks["bugfix"].as_str()),
            "{card}"
        );
    }
    let today = ids(&of("when", "today"));
    let week = ids(&of("when", "7d"));
    let month = ids(&of("when", "30d"));
    let gemini_id = by_source("gemini-old")["id"].as_i64().expect("id");
    assert!(!week.contains(&gemini_id) && month.contains(&gemini_id), "{week:?} {month:?}");
    assert!(!today.is_empty() && today.is_subset(&week), "{today:?} {week:?}");
    assert_eq!(week.len() + 1, sessions.len(), "the week holds every other session");

    // Live: the shown card counts the new event and lists it; the new session is on top.
    let before = &result["before_live"];
    let after = &result["after_live"];
    let count = |c: &Value| -> usize {
        c["events_label"].as_str().and_then(|l| l.split(' ').next()?.parse().ok()).expect("count")
    };
    assert_eq!(count(after), count(before) + 1, "{before} {after}");
    assert!(
        after["events_shown"]
            .as_array()
            .expect("lines")
            .iter()
            .any(|l| l.as_str().is_some_and(|l| l.contains(live_prompt))),
        "{after}"
    );
    let top = &result["top_after_live"];
    assert_eq!(
        (top["agent"].as_str(), top["asked"].as_str()),
        (Some("claude-code"), Some(new_prompt)),
        "{top}"
    );
    assert_eq!(top["branch"], "⎇ feature/retry", "{top}");
    assert_eq!(result["reloaded"], false, "updated in place: {result:#}");
    server.stop(&home);
}

/// The memory page lists project and global memory, narrows it by kind and tier, edits one
/// memory's text, kind and importance, forgets it and brings it back (each change as the CLI
/// then reads it), shows a supersession chain (what replaced what, and when) and where a
/// memory came from, linked to its source items; and the review page decides selections in
/// bulk (all of a project, all of a kind, all), saying the count before it acts.
#[test]
fn the_memory_page_edits_forgets_and_restores_and_review_decides_selections_at_once() {
    let _turn = turn();
    let test = "the_memory_page_edits_forgets_and_restores_and_review_decides_selections_at_once";
    let Some(deps) = browser(test) else { return };
    let (home, app) = seeded();
    let remember = |args: &[&str]| -> i64 {
        let mut all = vec!["remember"];
        all.extend_from_slice(args);
        home.json(&all)["id"].as_i64().unwrap_or_else(|| panic!("remembered: {args:?}"))
    };
    let depth = remember(&["The parser keeps a depth limit of 64 levels", "--project", &app]);
    let five = remember(&[
        "Use a pool of 5 database connections",
        "--kind",
        "decision",
        "--project",
        &app,
    ]);
    let eight = remember(&[
        "Use a pool of 8 database connections",
        "--kind",
        "decision",
        "--project",
        &app,
    ]);
    remember(&["Prefer rebase over merge for feature branches", "--global"]);
    // What the work pass distilled from the Codex fix, approved: a memory with sources.
    let queue = home.json(&["review"]);
    let distilled = queue
        .as_array()
        .expect("candidates")
        .iter()
        .find(|c| c["sources"].as_array().is_some_and(|s| !s.is_empty()))
        .unwrap_or_else(|| panic!("no distilled candidate: {queue:#}"))["id"]
        .as_i64()
        .expect("id");
    home.ok(&["review", "--approve", &format!("m{distilled}")]);
    // Candidates another store proposed, for review in bulk.
    let app_key = home
        .json(&["memories"])
        .as_array()
        .expect("list")
        .iter()
        .find_map(|m| {
            (m["id"] == depth).then(|| m["project"].as_str().map(str::to_owned)).flatten()
        })
        .expect("the project's key");
    let candidate = |id: i64, kind: &str, text: &str, project: Option<&str>| {
        json!({"type": "memory", "data": {"id": id, "tier": if project.is_some() { "L2" } else { "L3" },
            "kind": kind, "text": text, "project": project, "importance": 6, "status": "active",
            "created_at": 1, "updated_at": 1, "origin": "remembered"}})
    };
    let imported = import_lines(
        &home,
        &[(&app_key, "app"), ("path:/w/shop", "shop")],
        &[
            candidate(901, "convention", "Run cargo fmt before every commit", Some(&app_key)),
            candidate(902, "convention", "Name test functions as sentences", Some(&app_key)),
            candidate(903, "preference", "Answer in short sentences", None),
            candidate(904, "fact", "The shop exports invoices every night", Some("path:/w/shop")),
        ],
    );
    assert_eq!(imported["memories_for_review"], 4, "{imported}");
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600")]);
    let before = server.json("/api/review")["candidates"].as_array().expect("queue").clone();
    let of_app: std::collections::BTreeSet<i64> = before
        .iter()
        .filter(|c| c["project"] == app_key.as_str())
        .filter_map(|c| c["id"].as_i64())
        .collect();
    assert!(of_app.len() >= 2, "{before:#?}");

    let edit = json!({"id": depth, "text": "The parser keeps a depth limit of 128 levels", "kind": "convention", "importance": 9});
    let env = [("EDIT", edit.to_string()), ("PROJECT", app_key.clone())];
    let by_id = |id: i64| -> Value {
        let all = home.json(&["memories", "--all"]);
        all.as_array()
            .expect("list")
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no m{id}: {all:#}"))
    };
    let mut while_forgotten = Value::Null;
    let (result, _) = drive(&deps, "memory.cjs", &server, &env, |pause| {
        assert_eq!(pause, "forgotten");
        while_forgotten = by_id(depth);
    });

    // The list: project and global memory in use, each with its kind, tier and origin.
    let listed = result["listed"].as_array().expect("listed");
    let texts: Vec<&str> = listed.iter().filter_map(|m| m["text"].as_str()).collect();
    for text in [
        "The parser keeps a depth limit of 64 levels",
        "Use a pool of 8 database connections",
        "Prefer rebase over merge for feature branches",
    ] {
        assert!(texts.contains(&text), "{text}: {texts:?}");
    }
    assert!(
        !texts.contains(&"Use a pool of 5 database connections"),
        "a replaced one is not in use: {texts:?}"
    );
    assert!(
        result["decisions"]
            .as_array()
            .expect("decisions")
            .iter()
            .all(|m| m["meta"].as_str().is_some_and(|t| t.starts_with("decision")))
    );
    let global = result["global"].as_array().expect("global");
    assert!(
        !global.is_empty()
            && global
                .iter()
                .all(|m| m["meta"].as_str().is_some_and(|t| t.contains("global memory"))),
        "{global:#?}"
    );

    // Edited, forgotten, brought back: what the page said, and what the CLI reads.
    let edited = &result["edited"];
    assert_eq!(edited["text"], edit["text"], "{edited}");
    assert_eq!(edited["importance"], "importance 9/10", "{edited}");
    assert!(edited["meta"].as_str().is_some_and(|m| m.starts_with("convention")), "{edited}");
    assert_eq!(while_forgotten["status"], "forgotten", "{while_forgotten}");
    assert_eq!(while_forgotten["text"], edit["text"], "{while_forgotten}");
    assert_eq!(
        (&while_forgotten["kind"], &while_forgotten["importance"]),
        (&json!("convention"), &json!(9))
    );
    assert_eq!(result["forgotten"]["status"], "forgotten");
    assert_eq!(result["forgotten"]["buttons"], json!(["Undo forget"]), "{}", result["forgotten"]);
    assert_eq!(result["restored"]["status"], "in use");
    let restored = by_id(depth);
    assert_eq!(
        (&restored["status"], &restored["text"]),
        (&json!("active"), &edit["text"]),
        "{restored}"
    );

    // What replaced what: the pool of 8 replaced the pool of 5, said with when.
    let all = result["all"].as_array().expect("all");
    let newer = all.iter().find(|m| m["id"] == eight).expect("the successor");
    let chain = newer["chain"].as_array().expect("chain");
    assert_eq!(chain.len(), 2, "{newer}");
    assert!(
        chain[0].as_str().is_some_and(
            |l| l.starts_with(&format!("m{five} Use a pool of 5")) && l.contains("(replaced ")
        ),
        "{newer}"
    );
    assert!(
        chain[1]
            .as_str()
            .is_some_and(|l| l.starts_with(&format!("m{eight} Use a pool of 8"))
                && l.ends_with("(in use now)")),
        "{newer}"
    );
    let older = all.iter().find(|m| m["id"] == five).expect("the replaced one");
    assert_eq!(older["status"], "replaced", "{older}");
    assert_eq!(older["chain"], newer["chain"], "the same chain from either end");
    // Where a memory came from: in words, with its sources, their agent and session, linked.
    let learned = all.iter().find(|m| m["id"] == distilled).expect("the distilled one");
    assert_eq!(learned["from"], "Where it came from: learned from the work", "{learned}");
    let sources = learned["sources"].as_array().expect("sources");
    assert!(!sources.is_empty(), "{learned}");
    for source in sources {
        let text = source["text"].as_str().expect("text");
        assert!(text.contains("by codex") && text.contains("in the session codex-fix"), "{source}");
        assert!(source["session"].as_str().is_some_and(|s| s.starts_with("#/s/")), "{source}");
    }
    assert_eq!(
        all.iter().find(|m| m["id"] == depth).expect("depth")["from"],
        "Where it came from: remembered on request"
    );
    let opened = &result["source_opened"];
    assert_eq!(opened["opened"], true, "{opened}");
    let id = opened["ref"].as_str().expect("ref").trim_start_matches('o');
    assert_eq!(
        opened["title"],
        server.json(&format!("/api/observations/{id}"))["title"],
        "{opened}"
    );

    // Review in bulk: each selection counted, confirmed with its count, decided at once.
    let bulk = result["bulk"].as_array().expect("bulk");
    assert_eq!(bulk.len(), 3, "{result:#}");
    let picked = |step: &Value| -> std::collections::BTreeSet<i64> {
        step["picked"].as_array().expect("picked").iter().filter_map(Value::as_i64).collect()
    };
    let project_step = &bulk[0];
    assert_eq!(picked(project_step), of_app, "{project_step}");
    let n = of_app.len();
    assert_eq!(project_step["count"], format!("{n} selected"));
    assert_eq!(project_step["question"], format!("Approve {n} candidates into project memory?"));
    assert_eq!(project_step["said"], format!("{n} approved"));
    for id in &of_app {
        let m = by_id(*id);
        assert_eq!((&m["status"], &m["tier"]), (&json!("active"), &json!("L2")), "{m}");
    }
    let kind_step = &bulk[1];
    let preferences = picked(kind_step);
    assert!(!preferences.is_empty(), "{kind_step}");
    assert_eq!(
        kind_step["question"],
        if preferences.len() == 1 {
            "Approve 1 candidate into global memory?".to_owned()
        } else {
            format!("Approve {} candidates into global memory?", preferences.len())
        }
    );
    for id in &preferences {
        let m = by_id(*id);
        assert_eq!(
            (&m["status"], &m["tier"], &m["kind"]),
            (&json!("active"), &json!("L3"), &json!("preference")),
            "{m}"
        );
    }
    let rest = picked(&bulk[2]);
    let expected: std::collections::BTreeSet<i64> = before
        .iter()
        .filter_map(|c| c["id"].as_i64())
        .filter(|id| !of_app.contains(id) && !preferences.contains(id))
        .collect();
    assert_eq!(rest, expected, "all that was left: {}", bulk[2]);
    for id in &rest {
        assert_eq!(by_id(*id)["status"], "rejected");
    }
    assert!(
        result["review_after"]
            .as_str()
            .is_some_and(|t| t.contains("No candidates wait for review.")),
        "{result:#}"
    );
    assert!(home.json(&["review"]).as_array().is_some_and(Vec::is_empty));
    server.stop(&home);
}

/// Two hundred sessions (of 230, each with a summary, two observations and two events, from
/// another store's export) are on the home page as cards within a second of the navigation,
/// measured in the browser on reloads after a first visit (the figures, the first visit's and
/// the cards' request's among them, are kept beside the screenshots, in `home-200.json`); the
/// older ones wait behind a button.
#[test]
fn the_home_shows_two_hundred_sessions_within_a_second() {
    let _turn = turn();
    let test = "the_home_shows_two_hundred_sessions_within_a_second";
    let Some(deps) = browser(test) else { return };
    let home = home();
    let project = "path:/w/big";
    let now = now_ms();
    let total = 230;
    let mut lines = Vec::new();
    for n in 0..total {
        let at = now - (total - n) as i64 * 60_000;
        let agent = if n % 2 == 0 { "codex" } else { "claude-code" };
        let session = format!("bulk-{n}");
        let prompt = format!("Make upload number {n} retry on a timeout");
        lines.push(event_line(&format!("p{n}"), agent, &session, project, at, Some(&prompt)));
        lines.push(event_line(&format!("t{n}"), agent, &session, project, at + 1_000, None));
        for (k, (kind, title, source)) in [
            ("bugfix", format!("Upload {n} retried after a timeout"), format!("p{n}")),
            ("discovery", format!("The upload client {n} had no retry"), format!("t{n}")),
        ]
        .into_iter()
        .enumerate()
        {
            lines.push(json!({"type": "observation", "data": {"id": n * 2 + k + 1,
                "session": {"agent": agent, "id": session}, "project": project, "agent": agent,
                "mode": "code", "kind": kind, "title": title, "at": at + 2_000, "tokens": 30,
                "work_tokens": 200, "distiller": "offline", "sources": [source]}}));
        }
        lines.push(json!({"type": "summary", "data": {"id": n + 1,
            "session": {"agent": agent, "id": session}, "project": project, "agent": agent,
            "mode": "code", "request": prompt, "completed": [format!("Upload {n} retries three times")],
            "learned": ["The client had no retry"], "at": at + 3_000, "through": format!("t{n}"),
            "tokens": 40, "work_tokens": 200, "distiller": "offline"}}));
    }
    let imported = import_lines(&home, &[(project, "big")], &lines);
    assert_eq!(imported["observations"], total * 2, "{imported}");
    assert_eq!(imported["summaries"], total, "{imported}");
    let server = Server::start(&home, &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "3600")]);
    let (result, _) = drive(&deps, "speed.cjs", &server, &[("CARDS", "200".to_owned())], |p| {
        panic!("the script does not pause: {p}")
    });
    let keep = screenshot_dir().join("home-200.json");
    agent_memory_core::fsutil::write_atomic(&keep, result.to_string().as_bytes()).expect("keep");
    assert_eq!(result["cards"], 200, "{result:#}");
    assert_eq!(result["older_button"], true, "{result:#}");
    assert_eq!(result["first"], format!("Make upload number {} retry on a timeout", total - 1));
    let last = &result["last"];
    assert_eq!(
        last["asked"],
        format!("Make upload number {} retry on a timeout", total - 200),
        "{last}"
    );
    assert_eq!(last["lines"].as_array().map(Vec::len), Some(2), "{last}");
    assert_eq!(last["events"], "2 events", "{last}");
    // The quickest of three reloads: the first visit also starts the browser's own pieces, and
    // one slow visit says more about the machine's other load than about the page.
    let ms = result["ms"].as_f64().expect("a time");
    assert!(ms < 1000.0, "the 200th card came {ms:.0} ms after the navigation: {result:#}");
    server.stop(&home);
}

/// The health page names a wired agent as up to date and a found, unwired one as not wired, and
/// charts hook latency once hooks ran; the handed page groups injections under their sessions;
/// the memory page marks a memory whose file changed as changed.
#[test]
fn the_health_handed_and_memory_pages_show_wiring_latency_sessions_and_file_marks() {
    let _turn = turn();
    let test = "the_health_handed_and_memory_pages_show_wiring_latency_sessions_and_file_marks";
    let Some(deps) = browser(test) else { return };
    let home = home();
    home.ok(&["install", "claude-code"]);
    // Codex is found (its config folder is there) but not wired.
    std::fs::create_dir_all(home.user_home().join(".codex")).expect("codex dir");

    // A repository with a rule about one of its files, remembered there.
    let repo = home.user_home().join("work").join("parser");
    std::fs::create_dir_all(repo.join("src")).expect("repo dir");
    git(&repo, &["init", "-q", "-b", "main"]);
    #[allow(clippy::disallowed_methods)]
    std::fs::write(repo.join("src/parser.rs"), "fn parse(depth: usize) -> usize {\n    depth\n}\n")
        .expect("write");
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "parser"]);
    let remembered = home
        .cmd()
        .args(["remember", "src/parser.rs must read depth from self, never from a local", "--json"])
        .current_dir(&repo)
        .output()
        .expect("remember");
    assert!(remembered.status.success(), "{}", agent_memory_testkit::describe(&remembered));
    crate::recall_inject::work(&home, &[]);

    // Two sessions start in the project: each is handed its briefing.
    let cwd = repo.to_string_lossy().into_owned();
    for session in ["s-first", "s-second"] {
        let start = payload(session, "SessionStart", &cwd, json!({"source": "startup"}));
        let out = home.hook("claude-code", "SessionStart", &start);
        assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    }
    // The file the rule rests on is rewritten.
    #[allow(clippy::disallowed_methods)]
    std::fs::write(repo.join("src/parser.rs"), "// rewritten\npub fn parse() {}\n").expect("write");

    let server = Server::start(&home, &[]);
    let details = server.json("/api/health/details");
    assert!(details["hook_latency"].as_array().is_some_and(|h| !h.is_empty()), "{details:#}");
    let (result, _) =
        drive(&deps, "details.cjs", &server, &[], |p| panic!("the script does not pause: {p}"));
    assert!(result.get("error").is_none(), "{result:#}");

    let agents = result["agents"].as_array().expect("agents");
    let agent = |name: &str| {
        agents
            .iter()
            .find(|a| a["agent"] == name)
            .unwrap_or_else(|| panic!("{name} not listed: {result:#}"))
    };
    assert_eq!(agent("claude-code")["words"], "wired, up to date", "{result:#}");
    assert!(
        agent("claude-code")["last_hook"].as_str().is_some_and(|s| s.starts_with("last hook ran ")),
        "{result:#}"
    );
    assert_eq!(agent("codex")["words"], "not wired", "{result:#}");
    assert!(result["latency_p50"].as_u64().is_some_and(|n| n > 0), "{result:#}");
    assert!(result["latency_p95"].as_u64().is_some_and(|n| n > 0), "{result:#}");
    assert_eq!(result["events_chart"], 1, "{result:#}");

    let sessions = result["sessions"].as_array().expect("sessions");
    for name in ["s-first", "s-second"] {
        let group: Vec<&Value> = sessions.iter().filter(|s| s["session"] == name).collect();
        assert_eq!(group.len(), 1, "{name} is one group: {result:#}");
        assert_eq!(group[0]["agent"], "claude-code", "{result:#}");
        assert!(group[0]["head"].as_str().is_some_and(|h| h.contains(name)), "{result:#}");
        assert!(
            group[0]["channels"].as_array().is_some_and(|c| c.contains(&json!("briefing"))),
            "{result:#}"
        );
        assert!(group[0]["links"].as_u64().is_some_and(|n| n > 0), "{result:#}");
    }

    let marks = result["marks"].as_array().expect("marks");
    let anchored: Vec<&Value> = marks
        .iter()
        .flat_map(|m| m["anchors"].as_array().into_iter().flatten())
        .filter(|a| a["path"] == "src/parser.rs")
        .collect();
    assert_eq!(anchored.len(), 1, "{result:#}");
    assert_eq!(anchored[0]["state"], "changed", "{result:#}");
    assert!(
        anchored[0]["text"].as_str().is_some_and(|t| t.contains("changed since")),
        "{result:#}"
    );
    server.stop(&home);
}
