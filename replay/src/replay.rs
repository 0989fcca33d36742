//! The prequential, counterfactual replay of one project under many settings in one pass.
//!
//! Per event, in time order: every setting decides first with the state it has reached, then
//! learns only what its own simulated system would have seen (design §5): an ask learns the
//! human's recorded answer, an allow learns an observation, a deny learns nothing. Each event is
//! classified once; the settings share that work and differ only in their learned state. A
//! standing approval (a `granted` row, not a call) is decided by no setting: from its time, every
//! engine setting learns `granted` for the project's actions its rule matches.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use leastgrant_engine::{
    Context, DAY_US, DecayTable, Decision, Envelope, Evidence, Familiarity, Gates, Judgement,
    Learned, NoAnswers, Posed, Posture, Ruling, SessionState, Settings, Situation, Stage,
    Thresholds, decide_prepared, judge, judge_posed, pose, stable_hash,
};
use leastgrant_ingest::schema::Outcome;

use crate::classify::{Call, Standing};
pub use crate::classify::{
    ClassifiedProject, Label, LabelCounts, LabelSource, MissBudgetOn, Options, ProjectAnswers,
    Unattended, classify_project, home_of,
};
use crate::events::ReplayEvent;
use crate::native::{self, NativeProject};
use crate::settings::{Method, Setting};
use crate::shared::{SettingEnvelope, SharedEnvelope, View, learned_by};

/// Outcome classes of one event under one setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Allowed what the person refused: the security regret.
    Miss,
    /// Asked about or denied what the person refused.
    Catch,
    /// Allowed what ran.
    Saved,
    /// Asked about what the person then approved.
    Friction,
    /// Denied what the person approved.
    FalseBlock,
    /// No human answer to compare with.
    Unlabeled,
    /// Claude Code's auto-mode classifier denied it: no human answer, counted apart.
    ClassifierDenied,
}

impl Class {
    /// The class of a verdict against a label.
    pub fn of(decision: Decision, label: Label, unattended: Unattended) -> Class {
        let label = match (label, unattended) {
            (Label::RanUnattended | Label::RanUnjudged, Unattended::Skip) => Label::Unlabeled,
            (Label::RanUnattended | Label::RanUnjudged, _) => Label::Approved,
            (Label::ClassifierDenied, _) => return Class::ClassifierDenied,
            (other, _) => other,
        };
        match (label, decision) {
            (Label::Refused, Decision::Allow) => Class::Miss,
            (Label::Refused, _) => Class::Catch,
            (Label::Approved, Decision::Allow) => Class::Saved,
            (Label::Approved, Decision::Ask) => Class::Friction,
            (Label::Approved, Decision::Deny) => Class::FalseBlock,
            _ => Class::Unlabeled,
        }
    }
}

/// The evidence the simulated system would have gathered, and whether the call ran in it.
fn counterfactual(
    decision: Decision,
    label: Label,
    unattended: Unattended,
) -> (Option<Evidence>, bool) {
    match (decision, label) {
        (Decision::Allow, _) => (Some(Evidence::Observed), true),
        (Decision::Ask, Label::Refused) => (Some(Evidence::Denied), false),
        (Decision::Ask, Label::Approved) => (Some(Evidence::Confirmed), true),
        (Decision::Ask, Label::RanUnattended) => match unattended {
            Unattended::Approve => (Some(Evidence::Confirmed), true),
            Unattended::Observe => (Some(Evidence::Observed), true),
            Unattended::Skip => (None, true),
        },
        // No person decided, so no person's approval: what ran is observed at most.
        (Decision::Ask, Label::RanUnjudged) => match unattended {
            Unattended::Approve | Unattended::Observe => (Some(Evidence::Observed), true),
            Unattended::Skip => (None, true),
        },
        _ => (None, false),
    }
}

impl MissBudgetOn {
    /// The misses and the refusals the budget is a share of.
    pub fn of(self, counts: &Counts) -> (u64, u64) {
        match self {
            MissBudgetOn::All => (counts.miss, counts.refused),
            MissBudgetOn::Risky => (counts.miss_risky, counts.refused_risky),
        }
    }
}

