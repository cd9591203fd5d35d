//! Small filesystem helpers with the permissions and durability agent-memory promises:
//! private directories (0700), private files (0600), atomic writes for files a user owns.
//!
//! Must not: decide where files live (that is [`crate::paths`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

/// Creates `dir` (and parents) if missing, and makes sure the directory itself is 0700.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    if !dir.is_dir() {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        builder.mode(0o700);
        builder.create(dir)?;
    }
    #[cfg(unix)]
    {
        let meta = fs::metadata(dir)?;
        if meta.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// The user id this process runs as, read off the process's own entry in `/proc` (the owner
/// of `/proc/self` is the effective uid), else off the user's home directory. Read once: every
/// hook asks for it several times, and it cannot change.
#[cfg(unix)]
pub fn own_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    static UID: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *UID.get_or_init(|| {
        let home = || fs::metadata(std::env::var_os("HOME")?).ok();
        fs::metadata("/proc/self").ok().or_else(home).map(|meta| meta.uid())
    })
}

#[cfg(not(unix))]
pub fn own_uid() -> Option<u32> {
    None
}

/// Whether `dir` is a directory (not a link) that this user owns and no one else may enter:
/// the only kind of shared-location directory whose files can be trusted as the user's own.
#[cfg(unix)]
pub fn is_private_dir(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = fs::symlink_metadata(dir) else { return false };
    meta.is_dir() && meta.mode() & 0o077 == 0 && Some(meta.uid()) == own_uid()
}

#[cfg(not(unix))]
pub fn is_private_dir(dir: &Path) -> bool {
    dir.is_dir()
}

/// Options that create a file readable by its owner only.
pub fn private_file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    options.mode(0o600);
    options
}

/// Opens `path` for appending, creating it 0600.
pub fn open_private_append(path: &Path) -> io::Result<File> {
    private_file_options().create(true).append(true).open(path)
}

/// Takes an exclusive lock on the private file `path` (created when missing, and its folder
/// too) without waiting: the open file while it is held, `None` when another process holds
/// it. The lock goes with the file, so a process that dies never leaves it taken.
pub fn try_lock_file(path: &Path) -> io::Result<Option<File>> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        ensure_private_dir(dir)?;
    }
    let file = private_file_options().create(true).truncate(false).write(true).open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(fs::TryLockError::WouldBlock) => Ok(None),
        Err(fs::TryLockError::Error(err)) => Err(err),
    }
}

/// Writes `bytes` to `path` atomically: a sibling temp file, fsync, rename, fsync of the
/// directory. A reader sees the old content or the new, never half of either.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Two threads may write the same file at once: each writes a temp file of its own.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
    let result = (|| {
        let mut file = private_file_options().create(true).write(true).truncate(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Flushes a directory entry (a rename or a new file) to disk. Best effort off Unix.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Size of a file in bytes, 0 when it does not exist.
pub fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_is_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.toml");
        write_atomic(&path, b"one").expect("first write");
        write_atomic(&path, b"two").expect("second write");
        assert_eq!(fs::read_to_string(&path).expect("read"), "two");
        #[cfg(unix)]
        assert_eq!(fs::metadata(&path).expect("meta").permissions().mode() & 0o777, 0o600);
        let leftovers: Vec<_> = fs::read_dir(dir.path()).expect("ls").collect();
        assert_eq!(leftovers.len(), 1, "no temp file left behind");
    }

    #[test]
    fn private_dir_is_0700() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("x/y");
        ensure_private_dir(&home).expect("create");
        #[cfg(unix)]
        assert_eq!(fs::metadata(&home).expect("meta").permissions().mode() & 0o777, 0o700);
    }
}
