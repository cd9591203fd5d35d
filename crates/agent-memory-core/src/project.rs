//! Project identity: which project a working directory belongs to (ARCHITECTURE.md, `project.rs`).
//!
//! Owns the resolution realpath(cwd) → longest registered root → git top-level → the path itself,
//! the few `.git` file formats that needs (gitdir files, `commondir`, `[remote "origin"]` in
//! `config`), and the normalization of remote URLs so every clone of a repository shares one key.
//! It runs inside hooks that must finish in milliseconds, so it is a handful of stat/read calls: it
//! never spawns `git` or any other process, never touches the network or the database, ignores
//! `$GIT_DIR`, and never panics on odd or unreadable files (it degrades to a `path:` key instead).

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Git metadata files are tiny; the cap only keeps a corrupt or hostile file from stalling a hook.
const MAX_GIT_FILE_BYTES: u64 = 1 << 20;

/// Forges that match owner and repository names case-insensitively, so `Acme/App` is `acme/app`.
const CASE_INSENSITIVE_HOSTS: &[&str] = &["github.com", "gitlab.com", "bitbucket.org"];

/// Where work happened, as stored with every session and memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectIdentity {
    /// Stable key shared by every checkout of the project: `git:<normalized origin>` when the repo
    /// has an `origin` remote, else `path:<root>` (root = the main worktree's top-level for git
    /// repos, so linked worktrees share it). A registered root strictly inside a repository gets
    /// `git:<origin>//<relative dir>` (or `path:<main top-level>/<relative dir>`), so a split
    /// monorepo stays split yet still shared between clones; outside git it is `path:<root>`.
    pub key: String,
    /// The directory the project lives in for this cwd: the git top-level of this checkout or
    /// worktree, or the registered root, or the realpath of cwd.
    pub root: PathBuf,
    /// Human name: the last component of the origin path when the root is a repository top-level
    /// with an origin, else the root's file name.
    pub name: String,
    /// The normalized `origin` URL of the enclosing repository, if any.
    pub origin: Option<String>,
    /// The branch this checkout (or linked worktree) has checked out, read from its `HEAD`;
    /// `None` outside git and on a detached head.
    pub branch: Option<String>,
}

impl ProjectIdentity {
    fn new(key: String, root: PathBuf, name: String, origin: Option<String>) -> Self {
        Self { key, root, name, origin, branch: None }
    }

    /// A directory that is its own project, keyed and named by its path.
    fn plain(root: PathBuf) -> Self {
        let (key, name) = (path_key(&root), file_name(&root));
        Self::new(key, root, name, None)
    }
}

/// Resolves the project of `cwd`.
///
/// Order: realpath(cwd) (for a deleted directory, the realpath of its nearest existing ancestor
/// plus the lexically normalized rest); if registered roots (realpath-ed too) contain it, the
/// longest wins, because explicit registration beats detection and lets a user split a monorepo;
/// else the git top-level found by walking up to the filesystem root looking for `.git` (a
/// directory, or a `gitdir: …` file for linked worktrees and submodules); else the path itself.
pub fn resolve(cwd: &Path, registered_roots: &[PathBuf]) -> ProjectIdentity {
    let path = real_path(cwd);
    let registered = registered_roots
        .iter()
        .filter(|root| !root.as_os_str().is_empty())
        .map(|root| real_path(root))
        .filter(|root| contains_path(root, &path))
        .max_by_key(|root| root.components().count());
    if let Some(root) = registered {
        return registered_identity(root);
    }
    find_repo(&path).map_or_else(|| ProjectIdentity::plain(path), repo_identity)
}

/// Whether a project stands for no project at all: no folder (`agent:` keys), or a folder that
/// is neither in a repository (a repository's project root is its top level, which holds
/// `.git`) nor a registered root, such as a general assistant's workspace or a home directory.
/// `registered` says whether the root is a registered one; it is asked only when it matters.
pub fn is_outside_projects(key: &str, root: &Path, registered: impl FnOnce() -> bool) -> bool {
    if key.starts_with("git:") {
        return false;
    }
    if key.starts_with("agent:") || root.as_os_str().is_empty() {
        return true;
    }
    !root.join(".git").exists() && !registered()
}

