//! Standing approvals: the rules with which a person told an agent, once and for good, to run
//! something without asking — Claude Code's `permissions.allow`, Codex's `prefix_rule`s, the
//! Copilot CLI's persisted approvals — as rows of the events table that the replay reads as
//! `granted` evidence.
//!
//! Owns: the shape of a standing-approval row (docs/formats.md, "Standing approvals"): outcome
//! `granted`, `decided_by` `user-permanent`, the rule in Claude Code's rule language under
//! [`RULE_KEY`] in `tool_input` (the one rule language the engine matches), the rule as written in
//! `result_excerpt`, the time the file says (its modification time) in `ts`, and the project the
//! file belongs to, or [`EVERY_PROJECT`] for a user's own settings. Must not: judge a rule —
//! whether it is too broad to stand for a signature is the replay's call, made with the engine's
//! rule parser.

use std::collections::HashSet;
use std::path::Path;
use std::time::UNIX_EPOCH;

use crate::common::{project_key, stable_id};
use crate::schema::{Event, Outcome, decided_by};

/// The `project_key` (and root) of a user-level standing approval: it applies to every project
/// of its agent, and the replay gives it to each.
pub const EVERY_PROJECT: &str = "(every project)";

/// The key of `tool_input` holding the rule, in Claude Code's rule language (`Bash(npm test:*)`).
pub const RULE_KEY: &str = "rule";

/// The `source_kind`s of the standing-approval readers: files of rules, not histories of calls.
pub mod kind {
    /// A project's Claude Code settings (`claude_settings::SOURCE`).
    pub const CLAUDE_SETTINGS: &str = "claude-settings";
    /// The user's Claude Code settings (`claude_settings::USER_SOURCE`).
    pub const CLAUDE_USER_SETTINGS: &str = "claude-user-settings";
    /// Codex's `.rules` files (`codex_rules::SOURCE`).
    pub const CODEX_RULES: &str = "codex-rules";
    /// The Copilot CLI's `permissions-config.json` (`copilot_permissions::SOURCE`).
    pub const COPILOT_PERMISSIONS: &str = "copilot-permissions";

    /// Every one.
    pub const ALL: [&str; 4] = [
        CLAUDE_SETTINGS,
        CLAUDE_USER_SETTINGS,
        CODEX_RULES,
        COPILOT_PERMISSIONS,
    ];
}

/// A source of this kind holds standing approvals, not calls.
pub fn is_standing(source_kind: &str) -> bool {
    kind::ALL.contains(&source_kind)
}

/// The `outcome_rule` of every standing-approval row.
pub const OUTCOME_RULE: &str = "standing-approval";

/// Why part of a standing-approval file could not be used (counted, never fatal).
pub mod unusable {
    /// The file is not valid JSON (or not the format's shape at its top).
    pub const UNPARSABLE_FILE: &str = "standing-file-unparsable";
    /// An entry of an allow list that is not a rule (not a string, an empty string, a record
    /// without the fields its kind requires).
    pub const NOT_A_RULE: &str = "standing-entry-not-a-rule";
    /// A Codex statement that could not be parsed; the next one is read.
    pub const UNPARSABLE_RULE: &str = "standing-rule-unparsable";
    /// A Codex pattern with more alternatives than are expanded ([`super::MAX_ALTERNATIVES`]).
    pub const TOO_MANY_ALTERNATIVES: &str = "standing-rule-too-many-alternatives";
    /// A Copilot approval of something that is not a tool call (memory, sampling, extensions).
    pub const NOT_A_TOOL: &str = "standing-approval-not-a-tool";
    /// The file's modification time could not be read: its rules are kept without a time, and
    /// the replay does not count them (when they came into force is unknown).
    pub const NO_TIME: &str = "standing-file-without-time";
}

/// The largest standing-approval file read (16 MiB): far above any real one.
pub const MAX_SETTINGS_BYTES: u64 = 16 << 20;

/// The most rules one Codex pattern's alternatives expand to.
pub const MAX_ALTERNATIVES: usize = 64;

/// One standing approval of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The rule in Claude Code's rule language.
    pub rule: String,
    /// The rule as the file writes it.
    pub written: String,
    /// Where in the file: `#permissions.allow[3]`, `:12`.
    pub at: String,
}

/// Whose approvals a file holds and where they apply.
pub struct Scope<'a> {
    /// The agent (`schema::agent`).
    pub agent: &'static str,
    /// The source's kind.
    pub kind: &'static str,
    /// The file.
    pub file: &'a Path,
    /// The project root they apply to; `None`: every project of the agent.
    pub project: Option<&'a str>,
}

/// The file's modification time in microseconds since the epoch (links followed).
pub fn modified_us(path: &Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(UNIX_EPOCH).ok()?;
    i64::try_from(since.as_micros()).ok()
}

/// The rows of a file's rules, in force from `ts_us`; a rule written twice is one row.
pub fn rows(scope: &Scope<'_>, rules: Vec<Rule>, ts_us: Option<i64>) -> Vec<Event> {
    let file = scope.file.display().to_string();
    let root = scope.project.unwrap_or(EVERY_PROJECT).to_string();
    let key = scope
        .project
        .map_or_else(|| EVERY_PROJECT.to_string(), project_key);
    let mut seen = HashSet::new();
    let mut events = Vec::new();
    for rule in rules {
        if !seen.insert(rule.rule.clone()) {
            continue;
        }
        let tool = rule
            .rule
            .split_once('(')
            .map_or(rule.rule.as_str(), |(tool, _)| tool)
            .to_string();
        let input = serde_json::json!({ RULE_KEY: rule.rule });
        events.push(Event {
            event_id: stable_id(&["standing", scope.agent, &file, &key, &rule.rule]),
            agent: scope.agent.to_string(),
            agent_version: None,
            source: format!("{file}{}", rule.at),
            source_kind: scope.kind.to_string(),
            project_key: key.clone(),
            project_root: root.clone(),
            session_id: format!("standing:{file}"),
            seq: u32::try_from(events.len()).unwrap_or(u32::MAX),
            ts_us,
            cwd: scope.project.map(str::to_string),
            git_branch: None,
            permission_mode: None,
            attended: None,
            tool_name: tool,
            tool_input: input.to_string(),
            command: None,
            file_path: None,
            outcome: Outcome::Granted,
            is_error: None,
            is_sidechain: false,
            tool_use_id: None,
            outcome_rule: OUTCOME_RULE.to_string(),
            denial_kind: None,
            result_excerpt: Some(rule.written),
            decided_by: Some(decided_by::USER_PERMANENT.to_string()),
        });
    }
    events
}

/// The time of a file's rows, counting a file whose time cannot be read.
pub fn time_of(path: &Path, bad: &mut crate::common::BadCounts) -> Option<i64> {
    let at = modified_us(path);
    if at.is_none() {
        bad.add(unusable::NO_TIME);
    }
    at
}

/// A command prefix as Claude Code's Bash prefix rule: the words joined by spaces, a word
/// holding a space or a shell character single-quoted.
pub fn bash_prefix_rule(words: &[String]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars().all(|c| {
                    c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c) || !c.is_ascii()
                });
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    format!("Bash({}:*)", quoted.join(" "))
}
