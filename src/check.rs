//! `leastgrant check`: one decision, explained for a person or as JSON for CI.

use std::process::ExitCode;

use anyhow::{Context as _, anyhow, bail};
use clap::Args;
use leastgrant_engine::{
    Analysis, Context, Decision, Envelope, Frozen, GrantStore, Learned, RulesAndGrants,
    SessionState, ToolCall, Verdict, analyze, decide,
};

use crate::shared::time::{now_us, parse_time};
use crate::workspace::Location;
use serde_json::{Value, json};

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
    let cwd = workspace.cwd_text();
    let call = match (&args.command, &args.tool) {
        (Some(command), None) => ToolCall::shell(command, Some(&cwd)),
        (None, Some(tool)) => {
            let raw = args.input.as_deref().unwrap_or("{}");
            let input: Value = serde_json::from_str(raw)
                .with_context(|| format!("--input is not valid JSON: `{raw}`"))?;
            ToolCall {
                tool: tool.clone(),
                input,
                cwd: Some(cwd),
                descriptor: None,
            }
        }
        (Some(_), Some(_)) => bail!("give either a shell command or --tool, not both"),
        (None, None) => bail!("give a shell command to check, or --tool NAME --input JSON"),
    };
    let policy = workspace.policy_with(&args.location.rules, args.claude_settings)?;
    let grants = if args.no_grants {
        Vec::new()
    } else {
        workspace.grants().load()?
    };
    let answers = RulesAndGrants {
        policy: &policy,
        grants: &grants,
    };
    // Every path is placed as written and where its symbolic links lead now.
    let mut roots = workspace.roots.clone();
    roots.see_links(std::sync::Arc::new(
        leastgrant_hook::links::FileSystemLinks::default(),
    ));
    let analysis = analyze(&call, &roots);
    let now = match &args.at {
        Some(text) => parse_time(text)?,
        None => now_us(),
    };
    // Mapped through files.rs: a FIFO or a device named here is refused, never waited on.
    let frozen_bytes = match &args.envelope {
        Some(path) => Some(
            leastgrant_hook::state::map_named(path)?
                .ok_or_else(|| anyhow!("cannot read {}: no such file", path.display()))?,
        ),
        None => None,
    };
    let frozen = frozen_bytes.as_deref().map(Frozen::parse).transpose()?;
    if let Some(frozen) = &frozen {
        frozen.verify()?;
    }
    let project = frozen
        .as_ref()
        .map(|f| f.project_for(&workspace.roots.project))
        .transpose()?
        .flatten();
    let empty = Envelope::default();
    let learned: &dyn Learned = match &project {
        Some(project) => project,
        None => &empty,
    };
    let settings = frozen.as_ref().map(|f| *f.settings()).unwrap_or_default();
    let session = SessionState::default();
    let ctx = Context {
        envelope: learned,
        session: &session,
        answers: &answers,
        settings: &settings,
        now_us: now,
    };
    let mut verdict = decide(&analysis, &ctx);
    if let Some(error) = project.as_ref().and_then(|p| p.damage()) {
        return Err(error.into());
    }
    if let Some(frozen) = &frozen {
        let what = match &project {
            Some(p) => format!("project {}", p.key()),
            None => "no project of it holds this directory, so nothing learned applies".to_string(),
        };
        verdict.reasons.push(leastgrant_engine::Reason {
            code: "envelope".to_string(),
            text: format!(
                "frozen envelope {} (setting {}), {what}",
                frozen.digest().get(..12).unwrap_or(""),
                frozen.setting_id()
            ),
            weight: leastgrant_engine::Weight::Info,
        });
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&to_json(&analysis, &verdict))?
        );
    } else {
        print!("{}", to_text(&call, &analysis, &verdict));
    }
    Ok(ExitCode::from(match verdict.decision {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Deny => 2,
    }))
}

fn to_json(analysis: &Analysis, verdict: &Verdict) -> Value {
    let actions: Vec<Value> = analysis
        .actions
        .iter()
        .zip(&verdict.actions)
        .map(|(action, decided)| {
            json!({
                "capability": action.capability.as_str(),
                "signature": action.signature,
                "tier": action.tier(),
                "understood": action.understood,
                "display": action.display,
                "blast": {
                    "reach": format!("{:?}", action.blast.reach).to_lowercase(),
                    "reversibility": format!("{:?}", action.blast.reversibility).to_lowercase(),
                    "exposure": format!("{:?}", action.blast.exposure).to_lowercase(),
                    "scale": format!("{:?}", action.blast.scale).to_lowercase(),
                    "summary": action.blast.describe(),
                },
                "targets": action.targets.iter().map(|t| json!({
                    "path": t.path,
                    "access": t.access.as_str(),
                    "zone": t.placement.zone.as_str(),
                    "secret": t.placement.secret,
                    "persistence": t.placement.persistence,
                    "control": t.placement.control,
                })).collect::<Vec<_>>(),
                "unknowns": action.unknowns,
                "verdict": decided.decision.as_str(),
            })
        })
        .collect();
    json!({
        "verdict": verdict.decision.as_str(),
        "headline": verdict.headline,
        "actions": actions,
        "reasons": verdict.reasons.iter().map(|r| json!({"code": r.code, "text": r.text})).collect::<Vec<_>>(),
    })
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
