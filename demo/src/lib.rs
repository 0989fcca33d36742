//! `leastgrant demo`: the demo history, a deterministic and realistic Claude Code history written
//! as `<out>/projects/<encoded project path>/<session uuid>.jsonl`, so that the whole pipeline
//! (ingest, simulate, report) runs on a machine with no history of its own.
//!
//! Everything comes from one seeded generator written here (SplitMix64): no clock, no hash-map
//! order, no other randomness, so a seed writes the same bytes on every machine. Records are
//! written key by key in Claude Code's order. The texts that mark a refusal, a cancelled sibling
//! and an interrupt are built from the constants `leastgrant_ingest::outcome` compares against.
//! The calibration against the published figures is in `datasets/README.md`.
//!
//! Owns nothing else: it never reads a real history and never writes outside `<out>`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use clap::Args;
use leastgrant_ingest::common::{days_from_civil, iso_millis as iso};
use leastgrant_ingest::outcome::{CANCELLED, INTERRUPT_MARKER, REFUSED};
use serde_json::json;

mod session;
mod text;
mod vocabulary;

use session::*;
use text::*;
use vocabulary::*;

const DEFAULT_SEED: u64 = 1;
const DEFAULT_PROJECTS: usize = 20;
const DEFAULT_DAYS: u32 = 28;

/// Write the deterministic demo history (Claude Code transcripts) to a directory.
#[derive(Args)]
pub struct DemoArgs {
    /// Where to write it; the transcripts go to `<DIR>/projects` [default: `~/.leastgrant/demo`].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The seed: the same seed writes the same bytes.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// How many projects (1 to 200).
    #[arg(long, default_value_t = DEFAULT_PROJECTS)]
    projects: usize,
    /// How many days of history (1 to 366), starting on a Monday.
    #[arg(long, default_value_t = DEFAULT_DAYS)]
    days: u32,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    json: bool,
}

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoOptions {
    /// The seed of the generator.
    pub seed: u64,
    /// How many projects.
    pub projects: usize,
    /// How many days, from Monday 2026-06-01.
    pub days: u32,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            seed: DEFAULT_SEED,
            projects: DEFAULT_PROJECTS,
            days: DEFAULT_DAYS,
        }
    }
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DemoSummary {
    /// Transcript files written (one per session).
    pub files: usize,
    /// Sessions.
    pub sessions: usize,
    /// Projects with at least one session.
    pub projects: usize,
    /// Tool calls (one event each once ingested).
    pub events: u64,
    /// Tool calls a person refused at the permission prompt.
    pub refusals: u64,
}

