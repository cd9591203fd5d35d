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

fn seeded() -> TestHome {
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
