//! The hook's decision ledger: `<state>/ledger.jsonl` and its rotations `.1` … `.3`, written by
//! `leastgrant-hook` (docs/formats.md, "Decision ledger").
//!
//! One ledger is one source: its files, oldest rotation first, read as one sequence of lines.
//! Each `decision` line (a gate the hook answered) is one call. The `ran` line its after-event
//! wrote is paired by agent, session and call id, latest open decision first, across the
//! ledger's files (rotation can put a decision and its `ran` line in different files): a `ran`
//! line means the call ran (`ok`) or failed; a decision with none was denied (the agent was told
//! `deny`), refused (the agent was told to ask and the call never ran), or is unmatched.
//!
//! A Claude Code `PermissionRequest` (the dialog of a call the hook already answered at
//! `PreToolUse`) carries no `tool_use_id`, so it is matched to that decision by session, tool and
//! input and folded into it, not read as a second call. A Claude Code call keeps the event id
//! the transcript reader gives it, so a call in both histories is stored once.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{
    BadCounts, claude_event_id, command_and_path, each_json_line, project_key, stable_id,
};
use crate::schema::{Event, Outcome, UNKNOWN_PROJECT, agent};
use crate::source::{Flag, MAX_TEXT_FILE_BYTES, Machine, Source};

/// The hook's decision ledger.
pub const SOURCE: Source = Source {
    kind: "ledger",
    flag: Flag {
        long: "ledger",
        value_name: "DIR",
        help: "A leastgrant state directory whose hook ledger to read (`ledger.jsonl` and its \
               rotations; repeatable) [default: this machine's, `$LEASTGRANT_HOME` or \
               `~/.leastgrant`]",
    },
    default_places: |machine: &Machine<'_>| vec![machine.state_dir.to_path_buf()],
    discover,
    files,
    max_file_bytes: MAX_TEXT_FILE_BYTES,
    read: |_, contents, bad| read_ledger_files(contents.files(), bad),
};

/// The ledger's file name in the state directory.
pub const FILE: &str = "ledger.jsonl";

/// Rotated files the hook keeps (`ledger.jsonl.1` … `.3`).
pub const ROTATIONS: u32 = 3;

/// The `denial_kind` of a call the hook denied.
pub const DENIAL_KIND: &str = "leastgrant-hook";

/// The only ledger version this reader knows.
const VERSION: u64 = 1;

/// A paired `ran` line with `ok: true`.
pub const RULE_RAN: &str = "ledger-ran";
/// A paired `ran` line with `ok: false` (Claude `PostToolUseFailure`, Cursor
/// `postToolUseFailure`).
pub const RULE_RAN_FAILED: &str = "ledger-ran-failed";
/// No `ran` line, and the agent was told `deny`.
pub const RULE_DENIED: &str = "ledger-denied";
/// No `ran` line, and the agent was told to ask the person.
pub const RULE_ASKED_NOT_RUN: &str = "ledger-asked-not-run";
/// No `ran` line otherwise.
pub const RULE_NO_POST: &str = "ledger-no-post";

/// The ledger in a state directory (`<state_dir>/ledger.jsonl`) when any of its files exists;
/// a place that is not a directory is itself a ledger file.
pub fn discover(place: &Path) -> Vec<PathBuf> {
    let ledger = if place.is_dir() {
        place.join(FILE)
    } else {
        ledger_of(place)
    };
    if files(&ledger).is_empty() {
        return Vec::new();
    }
    vec![ledger]
}

/// The ledger a file belongs to: a rotation (`<ledger>.1` … `.3`) names its ledger.
fn ledger_of(file: &Path) -> PathBuf {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
    let base = name.as_deref().and_then(|name| {
        let (base, n) = name.rsplit_once('.')?;
        let n: u32 = n.parse().ok()?;
        ((1..=ROTATIONS).contains(&n) && !base.is_empty()).then(|| file.with_file_name(base))
    });
    base.unwrap_or_else(|| file.to_path_buf())
}

/// A ledger's files that exist, oldest first: `ledger.jsonl.3` … `.1`, then `ledger.jsonl`.
/// Anything there but a directory counts (one that is not a regular file is named as skipped).
pub fn files(ledger: &Path) -> Vec<PathBuf> {
    (1..=ROTATIONS)
        .rev()
        .map(|n| {
            let mut name = ledger.as_os_str().to_owned();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        })
        .chain(std::iter::once(ledger.to_path_buf()))
        .filter(|path| std::fs::symlink_metadata(path).is_ok() && !path.is_dir())
        .collect()
}

