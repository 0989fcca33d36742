//! One signature's frozen statistics: the payload of an item in a project's signature table.
//!
//! ```text
//! u32 denied, u8 granted tier (255: none), u8 worst tier, u32 approval sessions, u32 sessions,
//! u64 sightings, i64 first and last sighting (µs), u32 bucket count,
//! then per bucket i64 day, u8 tier, u32 confirmed, u32 observed, ascending
//! ```

use std::collections::BTreeMap;

use super::layout::{len_u32, read_u32, read_u64};
use crate::decay::DayCounts;
use crate::envelope::stats::{SignatureStats, StoredFacts};

const RECORD_FIXED: usize = 4 + 1 + 1 + 4 + 4 + 8 + 8 + 8 + 4;
const BUCKET: usize = 8 + 1 + 4 + 4;
const NO_GRANT: u8 = u8::MAX;

/// A signature's statistics as bytes.
pub fn encode(stats: &SignatureStats) -> Vec<u8> {
    let mut out = Vec::with_capacity(RECORD_FIXED + stats.by_day_tier.len() * BUCKET);
    out.extend_from_slice(&stats.denied.to_le_bytes());
    out.push(stats.granted_tier.unwrap_or(NO_GRANT));
    out.push(stats.worst_tier);
    out.extend_from_slice(&stats.approval_sessions.count().to_le_bytes());
    out.extend_from_slice(&stats.seen_sessions.count().to_le_bytes());
    out.extend_from_slice(&stats.total_seen.to_le_bytes());
    out.extend_from_slice(&stats.first_seen_us.to_le_bytes());
    out.extend_from_slice(&stats.last_seen_us.to_le_bytes());
    out.extend_from_slice(&len_u32(stats.by_day_tier.len()).to_le_bytes());
    for ((day, tier), counts) in &stats.by_day_tier {
        out.extend_from_slice(&day.to_le_bytes());
        out.push(*tier);
        out.extend_from_slice(&counts.confirmed.to_le_bytes());
        out.extend_from_slice(&counts.observed.to_le_bytes());
    }
    out
}

/// A record read from its (checked) bytes.
pub struct Record<'a> {
    pub facts: StoredFacts,
    pub worst_tier: u8,
    pub total_seen: u64,
    pub first_seen_us: i64,
    pub last_seen_us: i64,
    buckets: &'a [u8],
}

impl<'a> Record<'a> {
    /// Reads a record; `None` when its lengths disagree with its bytes.
    pub fn decode(bytes: &'a [u8]) -> Option<Record<'a>> {
        let fixed = bytes.get(..RECORD_FIXED)?;
        let count = read_u32(fixed, 38)? as usize;
        let buckets = bytes.get(RECORD_FIXED..)?;
        if buckets.len() != count.checked_mul(BUCKET)? {
            return None;
        }
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
            buckets,
        })
    }

    /// The (day, tier) buckets, ascending.
    pub fn buckets(&self) -> impl Iterator<Item = (i64, u8, DayCounts)> + '_ {
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

    /// The buckets as a map, for inspection.
    pub fn bucket_map(&self) -> BTreeMap<(i64, u8), DayCounts> {
        self.buckets().map(|(d, t, c)| ((d, t), c)).collect()
    }
}
