//! The spool: where an event waits when the store cannot take it (locked past the busy
//! timeout, corrupt, read-only, disk full, or the hook's deadline reached).
//!
//! Each spooling hook writes its own file, `<ms>-<pid>-<uid>.jsonl`, with one record, fsynced
//! with its directory, so concurrent hooks never interleave and a crash leaves whole files. A
//! drainer claims a file by renaming it to `<file>.claimed-<ms>-<pid>` (only one rename wins),
//! stores its records, and deletes it; records carry the event uid, so a drain interrupted after
//! the commit and repeated stores nothing twice. A claim is taken over as soon as its process is
//! gone (read off `/proc`), and otherwise once its stamp is [`STALE_CLAIM_MS`] away from now,
//! either way: a clock set back or forward never leaves a file stuck for as long as it moved. A
//! hook that holds its own input in the spool while it still works on it ([`append_held`])
//! writes it as a claim of its own, so no drainer takes it while the hook lives, and the first
//! drain after the hook is killed does. `status` counts claimed files as waiting.
//!
//! The home's `spool/` is the user's own. The fallback, in a place other users can reach, is
//! made and used only while every folder on its way is this user's or root's and no one else
//! may write it ([`fsutil::ensure_private_chain`]); otherwise it is not used at all.
//!
//! Must not: parse agent payloads or touch the store; [`super`] does both.

use std::fs;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::fsutil;
use crate::project::ProjectIdentity;

/// The version of the record format.
pub const RECORD_VERSION: u32 = 1;
/// A claim stamped this far from now (past or future) is abandoned, even if a process with its
/// id still runs (the id may have been reused).
pub const STALE_CLAIM_MS: i64 = 120_000;
/// A claim without a process id stamped further ahead than this was made by a clock that has
/// since gone back: abandoned.
pub const FUTURE_CLAIM_MS: i64 = 5_000;
const EXT: &str = "jsonl";
const CLAIM_MARK: &str = ".claimed-";

/// One spooled hook run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpoolRecord {
    pub v: u32,
    pub uid: String,
    pub agent: String,
    pub event_name: String,
    pub received_at_ms: i64,
    pub duration_us: i64,
    /// Why the event was spooled.
    pub reason: String,
    /// The finished event, when capture got that far.
    pub prepared: Option<Prepared>,
    /// The sanitized payload, when capture had not finished the event yet.
    pub raw: Option<String>,
    /// `raw` is only the start of the payload: the deadline passed while the agent was still
    /// writing it. Its small fields are salvaged when it is drained.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl SpoolRecord {
    /// The record of one hook run, before anything is known of its event.
    pub fn new(uid: &str, agent: &str, event_name: &str, received_at_ms: i64) -> SpoolRecord {
        SpoolRecord {
            v: RECORD_VERSION,
            uid: uid.to_owned(),
            agent: agent.to_owned(),
            event_name: event_name.to_owned(),
            received_at_ms,
            duration_us: 0,
            reason: String::new(),
            prepared: None,
            raw: None,
            partial: false,
        }
    }
}

/// An event ready for the store.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Prepared {
    pub event: Event,
    pub content_hash: String,
    pub project: SpooledProject,
}

/// [`ProjectIdentity`] as the spool writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpooledProject {
    pub key: String,
    pub root: PathBuf,
    pub name: String,
    pub origin: Option<String>,
    /// Absent in files spooled before branches were kept.
    #[serde(default)]
    pub branch: Option<String>,
}

impl From<&ProjectIdentity> for SpooledProject {
    fn from(p: &ProjectIdentity) -> Self {
        SpooledProject {
            key: p.key.clone(),
            root: p.root.clone(),
            name: p.name.clone(),
            origin: p.origin.clone(),
            branch: p.branch.clone(),
        }
    }
}

impl From<SpooledProject> for ProjectIdentity {
    fn from(p: SpooledProject) -> Self {
        ProjectIdentity {
            key: p.key,
            root: p.root,
            name: p.name,
            origin: p.origin,
            branch: p.branch,
        }
    }
}

