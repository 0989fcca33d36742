//! `doctor`'s retention checks: whether an agent will delete history before `leastgrant ingest`
//! has read it.
//!
//! Claude Code deletes transcripts last written more than `cleanupPeriodDays` (30 by default)
//! ago when it starts; Gemini CLI deletes chats older than `general.sessionRetention.maxAge`
//! (30 days by default) and beyond `maxCount`, when retention is enabled. Each agent's history
//! is found where `ingest` finds it by default, and a file is read when the events table under
//! the default `--out` lists it with the size and modification time it has now. The check warns
//! when an unread file's deletion is nearer than the next run of the periodic ingest
//! (`leastgrant schedule`), or than [`WITHOUT_SCHEDULE`] when there is none.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use leastgrant_hook::layout;
use leastgrant_ingest::registry::{SOURCES, files_at};
use leastgrant_ingest::source::{Machine, Source, canonical};
use leastgrant_ingest::table::Manifest;
use serde_json::Value;

use crate::schedule;
use crate::shared::jsonc;
use crate::shared::time::human;
use crate::workspace::Workspace;

/// Without a periodic ingest, an unread file this close to deletion is warned about.
const WITHOUT_SCHEDULE: Duration = Duration::from_secs(7 * 86_400);
/// Claude Code's default `cleanupPeriodDays`, and Gemini CLI's default `maxAge`.
const DEFAULT_DAYS: u64 = 30;
const DAY: u64 = 86_400;

/// How long an agent keeps its history, and where that was read.
struct Policy {
    /// Files last written longer ago than this are deleted; `None`: never by age.
    max_age: Option<Duration>,
    /// Per chats folder, only the newest this many are kept (Gemini CLI's `maxCount`).
    max_count: Option<usize>,
    /// Where the setting came from, for the text.
    from: String,
}

/// One retention check's outcome: its id, whether it warns, and its text.
pub(super) struct Finding {
    pub id: &'static str,
    pub warn: bool,
    pub text: String,
}

fn finding(id: &'static str, warn: bool, text: String) -> Finding {
    Finding { id, warn, text }
}

/// The agents with a documented retention: the doctor check's id, the agent's name, the ingest
/// source of its history, and how to read its policy.
type PolicyOf = fn(&Path, &dyn Fn(&str) -> Option<String>) -> Option<Policy>;
const AGENTS: [(&str, &str, &str, PolicyOf); 2] = [
    (
        "retention.claude-code",
        "Claude Code",
        "claude-jsonl",
        claude_policy,
    ),
    (
        "retention.gemini",
        "Gemini CLI",
        "gemini-chats",
        gemini_policy,
    ),
];

pub(super) fn retention_checks(workspace: &Workspace) -> Vec<Finding> {
    let mut checks = Vec::new();
    let home = PathBuf::from(&workspace.roots.home);
    let state_dir = PathBuf::from(&workspace.roots.state_dir);
    let table = layout::data_dir(&state_dir);
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let os_env = |name: &str| std::env::var_os(name);
    let machine = Machine {
        home: &home,
        cwd: &workspace.cwd,
        state_dir: &state_dir,
        env: &os_env,
    };
    let manifest = Manifest::load(&table);
    let last_change = std::fs::metadata(table.join("manifest.json"))
        .and_then(|m| m.modified())
        .ok();
    let installed = schedule::installed();
    for (id, agent, kind, policy_of) in AGENTS {
        let Some(source) = SOURCES.iter().copied().find(|s| s.kind == kind) else {
            continue;
        };
        let files: Vec<PathBuf> = (source.default_places)(&machine)
            .iter()
            .flat_map(|place| files_at(source, place))
            .map(|f| f.path)
            .collect();
        let Some(policy) = policy_of(&home, &env) else {
            if !files.is_empty() {
                checks.push(finding(
                    id,
                    false,
                    format!(
                        "{agent} keeps its history ({} file(s)): retention is off",
                        files.len()
                    ),
                ));
            }
            continue;
        };
        if files.is_empty() {
            continue;
        }
        let manifest = match &manifest {
            Ok(manifest) => manifest,
            Err(error) => {
                checks.push(finding(
                    id,
                    true,
                    format!(
                        "the events table at {} cannot be read ({error}), so what was ingested is unknown",
                        table.display()
                    ),
                ));
                continue;
            }
        };
        checks.push(agent_check(
            id,
            agent,
            source,
            &files,
            &policy,
            manifest,
            last_change,
            installed.as_ref(),
        ));
    }
    checks
}

/// One file of an agent's history: when it was last written, and whether the table has it as
/// it is now.
struct Seen {
    path: PathBuf,
    modified: SystemTime,
    read: bool,
}

