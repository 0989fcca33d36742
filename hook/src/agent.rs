//! The agents' wire formats: what a payload says about the call (in the engine's tool names:
//! Codex's argv commands and one-file patches, Gemini's and Copilot's own tool names and keys),
//! and how a verdict is written back so that each agent enforces it (docs/formats.md). Which events there are, their
//! surfaces and what a verdict becomes on each are the catalogue's (`catalogue.rs`).
//!
//! Routing is by the installer-written `--agent`, never by a case-folded event name: Claude's
//! `PreToolUse` and Cursor's `preToolUse` are different surfaces with different answers.

use leastgrant_engine::sha256::Sha256;
use leastgrant_engine::{Decision, ToolCall, hex};
use serde_json::{Map, Value, json};

use crate::catalogue::{Agent, Answered, Carries, Surface};

/// What a payload says about the call.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The event name as sent.
    pub event: String,
    /// Its surface.
    pub surface: Surface,
    /// The call, when the payload describes one.
    pub call: Option<ToolCall>,
    /// Why the payload describes no usable call (a gate then answers conservatively).
    pub problem: Option<String>,
    /// The session or conversation.
    pub session_id: String,
    /// The agent's call id, or one derived from the call so before and after events meet.
    pub call_id: String,
    /// Where the call runs.
    pub cwd: Option<String>,
    /// The permission mode, when the agent says.
    pub permission_mode: Option<String>,
    /// Whether a person answers prompts, as far as the payload says.
    attended: Option<bool>,
}

impl Request {
    /// A person is answering prompts: only an allowlist of modes; an absent mode is not known.
    /// Codex's `default` says nothing about a person (its approval policy may never ask), so
    /// only its other modes count, as unattended.
    pub fn attended(&self) -> Option<bool> {
        self.attended
    }
}

fn attended(agent: Agent, mode: Option<&str>) -> Option<bool> {
    match (agent, mode?) {
        (Agent::Codex, "default") => None,
        (Agent::Codex, _) => Some(false),
        (_, mode) => Some(matches!(mode, "default" | "plan")),
    }
}

fn text<'a>(payload: &'a Value, key: &str) -> Option<&'a str> {
    payload.get(key).and_then(Value::as_str)
}

/// The event a payload is: its `hook_event_name`; Copilot's camelCase dialect names none, so
/// there a payload with `toolName` is `preToolUse`, and `postToolUse` once it has a result.
fn event_name(agent: Agent, payload: &Value) -> String {
    let named = text(payload, "hook_event_name").or_else(|| text(payload, "hookEventName"));
    match (agent, named) {
        (_, Some(name)) => name.to_string(),
        (Agent::Copilot, None) if payload.get("toolResult").is_some() => "postToolUse".into(),
        (Agent::Copilot, None) if payload.get("toolName").is_some() => "preToolUse".into(),
        _ => String::new(),
    }
}

/// Reads a payload for an agent.
pub fn request(agent: Agent, payload: &Value) -> Request {
    let event = event_name(agent, payload);
    let known = agent.event(&event);
    let surface = known.map_or(Surface::Other, |e| e.surface);
    let carries = known.map_or(Carries::Tool, |e| e.carries);
    let session_id = match agent {
        Agent::Cursor => text(payload, "conversation_id").or_else(|| text(payload, "session_id")),
        Agent::Copilot => text(payload, "session_id").or_else(|| text(payload, "sessionId")),
        Agent::ClaudeCode | Agent::Codex | Agent::Gemini => text(payload, "session_id"),
    }
    .unwrap_or("")
    .to_string();
    let cwd = text(payload, "cwd")
        .map(str::to_string)
        .or_else(|| first_workspace_root(payload));
    let (call, problem) = match call_of(agent, carries, payload) {
        Ok(call) => (Some(call), None),
        Err(problem) => (None, Some(problem)),
    };
    let call = call.map(|mut c| {
        c.cwd = cwd.clone();
        c
    });
    let call_id = text(payload, "tool_use_id")
        .filter(|id| !id.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| derived_call_id(&session_id, call.as_ref()));
    let permission_mode = text(payload, "permission_mode").map(str::to_string);
    Request {
        event,
        surface,
        call,
        problem,
        session_id,
        call_id,
        cwd,
        attended: attended(agent, permission_mode.as_deref()),
        permission_mode,
    }
}

