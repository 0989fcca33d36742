//! Writing a frozen envelope a project at a time: each project's section is handed back as it
//! is made (the caller appends it to the file), and the index, the meta and shared sections and
//! the header come at the end. Memory holds one project's section and a small entry per
//! project, whatever the size of the fleet.
//!
//! Layout (little-endian):
//!
//! ```text
//! preamble: "LGFROZEN", u32 format version
//! sections: per project, its head (JSON) then its signature table (table.rs), in export order
//! index:    a table of projects sorted by root key (layout::key_cmp), slots then items
//! meta:     JSON {"rules", "provenance"}
//! shared:   JSON {"setting_id", "settings", "meta_sha256"}
//! header:   layout::Header (160 bytes), its own digest last
//! digest:   SHA-256 of everything before (the envelope's digest)
//! ```
//!
//! An index item's key is the project's root key; its payload: u32 export position, u32 parent
//! (the index position of the deepest other project whose root holds this one; u32::MAX for
//! none), u64 section offset (from the sections' start), u64 section length, u64 head length,
//! [32] SHA-256 of the head, u32 root length, root. Index items are checked with the shared
//! section's digest, signature items with their project head's.

use sha2::{Digest, Sha256};

use super::layout::{
    DIGEST_LEN, Header, NO_PARENT, PREAMBLE_LEN, Region, key_cmp, key_holds, len_u32, preamble,
    root_key, sha256,
};
use super::record;
use super::shared::{FrozenMeta, head_bytes, meta_bytes, shared_bytes};
use super::table;
use crate::envelope::Envelope;
use crate::hex::hex;
use crate::paths;

/// What tags index items.
pub const INDEX_TAG: &[u8] = b"lgfrozen project";
/// What tags signature items.
pub const SIGNATURE_TAG: &[u8] = b"lgfrozen signature";

/// One project's learned state, to be frozen.
pub struct ProjectEnvelope<'a> {
    /// The project key (the events table's grouping key).
    pub key: &'a str,
    /// The project root, matched against a call's working directory.
    pub root: &'a str,
    /// What was learned.
    pub envelope: &'a Envelope,
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// The envelope's digest, hex.
    pub digest: String,
    /// Projects frozen.
    pub projects: usize,
    /// Signatures frozen, over all projects.
    pub signatures: u64,
    /// The file's length.
    pub bytes: u64,
}

struct Entry {
    key: String,
    root: String,
    ordinal: u32,
    section: Region,
    head_len: u64,
    head_digest: [u8; DIGEST_LEN],
}

/// Writes a frozen envelope in pieces, hashing what it hands back.
pub struct FrozenWriter {
    hasher: Sha256,
    written: u64,
    entries: Vec<Entry>,
    signatures: u64,
}

impl FrozenWriter {
    /// A writer, and the first bytes of the file.
    pub fn start() -> (FrozenWriter, Vec<u8>) {
        let mut writer = FrozenWriter {
            hasher: Sha256::new(),
            written: 0,
            entries: Vec::new(),
            signatures: 0,
        };
        let bytes = preamble();
        writer.emit(&bytes);
        (writer, bytes)
    }

    fn emit(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
    }

    /// One project's section: the bytes to append next.
    pub fn section(&mut self, project: &ProjectEnvelope<'_>) -> Vec<u8> {
        let root = paths::normalize(project.root);
        let head = head_bytes(project.key, &root, project.envelope);
        let head_digest = sha256(&head);
        // BTreeMap<String, _> iterates in byte order, which is the order the lookup searches.
        let (slots, items) = table::build(
            project
                .envelope
                .signatures
                .iter()
                .map(|(signature, stats)| (signature.as_bytes().to_vec(), record::encode(stats))),
            SIGNATURE_TAG,
            &head_digest,
        );
        let mut out = head;
        out.extend_from_slice(&slots);
        out.extend_from_slice(&items);
        self.entries.push(Entry {
            key: root_key(&root).into_owned(),
            ordinal: len_u32(self.entries.len()),
            section: Region {
                offset: self.written - PREAMBLE_LEN as u64,
                len: out.len() as u64,
            },
            head_len: (out.len() - slots.len() - items.len()) as u64,
            head_digest,
            root,
        });
        self.signatures += project.envelope.signatures.len() as u64;
        self.emit(&out);
        out
    }

