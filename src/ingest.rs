//! `leastgrant ingest`: every agent history on this machine (or the sources given) into the
//! events table, with a progress bar on a terminal and a summary of what was skipped and why
//! (each skipped file by name). A place given that does not exist is an error (exit 3).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use indicatif::{ProgressBar, ProgressStyle};
use leastgrant_hook::layout;
use leastgrant_ingest::project::{Basis, Placing};
use leastgrant_ingest::registry::{SOURCES, SourceFile, check_places, discover};
use leastgrant_ingest::run::{Options, Progress, Summary, run_with};
use leastgrant_ingest::source::{Machine, Source};
use serde_json::json;

#[derive(Args, Default)]
pub struct IngestArgs {
    /// One repeatable flag per source of the registry (`--claude DIR`, `--cursor PATH`, …).
    #[command(flatten)]
    places: SourcePlaces,
    /// Where the events table goes [default: `~/.leastgrant/data`].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep the events of sources that no longer exist. By default a source that is gone is
    /// released: its events leave the table, so the table holds what the histories hold. Claude
    /// Code deletes transcripts older than `cleanupPeriodDays` (30 by default): with this flag
    /// the table outlives them
    #[arg(long)]
    keep_deleted: bool,
    /// Put every session read into this project, whatever it recorded or touched: for a
    /// history whose sessions cannot show their root (relative paths only). Only with the
    /// places to read named (`--specstory DIR`, …): it applies to what they hold. A later run
    /// without it (or with another root) reads those sources again and places them by what
    /// they recorded. By default a session's project is the working directory it recorded,
    /// else the root of the paths it touched, else where its file sits (docs/formats.md)
    #[arg(long, value_name = "DIR")]
    project_root: Option<String>,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    json: bool,
}

/// The places named on the command line, per source: a repeatable flag for each source in
/// `leastgrant_ingest::registry::SOURCES`, with the flag name, value name and help it declares.
#[derive(Default)]
struct SourcePlaces(Vec<(&'static Source, Vec<PathBuf>)>);

impl FromArgMatches for SourcePlaces {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self(
            SOURCES
                .iter()
                .map(|source| {
                    let places = matches
                        .get_many::<PathBuf>(source.flag.long)
                        .map(|places| places.cloned().collect())
                        .unwrap_or_default();
                    (*source, places)
                })
                .collect(),
        ))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for SourcePlaces {
    fn augment_args(command: Command) -> Command {
        SOURCES.iter().fold(command, |command, source| {
            command.arg(
                Arg::new(source.flag.long)
                    .long(source.flag.long)
                    .value_name(source.flag.value_name)
                    .help(source.flag.help)
                    .action(ArgAction::Append)
                    .value_parser(clap::value_parser!(PathBuf)),
            )
        })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

/// The sources to read: those named, else everything discoverable.
pub fn sources(args: &IngestArgs, home: &Path, cwd: &Path) -> Vec<SourceFile> {
    let state_dir = layout::state_dir_from_env(home);
    let env = |name: &str| std::env::var_os(name);
    let machine = Machine {
        home,
        cwd,
        state_dir: &state_dir,
        env: &env,
    };
    discover(&args.places.0, &machine)
}

pub fn run_command(args: &IngestArgs) -> Result<ExitCode> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| layout::data_dir(&layout::state_dir_from_env(&home)));
    check_places(&args.places.0)?;
    let placing = placing(args, &home)?;
    let files = sources(args, &home, &cwd);
    let bar = (std::io::stderr().is_terminal() && !args.json).then(|| {
        let bar = ProgressBar::new(files.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} files  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let progress = |p: Progress| {
        if let Some(bar) = &bar {
            bar.set_position(p.files);
            bar.set_message(format!(
                "{:.1} MB, {} events",
                p.bytes as f64 / 1e6,
                p.events
            ));
        }
    };
    let waiting = || {
        eprintln!(
            "leastgrant: another ingest is writing {}; waiting for it to finish",
            out.display()
        );
    };
    let options = Options {
        keep_deleted: args.keep_deleted,
        progress: &progress,
        waiting: &waiting,
        placing,
    };
    let summary = run_with(files, &out, &options).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary_json(&summary, &out))?
        );
    } else {
        print!("{}", summary_text(&summary, &out));
    }
    Ok(ExitCode::SUCCESS)
}

/// How this run places sessions: `--project-root` (made absolute: it names the project as the
/// history would, on any machine) and this machine's home, which is never a project.
fn placing(args: &IngestArgs, home: &Path) -> Result<Placing> {
    let forced = match &args.project_root {
        None => None,
        Some(_) if !args.places.0.iter().any(|(_, places)| !places.is_empty()) => {
            anyhow::bail!(
                "`--project-root` puts every session read into one project: name the places \
                 to read too (`--specstory DIR`, `--claude DIR`, …), not every history on this \
                 machine"
            )
        }
        Some(root) if root.trim().is_empty() => anyhow::bail!("`--project-root` is empty"),
        Some(root) => Some(
            std::path::absolute(root)
                .with_context(|| format!("cannot make `{root}` absolute"))?
                .display()
                .to_string(),
        ),
    };
    Ok(Placing {
        forced,
        home: Some(home.display().to_string()),
    })
}

fn summary_json(s: &Summary, out: &Path) -> serde_json::Value {
    json!({
        "events": s.events,
        "new_events": s.new_events,
        "duplicates": s.duplicates,
        "by_agent": s.by_agent,
        "by_outcome": s.by_outcome,
        "by_project_basis": s.by_basis,
        "bad_lines": s.bad.0,
        "files": s.files_read,
        "files_unchanged": s.files_unchanged,
        "bytes": s.bytes_read,
        "skipped_files": skipped_by_reason(s),
        "released": s.released,
        "kept_deleted": s.kept_deleted,
        "decisions": {
            "recorded": s.decisions.recorded,
            "joined": s.decisions.joined,
            "other_session": s.decisions.other_session,
            "unmatched": s.decisions.unmatched,
        },
        "table": out.display().to_string(),
    })
}

/// The files not read, by reason.
fn skipped_by_reason(s: &Summary) -> std::collections::BTreeMap<&'static str, Vec<String>> {
    let mut by_reason: std::collections::BTreeMap<&'static str, Vec<String>> = Default::default();
    for file in &s.skipped {
        by_reason
            .entry(file.reason)
            .or_default()
            .push(file.path.display().to_string());
    }
    by_reason
}

