//! The real agents: Claude Code, Codex CLI and Gemini CLI, at the versions pinned in the
//! testkit's `harness/pins.txt` (installed by `scripts/agent-test-clients`), each run by the
//! testkit's `harness/run_agent.py` as a non-interactive session against its fake model on
//! 127.0.0.1, with `agent-memory hook` as every hook and `agent-memory mcp` as an MCP server.
//! The fake model logs every request, so these tests see exactly what reached the model.
//!
//! All runs of one test share one store and one project directory (the harness's `proj/` under
//! one run path, rebuilt per run), as sessions of different agents in one checkout do.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

/// Harness runs start several processes each; two at once on a small machine only make each
/// slower, so the tests of this module take turns.
pub(crate) static RUNS: Mutex<()> = Mutex::new(());

const CLIENTS_ENV: &str = "AGENT_MEMORY_TEST_CLIENTS";
/// What the fake model answers when it has no tool call left: the mark of a finished turn.
pub(crate) const FINAL: &str = "FAKE_FINAL_ANSWER";
const CODEX_PROMPT: &str = "Investigate why the quartzite tokenizer benchmark is flaky";
const CODEX_COMMAND: &str = "echo quartzite-bench-ok";
const OPEN: &str = "<agent-memory-context>";
const CLOSE: &str = "</agent-memory-context>";

/// The installed clients, or `None` (with a notice) when they are missing outside CI.
fn require_clients(test: &str) -> Option<PathBuf> {
    require(
        test,
        &[
            "claude-code/node_modules/.bin/claude",
            "codex/node_modules/.bin/codex",
            "gemini/node_modules/.bin/gemini",
        ],
    )
}

/// The client directory holding `bins`, or `None` (with a notice) when one is missing outside CI.
pub(crate) fn require(test: &str, bins: &[&str]) -> Option<PathBuf> {
    let dir = env_or_cache(CLIENTS_ENV, "");
    if bins.iter().all(|bin| dir.join(bin).is_file()) {
        return Some(dir);
    }
    skip(
        test,
        &format!(
            "the agent CLIs are not installed in {}; run \
             `export {CLIENTS_ENV}=\"$(scripts/agent-test-clients | tail -n 1)\"`",
            dir.display(),
        ),
    )
}

/// The path `var` names, or `path` inside the clients' cache (`~/.cache/agent-memory-clients`).
pub(crate) fn env_or_cache(var: &str, path: &str) -> PathBuf {
    std::env::var_os(var).filter(|v| !v.is_empty()).map_or_else(
        || {
            std::env::var_os("HOME")
                .map(|home| Path::new(&home).join(".cache/agent-memory-clients").join(path))
                .unwrap_or_default()
        },
        PathBuf::from,
    )
}

/// A test whose agent is missing: a failure in CI (`CI=true`), elsewhere skipped with a note.
#[allow(clippy::print_stderr)]
pub(crate) fn skip<T>(test: &str, advice: &str) -> Option<T> {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {advice}");
    }
    eprintln!("skipping {test}: {advice}");
    None
}

/// The last 3000 characters of `s`.
pub(crate) fn tail(s: &str) -> String {
    s.chars().rev().take(3000).collect::<Vec<_>>().into_iter().rev().collect()
}

/// The requests of an agent's own turns: the ones offering tools (title and router calls
/// offer none), in order.
pub(crate) fn agent_turns(log: &[Value]) -> Vec<&Value> {
    log.iter()
        .filter_map(|line| line.get("body"))
        .filter(|body| body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty()))
        .collect()
}

/// The agent's request that follows the fake model's call of our `search` tool.
pub(crate) fn after_search(log: &[Value]) -> Option<&Value> {
    let called = log.iter().position(|line| {
        // `mcp__agent-memory__search` (Claude Code, Hermes), `mcp__agent_memory__search`
        // (Codex), `mcp_agent-memory_search` (Gemini CLI).
        line.pointer("/reply/tool").and_then(Value::as_str).is_some_and(|t| t.ends_with("_search"))
    })?;
    agent_turns(&log[called..]).into_iter().next()
}

pub(crate) fn harness_dir() -> PathBuf {
    agent_memory_testkit::harness_dir()
}

