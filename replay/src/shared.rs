//! What the learning settings of a replay share: the evidence of the setting that never lets
//! learning allow (the strict posture's), its sightings even where a setting's approvals differed,
//! and each setting's own statistics only for the signatures where its sightings differed.
//!
//! A setting's envelope is a function of the evidence each signature received, and a setting
//! that has not yet allowed a call learns exactly what strict learns: an ask on every call
//! learning would have decided. So per project the replay keeps one shared envelope (per
//! half-life), the familiarity of each event's actions is computed from it once per event, and a
//! setting's statistics for a signature are, from the first event where its evidence differs:
//! approvals of its own with the shared sightings, while the difference is only `confirmed`
//! against `observed` (an allow where strict asks, which is what a promoted signature learns);
//! statistics of its own when the sightings differ too (it let through a call the person
//! refused). Until then its learned-stage decision is a comparison of its thresholds with the
//! shared familiarity. The statistics, the approvals and the familiarity are the engine's own
//! ([`SignatureStats`], [`Approvals`]), so the numbers, and the verdicts, are those of a setting
//! replayed with an envelope of its own.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use leastgrant_engine::{
    Approvals, Capability, DecayTable, Evidence, Exact, Familiarity, Learned, SignatureStats,
    Thresholds, day_of, riskiest,
};

use crate::classify::Call;

/// One setting's statistics for one signature.
#[derive(Debug, Clone)]
enum Stats {
    /// The shared statistics: its evidence has been the shared evidence so far.
    Shared,
    /// The shared sightings with approvals of its own: its evidence has differed from the
    /// shared evidence only by approvals (`confirmed` where the shared has `observed`, or the
    /// reverse), which leave the sightings as they are. An allow after promotion is such a
    /// difference, and costs nothing here.
    Approvals(Rc<OwnApprovals>),
    /// Sightings of its own, from the first event its sightings differed from the shared ones
    /// (`None`: none yet), with approvals of its own. The sightings are one copy for every
    /// setting whose sightings diverged alike (the settings that let the same refused call
    /// through, and then kept allowing it): a fold is copied on write, once per event for all
    /// of them ([`SharedEnvelope::fold_diverged`]).
    Own(Option<Rc<SignatureStats>>, Rc<OwnApprovals>),
}

/// One fold of diverged sightings this event: the sightings before (null: none), the kind of
/// sighting ([`sighting`]), and the sightings after, which every setting whose sightings were
/// the same before and folds the same kind of sighting takes.
struct Fold {
    signature: u32,
    before: *const SignatureStats,
    kind: u8,
    /// The sightings before, kept alive for the event so that no new copy takes their address.
    _kept: Option<Rc<SignatureStats>>,
    after: Rc<SignatureStats>,
}

/// The kind of sighting a piece of evidence is: `confirmed` and `observed` are the same
/// sighting (they differ only in the approvals, which each setting keeps of its own).
fn sighting(evidence: Evidence) -> u8 {
    match evidence {
        Evidence::Confirmed | Evidence::Observed => 0,
        Evidence::Denied => 1,
        Evidence::Granted => 2,
    }
}

/// The key of a familiarity computed this event: the sightings, the approvals (null: the
/// sightings' share only), the tier, and the half-life and z as bits.
type SeenKey = (*const SignatureStats, *const OwnApprovals, u8, u64, u64);

/// No familiarity kept yet (event stamps start at 1).
const NO_KEY: (u64, SeenKey) = (0, (std::ptr::null(), std::ptr::null(), 0, 0, 0));

/// One fold of shared approvals this event: the approvals before, the sightings and tier they
/// learned with, and the approvals after.
struct ApprovalFold {
    signature: u32,
    before: *const OwnApprovals,
    sightings: *const SignatureStats,
    tier: u8,
    _kept: Rc<OwnApprovals>,
    after: Rc<OwnApprovals>,
}

