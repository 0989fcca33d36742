//! Claude Code's OpenTelemetry log events, as an OpenTelemetry collector's file exporter writes
//! them: OTLP/JSON, one export request a line (`resourceLogs` → `scopeLogs` → `logRecords`),
//! each attribute a `{"key", "value": {"stringValue" | "intValue" | "boolValue" | …}}`.
//!
//! Two events are read (docs/formats.md, "Claude Code OpenTelemetry logs"):
//! `claude_code.tool_decision` — who let a call run or stopped it: `decision` (`accept`,
//! `reject`) and its `source` (`config`, `hook`, `user_temporary`, `user_permanent`,
//! `user_reject`, `user_abort`) — and `claude_code.tool_result`, whose `decision_source` and
//! `decision_type` say the same for a call whose `tool_decision` record is missing. Both are
//! keyed by `session.id` and `tool_use_id`; the other events (`api_request`, `user_prompt`, …)
//! are passed over.
//!
//! This source writes no rows of its own. It annotates ([`crate::registry::annotates`]): each of
//! its events is what the log recorded of one Claude Code call — its id, session, tool and
//! `decided_by` — and the run joins it onto the row of the same call from the transcript or the
//! hook's ledger (`crate::decisions`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{BadCounts, claude_event_id, each_json_line, files_below, parse_timestamp_us};
use crate::schema::{Event, Outcome, UNKNOWN_PROJECT, agent, decided_by};
use crate::source::{Flag, MAX_TEXT_FILE_BYTES, Machine, Source, just_the_file};

/// Claude Code's OpenTelemetry logs.
pub const SOURCE: Source = Source {
    kind: "claude-otel",
    flag: Flag {
        long: "otel",
        value_name: "PATH",
        help: "Claude Code OpenTelemetry logs as a collector's file exporter writes them \
               (OTLP/JSON lines): a file, or a directory of `.json`/`.jsonl` files (repeatable); \
               their tool decisions fill `decided_by` on the Claude Code calls they name \
               [default: `$LEASTGRANT_HOME/otel` or `~/.leastgrant/otel`, when it exists]",
    },
    default_places,
    discover,
    files: just_the_file,
    max_file_bytes: MAX_TEXT_FILE_BYTES,
    read: |path, contents, bad| read_otel(path, &contents.bytes, bad),
};

/// The folder of leastgrant's state directory where a collector's file exporter can write, read
/// by default.
pub const DEFAULT_DIR: &str = "otel";

/// The `outcome_rule` of an annotation read from a `tool_decision` record.
pub const RULE_DECISION: &str = "otel-tool-decision";
/// The `outcome_rule` of an annotation read from a `tool_result` record's decision attributes.
pub const RULE_RESULT: &str = "otel-tool-result";

fn default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    let dir = machine.state_dir.join(DEFAULT_DIR);
    if dir.is_dir() { vec![dir] } else { Vec::new() }
}

/// The log files at a place: the file itself, or every `.json`/`.jsonl` file below a directory
/// (a file exporter's rotations sit beside the file it writes), sorted.
pub fn discover(place: &Path) -> Vec<PathBuf> {
    let mut found = files_below(
        place,
        |_| true,
        |name| name.ends_with(".json") || name.ends_with(".jsonl"),
    );
    found.sort();
    found
}

/// Who decided, for a `source` (or `decision_source`) value Claude Code records; `None` for a
/// value the documentation does not list.
pub fn decider(source: &str) -> Option<&'static str> {
    Some(match source {
        "config" => decided_by::CONFIG,
        "hook" => decided_by::HOOK,
        "user_temporary" | "user_reject" | "user_abort" => decided_by::USER,
        "user_permanent" => decided_by::USER_PERMANENT,
        _ => return None,
    })
}

/// Which of the two events a log record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Decision,
    Result,
}

