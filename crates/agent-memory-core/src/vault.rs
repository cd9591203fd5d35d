//! The Obsidian vault: reviewed long-term memories (L2 project, L3 global) as Markdown notes a
//! person edits, kept in step with the store in both directions; the vault is their source of
//! truth.
//!
//! Layout under the configured folder: `<Project>/<Kind>/m<id> <first words>.md` (`Global/` for
//! L3), one note per active memory: YAML front matter (`id`, `kind`, `tier`, `project`,
//! `importance`, `created`, `updated`, `sources`) and the memory's text as the body. `Inbox/`
//! holds one note a day listing that day's candidates as checkboxes; a ticked box approves the
//! candidate at the next sync (a preference into global memory, anything else into its project).
//!
//! One sync ([`sync`]) compares each note and each memory with how both were at the last sync
//! (a state file beside the store: the note's hash and the memory's `updated_at`):
//! - only the memory changed → the note is rewritten;
//! - only the note changed → its text, kind and importance go into the store (sanitized like
//!   anything captured);
//! - both changed → a conflict: the vault's version is kept beside the note as
//!   `<name>.conflict-<time>.md`, the note gets the store's version and a `conflict:` line naming
//!   that copy, and the report lists it. Nothing is lost either way;
//! - the note was deleted → the memory is forgotten (unless it changed since: then the note comes
//!   back, flagged);
//! - the memory left active memory (forgotten, superseded) → its note goes if untouched, and is
//!   kept and reported if it was edited;
//! - a note without an `id` (written in Obsidian) → a new memory, and its id is written into it.
//!
//! A note speaks for memory `m<id>` only where that memory's note is: at the path last linked
//! to it, or (moved, or the state file new) alone inside the memory's own top folder (its
//! project's, or `Global/`). Any other note claiming that id (one synced in from elsewhere, a
//! copy) is named in the report and changes nothing, and a memory whose claims are disputed is
//! left as it is that sync. Front-matter values are bounded, and an `id` that is not a memory
//! id is reported, never taken.
//!
//! Must not: delete a note the person changed, write outside the configured folder, or let text
//! reach the store unsanitized.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::capture::sanitize_text;
use crate::memory::{Actor, Writer};
use crate::store::Store;
use crate::store::memories::{self, Edit, Filter, Kind, Memory, MemoryError, Status, Tier};
use crate::{fsutil, time};

/// The folder of the daily candidate notes.
pub const INBOX: &str = "Inbox";
/// The folder of global (L3) memories.
pub const GLOBAL: &str = "Global";

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error(
        "no vault is configured; set `[vault] path` in the configuration to your Obsidian vault (or pass --vault DIR)"
    )]
    NotConfigured,
    #[error(
        "the vault {0} does not exist (nor the directory it is in); create it or fix `[vault] path`"
    )]
    Missing(PathBuf),
    #[error("cannot read or write {path}: {source}; check its permissions")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "{0} is reached through a symbolic link or lies outside the vault; a vault sync writes only inside the vault, so replace the link with a folder"
    )]
    Outside(PathBuf),
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

type Result<T> = std::result::Result<T, VaultError>;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> VaultError + '_ {
    move |source| VaultError::Io { path: path.to_owned(), source }
}

/// What one sync did.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    /// Notes written for new memories or memories changed in the store.
    pub written: usize,
    /// Memories changed by an edited note.
    pub updated_from_vault: usize,
    /// Memories created from notes written in the vault.
    pub created_from_vault: usize,
    /// Memories forgotten because their note was deleted.
    pub forgotten: usize,
    /// Notes removed because their memory left active memory.
    pub removed: usize,
    /// Candidates approved by a ticked inbox box.
    pub approved: usize,
    /// Notes where both sides changed (the vault's version is kept beside them), or edited notes
    /// whose memory is gone.
    pub conflicts: Vec<PathBuf>,
    /// Notes that could not be applied, with why (too long, empty, an unknown kind).
    pub problems: Vec<(PathBuf, String)>,
}