/// Writes `record` to the first spool directory that takes it; returns the file written.
pub fn append(dirs: &[PathBuf], record: &SpoolRecord, now_ms: i64) -> io::Result<PathBuf> {
    write_first(dirs, record, &format!("{now_ms}-{}-{}.{EXT}", std::process::id(), record.uid))
}

/// Writes `record` like [`append`], but as a claim of this process: drainers leave it alone
/// while this process lives. For a hook that keeps its input safe while it still works on it;
/// it removes the file ([`discard`]) once the event is stored or spooled for good.
pub fn append_held(dirs: &[PathBuf], record: &SpoolRecord, now_ms: i64) -> io::Result<PathBuf> {
    let pid = std::process::id();
    let name = format!("{now_ms}-{pid}-{}.{EXT}{CLAIM_MARK}{now_ms}-{pid}", record.uid);
    write_first(dirs, record, &name)
}

/// Removes a spool file this process wrote and no longer needs.
pub fn discard(path: &Path) {
    if let Err(err) = fs::remove_file(path)
        && err.kind() != io::ErrorKind::NotFound
    {
        tracing::debug!(%err, path = %path.display(), "cannot remove a spool file");
    }
}

fn write_first(dirs: &[PathBuf], record: &SpoolRecord, name: &str) -> io::Result<PathBuf> {
    let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
    line.push(b'\n');
    let mut last_err = io::Error::other("no spool directory configured");
    for (i, dir) in dirs.iter().enumerate() {
        match write_durable(dir, name, &line, MAX_FILES, i > 0) {
            Ok(path) => return Ok(path),
            Err(e) => last_err = e,
        }
    }
    Err(last_err)
}

/// Writes one spool file, fsynced with its folder. A `shared` folder (the fallback, outside
/// the home) is made and trusted only as [`fsutil::ensure_private_chain`] allows.
fn write_durable(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    max_files: usize,
    shared: bool,
) -> io::Result<PathBuf> {
    if shared {
        fsutil::ensure_private_chain(dir)?;
    } else {
        fsutil::ensure_private_dir(dir)?;
    }
    if !fsutil::is_private_dir(dir) {
        return Err(untrusted(dir));
    }
    // A store that stays unavailable must not let the spool fill the disk: past the cap, the
    // next spool is tried, and when every one is full the run fails and says so.
    if fs::read_dir(dir)?.take(max_files).count() >= max_files {
        return Err(io::Error::new(
            io::ErrorKind::StorageFull,
            format!(
                "the spool {} holds {max_files} records already; run `agent-memory recover` \
                 (and `agent-memory doctor` if the store cannot take them)",
                dir.display()
            ),
        ));
    }
    let path = dir.join(name);
    let mut file = fsutil::private_file_options().create_new(true).write(true).open(&path)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        // A half-written spool file would be read as a corrupt record; remove it.
        drop(file);
        let _ = fs::remove_file(&path);
        return Err(e);
    }
    fsutil::sync_dir(dir)?;
    Ok(path)
}

/// Records one spool directory holds at most.
pub const MAX_FILES: usize = 50_000;

/// Why a spool directory is not used.
fn untrusted(dir: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "the spool {} is not a folder only this user owns and may enter (mode 0700); \
             remove it, and agent-memory makes it anew",
            dir.display()
        ),
    )
}

/// Spool files waiting to be drained (including abandoned claims), oldest first.
pub fn pending(dirs: &[PathBuf], now_ms: i64) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = spool_files(dirs)
        .filter(|(_, claim)| claim.is_none_or(|c| c.abandoned(now_ms)))
        .map(|(path, _)| path)
        .collect();
    files.sort_by_key(|p| p.file_name().map(|n| n.to_os_string()));
    files
}

