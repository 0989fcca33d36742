//! The "native rules only" setting's verdicts ([`Method::Native`](crate::settings::Method)):
//! no hook, only the exact allow rules `leastgrant export --to` would have written from the
//! envelope the setting has learned so far, matched as the event's own agent matches them.
//!
//! At an event, the exported rules are: every shell command the project recorded before it that
//! the agent has an exact rule for ([`NativeAgent::exact_rule`]) and that `judge` allows as a
//! call of its own in the project root — the envelope so far, the project's rules, no grants, no
//! session taint (the exporter's `decide`). The call runs when the agent's matcher finds a rule
//! for every piece of it ([`NativeAgent::pieces`]: Claude Code splits compound commands, Gemini
//! matches the whole command), and asks otherwise. So nothing the hook adds applies: no floors
//! over a compound command as a whole, no working directory, no session taint.
//!
//! An exact rule matches one text, so a piece is matched exactly when it is such a command: the
//! rule set is never built, each event checks its own pieces, and each piece is analysed once
//! per project, when first asked about. Must not: decide other than through `judge`.

use std::collections::HashMap;

use leastgrant_engine::{
    Analysis, Decision, Envelope, Judgement, NativeAgent, NoAnswers, Policy, PreparedAction, Roots,
    RulesAndGrants, SessionState, Settings, Situation, ToolCall, analyze, is_plain_command, judge,
    prepare,
};
use leastgrant_ingest::schema::agent;

use crate::classify::Call;
use crate::events::ReplayEvent;

/// The reason code of a call the exported rules let through (a miss's code).
pub const MATCHED: &str = "native.rule";
/// Not a shell call: `export` writes shell rules only (what an agent runs of its own accord,
/// such as Claude Code's read-only tools, is `baseline.agent-defaults`).
pub const NOT_SHELL: &str = "native.not-shell";
/// No exact rule of the event's agent can match it: an agent with no exact rules (Codex,
/// Copilot, or one `export` does not write for), or a piece with operators, wildcards or
/// substitutions.
pub const INEXPRESSIBLE: &str = "native.inexpressible";
/// A piece was never recorded as a command of its own before, so no rule was exported for it.
pub const UNRECORDED: &str = "native.unrecorded";
/// The envelope learned so far does not allow a piece, so its rule was not exported.
pub const NOT_ALLOWED: &str = "native.not-allowed";

/// Marks "none" in the per-event id lists.
const NONE: u32 = u32::MAX;
/// Marks a call of another tool than the shell in the per-event piece lists.
const NOT_SHELL_LIST: u32 = u32::MAX - 1;
/// A piece list not worked out yet.
const UNSET: u32 = u32::MAX - 2;
/// One slot per agent with native rules, and one for every other agent.
const AGENT_SLOTS: usize = NativeAgent::ALL.len() + 1;

/// What the events of one distinct call share.
struct CallInfo {
    /// The shell command it records, if it is a shell call.
    command: Option<String>,
    /// That command's id when it is plain (`NONE`: not plain or not a shell call).
    recorded: u32,
    /// Per agent slot, its piece list (`UNSET` until an event of that agent needs it).
    lists: [u32; AGENT_SLOTS],
}

/// The agent whose exported rules an event's agent reads, as the events table names agents.
fn native_agent(name: &str) -> Option<NativeAgent> {
    match name {
        agent::CLAUDE_CODE => Some(NativeAgent::Claude),
        agent::CODEX => Some(NativeAgent::Codex),
        agent::GEMINI => Some(NativeAgent::Gemini),
        agent::COPILOT => Some(NativeAgent::Copilot),
        _ => None,
    }
}

/// One plain command as a call of its own in the project root, classified once.
struct Candidate {
    analysis: Analysis,
    prepared: Vec<PreparedAction>,
}

/// One project's commands and pieces, shared by every native setting (they differ only in the
/// envelope they learn).
pub(crate) struct NativeProject<'p> {
    roots: &'p Roots,
    policy: Option<&'p Policy>,
    /// Plain commands (recorded ones and pieces), interned.
    commands: Vec<String>,
    /// Recorded by an event already replayed, per command id.
    recorded: Vec<bool>,
    /// Per command id, its classification once asked about.
    candidates: Vec<Option<Candidate>>,
    /// Per event, the piece list its agent's matcher checks (`NONE`: no rule can match it;
    /// `NOT_SHELL_LIST`: not a shell call).
    event_pieces: Vec<u32>,
    /// Per event, the id of the plain command it records (`NONE`: none).
    event_command: Vec<u32>,
    /// Piece lists, as command ids.
    piece_lists: Vec<Vec<u32>>,
    /// Scratch for `judge`.
    judgements: Vec<Judgement>,
}

