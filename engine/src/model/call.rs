//! A tool call as the agent made it, and what the analysis found it does: the input of the
//! engine and the output of [`crate::analyze`], shared by everything above it.

use super::action::Action;

/// One tool call as the agent made it. The tool name is the agent's own; the input is its JSON.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCall {
    /// The agent's tool name (`Bash`, `Read`, `run_terminal_cmd`, `mcp__github__create_issue`).
    pub tool: String,
    /// The tool's input.
    pub input: serde_json::Value,
    /// The working directory the call runs in (the project root when unknown).
    pub cwd: Option<String>,
    /// The tool's descriptor digest, when the agent reports the tool's schema (MCP).
    pub descriptor: Option<String>,
}

impl ToolCall {
    /// A shell command, as Claude Code's Bash tool would send it.
    pub fn shell(command: &str, cwd: Option<&str>) -> ToolCall {
        ToolCall {
            tool: "Bash".to_string(),
            input: serde_json::json!({ "command": command }),
            cwd: cwd.map(str::to_string),
            descriptor: None,
        }
    }
}

/// What a tool call does.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// Its actions, in the order they would run.
    pub actions: Vec<Action>,
    /// Everything was accounted for: parsed, every program known, every path placed.
    pub understood: bool,
    /// What was not (parse problems and each action's unknowns).
    pub problems: Vec<String>,
    /// A network fetch pipes into a shell or an interpreter.
    pub piped_from_network: bool,
}
