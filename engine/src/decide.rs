//! The decision: integrity floor → deny rules → allow rules → ask floors → learned promotion →
//! ask, per action; the strictest action decides the event.
//!
//! Reasons are written for people and say what would change the answer. The replay and the
//! hook both call [`decide`], so a replayed verdict and a live one are the same verdict.

use crate::analyze::Analysis;
use crate::envelope::{Envelope, Promotion, SessionState, Thresholds, can_promote};
use crate::model::{Access, Action, Capability as C, Exposure, Reach, Reversibility, Scale};
use crate::paths::Zone;

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

/// The answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// Let it run.
    Allow,
    /// Ask the person.
    Ask,
    /// Refuse.
    Deny,
}

impl Decision {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
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

/// What a rule says about an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleHit {
    /// Allow, ask or deny.
    pub decision: Decision,
    /// The rule as written, or the grant's identity, for the reason line.
    pub rule: String,
    /// Where the answer came from.
    pub source: AnswerSource,
}

/// Which kind of advance answer decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerSource {
    /// A rule of the policy.
    Rule,
    /// A grant (`leastgrant allow|deny`).
    Grant,
    /// The policy's `defaultMode: deny` for calls no rule matched.
    DefaultMode,
}

impl RuleHit {
    /// The reason a person reads.
    fn reason(&self) -> Reason {
        let verb = match self.decision {
            Decision::Allow => "allows it",
            Decision::Ask => "asks",
            Decision::Deny => "denies it",
        };
        let weight = match self.decision {
            Decision::Allow => Weight::Lowers,
            Decision::Ask => Weight::Raises,
            Decision::Deny => Weight::Blocks,
        };
        let (code, text) = match self.source {
            AnswerSource::Rule => (
                format!("rule.{}", self.decision.as_str()),
                format!("your rule `{}` {verb}", self.rule),
            ),
            AnswerSource::Grant => (
                format!("grant.{}", self.decision.as_str()),
                format!("your grant `{}` {verb}", self.rule),
            ),
            AnswerSource::DefaultMode => (
                "rule.default".to_string(),
                format!("no rule matches it, and `{}` {verb}", self.rule),
            ),
        };
        Reason { code, text, weight }
    }
}

/// Answers given in advance. The rule language is its own work; the engine only consults it.
pub trait Rules {
    /// The rule that decides `action`, if any. Implementations resolve deny-over-allow and
    /// carve-outs themselves.
    fn check(&self, action: &Action) -> Option<RuleHit>;
}

/// No rules at all.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRules;

impl Rules for NoRules {
    fn check(&self, _action: &Action) -> Option<RuleHit> {
        None
    }
}

/// Everything a decision depends on besides the call itself. All inputs: no clock, no I/O.
pub struct Context<'a> {
    /// The project's envelope.
    pub envelope: &'a Envelope,
    /// The session so far.
    pub session: &'a SessionState,
    /// Rules in force.
    pub rules: &'a dyn Rules,
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

/// Decides a call.
pub fn decide(analysis: &Analysis, ctx: &Context<'_>) -> Verdict {
    let mut per_action: Vec<ActionVerdict> = analysis
        .actions
        .iter()
        .map(|action| decide_action(action, analysis, ctx))
        .collect();
    // Session taint only ever turns an allow into an ask.
    for (action, verdict) in analysis.actions.iter().zip(per_action.iter_mut()) {
        if verdict.decision == Decision::Allow
            && let Some(concern) = ctx.session.concern(action)
        {
            verdict.decision = Decision::Ask;
            verdict
                .reasons
                .insert(0, Reason::new("session.taint", concern, Weight::Raises));
        }
    }
    let advisory = per_action
        .iter()
        .map(|v| v.decision)
        .max()
        .unwrap_or(Decision::Ask);
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
    let decision = if ctx.settings.posture == Posture::Observe {
        // Observe enforces only the integrity floor.
        if reasons.iter().any(|r| r.code == "floor.self-write") {
            Decision::Deny
        } else {
            Decision::Allow
        }
    } else {
        advisory
    };
    let headline = reasons
        .iter()
        .find(|r| r.weight == Weight::Blocks)
        .or_else(|| reasons.iter().find(|r| r.weight == Weight::Raises))
        .or_else(|| reasons.first())
        .map(|r| r.text.clone())
        .unwrap_or_default();
    per_action.shrink_to_fit();
    Verdict {
        decision,
        advisory,
        actions: per_action,
        reasons,
        headline,
    }
}