/// Counts of verdicts and outcome classes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    /// Events decided.
    pub events: u64,
    /// Verdicts.
    pub allow: u64,
    /// Verdicts.
    pub ask: u64,
    /// Verdicts.
    pub deny: u64,
    /// Classes.
    pub miss: u64,
    /// Classes.
    pub catch: u64,
    /// Classes.
    pub saved: u64,
    /// Classes.
    pub friction: u64,
    /// Classes.
    pub false_block: u64,
    /// Classes.
    pub unlabeled: u64,
    /// Events the person refused (misses + catches).
    pub refused: u64,
    /// Misses of risky calls (tier ≥ 2 or near a floor); the rest are routine.
    pub miss_risky: u64,
    /// Refused risky calls.
    pub refused_risky: u64,
    /// Calls Claude Code's auto-mode classifier denied (their own class).
    pub classifier_denied: u64,
    /// Asks whose answer is a decision the history recorded.
    pub ask_observed: u64,
    /// Asks whose answer was inferred (mode, result text, the unattended assumption).
    pub ask_inferred: u64,
}

impl Counts {
    /// Counts `n` verdicts of one kind.
    fn add_many(
        &mut self,
        decision: Decision,
        class: Class,
        risky: bool,
        source: LabelSource,
        n: u64,
    ) {
        self.events += n;
        match decision {
            Decision::Allow => self.allow += n,
            Decision::Ask => self.ask += n,
            Decision::Deny => self.deny += n,
        }
        match class {
            Class::Miss => self.miss += n,
            Class::Catch => self.catch += n,
            Class::Saved => self.saved += n,
            Class::Friction => self.friction += n,
            Class::FalseBlock => self.false_block += n,
            Class::Unlabeled => self.unlabeled += n,
            Class::ClassifierDenied => self.classifier_denied += n,
        }
        if matches!(class, Class::Miss | Class::Catch) {
            self.refused += n;
            if risky {
                self.refused_risky += n;
                if class == Class::Miss {
                    self.miss_risky += n;
                }
            }
        }
        if decision == Decision::Ask {
            match source {
                LabelSource::Observed => self.ask_observed += n,
                LabelSource::Inferred => self.ask_inferred += n,
                LabelSource::None => {}
            }
        }
    }

    /// Misses of routine calls (tier ≤ 1, no floor near).
    pub fn miss_routine(&self) -> u64 {
        self.miss - self.miss_risky
    }

    /// Adds another set of counts.
    pub fn merge(&mut self, other: &Counts) {
        self.events += other.events;
        self.allow += other.allow;
        self.ask += other.ask;
        self.deny += other.deny;
        self.miss += other.miss;
        self.catch += other.catch;
        self.saved += other.saved;
        self.friction += other.friction;
        self.false_block += other.false_block;
        self.unlabeled += other.unlabeled;
        self.refused += other.refused;
        self.miss_risky += other.miss_risky;
        self.refused_risky += other.refused_risky;
        self.classifier_denied += other.classifier_denied;
        self.ask_observed += other.ask_observed;
        self.ask_inferred += other.ask_inferred;
    }
}

/// Verdicts in one bucket of a learning curve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CurvePoint {
    /// Events.
    pub events: u32,
    /// Of which allowed.
    pub allow: u32,
    /// Of which asked.
    pub ask: u32,
    /// Of which denied.
    pub deny: u32,
}

impl CurvePoint {
    /// Asks per event.
    pub fn prompt_rate(&self) -> f64 {
        if self.events == 0 {
            0.0
        } else {
            f64::from(self.ask) / f64::from(self.events)
        }
    }
}

/// One signature's first promotion by learning.
#[derive(Debug, Clone, PartialEq)]
pub struct PromotionRecord {
    /// The signature.
    pub signature: String,
    /// Its first sighting in the project (µs).
    pub first_seen_us: i64,
    /// When learning first allowed it (µs).
    pub promoted_us: i64,
    /// Sightings before that.
    pub sightings: u32,
    /// How: `confirmed`, `observed` or `granted`.
    pub route: &'static str,
}

/// An event a setting allowed that the person had refused.
#[derive(Debug, Clone, PartialEq)]
pub struct MissRecord {
    /// The event's position in the project's replay order.
    pub index: usize,
    /// The codes of the reasons that allowed it.
    pub codes: Vec<String>,
    /// The reasons, for people.
    pub reasons: String,
    /// The call is risky: an action at tier ≥ 2 or near a floor (`crate::classify`).
    pub risky: bool,
}

/// One setting's results on one project.
#[derive(Debug, Clone, Default)]
pub struct SettingRun {
    /// Counts before the split (or all), and from the split on.
    pub periods: [Counts; 2],
    /// The learning curve per window of events.
    pub windows: Vec<CurvePoint>,
    /// The learning curve per day since the project's first event.
    pub days: Vec<CurvePoint>,
    /// First promotions.
    pub promotions: Vec<PromotionRecord>,
    /// Reason codes behind friction (asks the person approved).
    pub friction_reasons: BTreeMap<&'static str, u64>,
    /// Misses.
    pub misses: Vec<MissRecord>,
    /// Verdict per event, when kept.
    pub verdicts: Vec<Decision>,
    /// The final envelope, when kept.
    pub envelope: Option<Envelope>,
}

