//! The agents' hook configurations as more than one command reads them: where each agent keeps
//! them (user and project scope), reading one, the command leastgrant writes into them and how
//! an entry is recognised as leastgrant's (its program is a file named `leastgrant-hook`, quoted
//! or not). `install` writes the entries; `doctor` checks them. Which events and what each
//! agent enforces are the hook's catalogue.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use leastgrant_hook::catalogue::Agent;
use leastgrant_hook::files::{self, Links, Trust};
use serde_json::Value;

use crate::shared::jsonc;
use crate::shared::ordered_json::Json;
use crate::workspace::Workspace;

/// The file name of the hook binary (`leastgrant-hook`, `.exe` on Windows).
pub const HOOK_FILE_NAME: &str = "leastgrant-hook";

/// The hook configuration file of an agent in one scope.
pub fn config_file(agent: Agent, scope: Scope, workspace: &Workspace) -> PathBuf {
    let home = PathBuf::from(&workspace.roots.home);
    let project = PathBuf::from(&workspace.roots.project);
    match (agent, scope) {
        (Agent::ClaudeCode, Scope::User) => claude_user_dir(&home).join("settings.json"),
        (Agent::ClaudeCode, Scope::Project) => project.join(".claude").join("settings.json"),
        (Agent::Cursor, Scope::User) => home.join(".cursor").join("hooks.json"),
        (Agent::Cursor, Scope::Project) => project.join(".cursor").join("hooks.json"),
        (Agent::Codex, Scope::User) => {
            dir_from_env("CODEX_HOME", &home, ".codex").join("hooks.json")
        }
        (Agent::Codex, Scope::Project) => project.join(".codex").join("hooks.json"),
        // Copilot CLI reads every `*.json` in its hooks directory: leastgrant keeps its own file.
        (Agent::Copilot, Scope::User) => dir_from_env("COPILOT_HOME", &home, ".copilot")
            .join("hooks")
            .join(COPILOT_HOOKS_FILE),
        (Agent::Copilot, Scope::Project) => project
            .join(".github")
            .join("hooks")
            .join(COPILOT_HOOKS_FILE),
        (Agent::Gemini, Scope::User) => home.join(".gemini").join("settings.json"),
        (Agent::Gemini, Scope::Project) => project.join(".gemini").join("settings.json"),
    }
}

/// The file leastgrant writes in Copilot CLI's hooks directories.
const COPILOT_HOOKS_FILE: &str = "leastgrant.json";

/// An agent's home directory: the variable's value when set, else `~/<default>`.
fn dir_from_env(variable: &str, home: &Path, default: &str) -> PathBuf {
    match std::env::var(variable) {
        Ok(dir) if !dir.trim().is_empty() => PathBuf::from(dir),
        _ => home.join(default),
    }
}

/// Claude Code's user directory: `$CLAUDE_CONFIG_DIR` when it names one directory, else
/// `~/.claude`.
fn claude_user_dir(home: &Path) -> PathBuf {
    match std::env::var("CLAUDE_CONFIG_DIR") {
        Ok(dir) if !dir.trim().is_empty() && !dir.contains(',') => PathBuf::from(dir),
        _ => home.join(".claude"),
    }
}

/// Which configuration file: the user's, or the current project's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Under the home directory: every project.
    User,
    /// Under the project root (the git root of the current directory, else the directory).
    Project,
}

impl Scope {
    /// `user` or `project`.
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// The hook binary `install` points at by default: `leastgrant-hook` in this binary's
/// directory.
pub fn default_hook_path() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot locate the leastgrant binary")?;
    Ok(exe.with_file_name(format!("{HOOK_FILE_NAME}{}", std::env::consts::EXE_SUFFIX)))
}

/// The command an agent runs: the hook's absolute path (quoted when the shell needs it) and
/// `--agent <name>`.
pub fn hook_command(hook: &Path, agent: Agent) -> String {
    format!(
        "{} --agent {}",
        shell_quote(&hook.to_string_lossy()),
        agent.as_str()
    )
}

/// A path as one shell word: bare when it is plain, else in double quotes (which both POSIX
/// shells and PowerShell read), else — when it holds characters double quotes would expand — in
/// single quotes.
fn shell_quote(path: &str) -> String {
    // POSIX quoting is the engine's one rule; a plain word stays bare.
    let posix = leastgrant_engine::quote_word(path);
    if posix == path {
        posix
    } else if cfg!(windows) || !path.contains(['"', '$', '`', '\\', '!']) {
        // Double quotes, which PowerShell reads too (it does not read POSIX's `'\''`).
        format!("\"{path}\"")
    } else {
        posix
    }
}

/// The first shell word of a command, with its quotes removed.
pub fn program_word(command: &str) -> Option<String> {
    let mut chars = command.trim_start().chars().peekable();
    let mut word = String::new();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => break,
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    c => word.push(c),
                }
            },
            '"' => loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => match chars.peek() {
                        Some(&next @ ('"' | '\\' | '$' | '`')) => {
                            word.push(next);
                            chars.next();
                        }
                        _ => word.push('\\'),
                    },
                    c => word.push(c),
                }
            },
            // An escaped blank or quote; any other backslash is a Windows path separator.
            '\\' => match chars.peek() {
                Some(&next) if next.is_whitespace() || matches!(next, '"' | '\'' | '\\') => {
                    word.push(next);
                    chars.next();
                }
                _ => word.push('\\'),
            },
            c => word.push(c),
        }
    }
    (!word.is_empty()).then_some(word)
}