/// The floors an action hits: (code, sentence, deny?).
pub fn floors(action: &Action, analysis: &Analysis) -> Vec<(&'static str, String, bool)> {
    let mut hits = Vec::new();
    let writes = |t: &&crate::model::Target| t.access != Access::Read;
    if action
        .targets
        .iter()
        .filter(writes)
        .any(|t| t.placement.own_state)
    {
        hits.push((
            "floor.self-write",
            "it would change leastgrant's own state".to_string(),
            true,
        ));
    }
    if let Some(t) = action
        .targets
        .iter()
        .filter(writes)
        .find(|t| t.placement.control && !t.placement.own_state)
    {
        hits.push((
            "floor.control-file",
            format!(
                "it changes `{}`, which steers an agent, CI or later commands",
                t.path
            ),
            false,
        ));
    }
    if action.capability == C::SecretRead
        || action.blast.exposure == Exposure::ReadsSecrets
        || action.targets.iter().any(|t| t.placement.secret)
    {
        let verb = if action
            .targets
            .iter()
            .any(|t| t.placement.secret && t.access != Access::Read)
        {
            "writes to"
        } else {
            "reads"
        };
        hits.push(("floor.secret", format!("it {verb} credentials"), false));
    }
    if action.blast.exposure == Exposure::CanExfiltrate {
        hits.push((
            "floor.exfiltrate",
            "it can send data off this machine".to_string(),
            false,
        ));
    }
    if !action.capability.is_read_only()
        && action.targets.iter().any(|t| {
            t.access != Access::Read
                && !matches!(t.placement.zone, Zone::Workspace | Zone::Unresolved)
        })
    {
        hits.push((
            "floor.write-outside",
            "it changes files outside the project".to_string(),
            false,
        ));
    }
    if action.flags.persistence
        || action
            .targets
            .iter()
            .any(|t| t.access != Access::Read && t.placement.persistence)
    {
        hits.push((
            "floor.persistence",
            "it installs something that runs later without asking".to_string(),
            false,
        ));
    }
    if action.flags.privilege || action.capability == C::ExecPrivilege {
        hits.push((
            "floor.privilege",
            "it runs with raised privileges".to_string(),
            false,
        ));
    }
    if action.flags.piped_from_network
        || analysis.piped_from_network
            && matches!(action.capability, C::ExecUnknown | C::ExecInterpreter)
    {
        hits.push((
            "floor.pipe-to-shell",
            "it runs code fetched from the network".to_string(),
            false,
        ));
    }
    if action.flags.fetch_run {
        hits.push((
            "floor.fetch-run",
            "it downloads a package and runs it".to_string(),
            false,
        ));
    }
    if action.blast.reach == Reach::Production {
        hits.push((
            "floor.production",
            "it touches production".to_string(),
            false,
        ));
    }
    if action.capability == C::ExecPkgPublish {
        hits.push((
            "floor.publish",
            "it publishes a package, which cannot be taken back".to_string(),
            false,
        ));
    }
    if action.blast.reversibility == Reversibility::Irreversible
        && action.blast.reach != Reach::Workspace
    {
        hits.push((
            "floor.irreversible",
            "it cannot be undone".to_string(),
            false,
        ));
    }
    if !action.understood || !analysis.understood {
        let why = action
            .unknowns
            .first()
            .cloned()
            .or_else(|| analysis.problems.first().cloned())
            .unwrap_or_else(|| "part of the command could not be analysed".to_string());
        hits.push((
            "floor.not-understood",
            format!("the engine cannot tell what it does: {why}"),
            false,
        ));
    }
    hits
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

fn decide_action(action: &Action, analysis: &Analysis, ctx: &Context<'_>) -> ActionVerdict {
    let posture = ctx.settings.posture;
    let thresholds = &ctx.settings.thresholds;
    let tier = action.tier();
    let mut floors = floors(action, analysis);
    // 1. The integrity floor cannot be overridden.
    if let Some((code, text, _)) = floors.iter().find(|(_, _, deny)| *deny) {
        return ActionVerdict {
            decision: Decision::Deny,
            reasons: vec![Reason::new(code, text.clone(), Weight::Blocks)],
            floored: true,
            promotion: None,
        };
    }
    // 2–3. Rules: a deny rule denies; an allow rule allows past every ask floor.
    if let Some(hit) = ctx.rules.check(action) {
        let mut reasons = vec![hit.reason()];
        if hit.decision == Decision::Allow {
            for (code, text, _) in &floors {
                reasons.push(Reason::new(
                    code,
                    format!("{text} (allowed by your answer)"),
                    Weight::Info,
                ));
            }
        }
        return ActionVerdict {
            decision: hit.decision,
            reasons,
            floored: false,
            promotion: None,
        };
    }
    // 4. Ask floors.
    if posture == Posture::Autopilot && contained_in_project(action) {
        floors.retain(|(code, _, _)| *code != "floor.not-understood");
    }
    if !floors.is_empty() {
        let reasons = floors
            .iter()
            .map(|(code, text, _)| Reason::new(code, text.clone(), Weight::Raises))
            .collect();
        return ActionVerdict {
            decision: Decision::Ask,
            reasons,
            floored: true,
            promotion: None,
        };
    }
    if posture == Posture::Strict {
        return ActionVerdict {
            decision: Decision::Ask,
            reasons: vec![Reason::new(
                "posture.strict",
                "strict posture: only your rules allow",
                Weight::Raises,
            )],
            floored: false,
            promotion: None,
        };
    }
    // 5. Learned promotion.
    let fam = ctx
        .envelope
        .familiarity(&action.signature, tier, ctx.now_us, thresholds);
    let promotion = can_promote(&fam, tier, harmless(action, posture), thresholds);
    let mut reasons = Vec::new();
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
        return ActionVerdict {
            decision: Decision::Allow,
            reasons,
            floored: false,
            promotion: Some(promotion),
        };
    }
    if fam.novel {
        let code = if ctx.envelope.events < 25 {
            "novel.no-baseline"
        } else {
            "novel.first-time"
        };
        let text = if ctx.envelope.events < 25 {
            "nothing learned for this project yet"
        } else {
            "never seen in this project"
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
    ActionVerdict {
        decision: Decision::Ask,
        reasons,
        floored: false,
        promotion: Some(promotion),
    }
}
