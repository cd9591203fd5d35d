//! Anchors: the files an observation or memory rests on, and whether they still hold.
//!
//! The work pass anchors each new observation to the files its session changed and the files
//! its text names that exist in the project, with a fingerprint of each (size, modification
//! time, SHA-256) and the commit checked out then; a memory takes the anchors of the
//! observations it came from, and the files its own text names. Every injection (the
//! briefing, prompt-time recall, file context) and every read (search, `show`, the MCP tools)
//! checks the anchors of what it hands out against the asking checkout's working tree:
//! **fresh** (unchanged), **changed** (marked "changed since" with the date, and ranked
//! lower) or **gone** (left out of injected context, still found by search, marked).
//!
//! A check is a `stat` per file; a file whose size or time differ is hashed once, and what
//! that found is kept in the store so the next check is a `stat` again. No `git` runs here,
//! so the hooks may check. When a later session reads or changes a file whose anchor changed,
//! the anchor is renewed: the item held up against the file as it is now.
//!
//! Must not: run processes, fail an injection (an error means "not checked", never "gone").

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::store::anchors::{AnchorRow, NewAnchor};
use crate::store::recall::ItemKind;
use crate::store::{Store, StoreError};

/// How much of a file its fingerprint reads; the size stands for the rest.
const HASH_BYTES: u64 = 8 << 20;

/// Files one item is anchored to at most.
const MAX_ANCHORS: usize = 8;

/// Items anchored per work pass, of each kind.
const PER_PASS: usize = 2000;

/// The size and time a check keeps for a file it found gone.
const GONE: i64 = -1;

/// A file modified this long after its session's last event changed after the session.
const SLACK_MS: i64 = 2000;

/// What a check of one anchor found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Fresh,
    Changed,
    Gone,
}

/// One anchor as `show --json` and the tools report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Checked {
    pub path: String,
    pub state: State,
    /// When it changed (the file's modification time) or was found gone; `None` when fresh.
    pub since: Option<i64>,
}

/// The anchors of an item, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Anchors(pub Vec<Checked>);

impl Anchors {
    /// The worst state among its anchors, with the earliest time it was reached; `None` when
    /// every file is as the item knew it (or it has none).
    pub fn worst(&self) -> Option<(State, i64)> {
        let of =
            |state: State| self.0.iter().filter(|c| c.state == state).filter_map(|c| c.since).min();
        of(State::Gone)
            .map(|at| (State::Gone, at))
            .or_else(|| of(State::Changed).map(|at| (State::Changed, at)))
    }

    /// Whether a file it rests on no longer exists: left out of injected context.
    pub fn gone(&self) -> bool {
        self.0.iter().any(|c| c.state == State::Gone)
    }

    /// The mark shown after an item, in the output's language: `changed since 2026-12-01`,
    /// `src/pay.py gone since …`; `None` when fresh.
    pub fn mark(&self, zh: bool, day: impl Fn(i64) -> String) -> Option<String> {
        let (state, at) = self.worst()?;
        let path = self.0.iter().find(|c| c.state == state).map_or("", |c| c.path.as_str());
        Some(match (state, zh) {
            (State::Gone, false) => format!("{path} gone since {}", day(at)),
            (State::Gone, true) => format!("{path} 已于 {} 删除", day(at)),
            (_, false) => format!("{path} changed since {}", day(at)),
            (_, true) => format!("{path} 自 {} 起已改动", day(at)),
        })
    }

    /// How much a search or recall score keeps: an item whose file changed may be out of
    /// date, one whose file is gone more so.
    pub fn weight(&self) -> f64 {
        match self.worst() {
            None => 1.0,
            Some((State::Changed, _)) => 0.8,
            Some(_) => 0.6,
        }
    }
}

/// A file's fingerprint now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    pub size: i64,
    pub mtime_ms: i64,
    pub hash: String,
}

/// A file's size and modification time, without reading it.
fn stat(path: &Path) -> Option<(i64, i64)> {
    let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    Some((meta.len() as i64, mtime))
}