/// Every spool file in the folders this user may trust, claimed or not, with its claim.
fn spool_files(dirs: &[PathBuf]) -> impl Iterator<Item = (PathBuf, Option<Claim>)> + '_ {
    dirs.iter()
        .enumerate()
        .filter(|(i, dir)| {
            if !dir.exists() {
                return false;
            }
            // A spool another user owns, or may write into, or whose folders on the way they
            // could swap, could hold records planted for this user's store: left alone.
            let trusted =
                if *i == 0 { fsutil::is_private_dir(dir) } else { fsutil::is_private_chain(dir) };
            if !trusted {
                tracing::warn!(dir = %dir.display(), "{}", untrusted(dir));
            }
            trusted
        })
        .filter_map(|(_, dir)| fs::read_dir(dir).ok())
        .flat_map(|entries| entries.flatten())
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match name.split_once(CLAIM_MARK) {
                Some((_, stamp)) => Some((entry.path(), Some(Claim::parse(stamp)))),
                None => name.ends_with(&format!(".{EXT}")).then(|| (entry.path(), None)),
            }
        })
}

/// A claim's stamp: when it was made and, for claims made since the stamp carries it, by which
/// process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Claim {
    at_ms: Option<i64>,
    pid: Option<u32>,
}

impl Claim {
    fn parse(stamp: &str) -> Claim {
        let (at, pid) = match stamp.split_once('-') {
            Some((at, pid)) => (at, pid.parse().ok()),
            None => (stamp, None),
        };
        Claim { at_ms: at.parse().ok(), pid }
    }

    /// Whether the claim's process is gone, or its stamp is too far from now to trust.
    fn abandoned(self, now_ms: i64) -> bool {
        let Some(at_ms) = self.at_ms else { return true };
        let age = now_ms.saturating_sub(at_ms);
        match self.pid {
            Some(pid) => age.saturating_abs() > STALE_CLAIM_MS || !process_alive(pid),
            None => !(-FUTURE_CLAIM_MS..=STALE_CLAIM_MS).contains(&age),
        }
    }
}

/// Whether a process with this id runs, as far as `/proc` tells; where there is no `/proc`,
/// assumed so (the claim then ages out by its stamp).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc_root = Path::new("/proc");
    if !proc_root.join("self").exists() {
        return true;
    }
    proc_root.join(pid.to_string()).exists()
}

/// Claims a pending file for this drainer. `None` when another drainer was faster.
pub fn claim(path: &Path, now_ms: i64) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy();
    let base = name.split_once(CLAIM_MARK).map(|(b, _)| b).unwrap_or(&name);
    let claimed = path.with_file_name(format!("{base}{CLAIM_MARK}{now_ms}-{}", std::process::id()));
    fs::rename(path, &claimed).ok().map(|()| claimed)
}

/// Gives a claimed file back, for a drain that could not reach the store.
pub fn release(claimed: &Path) {
    let Some(name) = claimed.file_name().map(|n| n.to_string_lossy().into_owned()) else { return };
    if let Some((base, _)) = name.split_once(CLAIM_MARK) {
        let _ = fs::rename(claimed, claimed.with_file_name(base));
    }
}

/// Reads a claimed file: its records, and the lines that could not be read.
pub fn read(path: &Path) -> io::Result<(Vec<SpoolRecord>, Vec<String>)> {
    let reader = BufReader::new(fs::File::open(path)?);
    let mut records = Vec::new();
    let mut bad = Vec::new();
    for line in reader.split(b'\n') {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<SpoolRecord>(&line) {
            Ok(record) => records.push(record),
            Err(e) => bad.push(format!("{e}")),
        }
    }
    Ok((records, bad))
}

/// Sets aside a file whose lines could not be read, so it is kept for inspection but not
/// retried forever.
pub fn quarantine(claimed: &Path) -> io::Result<PathBuf> {
    let name = claimed.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let base = name.split_once(CLAIM_MARK).map(|(b, _)| b.to_owned()).unwrap_or(name);
    let target = claimed.with_file_name(format!("{base}.bad"));
    fs::rename(claimed, &target)?;
    Ok(target)
}

