//! Classifying one project's events, the part of a replay no setting changes: each distinct
//! call (tool, input, working directory) analysed and prepared by the engine once, the
//! standing approvals turned into the signatures they grant, each event's label and where it
//! came from, its session, and the replay's options.
//!
//! Must not: decide anything under a setting (that is the per-event loop in `replay.rs`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use leastgrant_engine::{
    ActionFlags, Analysis, Decision, NoAnswers, Policy, PreparedAction, Roots, Rule,
    RulesAndGrants, ToolCall, analyze, prepare, recorded_command, stable_hash,
};
use leastgrant_ingest::schema::Outcome;

use crate::events::{Decider, ReplayEvent};

/// What the history says the person wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// A person refused it.
    Refused,
    /// It ran while a person was answering prompts, or a person's approval is recorded.
    Approved,
    /// It ran, nobody was answering prompts (or we cannot tell).
    RanUnattended,
    /// It ran on a decision no person made (configuration, a hook, Claude Code's auto-mode
    /// classifier): like [`Label::RanUnattended`], but never human evidence, so an ask on it
    /// learns `observed` at most.
    RanUnjudged,
    /// Claude Code's auto-mode classifier denied it: what the person wanted is unknown, and the
    /// tables count it apart.
    ClassifierDenied,
    /// Nothing to learn from: cancelled, interrupted, denied by a hook, unanswered.
    Unlabeled,
}

/// Where a label came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelSource {
    /// A person's decision the history recorded (`decided_by`).
    Observed,
    /// Inferred: from the permission mode, the result text, and the unattended assumption.
    Inferred,
    /// No label of what a person wanted.
    None,
}

impl Label {
    /// The label of an event, and where it came from. A recorded decision wins over the
    /// inference: a person's decision labels the call as they decided it; configuration, a hook
    /// or the classifier letting it run is not a person's approval.
    pub fn of(event: &ReplayEvent) -> (Label, LabelSource) {
        let ran = matches!(
            event.outcome,
            Outcome::Ran | Outcome::Errored | Outcome::Answered
        );
        match event.decided_by {
            Some(Decider::Classifier)
                if matches!(event.outcome, Outcome::Denied | Outcome::Refused) =>
            {
                (Label::ClassifierDenied, LabelSource::None)
            }
            Some(decider) if decider.is_person() => match event.outcome {
                Outcome::Refused | Outcome::Denied => (Label::Refused, LabelSource::Observed),
                _ if ran => (Label::Approved, LabelSource::Observed),
                _ => (Label::Unlabeled, LabelSource::None),
            },
            // No person answered: what a simulated ask would have heard is the assumption.
            Some(_) if ran => (Label::RanUnjudged, LabelSource::Inferred),
            Some(_) => (Label::Unlabeled, LabelSource::None),
            None => match event.outcome {
                Outcome::Refused => (Label::Refused, LabelSource::Inferred),
                _ if ran && event.auto_mode => (Label::RanUnjudged, LabelSource::Inferred),
                _ if ran && event.attended == Some(true) => {
                    (Label::Approved, LabelSource::Inferred)
                }
                _ if ran => (Label::RanUnattended, LabelSource::Inferred),
                _ => (Label::Unlabeled, LabelSource::None),
            },
        }
    }
}

/// What a simulated ask learns when the call ran with nobody answering prompts: the history
/// holds no human answer, so this is an assumption, reported with every result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unattended {
    /// The person let it run unattended, so they would have said yes: `confirmed`, friction.
    Approve,
    /// Only that it ran: `observed`, friction.
    Observe,
    /// Neither: no evidence, unlabeled.
    Skip,
}

impl Unattended {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Unattended::Approve => "approve",
            Unattended::Observe => "observe",
            Unattended::Skip => "skip",
        }
    }

    /// Parses a lower-case name.
    pub fn parse(name: &str) -> Option<Unattended> {
        [Unattended::Approve, Unattended::Observe, Unattended::Skip]
            .into_iter()
            .find(|u| u.as_str() == name)
    }
}

/// Which misses the miss budget counts when the replay recommends a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissBudgetOn {
    /// Every refused call let through.
    #[default]
    All,
    /// Only risky ones (an action at tier ≥ 2 or near a floor): a routine command a person
    /// stopped is friction of another kind, not a security regret.
    Risky,
}

