//! Memory you can trust, through the real binary and real git repositories: a fix becomes an
//! observation anchored to the file it changed; rewriting the file marks it "changed since" in
//! the next briefing, deleting it leaves it out (still found by search, marked); work on a
//! feature branch in a linked worktree stays out of main's briefing until it is merged, and
//! the worktree sees its own work at once.

use std::path::Path;

use serde_json::{Value, json};

use crate::recall_inject::{CODEX_PROMPT, codex_fixes_the_parser, work};
use crate::{home, payload};
use agent_memory_testkit::{TestHome, describe};

/// Runs git in `dir` as a developer would, whatever repository the test itself runs in.
pub(crate) fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=Dev", "-c", "user.email=dev@example.com"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", describe(&out));
}

#[allow(clippy::disallowed_methods)]
fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

/// A repository on `main` with `src/parser.rs` committed.
fn repository(home: &TestHome) -> std::path::PathBuf {
    let dir = home.user_home().join("work").join("parser");
    std::fs::create_dir_all(&dir).expect("repo dir");
    git(&dir, &["init", "-q", "-b", "main"]);
    write(
        &dir.join("src/parser.rs"),
        "fn parse(depth: usize) -> usize {\n    let d = depth + 1;\n    d\n}\n",
    );
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "parser"]);
    dir
}

