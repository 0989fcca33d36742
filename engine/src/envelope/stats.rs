//! Signature statistics: what has been learned about one signature and what it says at a tier
//! and a time. Owns the evidence kinds, the thresholds, the Wilson bound, the UTC day and the
//! session hash, the bottom-k session sketch, [`SignatureStats`] (the order-independent fold of
//! sightings), [`Approvals`] (the half of it an allow never touches, kept per replay setting) and
//! [`Familiarity`] (the one computation every answer goes through, live, replayed or frozen).
//!
//! Must not: know about projects, transitions or promotion; those are the envelope's
//! ([`super`]), which uses this module and never the reverse.

use std::collections::BTreeMap;

use crate::decay::{ConfirmedSums, DayCounts, DecayedSums, HORIZON_DAYS, SumsCache, Weights};

/// How the envelope knows about a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Evidence {
    /// A human was asked and said yes (and the call then ran).
    Confirmed,
    /// A human approved it in bulk, on purpose.
    Granted,
    /// It ran and nobody was asked.
    Observed,
    /// A human said no.
    Denied,
}

impl Evidence {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Confirmed => "confirmed",
            Evidence::Granted => "granted",
            Evidence::Observed => "observed",
            Evidence::Denied => "denied",
        }
    }
}

/// The thresholds a setting uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Required Wilson lower bound of the approval rate for tiers 0, 1 and 2.
    pub confidence_by_tier: [f64; 3],
    /// The one-sided z of the Wilson bound (1.645: 95% one-sided).
    pub z: f64,
    /// Distinct sessions the approvals must come from.
    pub min_sessions: u32,
    /// Distinct UTC days the approvals must come from.
    pub min_days: u32,
    /// A floor under every tier's required confidence.
    pub min_approval: f64,
    /// Decayed sightings the observation route needs.
    pub min_observed: f64,
    /// Tiers above this are never promoted.
    pub max_tier: u8,
    /// Half-life of approvals and observations, in days.
    pub half_life_days: f64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            confidence_by_tier: [0.6, 0.6, 0.8],
            z: 1.645,
            min_sessions: 2,
            min_days: 2,
            min_approval: 0.6,
            min_observed: 8.0,
            max_tier: 2,
            half_life_days: 90.0,
        }
    }
}

impl Thresholds {
    /// The confidence a tier needs; infinite above `max_tier`. Past the table each tier keeps a
    /// quarter of the remaining doubt.
    pub fn required_confidence(&self, tier: u8) -> f64 {
        if tier > self.max_tier {
            return f64::INFINITY;
        }
        let table = match self.confidence_by_tier.get(usize::from(tier)) {
            Some(c) => *c,
            None => {
                let last = self.confidence_by_tier.last().copied().unwrap_or(0.8);
                let steps = i32::from(tier) - 2;
                1.0 - (1.0 - last) / 4f64.powi(steps)
            }
        };
        table.max(self.min_approval)
    }

    /// Clean-record approvals needed for a confidence: `n / (n + z²) ≥ c`.
    pub fn approvals_needed(&self, confidence: f64) -> u32 {
        if !confidence.is_finite() || confidence >= 1.0 {
            return u32::MAX;
        }
        let z2 = self.z * self.z;
        let needed = (confidence * z2 / (1.0 - confidence) - 1e-9).ceil();
        if needed <= 0.0 { 0 } else { needed as u32 }
    }
}

/// The Wilson score lower bound of `successes` out of `trials`, clamped at 0.
pub fn wilson_lower_bound(successes: f64, trials: f64, z: f64) -> f64 {
    if trials <= 0.0 {
        return 0.0;
    }
    let p = (successes / trials).clamp(0.0, 1.0);
    let z2 = z * z;
    let centre = p + z2 / (2.0 * trials);
    let margin = z * (p * (1.0 - p) / trials + z2 / (4.0 * trials * trials)).sqrt();
    ((centre - margin) / (1.0 + z2 / trials)).max(0.0)
}

/// Microseconds in a day.
pub const DAY_US: i64 = 86_400_000_000;

/// How many session hashes the bottom-k sketches keep; gates ask for far fewer.
const SESSION_SKETCH: usize = 32;

/// The UTC day index of a timestamp in microseconds.
pub fn day_of(at_us: i64) -> i64 {
    at_us.div_euclid(DAY_US)
}

