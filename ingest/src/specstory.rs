//! SpecStory Markdown exports (`<project>/.specstory/history/*.md`): one event per tool call.
//!
//! An export opens with a comment naming the agent and the session (`<!-- Claude Code Session
//! <id> (…) -->`), then holds messages, each under a `_**User (ts)**_` or `_**Agent (model ts)**_`
//! header (`Agent - sidechain` inside a sub-agent). A tool call is a `<tool-use
//! data-tool-type="…" data-tool-name="…">` block, the last thing in its agent message: a
//! `<summary>Tool use: **Name**…</summary>`, the input as the agent's SpecStory formatter renders
//! it, then the result in a code fence. That result is all SpecStory keeps of the outcome:
//! Claude Code's refusal, cancel, interrupt and hook texts are classified by [`crate::outcome`];
//! an interrupt that left no result shows only as a `[Request interrupted by user for tool use]`
//! user message right after the call.
//!
//! Owns: finding the real tool-use blocks (not the ones quoted in text or in a tool's output),
//! and the outcome of each call; the `input` module recovers the agent's input fields from the rendering.
//! Must not: guess a permission mode (SpecStory does not record one).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{BadCounts, command_and_path, excerpt, parse_timestamp_us, stable_id};
use crate::outcome::{self, ResultFacts};
use crate::project;
use crate::schema::{Event, Outcome, agent};
use crate::source::{Flag, MAX_TEXT_FILE_BYTES, Machine, Source, just_the_file};

mod body;
mod input;

use body::{Body, decode_entities};
use input::{WRITE_TOOLS, recover_input};

/// The longest result kept in an event, in bytes.
const RESULT_EXCERPT_BYTES: usize = 2048;

/// How results begin when a call never got as far as its input's own rendering (a refused
/// Write shows no content fence, only this).
const RESULT_OPENINGS: &[&str] = &[
    "File created successfully",
    "The file ",
    "<tool_use_error>",
    "Error",
    "PreToolUse:",
    "Hook PreToolUse:",
    outcome::REFUSED,
    outcome::CANCELLED,
    outcome::SUBAGENT_REFUSED,
    outcome::INTERRUPT_MARKER,
    outcome::CLASSIFIER_DENIED,
    outcome::NOT_GRANTED,
];

/// SpecStory's Markdown exports.
pub const SOURCE: Source = Source {
    kind: "specstory",
    flag: Flag {
        long: "specstory",
        value_name: "DIR",
        help: "A SpecStory history directory (`.specstory/history`, repeatable) [default: the \
               current project's, when it has one]",
    },
    default_places,
    discover,
    files: just_the_file,
    max_file_bytes: MAX_TEXT_FILE_BYTES,
    read: |path, contents, bad| read(path, &contents.bytes, bad),
};

/// The history directory of the project the current directory is in, when it has one.
fn default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    machine
        .cwd
        .ancestors()
        .map(|d| d.join(".specstory/history"))
        .filter(|d| d.is_dir())
        .take(1)
        .collect()
}