impl MissBudgetOn {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            MissBudgetOn::All => "all",
            MissBudgetOn::Risky => "risky",
        }
    }

    /// Parses a lower-case name.
    pub fn parse(name: &str) -> Option<MissBudgetOn> {
        [MissBudgetOn::All, MissBudgetOn::Risky]
            .into_iter()
            .find(|m| m.as_str() == name)
    }
}

/// Where one agent's labels came from, across a project or a run (setting-independent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LabelCounts {
    /// Events.
    pub events: u64,
    /// Labelled by a person's decision the history recorded.
    pub observed: u64,
    /// Labelled by inference (the permission mode, the result text, the unattended assumption).
    pub inferred: u64,
    /// Of the labelled, calls that ran on a decision no person made (configuration, a hook,
    /// the auto-mode classifier): `observed` evidence at most.
    pub unjudged: u64,
    /// Denied by Claude Code's auto-mode classifier.
    pub classifier_denied: u64,
    /// No label.
    pub unlabeled: u64,
    /// Standing approvals in force in the project (rows, not calls: `events` does not count
    /// them); a user-level one is counted in every project it applies to.
    #[serde(default)]
    pub standing: u64,
    /// Of those, rules too broad to stand for a signature (a bare `Bash`, `Bash(*)`, `Read`, a
    /// whole MCP server): recorded, never turned into a grant.
    #[serde(default)]
    pub standing_too_broad: u64,
    /// Of those, rules the engine's rule parser cannot read, or without a time.
    #[serde(default)]
    pub standing_unusable: u64,
    /// Signatures of the project's calls the standing approvals granted (`granted` evidence).
    #[serde(default)]
    pub standing_signatures: u64,
}

impl LabelCounts {
    fn add(&mut self, label: Label, source: LabelSource, unattended: Unattended) {
        self.events += 1;
        let skipped = unattended == Unattended::Skip
            && matches!(label, Label::RanUnattended | Label::RanUnjudged);
        match (label, source) {
            _ if skipped => self.unlabeled += 1,
            (Label::ClassifierDenied, _) => self.classifier_denied += 1,
            (_, LabelSource::Observed) => self.observed += 1,
            (_, LabelSource::Inferred) => self.inferred += 1,
            (_, LabelSource::None) => self.unlabeled += 1,
        }
        self.unjudged += u64::from(label == Label::RanUnjudged);
    }

    /// Adds another agent's or project's counts.
    pub fn merge(&mut self, other: &LabelCounts) {
        self.events += other.events;
        self.observed += other.observed;
        self.inferred += other.inferred;
        self.unjudged += other.unjudged;
        self.classifier_denied += other.classifier_denied;
        self.unlabeled += other.unlabeled;
        self.standing += other.standing;
        self.standing_too_broad += other.standing_too_broad;
        self.standing_unusable += other.standing_unusable;
        self.standing_signatures += other.standing_signatures;
    }

    fn add_standing(&mut self, grant: &Standing) {
        self.standing += 1;
        match grant {
            Standing::Grants(signatures) => self.standing_signatures += signatures.len() as u64,
            Standing::TooBroad => self.standing_too_broad += 1,
            Standing::Unusable => self.standing_unusable += 1,
        }
    }
}

/// What a standing approval (a `granted` row) gives the replay.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Standing {
    /// `granted` evidence, at the row's time, for these signatures (and their tiers) of the
    /// project's calls: every action the rule matches as an allow rule.
    /// Each signature as text, interned, and its tier.
    Grants(Vec<(String, u32, u8)>),
    /// Too broad to stand for a signature: no evidence.
    TooBroad,
    /// Not a rule the engine reads, or no time: no evidence.
    Unusable,
}

/// Tools whose bare rule allows every call however narrow its arguments: such a rule, or one
/// as wide (`Bash(*)`, `Read(//**)`), or a whole MCP server, is too broad to be a signature.
/// A bare rule naming one MCP tool, or a tool without arguments to narrow, is that tool.
const NARROWED_TOOLS: [&str; 10] = [
    "Bash",
    "Read",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "Glob",
    "Grep",
    "LS",
    "WebFetch",
];