/// How each note and memory stood at the last sync.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    /// The vault folder the state is about; another folder starts afresh.
    root: PathBuf,
    /// By memory id.
    notes: BTreeMap<i64, Linked>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Linked {
    /// Relative to the vault folder.
    path: PathBuf,
    /// sha256 of the note's bytes as last written or read.
    hash: String,
    /// The memory's `updated_at` then.
    updated_at: i64,
}

/// A note found in the vault.
#[derive(Debug, Clone)]
struct Note {
    rel: PathBuf,
    bytes: Vec<u8>,
    front: BTreeMap<String, String>,
    body: String,
}

/// Runs one two-way sync between the store and the vault folder `root`; `state_path` is where
/// the sync remembers how both sides stood.
pub fn sync(store: &mut Store, root: &Path, state_path: &Path, now_ms: i64) -> Result<SyncReport> {
    // The vault must exist; the folder of ours inside it is made on first use.
    if !root.is_dir() {
        match root.parent() {
            Some(vault) if vault.is_dir() => std::fs::create_dir(root).map_err(io(root))?,
            _ => return Err(VaultError::Missing(root.to_owned())),
        }
    }
    let mut state = load_state(state_path, root);
    let mut report = SyncReport::default();
    inbox(store, root, now_ms, &mut report)?;

    let (claims, fresh) = scan(root, &mut report.problems)?;
    let active = memories::list(
        store,
        &Filter {
            tiers: vec![Tier::L2, Tier::L3],
            statuses: vec![Status::Active],
            ..Filter::default()
        },
    )?;
    let active_ids: HashMap<i64, &Memory> = active.iter().map(|m| (m.id, m)).collect();

    for memory in &active {
        let linked = state.notes.get(&memory.id).cloned();
        let note = match claimant(memory, linked.as_ref(), claims.get(&memory.id)) {
            Claim::Note(note, others) => {
                disputed(root, memory, &others, &mut report);
                Some(note)
            }
            Claim::Nothing => None,
            Claim::Disputed(others) => {
                disputed(root, memory, &others, &mut report);
                if linked.is_some() {
                    // Neither forgotten nor rewritten on a claim that may not be the person's.
                    continue;
                }
                None
            }
        };
        let next = match (linked, note) {
            (None, None) => Some(write_note(root, memory, None, None, &mut report)?),
            // A note of this id but no record of it (the state file is new): the vault wins.
            (None, Some(note)) => Some(from_note(store, root, memory, note, now_ms, &mut report)?),
            (Some(linked), Some(note)) => {
                let db_changed = memory.updated_at != linked.updated_at;
                let note_changed = hash(&note.bytes) != linked.hash;
                match (db_changed, note_changed) {
                    (false, false) => Some(linked),
                    (true, false) => {
                        Some(write_note(root, memory, Some(&note.rel), None, &mut report)?)
                    }
                    (false, true) => {
                        Some(from_note(store, root, memory, note, now_ms, &mut report)?)
                    }
                    (true, true) => Some(conflict(root, memory, note, now_ms, &mut report)?),
                }
            }
            (Some(linked), None) => {
                if memory.updated_at != linked.updated_at {
                    // Deleted in the vault, changed in the store: keep the store's version,
                    // flagged, rather than forget what just changed.
                    let written = write_note(root, memory, Some(&linked.path), None, &mut report)?;
                    report.conflicts.push(root.join(&written.path));
                    Some(written)
                } else {
                    person(store, now_ms).forget(&Actor::Person, memory.id)?;
                    report.forgotten += 1;
                    None
                }
            }
        };
        match next {
            Some(linked) => state.notes.insert(memory.id, linked),
            None => state.notes.remove(&memory.id),
        };
    }

    // Linked notes whose memory is no longer active memory.
    let gone: Vec<i64> =
        state.notes.keys().copied().filter(|id| !active_ids.contains_key(id)).collect();
    for id in gone {
        let Some(linked) = state.notes.remove(&id) else { continue };
        let Some(path) = inside(root, &linked.path) else {
            report.problems.push((root.join(&linked.path), LINK_LEFT_ALONE.into()));
            continue;
        };
        match std::fs::read(&path) {
            Ok(bytes) if hash(&bytes) == linked.hash => {
                std::fs::remove_file(&path).map_err(io(&path))?;
                report.removed += 1;
            }
            Ok(_) => report.conflicts.push(path),
            Err(_) => {}
        }
    }

    for note in fresh {
        if let Some(linked) = create_from_note(store, root, &note, now_ms, &mut report)? {
            state.notes.insert(linked.0, linked.1);
        }
    }
    save_state(state_path, &state)?;
    Ok(report)
}