/// `h:` and 16 hex of SHA-256 over the session, the tool and its input: Cursor's shell and MCP
/// gates carry no call id, and their after-events carry the same fields.
fn derived_call_id(session: &str, call: Option<&ToolCall>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(session.as_bytes());
    hasher.update([0]);
    if let Some(call) = call {
        hasher.update(call.tool.as_bytes());
        hasher.update([0]);
        hasher.update(call.input.to_string().as_bytes());
    }
    let digest = hasher.finalize();
    format!("h:{}", hex(digest.get(..8).unwrap_or_default()))
}

/// A VS Code `uri.path` (`/d:/My%20Proj`) as a file-system path (`d:/My Proj`).
fn first_workspace_root(payload: &Value) -> Option<String> {
    let root = payload
        .get("workspace_roots")?
        .as_array()?
        .iter()
        .find_map(Value::as_str)?;
    let decoded = leastgrant_engine::percent_decode(root);
    let bytes = decoded.as_bytes();
    let drive = bytes.first() == Some(&b'/')
        && bytes.get(1).is_some_and(u8::is_ascii_alphabetic)
        && bytes.get(2) == Some(&b':');
    Some(if drive {
        decoded.get(1..).unwrap_or("").to_string()
    } else {
        decoded
    })
}

/// A tool input that may arrive as a JSON string (Cursor MCP) or an object.
fn input_object(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
        Some(other) => other.clone(),
        None => Value::Object(Map::new()),
    }
}

fn call_of(agent: Agent, carries: Carries, payload: &Value) -> Result<ToolCall, String> {
    let named = |tool: &str, input: Value| ToolCall {
        tool: tool.to_string(),
        input,
        cwd: None,
        descriptor: None,
    };
    let tool_name = || {
        text(payload, "tool_name")
            .filter(|t| !t.is_empty())
            .ok_or_else(|| "the payload names no tool".to_string())
    };
    let file_path =
        || text(payload, "file_path").ok_or_else(|| "the payload has no file path".to_string());
    match (agent, carries) {
        (_, Carries::Shell) => {
            let command = text(payload, "command")
                .ok_or_else(|| "the payload has no shell command".to_string())?;
            Ok(named("Bash", json!({ "command": command })))
        }
        (_, Carries::Mcp) => {
            // The identity is the server the host reports, never a tool name that claims one.
            let tool = tool_name()?;
            let server = text(payload, "mcp_server_name")
                .map(str::to_string)
                .or_else(|| text(payload, "url").map(host_of))
                .or_else(|| text(payload, "command").map(program_of))
                .unwrap_or_else(|| "unknown-server".to_string());
            let name = format!("mcp__{}__{}", identifier(&server), identifier(tool));
            Ok(named(&name, input_object(payload.get("tool_input"))))
        }
        (_, Carries::FileRead) => Ok(named("Read", json!({ "file_path": file_path()? }))),
        (_, Carries::FileEdited) => Ok(named("Edit", json!({ "file_path": file_path()? }))),
        (Agent::Cursor, Carries::Tool) => {
            let tool = tool_name()?;
            let input = input_object(payload.get("tool_input"));
            Ok(match tool {
                "Shell" => named("Bash", input),
                "Delete" => named("delete_file", input),
                other => named(other, input),
            })
        }
        (Agent::ClaudeCode, Carries::Tool) => {
            let tool = tool_name()?;
            Ok(named(tool, input_object(payload.get("tool_input"))))
        }
        (Agent::Codex, Carries::Tool) => {
            let tool = tool_name()?;
            let input = input_object(payload.get("tool_input"));
            if tool == "apply_patch" {
                let (tool, input) = patch_call(&input)?;
                return Ok(named(tool, input));
            }
            Ok(named(tool, argv_as_command(input)))
        }
        (Agent::Gemini, Carries::Tool) => {
            let tool = tool_name()?;
            let (tool, input) =
                spelled(tool, input_object(payload.get("tool_input")), GEMINI_TOOLS);
            Ok(named(tool, input))
        }
        (Agent::Copilot, Carries::Tool) => {
            let tool = tool_name()?;
            let (tool, input) =
                spelled(tool, input_object(payload.get("tool_input")), COPILOT_TOOLS);
            Ok(named(tool, input))
        }
        (Agent::Copilot, Carries::CopilotTool) => {
            let tool = text(payload, "toolName")
                .filter(|t| !t.is_empty())
                .ok_or_else(|| "the payload names no tool".to_string())?;
            let input = match payload.get("toolArgs") {
                Some(Value::String(s)) => serde_json::from_str(s)
                    .map_err(|_| "the tool's arguments are not JSON".to_string())?,
                Some(other) => other.clone(),
                None => Value::Object(Map::new()),
            };
            let (tool, input) = spelled(tool, input, COPILOT_TOOLS);
            Ok(named(tool, input))
        }
        (_, Carries::CopilotTool) => Err("the payload is not this agent's".to_string()),
    }
}

