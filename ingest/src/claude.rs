//! Claude Code transcripts: `~/.claude/projects/<encoded cwd>/*.jsonl`, in every generation of
//! the format (1.0.x inline sidechains, 2.0.x `agent-*.jsonl`, 2.1.x `<session>/subagents/`).
//!
//! Each `tool_use` is paired with its `tool_result` by id (results can arrive out of order);
//! the outcome comes from [`crate::outcome`]; the permission mode in force is the latest
//! `permissionMode` of a user record or `permission-mode` record before the call, carried
//! forward; a call with no result is `unmatched`. Records cloned into another session file on
//! resume keep their ids, so the same call gets the same event id and the writer keeps one.
//!
//! Once the session's first `cwd` is known, a whole-looking line (`{…}`) that cannot hold a call,
//! a result or a permission mode costs a byte scan, not a parse ([`Prefilter`]).

mod fast;
mod record;
mod scan;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{
    BadCounts, attended_for, claude_event_id, command_and_path, each_json_line, excerpt,
    files_below, timestamp_or_count,
};
use crate::outcome::{self, ResultFacts};
use crate::project;
use crate::schema::{Event, Outcome, agent};
use crate::source::{Flag, MAX_TEXT_FILE_BYTES, Machine, Source, just_the_file};
use record::{ClaudeRecord, Input, parse_record};

/// Claude Code's JSONL transcripts.
pub const SOURCE: Source = Source {
    kind: "claude-jsonl",
    flag: Flag {
        long: "claude",
        value_name: "DIR",
        help: "A Claude Code `projects` directory (repeatable) [default: `$CLAUDE_CONFIG_DIR`, \
               `~/.claude/projects`, `~/.config/claude/projects`]",
    },
    default_places,
    discover,
    files: just_the_file,
    max_file_bytes: MAX_TEXT_FILE_BYTES,
    read: |path, contents, bad| read_claude(path, &contents.bytes, bad),
};

fn default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    let config_dir = (machine.env)("CLAUDE_CONFIG_DIR").and_then(|v| v.into_string().ok());
    default_roots(machine.home, config_dir.as_deref())
}

/// The `projects` directories Claude Code may write to: `$CLAUDE_CONFIG_DIR` (a comma-separated
/// list), else `~/.claude` and `~/.config/claude`; only those that exist.
pub fn default_roots(home: &Path, config_dir: Option<&str>) -> Vec<PathBuf> {
    let bases: Vec<PathBuf> = match config_dir {
        Some(list) if !list.trim().is_empty() => {
            list.split(',').map(|p| PathBuf::from(p.trim())).collect()
        }
        _ => vec![home.join(".claude"), home.join(".config/claude")],
    };
    bases
        .into_iter()
        .map(|b| b.join("projects"))
        .filter(|p| p.is_dir())
        .collect()
}

/// Every transcript file below a `projects` directory (session files, sibling `agent-*.jsonl`
/// and `<session>/subagents/**/agent-*.jsonl`), sorted.
pub fn discover(root: &Path) -> Vec<PathBuf> {
    files_below(
        root,
        // `tool-results/` holds spilled outputs, not records.
        |dir| dir != "tool-results",
        |file| file.ends_with(".jsonl") && file != "journal.jsonl",
    )
}

/// The byte scan that spares a parse: a line matters to the events only when it holds a
/// `tool_use` (a call, or the `tool_use_id` of its result), a `permissionMode`, or a `\u` escape
/// (which could spell either). A line that does not look whole (`{` … `}`) or names no known
/// `"type":"…"` is always parsed, so a torn line or a new record type is still counted. What a
/// skipped line is not checked for: its JSON syntax, a repeated `uuid` (bad-input counts only).
struct Prefilter {
    needles: [memchr::memmem::Finder<'static>; 3],
    kind: memchr::memmem::Finder<'static>,
}

impl Prefilter {
    fn new() -> Prefilter {
        Prefilter {
            needles: [
                memchr::memmem::Finder::new("tool_use"),
                memchr::memmem::Finder::new("permissionMode"),
                memchr::memmem::Finder::new("\\u"),
            ],
            kind: memchr::memmem::Finder::new("\"type\":\""),
        }
    }

