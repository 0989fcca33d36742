//! `leastgrant install` and `leastgrant uninstall`: the hook's entries in Claude Code's
//! `settings.json`, Cursor's `hooks.json`, Codex CLI's `hooks.json`, Copilot CLI's hooks file and
//! Gemini CLI's `settings.json`, added and removed without disturbing anything else in them.
//!
//! Owns: the entries leastgrant writes (on the events the hook's catalogue says `install`
//! registers), and the file handling — a one-time backup, and an atomic replace that keeps the
//! file's mode. Where the configurations are, reading them and recognising leastgrant's entries
//! is `shared::agent_config`, which `leastgrant doctor` reads them through too.

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use leastgrant_hook::catalogue::{Agent, Event, OnFailure};
use serde_json::json;

use crate::shared::agent_config::{
    FoundEntry, Scope, config_file, default_hook_path, find_our_entries, hook_command,
    is_our_handler, read_config,
};
use crate::shared::ordered_json::Json;
use crate::workspace::Workspace;

/// The timeout, in seconds, written on every entry: both agents default to a minute or more,
/// and a hook that hangs that long stalls the agent.
const HOOK_TIMEOUT_SECONDS: u64 = 10;

/// How an agent's hook configuration is laid out, for `--help`.
fn config_layout(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "`settings.json`, `hooks` by event and matcher group",
        Agent::Cursor => "`hooks.json`, version 1",
        Agent::Codex => "`hooks.json`, `hooks` by event and matcher group",
        Agent::Copilot => "leastgrant's own `hooks/leastgrant.json`, version 1",
        Agent::Gemini => "`settings.json`, `hooks` by event and matcher group",
    }
}

/// The agent argument: the names the hook's `--agent` takes, from the catalogue.
pub fn agent_parser() -> impl TypedValueParser<Value = Agent> {
    PossibleValuesParser::new(Agent::ALL.map(|agent| {
        PossibleValue::new(agent.as_str()).help(format!(
            "{} ({})",
            agent.title(),
            config_layout(agent)
        ))
    }))
    .try_map(|name| Agent::parse(&name).ok_or_else(|| format!("unknown agent `{name}`")))
}

