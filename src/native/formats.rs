//! The four agents' native rule files: reading the allow rules a file holds into `NativeRule`s
//! (under each agent's documented matcher, `docs/formats.md`), and writing leastgrant's exact
//! rules into a file without touching a rule it did not write. Claude Code and Copilot files are
//! JSON, so what leastgrant wrote is listed in a manifest beside the file; Codex `.rules` and
//! Gemini policy TOML take comments, so leastgrant's rules sit between two marker lines. Must
//! not: decide anything, or write a file (the caller writes).

use anyhow::{Result, anyhow, bail};
use serde_json::Value;

use crate::shared::ordered_json::Json;
use leastgrant_engine::{
    NativeAgent, NativeRule, NativeShape, claude_shape, is_plain_command, rule_words,
};

/// The first line of leastgrant's block in a file that takes comments.
pub const BEGIN: &str = "# >>> leastgrant export: generated, edit outside this block >>>";
/// The last line of it.
pub const END: &str = "# <<< leastgrant export <<<";

/// The agent a rule file belongs to: from `--to`, else by the file's name.
pub fn agent_named(name: &str) -> Result<NativeAgent> {
    NativeAgent::parse(name)
        .ok_or_else(|| anyhow!("no agent `{name}`; --to takes claude, codex, gemini or copilot"))
}

/// The agent whose file `path` is, by its name.
pub fn agent_of_file(path: &std::path::Path) -> NativeAgent {
    let name = path.to_string_lossy();
    if name.ends_with(".rules") {
        NativeAgent::Codex
    } else if name.ends_with(".toml") {
        NativeAgent::Gemini
    } else if name.contains("permissions-config") {
        NativeAgent::Copilot
    } else {
        NativeAgent::Claude
    }
}

/// An agent's rule file: reading its allow rules, spelling leastgrant's exact rules in it, and
/// merging them in.
pub trait RuleFile: Copy {
    /// Every allow rule of `text`, as this agent reads it.
    fn read(self, text: &str) -> Result<Vec<NativeRule>>;
    /// The rule text leastgrant writes for an exact command.
    fn render_exact(self, command: &str) -> String;
    /// `existing` with leastgrant's rules replaced by `ours` (rule texts from `render_exact`):
    /// `previous` lists what leastgrant wrote before (the manifest, for JSON files).
    fn merge(self, existing: Option<&str>, previous: &[String], ours: &[String]) -> Result<String>;
}

impl RuleFile for NativeAgent {
    fn read(self, text: &str) -> Result<Vec<NativeRule>> {
        match self {
            NativeAgent::Claude => read_claude(text),
            NativeAgent::Codex => read_codex(text),
            NativeAgent::Gemini => read_gemini(text),
            NativeAgent::Copilot => read_copilot(text),
        }
    }

    fn render_exact(self, command: &str) -> String {
        match self {
            NativeAgent::Claude => format!("Bash({command})"),
            NativeAgent::Gemini => gemini_rule(command),
            NativeAgent::Codex => codex_rule(&rule_words(command), &[command.to_string()], &[]),
            NativeAgent::Copilot => command.to_string(),
        }
    }

    fn merge(self, existing: Option<&str>, previous: &[String], ours: &[String]) -> Result<String> {
        match self {
            NativeAgent::Claude => merge_claude(existing, previous, ours),
            NativeAgent::Copilot => merge_copilot(existing),
            NativeAgent::Codex | NativeAgent::Gemini => {
                Ok(merge_block(existing.unwrap_or(""), ours))
            }
        }
    }
}

fn read_claude(text: &str) -> Result<Vec<NativeRule>> {
    let value: Value = serde_json::from_str(text).map_err(|e| anyhow!("not JSON: {e}"))?;
    let allow = value
        .pointer("/permissions/allow")
        .cloned()
        .unwrap_or(Value::Null);
    let list = match allow {
        Value::Null => Vec::new(),
        Value::Array(list) => list,
        _ => bail!("`permissions.allow` is not a list"),
    };
    list.iter()
        .map(|item| {
            let text = item
                .as_str()
                .ok_or_else(|| anyhow!("`permissions.allow` holds a non-string `{item}`"))?;
            Ok(NativeRule {
                text: text.to_string(),
                shape: claude_shape(text),
            })
        })
        .collect()
}

