//! Structured tools: Claude Code's (Read, Write, Edit, Glob, Grep, WebFetch, Task, MCP, …) and
//! Cursor's (`run_terminal_cmd`, `read_file`, `edit_file`, `delete_file`, `list_dir`, …), Codex's
//! (`shell`, `exec_command`), Copilot CLI's (`bash`, `view`, `create`, `edit`) and Gemini CLI's
//! (`run_shell_command`, `read_file`, `write_file`, `replace`, `list_directory`, `glob`).
//!
//! A tool name is matched case-insensitively with `_` and `-` removed, so each agent's spelling
//! lands on one kind. An unknown tool, or a known tool without the path it needs, is not
//! understood.

use std::borrow::Cow;

use serde_json::Value;

use crate::knowledge::Classification;
use crate::model::{
    Access, Action, ActionFlags, Capability as C, Reach, Reversibility, Scale, Subject, ToolCall,
};
use crate::paths::Roots;
use crate::shell::lex::Word;
use crate::shell::quote::quote_word;
use crate::signature::{Normalizer, normalize_arg, redact_text};
use crate::static_index::name_set;
use crate::targets::{path_signature, place_targets};

/// A shell command carried by a tool call.
pub struct ShellCall<'a> {
    /// The command text (borrowed from the call when it is one string).
    pub command: Cow<'a, str>,
    /// The agent was told to run it outside its sandbox.
    pub unsandboxed: bool,
    /// It runs in the background.
    pub background: bool,
    /// The directory the call asks to run in (Codex's `workdir`, Gemini's `directory`), as
    /// written: a learned command run elsewhere runs that directory's configuration and hooks.
    pub dir: Option<&'a str>,
}

fn key(tool: &str) -> String {
    tool.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// `canonical_name(&key(tool))`, for a short ASCII name without building the key (this runs
/// twice for every call a replay classifies).
pub(crate) fn canonical_of(tool: &str) -> Option<&'static str> {
    let mut buffer = [0u8; 40];
    if !tool.is_ascii() || tool.len() > buffer.len() {
        return canonical_name(&key(tool));
    }
    let mut len = 0;
    for b in tool.bytes().filter(|b| *b != b'_' && *b != b'-') {
        if let Some(slot) = buffer.get_mut(len) {
            *slot = b.to_ascii_lowercase();
            len += 1;
        }
    }
    let key = buffer
        .get(..len)
        .and_then(|k| std::str::from_utf8(k).ok())?;
    canonical_name(key)
}

fn text_field<'a>(input: &'a Value, names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|n| input.get(*n).and_then(Value::as_str))
}

/// The shell command, when the tool is a shell; `canonical` is the tool's canonical name
/// (`canonical_of`), looked up once by the caller for this and the subject's tool name.
pub(crate) fn shell_command_of<'c>(
    call: &'c ToolCall,
    canonical: Option<&'static str>,
) -> Option<ShellCall<'c>> {
    if canonical != Some("Bash") {
        return None;
    }
    // One pass over the input: this runs for every shell call a replay classifies.
    let mut shell = ShellCall {
        command: Cow::Borrowed(""),
        unsandboxed: false,
        background: false,
        dir: None,
    };
    for (name, value) in call.input.as_object().into_iter().flatten() {
        let set = value.as_bool() == Some(true);
        match name.as_str() {
            // Codex's `exec_command` names it `cmd`.
            "command" | "cmd" => {
                shell.command = match value {
                    Value::String(s) => Cow::Borrowed(s.as_str()),
                    // Codex sends argv arrays; they are already split, so quote each word.
                    Value::Array(words) => Cow::Owned(
                        words
                            .iter()
                            .map(|w| quote_word(w.as_str().unwrap_or("\u{E000}")))
                            .collect::<Vec<_>>()
                            .join(" "),
                    ),
                    _ => Cow::Borrowed(""),
                }
            }
            "dangerouslyDisableSandbox" | "with_escalated_permissions" => shell.unsandboxed |= set,
            // Codex's newer spelling: any value but the sandboxed default asks to leave it.
            "sandbox_permissions" => {
                shell.unsandboxed |= value
                    .as_str()
                    .is_none_or(|v| !matches!(v, "use_default" | "default" | ""))
                    && !value.is_null()
            }
            "run_in_background" | "is_background" => shell.background |= set,
            "workdir" | "directory" | "dir_path" | "cwd" | "working_directory" => {
                shell.dir = value.as_str().filter(|d| !d.is_empty());
            }
            _ => {}
        }
    }
    Some(shell)
}

