//! Small filesystem helpers with the permissions and durability agent-memory promises:
//! private directories (0700), private files (0600), and atomic writes for files a user owns:
//! the one place a file is replaced by a temp file and a rename, which never writes through a
//! symbolic link.
//!
//! Must not: decide where files live (that is [`crate::paths`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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

/// Creates `dir` in a place other users can reach (the system's temporary directory): every
/// folder on the way must be owned by this user or root and writable by no one else unless
/// sticky (as `/tmp` is), and each missing folder is made here, one at a time, 0700, never
/// through a link. A folder someone else owns or could swap (another user's folder where ours
/// should be, a link or a file planted in its place) is refused, so nothing is written where
/// another user could hide it, read it or redirect it.
#[cfg(unix)]
pub fn ensure_private_chain(dir: &Path) -> io::Result<()> {
    use std::path::Component;
    if !dir.is_absolute() {
        return Err(unsafe_folder(dir, "is not an absolute path"));
    }
    let mut at = PathBuf::new();
    let parts: Vec<Component<'_>> = dir.components().collect();
    for (i, part) in parts.iter().enumerate() {
        match part {
            Component::RootDir | Component::Prefix(_) => at.push(part.as_os_str()),
            Component::Normal(name) => {
                at.push(name);
                match fs::symlink_metadata(&at) {
                    Ok(_) => {}
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {
                        let mut builder = fs::DirBuilder::new();
                        builder.mode(0o700);
                        match builder.create(&at) {
                            Ok(()) => {}
                            // Another process made it meanwhile: checked like any other.
                            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                            Err(err) => return Err(err),
                        }
                    }
                    Err(err) => return Err(err),
                }
                // Checked before anything is made inside it.
                check_folder(&at, i + 1 == parts.len())?;
            }
            Component::CurDir | Component::ParentDir => {
                return Err(unsafe_folder(dir, "names `.` or `..`"));
            }
        }
    }
    check_private_chain(dir)?;
    Ok(())
}

#[cfg(not(unix))]
pub fn ensure_private_chain(dir: &Path) -> io::Result<()> {
    ensure_private_dir(dir)
}

/// Whether `dir` is a private directory (see [`is_private_dir`]) that no other user can move,
/// replace or redirect: see [`ensure_private_chain`].
pub fn is_private_chain(dir: &Path) -> bool {
    check_private_chain(dir).is_ok()
}

/// Checks every folder from the root down to `dir` as [`ensure_private_chain`] wants them.
#[cfg(unix)]
fn check_private_chain(dir: &Path) -> io::Result<()> {
    let mut at = PathBuf::new();
    let parts: Vec<_> = dir.components().collect();
    for (i, part) in parts.iter().enumerate() {
        at.push(part.as_os_str());
        if matches!(part, std::path::Component::Normal(_)) {
            check_folder(&at, i + 1 == parts.len())?;
        }
    }
    // Where the links on the way lead: every folder of the real path, too.
    let real = fs::canonicalize(dir)?;
    let mut at = PathBuf::new();
    for part in real.components() {
        at.push(part.as_os_str());
        if matches!(part, std::path::Component::Normal(_)) {
            check_folder(&at, false)?;
        }
    }
    if !is_private_dir(dir) {
        return Err(unsafe_folder(dir, "is not private to this user (mode 0700)"));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private_chain(dir: &Path) -> io::Result<()> {
    if is_private_dir(dir) { Ok(()) } else { Err(unsafe_folder(dir, "is not a folder")) }
}

/// One folder on the way to a private one: owned by this user or root (a link too, which is
/// followed only then: system links such as /tmp -> /private/tmp), and writable by no one else
/// unless sticky. The `last` one may not be a link at all.
#[cfg(unix)]
fn check_folder(path: &Path, last: bool) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let trusted_owner = |uid: u32| uid == 0 || Some(uid) == own_uid();
    let link = fs::symlink_metadata(path)?;
    if !trusted_owner(link.uid()) {
        return Err(unsafe_folder(path, "belongs to another user"));
    }
    if link.file_type().is_symlink() && last {
        return Err(unsafe_folder(path, "is a symbolic link"));
    }
    let meta = fs::metadata(path)?;
    if !meta.is_dir() {
        return Err(unsafe_folder(path, "is not a folder"));
    }
    if !trusted_owner(meta.uid()) {
        return Err(unsafe_folder(path, "belongs to another user"));
    }
    if meta.mode() & 0o022 != 0 && meta.mode() & 0o1000 == 0 {
        return Err(unsafe_folder(path, "may be written by other users"));
    }
    Ok(())
}

fn unsafe_folder(path: &Path, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} {why}, so agent-memory does not keep events under it; remove it (or point \
             TMPDIR elsewhere) and agent-memory makes its folder anew",
            path.display()
        ),
    )
}