fn merge_claude(existing: Option<&str>, previous: &[String], ours: &[String]) -> Result<String> {
    let mut document = match existing {
        Some(text) if !text.trim().is_empty() => {
            serde_json::from_str::<Value>(text).map_err(|e| anyhow!("not JSON: {e}"))?;
            Json::parse(text).map_err(|e| anyhow!("{e}"))?
        }
        _ => Json::Object(Vec::new()),
    };
    let Json::Object(members) = &mut document else {
        bail!("the settings are not a JSON object");
    };
    if !members.iter().any(|(k, _)| k == "permissions") {
        members.push(("permissions".into(), Json::Object(Vec::new())));
    }
    let permissions = document
        .get_mut("permissions")
        .ok_or_else(|| anyhow!("no `permissions`"))?;
    let Json::Object(members) = permissions else {
        bail!("`permissions` is not an object");
    };
    if !members.iter().any(|(k, _)| k == "allow") {
        members.push(("allow".into(), Json::Array(Vec::new())));
    }
    let Some(Json::Array(allow)) = permissions.get_mut("allow") else {
        bail!("`permissions.allow` is not a list");
    };
    // Only what leastgrant wrote before leaves; a rule a person also wrote stays theirs.
    allow.retain(|item| {
        !item
            .as_str()
            .is_some_and(|s| previous.iter().any(|p| p == s))
    });
    for rule in ours {
        if !allow.iter().any(|item| item.as_str() == Some(rule)) {
            allow.push(Json::String(rule.clone()));
        }
    }
    Ok(document.to_pretty() + "\n")
}

fn read_copilot(text: &str) -> Result<Vec<NativeRule>> {
    let value: Value = serde_json::from_str(text).map_err(|e| anyhow!("not JSON: {e}"))?;
    let mut out = Vec::new();
    let locations = value.get("locations").and_then(Value::as_object);
    for location in locations.into_iter().flat_map(|m| m.values()) {
        let approvals = location.get("tool_approvals").and_then(Value::as_array);
        for approval in approvals.into_iter().flatten() {
            match approval.get("kind").and_then(Value::as_str) {
                Some("commands") => {
                    let ids = approval.get("commandIdentifiers").and_then(Value::as_array);
                    for id in ids.into_iter().flatten().filter_map(Value::as_str) {
                        out.push(NativeRule {
                            text: id.to_string(),
                            shape: NativeShape::Words(rule_words(id)),
                        });
                    }
                }
                Some(kind @ ("read" | "write")) => out.push(NativeRule {
                    text: kind.to_string(),
                    shape: NativeShape::Everything(
                        if kind == "read" { "Read" } else { "Write" }.into(),
                    ),
                }),
                Some(kind) => out.push(NativeRule {
                    text: kind.to_string(),
                    shape: NativeShape::Other,
                }),
                None => bail!("a tool approval without `kind`"),
            }
        }
    }
    Ok(out)
}

/// Copilot's approvals match an identifier (the program, or git and gh with a subcommand) and
/// whatever follows, so no exact rule exists: the file is checked and left as it is.
fn merge_copilot(existing: Option<&str>) -> Result<String> {
    match existing {
        Some(text) => {
            read_copilot(text)?;
            Ok(text.to_string())
        }
        None => Ok("{\n  \"locations\": {}\n}\n".to_string()),
    }
}

/// A Copilot `commands` approval, for the format's own sake (`--check` reads these).
#[cfg(test)]
pub fn copilot_approval(location: &str, identifiers: &[String]) -> String {
    let value = serde_json::json!({"locations": {location: {"tool_approvals": [
        {"kind": "commands", "commandIdentifiers": identifiers}]}}});
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// Gemini: `argsPattern` is a regular expression searched in the JSON text of the call's
/// arguments, so `"command":"<the command>"` closed by its quote matches that command alone.
fn gemini_rule(command: &str) -> String {
    let mut pattern = String::from("\"command\":\"");
    for c in command.chars() {
        if matches!(c, '.' | '+' | '^') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('"');
    format!(
        "[[rule]]\ntoolName = \"run_shell_command\"\nargsPattern = {}\ndecision = \"allow\"\npriority = 100\n",
        toml_string(&pattern)
    )
}

fn gemini_exact(pattern: &str) -> Option<String> {
    let inner = pattern.strip_prefix("\"command\":\"")?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('.' | '+' | '^')) => out.push(e),
                _ => return None,
            },
            '.' | '+' | '^' | '"' => return None,
            c => out.push(c),
        }
    }
    is_plain_command(&out).then_some(out)
}