fn summary_text(s: &Summary, out: &Path) -> String {
    let mut text = format!(
        "read {} file(s) ({:.1} MB; {} unchanged), {} new event(s), {} duplicate(s) dropped\n",
        s.files_read,
        s.bytes_read as f64 / 1e6,
        s.files_unchanged,
        s.new_events,
        s.duplicates
    );
    text.push_str(&format!(
        "the table at {} holds {} event(s)\n",
        out.display(),
        s.events
    ));
    for (agent, n) in &s.by_agent {
        text.push_str(&format!("  {agent}: {n}\n"));
    }
    let outcomes: Vec<String> = s
        .by_outcome
        .iter()
        .map(|(o, n)| format!("{o} {n}"))
        .collect();
    if !outcomes.is_empty() {
        text.push_str(&format!("  outcomes: {}\n", outcomes.join(", ")));
    }
    let bases: Vec<String> = Basis::ALL
        .iter()
        .filter_map(|b| Some(format!("{} {}", b.as_str(), s.by_basis.get(b.as_str())?)))
        .collect();
    if !bases.is_empty() {
        text.push_str(&format!("  projects from: {}\n", bases.join(", ")));
    }
    if s.released > 0 {
        text.push_str(&format!(
            "released {} source(s) that no longer exist (their events left the table)\n",
            s.released
        ));
    }
    if s.kept_deleted > 0 {
        text.push_str(&format!(
            "kept the events of {} source(s) that no longer exist (--keep-deleted)\n",
            s.kept_deleted
        ));
    }
    let d = &s.decisions;
    if d.recorded > 0 {
        text.push_str(&format!(
            "decisions recorded apart from the calls (OpenTelemetry) for {} call(s): {} joined, \
             {} on a row of another session, {} with no call in the table\n",
            d.recorded, d.joined, d.other_session, d.unmatched
        ));
    }
    if !s.bad.is_empty() {
        text.push_str("skipped or repaired input:\n");
        for (reason, n) in &s.bad.0 {
            text.push_str(&format!("  {reason}: {n}\n"));
        }
    }
    if !s.skipped.is_empty() {
        text.push_str(&format!("skipped {} file(s), not read:\n", s.skipped.len()));
        for file in &s.skipped {
            text.push_str(&format!("  {}: {}\n", file.reason, file.path.display()));
        }
    }
    text
}