/// The exports (`*.md`) in a history directory; none when it cannot be read. A place that is not
/// a directory is itself the one export.
pub fn discover(dir: &Path) -> Vec<PathBuf> {
    if !dir.is_dir() && std::fs::symlink_metadata(dir).is_ok() {
        return vec![dir.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect()
}

/// Reads one export's bytes: invalid UTF-8 is replaced (and counted), a BOM dropped.
fn read(path: &Path, bytes: &[u8], bad: &mut BadCounts) -> Vec<Event> {
    let text = String::from_utf8_lossy(bytes);
    if matches!(text, std::borrow::Cow::Owned(_)) {
        bad.add("invalid-utf8");
    }
    read_specstory(path, text.trim_start_matches('\u{feff}'), bad)
}

/// Reads one SpecStory export into events, one per tool call, in file order.
pub fn read_specstory(path: &Path, text: &str, bad: &mut BadCounts) -> Vec<Event> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let session = session_comment(&lines);
    if session.is_none() {
        bad.add("specstory-no-session-header");
    }
    let blocks = find_blocks(&lines, bad);
    let (agent, session_id) = match session {
        Some(s) => (s.agent, s.id),
        None => {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            ("unknown".to_string(), stable_id(&[&stem]))
        }
    };

    let calls: Vec<Call> = blocks.iter().map(|b| Call::parse(b, &agent, bad)).collect();
    let found_cwd = calls.iter().find_map(|c| c.cwd.clone()).or_else(|| {
        calls
            .iter()
            .filter_map(|c| c.result.as_deref())
            .find_map(reset_cwd)
    });
    let source_path = path.display().to_string();

    let mut events: Vec<Event> = calls
        .into_iter()
        .enumerate()
        .map(|(index, call)| {
            let seq = u32::try_from(index).unwrap_or(u32::MAX);
            let (outcome, rule) = call.outcome();
            // The call's content is in the id, not the file name: SpecStory saves one session
            // under several names, and the writer's event-id dedupe should keep one copy.
            let event_id = stable_id(&[
                "specstory",
                &agent,
                &session_id,
                &seq.to_string(),
                &call.tool_name,
                &call.tool_input,
            ]);
            let (command, file_path) = command_and_path(&call.input);
            Event {
                event_id,
                agent: agent.clone(),
                agent_version: None,
                source: format!("{source_path}:{}", call.line),
                source_kind: SOURCE.kind.to_string(),
                project_key: String::new(),
                project_root: String::new(),
                session_id: session_id.clone(),
                seq,
                ts_us: call.ts_us,
                cwd: call.cwd.clone(),
                git_branch: None,
                permission_mode: None,
                attended: None,
                tool_name: call.tool_name.clone(),
                tool_input: call.tool_input.clone(),
                command,
                file_path,
                outcome,
                is_error: call.is_error,
                is_sidechain: call.sidechain,
                tool_use_id: None,
                outcome_rule: rule.to_string(),
                denial_kind: None,
                result_excerpt: call
                    .result
                    .as_deref()
                    .map(|r| excerpt(r, RESULT_EXCERPT_BYTES)),
                decided_by: None,
            }
        })
        .collect();
    // The working directory the export shows is recorded; else `project::place` decides from
    // the paths the session touched, falling back on where the export sits.
    project::record(&mut events, found_cwd.as_deref(), path);
    events
}

/// The agent and session named by the export's header comment.
struct Session {
    agent: String,
    id: String,
}

/// `<!-- Claude Code Session <id> (<time>) -->`, looked for only before the first message, so a
/// header quoted later in the conversation is not taken for this file's.
fn session_comment(lines: &[&str]) -> Option<Session> {
    for line in lines {
        if message_header(line).is_some() {
            return None;
        }
        let Some(inner) = line
            .trim()
            .strip_prefix("<!--")
            .and_then(|l| l.strip_suffix("-->"))
        else {
            continue;
        };
        let Some((name, rest)) = inner.trim().split_once(" Session ") else {
            continue;
        };
        let Some(id) = rest.split_whitespace().next() else {
            continue;
        };
        if !name.trim().is_empty() {
            return Some(Session {
                agent: agent_slug(name.trim()),
                id: id.to_string(),
            });
        }
    }
    None
}

/// The agent's short name from SpecStory's provider name (`Claude Code`, `Codex CLI`,
/// `Cursor IDE`, `Cursor CLI`, `Gemini CLI`, …).
fn agent_slug(provider: &str) -> String {
    let lower = provider.to_ascii_lowercase();
    let known = [
        ("claude", agent::CLAUDE_CODE),
        ("codex", agent::CODEX),
        ("cursor", agent::CURSOR),
        ("gemini", "gemini"),
        ("droid", "droid"),
        ("copilot", "copilot"),
        ("opencode", "opencode"),
        ("antigravity", "antigravity"),
    ];
    if let Some((_, slug)) = known.iter().find(|(word, _)| lower.contains(word)) {
        return (*slug).to_string();
    }
    let slug: String = lower
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    slug.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// A `_**User (…)**_` or `_**Agent[ - sidechain] (…)**_` line.
struct Header {
    agent: bool,
    sidechain: bool,
    ts_us: Option<i64>,
}

fn message_header(line: &str) -> Option<Header> {
    let inner = line.trim_end().strip_prefix("_**")?.strip_suffix("**_")?;
    let (agent, rest) = match inner.strip_prefix("Agent") {
        Some(rest) => (true, rest),
        None => (false, inner.strip_prefix("User")?),
    };
    let (markers, details) = match rest.split_once(" (") {
        Some((markers, details)) => (markers, details.strip_suffix(')')?),
        None => (rest, ""),
    };
    // Only ` - sidechain`-style markers may sit between the role and the details.
    if !(markers.is_empty() || markers.starts_with(" - ")) {
        return None;
    }
    Some(Header {
        agent,
        sidechain: markers.contains("sidechain"),
        ts_us: header_time(details),
    })
}

/// The time at the end of a header's details: `model 2026-01-16 15:23:36Z`, an ISO time
/// (older exports), or local time with an offset (`2025-11-13 21:12:14-0700`).
fn header_time(details: &str) -> Option<i64> {
    let tokens: Vec<&str> = details.split_whitespace().collect();
    let last_two = tokens
        .len()
        .checked_sub(2)
        .and_then(|at| tokens.get(at..))
        .map(|t| t.join(" "));
    last_two
        .as_deref()
        .and_then(parse_time)
        .or_else(|| tokens.last().and_then(|t| parse_time(t)))
}

fn parse_time(text: &str) -> Option<i64> {
    if let Some(us) = parse_timestamp_us(text) {
        return Some(us);
    }
    // SpecStory's local-time form: `…-0700`, which the shared parser (UTC only) refuses.
    let split = text.len().checked_sub(5)?;
    let (clock, zone) = (text.get(..split)?, text.get(split..)?);
    let sign = match zone.get(..1)? {
        "+" => 1,
        "-" => -1,
        _ => return None,
    };
    let hours: i64 = zone.get(1..3)?.parse().ok()?;
    let minutes: i64 = zone.get(3..5)?.parse().ok()?;
    let local = parse_timestamp_us(&format!("{clock}Z"))?;
    Some(local - sign * (hours * 60 + minutes) * 60_000_000)
}

/// One `<tool-use>` block as found in the file.
struct Block<'a> {
    /// 1-based line of the opening tag.
    line: usize,
    tool_type: String,
    tool_name: Option<String>,
    /// The lines between the opening and the closing tag.
    lines: &'a [&'a str],
    sidechain: bool,
    ts_us: Option<i64>,
    /// The next message is the user's `[Request interrupted by user for tool use]`.
    interrupt_follows: bool,
}