impl<'p> NativeProject<'p> {
    /// Cuts every event's command into the pieces its agent's matcher checks.
    pub(crate) fn new(
        events: &[ReplayEvent],
        event_call: &[usize],
        classified: &[Call],
        roots: &'p Roots,
        policy: Option<&'p Policy>,
    ) -> NativeProject<'p> {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut commands: Vec<String> = Vec::new();
        let mut intern = |text: &str| -> u32 {
            if let Some(id) = ids.get(text) {
                return *id;
            }
            let id = u32::try_from(commands.len()).unwrap_or(UNSET - 1);
            ids.insert(text.to_string(), id);
            commands.push(text.to_string());
            id
        };
        // Per distinct call (indexed, no hashing): its recorded command, that command's id,
        // and per agent slot its piece list, each worked out once.
        // A standing approval is no call (`usize::MAX`): it gets no pieces.
        let calls = event_call
            .iter()
            .filter(|c| **c != usize::MAX)
            .max()
            .map_or(0, |m| m + 1);
        let mut per_call: Vec<Option<CallInfo>> = (0..calls).map(|_| None).collect();
        let mut piece_lists: Vec<Vec<u32>> = Vec::new();
        let mut event_pieces = Vec::with_capacity(events.len());
        let mut event_command = Vec::with_capacity(events.len());
        for (event, call) in events.iter().zip(event_call) {
            let Some(info) = per_call.get_mut(*call) else {
                event_pieces.push(NONE);
                event_command.push(NONE);
                continue;
            };
            let info = info.get_or_insert_with(|| {
                // The recorded command classification read from the call's input.
                let command = classified.get(*call).and_then(|c| c.command.clone());
                let recorded = match command.as_deref() {
                    Some(text) if is_plain_command(text) => intern(text),
                    _ => NONE,
                };
                CallInfo {
                    command,
                    recorded,
                    lists: [UNSET; AGENT_SLOTS],
                }
            });
            event_command.push(info.recorded);
            let agent = native_agent(&event.agent);
            let slot = agent
                .and_then(|a| NativeAgent::ALL.iter().position(|b| *b == a))
                .unwrap_or(AGENT_SLOTS - 1);
            let Some(list) = info.lists.get_mut(slot) else {
                event_pieces.push(NONE);
                continue;
            };
            if *list == UNSET {
                *list = match (&info.command, agent) {
                    (None, _) => NOT_SHELL_LIST,
                    (Some(text), Some(agent)) => match agent.pieces(text) {
                        Some(pieces)
                            if !pieces.is_empty()
                                && pieces.iter().all(|p| agent.exact_rule(p).is_some()) =>
                        {
                            piece_lists.push(pieces.into_iter().map(&mut intern).collect());
                            u32::try_from(piece_lists.len() - 1)
                                .unwrap_or(NONE)
                                .min(UNSET - 1)
                        }
                        _ => NONE,
                    },
                    (Some(_), None) => NONE,
                };
            }
            event_pieces.push(*list);
        }
        let count = commands.len();
        NativeProject {
            roots,
            policy,
            commands,
            recorded: vec![false; count],
            candidates: (0..count).map(|_| None).collect(),
            event_pieces,
            event_command,
            piece_lists,
            judgements: Vec::new(),
        }
    }

    /// The verdict at event `index` of a native setting whose envelope is `learned`, and its
    /// reason code ([`MATCHED`], [`INEXPRESSIBLE`], [`UNRECORDED`], [`NOT_ALLOWED`]).
    pub(crate) fn decide(
        &mut self,
        index: usize,
        learned: &Envelope,
        settings: &Settings,
        now_us: i64,
    ) -> (Decision, &'static str) {
        let list = self.event_pieces.get(index).copied().unwrap_or(NONE);
        let Some(pieces) = self.piece_lists.get(list as usize) else {
            let code = if list == NOT_SHELL_LIST {
                NOT_SHELL
            } else {
                INEXPRESSIBLE
            };
            return (Decision::Ask, code);
        };
        if !pieces
            .iter()
            .all(|id| self.recorded.get(*id as usize).copied().unwrap_or(false))
        {
            return (Decision::Ask, UNRECORDED);
        }
        // No taint: the exporter decides each command as a call of its own.
        let session = SessionState::default();
        let situation = Situation {
            learned,
            session: &session,
            settings,
            now_us,
        };
        for id in pieces {
            let id = *id as usize;
            let (Some(slot), Some(text)) = (self.candidates.get_mut(id), self.commands.get(id))
            else {
                return (Decision::Ask, INEXPRESSIBLE);
            };
            let candidate = slot.get_or_insert_with(|| {
                let call = ToolCall::shell(text, Some(&self.roots.project));
                let analysis = analyze(&call, self.roots);
                let prepared = match self.policy {
                    Some(policy) => prepare(
                        &analysis,
                        &RulesAndGrants {
                            policy,
                            grants: &[],
                        },
                    ),
                    None => prepare(&analysis, &NoAnswers),
                };
                Candidate { analysis, prepared }
            });
            let (decision, _) = judge(
                &candidate.analysis,
                &candidate.prepared,
                &situation,
                &mut self.judgements,
            );
            if decision != Decision::Allow {
                return (Decision::Ask, NOT_ALLOWED);
            }
        }
        (Decision::Allow, MATCHED)
    }

    /// Event `index` has been replayed: its command is recorded from now on.
    pub(crate) fn recorded(&mut self, index: usize) {
        let id = self.event_command.get(index).copied().unwrap_or(NONE);
        if let Some(slot) = self.recorded.get_mut(id as usize) {
            *slot = true;
        }
    }

    /// The pieces the rules matched at event `index`, for a miss's words.
    pub(crate) fn pieces_text(&self, index: usize) -> String {
        let list = self.event_pieces.get(index).copied().unwrap_or(NONE);
        self.piece_lists
            .get(list as usize)
            .into_iter()
            .flatten()
            .filter_map(|id| self.commands.get(*id as usize))
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