/// The daily inbox: ticked candidates are approved, then each day's note lists what is still
/// waiting from that day; today's note is made when there are candidates today.
fn inbox(store: &mut Store, root: &Path, now_ms: i64, report: &mut SyncReport) -> Result<()> {
    let dir = root.join(INBOX);
    if inside(root, Path::new(INBOX)).is_none() {
        report.problems.push((dir, LINK_LEFT_ALONE.into()));
        return Ok(());
    }
    let mut days: Vec<String> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_symlink()) {
                report.problems.push((path, LINK_LEFT_ALONE.into()));
                continue;
            }
            let Some(day) = path.file_stem().and_then(|s| s.to_str()) else { continue };
            if path.extension().and_then(|e| e.to_str()) != Some("md") || !is_day(day) {
                continue;
            }
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            for id in ticked(&text) {
                match memories::get(store, id)? {
                    Some(m) if m.status == Status::Candidate => {
                        person(store, now_ms).approve(id, m.kind == Kind::Preference)?;
                        report.approved += 1;
                    }
                    _ => {}
                }
            }
            days.push(day.to_owned());
        }
    }
    let candidates =
        memories::list(store, &Filter { statuses: vec![Status::Candidate], ..Filter::default() })?;
    let today = time::local_day(now_ms);
    let mut by_day: BTreeMap<String, Vec<&Memory>> = BTreeMap::new();
    for c in &candidates {
        by_day.entry(time::local_day(c.created_at)).or_default().push(c);
    }
    if by_day.contains_key(&today) && !days.contains(&today) {
        days.push(today);
    }
    for day in days {
        let mut list = by_day.remove(&day).unwrap_or_default();
        list.sort_by_key(|m| m.id);
        let mut text = format!(
            "# Memory candidates, {day}\n\nTick a box to approve it at the next sync (`agent-memory vault sync`, or continuously under `agent-memory serve`). Reject or edit with `agent-memory review`.\n\n"
        );
        if list.is_empty() {
            text.push_str("Nothing waits from this day.\n");
        }
        for m in list {
            let scope = m.project_name.as_deref().or(m.project.as_deref()).unwrap_or("global");
            text.push_str(&format!(
                "- [ ] {} ({} · {scope}) ^c{}\n",
                m.text.replace('\n', " "),
                m.kind.as_str(),
                m.id
            ));
        }
        let path = dir.join(format!("{day}.md"));
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            fsutil::ensure_private_dir(&dir).map_err(io(&dir))?;
            fsutil::write_atomic(&path, text.as_bytes()).map_err(io(&path))?;
        }
    }
    Ok(())
}

/// What a sync says of a link in the vault.
const LINK_LEFT_ALONE: &str =
    "a symbolic link: left alone, because a vault sync reads and writes only inside the vault";

/// `root/rel`, when `rel` stays inside the vault: relative, no `..`, and no part of it a
/// symbolic link. Anything else could make a sync write or delete a file outside the vault.
fn inside(root: &Path, rel: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut path = root.to_owned();
    for part in rel.components() {
        let Component::Normal(part) = part else { return None };
        path.push(part);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return None;
        }
    }
    (path != root).then_some(path)
}

fn is_day(s: &str) -> bool {
    s.len() == 10
        && s.bytes()
            .enumerate()
            .all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() })
}

/// The candidate ids of the ticked boxes in an inbox note (`- [x] … ^c12`).
fn ticked(text: &str) -> Vec<i64> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = line.strip_prefix("- [x]").or_else(|| line.strip_prefix("- [X]"))?;
            let (_, id) = rest.trim_end().rsplit_once(" ^c")?;
            id.parse().ok()
        })
        .collect()
}

