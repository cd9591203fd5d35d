//! The count of events that no place could take: here is a hook run whose event neither the
//! store nor any spool took, count it where `status` will see it.
//!
//! When the disk is full, the store, the home's spool and the fallback spool (often on the same
//! disk) all refuse, and so would any new file. So the count lives in one small file of the
//! home, `lost-events`, whose bytes are allocated when it is made (by the first hook run that
//! finds it missing, long before a disk fills): counting a loss rewrites those bytes in place,
//! which needs no new block on a filesystem that overwrites in place (ext4, xfs, tmpfs; a
//! copy-on-write one such as btrfs may still refuse, and then the loss goes to the log only).
//! The next hook run that reaches the store moves the count into `hook_runs` as `lost` runs;
//! until then `status` adds what the file holds.
//!
//! Layout, fixed width, ASCII: `<count:20> <last loss ms:20> <agent:32> <event:32>\n`.
//!
//! Must not: grow the file, or write it anywhere but in place once it exists.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::fsutil;
use crate::paths::Home;

const FILE: &str = "lost-events";
const NAME_WIDTH: usize = 32;
const LEN: usize = 20 + 1 + 20 + 1 + NAME_WIDTH + 1 + NAME_WIDTH + 1;
/// How long counting waits for another process counting at the same moment.
const LOCK_WAIT: Duration = Duration::from_millis(200);

/// Events lost since the count was last moved into the store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lost {
    pub count: u64,
    /// When the last one was lost (Unix ms).
    pub last_ms: i64,
    /// The agent and hook event of the last one.
    pub agent: String,
    pub event_name: String,
}

fn path(home: &Home) -> PathBuf {
    home.root().join(FILE)
}

fn encode(lost: &Lost) -> [u8; LEN] {
    let cut = |s: &str| -> String {
        let mut s: String =
            s.chars().filter(|c| c.is_ascii_graphic()).take(NAME_WIDTH).collect::<String>();
        while s.len() < NAME_WIDTH {
            s.push(' ');
        }
        s
    };
    let text = format!(
        "{:020} {:020} {} {}\n",
        lost.count,
        lost.last_ms.max(0),
        cut(&lost.agent),
        cut(&lost.event_name)
    );
    let mut out = [b' '; LEN];
    out.copy_from_slice(&text.as_bytes()[..LEN]);
    out
}

fn decode(bytes: &[u8]) -> Lost {
    let field = |from: usize, len: usize| -> String {
        let end = (from + len).min(bytes.len());
        let part = bytes.get(from..end).unwrap_or_default();
        String::from_utf8_lossy(part).trim().to_owned()
    };
    Lost {
        count: field(0, 20).parse().unwrap_or(0),
        last_ms: field(21, 20).parse().unwrap_or(0),
        agent: field(42, NAME_WIDTH),
        event_name: field(43 + NAME_WIDTH, NAME_WIDTH),
    }
}

/// Writes the counter's bytes over the old ones, from the start.
fn write_in_place(mut file: &File, lost: &Lost) -> io::Result<()> {
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&encode(lost))
}

/// Makes the counter file, its bytes allocated, unless it is there already. Cheap when it is:
/// one `stat`.
pub fn ensure(home: &Home) -> io::Result<()> {
    let path = path(home);
    if fs::symlink_metadata(&path).is_ok_and(|m| m.len() == LEN as u64) {
        return Ok(());
    }
    fsutil::refuse_link(&path)?;
    let file = fsutil::private_file_options()
        .create(true)
        .truncate(false)
        .write(true)
        .read(true)
        .open(&path)?;
    let _lock = Locked::take(&file)?;
    if file.metadata()?.len() != LEN as u64 {
        file.set_len(0)?;
        write_in_place(&file, &Lost::default())?;
        file.sync_all()?;
    }
    Ok(())
}

