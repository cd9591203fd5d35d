//! Branches: work done on a feature branch stays with that branch until it is merged.
//!
//! The hook records the branch a session's checkout is on (read from `HEAD`, see
//! [`crate::project`]). The work pass, which may run `git`, judges it here: a session on the
//! repository's default branch (or outside git) is everyone's; one on another branch is that
//! branch's work, pinned to the first tip of the branch that the default branch does not reach
//! (the branch's own commits), and visible on another branch once that branch reaches the
//! commit. Which branches reach which work commit is found here and kept in the store, so the
//! hooks filter with one indexed lookup and never run `git`
//! ([`seen_on_branch`](crate::store::recall::seen_on_branch)).
//!
//! Limits: a squash or rebase merge writes new commits, so work merged that way is not seen as
//! merged; work never committed on its branch stays that branch's. Reviewed memory is
//! project-wide either way.
//!
//! Must not: run on the hook path.

use std::path::Path;
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::store::{Store, StoreError};

/// What judging branches did in one work pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Sessions whose branch was judged.
    pub judged: usize,
    /// Sessions whose work was pinned to a commit of its branch.
    pub pinned: usize,
    /// Projects whose merges were looked for again, a branch having moved.
    pub looked: usize,
}

/// Judges the branches sessions worked on, pins branch work to its commits, and finds where
/// those commits were merged. A project whose folder is gone or is no git repository any more
/// is left as it was.
pub fn settle(store: &mut Store, now_ms: i64) -> Result<Report, StoreError> {
    let mut report = Report::default();
    for project in store.unjudged_branches(200)? {
        let root = Path::new(&project.root);
        if let Some(default) = default_branch(root) {
            report.judged += store.judge_branches(project.project_id, &default)?;
        }
    }
    for work in store.uncommitted_work(500)? {
        let root = Path::new(&work.root);
        let Some(default) = work.default_branch.as_deref() else { continue };
        let Some(tip) = rev(root, &format!("refs/heads/{}", work.branch)) else { continue };
        let Some(base) = rev(root, &format!("refs/heads/{default}")) else { continue };
        if !is_ancestor(root, &tip, &base) {
            report.pinned += store.pin_work(work.project_id, &work.branch, &tip, now_ms)?;
        }
    }
    for project in store.work_commits()? {
        let root = Path::new(&project.root);
        let Some(tips) = branch_tips(root) else { continue };
        if tips == store.branch_tips(project.project_id)? {
            continue;
        }
        let mut merges = Vec::new();
        for commit in &project.commits {
            for branch in branches_containing(root, commit) {
                merges.push((commit.clone(), branch));
            }
        }
        store.save_merges(project.project_id, &merges, &tips)?;
        report.looked += 1;
    }
    Ok(report)
}

/// Runs `git -C root args…`, its output when it succeeds; `None` when git is missing, the
/// folder is no repository, or the command fails. Never prompts, never takes the repository's
/// optional locks (a person's own `git status` must not wait for it).
fn run_git(root: &Path, args: &[&str]) -> Option<Vec<u8>> {
    if !root.is_dir() {
        return None;
    }
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// [`run_git`]'s output as trimmed text.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    run_git(root, args).map(|out| String::from_utf8_lossy(&out).trim().to_owned())
}

/// The commit a name resolves to.
fn rev(root: &Path, name: &str) -> Option<String> {
    git(root, &["rev-parse", "--verify", "--quiet", &format!("{name}^{{commit}}")])
        .filter(|sha| !sha.is_empty())
}

/// The commit the checkout at `root` has checked out.
pub fn head_commit(root: &Path) -> Option<String> {
    rev(root, "HEAD")
}

/// The bytes of `path` (relative to the top level) at the tip of `branch`; `None` when the
/// branch or the file is not there.
pub fn blob(root: &Path, branch: &str, path: &str) -> Option<Vec<u8>> {
    run_git(root, &["cat-file", "blob", &format!("refs/heads/{branch}:{path}")])
}

fn is_ancestor(root: &Path, commit: &str, of: &str) -> bool {
    git(root, &["merge-base", "--is-ancestor", commit, of]).is_some()
}

/// The repository's default branch: what `origin/HEAD` names, else the configured initial
/// branch, `main` or `master`, whichever exists first.
pub fn default_branch(root: &Path) -> Option<String> {
    if let Some(remote) =
        git(root, &["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"])
        && let Some(name) = remote.strip_prefix("origin/").filter(|n| !n.is_empty())
    {
        return Some(name.to_owned());
    }
    let configured = git(root, &["config", "--get", "init.defaultBranch"]);
    configured
        .into_iter()
        .chain(["main", "master", "trunk"].map(str::to_owned))
        .find(|name| rev(root, &format!("refs/heads/{name}")).is_some())
}

/// Every local branch with its tip, sorted by name.
fn branch_tips(root: &Path) -> Option<Vec<(String, String)>> {
    let listed =
        git(root, &["for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads"])?;
    let mut tips: Vec<(String, String)> = listed
        .lines()
        .filter_map(|line| line.rsplit_once(' '))
        .map(|(name, tip)| (name.to_owned(), tip.to_owned()))
        .collect();
    tips.sort();
    Some(tips)
}

/// The local branches whose history holds `commit`.
fn branches_containing(root: &Path, commit: &str) -> Vec<String> {
    git(root, &["for-each-ref", "--contains", commit, "--format=%(refname:short)", "refs/heads"])
        .map(|listed| listed.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}