/// Which note speaks for a memory, of the notes claiming its id.
enum Claim<'n> {
    /// This one; the others claiming the id change nothing.
    Note(&'n Note, Vec<&'n Note>),
    /// No note claims it.
    Nothing,
    /// Notes claim it, but none where the memory's note is.
    Disputed(Vec<&'n Note>),
}

/// The note that speaks for `memory`: the one at the path last linked to it; else, when none
/// is there (the note moved, or the state file is new), the only one claiming it inside the
/// memory's own top folder.
fn claimant<'n>(
    memory: &Memory,
    linked: Option<&Linked>,
    claims: Option<&'n Vec<Note>>,
) -> Claim<'n> {
    let Some(claims) = claims.filter(|c| !c.is_empty()) else { return Claim::Nothing };
    let others = |chosen: &Note| claims.iter().filter(|n| n.rel != chosen.rel).collect();
    if let Some(at_link) = linked.and_then(|l| claims.iter().find(|n| n.rel == l.path)) {
        return Claim::Note(at_link, others(at_link));
    }
    let home = note_path(memory).components().next().map(|c| c.as_os_str().to_owned());
    let in_home: Vec<&Note> = claims
        .iter()
        .filter(|n| n.rel.components().next().map(|c| c.as_os_str().to_owned()) == home)
        .collect();
    match in_home.as_slice() {
        [one] => Claim::Note(one, others(one)),
        _ => Claim::Disputed(claims.iter().collect()),
    }
}

/// Names in the report the notes claiming a memory that do not speak for it.
fn disputed(root: &Path, memory: &Memory, notes: &[&Note], report: &mut SyncReport) {
    for note in notes {
        report.problems.push((
            root.join(&note.rel),
            format!(
                "claims {} but is not its note; changed nothing (remove its `id` line to make it a new memory)",
                memory.show_id()
            ),
        ));
    }
}

/// The longest front-matter value a note may carry: far above any real kind, project name or
/// time, and short enough that a hostile note cannot swell reports or lookups.
const MAX_FRONT_VALUE: usize = 512;

/// A note's `id:` as a memory id: `m` and a positive number.
fn note_id(value: &str) -> Option<i64> {
    let digits = value.strip_prefix('m').unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<i64>().ok().filter(|id| *id > 0)
}

/// Each memory id with every note claiming it.
type Claims = HashMap<i64, Vec<Note>>;

/// Every note under the folder but the inbox and conflict copies: those with an `id` by it
/// (each id with every note claiming it), and those without one. Links, unreadable folders or
/// notes, and notes whose front matter is out of bounds are left alone and named in `problems`.
fn scan(root: &Path, problems: &mut Vec<(PathBuf, String)>) -> Result<(Claims, Vec<Note>)> {
    let mut by_id = Claims::new();
    let mut fresh = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if dir == root => return Err(io(root)(err)),
            // One unreadable folder must not stop the rest of the vault from syncing.
            Err(err) => {
                problems.push((dir.clone(), format!("cannot be read ({err}); skipped")));
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            // The entry itself, never what a link points at: a link could bring any file of
            // the machine into memory, and a later sync would rewrite or delete it.
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_symlink() {
                if name.ends_with(".md") || path.is_dir() {
                    problems.push((path, LINK_LEFT_ALONE.into()));
                }
                continue;
            }
            if kind.is_dir() {
                if path != root.join(INBOX) {
                    stack.push(path);
                }
                continue;
            }
            if !kind.is_file() || !name.ends_with(".md") || name.contains(".conflict-") {
                continue;
            }
            let bytes = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(err) => {
                    problems.push((path, format!("cannot be read ({err}); skipped")));
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&bytes);
            let (front, body) = parse(&text);
            if front.iter().any(|(k, v)| k.len() + v.len() > MAX_FRONT_VALUE) {
                problems.push((
                    path,
                    format!(
                        "a front-matter line is longer than {MAX_FRONT_VALUE} bytes; skipped until it is shortened"
                    ),
                ));
                continue;
            }
            let rel = path.strip_prefix(root).unwrap_or(&path).to_owned();
            let note = Note { rel, front, body, bytes };
            match note.front.get("id").map(|id| note_id(id.trim())) {
                Some(Some(id)) => by_id.entry(id).or_default().push(note),
                Some(None) => problems.push((
                    path,
                    format!(
                        "`id: {}` is not a memory id (m and a number); skipped (remove the line to make it a new memory)",
                        note.front["id"]
                    ),
                )),
                None => fresh.push(note),
            }
        }
    }
    Ok((by_id, fresh))
}

