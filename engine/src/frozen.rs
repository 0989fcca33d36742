//! The frozen envelope: the exported, versioned, digested snapshot of what the replay learned,
//! with the setting and rules in force — the only learned state the hook decides with.
//!
//! Built so a call's cost does not grow with the envelope: the call reads the fixed header at
//! the end of the file, the small shared section (the setting), the few index items a binary
//! search over project roots probes, and its own project's head and the signature items its
//! lookups probe. Each of those is checked before it is trusted — the header and shared section
//! against digests, every index and signature item against the check it carries (table.rs),
//! a project's head against the digest in its index item — so a changed byte a call depends on
//! is an error, never an answer, and nothing is hashed that the call does not read. The digest
//! of the whole file (the envelope's name) is checked by [`Frozen::verify`]: `check
//! --envelope`, `export --inspect` and `doctor`.
//!
//! Bottom first: `layout.rs` (preamble, header, reads, checks, root keys), `table.rs` (the
//! checked sorted table), `record.rs` (a signature's statistics), `shared.rs` (the JSON
//! sections and project heads), `writer.rs` (writing, a project at a time), then this file
//! (reading). Every read is bounds-checked: a damaged file is an error, never a panic or a
//! wrong answer read from the wrong place.

mod layout;
mod record;
mod shared;
mod table;
mod writer;

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::decay::{DayCounts, Exact};
use crate::envelope::Learned;
use crate::envelope::stats::{Familiarity, StoredFacts, Thresholds};
use crate::hex::hex;
use crate::model::Capability;
use crate::paths;
use layout::{
    DIGEST_LEN, Header, NO_PARENT, Region, check_preamble, damaged, key_cmp, key_holds, mismatch,
    read_u32, read_u64, sha256,
};
use record::Record;
use shared::{Head, Shared, read_head, read_meta, read_shared};
use table::Table;

pub use layout::{FORMAT_VERSION, FrozenError};
pub use shared::{FrozenMeta, thresholds_json};
pub use writer::{Exported, FrozenWriter, ProjectEnvelope, encode};

/// A frozen envelope, borrowed from its bytes (read or memory-mapped by the caller).
#[derive(Debug, Clone)]
pub struct Frozen<'a> {
    bytes: &'a [u8],
    header: Header,
    shared: Shared,
    index: Table<'a>,
}

/// An index item, checked.
#[derive(Debug, Clone, Copy)]
struct IndexEntry<'a> {
    key: &'a [u8],
    root: &'a str,
    ordinal: u32,
    parent: u32,
    section: Region,
    head_len: u64,
    head_digest: [u8; DIGEST_LEN],
}

