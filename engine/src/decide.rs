//! The decision: integrity floor → deny rules → allow rules → ask floors → learned promotion →
//! ask, per action; the strictest action decides the event.
//!
//! Reasons are written for people and say what would change the answer. The replay and the
//! hook both call [`decide`], so a replayed verdict and a live one are the same verdict.

use crate::envelope::stats::{Familiarity, Thresholds};
use crate::envelope::{Gates, Learned, Promotion, can_promote};
use crate::model::{
    Action, Analysis, Answer, AnswerSource, Answers, Decision, Exposure, Reach, Reversibility,
    Scale, Zone,
};
use crate::session::SessionState;

mod floors;
use floors::NOT_UNDERSTOOD;
pub use floors::{Floor, floors};

/// What a setting lets learning do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Posture {
    /// Decide and record, enforce nothing but the integrity floor.
    Observe,
    /// The full pipeline (the default).
    Assist,
    /// Also learn unread code that stays inside the project, and promote easily undone
    /// harmless actions by observation.
    Autopilot,
    /// Only rules allow; learning never does.
    Strict,
}

impl Posture {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Posture::Observe => "observe",
            Posture::Assist => "assist",
            Posture::Autopilot => "autopilot",
            Posture::Strict => "strict",
        }
    }

    /// Parses a lower-case name.
    pub fn parse(name: &str) -> Option<Posture> {
        [
            Posture::Observe,
            Posture::Assist,
            Posture::Autopilot,
            Posture::Strict,
        ]
        .into_iter()
        .find(|p| p.as_str() == name)
    }
}

/// A posture and its thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The posture.
    pub posture: Posture,
    /// The thresholds.
    pub thresholds: Thresholds,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            posture: Posture::Assist,
            thresholds: Thresholds::default(),
        }
    }
}

/// How a reason bears on the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Weight {
    /// It decided a deny.
    Blocks,
    /// It made the decision stricter.
    Raises,
    /// It made the decision looser.
    Lowers,
    /// Context.
    Info,
}

/// One reason, with a stable code and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reason {
    /// Stable identifier (`floor.secret`, `learned.confirmed`, `gap.approvals`, …).
    pub code: String,
    /// For people.
    pub text: String,
    /// How it bears.
    pub weight: Weight,
}

impl Reason {
    fn new(code: &str, text: impl Into<String>, weight: Weight) -> Reason {
        Reason {
            code: code.to_string(),
            text: text.into(),
            weight,
        }
    }
}

/// The reason a person reads for an answer given in advance.
fn answer_reason(hit: &Answer) -> Reason {
    let verb = match hit.decision {
        Decision::Allow => "allows it",
        Decision::Ask => "asks",
        Decision::Deny => "denies it",
    };
    let weight = match hit.decision {
        Decision::Allow => Weight::Lowers,
        Decision::Ask => Weight::Raises,
        Decision::Deny => Weight::Blocks,
    };
    let (code, text) = match hit.source {
        AnswerSource::Rule => (
            format!("rule.{}", hit.decision.as_str()),
            format!("your rule `{}` {verb}", hit.rule),
        ),
        AnswerSource::Grant => (
            format!("grant.{}", hit.decision.as_str()),
            format!("your grant `{}` {verb}", hit.rule),
        ),
        AnswerSource::DefaultMode => (
            "rule.default".to_string(),
            format!("no rule matches it, and `{}` {verb}", hit.rule),
        ),
    };
    Reason { code, text, weight }
}

/// Everything a decision depends on besides the call itself. All inputs: no clock, no I/O.
pub struct Context<'a> {
    /// The project's learned state (the live envelope, or a frozen one).
    pub envelope: &'a dyn Learned,
    /// The session so far.
    pub session: &'a SessionState,
    /// Rules in force.
    pub answers: &'a dyn Answers,
    /// Posture and thresholds.
    pub settings: &'a Settings,
    /// Now, in microseconds since the epoch.
    pub now_us: i64,
}

/// The decision for one action.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionVerdict {
    /// Its decision.
    pub decision: Decision,
    /// Why.
    pub reasons: Vec<Reason>,
    /// A floor constrained it (learning could not have allowed it).
    pub floored: bool,
    /// The promotion state learning reached (for the replay's metrics).
    pub promotion: Option<Promotion>,
}

