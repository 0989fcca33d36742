//! Gemini CLI chat recordings: `~/.gemini/tmp/<project id>/chats/` — one JSON object per session
//! before 0.39 (`{sessionId, projectHash, startTime, lastUpdated, messages, kind}`), a JSON-lines
//! log after (a metadata line, then message records, `{"$set": {…}}` updates and
//! `{"$rewindTo": id}` markers).
//!
//! Messages are upserted by `id` (a turn is rewritten as its tool calls progress, the last
//! version wins); a `$set` of `messages` upserts each of them. A call is a `toolCalls` entry of
//! a message, its outcome its `status` (`success` ran, `error` errored, `cancelled` was
//! cancelled — a person declining the confirmation and an abort look the same). Gemini records
//! no decision, so `decided_by` stays empty. A `$rewindTo` takes messages out of the
//! conversation, not out of history: their calls had already run, and stay. Only tool calls are
//! read, so the injected `<session_context>` first user message is never a turn here.
//!
//! The project is the path the CLI keeps for the project folder (`.project_root` in it, else the
//! entry of `~/.gemini/projects.json` whose short id or SHA-256 is the folder's name), else the
//! folder's name (the hash) or the recording's `projectHash` when the path is unknown.
//!
//! Must not: decide anything (raw facts only).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::{BadCounts, excerpt, files_below, json_lines, stable_id, timestamp_or_count};
use crate::project;
use crate::schema::{Event, Outcome, agent};
use crate::source::{Contents, Flag, MAX_TEXT_FILE_BYTES, Machine, Source};

/// The stored agent name.
const AGENT: &str = agent::GEMINI;

/// The registry of project paths, in the Gemini home.
const PROJECTS: &str = "projects.json";
/// The file in a project folder naming the project's path.
const PROJECT_ROOT: &str = ".project_root";

