//! `agent-memory mcp`: the real binary as an MCP server over stdio, spoken to in newline-
//! delimited JSON-RPC 2.0 as a client does: the handshake, the tool list (a snapshot: names,
//! descriptions and schemas are what a client's model reads), every tool with good arguments
//! and with bad ones, the server still serving after each mistake, and stdout carrying nothing
//! but JSON-RPC. Then the same through the official MCP Python SDK's client
//! (`mcp/python_client.py`), installed by `scripts/mcp-test-client`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{Value, json};

use crate::recall_inject::{CODEX_PROMPT, codex_fixes_the_parser};
use crate::{count, home};
use agent_memory_testkit::TestHome;

/// A Codex session that fixes the parser, through the real hook, then a `work` pass, so the
/// store holds events, observations and a summary.
pub(crate) fn seeded() -> (TestHome, String) {
    let home = home();
    let app = home.user_home().join("app");
    std::fs::create_dir_all(&app).expect("project dir");
    let app = app.to_string_lossy().into_owned();
    codex_fixes_the_parser(&home, "codex-fix", &app, CODEX_PROMPT);
    let out = home.cmd().args(["work", "--json"]).output().expect("work");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    (home, app)
}

/// A running `agent-memory mcp` and the JSON-RPC lines it wrote.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Server {
    fn start(home: &TestHome) -> Server {
        let mut child = home
            .cmd()
            .arg("mcp")
            .env("TZ", "UTC")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agent-memory mcp");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Server { child, stdin, stdout, next_id: 1 }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// One line of stdout: it must be a JSON-RPC 2.0 message.
    fn read_message(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read from the server");
        assert!(n > 0, "the server closed stdout");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC: {line}");
        message
    }

    /// Sends a request and returns its response (notifications in between are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.read_message();
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            assert!(message.get("method").is_some(), "a response to another request: {message}");
        }
    }

    /// Calls a tool; returns whether it was a tool error and its text.
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let response = self.request("tools/call", json!({ "name": tool, "arguments": arguments }));
        let result = response
            .get("result")
            .unwrap_or_else(|| panic!("{tool} {arguments}: no result: {response}"));
        let text = result["content"]
            .as_array()
            .expect("content")
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (result["isError"] == json!(true), text)
    }

    /// Closes stdin and waits: the server must exit 0 and have written nothing but JSON-RPC.
    pub(crate) fn finish(mut self) {
        drop(self.stdin.take());
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).expect("read the rest");
        for line in rest.lines() {
            let message: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
        }
        let status = self.child.wait().expect("wait for the server");
        let mut stderr = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
        }
        assert!(status.success(), "the server exited with {status}: {stderr}");
    }
}

pub(crate) fn initialized(home: &TestHome) -> Server {
    let mut server = Server::start(home);
    let response = server.request(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "agent-memory-tests", "version": "0" }
        }),
    );
    let result = &response["result"];
    assert_eq!(result["serverInfo"]["name"], "agent-memory", "{response}");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"), "{response}");
    assert!(result["capabilities"]["tools"].is_object(), "{response}");
    assert!(
        result["instructions"].as_str().is_some_and(|i| i.contains("`search` first")),
        "{response}"
    );
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    server
}

#[test]
fn tools_list_matches_the_snapshot() {
    let home = home();
    let mut server = initialized(&home);
    let response = server.request("tools/list", json!({}));
    let tools: Vec<Value> = response["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {response}"))
        .iter()
        .map(|t| {
            json!({
                "name": t["name"],
                "description": t["description"],
                "inputSchema": t["inputSchema"],
            })
        })
        .collect();
    let pretty = serde_json::to_string_pretty(&tools).expect("pretty");
    expect_test::expect_file!["snapshots/mcp_tools_list.json"].assert_eq(&format!("{pretty}\n"));
    server.finish();
}

