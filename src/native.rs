//! `leastgrant export --to AGENT`, `--check FILE` and `--diff OLD NEW`: the frozen envelope
//! rendered as an agent's narrowest native allow rules (exact recorded commands the envelope
//! allows), each rule checked against the envelope under the agent's matcher before it is
//! written, a file's rules checked, and two files compared. Below it: `native/rule.rs` (match
//! sets and witnesses), `native/judge.rs` (deciding with the envelope), `native/formats.rs` (the
//! agents' files). Must not: write a rule that does not check within, or remove one it did not
//! write.

mod formats;
mod judge;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;
use leastgrant_engine::{Frozen, NativeAgent, NativeRule, recorded_command};
use serde_json::Value;

use formats::{RuleFile as _, agent_named, agent_of_file};
use judge::{Containment, Judge};

use crate::shared::time::{now_us, parse_time};
use crate::workspace::Workspace;

/// The flags of `export` for native rules.
#[derive(Args, Clone, Default)]
pub struct NativeArgs {
    /// Render the envelope as this agent's native allow rules: claude, codex, gemini, copilot.
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
    /// Check each allow rule of an agent's rule file against the envelope.
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
    /// Which rules widened or narrowed from OLD to NEW.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with = "check")]
    pub diff: Vec<PathBuf>,
    /// The frozen envelope to render or check against [default: the hook's].
    #[arg(long, value_name = "FILE")]
    pub envelope: Option<PathBuf>,
    /// The project whose rules these are [default: the enclosing git repository, else here].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Decide as of this time [default: now].
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
}

impl NativeArgs {
    /// Whether one of the native modes was asked for.
    pub fn given(&self) -> bool {
        self.to.is_some() || self.check.is_some() || !self.diff.is_empty()
    }
}

/// Runs the native mode: `table` is the events table, `out` the file `--out` names,
/// `default_envelope` the hook's envelope.
pub fn run(
    args: &NativeArgs,
    table: &Path,
    out: Option<&Path>,
    default_envelope: &Path,
) -> Result<ExitCode> {
    let workspace = Workspace::discover(None, args.project.as_deref())?;
    let envelope = args
        .envelope
        .clone()
        .unwrap_or_else(|| default_envelope.to_path_buf());
    let bytes = std::fs::read(&envelope)
        .with_context(|| format!("cannot read the envelope {}", envelope.display()))?;
    let frozen = Frozen::parse(&bytes)?;
    let mut roots = workspace.roots.clone();
    roots.see_links(std::sync::Arc::new(
        leastgrant_hook::links::FileSystemLinks::default(),
    ));
    let now = match &args.at {
        Some(text) => parse_time(text)?,
        None => now_us(),
    };
    let judge = Judge::new(&frozen, workspace.policy(&[])?, roots, now)?;
    if let Some(file) = &args.check {
        let agent = match &args.to {
            Some(name) => agent_named(name)?,
            None => agent_of_file(file),
        };
        return check(&judge, agent, file);
    }
    if let [old, new] = args.diff.as_slice() {
        let agent = match &args.to {
            Some(name) => agent_named(name)?,
            None => agent_of_file(new),
        };
        return diff(&judge, agent, old, new);
    }
    let agent = agent_named(args.to.as_deref().unwrap_or(""))?;
    export(&judge, agent, table, out, &workspace)
}

fn read_rules(agent: NativeAgent, file: &Path) -> Result<Vec<NativeRule>> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read `{}`", file.display()))?;
    agent.read(&text).with_context(|| {
        format!(
            "cannot parse `{}` as {} rules; it was left untouched",
            file.display(),
            agent.name()
        )
    })
}

