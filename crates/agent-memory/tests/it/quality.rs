//! The memory-quality benchmark's plumbing, end to end: recorded sessions of the corpus
//! (`fixtures/sessions/`) replay through the real binary into a fresh home, `work` distils
//! them, and the scoring rules find what they should in hand-made text. The quality figures
//! themselves are the benchmark's (`benches/quality.rs`), never asserted here.

use agent_memory_testkit::sessions::{self, Claims, Fact, Places};

use crate::{count, home};

fn places(home: &agent_memory_testkit::TestHome, salt: u32) -> Places {
    Places {
        home: home.user_home().to_path_buf(),
        project: home.user_home().join("work/proj"),
        salt,
    }
}

/// Every scenario is complete: recorded, with facts the request alone does not all hold, a
/// follow-up, a query, and claims that name real runs.
#[test]
fn every_scenario_is_recorded_and_scorable() {
    let all = sessions::load_all();
    let names: Vec<String> = std::fs::read_dir(sessions::sessions_dir())
        .expect("the sessions folder")
        .flatten()
        .filter(|e| e.path().join("scenario.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(all.len(), names.len(), "every scenario has its hooks.jsonl");
    for s in &all {
        assert!(!s.hooks.is_empty() && !s.facts.is_empty(), "{}", s.name);
        assert!(!s.follow_up.is_empty() && !s.query.is_empty(), "{}", s.name);
        assert!(
            s.facts.iter().any(|f| !sessions::in_request(f, &s.claims)),
            "{}: every fact is already in the request",
            s.name
        );
        let recorded: String = s.hooks.iter().map(|h| h.payload.as_str()).collect();
        for run in &s.claims.failed_runs {
            let quoted = serde_json::to_string(run).expect("a string");
            assert!(
                recorded.contains(quoted.trim_matches('"')),
                "{}: the failed run {run:?} is not in the recording",
                s.name
            );
        }
    }
}

/// Two sessions of different agents, one of them Codex with a patch only its rollout holds,
/// replay into one store under their own ids, and `work` distils both.
#[test]
fn sessions_replay_into_one_store_and_distil() {
    let home = home();
    for (salt, name) in [(1, "codex-retry-apply-patch"), (2, "claude-webhook-edit")] {
        let scenario = sessions::load(name);
        let done = sessions::replay(&home, &scenario, &places(&home, salt));
        assert_eq!(done.hooks, scenario.hooks.len());
    }
    assert_eq!(count(&home, "SELECT count(DISTINCT session_id) FROM events"), 2);
    // The patch came from the rollout the replay wrote, keyed by its call id.
    assert_eq!(count(&home, "SELECT count(*) FROM events WHERE tool = 'apply_patch'"), 1);
    let work = home.json(&["work"]);
    assert_eq!(work["sessions"], 2, "{work}");
    assert_eq!(work["summaries"], 2, "{work}");
    let shown = home.json(&["show", "s1", "s2"]);
    let text = sessions::json_text(&shown, &[]);
    assert!(text.contains("test_retry") && text.contains("webhook"), "{text}");
}

#[test]
fn scoring_rules_on_hand_made_text() {
    let fact = |keywords: &[&str]| Fact {
        id: "f".to_owned(),
        keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
    };
    // Every keyword, case-insensitive, alternatives by `|`, CJK as substrings.
    assert!(sessions::fact_found(
        "Strip the SHA256= prefix, then lower-case",
        &fact(&["sha256=", "lower"])
    ));
    assert!(!sessions::fact_found("strip the prefix", &fact(&["sha256=", "lower"])));
    assert!(sessions::fact_found("10 meant 1000%", &fact(&["fraction|1000%"])));
    assert!(sessions::fact_found("原因：ttl_ms 是毫秒", &fact(&["毫秒"])));

    let claims = Claims {
        failed_runs: vec!["python3 -m unittest test_pricing 2>&1; echo done".to_owned()],
        never_passed: vec!["ring".to_owned()],
        unresolved: true,
        requests: vec![
            "The discount test fails, please fix apply_discount in pricing.py.".to_owned(),
        ],
    };
    let summary = "`python3 -m unittest test_pricing 2>&1; echo done` passed\n\
                   `python3 -m unittest test_pricing 2>&1; echo done && git diff` passed\n\
                   The ring test passes. The ring test still fails.";
    assert_eq!(
        sessions::false_passes(summary, &claims),
        ["`python3 -m unittest test_pricing 2>&1; echo done` passed", "The ring test passes."]
    );
    assert_eq!(
        sessions::false_fixes(
            "[bugfix] Fixed ring.rs\nNot fixed yet: ring.rs\n已修复。仍未修复。",
            &claims
        ),
        ["[bugfix] Fixed ring.rs", "已修复。"]
    );
    let steps = [
        "Fix apply_discount in pricing.py (the discount test fails)".to_owned(),
        "Add a test for 0%".to_owned(),
    ];
    assert_eq!(sessions::repeated_requests(&steps, &claims), [steps[0].clone()]);
    assert_eq!(
        sessions::briefing_next_steps("## Last\n- Next: add a test\nnext door"),
        ["Next: add a test", "next door"]
    );

    let scenario = |name: &str, subject: &str| {
        let mut s = sessions::load("codex-retry-apply-patch");
        s.name = name.to_owned();
        s.subjects = vec![subject.to_owned(), "shared.py".to_owned()];
        s
    };
    let own = sessions::own_subjects(&[
        scenario("a", "ids.py"),
        scenario("b", "stack.py"),
        scenario("c", "x/shared.py"),
    ]);
    assert_eq!(sessions::scenarios_named("changed uuids.py and /p/stack.py", &own), ["b"]);
    assert_eq!(sessions::scenarios_named("ids.py, stack.py and shared.py", &own), ["a", "b"]);
}
