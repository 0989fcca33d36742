//! What the learning settings of a replay share: the evidence of the setting that never lets
//! learning allow (the strict posture's), and each setting's own statistics only for the
//! signatures where its evidence has differed from that.
//!
//! A setting's envelope is a function of the evidence each signature received, and a setting
//! that has not yet allowed a call learns exactly what strict learns: an ask on every call
//! learning would have decided. So per project the replay keeps one shared envelope (per
//! half-life), the familiarity of each event's actions is computed from it once per event, and a
//! setting keeps statistics of its own for a signature only from the first event where its
//! evidence for that signature differs (an allow where strict asks, or the reverse). Until then
//! its learned-stage decision is a comparison of its thresholds with the shared familiarity.
//! The statistics and familiarity are the engine's own ([`SignatureStats`]), so the numbers, and
//! the verdicts, are those of a setting replayed with an envelope of its own.

use std::sync::Arc;

use leastgrant_engine::{
    Analysis, Capability, DecayTable, Evidence, Exact, Familiarity, Learned, SignatureStats,
    Thresholds, riskiest,
};

/// One setting's statistics for one signature.
#[derive(Debug, Clone)]
enum Stats {
    /// The shared statistics: its evidence has been the shared evidence so far.
    Shared,
    /// Its own, from the first event its evidence differed (`None`: no evidence yet); boxed,
    /// as most signatures of most settings never need one.
    Own(Option<Box<SignatureStats>>),
}

/// The statistics shared by the learning settings of one half-life, per interned signature.
pub(crate) struct SharedEnvelope {
    table: Arc<DecayTable>,
    stats: Vec<Option<SignatureStats>>,
}

impl SharedEnvelope {
    pub(crate) fn new(table: Arc<DecayTable>, signatures: usize) -> SharedEnvelope {
        SharedEnvelope {
            table,
            stats: vec![None; signatures],
        }
    }

    /// The half-life its decayed sums are kept for.
    pub(crate) fn half_life_days(&self) -> f64 {
        self.table.half_life_days()
    }

    /// The familiarity of `signature` (interned) at `tier` and `now_us`.
    pub(crate) fn familiarity(
        &self,
        signature: u32,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity {
        familiarity(
            self.stats.get(signature as usize).and_then(Option::as_ref),
            &self.table,
            tier,
            now_us,
            thresholds,
        )
    }

    /// Folds one event's shared evidence in.
    pub(crate) fn learn(
        &mut self,
        analysis: &Analysis,
        signatures: &[u32],
        evidence: Evidence,
        now_us: i64,
        session_hash: u64,
    ) {
        let h = self.table.half_life_days();
        for_each_learned(analysis, signatures, evidence, |signature, tier| {
            if let Some(slot) = self.stats.get_mut(signature as usize) {
                slot.get_or_insert_default()
                    .learn(tier, evidence, now_us, session_hash, Some(h));
            }
        });
    }
    /// Folds evidence every setting shares for one signature (a standing approval's `granted`).
    pub(crate) fn learn_signature(
        &mut self,
        signature: u32,
        tier: u8,
        evidence: Evidence,
        now_us: i64,
        session_hash: u64,
    ) {
        let h = self.table.half_life_days();
        if let Some(slot) = self.stats.get_mut(signature as usize) {
            slot.get_or_insert_default()
                .learn(tier, evidence, now_us, session_hash, Some(h));
        }
    }
}

/// One learning setting's envelope: the shared one, except where its evidence differed.
pub(crate) struct SettingEnvelope {
    /// Which shared envelope (half-life) it reads.
    pub(crate) shared: usize,
    own: Vec<Stats>,
    /// Signatures folded in (as [`leastgrant_engine::Envelope::events`] counts them).
    events: u64,
}

impl SettingEnvelope {
    pub(crate) fn new(shared: usize, signatures: usize) -> SettingEnvelope {
        SettingEnvelope {
            shared,
            own: vec![Stats::Shared; signatures],
            events: 0,
        }
    }

    /// Folds one event in: `evidence` is this setting's, `shared_evidence` what the shared
    /// envelope is about to fold. Signatures of the event take statistics of their own (a copy
    /// of the shared ones before this event) when the two differ.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn learn(
        &mut self,
        shared: &SharedEnvelope,
        analysis: &Analysis,
        signatures: &[u32],
        evidence: Option<Evidence>,
        shared_evidence: Option<Evidence>,
        now_us: i64,
        session_hash: u64,
    ) {
        if evidence != shared_evidence {
            for signature in signatures {
                if let Some(slot) = self.own.get_mut(*signature as usize)
                    && matches!(slot, Stats::Shared)
                {
                    let copy = shared.stats.get(*signature as usize).cloned().flatten();
                    *slot = Stats::Own(copy.map(Box::new));
                }
            }
        }
        let Some(evidence) = evidence else {
            return;
        };
        let h = shared.table.half_life_days();
        let own = &mut self.own;
        let mut folded = 0u64;
        for_each_learned(analysis, signatures, evidence, |signature, tier| {
            folded += 1;
            if let Some(Stats::Own(stats)) = own.get_mut(signature as usize) {
                stats.get_or_insert_with(Box::default).learn(
                    tier,
                    evidence,
                    now_us,
                    session_hash,
                    Some(h),
                );
            }
        });
        self.events += folded;
    }