/// Whether another process holds the lock file at `path` (a running server's, say); `false`
/// when there is no such file. The look takes the lock for an instant when it is free.
pub fn lock_held(path: &Path) -> bool {
    let Ok(file) = File::options().write(true).open(path) else { return false };
    file.try_lock().is_err()
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

/// Writes `bytes` to `path` atomically, readable by its owner only (0600) and flushed to disk:
/// see [`write_atomic_with`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, WriteOptions::PRIVATE, |file| file.write_all(bytes))
}

/// How [`write_atomic_with`] leaves the file it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    mode: u32,
    durable: bool,
}

impl WriteOptions {
    /// Readable by its owner only (0600), flushed to disk before and after the rename.
    pub const PRIVATE: WriteOptions = WriteOptions { mode: 0o600, durable: true };

    /// The same with these permission bits instead (Unix only): a program's copy, or a file
    /// whose mode its user chose.
    pub const fn mode(self, mode: u32) -> WriteOptions {
        WriteOptions { mode: mode & 0o7777, ..self }
    }

    /// The same with the permission bits of the file now at `path`, when there is one (Unix
    /// only): a file its user made readable to others stays so.
    pub fn keeping_mode_of(self, path: &Path) -> WriteOptions {
        #[cfg(unix)]
        if let Ok(meta) = fs::symlink_metadata(path) {
            return self.mode(meta.permissions().mode());
        }
        #[cfg(not(unix))]
        let _ = path;
        self
    }

    /// The same without the flushes, for a file rebuilt whenever it cannot be read: after a
    /// crash it may be short or gone, and a write costs no disk round trip.
    pub const fn not_durable(self) -> WriteOptions {
        WriteOptions { durable: false, ..self }
    }
}

