//! Reading a safetensors file in parts: its header, and the bytes of one tensor or of one row
//! of it by position. A search needs a few rows of a model's word table (a query's tokens, its
//! candidates' words), not the tens of megabytes of the whole table.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use safetensors::tensor::Metadata;

/// The header of the safetensors file at `path`, and where its data starts.
pub(crate) fn read_header(path: &Path) -> Result<(Metadata, u64), String> {
    let mut file = File::open(path).map_err(|err| err.to_string())?;
    let mut len = [0u8; 8];
    file.read_exact(&mut len).map_err(|err| err.to_string())?;
    let len = u64::from_le_bytes(len);
    // The format's own bound on a header.
    if len > 100_000_000 {
        return Err(format!("a header of {len} bytes"));
    }
    let mut header = vec![0u8; len as usize];
    file.read_exact(&mut header).map_err(|err| err.to_string())?;
    let metadata = serde_json::from_slice(&header).map_err(|err| err.to_string())?;
    Ok((metadata, 8 + len))
}

/// Fills `buf` from `file` at `at`, without moving a cursor other threads share.
#[cfg(unix)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(windows)]
pub(crate) fn read_at(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
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
