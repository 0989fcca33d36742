//! The frozen envelope: the exported, versioned, digested snapshot of what the replay learned,
//! with the setting and rules in force — the only learned state the hook decides with.
//!
//! Layout (little-endian), chosen so the hook can answer without decoding the whole file:
//!
//! ```text
//! "LGFROZEN"  u32 format version  u32 header length  header (JSON)
//! per project, a section: u32 signature count, then that many index entries
//!     (u32 signature offset, u32 signature length, u32 record offset), sorted by signature bytes,
//!     then the records and the signature bytes the entries point at (offsets within the section)
//! 32 bytes: SHA-256 of everything before
//! ```
//!
//! A record: u32 denied, u8 granted tier (255: none), u8 worst tier, u32 approval sessions,
//! u32 sessions, u64 sightings, i64 first and last sighting (µs), u32 bucket count, then per
//! bucket i64 day, u8 tier, u32 confirmed, u32 observed. A lookup is a binary search over the
//! index, so a decision reads a few hundred bytes whatever the size of the file. Session
//! sketches are frozen as counts: a frozen envelope answers, it does not learn.
//!
//! Every read is bounds-checked: a damaged file is an error, never a panic or a wrong answer
//! read from the wrong place.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::decay::{DayCounts, Exact};
use crate::decide::{Posture, Settings};
use crate::envelope::{Envelope, Familiarity, Learned, StoredFacts, Thresholds};
use crate::hex::hex;
use crate::model::Capability;
use crate::paths;

/// The first bytes of every frozen envelope.
pub const MAGIC: &[u8; 8] = b"LGFROZEN";

/// Bumped whenever the layout or the meaning of a field changes.
pub const FORMAT_VERSION: u32 = 1;

const DIGEST_LEN: usize = 32;
const INDEX_ENTRY: usize = 12;
const RECORD_FIXED: usize = 4 + 1 + 1 + 4 + 4 + 8 + 8 + 8 + 4;
const BUCKET: usize = 8 + 1 + 4 + 4;
const NO_GRANT: u8 = u8::MAX;

/// Why a frozen envelope could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrozenError(pub String);

impl std::fmt::Display for FrozenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "frozen envelope: {}", self.0)
    }
}

impl std::error::Error for FrozenError {}

fn damaged(what: &str) -> FrozenError {
    FrozenError(format!("damaged or truncated ({what})"))
}

/// What is frozen besides the envelopes.
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenMeta {
    /// The replay's id for the setting.
    pub setting_id: String,
    /// Posture and thresholds in force.
    pub settings: Settings,
    /// The rules in force, as written (empty when the replay used none).
    pub rules: Vec<String>,
    /// Free-form provenance: the events table, the last event, the tool version.
    pub provenance: Value,
}

/// One project's learned state, to be frozen.
pub struct ProjectEnvelope<'a> {
    /// The project key (the events table's grouping key).
    pub key: &'a str,
    /// The project root, matched against a call's working directory.
    pub root: &'a str,
    /// What was learned.
    pub envelope: &'a Envelope,
}