/// One store and one run path that every session of a test shares.
pub(crate) struct Memory {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) clients: PathBuf,
}

/// What one agent session left: its exit status, its stdout, and the model traffic.
pub(crate) struct Run {
    agent: &'static str,
    exit: Option<i32>,
    stdout: String,
    /// `model-requests.jsonl`: request lines (`method`, `path`, `body`) each followed by the
    /// fake model's `reply`.
    pub(crate) log: Vec<Value>,
    pub(crate) report: String,
}

impl Memory {
    pub(crate) fn new(clients: PathBuf) -> Memory {
        let dir = tempfile::Builder::new().prefix("am-agents-").tempdir().expect("temp dir");
        Memory { dir, clients }
    }

    pub(crate) fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    pub(crate) fn bin() -> &'static str {
        env!("CARGO_BIN_EXE_agent-memory")
    }

    /// `agent-memory` with this store and no inherited setting.
    pub(crate) fn cmd(&self) -> Command {
        let mut cmd = Command::new(Self::bin());
        strip_settings(&mut cmd);
        cmd.env("AGENT_MEMORY_HOME", self.store()).env("AGENT_MEMORY_DISTIL__AUTO_WORK", "false");
        cmd
    }

    /// Prefixes `command` so it runs against this store whatever environment the agent gives
    /// its hooks and MCP servers (Codex hands MCP servers only a few variables).
    fn with_store(&self, command: &str) -> String {
        format!(
            "env AGENT_MEMORY_HOME={} AGENT_MEMORY_DISTIL__AUTO_WORK=false {} {command}",
            self.store().display(),
            Self::bin()
        )
    }

    /// Runs one session of `agent` through the harness's `run_agent.py`, with agent-memory's
    /// hooks as the harness wires them.
    fn run(&self, agent: &'static str, prompt: &str, env: &[(&str, &str)]) -> Run {
        self.run_with(agent, &self.with_store("hook --agent {agent} --event {event}"), prompt, env)
    }

    /// The harness's run directory: its `home/` and `proj/` are rebuilt by every run.
    pub(crate) fn run_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    /// Runs one session of `agent` with `hook` as the harness's own hook command, and this
    /// store in the agent's environment (for the hooks and servers `agent-memory install`
    /// wires, which run without a prefix).
    pub(crate) fn run_with(
        &self,
        agent: &'static str,
        hook: &str,
        prompt: &str,
        env: &[(&str, &str)],
    ) -> Run {
        let run_dir = self.run_dir();
        let mut cmd = Command::new("python3");
        strip_settings(&mut cmd);
        cmd.arg(harness_dir().join("run_agent.py"))
            .arg(agent)
            .arg(hook)
            .env("AGENT_MEMORY_HOME", self.store())
            .env("AGENT_MEMORY_DISTIL__AUTO_WORK", "false")
            .env("CLIENTS", &self.clients)
            .env("RUN", &run_dir)
            .env("PROMPT", prompt)
            .env("HOOK_TIMEOUT_S", "10")
            .envs(env.iter().copied())
            .current_dir(self.dir.path());
        let started = std::time::Instant::now();
        let out = cmd.output().expect("run the harness");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let exit_mark = format!("# {agent} exit=");
        let exit = stdout
            .lines()
            .find_map(|line| line.strip_prefix(&exit_mark))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|code| code.parse().ok());
        let read = |name: &str| std::fs::read_to_string(run_dir.join(name)).unwrap_or_default();
        let log = read("model-requests.jsonl")
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let agent_err = read(&format!("{agent}.stderr"));
        let report = format!(
            "{agent} run ({:.1} s), harness {}:\n{stdout}{}\n{agent}.stderr (end):\n{}\nagent-memory log (end):\n{}",
            started.elapsed().as_secs_f64(),
            out.status,
            String::from_utf8_lossy(&out.stderr),
            tail(&agent_err),
            tail(
                &std::fs::read_to_string(self.store().join("logs/agent-memory.log"))
                    .unwrap_or_default()
            ),
        );
        assert!(out.status.success(), "the harness failed:\n{report}");
        Run { agent, exit, stdout: read(&format!("{agent}.stdout")), log, report }
    }

    /// An executable shell script `name` in the test's directory, by its path.
    fn script(&self, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.path().join(name);
        std::io::Write::write_all(
            &mut std::fs::File::create(&path).expect("create the script"),
            format!("#!/bin/sh\nset -e\n{body}").as_bytes(),
        )
        .expect("write the script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("make the script executable");
        path.to_string_lossy().into_owned()
    }

    pub(crate) fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open_with_flags(
            self.store().join("memory.db"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open the store read-only")
    }
}

/// Removes every inherited `AGENT_MEMORY_*` variable, so only what a test sets applies.
pub(crate) fn strip_settings(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("AGENT_MEMORY_") {
            cmd.env_remove(key);
        }
    }
}