impl<'a> Frozen<'a> {
    /// Checks the preamble, the header (its digest, the file's length, every region in bounds)
    /// and the shared section (its digest), and reads the setting. Projects are read when asked
    /// for; the whole file's digest by [`Frozen::verify`].
    pub fn parse(bytes: &'a [u8]) -> Result<Frozen<'a>, FrozenError> {
        check_preamble(bytes)?;
        let header = Header::decode(bytes)?;
        let shared_bytes = header
            .shared
            .of(bytes)
            .ok_or_else(|| damaged("shared section"))?;
        if sha256(shared_bytes) != header.shared_digest {
            return Err(mismatch("its setting"));
        }
        let shared = read_shared(shared_bytes)?;
        let region = |r: Region| r.of(bytes).ok_or_else(|| damaged("project index"));
        let index = Table::new(
            region(header.index_slots)?,
            region(header.index_items)?,
            header.projects as usize,
            writer::INDEX_TAG,
            header.shared_digest,
            "its project index",
        )?;
        Ok(Frozen {
            bytes,
            header,
            shared,
            index,
        })
    }

    /// The stored digest, hex (what reason lines and `doctor` name).
    pub fn digest(&self) -> String {
        let start = self.bytes.len().saturating_sub(DIGEST_LEN);
        hex(self.bytes.get(start..).unwrap_or_default())
    }

    /// Recomputes the whole file's digest and compares it with the stored one.
    pub fn verify(&self) -> Result<(), FrozenError> {
        let end = self.bytes.len().saturating_sub(DIGEST_LEN);
        let body = self.bytes.get(..end).unwrap_or_default();
        if hex(&sha256(body)) == self.digest() {
            Ok(())
        } else {
            Err(FrozenError(
                "its content does not match its digest: it was changed or damaged after export"
                    .to_string(),
            ))
        }
    }

    /// The setting in force.
    pub fn settings(&self) -> &crate::decide::Settings {
        &self.shared.settings
    }

    /// The replay's id for the setting.
    pub fn setting_id(&self) -> &str {
        &self.shared.setting_id
    }

    /// The setting, the rules the replay decided with and provenance (the meta section,
    /// checked against the digest the shared section names).
    pub fn meta(&self) -> Result<FrozenMeta, FrozenError> {
        let bytes = self
            .header
            .meta
            .of(self.bytes)
            .ok_or_else(|| damaged("meta section"))?;
        read_meta(bytes, &self.shared)
    }

    /// How many projects the envelope holds.
    pub fn project_count(&self) -> usize {
        self.index.len()
    }

    /// Every project, in the index's order (by root).
    pub fn projects(&self) -> impl Iterator<Item = Result<FrozenProject<'a>, FrozenError>> + '_ {
        (0..self.index.len()).map(|position| self.open(self.entry(position)?))
    }

    /// The project whose root holds `cwd` (the deepest such root; among equal roots the one
    /// exported last), compared without case where the root's file system ignores it.
    pub fn project_for(&self, cwd: &str) -> Result<Option<FrozenProject<'a>>, FrozenError> {
        let cwd = paths::normalize(cwd);
        let mut best = self.deepest(&cwd, &cwd)?;
        if paths::ignores_case(&cwd) {
            let lower = cwd.to_ascii_lowercase();
            if lower != cwd
                && let Some(found) = self.deepest(&lower, &cwd)?
            {
                let rank = |e: &IndexEntry<'_>| (e.root.len(), e.ordinal);
                if best.as_ref().is_none_or(|b| rank(&found) > rank(b)) {
                    best = Some(found);
                }
            }
        }
        best.map(|entry| self.open(entry)).transpose()
    }

    /// The deepest project whose key holds `target` and whose root holds `cwd`: the greatest
    /// key not after `target`, then up its chain of parents.
    fn deepest(&self, target: &str, cwd: &str) -> Result<Option<IndexEntry<'a>>, FrozenError> {
        let rank = self.index.rank(target.as_bytes(), key_cmp)?;
        let Some(mut position) = rank.checked_sub(1) else {
            return Ok(None);
        };
        loop {
            let entry = self.entry(position)?;
            if key_holds(entry.key, target.as_bytes())
                && paths::is_within_case_aware(cwd, entry.root)
            {
                return Ok(Some(entry));
            }
            if entry.parent == NO_PARENT {
                return Ok(None);
            }
            let parent = entry.parent as usize;
            // Parents come first in key order, so the walk ends.
            if parent >= position {
                return Err(damaged("project index"));
            }
            position = parent;
        }
    }

    fn entry(&self, position: usize) -> Result<IndexEntry<'a>, FrozenError> {
        let item = self.index.item(position)?;
        let p = item.payload;
        let bad = || damaged("project index");
        let root_len = read_u32(p, 64).ok_or_else(bad)? as usize;
        let root = p
            .get(68..)
            .filter(|r| r.len() == root_len)
            .and_then(|r| std::str::from_utf8(r).ok())
            .ok_or_else(bad)?;
        Ok(IndexEntry {
            key: item.key,
            root,
            ordinal: read_u32(p, 0).ok_or_else(bad)?,
            parent: read_u32(p, 4).ok_or_else(bad)?,
            section: Region {
                offset: read_u64(p, 8).ok_or_else(bad)?,
                len: read_u64(p, 16).ok_or_else(bad)?,
            },
            head_len: read_u64(p, 24).ok_or_else(bad)?,
            head_digest: p
                .get(32..64)
                .and_then(|d| d.try_into().ok())
                .ok_or_else(bad)?,
        })
    }

    fn open(&self, entry: IndexEntry<'a>) -> Result<FrozenProject<'a>, FrozenError> {
        let bad = || damaged("project section");
        let sections = self.header.sections.of(self.bytes).ok_or_else(bad)?;
        let section = entry.section.of(sections).ok_or_else(bad)?;
        let head_len = usize::try_from(entry.head_len).map_err(|_| bad())?;
        let head_bytes = section.get(..head_len).ok_or_else(bad)?;
        if sha256(head_bytes) != entry.head_digest {
            return Err(mismatch("a project's head"));
        }
        let head = read_head(head_bytes)?;
        if head.root != entry.root {
            return Err(mismatch("a project's head"));
        }
        let rest = section.get(head_len..).ok_or_else(bad)?;
        let slots_len = head
            .signatures
            .checked_mul(layout::SLOT_LEN)
            .filter(|len| *len <= rest.len())
            .ok_or_else(bad)?;
        let (slots, items) = rest.split_at(slots_len);
        let signatures = Table::new(
            slots,
            items,
            head.signatures,
            writer::SIGNATURE_TAG,
            entry.head_digest,
            "a project's signatures",
        )?;
        Ok(FrozenProject {
            head,
            signatures,
            damage: RefCell::new(None),
        })
    }
}