/// Reads `path` and fingerprints it; `None` when it is not a readable file.
pub fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let (size, mtime_ms) = stat(path)?;
    let mut hasher = Sha256::new();
    let mut file = std::fs::File::open(path).ok()?.take(HASH_BYTES);
    let mut buffer = [0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buffer).ok()?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    hasher.update(size.to_le_bytes());
    Some(Fingerprint { size, mtime_ms, hash: hex(hasher) })
}

/// The fingerprint of a file's bytes held in memory (a blob read from git), as [`fingerprint`]
/// would take it from disk; `mtime_ms` is what the item knew of its time (0: nothing, so the
/// first check hashes the file).
fn fingerprint_bytes(bytes: &[u8], mtime_ms: i64) -> Fingerprint {
    let size = bytes.len() as i64;
    let mut hasher = Sha256::new();
    hasher.update(&bytes[..bytes.len().min(HASH_BYTES as usize)]);
    hasher.update(size.to_le_bytes());
    Fingerprint { size, mtime_ms, hash: hex(hasher) }
}

fn hex(hasher: Sha256) -> String {
    crate::text::hex(&hasher.finalize()[..16])
}

/// Where an anchor's file lies for a checkout whose top level is `root`.
fn file_of(anchor_path: &str, root: Option<&Path>) -> Option<PathBuf> {
    let path = Path::new(anchor_path);
    if path.is_absolute() {
        return Some(path.to_owned());
    }
    Some(root?.join(path))
}

/// Where a read is asked from: a project's checkout (a linked worktree has its own files).
#[derive(Debug, Clone, Copy)]
pub struct Checkout<'a> {
    pub project_id: Option<i64>,
    pub root: &'a Path,
}

/// Checks the anchors of `items` against the working tree: the asking `checkout`'s for the
/// anchors of its project (another project's anchors are not checked there: a global memory
/// learned elsewhere says nothing of this tree), or, without one, each project's stored top
/// level. What a hash found is kept; a store that cannot be read leaves items unchecked.
pub fn check(
    store: &Store,
    checkout: Option<Checkout<'_>>,
    items: &[(ItemKind, i64)],
    now_ms: i64,
) -> HashMap<(ItemKind, i64), Anchors> {
    let rows = match store.anchors_of(items) {
        Ok(rows) => rows,
        Err(err) => {
            tracing::debug!(%err, "anchors not checked");
            return HashMap::new();
        }
    };
    let mut roots: HashMap<i64, Option<PathBuf>> = HashMap::new();
    let mut found: HashMap<(ItemKind, i64), Anchors> = HashMap::new();
    for row in rows {
        let root = match (checkout, row.project_id) {
            (Some(c), Some(id)) if c.project_id == Some(id) => Some(c.root.to_owned()),
            (Some(_), _) => None,
            (None, Some(id)) => roots
                .entry(id)
                .or_insert_with(|| store.project_root(id).ok().flatten().map(PathBuf::from))
                .clone(),
            (None, None) => None,
        };
        // A relative path with no checkout of its project here is not checked.
        let Some(file) = file_of(&row.path, root.as_deref()) else { continue };
        if root.as_deref().is_some_and(|r| !r.is_dir()) {
            continue;
        }
        let checked = check_one(store, &row, &file, now_ms);
        found.entry((row.kind, row.id)).or_default().0.push(checked);
    }
    found
}