#[allow(clippy::too_many_arguments)]
fn agent_check(
    id: &'static str,
    agent: &str,
    source: &Source,
    files: &[PathBuf],
    policy: &Policy,
    manifest: &Manifest,
    last_change: Option<SystemTime>,
    installed: Option<&schedule::Installed>,
) -> Finding {
    let now = SystemTime::now();
    let seen: Vec<Seen> = files
        .iter()
        .filter_map(|path| seen(source, path, manifest))
        .collect();
    let unread: Vec<&Seen> = seen.iter().filter(|s| !s.read).collect();
    // When each unread file goes: by age, and (Gemini CLI) at once when beyond maxCount.
    let beyond_count = beyond_count(&seen, policy.max_count);
    let deadline = |s: &Seen| -> Option<SystemTime> {
        if beyond_count.contains(&s.path.as_path()) {
            return Some(now);
        }
        policy.max_age.map(|age| s.modified + age)
    };
    // A periodic ingest whose program is gone runs nothing.
    let broken = installed.and_then(|i| i.program.as_ref().filter(|p| !p.is_file()));
    let installed = installed.filter(|_| broken.is_none());
    let margin = installed.map_or(WITHOUT_SCHEDULE, |i| i.every + Duration::from_secs(3600));
    let first = unread
        .iter()
        .filter_map(|s| deadline(s).map(|d| (d, *s)))
        .min_by_key(|(d, _)| *d);
    let keeps = match (policy.max_age, policy.max_count) {
        (Some(age), Some(count)) => format!(
            "keeps {} days and the newest {count} per project ({})",
            age.as_secs() / DAY,
            policy.from
        ),
        (Some(age), None) => format!("keeps {} days ({})", age.as_secs() / DAY, policy.from),
        (None, Some(count)) => format!("keeps the newest {count} per project ({})", policy.from),
        (None, None) => format!("keeps everything ({})", policy.from),
    };
    let table = last_change
        .and_then(|t| now.duration_since(t).ok())
        .map_or_else(
            || "the events table has never been written".to_string(),
            |age| format!("the events table last changed {} ago", human(age)),
        );
    let periodic = match (broken, installed) {
        (Some(program), _) => format!(
            "the periodic ingest runs {}, which does not exist (`leastgrant schedule --write` points it at this binary)",
            program.display()
        ),
        (None, Some(i)) => format!("a periodic ingest runs ({})", i.text),
        (None, None) => {
            "no periodic ingest (`leastgrant schedule --write` installs one)".to_string()
        }
    };
    match first {
        Some((when, oldest)) if when < now + margin => {
            let age = now
                .duration_since(oldest.modified)
                .map_or_else(|_| "just now".to_string(), |a| format!("{} ago", human(a)));
            let goes = match when.duration_since(now) {
                Ok(left) if left > Duration::ZERO => {
                    format!(
                        "it is deleted at the first start of {agent} after {}",
                        date(when)
                    ) + &format!(" (in {})", human(left))
                }
                _ => format!("it is deleted the next time {agent} starts"),
            };
            finding(
                id,
                true,
                format!(
                    "{} of {} file(s) of {agent} history not read by `leastgrant ingest`; the oldest, {}, last written {age}: {agent} {keeps}, so {goes}. Run `leastgrant ingest --keep-deleted` now; {periodic}; {table}",
                    unread.len(),
                    seen.len(),
                    oldest.path.display()
                ),
            )
        }
        _ => {
            let state = if unread.is_empty() {
                format!("all {} file(s) read into the events table", seen.len())
            } else {
                format!(
                    "{} of {} file(s) not read yet, none near deletion",
                    unread.len(),
                    seen.len()
                )
            };
            finding(
                id,
                broken.is_some(),
                format!("{agent} {keeps}: {state}; {periodic}; {table}"),
            )
        }
    }
}

/// A file as the table would see it: read when the manifest lists its canonical name with its
/// size and modification time now (what `ingest` compares).
fn seen(source: &Source, path: &Path, manifest: &Manifest) -> Option<Seen> {
    let parts = (source.files)(path);
    let metas: Vec<std::fs::Metadata> = parts
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .collect();
    let modified = metas.iter().filter_map(|m| m.modified().ok()).max()?;
    let size: u64 = metas.iter().map(std::fs::Metadata::len).sum();
    let mtime_ns = modified
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let key = canonical(path).display().to_string();
    let read = manifest
        .sources
        .get(&key)
        .is_some_and(|e| e.size == size && e.mtime_ns == mtime_ns);
    Some(Seen {
        path: path.to_path_buf(),
        modified,
        read,
    })
}

/// The files beyond the newest `max_count` in their folder.
fn beyond_count(seen: &[Seen], max_count: Option<usize>) -> Vec<&Path> {
    let Some(max_count) = max_count else {
        return Vec::new();
    };
    let mut by_dir: std::collections::BTreeMap<&Path, Vec<&Seen>> = Default::default();
    for s in seen {
        by_dir
            .entry(s.path.parent().unwrap_or(Path::new("")))
            .or_default()
            .push(s);
    }
    let mut beyond = Vec::new();
    for files in by_dir.values_mut() {
        files.sort_by_key(|s| std::cmp::Reverse(s.modified));
        beyond.extend(files.iter().skip(max_count).map(|s| s.path.as_path()));
    }
    beyond
}

