//! `leastgrant report`: the replay's results as plots and pages (filled by the report work).

use std::process::ExitCode;

use clap::Args;

#[derive(Args)]
pub struct ReportArgs {}

pub fn report_command(_args: &ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the report is not written yet")
}