/// Front matter (simple `key: value` lines between `---` fences) and the body after it.
pub fn parse(text: &str) -> (BTreeMap<String, String>, String) {
    let mut front = BTreeMap::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return (front, text.trim().to_owned());
    };
    let Some(end) = rest.find("\n---") else { return (front, text.trim().to_owned()) };
    for line in rest[..end].lines() {
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim().trim_matches('"').trim_matches('\'');
            front.insert(key.trim().to_owned(), value.to_owned());
        }
    }
    let body = rest[end + 4..].trim_start_matches(['-', '\r']).trim();
    (front, body.to_owned())
}

fn hash(bytes: &[u8]) -> String {
    crate::text::hex(&Sha256::digest(bytes))
}

/// The note of a memory, as text.
fn render(memory: &Memory, conflict: Option<&str>) -> String {
    let mut out = String::from("---\n");
    out.push_str(&format!("id: {}\n", memory.show_id()));
    out.push_str(&format!("kind: {}\n", memory.kind.as_str()));
    out.push_str(&format!("tier: {}\n", memory.tier.as_str()));
    if let Some(project) = &memory.project {
        out.push_str(&format!("project: {}\n", yaml_str(project)));
    }
    out.push_str(&format!("importance: {}\n", memory.importance));
    out.push_str(&format!("created: {}\n", time::format_rfc3339(memory.created_at)));
    out.push_str(&format!("updated: {}\n", time::format_rfc3339(memory.updated_at)));
    if !memory.sources.is_empty() {
        out.push_str(&format!("sources: [{}]\n", memory.sources.join(", ")));
    }
    if let Some(copy) = conflict {
        out.push_str(&format!("conflict: {}\n", yaml_str(copy)));
    }
    out.push_str("---\n");
    out.push_str(&memory.text);
    out.push('\n');
    out
}

/// A YAML scalar, quoted when plain would not read back the same.
fn yaml_str(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_alphanumeric() || "-_./ ".contains(c))
        && !s.starts_with(' ')
        && !s.ends_with(' ');
    if plain { s.to_owned() } else { serde_json::to_string(s).unwrap_or_default() }
}

/// Where a new memory's note goes: `<Project>/<Kind>/m<id> <first words>.md`.
fn note_path(memory: &Memory) -> PathBuf {
    let folder = match memory.tier {
        Tier::L3 => GLOBAL.to_owned(),
        _ => file_name(
            memory.project_name.as_deref().or(memory.project.as_deref()).unwrap_or("Project"),
        ),
    };
    let words: Vec<&str> = memory.text.split_whitespace().take(6).collect();
    let stem = file_name(&format!("{} {}", memory.show_id(), words.join(" ")));
    PathBuf::from(folder).join(kind_folder(memory.kind)).join(format!("{stem}.md"))
}

fn kind_folder(kind: Kind) -> &'static str {
    match kind {
        Kind::Fact => "Facts",
        Kind::Decision => "Decisions",
        Kind::Convention => "Conventions",
        Kind::Problem => "Problems",
        Kind::Preference => "Preferences",
    }
}

/// A name Obsidian and every file system take: no path separators or characters links choke on.
fn file_name(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if "/\\:*?\"<>|#^[]".contains(c) || c.is_control() { ' ' } else { c })
        .collect();
    let cleaned = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = cleaned.chars().take(80).collect();
    let cut = cut.trim_end_matches('.').trim().to_owned();
    if cut.is_empty() { "untitled".to_owned() } else { cut }
}

