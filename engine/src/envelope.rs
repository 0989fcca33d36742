//! Envelope learning: what a project has shown to be routine, and whether that is enough.
//!
//! Evidence is stored as integer counts per signature, per UTC day and per tier, so the stored
//! state is exactly order-independent (addition commutes) and the half-life is a query-time
//! parameter. Approvals decay; denials never do. Evidence earned at a tier counts only for
//! decisions at or below that tier. Session counts use a bottom-k sketch of session hashes,
//! also order-independent.
//!
//! Owns the per-project [`Envelope`] (statistics by signature, capability transitions), the
//! [`Learned`] trait a decision asks, and promotion ([`can_promote`]). One signature's statistics
//! and what they say ([`SignatureStats`], [`Familiarity`]) are in [`stats`]; how evidence of an
//! age weighs, and the sums that make asking cheap, are in [`crate::decay`].

pub(crate) mod stats;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::decay::{DecayTable, Exact, Weights};
use crate::model::{Action, Analysis, Capability};
use stats::{Evidence, Familiarity, SignatureStats, Thresholds, stable_hash};

/// What a decision may ask of learned state: the live [`Envelope`] during replay, the frozen
/// one in the hook. Both answer through [`Familiarity::of`].
pub trait Learned {
    /// What is known about `signature` for a decision at `tier` at `now_us`.
    fn familiarity(
        &self,
        signature: &str,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity;
    /// Transitions seen from `previous` to `capability` within sessions.
    fn transition_seen(&self, previous: Capability, capability: Capability) -> bool;
    /// Actions folded in.
    fn events(&self) -> u64;
}

impl Learned for Envelope {
    fn familiarity(
        &self,
        signature: &str,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity {
        Envelope::familiarity(self, signature, tier, now_us, thresholds)
    }

    fn transition_seen(&self, previous: Capability, capability: Capability) -> bool {
        self.transitions.contains_key(&(previous, capability))
    }

    fn events(&self) -> u64 {
        self.events
    }
}

/// Why learning did or did not promote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Promotion {
    /// Granted in bulk.
    Granted,
    /// Enough human approvals, on enough days and sessions.
    Confirmed,
    /// Harmless, and seen often enough.
    Observed,
    /// Above the highest promotable tier.
    BlastTooHigh,
    /// A human refused it once.
    PreviouslyDenied,
    /// More approvals needed.
    NeedsApprovals {
        /// How many more (clean record).
        more: u32,
        /// On how many more days.
        more_days: u32,
    },
    /// Enough approvals, too few days.
    NeedsDays {
        /// How many more.
        more: u32,
    },
    /// Enough approvals, too few sessions.
    NeedsSessions {
        /// How many more.
        more: u32,
    },
}

impl Promotion {
    /// Promoted.
    pub fn allows(self) -> bool {
        matches!(
            self,
            Promotion::Granted | Promotion::Confirmed | Promotion::Observed
        )
    }
}

/// Per project: signature statistics, capability transitions and an event count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Envelope {
    /// Statistics by signature.
    pub signatures: BTreeMap<String, SignatureStats>,
    /// `previous capability > capability` counts within sessions.
    pub transitions: BTreeMap<(Capability, Capability), u64>,
    /// Actions folded in.
    pub events: u64,
    /// The decay of one half-life, tabled: with it each signature's decayed sums are kept
    /// current and questions read the table (the replay, which asks after every fold); `None`
    /// recomputes from the buckets with computed weights (the same values).
    pub tracking: Option<Arc<DecayTable>>,
}

impl Envelope {
    /// An envelope that keeps its decayed sums current for the table's half-life.
    pub fn tracking(decay: Arc<DecayTable>) -> Envelope {
        Envelope {
            tracking: Some(decay),
            ..Envelope::default()
        }
    }

    /// Folds one action's evidence in.
    pub fn learn(
        &mut self,
        action: &Action,
        evidence: Evidence,
        at_us: i64,
        session: &str,
        previous: Option<Capability>,
    ) {
        self.learn_signature(&action.signature, action.tier(), evidence, at_us, session);
        if let Some(prev) = previous {
            *self
                .transitions
                .entry((prev, action.capability))
                .or_insert(0) += 1;
        }
    }

    /// Folds one event in. A refusal is attributed only to the riskiest action, so a refused
    /// `cd x && rm -rf y` does not put `cd` on the permanent deny list.
    pub fn learn_event(
        &mut self,
        analysis: &Analysis,
        evidence: Evidence,
        at_us: i64,
        session: &str,
        previous: Option<Capability>,
    ) {
        if evidence == Evidence::Denied {
            if let Some(worst) = riskiest(&analysis.actions) {
                self.learn(worst, evidence, at_us, session, previous);
            }
            return;
        }
        let mut prev = previous;
        for action in &analysis.actions {
            self.learn(action, evidence, at_us, session, prev);
            prev = Some(action.capability);
        }
    }

    /// Folds evidence for a signature seen at `tier`.
    pub fn learn_signature(
        &mut self,
        signature: &str,
        tier: u8,
        evidence: Evidence,
        at_us: i64,
        session: &str,
    ) {
        self.events += 1;
        // Look up before inserting: the replay folds millions of sightings of a few thousand
        // signatures, and an owned key per fold would allocate every time.
        if !self.signatures.contains_key(signature) {
            self.signatures
                .insert(signature.to_string(), SignatureStats::default());
        }
        let Some(stats) = self.signatures.get_mut(signature) else {
            return;
        };
        let tracking = self.tracking.as_ref().map(|t| t.half_life_days());
        stats.learn(tier, evidence, at_us, stable_hash(session), tracking);
    }