/// One anchor against its file: a stat, and a hash only when the stat differs from both what
/// the item knew and what the last check saw.
fn check_one(store: &Store, row: &AnchorRow, file: &Path, now_ms: i64) -> Checked {
    let checked = |state, since| Checked { path: row.path.clone(), state, since };
    let Some((size, mtime)) = stat(file) else {
        // Kept once, so that "gone since" stays the day it was first found gone.
        if row.checked_size == Some(GONE) {
            return checked(State::Gone, Some(row.changed_at.unwrap_or(now_ms)));
        }
        if let Err(err) = store.note_anchor_check(row, GONE, GONE, Some(now_ms)) {
            tracing::debug!(%err, "anchor check not kept");
        }
        return checked(State::Gone, Some(now_ms));
    };
    if row.changed_at.is_none() && (size, mtime) == (row.size, row.mtime_ms) {
        return checked(State::Fresh, None);
    }
    if (Some(size), Some(mtime)) == (row.checked_size, row.checked_mtime) {
        return match row.changed_at {
            Some(at) => checked(State::Changed, Some(at)),
            None => checked(State::Fresh, None),
        };
    }
    if row.changed_at.is_some() && row.checked_size.is_none() {
        // Changed when it was anchored (the file moved on after its session), not checked since.
        if (size, mtime) == (row.size, row.mtime_ms) {
            return checked(State::Changed, row.changed_at);
        }
    }
    let Some(now) = fingerprint(file) else {
        return checked(State::Gone, Some(now_ms));
    };
    // Back to what the item knew (a change undone) is fresh again. An anchor made after the
    // file had already moved on knows no hash of the item's version, and stays changed.
    let changed_at = if !row.hash.is_empty() && now.hash == row.hash {
        None
    } else {
        Some(match row.changed_at {
            Some(at) if row.checked_size != Some(GONE) => at,
            _ => now.mtime_ms,
        })
    };
    if let Err(err) = store.note_anchor_check(row, now.size, now.mtime_ms, changed_at) {
        tracing::debug!(%err, "anchor check not kept");
    }
    match changed_at {
        Some(at) => checked(State::Changed, Some(at)),
        None => checked(State::Fresh, None),
    }
}

/// What anchoring did in one work pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub anchored: usize,
    pub renewed: usize,
}

/// Anchors the observations and memories made since the last pass, and renews the anchors a
/// later session touched. For the work pass.
pub fn run(store: &mut Store, now_ms: i64) -> Result<Report, StoreError> {
    let mut report = Report::default();
    let mut looked = Looked::default();
    let observations = store.unanchored_observations(PER_PASS)?;
    if let Some(last) = observations.last().map(|o| o.id) {
        let mut anchors = Vec::new();
        let mut touched: Vec<Touched> = Vec::new();
        for o in &observations {
            let Some(root) = top_level(o.root.as_deref(), o.cwd.as_deref()) else { continue };
            let commit = looked.commit(&root);
            let named = named_files(&o.text);
            let paths = o.files_modified.iter().map(String::as_str).chain(named.iter().copied());
            // A checkout that has moved to another branch since holds another version of the
            // files: the session's branch holds its own.
            let moved = o.branch.as_deref().filter(|b| looked.branch(&root).as_deref() != Some(*b));
            if let Some(branch) = moved {
                for (path, print) in
                    files_in(&root, o.cwd.as_deref(), Source::Branch(branch), &mut looked, paths)
                {
                    anchors.push((o.id, new_anchor(o.project_id, path, print, &None, None)));
                }
                continue;
            }
            let as_left = |print: &Fingerprint| print.mtime_ms <= o.session_last_at + SLACK_MS;
            for (path, print) in files_in(&root, o.cwd.as_deref(), Source::Tree, &mut looked, paths)
            {
                let changed_at = (!as_left(&print)).then_some(print.mtime_ms);
                if changed_at.is_none() {
                    touched.push((o.id, o.project_id, path.clone(), print.clone(), commit.clone()));
                }
                anchors.push((o.id, new_anchor(o.project_id, path, print, &commit, changed_at)));
            }
            let read = o.files_read.iter().map(String::as_str);
            for (path, print) in files_in(&root, o.cwd.as_deref(), Source::Tree, &mut looked, read)
            {
                if as_left(&print) {
                    touched.push((o.id, o.project_id, path, print, commit.clone()));
                }
            }
        }
        report.anchored += anchors.len();
        store.save_anchors(ItemKind::Observation, &anchors, last, now_ms)?;
        report.renewed = renew(store, &touched, now_ms)?;
    }
    let memories = store.unanchored_memories(PER_PASS)?;
    if let Some(last) = memories.last().map(|m| m.id) {
        let mut anchors = Vec::new();
        for m in &memories {
            let sources: Vec<(ItemKind, i64)> = m
                .sources
                .iter()
                .filter_map(|s| s.strip_prefix('o')?.parse().ok())
                .map(|id| (ItemKind::Observation, id))
                .collect();
            let mut paths = Vec::new();
            for a in store.anchors_of(&sources)? {
                if paths.len() < MAX_ANCHORS && !paths.contains(&a.path) {
                    paths.push(a.path.clone());
                    anchors.push((
                        m.id,
                        NewAnchor {
                            project_id: a.project_id,
                            path: a.path,
                            size: a.size,
                            mtime_ms: a.mtime_ms,
                            hash: a.hash,
                            commit: a.commit,
                            changed_at: a.changed_at,
                        },
                    ));
                }
            }
            // A memory told in words ("`src/pay.py` retries twice") rests on the files it names.
            let Some(root) = m.root.as_deref().map(PathBuf::from).filter(|r| r.is_dir()) else {
                continue;
            };
            let commit = looked.commit(&root);
            let named = named_files(&m.text);
            for (path, print) in
                files_in(&root, None, Source::Tree, &mut looked, named.iter().copied())
            {
                if paths.len() < MAX_ANCHORS && !paths.contains(&path) {
                    paths.push(path.clone());
                    let changed_at =
                        (print.mtime_ms > m.created_at + SLACK_MS).then_some(print.mtime_ms);
                    anchors
                        .push((m.id, new_anchor(m.project_id, path, print, &commit, changed_at)));
                }
            }
        }
        report.anchored += anchors.len();
        store.save_anchors(ItemKind::Memory, &anchors, last, now_ms)?;
    }
    Ok(report)
}