/// The decision for a whole call.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The decision to enforce.
    pub decision: Decision,
    /// The decision the pipeline reached before the posture (differs only under observe).
    pub advisory: Decision,
    /// Per action, in order.
    pub actions: Vec<ActionVerdict>,
    /// All reasons, strictest action first, de-duplicated.
    pub reasons: Vec<Reason>,
    /// One sentence for a prompt.
    pub headline: String,
}

/// What one action's decision depends on that no setting or learned state changes: its floors
/// and the rules' answer. The replay computes it once per event, not once per setting.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedAction {
    /// The floors it hits.
    pub floors: Vec<Floor>,
    /// What the rules and grants say.
    pub answer: Option<Answer>,
    /// Inside the project, no secrets: autopilot may waive "not understood".
    pub contained: bool,
    /// Harmless enough for the observation route under assist (and strict/observe).
    pub harmless: bool,
    /// Harmless enough for the observation route under autopilot.
    pub harmless_autopilot: bool,
}

/// The setting-independent facts of every action of a call, in order.
pub fn prepare(analysis: &Analysis, answers: &dyn Answers) -> Vec<PreparedAction> {
    analysis
        .actions
        .iter()
        .map(|action| PreparedAction {
            floors: floors(action, analysis),
            answer: answers.answer(action),
            contained: contained_in_project(action),
            harmless: harmless(action, Posture::Assist),
            harmless_autopilot: harmless(action, Posture::Autopilot),
        })
        .collect()
}

/// Which step of the pipeline decided an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The integrity floor (deny).
    Integrity,
    /// A rule or grant.
    Answer,
    /// One or more ask floors.
    Floors,
    /// Strict posture: only rules allow.
    Strict,
    /// Learning (promoted or not).
    Learned,
}

/// One action's decision without its words: what the replay needs per setting, computed
/// without allocating. [`decide`] builds its reasons from exactly this.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// The action's decision, taint included.
    pub decision: Decision,
    /// The step that decided it.
    pub stage: Stage,
    /// The first floor that applied (after the autopilot waiver), for `Integrity`/`Floors`.
    pub floor: Option<&'static str>,
    /// What learning knew and concluded, for `Learned`.
    pub learned: Option<(Familiarity, Promotion)>,
    /// The session concern that turned an allow into an ask.
    pub taint: Option<&'static str>,
}

impl Judgement {
    /// The stable code of the reason that decided it (the first reason [`decide`] gives).
    pub fn code(&self) -> &'static str {
        code_of(
            self.taint,
            self.stage,
            self.floor,
            self.learned.map(|(_, p)| p),
        )
    }
}

/// One action's judgement as the replay keeps it per setting: a [`Judgement`] without what
/// learning knew (the familiarity, which only the words need), so a setting's judgement of an
/// event is a few bytes. [`judge_posed`] writes these.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ruling {
    /// The action's decision, taint included.
    pub decision: Decision,
    /// The step that decided it.
    pub stage: Stage,
    /// The first floor that applied (after the autopilot waiver), for `Integrity`/`Floors`.
    pub floor: Option<&'static str>,
    /// What learning concluded, for `Learned`.
    pub promotion: Option<Promotion>,
    /// The session concern that turned an allow into an ask.
    pub taint: Option<&'static str>,
}

impl Ruling {
    /// The stable code of the reason that decided it, as [`Judgement::code`].
    pub fn code(&self) -> &'static str {
        code_of(self.taint, self.stage, self.floor, self.promotion)
    }
}

impl From<Judgement> for Ruling {
    fn from(judgement: Judgement) -> Ruling {
        Ruling {
            decision: judgement.decision,
            stage: judgement.stage,
            floor: judgement.floor,
            promotion: judgement.learned.map(|(_, p)| p),
            taint: judgement.taint,
        }
    }
}

