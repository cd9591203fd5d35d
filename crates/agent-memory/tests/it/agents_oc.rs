//! OpenCode and Copilot CLI, wired by `agent-memory install` itself: each real program (at the
//! version pinned in the testkit's `harness/pins.txt`) is started through a small wrapper that
//! first runs `agent-memory install <agent>` in the session's fresh HOME, so the agent loads
//! exactly the files install wrote: OpenCode our plugin (run by OpenCode's own runtime) and our
//! MCP entry in the `opencode.json` the harness made, Copilot CLI our user-level hooks file and
//! `mcp-config.json`. The harness's own hooks are a no-op (`true`), and OpenCode gets no plugin
//! from it.
//!
//! Each test follows a Codex session (see `agents.rs`): one session of the agent must carry the
//! Codex session's facts in its first model request (the session-start briefing), land its
//! prompt, tool use and stop in the store as that agent's events, and call agent-memory's
//! `search` over MCP with the result reaching the model.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::agents::{
    FINAL, Memory, after_codex, assert_briefed_from_codex, assert_search_reached_the_model,
    require, strip_settings,
};

const OPENCODE: &str = "opencode/node_modules/.bin/opencode";
const COPILOT: &str = "copilot/node_modules/.bin/copilot";

const PROMPT: &str = "Pick up where the last session left off, then say done.";

/// A shell command, then our search tool, in the names the two agents offer them under
/// (steps naming a tool the agent does not offer are skipped).
fn script(command: &str) -> String {
    serde_json::json!([
        {"tool": "bash", "args": {"command": command, "description": "Print a marker"}},
        {"tool": "agent-memory_search", "args": {"query": "quartzite benchmark"}},
        {"tool": "agent-memory-search", "args": {"query": "quartzite benchmark"}},
    ])
    .to_string()
}

/// A stand-in for `real` that runs `agent-memory install <agent>` (into the HOME the harness
/// gives it, logged to `install-<agent>.out` beside the run) before handing over to `real`.
fn installing_wrapper(memory: &Memory, agent: &str, real: &Path) -> PathBuf {
    let wrapper = memory.dir.path().join(format!("{agent}-installing"));
    let log = memory.dir.path().join(format!("install-{agent}.out"));
    let text = format!(
        // Its warning that a build's output is wired goes apart: the log holds what it wired.
        "#!/bin/sh\n'{bin}' install {agent} > '{log}' 2> '{log}.stderr' || exit 97\nexec '{real}' \"$@\"\n",
        bin = Memory::bin(),
        log = log.display(),
        real = real.display(),
    );
    write_executable(&wrapper, &text);
    wrapper
}

