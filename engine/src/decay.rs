//! Decay: how much evidence of a given age weighs, and the anchored sums that let a replaying
//! envelope answer in constant time while recomputing from the stored day counts gives the same
//! bits (the frozen envelope in the hook does that).
//!
//! The sums are `Σ count·2^((day−anchor)/h)`, folded day by day in ascending order from the first
//! kept day, then scaled by `2^(−(now−anchor)/h)`. [`DecayedSums`] keeps them current as
//! evidence arrives in time order; the envelope's `Familiarity::of` performs the very same
//! floating-point operations from the buckets. They come in two halves with one anchor: the
//! sightings ([`DecayedSums`]) and the approvals ([`ConfirmedSums`]), which an allow never
//! touches, so the replay's settings can share the first and keep the second each.

use std::collections::BTreeMap;

/// Evidence older than this many days before the newest is dropped: at a 90-day half-life it
/// weighs under 1/10,000, and dropping by a horizon keeps the fold order-independent.
pub const HORIZON_DAYS: i64 = 4 * 365;

/// Counts for one signature on one day at one tier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DayCounts {
    /// Human approvals.
    pub confirmed: u32,
    /// Runs nobody was asked about.
    pub observed: u32,
}

/// The weight of evidence `age_days` old at a half-life: 1 for today (or the future).
pub fn decay_weight(age_days: i64, half_life_days: f64) -> f64 {
    let age = age_days as f64;
    if age <= 0.0 || half_life_days <= 0.0 {
        1.0
    } else {
        0.5f64.powf(age / half_life_days)
    }
}

/// `2^(days/h)`: the anchored weight of evidence `days` after the anchor. The exponent is
/// capped so a half-life shorter than a day cannot overflow to infinity.
pub fn growth_weight(days: i64, half_life_days: f64) -> f64 {
    if days <= 0 || half_life_days <= 0.0 {
        1.0
    } else {
        2f64.powf((days as f64 / half_life_days).min(1000.0))
    }
}

/// Where the two weights come from: computed ([`Exact`]) or looked up ([`DecayTable`]); the
/// values are the same.
pub trait Weights {
    /// [`growth_weight`].
    fn growth(&self, days: i64) -> f64;
    /// [`decay_weight`].
    fn decay(&self, age_days: i64) -> f64;
}

/// The weights computed on demand: what the hook uses (it asks a handful of times).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exact(pub f64);

impl Weights for Exact {
    fn growth(&self, days: i64) -> f64 {
        growth_weight(days, self.0)
    }

    fn decay(&self, age_days: i64) -> f64 {
        decay_weight(age_days, self.0)
    }
}

/// Both weights for every day within the horizon, computed once per setting: the replay asks
/// millions of times and the values must be exactly the hook's.
#[derive(Debug, Clone, PartialEq)]
pub struct DecayTable {
    half_life_days: f64,
    decay: Vec<f64>,
    growth: Vec<f64>,
}

impl DecayTable {
    /// The table for a half-life.
    pub fn new(half_life_days: f64) -> DecayTable {
        DecayTable {
            half_life_days,
            decay: (0..=HORIZON_DAYS + 1)
                .map(|age| decay_weight(age, half_life_days))
                .collect(),
            growth: (0..=HORIZON_DAYS + 1)
                .map(|days| growth_weight(days, half_life_days))
                .collect(),
        }
    }

    /// The half-life it was made for.
    pub fn half_life_days(&self) -> f64 {
        self.half_life_days
    }
}

impl Weights for DecayTable {
    fn growth(&self, days: i64) -> f64 {
        usize::try_from(days)
            .ok()
            .and_then(|d| self.growth.get(d).copied())
            .unwrap_or_else(|| growth_weight(days, self.half_life_days))
    }

    fn decay(&self, age_days: i64) -> f64 {
        usize::try_from(age_days)
            .ok()
            .and_then(|age| self.decay.get(age).copied())
            .unwrap_or_else(|| decay_weight(age_days, self.half_life_days))
    }
}

/// Tiers with a sum of their own in [`DecayedSums`]; higher tiers are recomputed.
const SUM_TIERS: usize = 8;

/// The approvals half of a signature's anchored sums: human approvals at tiers `≥ t`, folded
/// day by day from an anchor (the first kept day of the signature's sightings, which the other
/// half, [`DecayedSums`], keeps). It folds a day when an approval arrives on a later one: a day
/// without approvals adds `0·g`, which leaves a sum as it is, so folding only the days that have
/// approvals gives the same bits. An allow (`observed`) never touches it, which is what lets the
/// replay keep one per setting while the settings share the sightings.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmedSums {
    anchor: i64,
    closed: [f64; SUM_TIERS],
    closed_days: [u32; SUM_TIERS],
    open_day: i64,
    open: [u64; SUM_TIERS],
}

impl ConfirmedSums {
    /// No approvals yet, for sums anchored at `anchor`.
    pub(crate) fn new(anchor: i64) -> ConfirmedSums {
        ConfirmedSums {
            anchor,
            closed: [0.0; SUM_TIERS],
            closed_days: [0; SUM_TIERS],
            open_day: anchor,
            open: [0; SUM_TIERS],
        }
    }

    /// The day the sums are anchored at.
    pub(crate) fn anchor(&self) -> i64 {
        self.anchor
    }