/// Encodes projects and their envelopes; the digest is appended.
pub fn encode(meta: &FrozenMeta, projects: &[ProjectEnvelope<'_>]) -> Vec<u8> {
    let sections: Vec<Vec<u8>> = projects.iter().map(|p| section(p.envelope)).collect();
    let mut offset = 0u64;
    let listed: Vec<Value> = projects
        .iter()
        .zip(&sections)
        .map(|(p, bytes)| {
            let transitions: Vec<String> = p
                .envelope
                .transitions
                .keys()
                .map(|(a, b)| format!("{}>{}", a.as_str(), b.as_str()))
                .collect();
            let entry = json!({
                "key": p.key,
                "root": paths::normalize(p.root),
                "events": p.envelope.events,
                "signatures": p.envelope.signatures.len(),
                "transitions": transitions,
                "offset": offset,
                "length": bytes.len(),
            });
            offset += bytes.len() as u64;
            entry
        })
        .collect();
    let header = json!({
        "setting_id": meta.setting_id,
        "settings": settings_json(&meta.settings),
        "rules": meta.rules,
        "provenance": meta.provenance,
        "projects": listed,
    });
    let header = header.to_string().into_bytes();
    let mut out = Vec::with_capacity(16 + header.len() + offset as usize + DIGEST_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&len_u32(header.len()).to_le_bytes());
    out.extend_from_slice(&header);
    for bytes in &sections {
        out.extend_from_slice(bytes);
    }
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out
}

fn len_u32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

fn section(envelope: &Envelope) -> Vec<u8> {
    let count = envelope.signatures.len();
    let mut records = Vec::new();
    let mut strings = Vec::new();
    let mut index = Vec::with_capacity(count * INDEX_ENTRY);
    let records_start = 4 + count * INDEX_ENTRY;
    let mut record_offsets = Vec::with_capacity(count);
    for stats in envelope.signatures.values() {
        record_offsets.push(records_start + records.len());
        records.extend_from_slice(&stats.denied.to_le_bytes());
        records.push(stats.granted_tier.unwrap_or(NO_GRANT));
        records.push(stats.worst_tier);
        records.extend_from_slice(&stats.approval_sessions.count().to_le_bytes());
        records.extend_from_slice(&stats.seen_sessions.count().to_le_bytes());
        records.extend_from_slice(&stats.total_seen.to_le_bytes());
        records.extend_from_slice(&stats.first_seen_us.to_le_bytes());
        records.extend_from_slice(&stats.last_seen_us.to_le_bytes());
        records.extend_from_slice(&len_u32(stats.by_day_tier.len()).to_le_bytes());
        for ((day, tier), counts) in &stats.by_day_tier {
            records.extend_from_slice(&day.to_le_bytes());
            records.push(*tier);
            records.extend_from_slice(&counts.confirmed.to_le_bytes());
            records.extend_from_slice(&counts.observed.to_le_bytes());
        }
    }
    let strings_start = records_start + records.len();
    // BTreeMap<String, _> iterates in byte order, which is the order the lookup searches.
    for (signature, record) in envelope.signatures.keys().zip(record_offsets) {
        index.extend_from_slice(&len_u32(strings_start + strings.len()).to_le_bytes());
        index.extend_from_slice(&len_u32(signature.len()).to_le_bytes());
        index.extend_from_slice(&len_u32(record).to_le_bytes());
        strings.extend_from_slice(signature.as_bytes());
    }
    let mut out = Vec::with_capacity(strings_start + strings.len());
    out.extend_from_slice(&len_u32(count).to_le_bytes());
    out.extend_from_slice(&index);
    out.extend_from_slice(&records);
    out.extend_from_slice(&strings);
    out
}

/// A setting as JSON: the posture and [`thresholds_json`].
pub fn settings_json(settings: &Settings) -> Value {
    let mut value = thresholds_json(&settings.thresholds);
    if let Value::Object(map) = &mut value {
        map.insert("posture".to_string(), json!(settings.posture.as_str()));
    }
    value
}

/// Thresholds as JSON, as the frozen header, the replay's `params` and `export --inspect` write
/// them.
pub fn thresholds_json(t: &Thresholds) -> Value {
    json!({
        "confidence_by_tier": t.confidence_by_tier,
        "z": t.z,
        "min_sessions": t.min_sessions,
        "min_days": t.min_days,
        "min_approval": t.min_approval,
        "min_observed": t.min_observed,
        "max_tier": t.max_tier,
        "half_life_days": t.half_life_days,
    })
}

fn settings_from(value: &Value) -> Result<Settings, FrozenError> {
    let bad = |field: &str| FrozenError(format!("the header's setting has no valid `{field}`"));
    let num = |field: &str| {
        value
            .get(field)
            .and_then(Value::as_f64)
            .ok_or_else(|| bad(field))
    };
    let int = |field: &str| {
        value
            .get(field)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| bad(field))
    };
    let posture = value
        .get("posture")
        .and_then(Value::as_str)
        .and_then(Posture::parse)
        .ok_or_else(|| bad("posture"))?;
    let confidence: Vec<f64> = value
        .get("confidence_by_tier")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let confidence_by_tier: [f64; 3] = confidence
        .try_into()
        .map_err(|_| bad("confidence_by_tier"))?;
    Ok(Settings {
        posture,
        thresholds: Thresholds {
            confidence_by_tier,
            z: num("z")?,
            min_sessions: int("min_sessions")?,
            min_days: int("min_days")?,
            min_approval: num("min_approval")?,
            min_observed: num("min_observed")?,
            max_tier: u8::try_from(int("max_tier")?).map_err(|_| bad("max_tier"))?,
            half_life_days: num("half_life_days")?,
        },
    })
}

/// A frozen envelope, borrowed from its bytes (read or memory-mapped by the caller).
#[derive(Debug, Clone)]
pub struct Frozen<'a> {
    bytes: &'a [u8],
    header: Value,
    settings: Settings,
    projects: Vec<ProjectEntry>,
}

#[derive(Debug, Clone)]
struct ProjectEntry {
    key: String,
    root: String,
    events: u64,
    transitions: Vec<(Capability, Capability)>,
    start: usize,
    end: usize,
}