impl Run {
    /// The requests of the agent's own turns: the ones offering tools (title and router calls
    /// offer none), in order.
    pub(crate) fn turns(&self) -> Vec<&Value> {
        agent_turns(&self.log)
    }

    /// The fake model's answers, in order.
    fn replies(&self) -> Vec<&Value> {
        self.log.iter().filter_map(|line| line.get("reply")).collect()
    }

    /// The hooks never got in the agent's way: it exited 0 and the model's final answer, given
    /// after the tool call, is what the agent printed.
    #[track_caller]
    pub(crate) fn assert_finished(&self) {
        assert_eq!(self.exit, Some(0), "{} did not exit 0:\n{}", self.agent, self.report);
        let last = self.replies().last().and_then(|r| r.get("text")).and_then(Value::as_str);
        assert!(
            last.is_some_and(|t| t.starts_with(FINAL)),
            "the fake model's last answer was not its final turn:\n{}",
            self.report
        );
        assert!(
            self.replies().iter().any(|r| r.get("tool").is_some()),
            "the model never called a tool:\n{}",
            self.report
        );
        assert!(
            self.stdout.contains(FINAL),
            "{} did not print the final answer:\n{}",
            self.agent,
            self.report
        );
    }
}

/// Every string inside `value`, depth first.
pub(crate) fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The injected context blocks in a request body. Gemini CLI escapes `<` and `>` of hook
/// context inside its own `<hook_context>` wrapper, so its model reads the sentinel as
/// `&lt;agent-memory-context&gt;`; both spellings count.
pub(crate) fn contexts(body: &Value) -> Vec<String> {
    let mut texts = Vec::new();
    strings(body, &mut texts);
    let escaped = (
        OPEN.replace('<', "&lt;").replace('>', "&gt;"),
        CLOSE.replace('<', "&lt;").replace('>', "&gt;"),
    );
    let mut found = Vec::new();
    for text in texts {
        for (open, close) in [(OPEN, CLOSE), (escaped.0.as_str(), escaped.1.as_str())] {
            let mut rest = text.as_str();
            while let Some(start) = rest.find(open) {
                let after = &rest[start..];
                let end = after.find(close).map_or(after.len(), |e| e + close.len());
                found.push(after[..end].to_owned());
                rest = &after[end..];
            }
        }
    }
    found
}

/// A search result line (`id | time | agent | project | type | title | ~tokens`) of `agent`
/// whose title holds `word`.
pub(crate) fn search_hit<'t>(texts: &'t [String], agent: &str, word: &str) -> Option<&'t str> {
    texts.iter().flat_map(|t| t.lines()).find(|line| {
        let fields: Vec<&str> = line.split(" | ").collect();
        fields.len() == 7
            && fields[0].len() > 1
            && fields[0].starts_with(['o', 's', 'e'])
            && fields[0][1..].bytes().all(|b| b.is_ascii_digit())
            && fields[2] == agent
            && fields[5].contains(word)
    })
}