/// Codex's shell `command` as an argv array becomes one shell command, each word quoted by the
/// engine's one rule (so the ledger and `leastgrant allow` read what the engine judged). An argv
/// with a word that is not text stays an array: the engine then judges it as unreadable.
fn argv_as_command(mut input: Value) -> Value {
    if let Some(Value::Array(words)) = input.get("command") {
        let words: Option<Vec<String>> = words
            .iter()
            .map(|w| w.as_str().map(leastgrant_engine::quote_word))
            .collect();
        if let (Some(words), Value::Object(map)) = (words, &mut input) {
            map.insert("command".to_string(), Value::String(words.join(" ")));
        }
    }
    input
}

/// An agent's tool spelling: its own name, the name the engine knows, and the input keys
/// renamed to the engine's (kept, with the engine's key added where it is missing).
type Spelling = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// Gemini CLI's built-in tools.
const GEMINI_TOOLS: &[Spelling] = &[
    ("run_shell_command", "Bash", &[]),
    ("read_file", "Read", &[("absolute_path", "file_path")]),
    ("write_file", "Write", &[]),
    ("replace", "Edit", &[]),
    ("glob", "Glob", &[("dir_path", "path")]),
    ("search_file_content", "Grep", &[("dir_path", "path")]),
    ("grep_search", "Grep", &[("dir_path", "path")]),
    ("list_directory", "LS", &[("dir_path", "path")]),
    ("web_fetch", "WebFetch", &[]),
    ("google_web_search", "WebSearch", &[]),
];

/// Copilot CLI's built-in tools.
const COPILOT_TOOLS: &[Spelling] = &[
    ("bash", "Bash", &[]),
    ("view", "Read", &[("path", "file_path")]),
    (
        "create",
        "Write",
        &[("path", "file_path"), ("file_text", "content")],
    ),
    ("edit", "Edit", &[("path", "file_path")]),
];

fn spelled<'a>(tool: &'a str, mut input: Value, table: &[Spelling]) -> (&'a str, Value) {
    let Some((_, name, keys)) = table.iter().find(|(own, _, _)| *own == tool) else {
        return (tool, input);
    };
    if let Value::Object(map) = &mut input {
        for (from, to) in *keys {
            if let (Some(value), false) = (map.get(*from).cloned(), map.contains_key(*to)) {
                map.insert((*to).to_string(), value);
            }
        }
    }
    (name, input)
}

/// A Codex `apply_patch` as the file call it is: one file added (`Write`), changed (`Edit`) or
/// deleted (`Delete`). A patch over several files is not one call the engine can judge.
fn patch_call(input: &Value) -> Result<(&'static str, Value), String> {
    let body = match input {
        Value::String(s) => s.as_str(),
        other => other
            .get("command")
            .or_else(|| other.get("input"))
            .and_then(Value::as_str)
            .ok_or_else(|| "the patch has no text".to_string())?,
    };
    let mut files: Vec<(&'static str, &str)> = Vec::new();
    for line in body.lines() {
        let line = line.trim_end();
        for (marker, tool) in [
            ("*** Add File: ", "Write"),
            ("*** Update File: ", "Edit"),
            ("*** Delete File: ", "Delete"),
            ("*** Move to: ", "Write"),
        ] {
            if let Some(path) = line.strip_prefix(marker) {
                files.push((tool, path.trim()));
            }
        }
    }
    match files.as_slice() {
        [(tool, path)] => Ok((tool, json!({ "file_path": path }))),
        [] => Err("the patch names no file".to_string()),
        more => Err(format!(
            "the patch touches {} files, and leastgrant judges a patch of one",
            more.len()
        )),
    }
}

fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', ':', '?'])
        .next()
        .unwrap_or(rest)
        .to_string()
}

