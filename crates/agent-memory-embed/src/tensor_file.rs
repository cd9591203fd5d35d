//! Reading a safetensors file in parts: its header, and the bytes of one tensor or of one row
//! of it by position. A search needs a few rows of a model's word table (a query's tokens, its
//! candidates' words), not the tens of megabytes of the whole table.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use safetensors::tensor::{Metadata, TensorInfo};

/// An open safetensors file whose header has been read.
#[derive(Debug)]
pub(crate) struct TensorFile {
    file: File,
    len: u64,
    /// Where the data after the header starts; tensors' offsets count from here.
    data: u64,
    pub(crate) metadata: Metadata,
}

impl TensorFile {
    pub(crate) fn open(path: &Path) -> Result<TensorFile, String> {
        let mut file = File::open(path).map_err(|err| err.to_string())?;
        let len = file.metadata().map_err(|err| err.to_string())?.len();
        let mut header_len = [0u8; 8];
        file.read_exact(&mut header_len).map_err(|err| err.to_string())?;
        let header_len = u64::from_le_bytes(header_len);
        // The format's own bound on a header.
        if header_len > 100_000_000 || 8 + header_len > len {
            return Err(format!("a header of {header_len} bytes"));
        }
        let mut header = vec![0u8; header_len as usize];
        file.read_exact(&mut header).map_err(|err| err.to_string())?;
        let metadata = serde_json::from_slice(&header).map_err(|err| err.to_string())?;
        Ok(TensorFile { file, len, data: 8 + header_len, metadata })
    }

    /// Where the bytes of the tensor `name` (described by `info`) start in the file, and how
    /// many there are; an error when they do not lie within the file.
    pub(crate) fn extent(&self, name: &str, info: &TensorInfo) -> Result<(u64, usize), String> {
        let (from, to) = info.data_offsets;
        let fits = to.checked_sub(from).zip(self.data.checked_add(to as u64));
        match fits {
            Some((size, end)) if end <= self.len => Ok((self.data + from as u64, size)),
            _ => Err(format!("{name} lies past the end of the file")),
        }
    }

    /// Fills `buf` from the file at `at`.
    pub(crate) fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        read_at(&self.file, buf, at)
    }
}

/// Fills `buf` from `file` at `at`, without moving a cursor other threads share.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}
