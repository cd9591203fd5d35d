//! `agent-memory search`: BM25 ranking across agents, CJK two-character words, mixed
//! Chinese/English text, filters and JSON output.

use crate::{assert_quiet_success, home, payload};
use agent_memory_testkit::TestHome;

fn prompt(home: &TestHome, agent: &str, session: &str, cwd: &str, text: &str) {
    let body = payload(session, "UserPromptSubmit", cwd, serde_json::json!({ "prompt": text }));
    let event = if agent == "gemini" { "BeforeAgent" } else { "UserPromptSubmit" };
    assert_quiet_success(&home.hook(agent, event, &body));
}

fn titles(results: &serde_json::Value) -> Vec<String> {
    results["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["title"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub(crate) fn seeded() -> TestHome {
    let home = home();
    let a = home.user_home().join("proj-a");
    let b = home.user_home().join("proj-b");
    std::fs::create_dir_all(&a).expect("a");
    std::fs::create_dir_all(&b).expect("b");
    let (a, b) = (a.to_string_lossy().into_owned(), b.to_string_lossy().into_owned());
    prompt(&home, "codex", "c1", &a, "修复支付回调的签名校验 bug");
    prompt(&home, "claude-code", "k1", &a, "The API bug in the payment webhook returns 500");
    prompt(&home, "gemini", "g1", &b, "支付页面的样式调整");
    prompt(&home, "claude-code", "k2", &b, "Refactor the logging module");
    prompt(&home, "codex", "c2", &b, "回调地址配置到环境变量里");
    home
}

#[test]
fn two_character_chinese_words_match_inside_longer_text() {
    let home = seeded();
    let hits = titles(&home.json(&["search", "回调"]));
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits.iter().all(|t| t.contains("回调")), "{hits:?}");
    let hits = titles(&home.json(&["search", "支付"]));
    assert_eq!(hits.len(), 2, "{hits:?}");
    let hits = titles(&home.json(&["search", "支付回调"]));
    assert_eq!(hits.len(), 1, "the phrase matches only where the words stand together: {hits:?}");
}

