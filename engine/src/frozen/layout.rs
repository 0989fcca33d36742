//! The frozen envelope's fixed parts: the preamble, the trailing header, bounds-checked reads,
//! the check an item carries, and how project roots are ordered and compared.
//!
//! Owns the byte layout every other part of the codec writes and reads; must not decide
//! anything or know what an envelope means.

use std::cmp::Ordering;

use crate::sha256::Sha256;

use crate::paths;

/// The first bytes of every frozen envelope.
pub const MAGIC: &[u8; 8] = b"LGFROZEN";

/// Bumped whenever the layout or the meaning of a field changes.
pub const FORMAT_VERSION: u32 = 2;

/// Magic and version.
pub const PREAMBLE_LEN: usize = 12;
/// The fixed header, read from the end of the file (before the file digest).
pub const HEADER_LEN: usize = 160;
/// A SHA-256 digest.
pub const DIGEST_LEN: usize = 32;
/// The check each table item ends with (the first 16 bytes of a SHA-256).
pub const CHECK_LEN: usize = 16;
/// A table slot: u32 item offset, u32 item length.
pub const SLOT_LEN: usize = 8;
/// What `parent` holds when no other project's root holds this one.
pub const NO_PARENT: u32 = u32::MAX;

/// Why a frozen envelope could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrozenError(pub String);

impl std::fmt::Display for FrozenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "frozen envelope: {}", self.0)
    }
}

impl std::error::Error for FrozenError {}

/// A damaged or truncated part, named.
pub fn damaged(what: &str) -> FrozenError {
    FrozenError(format!("damaged or truncated ({what})"))
}

/// A part whose bytes do not match its digest or check, named.
pub fn mismatch(what: &str) -> FrozenError {
    FrozenError(format!(
        "{what} does not match its digest: it was changed or damaged after export"
    ))
}

/// A region of the file: offset and length in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Region {
    pub offset: u64,
    pub len: u64,
}

impl Region {
    /// The region's bytes, if it lies inside `bytes`.
    pub fn of<'a>(&self, bytes: &'a [u8]) -> Option<&'a [u8]> {
        let start = usize::try_from(self.offset).ok()?;
        let len = usize::try_from(self.len).ok()?;
        bytes.get(start..start.checked_add(len)?)
    }
}

/// The fixed header: where everything is, and the digests of the parts every call reads.
///
/// ```text
///   0 u32 project count        4 u32 zero
///   8 u64 file length
///  16 sections   32 index slots   48 index items   64 meta   80 shared   (u64 offset, u64 length)
///  96 [32] SHA-256 of the shared section
/// 128 [32] SHA-256 of "lgfrozen header", the preamble and bytes 0..128
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header {
    pub projects: u32,
    pub file_len: u64,
    pub sections: Region,
    pub index_slots: Region,
    pub index_items: Region,
    pub meta: Region,
    pub shared: Region,
    pub shared_digest: [u8; DIGEST_LEN],
}

const HEADER_TAG: &[u8] = b"lgfrozen header";

impl Header {
    /// The header's bytes, its digest included.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN);
        out.extend_from_slice(&self.projects.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&self.file_len.to_le_bytes());
        for region in [
            self.sections,
            self.index_slots,
            self.index_items,
            self.meta,
            self.shared,
        ] {
            out.extend_from_slice(&region.offset.to_le_bytes());
            out.extend_from_slice(&region.len.to_le_bytes());
        }
        out.extend_from_slice(&self.shared_digest);
        let digest = header_digest(&out);
        out.extend_from_slice(&digest);
        out
    }

    /// Reads and checks the header of a whole file (preamble already checked).
    pub fn decode(file: &[u8]) -> Result<Header, FrozenError> {
        let start = file
            .len()
            .checked_sub(HEADER_LEN + DIGEST_LEN)
            .filter(|start| *start >= PREAMBLE_LEN)
            .ok_or_else(|| damaged("too short for its header"))?;
        let bytes = file
            .get(start..start + HEADER_LEN)
            .ok_or_else(|| damaged("header"))?;
        let body = bytes.get(..HEADER_LEN - DIGEST_LEN).unwrap_or_default();
        if bytes.get(HEADER_LEN - DIGEST_LEN..) != Some(header_digest(body).as_slice()) {
            return Err(FrozenError(
                "its header does not match its digest: it was changed, damaged, truncated or \
                 extended after export"
                    .to_string(),
            ));
        }
        let u64_at = |at: usize| read_u64(bytes, at).ok_or_else(|| damaged("header"));
        let region = |at: usize| -> Result<Region, FrozenError> {
            Ok(Region {
                offset: u64_at(at)?,
                len: u64_at(at + 8)?,
            })
        };
        let header = Header {
            projects: read_u32(bytes, 0).ok_or_else(|| damaged("header"))?,
            file_len: u64_at(8)?,
            sections: region(16)?,
            index_slots: region(32)?,
            index_items: region(48)?,
            meta: region(64)?,
            shared: region(80)?,
            shared_digest: bytes
                .get(96..128)
                .and_then(|d| d.try_into().ok())
                .ok_or_else(|| damaged("header"))?,
        };
        if read_u32(bytes, 4) != Some(0) {
            return Err(damaged("header"));
        }
        if usize::try_from(header.file_len).ok() != Some(file.len()) {
            return Err(FrozenError(
                "its length is not the length it was exported with: it was truncated or \
                 extended after export"
                    .to_string(),
            ));
        }
        let body_end = (start as u64).min(header.file_len);
        let inside = |r: Region| {
            r.offset >= PREAMBLE_LEN as u64
                && r.offset
                    .checked_add(r.len)
                    .is_some_and(|end| end <= body_end)
        };
        let slots = u64::from(header.projects).checked_mul(SLOT_LEN as u64);
        if ![
            header.sections,
            header.index_slots,
            header.index_items,
            header.meta,
            header.shared,
        ]
        .into_iter()
        .all(inside)
            || slots != Some(header.index_slots.len)
        {
            return Err(damaged("header regions"));
        }
        Ok(header)
    }
}