/// Counts one lost event. Writes the counter's bytes in place only, so a full disk takes it.
pub fn count_one(home: &Home, agent: &str, event_name: &str, now_ms: i64) -> io::Result<u64> {
    let file = open(&path(home))?;
    let _lock = Locked::take(&file)?;
    let mut lost = read(&file)?;
    lost.count = lost.count.saturating_add(1);
    lost.last_ms = now_ms;
    lost.agent = agent.to_owned();
    lost.event_name = event_name.to_owned();
    write_in_place(&file, &lost)?;
    file.sync_data()?;
    Ok(lost.count)
}

/// What the counter holds, without changing it; nothing when there is no counter.
pub fn peek(home: &Home) -> Lost {
    match File::open(path(home)) {
        Ok(file) => read(&file).unwrap_or_default(),
        Err(_) => Lost::default(),
    }
}

/// Takes `taken` off the counter, after the caller recorded that many losses elsewhere.
/// Losses counted meanwhile stay.
pub fn subtract(home: &Home, taken: u64) -> io::Result<()> {
    if taken == 0 {
        return Ok(());
    }
    let file = open(&path(home))?;
    let _lock = Locked::take(&file)?;
    let mut lost = read(&file)?;
    lost.count = lost.count.saturating_sub(taken);
    write_in_place(&file, &lost)?;
    file.sync_data()?;
    Ok(())
}

fn open(path: &Path) -> io::Result<File> {
    fsutil::refuse_link(path)?;
    fs::OpenOptions::new().read(true).write(true).open(path)
}

fn read(mut file: &File) -> io::Result<Lost> {
    let mut buf = Vec::with_capacity(LEN);
    file.seek(SeekFrom::Start(0))?;
    file.take(LEN as u64).read_to_end(&mut buf)?;
    Ok(decode(&buf))
}

/// An exclusive lock on the counter, waited for a short while, let go on drop.
struct Locked<'a>(&'a File);

impl<'a> Locked<'a> {
    fn take(file: &'a File) -> io::Result<Locked<'a>> {
        let until = Instant::now() + LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Locked(file)),
                Err(fs::TryLockError::WouldBlock) if Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WouldBlock,
                        "the lost-event counter stayed locked by another process",
                    ));
                }
                Err(fs::TryLockError::Error(err)) => return Err(err),
            }
        }
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_in_place_and_gives_back_what_was_taken() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = Home::at(dir.path().to_owned());
        assert!(count_one(&home, "codex", "Stop", 5).is_err(), "no counter made yet");
        ensure(&home).expect("made");
        let len = fs::metadata(path(&home)).expect("there").len();
        assert_eq!(peek(&home), Lost::default());
        assert_eq!(count_one(&home, "codex", "Stop", 5).expect("counted"), 1);
        assert_eq!(count_one(&home, "claude-code", "UserPromptSubmit", 9).expect("counted"), 2);
        let lost = peek(&home);
        assert_eq!((lost.count, lost.last_ms), (2, 9));
        assert_eq!(
            (lost.agent.as_str(), lost.event_name.as_str()),
            ("claude-code", "UserPromptSubmit")
        );
        subtract(&home, 1).expect("taken");
        assert_eq!(peek(&home).count, 1);
        assert_eq!(fs::metadata(path(&home)).expect("there").len(), len, "never grows");
        ensure(&home).expect("kept as it is");
        assert_eq!(peek(&home).count, 1);
    }

    #[test]
    fn odd_names_keep_the_layout() {
        let lost = Lost {
            count: u64::MAX,
            last_ms: -3,
            agent: "a name with spaces and ünïcode that runs on and on and on".into(),
            event_name: String::new(),
        };
        let bytes = encode(&lost);
        let back = decode(&bytes);
        assert_eq!(back.count, u64::MAX);
        assert_eq!(back.last_ms, 0);
        assert!(back.agent.starts_with("anamewithspaces"), "{}", back.agent);
    }
}