    /// The rest of the file (index, meta and shared sections, header, digest), and what was
    /// written.
    pub fn finish(mut self, meta: &FrozenMeta) -> (Vec<u8>, Exported) {
        let sections = Region {
            offset: PREAMBLE_LEN as u64,
            len: self.written - PREAMBLE_LEN as u64,
        };
        let meta_section = meta_bytes(meta);
        let shared = shared_bytes(meta, &sha256(&meta_section));
        let shared_digest = sha256(&shared);

        let mut entries = std::mem::take(&mut self.entries);
        entries.sort_by(|a, b| {
            key_cmp(a.key.as_bytes(), b.key.as_bytes()).then(a.ordinal.cmp(&b.ordinal))
        });
        // Each project's parent: the deepest other root above it. Descendants follow their
        // ancestor in key order, so the ancestors of the current key are a stack.
        let mut parents = Vec::with_capacity(entries.len());
        let mut stack: Vec<usize> = Vec::new();
        for (position, entry) in entries.iter().enumerate() {
            while let Some(&top) = stack.last() {
                let above = entries.get(top).is_some_and(|t| {
                    t.key != entry.key && key_holds(t.key.as_bytes(), entry.key.as_bytes())
                });
                if above {
                    break;
                }
                stack.pop();
            }
            parents.push(stack.last().map_or(NO_PARENT, |p| len_u32(*p)));
            stack.push(position);
        }
        let (slots, items) = table::build(
            entries.iter().zip(&parents).map(|(entry, parent)| {
                let mut payload = Vec::with_capacity(64 + entry.root.len());
                payload.extend_from_slice(&entry.ordinal.to_le_bytes());
                payload.extend_from_slice(&parent.to_le_bytes());
                payload.extend_from_slice(&entry.section.offset.to_le_bytes());
                payload.extend_from_slice(&entry.section.len.to_le_bytes());
                payload.extend_from_slice(&entry.head_len.to_le_bytes());
                payload.extend_from_slice(&entry.head_digest);
                payload.extend_from_slice(&len_u32(entry.root.len()).to_le_bytes());
                payload.extend_from_slice(entry.root.as_bytes());
                (entry.key.as_bytes().to_vec(), payload)
            }),
            INDEX_TAG,
            &shared_digest,
        );
        let mut out =
            Vec::with_capacity(slots.len() + items.len() + meta_section.len() + shared.len() + 256);
        let mut at = self.written;
        let mut place = |bytes: &[u8], out: &mut Vec<u8>| {
            let region = Region {
                offset: at,
                len: bytes.len() as u64,
            };
            out.extend_from_slice(bytes);
            at += bytes.len() as u64;
            region
        };
        let index_slots = place(&slots, &mut out);
        let index_items = place(&items, &mut out);
        let meta_region = place(&meta_section, &mut out);
        let shared_region = place(&shared, &mut out);
        let header = Header {
            projects: len_u32(entries.len()),
            file_len: at + (layout_tail() as u64),
            sections,
            index_slots,
            index_items,
            meta: meta_region,
            shared: shared_region,
            shared_digest,
        };
        out.extend_from_slice(&header.encode());
        self.hasher.update(&out);
        let digest: [u8; DIGEST_LEN] = self.hasher.finalize().into();
        out.extend_from_slice(&digest);
        let exported = Exported {
            digest: hex(&digest),
            projects: entries.len(),
            signatures: self.signatures,
            bytes: header.file_len,
        };
        (out, exported)
    }
}

fn layout_tail() -> usize {
    super::layout::HEADER_LEN + DIGEST_LEN
}

/// Encodes projects and their envelopes in memory (tests, benches, small exports).
pub fn encode(meta: &FrozenMeta, projects: &[ProjectEnvelope<'_>]) -> Vec<u8> {
    let (mut writer, mut out) = FrozenWriter::start();
    for project in projects {
        out.extend_from_slice(&writer.section(project));
    }
    let (tail, _) = writer.finish(meta);
    out.extend_from_slice(&tail);
    out
}
