//! What people tell their agents becomes memory, through the real binary: a preference told to
//! Hermes in its own workspace reaches Claude Code in a project; a decision reversed in another
//! agent replaces the old one for every agent, and forgetting the new one brings the old back;
//! a general assistant outside any project is recalled what was done in one, with its name; a
//! request to act is never a decision; an agent's own `remember` waits for review.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::recall_inject::{sample, with};
use crate::{assert_quiet_success, home, payload};
use agent_memory_testkit::{TestHome, describe};

/// A folder that is a git repository, as an agent's project is.
pub(crate) fn repository(home: &TestHome, name: &str) -> PathBuf {
    let dir = home.user_home().join("work").join(name);
    std::fs::create_dir_all(&dir).expect("project dir");
    let out = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .output()
        .expect("git init");
    assert!(out.status.success(), "{}", describe(&out));
    dir
}

/// A folder that is no project: a general assistant's workspace.
fn workspace(home: &TestHome) -> PathBuf {
    let dir = home.user_home().join("assistant");
    std::fs::create_dir_all(&dir).expect("workspace");
    dir
}

fn text(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}

/// The context a hook answered with, for any agent's answer shape.
fn context(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", describe(out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    [
        &answer["hookSpecificOutput"]["additionalContext"],
        &answer["context"],
        &answer["additionalContext"],
    ]
    .iter()
    .filter_map(|v| v.as_str())
    .collect::<Vec<_>>()
    .join("\n")
}

/// One Claude Code turn: the prompt, then the stop with the agent's answer.
pub(crate) fn claude_turn(home: &TestHome, session: &str, cwd: &Path, prompt: &str, answer: &str) {
    let cwd = text(cwd);
    let start = payload(session, "SessionStart", &cwd, json!({ "source": "startup" }));
    home.hook("claude-code", "SessionStart", &start);
    let said = payload(session, "UserPromptSubmit", &cwd, json!({ "prompt": prompt }));
    home.hook("claude-code", "UserPromptSubmit", &said);
    let stop = payload(session, "Stop", &cwd, json!({ "last_assistant_message": answer }));
    assert_quiet_success(&home.hook("claude-code", "Stop", &stop));
}

/// One Codex turn, as its hooks send it.
fn codex_turn(home: &TestHome, session: &str, cwd: &Path, prompt: &str, answer: &str) {
    let fields = |extra: Value| {
        let mut fields = json!({ "session_id": session, "cwd": text(cwd) });
        if let (Some(fields), Value::Object(extra)) = (fields.as_object_mut(), extra) {
            fields.extend(extra);
        }
        fields
    };
    home.hook("codex", "SessionStart", &with(sample("codex", "SessionStart"), fields(json!({}))));
    let said = with(sample("codex", "UserPromptSubmit"), fields(json!({ "prompt": prompt })));
    home.hook("codex", "UserPromptSubmit", &said);
    let stop = with(sample("codex", "Stop"), fields(json!({ "last_assistant_message": answer })));
    assert_quiet_success(&home.hook("codex", "Stop", &stop));
}

/// One Hermes turn in its shell hooks: what its prompt hook handed over.
fn hermes_turn(home: &TestHome, session: &str, cwd: &Path, message: &str) -> String {
    let at = |event: &str, extra: Value| {
        with(
            sample("hermes/shell", event),
            json!({ "session_id": session, "cwd": text(cwd), "extra": extra }),
        )
    };
    home.hook("hermes", "on_session_start", &at("on_session_start", json!({})));
    let out = home.hook(
        "hermes",
        "pre_llm_call",
        &at("pre_llm_call", json!({ "user_message": message })),
    );
    let handed = context(&out);
    home.hook("hermes", "on_session_end", &at("on_session_end", json!({})));
    handed
}

/// What Claude Code is handed at a session start in `cwd`.
fn claude_briefing(home: &TestHome, session: &str, cwd: &Path) -> String {
    let start = payload(session, "SessionStart", &text(cwd), json!({ "source": "startup" }));
    context(&home.hook("claude-code", "SessionStart", &start))
}

