//! OpenCode and Copilot CLI, wired by `agent-memory install` itself: each real program (at the
//! harness's pinned version) is started through a small wrapper that first runs
//! `agent-memory install <agent>` in the session's fresh HOME, so the agent loads exactly the
//! files install wrote: OpenCode our plugin (run by OpenCode's own runtime) and our MCP entry in
//! the `opencode.json` the harness made, Copilot CLI our user-level hooks file and
//! `mcp-config.json`. The harness's own hooks are a no-op (`true`) and its OpenCode plugin only
//! logs.
//!
//! Each test follows a Codex session (see `agents.rs`): one session of the agent must carry the
//! Codex session's facts in its first model request (the session-start briefing), land its
//! prompt, tool use and stop in the store as that agent's events, and call agent-memory's
//! `search` over MCP with the result reaching the model.

use std::path::{Path, PathBuf};

use crate::agents::{
    Memory, after_codex, assert_briefed_from_codex, assert_search_reached_the_model, require,
};

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
        "#!/bin/sh\n'{bin}' install {agent} > '{log}' 2>&1 || exit 97\nexec '{real}' \"$@\"\n",
        bin = Memory::bin(),
        log = log.display(),
        real = real.display(),
    );
    std::io::Write::write_all(
        &mut std::fs::File::create(&wrapper).expect("create the wrapper"),
        text.as_bytes(),
    )
    .expect("write the wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
        .expect("make the wrapper executable");
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
            ("OC_BRIDGE", "0"),
            ("OC_MARKERS", "0"),
        ],
    );
    let installed = std::fs::read_to_string(memory.dir.path().join(format!("install-{agent}.out")))
        .unwrap_or_default();
    assert!(
        installed.lines().count() == 2 && installed.lines().all(|l| l.starts_with(agent)),
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
    assert!(
        events.iter().any(|(_, k, _)| k == "stop"),
        "no {agent} stop: {events:?}\n{}",
        run.report
    );
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
        "opencode/node_modules/.bin/opencode",
        "OPENCODE_BIN",
    );
}

#[test]
fn copilot_with_the_installed_hooks_is_briefed_captured_and_searches() {
    briefed_captured_and_searching(
        "copilot_with_the_installed_hooks_is_briefed_captured_and_searches",
        "copilot",
        "copilot/node_modules/.bin/copilot",
        "COPILOT_BIN",
    );
}