/// The code of the reason that decided an action.
fn code_of(
    taint: Option<&'static str>,
    stage: Stage,
    floor: Option<&'static str>,
    promotion: Option<Promotion>,
) -> &'static str {
    if taint.is_some() {
        return "session.taint";
    }
    match stage {
        Stage::Integrity | Stage::Floors => floor.unwrap_or("floor"),
        Stage::Answer => "rule",
        Stage::Strict => "posture.strict",
        Stage::Learned => match promotion {
            Some(Promotion::Granted) => "learned.granted",
            Some(Promotion::Confirmed) => "learned.confirmed",
            Some(Promotion::Observed) => "learned.observed",
            Some(Promotion::BlastTooHigh) => "gap.blast",
            Some(Promotion::PreviouslyDenied) => "gap.denied",
            Some(Promotion::NeedsApprovals { .. }) | None => "gap.approvals",
            Some(Promotion::NeedsDays { .. }) => "gap.days",
            Some(Promotion::NeedsSessions { .. }) => "gap.sessions",
        },
    }
}

/// What [`finish`] needs of an action's judgement, whichever form it is kept in.
trait Judged: Copy {
    fn decision(&self) -> Decision;
    fn stage(&self) -> Stage;
    /// Turns an allow into an ask for a session concern.
    fn taint(&mut self, concern: &'static str);
}

impl Judged for Judgement {
    fn decision(&self) -> Decision {
        self.decision
    }
    fn stage(&self) -> Stage {
        self.stage
    }
    fn taint(&mut self, concern: &'static str) {
        self.decision = Decision::Ask;
        self.taint = Some(concern);
    }
}

impl Judged for Ruling {
    fn decision(&self) -> Decision {
        self.decision
    }
    fn stage(&self) -> Stage {
        self.stage
    }
    fn taint(&mut self, concern: &'static str) {
        self.decision = Decision::Ask;
        self.taint = Some(concern);
    }
}

/// Everything a judgement depends on besides the call: learned state, the session, the
/// setting and the time. Rules are already folded into the prepared actions.
pub struct Situation<'a> {
    /// The project's learned state.
    pub learned: &'a dyn Learned,
    /// The session so far.
    pub session: &'a SessionState,
    /// Posture and thresholds.
    pub settings: &'a Settings,
    /// Now, in microseconds since the epoch.
    pub now_us: i64,
}

/// Judges every action of a call into `out` (cleared first) and returns the enforced and the
/// advisory decision. The one decision procedure: [`decide`] is this plus the words, and
/// [`judge_posed`] is this with the posture's part ([`pose`]) computed beforehand.
pub fn judge(
    analysis: &Analysis,
    prepared: &[PreparedAction],
    situation: &Situation<'_>,
    out: &mut Vec<Judgement>,
) -> (Decision, Decision) {
    let settings = situation.settings;
    let mut each = analysis.actions.iter().zip(prepared).map(|(action, prep)| {
        match pose(action, prep, settings.posture) {
            Posed::Decided(judgement) => judgement,
            Posed::Learned { harmless, tier } => {
                let fam = situation.learned.familiarity(
                    &action.signature,
                    tier,
                    situation.now_us,
                    &settings.thresholds,
                );
                judge_learned(fam, tier, harmless, &settings.thresholds)
            }
        }
    });
    finish(
        analysis,
        situation.session,
        settings.posture,
        |_| each.next(),
        out,
    )
}

/// What an action's judgement is before anything learned: decided by the integrity floor, a
/// rule, an ask floor or the strict posture, or left to learning (and whether the action is
/// harmless enough for the observation route under the posture). It depends on the call and
/// the posture only, so the replay computes it once per event and posture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Posed {
    /// Decided before learning.
    Decided(Judgement),
    /// Learning decides ([`judge_learned`]).
    Learned {
        /// Harmless enough for the observation route under the posture.
        harmless: bool,
        /// The action's tier.
        tier: u8,
    },
}