/// A call as the hook recorded it, until its `ran` line (if any) is read.
struct Decision {
    event: Event,
    /// What the agent was told: `allow`, `ask`, `deny`, `abstain`.
    answered: String,
    /// The `ok` of its `ran` line.
    ran: Option<bool>,
    /// A `PermissionRequest` dialog was folded into it.
    dialog: bool,
}

/// Agent, session and call id: what a `ran` line names.
type CallKey = (String, String, String);

/// Session, tool and input text: what a Claude `PermissionRequest` shares with its `PreToolUse`.
type ContentKey = (String, String, String);

#[derive(Default)]
struct Reader {
    source_path: String,
    decisions: Vec<Decision>,
    /// Decisions a `ran` line may still close, latest last.
    open: HashMap<CallKey, Vec<usize>>,
    /// Claude `PreToolUse` decisions by content, latest last.
    gated: HashMap<ContentKey, Vec<usize>>,
    /// Calls with an agent id already read (a hook registered twice writes two decisions).
    seen_calls: HashSet<CallKey>,
    event_ids: HashSet<String>,
}

/// Reads one ledger file's bytes into events, one per call, in line order.
pub fn read_ledger(path: &Path, bytes: &[u8], bad: &mut BadCounts) -> Vec<Event> {
    read_ledger_files(std::iter::once((path, bytes)), bad)
}

/// Reads the files of one ledger, oldest first, into events, one per call, in line order: a
/// `ran` line pairs with its decision in an older file. Each event's `source` is its own file
/// and line.
pub fn read_ledger_files<'a>(
    files: impl IntoIterator<Item = (&'a Path, &'a [u8])>,
    bad: &mut BadCounts,
) -> Vec<Event> {
    let mut reader = Reader::default();
    for (path, bytes) in files {
        reader.source_path = path.display().to_string();
        each_json_line(bytes, bad, |line, text, bad| {
            let Ok(value) = serde_json::from_str::<Value>(text) else {
                return false;
            };
            reader.line(&value, line, bad);
            true
        });
    }
    reader
        .decisions
        .into_iter()
        .map(|decision| {
            let mut event = decision.event;
            let (outcome, rule) = match (decision.ran, decision.answered.as_str()) {
                (Some(true), _) => (Outcome::Ran, RULE_RAN),
                (Some(false), _) => (Outcome::Errored, RULE_RAN_FAILED),
                (None, "deny") => (Outcome::Denied, RULE_DENIED),
                (None, "ask") => (Outcome::Refused, RULE_ASKED_NOT_RUN),
                (None, _) => (Outcome::Unmatched, RULE_NO_POST),
            };
            event.outcome = outcome;
            event.outcome_rule = rule.to_string();
            event.is_error = decision.ran.map(|ok| !ok);
            event.denial_kind = (outcome == Outcome::Denied).then(|| DENIAL_KIND.to_string());
            event
        })
        .collect()
}

/// A string field, when present.
fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// A string field, when present and not empty.
fn filled<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    text(value, key).filter(|s| !s.is_empty())
}

impl Reader {
    fn line(&mut self, value: &Value, line: u32, bad: &mut BadCounts) {
        if value.get("v").and_then(Value::as_u64) != Some(VERSION) {
            bad.add("ledger-unknown-version");
            return;
        }
        match text(value, "kind") {
            Some("decision") => self.decision(value, line, bad),
            Some("ran") => self.ran(value, bad),
            // The hook could not read what the agent sent: there is no call to record.
            Some("unreadable") => {}
            Some(_) => bad.add("ledger-unknown-kind"),
            None => bad.add("ledger-missing-field"),
        }
    }