fn check(judge: &Judge<'_>, agent: NativeAgent, file: &Path) -> Result<ExitCode> {
    let rules = match read_rules(agent, file) {
        Ok(rules) => rules,
        Err(error) => {
            eprintln!("leastgrant: {error:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let (mut exceeds, mut unsupported) = (0, 0);
    for rule in &rules {
        let verdict = judge.contain(rule, agent.extensions())?;
        match &verdict {
            Containment::Within => println!("within       {}", rule.text),
            Containment::Exceeds(witness) => {
                exceeds += 1;
                println!("exceeds      {}\n  witness: {witness}", rule.text);
            }
            Containment::Unsupported(why) => {
                unsupported += 1;
                println!("unsupported  {}\n  {why}", rule.text);
            }
        }
    }
    println!(
        "{} rules in {}: {} within, {exceeds} exceed, {unsupported} unsupported",
        rules.len(),
        file.display(),
        rules.len() - exceeds - unsupported
    );
    Ok(ExitCode::from(if exceeds > 0 {
        1
    } else if unsupported > 0 {
        3
    } else {
        0
    }))
}

fn diff(judge: &Judge<'_>, agent: NativeAgent, old: &Path, new: &Path) -> Result<ExitCode> {
    let (old_rules, new_rules) = match (read_rules(agent, old), read_rules(agent, new)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("leastgrant: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    // Covered: the agent's own matcher runs the example under these rules.
    let covered = |rules: &[NativeRule], example: &str| {
        agent.admits(example, |piece| {
            rules.iter().any(|r| r.shape.matches(piece))
        })
    };
    let mut widened = 0;
    for rule in new_rules.iter().filter(|r| !old_rules.contains(r)) {
        let example = rule.shape.example();
        if covered(&old_rules, &example) {
            continue;
        }
        widened += 1;
        let verdict = judge.contain(rule, agent.extensions())?;
        let witness = match &verdict {
            Containment::Exceeds(w) => w.clone(),
            _ => example,
        };
        println!(
            "widened   {} ({})\n  witness: {witness}",
            rule.text,
            verdict.word()
        );
    }
    for rule in old_rules.iter().filter(|r| !new_rules.contains(r)) {
        let example = rule.shape.example();
        if covered(&new_rules, &example) {
            continue;
        }
        println!("narrowed  {}\n  witness: {example}", rule.text);
    }
    Ok(ExitCode::from(if widened > 0 { 1 } else { 0 }))
}

/// The shell commands the history recorded in the project, each once.
fn recorded_commands(table: &Path, project: &str) -> Result<BTreeSet<String>> {
    use leastgrant_replay::events::{buckets, index_bucket, read_projects};
    let mut out = BTreeSet::new();
    for bucket in buckets(table)? {
        let index = index_bucket(&bucket)?;
        let keys: Vec<&str> = index.projects().collect();
        for events in read_projects(&index, &keys)? {
            for event in events.iter().filter(|e| e.project_root == project) {
                let input: Value = serde_json::from_str(&event.tool_input).unwrap_or(Value::Null);
                if let Some(command) = recorded_command(&event.tool_name, &input) {
                    out.insert(command.to_string());
                }
            }
        }
    }
    Ok(out)
}

fn default_file(agent: NativeAgent, workspace: &Workspace) -> PathBuf {
    let root = Path::new(&workspace.roots.project);
    match agent {
        NativeAgent::Claude => root.join(".claude/settings.local.json"),
        NativeAgent::Codex => root.join(".codex/rules/leastgrant.rules"),
        NativeAgent::Gemini => root.join(".gemini/policies/leastgrant.toml"),
        NativeAgent::Copilot => {
            Path::new(&workspace.roots.home).join(".copilot/permissions-config.json")
        }
    }
}

/// `<file>.leastgrant-native.json`: the rules leastgrant wrote into a JSON file.
fn manifest_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".leastgrant-native.json");
    file.with_file_name(name)
}

fn backup_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".leastgrant-backup");
    file.with_file_name(name)
}

fn export(
    judge: &Judge<'_>,
    agent: NativeAgent,
    table: &Path,
    out: Option<&Path>,
    workspace: &Workspace,
) -> Result<ExitCode> {
    let file = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| default_file(agent, workspace));
    let commands = recorded_commands(table, &workspace.roots.project)?;
    let (mut ours, mut rendered, mut refused, mut inexpressible) = (Vec::new(), Vec::new(), 0, 0);
    for command in &commands {
        let Some(shape) = agent.exact_rule(command) else {
            inexpressible += 1;
            continue;
        };
        let rule = NativeRule {
            text: command.clone(),
            shape,
        };
        match judge.contain(&rule, agent.extensions())? {
            Containment::Within => {
                ours.push(agent.render_exact(command));
                rendered.push(command.clone());
            }
            _ => refused += 1,
        }
    }
    let existing = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(anyhow!("cannot read `{}`: {e}", file.display())),
    };
    let manifest = manifest_path(&file);
    let previous: Vec<String> = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("rules").cloned())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    if let Some(text) = &existing {
        agent.read(text).with_context(|| {
            format!(
                "cannot parse `{}` as {} rules; it was left untouched",
                file.display(),
                agent.name()
            )
        })?;
    }
    let merged = agent
        .merge(existing.as_deref(), &previous, &ours)
        .with_context(|| {
            format!(
                "cannot merge into `{}`; it was left untouched",
                file.display()
            )
        })?;
    // Export refuses to write a rule that does not check within: the merged file's rules of
    // ours are checked again as the agent will read them.
    for rule in agent.read(&merged)? {
        let mine = rendered
            .iter()
            .any(|c| agent.exact_rule(c).as_ref() == Some(&rule.shape));
        if mine && judge.contain(&rule, agent.extensions())? != Containment::Within {
            bail!(
                "refusing to write `{}`: it does not check within the envelope",
                rule.text
            );
        }
    }
    if existing.as_deref() != Some(merged.as_str()) && !(existing.is_none() && ours.is_empty()) {
        write(&file, &merged, existing.is_some())?;
    }
    if matches!(agent, NativeAgent::Claude | NativeAgent::Copilot) {
        let text = serde_json::to_string_pretty(
            &serde_json::json!({"agent": agent.name(), "rules": ours}),
        )?;
        std::fs::write(&manifest, text + "\n")
            .with_context(|| format!("cannot write `{}`", manifest.display()))?;
    }
    println!(
        "{} {} rules in {} ({} recorded commands: {} the envelope does not allow, {} no exact {} rule can express)",
        ours.len(),
        agent.name(),
        file.display(),
        commands.len(),
        refused,
        inexpressible,
        agent.name()
    );
    for command in &rendered {
        println!("  {command}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to `file` atomically; the first change to an existing file keeps a copy at
/// `<file>.leastgrant-backup`, never overwritten.
fn write(file: &Path, text: &str, existed: bool) -> Result<()> {
    if existed {
        let backup = backup_path(file);
        if std::fs::symlink_metadata(&backup).is_err() {
            std::fs::copy(file, &backup)
                .with_context(|| format!("cannot back up `{}`", file.display()))?;
        }
    }
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    leastgrant_hook::files::create_private_dir(dir)
        .with_context(|| format!("cannot create `{}`", dir.display()))?;
    let mut name = std::ffi::OsString::from(".");
    name.push(file.file_name().unwrap_or_default());
    name.push(format!(".leastgrant-{}.tmp", std::process::id()));
    let temp = dir.join(name);
    std::fs::write(&temp, text).with_context(|| format!("cannot write `{}`", temp.display()))?;
    std::fs::rename(&temp, file).with_context(|| format!("cannot replace `{}`", file.display()))?;
    Ok(())
}