/// The evidence a standing approval gives, against the project's calls. The rule goes through
/// the engine's own rule parser and matcher (as an allow rule: an action with effects the rule
/// does not name, or an unresolved path, is not covered); the grant is `granted` evidence,
/// which never passes a floor or the setting's highest tier (`can_promote`).
fn standing_of(event: &ReplayEvent, roots: &Roots, calls: &[Call]) -> Standing {
    let input: serde_json::Value = serde_json::from_str(&event.tool_input).unwrap_or_default();
    let text = input
        .get(leastgrant_ingest::standing::RULE_KEY)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let Ok(rule) = Rule::parse(text, Decision::Allow, roots) else {
        return Standing::Unusable;
    };
    if event.ts_us.is_none() {
        return Standing::Unusable;
    }
    let tool = text.split_once('(').map_or(text, |(tool, _)| tool);
    let whole_server = tool
        .strip_prefix("mcp__")
        .is_some_and(|rest| !rest.trim_end_matches("__*").contains("__"));
    if (NARROWED_TOOLS.contains(&tool) || whole_server) && unbounded(&rule) {
        return Standing::TooBroad;
    }
    let mut signatures: Vec<(String, u32, u8)> = calls
        .iter()
        .flat_map(|call| call.analysis.actions.iter().zip(&call.action_signatures))
        .filter(|(action, _)| rule.matches(action))
        .map(|(action, id)| (action.signature.clone(), *id, action.tier()))
        .collect();
    signatures.sort();
    signatures.dedup();
    Standing::Grants(signatures)
}

/// Distinct rules remembered per rule text, and in all, by [`unbounded`].
const UNBOUNDED_PER_TEXT: usize = 8;
const UNBOUNDED_KNOWN: usize = 4096;

/// [`Rule::is_unbounded`] (a proof over the rule's pattern, the costly part of reading a
/// standing approval), remembered for the run: a user-level rule stands in every project, so
/// each distinct rule (its text and its pattern resolved against the project's roots, compared
/// whole) is proved once, not once per project. Bounded: past the limits it is proved again.
fn unbounded(rule: &Rule) -> bool {
    type Known = HashMap<String, Vec<(Rule, bool)>>;
    static KNOWN: Mutex<Option<Known>> = Mutex::new(None);
    if let Ok(known) = KNOWN.lock()
        && let Some(answer) = known
            .as_ref()
            .and_then(|k| k.get(&rule.text))
            .and_then(|rules| rules.iter().find(|(r, _)| r == rule))
            .map(|(_, answer)| *answer)
    {
        return answer;
    }
    let answer = rule.is_unbounded();
    if let Ok(mut known) = KNOWN.lock() {
        let known = known.get_or_insert_with(HashMap::new);
        let total: usize = known.values().map(Vec::len).sum();
        if total < UNBOUNDED_KNOWN {
            let rules = known.entry(rule.text.clone()).or_default();
            if rules.len() < UNBOUNDED_PER_TEXT {
                rules.push((rule.clone(), answer));
            }
        }
    }
    answer
}

/// A call is risky when any action is at tier 2 or above, or is near a floor: it hits one
/// (a posture may have waived it) or carries a fact floors look at. Misses of risky calls are
/// the security regrets; the rest are routine commands a person stopped.
fn risky(analysis: &Analysis, prepared: &[PreparedAction]) -> bool {
    analysis
        .actions
        .iter()
        .any(|a| a.tier() >= 2 || a.flags != ActionFlags::default())
        || prepared.iter().any(|p| !p.floors.is_empty())
}

/// Replay knobs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Events per learning-curve window.
    pub window: u32,
    /// Windows kept per project (the learning curve's early part is what matters).
    pub max_windows: u32,
    /// Days kept per project on the per-day curve.
    pub max_days: u32,
    /// The assumption for asks on calls that ran unattended.
    pub unattended: Unattended,
    /// Which misses the miss budget counts.
    pub miss_budget_on: MissBudgetOn,
    /// Events at or after this time (µs) are the scoring period of a time split.
    pub split_at_us: Option<i64>,
    /// The home directory for resolving `~` (guessed from the project root when absent).
    pub home: Option<String>,
    /// Keep each setting's verdict per event (tests and the export round trip).
    pub keep_verdicts: bool,
    /// Keep each setting's final envelope (export).
    pub keep_envelopes: bool,
    /// The rules and grants in force per project, as the hook will apply them; `None`: none.
    pub answers: Option<Arc<dyn ProjectAnswers>>,
}

/// The answers given in advance per project (rules and grants): the engine's seam, which the
/// hook crate implements over the files it reads.
pub use leastgrant_engine::ProjectAnswers;

impl Default for Options {
    fn default() -> Options {
        Options {
            window: 50,
            max_windows: 200,
            max_days: 365,
            unattended: Unattended::Approve,
            miss_budget_on: MissBudgetOn::All,
            split_at_us: None,
            home: None,
            keep_verdicts: false,
            keep_envelopes: false,
            answers: None,
        }
    }
}

