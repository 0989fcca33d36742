//! GitHub Copilot CLI sessions: `~/.copilot/session-state/<id>/events.jsonl` with the session's
//! `workspace.yaml`, the JSON-lines stream `copilot -p … --output-format json` prints (the same
//! events, plus deltas and a closing `result` line), and the older whole-file session (`{sessionId,
//! startTime, chatMessages, timeline}`).
//!
//! A call is keyed by its `toolCallId`: announced in an `assistant.message`'s `toolRequests`,
//! started by `tool.execution_start`, ended by `tool.execution_complete` (`success`). A
//! `permission.requested` names the call it asks for (`permissionRequest.toolCallId`) and its
//! `requestId`; the `permission.completed` of that request says how it was decided. These are
//! observed labels: a denial is the call's outcome (a person's → `refused`, anything else's →
//! `denied`, with the raw result kind as `denial_kind`), and every decision fills `decided_by`.
//! A call still running at an `abort` was interrupted. The project is the session's `cwd`
//! (`workspace.yaml`, else `session.start`'s context, else the first shell's working directory).
//!
//! Must not: decide anything (raw facts only) or read another session's files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{BadCounts, excerpt, files_below, json_lines, stable_id, timestamp_or_count};
use crate::project;
use crate::schema::{Event, Outcome, agent, decided_by};
use crate::source::{Contents, Flag, MAX_TEXT_FILE_BYTES, Machine, Source};

/// The stored agent name.
const AGENT: &str = agent::COPILOT;

/// The file beside a session's `events.jsonl` that names its workspace.
const WORKSPACE: &str = "workspace.yaml";

/// Copilot CLI sessions.
pub const SOURCE: Source = Source {
    kind: "copilot-jsonl",
    flag: Flag {
        long: "copilot",
        value_name: "PATH",
        help: "A Copilot CLI `session-state` directory, a session's `events.jsonl`, an \
               `--output-format json` capture or an older session `.json` file (repeatable) \
               [default: `~/.copilot/session-state`]",
    },
    default_places,
    discover,
    files,
    max_file_bytes: MAX_TEXT_FILE_BYTES,
    read: read_contents,
};

fn default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    default_roots(machine.home)
}

/// `~/.copilot/session-state` when it exists (the research documents no variable moving it).
pub fn default_roots(home: &Path) -> Vec<PathBuf> {
    let root = home.join(".copilot/session-state");
    if root.is_dir() {
        vec![root]
    } else {
        Vec::new()
    }
}

/// Every session below `root`: each `events.jsonl`, and the `.json`/`.jsonl` files directly in
/// `root` (older whole-file sessions and saved `--output-format json` captures); sorted.
pub fn discover(root: &Path) -> Vec<PathBuf> {
    let mut found = files_below(root, |_| true, |file| file == "events.jsonl");
    if let Ok(entries) = std::fs::read_dir(root) {
        found.extend(
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.ends_with(".json") || n.ends_with(".jsonl"))
                        && is_file(p)
                }),
        );
    }
    found.sort();
    found.dedup();
    found
}

fn is_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_dir())
}

/// A session's files: the events, and its `workspace.yaml` when there is one (a change to
/// either reads the session again).
fn files(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    if path.file_name().is_some_and(|n| n == "events.jsonl")
        && let Some(workspace) = path.parent().map(|d| d.join(WORKSPACE))
        && std::fs::symlink_metadata(&workspace).is_ok()
    {
        files.push(workspace);
    }
    files
}

fn read_contents(path: &Path, contents: &Contents, bad: &mut BadCounts) -> Vec<Event> {
    let mut events_bytes: &[u8] = &[];
    let mut workspace_cwd = None;
    for (file, bytes) in contents.files() {
        if file.file_name().is_some_and(|n| n == WORKSPACE) {
            workspace_cwd = workspace_value(&String::from_utf8_lossy(bytes), "cwd");
        } else {
            events_bytes = bytes;
        }
    }
    read_copilot(path, events_bytes, workspace_cwd, bad)
}

/// A top-level `key: value` of a `workspace.yaml` (plain, or in single or double quotes); `None`
/// when the key is absent or its value is not a one-line scalar. The file is flat `key: value`
/// lines, so no YAML parser is needed for the one value read.
pub fn workspace_value(text: &str, key: &str) -> Option<String> {
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))?;
    let value = line.trim();
    let value = match value.as_bytes().first()? {
        b'"' => serde_json::from_str::<String>(value).ok()?,
        b'\'' => value
            .strip_prefix('\'')?
            .strip_suffix('\'')?
            .replace("''", "'"),
        b'|' | b'>' | b'{' | b'[' | b'&' | b'*' | b'!' => return None,
        _ => value
            .split(" #")
            .next()
            .unwrap_or(value)
            .trim_end()
            .to_string(),
    };
    (!value.is_empty()).then_some(value)
}

