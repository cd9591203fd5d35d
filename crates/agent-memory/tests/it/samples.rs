//! Every payload recorded from the real Claude Code, Codex CLI and Gemini CLI (the testkit's
//! fixtures, written by `scripts/record-fixtures`), through the real binary: each one becomes
//! the right stored event or is deliberately skipped.

use expect_test::expect;

use crate::{assert_quiet_success, db, home};

/// Files in a sample directory that are not a hook's stdin.
const NOT_HOOK_STDIN: &[&str] =
    &["model-request.injected.json", "output-json.sample.json", "notify.argv.json"];

/// Runs every sample of `agent_dir` as `agent` and renders what became of each, one line each.
fn replay(agent_dir: &str, agent: &str) -> String {
    let home = home();
    let mut lines = Vec::new();
    for sample in agent_memory_testkit::samples(agent_dir) {
        if NOT_HOOK_STDIN.contains(&sample.file.as_str()) {
            continue;
        }
        let out = home.hook(agent, &sample.event, &sample.bytes);
        assert_quiet_success(&out);
        let conn = db(&home);
        let (outcome, detail, uid): (String, Option<String>, String) = conn
            .query_row(
                "SELECT outcome, detail, event_uid FROM hook_runs ORDER BY id DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("every hook run is recorded");
        let line = match outcome.as_str() {
            "stored" => conn
                .query_row(
                    "SELECT e.kind, s.source_id, coalesce(e.tool, '-'), coalesce(e.tool_kind, '-'),
                            e.summary, e.files, p.name
                     FROM events e JOIN sessions s ON s.id = e.session_id
                     JOIN projects p ON p.id = e.project_id WHERE e.uid = ?1",
                    [&uid],
                    |r| {
                        Ok(format!(
                            "{} -> {} session={} tool={}/{} files={} project={} | {}",
                            sample.file,
                            r.get::<_, String>(0)?,
                            &r.get::<_, String>(1)?[..8],
                            r.get::<_, String>(2)?,
                            r.get::<_, String>(3)?,
                            r.get::<_, String>(5)?,
                            r.get::<_, String>(6)?,
                            r.get::<_, String>(4)?,
                        ))
                    },
                )
                .expect("the stored event"),
            other => format!("{} -> {other} ({})", sample.file, detail.unwrap_or_default()),
        };
        lines.push(line);
    }
    lines.join("\n") + "\n"
}

#[test]
fn claude_code_samples() {
    expect![[r#"
        InstructionsLoaded.json -> skipped (event not captured)
        MessageDisplay.json -> skipped (event not captured)
        PostToolBatch.json -> skipped (duplicate of PostToolUse)
        PostToolUse.json -> tool_use session=00000001 tool=Bash/shell files=[] project=proj | Bash: echo hello-from-tool
        PostToolUse.mcp.json -> tool_use session=00000005 tool=mcp__mem__mem_search/mcp files=[] project=proj | MCP mem/mem_search: query=answer
        PreToolUse.json -> skipped (pre-tool event: answered, not stored)
        PreToolUse.mcp.json -> skipped (pre-tool event: answered, not stored)
        SessionEnd.json -> session_end session=00000001 tool=-/- files=[] project=proj | Session ended (other)
        SessionStart.json -> session_start session=00000001 tool=-/- files=[] project=proj | Session started (startup)
        SessionStart.plugin.json -> session_start session=00000007 tool=-/- files=[] project=proj | Session started (startup)
        Stop.json -> stop session=00000001 tool=-/- files=[] project=proj | Turn ended: FAKE_FINAL_ANSWER: done.
        UserPromptSubmit.json -> prompt session=00000001 tool=-/- files=[] project=proj | Prompt: Run echo hello in the shell, then say done.
    "#]]
    .assert_eq(&replay("claude-code", "claude-code"));
}

#[test]
fn codex_samples() {
    expect![[r#"
        PostToolUse.json -> tool_use session=00000001 tool=Bash/shell files=[] project=proj | Bash: echo hello-from-tool
        PostToolUse.mcp.json -> tool_use session=00000004 tool=mcp__mem__mem_search/mcp files=[] project=proj | MCP mem/mem_search: query=answer
        PreModelRequest.json -> skipped (model-level event: not stored)
        PreToolUse.json -> skipped (pre-tool event: answered, not stored)
        PreToolUse.mcp.json -> skipped (pre-tool event: answered, not stored)
        SessionEnd.json -> session_end session=00000001 tool=-/- files=[] project=proj | Session ended (other)
        SessionStart.json -> session_start session=00000001 tool=-/- files=[] project=proj | Session started (startup)
        Stop.json -> stop session=00000001 tool=-/- files=[] project=proj | Turn ended: FAKE_FINAL_ANSWER: done.
        UserPromptSubmit.json -> prompt session=00000001 tool=-/- files=[] project=proj | Prompt: Run echo hello in the shell, then say done.
    "#]]
    .assert_eq(&replay("codex", "codex"));
}

#[test]
fn gemini_samples() {
    expect![[r#"
        AfterAgent.json -> stop session=00000001 tool=-/- files=[] project=proj | Turn ended: FAKE_FINAL_ANSWER: done.
        AfterModel.functionCall-chunk.json -> skipped (model-level event: not stored)
        AfterModel.json -> skipped (model-level event: not stored)
        AfterTool.json -> tool_use session=00000001 tool=run_shell_command/shell files=[] project=proj | run_shell_command: echo hello-from-tool
        AfterTool.mcp.json -> tool_use session=00000002 tool=mcp_mem_mem_search/mcp files=[] project=proj | MCP mem/mem_search: query=answer
        BeforeAgent.json -> prompt session=00000001 tool=-/- files=[] project=proj | Prompt: Run echo hello in the shell, then say done.
        BeforeModel.json -> skipped (model-level event: not stored)
        BeforeTool.json -> skipped (pre-tool event: answered, not stored)
        BeforeTool.mcp.json -> skipped (pre-tool event: answered, not stored)
        BeforeToolSelection.json -> skipped (model-level event: not stored)
        PreCompress.json -> skipped (model-level event: not stored)
        SessionEnd.json -> session_end session=00000001 tool=-/- files=[] project=proj | Session ended (exit)
        SessionStart.json -> session_start session=00000001 tool=-/- files=[] project=proj | Session started (startup)
        SessionStart.resume.json -> session_start session=00000001 tool=-/- files=[] project=proj | Session started (resume)
    "#]]
    .assert_eq(&replay("gemini", "gemini"));
}

#[test]
fn one_store_for_all_agents() {
    let home = home();
    for (dir, agent, event) in [
        ("claude-code", "claude-code", "UserPromptSubmit"),
        ("codex", "codex", "UserPromptSubmit"),
        ("gemini", "gemini", "BeforeAgent"),
    ] {
        let sample = agent_memory_testkit::samples(dir)
            .into_iter()
            .find(|s| s.event == event)
            .expect("sample exists");
        assert_quiet_success(&home.hook(agent, event, &sample.bytes));
    }
    let agents: Vec<String> = db(&home)
        .prepare("SELECT DISTINCT agent FROM events ORDER BY agent")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(agents, ["claude-code", "codex", "gemini"]);
}
