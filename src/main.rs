//! The `leastgrant` command line: wires the crates together and owns nothing else.
//!
//! Subcommands: `check` (decide one command or tool call and explain why), `ingest`,
//! `simulate`, `merge` and `export` (the replay, its shards combined, and the frozen envelope),
//! `lint`, `allow`/`deny`/`forget` (grants), `rules`, and `install`/`uninstall`/`doctor` (the
//! hook in the agents' configuration, and whether it has what it needs), and `schedule` (a
//! periodic ingest).

// Every command prints through `shared::output`: these definitions come before the modules, so
// `println!`, `print!` and `eprintln!` in each of them are these, not the standard ones (which
// panic and exit 101 when the reader of standard output has gone away).
macro_rules! println {
    () => {
        $crate::shared::output::out(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::shared::output::out(format_args!($($arg)*), true)
    };
}
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::shared::output::out(format_args!($($arg)*), false)
    };
}
macro_rules! eprintln {
    () => {
        $crate::shared::output::err(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::shared::output::err(format_args!($($arg)*))
    };
}

mod check;
mod demo;
mod doctor;
mod ingest;
mod install;
mod log;
mod merge;
mod native;
mod policy;
mod report;
mod run;
mod schedule;
mod shared;
mod simulate;
mod workspace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The engine allocates many small strings per command; mimalloc makes classification about a
/// third faster than the system allocator (docs/decisions.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Learn least-privilege permissions for coding agents from the history they left on disk.
#[derive(Parser)]
#[command(name = "leastgrant", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The whole job: find the agent histories here (or use the demo history), ingest, replay
    /// the settings and baselines, write the report, print the table and where the report is.
    Run(run::RunArgs),
    /// Write the deterministic demo history (Claude Code transcripts) to a directory.
    Demo(demo::DemoArgs),
    /// Turn the replay's results into plots, `index.html` and `report.md`.
    Report(report::ReportArgs),
    /// Decide one shell command or tool call, and say why. Exit code: 0 allow, 1 ask, 2 deny,
    /// 3 error.
    Check(check::CheckArgs),
    /// Read every agent history on this machine (or the sources given) into the events table.
    Ingest(ingest::IngestArgs),
    /// Replay the events table under settings and baselines: what each would have let through
    /// that you refused, how often it asks, and which setting to use.
    Simulate(simulate::SimulateArgs),
    /// Combine the output directories of `simulate --shard K/N` into the tables and summary
    /// of one unsharded run.
    Merge(merge::MergeArgs),
    /// Freeze the envelopes a setting learned, for the hook (or inspect a frozen file).
    Export(simulate::ExportArgs),
    /// Lint a rules file: shadowed rules, removed prompts, overlaps that carve nothing, an
    /// unknown defaultMode, broad allows. Exit code: 0 clean, 1 findings, 3 error.
    Lint(policy::LintArgs),
    /// Always allow a command (every spelling of it) or a tool call, in this project.
    Allow(policy::GrantArgs),
    /// Always deny a command or a tool call, in this project.
    Deny(policy::GrantArgs),
    /// Forget a grant.
    Forget(policy::ForgetArgs),
    /// Show the rules and grants in force for this project.
    Rules(policy::RulesArgs),
    /// Add the hook to an agent's configuration (user, or this project with --project), keeping
    /// everything else in the file.
    Install(install::InstallArgs),
    /// Remove leastgrant's hook entries from an agent's configuration, and nothing else.
    Uninstall(install::UninstallArgs),
    /// Check the hook binary, the agents' configurations, the frozen envelope and the state
    /// files' modes. Exit code: 0 nothing failed, 1 a check failed, 3 error.
    Doctor(doctor::DoctorArgs),
    /// What the hook decided, newest first, with what decided each (the ledger), filtered by
    /// agent, project, verdict, time and reason code.
    Log(log::LogArgs),
    /// Run `ingest --keep-deleted` periodically (a systemd user timer, launchd agent or crontab
    /// line), so the events table keeps history the agents delete. Shows it; `--write`
    /// installs it, `--remove` removes it.
    Schedule(schedule::ScheduleArgs),
}

fn main() -> ExitCode {
    // A usage error must not exit 1 or 2, which mean ask and deny to a CI script.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = match error.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 3,
            };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Run(args) => run::run_command(&args),
        Command::Demo(args) => demo::demo_command(&args),
        Command::Report(args) => report::report_command(&args),
        Command::Check(args) => check::run(&args),
        Command::Ingest(args) => ingest::run_command(&args),
        Command::Simulate(args) => simulate::simulate_command(&args),
        Command::Merge(args) => merge::merge_command(&args),
        Command::Export(args) => simulate::export_command(&args),
        Command::Lint(args) => policy::lint_command(&args),
        Command::Allow(args) => {
            policy::grant_command(&args, leastgrant_engine::GrantVerdict::Allow)
        }
        Command::Deny(args) => policy::grant_command(&args, leastgrant_engine::GrantVerdict::Deny),
        Command::Forget(args) => policy::forget_command(&args),
        Command::Rules(args) => policy::rules_command(&args),
        Command::Install(args) => install::install_command(&args),
        Command::Uninstall(args) => install::uninstall_command(&args),
        Command::Doctor(args) => doctor::doctor_command(&args),
        Command::Log(args) => log::log_command(&args),
        Command::Schedule(args) => schedule::schedule_command(&args),
    };
    let code = match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("leastgrant: {error:#}");
            ExitCode::from(3)
        }
    };
    // A reader that went away ends the output quietly; any other failure to write it is an error.
    match shared::output::finish() {
        Some(error) => {
            eprintln!("leastgrant: cannot write standard output: {error}");
            ExitCode::from(3)
        }
        None => code,
    }
}
