//! The `leastgrant` command line: wires the crates together and owns nothing else.
//!
//! Subcommands today: `check` (decide one command or tool call and explain why). The replay,
//! report, export and install commands arrive with their crates.

mod check;

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
    /// Decide one shell command or tool call, and say why. Exit code: 0 allow, 1 ask, 2 deny,
    /// 3 error.
    Check(check::CheckArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("leastgrant: {error:#}");
            ExitCode::from(3)
        }
    }
}