    /// Folds evidence the shared envelope folds too for one signature (a standing approval's
    /// `granted`): only a signature with statistics of its own takes it here.
    pub(crate) fn learn_signature(
        &mut self,
        shared: &SharedEnvelope,
        signature: u32,
        tier: u8,
        evidence: Evidence,
        now_us: i64,
        session_hash: u64,
    ) {
        self.events += 1;
        if let Some(Stats::Own(stats)) = self.own.get_mut(signature as usize) {
            stats.get_or_insert_with(Box::default).learn(
                tier,
                evidence,
                now_us,
                session_hash,
                Some(shared.table.half_life_days()),
            );
        }
    }
}

/// The signatures an event's evidence goes to, as [`leastgrant_engine::Envelope::learn_event`]
/// folds them: a refusal to the riskiest action only, anything else to every action.
fn for_each_learned(
    analysis: &Analysis,
    signatures: &[u32],
    evidence: Evidence,
    mut fold: impl FnMut(u32, u8),
) {
    if evidence == Evidence::Denied {
        if let Some(worst) = riskiest(&analysis.actions)
            && let Some(at) = analysis.actions.iter().position(|a| std::ptr::eq(a, worst))
            && let Some(signature) = signatures.get(at)
        {
            fold(*signature, worst.tier());
        }
        return;
    }
    for (action, signature) in analysis.actions.iter().zip(signatures) {
        fold(*signature, action.tier());
    }
}

/// The familiarity of optional statistics, as [`leastgrant_engine::Envelope::familiarity`]
/// answers it: with the table when it is for the thresholds' half-life.
fn familiarity(
    stats: Option<&SignatureStats>,
    table: &DecayTable,
    tier: u8,
    now_us: i64,
    thresholds: &Thresholds,
) -> Familiarity {
    match stats {
        None => Familiarity::NOVEL,
        Some(stats) if table.half_life_days() == thresholds.half_life_days => {
            stats.familiarity(tier, now_us, thresholds, table)
        }
        Some(stats) => {
            stats.familiarity(tier, now_us, thresholds, &Exact(thresholds.half_life_days))
        }
    }
}

/// What one setting's decision on one event reads: its envelope, the shared one, and the
/// shared familiarity of the event's actions computed once for every setting with the same
/// half-life and z.
pub(crate) struct View<'a> {
    pub(crate) setting: Option<&'a SettingEnvelope>,
    pub(crate) shared: &'a SharedEnvelope,
    pub(crate) analysis: &'a Analysis,
    pub(crate) signatures: &'a [u32],
    /// Per action, the shared familiarity for `computed_for`'s half-life and z.
    pub(crate) computed: &'a [Familiarity],
    pub(crate) computed_for: (f64, f64),
}

impl Learned for View<'_> {
    fn familiarity(
        &self,
        signature: &str,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity {
        // The engine asks about the actions of the call it judges: find which by address,
        // else by text.
        let actions = &self.analysis.actions;
        let Some(at) = actions
            .iter()
            .position(|a| std::ptr::eq(a.signature.as_str(), signature))
            .or_else(|| actions.iter().position(|a| a.signature == signature))
        else {
            return Familiarity::NOVEL;
        };
        let Some(id) = self.signatures.get(at).copied() else {
            return Familiarity::NOVEL;
        };
        if let Some(Stats::Own(stats)) = self.setting.and_then(|s| s.own.get(id as usize)) {
            return familiarity(
                stats.as_deref(),
                &self.shared.table,
                tier,
                now_us,
                thresholds,
            );
        }
        let same = (thresholds.half_life_days, thresholds.z) == self.computed_for
            && actions.get(at).is_some_and(|a| a.tier() == tier);
        match self.computed.get(at) {
            Some(fam) if same => *fam,
            _ => self.shared.familiarity(id, tier, now_us, thresholds),
        }
    }

    /// Only the words of an ask consult transitions, and a learning setting's words are asked
    /// for only on a miss, which every action allowed; the replay gives such settings no
    /// transitions of their own (those replayed with an [`leastgrant_engine::Envelope`] of their
    /// own — observe, and any export — have them).
    fn transition_seen(&self, _previous: Capability, _capability: Capability) -> bool {
        true
    }

    fn events(&self) -> u64 {
        self.setting.map_or(0, |s| s.events)
    }
}
