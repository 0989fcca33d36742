//! `leastgrant report`: the replay's results as plots (SVG and PNG), one self-contained
//! `index.html` and a `report.md` (the work is `leastgrant_report::write_report`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use serde_json::json;

#[derive(Args)]
pub struct ReportArgs {
    /// The replay's output directory (default ~/.leastgrant/replay, as `simulate` writes it).
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Where to write the report (default <results>/report).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print what was written as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `~/.leastgrant/replay` (or under `$LEASTGRANT_HOME`): where `simulate` writes by default.
pub fn default_results_dir() -> PathBuf {
    use leastgrant_hook::layout;
    layout::replay_dir(&layout::state_dir_from_env(&layout::home()))
}

pub fn report_command(args: &ReportArgs) -> Result<ExitCode> {
    let results = args.results.clone().unwrap_or_else(default_results_dir);
    let out = args.out.clone().unwrap_or_else(|| results.join("report"));
    let written = leastgrant_report::write_report(&results, &out)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "index": written.index.display().to_string(),
                "markdown": written.markdown.display().to_string(),
                "files": written.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "font": written.font.as_ref().map(|p| p.display().to_string()),
                "notes": written.notes,
            }))?
        );
    } else {
        let pngs = written
            .files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "png"))
            .count();
        let svgs = written
            .files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "svg"))
            .count();
        println!("report: {}", written.index.display());
        println!(
            "  {} and {svgs} SVG, {pngs} PNG plots in {}",
            written.markdown.display(),
            out.join(leastgrant_report::PLOTS_DIR).display()
        );
        for note in &written.notes {
            println!("  note: {note}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