/// A stable 64-bit hash (FNV-1a): session ids are never stored raw.
pub fn stable_hash(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The smallest `SESSION_SKETCH` distinct hashes seen: a count that is exact up to the sketch
/// size and does not depend on arrival order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSketch(Vec<u64>);

impl SessionSketch {
    fn insert(&mut self, hash: u64) {
        if let Err(at) = self.0.binary_search(&hash) {
            self.0.insert(at, hash);
            self.0.truncate(SESSION_SKETCH);
        }
    }

    /// Distinct sessions, exact up to the sketch size.
    pub fn count(&self) -> u32 {
        u32::try_from(self.0.len()).unwrap_or(u32::MAX)
    }

    /// The hashes kept, smallest first.
    pub fn hashes(&self) -> &[u64] {
        &self.0
    }

    /// Rebuilds a sketch from stored hashes.
    pub fn from_hashes(hashes: impl IntoIterator<Item = u64>) -> SessionSketch {
        let mut sketch = SessionSketch::default();
        for h in hashes {
            sketch.insert(h);
        }
        sketch
    }
}

/// What has been learned about one signature.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignatureStats {
    /// Counts by (UTC day, tier).
    pub by_day_tier: BTreeMap<(i64, u8), DayCounts>,
    /// Human refusals, never decayed.
    pub denied: u32,
    /// The highest tier a bulk grant covers, if granted.
    pub granted_tier: Option<u8>,
    /// Sessions the approvals came from.
    pub approval_sessions: SessionSketch,
    /// Sessions it was seen in at all.
    pub seen_sessions: SessionSketch,
    /// Sightings, undecayed.
    pub total_seen: u64,
    /// First and last sighting (µs).
    pub first_seen_us: i64,
    /// Last sighting (µs).
    pub last_seen_us: i64,
    /// The highest tier it was seen at.
    pub worst_tier: u8,
    /// The decayed sums, kept current when the envelope tracks a half-life.
    pub sums: SumsCache,
}

impl SignatureStats {
    /// Folds one sighting in: the one fold behind [`Envelope::learn_signature`], for callers
    /// that keep a signature's statistics themselves (the replay shares them between
    /// settings until a setting's evidence differs). `session_hash` is [`stable_hash`] of the
    /// session id; `tracking` the half-life whose decayed sums are kept current, if any.
    ///
    /// [`Envelope::learn_signature`]: super::Envelope::learn_signature
    pub fn learn(
        &mut self,
        tier: u8,
        evidence: Evidence,
        at_us: i64,
        session_hash: u64,
        tracking: Option<f64>,
    ) {
        let stats = self;
        let day = day_of(at_us);
        if stats.total_seen == 0 {
            stats.first_seen_us = at_us;
            stats.last_seen_us = at_us;
        }
        stats.total_seen += 1;
        stats.first_seen_us = stats.first_seen_us.min(at_us);
        stats.last_seen_us = stats.last_seen_us.max(at_us);
        stats.worst_tier = stats.worst_tier.max(tier);
        stats.seen_sessions.insert(session_hash);
        // Prune by the newest sighting of any kind, so the stored state is the same whatever the
        // order: exactly the counts within the horizon of the final newest day.
        let newest_day = day_of(stats.last_seen_us);
        let oldest_kept = newest_day - HORIZON_DAYS;
        let mut rebuild = false;
        if stats
            .by_day_tier
            .first_key_value()
            .is_some_and(|((d, _), _)| *d < oldest_kept)
        {
            stats.by_day_tier.retain(|(d, _), _| *d >= oldest_kept);
            // The anchor moved: the sums start again from the first kept day.
            rebuild = true;
        }
        match evidence {
            Evidence::Denied => stats.denied = stats.denied.saturating_add(1),
            Evidence::Granted => {
                stats.granted_tier = Some(stats.granted_tier.map_or(tier, |t| t.max(tier)));
            }
            Evidence::Confirmed | Evidence::Observed => {
                if evidence == Evidence::Confirmed {
                    stats.approval_sessions.insert(session_hash);
                }
                if day >= oldest_kept {
                    let counts = stats.by_day_tier.entry((day, tier)).or_default();
                    let added = if evidence == Evidence::Confirmed {
                        counts.confirmed = counts.confirmed.saturating_add(1);
                        DayCounts {
                            confirmed: 1,
                            observed: 0,
                        }
                    } else {
                        counts.observed = counts.observed.saturating_add(1);
                        DayCounts {
                            confirmed: 0,
                            observed: 1,
                        }
                    };
                    if let Some(h) = tracking {
                        match &mut stats.sums.0 {
                            // In time order: fold forward, the same operations a
                            // recomputation from the buckets performs.
                            Some(sums)
                                if !rebuild && sums.half_life_days == h && day >= sums.open_day =>
                            {
                                sums.advance(day);
                                sums.add(tier, added);
                            }
                            _ => rebuild = true,
                        }
                    }
                }
            }
        }
        if rebuild && let Some(h) = tracking {
            stats.sums = SumsCache(DecayedSums::rebuild(h, &stats.by_day_tier));
        }
    }

