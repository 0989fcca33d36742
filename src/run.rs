//! `leastgrant run`: the whole job in one command (filled by the main-job work).

use std::process::ExitCode;

use clap::Args;

#[derive(Args)]
pub struct RunArgs {}

pub fn run_command(_args: &RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the main job is not written yet")
}