/// The server a launch command starts: the first word that is not a launcher or a flag
/// (`npx -y @acme/mcp` → `mcp`, `uvx some-server` → `some-server`).
fn program_of(command: &str) -> String {
    const LAUNCHERS: &[&str] = &[
        "npx", "uvx", "bunx", "pnpx", "node", "deno", "bun", "python", "python3", "uv", "run",
        "dlx", "pnpm", "yarn", "exec",
    ];
    let base = |word: &str| word.rsplit(['/', '\\']).next().unwrap_or(word).to_string();
    command
        .split_whitespace()
        .map(base)
        .find(|word| !word.starts_with('-') && !LAUNCHERS.contains(&word.as_str()))
        .unwrap_or_else(|| base(command.split_whitespace().next().unwrap_or(command)))
}

/// Keeps an MCP name part to the characters MCP names use, so `__` cannot be smuggled in.
fn identifier(part: &str) -> String {
    let cleaned: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    cleaned.replace("__", "_")
}

/// What the hook writes back, and what it told the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// Standard output: one JSON object, or nothing.
    pub stdout: Option<Value>,
    /// What the agent was told: `allow`, `ask`, `deny` or `abstain`.
    pub answered: &'static str,
}

/// Writes a verdict for a surface, as the catalogue says it is answered there. `reason` is for
/// the person and the model; `ask_instead` says how to proceed where a surface cannot ask.
pub fn render(surface: Surface, decision: Decision, reason: &str, ask_instead: &str) -> Rendered {
    let answered = surface.answers(decision);
    // An ask this surface cannot carry is refused with the way to proceed instead of a reason.
    let text = if decision == Decision::Ask && answered == Answered::Deny {
        ask_instead
    } else {
        reason
    };
    let verdict = answered.as_str();
    let cursor =
        |text: &str| json!({"permission": verdict, "user_message": text, "agent_message": text});
    let stdout = match (surface, answered) {
        (_, Answered::Abstain) => None,
        (Surface::ClaudePreToolUse, _) => Some(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": verdict,
            "permissionDecisionReason": text,
        }})),
        (Surface::ClaudePermissionRequest, Answered::Allow) => Some(json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }})),
        (Surface::ClaudePermissionRequest, Answered::Ask) => None,
        (Surface::ClaudePermissionRequest, Answered::Deny) => Some(json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": text},
        }})),
        (
            Surface::CursorAskable | Surface::CursorNoAsk | Surface::CursorReadFile,
            Answered::Allow,
        ) => Some(json!({"permission": "allow"})),
        (Surface::CursorAskable | Surface::CursorNoAsk, _) => Some(cursor(text)),
        // No message for the model on a file read.
        (Surface::CursorReadFile, _) => Some(json!({"permission": verdict, "user_message": text})),
        // Only a deny is written; an allow was abstained above.
        (Surface::CodexPreToolUse, _) => Some(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": text,
        }})),
        (Surface::CodexPermissionRequest, Answered::Allow) => Some(json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }})),
        (Surface::CodexPermissionRequest, _) => Some(json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": text},
        }})),
        (Surface::CopilotPreToolUse, Answered::Allow) => {
            Some(json!({"permissionDecision": "allow"}))
        }
        (Surface::CopilotPreToolUse, _) => Some(json!({
            "permissionDecision": verdict,
            "permissionDecisionReason": text,
        })),
        (Surface::GeminiBeforeTool, Answered::Allow) => Some(json!({"decision": "allow"})),
        // `reason` goes to the model, `systemMessage` to the person.
        (Surface::GeminiBeforeTool, _) => Some(json!({
            "decision": "deny",
            "reason": text,
            "systemMessage": text,
        })),
        (Surface::Ran { .. } | Surface::Other, _) => None,
    };
    Rendered {
        stdout,
        answered: verdict,
    }
}

/// The answer when the input itself cannot be used: a deny wherever the agent honours one, so
/// unreadable input never reads as permission. The event is unknown then, so the answer is the
/// agent's gate's (`PreToolUse`, `BeforeTool`); Copilot's carries both of its dialects' fields.
pub fn unreadable(agent: Agent, reason: &str) -> Value {
    let pre_tool_use = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    });
    match agent {
        Agent::ClaudeCode | Agent::Codex => json!({ "hookSpecificOutput": pre_tool_use }),
        Agent::Cursor => {
            json!({"permission": "deny", "user_message": reason, "agent_message": reason})
        }
        Agent::Copilot => json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
            "hookSpecificOutput": pre_tool_use,
        }),
        Agent::Gemini => json!({"decision": "deny", "reason": reason, "systemMessage": reason}),
    }
}