    /// What these statistics say for a decision at `tier` at `now_us`, with the weights from
    /// `weights`: the kept sums when they are for this half-life, else from the buckets.
    pub fn familiarity(
        &self,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
        weights: &dyn Weights,
    ) -> Familiarity {
        let confirmed = self.sums.0.as_ref().map(|sums| &sums.confirmed);
        self.familiarity_of_halves(
            (self.approval_sessions.count(), confirmed),
            &|day, tier, counts| (day, tier, counts),
            tier,
            now_us,
            thresholds,
            weights,
        )
    }

    /// The familiarity of these sightings with the approvals `approvals` in place of their own
    /// (the statistics a setting would have kept had its approvals been these): the same
    /// computation as [`SignatureStats::familiarity`], which is this with its own approvals.
    pub fn familiarity_with(
        &self,
        approvals: &Approvals,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
        weights: &dyn Weights,
    ) -> Familiarity {
        self.familiarity_of_halves(
            (approvals.sessions.count(), approvals.sums.as_ref()),
            &|day, tier, counts| (day, tier, approvals.counts_on(day, tier, counts)),
            tier,
            now_us,
            thresholds,
            weights,
        )
    }

    /// The one familiarity computation: the sightings are these statistics', the approvals are
    /// the session count and sums given, and `bucket` turns a stored bucket into the counts of
    /// the statistics the approvals belong to (for the recomputation from buckets).
    fn familiarity_of_halves(
        &self,
        (approval_sessions, confirmed): (u32, Option<&ConfirmedSums>),
        bucket: &dyn Fn(i64, u8, DayCounts) -> (i64, u8, DayCounts),
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
        weights: &dyn Weights,
    ) -> Familiarity {
        let stats = self;
        let facts = StoredFacts {
            denied: stats.denied,
            granted_tier: stats.granted_tier,
            approval_sessions,
            sessions: stats.seen_sessions.count(),
        };
        let kept = stats
            .sums
            .0
            .as_ref()
            .filter(|sums| sums.half_life_days == thresholds.half_life_days)
            .zip(confirmed)
            .and_then(|(sums, confirmed)| sums.at_with(confirmed, tier, day_of(now_us), weights));
        if let Some((confirmed, seen, days)) = kept {
            return Familiarity::known(confirmed, seen, days, &facts, tier, thresholds);
        }
        if stats.by_day_tier.is_empty() {
            return Familiarity::known(0.0, 0.0, 0, &facts, tier, thresholds);
        }
        let buckets = stats
            .by_day_tier
            .iter()
            .map(|((day, bucket_tier), counts)| bucket(*day, *bucket_tier, *counts));
        Familiarity::of(buckets, &facts, tier, now_us, thresholds, weights)
    }

    /// The day the decayed sums are anchored at (the first kept day), when they are kept.
    pub fn anchor(&self) -> Option<i64> {
        self.sums.0.as_ref().map(DecayedSums::anchor)
    }

    /// The approvals half of these statistics: what a setting that shares their sightings
    /// keeps of its own ([`Approvals`]).
    pub fn approvals(&self) -> Approvals {
        Approvals {
            by_day_tier: self
                .by_day_tier
                .iter()
                .filter(|(_, counts)| counts.confirmed > 0)
                .map(|((day, tier), counts)| (*day, *tier, counts.confirmed))
                .collect(),
            sessions: self.approval_sessions.clone(),
            sums: self.sums.0.as_ref().map(|sums| sums.confirmed.clone()),
        }
    }