/// Steps 1–4 of an action's decision (integrity floor, rules, ask floors, the strict posture):
/// [`judge`]'s part that no learned state or threshold changes.
pub fn pose(action: &Action, prep: &PreparedAction, posture: Posture) -> Posed {
    let plain = |decision, stage, floor| {
        Posed::Decided(Judgement {
            decision,
            stage,
            floor,
            learned: None,
            taint: None,
        })
    };
    // 1. The integrity floor cannot be overridden.
    if let Some(floor) = prep.floors.iter().find(|f| f.deny) {
        return plain(Decision::Deny, Stage::Integrity, Some(floor.code));
    }
    // 2–3. Rules: a deny rule denies; an allow rule allows past every ask floor.
    if let Some(hit) = &prep.answer {
        return plain(hit.decision, Stage::Answer, None);
    }
    // 4. Ask floors.
    let waived = posture == Posture::Autopilot && prep.contained;
    if let Some(floor) = prep
        .floors
        .iter()
        .find(|f| !(waived && f.code == NOT_UNDERSTOOD))
    {
        return plain(Decision::Ask, Stage::Floors, Some(floor.code));
    }
    if posture == Posture::Strict {
        return plain(Decision::Ask, Stage::Strict, None);
    }
    Posed::Learned {
        harmless: if posture == Posture::Autopilot {
            prep.harmless_autopilot
        } else {
            prep.harmless
        },
        tier: action.tier(),
    }
}

/// Step 5, learned promotion: the judgement of an action [`pose`] left to learning, from what
/// is known about its signature at its tier.
pub fn judge_learned(
    fam: Familiarity,
    tier: u8,
    harmless: bool,
    thresholds: &Thresholds,
) -> Judgement {
    let promotion = can_promote(&fam, tier, harmless, thresholds);
    Judgement {
        decision: learned_decision(promotion),
        stage: Stage::Learned,
        floor: None,
        learned: Some((fam, promotion)),
        taint: None,
    }
}

/// Learning's decision: allow what it promotes, ask about the rest.
fn learned_decision(promotion: Promotion) -> Decision {
    if promotion.allows() {
        Decision::Allow
    } else {
        Decision::Ask
    }
}

/// [`judge`] with each action's [`pose`] for the setting's posture given (`posed`, in action
/// order), the familiarity of the actions learning decides answered by `familiarity` (called
/// with the action's index and tier) and the thresholds as [`Gates`] — the replay's way in,
/// which computes the poses and the familiarity once for many settings and keeps each action's
/// judgement as a [`Ruling`]. The same steps and the same result as [`judge`]. Inlined, with
/// [`finish`], into the replay's loop, which calls it once per event and setting.
#[inline(always)]
pub fn judge_posed(
    analysis: &Analysis,
    posed: &[Posed],
    session: &SessionState,
    posture: Posture,
    gates: &Gates,
    mut familiarity: impl FnMut(usize, u8) -> Familiarity,
    out: &mut Vec<Ruling>,
) -> (Decision, Decision) {
    finish(
        analysis,
        session,
        posture,
        |at| match posed.get(at)? {
            Posed::Decided(judgement) => Some(Ruling::from(*judgement)),
            Posed::Learned { harmless, tier } => {
                let fam = familiarity(at, *tier);
                let promotion = gates.can_promote(&fam, *tier, *harmless);
                Some(Ruling {
                    decision: learned_decision(promotion),
                    stage: Stage::Learned,
                    floor: None,
                    promotion: Some(promotion),
                    taint: None,
                })
            }
        },
        out,
    )
}

/// The part of [`judge`] after each action's own judgement (`judged`, called with each
/// action's index in order): session taint, then the strictest action, then the posture.
#[inline(always)]
fn finish<J: Judged>(
    analysis: &Analysis,
    session: &SessionState,
    posture: Posture,
    mut judged: impl FnMut(usize) -> Option<J>,
    out: &mut Vec<J>,
) -> (Decision, Decision) {
    out.clear();
    let mut advisory: Option<Decision> = None;
    let mut integrity = false;
    for (at, action) in analysis.actions.iter().enumerate() {
        let Some(mut judgement) = judged(at) else {
            break;
        };
        // Session taint only ever turns an allow into an ask.
        if judgement.decision() == Decision::Allow
            && let Some(concern) = session.concern(action)
        {
            judgement.taint(concern);
        }
        integrity |= judgement.stage() == Stage::Integrity;
        advisory = advisory.max(Some(judgement.decision()));
        out.push(judgement);
    }
    // Nothing to decide on asks.
    let advisory = advisory.unwrap_or(Decision::Ask);
    let enforced = if posture == Posture::Observe {
        // Observe enforces only the integrity floor.
        if integrity {
            Decision::Deny
        } else {
            Decision::Allow
        }
    } else {
        advisory
    };
    (enforced, advisory)
}