#[test]
fn mixed_language_query_ranks_across_agents() {
    let home = seeded();
    let results = home.json(&["search", "API bug 修复"]);
    let hits = titles(&results);
    assert_eq!(hits.len(), 2, "{hits:?}");
    let agents: Vec<&str> = results["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| h["agent"].as_str())
        .collect();
    assert!(agents.contains(&"codex") && agents.contains(&"claude-code"), "{agents:?}");
    let scores: Vec<f64> = results["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| h["score"].as_f64())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "best first: {scores:?}");
}

#[test]
fn filters_narrow_results() {
    let home = seeded();
    assert_eq!(titles(&home.json(&["search", "回调", "--agent", "codex"])).len(), 2);
    assert_eq!(
        titles(&home.json(&["search", "回调", "--agent", "claude"])).len(),
        0,
        "aliases resolve"
    );
    assert_eq!(titles(&home.json(&["search", "支付", "--project", "proj-b"])).len(), 1);
    let dir = home.user_home().join("proj-a").to_string_lossy().into_owned();
    assert_eq!(
        titles(&home.json(&["search", "支付", "--project", &dir])).len(),
        1,
        "a directory names its project"
    );
    assert_eq!(titles(&home.json(&["search", "支付", "--since", "1h"])).len(), 2);
    assert_eq!(titles(&home.json(&["search", "支付", "--until", "2000-01-01"])).len(), 0);
    assert_eq!(titles(&home.json(&["search", "支付 refactor logging", "--limit", "1"])).len(), 1);
}

#[test]
fn odd_queries_never_fail() {
    let home = seeded();
    for query in ["\"unbalanced", "NEAR(", "a:b OR -c*", "%_\\", "???"] {
        let out = home.run(&["search", query], b"");
        assert!(out.status.success(), "{query}: {}", agent_memory_testkit::describe(&out));
    }
    let text = home.ok(&["search", "logging"]);
    assert!(text.contains("Refactor the logging module") && text.contains("claude-code"), "{text}");
    let bad = home.run(&["search", "x", "--since", "last tuesday"], b"");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("use a date"));
}

/// The explain lines of `search --explain`, with the local times (`2026-12-02 20:01`) masked.
fn masked(text: &str) -> String {
    let is_stamp = |s: &[u8]| {
        s.len() == 16
            && s.iter().enumerate().all(|(i, b)| match i {
                4 | 7 => *b == b'-',
                10 => *b == b' ',
                13 => *b == b':',
                _ => b.is_ascii_digit(),
            })
    };
    text.lines()
        .map(|line| {
            let bytes = line.as_bytes();
            match (0..bytes.len().saturating_sub(15)).find(|&i| is_stamp(&bytes[i..i + 16])) {
                Some(i) => format!("{}<time>{}", &line[..i], &line[i + 16..]),
                None => line.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn explain_prints_every_part_of_each_score() {
    let home = seeded();
    let text = home.ok(&["search", "支付", "--explain"]);
    expect_test::expect![[r#"
        e3      <time>  gemini      proj-b         prompt      Prompt: 支付页面的样式调整  (0.860)
                = 0.70×relevance 1.000 (bm25 0.47 → 1.000, similarity -, session +0.600)
                  + 0.15×importance 0.40 (event prompt)
                  + 0.10×freshness 1.000 (0.0 days old, half-life 30 days)
                  + 0.05×hits 0.000 (0 before)
        e1      <time>  codex       proj-a         prompt      Prompt: 修复支付回调的签名校验 bug  (0.827)
                = 0.70×relevance 0.954 (bm25 0.44 → 0.932, similarity -, session +0.593)
                  + 0.15×importance 0.40 (event prompt)
                  + 0.10×freshness 1.000 (0.0 days old, half-life 30 days)
                  + 0.05×hits 0.000 (0 before)
        (channels: full text only)"#]]
    .assert_eq(&masked(&text));
    let counts = |results: &serde_json::Value| -> Vec<i64> {
        results["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .filter_map(|h| h["parts"]["hit_count"].as_i64())
            .collect()
    };
    // A person's own searches are not hits, so the same search answers the same way again.
    let again = home.json(&["search", "支付"]);
    assert_eq!(counts(&again), vec![0, 0], "{again}");
    // What an agent is handed is: after an MCP search, the next search shows it.
    let mut mcp = crate::mcp::initialized(&home);
    let (error, text) = mcp.call("search", serde_json::json!({ "query": "支付" }));
    assert!(!error, "{text}");
    mcp.finish();
    let after = home.json(&["search", "支付"]);
    assert_eq!(counts(&after), vec![1, 1], "{after}");
}

#[test]
fn kind_and_type_narrow_the_list() {
    let home = seeded();
    let results = home.json(&["search", "回调 支付", "--kind", "event", "--type", "prompt"]);
    assert_eq!(titles(&results).len(), 3, "{results}");
    let none = home.json(&["search", "回调 支付", "--kind", "observation"]);
    assert!(titles(&none).is_empty(), "nothing is distilled yet: {none}");
    let none = home.json(&["search", "回调 支付", "--type", "bugfix"]);
    assert!(titles(&none).is_empty(), "{none}");
    let bad = home.run(&["search", "x", "--kind", "thing"], b"");
    assert!(!bad.status.success(), "an unknown kind is refused");
    // One flag for both: the kind of item and its type; `--kind` is an older spelling.
    let both = home.json(&["search", "回调 支付", "--type", "event,prompt"]);
    assert_eq!(titles(&both), titles(&results), "{both}");
    let none = home.json(&["search", "回调 支付", "--type", "observation"]);
    assert!(titles(&none).is_empty(), "{none}");
}

#[test]
fn chinese_words_mixed_with_english_identifiers() {
    let home = home();
    let dir = home.user_home().join("shop");
    std::fs::create_dir_all(&dir).expect("dir");
    let dir = dir.to_string_lossy().into_owned();
    prompt(
        &home,
        "codex",
        "c1",
        &dir,
        "PaymentService 的回调签名校验失败，修一下 verify_signature",
    );
    prompt(&home, "codex", "c2", &dir, "OrderService 的分页查询太慢");
    prompt(
        &home,
        "claude-code",
        "k1",
        &dir,
        "Rename verify_signature to check_signature everywhere",
    );
    let hits = titles(&home.json(&["search", "PaymentService 回调"]));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].contains("PaymentService"), "{hits:?}");
    let hits = titles(&home.json(&["search", "verify_signature 校验"]));
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits[0].contains("校验"), "matching both terms ranks first: {hits:?}");
    let hits = titles(&home.json(&["search", "分页"]));
    assert_eq!(hits, vec!["Prompt: OrderService 的分页查询太慢".to_owned()]);
}

/// A misspelt filter value is an error that lists the valid ones, never an empty answer that
/// looks like "nothing was stored".
#[test]
fn unknown_filter_values_are_errors_that_list_the_valid_ones() {
    let home = seeded();
    let cases: [(&[&str], &str); 6] = [
        (&["search", "x", "--agent", "nosuch"], "pass one of claude-code, codex, gemini"),
        (&["search", "x", "--type", "bogus"], "(bugfix, feature,"),
        // Stored projects are listed most recently used first.
        (&["search", "x", "--project", "nosuchproj"], "pass one of proj-b, proj-a"),
        (&["export", "--agent", "nosuch"], "pass one of claude-code, codex, gemini"),
        (&["memories", "--project", "nosuchproj"], "pass one of proj-b, proj-a"),
        (&["review", "--json", "--project", "nosuchproj"], "pass one of proj-b, proj-a"),
    ];
    for (args, listed) in cases {
        let out = home.run(args, b"");
        // Under --json the error is the JSON object on stdout; otherwise a line on stderr.
        let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        let described = agent_memory_testkit::describe(&out);
        assert!(!out.status.success(), "{args:?} must fail: {described}");
        assert!(said.contains(listed), "{args:?} should list {listed:?}: {said}");
        assert!(!said.contains("SQL"), "{args:?}: {said}");
    }
    // A type only stored observations carry is still accepted.
    assert!(home.run(&["search", "x", "--type", "decision"], b"").status.success());
}