name_set! {
    static META_TOOLS = &[
        "todowrite",
        "todoread",
        "exitplanmode",
        "enterplanmode",
        "askuserquestion",
        "thinking",
        "reportfindings",
        "listmcpresources",
        "taskoutput",
        "tasklist",
        "bashoutput",
        "markchapter",
        "updatememory",
        "createdisplay",
        "creatediagram",
        "fetchrules",
        "readlints",
        "todo",
        "reapplyedit",
        "cronlist",
        "exitworktree",
        "listmcpresourcestool",
    ];
}

/// Classifies a structured (non-shell) tool call.
pub fn structured(call: &ToolCall, cwd: &str, roots: &Roots) -> Action {
    let kind = key(&call.tool);
    let input = &call.input;
    let tool = call.tool.as_str();
    let path = text_field(
        input,
        &[
            "file_path",
            "target_file",
            "path",
            "notebook_path",
            "filePath",
            "relative_workspace_path",
            "target_directory",
            // Gemini CLI's `read_file`.
            "absolute_path",
        ],
    );
    let canonical = canonical_name(&kind);
    let (judgement, signature_arg, display): (Classification, Option<String>, String) =
        match (canonical, kind.as_str()) {
            (Some("Read" | "NotebookRead"), _) => file_tool(C::FsReadWorkspace, Access::Read, path),
            (Some("Write"), _) => file_tool(C::FsWriteWorkspace, Access::Write, path),
            (Some("Edit" | "MultiEdit" | "NotebookEdit"), _) => {
                file_tool(C::FsWriteWorkspace, Access::Write, path)
            }
            (Some("Delete"), _) => {
                let (mut j, s, d) = file_tool(C::FsDelete, Access::Delete, path);
                // Deleting a directory deletes what is in it.
                j = j.recursive(true);
                j.blast.reversibility = j.blast.reversibility.max(Reversibility::Hard);
                (j, s, d)
            }
            (Some("LS"), _) => {
                // Lists one directory; not a recursive sweep.
                let mut j = Classification::new(C::FsReadWorkspace);
                let dir = path.unwrap_or(".");
                j.targets.push((Word::plain(dir), Access::Read));
                (j, None, dir.to_string())
            }
            (Some(name @ ("Glob" | "Grep")), _) => {
                // Only a file-name glob can name where it looks; a Grep pattern is text to match
                // (`/api/users` is a route, not a directory).
                search_tool(input, path, name == "Glob", cwd, roots)
            }
            (Some("WebFetch"), _) => {
                let url = text_field(input, &["url", "uri"]).unwrap_or("");
                let j = Classification::new(C::NetFetch);
                (j, Some(normalize_arg(url, None, roots)), url.to_string())
            }
            (Some("WebSearch"), _) => {
                let query = text_field(input, &["query", "search_term"]).unwrap_or("");
                (Classification::new(C::NetFetch), None, query.to_string())
            }
            (Some("Task"), _) => {
                let mode = text_field(input, &["mode", "permissionMode"]);
                let isolation = text_field(input, &["isolation"]);
                let mut j = Classification::new(C::AgentSpawn);
                let arg = match (mode, isolation) {
                    (None, None) => None,
                    (m, i) => {
                        j.opaque = Some(
                            "a sub-agent with its own permission mode or isolation".to_string(),
                        );
                        j.blast.reach = Reach::Machine;
                        Some(format!(
                            "mode:{}, isolation:{}",
                            m.unwrap_or("-"),
                            i.unwrap_or("-")
                        ))
                    }
                };
                (
                    j,
                    arg,
                    text_field(input, &["description", "subagent_type"])
                        .unwrap_or("")
                        .to_string(),
                )
            }
            (_, k) if META_TOOLS.contains(k) => (Classification::new(C::Meta), None, String::new()),
            (_, k) if k.starts_with("mcp") && tool.starts_with("mcp__") => {
                return mcp(call, cwd, roots);
            }
            _ => (
                Classification::opaque(
                    C::ExecUnknown,
                    &format!("`{tool}` is a tool the engine does not know"),
                ),
                None,
                String::new(),
            ),
        };
    let mut judgement = judgement;
    let mut unknowns: Vec<String> = judgement.opaque.iter().cloned().collect();
    let mut flags = ActionFlags::default();
    let signature_arg = signature_arg.or_else(|| {
        judgement
            .targets
            .first()
            .map(|(w, _)| path_signature(&w.text, Some(cwd), roots))
    });
    let targets = place_targets(
        &mut judgement,
        &mut Normalizer::new(Some(cwd), roots),
        &mut unknowns,
        &mut flags,
    );
    let signature = match signature_arg {
        Some(arg) => format!("{tool}({arg})"),
        None => tool.to_string(),
    };
    // A file tool is spelled by the path it touches, resolved.
    let canonical = canonical_tool(tool);
    let argument = targets
        .first()
        .filter(|_| path.is_some())
        .map(|t| t.path.clone())
        .or_else(|| primary_text(input).map(str::to_string))
        .unwrap_or_default();
    let spelling = format!("{canonical}({argument})");
    Action {
        capability: judgement.capability,
        blast: judgement.blast,
        signature,
        display: redact_text(format!("{tool} {display}").trim_end()),
        targets,
        understood: unknowns.is_empty(),
        unknowns,
        flags,
        subject: Subject {
            tool: canonical,
            text: primary_text(input).map(str::to_string),
            spelling_without_flags: spelling.clone(),
            spelling,
            ..Subject::default()
        },
    }
}

