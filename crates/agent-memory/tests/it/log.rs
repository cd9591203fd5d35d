//! Every injection on record, through the real binary: a session-start briefing and a
//! prompt's recall each leave one row naming the items they held, `log` lists them, `show`
//! says when an item was last handed, and an answer that hands nothing leaves nothing.

use serde_json::Value;

use crate::home;
use crate::recall_inject::{
    CODEX_PROMPT, CWD, claude_start, codex_fixes_the_parser, context_of, gemini_prompt, work,
};

/// `agent-memory log --json` with `args`, as a list.
fn log(home: &agent_memory_testkit::TestHome, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["log"];
    all.extend(args);
    home.json(&all).as_array().cloned().unwrap_or_else(|| panic!("a list from log {args:?}"))
}

/// The typed ids a row names.
fn items(row: &Value) -> Vec<String> {
    row["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i.as_str().expect("a typed id").to_owned())
        .collect()
}

#[test]
fn briefings_and_recall_are_on_record_with_the_items_they_held() {
    let home = home();
    // Nothing stored: the briefing says nothing, and nothing is on record.
    assert_eq!(claude_start(&home, "claude-empty", &[]), None);
    assert!(log(&home, &[]).is_empty(), "nothing handed, nothing logged");

    codex_fixes_the_parser(&home, "codex-fix", CWD, CODEX_PROMPT);
    work(&home, &[]);
    let kept = home.json(&["remember", "Parser errors name the file and line", "--project", "app"]);
    let memory = format!("m{}", kept["id"]);
    let db = crate::db(&home);
    let summary: i64 = db
        .query_row("SELECT id FROM summaries WHERE agent = 'codex'", [], |r| r.get(0))
        .expect("the codex session's summary");

    // The briefing Claude Code is handed at its start is one row, naming exactly what it held.
    let start = claude_start(&home, "claude-new", &[]).expect("a briefing");
    let context = context_of(&start);
    let rows = log(&home, &[]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(
        (&row["channel"], &row["agent"], &row["session"], &row["project"]),
        (&"briefing".into(), &"claude-code".into(), &"claude-new".into(), &"app".into()),
        "{row}"
    );
    assert!(context.contains("Parser errors name the file and line"), "{context}");
    assert!(context.contains("## Last session — codex"), "{context}");
    let timeline: Vec<String> = context
        .lines()
        .filter_map(|line| line.strip_prefix("- o"))
        .map(|rest| format!("o{}", rest.split(' ').next().expect("an id")))
        .collect();
    assert!(!timeline.is_empty(), "{context}");
    // Memories, the last session, then the timeline (newest first, where the context groups
    // it by day and file).
    let handed = items(row);
    assert_eq!(handed[..2], [memory.clone(), format!("s{summary}")], "{context}");
    let (mut shown, mut listed) = (timeline.clone(), handed[2..].to_vec());
    shown.sort();
    listed.sort();
    assert_eq!(listed, shown, "{context}");
    assert_eq!(row["tokens"], agent_memory_core::tokens::estimate(&context), "{row}");
    assert!(row["cut"].is_u64() && row["at_ms"].is_i64(), "{row}");

    // A prompt that recalls earlier work is a `recall` row of its own.
    let recalled = gemini_prompt(
        &home,
        "gemini-new",
        "The parser test fails again: cannot find value `depth` in src/parser.rs. What did we do last time?",
    )
    .expect("recall");
    let recall_context = context_of(&recalled);
    let rows = log(&home, &[]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!((&rows[0]["channel"], &rows[0]["agent"]), (&"recall".into(), &"gemini".into()));
    let recalled_ids = items(&rows[0]);
    assert!(!recalled_ids.is_empty(), "{}", rows[0]);
    for id in &recalled_ids {
        assert!(recall_context.contains(&format!("- {id} ")), "{id} in {recall_context}");
    }

    // A prompt that recalls nothing leaves nothing.
    assert_eq!(
        gemini_prompt(&home, "gemini-new", "Add a dark mode toggle to the settings page"),
        None
    );
    assert_eq!(log(&home, &[]).len(), 2);

    // Filters.
    assert_eq!(log(&home, &["--session", "claude-new"]).len(), 1);
    assert_eq!(log(&home, &["--agent", "gemini"]).len(), 1);
    assert_eq!(log(&home, &["--project", "app", "--limit", "1"]).len(), 1);
    assert!(log(&home, &["--session", "no-such-session"]).is_empty());
    let out = home.run(&["log", "--agent", "nobody"], b"");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nobody") && err.contains("claude-code"), "{err}");
    let text = home.ok(&["log"]);
    let first = text.lines().next().expect("a line");
    assert!(
        first.contains("gemini") && first.contains("recall") && first.contains("app"),
        "{text}"
    );
    assert!(text.contains(&format!("    {}", handed.join(" "))), "{text}");

    // `show` says when an item was last handed, and how often: the fix was in the briefing's
    // timeline and in the recall.
    let fix = format!(
        "o{}",
        crate::count(
            &home,
            "SELECT id FROM observations WHERE agent = 'codex' AND files_modified LIKE '%src/parser.rs%'",
        )
    );
    assert!(timeline.contains(&fix) && recalled_ids.contains(&fix), "{fix}: {context}");
    let shown = home.json(&["show", &fix]);
    let last = &shown[0]["last_handed"];
    assert_eq!(
        (&last["agent"], &last["channel"], &last["session"], &last["times"]),
        (&"gemini".into(), &"recall".into(), &"gemini-new".into(), &2.into()),
        "{shown}"
    );
    let shown = home.json(&["show", &memory]);
    assert_eq!(shown[0]["kind"], "memory", "{shown}");
    let last = &shown[0]["last_handed"];
    assert_eq!(
        (&last["agent"], &last["channel"], &last["times"]),
        (&"claude-code".into(), &"briefing".into(), &1.into()),
        "{shown}"
    );
    assert!(last["at_ms"].is_i64(), "{shown}");
    let text = home.ok(&["show", &memory]);
    assert!(text.contains("Last handed to claude-code (briefing) "), "{text}");
    assert!(text.trim_end().ends_with(", once"), "{text}");
    // Never handed: null.
    let never = home.json(&["show", "e1"]);
    assert!(never[0]["last_handed"].is_null(), "{never}");
}