/// Whether `root` contains `path` on a path boundary: `/w/app` contains `/w/app` and
/// `/w/app/src` but not `/w/app-b`. Compares lexically normalized components; it does not touch
/// the disk, so callers wanting symlinks resolved pass realpaths.
pub fn contains_path(root: &Path, path: &Path) -> bool {
    !root.as_os_str().is_empty() && lexical_normalize(path).starts_with(lexical_normalize(root))
}

/// Normalizes a git remote URL so all spellings of one repository compare equal:
/// `git@github.com:Owner/Repo.git`, `https://user:token@github.com/owner/repo.git/` and
/// `ssh://git@github.com:22/owner/repo` all become `github.com/owner/repo`.
///
/// The host is lowercased; credentials, query, fragment and default ports are dropped; a trailing
/// `.git` and slashes are removed; the path is lowercased only on forges known to ignore case.
/// Local paths (absolute, `./`, `../`, `~/`) and `file://` URLs become the cleaned path. Returns
/// `None` for empty or garbage input. The result is stored, so it never carries credentials.
pub fn normalize_origin(url: &str) -> Option<String> {
    let url = url.trim();
    if url.is_empty() || url.contains(char::is_control) {
        return None;
    }
    if url == "." || url == ".." || ["/", "./", "../", "~/"].iter().any(|p| url.starts_with(p)) {
        return clean_local(url);
    }
    if url.contains(|c: char| c.is_whitespace() || c == '\\') {
        return None;
    }
    if let Some((scheme, rest)) = url.split_once("://") {
        return normalize_url(&scheme.to_ascii_lowercase(), rest);
    }
    // Git's scp-like syntax, `[user@]host:path`, applies only when no slash precedes the colon.
    let (left, path) = url.split_once(':')?;
    let host = left.rsplit_once('@').map_or(left, |(_, host)| host);
    join_host_path(&clean_host(host)?, None, path)
}

fn normalize_url(scheme: &str, rest: &str) -> Option<String> {
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    if scheme == "file" {
        // Only a local file URL names something every clone on this machine can share.
        let path = rest.strip_prefix("localhost").unwrap_or(rest);
        return path.starts_with('/').then(|| clean_local(path)).flatten();
    }
    let scheme_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.');
    let valid_scheme =
        scheme.starts_with(|c: char| c.is_ascii_alphabetic()) && scheme.chars().all(scheme_char);
    if !valid_scheme {
        return None;
    }
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    // Credentials go first: everything before the last `@` of the authority.
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match host_port.rfind(':') {
        Some(i) if !host_port[i..].contains(']') => (&host_port[..i], &host_port[i + 1..]),
        _ => (host_port, ""),
    };
    // A non-numeric port means a malformed URL, possibly a password with an unescaped `/`.
    if !port.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let default_port = match scheme {
        "http" => "80",
        "https" => "443",
        "ssh" | "git+ssh" | "ssh+git" => "22",
        "git" => "9418",
        _ => "",
    };
    let host = clean_host(host)?;
    let port = port.trim_start_matches('0');
    let forge = CASE_INSENSITIVE_HOSTS.contains(&host.as_str());
    let keep_port = !port.is_empty() && port != default_port && !forge;
    join_host_path(&host, keep_port.then_some(port), path)
}

/// Lowercases a host and rejects what cannot be a host name.
fn clean_host(host: &str) -> Option<String> {
    let allowed =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '[' | ']' | ':');
    (!host.is_empty() && host.chars().all(allowed)).then(|| host.to_ascii_lowercase())
}

fn join_host_path(host: &str, port: Option<&str>, path: &str) -> Option<String> {
    let path = clean_segments(path, false)?.join("/");
    let path = if CASE_INSENSITIVE_HOSTS.contains(&host) { path.to_lowercase() } else { path };
    Some(match port {
        Some(port) => format!("{host}:{port}/{path}"),
        None => format!("{host}/{path}"),
    })
}