fn read_gemini(text: &str) -> Result<Vec<NativeRule>> {
    let value: toml::Value = toml::from_str(text).map_err(|e| anyhow!("not TOML: {e}"))?;
    let mut out = Vec::new();
    let rules = value.get("rule").and_then(toml::Value::as_array);
    for rule in rules.into_iter().flatten() {
        if rule.get("decision").and_then(toml::Value::as_str) != Some("allow") {
            continue;
        }
        let tool = rule
            .get("toolName")
            .and_then(toml::Value::as_str)
            .unwrap_or("*");
        let text = toml::to_string(rule).unwrap_or_default().replace('\n', " ");
        let shape = if let Some(prefix) = rule.get("commandPrefix") {
            let first = match prefix {
                toml::Value::String(s) => Some(s.clone()),
                toml::Value::Array(a) => a.first().and_then(|v| v.as_str()).map(str::to_string),
                _ => None,
            };
            first.map_or(NativeShape::Other, NativeShape::Text)
        } else if let Some(pattern) = rule.get("argsPattern").and_then(toml::Value::as_str) {
            gemini_exact(pattern).map_or(NativeShape::Other, NativeShape::Exact)
        } else if rule.get("commandRegex").is_some() || rule.get("mcpName").is_some() {
            NativeShape::Other
        } else if tool == "run_shell_command" || tool == "*" {
            NativeShape::Everything("Bash".into())
        } else if tool == "read_file" {
            NativeShape::Everything("Read".into())
        } else {
            NativeShape::Other
        };
        out.push(NativeRule { text, shape });
    }
    Ok(out)
}

/// Codex: `prefix_rule` with the command's words, its recorded spelling as `match` and the
/// commands of the history it must not cover as `not_match`, which Codex checks at load.
pub fn codex_rule(pattern: &[String], matches: &[String], not_matches: &[String]) -> String {
    let list = |items: &[String]| {
        items
            .iter()
            .map(|s| toml_string(s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "prefix_rule(\n    pattern = [{}],\n    decision = \"allow\",\n    justification = \"leastgrant: allowed by the learned envelope\",\n    match = [{}],\n    not_match = [{}],\n)\n",
        list(pattern),
        list(matches),
        list(not_matches)
    )
}

fn read_codex(text: &str) -> Result<Vec<NativeRule>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("prefix_rule(") {
        let body_start = at + "prefix_rule(".len();
        let body = rest.get(body_start..).unwrap_or("");
        let end = closing(body).ok_or_else(|| anyhow!("a `prefix_rule(` is never closed"))?;
        let call = body.get(..end).unwrap_or("");
        rest = body.get(end + 1..).unwrap_or("");
        if field(call, "decision").is_some_and(|d| !d.contains("\"allow\"")) {
            continue;
        }
        let pattern =
            field(call, "pattern").ok_or_else(|| anyhow!("a `prefix_rule` without `pattern`"))?;
        let shape = match serde_json::from_str::<Value>(pattern.trim().trim_end_matches(',')) {
            Ok(Value::Array(items)) if items.iter().all(Value::is_string) => NativeShape::Words(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
            ),
            Ok(Value::Array(_)) => NativeShape::Other,
            _ => bail!("cannot read the pattern `{}`", pattern.trim()),
        };
        out.push(NativeRule {
            text: format!("prefix_rule(pattern = {})", pattern.trim()),
            shape,
        });
    }
    Ok(out)
}

/// The index of the `)` closing a call whose body starts `text`.
fn closing(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' => depth += 1,
            ']' => depth -= 1,
            ')' if depth == 0 => return Some(i),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The value text of `name = …` in a call body, up to its end at depth 0.
fn field<'t>(call: &'t str, name: &str) -> Option<&'t str> {
    let mut search = 0;
    while let Some(found) = call.get(search..)?.find(name) {
        let at = search + found;
        let before_ok =
            at == 0 || call[..at].ends_with(|c: char| c.is_whitespace() || c == ',' || c == '(');
        let after = call.get(at + name.len()..)?.trim_start();
        if before_ok && after.starts_with('=') {
            let value = after.get(1..)?;
            let mut depth = 0i32;
            let mut in_string = false;
            for (i, c) in value.char_indices() {
                match c {
                    '"' => in_string = !in_string,
                    '[' | '(' if !in_string => depth += 1,
                    ']' | ')' if !in_string => depth -= 1,
                    ',' if !in_string && depth == 0 => return value.get(..i),
                    _ => {}
                }
            }
            return Some(value);
        }
        search = at + name.len();
    }
    None
}

