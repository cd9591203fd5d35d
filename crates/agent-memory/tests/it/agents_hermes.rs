//! The real Hermes Agent, at the version pinned in the testkit's `harness/pins.txt` (installed
//! by `scripts/hermes-test-client`), wired by `agent-memory install hermes` into a temp
//! `HERMES_HOME` over the user's own `config.yaml`, run as `hermes chat -Q -q` sessions against
//! the harness's fake model on 127.0.0.1. Our memory provider runs inside Hermes and our MCP
//! server beside it; the fake model's request log shows what reached the model.
//!
//! The store is the default one under the temp HOME: Hermes hands MCP servers only a few
//! variables (HOME among them), so the provider's hook runs and the MCP server meet there.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use agent_memory_testkit::describe;
use serde_json::Value;

use crate::agents::{
    FINAL, RUNS, after_search, agent_turns, contexts, env_or_cache, harness_dir, search_hit, skip,
    strings, strip_settings, tail,
};

const HERMES_ENV: &str = "AGENT_MEMORY_TEST_HERMES";
const PROMPT: &str = "Investigate why the quartzite tokenizer benchmark is flaky";
const COMMAND: &str = "echo quartzite-bench-ok";
const MEMORY: &str = "The quartzite benchmark needs a warm cache";

/// The `hermes` executable, or `None` (with a notice) when it is missing outside CI.
fn require_hermes(test: &str) -> Option<PathBuf> {
    let hermes = env_or_cache(HERMES_ENV, "hermes/bin/hermes");
    if hermes.is_file() {
        return Some(hermes);
    }
    skip(
        test,
        &format!(
            "Hermes Agent is not installed at {}; run \
             `export {HERMES_ENV}=\"$(scripts/hermes-test-client | tail -n 1)\"`",
            hermes.display(),
        ),
    )
}

/// One user: a temp HOME with Hermes's home and agent-memory's store in it, and a project.
struct User {
    dir: tempfile::TempDir,
    hermes: PathBuf,
    port: u16,
}

/// The fake model, running until dropped.
struct FakeModel(Child);

