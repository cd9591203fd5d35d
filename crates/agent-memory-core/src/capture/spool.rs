//! The spool: where an event waits when the store cannot take it (locked past the busy
//! timeout, corrupt, read-only, disk full, or the hook's deadline reached).
//!
//! Each spooling hook writes its own file, `<ms>-<pid>-<uid>.jsonl`, with one record, fsynced
//! with its directory, so concurrent hooks never interleave and a crash leaves whole files. A
//! drainer claims a file by renaming it (only one rename wins), stores its records, and deletes
//! it; records carry the event uid, so a drain interrupted after the commit and repeated stores
//! nothing twice. A claim older than [`STALE_CLAIM_MS`] belongs to a drainer that died and is
//! taken over.
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
/// A claimed file untouched this long is considered abandoned by its drainer.
pub const STALE_CLAIM_MS: i64 = 120_000;
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
}

impl From<&ProjectIdentity> for SpooledProject {
    fn from(p: &ProjectIdentity) -> Self {
        SpooledProject {
            key: p.key.clone(),
            root: p.root.clone(),
            name: p.name.clone(),
            origin: p.origin.clone(),
        }
    }
}

impl From<SpooledProject> for ProjectIdentity {
    fn from(p: SpooledProject) -> Self {
        ProjectIdentity { key: p.key, root: p.root, name: p.name, origin: p.origin }
    }
}

/// Writes `record` to the first spool directory that takes it; returns the file written.
pub fn append(dirs: &[PathBuf], record: &SpoolRecord, now_ms: i64) -> io::Result<PathBuf> {
    let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
    line.push(b'\n');
    let name = format!("{now_ms}-{}-{}.{EXT}", std::process::id(), record.uid);
    let mut last_err = io::Error::other("no spool directory configured");
    for dir in dirs {
        match write_durable(dir, &name, &line, MAX_FILES) {
            Ok(path) => return Ok(path),
            Err(e) => last_err = e,
        }
    }
    Err(last_err)
}

fn write_durable(dir: &Path, name: &str, bytes: &[u8], max_files: usize) -> io::Result<PathBuf> {
    fsutil::ensure_private_dir(dir)?;
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
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if !dir.exists() {
            continue;
        }
        // A spool another user owns, or may write into, could hold records planted for this
        // user's store: left alone.
        if !fsutil::is_private_dir(dir) {
            tracing::warn!(dir = %dir.display(), "{}", untrusted(dir));
            continue;
        }
        let Ok(entries) = fs::read_dir(dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let waiting = match name.split_once(CLAIM_MARK) {
                Some((_, claimed_at)) => {
                    claimed_at.parse::<i64>().map(|t| now_ms - t > STALE_CLAIM_MS).unwrap_or(true)
                }
                None => name.ends_with(&format!(".{EXT}")),
            };
            if waiting {
                files.push(path);
            }
        }
    }
    files.sort_by_key(|p| p.file_name().map(|n| n.to_os_string()));
    files
}

/// Claims a pending file for this drainer. `None` when another drainer was faster.
pub fn claim(path: &Path, now_ms: i64) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy();
    let base = name.split_once(CLAIM_MARK).map(|(b, _)| b).unwrap_or(&name);
    let claimed = path.with_file_name(format!("{base}{CLAIM_MARK}{now_ms}"));
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
    pub files: usize,
    pub records: usize,
    /// Files set aside because they could not be read.
    pub quarantined: usize,
}

pub fn depth(dirs: &[PathBuf], now_ms: i64) -> SpoolDepth {
    let files = pending(dirs, now_ms);
    let records = files.iter().filter_map(|f| read(f).ok()).map(|(r, _)| r.len()).sum();
    let quarantined = dirs
        .iter()
        .filter_map(|d| fs::read_dir(d).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".bad"))
        .count();
    SpoolDepth { files: files.len(), records, quarantined }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_spool_refuses_and_the_next_one_takes_the_record() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (first, second) = (dir.path().join("a"), dir.path().join("b"));
        for i in 0..3 {
            write_durable(&first, &format!("{i}.jsonl"), b"{}\n", 3).expect("room");
        }
        let full = write_durable(&first, "3.jsonl", b"{}\n", 3).expect_err("full");
        assert_eq!(full.kind(), io::ErrorKind::StorageFull);
        assert!(full.to_string().contains("agent-memory recover"), "{full}");
        assert!(write_durable(&second, "3.jsonl", b"{}\n", 3).is_ok());
    }
}