/// Gemini CLI chat recordings.
pub const SOURCE: Source = Source {
    kind: "gemini-chats",
    flag: Flag {
        long: "gemini",
        value_name: "PATH",
        help: "A Gemini CLI `tmp` directory, a project's `chats` folder or a recording \
               (repeatable) [default: `~/.gemini/tmp`]",
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

/// `~/.gemini/tmp` when it exists (the research documents no variable moving it).
pub fn default_roots(home: &Path) -> Vec<PathBuf> {
    let root = home.join(".gemini/tmp");
    if root.is_dir() {
        vec![root]
    } else {
        Vec::new()
    }
}

/// Every recording below `root`: the `.json` and `.jsonl` files inside a `chats` folder (at any
/// depth: newer builds keep sub-agents' recordings in a folder per session); a file named
/// directly is itself. Sorted.
pub fn discover(root: &Path) -> Vec<PathBuf> {
    files_below(
        root,
        |_| true,
        |file| file.ends_with(".json") || file.ends_with(".jsonl"),
    )
    .into_iter()
    .filter(|path| path == root || in_chats(path))
    .collect()
}

fn in_chats(path: &Path) -> bool {
    path.parent().is_some_and(|dir| {
        dir.components()
            .any(|c| c == Component::Normal("chats".as_ref()))
    })
}

/// The project folder of a recording: the parent of its nearest `chats` ancestor.
fn project_folder(path: &Path) -> Option<&Path> {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.file_name().is_some_and(|n| n == "chats"))?
        .parent()
}

/// A recording's files: itself, and what places it — its project folder's `.project_root`
/// when there is one, else the home's `projects.json` when there is one (a change to either
/// places the session again).
fn files(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    if let Some(folder) = project_folder(path) {
        let exists = |f: &PathBuf| std::fs::symlink_metadata(f).is_ok();
        let root = folder.join(PROJECT_ROOT);
        let registry = folder
            .parent()
            .and_then(Path::parent)
            .map(|h| h.join(PROJECTS));
        files.extend(Some(root).filter(exists).or(registry.filter(exists)));
    }
    files
}

fn read_contents(path: &Path, contents: &Contents, bad: &mut BadCounts) -> Vec<Event> {
    let mut recording: &[u8] = &[];
    let mut places = Places::default();
    for (file, bytes) in contents.files() {
        match file.file_name().and_then(|n| n.to_str()) {
            Some(PROJECT_ROOT) if file != path => {
                let text = String::from_utf8_lossy(bytes).trim().to_string();
                places.project_root = (!text.is_empty()).then_some(text);
            }
            Some(PROJECTS) if file != path => match serde_json::from_slice::<Value>(bytes) {
                Ok(value) => places.registry = registry_entries(&value),
                Err(_) => bad.add("gemini-unreadable-projects-json"),
            },
            _ => recording = bytes,
        }
    }
    read_gemini(path, recording, &places, bad)
}

/// What the Gemini home says about where projects are.
#[derive(Debug, Default)]
pub struct Places {
    /// The project folder's `.project_root`.
    pub project_root: Option<String>,
    /// `projects.json`: each project path with its short id.
    pub registry: Vec<(String, String)>,
}

/// The `projects` map of a `projects.json` (`{"projects": {"<path>": "<short id>"}}`).
pub fn registry_entries(value: &Value) -> Vec<(String, String)> {
    value
        .get("projects")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(path, id)| Some((path.clone(), id.as_str()?.to_string())))
        .collect()
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The project path for a recording: `.project_root`, else the registry entry whose short id or
/// SHA-256 names the folder (or the recording's `projectHash`); `Err` with that name or hash
/// itself when no file names the project (its place, for [`project::place`] to fall back on).
fn project_of(path: &Path, places: &Places, project_hash: Option<&str>) -> Result<String, String> {
    if let Some(root) = &places.project_root {
        return Ok(root.clone());
    }
    let folder = project_folder(path)
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    let names: Vec<&str> = folder.as_deref().into_iter().chain(project_hash).collect();
    let known = places.registry.iter().find(|(project, id)| {
        names.contains(&id.as_str()) || names.contains(&sha256_hex(project).as_str())
    });
    match known {
        Some((project, _)) => Ok(project.clone()),
        None => Err(folder
            .or_else(|| project_hash.map(str::to_string))
            .unwrap_or_else(|| project::file_place(path))),
    }
}

/// The recording's own facts.
#[derive(Default)]
struct Metadata {
    session_id: Option<String>,
    project_hash: Option<String>,
    sub_agent: bool,
}

impl Metadata {
    fn update(&mut self, value: &Value) {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
        if let Some(id) = text("sessionId") {
            self.session_id.get_or_insert(id);
        }
        if let Some(hash) = text("projectHash") {
            self.project_hash.get_or_insert(hash);
        }
        if let Some(kind) = text("kind") {
            self.sub_agent = kind == "subagent";
        }
    }
}

/// Messages by id, in the order each first appeared, with the line (or index) it appeared at.
#[derive(Default)]
struct Messages {
    order: Vec<String>,
    by_id: HashMap<String, (u32, Value)>,
}

impl Messages {
    fn upsert(&mut self, line: u32, message: &Value, bad: &mut BadCounts) {
        let Some(id) = message.get("id").and_then(Value::as_str) else {
            bad.add("gemini-message-without-id");
            return;
        };
        match self.by_id.get_mut(id) {
            Some((_, stored)) => *stored = message.clone(),
            None => {
                self.order.push(id.to_string());
                self.by_id.insert(id.to_string(), (line, message.clone()));
            }
        }
    }
}

/// Reads one recording (either format) into events, placing it with `places`.
pub fn read_gemini(path: &Path, bytes: &[u8], places: &Places, bad: &mut BadCounts) -> Vec<Event> {
    let mut metadata = Metadata::default();
    let mut messages = Messages::default();
    match whole_recording(bytes) {
        Some(whole) => {
            metadata.update(&whole);
            let list = whole.get("messages").and_then(Value::as_array);
            for (index, message) in list.into_iter().flatten().enumerate() {
                let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
                messages.upsert(line, message, bad);
            }
        }
        None => {
            let (records, _) = json_lines(bytes, bad);
            for record in &records {
                let value = &record.value;
                if let Some(set) = value.get("$set") {
                    metadata.update(set);
                    for message in set
                        .get("messages")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        messages.upsert(record.line, message, bad);
                    }
                } else if value.get("$rewindTo").is_some() {
                    // The calls of the messages rewound had run: they stay.
                } else if value.get("id").is_some() && value.get("type").is_some() {
                    messages.upsert(record.line, value, bad);
                } else if value.get("sessionId").is_some() {
                    metadata.update(value);
                } else {
                    bad.add("gemini-unknown-record");
                }
            }
        }
    }
    let source_path = path.display().to_string();
    let session = metadata.session_id.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let mut done: Vec<Event> = Vec::new();
    // A call recorded again in a later message replaces its earlier record, in place.
    let mut position: HashMap<String, usize> = HashMap::new();
    for id in &messages.order {
        let Some((line, message)) = messages.by_id.get(id) else {
            continue;
        };
        let calls = message.get("toolCalls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            let Some(event) = call_event(call, message, *line, &metadata, &source_path, bad) else {
                continue;
            };
            let key = event.tool_use_id.clone().unwrap_or_default();
            match position.get(&key) {
                Some(at) => {
                    bad.add("gemini-call-recorded-twice");
                    if let Some(slot) = done.get_mut(*at) {
                        *slot = event;
                    }
                }
                None => {
                    position.insert(key, done.len());
                    done.push(event);
                }
            }
        }
    }
    match project_of(path, places, metadata.project_hash.as_deref()) {
        Ok(root) => project::record_root(&mut done, &root),
        Err(place) => project::record_place(&mut done, &place),
    }
    for event in &mut done {
        event.session_id.clone_from(&session);
        event.event_id = stable_id(&[AGENT, &session, event.tool_use_id.as_deref().unwrap_or("")]);
    }
    done
}