/// What Claude Code is handed at the start of a session in `cwd`.
fn briefing(home: &TestHome, session: &str, cwd: &Path) -> String {
    let start =
        payload(session, "SessionStart", &cwd.to_string_lossy(), json!({ "source": "startup" }));
    let out = home.hook("claude-code", "SessionStart", &start);
    assert!(out.status.success(), "{}", describe(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned()
}

/// The first observation that changed `src/parser.rs`, as `show --json` gives it.
fn parser_fix(home: &TestHome) -> (String, Value) {
    let found = home.json(&["search", "depth parser", "--kind", "observation"]);
    let hit = found["hits"]
        .as_array()
        .and_then(|hits| hits.first())
        .unwrap_or_else(|| panic!("the fix is found: {found}"))
        .clone();
    let id = format!("o{}", hit["id"]);
    let shown = home.json(&["show", &id]);
    (id, shown[0]["item"].clone())
}

fn anchor_state(item: &Value) -> String {
    let anchors = item["anchors"].as_array().unwrap_or_else(|| panic!("anchors listed: {item}"));
    let anchor = anchors
        .iter()
        .find(|a| a["path"] == "src/parser.rs")
        .unwrap_or_else(|| panic!("anchored to src/parser.rs: {item}"));
    anchor["state"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn a_fix_is_anchored_to_its_file_marked_when_it_changes_and_left_out_when_it_is_gone() {
    let home = home();
    let repo = repository(&home);
    codex_fixes_the_parser(&home, "fix-1", &repo.to_string_lossy(), CODEX_PROMPT);
    work(&home, &[]);

    let (id, item) = parser_fix(&home);
    assert_eq!(anchor_state(&item), "fresh", "{item}");
    let context = briefing(&home, "later-1", &repo);
    assert!(context.contains(&format!("- {id} ")), "the fix is in the briefing:\n{context}");
    assert!(!context.contains("changed since"), "nothing changed yet:\n{context}");

    // The file is rewritten: the fix may no longer hold, and says so.
    write(&repo.join("src/parser.rs"), "// rewritten from scratch\npub fn parse() {}\n");
    let (_, item) = parser_fix(&home);
    assert_eq!(anchor_state(&item), "changed", "{item}");
    let since = item["anchors"][0]["since"].as_i64().expect("since");
    assert!(since > 0, "{item}");
    let context = briefing(&home, "later-2", &repo);
    let line = context
        .lines()
        .find(|l| l.starts_with(&format!("- {id} ")))
        .unwrap_or_else(|| panic!("still in the briefing, marked:\n{context}"));
    assert!(line.contains("src/parser.rs changed since 20"), "{line}");
    let shown = home.ok(&["show", &id]);
    assert!(shown.contains("rests on: src/parser.rs (changed since 20"), "{shown}");

    // The file is deleted: out of the briefing, still found by search, marked.
    std::fs::remove_file(repo.join("src/parser.rs")).expect("delete");
    let (_, item) = parser_fix(&home);
    assert_eq!(anchor_state(&item), "gone", "{item}");
    let context = briefing(&home, "later-3", &repo);
    assert!(
        !context.contains(&format!("- {id} ")),
        "a fix of a deleted file is left out:\n{context}"
    );
    let found = home.json(&["search", "depth parser", "--kind", "observation"]);
    let hit = &found["hits"][0];
    assert!(
        hit["stale"].as_str().is_some_and(|s| s.contains("src/parser.rs gone since")),
        "search marks it: {found}"
    );
}

#[test]
fn branch_work_stays_out_of_main_until_merged_and_its_worktree_sees_it() {
    let home = home();
    let repo = repository(&home);
    let tree = home.user_home().join("work").join("parser-feature");
    git(&repo, &["worktree", "add", "-q", "-b", "feature/x", &tree.to_string_lossy()]);

    codex_fixes_the_parser(&home, "feature-1", &tree.to_string_lossy(), CODEX_PROMPT);
    write(
        &tree.join("src/parser.rs"),
        "fn parse(&self) -> usize {\n    let d = self.depth + 1;\n    d\n}\n",
    );
    git(&tree, &["commit", "-q", "-am", "read depth from self"]);
    work(&home, &[]);
    let (id, _) = parser_fix(&home);
    let line = format!("- {id} ");

    let on_main = briefing(&home, "main-1", &repo);
    assert!(!on_main.contains(&line), "unmerged work is not main's:\n{on_main}");
    assert!(!on_main.contains("depth"), "nor is its session's summary:\n{on_main}");
    let in_tree = briefing(&home, "tree-1", &tree);
    assert!(in_tree.contains(&line), "the worktree sees its own branch's work:\n{in_tree}");
    // The candidate its fix became says which branch it was made on.
    let review = home.json(&["review"]);
    let candidates = review.as_array().expect("candidates");
    assert!(
        candidates.iter().any(|c| c["branch"] == "feature/x"),
        "a candidate from the branch says so: {review:#}"
    );

    git(&repo, &["merge", "-q", "feature/x"]);
    work(&home, &[]);
    let merged = briefing(&home, "main-2", &repo);
    assert!(merged.contains(&line), "merged work reaches main:\n{merged}");
    assert!(!merged.contains("changed since"), "main now has the same file:\n{merged}");
}

#[test]
fn a_later_session_that_reads_the_changed_file_renews_the_anchor() {
    let home = home();
    let repo = repository(&home);
    codex_fixes_the_parser(&home, "fix-1", &repo.to_string_lossy(), CODEX_PROMPT);
    work(&home, &[]);
    write(&repo.join("src/parser.rs"), "fn parse(&self) -> usize {\n    self.depth + 2\n}\n");
    let (id, item) = parser_fix(&home);
    assert_eq!(anchor_state(&item), "changed", "{item}");

    // Claude Code reads the file as it is now, and the fix still stands.
    let cwd = repo.to_string_lossy().into_owned();
    let file = repo.join("src/parser.rs").to_string_lossy().into_owned();
    let read = payload(
        "reader-1",
        "PostToolUse",
        &cwd,
        json!({ "tool_name": "Read", "tool_input": { "file_path": file },
                "tool_response": { "file": { "content": "fn parse(&self) -> usize" } } }),
    );
    for (event, body) in [
        (
            "UserPromptSubmit",
            payload(
                "reader-1",
                "UserPromptSubmit",
                &cwd,
                json!({ "prompt": "how does parse read depth?" }),
            ),
        ),
        ("PostToolUse", read),
        (
            "Stop",
            payload(
                "reader-1",
                "Stop",
                &cwd,
                json!({ "last_assistant_message": "parse reads depth from self." }),
            ),
        ),
    ] {
        let out = home.hook("claude-code", event, &body);
        assert!(out.status.success(), "{}", describe(&out));
    }
    work(&home, &[]);
    let (again, item) = parser_fix(&home);
    assert_eq!(again, id);
    assert_eq!(anchor_state(&item), "fresh", "renewed by the later read: {item}");
}

#[test]
fn a_remembered_rule_naming_a_file_needs_a_look_once_the_file_changes() {
    let home = home();
    let repo = repository(&home);
    let remembered = home
        .cmd()
        .args(["remember", "src/parser.rs must read depth from self, never from a local", "--json"])
        .current_dir(&repo)
        .output()
        .expect("remember");
    assert!(remembered.status.success(), "{}", describe(&remembered));
    let memory: Value = serde_json::from_slice(&remembered.stdout).expect("json");
    let id = format!("m{}", memory["memory"]["id"].as_i64().or(memory["id"].as_i64()).expect("id"));
    work(&home, &[]);
    let shown = home.json(&["show", &id]);
    assert_eq!(anchor_state(&shown[0]["item"]), "fresh", "{shown}");
    let tidy = home.json(&["tidy"]);
    assert_eq!(tidy["needs_a_look"].as_array().map(Vec::len), Some(0), "{tidy}");

    write(&repo.join("src/parser.rs"), "pub fn parse() {}\n");
    let tidy = home.json(&["tidy"]);
    let look = tidy["needs_a_look"].as_array().expect("needs_a_look");
    assert_eq!(look.len(), 1, "{tidy}");
    assert_eq!(format!("m{}", look[0]["id"]), id);
    let text = home.ok(&["tidy"]);
    assert!(text.contains("needs a look (1"), "{text}");
    assert!(text.contains("src/parser.rs changed since"), "{text}");
}
