//! The frozen envelope mapped into memory for the hook (where it is: `layout.rs`).

use std::fs::File;
use std::path::Path;
use std::sync::Mutex;

use memmap2::{Mmap, MmapOptions};

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

/// Maps a file read-only; `None` when it does not exist. A lookup then reads only the pages it
/// touches, so a 50,000-signature envelope costs what one signature costs.
pub fn map(path: &Path) -> std::io::Result<Option<Mapped>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
    if len == 0 {
        return Ok(Some(Mapped::Empty));
    }
    // The length is the one just read (memmap2 would ask the file system again).
    // SAFETY: the one exception to the workspace's `unsafe_code` lint (docs/decisions.md). The
    // mapping is read-only and private to this short-lived process. `leastgrant export` never
    // writes an envelope in place: it writes a new file and renames it over the old one, so the
    // inode mapped here is not modified while it is mapped. A process that truncated the file
    // in place (outside leastgrant) could make a read fault; every read of the bytes is
    // bounds-checked, which is what the rest of the decision path relies on.
    #[allow(unsafe_code)]
    let mapped = unsafe { MmapOptions::new().len(len).map(&file)? };
    Ok(Some(Mapped::Pages(mapped)))
}

/// Keeps a mapping until the process ends (a later call replaces it): unmapping a 7 MB envelope
/// costs the hook ~25 µs of page-table work that process exit does anyway.
pub fn keep_until_exit(mapped: Mapped) {
    static KEPT: Mutex<Option<Mapped>> = Mutex::new(None);
    if let Ok(mut kept) = KEPT.lock() {
        *kept = Some(mapped);
    }
}
