//! What the next agent learns from a real session: recorded sessions of the corpus replay
//! through the real binary, `work` distils them offline, and what is distilled and briefed
//! carries the lesson (the cause and the fix, from the agent's closing answer, with the file)
//! and never says what did not happen: a failing run is never reported as passed, an unresolved
//! failure never as fixed, and the next steps never repeat the request. The scores over the
//! whole corpus are the quality benchmark's; these pin the rules on sessions that exercise them.

use agent_memory_testkit::sessions::{self, Places, Scenario};
use agent_memory_testkit::{TestHome, describe};

use crate::home;

/// Keys of `show --json` items that are bookkeeping, not memory.
const SHOW_SKIP: &[&str] = &["session", "agent", "project", "mode", "distiller", "kind"];

/// What one session left behind for the next agent.
struct Learned {
    /// Every observation and summary, as `show --json` prints them.
    distilled: String,
    next_steps: Vec<String>,
    /// What a different agent's session start in the same project is told.
    briefing: String,
}

fn learn(name: &str) -> (Scenario, Learned) {
    let home = home();
    let scenario = sessions::load(name);
    let places = Places {
        home: home.user_home().to_path_buf(),
        project: home.user_home().join("work/proj"),
        salt: 0,
    };
    sessions::replay(&home, &scenario, &places);
    let work = home.json(&["work"]);
    let n = |key: &str| work[key].as_u64().unwrap_or(0);
    let ids: Vec<String> = (1..=n("observations"))
        .map(|i| format!("o{i}"))
        .chain((1..=n("summaries")).map(|i| format!("s{i}")))
        .collect();
    let mut args = vec!["show"];
    args.extend(ids.iter().map(String::as_str));
    let items = home.json(&args);
    let items = items.as_array().cloned().unwrap_or_default();
    let distilled = items
        .iter()
        .map(|i| sessions::json_text(&i["item"], SHOW_SKIP))
        .collect::<Vec<_>>()
        .join("\n");
    let next_steps = items
        .iter()
        .flat_map(|i| i["item"]["next_steps"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect();
    let briefing = briefing(&home, &places);
    (scenario, Learned { distilled, next_steps, briefing })
}

/// The context Claude Code's `SessionStart` hook hands over in the same project.
fn briefing(home: &TestHome, places: &Places) -> String {
    let payload = serde_json::json!({
        "session_id": "next-session",
        "transcript_path": places.home.join(".claude/next.jsonl"),
        "cwd": places.project,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let out = home.hook("claude-code", "SessionStart", payload.to_string().as_bytes());
    assert!(out.status.success(), "{}", describe(&out));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned()
}

/// No channel says what did not happen.
fn assert_no_false_claims(scenario: &Scenario, learned: &Learned) {
    for (channel, text) in [("distilled", &learned.distilled), ("briefing", &learned.briefing)] {
        let passes = sessions::false_passes(text, &scenario.claims);
        assert!(
            passes.is_empty(),
            "{}: {channel} reports a failing run passed: {passes:?}\n{text}",
            scenario.name
        );
        let fixes = sessions::false_fixes(text, &scenario.claims);
        assert!(
            fixes.is_empty(),
            "{}: {channel} reports an unresolved failure fixed: {fixes:?}\n{text}",
            scenario.name
        );
    }
    let mut steps = learned.next_steps.clone();
    steps.extend(sessions::briefing_next_steps(&learned.briefing));
    let repeated = sessions::repeated_requests(&steps, &scenario.claims);
    assert!(repeated.is_empty(), "{}: next steps repeat the request: {repeated:?}", scenario.name);
}

/// The facts of `ids` are all in `text`.
fn assert_facts(scenario: &Scenario, channel: &str, text: &str, ids: &[&str]) {
    let found: Vec<&str> =
        sessions::facts_found(text, &scenario.facts).iter().map(|f| f.id.as_str()).collect();
    for id in ids {
        assert!(
            found.contains(id),
            "{}: the {channel} lacks the fact {id:?}:\n{text}",
            scenario.name
        );
    }
}

/// Codex fixes a test through `sed -i` in a shell command; the failing run's exit code is
/// masked by `; echo done`. The fix is a bug fix with the cause from the closing answer, and
/// the masked run is never reported as passed.
#[test]
fn a_shell_fix_behind_a_masked_exit_code_is_a_bugfix_with_its_cause() {
    let (scenario, learned) = learn("codex-pricing-sed-masked");
    assert_no_false_claims(&scenario, &learned);
    assert_facts(&scenario, "distilled text", &learned.distilled, &["cause", "fix", "error"]);
    assert_facts(&scenario, "briefing", &learned.briefing, &["cause", "fix"]);
    assert!(learned.distilled.contains("pricing.py"), "{}", learned.distilled);
}

/// A crash left unresolved: what is remembered says it is not fixed, and why it fails.
#[test]
fn an_unresolved_failure_stays_unresolved() {
    let (scenario, learned) = learn("claude-ring-unresolved");
    assert_no_false_claims(&scenario, &learned);
    assert_facts(&scenario, "briefing", &learned.briefing, &["error", "file", "status"]);
}

/// The user asked why, and the agent explained without changing anything: the explanation is
/// learned, and the failing run is not turned into a next step that repeats the question.
#[test]
fn an_explanation_is_learned_and_the_question_not_repeated() {
    let (scenario, learned) = learn("copilot-esm-gotcha-discovery");
    assert_no_false_claims(&scenario, &learned);
    assert_facts(&scenario, "briefing", &learned.briefing, &["error", "cause", "gotcha"]);
}

/// A masked test run, then the same command passing after a heredoc rewrite: the pass is
/// stated with the failure it followed, and the file written by the shell is a change.
#[test]
fn a_rerun_that_passed_is_told_apart_from_the_run_that_failed() {
    let (scenario, learned) = learn("hermes-bmi-sed-masked");
    assert_no_false_claims(&scenario, &learned);
    assert_facts(&scenario, "briefing", &learned.briefing, &["cause", "fix"]);
    assert!(learned.distilled.contains("health.py"), "{}", learned.distilled);
}

/// A decision the agent concluded, with its reason, in its closing answer.
#[test]
fn a_decision_the_agent_concluded_keeps_its_reason() {
    let (scenario, learned) = learn("codex-ratelimit-decision");
    assert_no_false_claims(&scenario, &learned);
    assert_facts(&scenario, "briefing", &learned.briefing, &["decision", "reason"]);
}