fn clean_local(path: &str) -> Option<String> {
    let (prefix, rest) = match (path.strip_prefix('/'), path.strip_prefix("~/")) {
        (Some(rest), _) => ("/", rest),
        (None, Some(rest)) => ("~/", rest),
        (None, None) => ("", path),
    };
    let segments = clean_segments(rest, prefix.is_empty())?;
    Some(format!("{prefix}{}", segments.join("/")))
}

/// Splits a path into clean segments: no empty or `.` segments, `..` applied, a trailing `.git`
/// (suffix or segment) removed. `None` when nothing is left: a repository always has a path.
fn clean_segments(path: &str, keep_leading_parent: bool) -> Option<Vec<&str>> {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." if segments.last().is_some_and(|s| *s != "..") => drop(segments.pop()),
            ".." if !keep_leading_parent => {}
            _ => segments.push(segment),
        }
    }
    if let Some(last) = segments.pop() {
        let stem = last.strip_suffix(".git").unwrap_or(last);
        segments.extend((!stem.is_empty()).then_some(stem));
    }
    (!segments.is_empty()).then_some(segments)
}

/// A repository found by walking up: this checkout's top-level, the directory naming the whole
/// repository in `path:` keys (the main worktree's top-level when it can be known), the origin.
struct Repo {
    top: PathBuf,
    key_root: PathBuf,
    origin: Option<String>,
    branch: Option<String>,
}

fn repo_identity(repo: Repo) -> ProjectIdentity {
    let Some(origin) = repo.origin else {
        let (key, name) = (path_key(&repo.key_root), file_name(&repo.top));
        return ProjectIdentity {
            branch: repo.branch,
            ..ProjectIdentity::new(key, repo.top, name, None)
        };
    };
    // A normalized origin always ends in a non-empty segment: the repository's name.
    let name = origin.rsplit('/').next().unwrap_or_default().to_owned();
    let identity = ProjectIdentity::new(format!("git:{origin}"), repo.top, name, Some(origin));
    ProjectIdentity { branch: repo.branch, ..identity }
}

fn registered_identity(root: PathBuf) -> ProjectIdentity {
    let Some(repo) = find_repo(&root) else {
        return ProjectIdentity::plain(root);
    };
    // Registering a repository's own top-level must not change its key, or data captured before
    // the registration would be orphaned; only a root strictly inside it splits the project.
    let rel = root.strip_prefix(&repo.top).map(Path::to_path_buf).unwrap_or_default();
    if rel.as_os_str().is_empty() {
        return repo_identity(repo);
    }
    let key = match &repo.origin {
        // `//` never occurs in a normalized origin, so this cannot collide with a real repository.
        Some(origin) => format!("git:{origin}//{}", rel.to_string_lossy()),
        None => path_key(&repo.key_root.join(&rel)),
    };
    let name = file_name(&root);
    ProjectIdentity { branch: repo.branch, ..ProjectIdentity::new(key, root, name, repo.origin) }
}

/// Walks up from `path` (inclusive) to the filesystem root: one stat per level.
fn find_repo(path: &Path) -> Option<Repo> {
    path.ancestors().find_map(|top| {
        let dot_git = top.join(".git");
        let is_dir = fs::metadata(&dot_git).ok()?.is_dir();
        // A `.git` pointing nowhere still marks where the user's checkout begins; git would refuse
        // to run here, but a hook must still file the work somewhere stable.
        let (key_root, origin, branch) =
            read_repo(top, &dot_git, is_dir).unwrap_or((top.into(), None, None));
        Some(Repo { top: top.into(), key_root, origin, branch })
    })
}

