//! Codex's standing approvals: the `prefix_rule(pattern = [...], decision = "allow")`
//! statements of its `.rules` files (Starlark; "don't ask again for commands that start with …"
//! appends to `~/.codex/rules/default.rules`), as `granted` rows for every Codex project
//! (`crate::standing`).
//!
//! Owns: reading the statements — string and list literals, keyword arguments, `#` comments — not
//! evaluating Starlark. A `prefix_rule` whose decision is `allow` (the default) becomes one Bash
//! prefix rule per expansion of its alternatives (`["git", ["status", "diff"]]` is `git status`
//! and `git diff`); `prompt` and `forbidden` rules grant nothing; other statements are passed
//! over; a statement that cannot be parsed is counted and the next one read.

use std::path::{Path, PathBuf};

use crate::common::{BadCounts, files_below};
use crate::schema::{Event, agent};
use crate::source::{Contents, Flag, Machine, Source, just_the_file};
use crate::standing::{
    MAX_ALTERNATIVES, MAX_SETTINGS_BYTES, Rule, Scope, bash_prefix_rule, kind, rows, time_of,
    unusable,
};

/// Codex's `.rules` files.
pub const SOURCE: Source = Source {
    kind: kind::CODEX_RULES,
    flag: Flag {
        long: "codex-rules",
        value_name: "PATH",
        help: "A Codex `rules` directory or a `.rules` file: its `prefix_rule`s with decision \
               `allow` are standing approvals for every Codex project (repeatable) [default: \
               `$CODEX_HOME/rules`, else `~/.codex/rules`]",
    },
    default_places,
    discover,
    files: just_the_file,
    max_file_bytes: MAX_SETTINGS_BYTES,
    read,
};

fn default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    let base = (machine.env)("CODEX_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| machine.home.join(".codex"));
    let rules = base.join("rules");
    if rules.is_dir() {
        vec![rules]
    } else {
        Vec::new()
    }
}

/// The `.rules` files directly in a directory, or the file itself.
pub fn discover(place: &Path) -> Vec<PathBuf> {
    files_below(place, |_| false, |name| name.ends_with(".rules"))
}

fn read(path: &Path, contents: &Contents, bad: &mut BadCounts) -> Vec<Event> {
    let text = String::from_utf8_lossy(&contents.bytes);
    let rules = allow_rules(&text, bad);
    let scope = Scope {
        agent: agent::CODEX,
        kind: SOURCE.kind,
        file: path,
        project: None,
    };
    rows(&scope, rules, time_of(path, bad))
}

/// A token of the statements, with the line it starts on.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Name(String),
    Text(String),
    Number,
    Open(char),
    Close(char),
    Comma,
    Equals,
    Other,
}

/// Splits Starlark text into tokens; an unterminated string ends the text (counted by the
/// caller as an unparsable statement).
fn tokens(text: &str) -> Vec<(Token, u32)> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut line = 1u32;
    let mut i = 0usize;
    while let Some(&c) = chars.get(i) {
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '#' => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            '"' | '\'' => {
                let start_line = line;
                let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
                i += if triple { 3 } else { 1 };
                let mut value = String::new();
                let mut closed = false;
                while let Some(&d) = chars.get(i) {
                    if d == '\\' {
                        let escaped = chars.get(i + 1).copied().unwrap_or('\\');
                        value.push(match escaped {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                        i += 2;
                        continue;
                    }
                    if d == '\n' {
                        // A one-line string ends unterminated at the line's end (the newline is
                        // read, and counted, by the loop).
                        if !triple {
                            break;
                        }
                        line += 1;
                    }
                    if d == c
                        && (!triple
                            || (chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c)))
                    {
                        i += if triple { 3 } else { 1 };
                        closed = true;
                        break;
                    }
                    value.push(d);
                    i += 1;
                }
                out.push((
                    if closed {
                        Token::Text(value)
                    } else {
                        Token::Other
                    },
                    start_line,
                ));
            }
            '(' | '[' | '{' => {
                out.push((Token::Open(c), line));
                i += 1;
            }
            ')' | ']' | '}' => {
                out.push((Token::Close(c), line));
                i += 1;
            }
            ',' => {
                out.push((Token::Comma, line));
                i += 1;
            }
            '=' if chars.get(i + 1) != Some(&'=') => {
                out.push((Token::Equals, line));
                i += 1;
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(&d) = chars.get(i).filter(|d| d.is_alphanumeric() || **d == '_') {
                    name.push(d);
                    i += 1;
                }
                out.push((Token::Name(name), line));
            }
            c if c.is_ascii_digit() => {
                while chars
                    .get(i)
                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '.')
                {
                    i += 1;
                }
                out.push((Token::Number, line));
            }
            _ => {
                out.push((Token::Other, line));
                i += 1;
            }
        }
    }
    out
}

/// A literal value of a keyword argument.
#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Text(String),
    List(Vec<Literal>),
    Other,
}