/// What the session has said so far.
#[derive(Default)]
struct Session {
    id: Option<String>,
    version: Option<String>,
    cwd: Option<String>,
    shell_cwd: Option<String>,
    branch: Option<String>,
    mode: Option<String>,
}

impl Session {
    /// `interactive` and `plan` put a person in front of prompts; `autopilot` does not.
    fn attended(&self) -> Option<bool> {
        match self.mode.as_deref()? {
            "interactive" | "plan" => Some(true),
            "autopilot" => Some(false),
            _ => None,
        }
    }
}

/// A call as its records describe it.
struct Call {
    event: Event,
    /// `Some(success)` once `tool.execution_complete` arrived.
    completed: Option<bool>,
    started: bool,
    interrupted: Option<String>,
    /// The completed permission's result kind, and whether a hook or a managed policy resolved
    /// the request.
    permission: Option<Permission>,
}

struct Permission {
    kind: String,
    by_hook: bool,
    by_policy: bool,
}

/// Reads one Copilot session file (any of its three shapes); `workspace_cwd` is the session's
/// `workspace.yaml` `cwd`, when it has one.
pub fn read_copilot(
    path: &Path,
    bytes: &[u8],
    workspace_cwd: Option<String>,
    bad: &mut BadCounts,
) -> Vec<Event> {
    if let Some(whole) = legacy_session(bytes) {
        return read_legacy(path, &whole, bad);
    }
    let (records, _) = json_lines(bytes, bad);
    let source_path = path.display().to_string();
    let mut session = Session::default();
    let mut calls: HashMap<String, Call> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    // requestId → (toolCallId, resolved by a hook).
    let mut requests: HashMap<String, (Option<String>, bool)> = HashMap::new();
    for record in &records {
        let value = &record.value;
        let data = value.get("data").unwrap_or(&Value::Null);
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        let sub_agent = value.get("agentId").is_some_and(|a| !a.is_null())
            || data.get("parentToolCallId").is_some_and(|p| !p.is_null());
        match kind {
            "session.start" | "session.resume" => {
                if let Some(id) = text(data, "sessionId") {
                    session.id.get_or_insert(id);
                }
                session.version = text(data, "copilotVersion").or(session.version.take());
                let context = data.get("context").unwrap_or(&Value::Null);
                if let Some(cwd) = text(context, "cwd") {
                    session.cwd.get_or_insert(cwd);
                }
                session.branch = text(context, "branch").or(session.branch.take());
            }
            "session.mode_changed" => session.mode = text(data, "newMode").or(session.mode.take()),
            "result" => {
                if let Some(id) = text(value, "sessionId") {
                    session.id.get_or_insert(id);
                }
            }
            "assistant.message" => {
                for request in data
                    .get("toolRequests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(id) = text(request, "toolCallId") else {
                        bad.add("copilot-tool-request-without-id");
                        continue;
                    };
                    if calls.contains_key(&id) {
                        continue;
                    }
                    let name = text(request, "name").unwrap_or_default();
                    let input = request.get("arguments").cloned().unwrap_or(Value::Null);
                    let event = call_event(
                        &id,
                        name,
                        &input,
                        &session,
                        sub_agent,
                        &source_path,
                        record,
                        bad,
                    );
                    order.push(id.clone());
                    calls.insert(id, Call::new(event));
                }
            }
            "tool.execution_start" => {
                let Some(id) = text(data, "toolCallId") else {
                    bad.add("copilot-tool-start-without-id");
                    continue;
                };
                let name = text(data, "toolName").unwrap_or_default();
                let input = data.get("arguments").cloned().unwrap_or(Value::Null);
                match calls.get_mut(&id) {
                    Some(call) => {
                        call.started = true;
                        if call.event.tool_name.is_empty() {
                            call.event.tool_name = name;
                        }
                    }
                    None => {
                        let event = call_event(
                            &id,
                            name,
                            &input,
                            &session,
                            sub_agent,
                            &source_path,
                            record,
                            bad,
                        );
                        let mut call = Call::new(event);
                        call.started = true;
                        order.push(id.clone());
                        calls.insert(id, call);
                    }
                }
            }
            "tool.execution_complete" => {
                let Some(call) = text(data, "toolCallId").and_then(|id| calls.get_mut(&id)) else {
                    bad.add("copilot-result-without-call");
                    continue;
                };
                let success = data.get("success").and_then(Value::as_bool);
                call.completed = Some(success.unwrap_or(false));
                if success.is_none() {
                    bad.add("copilot-result-without-success");
                }
                let result = data.get("result").unwrap_or(&Value::Null);
                let output = text(result, "content").or_else(|| {
                    data.pointer("/error/message")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                });
                call.event.result_excerpt = output.map(|t| excerpt(&t, 2048));
                call.event.is_error = success.map(|s| !s);
                if session.shell_cwd.is_none() {
                    session.shell_cwd = result
                        .get("contents")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .find_map(|c| c.get("cwd").and_then(Value::as_str))
                        .map(str::to_string);
                }
            }
            "permission.requested" => {
                let Some(request) = text(data, "requestId") else {
                    bad.add("copilot-permission-without-request-id");
                    continue;
                };
                let call = data
                    .pointer("/permissionRequest/toolCallId")
                    .or_else(|| data.pointer("/promptRequest/toolCallId"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let by_hook = data.get("resolvedByHook").and_then(Value::as_bool) == Some(true);
                requests.insert(request, (call, by_hook));
            }
            "permission.completed" => {
                let requested = text(data, "requestId").and_then(|r| requests.remove(&r));
                let by_hook = requested.as_ref().is_some_and(|(_, hook)| *hook);
                let id = text(data, "toolCallId").or_else(|| requested.and_then(|(id, _)| id));
                let Some(call) = id.and_then(|id| calls.get_mut(&id)) else {
                    bad.add("copilot-permission-without-call");
                    continue;
                };
                let result = data.get("result").unwrap_or(&Value::Null);
                let Some(kind) = text(result, "kind") else {
                    bad.add("copilot-permission-without-result");
                    continue;
                };
                call.permission = Some(Permission {
                    kind,
                    by_hook,
                    by_policy: result
                        .get("managedApprovalHandled")
                        .and_then(Value::as_bool)
                        == Some(true),
                });
            }
            "abort" => {
                let reason = text(data, "reason");
                for call in calls.values_mut() {
                    if call.started && call.completed.is_none() && call.interrupted.is_none() {
                        call.interrupted = Some(reason.clone().unwrap_or_default());
                    }
                }
            }
            "" => bad.add("copilot-record-without-type"),
            other if KNOWN_FAMILIES.iter().any(|f| other.starts_with(f)) => {}
            _ => bad.add("copilot-unknown-event-type"),
        }
    }
    let mut done: Vec<Event> = Vec::with_capacity(order.len());
    for id in order {
        if let Some(call) = calls.remove(&id) {
            done.push(call.finish(bad));
        }
    }
    finish_session(path, &mut done, &session, workspace_cwd);
    done
}

/// Event type families the reader knows and passes over (the CLI writes 40-odd types; only
/// calls, permissions, the session's facts and aborts matter here). A type outside them is
/// counted, and the rest of the file still read.
const KNOWN_FAMILIES: [&str; 18] = [
    "session.",
    "system.",
    "user.",
    "assistant.",
    "tool.",
    "permission.",
    "hook.",
    "subagent.",
    "model.",
    "mcp.",
    "skill.",
    "user_input.",
    "elicitation.",
    "command.",
    "exit_plan_mode.",
    "pending_messages.",
    "external_tool.",
    "sampling.",
];

impl Call {
    fn new(event: Event) -> Call {
        Call {
            event,
            completed: None,
            started: false,
            interrupted: None,
            permission: None,
        }
    }

    /// The call's outcome: a denial recorded by its permission first, then how it ran.
    fn finish(mut self, bad: &mut BadCounts) -> Event {
        let ran = match (self.completed, &self.interrupted) {
            (Some(true), _) => (Outcome::Ran, "copilot-success"),
            (Some(false), _) => (Outcome::Errored, "copilot-failed"),
            (None, Some(_)) => (Outcome::Interrupted, "copilot-abort"),
            (None, None) => (Outcome::Unmatched, "no-result"),
        };
        let (outcome, rule) = match &self.permission {
            None => ran,
            Some(permission) => {
                let (decision, who) = permission_decision(&permission.kind);
                let who = if permission.by_hook {
                    Some(decided_by::HOOK)
                } else if permission.by_policy && decision.is_none() {
                    Some(decided_by::CONFIG)
                } else {
                    who
                };
                if who.is_none() && !matches!(permission.kind.as_str(), "cancelled") {
                    bad.add("copilot-unknown-permission-result");
                }
                self.event.decided_by = who.map(str::to_string);
                match decision {
                    Some((outcome, rule)) => {
                        self.event.denial_kind = Some(permission.kind.clone());
                        (outcome, rule)
                    }
                    None => ran,
                }
            }
        };
        if outcome == Outcome::Interrupted {
            self.event.denial_kind = self.interrupted.filter(|r| !r.is_empty());
        }
        self.event.outcome = outcome;
        self.event.outcome_rule = rule.to_string();
        self.event
    }
}

/// A permission result kind: the outcome it imposes (none for an approval: the call's run
/// decides) and who decided.
fn permission_decision(kind: &str) -> (Option<(Outcome, &'static str)>, Option<&'static str>) {
    match kind {
        "approved" => (None, Some(decided_by::USER)),
        "approved-for-session" => (None, Some(decided_by::USER_SESSION)),
        "approved-for-location" => (None, Some(decided_by::USER_PERMANENT)),
        "denied-interactively-by-user" => (
            Some((Outcome::Refused, "copilot-denied-by-user")),
            Some(decided_by::USER),
        ),
        "denied-by-rules" => (
            Some((Outcome::Denied, "copilot-denied-by-rules")),
            Some(decided_by::CONFIG),
        ),
        "denied-no-approval-rule-and-could-not-request-from-user" => (
            Some((Outcome::Denied, "copilot-denied-no-prompt")),
            Some(decided_by::CONFIG),
        ),
        "denied-by-content-exclusion-policy" => (
            Some((Outcome::Denied, "copilot-denied-by-content-policy")),
            Some(decided_by::CONFIG),
        ),
        "denied-by-permission-request-hook" => (
            Some((Outcome::Denied, "copilot-denied-by-hook")),
            Some(decided_by::HOOK),
        ),
        "cancelled" => (
            Some((Outcome::Cancelled, "copilot-permission-cancelled")),
            None,
        ),
        _ => (None, None),
    }
}

/// The shell tools, whose `command` argument is a shell command.
const SHELL_TOOLS: [&str; 3] = ["bash", "powershell", "shell"];

#[allow(clippy::too_many_arguments)]
fn call_event(
    id: &str,
    tool_name: String,
    input: &Value,
    session: &Session,
    sub_agent: bool,
    source_path: &str,
    record: &crate::common::Record,
    bad: &mut BadCounts,
) -> Event {
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_string);
    // `str_replace_editor` also has a `command` argument (`view`, `create`): not a shell.
    let command = SHELL_TOOLS
        .contains(&tool_name.as_str())
        .then(|| text("command"))
        .flatten();
    let file_path = text("path")
        .or_else(|| text("file_path"))
        .or_else(|| text("filePath"));
    let ts_us = timestamp_or_count(
        record.value.get("timestamp").and_then(Value::as_str),
        "copilot-unparsable-timestamp",
        bad,
    );
    Event {
        event_id: String::new(),
        agent: AGENT.to_string(),
        agent_version: session.version.clone(),
        source: format!("{source_path}:{}", record.line),
        source_kind: SOURCE.kind.to_string(),
        project_key: String::new(),
        project_root: String::new(),
        session_id: String::new(),
        seq: record.line,
        ts_us,
        cwd: session.cwd.clone(),
        git_branch: session.branch.clone(),
        permission_mode: session.mode.clone(),
        attended: session.attended(),
        tool_name,
        tool_input: match input {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        command,
        file_path,
        outcome: Outcome::Unmatched,
        is_error: None,
        is_sidechain: sub_agent,
        tool_use_id: Some(id.to_string()),
        outcome_rule: String::new(),
        denial_kind: None,
        result_excerpt: None,
        decided_by: None,
    }
}

/// The session's project, id and event ids, once the whole file is read (the id and the
/// working directory may come after the first call).
fn finish_session(
    path: &Path,
    done: &mut [Event],
    session: &Session,
    workspace_cwd: Option<String>,
) {
    let root = workspace_cwd
        .or_else(|| session.cwd.clone())
        .or_else(|| session.shell_cwd.clone());
    project::record(done, root.as_deref(), path);
    let fallback = || {
        let stem = if path.file_name().is_some_and(|n| n == "events.jsonl") {
            path.parent().and_then(Path::file_name)
        } else {
            path.file_stem()
        };
        stem.map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let id = session.id.clone().unwrap_or_else(fallback);
    for event in done.iter_mut() {
        event.session_id.clone_from(&id);
        event.event_id = stable_id(&[AGENT, &id, event.tool_use_id.as_deref().unwrap_or("")]);
    }
}

/// The older whole-file session, when `bytes` is one: a single JSON object with a `timeline` or
/// `chatMessages` and no event `type`.
fn legacy_session(bytes: &[u8]) -> Option<Value> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'{' {
        return None;
    }
    let value: Value = serde_json::from_slice(bytes).ok()?;
    (value.get("type").is_none()
        && (value.get("timeline").is_some() || value.get("chatMessages").is_some()))
    .then_some(value)
}

/// An older whole-file session: each `tool_call_completed` of the `timeline` is a call (its
/// `result.type` says whether it succeeded); a `chatMessages` tool call the timeline never
/// completed has no result. These files record no working directory and no permission.
fn read_legacy(path: &Path, whole: &Value, bad: &mut BadCounts) -> Vec<Event> {
    let source_path = path.display().to_string();
    let session = Session::default();
    let mut done: Vec<Event> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let entries = whole.get("timeline").and_then(Value::as_array);
    for (index, entry) in entries.into_iter().flatten().enumerate() {
        if entry.get("type").and_then(Value::as_str) != Some("tool_call_completed") {
            continue;
        }
        let Some(id) = entry.get("callId").and_then(Value::as_str) else {
            bad.add("copilot-tool-call-without-id");
            continue;
        };
        if !seen.insert(id.to_string()) {
            bad.add("copilot-duplicate-call");
            continue;
        }
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let input = entry.get("arguments").cloned().unwrap_or(Value::Null);
        let record = crate::common::Record {
            line: u32::try_from(index + 1).unwrap_or(u32::MAX),
            value: entry.clone(),
        };
        let mut event = call_event(
            id,
            name,
            &input,
            &session,
            false,
            &source_path,
            &record,
            bad,
        );
        event.source = format!("{source_path}#timeline/{index}");
        let result = entry.get("result").unwrap_or(&Value::Null);
        let success = result.get("type").and_then(Value::as_str) == Some("success");
        (event.outcome, event.outcome_rule) = if success {
            (Outcome::Ran, "copilot-success".to_string())
        } else {
            (Outcome::Errored, "copilot-failed".to_string())
        };
        event.is_error = Some(!success);
        event.result_excerpt = result
            .get("log")
            .and_then(Value::as_str)
            .map(|t| excerpt(t, 2048));
        done.push(event);
    }
    let messages = whole.get("chatMessages").and_then(Value::as_array);
    let calls = messages
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten();
    let base = u32::try_from(done.len()).unwrap_or(u32::MAX);
    for (index, call) in calls.enumerate() {
        let Some(id) = call.get("id").and_then(Value::as_str) else {
            bad.add("copilot-tool-call-without-id");
            continue;
        };
        if !seen.insert(id.to_string()) {
            continue;
        }
        let function = call.get("function").unwrap_or(&Value::Null);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let input = match function.get("arguments") {
            Some(Value::String(s)) => {
                serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
            }
            Some(other) => other.clone(),
            None => Value::Null,
        };
        let record = crate::common::Record {
            line: base.saturating_add(u32::try_from(index + 1).unwrap_or(u32::MAX)),
            value: Value::Null,
        };
        let mut event = call_event(
            id,
            name,
            &input,
            &session,
            false,
            &source_path,
            &record,
            bad,
        );
        event.source = format!("{source_path}#chatMessages");
        event.outcome_rule = "no-result".to_string();
        done.push(event);
    }
    let id = whole
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let session = Session {
        id,
        ..Session::default()
    };
    finish_session(path, &mut done, &session, None);
    done
}

#[cfg(test)]
mod tests {
    use super::workspace_value;

    #[test]
    fn workspace_values_are_read_plain_or_quoted() {
        let text = "id: 1\ncwd: /home/dev/app # here\nsummary: |\n  cwd: /not/this\n";
        assert_eq!(
            workspace_value(text, "cwd").as_deref(),
            Some("/home/dev/app")
        );
        assert_eq!(
            workspace_value("cwd: \"/a b/\\\"c\"\n", "cwd").as_deref(),
            Some("/a b/\"c")
        );
        assert_eq!(
            workspace_value("cwd: '/it''s'\n", "cwd").as_deref(),
            Some("/it's")
        );
        assert_eq!(workspace_value("cwd: |\n  /x\n", "cwd"), None);
        assert_eq!(workspace_value("git_root: /x\n", "cwd"), None);
    }
}