fn new_anchor(
    project_id: Option<i64>,
    path: String,
    print: Fingerprint,
    commit: &Option<String>,
    changed_at: Option<i64>,
) -> NewAnchor {
    NewAnchor {
        project_id,
        path,
        size: print.size,
        mtime_ms: print.mtime_ms,
        // The file as it is now is not the item's version when it had already changed.
        hash: if changed_at.is_some() { String::new() } else { print.hash },
        commit: commit.clone(),
        changed_at,
    }
}

/// A file a new observation's session read or changed, as that session left it: the
/// observation, its project, the file's path, its fingerprint and the commit checked out.
type Touched = (i64, Option<i64>, String, Fingerprint, Option<String>);

/// Renews the anchors of earlier items on the files a later session read or changed: it
/// worked with each file as it is, and the items still stand (one it contradicted was
/// superseded, and is shown no more).
fn renew(store: &mut Store, touched: &[Touched], now_ms: i64) -> Result<usize, StoreError> {
    let mut renewed = 0;
    for (observation, project_id, path, print, commit) in touched {
        for anchor in store.anchors_at(*project_id, path, *observation)? {
            if anchor.hash == print.hash && anchor.changed_at.is_none() {
                continue;
            }
            let new = new_anchor(*project_id, path.clone(), print.clone(), commit, None);
            store.renew_anchor(&anchor, &new, now_ms)?;
            renewed += 1;
        }
    }
    Ok(renewed)
}

/// The top level to anchor against: the checkout the session worked in (a linked worktree
/// has its own), else the project's stored root; `None` when neither exists now.
fn top_level(root: Option<&str>, cwd: Option<&str>) -> Option<PathBuf> {
    let from_cwd = cwd
        .map(Path::new)
        .filter(|c| c.is_dir())
        .map(|c| crate::project::resolve(c, &[]).root)
        .filter(|top| root.is_none_or(|r| Path::new(r) == top || top.join(".git").exists()));
    from_cwd.or_else(|| root.map(PathBuf::from)).filter(|r| r.is_dir())
}

/// Where an item's files are read from: the working tree of its checkout, or, when that
/// checkout has since moved to another branch, the tip of the branch its session worked on.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    Tree,
    Branch(&'a str),
}