    /// The day approvals are still counting on: later approvals fold forward, earlier ones
    /// need a rebuild.
    pub(crate) fn open_day(&self) -> i64 {
        self.open_day
    }

    /// Adds `confirmed` approvals at `tier` on `day` (not before the open day).
    pub(crate) fn add(&mut self, day: i64, tier: u8, confirmed: u32, half_life_days: f64) {
        if confirmed == 0 {
            return;
        }
        if day > self.open_day {
            let g = growth_weight(self.open_day - self.anchor, half_life_days);
            let closed = self.closed.iter_mut().zip(self.closed_days.iter_mut());
            for ((sum, days), c) in closed.zip(&self.open) {
                *sum += *c as f64 * g;
                if *c > 0 {
                    *days += 1;
                }
            }
            self.open_day = day;
            self.open = [0; SUM_TIERS];
        }
        let through = usize::from(tier).min(SUM_TIERS - 1) + 1;
        for open in self.open.iter_mut().take(through) {
            *open += u64::from(confirmed);
        }
    }

    /// Anchored (undecayed) approvals and approval days at tier index `t`.
    fn at(&self, t: usize, weights: &dyn Weights) -> Option<(f64, u32)> {
        let open = *self.open.get(t)?;
        let g = weights.growth(self.open_day - self.anchor);
        let confirmed = self.closed.get(t)? + open as f64 * g;
        let days = self.closed_days.get(t)? + u32::from(open > 0);
        Some((confirmed, days))
    }
}

/// The anchored sums of one signature for one half-life, kept current as evidence arrives in
/// time order: the days before the newest are folded (`closed_*`), the newest day is still
/// counting (`open_*`). Index `t` holds evidence at tiers `≥ t`. Two halves with one anchor:
/// the sightings (here) and the approvals ([`ConfirmedSums`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DecayedSums {
    pub(crate) half_life_days: f64,
    anchor: i64,
    closed_seen: [f64; SUM_TIERS],
    pub(crate) open_day: i64,
    open_seen: [u64; SUM_TIERS],
    pub(crate) confirmed: ConfirmedSums,
}

impl DecayedSums {
    pub(crate) fn new(half_life_days: f64, day: i64) -> DecayedSums {
        DecayedSums {
            half_life_days,
            anchor: day,
            closed_seen: [0.0; SUM_TIERS],
            open_day: day,
            open_seen: [0; SUM_TIERS],
            confirmed: ConfirmedSums::new(day),
        }
    }

    /// The day the sums are anchored at (the first kept day).
    pub(crate) fn anchor(&self) -> i64 {
        self.anchor
    }

    /// Starts a new day, folding the open one (the same operations [`Familiarity::of`] does).
    pub(crate) fn advance(&mut self, day: i64) {
        if day <= self.open_day {
            return;
        }
        let g = growth_weight(self.open_day - self.anchor, self.half_life_days);
        for (seen, s) in self.closed_seen.iter_mut().zip(&self.open_seen) {
            *seen += *s as f64 * g;
        }
        self.open_day = day;
        self.open_seen = [0; SUM_TIERS];
    }

    pub(crate) fn add(&mut self, tier: u8, counts: DayCounts) {
        let through = usize::from(tier).min(SUM_TIERS - 1) + 1;
        for seen in self.open_seen.iter_mut().take(through) {
            *seen += u64::from(counts.confirmed) + u64::from(counts.observed);
        }
        self.confirmed
            .add(self.open_day, tier, counts.confirmed, self.half_life_days);
    }

    /// The sums of stored buckets, folded in ascending day order.
    pub(crate) fn rebuild(
        half_life_days: f64,
        buckets: &BTreeMap<(i64, u8), DayCounts>,
    ) -> Option<DecayedSums> {
        let ((first, _), _) = buckets.first_key_value()?;
        let mut sums = DecayedSums::new(half_life_days, *first);
        for ((day, tier), counts) in buckets {
            sums.advance(*day);
            sums.add(*tier, *counts);
        }
        Some(sums)
    }

    /// Decayed approvals (from `confirmed`, this signature's own half or another with the same
    /// anchor), decayed sightings and approval days at `tier` on `today`, or `None` when this
    /// tier has no sum of its own or the halves' anchors differ.
    pub(crate) fn at_with(
        &self,
        confirmed: &ConfirmedSums,
        tier: u8,
        today: i64,
        weights: &dyn Weights,
    ) -> Option<(f64, f64, u32)> {
        let t = usize::from(tier);
        if t >= SUM_TIERS || confirmed.anchor != self.anchor {
            return None;
        }
        let g = weights.growth(self.open_day - self.anchor);
        let factor = weights.decay(today - self.anchor);
        let (approved, days) = confirmed.at(t, weights)?;
        let seen = self.closed_seen.get(t)? + *self.open_seen.get(t)? as f64 * g;
        Some((approved * factor, seen * factor, days))
    }
}

/// A cache that never makes two statistics unequal: it is derived from the buckets.
#[derive(Debug, Clone, Default)]
pub struct SumsCache(pub Option<DecayedSums>);

impl PartialEq for SumsCache {
    fn eq(&self, _: &SumsCache) -> bool {
        true
    }
}

impl Eq for SumsCache {}