/// Session 1: Codex runs a shell command and answers. Its prompt, tool use and stop are stored
/// as Codex events of one session.
fn codex_session(memory: &Memory) {
    let run = memory.run("codex", CODEX_PROMPT, &[("FAKE_TOOL_COMMAND", CODEX_COMMAND)]);
    run.assert_finished();
    let db = memory.db();
    let events: Vec<(String, String, String)> = db
        .prepare("SELECT agent, kind, body FROM events ORDER BY id")
        .and_then(|mut st| {
            st.query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get::<_, Option<String>>(2)?.unwrap_or_default()))
            })?
            .collect()
        })
        .expect("read events");
    let has = |kind: &str, text: &str| {
        events.iter().any(|(agent, k, body)| agent == "codex" && k == kind && body.contains(text))
    };
    assert!(has("prompt", CODEX_PROMPT), "no Codex prompt event: {events:?}\n{}", run.report);
    assert!(has("tool_use", CODEX_COMMAND), "no Codex tool use event: {events:?}\n{}", run.report);
    assert!(has("stop", FINAL), "no Codex stop event: {events:?}\n{}", run.report);
    assert!(events.iter().all(|(agent, _, _)| agent == "codex"), "{events:?}");
    let sessions: i64 = db
        .query_row("SELECT count(DISTINCT session_id) FROM events", [], |r| r.get(0))
        .expect("count sessions");
    assert_eq!(sessions, 1, "{events:?}");
}

/// A memory holding one distilled Codex session, and this module's turn at running agents;
/// `None` when the clients are missing outside CI.
pub(crate) fn after_codex(test: &str) -> Option<(std::sync::MutexGuard<'static, ()>, Memory)> {
    let clients = require_clients(test)?;
    let turn = RUNS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let memory = Memory::new(clients);
    codex_session(&memory);
    let out = memory.cmd().arg("work").output().expect("run work");
    assert!(out.status.success(), "work failed:\n{}", agent_memory_testkit::describe(&out));
    Some((turn, memory))
}

#[test]
fn codex_session_reaches_claude_code_and_gemini_cli() {
    let Some((_turn, memory)) = after_codex("codex_session_reaches_claude_code_and_gemini_cli")
    else {
        return;
    };

    // Sessions 2 and 3 ask nothing that names the Codex session: what they learn of it comes
    // from the session-start briefing.
    for agent in ["claude", "gemini"] {
        let run = memory.run(agent, "Pick up where the last session left off, then say done.", &[]);
        run.assert_finished();
        assert_briefed_from_codex(&run, agent);
    }
    // Every session landed in the one store, under its own agent.
    let agents: Vec<String> = memory
        .db()
        .prepare("SELECT DISTINCT agent FROM events ORDER BY agent")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .expect("read agents");
    assert_eq!(agents, ["claude-code", "codex", "gemini"]);
}

#[test]
fn mcp_search_results_reach_the_model() {
    let Some((_turn, memory)) = after_codex("mcp_search_results_reach_the_model") else {
        return;
    };

    // Claude Code in `-p` mode refuses tools it was not told to allow; the harness allows the
    // fake MCP server's tool, so a wrapper adds ours, as a user's settings would.
    let real_claude = memory.clients.join("claude-code/node_modules/.bin/claude");
    let wrapper = memory.dir.path().join("claude");
    std::io::Write::write_all(
        &mut std::fs::File::create(&wrapper).expect("create the wrapper"),
        format!(
            "#!/bin/sh\nif [ \"$1\" = -p ]; then exec '{0}' \"$@\" --allowedTools mcp__agent-memory__search; fi\nexec '{0}' \"$@\"\n",
            real_claude.display()
        )
        .as_bytes(),
    )
    .expect("write the wrapper");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
            .expect("make the wrapper executable");
    }
    let wrapper = wrapper.to_string_lossy().into_owned();
    let mcp_cmd = memory.with_store("mcp");

    // The model sees `mcp__agent-memory__search` in Claude Code, `mcp__agent_memory__search` in
    // Codex and `mcp_agent-memory_search` in Gemini CLI.
    for (agent, extra, tool) in [
        ("claude", Some(("CLAUDE_BIN", wrapper.as_str())), "__search"),
        ("codex", None, "__search"),
        ("gemini", None, "agent-memory_search"),
    ] {
        let mut env = vec![
            ("MCP", "1"),
            ("MCP_NAME", "agent-memory"),
            ("MCP_CMD", mcp_cmd.as_str()),
            ("FAKE_SCRIPT", "mcp"),
            ("FAKE_MCP_TOOL", tool),
            ("FAKE_MCP_QUERY", "quartzite benchmark"),
        ];
        env.extend(extra);
        let run = memory.run(agent, "Look up what is known about the quartzite benchmark.", &env);
        run.assert_finished();
        assert_search_reached_the_model(&run, agent, |name| name.ends_with(tool));
    }
}

