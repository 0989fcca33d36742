//! Codex CLI rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (and
//! `archived_sessions/`), one `{timestamp, type, payload}` record per line.
//!
//! A call is a `function_call`, `custom_tool_call` or `local_shell_call` response item, paired
//! with its output by `call_id`. Codex never writes approval requests, so a refusal is only the
//! output text ("… rejected by user"), and a call still open when a `turn_aborted` arrives was
//! interrupted. The mode in force is the latest `turn_context`'s approval policy and sandbox.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{BadCounts, excerpt, files_below, json_lines, stable_id, timestamp_or_count};
use crate::project;
use crate::schema::{Event, Outcome, agent};
use crate::source::{Flag, MAX_TEXT_FILE_BYTES, Machine, Source, just_the_file};

/// The stored agent name.
const AGENT: &str = agent::CODEX;

/// Codex CLI rollouts.
pub const SOURCE: Source = Source {
    kind: "codex-jsonl",
    flag: Flag {
        long: "codex",
        value_name: "DIR",
        help: "A Codex CLI sessions directory (repeatable) [default: `$CODEX_HOME` or `~/.codex`: \
               `sessions/` and `archived_sessions/`]",
    },
    default_places,
    discover,
    files: just_the_file,
    max_file_bytes: MAX_TEXT_FILE_BYTES,
    read: |path, contents, bad| read_codex(path, &contents.bytes, bad),
};

fn default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    let codex_home = (machine.env)("CODEX_HOME").map(PathBuf::from);
    default_roots(machine.home, codex_home.as_deref())
}

/// The rollout directories under the Codex home (`$CODEX_HOME`, else `~/.codex`) that exist.
pub fn default_roots(home: &Path, codex_home: Option<&Path>) -> Vec<PathBuf> {
    let base = codex_home.map_or_else(|| home.join(".codex"), Path::to_path_buf);
    ["sessions", "archived_sessions"]
        .iter()
        .map(|d| base.join(d))
        .filter(|d| d.is_dir())
        .collect()
}

/// Every `rollout-*.jsonl` below `root`, sorted.
pub fn discover(root: &Path) -> Vec<PathBuf> {
    files_below(
        root,
        |_| true,
        |file| file.starts_with("rollout-") && file.ends_with(".jsonl"),
    )
}

/// What the session has said so far about where and how it runs.
#[derive(Default)]
struct SessionState {
    id: Option<String>,
    version: Option<String>,
    cwd: Option<String>,
    first_cwd: Option<String>,
    branch: Option<String>,
    approval: Option<String>,
    sandbox: Option<String>,
    /// The id of the latest `session_meta`: a fork's copy of its parent's history follows the
    /// parent's own `session_meta`, so its calls are keyed as the parent keyed them.
    meta_id: Option<String>,
    /// A sub-agent's session (`source` names a `subagent`).
    sidechain: bool,
}

impl SessionState {
    /// `approval_policy` and sandbox together, e.g. `on-request/workspace-write`.
    fn mode(&self) -> Option<String> {
        match (&self.approval, &self.sandbox) {
            (Some(a), Some(s)) => Some(format!("{a}/{s}")),
            (Some(a), None) => Some(a.clone()),
            (None, Some(s)) => Some(format!("?/{s}")),
            (None, None) => None,
        }
    }

    /// `never` asks nobody; the other policies put a person in front of escalations.
    fn attended(&self) -> Option<bool> {
        match self.approval.as_deref()? {
            "never" => Some(false),
            "on-request" | "untrusted" | "on-failure" => Some(true),
            _ => None,
        }
    }
}