    /// What is known about `signature` for a decision at `tier` at `now_us`.
    pub fn familiarity(
        &self,
        signature: &str,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity {
        match self
            .tracking
            .as_deref()
            .filter(|t| t.half_life_days() == thresholds.half_life_days)
        {
            Some(table) => self.familiarity_weighted(signature, tier, now_us, thresholds, table),
            None => self.familiarity_weighted(
                signature,
                tier,
                now_us,
                thresholds,
                &Exact(thresholds.half_life_days),
            ),
        }
    }

    /// [`Envelope::familiarity`] with the weights from `weights` (a table or computed; the
    /// values are the same). Uses the kept sums when they are for this half-life.
    pub fn familiarity_weighted(
        &self,
        signature: &str,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
        weights: &dyn Weights,
    ) -> Familiarity {
        match self.signatures.get(signature) {
            Some(stats) => stats.familiarity(tier, now_us, thresholds, weights),
            None => Familiarity::NOVEL,
        }
    }

    /// Signatures seen exactly once, for the Good-Turing novelty rate.
    pub fn hapax(&self) -> usize {
        self.signatures
            .values()
            .filter(|s| s.total_seen == 1)
            .count()
    }
}

/// The riskiest of several actions: highest tier, then the lexically first signature.
pub fn riskiest(actions: &[Action]) -> Option<&Action> {
    actions.iter().min_by(|a, b| {
        b.tier()
            .cmp(&a.tier())
            .then_with(|| a.signature.cmp(&b.signature))
    })
}

/// Whether learning promotes an action with familiarity `fam` at `tier`.
pub fn can_promote(
    fam: &Familiarity,
    tier: u8,
    harmless: bool,
    thresholds: &Thresholds,
) -> Promotion {
    if tier > thresholds.max_tier {
        return Promotion::BlastTooHigh;
    }
    promote(
        fam,
        harmless,
        thresholds,
        thresholds.required_confidence(tier),
        |required| thresholds.approvals_needed(required),
    )
}

/// Tiers whose required confidence and approvals [`Gates`] work out beforehand.
const GATED_TIERS: usize = 8;

/// [`can_promote`] for one setting's thresholds, with each tier's required confidence and the
/// approvals it needs worked out once (the replay asks millions of times per setting): the same
/// answers, as the same function computes them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gates {
    thresholds: Thresholds,
    /// Per tier up to the highest promotable (at most [`GATED_TIERS`]): the required confidence
    /// and the clean-record approvals it needs.
    by_tier: [(f64, u32); GATED_TIERS],
}

impl Gates {
    /// The gates of `thresholds`.
    pub fn new(thresholds: &Thresholds) -> Gates {
        let mut by_tier = [(f64::INFINITY, u32::MAX); GATED_TIERS];
        for (tier, slot) in (0u8..).zip(by_tier.iter_mut()) {
            let required = thresholds.required_confidence(tier);
            *slot = (required, thresholds.approvals_needed(required));
        }
        Gates {
            thresholds: *thresholds,
            by_tier,
        }
    }

    /// The thresholds they were worked out for.
    pub fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }

    /// [`can_promote`] with these thresholds.
    #[inline]
    pub fn can_promote(&self, fam: &Familiarity, tier: u8, harmless: bool) -> Promotion {
        let thresholds = &self.thresholds;
        if tier > thresholds.max_tier {
            return Promotion::BlastTooHigh;
        }
        match self.by_tier.get(usize::from(tier)) {
            Some(&(required, needed)) => promote(fam, harmless, thresholds, required, |_| needed),
            None => can_promote(fam, tier, harmless, thresholds),
        }
    }
}

/// [`can_promote`] below the highest tier, given the tier's required confidence and the
/// approvals a confidence needs.
fn promote(
    fam: &Familiarity,
    harmless: bool,
    thresholds: &Thresholds,
    required: f64,
    approvals_needed: impl FnOnce(f64) -> u32,
) -> Promotion {
    if fam.denied > 0 {
        return Promotion::PreviouslyDenied;
    }
    if fam.granted {
        return Promotion::Granted;
    }
    let more_days = thresholds.min_days.saturating_sub(fam.approval_days);
    let human_gap = if fam.confirmed <= 0.0 || fam.approval_bound < required {
        // Counted only here: the replay asks this millions of times, mostly of promoted calls.
        let needed = approvals_needed(required);
        let have = fam.confirmed.round() as u32;
        Promotion::NeedsApprovals {
            more: needed.saturating_sub(have).max(1),
            more_days,
        }
    } else if more_days > 0 {
        Promotion::NeedsDays { more: more_days }
    } else if fam.approval_sessions < thresholds.min_sessions {
        Promotion::NeedsSessions {
            more: thresholds.min_sessions - fam.approval_sessions,
        }
    } else {
        return Promotion::Confirmed;
    };
    if harmless && fam.seen >= thresholds.min_observed && fam.sessions >= thresholds.min_sessions {
        return Promotion::Observed;
    }
    human_gap
}
