//! `leastgrant check`: one decision, explained for a person or as JSON for CI. The decision
//! and its JSON are the hook crate's `check` (the Python package calls the same); this file
//! reads the flags and writes the text.

use std::process::ExitCode;

use clap::Args;
use leastgrant_engine::{Analysis, Decision, ToolCall, Verdict};
use leastgrant_hook::check;

use crate::shared::time::{now_us, parse_time};
use crate::workspace::Location;
use serde_json::Value;

#[derive(Args)]
pub struct CheckArgs {
    /// The shell command to check (omit with --tool).
    command: Option<String>,
    /// A structured tool name instead of a shell command (`Read`, `Edit`, `WebFetch`, …).
    #[arg(long, requires = "input")]
    tool: Option<String>,
    /// The tool's input as JSON.
    #[arg(long)]
    input: Option<String>,
    #[command(flatten)]
    location: Location,
    /// Also apply the permission rules of Claude Code's own settings (`~/.claude/settings.json`,
    /// `.claude/settings.json`, `.claude/settings.local.json`).
    #[arg(long)]
    claude_settings: bool,
    /// Ignore the grants saved with `leastgrant allow|deny`.
    #[arg(long)]
    no_grants: bool,
    /// Decide with a frozen envelope (`leastgrant export`): its setting, and what its project
    /// learned, as the hook would.
    #[arg(long, value_name = "FILE")]
    envelope: Option<std::path::PathBuf>,
    /// Decide as of this time (microseconds, or YYYY-MM-DD[THH:MM:SSZ], UTC) [default: now].
    #[arg(long, value_name = "TIME")]
    at: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let workspace = args.location.workspace()?;
    let call = check::tool_call(
        args.command.as_deref(),
        args.tool.as_deref(),
        args.input.as_deref(),
        &workspace.cwd_text(),
    )?;
    let options = check::Options {
        rules: args.location.rules.clone(),
        claude_settings: args.claude_settings,
        no_grants: args.no_grants,
        envelope: args.envelope.clone(),
        now_us: match &args.at {
            Some(text) => parse_time(text)?,
            None => now_us(),
        },
    };
    let checked = check::check(&workspace, call, &options)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&check::to_json(&checked))?
        );
    } else {
        print!(
            "{}",
            to_text(&checked.call, &checked.analysis, &checked.verdict)
        );
    }
    Ok(ExitCode::from(match checked.verdict.decision {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Deny => 2,
    }))
}

fn to_text(call: &ToolCall, analysis: &Analysis, verdict: &Verdict) -> String {
    let mut out = String::new();
    let what = call
        .input
        .get("command")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("{} {}", call.tool, call.input));
    out.push_str(&format!(
        "{}: {}\n",
        verdict.decision.as_str().to_uppercase(),
        what
    ));
    if !verdict.headline.is_empty() {
        out.push_str(&format!("  {}\n", verdict.headline));
    }
    out.push_str("\nwhat it does:\n");
    for (i, (action, decided)) in analysis.actions.iter().zip(&verdict.actions).enumerate() {
        out.push_str(&format!(
            "  {}. [{}] {}  ({})\n     signature: {}\n     blast radius: {} (tier {})\n",
            i + 1,
            decided.decision.as_str(),
            action.display,
            action.capability,
            action.signature,
            action.blast.describe(),
            action.tier(),
        ));
        for target in &action.targets {
            out.push_str(&format!(
                "     {} {} ({})\n",
                target.access.as_str(),
                target.path,
                target.placement.zone.as_str()
            ));
        }
        for unknown in &action.unknowns {
            out.push_str(&format!("     not understood: {unknown}\n"));
        }
    }
    out.push_str("\nwhy:\n");
    for reason in &verdict.reasons {
        out.push_str(&format!("  - {} ({})\n", reason.text, reason.code));
    }
    out
}
