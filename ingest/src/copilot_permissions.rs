//! The Copilot CLI's standing approvals: `permissions-config.json`, where an approval "for this
//! location" persists, as `granted` rows for each location's project (`crate::standing`).
//!
//! Owns: reading `locations` (an object keyed by absolute path) and each location's
//! `tool_approvals`, by `kind`: `commands` (its `command_identifiers`: a program, or for git and
//! gh the program and its subcommand — each a Bash prefix rule), `read` and `write` (the
//! location's tree: `Read(//<location>/**)`, `Edit(//<location>/**)`), `mcp` (`serverName` and
//! `toolName`, `null` for every tool of the server), `custom-tool` (`toolName`). Other kinds
//! (memory, sampling, extensions) are not tool calls: counted, not read.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::BadCounts;
use crate::schema::{Event, agent};
use crate::source::{Contents, Flag, Machine, Source, just_the_file};
use crate::standing::{
    MAX_SETTINGS_BYTES, Rule, Scope, bash_prefix_rule, kind, rows, time_of, unusable,
};

/// The Copilot CLI's persisted approvals.
pub const SOURCE: Source = Source {
    kind: kind::COPILOT_PERMISSIONS,
    flag: Flag {
        long: "copilot-permissions",
        value_name: "PATH",
        help: "The Copilot CLI's `permissions-config.json` (or the directory holding it): the \
               approvals it persisted per location are standing approvals for that location's \
               project (repeatable) [default: `$COPILOT_HOME/permissions-config.json`, else \
               `~/.copilot/permissions-config.json`]",
    },
    default_places,
    discover,
    files: just_the_file,
    max_file_bytes: MAX_SETTINGS_BYTES,
    read,
};

const FILE_NAME: &str = "permissions-config.json";

fn default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    let base = (machine.env)("COPILOT_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| machine.home.join(".copilot"));
    let file = base.join(FILE_NAME);
    if file.is_file() {
        vec![file]
    } else {
        Vec::new()
    }
}

/// A directory's `permissions-config.json`, or the file itself.
pub fn discover(place: &Path) -> Vec<PathBuf> {
    if place.is_dir() {
        let file = place.join(FILE_NAME);
        return if file.exists() {
            vec![file]
        } else {
            Vec::new()
        };
    }
    vec![place.to_path_buf()]
}

fn read(path: &Path, contents: &Contents, bad: &mut BadCounts) -> Vec<Event> {
    let at = time_of(path, bad);
    let mut events = Vec::new();
    for (location, rules) in locations(&contents.bytes, bad) {
        let scope = Scope {
            agent: agent::COPILOT,
            kind: SOURCE.kind,
            file: path,
            project: Some(&location),
        };
        events.extend(rows(&scope, rules, at));
    }
    events
}

/// Each location with its approvals as rules; what cannot be read is counted.
pub fn locations(bytes: &[u8], bad: &mut BadCounts) -> Vec<(String, Vec<Rule>)> {
    let text = String::from_utf8_lossy(bytes);
    let Ok(Value::Object(top)) = serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}'))
    else {
        bad.add(unusable::UNPARSABLE_FILE);
        return Vec::new();
    };
    let Some(locations) = top.get("locations").and_then(Value::as_object) else {
        if top.contains_key("locations") {
            bad.add(unusable::UNPARSABLE_FILE);
        }
        return Vec::new();
    };
    let mut out = Vec::new();
    for (location, entry) in locations {
        let root = location.trim_end_matches(['/', '\\']);
        let root = if root.is_empty() { "/" } else { root };
        let approvals = entry.get("tool_approvals").and_then(Value::as_array);
        let Some(approvals) = approvals else {
            bad.add(unusable::NOT_A_RULE);
            continue;
        };
        let mut rules = Vec::new();
        for (i, approval) in approvals.iter().enumerate() {
            let at = format!("#locations[{location}].tool_approvals[{i}]");
            let written = approval.to_string();
            let mut push = |rule: String| {
                rules.push(Rule {
                    rule,
                    written: written.clone(),
                    at: at.clone(),
                });
            };
            let text = |key: &str| approval.get(key).and_then(Value::as_str);
            match text("kind") {
                Some("commands") => {
                    let ids = approval
                        .get("command_identifiers")
                        .and_then(Value::as_array);
                    let Some(ids) = ids else {
                        bad.add(unusable::NOT_A_RULE);
                        continue;
                    };
                    for id in ids {
                        let words: Vec<String> = id
                            .as_str()
                            .unwrap_or("")
                            .split_whitespace()
                            .map(str::to_string)
                            .collect();
                        if words.is_empty() {
                            bad.add(unusable::NOT_A_RULE);
                        } else {
                            push(bash_prefix_rule(&words));
                        }
                    }
                }
                Some("read") => push(format!("Read(/{root}/**)")),
                Some("write") => push(format!("Edit(/{root}/**)")),
                Some("mcp") => match (text("serverName"), approval.get("toolName")) {
                    (Some(server), Some(Value::Null) | None) => push(format!("mcp__{server}")),
                    (Some(server), Some(Value::String(tool))) => {
                        push(format!("mcp__{server}__{tool}"));
                    }
                    _ => bad.add(unusable::NOT_A_RULE),
                },
                Some("custom-tool") => match text("toolName") {
                    Some(tool) if !tool.is_empty() => push(tool.to_string()),
                    _ => bad.add(unusable::NOT_A_RULE),
                },
                Some(_) => bad.add(unusable::NOT_A_TOOL),
                None => bad.add(unusable::NOT_A_RULE),
            }
        }
        out.push((root.to_string(), rules));
    }
    out
}