/// Reads the key root, origin and checked-out branch of the repository whose `.git` is
/// `dot_git`.
fn read_repo(
    top: &Path,
    dot_git: &Path,
    is_dir: bool,
) -> Option<(PathBuf, Option<String>, Option<String>)> {
    let git_dir = if is_dir {
        dot_git.to_path_buf()
    } else {
        // A `gitdir: <path>` file; relative paths are relative to the directory holding it.
        let text = read_small(dot_git)?;
        let target = text.strip_prefix("gitdir:")?.trim();
        lexical_normalize(&top.join(target))
    };
    if !git_dir.is_dir() {
        return None;
    }
    // A linked worktree's own gitdir holds its own HEAD: each worktree has its branch.
    let branch = read_small(&git_dir.join("HEAD")).and_then(|head| head_branch(&head));
    // A linked worktree's gitdir names the shared repository in `commondir`; config lives there.
    let common = match read_small(&git_dir.join("commondir")) {
        Some(rel) if !rel.trim_end().is_empty() => lexical_normalize(&git_dir.join(rel.trim_end())),
        _ => git_dir,
    };
    let config = GitConfig::parse(&read_small(&common.join("config")).unwrap_or_default());
    let key_root = if common == dot_git {
        top.to_path_buf()
    } else if let Some(parent) = common.parent().filter(|_| common.ends_with(".git")) {
        real_path(parent)
    } else if let Some(worktree) = &config.worktree {
        // Submodules keep their repository in `.git/modules/<name>` and name the checkout here.
        real_path(&common.join(worktree))
    } else {
        // Bare or `--separate-git-dir` repositories: the shared directory is the only name every
        // worktree agrees on.
        real_path(&common)
    };
    let origin = config.origin_url.and_then(|url| {
        // Relative local remotes are relative to the checkout; resolving them keeps unrelated
        // repositories that all say `origin = ../lib` apart.
        if url.starts_with("./") || url.starts_with("../") {
            normalize_origin(&lexical_normalize(&top.join(&url)).to_string_lossy())
        } else {
            normalize_origin(&url)
        }
    });
    Some((key_root, origin, branch))
}

/// The branch a `HEAD` file names (`ref: refs/heads/<branch>`); `None` for a detached head.
pub fn head_branch(head: &str) -> Option<String> {
    let name = head.trim().strip_prefix("ref:")?.trim().strip_prefix("refs/heads/")?;
    (!name.is_empty() && !name.contains(char::is_control)).then(|| name.to_owned())
}

fn read_small(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    let mut file = fs::File::open(path).ok()?.take(MAX_GIT_FILE_BYTES);
    file.read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The two keys identity needs from a git config file.
#[derive(Debug, Default)]
struct GitConfig {
    origin_url: Option<String>,
    worktree: Option<String>,
}

impl GitConfig {
    /// Parses the part of git's INI dialect that git writes and people hand-edit: `[section "sub"]`
    /// and legacy `[section.sub]` headers, case-insensitive names, `#`/`;` comments, quoted values.
    /// `[include]` files, `insteadOf` rewrites and `\` continuations are not followed: an origin is
    /// written plainly in the repository's own config.
    fn parse(text: &str) -> Self {
        let mut config = Self::default();
        let mut section = None;
        for line in text.lines() {
            let mut line = line.trim();
            if let Some(header) = line.strip_prefix('[') {
                // A malformed header hides its keys rather than filing them under the last section.
                (section, line) = parse_header(header).map_or((None, ""), |(s, r)| (Some(s), r));
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let in_origin =
                matches!(&section, Some((n, Some(s))) if n == "remote" && s == "origin");
            // Fetch and `git remote get-url` use the first url of a multi-url remote.
            if in_origin && key == "url" && config.origin_url.is_none() {
                config.origin_url = Some(unquote(value));
            } else if matches!(&section, Some((n, None)) if n == "core") && key == "worktree" {
                config.worktree = Some(unquote(value));
            }
        }
        config
    }
}

/// Parses a header after its `[` into (lowercased name, subsection) and the rest of the line.
fn parse_header(header: &str) -> Option<((String, Option<String>), &str)> {
    let (inside, rest) = header.split_once(']')?;
    if let Some((name, quoted)) = header.split_once('"').filter(|_| inside.contains('"')) {
        let mut sub = String::new();
        let mut chars = quoted.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i + 1,
                (_, '\\') => sub.extend(chars.next().map(|(_, c)| c)),
                (_, c) => sub.push(c),
            }
        };
        let rest = quoted[end..].trim_start().strip_prefix(']')?;
        return Some(((name.trim().to_ascii_lowercase(), Some(sub)), rest));
    }
    let inside = inside.trim().to_ascii_lowercase();
    // The legacy `[remote.origin]` spelling has a case-insensitive subsection.
    let section = match inside.split_once('.') {
        Some((name, sub)) => (name.to_owned(), Some(sub.to_owned())),
        None => (inside, None),
    };
    Some((section, rest))
}