/// Claude Code's spelling of a tool, so one rule file covers every agent.
pub fn canonical_tool(tool: &str) -> String {
    match canonical_of(tool) {
        Some(name) => name.to_string(),
        None => tool.to_string(),
    }
}

/// Claude Code's name for the tool whose [`key`] is `key`, when it is a tool the engine knows:
/// the one table of every agent's spellings, which both naming and classifying read.
fn canonical_name(key: &str) -> Option<&'static str> {
    let name = match key {
        "bash" | "shell" | "runterminalcmd" | "runterminalcommand" | "executecommand"
        | "terminal" | "runcommand" | "execute" | "localshell" | "exec" | "runshellcommand"
        | "execcommand" | "shellcommand" => "Bash",
        "read" | "readfile" | "view" | "catfile" | "openfile" => "Read",
        "notebookread" => "NotebookRead",
        "write" | "writefile" | "createfile" | "newfile" | "create" => "Write",
        "edit"
        | "editfile"
        | "strreplace"
        | "strreplaceeditor"
        | "searchreplace"
        | "strreplacebasededittool"
        | "replace" => "Edit",
        "multiedit" => "MultiEdit",
        "notebookedit" | "editnotebook" => "NotebookEdit",
        "delete" | "deletefile" | "removefile" | "rmfile" | "deletepath" | "trashfile" => "Delete",
        "glob" | "globfilesearch" | "filesearch" | "findfiles" => "Glob",
        "grep" | "grepsearch" | "ripgrep" | "search" | "codebasesearch" | "semanticsearch"
        | "searchfilecontent" => "Grep",
        "ls" | "listdir" | "listdirectory" => "LS",
        "webfetch" | "fetch" | "httprequest" | "browser" | "webbrowse" => "WebFetch",
        "websearch" | "websearchtool" | "googlewebsearch" => "WebSearch",
        "task" | "agent" | "spawnagent" | "subagent" => "Task",
        _ => return None,
    };
    Some(name)
}