impl SettingRun {
    /// Counts over the whole history.
    pub fn total(&self) -> Counts {
        let mut total = self.periods[0];
        total.merge(&self.periods[1]);
        total
    }
}

/// One project's replay.
#[derive(Debug, Clone)]
pub struct ProjectRun {
    /// The project key.
    pub project_key: String,
    /// The project root.
    pub project_root: String,
    /// Its events in replay order.
    pub events: Vec<ReplayEvent>,
    /// Per setting, in the settings' order.
    pub settings: Vec<SettingRun>,
    /// Actions the engine did not fully understand, and actions in all.
    pub understood: (u64, u64),
    /// Actions by capability (the project's capability mix; no setting changes it).
    pub capabilities: BTreeMap<&'static str, u64>,
    /// What a person should know about how this project was replayed.
    pub notes: Vec<String>,
    /// Where the labels came from, per agent.
    pub labels: BTreeMap<String, LabelCounts>,
}

/// Per setting, the state the simulated system has reached.
struct State {
    learned: Learning,
    /// Per session, its state where it differs from the shared one (strict's, which learns
    /// the shared evidence): most settings run what strict runs, so most have none of their own.
    sessions: Vec<Option<SessionState>>,
    approved_once: HashSet<u32>,
    /// Per interned signature: learning has allowed it.
    promoted: Vec<bool>,
    /// Reason codes behind friction, in order of first use (the run's map at the end).
    friction: Vec<(&'static str, u64)>,
    run: SettingRun,
}

/// What a setting has learned.
enum Learning {
    /// An envelope of its own.
    Own(Envelope),
    /// The shared envelope except where its evidence differed, and which shared familiarity it
    /// reads (its half-life and z).
    Shared {
        envelope: SettingEnvelope,
        class: usize,
        /// Its posture's index in [`POSTURES`].
        posture: usize,
        /// Its thresholds, worked out per tier.
        gates: Gates,
    },
}

/// Settings ready to replay: each engine setting's decay table built once for the whole run,
/// not once per project.
pub struct Plan<'a> {
    settings: &'a [Setting],
    tables: Vec<Option<Arc<DecayTable>>>,
}

