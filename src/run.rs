//! `leastgrant run`: the whole job in one command — find the agent histories on this machine
//! (or, where there are none, generate the demo history and say so), ingest them, replay the
//! standard settings and the baselines, write the report, and print the table and where the
//! report is.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result, anyhow};
use clap::Args;
use leastgrant_demo::{DemoOptions, generate};
use leastgrant_replay::Options;
use leastgrant_replay::summary::DEFAULT_MISS_BUDGET;
use serde_json::json;

use leastgrant_hook::layout;

use crate::ingest::{IngestArgs, sources};
use crate::shared::summary_table::table_text;
use crate::simulate::{GridArgs, file_answers, simulate};

#[derive(Args)]
pub struct RunArgs {
    /// Use the demo history even when this machine has agent histories.
    #[arg(long)]
    demo: bool,
    /// Where everything goes [default: `~/.leastgrant` (`$LEASTGRANT_HOME`); the demo's own
    /// results under `demo/` there, apart from yours].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the JSON summary (with the report's path) instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run_command(args: &RunArgs) -> Result<ExitCode> {
    let home = layout::home();
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let state = args
        .out
        .clone()
        .unwrap_or_else(|| layout::state_dir_from_env(&home));
    // The state holds commands and results from the history: owner-only from the first run.
    leastgrant_ingest::table::create_private_dir(&state).map_err(|e| anyhow!("{e}"))?;
    let found = if args.demo {
        Vec::new()
    } else {
        sources(&IngestArgs::default(), &home, &cwd)
    };
    // Standing approvals alone are no history to replay.
    let calls = found
        .iter()
        .any(|f| !leastgrant_ingest::standing::is_standing(f.source.kind));
    let (files, base, note) = if !calls {
        let base = state.join("demo");
        let history = base.join("history");
        let made = generate(&history, &DemoOptions::default())?;
        let why = if args.demo {
            "the demo history, as asked"
        } else {
            "no agent history found on this machine, so this is the demo history"
        };
        let note = format!(
            "{why}: {} sessions in {} projects, generated in {}",
            made.sessions,
            made.projects,
            history.display()
        );
        let files = leastgrant_ingest::registry::files_at(
            &leastgrant_ingest::claude::SOURCE,
            &history.join("projects"),
        );
        (files, base, note)
    } else {
        let note = format!("{} history files found on this machine", found.len());
        (found, state.clone(), note)
    };
    if !args.json {
        eprintln!("leastgrant: {note}");
    }
    let data = base.join("data");
    let ingested =
        leastgrant_ingest::run::run(files, &data, &|_| {}).map_err(|e| anyhow!("{e}"))?;
    let settings = GridArgs::default().settings()?;
    let results = base.join("replay");
    // Your own history is replayed with your rules and grants, as the hook applies them; the
    // demo's projects are not yours, so it has none.
    let options = Options {
        answers: (base == state).then(|| file_answers(&state, Vec::new())),
        ..Options::default()
    };
    let summary = simulate(
        &data,
        &settings,
        &options,
        DEFAULT_MISS_BUDGET,
        &results,
        args.json,
    )?;
    let written = leastgrant_report::write_report(&results, &results.join("report"))
        .map_err(|e| anyhow!("{e}"))?;
    if args.json {
        let mut out = summary.to_json();
        out["history"] = json!({"note": note, "events": ingested.events, "events_table": data});
        out["report"] = json!(written.index);
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for note in &written.notes {
            eprintln!("leastgrant: {note}");
        }
        print!("{}", table_text(&summary));
        println!("\nreport: {}", written.index.display());
    }
    Ok(ExitCode::SUCCESS)
}