/// Writes a memory's note (at `at`, or where a new one goes) and links it.
fn write_note(
    root: &Path,
    memory: &Memory,
    at: Option<&Path>,
    conflict: Option<&str>,
    report: &mut SyncReport,
) -> Result<Linked> {
    let rel = at.map_or_else(|| note_path(memory), Path::to_owned);
    let path = inside(root, &rel).ok_or_else(|| VaultError::Outside(root.join(&rel)))?;
    let text = render(memory, conflict);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    fsutil::write_atomic(&path, text.as_bytes()).map_err(io(&path))?;
    report.written += 1;
    Ok(Linked { path: rel, hash: hash(text.as_bytes()), updated_at: memory.updated_at })
}

/// What a note says differs from its memory: text, kind, importance.
fn edit_of(memory: &Memory, note: &Note) -> std::result::Result<Edit, String> {
    let text = sanitize_text(&note.body).into_owned();
    let text = memories::check_text(&text).map_err(|e| e.to_string())?;
    let kind = match note.front.get("kind") {
        Some(k) => Some(Kind::parse(k).ok_or_else(|| {
            format!("kind `{k}` is not one of fact, decision, convention, problem, preference")
        })?),
        None => None,
    };
    let importance = match note.front.get("importance") {
        Some(i) => Some(
            i.parse::<i64>()
                .map_err(|_| format!("importance `{i}` is not a number from 1 to 10"))
                .and_then(|i| memories::check_importance(i).map_err(|e| e.to_string()))?,
        ),
        None => None,
    };
    Ok(Edit {
        text: (text != memory.text).then_some(text),
        kind: kind.filter(|k| *k != memory.kind),
        importance: importance.filter(|i| *i != memory.importance),
    })
}

/// The vault's version of a note goes into the store.
fn from_note(
    store: &mut Store,
    root: &Path,
    memory: &Memory,
    note: &Note,
    now_ms: i64,
    report: &mut SyncReport,
) -> Result<Linked> {
    let edit = match edit_of(memory, note) {
        Ok(edit) => edit,
        Err(problem) => {
            report.problems.push((root.join(&note.rel), problem));
            // Left as it is, and looked at again when it changes.
            return Ok(Linked {
                path: note.rel.clone(),
                hash: hash(&note.bytes),
                updated_at: memory.updated_at,
            });
        }
    };
    let updated_at = if edit.text.is_none() && edit.kind.is_none() && edit.importance.is_none() {
        memory.updated_at
    } else {
        report.updated_from_vault += 1;
        person(store, now_ms).edit(memory.id, edit)?.updated_at
    };
    Ok(Linked { path: note.rel.clone(), hash: hash(&note.bytes), updated_at })
}

/// Both sides changed: the vault's version is kept beside the note, the note takes the store's
/// version with a `conflict:` line naming the copy.
fn conflict(
    root: &Path,
    memory: &Memory,
    note: &Note,
    now_ms: i64,
    report: &mut SyncReport,
) -> Result<Linked> {
    let stem = note.rel.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let stamp = time::format_rfc3339(now_ms).replace([':', '-'], "").replace('T', "-");
    let copy_name = format!("{stem}.conflict-{}.md", stamp.trim_end_matches('Z'));
    let copy = note.rel.with_file_name(&copy_name);
    let copy = inside(root, &copy).ok_or_else(|| VaultError::Outside(root.join(&copy)))?;
    fsutil::write_atomic(&copy, &note.bytes).map_err(io(&copy))?;
    let linked = write_note(root, memory, Some(&note.rel), Some(&copy_name), report)?;
    report.conflicts.push(root.join(&note.rel));
    Ok(linked)
}