    fn decision(&mut self, value: &Value, line: u32, bad: &mut BadCounts) {
        let (Some(agent), Some(session), Some(call_id), Some(answered)) = (
            filled(value, "agent"),
            text(value, "session_id"),
            filled(value, "call_id"),
            filled(value, "answered"),
        ) else {
            bad.add("ledger-missing-field");
            return;
        };
        // A gate whose payload described no usable call: the hook answered, but there is no call.
        let Some(tool_name) = filled(value, "tool_name") else {
            bad.add("ledger-decision-without-call");
            return;
        };
        let ts_us = value.get("ts_us").and_then(Value::as_i64);
        if ts_us.is_none() {
            bad.add("ledger-without-timestamp");
        }
        let null = Value::Null;
        let input = value.get("tool_input").unwrap_or(&null);
        let tool_input = input.to_string();
        let key: CallKey = (agent.to_string(), session.to_string(), call_id.to_string());
        let content: ContentKey = (
            session.to_string(),
            tool_name.to_string(),
            tool_input.clone(),
        );
        let claude = agent == agent::CLAUDE_CODE;
        let event_name = text(value, "event").unwrap_or("");

        // Claude's permission dialog for a call already gated: the same call, its answer counts.
        // The dialog comes before the call runs, so only a call that has not run can be its own;
        // one without a dialog yet is preferred (a hook registered twice writes two dialogs).
        if claude && event_name == "PermissionRequest" {
            let waiting = |i: &&usize| self.decisions.get(**i).filter(|d| d.ran.is_none());
            let target = self.gated.get(&content).and_then(|list| {
                list.iter()
                    .rev()
                    .find(|i| waiting(i).is_some_and(|d| !d.dialog))
                    .or_else(|| list.iter().rev().find(|i| waiting(i).is_some()))
                    .copied()
            });
            if let Some(decision) = target.and_then(|i| self.decisions.get_mut(i)) {
                decision.dialog = true;
                // `abstain` shows the dialog to the person: what the gate answered stands.
                if answered != "abstain" {
                    decision.answered = answered.to_string();
                }
                return;
            }
        }

        // The hook derives `h:` ids from the content, so identical calls in a session share one:
        // the time tells them apart. An agent's own id names one call.
        let derived = call_id.starts_with("h:");
        if !derived && !self.seen_calls.insert(key.clone()) {
            bad.add("ledger-duplicate-decision");
            return;
        }
        let ts_text = ts_us.map(|t| t.to_string()).unwrap_or_default();
        let event_id = match (claude, derived) {
            (true, false) => claude_event_id(call_id),
            (_, true) => stable_id(&["ledger", agent, session, call_id, &ts_text]),
            (false, false) => stable_id(&["ledger", agent, session, call_id]),
        };
        if !self.event_ids.insert(event_id.clone()) {
            bad.add("ledger-duplicate-decision");
            return;
        }
        let cwd = filled(value, "cwd").map(str::to_string);
        let project_root = filled(value, "project")
            .map(str::to_string)
            .or_else(|| cwd.clone())
            .unwrap_or_else(|| UNKNOWN_PROJECT.to_string());
        let (command, file_path) = command_and_path(input);
        let event = Event {
            event_id,
            agent: agent.to_string(),
            agent_version: None,
            source: format!("{}:{line}", self.source_path),
            source_kind: SOURCE.kind.to_string(),
            project_key: project_key(&project_root),
            project_root,
            session_id: session.to_string(),
            seq: line,
            ts_us,
            cwd,
            git_branch: None,
            permission_mode: filled(value, "permission_mode").map(str::to_string),
            attended: value.get("attended").and_then(Value::as_bool),
            tool_name: tool_name.to_string(),
            tool_input,
            command,
            file_path,
            outcome: Outcome::Unmatched,
            is_error: None,
            is_sidechain: false,
            tool_use_id: (!derived).then(|| call_id.to_string()),
            outcome_rule: String::new(),
            denial_kind: None,
            result_excerpt: None,
            decided_by: None,
        };
        let index = self.decisions.len();
        self.decisions.push(Decision {
            event,
            answered: answered.to_string(),
            ran: None,
            dialog: false,
        });
        // A call the agent was told not to run has no after-event to wait for.
        if answered != "deny" {
            self.open.entry(key).or_default().push(index);
        }
        if claude && event_name != "PermissionRequest" {
            self.gated.entry(content).or_default().push(index);
        }
    }

    fn ran(&mut self, value: &Value, bad: &mut BadCounts) {
        let (Some(agent), Some(session), Some(call_id), Some(ok)) = (
            filled(value, "agent"),
            text(value, "session_id"),
            filled(value, "call_id"),
            value.get("ok").and_then(Value::as_bool),
        ) else {
            bad.add("ledger-missing-field");
            return;
        };
        let key: CallKey = (agent.to_string(), session.to_string(), call_id.to_string());
        let Some(index) = self.open.get_mut(&key).and_then(Vec::pop) else {
            // Its decision is in a rotation no longer kept, or was never written.
            bad.add("ledger-ran-without-decision");
            return;
        };
        if let Some(decision) = self.decisions.get_mut(index) {
            decision.ran = Some(ok);
        }
    }
}