/// How much is waiting in the spools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SpoolDepth {
    /// Files waiting, those a drainer or a running hook holds included.
    pub files: usize,
    pub records: usize,
    /// Of `files`, those a live process holds right now (being drained, or a hook's input kept
    /// while it works).
    pub claimed: usize,
    /// Files set aside because they could not be read.
    pub quarantined: usize,
}

pub fn depth(dirs: &[PathBuf], now_ms: i64) -> SpoolDepth {
    let files: Vec<(PathBuf, Option<Claim>)> = spool_files(dirs).collect();
    let claimed = files.iter().filter(|(_, c)| c.is_some_and(|c| !c.abandoned(now_ms))).count();
    let records = files.iter().filter_map(|(f, _)| read(f).ok()).map(|(r, _)| r.len()).sum();
    let quarantined = dirs
        .iter()
        .filter_map(|d| fs::read_dir(d).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".bad"))
        .count();
    SpoolDepth { files: files.len(), records, claimed, quarantined }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_spool_refuses_and_the_next_one_takes_the_record() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (first, second) = (dir.path().join("a"), dir.path().join("b"));
        for i in 0..3 {
            write_durable(&first, &format!("{i}.jsonl"), b"{}\n", 3, false).expect("room");
        }
        let full = write_durable(&first, "3.jsonl", b"{}\n", 3, false).expect_err("full");
        assert_eq!(full.kind(), io::ErrorKind::StorageFull);
        assert!(full.to_string().contains("agent-memory recover"), "{full}");
        assert!(write_durable(&second, "3.jsonl", b"{}\n", 3, false).is_ok());
    }

    /// A process id that no process has: one past the kernel's largest.
    fn dead_pid() -> u32 {
        let max = fs::read_to_string("/proc/sys/kernel/pid_max").ok();
        max.and_then(|m| m.trim().parse::<u32>().ok()).unwrap_or(4_194_304) + 1
    }

    #[test]
    fn a_claim_is_taken_over_once_its_process_is_gone_or_its_stamp_is_off() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spool = dir.path().join("spool");
        fsutil::ensure_private_dir(&spool).expect("spool");
        let now = 10_000_000;
        let me = std::process::id();
        let mut line =
            serde_json::to_vec(&SpoolRecord::new("u", "codex", "Stop", 1)).expect("json");
        line.push(b'\n');
        let put = |name: &str| write_durable(&spool, name, &line, 100, false).expect("write");
        put(&format!("1-1-live.jsonl.claimed-{now}-{me}"));
        put(&format!("2-1-dead.jsonl.claimed-{now}-{}", dead_pid()));
        put(&format!("3-1-old.jsonl.claimed-{}", now - STALE_CLAIM_MS - 1));
        put(&format!("4-1-fresh.jsonl.claimed-{}", now - 1_000));
        put(&format!("5-1-ahead.jsonl.claimed-{}", now + 3_600_000));
        put(&format!("6-1-ahead-live.jsonl.claimed-{}-{me}", now + 365 * 86_400_000));
        put("7-1-plain.jsonl");
        let dirs = [spool.clone()];
        let names: Vec<String> = pending(&dirs, now)
            .iter()
            .map(|p| {
                p.file_name()
                    .expect("name")
                    .to_string_lossy()
                    .split('.')
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        if Path::new("/proc/self").exists() {
            assert_eq!(names, ["2-1-dead", "3-1-old", "5-1-ahead", "6-1-ahead-live", "7-1-plain"]);
        }
        let depth = depth(&dirs, now);
        assert_eq!((depth.files, depth.records), (7, 7), "claimed files are waiting too");
        assert_eq!(
            depth.claimed, 2,
            "held by a live process: this one, and a fresh old-style claim"
        );
        // A claim names the drainer, and gives the file back under its own name.
        let plain = spool.join("7-1-plain.jsonl");
        let claimed = claim(&plain, now).expect("claimed");
        assert!(
            claimed.to_string_lossy().ends_with(&format!(".claimed-{now}-{me}")),
            "{claimed:?}"
        );
        release(&claimed);
        assert!(plain.exists());
    }
}