    /// Whether some `"type":"…"` in `bytes` names a known record type.
    fn names_known_kind(&self, bytes: &[u8]) -> bool {
        self.kind.find_iter(bytes).any(|at| {
            let value = bytes.get(at + 8..).unwrap_or(&[]);
            let end = memchr::memchr(b'"', value).unwrap_or(0);
            std::str::from_utf8(value.get(..end).unwrap_or(&[])).is_ok_and(known_kind)
        })
    }

    /// Whether `text` can be skipped without a parse.
    fn skips(&self, text: &str) -> bool {
        let bytes = text.trim_ascii().as_bytes();
        bytes.first() == Some(&b'{')
            && bytes.last() == Some(&b'}')
            && self.needles.iter().all(|n| n.find(bytes).is_none())
            && self.names_known_kind(bytes)
    }
}

/// Whether `kind` is a record type Claude Code writes (the reader uses `assistant` and `user`).
fn known_kind(kind: &str) -> bool {
    matches!(
        kind,
        "assistant"
            | "user"
            | "permission-mode"
            | "summary"
            | "system"
            | "file-history-snapshot"
            | "queue-operation"
            | "progress"
            | "attachment"
            | "mode"
            | "custom-title"
            | "ai-title"
            | "agent-name"
            | "agent-setting"
            | "last-prompt"
            | "pr-link"
            | "bridge-session"
            | "atis-latch"
    )
}

type Hasher = foldhash::fast::RandomState;

struct Pending {
    event: Event,
}

/// Reads one transcript file's bytes into events.
pub fn read_claude(path: &Path, bytes: &[u8], bad: &mut BadCounts) -> Vec<Event> {
    let source_path = path.display().to_string();
    let mut mode: Option<String> = None;
    let mut first_cwd: Option<String> = None;
    // Hashed with foldhash (seeded per run): SipHash of every uuid and call id was 2–3% of an
    // ingest.
    let mut pending: HashMap<String, Pending, Hasher> = HashMap::default();
    let mut order: Vec<String> = Vec::new();
    let mut done: Vec<Event> = Vec::new();
    let mut seen_uuids: HashSet<String, Hasher> = HashSet::default();
    let mut called: HashSet<String, Hasher> = HashSet::default();
    let prefilter = Prefilter::new();
    each_json_line(bytes, bad, |line, text, bad| {
        if first_cwd.is_some() && prefilter.skips(text) {
            return true;
        }
        // The fast reading where it is sure of the line, else serde_json (which decides
        // whether it is JSON at all).
        let Some(mut record) = fast::parse(text).or_else(|| parse_record(text)) else {
            return false;
        };
        let kind = record.kind.as_str().unwrap_or("");
        if let Some(uuid) = record.uuid.as_str()
            && !seen_uuids.insert(uuid.to_string())
        {
            bad.add("claude-duplicate-record");
            return true;
        }
        if let Some(m) = record.permission_mode.as_str() {
            mode = Some(m.to_string());
        }
        if first_cwd.is_none() {
            first_cwd = record.cwd.as_str().map(str::to_string);
        }
        match kind {
            "assistant" => {
                // Taken out of the record, so that a call's input moves into its event.
                let Some(mut blocks) = record.blocks.take() else {
                    return true;
                };
                for block in blocks
                    .iter_mut()
                    .filter(|b| b.kind.as_str() == Some("tool_use"))
                {
                    let input = block.input.take();
                    let Some(id) = block.id.as_str() else {
                        bad.add("claude-tool-use-without-id");
                        continue;
                    };
                    // A call already read (pending or done): every call read is in `called`
                    // (looking through the done ones was quadratic in a session's calls).
                    if !called.insert(id.to_string()) {
                        continue;
                    }
                    let call = ToolUse {
                        id,
                        name: block.name.as_str().unwrap_or(""),
                        input,
                    };
                    let event = call_event(&record, call, mode.as_deref(), &source_path, line, bad);
                    order.push(id.to_string());
                    pending.insert(id.to_string(), Pending { event });
                }
            }
            "user" => {
                let Some(blocks) = &record.blocks else {
                    return true;
                };
                for block in blocks
                    .iter()
                    .filter(|b| b.kind.as_str() == Some("tool_result"))
                {
                    let Some(id) = block.tool_use_id.as_str() else {
                        continue;
                    };
                    let Some(Pending { mut event }) = pending.remove(id) else {
                        bad.add("claude-result-without-call");
                        continue;
                    };
                    let text = block.content.text();
                    let is_error = block.is_error.as_bool();
                    let denial_kind = record.tool_denial_kind.as_str();
                    let interrupted = record.interrupted.as_bool() == Some(true);
                    let (outcome, rule) = outcome::classify(&ResultFacts {
                        tool: &event.tool_name,
                        text: &text,
                        is_error,
                        denial_kind,
                        interrupted,
                    });
                    event.outcome = outcome;
                    event.outcome_rule = rule.to_string();
                    event.is_error = is_error;
                    event.denial_kind = denial_kind.map(str::to_string);
                    event.result_excerpt = (!text.is_empty()).then(|| excerpt(&text, 2048));
                    done.push(event);
                }
            }
            "permission-mode" => {}
            "" => bad.add("claude-record-without-type"),
            kind if known_kind(kind) => {}
            _ => bad.add("claude-unknown-record-type"),
        }
        true
    });
    // Calls that never got a result.
    for id in order {
        if let Some(Pending { mut event }) = pending.remove(&id) {
            event.outcome = Outcome::Unmatched;
            event.outcome_rule = "no-result".to_string();
            done.push(event);
        }
    }
    project::record(&mut done, first_cwd.as_deref(), path);
    done.sort_by(|a, b| a.ts_us.cmp(&b.ts_us).then(a.seq.cmp(&b.seq)));
    done
}

/// What a call keeps of an input `serde_json` read.
fn value_facts(input: &Value) -> fast::InputFacts {
    let (command, file_path) = command_and_path(input);
    fast::InputFacts {
        text: input.to_string(),
        command,
        file_path,
    }
}

/// A `tool_use` block's call: its id, tool name and input (moved out of the block).
struct ToolUse<'b, 'a> {
    id: &'b str,
    name: &'b str,
    input: Option<Input<'a>>,
}

fn call_event(
    record: &ClaudeRecord<'_>,
    call: ToolUse<'_, '_>,
    mode: Option<&str>,
    source_path: &str,
    line: u32,
    bad: &mut BadCounts,
) -> Event {
    let ToolUse { id, name, input } = call;
    let tool_name = name.to_string();
    let facts = match input {
        Some(Input::Written { text, members }) => fast::input_facts(text, &members),
        // The fast reading checked the text: `serde_json` reads it (`Null` cannot happen).
        Some(Input::Raw(raw)) => value_facts(&serde_json::from_str(raw).unwrap_or(Value::Null)),
        Some(Input::Value(value)) => value_facts(&value),
        None => value_facts(&Value::Null),
    };
    let ts_us = timestamp_or_count(
        record.timestamp.as_str(),
        "claude-unparsable-timestamp",
        bad,
    );
    let session_id = record
        .session_id
        .as_str()
        .or_else(|| record.session_id_snake.as_str())
        .unwrap_or_default()
        .to_string();
    Event {
        event_id: claude_event_id(id),
        agent: agent::CLAUDE_CODE.to_string(),
        agent_version: record.version.as_str().map(str::to_string),
        source: {
            let mut source = String::with_capacity(source_path.len() + 11);
            source.push_str(source_path);
            source.push(':');
            source.push_str(itoa::Buffer::new().format(line));
            source
        },
        source_kind: SOURCE.kind.to_string(),
        project_key: String::new(),
        project_root: String::new(),
        session_id,
        seq: line,
        ts_us,
        cwd: record.cwd.as_str().map(str::to_string),
        git_branch: record
            .git_branch
            .as_str()
            .filter(|b| !b.is_empty())
            .map(str::to_string),
        permission_mode: mode.map(str::to_string),
        attended: attended_for(mode),
        tool_name,
        tool_input: facts.text,
        command: facts.command,
        file_path: facts.file_path,
        outcome: Outcome::Unmatched,
        is_error: None,
        is_sidechain: record.is_sidechain.as_bool().unwrap_or(false),
        tool_use_id: Some(id.to_string()),
        outcome_rule: String::new(),
        denial_kind: None,
        result_excerpt: None,
        decided_by: None,
    }
}