/// Approvals of a setting's own, and what they said last: a promoted setting learns no more
/// approvals, so on the same day, at the same tier and z and with the same refusals and anchor
/// the approvals' share of a familiarity is what it was; the sightings' share is the shared one
/// computed once per event. One copy for every setting whose approvals are the same (they took
/// them from the shared statistics at the same event and learned the same since): copied on
/// write ([`SharedEnvelope::learn_own_approvals`]).
#[derive(Debug, Clone)]
struct OwnApprovals {
    approvals: Approvals,
    /// `(day, tier, refusals, anchor)` and the approvals' share of the familiarity then.
    said: Cell<Option<(Said, ApprovalShare)>>,
    /// The familiarity this event last computed with these approvals, and for what (the event's
    /// stamp and the [`SeenKey`]): the settings holding them ask the same in turn, and find it
    /// here before the event's list ([`View::seen`]).
    last_key: Cell<(u64, SeenKey)>,
    last: Cell<Familiarity>,
}

type Said = (i64, u8, u64, u32, Option<i64>);

/// The fields of a [`Familiarity`] the approvals decide.
#[derive(Debug, Clone, Copy)]
struct ApprovalShare {
    confirmed: f64,
    approval_days: u32,
    approval_sessions: u32,
    approval_bound: f64,
}

impl OwnApprovals {
    fn new(approvals: Approvals) -> OwnApprovals {
        OwnApprovals {
            approvals,
            said: Cell::new(None),
            last_key: Cell::new(NO_KEY),
            last: Cell::new(Familiarity::NOVEL),
        }
    }
}

/// The statistics shared by the learning settings of one half-life, per interned signature.
pub(crate) struct SharedEnvelope {
    table: Arc<DecayTable>,
    stats: Vec<Option<SignatureStats>>,
    /// This event's folds of diverged sightings.
    folds: RefCell<Vec<Fold>>,
    /// This event's copies of the shared sightings (as they were before the event) for the
    /// settings whose sightings diverge now, per signature.
    snapshots: RefCell<Vec<(u32, Rc<SignatureStats>)>>,
    /// This event's familiarity of sightings with approvals of a setting's own.
    seen: RefCell<Vec<(SeenKey, Familiarity)>>,
    /// This event's copies of the shared approvals (as they were before the event) for the
    /// settings whose approvals diverge now, per signature.
    approval_snapshots: RefCell<Vec<(u32, Rc<OwnApprovals>)>>,
    /// This event's folds of approvals of the settings' own.
    approval_folds: RefCell<Vec<ApprovalFold>>,
    /// The event's stamp (counted by [`SharedEnvelope::begin_event`], from 1).
    stamp: Cell<u64>,
}

impl SharedEnvelope {
    pub(crate) fn new(table: Arc<DecayTable>, signatures: usize) -> SharedEnvelope {
        SharedEnvelope {
            table,
            stats: vec![None; signatures],
            folds: RefCell::new(Vec::new()),
            snapshots: RefCell::new(Vec::new()),
            seen: RefCell::new(Vec::new()),
            approval_snapshots: RefCell::new(Vec::new()),
            approval_folds: RefCell::new(Vec::new()),
            stamp: Cell::new(0),
        }
    }

    /// Forgets the previous event's folds, copies and familiarity of diverged sightings.
    pub(crate) fn begin_event(&self) {
        self.folds.borrow_mut().clear();
        self.snapshots.borrow_mut().clear();
        self.seen.borrow_mut().clear();
        self.approval_snapshots.borrow_mut().clear();
        self.approval_folds.borrow_mut().clear();
        self.stamp.set(self.stamp.get() + 1);
    }

    /// The approvals of the shared statistics of `signature` as they were before this event,
    /// as one copy for every setting whose approvals diverge at this event.
    fn approvals_snapshot(&self, signature: u32) -> Rc<OwnApprovals> {
        let mut snapshots = self.approval_snapshots.borrow_mut();
        if let Some((_, copy)) = snapshots.iter().find(|(id, _)| *id == signature) {
            return Rc::clone(copy);
        }
        let approvals = self
            .stats
            .get(signature as usize)
            .and_then(Option::as_ref)
            .map(SignatureStats::approvals)
            .unwrap_or_default();
        let copy = Rc::new(OwnApprovals::new(approvals));
        snapshots.push((signature, Rc::clone(&copy)));
        copy
    }