#[derive(Args)]
pub struct InstallArgs {
    /// The agent to install the hook into.
    #[arg(value_parser = agent_parser())]
    agent: Agent,
    /// Write the current project's configuration (its git root, else the current directory)
    /// instead of the user's.
    #[arg(long)]
    project: bool,
    /// The hook binary the agent runs [default: `leastgrant-hook` next to this `leastgrant`].
    #[arg(long, value_name = "PATH")]
    hook: Option<PathBuf>,
    /// Point existing leastgrant entries that run another hook binary at this one.
    #[arg(long)]
    repoint: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct UninstallArgs {
    /// The agent to remove the hook from.
    #[arg(value_parser = agent_parser())]
    agent: Agent,
    /// Edit the current project's configuration instead of the user's.
    #[arg(long)]
    project: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// The matcher group leastgrant adds to each Claude Code event (`*`: every tool).
fn claude_group(event: &Event, command: &str) -> Json {
    Json::Object(vec![
        (
            "matcher".into(),
            Json::String(event.matcher.unwrap_or("*").into()),
        ),
        (
            "hooks".into(),
            Json::Array(vec![Json::Object(vec![
                ("type".into(), Json::String("command".into())),
                ("command".into(), Json::String(command.into())),
                (
                    "timeout".into(),
                    Json::Number(HOOK_TIMEOUT_SECONDS.to_string()),
                ),
            ])]),
        ),
    ])
}

/// The matcher group leastgrant adds to each Codex CLI event: no matcher (every tool).
fn codex_group(command: &str) -> Json {
    Json::Object(vec![(
        "hooks".into(),
        Json::Array(vec![Json::Object(vec![
            ("type".into(), Json::String("command".into())),
            ("command".into(), Json::String(command.into())),
            (
                "timeout".into(),
                Json::Number(HOOK_TIMEOUT_SECONDS.to_string()),
            ),
        ])]),
    )])
}

/// The matcher group leastgrant adds to each Gemini CLI event (`*`: every tool; the timeout
/// in milliseconds).
fn gemini_group(command: &str) -> Json {
    Json::Object(vec![
        ("matcher".into(), Json::String("*".into())),
        (
            "hooks".into(),
            Json::Array(vec![Json::Object(vec![
                ("name".into(), Json::String("leastgrant".into())),
                ("type".into(), Json::String("command".into())),
                ("command".into(), Json::String(command.into())),
                (
                    "timeout".into(),
                    Json::Number((HOOK_TIMEOUT_SECONDS * 1000).to_string()),
                ),
            ])]),
        ),
    ])
}

/// The entry leastgrant adds to one Copilot CLI event (the same command for both shells).
fn copilot_entry(command: &str) -> Json {
    Json::Object(vec![
        ("type".into(), Json::String("command".into())),
        ("bash".into(), Json::String(command.into())),
        ("powershell".into(), Json::String(command.into())),
        (
            "timeoutSec".into(),
            Json::Number(HOOK_TIMEOUT_SECONDS.to_string()),
        ),
    ])
}

/// The entry leastgrant adds to one Cursor event: gates fail closed.
fn cursor_entry(event: &Event, command: &str) -> Json {
    let mut fields = vec![
        ("command".into(), Json::String(command.into())),
        (
            "timeout".into(),
            Json::Number(HOOK_TIMEOUT_SECONDS.to_string()),
        ),
    ];
    if event.surface.gates() {
        fields.push(("failClosed".into(), Json::Bool(true)));
    }
    if let Some(matcher) = event.matcher {
        fields.push(("matcher".into(), Json::String(matcher.into())));
    }
    Json::Object(fields)
}

/// The `hooks` object of a configuration, created (empty) when absent.
fn hooks_object<'a>(config: &'a mut Json, file: &Path) -> Result<&'a mut Vec<(String, Json)>> {
    let Json::Object(root) = config else {
        bail!("`{}` is not a JSON object", file.display());
    };
    if !root.iter().any(|(k, _)| k == "hooks") {
        root.push(("hooks".into(), Json::Object(Vec::new())));
    }
    match config.get_mut("hooks") {
        Some(Json::Object(hooks)) => Ok(hooks),
        _ => bail!(
            "`hooks` in `{}` is not a JSON object; leastgrant left the file untouched",
            file.display()
        ),
    }
}

/// Removes leastgrant's handlers from one event's list. A Claude Code matcher group left with
/// no handlers is dropped; so is a Cursor entry. Returns how many handlers were removed.
fn remove_ours_from_event(agent: Agent, items: &mut Vec<Json>) -> usize {
    let mut removed = 0;
    match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::Gemini => items.retain_mut(|group| {
            let Some(Json::Array(handlers)) = group.get_mut("hooks") else {
                return true;
            };
            let before = handlers.len();
            handlers.retain(|h| !is_our_handler(h));
            removed += before - handlers.len();
            before == handlers.len() || !handlers.is_empty()
        }),
        Agent::Cursor | Agent::Copilot => {
            let before = items.len();
            items.retain(|entry| !is_our_handler(entry));
            removed += before - items.len();
        }
    }
    removed
}

/// Whether an event already holds exactly leastgrant's desired entry, once.
fn event_is_current(agent: Agent, items: &[Json], desired: &Json) -> bool {
    let desired = desired.to_value();
    match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::Gemini => {
            let handlers_of = |group: &Json| match group.get("hooks") {
                Some(Json::Array(handlers)) => {
                    handlers.iter().filter(|h| is_our_handler(h)).count()
                }
                _ => 0,
            };
            let ours: Vec<&Json> = items.iter().filter(|g| handlers_of(g) > 0).collect();
            matches!(ours.as_slice(), [group] if handlers_of(group) == 1 && group.to_value() == desired)
        }
        Agent::Cursor | Agent::Copilot => {
            let ours: Vec<&Json> = items.iter().filter(|e| is_our_handler(e)).collect();
            matches!(ours.as_slice(), [entry] if entry.to_value() == desired)
        }
    }
}

