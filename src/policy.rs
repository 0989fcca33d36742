//! `leastgrant lint`, `leastgrant allow|deny|forget` and `leastgrant rules`: the answers a
//! person gives in advance.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use leastgrant_engine::{
    Grant, GrantScope, GrantStore, GrantVerdict, ToolCall, analyze, canonical_tool, lint,
    scope_json,
};
use serde_json::{Value, json};

use crate::shared::time::now_us;
use crate::workspace::{Location, Workspace};

#[derive(Args)]
pub struct LintArgs {
    #[command(flatten)]
    location: Location,
}

/// `leastgrant lint`: exit 0 when clean, 1 with findings, 3 on an unreadable policy.
pub fn lint_command(args: &LintArgs) -> Result<ExitCode> {
    let workspace = args.location.workspace()?;
    let files = workspace.policy_files(&args.location.rules);
    if files.is_empty() {
        bail!("no rules file: give --rules FILE, or create ~/.leastgrant/rules.json");
    }
    let policy = workspace.policy(&args.location.rules)?;
    let findings = lint(&policy);
    for finding in &findings {
        eprintln!("warning[{}]: {}", finding.code, finding.text);
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    println!(
        "{} rule(s) in {}: {} finding(s)",
        policy.rules.len(),
        names.join(", "),
        findings.len()
    );
    Ok(ExitCode::from(u8::from(!findings.is_empty())))
}

#[derive(Args)]
pub struct GrantArgs {
    /// A shell command (`npm test`), or a tool with an optional argument (`WebSearch`,
    /// `Read(/etc/hosts)`, `mcp__github__get_issue({"number": 3})`).
    target: String,
    /// Only this exact call (the command text or arguments), not every spelling of it.
    #[arg(long)]
    exact: bool,
    /// Why, kept with the grant.
    #[arg(long)]
    note: Option<String>,
    #[command(flatten)]
    location: Location,
}

/// What a target names: a tool with an optional argument, or a shell command.
enum Target {
    Tool {
        tool: String,
        argument: Option<String>,
    },
    Command(String),
}

fn parse_target(text: &str) -> Target {
    let name_end = text.find('(').unwrap_or(text.len());
    let name = &text[..name_end];
    let tool_like = (name.starts_with(|c: char| c.is_ascii_uppercase())
        || name.starts_with("mcp__"))
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (name_end == text.len() || text.ends_with(')'));
    if !tool_like {
        return Target::Command(text.to_string());
    }
    let argument = (name_end < text.len()).then(|| text[name_end + 1..text.len() - 1].to_string());
    if name == "Bash" {
        return match argument {
            Some(command) => Target::Command(command),
            None => Target::Tool {
                tool: name.to_string(),
                argument: None,
            },
        };
    }
    Target::Tool {
        tool: canonical_tool(name),
        argument,
    }
}

/// The arguments a `Tool(argument)` call would carry.
fn tool_args(tool: &str, argument: &str, workspace: &Workspace) -> Result<Value> {
    Ok(match tool {
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "Delete" => {
            let path =
                leastgrant_engine::resolve(argument, Some(&workspace.cwd_text()), &workspace.roots)
                    .ok_or_else(|| anyhow::anyhow!("cannot resolve the path `{argument}`"))?;
            json!({"file_path": path})
        }
        "WebFetch" => json!({"url": argument}),
        "WebSearch" => json!({"query": argument}),
        "Glob" | "Grep" => json!({"pattern": argument}),
        _ if tool.starts_with("mcp__") => serde_json::from_str(argument)
            .map_err(|e| anyhow::anyhow!("the arguments of `{tool}` must be a JSON object: {e}"))?,
        _ => json!({"input": argument}),
    })
}

fn is_file_tool(tool: &str) -> bool {
    matches!(
        tool,
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "Delete"
    )
}

/// The grants a target stands for (a compound command is one grant per action).
fn grants_for(
    target: &Target,
    verdict: GrantVerdict,
    exact: bool,
    workspace: &Workspace,
) -> Result<Vec<Grant>> {
    Ok(match target {
        Target::Tool {
            tool,
            argument: None,
        } => vec![Grant::new(tool, verdict, GrantScope::ThisTool)],
        Target::Tool {
            tool,
            argument: Some(argument),
        } if is_file_tool(tool) => {
            // A file tool is granted for the path, however the call spells its other arguments.
            let call = ToolCall {
                tool: tool.clone(),
                input: tool_args(tool, argument, workspace)?,
                cwd: Some(workspace.cwd_text()),
                descriptor: None,
            };
            let analysis = analyze(&call, &workspace.roots);
            analysis
                .actions
                .iter()
                .map(|a| {
                    Grant::new(
                        tool,
                        verdict,
                        GrantScope::ThisAction {
                            spelling: a.subject.spelling.clone(),
                        },
                    )
                })
                .collect()
        }
        Target::Tool {
            tool,
            argument: Some(argument),
        } => {
            vec![Grant::new(
                tool,
                verdict,
                GrantScope::ThisCall {
                    args: tool_args(tool, argument, workspace)?,
                },
            )]
        }
        Target::Command(command) if exact => {
            vec![Grant::new(
                "Bash",
                verdict,
                GrantScope::ThisCall {
                    args: json!({"command": command}),
                },
            )]
        }
        Target::Command(command) => {
            let analysis = analyze(
                &ToolCall::shell(command, Some(&workspace.cwd_text())),
                &workspace.roots,
            );
            if !analysis.understood && verdict == GrantVerdict::Allow {
                bail!(
                    "`{command}` is not understood ({}); grant it with --exact if you mean this exact text",
                    analysis.problems.join("; ")
                );
            }
            let mut grants: Vec<Grant> = analysis
                .actions
                .iter()
                .map(|a| {
                    Grant::new(
                        "Bash",
                        verdict,
                        GrantScope::ThisAction {
                            spelling: a.subject.spelling.clone(),
                        },
                    )
                })
                .collect();
            grants.dedup_by(|a, b| a.id() == b.id());
            grants
        }
    })
}

fn describe(grant: &Grant) -> String {
    let scope = match &grant.scope {
        GrantScope::ThisTool => "every call".to_string(),
        GrantScope::ThisCall { args } => format!("exactly {args}"),
        GrantScope::ThisAction { spelling } => format!("`{spelling}`"),
    };
    let note = grant
        .note
        .as_deref()
        .map(|n| format!(" — {n}"))
        .unwrap_or_default();
    format!(
        "{} {} {} {scope}{note}",
        grant.id(),
        grant.verdict.as_str(),
        grant.tool
    )
}

/// `leastgrant allow|deny`.
pub fn grant_command(args: &GrantArgs, verdict: GrantVerdict) -> Result<ExitCode> {
    let workspace = args.location.workspace()?;
    let grants = grants_for(&parse_target(&args.target), verdict, args.exact, &workspace)?;
    let mut store = workspace.grants();
    for grant in grants {
        let mut grant = grant.with_created_at_ms(now_us() / 1000);
        if let Some(note) = &args.note {
            grant = grant.with_note(note);
        }
        let saved = store.save(grant)?;
        println!("{}", describe(&saved));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct ForgetArgs {
    /// What was granted (the same text given to `allow` or `deny`).
    target: Option<String>,
    /// Forget the grant with this identity.
    #[arg(long, conflicts_with = "target")]
    id: Option<String>,
    /// Forget every grant of this project.
    #[arg(long, conflicts_with_all = ["target", "id"])]
    all: bool,
    #[command(flatten)]
    location: Location,
}

/// `leastgrant forget`: prints every grant removed (the audit record).
pub fn forget_command(args: &ForgetArgs) -> Result<ExitCode> {
    let workspace = args.location.workspace()?;
    let mut store = workspace.grants();
    if args.all {
        let all = store.load()?;
        store.clear()?;
        for grant in &all {
            println!("forgot {}", describe(grant));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let ids: Vec<String> = match (&args.id, &args.target) {
        (Some(id), _) => vec![id.clone()],
        (None, Some(target)) => {
            let target = parse_target(target);
            let mut ids = Vec::new();
            for verdict in [GrantVerdict::Allow, GrantVerdict::Deny] {
                for exact in [false, true] {
                    if let Ok(grants) = grants_for(&target, verdict, exact, &workspace) {
                        ids.extend(grants.iter().map(|g| g.id().to_string()));
                    }
                }
            }
            ids
        }
        (None, None) => bail!("say what to forget: a target, --id ID or --all"),
    };
    let mut forgotten = 0;
    for id in ids {
        if let Some(grant) = store.revoke(&id)? {
            println!("forgot {}", describe(&grant));
            forgotten += 1;
        }
    }
    if forgotten == 0 {
        println!("nothing to forget");
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct RulesArgs {
    #[command(flatten)]
    location: Location,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// `leastgrant rules`: the rules and grants in force for this project.
pub fn rules_command(args: &RulesArgs) -> Result<ExitCode> {
    let workspace = args.location.workspace()?;
    let files = workspace.policy_files(&args.location.rules);
    let policy = workspace.policy(&args.location.rules)?;
    let grants = workspace.grants().load()?;
    // The hook's own files get their compiled tables now, so the next hook call only loads
    // them (hook/src/rules_cache.rs); a refusal was reported by `policy` above.
    if args.location.rules.is_empty() {
        let mut notes = Vec::new();
        let _ = leastgrant_hook::policy::load_compiled(&files, &workspace.roots, &mut notes);
    }
    if args.json {
        let value = json!({
            "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            "rules": policy.rules.iter().map(|r| json!({"rule": r.text, "decision": r.decision.as_str()})).collect::<Vec<_>>(),
            "default_mode": match policy.default_mode { leastgrant_engine::DefaultMode::Ask => "ask", leastgrant_engine::DefaultMode::Deny => "deny" },
            "grants": grants.iter().map(|g| json!({"id": g.id(), "tool": g.tool, "verdict": g.verdict.as_str(), "scope": scope_json(&g.scope), "note": g.note})).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    if files.is_empty() {
        println!("rules: none (no rules file)");
    } else {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        println!("rules from {}:", names.join(", "));
        for rule in &policy.rules {
            println!("  {:<5} {}", rule.decision.as_str(), rule.text);
        }
        let fallback = match policy.default_mode {
            leastgrant_engine::DefaultMode::Ask => "ask (floors and learning decide)",
            leastgrant_engine::DefaultMode::Deny => "deny",
        };
        println!("  unmatched calls: {fallback}");
    }
    println!("grants for {}:", workspace.roots.project);
    if grants.is_empty() {
        println!("  none");
    }
    for grant in &grants {
        println!("  {}", describe(grant));
    }
    Ok(ExitCode::SUCCESS)
}