/// The events of `agent` in the store: (session, kind, body).
fn events(memory: &Memory, agent: &str) -> Vec<(i64, String, String)> {
    memory
        .db()
        .prepare("SELECT session_id, kind, body FROM events WHERE agent = ?1 ORDER BY id")
        .and_then(|mut st| {
            st.query_map([agent], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect()
        })
        .expect("read events")
}

/// One session of `agent` after the Codex one, with agent-memory installed by the wrapper.
fn briefed_captured_and_searching(test: &str, agent: &'static str, bin: &str, bin_env: &str) {
    if require(test, &[bin]).is_none() {
        return;
    }
    let Some((_turn, memory)) = after_codex(test) else { return };
    let wrapper = installing_wrapper(&memory, agent, &memory.clients.join(bin));
    let wrapper = wrapper.to_string_lossy().into_owned();
    let store = memory.store();
    let store = store.to_string_lossy();
    let command = format!("echo {agent}-bench-ok");
    let script = script(&command);
    let run = memory.run_with(
        agent,
        "true",
        PROMPT,
        &[
            (bin_env, wrapper.as_str()),
            ("AGENT_MEMORY_HOME", &store),
            ("AGENT_MEMORY_DISTIL__AUTO_WORK", "false"),
            ("FAKE_SCRIPT", script.as_str()),
        ],
    );
    let installed = std::fs::read_to_string(memory.dir.path().join(format!("install-{agent}.out")))
        .unwrap_or_default();
    assert!(
        installed.lines().filter(|l| l.starts_with(agent)).count() == 2
            && installed.contains(&format!("wired 1 agent ({agent})")),
        "install did not wire {agent}:\n{installed}\n{}",
        run.report
    );
    run.assert_finished();

    // The session-start briefing: nothing in the prompt names the Codex session.
    assert_briefed_from_codex(&run, agent);

    let events = events(&memory, agent);
    let has =
        |kind: &str, text: &str| events.iter().any(|(_, k, body)| k == kind && body.contains(text));
    assert!(has("session_start", ""), "no {agent} session start: {events:?}\n{}", run.report);
    assert!(has("prompt", "Pick up where"), "no {agent} prompt: {events:?}\n{}", run.report);
    assert!(has("tool_use", &command), "no {agent} tool use: {events:?}\n{}", run.report);
    // OpenCode's plugin sends the turn's last answer with its end; Copilot's `agentStop` has none.
    let last_answer = if agent == "opencode" { FINAL } else { "" };
    assert!(has("stop", last_answer), "no {agent} stop: {events:?}\n{}", run.report);
    assert!(
        events.iter().all(|(session, _, _)| *session == events[0].0),
        "one {agent} session: {events:?}"
    );

    assert_search_reached_the_model(&run, agent, |tool| {
        tool == "agent-memory_search" || tool == "agent-memory-search"
    });
}

#[test]
fn opencode_with_the_installed_plugin_is_briefed_captured_and_searches() {
    briefed_captured_and_searching(
        "opencode_with_the_installed_plugin_is_briefed_captured_and_searches",
        "opencode",
        OPENCODE,
        "OPENCODE_BIN",
    );
}

#[test]
fn copilot_with_the_installed_hooks_is_briefed_captured_and_searches() {
    briefed_captured_and_searching(
        "copilot_with_the_installed_hooks_is_briefed_captured_and_searches",
        "copilot",
        COPILOT,
        "COPILOT_BIN",
    );
}

/// Drives a plugin file the way OpenCode calls it, hook by hook, with the recorded payloads and
/// some that are not (`undefined`, `null`): `BUN_BE_BUN=1` makes the OpenCode binary its own
/// Bun. Prints one JSON line per plugin: what threw (nothing may), and the system prompt after
/// the transform.
const DRIVER: &str = r#"
import { readFileSync } from "node:fs"
const samples = process.env.SAMPLES
const load = (name) => JSON.parse(readFileSync(`${samples}/${name}`, "utf8"))
const created = load("event.session.created.json").input
const idle = load("event.session.idle.json").input
const message = load("chat.message.json")
const tool = load("tool.execute.after.json")
const session = created.properties.sessionID

async function drive(file) {
  const threw = []
  const guard = async (name, call) => { try { await call() } catch (e) { threw.push(`${name}: ${e}`) } }
  let hooks = {}
  await guard("init", async () => { hooks = await (await import(file)).AgentMemory({ directory: process.cwd() }) })
  const system = ["base"]
  await guard("event", () => hooks.event({ event: created }))
  await guard("event (nothing)", () => hooks.event(undefined))
  await guard("chat.message", () => hooks["chat.message"](message.input, message.output))
  await guard("chat.message (null)", () => hooks["chat.message"](null, null))
  await guard("tool.execute.after", () => hooks["tool.execute.after"](tool.input, tool.output))
  await guard("text.complete", () => hooks["experimental.text.complete"]({ sessionID: session }, { text: "FAKE_FINAL_ANSWER done" }))
  await guard("system.transform", () => hooks["experimental.chat.system.transform"]({ sessionID: session }, { system }))
  await guard("system.transform (nothing)", () => hooks["experimental.chat.system.transform"](undefined, undefined))
  await guard("event idle", () => hooks.event({ event: idle }))
  await guard("dispose", () => hooks.dispose())
  return { file, threw, system }
}
const results = await Promise.all(process.argv.slice(2).map(drive))
for (const r of results) console.log(JSON.stringify(r))
"#;

#[test]
fn the_installed_plugin_records_through_opencodes_runtime_and_never_fails_opencode() {
    let test = "the_installed_plugin_records_through_opencodes_runtime_and_never_fails_opencode";
    let Some(clients) = require(test, &[OPENCODE]) else { return };
    let memory = Memory::new(clients);
    let dir = memory.dir.path();
    let home = dir.join("home");
    let out = memory
        .cmd()
        .args(["install", "opencode"])
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .expect("install");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let installed = home.join(".config/opencode/plugins/agent-memory.js");
    let plugin = std::fs::read_to_string(&installed).expect("the installed plugin");
    let bin = std::fs::canonicalize(Memory::bin()).expect("the binary");
    let bin_line = format!("const BIN = {}", serde_json::json!(bin));
    assert!(plugin.contains(&bin_line), "{plugin}");

    // The same plugin with agent-memory gone, failing, or hanging (its pid noted, to see that
    // the plugin killed it).
    let pids = dir.join("pids");
    let broken = [
        ("missing", None),
        ("failing", Some("#!/bin/sh\ncat > /dev/null\necho 'not JSON {'\nexit 1\n".to_owned())),
        ("wrong-shape", Some("#!/bin/sh\ncat > /dev/null\necho '{\"context\": 42}'\n".to_owned())),
        // Hangs where the plugin waits for it (the briefing) and where only the exit does.
        (
            "hanging",
            Some(format!(
                "#!/bin/sh\ncase \"$5\" in session.created|tool.execute.after) echo $$ >> '{}'; exec sleep 60;; esac\ncat > /dev/null\n",
                pids.display()
            )),
        ),
    ];
    let mut files = vec![installed.clone()];
    for (name, script) in broken {
        let bin = dir.join(format!("agent-memory-{name}"));
        if let Some(script) = script {
            write_executable(&bin, &script);
        }
        let file = dir.join(format!("plugin-{name}.js"));
        let text = plugin.replace(&bin_line, &format!("const BIN = {}", serde_json::json!(bin)));
        write_executable(&file, &text);
        files.push(file);
    }
    let driver = dir.join("driver.mjs");
    write_executable(&driver, DRIVER);
    let project = dir.join("proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let mut bun = Command::new(memory.clients.join(OPENCODE));
    strip_settings(&mut bun);
    let out = bun
        .arg(&driver)
        .args(&files)
        .env("BUN_BE_BUN", "1")
        .env("SAMPLES", agent_memory_testkit::fixtures_dir().join("agents/opencode"))
        .env("AGENT_MEMORY_HOME", memory.store())
        .env("AGENT_MEMORY_DISTIL__AUTO_WORK", "false")
        .current_dir(&project)
        .output()
        .expect("run the driver");
    let said = agent_memory_testkit::describe(&out);
    assert!(out.status.success(), "{said}");
    let results: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    assert_eq!(results.len(), files.len(), "{said}");
    for result in &results {
        assert_eq!(result["threw"], serde_json::json!([]), "{said}");
        // An empty store has no briefing; a broken agent-memory hands over nothing at all.
        assert_eq!(result["system"], serde_json::json!(["base"]), "{said}");
    }

    // The real binary stored the moments, under the directory OpenCode gave the plugin.
    let kinds: Vec<(String, String)> = memory
        .db()
        .prepare("SELECT kind, cwd FROM events WHERE agent = 'opencode' ORDER BY id")
        .and_then(|mut st| st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .expect("read events");
    let project = std::fs::canonicalize(&project).expect("project");
    assert_eq!(
        kinds.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["session_start", "prompt", "tool_use", "stop"],
        "{said}"
    );
    assert!(kinds.iter().all(|(_, cwd)| Path::new(cwd) == project), "{kinds:?}");
    let stop: String = memory
        .db()
        .query_row("SELECT body FROM events WHERE kind = 'stop'", [], |r| r.get(0))
        .expect("stop");
    assert!(stop.contains("FAKE_FINAL_ANSWER done"), "the last answer goes with the stop: {stop}");

    // The hanging hook runs were killed, not left behind.
    let pids = std::fs::read_to_string(&pids).unwrap_or_default();
    assert!(!pids.is_empty(), "the hanging stand-in never ran:\n{said}");
    for pid in pids.split_whitespace() {
        let alive = std::process::Command::new("kill").args(["-0", pid]).output().expect("kill -0");
        assert!(!alive.status.success(), "hook run {pid} is still running");
    }
}

fn write_executable(path: &Path, text: &str) {
    std::io::Write::write_all(&mut std::fs::File::create(path).expect("create"), text.as_bytes())
        .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
