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

/// The closing answer of a turn, from a scenario's recording.
fn final_answer(name: &str, turn: usize) -> String {
    let path = sessions::sessions_dir().join(name).join("scenario.json");
    let text = std::fs::read_to_string(&path).expect("the scenario");
    let scenario: serde_json::Value = serde_json::from_str(&text).expect("a scenario");
    scenario["turns"][turn]["final"].as_str().expect("a closing answer").to_owned()
}

/// The stored stops of the store's sessions: row id, body and `last_message`.
fn stops(home: &agent_memory_testkit::TestHome) -> Vec<(i64, String, Option<String>)> {
    let db = crate::db(home);
    let mut stmt = db
        .prepare(
            "SELECT id, body, json_extract(payload, '$.last_message') FROM events
             WHERE kind = 'stop' ORDER BY id",
        )
        .expect("prepare");
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).expect("query");
    rows.collect::<rusqlite::Result<_>>().expect("rows")
}

/// Copilot CLI's stop hook hands over no closing answer; `work` reads it from the session log
/// the replay wrote, and the stored stop carries it, for `show` and search as much as for the
/// distillers.
#[test]
fn a_copilot_stop_gets_its_closing_answer_from_the_session_log() {
    let home = home();
    let scenario = sessions::load("copilot-matrix-edit");
    let answer = final_answer("copilot-matrix-edit", 0);
    sessions::replay(&home, &scenario, &places(&home, 1));
    let stored = stops(&home);
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!((stored[0].1.as_str(), stored[0].2.as_deref()), ("", None), "the hook's stop");

    let work = home.json(&["work"]);
    assert_eq!(work["sessions"], 1, "{work}");
    assert_eq!(work["summaries"], 1, "{work}");
    let stored = stops(&home);
    assert_eq!(stored[0].1, answer);
    assert_eq!(stored[0].2.as_deref(), Some(answer.as_str()));

    let shown = home.ok(&["show", &format!("e{}", stored[0].0)]);
    assert!(shown.contains("range(len(rows[0])) fixes it"), "{shown}");
    // A word only the closing answer holds finds the stop (and the prompt it answered beside
    // it, as its neighbour).
    let found = home.json(&["search", "--kind", "event", "iterated"]);
    let hits: Vec<(i64, &str)> = found["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|hit| (hit["id"].as_i64().unwrap_or(0), hit["type"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(hits.first(), Some(&(stored[0].0, "stop")), "{found}");
}

/// A stop whose session log is gone is distilled all the same, without an answer.
#[test]
fn a_copilot_stop_without_its_session_log_is_distilled_without_an_answer() {
    let home = home();
    let scenario = sessions::load("copilot-matrix-edit");
    let places = places(&home, 2);
    sessions::replay(&home, &scenario, &places);
    let logs = home.user_home().join(".copilot/session-state");
    std::fs::remove_dir_all(&logs).expect("remove the session logs");

    let work = home.json(&["work"]);
    assert_eq!(work["sessions"], 1, "{work}");
    assert_eq!(work["summaries"], 1, "{work}");
    assert!(work["problems"].as_array().is_none_or(Vec::is_empty), "{work}");
    let stored = stops(&home);
    assert_eq!((stored[0].1.as_str(), stored[0].2.as_deref()), ("", None), "{stored:?}");
}
