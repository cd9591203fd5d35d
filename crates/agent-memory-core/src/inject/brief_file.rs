//! The brief file: the session-start briefing kept in `<project>/.agent-memory/brief.md`, for
//! agents and setups that cannot take injected context; their instructions file includes it
//! (`@.agent-memory/brief.md` in `CLAUDE.md`, a line in `AGENTS.md` or `GEMINI.md`).
//!
//! The file exists only where the person asked for it: the store records the ask, and the work
//! pass refreshes nothing else, so a `brief.md` shipped by a cloned repository stays as it came.
//! The directory holds a `.gitignore` of `*`, so git ignores it without a change to the user's
//! own `.gitignore`; a directory the repository already tracks is never written, since the
//! next `git commit -am` would publish the memory in it. Global memory (the person's, from every
//! project) goes in only when asked for. The briefing inside is wrapped in the sentinel, so an agent that reads the
//! file and echoes it back is not recorded as saying it. Files are written atomically and only
//! when their content changes, and never through a link: the project may be a clone whose
//! directory or brief is a link planted to make the next work pass write elsewhere.
//!
//! Must not: decide what the briefing says (that is [`super::briefing`]).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::fsutil;
use crate::store::StoreError;

/// The directory, in the project root.
pub const DIR: &str = ".agent-memory";
/// The file, in that directory.
pub const FILE: &str = "brief.md";

/// Why a brief file could not be brought up to date.
#[derive(Debug, thiserror::Error)]
pub enum BriefError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write {path}: {source}; check that the project directory is writable")]
    Write { path: PathBuf, source: io::Error },
    #[error(
        "{path} is tracked by git, so memory written there would go into the next commit; \
         untrack it (`git rm -r --cached .agent-memory`) and run `agent-memory brief --write` again"
    )]
    Tracked { path: PathBuf },
}

/// A brief file, and whether a refresh changed it or why it could not write it.
pub type Refreshed = (PathBuf, Result<bool, BriefError>);

/// Where the brief file of the project at `root` lives.
pub fn path(root: &Path) -> PathBuf {
    root.join(DIR).join(FILE)
}

/// The file's text for a briefing (`None`: nothing distilled yet).
pub fn contents(markdown: Option<&str>, language: &str) -> String {
    let zh = language.starts_with("zh");
    let body = match markdown {
        Some(text) => text.to_owned(),
        None if zh => "本项目还没有提炼出以往会话的记忆。".to_owned(),
        None => "No earlier sessions of this project have been distilled yet.".to_owned(),
    };
    let note = if zh {
        "<!-- 由 agent-memory 生成（`agent-memory brief --write`，每次 `agent-memory work` 后更新）；手动修改会被覆盖。 -->"
    } else {
        "<!-- Written by agent-memory (`agent-memory brief --write`, refreshed after each `agent-memory work`); edits are overwritten. -->"
    };
    format!("{note}\n{}\n", super::wrap(&body))
}

/// Writes the brief file of the project at `root` (and the directory's `.gitignore`); true
/// when the brief changed.
pub fn write(root: &Path, markdown: Option<&str>, language: &str) -> Result<bool, BriefError> {
    let dir = root.join(DIR);
    if tracked_by_git(root) {
        return Err(BriefError::Tracked { path: dir });
    }
    let failed = |path: &Path| {
        let path = path.to_owned();
        move |source| BriefError::Write { path, source }
    };
    // The project may be a clone that ships the directory as a link to somewhere else.
    fsutil::refuse_link(&dir).map_err(failed(&dir))?;
    fsutil::ensure_private_dir(&dir).map_err(failed(&dir))?;
    let ignore = dir.join(".gitignore");
    write_if_changed(&ignore, b"*\n").map_err(failed(&ignore))?;
    let brief = dir.join(FILE);
    write_if_changed(&brief, contents(markdown, language).as_bytes()).map_err(failed(&brief))
}

/// Whether git tracks anything in the project's brief directory. Outside a work tree, or with
/// no git installed, nothing is tracked (and nothing can be committed either).
fn tracked_by_git(root: &Path) -> bool {
    let listed = Command::new("git")
        .arg("-C")
        .arg(root)
        // The repository's own config must not run anything on our behalf.
        .args(["-c", "core.fsmonitor=false", "ls-files", "-z", "--", DIR])
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    matches!(listed, Ok(out) if out.status.success() && !out.stdout.is_empty())
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    fsutil::write_atomic(path, bytes)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_once_with_its_gitignore() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(write(dir.path(), Some("# Memory\n- o1 …"), "en").expect("first"));
        assert!(!write(dir.path(), Some("# Memory\n- o1 …"), "en").expect("same again"));
        let text = std::fs::read_to_string(path(dir.path())).expect("brief");
        assert!(text.contains("<agent-memory-context>\n# Memory\n- o1 …\n</agent-memory-context>"));
        assert!(
            !crate::capture::fence::strip_injected(&text).contains("o1"),
            "an echo is stripped"
        );
        let ignore =
            std::fs::read_to_string(dir.path().join(DIR).join(".gitignore")).expect("ignore");
        assert_eq!(ignore, "*\n");
        assert!(write(dir.path(), None, "zh-CN").expect("changed"));
        assert!(std::fs::read_to_string(path(dir.path())).expect("brief").contains("还没有"));
    }

    /// A cloned repository that tracks the brief as a link, links at the old temp names, or
    /// the directory itself as a link: the work pass writes nothing outside the project.
    #[cfg(unix)]
    #[test]
    fn a_clone_with_planted_links_cannot_redirect_the_brief() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("bashrc");
        fsutil::write_atomic(&victim, b"the user's own file").expect("victim");
        let clone = dir.path().join("clone");
        let brief_dir = clone.join(DIR);
        std::fs::create_dir_all(&brief_dir).expect("dir");
        symlink(&victim, brief_dir.join(FILE)).expect("link");
        for n in 0..64 {
            let name = format!(".{FILE}.tmp-{}-{n}", std::process::id());
            symlink(&victim, brief_dir.join(name)).expect("link");
        }
        let err = write(&clone, Some("# Memory"), "en").expect_err("the link is refused");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "the user's own file");

        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("elsewhere");
        let other = dir.path().join("other");
        std::fs::create_dir(&other).expect("other");
        symlink(&elsewhere, other.join(DIR)).expect("link");
        assert!(write(&other, Some("# Memory"), "en").is_err());
        assert_eq!(std::fs::read_dir(&elsewhere).expect("ls").count(), 0, "nothing written");
    }

    /// A repository that tracks the brief directory: writing would put memory into a commit.
    #[test]
    fn a_tracked_brief_is_never_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = |args: &[&str]| {
            let out = Command::new("git").arg("-C").arg(dir.path()).args(args).output();
            assert!(out.is_ok_and(|o| o.status.success()), "git {args:?}");
        };
        git(&["init", "-q"]);
        assert!(write(dir.path(), Some("# Memory"), "en").expect("untracked: written"));
        let brief = path(dir.path());
        fsutil::write_atomic(&brief, b"the repository's own text").expect("replace");
        git(&["add", "-f", ".agent-memory/brief.md"]);
        let err = write(dir.path(), Some("# Memory"), "en").expect_err("tracked");
        assert!(matches!(err, BriefError::Tracked { .. }), "{err}");
        assert!(err.to_string().contains("git rm -r --cached .agent-memory"), "{err}");
        assert_eq!(std::fs::read_to_string(&brief).expect("brief"), "the repository's own text");
    }
}