    /// Folds one approval into approvals of a setting's own `slot` given the sightings after
    /// they folded the same sighting, copy on write: settings that held the same approvals and
    /// learn with the same sightings take the same copy after, folded once.
    fn learn_own_approvals(
        &self,
        slot: &mut Rc<OwnApprovals>,
        signature: u32,
        sightings: &SignatureStats,
        tier: u8,
        now_us: i64,
        session_hash: u64,
    ) {
        let before = Rc::as_ptr(slot);
        let with = std::ptr::from_ref(sightings);
        let mut folds = self.approval_folds.borrow_mut();
        if let Some(fold) = folds.iter().find(|f| {
            f.signature == signature && f.before == before && f.sightings == with && f.tier == tier
        }) {
            *slot = Rc::clone(&fold.after);
            return;
        }
        let h = Some(self.table.half_life_days());
        if let Some(own) = Rc::get_mut(slot) {
            own.approvals
                .learn(sightings, tier, now_us, session_hash, h);
            own.said.set(None);
            return;
        }
        let mut own = OwnApprovals::new(slot.approvals.clone());
        own.approvals
            .learn(sightings, tier, now_us, session_hash, h);
        let after = Rc::new(own);
        let kept = std::mem::replace(slot, Rc::clone(&after));
        folds.push(ApprovalFold {
            signature,
            before,
            sightings: with,
            tier,
            _kept: kept,
            after,
        });
    }

    /// The shared sightings of `signature` as they were before this event, as one copy for
    /// every setting whose sightings diverge at this event.
    fn snapshot(&self, signature: u32) -> Option<Rc<SignatureStats>> {
        let stats = self.stats.get(signature as usize)?.as_ref()?;
        let mut snapshots = self.snapshots.borrow_mut();
        if let Some((_, copy)) = snapshots.iter().find(|(id, _)| *id == signature) {
            return Some(Rc::clone(copy));
        }
        let copy = Rc::new(stats.clone());
        snapshots.push((signature, Rc::clone(&copy)));
        Some(copy)
    }