impl<'a> Frozen<'a> {
    /// Checks the layout and reads the header. The digest is checked by [`Frozen::verify`]
    /// (hashing the file costs more than deciding with it).
    pub fn parse(bytes: &'a [u8]) -> Result<Frozen<'a>, FrozenError> {
        if bytes.get(..MAGIC.len()) != Some(MAGIC.as_slice()) {
            return Err(FrozenError(
                "not a leastgrant frozen envelope (wrong magic bytes)".to_string(),
            ));
        }
        let version = read_u32(bytes, 8).ok_or_else(|| damaged("version"))?;
        if version != FORMAT_VERSION {
            return Err(FrozenError(format!(
                "format version {version}, this build reads version {FORMAT_VERSION}: export it again"
            )));
        }
        let header_len = read_u32(bytes, 12).ok_or_else(|| damaged("header length"))? as usize;
        let body_start = 16usize
            .checked_add(header_len)
            .ok_or_else(|| damaged("header length"))?;
        let header_bytes = bytes.get(16..body_start).ok_or_else(|| damaged("header"))?;
        let header: Value =
            serde_json::from_slice(header_bytes).map_err(|_| damaged("header JSON"))?;
        let body_end = bytes
            .len()
            .checked_sub(DIGEST_LEN)
            .filter(|end| *end >= body_start)
            .ok_or_else(|| damaged("digest"))?;
        let settings = settings_from(header.get("settings").unwrap_or(&Value::Null))?;
        let mut projects = Vec::new();
        for p in header
            .get("projects")
            .and_then(Value::as_array)
            .ok_or_else(|| damaged("project list"))?
        {
            let text = |f: &str| p.get(f).and_then(Value::as_str).map(str::to_string);
            let number = |f: &str| p.get(f).and_then(Value::as_u64);
            let offset = number("offset").ok_or_else(|| damaged("project offset"))?;
            let length = number("length").ok_or_else(|| damaged("project length"))?;
            let start = usize::try_from(offset)
                .ok()
                .and_then(|o| body_start.checked_add(o))
                .ok_or_else(|| damaged("project offset"))?;
            let end = usize::try_from(length)
                .ok()
                .and_then(|l| start.checked_add(l))
                .filter(|end| *end <= body_end)
                .ok_or_else(|| damaged("project length"))?;
            let transitions = p
                .get("transitions")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(Value::as_str)
                        .filter_map(|t| t.split_once('>'))
                        .filter_map(|(a, b)| Some((Capability::parse(a)?, Capability::parse(b)?)))
                        .collect()
                })
                .unwrap_or_default();
            projects.push(ProjectEntry {
                key: text("key").ok_or_else(|| damaged("project key"))?,
                root: text("root").ok_or_else(|| damaged("project root"))?,
                events: number("events").unwrap_or(0),
                transitions,
                start,
                end,
            });
        }
        Ok(Frozen {
            bytes,
            header,
            settings,
            projects,
        })
    }

    /// The stored digest, hex (what reason lines and `doctor` name).
    pub fn digest(&self) -> String {
        let start = self.bytes.len().saturating_sub(DIGEST_LEN);
        hex(self.bytes.get(start..).unwrap_or_default())
    }

    /// Recomputes the digest and compares it with the stored one.
    pub fn verify(&self) -> Result<(), FrozenError> {
        let end = self.bytes.len().saturating_sub(DIGEST_LEN);
        let body = self.bytes.get(..end).unwrap_or_default();
        if hex(&Sha256::digest(body)) == self.digest() {
            Ok(())
        } else {
            Err(FrozenError(
                "its content does not match its digest: it was changed or damaged after export"
                    .to_string(),
            ))
        }
    }

    /// The setting in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The replay's id for the setting.
    pub fn setting_id(&self) -> &str {
        self.header
            .get("setting_id")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The rules in force, as written.
    pub fn rules(&self) -> Vec<String> {
        self.header
            .get("rules")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Provenance, as exported.
    pub fn provenance(&self) -> &Value {
        self.header.get("provenance").unwrap_or(&Value::Null)
    }

    /// Every project, in export order.
    pub fn projects(&self) -> impl Iterator<Item = FrozenProject<'_>> {
        self.projects.iter().map(|entry| FrozenProject {
            bytes: self.bytes.get(entry.start..entry.end).unwrap_or_default(),
            entry,
        })
    }

    /// The project with this key.
    pub fn project(&self, key: &str) -> Option<FrozenProject<'_>> {
        self.projects().find(|p| p.key() == key)
    }

    /// The project whose root holds `cwd` (the deepest such root).
    pub fn project_for(&self, cwd: &str) -> Option<FrozenProject<'_>> {
        let cwd = paths::normalize(cwd);
        self.projects()
            .filter(|p| paths::is_within_case_aware(&cwd, p.root()))
            .max_by_key(|p| p.root().len())
    }
}