/// Parses one value at `at`; returns it and the position after it.
fn literal(tokens: &[(Token, u32)], at: usize) -> Option<(Literal, usize)> {
    match &tokens.get(at)?.0 {
        Token::Text(text) => {
            // Adjacent string literals concatenate.
            let mut text = text.clone();
            let mut next = at + 1;
            while let Some((Token::Text(more), _)) = tokens.get(next) {
                text.push_str(more);
                next += 1;
            }
            Some((Literal::Text(text), next))
        }
        Token::Open('[') | Token::Open('(') => {
            let close = if tokens.get(at)?.0 == Token::Open('[') {
                ']'
            } else {
                ')'
            };
            let mut items = Vec::new();
            let mut next = at + 1;
            loop {
                if tokens.get(next)?.0 == Token::Close(close) {
                    return Some((Literal::List(items), next + 1));
                }
                let (item, after) = literal(tokens, next)?;
                items.push(item);
                next = after;
                match &tokens.get(next)?.0 {
                    Token::Comma => next += 1,
                    Token::Close(c) if *c == close => {}
                    _ => return None,
                }
            }
        }
        Token::Name(_) | Token::Number => Some((Literal::Other, at + 1)),
        _ => None,
    }
}

/// The keyword arguments of a call whose `(` is at `open`, and the position after its `)`.
fn arguments(tokens: &[(Token, u32)], open: usize) -> Option<(Vec<(String, Literal)>, usize)> {
    let mut args = Vec::new();
    let mut at = open + 1;
    loop {
        match &tokens.get(at)?.0 {
            Token::Close(')') => return Some((args, at + 1)),
            Token::Name(name) if tokens.get(at + 1)?.0 == Token::Equals => {
                let (value, after) = literal(tokens, at + 2)?;
                args.push((name.clone(), value));
                at = after;
            }
            _ => return None,
        }
        match &tokens.get(at)?.0 {
            Token::Comma => at += 1,
            Token::Close(')') => {}
            _ => return None,
        }
    }
}

/// Past the call whose `(` is at `open`: after its matching `)`, or the end.
fn skip_call(tokens: &[(Token, u32)], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, (token, _)) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Open(_) => depth += 1,
            Token::Close(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The next call's name after `from` (a name followed by `(`), or the end.
fn next_call(tokens: &[(Token, u32)], from: usize) -> usize {
    (from..tokens.len())
        .find(|&i| {
            matches!(tokens.get(i), Some((Token::Name(_), _)))
                && matches!(tokens.get(i + 1), Some((Token::Open('('), _)))
        })
        .unwrap_or(tokens.len())
}

/// Every expansion of a pattern's alternatives (a word, or a list of alternative words), at
/// most [`MAX_ALTERNATIVES`]; `None` when a part is not a word or a list of words, or there
/// would be more.
fn expansions(pattern: &[Literal]) -> Result<Vec<Vec<String>>, &'static str> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for part in pattern {
        let words: Vec<String> = match part {
            Literal::Text(word) => vec![word.clone()],
            Literal::List(alternatives) => alternatives
                .iter()
                .map(|a| match a {
                    Literal::Text(word) => Some(word.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .ok_or(unusable::UNPARSABLE_RULE)?,
            Literal::Other => return Err(unusable::UNPARSABLE_RULE),
        };
        if words.is_empty() || out.len() * words.len() > MAX_ALTERNATIVES {
            return Err(if words.is_empty() {
                unusable::UNPARSABLE_RULE
            } else {
                unusable::TOO_MANY_ALTERNATIVES
            });
        }
        out = out
            .iter()
            .flat_map(|prefix| {
                words.iter().map(move |w| {
                    let mut next = prefix.clone();
                    next.push(w.clone());
                    next
                })
            })
            .collect();
    }
    Ok(out)
}

/// The allow rules of a `.rules` file's text, as Bash prefix rules; what cannot be read is
/// counted.
pub fn allow_rules(text: &str, bad: &mut BadCounts) -> Vec<Rule> {
    let tokens = tokens(text);
    let mut rules = Vec::new();
    let mut at = 0usize;
    while let Some((token, line)) = tokens.get(at) {
        let is_call = matches!(tokens.get(at + 1), Some((Token::Open('('), _)));
        match token {
            Token::Name(name) if name == "prefix_rule" && is_call => {
                let Some((args, after)) = arguments(&tokens, at + 1) else {
                    // Read on from the next call: a torn statement's brackets do not balance.
                    bad.add(unusable::UNPARSABLE_RULE);
                    at = next_call(&tokens, at + 1);
                    continue;
                };
                at = after;
                let value = |key: &str| args.iter().find(|(k, _)| k == key).map(|(_, v)| v);
                let decision = match value("decision") {
                    None => "allow".to_string(),
                    Some(Literal::Text(d)) => d.clone(),
                    Some(_) => {
                        bad.add(unusable::UNPARSABLE_RULE);
                        continue;
                    }
                };
                if decision != "allow" {
                    continue;
                }
                let Some(Literal::List(pattern)) = value("pattern") else {
                    bad.add(unusable::UNPARSABLE_RULE);
                    continue;
                };
                match expansions(pattern) {
                    Ok(all) => {
                        for words in all {
                            // An empty pattern would match every command: kept as the bare
                            // rule it amounts to, which the replay counts as too broad.
                            let rule = if words.is_empty() {
                                "Bash".to_string()
                            } else {
                                bash_prefix_rule(&words)
                            };
                            rules.push(Rule {
                                rule,
                                written: format!("prefix_rule(pattern = {words:?})"),
                                at: format!(":{line}"),
                            });
                        }
                    }
                    Err(reason) => bad.add(reason),
                }
            }
            Token::Name(_) if is_call => at = skip_call(&tokens, at + 1),
            _ => at += 1,
        }
    }
    rules
}
