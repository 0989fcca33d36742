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