impl Drop for FakeModel {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What one session left: its exit status, its output, and the model traffic.
struct Session {
    exit: Option<i32>,
    stdout: String,
    log: Vec<Value>,
    report: String,
}

impl User {
    fn new(hermes: PathBuf) -> User {
        let dir = tempfile::Builder::new().prefix("am-hermes-").tempdir().expect("temp dir");
        let proj = dir.path().join("proj");
        std::fs::create_dir_all(&proj).expect("mkdir proj");
        std::fs::create_dir_all(dir.path().join("home/.hermes")).expect("mkdir hermes home");
        let git = |args: &[&str]| {
            let out = Command::new("git").args(args).current_dir(&proj).output().expect("git");
            assert!(out.status.success(), "git {args:?}:\n{}", describe(&out));
        };
        git(&["init", "-q", "."]);
        git(&[
            "-c",
            "user.email=dev@example.invalid",
            "-c",
            "user.name=dev",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ]);
        User { dir, hermes, port: 0 }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn hermes_home(&self) -> PathBuf {
        self.home().join(".hermes")
    }

    fn config(&self) -> PathBuf {
        self.hermes_home().join("config.yaml")
    }

    /// Starts the fake model with `env` (its script), on the port of the one before, if any.
    fn model(&mut self, env: &[(&str, &str)]) -> FakeModel {
        let port_file = self.dir.path().join("port");
        let _ = std::fs::remove_file(&port_file);
        let log = self.dir.path().join("model-requests.jsonl");
        let _ = std::fs::remove_file(&log);
        let child = Command::new("python3")
            .arg(harness_dir().join("fake_model.py"))
            .args(["--port", &self.port.to_string(), "--port-file"])
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the fake model");
        let model = FakeModel(child);
        for _ in 0..200 {
            if let Ok(port) = std::fs::read_to_string(&port_file)
                && let Ok(port) = port.trim().parse()
            {
                self.port = port;
                return model;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the fake model server did not start");
    }

    /// `agent-memory` as this user runs it.
    fn am(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-memory"));
        self.user_env(&mut cmd);
        cmd
    }

    fn user_env(&self, cmd: &mut Command) {
        strip_settings(cmd);
        cmd.env("HOME", self.home())
            .env("HERMES_HOME", self.hermes_home())
            .env("AGENT_MEMORY_DISTIL__AUTO_WORK", "false")
            .env("NO_COLOR", "1")
            .env_remove("CODEX_HOME");
    }

    /// One `hermes chat -Q -q` session in the project.
    fn session(&self, prompt: &str) -> Session {
        let mut cmd = Command::new("timeout");
        cmd.arg("240").arg(&self.hermes).args(["chat", "-Q", "--yolo", "-q", prompt]);
        self.user_env(&mut cmd);
        let started = std::time::Instant::now();
        let out = cmd
            .current_dir(self.dir.path().join("proj"))
            .stdin(Stdio::null())
            .output()
            .expect("run hermes");
        let log = std::fs::read_to_string(self.dir.path().join("model-requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let agent_log =
            std::fs::read_to_string(self.home().join(".agent-memory/logs/agent-memory.log"))
                .unwrap_or_default();
        let report = format!(
            "hermes session ({:.1} s), {}:\nstdout:\n{}\nstderr (end):\n{}\nagent-memory log (end):\n{}",
            started.elapsed().as_secs_f64(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            tail(&String::from_utf8_lossy(&out.stderr)),
            tail(&agent_log),
        );
        Session {
            exit: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            log,
            report,
        }
    }

    /// (agent, kind, tool, body) of every stored event, in order.
    fn events(&self) -> Vec<(String, String, String, String)> {
        let db = rusqlite::Connection::open_with_flags(
            self.home().join(".agent-memory/memory.db"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open the store read-only");
        db.prepare(
            "SELECT agent, kind, coalesce(tool, ''), coalesce(body, '') FROM events ORDER BY id",
        )
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect()
        })
        .expect("read events")
    }
}

impl Session {
    #[track_caller]
    fn assert_finished(&self) {
        assert_eq!(self.exit, Some(0), "hermes did not exit 0:\n{}", self.report);
        assert!(
            self.stdout.contains(FINAL),
            "hermes did not print the final answer:\n{}",
            self.report
        );
    }
}

#[test]
fn hermes_sessions_are_recorded_briefed_and_searched() {
    let test = "hermes_sessions_are_recorded_briefed_and_searched";
    let Some(hermes) = require_hermes(test) else { return };
    let _turn = RUNS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut user = User::new(hermes);

    // Session 1: a shell command and a write to Hermes's own memory.
    let script = serde_json::json!([
        { "tool": "terminal", "args": { "command": COMMAND } },
        { "tool": "memory", "args": { "action": "add", "target": "memory", "content": MEMORY } },
    ]);
    let model = user.model(&[("FAKE_SCRIPT", &script.to_string())]);
    let original = format!(
        "# my Hermes\nmodel:\n  provider: custom\n  default: fake-model\n  base_url: http://127.0.0.1:{}/v1\n  api_key: sk-FAKE-KEY-0000\n  context_length: 128000   # or Hermes probes the server\n",
        user.port
    );
    crate::install::put(&user.config(), &original);
    let out = user.am().args(["install", "hermes"]).output().expect("install");
    assert!(out.status.success(), "{}", describe(&out));
    let installed = std::fs::read_to_string(user.config()).expect("config.yaml");

    let run = user.session(PROMPT);
    run.assert_finished();
    drop(model);
    let events = user.events();
    let has = |kind: &str, tool: &str, text: &str| {
        events
            .iter()
            .any(|(a, k, t, b)| a == "hermes" && k == kind && t == tool && b.contains(text))
    };
    assert!(has("session_start", "", ""), "no session start: {events:#?}\n{}", run.report);
    assert!(has("prompt", "", PROMPT), "no prompt event: {events:#?}\n{}", run.report);
    assert!(has("tool_use", "terminal", COMMAND), "no terminal event: {events:#?}\n{}", run.report);
    assert!(
        has("note", "", MEMORY),
        "Hermes's memory write is not mirrored: {events:#?}\n{}",
        run.report
    );
    assert!(has("stop", "", FINAL), "no stop event: {events:#?}\n{}", run.report);
    assert!(has("session_end", "", ""), "no session end: {events:#?}\n{}", run.report);
    assert!(
        !events.iter().any(|(_, _, t, _)| t == "memory"),
        "Hermes's memory tool is not an observation: {events:#?}"
    );
    assert!(events.iter().all(|(a, ..)| a == "hermes"), "{events:#?}");
    let out = user.am().arg("work").output().expect("work");
    assert!(out.status.success(), "{}", describe(&out));
    // Hermes's own memory write is proposed for the user's review, by Hermes.
    let kept: Vec<(String, String, String, String)> = rusqlite::Connection::open_with_flags(
        user.home().join(".agent-memory/memory.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .and_then(|db| {
        db.prepare("SELECT tier, status, origin, text FROM memories WHERE text = ?1")?
            .query_map([MEMORY], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect()
    })
    .expect("read memories");
    assert_eq!(
        kept,
        [("L1".into(), "candidate".into(), "hermes".into(), MEMORY.into())],
        "Hermes's memory write waits for review\n{}",
        run.report
    );

    // Session 2: its first request carries the briefing from session 1, and the model's call
    // of our MCP search gets session 1's work back.
    let _model = user.model(&[
        ("FAKE_SCRIPT", "mcp"),
        ("FAKE_MCP_TOOL", "__search"),
        ("FAKE_MCP_QUERY", "quartzite benchmark"),
    ]);
    let run = user.session("Look up what is known about the benchmark, then say done.");
    run.assert_finished();
    let turns = agent_turns(&run.log);
    let first = turns.first().unwrap_or_else(|| panic!("no model turn:\n{}", run.report));
    let found = contexts(first);
    assert!(
        found.iter().any(|c| c.contains("Memory from earlier sessions")
            && c.contains("hermes")
            && c.contains("quartzite tokenizer")),
        "the first request carries no briefing from session 1; context blocks: {found:#?}\n{}",
        run.report
    );
    let follow_up = after_search(&run.log)
        .unwrap_or_else(|| panic!("no request after a call of search:\n{}", run.report));
    let mut texts = Vec::new();
    strings(follow_up, &mut texts);
    // Hermes hands MCP results over as JSON inside its own wrapper text: read the lines out.
    let texts: Vec<String> = texts.iter().map(|t| t.replace("\\n", "\n")).collect();
    assert!(
        search_hit(&texts, "hermes", "quartzite").is_some(),
        "no search result from session 1 reached the model:\n{}\n{}",
        texts
            .iter()
            .filter(|t| t.contains("results for"))
            .cloned()
            .collect::<Vec<_>>()
            .join("\n---\n"),
        run.report
    );

    // Hermes left our config alone, so uninstall gives back the user's bytes, and takes the
    // plugin away with what Python compiled into it.
    assert_eq!(std::fs::read_to_string(user.config()).expect("config.yaml"), installed);
    let out = user.am().args(["uninstall", "hermes"]).output().expect("uninstall");
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(std::fs::read_to_string(user.config()).expect("config.yaml"), original);
    assert!(!user.hermes_home().join("plugins/agent-memory").exists());
}
