//! Recovering a SpecStory tool call's input: the agent's field names and values, from the way
//! each agent's formatter renders them (a fenced command, a backticked path, `• Read file: …`),
//! and the tool families those renderings belong to.

use serde_json::{Map, Value};

use super::body::{Body, decode_entities};

/// Tools whose input is one shell command, by the names the agents give them.
pub(super) const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "bash",
    "exec_command",
    "Shell",
    "shell",
    "shell_command",
    "local_shell",
    "run_terminal_cmd",
    "run_terminal_command",
    "run_terminal_command_v2",
    "run_shell_command",
    "Execute",
    "execute_command",
];
/// Tools SpecStory types as `shell` that take no command: they read or stop a background shell.
pub(super) const SHELL_TYPED_WITHOUT_COMMAND: &[&str] =
    &["TaskOutput", "KillShell", "KillBash", "BashOutput"];
/// Code-fence languages of a shell command shown as a block.
pub(super) const SHELL_LANGUAGES: &[&str] = &["bash", "sh", "shell", "zsh", "console"];
/// Tools that read one file.
pub(super) const READ_TOOLS: &[&str] = &[
    "Read",
    "read_file",
    "read_file_v2",
    "NotebookRead",
    "view_file",
    "read",
];
/// Tools whose first code fence is the new file's content.
pub(super) const WRITE_TOOLS: &[&str] = &["Write", "write_file", "create_file", "Create"];
/// Tools that change one file in place.
pub(super) const EDIT_TOOLS: &[&str] = &[
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "edit_file",
    "edit_file_v2",
    "search_replace",
    "write",
    "replace",
    "str_replace_editor",
];
/// Tools rendered as ` path `…` pattern `…` include `…``.
pub(super) const SEARCH_TOOLS: &[&str] = &[
    "Grep",
    "Glob",
    "grep",
    "ripgrep",
    "glob_file_search",
    "search_file_content",
];
/// Tools rendered as one backticked URL.
pub(super) const URL_TOOLS: &[&str] = &["WebFetch", "FetchUrl", "web_fetch"];
/// Tools rendered as one backticked query.
pub(super) const QUERY_TOOLS: &[&str] = &["WebSearch", "web_search", "google_web_search"];

/// The tool input as JSON, with the agent's field names where the rendering shows them.
pub(super) fn recover_input(
    tool: &str,
    tool_type: &str,
    suffix: &str,
    body: &Body,
    result: Option<&str>,
) -> Value {
    let mut input = Map::new();
    let suffix_code = suffix
        .strip_prefix('`')
        .and_then(|s| s.strip_suffix('`'))
        .map(decode_entities);
    // Cursor IDE: `• Run command: …`, `• Read file: …`, `• Edit file: …`.
    let suffix_value = suffix
        .strip_prefix('•')
        .and_then(|s| s.split_once(':'))
        .map(|(_, v)| decode_entities(v.trim()));
    let first_spans = body
        .text
        .first()
        .map(|l| backtick_spans(l))
        .unwrap_or_default();
    let first_span = first_spans.first().map(|(_, v)| v.clone());

    let shell = SHELL_TOOLS.contains(&tool)
        || (tool_type == "shell" && !SHELL_TYPED_WITHOUT_COMMAND.contains(&tool));
    if shell {
        let fenced = body
            .fences
            .iter()
            .find(|(info, _)| SHELL_LANGUAGES.contains(&info.as_str()))
            .map(|(_, c)| decode_entities(c));
        let command_line = body.text.iter().rposition(|l| inline_code(l).is_some());
        let from_line = command_line
            .and_then(|at| body.text.get(at))
            .and_then(|l| inline_code(l));
        let command = fenced
            .clone()
            .or_else(|| suffix_code.clone())
            .or(from_line)
            .or_else(|| suffix_value.clone())
            .or_else(|| {
                body.fields
                    .get("command")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        if command.is_some() {
            // Claude Code's Bash shows its `description` above the command.
            let description: Vec<&str> = body
                .text
                .iter()
                .enumerate()
                .filter(|(at, _)| fenced.is_some() || Some(*at) != command_line)
                .map(|(_, l)| l.trim())
                .collect();
            put(&mut input, "command", command);
            put(
                &mut input,
                "description",
                Some(decode_entities(&description.join("\n"))),
            );
            return Value::Object(input);
        }
    }
    if !body.fields.is_empty() {
        return Value::Object(body.fields.clone());
    }
    if let Some(object) = body
        .fences
        .iter()
        .find(|(info, _)| info == "json")
        .and_then(|(_, c)| match serde_json::from_str::<Value>(c) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        })
    {
        return Value::Object(object);
    }
    let path_line = body
        .text
        .first()
        .filter(|l| l.starts_with(" `") || l.starts_with('`'))
        .and(first_span.clone());
    if READ_TOOLS.contains(&tool) {
        put(&mut input, "file_path", path_line.or(suffix_value));
    } else if WRITE_TOOLS.contains(&tool) || EDIT_TOOLS.contains(&tool) {
        // Claude Code's Edit and Write show no path; their result names the file.
        put(
            &mut input,
            "file_path",
            path_line
                .or(suffix_value)
                .or_else(|| result.and_then(path_from_result)),
        );
    } else if SEARCH_TOOLS.contains(&tool) {
        for (label, value) in &first_spans {
            if matches!(label.as_str(), "pattern" | "path" | "include" | "glob") {
                put(&mut input, label, Some(value.clone()));
            }
        }
    } else if URL_TOOLS.contains(&tool) {
        put(&mut input, "url", first_span.or(suffix_value));
    } else if QUERY_TOOLS.contains(&tool) {
        put(&mut input, "query", first_span.or(suffix_value));
    }
    if input.is_empty() {
        let first_line = body.text.first().map(|l| decode_entities(l.trim()));
        let summary = first_line
            .or(suffix_code)
            .or_else(|| Some(decode_entities(suffix)));
        put(&mut input, "summary", summary);
    }
    Value::Object(input)
}

/// Sets `key` when there is a value.
fn put(input: &mut Map<String, Value>, key: &str, value: Option<String>) {
    if let Some(value) = value.filter(|v| !v.is_empty()) {
        input.insert(key.to_string(), Value::String(value));
    }
}

/// A line that is one backticked span (a single-line command): `` `ls -la` ``.
fn inline_code(line: &str) -> Option<String> {
    let line = line.trim();
    if line.starts_with("```") || line.len() < 2 {
        return None;
    }
    line.strip_prefix('`')?
        .strip_suffix('`')
        .map(decode_entities)
}

/// The backticked spans of a line, each with the word before it (` path `./` pattern `x``).
fn backtick_spans(line: &str) -> Vec<(String, String)> {
    let mut spans = Vec::new();
    let mut rest = line;
    while let Some((before, after)) = rest.split_once('`') {
        let Some((value, next)) = after.split_once('`') else {
            break;
        };
        let label = before.split_whitespace().last().unwrap_or("").to_string();
        spans.push((label, decode_entities(value)));
        rest = next;
    }
    spans
}

/// The file a Claude Code Edit or Write result names.
pub(super) fn path_from_result(result: &str) -> Option<String> {
    let first = result.lines().next()?;
    if let Some(path) = first.strip_prefix("File created successfully at: ") {
        return Some(path.trim().to_string());
    }
    let rest = first.strip_prefix("The file ")?;
    let (path, _) = rest.split_once(" has been ")?;
    Some(path.to_string())
}