/// Decides a call: [`judge`], then the reasons a person reads.
pub fn decide(analysis: &Analysis, ctx: &Context<'_>) -> Verdict {
    let prepared = prepare(analysis, ctx.answers);
    decide_prepared(analysis, &prepared, ctx)
}

/// [`decide`] with the setting-independent part already computed.
pub fn decide_prepared(
    analysis: &Analysis,
    prepared: &[PreparedAction],
    ctx: &Context<'_>,
) -> Verdict {
    let situation = Situation {
        learned: ctx.envelope,
        session: ctx.session,
        settings: ctx.settings,
        now_us: ctx.now_us,
    };
    let mut judgements = Vec::with_capacity(analysis.actions.len());
    let (decision, advisory) = judge(analysis, prepared, &situation, &mut judgements);
    let mut per_action: Vec<ActionVerdict> = analysis
        .actions
        .iter()
        .zip(prepared)
        .zip(&judgements)
        .map(|((action, prep), judgement)| explain(action, prep, judgement, ctx))
        .collect();
    let mut order: Vec<usize> = (0..per_action.len()).collect();
    order.sort_by(|a, b| {
        let (va, vb) = (per_action.get(*a), per_action.get(*b));
        let (aa, ab) = (analysis.actions.get(*a), analysis.actions.get(*b));
        vb.map(|v| v.decision)
            .cmp(&va.map(|v| v.decision))
            .then_with(|| ab.map(Action::tier).cmp(&aa.map(Action::tier)))
            .then(a.cmp(b))
    });
    let mut reasons: Vec<Reason> = Vec::new();
    for index in &order {
        if let Some(verdict) = per_action.get(*index) {
            for reason in &verdict.reasons {
                if !reasons.contains(reason) {
                    reasons.push(reason.clone());
                }
            }
        }
    }
    if analysis.actions.len() > 1 {
        reasons.push(Reason::new(
            "multi.actions",
            format!("{} actions; the strictest decides", analysis.actions.len()),
            Weight::Info,
        ));
    }
    if analysis.actions.is_empty() {
        reasons.push(Reason::new(
            "engine.empty",
            "nothing to decide on",
            Weight::Raises,
        ));
    }
    let headline = headline(&reasons).unwrap_or_default();
    per_action.shrink_to_fit();
    Verdict {
        decision,
        advisory,
        actions: per_action,
        reasons,
        headline,
    }
}

/// The sentence for a prompt: the reason that blocked, else the first that raised, else the
/// first.
pub fn headline(reasons: &[Reason]) -> Option<String> {
    reasons
        .iter()
        .find(|r| r.weight == Weight::Blocks)
        .or_else(|| reasons.iter().find(|r| r.weight == Weight::Raises))
        .or_else(|| reasons.first())
        .map(|r| r.text.clone())
}

/// Reach within the project, no secrets, no outside targets: autopilot may waive "not
/// understood" for these.
fn contained_in_project(action: &Action) -> bool {
    action.blast.reach <= Reach::Workspace
        && action.blast.exposure == Exposure::None
        && action
            .targets
            .iter()
            .all(|t| t.placement.zone == Zone::Workspace && !t.placement.secret)
}

fn harmless(action: &Action, posture: Posture) -> bool {
    let undo_ok = match posture {
        Posture::Autopilot => action.blast.reversibility <= Reversibility::Easy,
        _ => action.blast.reversibility == Reversibility::Trivial,
    };
    action.blast.reach <= Reach::Workspace
        && undo_ok
        && action.blast.exposure == Exposure::None
        && action.blast.scale != Scale::Sweeping
        && action
            .targets
            .iter()
            .all(|t| t.placement.is_plain_workspace())
}