/// The real tool-use blocks, in order. A block counts only where the renderer puts one: right
/// under an agent header, or right after another block (Cursor renders one call twice), or in
/// an agent message's text outside a code fence (Cursor puts calls in text). Tags quoted in
/// fenced examples or in a tool's output are not calls.
fn find_blocks<'a>(lines: &'a [&'a str], bad: &mut BadCounts) -> Vec<Block<'a>> {
    #[derive(PartialEq)]
    enum Previous {
        Header,
        Block,
        Fence,
        Text,
    }
    let mut blocks: Vec<Block<'a>> = Vec::new();
    let mut header: Option<Header> = None;
    let mut previous = Previous::Text;
    let mut text_fence: Option<usize> = None;
    // The block the next user message would follow directly (only a `---` may come between).
    let mut last_block: Option<usize> = None;
    let mut at = 0;
    while let Some(&line) = lines.get(at) {
        if let Some(found) = message_header(line) {
            if !found.agent
                && let Some(index) = last_block
                && first_content_line(lines, at + 1).map(str::trim)
                    == Some(outcome::INTERRUPT_MARKER)
                && let Some(block) = blocks.get_mut(index)
            {
                block.interrupt_follows = true;
            }
            header = Some(found);
            previous = Previous::Header;
            text_fence = None;
            last_block = None;
            at += 1;
            continue;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || is_message_id(trimmed) {
            at += 1;
            continue;
        }
        if trimmed != "---" {
            last_block = None;
        }
        if let Some(length) = text_fence {
            if fence_close(line, length) {
                text_fence = None;
            }
            previous = Previous::Fence;
            at += 1;
            continue;
        }
        let in_agent_message = header.as_ref().is_some_and(|h| h.agent);
        if let Some(open) = tool_use_open(line)
            && in_agent_message
            && previous != Previous::Fence
        {
            let (close, terminated) = block_end(lines, at);
            if !terminated {
                bad.add("specstory-unterminated-tool-use");
            }
            let block = Block {
                line: at + 1,
                tool_type: open.tool_type,
                tool_name: open.tool_name,
                lines: lines.get(at + 1..close).unwrap_or(&[]),
                sidechain: header.as_ref().is_some_and(|h| h.sidechain),
                ts_us: header.as_ref().and_then(|h| h.ts_us),
                interrupt_follows: false,
            };
            let duplicate = previous == Previous::Block
                && blocks.last().is_some_and(|b| b.renders_same_call(&block));
            if duplicate {
                // Keep whichever rendering says more, at the first one's line.
                if let Some(last) = blocks.last_mut()
                    && last.is_empty()
                    && !block.is_empty()
                {
                    last.lines = block.lines;
                }
            } else {
                blocks.push(block);
            }
            last_block = blocks.len().checked_sub(1);
            previous = Previous::Block;
            at = if terminated { close + 1 } else { close };
            continue;
        }
        if let Some((length, _)) = fence_open(line) {
            text_fence = Some(length);
            previous = Previous::Fence;
        } else {
            previous = Previous::Text;
        }
        at += 1;
    }
    blocks
}

impl Block<'_> {
    /// Nothing but the summary.
    fn is_empty(&self) -> bool {
        split_summary(self.lines)
            .1
            .iter()
            .all(|l| l.trim().is_empty() || l.trim() == "</details>")
    }

    /// Cursor IDE exports render a call once in the message text and once more, empty, as the
    /// message's tool: two blocks for one call.
    fn renders_same_call(&self, next: &Block<'_>) -> bool {
        self.tool_name == next.tool_name && (self.is_empty() || next.is_empty())
    }
}

/// `<!-- message-id: … -->`, written under a header when SpecStory is asked to.
fn is_message_id(trimmed: &str) -> bool {
    trimmed.starts_with("<!-- message-id:")
}

/// The first line with text from `from` on.
fn first_content_line<'a>(lines: &'a [&'a str], from: usize) -> Option<&'a str> {
    lines
        .get(from..)?
        .iter()
        .copied()
        .find(|l| !l.trim().is_empty() && !is_message_id(l.trim()))
}

struct ToolUseOpen {
    tool_type: String,
    tool_name: Option<String>,
}

/// `<tool-use data-tool-type="shell" data-tool-name="Bash">`, optionally followed by
/// `<details>`, alone on its line. (Go source quoting the tag escapes its quotes: `=\"`.)
fn tool_use_open(line: &str) -> Option<ToolUseOpen> {
    let rest = line.trim_end().strip_prefix("<tool-use")?;
    if !(rest.starts_with(' ') || rest.starts_with('>')) {
        return None;
    }
    let (attributes, after) = rest.split_once('>')?;
    if !(after.is_empty() || after == "<details>") {
        return None;
    }
    let attribute = |name: &str| -> Option<String> {
        let (_, value) = attributes.split_once(&format!("{name}=\""))?;
        let (value, _) = value.split_once('"')?;
        Some(decode_entities(value))
    };
    Some(ToolUseOpen {
        tool_type: attribute("data-tool-type").unwrap_or_default(),
        tool_name: attribute("data-tool-name").filter(|n| !n.is_empty()),
    })
}

fn is_close_tag(line: &str) -> bool {
    matches!(line.trim(), "</details></tool-use>" | "</tool-use>")
}

/// Where the block opened at `open` closes: the first closing tag followed by a message
/// boundary (a header, `---`, another block, the end). A closing tag inside the call's own
/// output is followed by more output. Returns the closing line and whether there was one; an
/// unterminated block ends at the next header outside a code fence, or at the end of the file.
fn block_end(lines: &[&str], open: usize) -> (usize, bool) {
    let mut fence: Option<usize> = None;
    let mut last_close: Option<usize> = None;
    let mut at = open + 1;
    while let Some(&line) = lines.get(at) {
        if is_close_tag(line) {
            if boundary_follows(lines, at + 1) {
                return (at, true);
            }
            last_close = Some(at);
        } else if fence.is_none() && message_header(line).is_some() {
            return match last_close {
                // Cursor text may go on after a call in the same message.
                Some(close) => (close, true),
                None => (at, false),
            };
        }
        fence = match fence {
            Some(length) if fence_close(line, length) => None,
            Some(length) => Some(length),
            None => fence_open(line).map(|(length, _)| length),
        };
        at += 1;
    }
    match last_close {
        Some(close) => (close, true),
        None => (lines.len(), false),
    }
}

fn boundary_follows(lines: &[&str], from: usize) -> bool {
    match first_content_line(lines, from) {
        None => true,
        Some(line) => {
            line.trim() == "---" || message_header(line).is_some() || tool_use_open(line).is_some()
        }
    }
}

/// A code fence opening: up to three spaces, three or more backticks, an info string.
fn fence_open(line: &str) -> Option<(usize, &str)> {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        return None;
    }
    let length = rest.len() - rest.trim_start_matches('`').len();
    let info = rest.get(length..)?;
    (length >= 3 && !info.contains('`')).then_some((length, info.trim()))
}

/// A line closing a fence opened with `length` backticks.
fn fence_close(line: &str, length: usize) -> bool {
    let rest = line.trim_start_matches(' ');
    let rest = rest.trim_end();
    line.len() - line.trim_start_matches(' ').len() <= 3
        && rest.len() >= length
        && rest.bytes().all(|b| b == b'`')
}

/// A block's lines split at its `<summary>…</summary>`: the summary's text (raw) and the
/// lines after it. Cursor puts `<details>` before the summary, on its line or the one before.
fn split_summary<'a>(lines: &'a [&'a str]) -> (Option<String>, &'a [&'a str]) {
    let Some(first) = lines
        .iter()
        .position(|l| !l.trim().is_empty() && l.trim() != "<details>")
    else {
        return (None, &[]);
    };
    let Some(line) = lines.get(first) else {
        return (None, &[]);
    };
    let start = line.trim_start();
    let start = start
        .strip_prefix("<details>")
        .unwrap_or(start)
        .trim_start();
    let Some(opened) = start.strip_prefix("<summary>") else {
        return (None, lines.get(first..).unwrap_or(&[]));
    };
    // A summary can run over lines (Cursor shows a multi-line command in it).
    let mut text = String::new();
    let mut at = first;
    let mut piece = opened;
    loop {
        if let Some((inside, _)) = piece.split_once("</summary>") {
            text.push_str(inside);
            return (Some(text), lines.get(at + 1..).unwrap_or(&[]));
        }
        text.push_str(piece);
        at += 1;
        match lines.get(at) {
            Some(next) => {
                text.push('\n');
                piece = next;
            }
            // Never closed: take the first line as the summary.
            None => {
                return (
                    Some(opened.to_string()),
                    lines.get(first + 1..).unwrap_or(&[]),
                );
            }
        }
    }
}

#[derive(PartialEq)]
enum Section {
    Plain,
    Fields,
    Parameters,
    Ignored,
}

fn parse_body(tool: &str, lines: &[&str]) -> Body {
    let mut body = Body::default();
    let mut section = Section::Plain;
    let mut result_labelled = false;
    let mut pending_key: Option<String> = None;
    let mut at = 0;
    while let Some(&line) = lines.get(at) {
        if let Some((length, info)) = fence_open(line) {
            let takes_result = result_labelled
                || (section == Section::Plain && is_result_fence(tool, info, &body, lines, at));
            if takes_result {
                // The result is the block's last part, and its text is verbatim: inner fences
                // cannot be trusted to pair up, so it runs to the block's last closing fence.
                let close = (at + 1..lines.len())
                    .rev()
                    .find(|&i| lines.get(i).is_some_and(|l| fence_close(l, length)));
                body.unclosed_result = close.is_none();
                let end = close.unwrap_or(lines.len());
                body.result = Some(fenced_text(lines.get(at + 1..end).unwrap_or(&[])));
                return body;
            }
            let end = (at + 1..lines.len())
                .find(|&i| lines.get(i).is_some_and(|l| fence_close(l, length)))
                .unwrap_or(lines.len());
            let content = fenced_text(lines.get(at + 1..end).unwrap_or(&[]));
            match section {
                Section::Fields => {
                    if let Some(key) = pending_key.take() {
                        body.fields
                            .insert(key, Value::String(decode_entities(&content)));
                    }
                }
                Section::Parameters => {
                    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&content) {
                        body.fields.extend(map);
                    }
                }
                Section::Plain => body.fences.push((info.to_ascii_lowercase(), content)),
                Section::Ignored => {}
            }
            at = end + 1;
            continue;
        }
        let trimmed = line.trim();
        match trimmed {
            "**Input:**" => section = Section::Fields,
            "Parameters:" => section = Section::Parameters,
            "Additional data:" => section = Section::Ignored,
            _ if is_result_label(trimmed) => {
                result_labelled = true;
                body.labelled_error |= trimmed.contains("Error");
            }
            _ if trimmed.is_empty() => {}
            _ => {
                // AskUserQuestion's answer is shown as text, not in a fence.
                if let Some(answer) = trimmed.strip_prefix("**Answer:**") {
                    body.result = Some(answer.trim().to_string());
                    return body;
                }
                if section == Section::Fields {
                    if let Some((key, value)) = field_line(trimmed) {
                        let key = key.to_string();
                        match value.strip_prefix('`') {
                            Some(inline) if inline.ends_with('`') => {
                                let inline = inline.strip_suffix('`').unwrap_or(inline);
                                body.fields
                                    .insert(key, Value::String(decode_entities(inline)));
                            }
                            // Some SpecStory versions show a multi-line value inline: it runs
                            // to the line whose closing backtick ends the field.
                            Some(first) => {
                                let end = inline_value_end(lines, at + 1);
                                let mut value = vec![first];
                                value
                                    .extend(lines.get(at + 1..=end).unwrap_or(&[]).iter().copied());
                                let joined = value.join("\n");
                                let joined = joined.trim_end().strip_suffix('`').unwrap_or(&joined);
                                body.fields
                                    .insert(key, Value::String(decode_entities(joined)));
                                at = end + 1;
                                continue;
                            }
                            // A multi-line value follows in a fence.
                            None if value.is_empty() => pending_key = Some(key),
                            None => {
                                body.fields
                                    .insert(key, Value::String(decode_entities(value)));
                            }
                        }
                    }
                } else if section == Section::Plain {
                    body.text.push(line.to_string());
                }
            }
        }
        at += 1;
    }
    body
}

/// `- key: value` of a generic input list, the key an identifier.
fn field_line(trimmed: &str) -> Option<(&str, &str)> {
    let (key, value) = trimmed.strip_prefix("- ")?.split_once(':')?;
    let identifier = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    identifier.then_some((key, value.trim()))
}

fn is_result_label(trimmed: &str) -> bool {
    matches!(
        trimmed,
        "**Result:**" | "Result:" | "**Output:**" | "Output:" | "**Error:**" | "Error:"
    )
}

/// The last line of an inline value left open at `from - 1`: the first line ending in a
/// backtick that is followed by nothing, another field or a result label; else the last line.
fn inline_value_end(lines: &[&str], from: usize) -> usize {
    for at in from..lines.len() {
        let Some(line) = lines.get(at) else { break };
        if !line.trim_end().ends_with('`') {
            continue;
        }
        match first_content_line(lines, at + 1).map(str::trim) {
            None => return at,
            Some(next) if field_line(next).is_some() || is_result_label(next) => return at,
            Some(_) => {}
        }
    }
    lines.len().saturating_sub(1).max(from.saturating_sub(1))
}

/// Whether a fence in a block's plain part is its result: fences labelled with a language hold
/// input (a multi-line command, a diff, a file's content); results are `text` or unlabelled.
fn is_result_fence(tool: &str, info: &str, body: &Body, lines: &[&str], at: usize) -> bool {
    if WRITE_TOOLS.contains(&tool) && body.fences.is_empty() {
        // A Write's first fence is the file's content (unlabelled for a file with no
        // extension), unless the call never got that far.
        let first = lines.get(at + 1).map(|l| l.trim_start()).unwrap_or("");
        return RESULT_OPENINGS
            .iter()
            .any(|opening| first.starts_with(opening));
    }
    info.is_empty() || info.eq_ignore_ascii_case("text")
}

/// Fenced lines as text. SpecStory escapes a fence inside fenced content as `\```` at the
/// start of a line; the backslash is its, not the agent's.
fn fenced_text(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|line| {
            let rest = line.trim_start();
            match rest.strip_prefix("\\```") {
                Some(after) => format!(
                    "{}```{after}",
                    line.get(..line.len() - rest.len()).unwrap_or("")
                ),
                None => (*line).to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One call, its input recovered from the rendering.
struct Call {
    line: usize,
    tool_name: String,
    input: Value,
    tool_input: String,
    cwd: Option<String>,
    result: Option<String>,
    is_error: Option<bool>,
    sidechain: bool,
    ts_us: Option<i64>,
    interrupt_follows: bool,
}

impl Call {
    fn parse(block: &Block<'_>, agent: &str, bad: &mut BadCounts) -> Call {
        let (summary, rest) = split_summary(block.lines);
        if summary.is_none() {
            bad.add("specstory-tool-use-without-summary");
        }
        let (summary_name, suffix) = summary.as_deref().map(summary_parts).unwrap_or((None, ""));
        let tool_name = match (&block.tool_name, summary_name) {
            (Some(name), _) => name.clone(),
            (None, Some(name)) => name,
            (None, None) => {
                bad.add("specstory-tool-use-without-name");
                "unknown".to_string()
            }
        };
        // Cursor closes its own `<details>` before `</tool-use>`.
        let mut body_lines = rest;
        while let Some((last, before)) = body_lines.split_last() {
            if last.trim().is_empty() || last.trim() == "</details>" {
                body_lines = before;
            } else {
                break;
            }
        }
        let body = parse_body(&tool_name, body_lines);
        if body.unclosed_result {
            bad.add("specstory-unclosed-result-fence");
        }
        let result = body
            .result
            .as_deref()
            .map(|r| decode_entities(r.trim_end()))
            .filter(|r| !r.trim().is_empty());
        let input = recover_input(
            &tool_name,
            &block.tool_type,
            suffix,
            &body,
            result.as_deref(),
        );
        let cwd = ["cwd", "workdir", "working_directory"]
            .iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .map(str::to_string);
        let is_error = if body.labelled_error {
            Some(true)
        } else if agent == agent::CLAUDE_CODE {
            result.as_deref().and_then(claude_error_flag)
        } else {
            None
        };
        Call {
            line: block.line,
            tool_input: input.to_string(),
            tool_name,
            input,
            cwd,
            result,
            is_error,
            sidechain: block.sidechain,
            ts_us: block.ts_us,
            interrupt_follows: block.interrupt_follows,
        }
    }

    fn outcome(&self) -> (Outcome, &'static str) {
        let Some(text) = self.result.as_deref() else {
            if self.interrupt_follows {
                return (Outcome::Interrupted, "specstory-interrupt-marker");
            }
            // SpecStory leaves some results out (TodoWrite's success, empty output, calls whose
            // result it could not pair), so a call without one is taken to have run.
            return (Outcome::Ran, "specstory-no-result");
        };
        let (outcome, rule) = outcome::classify(&ResultFacts {
            tool: &self.tool_name,
            text,
            is_error: self.is_error,
            denial_kind: None,
            interrupted: false,
        });
        // A tool interrupted while it ran ends its own output with the marker
        // (`Exit code 137\n[Request interrupted by user for tool use]`).
        if matches!(outcome, Outcome::Ran | Outcome::Errored)
            && text.lines().any(|l| l.trim() == outcome::INTERRUPT_MARKER)
        {
            return (Outcome::Interrupted, "specstory-interrupt-in-result");
        }
        (outcome, rule)
    }
}

/// Claude Code marks a failed call only in the flag SpecStory drops, but two result texts
/// carry it: `<tool_use_error>…` and a shell's `Exit code N` (N ≠ 0) first line.
fn claude_error_flag(result: &str) -> Option<bool> {
    if result.starts_with("<tool_use_error>") {
        return Some(true);
    }
    let first = result.lines().next().unwrap_or("");
    let code: i64 = first.strip_prefix("Exit code ")?.trim().parse().ok()?;
    (code != 0).then_some(true)
}

/// The name in `Tool use: **Name**` and what follows it (a command in backticks for Codex and
/// Cursor CLI, `• Read file: …` for Cursor IDE).
fn summary_parts(summary: &str) -> (Option<String>, &str) {
    let summary = summary.trim();
    let Some(rest) = summary.strip_prefix("Tool use: **") else {
        return (None, summary);
    };
    match rest.split_once("**") {
        Some((name, after)) => (Some(decode_entities(name)), after.trim()),
        None => (None, summary),
    }
}

/// Claude Code's `Shell cwd was reset to <dir>`: the session's working directory.
fn reset_cwd(result: &str) -> Option<String> {
    result
        .lines()
        .find_map(|l| l.trim().strip_prefix("Shell cwd was reset to "))
        .map(|dir| dir.trim().to_string())
        .filter(|dir| !dir.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_times() {
        let header =
            message_header("_**Agent - sidechain (claude-haiku-4-5 2026-01-16 22:29:05Z)**_")
                .unwrap();
        assert!(header.agent && header.sidechain);
        assert_eq!(header.ts_us, parse_timestamp_us("2026-01-16T22:29:05Z"));
        let iso = message_header("_**User (2026-01-19T19:05:27.193Z)**_").unwrap();
        assert_eq!(iso.ts_us, parse_timestamp_us("2026-01-19T19:05:27.193Z"));
        let local = message_header("_**Agent (gpt-5 2025-11-13 14:12:14-0700)**_").unwrap();
        assert_eq!(local.ts_us, parse_timestamp_us("2025-11-13T21:12:14Z"));
        assert_eq!(
            message_header("_**Agent (claude-4-sonnet)**_")
                .unwrap()
                .ts_us,
            None
        );
        assert!(message_header("_**Users said**_").is_none());
    }

    #[test]
    fn fences() {
        assert_eq!(fence_open("```text"), Some((3, "text")));
        assert_eq!(fence_open("````"), Some((4, "")));
        assert_eq!(fence_open("``not`"), None);
        assert!(fence_close("````", 3) && !fence_close("``", 3) && !fence_close("```go", 3));
    }
}
