//! `leastgrant merge`: combine the output directories of `simulate --shard K/N` into the tables
//! and summary of one unsharded run, and print the table a person acts on.
//!
//! Must not: replay anything; the merge itself is `leastgrant_replay::merge`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::shared::summary_table::table_text;

#[derive(Args)]
pub struct MergeArgs {
    /// The shards' output directories (each written by `simulate --shard K/N`), in any order.
    #[arg(value_name = "SHARD_DIR", required = true)]
    shards: Vec<PathBuf>,
    /// Where the merged result tables go.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Print the JSON summary instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn merge_command(args: &MergeArgs) -> Result<ExitCode> {
    let summary = leastgrant_replay::merge::merge(&args.shards, &args.out)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary.to_json())?);
    } else {
        print!("{}", table_text(&summary));
        println!("\nresults: {}", args.out.display());
    }
    Ok(ExitCode::SUCCESS)
}