/// A time as `YYYY-MM-DD` (UTC).
fn date(time: SystemTime) -> String {
    let ms = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let iso = leastgrant_ingest::common::iso_millis(ms);
    iso.get(..10).unwrap_or(&iso).to_string()
}

/// A settings file as JSON (`None` when absent or unreadable, with why); `comments` where the
/// agent reads it as JSON with comments (Gemini CLI).
fn settings(path: &Path, comments: bool) -> Option<Result<Value, String>> {
    let bytes = std::fs::read(path).ok()?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => return Some(Err(e.to_string())),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let plain = comments.then(|| jsonc::plain(text)).flatten();
    Some(serde_json::from_str(plain.as_deref().unwrap_or(text)).map_err(|e| e.to_string()))
}

/// Claude Code's `cleanupPeriodDays`: managed settings over the user's
/// (`$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`), else 30.
fn claude_policy(home: &Path, env: &dyn Fn(&str) -> Option<String>) -> Option<Policy> {
    let user_dir = env("CLAUDE_CONFIG_DIR")
        .and_then(|list| list.split(',').next().map(|d| PathBuf::from(d.trim())))
        .unwrap_or_else(|| home.join(".claude"));
    let managed = if cfg!(target_os = "macos") {
        PathBuf::from("/Library/Application Support/ClaudeCode/managed-settings.json")
    } else {
        PathBuf::from("/etc/claude-code/managed-settings.json")
    };
    let mut notes = Vec::new();
    for file in [managed, user_dir.join("settings.json")] {
        match settings(&file, false) {
            None => {}
            Some(Err(error)) => notes.push(format!("{} is not JSON: {error}", file.display())),
            Some(Ok(value)) => match value.get("cleanupPeriodDays") {
                None => {}
                Some(days) => match days.as_f64() {
                    Some(days) if days >= 0.0 => {
                        return Some(Policy {
                            max_age: Some(Duration::from_secs_f64(days * DAY as f64)),
                            max_count: None,
                            from: format!("cleanupPeriodDays = {days} in {}", file.display()),
                        });
                    }
                    _ => notes.push(format!(
                        "cleanupPeriodDays = {days} in {} is not a number of days",
                        file.display()
                    )),
                },
            },
        }
    }
    notes.insert(0, "cleanupPeriodDays not set: the default".to_string());
    Some(Policy {
        max_age: Some(Duration::from_secs(DEFAULT_DAYS * DAY)),
        max_count: None,
        from: notes.join("; "),
    })
}

/// Gemini CLI's `general.sessionRetention` in `~/.gemini/settings.json`: `enabled` (on unless
/// set false: the default since March 2026), `maxAge` (`"30d"`, `"24h"`, `"4w"`; 30 days by
/// default) and `maxCount`. `None` when it is off.
fn gemini_policy(home: &Path, _env: &dyn Fn(&str) -> Option<String>) -> Option<Policy> {
    let file = home.join(".gemini/settings.json");
    let value = match settings(&file, true) {
        None => {
            return Some(Policy {
                max_age: Some(Duration::from_secs(DEFAULT_DAYS * DAY)),
                max_count: None,
                from: "sessionRetention not set: the default".to_string(),
            });
        }
        Some(Err(error)) => {
            return Some(Policy {
                max_age: Some(Duration::from_secs(DEFAULT_DAYS * DAY)),
                max_count: None,
                from: format!(
                    "{} cannot be read as JSON ({error}): the default assumed",
                    file.display()
                ),
            });
        }
        Some(Ok(value)) => value,
    };
    let retention = value.pointer("/general/sessionRetention");
    let field = |name: &str| retention.and_then(|r| r.get(name));
    if field("enabled").and_then(Value::as_bool) == Some(false) {
        return None;
    }
    let max_age_text = field("maxAge").and_then(Value::as_str);
    let max_age = match max_age_text {
        None => Some(Duration::from_secs(DEFAULT_DAYS * DAY)),
        Some(text) => Some(parse_age(text).unwrap_or(Duration::from_secs(DEFAULT_DAYS * DAY))),
    };
    let max_count = field("maxCount")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok());
    let from = match max_age_text {
        Some(text) if parse_age(text).is_some() => {
            format!("sessionRetention.maxAge = {text} in {}", file.display())
        }
        Some(text) => format!(
            "sessionRetention.maxAge = {text} in {} is not a duration: the default assumed",
            file.display()
        ),
        None => format!("sessionRetention in {}", file.display()),
    };
    Some(Policy {
        max_age,
        max_count,
        from,
    })
}

/// `"30d"`, `"24h"`, `"4w"`, `"2m"` (months of 30 days).
fn parse_age(text: &str) -> Option<Duration> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let number: u64 = text
        .get(..text.len() - unit.len_utf8())?
        .trim()
        .parse()
        .ok()?;
    let seconds = match unit {
        'h' => 3600,
        'd' => DAY,
        'w' => 7 * DAY,
        'm' => 30 * DAY,
        _ => return None,
    };
    Some(Duration::from_secs(number.checked_mul(seconds)?))
}
