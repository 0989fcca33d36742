//! Answers given in advance: the decision vocabulary, and the seam through which rules and
//! grants answer an action before floors and learning are consulted. The rule language and the
//! grants implement it above; the decision consults it.

use super::action::Action;

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

/// An answer given in advance for an action: what a rule or a grant says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
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

/// Answers given in advance (rules, grants). The rule language is its own work; the engine
/// only consults it.
pub trait Answers {
    /// The answer that decides `action`, if any. Implementations resolve deny-over-allow and
    /// carve-outs themselves.
    fn answer(&self, action: &Action) -> Option<Answer>;
}

/// No answers at all: no rules, no grants.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAnswers;

impl Answers for NoAnswers {
    fn answer(&self, _action: &Action) -> Option<Answer> {
        None
    }
}
