//! `leastgrant demo`: the deterministic demo history (filled by the demo-history work).

use std::process::ExitCode;

use clap::Args;

#[derive(Args)]
pub struct DemoArgs {}

pub fn demo_command(_args: &DemoArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the demo history is not written yet")
}
