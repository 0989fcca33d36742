//! `leastgrant log`: what the hook decided, newest first, read from the decision ledger and its
//! rotations (docs/formats.md, "Decision ledger"), filtered by agent, project, verdict, what the
//! agent was told, time and reason code, each entry with the envelope digest and what decided it.
//!
//! Owns: reading the ledger for a person or a script, and the filters. Must not: write to the
//! ledger or anything else (the hook alone appends to it).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use leastgrant_hook::catalogue::Agent;
use leastgrant_hook::files::{self, Links, Trust};
use leastgrant_hook::layout;
use serde_json::Value;

use crate::install::agent_parser;
use crate::shared::time::{now_us, parse_time};

/// The largest ledger file read (the hook rotates at 16 MiB).
const MAX_LEDGER_BYTES: u64 = 256 << 20;

/// Rotations looked for (`ledger.jsonl.1` …): the hook keeps three.
const MAX_ROTATIONS: u32 = 16;

#[derive(Args)]
pub struct LogArgs {
    /// Only this agent's decisions.
    #[arg(long, value_parser = agent_parser())]
    agent: Option<Agent>,
    /// Only decisions in this project (its root, or any directory under it).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Only this verdict of leastgrant's (allow, ask, deny).
    #[arg(long, value_parser = ["allow", "ask", "deny"])]
    verdict: Option<String>,
    /// Only what the agent was told (allow, ask, deny, abstain): an ask a surface cannot carry
    /// is a deny there.
    #[arg(long, value_parser = ["allow", "ask", "deny", "abstain"])]
    answered: Option<String>,
    /// From this time: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SSZ` (UTC), `today` (since midnight UTC)
    /// or an age such as `30m`, `6h`, `2d`.
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Up to this time (the same forms as --since).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Only decisions with this reason code (`floor.secret`), or a code family (`floor`).
    #[arg(long, value_name = "CODE")]
    reason: Option<String>,
    /// Show at most this many (0: all).
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// Print JSON (an array of ledger lines, newest first) instead of text.
    #[arg(long)]
    json: bool,
}

/// A time as microseconds: an age (`30m`, `6h`, `2d`) counts back from now, `today` is midnight
/// UTC, anything else is `parse_time`'s.
fn time_arg(text: &str, now: i64) -> Result<i64> {
    const DAY: i64 = 86_400_000_000;
    if text == "today" {
        return Ok(now - now.rem_euclid(DAY));
    }
    let unit = match text.chars().last() {
        Some('m') => Some(60_000_000),
        Some('h') => Some(3_600_000_000),
        Some('d') => Some(DAY),
        _ => None,
    };
    if let (Some(unit), Some(Ok(n))) = (
        unit,
        text.get(..text.len().saturating_sub(1))
            .map(str::parse::<i64>),
    ) {
        return Ok(now - n.saturating_mul(unit));
    }
    parse_time(text)
}

/// The ledger and its rotations, oldest first.
fn ledger_files(state_dir: &Path) -> Vec<PathBuf> {
    let ledger = layout::ledger_path(state_dir);
    let mut found = Vec::new();
    for n in (1..=MAX_ROTATIONS).rev() {
        let mut name = ledger.as_os_str().to_os_string();
        name.push(format!(".{n}"));
        let rotated = PathBuf::from(name);
        if rotated.exists() {
            found.push(rotated);
        }
    }
    found.push(ledger);
    found
}

/// Every line of the ledger files that is JSON, oldest first; the number that were not.
fn read_lines(files_in_order: &[PathBuf]) -> Result<(Vec<Value>, usize)> {
    let mut lines = Vec::new();
    let mut torn = 0;
    for file in files_in_order {
        // The ledger is leastgrant's own: never read through a link, nor one another user wrote.
        let Some(bytes) = files::read_regular(file, Links::Refuse, Trust::Owner, MAX_LEDGER_BYTES)?
        else {
            continue;
        };
        for line in bytes.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Value>(line) {
                Ok(value) if value.is_object() => lines.push(value),
                _ => torn += 1,
            }
        }
    }
    Ok((lines, torn))
}

/// A ledger line's verdict and what the agent was told: input the hook could not read was
/// refused wherever the agent honours a refusal.
fn verdicts(line: &Value) -> (&str, &str) {
    if line["kind"] == "unreadable" {
        return ("deny", "deny");
    }
    (
        line["verdict"].as_str().unwrap_or(""),
        line["answered"].as_str().unwrap_or(""),
    )
}

struct Filter {
    agent: Option<&'static str>,
    projects: Vec<String>,
    verdict: Option<String>,
    answered: Option<String>,
    since: Option<i64>,
    until: Option<i64>,
    reason: Option<String>,
}