/// Writes the file `path` atomically with what `fill` writes: a new temp file beside it, fsync,
/// rename over `path`, fsync of the directory. A reader sees the old content or the new, never
/// half of either. This is the one place agent-memory replaces a file by a rename.
///
/// A repository the user clones can ship links where agent-memory writes (its
/// `.agent-memory/brief.md`, say), so nothing here follows a link: the temp file is created with
/// `O_EXCL` under a random name, which an existing entry of that name (a link included) makes
/// fail rather than be followed, and a link at `path` itself is refused. Each call has a temp
/// file of its own, so two threads may write the same file at once.
pub fn write_atomic_with(
    path: &Path,
    options: WriteOptions,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    refuse_link(path)?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.");
    // Created 0600; a dropped temp file (any error below) removes itself.
    let mut temp = tempfile::Builder::new().prefix(&prefix).suffix(".tmp").tempfile_in(dir)?;
    #[cfg(unix)]
    if options.mode != 0o600 {
        // On the open file, so the bits are exactly these whatever the umask.
        temp.as_file().set_permissions(fs::Permissions::from_mode(options.mode))?;
    }
    fill(temp.as_file_mut())?;
    if options.durable {
        temp.as_file().sync_all()?;
    }
    // A link planted at `path` since the check above is replaced by the rename, not followed.
    temp.persist(path).map_err(|err| err.error)?;
    if options.durable {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Where to write a configuration file the user may keep as a link into their dotfiles
/// (`~/.claude/settings.json` → `~/dotfiles/claude/settings.json`): the file the link names,
/// when the link lies outside any git work tree, so only the user can have put it there; else
/// `path` itself, which [`write_atomic`] refuses when it is a link (a cloned repository can
/// plant one). A chain of links is followed to its end; a dangling one is not followed.
pub fn own_link_target(path: &Path) -> PathBuf {
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link || in_work_tree(path) {
        return path.to_owned();
    }
    match fs::canonicalize(path) {
        Ok(target) if target.is_file() => target,
        _ => path.to_owned(),
    }
}

/// Whether `path` lies inside a git work tree: a `.git` in its folder or any folder above it.
fn in_work_tree(path: &Path) -> bool {
    path.parent().into_iter().flat_map(Path::ancestors).any(|dir| dir.join(".git").exists())
}

/// An error when `path` is a symbolic link: agent-memory replaces files it writes, and a link
/// there (perhaps planted by a cloned repository) must neither be followed nor silently lost.
pub fn refuse_link(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symbolic link, and agent-memory will not write through it; replace \
                 the link with a regular file if agent-memory should write there",
                path.display()
            ),
        )),
        _ => Ok(()),
    }
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

    #[cfg(unix)]
    #[test]
    fn a_private_chain_is_made_privately_and_refuses_what_others_could_swap() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path();
        let spool = base.join("am-1").join("spool-x");
        ensure_private_chain(&spool).expect("made");
        for made in [base.join("am-1"), spool.clone()] {
            let mode = fs::metadata(&made).expect("made").permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", made.display());
        }
        assert!(is_private_chain(&spool));

        // A parent anyone may write (not sticky): someone could swap what is inside.
        let open = base.join("open");
        fs::create_dir(&open).expect("mkdir");
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).expect("chmod");
        let err = ensure_private_chain(&open.join("spool")).expect_err("refused");
        assert!(err.to_string().contains("may be written by other users"), "{err}");
        assert!(!open.join("spool").exists(), "nothing made inside it");

        // A sticky one, as /tmp is, is fine.
        let sticky = base.join("sticky");
        fs::create_dir(&sticky).expect("mkdir");
        fs::set_permissions(&sticky, fs::Permissions::from_mode(0o1777)).expect("chmod");
        ensure_private_chain(&sticky.join("am").join("spool")).expect("sticky is fine");

        // A link, or a file, where the spool folder should be.
        let elsewhere = base.join("a-repository");
        fs::create_dir(&elsewhere).expect("mkdir");
        fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o700)).expect("chmod");
        let linked = base.join("am-2");
        fs::create_dir(&linked).expect("mkdir");
        fs::set_permissions(&linked, fs::Permissions::from_mode(0o700)).expect("chmod");
        symlink(&elsewhere, linked.join("spool")).expect("link");
        let err = ensure_private_chain(&linked.join("spool")).expect_err("refused");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(!is_private_chain(&linked.join("spool")));
        let filed = base.join("am-3");
        write_atomic(&filed, b"not a folder").expect("file");
        assert!(ensure_private_chain(&filed.join("spool")).is_err());
        assert_eq!(fs::read_dir(&elsewhere).expect("read").count(), 0, "nothing written there");
    }

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

    /// A link where the old helper put its temp file (`.<name>.tmp-<pid>-<n>`), and where other
    /// writers put theirs (its first 4096 counts), pointing at a file the user owns elsewhere.
    #[cfg(unix)]
    fn plant_links(dir: &Path, name: &str, victim: &Path) {
        let pid = std::process::id();
        let mut names: Vec<String> = (0..4096).map(|n| format!(".{name}.tmp-{pid}-{n}")).collect();
        names.extend([format!(".{name}.tmp"), format!("{name}.tmp"), format!(".{name}.tmp-{pid}")]);
        for planted in names {
            std::os::unix::fs::symlink(victim, dir.join(planted)).expect("plant a link");
        }
    }

    /// A file the user owns, outside where agent-memory writes.
    #[cfg(unix)]
    fn victim(dir: &Path) -> std::path::PathBuf {
        let victim = dir.join("victim");
        write_atomic(&victim, b"the user's own file").expect("victim");
        victim
    }

    #[cfg(unix)]
    #[test]
    fn links_at_old_temp_names_are_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = victim(dir.path());
        let repo = dir.path().join("repo");
        fs::create_dir(&repo).expect("repo");
        plant_links(&repo, "brief.md", &victim);
        let path = repo.join("brief.md");
        for round in 0..3 {
            write_atomic(&path, format!("brief {round}").as_bytes()).expect("write");
        }
        assert_eq!(fs::read_to_string(&victim).expect("victim"), "the user's own file");
        assert_eq!(fs::read_to_string(&path).expect("brief"), "brief 2");
        let meta = fs::symlink_metadata(&path).expect("meta");
        assert!(meta.file_type().is_file(), "a file of its own, not a link");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let entries = fs::read_dir(&repo).expect("ls").count();
        assert_eq!(entries, 4096 + 3 + 1, "the links stay, and no temp file is left");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_the_target_is_refused_and_its_destination_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = victim(dir.path());
        let path = dir.path().join("config.toml");
        std::os::unix::fs::symlink(&victim, &path).expect("link");
        plant_links(dir.path(), "config.toml", &victim);
        let err = write_atomic(&path, b"planted").expect_err("a link is refused");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        assert!(err.to_string().contains("will not write through it"), "{err}");
        assert_eq!(fs::read_to_string(&victim).expect("victim"), "the user's own file");
        assert!(fs::symlink_metadata(&path).expect("meta").file_type().is_symlink(), "kept");
        // A dangling link is refused too: writing would create its destination.
        let dangling = dir.path().join("serve.token");
        let elsewhere = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, &dangling).expect("link");
        assert!(write_atomic(&dangling, b"token").is_err());
        assert!(!elsewhere.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_chosen_mode_is_exact_and_an_unsynced_write_is_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("agent-memory");
        let options = WriteOptions::PRIVATE.mode(0o755).not_durable();
        write_atomic_with(&path, options, |file| file.write_all(b"#!/bin/sh\n")).expect("write");
        assert_eq!(fs::metadata(&path).expect("meta").permissions().mode() & 0o777, 0o755);
        assert_eq!(fs::read(&path).expect("read"), b"#!/bin/sh\n");
        // A writer that fails leaves the old file and no temp file.
        let failed = write_atomic_with(&path, WriteOptions::PRIVATE, |file| {
            file.write_all(b"half")?;
            Err(io::Error::other("cut short"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&path).expect("read"), b"#!/bin/sh\n");
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1);
    }

    #[test]
    fn concurrent_writers_each_write_a_whole_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("serve.json");
        std::thread::scope(|scope| {
            for writer in 0..8 {
                let path = &path;
                scope.spawn(move || {
                    let text = format!("writer {writer} ").repeat(1000);
                    for _ in 0..20 {
                        write_atomic(path, text.as_bytes()).expect("write");
                    }
                });
            }
        });
        let text = fs::read_to_string(&path).expect("read");
        let first = text.split(' ').take(2).collect::<Vec<_>>().join(" ");
        assert_eq!(text, format!("{first} ").repeat(1000), "one writer's whole text");
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1, "no temp file left");
    }

    #[test]
    fn private_dir_is_0700() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("x/y");
        ensure_private_dir(&home).expect("create");
        #[cfg(unix)]
        assert_eq!(fs::metadata(&home).expect("meta").permissions().mode() & 0o777, 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn a_users_own_link_is_written_through_and_a_planted_one_is_not() {
        let dir = tempfile::tempdir().expect("dir");
        let dotfiles = dir.path().join("dotfiles");
        fs::create_dir_all(&dotfiles).expect("dotfiles");
        let real = dotfiles.join("settings.json");
        write_atomic(&real, b"{}").expect("real");
        let config = dir.path().join("config");
        fs::create_dir_all(&config).expect("config");
        let link = config.join("settings.json");
        std::os::unix::fs::symlink(&real, &link).expect("link");
        let to = own_link_target(&link);
        assert_eq!(to, fs::canonicalize(&real).expect("canonical"));
        write_atomic(&to, b"{\"a\":1}").expect("write");
        assert!(fs::symlink_metadata(&link).expect("link").file_type().is_symlink());
        assert_eq!(fs::read(&real).expect("read"), b"{\"a\":1}");
        // Inside a work tree a link may be a clone's: not followed.
        let repo = dir.path().join("repo");
        fs::create_dir_all(repo.join(".git")).expect("repo");
        let planted = repo.join("settings.json");
        std::os::unix::fs::symlink(&real, &planted).expect("planted");
        assert_eq!(own_link_target(&planted), planted);
        assert!(write_atomic(&own_link_target(&planted), b"x").is_err());
    }
}