/// The event a record names: by its `event.name` attribute, its `eventName` field or its body
/// (Claude Code sets all three; the short and the `claude_code.` names are both accepted).
fn kind_of(record: &Value, attributes: &Attributes<'_>) -> Option<Kind> {
    let named = |name: &str| match name.strip_prefix("claude_code.").unwrap_or(name) {
        "tool_decision" => Some(Kind::Decision),
        "tool_result" => Some(Kind::Result),
        _ => None,
    };
    let body = record.get("body").and_then(|b| b.get("stringValue"));
    [
        attributes.text("event.name"),
        field(record, "eventName", "event_name")
            .and_then(Value::as_str)
            .map(str::to_string),
        body.and_then(Value::as_str).map(str::to_string),
    ]
    .into_iter()
    .flatten()
    .find_map(|name| named(&name))
}

/// A message field by its OTLP/JSON name (lowerCamelCase), or its protobuf name.
fn field<'a>(value: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    value.get(camel).or_else(|| value.get(snake))
}

/// A record's attributes (`[{key, value}]`).
struct Attributes<'a>(Vec<(&'a str, &'a Value)>);

impl<'a> Attributes<'a> {
    fn of(value: &'a Value) -> Attributes<'a> {
        let list = value.get("attributes").and_then(Value::as_array);
        Attributes(
            list.into_iter()
                .flatten()
                .filter_map(|kv| Some((kv.get("key")?.as_str()?, kv.get("value")?)))
                .collect(),
        )
    }

    /// An attribute as text: a string as it is, an integer, a double or a boolean written out
    /// (OTLP/JSON writes 64-bit integers as strings); `None` when absent, empty or of another type.
    fn text(&self, key: &str) -> Option<String> {
        let (_, value) = self.0.iter().find(|(k, _)| *k == key)?;
        let text = if let Some(s) = value.get("stringValue").and_then(Value::as_str) {
            s.to_string()
        } else if let Some(v) = field(value, "intValue", "int_value") {
            v.as_str().map_or_else(|| v.to_string(), str::to_string)
        } else if let Some(v) = field(value, "boolValue", "bool_value").and_then(Value::as_bool) {
            v.to_string()
        } else if let Some(v) = field(value, "doubleValue", "double_value") {
            v.to_string()
        } else {
            return None;
        };
        (!text.is_empty()).then_some(text)
    }
}

/// One decision as a record gave it.
struct Found {
    kind: Kind,
    session_id: String,
    tool_use_id: String,
    tool_name: String,
    /// The recorded source, raw (`user_temporary`).
    source: String,
    /// `accept` or `reject`, raw, when recorded.
    decision: Option<String>,
    ts_us: Option<i64>,
    version: Option<String>,
    line: u32,
}

/// Reads one log file into annotations: one event per call with a usable decision, in the order
/// first seen. Lines that are not JSON are counted by [`each_json_line`]'s reasons; a JSON line
/// that is no log export is `otel-not-logs`; a decision without a session or a call id, or with
/// a source the documentation does not list, is counted and skipped.
pub fn read_otel(path: &Path, bytes: &[u8], bad: &mut BadCounts) -> Vec<Event> {
    let mut calls: Vec<(Option<Found>, Option<Found>)> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    each_json_line(bytes, bad, |line, text, bad| {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return false;
        };
        let Some(resources) =
            field(&value, "resourceLogs", "resource_logs").and_then(Value::as_array)
        else {
            bad.add("otel-not-logs");
            return true;
        };
        for resource in resources {
            let service = resource.get("resource").map(Attributes::of);
            let version = service.as_ref().and_then(|a| a.text("service.version"));
            let scopes = field(resource, "scopeLogs", "scope_logs").and_then(Value::as_array);
            for scope in scopes.into_iter().flatten() {
                let records = field(scope, "logRecords", "log_records").and_then(Value::as_array);
                for record in records.into_iter().flatten() {
                    let Some(found) = decision_of(record, version.as_deref(), line, bad) else {
                        continue;
                    };
                    let key = (found.session_id.clone(), found.tool_use_id.clone());
                    let at = *index.entry(key).or_insert_with(|| {
                        calls.push((None, None));
                        calls.len() - 1
                    });
                    let Some(slot) = calls.get_mut(at) else {
                        continue;
                    };
                    let slot = match found.kind {
                        Kind::Decision => &mut slot.0,
                        Kind::Result => &mut slot.1,
                    };
                    match slot {
                        // A collector retries an export it is unsure of: the same record again.
                        Some(first) if first.source == found.source => {}
                        Some(_) => bad.add("otel-conflicting-decision"),
                        None => *slot = Some(found),
                    }
                }
            }
        }
        true
    });
    let source_path = path.display().to_string();
    calls
        .into_iter()
        .filter_map(|(decision, result)| {
            if let (Some(d), Some(r)) = (&decision, &result)
                && d.source != r.source
            {
                bad.add("otel-conflicting-decision");
            }
            // The `tool_decision` record is the decision itself; a result's copy stands in for it.
            let found = decision.or(result)?;
            Some(annotation(found, &source_path))
        })
        .collect()
}