/// Adds leastgrant's entries for `command` to a configuration; returns the events changed.
/// Events that already hold exactly the entry are left alone; others lose any stale leastgrant
/// entry and gain the current one at the end of their list.
pub fn install_into(
    agent: Agent,
    config: &mut Json,
    command: &str,
    file: &Path,
) -> Result<Vec<&'static str>> {
    if matches!(agent, Agent::Cursor | Agent::Copilot) {
        let Json::Object(root) = &mut *config else {
            bail!("`{}` is not a JSON object", file.display());
        };
        if !root.iter().any(|(k, _)| k == "version") {
            root.insert(0, ("version".into(), Json::Number("1".into())));
        }
    }
    let hooks = hooks_object(config, file)?;
    let wanted: Vec<(&'static str, Json)> = agent
        .registered()
        .map(|event| {
            let entry = match agent {
                Agent::ClaudeCode => claude_group(event, command),
                Agent::Cursor => cursor_entry(event, command),
                Agent::Codex => codex_group(command),
                Agent::Copilot => copilot_entry(command),
                Agent::Gemini => gemini_group(command),
            };
            (event.name, entry)
        })
        .collect();
    let mut changed = Vec::new();
    for (event, desired) in wanted {
        if !hooks.iter().any(|(k, _)| k == event) {
            hooks.push((event.into(), Json::Array(Vec::new())));
        }
        let Some(Json::Array(items)) = hooks
            .iter_mut()
            .rev()
            .find(|(k, _)| k == event)
            .map(|(_, v)| v)
        else {
            bail!(
                "`hooks.{event}` in `{}` is not a list; leastgrant left the file untouched",
                file.display()
            );
        };
        if event_is_current(agent, items, &desired) {
            continue;
        }
        remove_ours_from_event(agent, items);
        items.push(desired);
        changed.push(event);
    }
    Ok(changed)
}

/// Removes every leastgrant entry (whatever hook path it runs) from a configuration; an event
/// whose list it empties is dropped. Returns the events touched and the entries removed.
pub fn uninstall_from(agent: Agent, config: &mut Json) -> (Vec<String>, usize) {
    let mut touched = Vec::new();
    let mut total = 0;
    let Some(Json::Object(hooks)) = config.get_mut("hooks") else {
        return (touched, 0);
    };
    hooks.retain_mut(|(event, value)| {
        let Json::Array(items) = value else {
            return true;
        };
        let was_empty = items.is_empty();
        let removed = remove_ours_from_event(agent, items);
        if removed == 0 {
            return true;
        }
        touched.push(event.clone());
        total += removed;
        was_empty || !items.is_empty()
    });
    (touched, total)
}

/// `<file>.leastgrant-backup`.
pub fn backup_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".leastgrant-backup");
    file.with_file_name(name)
}