pub(crate) fn memories(home: &TestHome) -> Vec<Value> {
    home.json(&["memories", "--all"]).as_array().cloned().unwrap_or_default()
}

pub(crate) fn by_text<'m>(memories: &'m [Value], words: &str) -> &'m Value {
    memories
        .iter()
        .find(|m| m["text"].as_str().is_some_and(|t| t.contains(words)))
        .unwrap_or_else(|| panic!("no memory with {words:?} in {memories:#?}"))
}

#[test]
fn a_preference_told_to_hermes_in_its_workspace_reaches_claude_code_in_a_project() {
    let home = home();
    let assistant = workspace(&home);
    let project = repository(&home, "docs-site");
    hermes_turn(&home, "h-1", &assistant, "记住：我写文档喜欢口语化，短句，不要术语，不要套话。");
    home.ok(&["work"]);

    let all = memories(&home);
    let kept = by_text(&all, "口语化");
    assert_eq!(kept["tier"], "L3", "{kept}");
    assert_eq!(kept["kind"], "preference", "{kept}");
    assert_eq!(kept["status"], "active", "asking to remember is the person's approval: {kept}");
    assert_eq!(kept["origin"], "stated:hermes", "{kept}");
    let shown = home.ok(&["show", &format!("m{}", kept["id"])]);
    assert!(shown.contains("by you in hermes"), "{shown}");

    let briefing = claude_briefing(&home, "c-1", &project);
    assert!(briefing.contains("## 偏好") || briefing.contains("## Preferences"), "{briefing}");
    assert!(briefing.contains("我写文档喜欢口语化，短句，不要术语，不要套话"), "{briefing}");
}

#[test]
fn a_decision_reversed_in_another_agent_is_replaced_for_every_agent() {
    let home = home();
    let project = repository(&home, "jobs");
    claude_turn(
        &home,
        "c-1",
        &project,
        "We'll use Redis for the job queue because it is already deployed.",
        "Noted: the job queue will use Redis.",
    );
    home.ok(&["work"]);
    let first = memories(&home);
    let redis = by_text(&first, "Redis for the job queue");
    assert_eq!(redis["status"], "candidate", "a decision without a request to remember: {redis}");
    let redis_id = format!("m{}", redis["id"]);
    home.ok(&["review", "--approve", &redis_id]);

    codex_turn(
        &home,
        "x-1",
        &project,
        "我们不用 Redis 做队列了，改成 NATS，因为 Redis 故障切换时会丢任务。",
        "好的，队列改用 NATS。",
    );
    home.ok(&["work"]);
    let after = memories(&home);
    let nats = by_text(&after, "改成 NATS");
    assert_eq!(nats["status"], "active", "a change of kept memory is the person's own: {nats}");
    assert_eq!(nats["supersedes"], by_text(&after, "Redis for the job queue")["id"], "{nats}");
    let old = by_text(&after, "Redis for the job queue");
    assert_eq!(old["status"], "superseded", "{old}");
    assert_eq!(old["superseded_by"], nats["id"], "{old}");

    // A third agent starts with the new decision and not the old one.
    let gemini_start = with(
        sample("gemini", "SessionStart"),
        json!({ "session_id": "g-1", "cwd": text(&project) }),
    );
    let briefing = context(&home.hook("gemini", "SessionStart", &gemini_start));
    assert!(briefing.contains("改成 NATS"), "{briefing}");
    for line in briefing.lines().filter(|l| l.contains("Redis for the job queue")) {
        assert!(line.contains("replaced since"), "the old choice as current: {line}\n{briefing}");
    }
    assert!(!briefing.contains("## Decisions\n- We'll use Redis"), "{briefing}");

    // Undoing the change of mind undoes it whole.
    home.ok(&["forget", &format!("m{}", nats["id"])]);
    let undone = memories(&home);
    assert_eq!(by_text(&undone, "Redis for the job queue")["status"], "active");
}

