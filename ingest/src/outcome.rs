//! How a Claude Code tool result says what happened to the call: the exact texts the agent
//! writes, compared by prefix, in one place (SpecStory exports of Claude Code sessions carry
//! the same texts).

use crate::schema::Outcome;

/// The refusal at the permission prompt (also written when a running tool is interrupted).
pub const REFUSED: &str = "The user doesn't want to proceed with this tool use.";
/// A parallel sibling of a refusal: cancelled, not refused.
pub const CANCELLED: &str = "The user doesn't want to take this action right now.";
/// A parallel sibling of a call that errored: stopped, never run (2.x, wrapped in
/// [`TOOL_USE_ERROR`]).
pub const SIBLING_ERRORED: &str = "Sibling tool call errored";
/// The wrapper of an error the tool itself raised about the call.
pub const TOOL_USE_ERROR: &str = "<tool_use_error>";
/// A refusal inside a sub-agent.
pub const SUBAGENT_REFUSED: &str = "Permission for this tool use was denied.";
/// The marker that follows an interrupt.
pub const INTERRUPT_MARKER: &str = "[Request interrupted by user for tool use]";
/// AskUserQuestion's "clarify" answer reuses the refusal prefix.
pub const CLARIFY: &str = "The user wants to clarify these questions.";
/// A plan the person rejected.
pub const PLAN_REJECTED: &str = "The agent proposed a plan that was rejected by the user.";
/// Denied by the auto-mode classifier.
pub const CLASSIFIER_DENIED: &str =
    "Permission for this action was denied by the Claude Code auto mode classifier";
/// The `toolDenialKind` of a call the auto-mode classifier blocked.
pub const AUTOMODE_BLOCKED: &str = "automode-blocked";
/// Denied because headless mode had no permission for it.
pub const NOT_GRANTED: &str = "Claude requested permissions to ";

/// The facts of one result that decide the outcome.
pub struct ResultFacts<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The result text (joined if it had several blocks).
    pub text: &'a str,
    /// `is_error` on the result.
    pub is_error: Option<bool>,
    /// `toolDenialKind` on the record, raw.
    pub denial_kind: Option<&'a str>,
    /// `toolUseResult.interrupted` (Bash).
    pub interrupted: bool,
}

/// The outcome, and the name of the rule that decided it.
pub fn classify(facts: &ResultFacts<'_>) -> (Outcome, &'static str) {
    let text = facts.text.trim_start();
    // A tool's own refusal of the call is wrapped: `<tool_use_error>…</tool_use_error>`.
    let wrapped = text.starts_with(TOOL_USE_ERROR);
    let text = text.strip_prefix(TOOL_USE_ERROR).unwrap_or(text);
    let text = text.strip_prefix("Error: ").unwrap_or(text);
    if facts.interrupted {
        return (Outcome::Interrupted, "bash-interrupted-flag");
    }
    match facts.denial_kind {
        Some("user-rejected") | Some("user_rejected") => {
            return (Outcome::Refused, "denial-kind-user");
        }
        // The auto-mode classifier's denial (2.1.x writes the kind with its text): the same
        // rule as the text alone, so whoever reads `classifier` finds both.
        Some(AUTOMODE_BLOCKED) => return (Outcome::Denied, "classifier"),
        // 2.1.x marks a PreToolUse hook's deny `permission-rule` too: the text tells the hook.
        Some(kind) if !kind.is_empty() => {
            return (
                Outcome::Denied,
                if is_hook_denial(text) {
                    "hook"
                } else if text.starts_with(CLASSIFIER_DENIED) {
                    "classifier"
                } else {
                    "denial-kind-rule"
                },
            );
        }
        _ => {}
    }
    if text.starts_with(INTERRUPT_MARKER) {
        return (Outcome::Interrupted, "interrupt-marker");
    }
    // The canned refusal is also written when a running tool is interrupted; without the Bash
    // flag the two cannot be told apart, and it is read as a refusal (the conservative reading
    // for learning: a refusal is never learned as approval).
    if text.starts_with(REFUSED) {
        if facts.tool == "AskUserQuestion" && text.contains(CLARIFY) {
            return (Outcome::Answered, "ask-user-clarify");
        }
        return (
            Outcome::Refused,
            if text.contains("the user said:") {
                "refusal-with-feedback"
            } else {
                "refusal-text"
            },
        );
    }
    if text.starts_with(CANCELLED) {
        return (Outcome::Cancelled, "sibling-cancelled");
    }
    if text.starts_with(SIBLING_ERRORED) {
        return (Outcome::Cancelled, "sibling-errored");
    }
    if text.starts_with(SUBAGENT_REFUSED) {
        return (Outcome::Refused, "subagent-refusal");
    }
    if text.starts_with(PLAN_REJECTED) {
        return (Outcome::Refused, "plan-rejected");
    }
    if text.starts_with(CLASSIFIER_DENIED) {
        return (Outcome::Denied, "classifier");
    }
    if is_hook_denial(text) {
        return (Outcome::Denied, "hook");
    }
    if text.starts_with(NOT_GRANTED) {
        return (Outcome::Denied, "not-granted");
    }
    if facts.is_error == Some(true) {
        // The tool's own check of the input failed (`File has not been read yet`, `String to
        // replace not found`, …): kept apart by its rule, as that check may come before the
        // permission was asked.
        return (
            Outcome::Errored,
            if wrapped {
                "tool-use-error"
            } else {
                "is-error"
            },
        );
    }
    (Outcome::Ran, "result")
}

/// Whether a result text is a PreToolUse hook's block (`PreToolUse:<Tool> hook error: …`, the
/// older `Hook PreToolUse:<Tool> denied this tool`, or a hook blocking error).
fn is_hook_denial(text: &str) -> bool {
    text.starts_with("PreToolUse:")
        || text.starts_with("Hook PreToolUse:")
        || text.contains("hook blocking error")
}