/// The hook path a command runs, when the command is leastgrant's: its program is a file named
/// `leastgrant-hook` (whatever its directory, quoted or not).
pub fn our_hook_path(command: &str) -> Option<String> {
    let program = program_word(command)?;
    let file_name = program.rsplit(['/', '\\']).next().unwrap_or(&program);
    let file_name = file_name.strip_suffix(".exe").unwrap_or(file_name);
    (file_name == HOOK_FILE_NAME).then_some(program)
}

/// One leastgrant entry found in a configuration.
#[derive(Debug, Clone)]
pub struct FoundEntry {
    /// The event it is registered on.
    pub event: String,
    /// The hook path its command runs.
    pub hook: String,
    /// Cursor's `failClosed` on the entry (`None` on Claude Code, or when absent).
    pub fail_closed: Option<bool>,
}

/// Every leastgrant entry in a configuration, on any event.
pub fn find_our_entries(agent: Agent, config: &Json) -> Vec<FoundEntry> {
    let mut found = Vec::new();
    let Some(Json::Object(events)) = config.get("hooks") else {
        return found;
    };
    for (event, value) in events {
        let Json::Array(items) = value else { continue };
        let handlers: Vec<&Json> = match agent {
            Agent::ClaudeCode | Agent::Codex | Agent::Gemini => items
                .iter()
                .filter_map(|group| match group.get("hooks") {
                    Some(Json::Array(handlers)) => Some(handlers.iter()),
                    _ => None,
                })
                .flatten()
                .collect(),
            Agent::Cursor | Agent::Copilot => items.iter().collect(),
        };
        for handler in handlers {
            let Some(command) = handler_command(handler) else {
                continue;
            };
            if let Some(hook) = our_hook_path(command) {
                found.push(FoundEntry {
                    event: event.clone(),
                    hook,
                    fail_closed: match handler.get("failClosed") {
                        Some(Json::Bool(b)) => Some(*b),
                        _ => None,
                    },
                });
            }
        }
    }
    found
}

/// The command a handler runs: `command`, or Copilot CLI's `bash` (else `powershell`).
fn handler_command(handler: &Json) -> Option<&str> {
    ["command", "bash", "powershell"]
        .iter()
        .find_map(|key| handler.get(key).and_then(Json::as_str))
}

/// Whether a handler (a hook in a matcher group, or a Cursor or Copilot entry) runs
/// leastgrant's hook.
pub fn is_our_handler(handler: &Json) -> bool {
    handler_command(handler).and_then(our_hook_path).is_some()
}

/// The largest agent configuration file read.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Whether an agent reads its configuration as JSON with comments: Gemini CLI's
/// `settings.json` takes `//` and `/* */` comments and trailing commas. The others read plain
/// JSON (Claude Code refuses a comment in its settings, Codex parses `hooks.json` strictly), so
/// a comment there is an error here as it is to the agent.
pub fn takes_comments(agent: Agent) -> bool {
    matches!(agent, Agent::Gemini)
}

/// A configuration file as read.
#[derive(Debug, Clone)]
pub struct Config {
    /// Its value, members in file order.
    pub document: Json,
    /// It had comments or trailing commas (only where the agent takes them): text that a
    /// rewrite does not keep.
    pub had_comments: bool,
}

/// Reads an agent's configuration file: `None` when it does not exist, an empty object when it
/// is empty; an error when it is not a JSON object (with comments, for an agent that
/// [`takes_comments`]), or not a regular file of at most [`MAX_CONFIG_BYTES`] (a FIFO or a link
/// to a device a repository carries is never read).
pub fn read_config(path: &Path, agent: Agent) -> Result<Option<Config>> {
    let Some(bytes) = files::read_regular(path, Links::Follow, Trust::Anyone, MAX_CONFIG_BYTES)?
    else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes)
        .with_context(|| format!("`{}` is not UTF-8 text", path.display()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let plain = takes_comments(agent).then(|| jsonc::plain(text)).flatten();
    let had_comments = plain.is_some();
    let text = plain.as_deref().unwrap_or(text);
    let document = if text.trim().is_empty() {
        Json::Object(Vec::new())
    } else {
        // serde_json judges validity (and bounds the nesting); the order-keeping parse follows.
        serde_json::from_str::<Value>(text)
            .with_context(|| format!("`{}` is not valid JSON", path.display()))?;
        Json::parse(text).map_err(|e| anyhow::anyhow!("`{}`: {e}", path.display()))?
    };
    if !matches!(document, Json::Object(_)) {
        bail!("`{}` is not a JSON object", path.display());
    }
    Ok(Some(Config {
        document,
        had_comments,
    }))
}