    /// These sightings with `approvals` in place of their own approvals: the statistics of a
    /// setting whose evidence differed from these only by approvals (`confirmed` where these
    /// have `observed`, or the reverse), for when its sightings start to differ too.
    pub fn with_approvals(&self, approvals: &Approvals) -> SignatureStats {
        let mut stats = self.clone();
        for ((day, tier), counts) in &mut stats.by_day_tier {
            *counts = approvals.counts_on(*day, *tier, *counts);
        }
        stats.approval_sessions = approvals.sessions.clone();
        let h = stats.sums.0.as_ref().map(|sums| sums.half_life_days);
        match (&mut stats.sums.0, &approvals.sums) {
            (Some(sums), Some(confirmed)) if confirmed.anchor() == sums.anchor() => {
                sums.confirmed = confirmed.clone();
            }
            _ => {
                if let Some(h) = h {
                    stats.sums = SumsCache(DecayedSums::rebuild(h, &stats.by_day_tier));
                }
            }
        }
        stats
    }
}

/// A signature's approvals: the part of its statistics that the learning of an allow
/// (`observed`) never touches — approvals by day and tier, the sessions they came from, and
/// their decayed sums, anchored where the signature's sightings are. The replay's settings
/// share the sightings ([`SignatureStats`]) and keep these per setting once their approvals
/// differ: with the sightings they are exactly the statistics of the setting's own envelope
/// ([`SignatureStats::familiarity_with`], [`SignatureStats::with_approvals`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Approvals {
    /// Approvals by day and tier, ascending; only buckets with approvals.
    by_day_tier: Vec<(i64, u8, u32)>,
    sessions: SessionSketch,
    /// The decayed sums, for the sightings' anchor (recomputed when that moves).
    sums: Option<ConfirmedSums>,
}

impl Approvals {
    /// The counts of the bucket `(day, tier)` of statistics with these approvals, whose
    /// sightings' bucket holds `sightings` (approvals and observations together).
    fn counts_on(&self, day: i64, tier: u8, sightings: DayCounts) -> DayCounts {
        let confirmed = self
            .by_day_tier
            .binary_search_by(|(d, t, _)| (*d, *t).cmp(&(day, tier)))
            .ok()
            .and_then(|at| self.by_day_tier.get(at))
            .map_or(0, |(_, _, c)| *c);
        let total = u64::from(sightings.confirmed) + u64::from(sightings.observed);
        DayCounts {
            confirmed,
            observed: u32::try_from(total.saturating_sub(u64::from(confirmed))).unwrap_or(u32::MAX),
        }
    }

    /// Follows the sightings' anchor: when it moved (evidence past the horizon pruned, or an
    /// earlier day arrived), drops the approvals before it and refolds the sums.
    pub fn follow(&mut self, sightings: &SignatureStats) {
        let Some(sums) = sightings.sums.0.as_ref() else {
            return;
        };
        if self.sums.as_ref().map(ConfirmedSums::anchor) == Some(sums.anchor()) {
            return;
        }
        self.refold(sums.anchor(), sums.half_life_days);
    }

    fn refold(&mut self, anchor: i64, half_life_days: f64) {
        self.by_day_tier.retain(|(day, _, _)| *day >= anchor);
        let mut confirmed = ConfirmedSums::new(anchor);
        for (day, tier, count) in &self.by_day_tier {
            confirmed.add(*day, *tier, *count, half_life_days);
        }
        self.sums = Some(confirmed);
    }

    /// Folds one approval in, as [`SignatureStats::learn`] folds `confirmed` evidence, given the
    /// sightings after they folded the same sighting (they decide the horizon and the anchor).
    pub fn learn(
        &mut self,
        sightings: &SignatureStats,
        tier: u8,
        at_us: i64,
        session_hash: u64,
        tracking: Option<f64>,
    ) {
        self.sessions.insert(session_hash);
        let day = day_of(at_us);
        if day < day_of(sightings.last_seen_us) - HORIZON_DAYS {
            return;
        }
        let at = self
            .by_day_tier
            .binary_search_by(|(d, t, _)| (*d, *t).cmp(&(day, tier)));
        match at {
            Ok(at) => {
                if let Some((_, _, count)) = self.by_day_tier.get_mut(at) {
                    *count = count.saturating_add(1);
                }
            }
            Err(at) => self.by_day_tier.insert(at, (day, tier, 1)),
        }
        let (Some(h), Some(anchor)) =
            (tracking, sightings.sums.0.as_ref().map(DecayedSums::anchor))
        else {
            self.sums = None;
            return;
        };
        match &mut self.sums {
            Some(sums) if sums.anchor() == anchor && day >= sums.open_day() => {
                sums.add(day, tier, 1, h);
            }
            _ => self.refold(anchor, h),
        }
    }
}