/// The argument a `Tool(specifier)` rule is matched against: the path, URL, query or command,
/// else the first non-empty string field by key.
fn primary_text(input: &Value) -> Option<&str> {
    const PRIMARY: &[&str] = &[
        "file_path",
        "target_file",
        "notebook_path",
        "path",
        "url",
        "query",
        "search_term",
        "pattern",
        "command",
        "relative_workspace_path",
    ];
    PRIMARY
        .iter()
        .find_map(|k| {
            input
                .get(*k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        })
        .or_else(|| {
            let map = input.as_object()?;
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            keys.into_iter()
                .find_map(|k| map.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        })
}

fn file_tool(
    capability: C,
    access: Access,
    path: Option<&str>,
) -> (Classification, Option<String>, String) {
    match path {
        Some(p) if !p.is_empty() => {
            let j = Classification::new(capability).with_paths([&Word::plain(p)], access);
            (j, None, p.to_string())
        }
        _ => (
            Classification::opaque(capability, "the call names no file"),
            Some("<no path>".to_string()),
            String::new(),
        ),
    }
}

fn search_tool(
    input: &Value,
    path: Option<&str>,
    pattern_is_glob: bool,
    cwd: &str,
    roots: &Roots,
) -> (Classification, Option<String>, String) {
    let pattern = text_field(input, &["pattern", "glob_pattern", "query", "regex"]).unwrap_or("");
    let mut j = Classification::new(C::FsReadWorkspace).recursive(true);
    // A path-shaped glob pattern names where it looks (`~/.ssh/*`, `/etc/**`), and so does a
    // relative one's fixed prefix below the search path (`vendor/home/**/*.pem` looks in
    // `vendor/home`, which may be a link out of the project).
    let fixed: Vec<&str> = pattern
        .split('/')
        .take_while(|s| !s.contains(['*', '?', '[', '{']))
        .collect();
    let pattern_root: Option<String> = if !pattern_is_glob {
        None
    } else if pattern.starts_with('/') || pattern.starts_with('~') || pattern.starts_with("..") {
        Some(if fixed.len() <= 1 && pattern.starts_with('/') {
            "/".to_string()
        } else {
            fixed.join("/")
        })
    } else if fixed.iter().any(|s| !s.is_empty() && *s != ".") {
        let prefix = fixed.join("/");
        Some(match path {
            Some(p) => crate::paths::join(p, &prefix),
            None => prefix,
        })
    } else {
        None
    };
    let place = pattern_root.as_deref().or(path).unwrap_or(".");
    j.targets.push((Word::plain(place), Access::Read));
    // Grep's `glob` (and `include`) filter names the files searched below the path, at any
    // depth when it has no `/` (ripgrep's globs): `**/` says so, and keeps a caller from
    // expanding it one level deep.
    if let Some(filter) = text_field(input, &["glob", "include"]) {
        let filter = if filter.contains('/') {
            std::borrow::Cow::Borrowed(filter)
        } else {
            std::borrow::Cow::Owned(format!("**/{filter}"))
        };
        // ripgrep matches it, not a shell: case-sensitive, hidden and ignored files skipped,
        // links not followed, so what the caller's disk expands it to (case-blind, every
        // name, into linked directories) is a superset of what it searches. A negation
        // (`!*.py`: every other file) or an escape is placed by its text.
        j.program_globs = filter.contains(['\\', '!']);
        let mut word = Word::plain(&crate::paths::join(place, &filter));
        word.glob = true;
        j.targets.push((word, Access::Read));
    }
    if let (Some(p), Some(_)) = (path, &pattern_root) {
        j.targets.push((Word::plain(p), Access::Read));
    }
    // Printing matching lines reads contents; listing files or counts reads names.
    let mode = match input.get("output_mode").and_then(Value::as_str) {
        Some("content") => "content",
        _ => "names",
    };
    let subject = path_signature(place, Some(cwd), roots);
    (
        j,
        Some(format!("{subject}, {mode}")),
        format!("{pattern} {}", path.unwrap_or(""))
            .trim()
            .to_string(),
    )
}

name_set! {
    static READ_VERBS = &[
        "get", "list", "read", "search", "query", "describe", "status", "fetch", "find", "show",
        "view", "lookup", "count", "check", "browse", "download", "inspect", "retrieve", "resolve",
        "explain", "info", "ls",
    ];
}
const EXEC_VERBS: &[&str] = &[
    "exec", "execute", "run", "eval", "evaluate", "invoke", "call", "spawn", "build", "shell",
    "command", "script", "install",
];
const PROSE_KEYS: &[&str] = &[
    "title",
    "body",
    "message",
    "description",
    "content",
    "text",
    "comment",
    "prompt",
    "query",
    "summary",
    "note",
    "notes",
    "markdown",
];
const SECRET_KEYS: &[&str] = &[
    "token",
    "password",
    "secret",
    "key",
    "apikey",
    "api_key",
    "credential",
    "credentials",
    "auth",
    "authorization",
    "passphrase",
    "cookie",
    "session",
];

fn mcp(call: &ToolCall, cwd: &str, roots: &Roots) -> Action {
    let tool = call.tool.as_str();
    let name = tool
        .rsplit("__")
        .next()
        .unwrap_or(tool)
        .to_ascii_lowercase();
    let verb = name.split(['_', '-', '.']).next().unwrap_or("");
    let secret_store = [
        "vault",
        "secret",
        "1password",
        "onepassword",
        "keychain",
        "bitwarden",
        "credential",
    ]
    .iter()
    .any(|s| tool.to_ascii_lowercase().contains(s));
    let mut j = Classification::new(C::McpCall);
    if READ_VERBS.contains(verb) {
        j.blast = crate::model::Blast {
            reach: Reach::Network,
            reversibility: Reversibility::Trivial,
            exposure: crate::model::Exposure::None,
            scale: Scale::Single,
        };
    } else if EXEC_VERBS.contains(&verb) {
        j.blast.reach = Reach::Machine;
        j.blast.reversibility = Reversibility::Hard;
    }
    // Path-shaped strings anywhere in the arguments are targets.
    let mut strings = Vec::new();
    collect_strings(&call.input, 0, &mut strings);
    for s in strings.iter().take(256) {
        if s.starts_with('/') || s.starts_with("~/") || s.starts_with("./") || s.starts_with("../")
        {
            j.targets.push((Word::plain(s), Access::Read));
        }
    }
    let mut unknowns = Vec::new();
    let mut flags = ActionFlags::default();
    let targets = place_targets(
        &mut j,
        &mut Normalizer::new(Some(cwd), roots),
        &mut unknowns,
        &mut flags,
    );
    if targets.iter().any(|t| t.placement.secret) || secret_store {
        j.capability = C::SecretRead;
        j.blast.exposure = crate::model::Exposure::ReadsSecrets;
    } else {
        j.capability = C::McpCall;
    }
    let shape = args_shape(&call.input, 0, secret_store, roots, cwd);
    Action {
        capability: j.capability,
        blast: j.blast,
        signature: format!("{tool}({shape})"),
        display: redact_text(tool),
        targets,
        understood: unknowns.is_empty(),
        unknowns,
        flags,
        subject: Subject {
            tool: tool.to_string(),
            text: primary_text(&call.input).map(str::to_string),
            spelling: format!("{tool}({})", call.input),
            spelling_without_flags: format!("{tool}({})", call.input),
            ..Subject::default()
        },
    }
}

fn collect_strings(value: &Value, depth: usize, out: &mut Vec<String>) {
    if depth > 4 || out.len() >= 256 {
        return;
    }
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items
            .iter()
            .for_each(|v| collect_strings(v, depth + 1, out)),
        Value::Object(map) => map
            .values()
            .for_each(|v| collect_strings(v, depth + 1, out)),
        _ => {}
    }
}

/// The shape of MCP arguments: keys sorted, values reduced to placeholders.
fn args_shape(value: &Value, depth: usize, secret_store: bool, roots: &Roots, cwd: &str) -> String {
    let Value::Object(map) = value else {
        return value_shape(None, value, depth, secret_store, roots, cwd);
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    let shown = keys.len().min(16);
    let mut parts: Vec<String> = keys
        .iter()
        .take(shown)
        .map(|k| {
            format!(
                "{k}:{}",
                value_shape(
                    Some(k),
                    map.get(*k).unwrap_or(&Value::Null),
                    depth + 1,
                    secret_store,
                    roots,
                    cwd
                )
            )
        })
        .collect();
    if keys.len() > shown {
        parts.push(format!("+{} more", keys.len() - shown));
    }
    parts.join(", ")
}

fn value_shape(
    key: Option<&str>,
    value: &Value,
    depth: usize,
    secret_store: bool,
    roots: &Roots,
    cwd: &str,
) -> String {
    let key_lower = key.unwrap_or("").to_ascii_lowercase();
    if secret_store || SECRET_KEYS.iter().any(|s| key_lower.contains(s)) {
        return "<redacted>".to_string();
    }
    match value {
        Value::Null => "<null>".to_string(),
        Value::Bool(b) => format!("<{b}>"),
        Value::Number(_) => "<n>".to_string(),
        Value::String(s) => {
            if PROSE_KEYS.contains(&key_lower.as_str()) {
                "<text>".to_string()
            } else if s.len() <= 24 && s.chars().any(|c| c.is_ascii_digit()) && !s.contains('/') {
                "<id>".to_string()
            } else if s.len() <= 16
                && !s.is_empty()
                && (s
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c == '-')
                    || s.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
            {
                s.clone()
            } else {
                normalize_arg(s, Some(cwd), roots)
            }
        }
        Value::Array(items) => match items.first() {
            None => "<list>".to_string(),
            Some(_) if depth >= 2 => "<list>".to_string(),
            Some(first) => format!(
                "<list of {}>",
                value_shape(key, first, depth + 1, secret_store, roots, cwd)
            ),
        },
        Value::Object(_) if depth >= 2 => "<obj>".to_string(),
        Value::Object(_) => format!("{{{}}}", args_shape(value, depth, secret_store, roots, cwd)),
    }
}

/// Prose an agent adds to a shell call that is not part of what the call does.
const PROSE_FIELDS: &[&str] = &["description", "explanation", "timeout"];

/// Canonical arguments: objects with sorted keys (serde_json's map is ordered); for a shell
/// call, the prose Claude Code adds (`description`, `timeout`) is not part of the call.
pub fn canonical_args(tool: &str, args: &Value) -> Value {
    match args {
        Value::Object(map) if tool == "Bash" => {
            // A copy of the map, then the prose taken out: cheaper than rebuilding it entry by
            // entry, and the same map.
            let mut kept = map.clone();
            kept.retain(|k, _| !PROSE_FIELDS.contains(&k.as_str()));
            Value::Object(kept)
        }
        other => other.clone(),
    }
}