/// `text` with leastgrant's block (between `BEGIN` and `END`) replaced by `ours`, everything
/// outside it byte for byte.
fn merge_block(text: &str, ours: &[String]) -> String {
    let block = if ours.is_empty() {
        String::new()
    } else {
        format!("{BEGIN}\n{}{END}\n", ours.join("\n"))
    };
    match (text.find(BEGIN), text.find(END)) {
        (Some(start), Some(end)) if end > start => {
            let after = text.get(end + END.len()..).unwrap_or("");
            let after = after.strip_prefix('\n').unwrap_or(after);
            format!("{}{block}{after}", text.get(..start).unwrap_or(""))
        }
        _ => {
            let mut out = text.to_string();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            if !out.is_empty() && !block.is_empty() {
                out.push('\n');
            }
            out + &block
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_renders_exact_bash_rules_and_reads_them_back() {
        assert_eq!(
            NativeAgent::Claude.render_exact("npm test"),
            "Bash(npm test)"
        );
        let read = read_claude(r#"{"permissions": {"allow": ["Bash(npm test)", "Bash(npm:*)"]}}"#)
            .unwrap();
        assert_eq!(read[0].shape, NativeShape::Exact("npm test".into()));
        assert_eq!(read[1].shape, NativeShape::Words(vec!["npm".into()]));
    }

    #[test]
    fn gemini_renders_an_args_pattern_that_reads_back_exact() {
        let rule = NativeAgent::Gemini.render_exact("npm run build.prod");
        assert!(rule.contains("toolName = \"run_shell_command\""), "{rule}");
        assert!(
            rule.contains(r#"argsPattern = "\"command\":\"npm run build\\.prod\"""#),
            "{rule}"
        );
        let read = read_gemini(&rule).unwrap();
        assert_eq!(
            read[0].shape,
            NativeShape::Exact("npm run build.prod".into())
        );
        let prefix = read_gemini("[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"git \"\ndecision = \"allow\"\n").unwrap();
        assert_eq!(prefix[0].shape, NativeShape::Text("git ".into()));
    }

    #[test]
    fn codex_renders_prefix_rules_with_examples_and_reads_them_back() {
        let rule = codex_rule(
            &["npm".into(), "test".into()],
            &["npm test".into()],
            &["npm publish".into()],
        );
        assert!(
            rule.starts_with("prefix_rule(\n    pattern = [\"npm\", \"test\"],"),
            "{rule}"
        );
        assert!(rule.contains("match = [\"npm test\"]"), "{rule}");
        assert!(rule.contains("not_match = [\"npm publish\"]"), "{rule}");
        let read = read_codex(&rule).unwrap();
        assert_eq!(
            read[0].shape,
            NativeShape::Words(vec!["npm".into(), "test".into()])
        );
        let block = merge_block(
            "# mine\nprefix_rule(pattern = [\"ls\"])\n",
            std::slice::from_ref(&rule),
        );
        assert!(block.starts_with("# mine\nprefix_rule(pattern = [\"ls\"])\n\n# >>> leastgrant"));
        assert_eq!(merge_block(&block, &[rule]), block);
    }

    #[test]
    fn copilot_approvals_are_identifiers() {
        let text = copilot_approval("/home/dev/proj", &["git status".into()]);
        assert!(text.contains("\"kind\": \"commands\""), "{text}");
        let read = read_copilot(&text).unwrap();
        assert_eq!(
            read[0].shape,
            NativeShape::Words(vec!["git".into(), "status".into()])
        );
        assert_eq!(merge_copilot(Some(&text)).unwrap(), text);
    }
}