    /// Folds one sighting into a setting's diverged sightings `slot`, copy on write: settings
    /// whose sightings were the same copy before and fold the same kind of sighting take the
    /// same copy after, folded once. Sightings no other setting holds fold in place.
    fn fold_diverged(
        &self,
        slot: &mut Option<Rc<SignatureStats>>,
        signature: u32,
        tier: u8,
        evidence: Evidence,
        now_us: i64,
        session_hash: u64,
    ) {
        let before = slot.as_ref().map_or(std::ptr::null(), Rc::as_ptr);
        let kind = sighting(evidence);
        let mut folds = self.folds.borrow_mut();
        if let Some(fold) = folds
            .iter()
            .find(|f| f.signature == signature && f.before == before && f.kind == kind)
        {
            *slot = Some(Rc::clone(&fold.after));
            return;
        }
        let h = Some(self.table.half_life_days());
        if let Some(stats) = slot.as_mut().and_then(Rc::get_mut) {
            stats.learn(tier, evidence, now_us, session_hash, h);
            return;
        }
        let mut stats = slot.as_deref().cloned().unwrap_or_default();
        stats.learn(tier, evidence, now_us, session_hash, h);
        let after = Rc::new(stats);
        folds.push(Fold {
            signature,
            before,
            kind,
            _kept: slot.take(),
            after: Rc::clone(&after),
        });
        *slot = Some(after);
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
        call: &Call,
        evidence: Evidence,
        now_us: i64,
        session_hash: u64,
    ) {
        let h = self.table.half_life_days();
        for_each_learned(call, evidence, |signature, tier| {
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
    /// envelope is about to fold. Signatures of the event take approvals of their own (a copy
    /// of the shared ones before this event) when the two differ only by approvals, and whole
    /// statistics of their own when they differ otherwise. Returns whether approvals of its own
    /// still have to learn this event's `confirmed`, which they do after the shared sightings
    /// folded it ([`SettingEnvelope::learn_approvals`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn learn(
        &mut self,
        shared: &SharedEnvelope,
        call: &Call,
        evidence: Option<Evidence>,
        shared_evidence: Option<Evidence>,
        now_us: i64,
        session_hash: u64,
    ) -> bool {
        if evidence != shared_evidence {
            let approvals_only = matches!(
                (evidence, shared_evidence),
                (
                    Some(Evidence::Confirmed | Evidence::Observed),
                    Some(Evidence::Confirmed | Evidence::Observed)
                )
            );
            for signature in &call.action_signatures {
                let Some(slot) = self.own.get_mut(*signature as usize) else {
                    continue;
                };
                match slot {
                    Stats::Shared => {
                        let approvals = shared.approvals_snapshot(*signature);
                        *slot = if approvals_only {
                            Stats::Approvals(approvals)
                        } else {
                            Stats::Own(shared.snapshot(*signature), approvals)
                        };
                    }
                    Stats::Approvals(approvals) if !approvals_only => {
                        // What they said was with the shared sightings.
                        approvals.said.set(None);
                        let approvals = Rc::clone(approvals);
                        *slot = Stats::Own(shared.snapshot(*signature), approvals);
                    }
                    Stats::Approvals(_) | Stats::Own(..) => {}
                }
            }
        }
        let Some(evidence) = evidence else {
            return false;
        };
        let own = &mut self.own;
        let mut folded = 0u64;
        let mut approvals = false;
        for_each_learned(call, evidence, |signature, tier| {
            folded += 1;
            approvals |= fold_slot(
                shared,
                own.get_mut(signature as usize),
                (signature, tier),
                evidence,
                (now_us, session_hash),
            );
        });
        self.events += folded;
        approvals
    }

    /// [`SettingEnvelope::learn`] given the signatures and tiers the shared evidence goes to
    /// ([`learned_by`], once per event). When the setting's evidence is the same sighting (the
    /// same evidence, or `confirmed` against `observed`: most events, since a promoted setting
    /// allows what strict asks about), it goes to the same signatures, and only those with
    /// statistics or approvals of its own need anything; otherwise [`SettingEnvelope::learn`].
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn learn_event(
        &mut self,
        shared: &SharedEnvelope,
        call: &Call,
        evidence: Option<Evidence>,
        shared_evidence: Option<Evidence>,
        learned: &[(u32, u8)],
        now_us: i64,
        session_hash: u64,
    ) -> bool {
        let approvals_only = evidence != shared_evidence
            && matches!(
                (evidence, shared_evidence),
                (
                    Some(Evidence::Confirmed | Evidence::Observed),
                    Some(Evidence::Confirmed | Evidence::Observed)
                )
            );
        if evidence != shared_evidence && !approvals_only {
            return self.learn(
                shared,
                call,
                evidence,
                shared_evidence,
                now_us,
                session_hash,
            );
        }
        let Some(evidence) = evidence else {
            return false;
        };
        let mut approvals = false;
        for &(signature, tier) in learned {
            let slot = self.own.get_mut(signature as usize);
            if approvals_only && let Some(slot @ Stats::Shared) = slot {
                // Its approvals part from the shared ones before this event.
                *slot = Stats::Approvals(shared.approvals_snapshot(signature));
                approvals |= evidence == Evidence::Confirmed;
                continue;
            }
            approvals |= fold_slot(
                shared,
                slot,
                (signature, tier),
                evidence,
                (now_us, session_hash),
            );
        }
        self.events += learned.len() as u64;
        approvals
    }

    /// Folds this event's `confirmed` into the approvals of its own, after the shared
    /// sightings folded the event (they decide the horizon and the anchor).
    pub(crate) fn learn_approvals(
        &mut self,
        shared: &SharedEnvelope,
        call: &Call,
        now_us: i64,
        session_hash: u64,
    ) {
        for (tier, signature) in call.tiers.iter().zip(&call.action_signatures) {
            if let Some(Stats::Approvals(own)) = self.own.get_mut(*signature as usize)
                && let Some(Some(sightings)) = shared.stats.get(*signature as usize)
            {
                shared.learn_own_approvals(own, *signature, sightings, *tier, now_us, session_hash);
            }
        }
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
        if let Some(Stats::Own(sightings, _)) = self.own.get_mut(signature as usize) {
            shared.fold_diverged(sightings, signature, tier, evidence, now_us, session_hash);
        }
    }
}

/// One learned signature's slot folds the event: statistics of its own fold it (`fold_own`);
/// approvals of their own alone learn later (`learn_approvals`, after the shared sightings), and
/// the answer says whether a `confirmed` went to them; a shared slot has nothing of its own.
#[inline]
fn fold_slot(
    shared: &SharedEnvelope,
    slot: Option<&mut Stats>,
    learned: (u32, u8),
    evidence: Evidence,
    (now_us, session_hash): (i64, u64),
) -> bool {
    match slot {
        Some(Stats::Own(sightings, own)) => {
            fold_own(
                shared,
                sightings,
                own,
                learned,
                evidence,
                now_us,
                session_hash,
            );
            false
        }
        Some(Stats::Approvals(_)) => evidence == Evidence::Confirmed,
        _ => false,
    }
}

/// Folds one piece of evidence for `signature` at `tier` into a setting's statistics of its own:
/// the sightings, then, for a `confirmed`, the approvals with the sightings after.
#[inline(never)]
fn fold_own(
    shared: &SharedEnvelope,
    sightings: &mut Option<Rc<SignatureStats>>,
    approvals: &mut Rc<OwnApprovals>,
    (signature, tier): (u32, u8),
    evidence: Evidence,
    now_us: i64,
    session_hash: u64,
) {
    shared.fold_diverged(sightings, signature, tier, evidence, now_us, session_hash);
    // Approvals of its own learn after the sightings folded the sighting.
    if evidence == Evidence::Confirmed
        && let Some(after) = sightings.as_deref()
    {
        shared.learn_own_approvals(approvals, signature, after, tier, now_us, session_hash);
    }
}

/// The signatures and tiers `evidence` on `call` goes to ([`for_each_learned`]), into `out`.
pub(crate) fn learned_by(call: &Call, evidence: Evidence, out: &mut Vec<(u32, u8)>) {
    out.clear();
    for_each_learned(call, evidence, |signature, tier| {
        out.push((signature, tier))
    });
}

/// The signatures an event's evidence goes to, as [`leastgrant_engine::Envelope::learn_event`]
/// folds them: a refusal to the riskiest action only, anything else to every action; with
/// each action's tier.
fn for_each_learned(call: &Call, evidence: Evidence, mut fold: impl FnMut(u32, u8)) {
    let actions = &call.analysis.actions;
    if evidence == Evidence::Denied {
        if let Some(worst) = riskiest(actions)
            && let Some(at) = actions.iter().position(|a| std::ptr::eq(a, worst))
            && let Some(signature) = call.action_signatures.get(at)
            && let Some(tier) = call.tiers.get(at)
        {
            fold(*signature, *tier);
        }
        return;
    }
    for (signature, tier) in call.action_signatures.iter().zip(&call.tiers) {
        fold(*signature, *tier);
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

/// [`familiarity`] of shared sightings with approvals of a setting's own.
fn familiarity_with(
    sightings: Option<&SignatureStats>,
    approvals: &Approvals,
    table: &DecayTable,
    tier: u8,
    now_us: i64,
    thresholds: &Thresholds,
) -> Familiarity {
    match sightings {
        None => Familiarity::NOVEL,
        Some(stats) if table.half_life_days() == thresholds.half_life_days => {
            stats.familiarity_with(approvals, tier, now_us, thresholds, table)
        }
        Some(stats) => stats.familiarity_with(
            approvals,
            tier,
            now_us,
            thresholds,
            &Exact(thresholds.half_life_days),
        ),
    }
}

/// What one setting's decision on one event reads: its envelope, the shared one, and the
/// shared familiarity of the event's actions computed once for every setting with the same
/// half-life and z.
pub(crate) struct View<'a> {
    pub(crate) setting: Option<&'a SettingEnvelope>,
    pub(crate) shared: &'a SharedEnvelope,
    pub(crate) call: &'a Call,
    /// Per action, the shared familiarity for `computed_for`'s half-life and z.
    pub(crate) computed: &'a [Familiarity],
    pub(crate) computed_for: (f64, f64),
}

impl View<'_> {
    /// The familiarity of `sightings` with approvals of a setting's own: the sightings' share
    /// computed for this event (`computed`: the shared familiarity, or that of diverged
    /// sightings) with the approvals' share of its own, which is what it was when asked the
    /// same day at the same tier with the same refusals and anchor.
    fn with_approvals(
        &self,
        computed: Option<&Familiarity>,
        sightings: Option<&SignatureStats>,
        own: &OwnApprovals,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity {
        let (Some(shared), Some(stats)) = (computed, sightings) else {
            return familiarity_with(
                sightings,
                &own.approvals,
                &self.shared.table,
                tier,
                now_us,
                thresholds,
            );
        };
        let said: Said = (
            day_of(now_us),
            tier,
            thresholds.z.to_bits(),
            stats.denied,
            stats.anchor(),
        );
        let share = match own.said.get() {
            Some((key, share)) if key == said => share,
            _ => {
                let whole = familiarity_with(
                    sightings,
                    &own.approvals,
                    &self.shared.table,
                    tier,
                    now_us,
                    thresholds,
                );
                let share = ApprovalShare {
                    confirmed: whole.confirmed,
                    approval_days: whole.approval_days,
                    approval_sessions: whole.approval_sessions,
                    approval_bound: whole.approval_bound,
                };
                own.said.set(Some((said, share)));
                return whole;
            }
        };
        Familiarity {
            confirmed: share.confirmed,
            approval_days: share.approval_days,
            approval_sessions: share.approval_sessions,
            approval_bound: share.approval_bound,
            ..*shared
        }
    }
}

impl View<'_> {
    /// What this event already computed for `sightings` with the approvals `own`: the whole
    /// familiarity, and the sightings' share (from any approvals).
    fn seen(
        &self,
        sightings: &SignatureStats,
        own: &Rc<OwnApprovals>,
        tier: u8,
        thresholds: &Thresholds,
    ) -> (Option<Familiarity>, Option<Familiarity>) {
        let (h, z) = (thresholds.half_life_days.to_bits(), thresholds.z.to_bits());
        let key: SeenKey = (std::ptr::from_ref(sightings), Rc::as_ptr(own), tier, h, z);
        if own.last_key.get() == (self.shared.stamp.get(), key) {
            return (Some(own.last.get()), None);
        }
        let share: SeenKey = (std::ptr::from_ref(sightings), std::ptr::null(), tier, h, z);
        let seen = self.shared.seen.borrow();
        let mut found = (None, None);
        for (k, fam) in seen.iter() {
            if *k == key {
                return (Some(*fam), None);
            }
            if *k == share {
                found.1 = Some(*fam);
            }
        }
        found
    }

    /// Keeps this event's familiarity of `sightings` with the approvals `own` (and, when
    /// `share`, as the sightings' share for other approvals).
    fn remember(
        &self,
        sightings: &SignatureStats,
        own: &Rc<OwnApprovals>,
        share: bool,
        tier: u8,
        thresholds: &Thresholds,
        fam: Familiarity,
    ) {
        let (h, z) = (thresholds.half_life_days.to_bits(), thresholds.z.to_bits());
        let at = std::ptr::from_ref(sightings);
        let key: SeenKey = (at, Rc::as_ptr(own), tier, h, z);
        own.last_key.set((self.shared.stamp.get(), key));
        own.last.set(fam);
        let mut seen = self.shared.seen.borrow_mut();
        seen.push((key, fam));
        if share {
            seen.push(((at, std::ptr::null(), tier, h, z), fam));
        }
    }

    /// The familiarity of the event's action `at` (its signature and tier): the statistics of
    /// the setting's own, its approvals with the shared sightings, or the shared familiarity
    /// computed once for the event. The two answers most settings get — the shared familiarity,
    /// and what the approvals they hold last gave this event ([`View::seen`]'s first look) —
    /// here; the rest in [`View::familiarity_of`].
    #[inline(always)]
    pub(crate) fn familiarity_at(
        &self,
        at: usize,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity {
        let Some(id) = self.call.action_signatures.get(at).copied() else {
            return Familiarity::NOVEL;
        };
        let (sightings, own) = match self.setting.and_then(|s| s.own.get(id as usize)) {
            Some(Stats::Own(Some(sightings), own)) => (Rc::as_ptr(sightings), own),
            Some(Stats::Approvals(own)) => match self.shared.stats.get(id as usize) {
                Some(Some(stats)) => (std::ptr::from_ref(stats), own),
                _ => return self.familiarity_of(at, tier, now_us, thresholds),
            },
            Some(Stats::Own(None, _)) => return Familiarity::NOVEL,
            _ => return self.shared_familiarity(at, id, tier, now_us, thresholds),
        };
        let key: SeenKey = (
            sightings,
            Rc::as_ptr(own),
            tier,
            thresholds.half_life_days.to_bits(),
            thresholds.z.to_bits(),
        );
        if own.last_key.get() == (self.shared.stamp.get(), key) {
            return own.last.get();
        }
        self.familiarity_of(at, tier, now_us, thresholds)
    }

    /// [`View::familiarity_at`] in full.
    #[inline(never)]
    fn familiarity_of(
        &self,
        at: usize,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity {
        let Some(id) = self.call.action_signatures.get(at).copied() else {
            return Familiarity::NOVEL;
        };
        match self.setting.and_then(|s| s.own.get(id as usize)) {
            Some(Stats::Own(sightings, own)) => {
                let Some(stats) = sightings.as_deref() else {
                    return Familiarity::NOVEL;
                };
                // Diverged sightings are shared by the settings that diverged alike: their
                // share of a familiarity is computed once per event.
                let (whole, share) = self.seen(stats, own, tier, thresholds);
                if let Some(fam) = whole {
                    return fam;
                }
                let fam =
                    self.with_approvals(share.as_ref(), Some(stats), own, tier, now_us, thresholds);
                self.remember(stats, own, share.is_none(), tier, thresholds, fam);
                return fam;
            }
            Some(Stats::Approvals(own)) => {
                let sightings = self.shared.stats.get(id as usize).and_then(Option::as_ref);
                let computed = self.computed.get(at).filter(|_| {
                    (thresholds.half_life_days, thresholds.z) == self.computed_for
                        && self.shared.table.half_life_days() == thresholds.half_life_days
                        && self.call.tiers.get(at) == Some(&tier)
                });
                let Some(stats) = sightings else {
                    return self.with_approvals(computed, sightings, own, tier, now_us, thresholds);
                };
                let (whole, _) = self.seen(stats, own, tier, thresholds);
                if let Some(fam) = whole {
                    return fam;
                }
                let fam = self.with_approvals(computed, sightings, own, tier, now_us, thresholds);
                self.remember(stats, own, false, tier, thresholds, fam);
                return fam;
            }
            _ => {}
        }
        self.shared_familiarity(at, id, tier, now_us, thresholds)
    }

    /// The shared statistics' familiarity of action `at` (signature `id`): the one computed
    /// once for the event when it was computed for these thresholds and tier, else computed now.
    #[inline(always)]
    fn shared_familiarity(
        &self,
        at: usize,
        id: u32,
        tier: u8,
        now_us: i64,
        thresholds: &Thresholds,
    ) -> Familiarity {
        let same = (thresholds.half_life_days, thresholds.z) == self.computed_for
            && self.call.tiers.get(at) == Some(&tier);
        match self.computed.get(at) {
            Some(fam) if same => *fam,
            _ => self.shared.familiarity(id, tier, now_us, thresholds),
        }
    }
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
        let actions = &self.call.analysis.actions;
        let Some(at) = actions
            .iter()
            .position(|a| std::ptr::eq(a.signature.as_str(), signature))
            .or_else(|| actions.iter().position(|a| a.signature == signature))
        else {
            return Familiarity::NOVEL;
        };
        self.familiarity_at(at, tier, now_us, thresholds)
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