/// The decision a log record carries, when it is one of the two events and usable.
fn decision_of(
    record: &Value,
    version: Option<&str>,
    line: u32,
    bad: &mut BadCounts,
) -> Option<Found> {
    let attributes = Attributes::of(record);
    let kind = kind_of(record, &attributes)?;
    let (source_key, decision_key) = match kind {
        Kind::Decision => ("source", "decision"),
        Kind::Result => ("decision_source", "decision_type"),
    };
    let source = attributes.text(source_key);
    let Some(source) = source else {
        // A result whose call needed no recorded decision is no decision to join.
        if kind == Kind::Decision {
            bad.add("otel-decision-without-source");
        }
        return None;
    };
    if decider(&source).is_none() {
        bad.add("otel-unknown-decision-source");
        return None;
    }
    let Some(session_id) = attributes.text("session.id") else {
        bad.add("otel-decision-without-session");
        return None;
    };
    let Some(tool_use_id) = attributes.text("tool_use_id") else {
        bad.add("otel-decision-without-tool-use-id");
        return None;
    };
    let nanos = field(record, "timeUnixNano", "time_unix_nano")
        .and_then(|v| {
            v.as_str()
                .and_then(|s| s.parse::<i64>().ok())
                .or_else(|| v.as_i64())
        })
        .filter(|n| *n > 0);
    let ts_us = nanos.map(|n| n / 1_000).or_else(|| {
        attributes
            .text("event.timestamp")
            .and_then(|t| parse_timestamp_us(&t))
    });
    Some(Found {
        kind,
        session_id,
        tool_use_id,
        tool_name: attributes.text("tool_name").unwrap_or_default(),
        source,
        decision: attributes.text(decision_key),
        ts_us,
        version: version.map(str::to_string),
        line,
    })
}

/// The annotation of one call: its id, session and tool, who decided (`decided_by`), the raw
/// `decision/source` in `denial_kind` for audits, the record it came from in `outcome_rule`,
/// and the outcome the decision implies (`ran` for an accept, `refused` for a person's reject,
/// `denied` for another's) — which the join does not apply: the call's own row says how it
/// ended.
fn annotation(found: Found, source_path: &str) -> Event {
    let who = decider(&found.source);
    let rejected = found.decision.as_deref() == Some("reject");
    let outcome = match (rejected, who) {
        (false, _) => Outcome::Ran,
        (true, Some(decided_by::USER)) => Outcome::Refused,
        (true, _) => Outcome::Denied,
    };
    let raw = match &found.decision {
        Some(decision) => format!("{decision}/{}", found.source),
        None => found.source.clone(),
    };
    Event {
        event_id: claude_event_id(&found.tool_use_id),
        agent: agent::CLAUDE_CODE.to_string(),
        agent_version: found.version,
        source: format!("{source_path}:{}", found.line),
        source_kind: SOURCE.kind.to_string(),
        project_key: UNKNOWN_PROJECT.to_string(),
        project_root: UNKNOWN_PROJECT.to_string(),
        session_id: found.session_id,
        seq: found.line,
        ts_us: found.ts_us,
        cwd: None,
        git_branch: None,
        permission_mode: None,
        attended: None,
        tool_name: found.tool_name,
        tool_input: String::new(),
        command: None,
        file_path: None,
        outcome,
        is_error: None,
        is_sidechain: false,
        tool_use_id: Some(found.tool_use_id),
        outcome_rule: match found.kind {
            Kind::Decision => RULE_DECISION,
            Kind::Result => RULE_RESULT,
        }
        .to_string(),
        denial_kind: Some(raw),
        result_excerpt: None,
        decided_by: who.map(str::to_string),
    }
}