/// Writes a changed configuration: the first change to an existing file copies it to
/// `<file>.leastgrant-backup` (never overwriting an older backup); the new text goes to a temp
/// file in the same directory with the old file's mode (0600 for a new file), which is then
/// renamed over it. Returns whether a backup was made now.
///
/// A file with comments (`had_comments`, Gemini CLI's) is rewritten without them, as plain
/// JSON: only when the backup can keep the file as it was (it is made now), and with a warning
/// that says where; with an older backup in the way it is refused, unchanged.
fn write_config(file: &Path, document: &Json, had_comments: bool) -> Result<bool> {
    let target = match fs::symlink_metadata(file) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(file)
            .with_context(|| format!("cannot follow the symlink `{}`", file.display()))?,
        _ => file.to_path_buf(),
    };
    let existing = fs::metadata(&target).ok();
    let mut backed_up = false;
    if existing.is_some() {
        let backup = backup_path(file);
        if fs::symlink_metadata(&backup).is_err() {
            fs::copy(&target, &backup)
                .with_context(|| format!("cannot back up `{}`", file.display()))?;
            backed_up = true;
        } else if had_comments {
            bail!(
                "`{}` has comments, which leastgrant does not keep when it rewrites the file, and \
                 `{}` already holds an older copy: move that backup away (leastgrant then keeps \
                 this file there before rewriting it), or remove the comments",
                file.display(),
                backup.display()
            );
        }
        if had_comments {
            eprintln!(
                "warning: `{}` had comments or trailing commas, which the rewritten file does not \
                 keep; the file as it was is at `{}`",
                file.display(),
                backup.display()
            );
        }
    }
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // A configuration directory leastgrant creates (`.claude/`, `.cursor/`) is owner-only.
    leastgrant_hook::files::create_private_dir(dir)
        .with_context(|| format!("cannot create `{}`", dir.display()))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(target.file_name().unwrap_or_default());
    temp_name.push(format!(".leastgrant-{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let text = document.to_pretty() + "\n";
    let result = (|| -> std::io::Result<()> {
        match fs::remove_file(&temp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let mut out = options.open(&temp)?;
        match &existing {
            Some(meta) => out.set_permissions(meta.permissions())?,
            None => {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    out.set_permissions(fs::Permissions::from_mode(0o600))?;
                }
            }
        }
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        fs::rename(&temp, &target)?;
        if let Ok(dir) = fs::File::open(dir) {
            // Make the rename durable; the new content is already complete either way.
            let _ = dir.sync_all();
        }
        Ok(())
    })();
    if let Err(error) = result {
        let _ = fs::remove_file(&temp);
        return Err(error).with_context(|| format!("cannot write `{}`", file.display()));
    }
    Ok(backed_up)
}

fn same_path(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (fs::canonicalize(a), fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Which build a hook binary is, as its `--version` says (`hook/src/main.rs`).
pub struct HookBuild {
    /// The shipped build (`cargo hook-install`: hook profile, static, packed relocations).
    pub shipped: bool,
    /// What it says after its version.
    pub text: String,
}

/// Runs `hook --version` (killed after five seconds); `None` when it says nothing a hook would
/// (a build older than the marker, or another program).
pub fn hook_build(hook: &Path) -> Option<HookBuild> {
    let mut child = std::process::Command::new(hook)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let started = std::time::Instant::now();
    while child.try_wait().ok()?.is_none() {
        if started.elapsed() > std::time::Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let output = child.wait_with_output().ok()?;
    let line = String::from_utf8_lossy(&output.stdout)
        .lines()
        .next()?
        .to_string();
    let mut words = line.splitn(3, ' ');
    if words.next() != Some("leastgrant-hook") {
        return None;
    }
    let rest = words.nth(1)?;
    Some(HookBuild {
        shipped: rest.starts_with("shipped "),
        text: rest.to_string(),
    })
}

fn scope_of(project: bool) -> Scope {
    if project { Scope::Project } else { Scope::User }
}

/// `leastgrant install`.
pub fn install_command(args: &InstallArgs) -> Result<ExitCode> {
    let workspace = Workspace::discover(None, None)?;
    let scope = scope_of(args.project);
    let file = config_file(args.agent, scope, &workspace);
    let hook = match &args.hook {
        Some(path) => std::path::absolute(path).context("cannot resolve --hook")?,
        None => default_hook_path()?,
    };
    let hook_exists = hook.is_file();
    if !hook_exists {
        let consequence = match args.agent.on_failure() {
            OnFailure::Open => format!(
                "{} lets every call through while it is missing",
                args.agent.title()
            ),
            OnFailure::Closed => format!(
                "{} refuses every shell, MCP and file call while it is missing (the gates fail closed)",
                args.agent.title()
            ),
        };
        eprintln!(
            "warning: the hook binary `{}` does not exist; installing anyway: {consequence}",
            hook.display()
        );
    }
    if hook_exists {
        match hook_build(&hook) {
            Some(build) if build.shipped => {}
            Some(build) => eprintln!(
                "warning: `{}` is not the shipped hook build ({}): every tool call pays for it; run `cargo hook-install` (README, Installing the hook)",
                hook.display(),
                build.text
            ),
            None => eprintln!(
                "warning: `{}` does not say which build it is (older than `leastgrant-hook --version`), so it may not be the shipped one; run `cargo hook-install`",
                hook.display()
            ),
        }
    }
    let command = hook_command(&hook, args.agent);
    let config = read_config(&file, args.agent)?;
    let existed = config.is_some();
    let had_comments = config.as_ref().is_some_and(|c| c.had_comments);
    let mut document = config.map_or_else(|| Json::Object(Vec::new()), |c| c.document);
    let ours_in_our_events: Vec<FoundEntry> = find_our_entries(args.agent, &document)
        .into_iter()
        .filter(|f| args.agent.registered().any(|e| e.name == f.event))
        .collect();
    let hook_text = hook.to_string_lossy().into_owned();
    let mut elsewhere: Vec<String> = ours_in_our_events
        .iter()
        .filter(|f| !same_path(&f.hook, &hook_text))
        .map(|f| f.hook.clone())
        .collect();
    elsewhere.sort();
    elsewhere.dedup();
    if !elsewhere.is_empty() && !args.repoint {
        bail!(
            "`{}` already runs leastgrant's hook from `{}`; this install would run `{}`. Give \
             --repoint to point it at `{}`, or --hook `{}` to keep it",
            file.display(),
            elsewhere.join("`, `"),
            hook.display(),
            hook.display(),
            elsewhere.join("`, `"),
        );
    }
    let before = document.clone();
    let changed = install_into(args.agent, &mut document, &command, &file)?;
    let modified = !existed || document != before;
    let backed_up = if modified {
        write_config(&file, &document, had_comments)?
    } else {
        false
    };
    let backup = backup_path(&file);
    if args.json {
        let value = json!({
            "agent": args.agent.as_str(),
            "scope": scope.name(),
            "file": file.display().to_string(),
            "hook": hook.display().to_string(),
            "hook_exists": hook_exists,
            "command": command,
            "changed": modified,
            "events": changed,
            "repointed": if args.repoint { elsewhere } else { Vec::new() },
            "backup": backup.exists().then(|| backup.display().to_string()),
            "backup_created": backed_up,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    if !modified {
        println!(
            "leastgrant's hook is already installed for {} in {}: nothing changed",
            args.agent.title(),
            file.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "installed leastgrant's hook for {} in {} ({})",
        args.agent.title(),
        file.display(),
        if changed.is_empty() {
            "its version".to_string()
        } else {
            changed.join(", ")
        }
    );
    println!("  runs: {command}");
    if !elsewhere.is_empty() {
        println!("  repointed from: {}", elsewhere.join(", "));
    }
    if backed_up {
        println!("  the previous file is kept at {}", backup.display());
    }
    if scope == Scope::Project {
        println!(
            "  this file may be shared with the repository: whoever lacks the hook at this path {}",
            match args.agent.on_failure() {
                OnFailure::Open => "runs unguarded",
                OnFailure::Closed => "has every gated call refused",
            }
        );
    }
    match args.agent {
        Agent::ClaudeCode => {
            println!("  Claude Code reads hooks when a session starts: restart running sessions")
        }
        Agent::Cursor => println!(
            "  the gates fail closed: if the hook cannot run, Cursor refuses the call (`leastgrant doctor` checks it)"
        ),
        Agent::Codex => println!(
            "  Codex runs a hook only once it is trusted: open /hooks in Codex and trust leastgrant's entries (`codex exec` drops untrusted hooks, and a crash lets the call run)"
        ),
        Agent::Copilot => println!(
            "  Copilot CLI fails closed: if the hook cannot run, every tool call is refused (`leastgrant doctor` checks it)"
        ),
        Agent::Gemini => println!(
            "  Gemini CLI runs hooks only where they are enabled (`hooksConfig.enabled` on its stable channel), and a crash lets the call run"
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// `leastgrant uninstall`.
pub fn uninstall_command(args: &UninstallArgs) -> Result<ExitCode> {
    let workspace = Workspace::discover(None, None)?;
    let scope = scope_of(args.project);
    let file = config_file(args.agent, scope, &workspace);
    let (touched, removed, backed_up) = match read_config(&file, args.agent)? {
        None => (Vec::new(), 0, false),
        Some(mut config) => {
            let (touched, removed) = uninstall_from(args.agent, &mut config.document);
            let backed_up = if removed > 0 {
                write_config(&file, &config.document, config.had_comments)?
            } else {
                false
            };
            (touched, removed, backed_up)
        }
    };
    let backup = backup_path(&file);
    if args.json {
        let value = json!({
            "agent": args.agent.as_str(),
            "scope": scope.name(),
            "file": file.display().to_string(),
            "changed": removed > 0,
            "removed": removed,
            "events": touched,
            "backup": backup.exists().then(|| backup.display().to_string()),
            "backup_created": backed_up,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else if removed == 0 {
        println!(
            "leastgrant's hook is not installed for {} in {}: nothing changed",
            args.agent.title(),
            file.display()
        );
    } else {
        println!(
            "removed {removed} leastgrant entr{} from {} ({})",
            if removed == 1 { "y" } else { "ies" },
            file.display(),
            touched.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
