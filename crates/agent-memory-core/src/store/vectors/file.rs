//! A model's vector matrix kept in a file beside the store, so that a short-lived process (a
//! CLI search) reads one file instead of every vector row: at 17,500 observations the rows
//! took 40 ms to read through SQLite, the file takes about 2 ms.
//!
//! The file is a cache, never the truth. It holds the [`Changes`] of its model it was written
//! at; [`super::Store`] trusts it only while no row was removed or rewritten since, and reads the
//! rows added since from the store. Any process that has the whole matrix in hand may write it
//! (a search that had to read the rows, the work pass after embedding). A file that is short,
//! of another format or another dimension is ignored and written again. The vectors of items
//! forgotten since it was written stay in it until then: the next search or work pass, whichever
//! comes first, finds the count of removed rows moved and writes it again without them.
//!
//! Layout, little-endian: the 8-byte magic, `dim` and `rows` (u32), the changes `added` and
//! `removed` (i64), then `rows` item ids (i64: an observation's id, a summary's negated, an
//! event's past `1 << 48`), `rows` scales (f32) and `rows × dim` codes (i8).

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Changes, VectorIndex};

const MAGIC: &[u8; 8] = b"AMVEC001";
const HEADER: usize = 8 + 4 + 4 + 8 + 8;

/// The folder of vector files beside the store file `db`.
pub(super) fn dir(db: &Path) -> PathBuf {
    db.with_file_name("vectors")
}

/// The file of `model`'s `dim`-sized vectors for the store file `db`. The name keeps what is
/// safe of the model's name, for a person looking, and a hash of all of it, so two names that
/// differ only in what was left out never share a file.
pub(super) fn path(db: &Path, model: &str, dim: usize) -> PathBuf {
    dir(db).join(format!("{}-{dim}.vec", prefix(model)))
}

/// What every file of `model` starts with, whatever its dimension.
pub(super) fn prefix(model: &str) -> String {
    let safe: String = model
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .take(64)
        .collect();
    // FNV-1a: stable across builds, unlike the standard library's hasher.
    let hash = model
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{safe}-{:08x}", hash as u32)
}

/// The matrix in `path` with the changes it was written at; `None` when there is no file, or
/// it is not a whole file of this format and dimension.
pub(super) fn read(
    path: &Path,
    model: &str,
    dim: usize,
) -> io::Result<Option<(VectorIndex, Changes)>> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    let len = file.metadata()?.len();
    let mut header = [0u8; HEADER];
    if len < HEADER as u64 || file.read_exact(&mut header).is_err() || &header[..8] != MAGIC {
        return Ok(None);
    }
    let u32_at = |at: usize| {
        u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let i64_at = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&header[at..at + 8]);
        i64::from_le_bytes(b)
    };
    let (file_dim, rows) = (u32_at(8) as usize, u32_at(12) as usize);
    let changes = Changes { added: i64_at(16), removed: i64_at(24) };
    let expected = rows
        .checked_mul(8 + 4)
        .and_then(|fixed| rows.checked_mul(dim).and_then(|codes| codes.checked_add(fixed)))
        .and_then(|body| body.checked_add(HEADER));
    if file_dim != dim || dim == 0 || expected != Some(len as usize) {
        return Ok(None);
    }
    let mut ids = vec![0u8; rows * 8];
    let mut scales = vec![0u8; rows * 4];
    file.read_exact(&mut ids)?;
    file.read_exact(&mut scales)?;
    let items = ids
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
        .collect();
    let scales =
        scales.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let codes = Codes { file: Mutex::new(file), at: (HEADER + rows * 12) as u64, rows };
    let index = VectorIndex {
        model: model.to_owned(),
        dim,
        items,
        scales,
        in_file: Some(Arc::new(codes)),
        codes: Vec::new(),
    };
    Ok(Some((index, changes)))
}

/// How many bytes of codes a scan reads at a time: small enough to stay in the cache.
const CHUNK_BYTES: usize = 256 * 1024;

/// The codes of a vector file's rows, left in the file and read as a search scans them. The
/// file stays open, so a newer file renamed over it changes nothing for this reader.
#[derive(Debug)]
pub(super) struct Codes {
    file: Mutex<File>,
    /// Where the first row's codes start.
    at: u64,
    rows: usize,
}

impl Codes {
    /// Hands `each` the codes of every row in order, whole rows, many at a time.
    pub(super) fn each_chunk(&self, dim: usize, mut each: impl FnMut(&[u8])) -> io::Result<()> {
        let mut file =
            self.file.lock().map_err(|_| io::Error::other("the vector file's lock is poisoned"))?;
        file.seek(SeekFrom::Start(self.at))?;
        let per_chunk = (CHUNK_BYTES / dim.max(1)).max(1);
        let mut buf = vec![0u8; per_chunk.min(self.rows) * dim];
        let mut left = self.rows;
        while left > 0 {
            let rows = left.min(per_chunk);
            file.read_exact(&mut buf[..rows * dim])?;
            each(&buf[..rows * dim]);
            left -= rows;
        }
        Ok(())
    }
}

/// Writes `index`, every code of it in memory, to `path` as of `changes`, atomically through
/// [`crate::fsutil::write_atomic_with`], so a reader sees a whole file, old or new. Not synced to
/// disk: after a crash the file is short or gone, and is ignored and written again.
pub(super) fn write(path: &Path, index: &VectorIndex, changes: Changes) -> io::Result<()> {
    let Some(dir) = path.parent() else { return Ok(()) };
    if index.in_file.is_some() {
        return Err(io::Error::other("the index's codes are not all in memory"));
    }
    crate::fsutil::ensure_private_dir(dir)?;
    let options = crate::fsutil::WriteOptions::PRIVATE.not_durable();
    crate::fsutil::write_atomic_with(path, options, |file| {
        let mut out = BufWriter::with_capacity(1 << 16, file);
        out.write_all(MAGIC)?;
        out.write_all(&(index.dim as u32).to_le_bytes())?;
        out.write_all(&(index.items.len() as u32).to_le_bytes())?;
        out.write_all(&changes.added.to_le_bytes())?;
        out.write_all(&changes.removed.to_le_bytes())?;
        for item in &index.items {
            out.write_all(&item.to_le_bytes())?;
        }
        for scale in &index.scales {
            out.write_all(&scale.to_le_bytes())?;
        }
        out.write_all(&index.codes)?;
        out.into_inner().map_err(|err| err.into_error())?;
        Ok(())
    })
}

/// Removes every file of `model`, of any dimension, for the store file `db`.
pub(super) fn remove_model(db: &Path, model: &str) {
    let prefix = format!("{}-", prefix(model));
    let Ok(entries) = fs::read_dir(dir(db)) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(&prefix) && name.ends_with(".vec") {
            let _ = fs::remove_file(entry.path());
        }
    }
}