/// Reads one rollout's bytes into events.
pub fn read_codex(path: &Path, bytes: &[u8], bad: &mut BadCounts) -> Vec<Event> {
    let (records, _) = json_lines(bytes, bad);
    let source_path = path.display().to_string();
    let mut state = SessionState::default();
    let mut open: HashMap<String, Event> = HashMap::new();
    let mut done: Vec<Event> = Vec::new();
    // Calls that asked to run outside the sandbox, and the line of the last response item: an
    // escalation the session went on past without an output was not let run.
    let mut escalated: HashSet<String> = HashSet::new();
    let mut last_item_line = 0;
    for record in &records {
        let value = &record.value;
        let payload = value.get("payload").unwrap_or(&Value::Null);
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        match value.get("type").and_then(Value::as_str).unwrap_or("") {
            "session_meta" => {
                state.id = state.id.take().or_else(|| text(payload, "id"));
                state.meta_id = text(payload, "id").or(state.meta_id.take());
                // `source` is `cli`, `vscode`, `exec`…, or `{"subagent": …}` for a spawned one;
                // only the file's own (first) `session_meta` says what this session is.
                if state.id == state.meta_id {
                    state.sidechain |= is_subagent(payload.get("source"));
                }
                state.version = text(payload, "cli_version").or(state.version.take());
                if let Some(cwd) = text(payload, "cwd") {
                    state.first_cwd.get_or_insert_with(|| cwd.clone());
                    state.cwd = Some(cwd);
                }
                state.branch = payload
                    .pointer("/git/branch")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or(state.branch.take());
            }
            "turn_context" => {
                if let Some(cwd) = text(payload, "cwd") {
                    state.first_cwd.get_or_insert_with(|| cwd.clone());
                    state.cwd = Some(cwd);
                }
                let approval = text(payload, "approval_policy");
                let sandbox = payload
                    .pointer("/sandbox_policy/type")
                    .or_else(|| payload.pointer("/sandbox_policy/mode"))
                    .or_else(|| payload.get("sandbox_policy").filter(|s| s.is_string()))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                // Some versions write only cwd and model: keep what was known.
                state.approval = approval.or(state.approval.take());
                state.sandbox = sandbox.or(state.sandbox.take());
            }
            "response_item" => {
                last_item_line = record.line;
                let item = payload.get("type").and_then(Value::as_str).unwrap_or("");
                match item {
                    "function_call" | "custom_tool_call" | "local_shell_call" => {
                        let Some(call_id) =
                            text(payload, "call_id").or_else(|| text(payload, "id"))
                        else {
                            bad.add("codex-call-without-id");
                            continue;
                        };
                        let (event, escalates) =
                            call_event(payload, &call_id, &state, &source_path, record, bad);
                        if escalates {
                            escalated.insert(call_id.clone());
                        }
                        // A local shell call may carry its own end state.
                        if item == "local_shell_call"
                            && let Some(status) =
                                text(payload, "status").filter(|s| s != "in_progress")
                        {
                            let mut event = event;
                            (event.outcome, event.outcome_rule) = if status == "completed" {
                                (Outcome::Ran, "codex-shell-completed".to_string())
                            } else {
                                (Outcome::Errored, "codex-shell-failed".to_string())
                            };
                            done.push(event);
                        } else {
                            open.insert(call_id, event);
                        }
                    }
                    "function_call_output" | "custom_tool_call_output" => {
                        let Some(call_id) = text(payload, "call_id") else {
                            bad.add("codex-output-without-call");
                            continue;
                        };
                        let Some(mut event) = open.remove(&call_id) else {
                            bad.add("codex-output-without-call");
                            continue;
                        };
                        let output = output_text(payload.get("output").unwrap_or(&Value::Null));
                        let (outcome, rule, is_error) = outcome_of(&output);
                        event.outcome = outcome;
                        event.outcome_rule = rule.to_string();
                        event.is_error = is_error;
                        event.result_excerpt = Some(excerpt(&output.text, 2048));
                        done.push(event);
                    }
                    kind if known_item(kind) => {}
                    _ => bad.add("codex-unknown-item-type"),
                }
            }
            "event_msg" => {
                let aborted = payload.get("type").and_then(Value::as_str) == Some("turn_aborted");
                if aborted {
                    // Everything still running when the turn was stopped was interrupted.
                    let mut stopped: Vec<Event> = open.drain().map(|(_, e)| e).collect();
                    stopped.sort_by_key(|e| e.seq);
                    for mut event in stopped {
                        event.outcome = Outcome::Interrupted;
                        event.outcome_rule = "codex-turn-aborted".to_string();
                        event.denial_kind = text(payload, "reason");
                        done.push(event);
                    }
                }
            }
            // Newer rollouts' records with no call in them (landscape-2026.md §3.2).
            "compacted" | "inter_agent_communication" | "item_completed" => {}
            "" => bad.add("codex-record-without-type"),
            _ => bad.add("codex-unknown-record-type"),
        }
    }
    let mut unmatched: Vec<Event> = open.into_values().collect();
    unmatched.sort_by_key(|e| e.seq);
    for mut event in unmatched {
        let call = event.tool_use_id.as_deref().unwrap_or("");
        (event.outcome, event.outcome_rule) =
            if escalated.contains(call) && last_item_line > event.seq {
                // Codex writes neither the approval prompt nor a declined escalation: a call
                // that asked to leave the sandbox and never ran, though the session went on,
                // was not let run (read as refused, the conservative reading for learning).
                (Outcome::Refused, "codex-escalation-unanswered".to_string())
            } else {
                (Outcome::Unmatched, "no-result".to_string())
            };
        done.push(event);
    }
    project::record(&mut done, state.first_cwd.as_deref(), path);
    // The session id may come after the first call in some versions: fill it in at the end.
    let session = state.id.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    for event in &mut done {
        event.session_id.clone_from(&session);
        // `event_id` holds, until here, the id of the `session_meta` the call followed (empty
        // when none had come yet): a forked session's copy of its parent's calls follows the
        // parent's `session_meta`, and so gets the parent's ids and is stored once.
        let key = if event.event_id.is_empty() {
            session.as_str()
        } else {
            event.event_id.as_str()
        };
        event.event_id = stable_id(&[AGENT, key, event.tool_use_id.as_deref().unwrap_or("")]);
        event.is_sidechain = state.sidechain;
    }
    done.sort_by_key(|e| e.seq);
    done
}