#[test]
fn a_rule_to_remember_is_kept_and_a_request_is_no_decision() {
    let home = home();
    let project = repository(&home, "api");
    claude_turn(
        &home,
        "c-1",
        &project,
        "Fix the API route bug: /users/:id returns 404 for existing users.",
        "The route used the wrong parameter name; it reads `id` now.",
    );
    claude_turn(
        &home,
        "c-2",
        &project,
        "From now on, commit messages must be in English and in the imperative mood.",
        "Understood.",
    );
    home.ok(&["work"]);
    let all = memories(&home);
    // A rule stated without a request to remember waits for review, as a candidate.
    let rule = by_text(&all, "commit messages must be in English");
    assert_eq!((rule["tier"].as_str(), rule["status"].as_str()), (Some("L1"), Some("candidate")));
    claude_turn(
        &home,
        "c-3",
        &project,
        "Remember: always run `make gen` before the build, the build reads the generated protos.",
        "Noted.",
    );
    home.ok(&["work"]);
    let all = memories(&home);
    let kept = by_text(&all, "make gen");
    assert_eq!((kept["kind"].as_str(), kept["tier"].as_str()), (Some("convention"), Some("L2")));
    assert_eq!(kept["status"], "active", "{kept}");
    assert!(
        all.iter().all(|m| !m["text"].as_str().unwrap_or_default().contains("Fix the API route")),
        "a request became memory: {all:#?}"
    );
    let observations = home.json(&["search", "--kind", "observation", "route bug"]);
    let hits = observations["hits"].as_array().cloned().unwrap_or_default();
    for hit in hits {
        assert_ne!(hit["type"], "decision", "a request typed as a decision: {hit}");
    }
}

#[test]
fn a_general_assistant_outside_any_project_is_recalled_work_across_projects() {
    let home = home();
    let project = repository(&home, "payments");
    claude_turn(
        &home,
        "c-1",
        &project,
        "We decided to sign webhook payloads with HMAC-SHA256 because the provider requires it.",
        "Agreed: webhook payloads are signed with HMAC-SHA256.",
    );
    home.ok(&["work"]);
    let assistant = workspace(&home);
    let handed =
        hermes_turn(&home, "h-1", &assistant, "How do we sign the webhook payloads, HMAC-SHA256?");
    assert!(handed.contains("HMAC-SHA256"), "nothing recalled across projects: {handed}");
    assert!(handed.contains("[payments]"), "the item's project is named: {handed}");

    // Asked about the project by its name, in any language: what it did lately.
    for asked in
        ["What did we decide in the payments project yesterday?", "昨天在payments项目里定了什么？"]
    {
        let handed = hermes_turn(&home, "h-2", &assistant, asked);
        assert!(
            handed.contains("HMAC-SHA256") && handed.contains("[payments]"),
            "{asked}: {handed}"
        );
    }

    // Inside another project, isolation stays as it was.
    let other = repository(&home, "blog");
    let said = payload(
        "c-9",
        "UserPromptSubmit",
        &text(&other),
        json!({ "prompt": "How do we sign the webhook payloads, HMAC-SHA256?" }),
    );
    let inside = context(&home.hook("claude-code", "UserPromptSubmit", &said));
    assert!(!inside.contains("HMAC-SHA256"), "another project's work leaked: {inside}");
}

#[test]
fn a_rule_an_agent_writes_into_its_instructions_file_is_a_candidate() {
    let home = home();
    let project = repository(&home, "gen");
    let rules = project.join("CLAUDE.md");
    let edit = payload(
        "c-1",
        "PostToolUse",
        &text(&project),
        json!({
            "tool_name": "Edit",
            "tool_input": { "file_path": text(&rules), "old_string": "# Rules\n",
                            "new_string": "# Rules\n- Always run `make gen` before `cargo build`.\n" },
            "tool_response": { "filePath": text(&rules), "success": true },
        }),
    );
    assert_quiet_success(&home.hook("claude-code", "PostToolUse", &edit));
    home.ok(&["work"]);
    let all = memories(&home);
    let rule = by_text(&all, "make gen");
    assert_eq!(
        (rule["kind"].as_str(), rule["status"].as_str()),
        (Some("convention"), Some("candidate")),
        "{rule}"
    );
    assert_eq!(rule["origin"], "claude-code", "{rule}");
}