/// The home directory a project root implies (`/home/u`, `/Users/u`, `C:/Users/u`), so `~`
/// and dotfiles resolve as they did on the machine that made the history.
pub fn home_of(project_root: &str) -> String {
    let parts: Vec<&str> = project_root.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        if matches!(*part, "home" | "Users") && i + 1 < parts.len() {
            return parts[..=i + 1].join("/");
        }
    }
    if project_root.starts_with("/root") {
        return "/root".to_string();
    }
    "/home/unknown".to_string()
}

/// The tool names an agent runs without asking in its default mode (read-only tools), for the
/// agent-defaults baseline. Compared without case and underscores.
const AGENT_DEFAULT_ALLOWED: &[&str] = &[
    // Claude Code
    "read",
    "glob",
    "grep",
    "ls",
    "notebookread",
    "todoread",
    "todowrite",
    "task",
    "exitplanmode",
    "bashoutput",
    "askuserquestion",
    // Cursor
    "readfile",
    "listdir",
    "codebasesearch",
    "grepsearch",
    "filesearch",
    "globfilesearch",
    "todowrite",
    "readlints",
];

fn agent_allows(tool: &str) -> bool {
    let key: String = tool
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    AGENT_DEFAULT_ALLOWED.contains(&key.as_str())
}

/// One distinct call of a project, classified once.
pub(crate) struct Call {
    pub(crate) analysis: Analysis,
    pub(crate) prepared: Vec<PreparedAction>,
    /// Interned signature of each action.
    pub(crate) action_signatures: Vec<u32>,
    /// Each action's tier (worked out once: the settings ask for it on every event).
    pub(crate) tiers: Vec<u8>,
    /// The shell command it records, if it is a shell call (the native-rules settings' key).
    pub(crate) command: Option<String>,
    /// Interned joint signature (the first-approval baseline's key).
    pub(crate) joint: u32,
    pub(crate) agent_allows: bool,
    /// An action at tier ≥ 2 or near a floor.
    pub(crate) risky: bool,
}

/// One project's events, each distinct call classified once: the part of a replay that does
/// not depend on the settings.
pub struct ClassifiedProject {
    /// The project key.
    pub project_key: String,
    /// The project root.
    pub project_root: String,
    /// Its events in replay order.
    pub events: Vec<ReplayEvent>,
    pub(crate) calls: Vec<Call>,
    pub(crate) event_call: Vec<usize>,
    /// Each event's label and where it came from.
    pub(crate) labels: Vec<(Label, LabelSource)>,
    pub(crate) sessions: Vec<usize>,
    /// Per session, the hash learning keeps of its id.
    pub(crate) session_hashes: Vec<u64>,
    pub(crate) signature_count: usize,
    /// The standing approvals, by event index.
    pub(crate) standing: HashMap<usize, Standing>,
    pub(crate) understood: (u64, u64),
    pub(crate) capabilities: BTreeMap<&'static str, u64>,
    pub(crate) notes: Vec<String>,
    pub(crate) label_counts: BTreeMap<String, LabelCounts>,
    /// The project's roots, and its rules when they were read (native rules decide with them).
    pub(crate) roots: Roots,
    pub(crate) policy: Option<Policy>,
}

impl ClassifiedProject {
    /// Events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// No events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Distinct calls classified.
    pub fn distinct_calls(&self) -> usize {
        self.calls.len()
    }
}

