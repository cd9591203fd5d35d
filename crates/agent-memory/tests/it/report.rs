//! `agent-memory report`: a project's story week by week, from what the work pass distilled
//! out of real agent payloads.

use serde_json::Value;

use crate::home;
use crate::memory::{JIFF, codex_decides};
use crate::recall_inject::{CODEX_PROMPT, CWD, codex_fixes_the_parser, work};

#[test]
fn the_report_tells_a_projects_weeks_by_what_was_fixed_and_decided() {
    let home = home();
    codex_fixes_the_parser(&home, "fix-1", CWD, CODEX_PROMPT);
    codex_decides(&home, "decide-1", JIFF, "src/time.rs");
    work(&home, &[]);

    let text = home.ok(&["report", "--project", CWD]);
    assert!(text.starts_with("# app, week by week (since 12w)\n"), "{text}");
    assert!(text.contains("\n## Week of 20"), "{text}");
    assert!(text.contains("2 sessions: codex 2"), "{text}");
    let fixed = text.split("### Fixed\n").nth(1).unwrap_or_default();
    assert!(
        fixed.lines().nth(1).is_some_and(|l| l.starts_with("- o") && l.contains("(codex)")),
        "{text}"
    );
    assert!(text.contains("### Decided\n"), "{text}");

    let report: Value = home.json(&["report", "--project", CWD]);
    let weeks = report["weeks"].as_array().cloned().unwrap_or_default();
    assert_eq!(weeks.len(), 1, "{report}");
    let headings: Vec<&str> = weeks[0]["sections"]
        .as_array()
        .map(|s| s.iter().filter_map(|s| s["heading"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(headings.first(), Some(&"fixed"), "{report}");
    assert!(headings.contains(&"decided"), "{report}");

    // A project nothing was stored for says so.
    let out = home.run(&["report", "--project", "no-such-project"], b"");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-project"));
}