/// One project of a frozen envelope: answers [`Learned`] by binary search.
#[derive(Debug, Clone)]
pub struct FrozenProject<'a> {
    head: Head,
    signatures: Table<'a>,
    damage: RefCell<Option<FrozenError>>,
}

/// One signature's frozen statistics, for inspection.
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenSignature {
    /// The signature.
    pub signature: String,
    /// Refusals, approval sessions and sessions.
    pub facts: StoredFacts,
    /// Sightings, undecayed.
    pub total_seen: u64,
    /// The highest tier it was seen at.
    pub worst_tier: u8,
    /// First and last sighting (µs).
    pub first_seen_us: i64,
    /// Last sighting (µs).
    pub last_seen_us: i64,
    /// Counts by (day, tier).
    pub buckets: BTreeMap<(i64, u8), DayCounts>,
}

impl<'a> FrozenProject<'a> {
    /// The project key.
    pub fn key(&self) -> &str {
        &self.head.key
    }

    /// The project root.
    pub fn root(&self) -> &str {
        &self.head.root
    }

    /// Signatures frozen.
    pub fn signature_count(&self) -> usize {
        self.signatures.len()
    }

    /// What a lookup found damaged, if anything: a decision that looked something up here is
    /// not to be trusted when this is `Some` (the lookup answered "never seen").
    pub fn damage(&self) -> Option<FrozenError> {
        self.damage.borrow().clone()
    }

    /// The record of `signature`, checked.
    fn lookup(&self, signature: &str) -> Result<Option<Record<'a>>, FrozenError> {
        let rank = self
            .signatures
            .rank(signature.as_bytes(), |a, b| a.cmp(b))?;
        let Some(position) = rank.checked_sub(1) else {
            return Ok(None);
        };
        let item = self.signatures.item(position)?;
        if item.key != signature.as_bytes() {
            return Ok(None);
        }
        Record::decode(item.payload)
            .map(Some)
            .ok_or_else(|| damaged("a signature's record"))
    }

    /// Every signature with its statistics, in byte order; `None` for a damaged item.
    pub fn signatures(&self) -> impl Iterator<Item = Option<FrozenSignature>> + '_ {
        (0..self.signatures.len()).map(|position| {
            let item = self.signatures.item(position).ok()?;
            let record = Record::decode(item.payload)?;
            Some(FrozenSignature {
                signature: String::from_utf8_lossy(item.key).into_owned(),
                facts: record.facts,
                total_seen: record.total_seen,
                worst_tier: record.worst_tier,
                first_seen_us: record.first_seen_us,
                last_seen_us: record.last_seen_us,
                buckets: record.bucket_map(),
            })
        })
    }
}

impl Learned for FrozenProject<'_> {
    fn familiarity(
        &self,
        signature: &str,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity {
        match self.lookup(signature) {
            Ok(Some(record)) => Familiarity::of(
                record.buckets(),
                &record.facts,
                tier,
                now_us,
                thresholds,
                &Exact(thresholds.half_life_days),
            ),
            Ok(None) => Familiarity::NOVEL,
            Err(error) => {
                // Damaged bytes read as never seen, and the caller is told (`damage`).
                if let Ok(mut damage) = self.damage.try_borrow_mut() {
                    damage.get_or_insert(error);
                }
                Familiarity::NOVEL
            }
        }
    }

    fn transition_seen(&self, previous: Capability, capability: Capability) -> bool {
        self.head.transitions.contains(&(previous, capability))
    }

    fn events(&self) -> u64 {
        self.head.events
    }
}
