//! Project identity end to end: events from clones, worktrees, symlinks and look-alike paths
//! land in the right project.

use std::path::Path;
use std::process::Command;

use crate::{assert_quiet_success, home, payload};
use agent_memory_testkit::TestHome;

pub(crate) fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run git");
    assert!(status.success(), "git {args:?}");
}

/// A repository at `dir` with one empty commit and, when given, an `origin` remote.
pub(crate) fn repo(dir: &Path, origin: Option<&str>) {
    std::fs::create_dir_all(dir).expect("mkdir");
    git(dir, &["init", "-q"]);
    if let Some(url) = origin {
        git(dir, &["remote", "add", "origin", url]);
    }
    git(dir, &["commit", "-q", "--allow-empty", "-m", "init"]);
}

fn project_of(home: &TestHome, cwd: &Path, tag: &str) -> String {
    let body = payload(
        tag,
        "UserPromptSubmit",
        &cwd.to_string_lossy(),
        serde_json::json!({"prompt": format!("work in {tag}")}),
    );
    assert_quiet_success(&home.hook("claude-code", "UserPromptSubmit", &body));
    crate::db(home)
        .query_row(
            "SELECT p.key FROM events e JOIN projects p ON p.id = e.project_id JOIN sessions s ON s.id = e.session_id
             WHERE s.source_id = ?1",
            [tag],
            |r| r.get(0),
        )
        .expect("event with project")
}

#[test]
fn clones_worktrees_symlinks_and_look_alikes() {
    let home = home();
    let root = home.user_home().join("w");
    repo(&root.join("app"), Some("git@github.com:Acme/App.git"));
    repo(&root.join("app-clone"), Some("https://github.com/acme/app"));
    repo(&root.join("app-b"), None);
    std::fs::create_dir_all(root.join("app/src")).expect("src");
    git(&root.join("app-b"), &["worktree", "add", "-q", "../app-b-wt"]);
    std::os::unix::fs::symlink(root.join("app/src"), root.join("link-to-src")).expect("symlink");

    let app = project_of(&home, &root.join("app/src"), "app");
    assert_eq!(app, "git:github.com/acme/app");
    assert_eq!(project_of(&home, &root.join("app-clone"), "clone"), app, "clones share a project");
    assert_eq!(project_of(&home, &root.join("link-to-src"), "link"), app, "symlinks resolve");
    let b = project_of(&home, &root.join("app-b"), "b");
    assert!(b.starts_with("path:") && b.ends_with("/app-b"), "{b}");
    assert_eq!(project_of(&home, &root.join("app-b-wt"), "wt"), b, "worktrees share a project");

    // A registered root claims what is below it, and only that.
    std::fs::create_dir_all(root.join("plain/tool")).expect("plain");
    std::fs::create_dir_all(root.join("plain-other")).expect("other");
    home.ok(&["project", "add", root.join("plain").to_str().expect("utf-8")]);
    let plain = project_of(&home, &root.join("plain/tool"), "plain");
    assert!(plain.ends_with("/w/plain"), "{plain}");
    let other = project_of(&home, &root.join("plain-other"), "other");
    assert!(other.ends_with("/w/plain-other"), "look-alike path is its own project: {other}");

    let listed = home.json(&["project", "list"]);
    assert!(listed.as_array().is_some_and(|p| p.len() >= 4), "{listed}");
}
