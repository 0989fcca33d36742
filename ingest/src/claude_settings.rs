//! Claude Code's standing approvals: the `permissions.allow` rules of its settings files, as
//! `granted` rows (`crate::standing`).
//!
//! Two sources, because where a rule applies is told by which file holds it, and a user's own
//! `~/.claude/settings.json` looks like a project's `.claude/settings.json` from its path alone:
//! [`SOURCE`] reads a project's shared (`.claude/settings.json`) and local
//! (`.claude/settings.local.json`, where "don't ask again" writes) settings, for that project
//! (the directory holding `.claude`); [`USER_SOURCE`] reads the user's settings, for every project.
//! Rules are kept as written: they are already in the rule language the engine matches.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::BadCounts;
use crate::schema::{Event, agent};
use crate::source::{Contents, Flag, MAX_TEXT_FILE_BYTES, Machine, Source, just_the_file};
use crate::standing::{MAX_SETTINGS_BYTES, Rule, Scope, kind, rows, time_of, unusable};

/// A project's shared and local settings.
pub const SOURCE: Source = Source {
    kind: kind::CLAUDE_SETTINGS,
    flag: Flag {
        long: "claude-settings",
        value_name: "PATH",
        help: "A project directory, its `.claude` directory or one of its settings files \
               (`.claude/settings.json`, `.claude/settings.local.json`): their \
               `permissions.allow` rules are standing approvals for that project (repeatable) \
               [default: the current directory and its parents, and the projects listed in \
               `~/.claude.json`]",
    },
    default_places,
    discover,
    files: just_the_file,
    max_file_bytes: MAX_SETTINGS_BYTES,
    read: read_project,
};

/// The user's own settings.
pub const USER_SOURCE: Source = Source {
    kind: kind::CLAUDE_USER_SETTINGS,
    flag: Flag {
        long: "claude-user-settings",
        value_name: "PATH",
        help: "Claude Code's configuration directory or the user's `settings.json` in it: its \
               `permissions.allow` rules are standing approvals for every Claude Code project \
               (repeatable) [default: `settings.json` in `$CLAUDE_CONFIG_DIR`, else `~/.claude` \
               and `~/.config/claude`]",
    },
    default_places: user_default_places,
    discover: user_discover,
    files: just_the_file,
    max_file_bytes: MAX_SETTINGS_BYTES,
    read: read_user,
};

/// The largest `~/.claude.json` read for its project list.
const MAX_PROJECT_LIST_BYTES: u64 = MAX_TEXT_FILE_BYTES;

/// The settings file names of a project's `.claude` directory.
const PROJECT_FILES: [&str; 2] = ["settings.json", "settings.local.json"];

fn config_dirs(machine: &Machine<'_>) -> Vec<PathBuf> {
    let config_dir = (machine.env)("CLAUDE_CONFIG_DIR").and_then(|v| v.into_string().ok());
    match config_dir {
        Some(list) if !list.trim().is_empty() => {
            list.split(',').map(|p| PathBuf::from(p.trim())).collect()
        }
        _ => vec![
            machine.home.join(".claude"),
            machine.home.join(".config/claude"),
        ],
    }
}

fn user_default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    config_dirs(machine)
        .into_iter()
        .map(|d| d.join("settings.json"))
        .filter(|f| f.is_file())
        .collect()
}

/// A configuration directory's `settings.json`, or the file itself.
fn user_discover(place: &Path) -> Vec<PathBuf> {
    if place.is_dir() {
        let file = place.join("settings.json");
        return if file.exists() {
            vec![file]
        } else {
            Vec::new()
        };
    }
    vec![place.to_path_buf()]
}

/// The current directory and its parents below the home (not the home nor above it: the home's
/// `.claude/settings.json` is the user's), and every project `~/.claude.json` lists; those with
/// project settings.
fn default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> = machine
        .cwd
        .ancestors()
        .take_while(|dir| !machine.home.starts_with(dir))
        .map(Path::to_path_buf)
        .collect();
    let lists = std::iter::once(machine.home.join(".claude.json")).chain(
        config_dirs(machine)
            .into_iter()
            .map(|d| d.join(".claude.json")),
    );
    for list in lists {
        places.extend(listed_projects(&list));
    }
    places.retain(|p| p != machine.home && !discover(p).is_empty());
    places.sort();
    places.dedup();
    places
}

/// The project paths Claude Code's state file lists (its `projects` object's keys).
fn listed_projects(list: &Path) -> Vec<PathBuf> {
    let Ok(bytes) = crate::common::read_regular(list, MAX_PROJECT_LIST_BYTES) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    value
        .get("projects")
        .and_then(Value::as_object)
        .map(|projects| projects.keys().map(PathBuf::from).collect())
        .unwrap_or_default()
}

/// A project directory's settings files, a `.claude` directory's, or the file itself.
pub fn discover(place: &Path) -> Vec<PathBuf> {
    if !place.is_dir() {
        return if std::fs::symlink_metadata(place).is_ok() {
            vec![place.to_path_buf()]
        } else {
            Vec::new()
        };
    }
    let dir = if place.file_name().is_some_and(|n| n == ".claude") {
        place.to_path_buf()
    } else {
        place.join(".claude")
    };
    PROJECT_FILES
        .iter()
        .map(|name| dir.join(name))
        .filter(|f| std::fs::symlink_metadata(f).is_ok())
        .collect()
}

/// The project a settings file belongs to: the directory holding its `.claude` directory (a
/// file elsewhere, named on purpose, belongs to its own directory).
fn project_of(path: &Path) -> String {
    let dir = path.parent().unwrap_or(Path::new(""));
    let root = if dir.file_name().is_some_and(|n| n == ".claude") {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    root.display().to_string()
}

fn read_project(path: &Path, contents: &Contents, bad: &mut BadCounts) -> Vec<Event> {
    let project = project_of(path);
    read_with(path, contents, bad, Some(&project), SOURCE.kind)
}

fn read_user(path: &Path, contents: &Contents, bad: &mut BadCounts) -> Vec<Event> {
    read_with(path, contents, bad, None, USER_SOURCE.kind)
}

fn read_with(
    path: &Path,
    contents: &Contents,
    bad: &mut BadCounts,
    project: Option<&str>,
    kind: &'static str,
) -> Vec<Event> {
    let rules = allow_rules(&contents.bytes, bad);
    let scope = Scope {
        agent: agent::CLAUDE_CODE,
        kind,
        file: path,
        project,
    };
    rows(&scope, rules, time_of(path, bad))
}

/// The `permissions.allow` rules of a settings file's bytes; a file that is not a JSON object
/// and an entry that is not a rule are counted.
pub fn allow_rules(bytes: &[u8], bad: &mut BadCounts) -> Vec<Rule> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_start_matches('\u{feff}');
    let value: Value = match serde_json::from_str(text) {
        Ok(value @ Value::Object(_)) => value,
        _ => {
            bad.add(unusable::UNPARSABLE_FILE);
            return Vec::new();
        }
    };
    let Some(allow) = value.pointer("/permissions/allow") else {
        return Vec::new();
    };
    let Some(entries) = allow.as_array() else {
        bad.add(unusable::NOT_A_RULE);
        return Vec::new();
    };
    let mut rules = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        match entry.as_str().map(str::trim) {
            Some(rule) if !rule.is_empty() => rules.push(Rule {
                rule: rule.to_string(),
                written: rule.to_string(),
                at: format!("#permissions.allow[{i}]"),
            }),
            _ => bad.add(unusable::NOT_A_RULE),
        }
    }
    rules
}