/// The files among `paths` (as an agent gave them: relative to its directory or to the top
/// level, or whole) that exist inside `root` (in `source`), each once, relative to `root`,
/// fingerprinted.
fn files_in<'a>(
    root: &Path,
    cwd: Option<&str>,
    source: Source<'_>,
    looked: &mut Looked,
    paths: impl Iterator<Item = &'a str>,
) -> Vec<(String, Fingerprint)> {
    let mut found: Vec<(String, Fingerprint)> = Vec::new();
    for path in paths {
        if found.len() >= MAX_ANCHORS {
            break;
        }
        let path = path.trim().trim_start_matches("./");
        if path.is_empty() || path.len() > 1024 {
            continue;
        }
        let candidates = [
            Some(PathBuf::from(path)).filter(|p| p.is_absolute()),
            cwd.map(|c| Path::new(c).join(path)).filter(|_| !path.starts_with('/')),
            Some(root.join(path)).filter(|_| !path.starts_with('/')),
        ];
        for candidate in candidates.into_iter().flatten() {
            let Ok(relative) = candidate.strip_prefix(root) else { continue };
            let Some(relative) = normalized(relative).filter(|r| !r.is_empty()) else { continue };
            if found.iter().any(|(p, _)| *p == relative) {
                break;
            }
            let print = looked.print(root, source, &candidate, &relative);
            if let Some(print) = print {
                found.push((relative, print));
                break;
            }
        }
    }
    found
}

