//! The frozen envelope mapped into memory for the hook and the CLI (where it is: `layout.rs`),
//! and the hook's compiled rules tables (`rules_cache.rs`).
//! The file is opened through `files.rs` only, so a FIFO, a device, a link where leastgrant
//! keeps its own file or an oversized file is refused with a [`FileError`] naming it, never
//! mapped or waited on. Must not: parse the envelope (the engine's `Frozen` does).

use std::path::Path;
use std::sync::Mutex;

use memmap2::{Mmap, MmapOptions};

use crate::files::{FileError, Links, MAX_ENVELOPE_BYTES, Problem, Trust, open_regular};

/// A mapped file's bytes (an empty file cannot be mapped, and has none).
pub enum Mapped {
    /// The file's pages.
    Pages(Mmap),
    /// An empty file.
    Empty,
}

impl std::ops::Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Mapped::Pages(map) => map,
            Mapped::Empty => &[],
        }
    }
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// Maps leastgrant's own envelope (the hook's and `doctor`'s): a regular file of this user's
/// that no one else can write, never through a link, at most [`MAX_ENVELOPE_BYTES`]; `None`
/// when it does not exist. A lookup then reads only the pages it touches, so a 50,000-signature
/// envelope costs what one signature costs.
pub fn map(path: &Path) -> Result<Option<Mapped>, FileError> {
    map_with(path, Links::Refuse, Trust::Owner, MAX_ENVELOPE_BYTES)
}

/// Maps another file leastgrant writes itself and only ever replaces by rename (a compiled
/// rules table: `rules_cache.rs`), under the same conditions as [`map`], of at most `limit`
/// bytes.
pub fn map_own(path: &Path, limit: u64) -> Result<Option<Mapped>, FileError> {
    map_with(path, Links::Refuse, Trust::Owner, limit)
}

/// Maps an envelope the user names (`export --inspect <file>`, `check --envelope <file>`): a
/// link is followed and anyone may own it, but it must still be a regular file of at most
/// [`MAX_ENVELOPE_BYTES`] (a FIFO or a device is never opened for reading).
pub fn map_named(path: &Path) -> Result<Option<Mapped>, FileError> {
    map_with(path, Links::Follow, Trust::Anyone, MAX_ENVELOPE_BYTES)
}

fn map_with(
    path: &Path,
    links: Links,
    trust: Trust,
    limit: u64,
) -> Result<Option<Mapped>, FileError> {
    let Some(regular) = open_regular(path, links, trust, limit)? else {
        return Ok(None);
    };
    let as_error = |e: std::io::Error| FileError {
        path: path.to_path_buf(),
        problem: Problem::Io(e),
    };
    let len = usize::try_from(regular.len)
        .map_err(std::io::Error::other)
        .map_err(as_error)?;
    if len == 0 {
        return Ok(Some(Mapped::Empty));
    }
    // The length is the one checked on the open file (memmap2 would ask the file system again).
    // SAFETY: the one exception to the workspace's `unsafe_code` lint (docs/decisions.md). The
    // mapping is read-only and private to this short-lived process. `leastgrant export` never
    // writes an envelope in place, nor the hook a rules table (`rules_cache.rs`): each writes a
    // new file and renames it over the old one, so the inode mapped here is not modified while
    // it is mapped. A process that truncated the file
    // in place (outside leastgrant) could make a read fault; every read of the bytes is
    // bounds-checked, which is what the rest of the decision path relies on.
    #[allow(unsafe_code)]
    let mapped = unsafe { MmapOptions::new().len(len).map(&regular.file) }.map_err(as_error)?;
    Ok(Some(Mapped::Pages(mapped)))
}

/// Keeps a call's mappings (the envelope, the rules tables a policy holds) until the process
/// ends (a later call replaces them): unmapping a 7 MB envelope costs the hook ~25 µs of
/// page-table work that process exit does anyway, and each table one more system call.
pub fn keep_until_exit(kept: impl std::any::Any + Send) {
    static KEPT: Mutex<Option<Box<dyn std::any::Any + Send>>> = Mutex::new(None);
    if let Ok(mut slot) = KEPT.lock() {
        *slot = Some(Box::new(kept));
    }
}