/// A note written in the vault becomes a memory: global under `Global/` (or `tier: L3`), else of
/// the project its folder (or `project:`) names; its kind from `kind:` or its folder.
fn create_from_note(
    store: &mut Store,
    root: &Path,
    note: &Note,
    now_ms: i64,
    report: &mut SyncReport,
) -> Result<Option<(i64, Linked)>> {
    let path = root.join(&note.rel);
    let mut parts = note.rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned());
    let top = parts.next().unwrap_or_default();
    let second = parts.next().unwrap_or_default();
    let problem = |report: &mut SyncReport, why: String| {
        report.problems.push((path.clone(), why));
        Ok(None)
    };
    let text = sanitize_text(&note.body).into_owned();
    let text = match memories::check_text(&text) {
        Ok(text) => text,
        Err(err) => return problem(report, err.to_string()),
    };
    let kind = note
        .front
        .get("kind")
        .and_then(|k| Kind::parse(k))
        .or_else(|| Kind::ALL.into_iter().find(|k| kind_folder(*k) == second))
        .unwrap_or(Kind::Fact);
    let global = top == GLOBAL
        || note.front.get("tier").is_some_and(|t| t == "L3")
        || kind == Kind::Preference;
    let project_id = if global {
        None
    } else {
        let name = note.front.get("project").cloned().unwrap_or(top);
        match memories::project_id(store, &name)? {
            Some(id) => Some(id),
            None => {
                return problem(
                    report,
                    format!(
                        "no project `{name}` is known; put the note under a project's folder or under {GLOBAL}/"
                    ),
                );
            }
        }
    };
    let importance = note
        .front
        .get("importance")
        .and_then(|i| i.parse::<i64>().ok())
        .and_then(|i| memories::check_importance(i).ok())
        .unwrap_or(5);
    // A new note is inserted as it is, not placed among similar memories: it is the person's
    // own, and its note must stay linked to exactly this memory.
    let id = memories::insert(
        store,
        &memories::NewMemory {
            tier: if global { Tier::L3 } else { Tier::L2 },
            kind,
            text,
            project_id,
            importance,
            sources: Vec::new(),
            origin: "vault".to_owned(),
            supersedes: None,
        },
        now_ms,
    )?;
    let Some(memory) = memories::get(store, id)? else { return Ok(None) };
    report.created_from_vault += 1;
    let linked = write_note(root, &memory, Some(&note.rel), None, report)?;
    report.written -= 1;
    Ok(Some((id, linked)))
}

fn load_state(path: &Path, root: &Path) -> State {
    let state: Option<State> =
        std::fs::read(path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok());
    match state {
        Some(state) if state.root == root => state,
        _ => State { root: root.to_owned(), notes: BTreeMap::new() },
    }
}

fn save_state(path: &Path, state: &State) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(state).unwrap_or_default();
    if let Some(dir) = path.parent() {
        fsutil::ensure_private_dir(dir).map_err(io(dir))?;
    }
    fsutil::write_atomic(path, &bytes).map_err(io(path))
}

/// Changes the person makes in the vault go through the one write path.
fn person(store: &mut Store, now_ms: i64) -> Writer<'_> {
    Writer::new(store, crate::promote::Settings::default(), false, now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_and_body() {
        let (front, body) =
            parse("---\nid: m12\nkind: decision\nproject: \"a b\"\n---\nUse WAL.\n\nReally.\n");
        assert_eq!(front["id"], "m12");
        assert_eq!(front["project"], "a b");
        assert_eq!(body, "Use WAL.\n\nReally.");
        let (front, body) = parse("Just text\n");
        assert!(front.is_empty());
        assert_eq!(body, "Just text");
    }

    #[test]
    fn ticked_boxes_name_their_candidates() {
        let text = "# x\n- [x] Use WAL (decision · p) ^c12\n- [ ] Other ^c13\n  - [X] Nested ^c7\n- [x] no id\n";
        assert_eq!(ticked(text), [12, 7]);
    }

    #[test]
    fn names_are_safe_for_every_file_system() {
        assert_eq!(file_name("m3 a/b: c? [x] #tag"), "m3 a b c x tag");
        assert_eq!(file_name("..."), "untitled");
        assert!(is_day("2026-12-03") && !is_day("2026-1-03") && !is_day("notes"));
    }
}