/// Every tool the server lists is named wherever the MCP server is described to a user: both
/// READMEs, the HTTP API's page and `mcp --help`; none of them may count fewer.
#[test]
fn every_description_of_the_server_names_all_its_tools() {
    let home = home();
    let mut server = initialized(&home);
    let response = server.request("tools/list", json!({}));
    server.finish();
    let names: Vec<String> = response["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {response}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(names.len(), 6, "{names:?}");
    let root = agent_memory_testkit::workspace_root();
    let mut places: Vec<(String, String)> = ["README.md", "README.zh-CN.md", "docs/http-api.md"]
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(root.join(file)).expect(file);
            (file.to_owned(), text)
        })
        .collect();
    places.push(("mcp --help".to_owned(), home.ok(&["mcp", "--help"])));
    for (place, text) in &places {
        for name in &names {
            assert!(text.contains(name.as_str()), "{place} does not name the MCP tool {name}");
        }
        for wrong in ["four tools", "通过四个只读工具"] {
            assert!(!text.contains(wrong), "{place} still says {wrong:?}");
        }
    }
}

#[test]
fn the_cheap_first_workflow_works_end_to_end() {
    let (home, app) = seeded();
    let fix = count(
        &home,
        "SELECT id FROM observations WHERE agent = 'codex' AND files_modified LIKE '%src/parser.rs%'",
    );
    let summary = count(&home, "SELECT max(id) FROM summaries");
    let event = count(&home, "SELECT min(id) FROM events WHERE kind = 'prompt'");
    let mut server = initialized(&home);

    // search: a compact index, each line with an id and what reading it costs.
    let (error, text) = server.call("search", json!({ "query": "parser depth", "limit": 5 }));
    assert!(!error, "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("o{fix} | ")))
        .unwrap_or_else(|| panic!("o{fix} in the index: {text}"));
    assert!(line.contains(" | codex | "), "{line}");
    assert!(line.rsplit(" | ").next().is_some_and(|t| t.starts_with('~')), "{line}");
    assert!(text.lines().count() <= 5 + 2, "at most the limit and two lines around: {text}");
    assert!(text.contains("get_observations"), "the answer says how to go on: {text}");

    // Filters: only events, only another agent.
    let (error, text) =
        server.call("search", json!({ "query": "parser", "kind": ["event"], "since": "1w" }));
    assert!(!error, "{text}");
    let hits: Vec<&str> = text.lines().filter(|l| l.contains(" | ")).skip(1).collect();
    assert!(!hits.is_empty() && hits.iter().all(|l| l.starts_with('e')), "{text}");
    let (error, text) = server.call("search", json!({ "query": "parser", "agent": "gemini" }));
    assert!(!error && text.starts_with("no matches"), "{text}");

    // timeline: around the fix, the fix marked.
    let (error, text) = server.call("timeline", json!({ "anchor": format!("o{fix}") }));
    assert!(!error, "{text}");
    assert!(text.contains(&format!("→ o{fix} | ")), "{text}");
    let (error, text) = server.call("timeline", json!({ "anchor": "depth parser", "before": 1 }));
    assert!(!error && text.contains(" | codex | "), "{text}");

    // get_observations: several ids in one call, an unknown one reported on its own.
    let ids = json!([format!("o{fix}"), format!("s{summary}"), format!("e{event}"), "o999999"]);
    let (error, text) = server.call("get_observations", json!({ "ids": ids }));
    assert!(!error, "{text}");
    assert!(text.contains(&format!("## o{fix} [")), "{text}");
    assert!(text.contains("src/parser.rs"), "{text}");
    assert!(text.contains(&format!("## s{summary} summary of session codex-fix")), "{text}");
    assert!(text.contains(&format!("## e{event} [prompt]")), "{text}");
    assert!(text.contains("- o999999: nothing is stored under this id"), "{text}");

    // briefing: the project's session-start overview.
    let (error, text) = server.call("briefing", json!({ "project": app }));
    assert!(!error, "{text}");
    assert!(text.contains(&format!("o{fix}")), "{text}");
    // It is on record as handed to this client, without a session.
    let log = home.json(&["log"]);
    assert_eq!(log.as_array().map(Vec::len), Some(1), "{log}");
    assert_eq!(
        (&log[0]["channel"], &log[0]["agent"], &log[0]["session"]),
        (&"mcp-briefing".into(), &"agent-memory-tests".into(), &serde_json::Value::Null),
        "{log}"
    );
    assert!(
        log[0]["items"].as_array().is_some_and(|items| items.contains(&format!("o{fix}").into())),
        "{log}"
    );
    let (error, text) = server.call("briefing", json!({}));
    assert!(!error && text.contains("Nothing is remembered"), "the server's own dir: {text}");
    assert_eq!(home.json(&["log"]).as_array().map(Vec::len), Some(1), "nothing handed there");

    server.finish();
}

#[test]
fn an_agent_proposes_memory_and_forgets_only_its_own() {
    let (home, app) = seeded();
    let mut server = initialized(&home);
    let (error, text) = server.call(
        "remember",
        json!({ "text": "Decision: the parser tracks depth per nested list", "kind": "decision",
                "project": app, "importance": 10 }),
    );
    assert!(!error, "{text}");
    assert!(text.contains("proposed") && text.contains("as a decision"), "{text}");
    // Its origin is the client that asked, by the name it introduced itself with; an agent's
    // statement waits for review in its project, and is worth at most 7 until then.
    let id = count(&home, "SELECT max(id) FROM memories WHERE origin = 'agent-memory-tests'");
    assert_eq!(
        count(
            &home,
            &format!(
                "SELECT tier = 'L1' AND status = 'candidate' AND importance = 7 AND project_id IS NOT NULL
                 FROM memories WHERE id = {id}"
            )
        ),
        1
    );
    // Said again: merged, not piled up.
    let (error, text) = server.call(
        "remember",
        json!({ "text": "Decision: the parser tracks depth per nested list.", "kind": "decision",
                "project": app }),
    );
    assert!(!error && text.contains(&format!("as m{id}")), "{text}");
    // A global preference is proposed too, never global on an agent's word.
    let (error, text) =
        server.call("remember", json!({ "text": "Answer in short sentences.", "global": true }));
    assert!(!error && text.contains("proposed"), "{text}");
    assert_eq!(count(&home, "SELECT count(*) FROM memories WHERE tier = 'L3'"), 0);
    // Not handed to agents until the person approves it.
    let (_, text) = server.call("briefing", json!({ "project": app }));
    assert!(!text.contains("tracks depth"), "{text}");
    home.ok(&["review", "--approve", &format!("m{id}")]);
    let (error, text) =
        server.call("search", json!({ "query": "nested list depth", "kind": ["memory"] }));
    assert!(!error && text.contains(&format!("m{id} | ")), "{text}");
    let (error, text) = server.call("briefing", json!({ "project": app }));
    assert!(!error, "{text}");
    assert!(text.contains("## Decisions\n- Decision: the parser tracks depth"), "{text}");
    let (error, text) = server.call("get_observations", json!({ "ids": [format!("m{id}")] }));
    assert!(!error && text.contains(&format!("## m{id} [decision] L2 memory, app")), "{text}");
    // What the person kept is theirs to forget.
    home.ok(&["remember", "--project", &app, "Releases are cut on Tuesdays"]);
    let theirs = count(&home, "SELECT max(id) FROM memories WHERE origin = 'remembered'");
    let (error, text) = server.call("forget", json!({ "id": format!("m{theirs}") }));
    assert!(error && text.contains("not written by agent-memory-tests"), "{text}");
    // Its own: gone from search and the briefing, kept in the store.
    let (error, text) = server.call("forget", json!({ "id": format!("m{id}") }));
    assert!(!error && text.starts_with(&format!("forgot m{id}: ")), "{text}");
    let (_, text) =
        server.call("search", json!({ "query": "nested list depth", "kind": ["memory"] }));
    assert!(text.starts_with("no matches"), "{text}");
    let (_, text) = server.call("briefing", json!({ "project": app }));
    assert!(!text.contains("tracks depth"), "{text}");
    assert_eq!(
        count(&home, &format!("SELECT status = 'forgotten' FROM memories WHERE id = {id}")),
        1
    );
    server.finish();
}

/// A work pass holding the store longer than a connection waits: `remember` tries again and
/// gets through once it is free, rather than failing with "database is locked".
#[test]
fn remember_waits_out_a_store_held_by_another_writer() {
    let (home, app) = seeded();
    let mut server = initialized(&home);
    let (held, released) = std::sync::mpsc::channel();
    let db_path = home.db_path();
    let holder = std::thread::spawn(move || {
        let db = rusqlite::Connection::open(&db_path).expect("open");
        db.execute_batch("BEGIN IMMEDIATE; UPDATE projects SET name = name;").expect("hold");
        held.send(()).expect("held");
        // Longer than the busy timeout of one attempt.
        std::thread::sleep(std::time::Duration::from_secs(6));
        db.execute_batch("COMMIT").expect("release");
    });
    released.recv().expect("the store is held");
    let (error, text) = server.call(
        "remember",
        json!({ "text": "The parser keeps its depth per nested list", "project": app }),
    );
    holder.join().expect("holder");
    assert!(!error, "{text}");
    assert!(text.contains("proposed"), "{text}");
    server.finish();
}

#[test]
fn bad_arguments_are_explained_and_the_server_keeps_serving() {
    let (home, _) = seeded();
    let mut server = initialized(&home);
    // (tool, arguments, what the message must say)
    let cases: &[(&str, Value, &[&str])] = &[
        ("search", json!({}), &["missing field `query`", "pass `query`"]),
        ("search", json!({ "query": 5 }), &["`query`", "expected a string"]),
        ("search", json!({ "query": "x", "limit": "ten" }), &["`limit`", "pass `limit`"]),
        ("search", json!({ "query": "x", "limit": 0 }), &["`limit` is 0", "from 1 to 100"]),
        ("search", json!({ "query": "x", "kind": ["memo"] }), &["unknown variant `memo`"]),
        (
            "search",
            json!({ "query": "x", "since": "soon" }),
            &["`since`: cannot read `soon` as a time"],
        ),
        ("search", json!({ "query": "x", "colour": 1 }), &["unknown field `colour`"]),
        ("search", json!({ "query": "  " }), &["`query` is empty"]),
        ("timeline", json!({ "anchor": "o999999" }), &["nothing is stored under o999999"]),
        ("timeline", json!({ "anchor": "zzqqxx" }), &["nothing matches `zzqqxx`"]),
        ("timeline", json!({ "anchor": "o1", "before": -1 }), &["`before`", "pass `before`"]),
        ("get_observations", json!({ "ids": "o1" }), &["`ids`", "pass `ids`"]),
        ("get_observations", json!({ "ids": [] }), &["`ids` is empty"]),
        ("briefing", json!({ "project": "/no/such/dir" }), &["/no/such/dir is not a directory"]),
        ("remember", json!({}), &["missing field `text`", "pass `text`"]),
        ("remember", json!({ "text": "  " }), &["`text`", "empty"]),
        ("remember", json!({ "text": "x".repeat(301) }), &["`text`", "301 characters"]),
        ("remember", json!({ "text": "x", "kind": "rumour" }), &["unknown variant `rumour`"]),
        ("remember", json!({ "text": "x", "importance": 0 }), &["`importance` is 0"]),
        ("remember", json!({ "text": "x", "project": "/no/such/dir" }), &["`project`"]),
        ("forget", json!({}), &["missing field `id`", "pass `id`"]),
        ("forget", json!({ "id": "o1" }), &["`id`", "not a memory id"]),
        ("forget", json!({ "id": "m999999" }), &["`id`", "no memory m999999"]),
    ];
    for (tool, arguments, wanted) in cases {
        let (error, text) = server.call(tool, arguments.clone());
        assert!(error, "{tool} {arguments}: a tool error expected, got: {text}");
        for want in *wanted {
            assert!(text.contains(want), "{tool} {arguments}: `{want}` missing from: {text}");
        }
        // Still serving.
        let (error, text) = server.call("search", json!({ "query": "parser" }));
        assert!(!error && text.contains(" | codex | "), "after {tool} {arguments}: {text}");
    }
    // Unparseable ids in a list are reported per id; the good ones still come back.
    let (error, text) = server.call("get_observations", json!({ "ids": ["x1", "e1"] }));
    assert!(!error, "{text}");
    assert!(text.contains("- x1: `x1` is not an id") && text.contains("## e1 ["), "{text}");
    // An unknown tool is a protocol error, and the server goes on.
    let response = server.request("tools/call", json!({ "name": "memorize", "arguments": {} }));
    assert!(response.get("error").is_some(), "{response}");
    let (error, _) = server.call("search", json!({ "query": "parser" }));
    assert!(!error);
    server.finish();
}

/// The environment variable naming a python with the official MCP SDK installed.
pub(crate) const MCP_PYTHON_ENV: &str = "AGENT_MEMORY_TEST_MCP_PYTHON";

/// The python to run the SDK client with. Without one, a CI run (`CI=true`) fails with the
/// command that installs it; elsewhere the test is skipped with a note.
fn mcp_python(test: &str) -> Option<std::path::PathBuf> {
    crate::needed(test, MCP_PYTHON_ENV, "scripts/mcp-test-client", |p| p.is_file())
}

#[test]
fn the_official_python_sdk_client_runs_the_workflow() {
    let Some(python) = mcp_python("the_official_python_sdk_client_runs_the_workflow") else {
        return;
    };
    let (home, _) = seeded();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/mcp/python_client.py");
    // The client hands its environment on to the server: the test home's, as `cmd` sets it.
    let mut client = std::process::Command::new(&python);
    for (key, value) in home.cmd().get_envs() {
        match value {
            Some(value) => client.env(key, value),
            None => client.env_remove(key),
        };
    }
    let out = client
        .env("TZ", "UTC")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_agent-memory"))
        .current_dir(home.user_home())
        .output()
        .expect("run the python client");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", agent_memory_testkit::describe(&out)));
    assert_eq!(seen["server"], "agent-memory", "{seen}");
    assert_eq!(seen["version"], env!("CARGO_PKG_VERSION"), "{seen}");
    assert_eq!(
        seen["tools"],
        json!(["briefing", "forget", "get_observations", "remember", "search", "timeline"])
    );
    let ids = seen["ids"].as_array().expect("ids");
    assert!(!ids.is_empty(), "search found the fix: {seen}");
    assert_eq!(seen["get_error"], false, "{seen}");
    let got = seen["get"].as_str().expect("get");
    for id in ids.iter().take(3).filter_map(Value::as_str) {
        assert!(got.contains(&format!("## {id} ")), "{id} read in full: {got}");
    }
    assert_eq!(seen["bad_error"], true, "{seen}");
    assert!(seen["bad"].as_str().is_some_and(|t| t.contains("`limit`")), "{seen}");
    assert_eq!(seen["after_error"], false, "still serving after the mistake: {seen}");
    assert!(seen["after"].as_str().is_some_and(|t| t.contains(" | codex | ")), "{seen}");
    // remember and forget, with good and bad arguments.
    let memory = seen["memory_id"].as_str().expect("memory id");
    assert!(memory.starts_with('m'), "{seen}");
    assert_eq!(seen["remember_error"], false, "{seen}");
    assert!(seen["remember"].as_str().is_some_and(|t| t.contains("as a decision")), "{seen}");
    assert!(seen["remember"].as_str().is_some_and(|t| t.contains("proposed")), "{seen}");
    // An agent's statement waits for the user's review: not searched as memory until then.
    assert!(
        seen["found"].as_str().is_some_and(|t| !t.contains(&format!("{memory} | "))),
        "a proposed memory is not searched: {seen}"
    );
    assert_eq!(seen["remember_bad_error"], true, "{seen}");
    assert!(seen["remember_bad"].as_str().is_some_and(|t| t.contains("`importance` is 11")));
    assert_eq!(seen["forget_error"], false, "{seen}");
    assert!(seen["forget"].as_str().is_some_and(|t| t.starts_with(&format!("forgot {memory}"))));
    assert!(seen["forget_again"].as_str().is_some_and(|t| t.contains("forgot")), "{seen}");
    assert_eq!(seen["forget_wrong_error"], true, "{seen}");
    assert!(seen["forget_wrong"].as_str().is_some_and(|t| t.contains("`id`")), "{seen}");
    let status = count(
        &home,
        &format!("SELECT status = 'forgotten' FROM memories WHERE id = {}", &memory[1..]),
    );
    assert_eq!(status, 1);
}