/// A value as git reads it: quotes removed, escapes applied, a comment cut outside quotes, and
/// unquoted whitespace trimmed at both ends.
fn unquote(raw: &str) -> String {
    let (mut value, mut quoted, mut kept) = (String::new(), false, 0);
    let mut chars = raw.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => break,
            '\\' => match chars.next() {
                Some('n') => value.push('\n'),
                Some('t') => value.push('\t'),
                Some(other) => value.push(other),
                None => break,
            },
            _ => value.push(c),
        }
        if quoted || !c.is_whitespace() {
            kept = value.len();
        }
    }
    value.truncate(kept);
    value
}

fn path_key(root: &Path) -> String {
    format!("path:{}", root.display())
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into())
}

/// Realpath, or for a path that no longer exists, the realpath of its nearest existing ancestor
/// joined with the lexically normalized rest, so a deleted cwd still lands in its repository.
fn real_path(path: &Path) -> PathBuf {
    let cwd = || std::env::current_dir().ok();
    let absolute = match path.is_relative().then(cwd).flatten() {
        Some(dir) => dir.join(path),
        None => path.to_path_buf(),
    };
    if let Ok(real) = fs::canonicalize(&absolute) {
        return real;
    }
    let normalized = lexical_normalize(&absolute);
    for ancestor in normalized.ancestors().skip(1) {
        if let (Ok(real), Ok(rest)) =
            (fs::canonicalize(ancestor), normalized.strip_prefix(ancestor))
        {
            return real.join(rest);
        }
    }
    normalized
}