impl<'a> Plan<'a> {
    /// Builds the tables.
    pub fn new(settings: &'a [Setting]) -> Plan<'a> {
        Plan {
            settings,
            tables: settings
                .iter()
                .map(|setting| match &setting.method {
                    Method::Engine(s) | Method::Native(s) => {
                        Some(Arc::new(DecayTable::new(s.thresholds.half_life_days)))
                    }
                    _ => None,
                })
                .collect(),
        }
    }

    /// Replays one project (its events in any order) under every setting.
    pub fn project(&self, events: Vec<ReplayEvent>, options: &Options) -> ProjectRun {
        let classified = classify_project(events, options);
        let settings_runs = self.classified(&classified, options);
        ProjectRun {
            project_key: classified.project_key,
            project_root: classified.project_root,
            events: classified.events,
            settings: settings_runs,
            understood: classified.understood,
            capabilities: classified.capabilities,
            notes: classified.notes,
            labels: classified.label_counts,
        }
    }

    /// Replays a classified project under every setting in one pass over its events.
    pub fn classified(&self, project: &ClassifiedProject, options: &Options) -> Vec<SettingRun> {
        replay_classified(project, self.settings, &self.tables, options)
    }
}

/// Replays one project (its events in any order) under every setting.
pub fn replay_project(
    events: Vec<ReplayEvent>,
    settings: &[Setting],
    options: &Options,
) -> ProjectRun {
    Plan::new(settings).project(events, options)
}

fn replay_classified(
    project: &ClassifiedProject,
    settings: &[Setting],
    tables: &[Option<Arc<DecayTable>>],
    options: &Options,
) -> Vec<SettingRun> {
    let ClassifiedProject {
        events,
        calls,
        event_call,
        labels,
        sessions,
        session_hashes,
        signature_count,
        standing,
        roots,
        policy,
        ..
    } = project;
    let session_count = session_hashes.len();
    let signature_count = *signature_count;
    // Shared by the native-rules settings, built only when there is one.
    let mut native = settings
        .iter()
        .any(|s| matches!(s.method, Method::Native(_)))
        .then(|| NativeProject::new(events, event_call, calls, roots, policy.as_ref()));
    // The learning settings share one envelope per half-life (crate::shared); observe, whose
    // words on a miss ask about transitions, and every setting of an export keep their own.
    let mut shared: Vec<SharedEnvelope> = Vec::new();
    // Per (shared envelope, z): the thresholds of the first setting of that class.
    let mut classes: Vec<(usize, Thresholds)> = Vec::new();
    let mut states: Vec<State> = settings
        .iter()
        .zip(tables)
        .map(|(setting, decay)| {
            let learned = match (&setting.method, decay) {
                (Method::Engine(s), Some(table))
                    if s.posture != Posture::Observe && !options.keep_envelopes =>
                {
                    let h = s.thresholds.half_life_days;
                    let at = shared
                        .iter()
                        .position(|e| e.half_life_days() == h)
                        .unwrap_or_else(|| {
                            shared.push(SharedEnvelope::new(Arc::clone(table), signature_count));
                            shared.len() - 1
                        });
                    let class = classes
                        .iter()
                        .position(|(e, t)| *e == at && t.z == s.thresholds.z)
                        .unwrap_or_else(|| {
                            classes.push((at, s.thresholds));
                            classes.len() - 1
                        });
                    Learning::Shared {
                        envelope: SettingEnvelope::new(at, signature_count),
                        class,
                        posture: POSTURES.iter().position(|p| *p == s.posture).unwrap_or(0),
                        gates: Gates::new(&s.thresholds),
                    }
                }
                (_, Some(table)) => Learning::Own(Envelope::tracking(Arc::clone(table))),
                (_, None) => Learning::Own(Envelope::default()),
            };
            State {
                learned,
                sessions: vec![None; session_count],
                approved_once: HashSet::new(),
                promoted: vec![false; signature_count],
                friction: Vec::new(),
                run: SettingRun::default(),
            }
        })
        .collect();
    // The shared evidence is what strict learns: learning never allows under it.
    let strict = Settings {
        posture: Posture::Strict,
        thresholds: Thresholds::default(),
    };
    let mut shared_sessions = vec![SessionState::default(); session_count];
    let mut computed: Vec<Vec<Familiarity>> = vec![Vec::new(); classes.len()];
    // Per class: its shared envelope and the half-life and z its familiarity is computed for.
    let class_keys: Vec<(usize, (f64, f64))> = classes
        .iter()
        .map(|(at, t)| (*at, (t.half_life_days, t.z)))
        .collect();

    let first_ts = events
        .iter()
        .filter(|e| e.outcome != Outcome::Granted)
        .filter_map(|e| e.ts_us)
        .min()
        .unwrap_or(0);
    let mut first_seen: Vec<Option<(i64, u32)>> = vec![None; signature_count];
    // The engine's judgements where it judges in full (`judge`), and each action's ruling of
    // the setting at hand (what the loop reads).
    let mut judgements: Vec<Judgement> = Vec::new();
    let mut rulings: Vec<Ruling> = Vec::new();
    // Per posture (in `POSTURES` order), each action's part of `judge` that no learned state
    // changes, worked out once per event for the postures a sharing setting has.
    let mut posed: [Vec<Posed>; 4] = Default::default();
    let mut postures_used = [false; 4];
    for state in &states {
        if let Learning::Shared { posture, .. } = state.learned {
            postures_used[posture] = true;
        }
    }
    let mut approvals_after: Vec<usize> = Vec::new();
    let mut shared_learned: Vec<(u32, u8)> = Vec::new();
    // The loop's bookkeeping, batched: per setting a flat tally of (period, verdict, class,
    // stake, label source) and per window and day a row of verdicts for every setting, each
    // touched by one increment per setting and event and turned into counts and curves at the end.
    let setting_count = settings.len();
    let mut tallies: Vec<[u64; TALLY]> = vec![[0; TALLY]; setting_count];
    let mut window_rows: Vec<[u32; 3]> = Vec::new();
    let mut day_rows: Vec<[u32; 3]> = Vec::new();
    // The verdicts of the current run of events with the same window and day, per setting:
    // one increment per setting and event, added to the window's and the day's rows when the
    // run ends.
    let mut run_rows: Vec<[u32; 3]> = vec![[0; 3]; setting_count];
    let mut run_of: (Option<usize>, Option<usize>) = (None, None);
    for (index, event) in events.iter().enumerate() {
        for envelope in &shared {
            envelope.begin_event();
        }
        let Some(call) = event_call.get(index).and_then(|c| calls.get(*c)) else {
            // A standing approval: `granted` evidence for every engine setting, from its time.
            if let (Some(Standing::Grants(grants)), Some(at)) = (standing.get(&index), event.ts_us)
            {
                let session_hash = stable_hash(&event.session_id);
                for (setting, state) in settings.iter().zip(states.iter_mut()) {
                    if !matches!(setting.method, Method::Engine(_)) {
                        continue;
                    }
                    for (signature, id, tier) in grants {
                        match &mut state.learned {
                            Learning::Own(envelope) => envelope.learn_signature(
                                signature,
                                *tier,
                                Evidence::Granted,
                                at,
                                &event.session_id,
                            ),
                            Learning::Shared { envelope, .. } => {
                                if let Some(shared) = shared.get(envelope.shared) {
                                    envelope.learn_signature(
                                        shared,
                                        *id,
                                        *tier,
                                        Evidence::Granted,
                                        at,
                                        session_hash,
                                    );
                                }
                            }
                        }
                    }
                }
                // What strict learns, so every sharing setting's shared statistics.
                for envelope in &mut shared {
                    for (_, id, tier) in grants {
                        envelope.learn_signature(*id, *tier, Evidence::Granted, at, session_hash);
                    }
                }
            }
            continue;
        };
        let session = sessions.get(index).copied().unwrap_or(0);
        let session_hash = session_hashes.get(session).copied().unwrap_or(0);
        let now = event.ts_us.unwrap_or(first_ts);
        let (label, source) = labels
            .get(index)
            .copied()
            .unwrap_or((Label::Unlabeled, LabelSource::None));
        let period = usize::from(options.split_at_us.is_some_and(|split| now >= split));
        let window = u32::try_from(index).unwrap_or(u32::MAX) / options.window.max(1);
        let day = u32::try_from((now - first_ts).max(0) / DAY_US).unwrap_or(u32::MAX);
        let analysis = &call.analysis;
        let signatures = &call.action_signatures;
        for ((posture, used), out) in POSTURES.iter().zip(postures_used).zip(&mut posed) {
            if used {
                out.clear();
                out.extend(
                    analysis
                        .actions
                        .iter()
                        .zip(&call.prepared)
                        .map(|(action, prep)| pose(action, prep, *posture)),
                );
            }
        }
        // The class, the evidence and the tally slot of each verdict: the same for every
        // setting, so worked out once per event for each verdict that occurs.
        let mut outcomes: [Option<VerdictOutcome>; 3] = [None; 3];
        // With many settings, all three at once (a look-up each then); with few, only those
        // that occur.
        if setting_count >= MANY_SETTINGS {
            for (outcome, decision) in outcomes.iter_mut().zip(DECISIONS) {
                let class = Class::of(decision, label, options.unattended);
                let (evidence, ran) = counterfactual(decision, label, options.unattended);
                let slot = tally_slot(period, decision, class, call.risky, source);
                *outcome = Some((class, evidence, ran, slot));
            }
        }
        let window_row = (window < options.max_windows).then(|| {
            let at = window as usize * setting_count;
            if window_rows.len() <= at {
                window_rows.resize(at + setting_count, [0; 3]);
            }
            at
        });
        let day_row = (day < options.max_days).then(|| {
            let at = day as usize * setting_count;
            if day_rows.len() <= at {
                day_rows.resize(at + setting_count, [0; 3]);
            }
            at
        });
        if (window_row, day_row) != run_of {
            end_run(&mut run_rows, run_of, &mut window_rows, &mut day_rows);
            run_of = (window_row, day_row);
        }
        let counted = window_row.is_some() || day_row.is_some();
        // Once per event, for every sharing setting: the shared familiarity of each action,
        // and the shared evidence.
        let mut shared_learns = (None, false);
        if let Some(first) = shared.first() {
            for ((at, thresholds), out) in classes.iter().zip(computed.iter_mut()) {
                out.clear();
                if let Some(envelope) = shared.get(*at) {
                    out.extend(
                        call.tiers
                            .iter()
                            .zip(signatures)
                            .map(|(tier, id)| envelope.familiarity(*id, *tier, now, thresholds)),
                    );
                }
            }
            let session_state = shared_sessions.get(session).copied().unwrap_or_default();
            let view = View {
                setting: None,
                shared: first,
                call,
                computed: &[],
                computed_for: (f64::NAN, f64::NAN),
            };
            let situation = Situation {
                learned: &view,
                session: &session_state,
                settings: &strict,
                now_us: now,
            };
            let decision = judge(analysis, &call.prepared, &situation, &mut judgements).0;
            shared_learns = counterfactual(decision, label, options.unattended);
        }
        let (shared_evidence, shared_ran) = shared_learns;
        // The signatures and tiers the shared evidence goes to.
        shared_learned.clear();
        if let Some(evidence) = shared_evidence {
            learned_by(call, evidence, &mut shared_learned);
        }
        // The shared session state before this event (what a setting without one of its own
        // reads).
        let shared_session = shared_sessions.get(session).copied().unwrap_or_default();
        approvals_after.clear();
        // Per class, what a setting's view reads besides its own statistics.
        let class_views: Vec<View> = class_keys
            .iter()
            .zip(&computed)
            .filter_map(|((at, computed_for), computed)| {
                Some(View {
                    setting: None,
                    shared: shared.get(*at)?,
                    call,
                    computed,
                    computed_for: *computed_for,
                })
            })
            .collect();
        for (setting_index, (setting, state)) in settings.iter().zip(states.iter_mut()).enumerate()
        {
            let (session_state, own_session) = match state.sessions.get(session) {
                Some(Some(own)) => (own, true),
                _ => (&shared_session, false),
            };
            let view;
            let mut shared_view: Option<(&View, &[Posed], &Gates)> = None;
            let learned: &dyn Learned = match &state.learned {
                Learning::Own(envelope) => envelope,
                Learning::Shared {
                    envelope,
                    class,
                    posture,
                    gates,
                } => {
                    view = match class_views.get(*class) {
                        Some(base) => View {
                            setting: Some(envelope),
                            ..*base
                        },
                        None => View {
                            setting: Some(envelope),
                            shared: &shared[envelope.shared],
                            call,
                            computed: &[],
                            computed_for: (f64::NAN, f64::NAN),
                        },
                    };
                    shared_view =
                        Some((&view, posed.get(*posture).map_or(&[], Vec::as_slice), gates));
                    &view
                }
            };
            let mut native_code = "";
            let decision = match &setting.method {
                Method::Engine(engine_settings) => match shared_view {
                    // The posture's part computed once per event, the familiarity read
                    // from what the event computed for every setting of its class.
                    Some((view, posed_for, gates)) => {
                        let thresholds = &engine_settings.thresholds;
                        judge_posed(
                            analysis,
                            posed_for,
                            session_state,
                            engine_settings.posture,
                            gates,
                            |at, tier| view.familiarity_at(at, tier, now, thresholds),
                            &mut rulings,
                        )
                        .0
                    }
                    None => {
                        let situation = Situation {
                            learned,
                            session: session_state,
                            settings: engine_settings,
                            now_us: now,
                        };
                        let decision =
                            judge(analysis, &call.prepared, &situation, &mut judgements).0;
                        rulings.clear();
                        rulings.extend(judgements.iter().map(|j| Ruling::from(*j)));
                        decision
                    }
                },
                Method::AlwaysAsk => Decision::Ask,
                Method::AgentDefaults => {
                    if call.agent_allows {
                        Decision::Allow
                    } else {
                        Decision::Ask
                    }
                }
                Method::FirstApproval => {
                    if state.approved_once.contains(&call.joint) {
                        Decision::Allow
                    } else {
                        Decision::Ask
                    }
                }
                Method::Native(engine_settings) => {
                    // A native-rules setting learns in an envelope of its own.
                    let own = match &state.learned {
                        Learning::Own(envelope) => Some(envelope),
                        Learning::Shared { .. } => None,
                    };
                    let (decision, code) = match (native.as_mut(), own) {
                        (Some(n), Some(envelope)) => {
                            n.decide(index, envelope, engine_settings, now)
                        }
                        _ => (Decision::Ask, native::INEXPRESSIBLE),
                    };
                    native_code = code;
                    decision
                }
            };
            let verdict = decision as usize;
            let (class, evidence, ran, slot) = *outcomes[verdict].get_or_insert_with(|| {
                let class = Class::of(decision, label, options.unattended);
                let (evidence, ran) = counterfactual(decision, label, options.unattended);
                let slot = tally_slot(period, decision, class, call.risky, source);
                (class, evidence, ran, slot)
            });
            tallies[setting_index][slot] += 1;
            if counted {
                run_rows[setting_index][verdict] += 1;
            }
            let run = &mut state.run;
            if options.keep_verdicts {
                run.verdicts.push(decision);
            }
            let engine = matches!(setting.method, Method::Engine(_));
            if class == Class::Friction {
                let code = if engine {
                    rulings
                        .iter()
                        .find(|j| j.decision == Decision::Ask)
                        .map_or("engine.empty", Ruling::code)
                } else if !native_code.is_empty() {
                    native_code
                } else {
                    "baseline"
                };
                // Counted by address first (the codes are constants): a map keyed by text
                // compares strings on every ask; the run's map is filled at the end.
                match state
                    .friction
                    .iter_mut()
                    .find(|(known, _)| std::ptr::eq(*known, code) || *known == code)
                {
                    Some((_, count)) => *count += 1,
                    None => state.friction.push((code, 1)),
                }
            }
            if class == Class::Miss {
                let mut record =
                    miss_record(index, setting, call, learned, session_state, now, &rulings);
                if let (Method::Native(_), Some(n)) = (&setting.method, &native) {
                    record.codes = vec![native::MATCHED.to_string()];
                    record.reasons = format!(
                        "exported native rules match every piece: {}",
                        n.pieces_text(index)
                    );
                }
                run.misses.push(record);
            }
            if engine {
                for (at, judgement) in rulings.iter().enumerate() {
                    if judgement.decision != Decision::Allow || judgement.stage != Stage::Learned {
                        continue;
                    }
                    let (Some(signature), Some(action)) =
                        (signatures.get(at), analysis.actions.get(at))
                    else {
                        continue;
                    };
                    let Some(promoted) = state.promoted.get_mut(*signature as usize) else {
                        continue;
                    };
                    if !*promoted {
                        *promoted = true;
                        let (first, sightings) = first_seen
                            .get(*signature as usize)
                            .copied()
                            .flatten()
                            .unwrap_or((now, 0));
                        run.promotions.push(PromotionRecord {
                            signature: action.signature.clone(),
                            first_seen_us: first,
                            promoted_us: now,
                            sightings,
                            route: judgement.code().trim_start_matches("learned."),
                        });
                    }
                }
            }
            match (&setting.method, &mut state.learned) {
                (Method::Engine(_) | Method::Native(_), Learning::Own(envelope)) => {
                    if let Some(evidence) = evidence {
                        envelope.learn_event(
                            analysis,
                            evidence,
                            now,
                            &event.session_id,
                            session_state.last_capability,
                        );
                    }
                }
                (Method::Engine(_), Learning::Shared { envelope, .. }) => {
                    if let Some(shared) = shared.get(envelope.shared)
                        && envelope.learn_event(
                            shared,
                            call,
                            evidence,
                            shared_evidence,
                            &shared_learned,
                            now,
                            session_hash,
                        )
                    {
                        approvals_after.push(setting_index);
                    }
                }
                (Method::FirstApproval, _) if evidence == Some(Evidence::Confirmed) => {
                    state.approved_once.insert(call.joint);
                }
                _ => {}
            }
            // Its own session state from the first event it ran where strict did not, or the
            // reverse.
            if (ran != shared_ran || own_session)
                && let Some(slot) = state.sessions.get_mut(session)
            {
                let own = slot.get_or_insert(shared_session);
                if ran {
                    own.record(analysis);
                }
            }
        }
        if let Some(evidence) = shared_evidence {
            for envelope in &mut shared {
                envelope.learn(call, evidence, now, session_hash);
            }
        }
        // Approvals of a setting's own learn after the sightings they share.
        for at in &approvals_after {
            if let Some(State {
                learned: Learning::Shared { envelope, .. },
                ..
            }) = states.get_mut(*at)
                && let Some(shared) = shared.get(envelope.shared)
            {
                envelope.learn_approvals(shared, call, now, session_hash);
            }
        }
        if shared_ran && let Some(s) = shared_sessions.get_mut(session) {
            s.record(analysis);
        }
        if let Some(n) = &mut native {
            n.recorded(index);
        }
        for signature in signatures {
            if let Some(slot) = first_seen.get_mut(*signature as usize) {
                let entry = slot.get_or_insert((now, 0));
                entry.1 = entry.1.saturating_add(1);
            }
        }
    }
    end_run(&mut run_rows, run_of, &mut window_rows, &mut day_rows);
    states
        .into_iter()
        .zip(tallies)
        .enumerate()
        .map(|(setting_index, (mut state, tally))| {
            for (slot, count) in tally.into_iter().enumerate() {
                if count > 0 {
                    let (period, decision, class, risky, source) = tally_key(slot);
                    state.run.periods[period].add_many(decision, class, risky, source, count);
                }
            }
            let curve = |rows: &[[u32; 3]]| -> Vec<CurvePoint> {
                rows.iter()
                    .skip(setting_index)
                    .step_by(setting_count.max(1))
                    .map(|&[allow, ask, deny]| CurvePoint {
                        events: allow + ask + deny,
                        allow,
                        ask,
                        deny,
                    })
                    .collect()
            };
            state.run.windows = curve(&window_rows);
            state.run.days = curve(&day_rows);
            for (code, count) in state.friction {
                *state.run.friction_reasons.entry(code).or_insert(0) += count;
            }
            if options.keep_envelopes
                && let Learning::Own(envelope) = state.learned
            {
                state.run.envelope = Some(envelope);
            }
            state.run
        })
        .collect()
}

/// Adds the verdicts of a run of events with the same window and day (`run_of`: their rows,
/// if kept) to those rows, and empties the run.
fn end_run(
    run_rows: &mut [[u32; 3]],
    run_of: (Option<usize>, Option<usize>),
    window_rows: &mut [[u32; 3]],
    day_rows: &mut [[u32; 3]],
) {
    for (rows, at) in [(window_rows, run_of.0), (day_rows, run_of.1)] {
        if let Some(rows) = at.and_then(|at| rows.get_mut(at..)) {
            for (row, run) in rows.iter_mut().zip(run_rows.iter()) {
                for (total, n) in row.iter_mut().zip(run) {
                    *total += n;
                }
            }
        }
    }
    for run in run_rows.iter_mut() {
        *run = [0; 3];
    }
}

/// The words behind a miss: the engine's own reasons (misses are rare, so the full `decide`
/// is affordable here), or what the baseline does.
fn miss_record(
    index: usize,
    setting: &Setting,
    call: &Call,
    envelope: &dyn Learned,
    session: &SessionState,
    now: i64,
    rulings: &[Ruling],
) -> MissRecord {
    match &setting.method {
        Method::Engine(engine_settings) => {
            let ctx = Context {
                envelope,
                session,
                answers: &NoAnswers,
                settings: engine_settings,
                now_us: now,
            };
            let verdict = decide_prepared(&call.analysis, &call.prepared, &ctx);
            MissRecord {
                index,
                codes: rulings.iter().map(|j| j.code().to_string()).collect(),
                reasons: verdict
                    .reasons
                    .iter()
                    .map(|r| r.text.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
                risky: call.risky,
            }
        }
        _ => MissRecord {
            index,
            codes: vec![setting.id.clone()],
            reasons: setting.params()["baseline"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            risky: call.risky,
        },
    }
}

/// The postures, in the order of the per-event `pose` buffers.
const POSTURES: [Posture; 4] = [
    Posture::Observe,
    Posture::Assist,
    Posture::Autopilot,
    Posture::Strict,
];

/// Settings from which each event works out the outcome of all three verdicts beforehand.
const MANY_SETTINGS: usize = 8;

/// A verdict's class, the evidence it gives, whether the call ran, and its tally slot.
type VerdictOutcome = (Class, Option<Evidence>, bool, usize);

/// Slots of a setting's tally: period (2) × verdict (3) × class (7) × risky (2) × label source (3).
const TALLY: usize = 2 * 3 * 7 * 2 * 3;
const CLASSES: [Class; 7] = [
    Class::Miss,
    Class::Catch,
    Class::Saved,
    Class::Friction,
    Class::FalseBlock,
    Class::Unlabeled,
    Class::ClassifierDenied,
];
const DECISIONS: [Decision; 3] = [Decision::Allow, Decision::Ask, Decision::Deny];
const SOURCES: [LabelSource; 3] = [
    LabelSource::Observed,
    LabelSource::Inferred,
    LabelSource::None,
];

/// The tally slot of one verdict (inverse of [`tally_key`]).
fn tally_slot(
    period: usize,
    decision: Decision,
    class: Class,
    risky: bool,
    source: LabelSource,
) -> usize {
    (((period * 3 + decision as usize) * 7 + class as usize) * 2 + usize::from(risky)) * 3
        + source as usize
}

/// What a tally slot counts (inverse of [`tally_slot`]).
fn tally_key(slot: usize) -> (usize, Decision, Class, bool, LabelSource) {
    let source = SOURCES[slot % 3];
    let risky = (slot / 3) % 2 == 1;
    let class = CLASSES[(slot / 6) % 7];
    let decision = DECISIONS[(slot / 42) % 3];
    let period = slot / 126;
    (period, decision, class, risky, source)
}