fn call_event(
    payload: &Value,
    call_id: &str,
    state: &SessionState,
    source_path: &str,
    record: &crate::common::Record,
    bad: &mut BadCounts,
) -> (Event, bool) {
    let name = payload
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or(if payload.get("action").is_some() {
            "local_shell"
        } else {
            ""
        })
        .to_string();
    // `arguments` is JSON text; a custom tool's `input` is free text (an apply_patch body).
    let input: Value = match payload.get("arguments").or_else(|| payload.get("action")) {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(other) => other.clone(),
        None => payload.get("input").cloned().unwrap_or(Value::Null),
    };
    let command = shell_command(&input);
    // `sandbox_permissions: "require_escalated"` (older: `with_escalated_permissions: true`).
    let escalates = input.get("sandbox_permissions").and_then(Value::as_str)
        == Some("require_escalated")
        || input
            .get("with_escalated_permissions")
            .and_then(Value::as_bool)
            == Some(true);
    let file_path = ["path", "file_path", "workdir"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .filter(|_| command.is_none())
        .map(str::to_string);
    let ts_us = timestamp_or_count(
        record.value.get("timestamp").and_then(Value::as_str),
        "codex-unparsable-timestamp",
        bad,
    );
    let event = Event {
        event_id: state.meta_id.clone().unwrap_or_default(),
        agent: AGENT.to_string(),
        agent_version: state.version.clone(),
        source: format!("{source_path}:{}", record.line),
        source_kind: SOURCE.kind.to_string(),
        project_key: String::new(),
        project_root: String::new(),
        session_id: String::new(),
        seq: record.line,
        ts_us,
        cwd: input
            .get("workdir")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| state.cwd.clone()),
        git_branch: state.branch.clone(),
        permission_mode: state.mode(),
        attended: state.attended(),
        tool_name: name,
        tool_input: match &input {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        command,
        file_path,
        outcome: Outcome::Unmatched,
        is_error: None,
        is_sidechain: false,
        tool_use_id: Some(call_id.to_string()),
        outcome_rule: String::new(),
        denial_kind: None,
        result_excerpt: None,
        decided_by: None,
    };
    (event, escalates)
}

/// Whether a `session_meta` `source` names a sub-agent (`{"subagent": {"thread_spawn": …}}`;
/// the plain sources are strings: `cli`, `vscode`, `exec`, `mcp`).
fn is_subagent(source: Option<&Value>) -> bool {
    match source {
        Some(Value::Object(map)) => map.keys().any(|k| k.eq_ignore_ascii_case("subagent")),
        Some(Value::String(s)) => s.eq_ignore_ascii_case("subagent"),
        _ => false,
    }
}

/// The `response_item` types a rollout holds that are not a call the reader pairs: messages,
/// reasoning, hosted tools without a call id (web search, image generation, tool search),
/// compaction and context items (transcripts.md §3, landscape-2026.md §3.2). Anything else is
/// counted as `codex-unknown-item-type`.
fn known_item(kind: &str) -> bool {
    matches!(
        kind,
        "message"
            | "reasoning"
            | "web_search_call"
            | "image_generation_call"
            | "tool_search_call"
            | "tool_search_output"
            | "compaction"
            | "context_compaction"
            | "compaction_summary"
            | "additional_tools"
            | "inter_agent_communication"
            | "ghost_snapshot"
            | "other"
    )
}

/// The shell text of a call: `cmd` (exec_command), or `command` as a string or an argv, where
/// `["bash", "-lc", script]` is the script itself.
fn shell_command(input: &Value) -> Option<String> {
    if let Some(text) = ["cmd", "command"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
    {
        return Some(text.to_string());
    }
    let argv: Vec<&str> = input
        .get("command")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match argv.as_slice() {
        [shell, flag, script]
            if matches!(*flag, "-c" | "-lc")
                && ["bash", "sh", "zsh"]
                    .iter()
                    .any(|s| shell.rsplit('/').next() == Some(*s)) =>
        {
            Some((*script).to_string())
        }
        words => Some(
            words
                .iter()
                .map(|w| quote_word(w))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

/// A word as the shell would need it written: the engine's `quote_word` rule (ingest may not
/// depend on the engine, design §3), so the engine reads the joined command back word for word;
/// `tests/e2e/quoting.rs` holds the two to the same answers.
pub fn quote_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A call's output: the text, and the exit code when Codex recorded one.
struct Output {
    text: String,
    exit_code: Option<i64>,
}

/// Output is plain text, or JSON text `{output, metadata: {exit_code}}`, or that object itself.
fn output_text(output: &Value) -> Output {
    let structured = match output {
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object),
        Value::Object(_) => Some(output.clone()),
        _ => None,
    };
    match structured {
        Some(object) => Output {
            text: object
                .get("output")
                .and_then(Value::as_str)
                .map_or_else(|| object.to_string(), str::to_string),
            exit_code: object
                .pointer("/metadata/exit_code")
                .and_then(Value::as_i64),
        },
        None => Output {
            text: output
                .as_str()
                .map_or_else(|| output.to_string(), str::to_string),
            exit_code: None,
        },
    }
}

fn outcome_of(output: &Output) -> (Outcome, &'static str, Option<bool>) {
    let text = output.text.trim_start();
    if text.starts_with("exec command rejected by user")
        || text.starts_with("patch rejected by user")
    {
        return (Outcome::Refused, "codex-rejected-by-user", None);
    }
    if text.starts_with("This action was rejected due to unacceptable risk") {
        return (Outcome::Denied, "codex-guardian", None);
    }
    // A call stopped by the person (Esc, a new message) is answered with Codex's abort text
    // before the turn's `turn_aborted`: `Wall time: N seconds\naborted by user` (shell tools),
    // `aborted by user after Ns` (others); `aborted` when Codex filled in an output it lacked.
    if text.starts_with("aborted by user")
        || text.trim_end() == "aborted"
        || (text.starts_with("Wall time:") && text.trim_end().ends_with("\naborted by user"))
    {
        return (Outcome::Interrupted, "codex-aborted-by-user", None);
    }
    if text.contains("sandbox denied exec error") {
        return (Outcome::Denied, "codex-sandbox", Some(true));
    }
    match output.exit_code {
        Some(code) if code != 0 => (Outcome::Errored, "codex-exit-code", Some(true)),
        Some(_) => (Outcome::Ran, "codex-output", Some(false)),
        None => (Outcome::Ran, "codex-output", None),
    }
}