/// One project of a frozen envelope: answers [`Learned`] by binary search.
#[derive(Debug, Clone, Copy)]
pub struct FrozenProject<'a> {
    bytes: &'a [u8],
    entry: &'a ProjectEntry,
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
    pub fn key(&self) -> &'a str {
        &self.entry.key
    }

    /// The project root.
    pub fn root(&self) -> &'a str {
        &self.entry.root
    }

    /// Signatures frozen (a damaged count is capped by what the section can hold, so a
    /// flipped byte cannot make inspection walk four billion entries).
    pub fn signature_count(&self) -> usize {
        let fits = self.bytes.len().saturating_sub(4) / INDEX_ENTRY;
        read_u32(self.bytes, 0).map_or(0, |n| (n as usize).min(fits))
    }

    fn index_entry(&self, i: usize) -> Option<(&'a [u8], usize)> {
        let at = 4 + i.checked_mul(INDEX_ENTRY)?;
        let offset = read_u32(self.bytes, at)? as usize;
        let len = read_u32(self.bytes, at + 4)? as usize;
        let record = read_u32(self.bytes, at + 8)? as usize;
        Some((self.bytes.get(offset..offset.checked_add(len)?)?, record))
    }

    fn find(&self, signature: &str) -> Option<usize> {
        let (mut low, mut high) = (0usize, self.signature_count());
        while low < high {
            let mid = low + (high - low) / 2;
            let (key, record) = self.index_entry(mid)?;
            match key.cmp(signature.as_bytes()) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some(record),
            }
        }
        None
    }

    fn record(&self, at: usize) -> Option<Record<'a>> {
        let fixed = self.bytes.get(at..at.checked_add(RECORD_FIXED)?)?;
        let buckets = read_u32(fixed, 38)? as usize;
        let start = at + RECORD_FIXED;
        let bucket_bytes = self
            .bytes
            .get(start..start.checked_add(buckets.checked_mul(BUCKET)?)?)?;
        let granted = *fixed.get(4)?;
        Some(Record {
            facts: StoredFacts {
                denied: read_u32(fixed, 0)?,
                granted_tier: (granted != NO_GRANT).then_some(granted),
                approval_sessions: read_u32(fixed, 6)?,
                sessions: read_u32(fixed, 10)?,
            },
            worst_tier: *fixed.get(5)?,
            total_seen: read_u64(fixed, 14)?,
            first_seen_us: read_u64(fixed, 22)? as i64,
            last_seen_us: read_u64(fixed, 30)? as i64,
            buckets: bucket_bytes,
        })
    }

    /// Every signature with its statistics, in byte order; `None` for a damaged entry.
    pub fn signatures(&self) -> impl Iterator<Item = Option<FrozenSignature>> + '_ {
        (0..self.signature_count()).map(|i| {
            let (key, at) = self.index_entry(i)?;
            let record = self.record(at)?;
            Some(FrozenSignature {
                signature: String::from_utf8_lossy(key).into_owned(),
                facts: record.facts,
                total_seen: record.total_seen,
                worst_tier: record.worst_tier,
                first_seen_us: record.first_seen_us,
                last_seen_us: record.last_seen_us,
                buckets: record.bucket_iter().map(|(d, t, c)| ((d, t), c)).collect(),
            })
        })
    }
}

struct Record<'a> {
    facts: StoredFacts,
    worst_tier: u8,
    total_seen: u64,
    first_seen_us: i64,
    last_seen_us: i64,
    buckets: &'a [u8],
}

impl Record<'_> {
    fn bucket_iter(&self) -> impl Iterator<Item = (i64, u8, DayCounts)> + '_ {
        self.buckets.chunks_exact(BUCKET).filter_map(|b| {
            Some((
                read_u64(b, 0)? as i64,
                *b.get(8)?,
                DayCounts {
                    confirmed: read_u32(b, 9)?,
                    observed: read_u32(b, 13)?,
                },
            ))
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
        // A damaged record reads as unknown: the decision asks rather than trusting bytes.
        let Some(record) = self.find(signature).and_then(|at| self.record(at)) else {
            return Familiarity::NOVEL;
        };
        Familiarity::of(
            record.bucket_iter(),
            &record.facts,
            tier,
            now_us,
            thresholds,
            &Exact(thresholds.half_life_days),
        )
    }

    fn transition_seen(&self, previous: Capability, capability: Capability) -> bool {
        self.entry.transitions.contains(&(previous, capability))
    }

    fn events(&self) -> u64 {
        self.entry.events
    }
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let slice = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(slice.try_into().ok()?))
}

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    let slice = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(slice.try_into().ok()?))
}