/// The older whole-file recording, when `bytes` is one: one JSON object holding `messages`.
fn whole_recording(bytes: &[u8]) -> Option<Value> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'{' {
        return None;
    }
    let value: Value = serde_json::from_slice(bytes).ok()?;
    value.get("messages").is_some().then_some(value)
}

/// The shell tool, whose `command` argument is a shell command.
const SHELL_TOOL: &str = "run_shell_command";

fn call_event(
    call: &Value,
    message: &Value,
    line: u32,
    metadata: &Metadata,
    source_path: &str,
    bad: &mut BadCounts,
) -> Option<Event> {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let Some(id) = text(call, "id") else {
        bad.add("gemini-tool-call-without-id");
        return None;
    };
    let name = text(call, "name").unwrap_or_default();
    let input = call.get("args").cloned().unwrap_or(Value::Null);
    let command = (name == SHELL_TOOL)
        .then(|| text(&input, "command"))
        .flatten();
    let file_path = ["file_path", "absolute_path", "path", "dir_path"]
        .iter()
        .find_map(|k| text(&input, k));
    let (outcome, rule) = match text(call, "status").as_deref() {
        Some("success") => (Outcome::Ran, "gemini-success"),
        Some("error") => (Outcome::Errored, "gemini-error"),
        Some("cancelled") => (Outcome::Cancelled, "gemini-cancelled"),
        // The states a call passes through before it ends: the recording stopped first.
        Some("validating" | "scheduled" | "awaiting_approval" | "executing") => {
            (Outcome::Unmatched, "gemini-unfinished")
        }
        // A state no source documents (a newer Gemini CLI's): unfinished too, and counted.
        Some(_) => {
            bad.add("gemini-unknown-tool-status");
            (Outcome::Unmatched, "gemini-unfinished")
        }
        None => {
            bad.add("gemini-tool-call-without-status");
            (Outcome::Unmatched, "no-result")
        }
    };
    let time = text(call, "timestamp").or_else(|| text(message, "timestamp"));
    let ts_us = timestamp_or_count(time.as_deref(), "gemini-unparsable-timestamp", bad);
    Some(Event {
        event_id: String::new(),
        agent: AGENT.to_string(),
        agent_version: None,
        source: format!("{source_path}:{line}"),
        source_kind: SOURCE.kind.to_string(),
        project_key: String::new(),
        project_root: String::new(),
        session_id: String::new(),
        seq: line,
        ts_us,
        cwd: None,
        git_branch: None,
        permission_mode: None,
        attended: None,
        tool_name: name,
        tool_input: input.to_string(),
        command,
        file_path,
        outcome,
        is_error: match outcome {
            Outcome::Ran => Some(false),
            Outcome::Errored => Some(true),
            _ => None,
        },
        is_sidechain: metadata.sub_agent || call.get("agentId").is_some_and(|a| !a.is_null()),
        tool_use_id: Some(id),
        outcome_rule: rule.to_string(),
        denial_kind: None,
        result_excerpt: result_text(call.get("result")).map(|t| excerpt(&t, 2048)),
        decided_by: None,
    })
}

/// A call's result text: the `output` of its function responses (or `error`), joined.
fn result_text(result: Option<&Value>) -> Option<String> {
    let parts: Vec<String> = result?
        .as_array()?
        .iter()
        .filter_map(|part| {
            let response = part.pointer("/functionResponse/response")?;
            response
                .get("output")
                .or_else(|| response.get("error"))
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}