pub fn demo_command(args: &DemoArgs) -> Result<ExitCode> {
    let out = args.out.clone().unwrap_or_else(|| {
        crate::ingest::default_state_dir(&crate::simulate::home_dir()).join("demo")
    });
    let options = DemoOptions {
        seed: args.seed,
        projects: args.projects,
        days: args.days,
    };
    let summary = generate(&out, &options)?;
    let projects_dir = out.join("projects");
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "out": out.display().to_string(),
                "projects_dir": projects_dir.display().to_string(),
                "seed": options.seed,
                "days": options.days,
                "files": summary.files,
                "sessions": summary.sessions,
                "projects": summary.projects,
                "events": summary.events,
                "refusals": summary.refusals,
            }))?
        );
    } else {
        println!(
            "wrote the demo history to {}: {} sessions in {} projects over {} days, {} tool calls, \
             {} refused (seed {})",
            projects_dir.display(),
            summary.sessions,
            summary.projects,
            options.days,
            summary.events,
            summary.refusals,
            options.seed
        );
        println!(
            "read it with: leastgrant ingest --claude {}",
            projects_dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The file in `<out>` that says `leastgrant demo` wrote `<out>/projects` (so it may replace it).
const MARKER: &str = "demo.json";

/// Writes the demo history under `out` (`<out>/projects/…`, plus `<out>/demo.json`), replacing a
/// demo history written there before. Refuses an `<out>/projects` it did not write.
pub fn generate(out: &Path, options: &DemoOptions) -> Result<DemoSummary> {
    if !(1..=200).contains(&options.projects) {
        bail!(
            "--projects must be between 1 and 200, not `{}`",
            options.projects
        );
    }
    if !(1..=366).contains(&options.days) {
        bail!("--days must be between 1 and 366, not `{}`", options.days);
    }
    let projects_dir = out.join("projects");
    let marker = out.join(MARKER);
    if projects_dir.exists() {
        let empty = std::fs::read_dir(&projects_dir)
            .with_context(|| format!("cannot read {}", projects_dir.display()))?
            .next()
            .is_none();
        if !empty && !marker.is_file() {
            bail!(
                "{} holds files `leastgrant demo` did not write; choose another --out",
                projects_dir.display()
            );
        }
        std::fs::remove_dir_all(&projects_dir)
            .with_context(|| format!("cannot clear {}", projects_dir.display()))?;
    }
    // Owner-only like the rest of leastgrant's state (the demo may be the first thing to
    // create `~/.leastgrant`).
    leastgrant_ingest::table::create_private_dir(&projects_dir)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let marker_text = |summary: Option<&DemoSummary>| {
        let mut value = json!({
            "generator": "leastgrant demo",
            "seed": options.seed,
            "projects_requested": options.projects,
            "days": options.days,
        });
        if let Some(s) = summary {
            value["summary"] = json!({
                "files": s.files,
                "sessions": s.sessions,
                "projects": s.projects,
                "events": s.events,
                "refusals": s.refusals,
            });
        }
        format!("{value:#}\n")
    };
    // Written first, so an interrupted run can be replaced by the next one.
    std::fs::write(&marker, marker_text(None))
        .with_context(|| format!("cannot write {}", marker.display()))?;

    let projects = projects(options.projects);
    let plan = schedule(options, &projects);
    let mut summary = DemoSummary::default();
    let mut used = vec![false; projects.len()];
    for (index, slot) in plan.iter().enumerate() {
        let Some(project) = projects.get(slot.project) else {
            continue;
        };
        let other = projects
            .get((slot.project + 1) % projects.len())
            .map_or("dotfiles", |p| p.name.as_str());
        let mut rng = Rng::new(options.seed, 1 + index as u64);
        let mut session = Session::new(project, other, slot, &mut rng);
        session.play();
        let dir = projects_dir.join(encode_project_dir(&project.root));
        leastgrant_ingest::table::create_private_dir(&dir).map_err(|e| anyhow::anyhow!("{e}"))?;
        let path = dir.join(format!("{}.jsonl", session.id));
        std::fs::write(&path, &session.text)
            .with_context(|| format!("cannot write {}", path.display()))?;
        summary.files += 1;
        summary.sessions += 1;
        summary.events += session.tally.events;
        summary.refusals += session.tally.refused;
        if let Some(u) = used.get_mut(slot.project) {
            *u = true;
        }
    }
    summary.projects = used.iter().filter(|u| **u).count();
    std::fs::write(&marker, marker_text(Some(&summary)))
        .with_context(|| format!("cannot write {}", marker.display()))?;
    Ok(summary)
}

/// Claude Code's directory name for a working directory: every character outside `[A-Za-z0-9]`
/// becomes `-` (`/home/demo/src/app` → `-home-demo-src-app`).
fn encode_project_dir(root: &str) -> String {
    root.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Calibration (datasets/README.md explains each number).

/// Share of sessions started in each permission mode: `default` is attended; `acceptEdits` still
/// asks before shell commands, fetches and MCP calls; `bypassPermissions` never asks.
const MODE_DEFAULT: f64 = 0.14;
const MODE_ACCEPT_EDITS: f64 = 0.46;
/// Chance that a turn carries one risky call (a credential read, `curl … | sh`, a force push…).
const RISKY_PER_TURN: f64 = 0.055;
/// Chance that a person refuses a risky call they are asked about.
const REFUSE_RISKY: f64 = 0.85;
/// Chance that a person refuses a routine call they are asked about.
const REFUSE_ROUTINE: f64 = 0.003;
/// Chance that a refusal carries the person's words (the agent then carries on).
const FEEDBACK_RISKY: f64 = 0.3;
const FEEDBACK_ROUTINE: f64 = 0.6;
/// Chance that a long-running call (a build, a test run, a dev server, a sub-agent) is
/// interrupted.
const INTERRUPT_LONG: f64 = 0.012;

// ---------------------------------------------------------------------------------------------
// Projects and the schedule.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stack {
    Rust,
    Node,
    Python,
    Go,
}

struct Project {
    name: String,
    /// The Python package name (`-` → `_`).
    package: String,
    stack: Stack,
    root: String,
    weight: u64,
}

const HOME: &str = "/home/demo";

const NAMES: [(Stack, [&str; 5]); 4] = [
    (
        Stack::Rust,
        [
            "ledger-core",
            "tilewright",
            "logshipper",
            "rivet-cli",
            "quill-parser",
        ],
    ),
    (
        Stack::Node,
        [
            "storefront-web",
            "admin-console",
            "standup-bot",
            "docs-site",
            "pricing-widget",
        ],
    ),
    (
        Stack::Python,
        [
            "etl-nightly",
            "churn-model",
            "invoice-api",
            "scrape-kit",
            "geo-tools",
        ],
    ),
    (
        Stack::Go,
        [
            "edge-proxy",
            "metrics-agent",
            "kvstore",
            "deploy-bot",
            "feature-flags",
        ],
    ),
];

/// `count` projects, the stacks interleaved so that any prefix mixes them; the first are the
/// busiest.
fn projects(count: usize) -> Vec<Project> {
    (0..count)
        .map(|i| {
            let (stack, names) = NAMES[i % 4];
            let base = names[(i / 4) % 5];
            let name = if i < 20 {
                base.to_string()
            } else {
                format!("{base}-{}", i / 20 + 1)
            };
            Project {
                package: name.replace('-', "_"),
                root: format!("{HOME}/src/{name}"),
                name,
                stack,
                weight: 8u64.saturating_sub(i as u64 / 2).max(1),
            }
        })
        .collect()
}

/// One session in the schedule.
struct Slot {
    project: usize,
    start_ms: i64,
    day: u32,
}

/// Monday 2026-06-01, as days since 1970-01-01.
fn start_day() -> i64 {
    days_from_civil(2026, 6, 1)
}

/// Several sessions on each working day, now and then one at a weekend; projects drawn by
/// weight, every project getting at least one session when there are enough.
fn schedule(options: &DemoOptions, projects: &[Project]) -> Vec<Slot> {
    let mut rng = Rng::new(options.seed, 0);
    let total_weight: u64 = projects.iter().map(|p| p.weight).sum();
    let mut slots = Vec::new();
    for day in 0..options.days {
        let days = start_day() + i64::from(day);
        let weekday = (days + 3).rem_euclid(7); // 0 is Monday
        let count = if weekday < 5 {
            rng.range(3, 7)
        } else {
            u64::from(rng.chance(0.3))
        };
        let mut starts: Vec<i64> = (0..count)
            .map(|_| {
                let minute = rng.range(7 * 60, 18 * 60 + 30) as i64;
                (days * 86_400 + minute * 60 + rng.below(60) as i64) * 1000 + rng.below(1000) as i64
            })
            .collect();
        starts.sort_unstable();
        for start_ms in starts {
            let mut draw = rng.below(total_weight);
            let mut project = 0;
            for (i, p) in projects.iter().enumerate() {
                if draw < p.weight {
                    project = i;
                    break;
                }
                draw -= p.weight;
            }
            slots.push(Slot {
                project,
                start_ms,
                day,
            });
        }
    }
    // Every project at least once: a missing one takes the latest session of the busiest.
    for missing in 0..projects.len() {
        if slots.len() < projects.len() {
            break;
        }
        if slots.iter().any(|s| s.project == missing) {
            continue;
        }
        let mut counts = vec![0usize; projects.len()];
        for s in &slots {
            if let Some(c) = counts.get_mut(s.project) {
                *c += 1;
            }
        }
        let busiest = (0..projects.len())
            .max_by_key(|i| (counts.get(*i).copied().unwrap_or(0), usize::MAX - i))
            .unwrap_or(0);
        if let Some(slot) = slots.iter_mut().rev().find(|s| s.project == busiest) {
            slot.project = missing;
        }
    }
    slots
}