fn header_digest(body: &[u8]) -> [u8; DIGEST_LEN] {
    let mut hasher = Sha256::new();
    hasher.update(HEADER_TAG);
    hasher.update(MAGIC);
    hasher.update(FORMAT_VERSION.to_le_bytes());
    hasher.update(body);
    hasher.finalize()
}

/// The preamble: magic and version.
pub fn preamble() -> Vec<u8> {
    let mut out = Vec::with_capacity(PREAMBLE_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out
}

/// Checks the preamble: a leastgrant envelope of this build's version.
pub fn check_preamble(bytes: &[u8]) -> Result<(), FrozenError> {
    if bytes.get(..MAGIC.len()) != Some(MAGIC.as_slice()) {
        return Err(FrozenError(
            "not a leastgrant frozen envelope (wrong magic bytes)".to_string(),
        ));
    }
    let version = read_u32(bytes, MAGIC.len()).ok_or_else(|| damaged("version"))?;
    if version != FORMAT_VERSION {
        return Err(FrozenError(format!(
            "format version {version}, this build reads version {FORMAT_VERSION}: export it again"
        )));
    }
    Ok(())
}

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; DIGEST_LEN] {
    Sha256::digest(bytes)
}

/// The check a table item carries: what table it belongs to (`tag`, `salt`), its position, and
/// its bytes. A byte changed in an item, or an item read through another position's slot, no
/// longer matches.
pub fn item_check(tag: &[u8], salt: &[u8], position: u64, item: &[u8]) -> [u8; CHECK_LEN] {
    let mut hasher = Sha256::new();
    hasher.update(tag);
    hasher.update(salt);
    hasher.update(position.to_le_bytes());
    hasher.update(item);
    let digest: [u8; DIGEST_LEN] = hasher.finalize();
    let mut check = [0u8; CHECK_LEN];
    check.copy_from_slice(digest.get(..CHECK_LEN).unwrap_or(&[0u8; CHECK_LEN]));
    check
}

/// Reads a little-endian u32.
pub fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let slice = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(slice.try_into().ok()?))
}

/// Reads a little-endian u64.
pub fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    let slice = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(slice.try_into().ok()?))
}

/// A length as u32 (saturating: an impossible length makes a file that reads as damaged).
pub fn len_u32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

/// The key a project root is indexed under: the root, lower-cased where its file system
/// ignores case (so a working directory in any case finds it).
pub fn root_key(root: &str) -> std::borrow::Cow<'_, str> {
    if paths::ignores_case(root) {
        std::borrow::Cow::Owned(root.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(root)
    }
}

/// Orders keys by their path components: `/` sorts before every other byte, so a directory's
/// descendants follow it without a gap (`/a`, `/a/b`, `/a-b`).
pub fn key_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let rank = |c: &u8| if *c == b'/' { 0u16 } else { u16::from(*c) + 1 };
    a.iter().map(rank).cmp(b.iter().map(rank))
}

/// `key` is `path` or a directory above it (keys are normalised paths).
pub fn key_holds(key: &[u8], path: &[u8]) -> bool {
    key == b"/"
        || key == path
        || path
            .strip_prefix(key)
            .is_some_and(|rest| rest.first() == Some(&b'/'))
}