impl Filter {
    fn keeps(&self, line: &Value) -> bool {
        if !matches!(line["kind"].as_str(), Some("decision" | "unreadable")) {
            return false;
        }
        let (verdict, answered) = verdicts(line);
        let ts = line["ts_us"].as_i64().unwrap_or(0);
        let project = line["project"].as_str().unwrap_or("");
        let under = |root: &String| {
            project == root
                || project
                    .strip_prefix(root.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        let reason_hit = |code: &str| match &self.reason {
            None => true,
            Some(want) => {
                code == want
                    || code
                        .strip_prefix(want.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
            }
        };
        let codes: Vec<&str> = match line["kind"].as_str() {
            Some("unreadable") => vec!["hook.unreadable"],
            _ => line["reasons"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default(),
        };
        self.agent.is_none_or(|a| line["agent"] == a)
            && (self.projects.is_empty() || self.projects.iter().any(under))
            && self.verdict.as_deref().is_none_or(|v| v == verdict)
            && self.answered.as_deref().is_none_or(|v| v == answered)
            && self.since.is_none_or(|t| ts >= t)
            && self.until.is_none_or(|t| ts <= t)
            && (self.reason.is_none() || codes.iter().any(|c| reason_hit(c)))
    }
}

/// The project as written and as its canonical path (the hook records the agent's spelling).
fn project_spellings(dir: &Path) -> Result<Vec<String>> {
    let absolute = std::path::absolute(dir)?;
    let mut spellings = vec![absolute.display().to_string()];
    if let Ok(canonical) = std::fs::canonicalize(&absolute) {
        spellings.push(canonical.display().to_string());
    }
    for s in &mut spellings {
        while s.len() > 1 && s.ends_with('/') {
            s.pop();
        }
    }
    spellings.dedup();
    Ok(spellings)
}

/// `2026-10-01 09:14:03Z` of a ledger time.
fn when(ts_us: i64) -> String {
    let iso = leastgrant_ingest::common::iso_millis(ts_us.div_euclid(1000));
    // `YYYY-MM-DDTHH:MM:SS.mmmZ` → `YYYY-MM-DD HH:MM:SSZ`.
    match (iso.get(..10), iso.get(11..19)) {
        (Some(day), Some(time)) => format!("{day} {time}Z"),
        _ => iso,
    }
}

/// What the call was, in one line: the command, else the tool and its input.
fn call_text(line: &Value) -> String {
    let tool = line["tool_name"].as_str().unwrap_or("?");
    let text = match line["tool_input"].get("command").and_then(Value::as_str) {
        Some(command) => format!("{tool}: {command}"),
        None if line["tool_input"].is_null() => tool.to_string(),
        None => format!("{tool} {}", line["tool_input"]),
    };
    let one_line = text.replace(['\n', '\r'], " ");
    match one_line.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", one_line.get(..cut).unwrap_or("")),
        None => one_line,
    }
}

fn print_entry(line: &Value) {
    let ts = line["ts_us"].as_i64().unwrap_or(0);
    let agent = line["agent"].as_str().unwrap_or("?");
    let (verdict, answered) = verdicts(line);
    if line["kind"] == "unreadable" {
        println!("{}  {agent}  deny  input it could not read", when(ts));
        println!(
            "    why: hook.unreadable: {}",
            line["problem"].as_str().unwrap_or("?")
        );
        return;
    }
    let told = if answered == verdict {
        String::new()
    } else {
        format!(
            " (told {})",
            if answered.is_empty() { "?" } else { answered }
        )
    };
    println!(
        "{}  {agent}  {verdict}{told}  {}  {}",
        when(ts),
        line["event"].as_str().unwrap_or("?"),
        call_text(line)
    );
    let envelope = match line["envelope"].as_str() {
        Some(digest) => format!("envelope {}", digest.get(..12).unwrap_or(digest)),
        None => "no envelope".to_string(),
    };
    let setting = line["setting"]
        .as_str()
        .map(|s| format!(", setting {s}"))
        .unwrap_or_default();
    println!(
        "    project {}  {envelope}{setting}",
        line["project"].as_str().unwrap_or("?")
    );
    // Lines written before `evidence` was recorded carry the headline only.
    let why = line["evidence"]
        .as_str()
        .map(str::to_string)
        .or_else(|| line["headline"].as_str().map(str::to_string))
        .unwrap_or_else(|| "no reason recorded".to_string());
    let codes: Vec<&str> = line["reasons"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    println!("    why: {why}");
    if !codes.is_empty() {
        println!("    reasons: {}", codes.join(", "));
    }
}

/// `leastgrant log`.
pub fn log_command(args: &LogArgs) -> Result<ExitCode> {
    let now = now_us();
    let since = args
        .since
        .as_deref()
        .map(|t| time_arg(t, now))
        .transpose()?;
    let until = args
        .until
        .as_deref()
        .map(|t| time_arg(t, now))
        .transpose()?;
    if let (Some(s), Some(u)) = (since, until)
        && s > u
    {
        bail!("--since is after --until");
    }
    let filter = Filter {
        agent: args.agent.map(Agent::as_str),
        projects: match &args.project {
            Some(dir) => project_spellings(dir)?,
            None => Vec::new(),
        },
        verdict: args.verdict.clone(),
        answered: args.answered.clone(),
        since,
        until,
        reason: args.reason.clone(),
    };
    let state_dir = layout::state_dir_from_env(&layout::home());
    let ledger_files = ledger_files(&state_dir);
    let (lines, torn) = read_lines(&ledger_files)?;
    // Newest first; lines of one time keep the ledger's order reversed.
    let mut kept: Vec<&Value> = lines.iter().filter(|l| filter.keeps(l)).collect();
    kept.reverse();
    kept.sort_by_key(|l| std::cmp::Reverse(l["ts_us"].as_i64().unwrap_or(0)));
    let total = kept.len();
    if args.limit > 0 {
        kept.truncate(args.limit);
    }
    if torn > 0 {
        eprintln!("leastgrant: {torn} ledger line(s) are not JSON and were skipped");
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&kept)?);
        return Ok(ExitCode::SUCCESS);
    }
    if kept.is_empty() {
        println!(
            "no decision matches in {}",
            layout::ledger_path(&state_dir).display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for line in &kept {
        print_entry(line);
    }
    if total > kept.len() {
        println!(
            "({} of {total} shown, newest first; --limit 0 shows all)",
            kept.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}