/// Orders a project's events (any order in) and classifies each distinct call once.
pub fn classify_project(mut events: Vec<ReplayEvent>, options: &Options) -> ClassifiedProject {
    crate::events::order(&mut events);
    let project_key = events
        .first()
        .map(|e| e.project_key.clone())
        .unwrap_or_default();
    let project_root = events
        .first()
        .map(|e| e.project_root.clone())
        .unwrap_or_default();
    let home = options
        .home
        .clone()
        .unwrap_or_else(|| home_of(&project_root));
    let roots = Roots::new(&project_root, &home);
    // Rules that cannot be read leave the project without them; the summary says so.
    let mut notes = Vec::new();
    let answers = options
        .answers
        .as_ref()
        .and_then(|source| match source.for_project(&roots) {
            Ok(answers) => Some(answers),
            Err(e) => {
                notes.push(format!("{project_key}: replayed without its rules: {e}"));
                None
            }
        });

    let mut signature_ids: HashMap<String, u32> = HashMap::new();
    let mut intern = |text: &str| -> u32 {
        if let Some(id) = signature_ids.get(text) {
            return *id;
        }
        let id = u32::try_from(signature_ids.len()).unwrap_or(u32::MAX);
        signature_ids.insert(text.to_string(), id);
        id
    };
    let mut call_of: HashMap<(&str, &str, Option<&str>), usize> = HashMap::new();
    let mut calls: Vec<Call> = Vec::new();
    let mut event_call: Vec<usize> = Vec::with_capacity(events.len());
    let mut understood = (0u64, 0u64);
    let mut capabilities: BTreeMap<&'static str, u64> = BTreeMap::new();
    for event in &events {
        // A standing approval is not a call: no call index (the replay passes it by).
        if event.outcome == Outcome::Granted {
            event_call.push(usize::MAX);
            continue;
        }
        let key = (
            event.tool_name.as_str(),
            event.tool_input.as_str(),
            event.cwd.as_deref(),
        );
        let index = *call_of.entry(key).or_insert_with(|| {
            let input = serde_json::from_str(&event.tool_input).unwrap_or(serde_json::Value::Null);
            let command = recorded_command(&event.tool_name, &input).map(str::to_string);
            let call = ToolCall {
                tool: event.tool_name.clone(),
                input,
                cwd: event.cwd.clone(),
                descriptor: None,
            };
            let analysis = analyze(&call, &roots);
            let prepared = match &answers {
                Some((policy, grants)) => prepare(&analysis, &RulesAndGrants { policy, grants }),
                None => prepare(&analysis, &NoAnswers),
            };
            let action_signatures: Vec<u32> = analysis
                .actions
                .iter()
                .map(|a| intern(&a.signature))
                .collect();
            let joint_text: Vec<&str> = analysis
                .actions
                .iter()
                .map(|a| a.signature.as_str())
                .collect();
            let joint = intern(&format!(
                "{}\u{1f}{}",
                event.tool_name,
                joint_text.join(" && ")
            ));
            calls.push(Call {
                risky: risky(&analysis, &prepared),
                tiers: analysis.actions.iter().map(|a| a.tier()).collect(),
                command,
                analysis,
                prepared,
                action_signatures,
                joint,
                agent_allows: agent_allows(&event.tool_name),
            });
            calls.len() - 1
        });
        event_call.push(index);
        if let Some(call) = calls.get(index) {
            understood.1 += call.analysis.actions.len() as u64;
            understood.0 += call
                .analysis
                .actions
                .iter()
                .filter(|a| a.understood)
                .count() as u64;
            for action in &call.analysis.actions {
                *capabilities.entry(action.capability.as_str()).or_insert(0) += 1;
            }
        }
    }
    let signature_count = signature_ids.len();
    let mut label_counts: BTreeMap<String, LabelCounts> = BTreeMap::new();
    let mut standing: HashMap<usize, Standing> = HashMap::new();
    for (index, event) in events.iter().enumerate() {
        if event.outcome == Outcome::Granted {
            let grant = standing_of(event, &roots, &calls);
            label_counts
                .entry(event.agent.clone())
                .or_default()
                .add_standing(&grant);
            standing.insert(index, grant);
        }
    }
    let labels: Vec<(Label, LabelSource)> = events
        .iter()
        .map(|event| {
            let (label, source) = Label::of(event);
            if event.outcome == Outcome::Granted {
                return (label, source);
            }
            match label_counts.get_mut(&event.agent) {
                Some(counts) => counts.add(label, source, options.unattended),
                None => label_counts.entry(event.agent.clone()).or_default().add(
                    label,
                    source,
                    options.unattended,
                ),
            }
            (label, source)
        })
        .collect();
    let mut session_ids: HashMap<&str, usize> = HashMap::new();
    let sessions: Vec<usize> = events
        .iter()
        .map(|e| {
            let next = session_ids.len();
            *session_ids.entry(e.session_id.as_str()).or_insert(next)
        })
        .collect();
    let mut session_hashes = vec![0; session_ids.len()];
    for (id, at) in &session_ids {
        if let Some(slot) = session_hashes.get_mut(*at) {
            *slot = stable_hash(id);
        }
    }
    let policy = answers.map(|(policy, _)| policy);
    ClassifiedProject {
        project_key,
        project_root,
        events,
        calls,
        event_call,
        labels,
        sessions,
        session_hashes,
        signature_count,
        standing,
        understood,
        capabilities,
        notes,
        label_counts,
        roots,
        policy,
    }
}