/// A relative path with `.` and `..` resolved, `/` between its parts; `None` when it climbs
/// out of where it starts.
fn normalized(relative: &Path) -> Option<String> {
    use std::path::Component;
    let mut parts: Vec<&str> = Vec::new();
    for part in relative.components() {
        match part {
            Component::Normal(name) => parts.push(name.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

/// Words of `text` that look like file paths (`src/pay.py`, `Cargo.toml`): a dot before a
/// short extension, or a slash; quotes and brackets around them dropped.
fn named_files(text: &str) -> Vec<&str> {
    let mut named: Vec<&str> = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || "`'\"()[]{}<>,;".contains(c)) {
        let word = word.trim_end_matches([':', '.', '!', '?']);
        let looks = match word.rsplit_once('.') {
            Some((stem, ext)) => {
                !stem.is_empty()
                    && (1..=8).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && ext.chars().any(|c| c.is_ascii_alphabetic())
            }
            None => false,
        };
        if looks && !word.contains("://") && !named.contains(&word) {
            named.push(word);
        }
    }
    named
}

/// What a pass has looked at already: the commit and branch of each checkout, and each file's
/// fingerprint (a history import anchors many items to the same files).
#[derive(Default)]
struct Looked {
    commits: HashMap<PathBuf, Option<String>>,
    branches: HashMap<PathBuf, Option<String>>,
    prints: HashMap<(Option<String>, PathBuf), Option<Fingerprint>>,
}

impl Looked {
    fn commit(&mut self, root: &Path) -> Option<String> {
        let root = root.to_owned();
        self.commits
            .entry(root.clone())
            .or_insert_with(|| crate::branch::head_commit(&root))
            .clone()
    }

    /// The branch the checkout at `root` is on now.
    fn branch(&mut self, root: &Path) -> Option<String> {
        self.branches
            .entry(root.to_owned())
            .or_insert_with(|| crate::project::resolve(root, &[]).branch)
            .clone()
    }

    /// The fingerprint of a file (`file` on disk, `relative` to `root`) as `source` holds it.
    fn print(
        &mut self,
        root: &Path,
        source: Source<'_>,
        file: &Path,
        relative: &str,
    ) -> Option<Fingerprint> {
        let key = match source {
            Source::Tree => (None, file.to_owned()),
            Source::Branch(branch) => (Some(branch.to_owned()), root.join(relative)),
        };
        self.prints
            .entry(key)
            .or_insert_with(|| match source {
                Source::Tree => fingerprint(file),
                Source::Branch(branch) => crate::branch::blob(root, branch, relative)
                    .map(|bytes| fingerprint_bytes(&bytes, 0)),
            })
            .clone()
    }
}

/// Active memories whose files changed or are gone, as each project's stored top level sees
/// them: the memories `tidy` and `review` say need a look, with what changed.
pub fn needing_a_look(store: &Store, now_ms: i64) -> Result<Vec<(i64, Anchors)>, StoreError> {
    let mut ids: Vec<i64> =
        store.active_memory_anchors(PER_PASS)?.into_iter().map(|a| a.id).collect();
    ids.dedup();
    let items: Vec<(ItemKind, i64)> = ids.iter().map(|id| (ItemKind::Memory, *id)).collect();
    let checked = check(store, None, &items, now_ms);
    Ok(ids
        .into_iter()
        .filter_map(|id| {
            let anchors = checked.get(&(ItemKind::Memory, id))?;
            anchors.worst().is_some().then(|| (id, anchors.clone()))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_that_look_like_files_are_named() {
        let text =
            "Fixed `src/pay.py` (retry) and Cargo.toml; see https://x.io/a.html, v1.2 or 3.5";
        assert_eq!(named_files(text), vec!["src/pay.py", "Cargo.toml"]);
    }

    #[allow(clippy::disallowed_methods)]
    fn write(path: &Path, text: &str) {
        std::fs::write(path, text).expect("write");
    }

    /// A store with project 1 at `root` and observation 1 anchored to `a.py` as `print`.
    fn anchored(root: &Path, print: Fingerprint, changed_at: Option<i64>) -> Store {
        let mut store = Store::open_in_memory().expect("store");
        store
            .conn()
            .execute(
                "INSERT INTO projects (id, key, name, root, created_at) VALUES (1, 'path:x', 'x', ?1, 0)",
                [root.to_string_lossy()],
            )
            .expect("project");
        let anchor = new_anchor(Some(1), "a.py".into(), print, &None, changed_at);
        store.save_anchors(ItemKind::Observation, &[(1, anchor)], 1, 0).expect("anchor");
        store
    }

    fn state(store: &Store, root: &Path) -> (State, Option<i64>) {
        let checkout = Checkout { project_id: Some(1), root };
        let found = check(store, Some(checkout), &[(ItemKind::Observation, 1)], 99);
        let first = &found[&(ItemKind::Observation, 1)].0[0];
        (first.state, first.since)
    }

    #[test]
    fn a_change_is_seen_kept_and_undone_and_a_deletion_keeps_its_day() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("a.py");
        write(&file, "one");
        let store = anchored(dir.path(), fingerprint(&file).expect("print"), None);
        assert_eq!(state(&store, dir.path()).0, State::Fresh);
        write(&file, "two, longer");
        assert_eq!(state(&store, dir.path()).0, State::Changed);
        assert_eq!(state(&store, dir.path()).0, State::Changed, "kept: a stat, no hash");
        write(&file, "one");
        assert_eq!(state(&store, dir.path()), (State::Fresh, None), "undone");
        std::fs::remove_file(&file).expect("delete");
        assert_eq!(state(&store, dir.path()), (State::Gone, Some(99)));
        let again = check(&store, None, &[(ItemKind::Observation, 1)], 500);
        assert_eq!(
            again[&(ItemKind::Observation, 1)].0[0].since,
            Some(99),
            "the first day it was gone"
        );
    }

    #[test]
    fn a_file_that_moved_on_before_it_was_anchored_stays_changed() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("a.py");
        write(&file, "later");
        let store = anchored(dir.path(), fingerprint(&file).expect("print"), Some(42));
        assert_eq!(state(&store, dir.path()), (State::Changed, Some(42)));
        write(&file, "later still");
        assert_eq!(state(&store, dir.path()), (State::Changed, Some(42)));
        assert_eq!(check(&store, None, &[(ItemKind::Memory, 1)], 0).len(), 0, "nothing else");
    }

    #[test]
    fn the_worst_anchor_marks_the_item() {
        let anchors = Anchors(vec![
            Checked { path: "a.py".into(), state: State::Fresh, since: None },
            Checked { path: "b.py".into(), state: State::Changed, since: Some(5) },
        ]);
        assert_eq!(anchors.worst(), Some((State::Changed, 5)));
        let mark = anchors.mark(false, |ms| format!("day{ms}")).expect("mark");
        assert_eq!(mark, "b.py changed since day5");
        assert!(!anchors.gone());
        assert!(anchors.weight() < 1.0);
        assert_eq!(Anchors::default().mark(false, |_| String::new()), None);
    }
}
