//! The demo history: a deterministic and realistic Claude Code history written as
//! `<out>/projects/<encoded project path>/<session uuid>.jsonl`, so that the whole pipeline
//! (ingest, simulate, report) runs on a machine with no history of its own. `leastgrant demo`
//! and `leastgrant run` (on a machine with no history) call [`generate`].
//!
//! Everything comes from one seeded generator (SplitMix64): no clock, no hash-map order, no
//! other randomness, so a seed writes the same bytes on every machine. Records are written key by
//! key in Claude Code's order. The texts that mark a refusal, a cancelled sibling and an
//! interrupt are built from the constants `leastgrant_ingest::outcome` compares against, so what
//! the demo writes is what ingest recognises. The calibration against the published figures is
//! in `datasets/README.md`.
//!
//! Must not: read a real history, write outside `<out>`, read the clock or the environment, or
//! depend on the engine, the replay, the report or the hook. It depends on the ingest crate only
//! for the transcript texts it must agree with, the date arithmetic and owner-only directories.
//!
//! Modules, bottom first: `text` (the generator, ids, JSON text), `vocabulary` (what each stack's
//! work looks like, the risky calls), `calibration` (the chances), `project` (projects, the
//! schedule), `session` (one session played out), and this file (writing them).

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::json;

mod calibration;
mod project;
mod session;
mod text;
mod vocabulary;

use crate::project::{encode_project_dir, projects, schedule};
use crate::session::Session;
use crate::text::Rng;

/// The seed `leastgrant demo` and `leastgrant run` use unless told otherwise.
pub const DEFAULT_SEED: u64 = 1;
/// How many projects by default.
pub const DEFAULT_PROJECTS: usize = 20;
/// How many days by default.
pub const DEFAULT_DAYS: u32 = 28;

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

/// Why the demo history was not written.
#[derive(Debug)]
#[non_exhaustive]
pub enum DemoError {
    /// `--projects` out of range.
    Projects(usize),
    /// `--days` out of range.
    Days(u32),
    /// `<out>/projects` holds files the demo did not write.
    Foreign(PathBuf),
    /// A file or directory could not be read, written or removed.
    Io {
        /// What was being done (`read`, `clear`, `write`).
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A directory could not be created.
    CreateDir(leastgrant_ingest::table::TableError),
}

impl fmt::Display for DemoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DemoError::Projects(n) => {
                write!(f, "--projects must be between 1 and 200, not `{n}`")
            }
            DemoError::Days(n) => write!(f, "--days must be between 1 and 366, not `{n}`"),
            DemoError::Foreign(dir) => write!(
                f,
                "{} holds files `leastgrant demo` did not write; choose another --out",
                dir.display()
            ),
            DemoError::Io { what, path, .. } => write!(f, "cannot {what} {}", path.display()),
            DemoError::CreateDir(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for DemoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DemoError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DemoError {
    let path = path.to_path_buf();
    move |source| DemoError::Io { what, path, source }
}

/// The file in `<out>` that says `leastgrant demo` wrote `<out>/projects` (so it may replace it).
const MARKER: &str = "demo.json";

/// Writes the demo history under `out` (`<out>/projects/…`, plus `<out>/demo.json`), replacing a
/// demo history written there before. Refuses an `<out>/projects` it did not write.
pub fn generate(out: &Path, options: &DemoOptions) -> Result<DemoSummary, DemoError> {
    if !(1..=200).contains(&options.projects) {
        return Err(DemoError::Projects(options.projects));
    }
    if !(1..=366).contains(&options.days) {
        return Err(DemoError::Days(options.days));
    }
    let projects_dir = out.join("projects");
    let marker = out.join(MARKER);
    if projects_dir.exists() {
        let empty = std::fs::read_dir(&projects_dir)
            .map_err(io("read", &projects_dir))?
            .next()
            .is_none();
        if !empty && !marker.is_file() {
            return Err(DemoError::Foreign(projects_dir));
        }
        std::fs::remove_dir_all(&projects_dir).map_err(io("clear", &projects_dir))?;
    }
    // Owner-only like the rest of leastgrant's state (the demo may be the first thing to
    // create `~/.leastgrant`).
    leastgrant_ingest::table::create_private_dir(&projects_dir).map_err(DemoError::CreateDir)?;
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
    std::fs::write(&marker, marker_text(None)).map_err(io("write", &marker))?;

    let projects = projects(options.projects);
    let plan = schedule(options.seed, options.days, &projects);
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
        leastgrant_ingest::table::create_private_dir(&dir).map_err(DemoError::CreateDir)?;
        let path = dir.join(format!("{}.jsonl", session.id));
        std::fs::write(&path, &session.text).map_err(io("write", &path))?;
        summary.files += 1;
        summary.sessions += 1;
        summary.events += session.tally.events;
        summary.refusals += session.tally.refused;
        if let Some(u) = used.get_mut(slot.project) {
            *u = true;
        }
    }
    summary.projects = used.iter().filter(|u| **u).count();
    std::fs::write(&marker, marker_text(Some(&summary))).map_err(io("write", &marker))?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_out_of_range_write_nothing() {
        let out =
            std::env::temp_dir().join(format!("leastgrant-demo-range-{}", std::process::id()));
        for options in [
            DemoOptions {
                projects: 0,
                ..DemoOptions::default()
            },
            DemoOptions {
                projects: 201,
                ..DemoOptions::default()
            },
            DemoOptions {
                days: 367,
                ..DemoOptions::default()
            },
        ] {
            let error = generate(&out, &options).unwrap_err();
            assert!(
                matches!(error, DemoError::Projects(_) | DemoError::Days(_)),
                "{error}"
            );
            assert!(!out.exists());
        }
    }
}