/// What the envelope knows about a signature at a tier and a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Familiarity {
    /// Decayed approvals at or above the tier.
    pub confirmed: f64,
    /// Decayed sightings (observed and confirmed) at or above the tier.
    pub seen: f64,
    /// Refusals.
    pub denied: u32,
    /// Distinct days with an approval at or above the tier.
    pub approval_days: u32,
    /// Distinct sessions with an approval.
    pub approval_sessions: u32,
    /// Distinct sessions it was seen in.
    pub sessions: u32,
    /// The Wilson lower bound of the approval rate.
    pub approval_bound: f64,
    /// Granted in bulk at or above this tier.
    pub granted: bool,
    /// Never seen before.
    pub novel: bool,
}

/// The undecayed facts about a signature that [`Familiarity::of`] needs besides its buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredFacts {
    /// Refusals.
    pub denied: u32,
    /// The highest tier a bulk grant covers.
    pub granted_tier: Option<u8>,
    /// Distinct sessions with an approval.
    pub approval_sessions: u32,
    /// Distinct sessions it was seen in.
    pub sessions: u32,
}

impl Familiarity {
    /// A signature never seen.
    pub const NOVEL: Familiarity = Familiarity {
        confirmed: 0.0,
        seen: 0.0,
        denied: 0,
        approval_days: 0,
        approval_sessions: 0,
        sessions: 0,
        approval_bound: 0.0,
        granted: false,
        novel: true,
    };

    /// Familiarity from stored buckets `(day, tier, counts)` in ascending `(day, tier)` order:
    /// the anchored sums folded day by day, exactly as the decayed sums keep them. The one
    /// computation behind every answer, live, replayed or frozen.
    pub fn of(
        buckets: impl Iterator<Item = (i64, u8, DayCounts)>,
        facts: &StoredFacts,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
        weights: &dyn Weights,
    ) -> Familiarity {
        let mut anchor: Option<i64> = None;
        let (mut confirmed, mut seen, mut approval_days) = (0.0f64, 0.0f64, 0u32);
        let mut day_open: Option<(i64, u64, u64)> = None;
        let mut fold = |anchor: i64, (day, c, s): (i64, u64, u64)| {
            let g = weights.growth(day - anchor);
            confirmed += c as f64 * g;
            seen += s as f64 * g;
            if c > 0 {
                approval_days += 1;
            }
        };
        for (day, bucket_tier, counts) in buckets {
            let a = *anchor.get_or_insert(day);
            match &mut day_open {
                Some((d, c, s)) if *d == day => {
                    if bucket_tier >= tier {
                        *c += u64::from(counts.confirmed);
                        *s += u64::from(counts.confirmed) + u64::from(counts.observed);
                    }
                }
                _ => {
                    if let Some(done) = day_open.take() {
                        fold(a, done);
                    }
                    day_open = Some(if bucket_tier >= tier {
                        (
                            day,
                            u64::from(counts.confirmed),
                            u64::from(counts.confirmed) + u64::from(counts.observed),
                        )
                    } else {
                        (day, 0, 0)
                    });
                }
            }
        }
        let Some(anchor) = anchor else {
            return Familiarity::known(0.0, 0.0, 0, facts, tier, thresholds);
        };
        if let Some(done) = day_open {
            fold(anchor, done);
        }
        let factor = weights.decay(day_of(now_us) - anchor);
        Familiarity::known(
            confirmed * factor,
            seen * factor,
            approval_days,
            facts,
            tier,
            thresholds,
        )
    }

    fn known(
        confirmed: f64,
        seen: f64,
        approval_days: u32,
        facts: &StoredFacts,
        tier: u8,
        thresholds: &Thresholds,
    ) -> Familiarity {
        Familiarity {
            confirmed,
            seen,
            denied: facts.denied,
            approval_days,
            approval_sessions: facts.approval_sessions,
            sessions: facts.sessions,
            approval_bound: wilson_lower_bound(
                confirmed,
                confirmed + f64::from(facts.denied),
                thresholds.z,
            ),
            granted: facts.granted_tier.is_some_and(|t| t >= tier),
            novel: false,
        }
    }
}
