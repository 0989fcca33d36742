//! `leastgrant demo`: the command-line face of the demo generator (the `leastgrant-demo` crate):
//! its flags, the default directory, and what it prints.
//!
//! Owns nothing of the history itself: every byte written is the generator's.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use leastgrant_demo::{DEFAULT_DAYS, DEFAULT_PROJECTS, DEFAULT_SEED, DemoOptions, generate};
use serde_json::json;

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

pub fn demo_command(args: &DemoArgs) -> Result<ExitCode> {
    let out = args.out.clone().unwrap_or_else(|| {
        leastgrant_hook::layout::state_dir_from_env(&leastgrant_hook::layout::home()).join("demo")
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