/// Removes `.` and applies `..` without touching the disk; `..` never climbs above the root.
fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match (component, out.components().next_back()) {
            (Component::CurDir, _) => {}
            (Component::ParentDir, Some(Component::Normal(_))) => drop(out.pop()),
            (Component::ParentDir, Some(Component::RootDir | Component::Prefix(_))) => {}
            (other, _) => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::Command;

    /// A canonical temp directory, with an isolated HOME for the real `git` binary.
    struct Fixture {
        _tmp: tempfile::TempDir,
        base: PathBuf,
    }

    impl Fixture {
        fn new() -> Self {
            let tmp = tempfile::tempdir().expect("create tempdir");
            let base = fs::canonicalize(tmp.path()).expect("canonicalize tempdir");
            Self { _tmp: tmp, base }
        }

        fn dir(&self, rel: &str) -> PathBuf {
            let path = self.base.join(rel);
            fs::create_dir_all(&path).expect("create dir");
            path
        }

        fn git(&self, dir: &Path, args: &[&str]) {
            let home = self.dir("home");
            let config = "user.name=t user.email=t@t init.defaultBranch=main commit.gpgsign=false \
                protocol.file.allow=always";
            let output = Command::new("git")
                .arg("-C")
                .arg(dir)
                .args(config.split(' ').flat_map(|c| ["-c", c]))
                .args(args)
                .envs([("GIT_CONFIG_NOSYSTEM", Path::new("1")), ("HOME", &home)])
                .env("XDG_CONFIG_HOME", &home)
                .env_remove("GIT_DIR")
                .env_remove("GIT_WORK_TREE")
                .output()
                .expect("run git");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(output.status.success(), "git {args:?} failed: {stderr}");
        }

        /// `git init` at `rel` with one commit, which worktrees and submodules need.
        fn repo(&self, rel: &str, origin: Option<&str>) -> PathBuf {
            let dir = self.dir(rel);
            self.git(&dir, &["init", "-q"]);
            self.git(&dir, &["commit", "-q", "--allow-empty", "-m", "init"]);
            if let Some(url) = origin {
                self.git(&dir, &["remote", "add", "origin", url]);
            }
            dir
        }

        /// Resolves `rel` and renders the identity as `key | root | name | origin`, with the
        /// temp directory shown as `$T`.
        fn show(&self, rel: &str, registered: &[&str]) -> String {
            let roots: Vec<_> = registered.iter().map(|r| self.base.join(r)).collect();
            let id = resolve(&self.base.join(rel), &roots);
            let origin = id.origin.as_deref().unwrap_or("-");
            let text = format!("{} | {} | {} | {origin}", id.key, id.root.display(), id.name);
            text.replace(&self.base.display().to_string(), "$T")
        }
    }

    fn write_file(path: &Path, contents: &str) {
        let mut file = fs::File::create(path).expect("create file");
        file.write_all(contents.as_bytes()).expect("write file");
    }

    #[test]
    fn plain_dir_without_git_is_keyed_by_its_realpath() {
        let fx = Fixture::new();
        fx.dir("plain/work");
        let expected = "path:$T/plain/work | $T/plain/work | work | -";
        assert_eq!(fx.show("plain/work/./../work", &[]), expected);
    }

    #[test]
    fn subdirectory_of_a_repo_resolves_to_its_top_level() {
        let fx = Fixture::new();
        fx.repo("app", None);
        fx.dir("app/src/deep");
        assert_eq!(fx.show("app/src/deep", &[]), "path:$T/app | $T/app | app | -");
        assert_eq!(fx.show("app", &[]), fx.show("app/src/deep", &[]));
    }

    #[cfg(unix)]
    #[test]
    fn symlink_to_a_repo_subdir_is_the_same_project_as_the_real_path() {
        let fx = Fixture::new();
        fx.repo("app", Some("git@github.com:Acme/App.git"));
        std::os::unix::fs::symlink(fx.dir("app/src"), fx.base.join("link")).expect("symlink");
        let expected = "git:github.com/acme/app | $T/app | app | github.com/acme/app";
        assert_eq!(fx.show("link", &[]), expected);
        assert_eq!(fx.show("app/src", &[]), expected);
    }

    #[test]
    fn linked_worktree_shares_the_key_of_the_main_checkout() {
        let fx = Fixture::new();
        let main = fx.repo("app", None);
        let wt = fx.base.join("app-feature");
        let wt = wt.to_str().expect("utf-8 path");
        fx.git(&main, &["worktree", "add", "-q", "-b", "feature", wt]);
        fx.dir("app-feature/src");
        let expected = "path:$T/app | $T/app-feature | app-feature | -";
        assert_eq!(fx.show("app-feature/src", &[]), expected);
    }

    #[test]
    fn clones_with_equivalent_origins_share_one_project() {
        let fx = Fixture::new();
        fx.repo("one/App", Some("git@github.com:Acme/App.git"));
        fx.repo("two/app-copy", Some("https://github.com/acme/app"));
        let expected = "git:github.com/acme/app | $T/one/App | app | github.com/acme/app";
        assert_eq!(fx.show("one/App", &[]), expected);
        let expected = "git:github.com/acme/app | $T/two/app-copy | app | github.com/acme/app";
        assert_eq!(fx.show("two/app-copy", &[]), expected);
    }

    #[test]
    fn registered_root_does_not_claim_a_look_alike_sibling() {
        let fx = Fixture::new();
        fx.dir("w/app/src");
        fx.dir("w/app-b/src");
        let expected = "path:$T/w/app-b/src | $T/w/app-b/src | src | -";
        assert_eq!(fx.show("w/app-b/src", &["w/app"]), expected);
        // Registered roots are realpath-ed too, so a root spelled through `..` still matches.
        let expected = "path:$T/w/app | $T/w/app | app | -";
        assert_eq!(fx.show("w/app/src", &["w/app-b/../app"]), expected);
    }

    #[test]
    fn nested_registered_roots_the_longest_wins() {
        let fx = Fixture::new();
        fx.dir("mono/services/api/src");
        fx.dir("mono/web");
        let roots = ["mono", "mono/services/api"];
        let expected = "path:$T/mono/services/api | $T/mono/services/api | api | -";
        assert_eq!(fx.show("mono/services/api/src", &roots), expected);
        assert_eq!(fx.show("mono/web", &roots), "path:$T/mono | $T/mono | mono | -");
    }

    #[test]
    fn registered_root_inside_a_repo_beats_the_git_top_level() {
        let fx = Fixture::new();
        fx.repo("mono", Some("https://github.com/Acme/Mono.git"));
        fx.dir("mono/services/api/src");
        let expected = "git:github.com/acme/mono//services/api | $T/mono/services/api | api | \
            github.com/acme/mono";
        assert_eq!(fx.show("mono/services/api/src", &["mono/services/api"]), expected);
        // Registering the top-level itself changes nothing, so earlier data keeps its key.
        assert_eq!(fx.show("mono/services", &["mono"]), fx.show("mono", &[]));

        fx.repo("plain", None);
        fx.dir("plain/lib");
        let expected = "path:$T/plain/lib | $T/plain/lib | lib | -";
        assert_eq!(fx.show("plain/lib", &["plain/lib"]), expected);
    }

    #[test]
    fn deleted_cwd_falls_back_to_its_lexical_path() {
        let fx = Fixture::new();
        fx.repo("app", None);
        fx.dir("app/tmp/gone");
        fs::remove_dir_all(fx.base.join("app/tmp")).expect("remove");
        assert_eq!(fx.show("app/tmp/gone", &[]), "path:$T/app | $T/app | app | -");

        fs::remove_dir(fx.dir("plain/gone")).expect("remove");
        let expected = "path:$T/plain/gone | $T/plain/gone | gone | -";
        assert_eq!(fx.show("plain/gone/x/../.", &[]), expected);
    }

    #[test]
    fn broken_git_files_never_panic() {
        let fx = Fixture::new();
        fx.dir("missing/src");
        write_file(&fx.base.join("missing/.git"), "gitdir: ../nowhere/.git/worktrees/x\n");
        let expected = "path:$T/missing | $T/missing | missing | -";
        assert_eq!(fx.show("missing/src", &[]), expected);

        write_file(&fx.dir("garbage").join(".git"), "\u{0}\u{1}gitdir:");
        assert_eq!(fx.show("garbage", &[]), "path:$T/garbage | $T/garbage | garbage | -");

        let bad = fx.dir("bad/.git");
        write_file(&bad.join("config"), "[remote \"origin\n\u{0}url = = \\");
        write_file(&bad.join("commondir"), "\n");
        assert_eq!(fx.show("bad", &[]), "path:$T/bad | $T/bad | bad | -");
    }

    #[test]
    fn submodule_reads_its_own_config_through_a_relative_gitdir() {
        let fx = Fixture::new();
        let lib = fx.repo("lib", None);
        let sup = fx.repo("super", None);
        let lib = lib.to_str().expect("utf-8 path");
        fx.git(&sup, &["submodule", "add", "-q", lib, "vendor/lib"]);
        let gitfile = read_small(&sup.join("vendor/lib/.git")).unwrap_or_default();
        assert!(gitfile.starts_with("gitdir: ../"), "{gitfile}");
        let expected = "git:$T/lib | $T/super/vendor/lib | lib | $T/lib";
        assert_eq!(fx.show("super/vendor/lib", &[]), expected);
        // Without an origin, `core.worktree` in `.git/modules/…` names the checkout for the key.
        fx.git(&sup.join("vendor/lib"), &["remote", "remove", "origin"]);
        let expected = "path:$T/super/vendor/lib | $T/super/vendor/lib | lib | -";
        assert_eq!(fx.show("super/vendor/lib", &[]), expected);
    }

    #[test]
    fn config_parser_reads_gits_dialect() {
        let text = "# comment\n[Remote \"upstream\"]\n\turl = https://x/up\n\
            [remote \"origin\"] ; comment\n\tURL = \"git@github.com:\"Acme/App.git  # c\n\
            url = https://second/ignored\n[core] worktree = \"../../sub dir\" \n";
        let config = GitConfig::parse(text);
        let parsed = (config.origin_url.as_deref(), config.worktree.as_deref());
        assert_eq!(parsed, (Some("git@github.com:Acme/App.git"), Some("../../sub dir")));
        let legacy = GitConfig::parse("[remote.ORIGIN]\nurl=/srv/repo.git");
        assert_eq!(legacy.origin_url.as_deref(), Some("/srv/repo.git"));
        // Quoted subsections are case-sensitive: `Origin` is another remote.
        assert_eq!(GitConfig::parse("[remote \"Origin\"]\nurl = x:y").origin_url, None);
    }

    #[test]
    fn contains_path_respects_path_boundaries() {
        let cases = [
            ("/w/app", "/w/app", true),
            ("/w/app", "/w/app/src", true),
            ("/w/app/", "/w/app/src/", true),
            ("/w/app", "/w/app-b", false),
            ("/w/app", "/w/app-b/src", false),
            ("/w/app", "/w", false),
            ("/w/app", "/w/app/../app-b", false),
            ("/", "/anything", true),
            ("", "/w/app", false),
        ];
        for (root, path, expected) in cases {
            let got = contains_path(Path::new(root), Path::new(path));
            assert_eq!(got, expected, "{root} contains {path}");
        }
    }

    #[test]
    fn normalize_origin_table() {
        // input => expected, `-` for None.
        let table = "
            git@github.com:Owner/Repo.git                      => github.com/owner/repo
            https://github.com/owner/repo                      => github.com/owner/repo
            https://user:token@github.com/owner/repo.git/      => github.com/owner/repo
            ssh://git@github.com:22/owner/repo.git             => github.com/owner/repo
            git://github.com/owner/repo                        => github.com/owner/repo
            ssh://git@GitHub.com:443/Owner/Repo.git            => github.com/owner/repo
            HTTPS://GitLab.com/Group/Sub/Proj.git              => gitlab.com/group/sub/proj
            https://ghp_x@Git.Example.com:8443/Team/Tool.git   => git.example.com:8443/Team/Tool
            http://git.example.com:80/a/b/                     => git.example.com/a/b
            https://git.example.com/a/b.git?token=s3cret#frag  => git.example.com/a/b
            git+ssh://me@[::1]:2222/srv/x.git                  => [::1]:2222/srv/x
            me@host.internal:/srv/git/Tool.git                 => host.internal/srv/git/Tool
            ssh://host.internal/srv/git/Tool                   => host.internal/srv/git/Tool
            /srv/git/app.git/                                  => /srv/git/app
            /home/me/src/app/.git                              => /home/me/src/app
            file:///srv/git/./app.git                          => /srv/git/app
            file://localhost/srv/git/app                       => /srv/git/app
            ../sibling/app.git                                 => ../sibling/app
            not-a-url                                          => -
            https://                                           => -
            https://github.com                                 => -
            git@github.com:                                    => -
            ::::                                               => -
            https://user:pa/ss@github.com/o/r                  => -
            file://server/share/repo                           => -
            /                                                  => -
        ";
        for row in table.lines().filter(|l| !l.trim().is_empty()) {
            let (input, expected) = row.split_once("=>").expect("row has =>");
            let expected = Some(expected.trim()).filter(|e| *e != "-");
            let got = normalize_origin(input.trim());
            assert_eq!(got.as_deref(), expected, "input: {input}");
        }
        for garbage in ["", "   ", "not a url", "https://exa mple.com/o/r", "a\u{0}b"] {
            assert_eq!(normalize_origin(garbage), None, "input: {garbage:?}");
        }
        let padded = normalize_origin("  https://github.com/o/r ");
        assert_eq!(padded.as_deref(), Some("github.com/o/r"));
    }
}