/// Codex runs no `PostToolUse` hook for a patch applied with `apply_patch`; the edit is read
/// from its rollout at the stop, stored once, inside the turn it belongs to.
#[test]
fn codex_apply_patch_edits_come_from_the_rollout_once() {
    let Some(clients) = require_clients("codex_apply_patch_edits_come_from_the_rollout_once")
    else {
        return;
    };
    let _turn = RUNS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let memory = Memory::new(clients);
    let patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: notes/quartzite.md\n+The quartzite bench needs a warm cache.\n*** End Patch\nEOF";
    let run = memory.run(
        "codex",
        "Write down what we learned about the quartzite bench",
        &[("FAKE_TOOL_COMMAND", patch)],
    );
    run.assert_finished();
    let rows: Vec<(String, String, String)> = memory
        .db()
        .prepare("SELECT kind, coalesce(tool, ''), files FROM events ORDER BY id")
        .and_then(|mut st| st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
        .expect("read events");
    let edits: Vec<usize> = (0..rows.len()).filter(|i| rows[*i].1 == "apply_patch").collect();
    assert_eq!(edits.len(), 1, "one edit, from the rollout: {rows:?}\n{}", run.report);
    assert_eq!(rows[edits[0]].2, r#"["notes/quartzite.md"]"#, "{rows:?}");
    let stop = rows.iter().position(|r| r.0 == "stop").expect("a stop");
    assert!(edits[0] < stop, "the edit is stored before the stop that ends its turn: {rows:?}");
    let cursors: i64 = memory
        .db()
        .query_row("SELECT count(*) FROM transcript_cursors", [], |r| r.get(0))
        .expect("cursors");
    assert_eq!(cursors, 1);
}

/// What `agent-memory install` writes is what the real agents run: with the harness's own hook
/// a no-op, each agent's session is recorded through the wiring install put in its own config,
/// and its first model request carries the briefing from the Codex session before it.
#[test]
fn installed_wiring_records_each_agent_and_briefs_it() {
    let Some((_turn, memory)) = after_codex("installed_wiring_records_each_agent_and_briefs_it")
    else {
        return;
    };
    let bin = Memory::bin();
    for (agent, name, var, real) in [
        ("claude", "claude-code", "CLAUDE_BIN", "claude-code/node_modules/.bin/claude"),
        ("codex", "codex", "CODEX_BIN", "codex/node_modules/.bin/codex"),
        ("gemini", "gemini", "GEMINI_BIN", "gemini/node_modules/.bin/gemini"),
    ] {
        // The agent's wrapper installs into the run's HOME (and CODEX_HOME) the harness just
        // made, then runs the real program.
        let real = memory.clients.join(real);
        let wrapper = memory.script(
            &format!("{agent}-installed"),
            &format!("'{bin}' install {name} >/dev/null\nexec '{}' \"$@\"\n", real.display()),
        );
        let prompt = format!("Continue the benchmark work in {agent}, then say done.");
        let run = memory.run_with(agent, "true", &prompt, &[(var, wrapper.as_str())]);
        run.assert_finished();
        assert_briefed_from_codex(&run, agent);
        let prompts: i64 = memory
            .db()
            .query_row(
                "SELECT count(*) FROM events WHERE agent = ?1 AND kind = 'prompt' AND body LIKE ?2",
                [name, &format!("%{prompt}%")],
                |r| r.get(0),
            )
            .expect("count prompts");
        assert_eq!(
            prompts, 1,
            "{agent}: the installed hooks recorded its prompt once\n{}",
            run.report
        );
        // The sign at session start is the person's, not the model's: Claude Code and Gemini
        // CLI took the answer that carries it (the briefing above reached the model), and the
        // line itself never reaches the model.
        let mut sent = Vec::new();
        for body in run.log.iter().filter_map(|line| line.get("body")) {
            strings(body, &mut sent);
        }
        assert!(
            !sent.iter().any(|t| t.contains("agent-memory: ") && t.contains(" tokens)")),
            "{agent}: the sign reached the model\n{}",
            run.report
        );
        // The skill install wrote reaches the model of the agents that read skills.
        if matches!(agent, "claude" | "codex") {
            let mut texts = Vec::new();
            for body in run.log.iter().filter_map(|line| line.get("body")) {
                strings(body, &mut texts);
            }
            assert!(
                texts.iter().any(|t| t.contains(SKILL_DESCRIPTION)),
                "{agent}: the installed skill never reached the model\n{}",
                run.report
            );
        }
    }
}

/// The skills `install` writes beside the search skill reach the model of the real Claude Code,
/// and the commands they teach work inside it: the project's story week by week, and a mode
/// written, then checked with `mode show`.
#[test]
fn the_report_and_mode_skills_reach_the_model_and_their_commands_work() {
    let test = "the_report_and_mode_skills_reach_the_model_and_their_commands_work";
    let Some((_turn, memory)) = after_codex(test) else { return };
    let bin = Memory::bin();
    let real = memory.clients.join("claude-code/node_modules/.bin/claude");
    let wrapper = memory.script(
        "claude-installed",
        &format!("'{bin}' install claude-code >/dev/null\nexec '{}' \"$@\"\n", real.display()),
    );
    let modes = memory.store().join("modes");
    let mode = "description = { en = \"On-call logs: incidents, causes and fixes\" }\n\
        role = { en = \"You are the memory of an on-call rotation.\" }\n\
        record = { en = [\"Incidents\", \"Root causes\"] }\n\
        skip = { en = [\"Routine alerts\"] }\n\n\
        [[types]]\nkey = \"incident\"\nemoji = \"🚨\"\nlabel = { en = \"Incident\" }\n\
        description = { en = \"Something broke for users\" }\n\n\
        [[concepts]]\nkey = \"root_cause\"\nemoji = \"🔍\"\nlabel = { en = \"Root cause\" }\n\
        description = { en = \"Why it broke\" }\n";
    let script = serde_json::json!([
        { "shell": format!("'{bin}' report --project . --since 12w") },
        { "shell": format!(
            "mkdir -p '{0}' && cat > '{0}/oncall.toml' <<'MODE'\n{mode}MODE",
            modes.display()
        ) },
        { "shell": format!("'{bin}' mode show oncall") },
    ])
    .to_string();
    let run = memory.run_with(
        "claude",
        "true",
        "Write this project's story week by week, then make me a mode for on-call logs.",
        &[("CLAUDE_BIN", wrapper.as_str()), ("FAKE_SCRIPT", script.as_str())],
    );
    run.assert_finished();
    let mut texts = Vec::new();
    for body in run.log.iter().filter_map(|line| line.get("body")) {
        strings(body, &mut texts);
    }
    let reached = |what: &str| texts.iter().any(|t| t.contains(what));
    for description in [REPORT_SKILL_DESCRIPTION, MODE_SKILL_DESCRIPTION] {
        assert!(
            reached(description),
            "the skill never reached the model: {description}\n{}",
            run.report
        );
    }
    // What the commands printed reached the model: the report of the project the Codex
    // session worked in (the agent's own folder), and the mode.
    assert!(
        reached("week by week (since 12w)"),
        "the report never reached the model\n{}",
        run.report
    );
    // `mode show` prints the mode's name and language, which the file does not hold.
    assert!(
        reached("mode      oncall (en)"),
        "`mode show` never reached the model\n{}",
        run.report
    );
    let shown = memory.cmd().args(["mode", "show", "oncall"]).output().expect("mode show");
    assert!(shown.status.success(), "{}", agent_memory_testkit::describe(&shown));
    assert!(String::from_utf8_lossy(&shown.stdout).contains("root_cause"));
}

/// The start of the descriptions of the report and mode skills (install/skill-report.md and
/// install/skill-mode.md).
const REPORT_SKILL_DESCRIPTION: &str = "Write the story of a project from agent-memory";
const MODE_SKILL_DESCRIPTION: &str = "Create an agent-memory mode";

/// The start of the description of the skill `install` writes (install/skill.md).
const SKILL_DESCRIPTION: &str = "Search the shared memory of earlier coding sessions";

/// The Claude Code plugin, added from the local marketplace `agent-memory plugin` writes, with
/// Claude Code's own `plugin marketplace add` and `plugin install`: its hooks record the session
/// and brief it, and its MCP server answers the model's search.
#[test]
fn the_claude_code_plugin_records_briefs_and_serves_search() {
    let Some((_turn, memory)) =
        after_codex("the_claude_code_plugin_records_briefs_and_serves_search")
    else {
        return;
    };
    let market = memory.dir.path().join("market");
    let out = memory
        .cmd()
        .args(["plugin", "claude-code", "--dir"])
        .arg(&market)
        .output()
        .expect("run plugin");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let real = memory.clients.join("claude-code/node_modules/.bin/claude");
    let tool = "mcp__plugin_agent-memory_agent-memory__search";
    let wrapper = memory.script(
        "claude-plugin",
        &format!(
            "if [ \"$1\" = -p ]; then\n  '{real}' plugin marketplace add '{market}' >/dev/null\n  \
             '{real}' plugin install agent-memory@agent-memory >/dev/null\n  \
             exec '{real}' \"$@\" --allowedTools {tool}\nfi\nexec '{real}' \"$@\"\n",
            real = real.display(),
            market = market.display()
        ),
    );
    let env = [
        ("CLAUDE_BIN", wrapper.as_str()),
        ("FAKE_SCRIPT", "mcp"),
        ("FAKE_MCP_TOOL", "agent-memory__search"),
        ("FAKE_MCP_QUERY", "quartzite benchmark"),
    ];
    let prompt = "Look up the quartzite benchmark in memory, then say done.";
    let run = memory.run_with("claude", "true", prompt, &env);
    run.assert_finished();
    assert_briefed_from_codex(&run, "claude");
    assert_search_reached_the_model(&run, "claude", |name| name == tool);
    let stored: i64 = memory
        .db()
        .query_row(
            "SELECT count(*) FROM events WHERE agent = 'claude-code' AND kind IN ('prompt', 'tool_use', 'stop')",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert!(stored >= 3, "the plugin's hooks recorded prompt, tool use and stop:\n{}", run.report);
}

/// The agent's first model turn carries context from the Codex session.
#[track_caller]
pub(crate) fn assert_briefed_from_codex(run: &Run, agent: &str) {
    let turns = run.turns();
    let first = turns.first().unwrap_or_else(|| panic!("no model turn:\n{}", run.report));
    let found = contexts(first);
    assert!(
        found.iter().any(|c| c.contains("codex") && c.contains("quartzite tokenizer")),
        "{agent}'s first model request carries no context from the Codex session; \
         context blocks: {found:#?}\n{}",
        run.report
    );
}

/// The model called our search tool (`is_search` tells its name as this agent shows it) and the
/// request after that call carries a result line from the Codex session.
#[track_caller]
pub(crate) fn assert_search_reached_the_model(
    run: &Run,
    agent: &str,
    is_search: impl Fn(&str) -> bool,
) {
    // The request that follows the fake model's call of our search tool.
    let called = run.log.iter().position(|line| {
        line.pointer("/reply/tool").and_then(Value::as_str).is_some_and(&is_search)
    });
    let called =
        called.unwrap_or_else(|| panic!("{agent}: the model never called search:\n{}", run.report));
    let follow_up = run.log[called..]
        .iter()
        .find_map(|line| line.get("body"))
        .unwrap_or_else(|| panic!("{agent}: no request after the tool call:\n{}", run.report));
    let mut texts = Vec::new();
    strings(follow_up, &mut texts);
    let hit = search_hit(&texts, "codex", "quartzite");
    assert!(
        hit.is_some(),
        "{agent}: no search result line from the Codex session reached the model:\n{}\n{}",
        texts
            .iter()
            .filter(|t| t.contains("results for") || t.contains("quartzite"))
            .cloned()
            .collect::<Vec<_>>()
            .join("\n---\n"),
        run.report
    );
}