/// The words for one judged action.
fn explain(
    action: &Action,
    prep: &PreparedAction,
    judgement: &Judgement,
    ctx: &Context<'_>,
) -> ActionVerdict {
    let mut verdict = ActionVerdict {
        decision: judgement.decision,
        reasons: Vec::new(),
        floored: matches!(judgement.stage, Stage::Integrity | Stage::Floors),
        promotion: judgement.learned.map(|(_, p)| p),
    };
    match judgement.stage {
        Stage::Integrity => {
            if let Some(floor) = prep.floors.iter().find(|f| f.deny) {
                verdict
                    .reasons
                    .push(Reason::new(floor.code, floor.text.clone(), Weight::Blocks));
            }
        }
        Stage::Answer => {
            if let Some(hit) = &prep.answer {
                verdict.reasons.push(answer_reason(hit));
                if hit.decision == Decision::Allow {
                    for floor in &prep.floors {
                        verdict.reasons.push(Reason::new(
                            floor.code,
                            format!("{} (allowed by your answer)", floor.text),
                            Weight::Info,
                        ));
                    }
                }
            }
        }
        Stage::Floors => {
            let waived = ctx.settings.posture == Posture::Autopilot && prep.contained;
            for floor in &prep.floors {
                if !(waived && floor.code == NOT_UNDERSTOOD) {
                    verdict.reasons.push(Reason::new(
                        floor.code,
                        floor.text.clone(),
                        Weight::Raises,
                    ));
                }
            }
        }
        Stage::Strict => verdict.reasons.push(Reason::new(
            "posture.strict",
            "strict posture: only your rules allow",
            Weight::Raises,
        )),
        Stage::Learned => {
            if let Some((fam, promotion)) = judgement.learned {
                explain_learning(action, &fam, promotion, ctx, &mut verdict.reasons);
            }
        }
    }
    if let Some(concern) = judgement.taint {
        verdict
            .reasons
            .insert(0, Reason::new("session.taint", concern, Weight::Raises));
    }
    verdict
}

fn explain_learning(
    action: &Action,
    fam: &Familiarity,
    promotion: Promotion,
    ctx: &Context<'_>,
    reasons: &mut Vec<Reason>,
) {
    match promotion {
        Promotion::Granted => reasons.push(Reason::new(
            "learned.granted",
            "you granted this in advance",
            Weight::Lowers,
        )),
        Promotion::Confirmed => reasons.push(Reason::new(
            "learned.confirmed",
            format!(
                "you approved this {} times on {} days in {} sessions and never refused it",
                fam.confirmed.round(),
                fam.approval_days,
                fam.approval_sessions
            ),
            Weight::Lowers,
        )),
        Promotion::Observed => reasons.push(Reason::new(
            "learned.observed",
            format!(
                "routine here: seen {} times in {} sessions, harmless and inside the project",
                fam.seen.round(),
                fam.sessions
            ),
            Weight::Lowers,
        )),
        Promotion::BlastTooHigh => reasons.push(Reason::new(
            "gap.blast",
            format!(
                "{}: too much at stake to learn, so it always asks",
                action.blast.describe()
            ),
            Weight::Raises,
        )),
        Promotion::PreviouslyDenied => reasons.push(Reason::new(
            "gap.denied",
            format!(
                "you refused this {} time(s) before; only a rule can allow it now",
                fam.denied
            ),
            Weight::Raises,
        )),
        Promotion::NeedsApprovals { more, more_days } => {
            let days = if more_days > 0 {
                format!(" on {more_days} more day(s)")
            } else {
                String::new()
            };
            reasons.push(Reason::new(
                "gap.approvals",
                format!("approve this {more} more time(s){days} to stop being asked"),
                Weight::Info,
            ));
        }
        Promotion::NeedsDays { more } => reasons.push(Reason::new(
            "gap.days",
            format!("approve this on {more} more day(s) to stop being asked"),
            Weight::Info,
        )),
        Promotion::NeedsSessions { more } => reasons.push(Reason::new(
            "gap.sessions",
            format!("approve this in {more} more session(s) to stop being asked"),
            Weight::Info,
        )),
    }
    if promotion.allows() {
        return;
    }
    let learned_events = ctx.envelope.events();
    if fam.novel {
        let (code, text) = if learned_events < 25 {
            ("novel.no-baseline", "nothing learned for this project yet")
        } else {
            ("novel.first-time", "never seen in this project")
        };
        reasons.push(Reason::new(code, text, Weight::Info));
    }
    if let Some(previous) = ctx.session.last_capability
        && ctx.session.actions > 3
        && !ctx.envelope.transition_seen(previous, action.capability)
    {
        reasons.push(Reason::new(
            "novel.transition",
            format!(
                "`{}` right after `{}` is new here",
                action.capability, previous
            ),
            Weight::Info,
        ));
    }
}
