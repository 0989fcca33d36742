//! One decision made outside the hook, as `leastgrant check` makes it (and the Python
//! package's `check`, which calls this): a call in a workspace, decided by the engine with the
//! rules (given, or those in force) and grants of the workspace, optionally what a frozen
//! envelope learned for its project, as of a time; and the decision as JSON (`check --json`).
//!
//! Must not: read rules, grants or envelopes any other way than `workspace.rs`, `policy.rs`
//! and `state.rs` do, or decide any other way than the engine's `decide`.

use std::path::PathBuf;
use std::sync::Arc;

use leastgrant_engine::{
    Analysis, Context, Envelope, Frozen, GrantStore, Learned, Reason, RulesAndGrants, SessionState,
    ToolCall, Verdict, Weight, analyze, decide,
};
use serde_json::{Value, json};

use crate::links::FileSystemLinks;
use crate::state;
use crate::workspace::{Error, Workspace, error};

/// The call to check: a shell command, or a structured tool with its input as JSON text.
pub fn tool_call(
    command: Option<&str>,
    tool: Option<&str>,
    input: Option<&str>,
    cwd: &str,
) -> Result<ToolCall, Error> {
    match (command, tool) {
        (Some(command), None) => Ok(ToolCall::shell(command, Some(cwd))),
        (None, Some(tool)) => {
            let raw = input.unwrap_or("{}");
            let input: Value = serde_json::from_str(raw)
                .map_err(|e| error(&format!("--input is not valid JSON: `{raw}`"), e))?;
            Ok(ToolCall {
                tool: tool.to_string(),
                input,
                cwd: Some(cwd.to_string()),
                descriptor: None,
            })
        }
        (Some(_), Some(_)) => Err(Error(
            "give either a shell command or --tool, not both".to_string(),
        )),
        (None, None) => Err(Error(
            "give a shell command to check, or --tool NAME --input JSON".to_string(),
        )),
    }
}

/// What a check decides with besides the call and the workspace.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Rules files to decide with; empty: those in force (`Workspace::policy_files`).
    pub rules: Vec<PathBuf>,
    /// Also apply the permission rules of Claude Code's own settings.
    pub claude_settings: bool,
    /// Ignore the grants saved with `leastgrant allow|deny`.
    pub no_grants: bool,
    /// A frozen envelope: its setting, and what its project learned.
    pub envelope: Option<PathBuf>,
    /// Decide as of this time (microseconds since the epoch).
    pub now_us: i64,
}

/// A call, what the engine read it as, and the verdict.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The call checked.
    pub call: ToolCall,
    /// Its actions as the engine read them.
    pub analysis: Analysis,
    /// The decision and its reasons.
    pub verdict: Verdict,
}

/// Decides `call` in `workspace` as the hook would with these rules, grants and envelope (a
/// new session: nothing approved in it yet).
pub fn check(workspace: &Workspace, call: ToolCall, options: &Options) -> Result<Checked, Error> {
    let policy = workspace.policy_with(&options.rules, options.claude_settings)?;
    let grants = if options.no_grants {
        Vec::new()
    } else {
        workspace.grants().load().map_err(|e| Error(e.0))?
    };
    let answers = RulesAndGrants {
        policy: &policy,
        grants: &grants,
    };
    // Every path is placed as written and where its symbolic links lead now.
    let mut roots = workspace.roots.clone();
    roots.see_links(Arc::new(FileSystemLinks::default()));
    let analysis = analyze(&call, &roots);
    // Mapped through files.rs: a FIFO or a device named here is refused, never waited on.
    let frozen_bytes = match &options.envelope {
        Some(path) => Some(
            state::map_named(path)
                .map_err(|e| Error(e.to_string()))?
                .ok_or_else(|| Error(format!("cannot read {}: no such file", path.display())))?,
        ),
        None => None,
    };
    let frozen = frozen_bytes
        .as_deref()
        .map(Frozen::parse)
        .transpose()
        .map_err(|e| Error(e.to_string()))?;
    if let Some(frozen) = &frozen {
        frozen.verify().map_err(|e| Error(e.to_string()))?;
    }
    let project = frozen
        .as_ref()
        .map(|f| f.project_for(&workspace.roots.project))
        .transpose()
        .map_err(|e| Error(e.to_string()))?
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
        now_us: options.now_us,
    };
    let mut verdict = decide(&analysis, &ctx);
    if let Some(e) = project.as_ref().and_then(|p| p.damage()) {
        return Err(Error(e.to_string()));
    }
    if let Some(frozen) = &frozen {
        let what = match &project {
            Some(p) => format!("project {}", p.key()),
            None => "no project of it holds this directory, so nothing learned applies".to_string(),
        };
        verdict.reasons.push(Reason {
            code: "envelope".to_string(),
            text: format!(
                "frozen envelope {} (setting {}), {what}",
                frozen.digest().get(..12).unwrap_or(""),
                frozen.setting_id()
            ),
            weight: Weight::Info,
        });
    }
    Ok(Checked {
        call,
        analysis,
        verdict,
    })
}

/// The decision as `leastgrant check --json` prints it.
pub fn to_json(checked: &Checked) -> Value {
    let (analysis, verdict) = (&checked.analysis, &checked.verdict);
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
