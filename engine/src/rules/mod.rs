//! Permission rules in Claude Code's language, resolved by proof: an allow or ask carves out of a
//! deny only when its match-set is a strict subset of the deny's.
//!
//! Owns: parsing rule strings (`Bash(git push:*)`, `Read(//**/.env*)`, `WebFetch(domain:x)`,
//! `mcp__server`), compiling them to [`pattern::Pattern`]s against the roots, matching them to
//! an [`Action`] (Bash rules on each action of a command, file rules on every path any action
//! reads or writes), resolving the matches, and linting a policy. Reading policy files is the
//! CLI's job; this module takes their JSON.

pub mod lint;
pub mod pattern;

use std::fmt;

use serde_json::Value;

use crate::decide::{AnswerSource, Decision, RuleHit, Rules};
use crate::model::{Access, Action};
use crate::paths::Roots;
use pattern::{GlobKind, Pattern};

/// What an unmatched call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultMode {
    /// Fall through to the floors and learning (which ask unless something was learned).
    Ask,
    /// Deny: for headless runs, where an unanswered prompt is no policy at all.
    Deny,
}

/// A rule file that could not be read as a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError(String);

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}

/// Which tools a rule names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ToolSet {
    Exact(String),
    /// `mcp__server`: every tool of that server.
    McpServer(String),
}

/// What a specifier is matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Spec {
    /// A bare rule: every call of the tool.
    Any,
    /// Shell text of each action.
    Command(Pattern),
    /// Resolved absolute paths.
    Path(Pattern),
    /// The host of a URL, lower-cased.
    Host(Pattern),
    /// The primary argument of any other tool.
    Text(Pattern),
}

/// One compiled rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// As written in the policy.
    pub text: String,
    /// Its tier.
    pub decision: Decision,
    tools: ToolSet,
    spec: Spec,
}

/// A compiled policy: rules, the fall-back, and what loading noticed.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Every rule: allows, then asks, then denies, each in file order.
    pub rules: Vec<Rule>,
    /// What an unmatched call gets.
    pub default_mode: DefaultMode,
    /// The `defaultMode` as written, when it was not `ask` or `deny` (`None` written as
    /// `"<missing>"`: a missing key denies too, and deserves a warning).
    pub unknown_default_mode: Option<String>,
    /// `within[i][j]`: rule `i` matches nothing rule `j` does not. Computed once.
    within: Vec<Vec<bool>>,
}

const READ_TOOLS: &[&str] = &["Read", "NotebookRead", "Grep", "Glob", "LS"];
const WRITE_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit", "Delete"];
const PATH_RULE_TOOLS: &[&str] = &[
    "Read",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Grep",
    "Glob",
    "LS",
    "Delete",
];

impl Policy {
    /// An empty policy: nothing matches, unmatched calls fall through.
    pub fn empty() -> Policy {
        Policy {
            rules: Vec::new(),
            default_mode: DefaultMode::Ask,
            unknown_default_mode: None,
            within: Vec::new(),
        }
    }

    /// Reads a policy from JSON: a bare `{allow, ask, deny, defaultMode}` object, or Claude
    /// Code's settings shape `{"permissions": {…}}`. Paths in rules are compiled against
    /// `roots`.
    pub fn from_json(value: &Value, roots: &Roots) -> Result<Policy, PolicyError> {
        let object = value
            .as_object()
            .ok_or_else(|| PolicyError("a policy must be a JSON object".to_string()))?;
        let body = match object.get("permissions") {
            Some(Value::Object(permissions)) => permissions,
            Some(_) => return Err(PolicyError("`permissions` must be an object".to_string())),
            None if ["allow", "ask", "deny"]
                .iter()
                .any(|k| object.contains_key(*k)) =>
            {
                object
            }
            None => {
                return Err(PolicyError(
                    "no `allow`, `ask` or `deny` lists, and no `permissions` object".to_string(),
                ));
            }
        };
        let mut rules = Vec::new();
        for (key, decision) in [
            ("allow", Decision::Allow),
            ("ask", Decision::Ask),
            ("deny", Decision::Deny),
        ] {
            let list = match body.get(key) {
                None => continue,
                Some(Value::Array(list)) => list,
                Some(_) => {
                    return Err(PolicyError(format!(
                        "`{key}` must be a list of rule strings"
                    )));
                }
            };
            for entry in list {
                let text = entry.as_str().ok_or_else(|| {
                    PolicyError(format!(
                        "`{key}` holds a value that is not a string: `{entry}`"
                    ))
                })?;
                rules.push(Rule::parse(text, decision, roots)?);
            }
        }
        let (default_mode, unknown_default_mode) =
            match body.get("defaultMode").and_then(Value::as_str) {
                Some("ask") => (DefaultMode::Ask, None),
                Some("deny") => (DefaultMode::Deny, None),
                None => (DefaultMode::Deny, Some("<missing>".to_string())),
                Some(other) => (DefaultMode::Deny, Some(other.to_string())),
            };
        Ok(Policy::new(rules, default_mode, unknown_default_mode))
    }

    /// Reads the `permissions` of one of Claude Code's own settings files. Its `defaultMode` is
    /// the session's permission mode, not a fall-back, so unmatched calls fall through (ask).
    pub fn from_claude_settings(value: &Value, roots: &Roots) -> Result<Policy, PolicyError> {
        match value.get("permissions") {
            None => Ok(Policy::empty()),
            Some(permissions) => {
                let mut body = permissions.clone();
                if let Some(map) = body.as_object_mut() {
                    map.insert("defaultMode".to_string(), Value::String("ask".to_string()));
                    for key in ["allow", "ask", "deny"] {
                        map.entry(key).or_insert_with(|| Value::Array(Vec::new()));
                    }
                }
                Policy::from_json(&body, roots)
            }
        }
    }

    /// A policy from compiled rules.
    pub fn new(
        rules: Vec<Rule>,
        default_mode: DefaultMode,
        unknown_default_mode: Option<String>,
    ) -> Policy {
        let within = rules
            .iter()
            .map(|a| rules.iter().map(|b| a.within(b)).collect())
            .collect();
        Policy {
            rules,
            default_mode,
            unknown_default_mode,
            within,
        }
    }

    /// Merges several policies (settings layers): rules concatenate; the strictest fall-back wins.
    pub fn merge(layers: Vec<Policy>) -> Policy {
        let default_mode = if layers.iter().any(|p| p.default_mode == DefaultMode::Deny) {
            DefaultMode::Deny
        } else {
            DefaultMode::Ask
        };
        let unknown = layers.iter().find_map(|p| p.unknown_default_mode.clone());
        let rules = layers.into_iter().flat_map(|p| p.rules).collect();
        Policy::new(rules, default_mode, unknown)
    }

    fn rule_within(&self, i: usize, j: usize) -> bool {
        self.within
            .get(i)
            .and_then(|row| row.get(j))
            .copied()
            .unwrap_or(false)
    }

    fn strictly_within(&self, i: usize, j: usize) -> bool {
        self.rule_within(i, j) && !self.rule_within(j, i)
    }

    /// Resolves the rules matching `action`: an uncarved deny denies; otherwise the most
    /// specific allow or ask wins (a tie goes to ask); nothing matching is the fall-back's.
    pub fn resolve(&self, action: &Action) -> Option<RuleHit> {
        let matching: Vec<usize> = (0..self.rules.len())
            .filter(|i| self.rules.get(*i).is_some_and(|r| r.matches(action)))
            .collect();
        let permits: Vec<usize> = matching
            .iter()
            .copied()
            .filter(|i| {
                self.rules
                    .get(*i)
                    .is_some_and(|r| r.decision != Decision::Deny)
            })
            .collect();
        for &d in matching.iter().filter(|i| {
            self.rules
                .get(**i)
                .is_some_and(|r| r.decision == Decision::Deny)
        }) {
            let carved = permits.iter().any(|&p| self.strictly_within(p, d));
            if !carved {
                return self.hit(d);
            }
        }
        if permits.is_empty() {
            return match self.default_mode {
                DefaultMode::Deny => Some(RuleHit {
                    decision: Decision::Deny,
                    rule: "defaultMode: deny".to_string(),
                    source: AnswerSource::DefaultMode,
                }),
                DefaultMode::Ask => None,
            };
        }
        // The most specific: matching permits no other matching permit lies strictly inside.
        let minimal: Vec<usize> = permits
            .iter()
            .copied()
            .filter(|&p| {
                !permits
                    .iter()
                    .any(|&q| q != p && self.strictly_within(q, p))
            })
            .collect();
        let chosen = minimal
            .iter()
            .copied()
            .find(|i| {
                self.rules
                    .get(*i)
                    .is_some_and(|r| r.decision == Decision::Ask)
            })
            .or_else(|| minimal.first().copied())?;
        self.hit(chosen)
    }

    fn hit(&self, index: usize) -> Option<RuleHit> {
        self.rules.get(index).map(|r| RuleHit {
            decision: r.decision,
            rule: r.text.clone(),
            source: AnswerSource::Rule,
        })
    }
}

impl Rules for Policy {
    fn check(&self, action: &Action) -> Option<RuleHit> {
        self.resolve(action)
    }
}

fn valid_tool_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Rule {
    /// Parses `Tool` or `Tool(specifier)`.
    pub fn parse(text: &str, decision: Decision, roots: &Roots) -> Result<Rule, PolicyError> {
        let bad = |why: &str| PolicyError(format!("rule `{text}`: {why}"));
        let (name, specifier) = match text.find('(') {
            None => (text, None),
            Some(open) => {
                let inner = text
                    .get(open + 1..)
                    .and_then(|rest| rest.strip_suffix(')'))
                    .ok_or_else(|| bad("a specifier must end with `)`"))?;
                if inner.is_empty() {
                    return Err(bad(
                        "an empty specifier; write the bare tool name to match every call",
                    ));
                }
                (text.get(..open).unwrap_or(""), Some(inner))
            }
        };
        if !valid_tool_name(name) {
            return Err(bad(
                "a tool name starts with a letter and holds only letters, digits and `_`",
            ));
        }
        let tools = match name.strip_prefix("mcp__") {
            Some(rest) if !rest.contains("__") => ToolSet::McpServer(rest.to_string()),
            _ => ToolSet::Exact(name.to_string()),
        };
        let spec = match specifier {
            None => Spec::Any,
            Some("*") => Spec::Any,
            Some(spec) if name == "Bash" => match spec.strip_suffix(":*") {
                Some(prefix) => Spec::Command(Pattern::command_prefix(prefix)),
                None => Spec::Command(Pattern::glob(spec, GlobKind::Command)),
            },
            Some(spec) if PATH_RULE_TOOLS.contains(&name) => {
                Spec::Path(Pattern::glob(&path_pattern(spec, roots), GlobKind::Path))
            }
            Some(spec) if name == "WebFetch" => match spec.strip_prefix("domain:") {
                Some(host) => Spec::Host(Pattern::glob(&host.to_ascii_lowercase(), GlobKind::Text)),
                None => Spec::Text(Pattern::glob(spec, GlobKind::Text)),
            },
            Some(spec) => Spec::Text(Pattern::glob(spec, GlobKind::Text)),
        };
        Ok(Rule {
            text: text.to_string(),
            decision,
            tools,
            spec,
        })
    }

    fn tool_matches(&self, tool: &str) -> bool {
        match &self.tools {
            ToolSet::Exact(name) => name == tool,
            ToolSet::McpServer(server) => tool
                .strip_prefix("mcp__")
                .and_then(|rest| rest.strip_prefix(server.as_str()))
                .is_some_and(|rest| rest.starts_with("__")),
        }
    }

    fn name(&self) -> &str {
        match &self.tools {
            ToolSet::Exact(name) => name,
            ToolSet::McpServer(server) => server,
        }
    }

    /// The rule matches the action. Bash rules see each action's command (a deny or ask
    /// either form, an allow the peeled form only when no risky wrapper was peeled); file rules
    /// see every path the action reads (Read) or changes (Edit, Write) — for a deny, whatever
    /// tool touches it, which is the file-access cross-check.
    pub fn matches(&self, action: &Action) -> bool {
        let subject = &action.subject;
        let name = self.name();
        match &self.spec {
            Spec::Command(pattern) => {
                if subject.tool != "Bash" {
                    return false;
                }
                let peeled = subject
                    .command
                    .as_deref()
                    .map(|c| pattern.matches(c))
                    .unwrap_or(false);
                let written = subject
                    .written
                    .as_deref()
                    .map(|c| pattern.matches(c))
                    .unwrap_or(false);
                if self.decision == Decision::Allow {
                    if subject.risky_wrapper {
                        written
                    } else {
                        peeled
                    }
                } else {
                    peeled || written
                }
            }
            Spec::Path(pattern) if matches!(name, "Read" | "Edit" | "Write") => {
                let wanted = |access: Access| match name {
                    "Read" => access == Access::Read,
                    _ => matches!(access, Access::Write | Access::Delete),
                };
                let family = if name == "Read" {
                    READ_TOOLS
                } else {
                    WRITE_TOOLS
                };
                let relevant: Vec<_> = action.targets.iter().filter(|t| wanted(t.access)).collect();
                let hits = |t: &&crate::model::Target| {
                    if t.glob {
                        pattern
                            .overlap(&Pattern::glob(&t.path, GlobKind::ShellGlob))
                            .is_some()
                    } else {
                        pattern.matches(&t.path)
                    }
                };
                if self.decision == Decision::Deny {
                    // Any tool reaching a denied path is denied.
                    relevant.iter().any(hits)
                } else {
                    // Allows and asks speak for their own tools, and every path must be covered.
                    family.contains(&subject.tool.as_str())
                        && !relevant.is_empty()
                        && relevant.iter().all(|t| !t.glob && pattern.matches(&t.path))
                }
            }
            Spec::Path(pattern) => {
                self.tool_matches(&subject.tool)
                    && !action.targets.is_empty()
                    && action.targets.iter().all(|t| pattern.matches(&t.path))
            }
            Spec::Host(pattern) => {
                self.tool_matches(&subject.tool)
                    && subject
                        .text
                        .as_deref()
                        .and_then(host_of)
                        .is_some_and(|h| pattern.matches(&h))
            }
            Spec::Text(pattern) => {
                self.tool_matches(&subject.tool)
                    && subject.text.as_deref().is_some_and(|t| pattern.matches(t))
            }
            Spec::Any => {
                if self.tool_matches(&subject.tool) {
                    return true;
                }
                // A bare `Read`/`Edit` covers its whole family of tools; a bare deny also covers
                // any tool reaching files that way.
                match name {
                    "Read" => {
                        READ_TOOLS.contains(&subject.tool.as_str())
                            || self.decision == Decision::Deny
                                && action.targets.iter().any(|t| t.access == Access::Read)
                    }
                    "Edit" | "Write" => {
                        WRITE_TOOLS.contains(&subject.tool.as_str())
                            || self.decision == Decision::Deny
                                && action.targets.iter().any(|t| t.access != Access::Read)
                    }
                    _ => false,
                }
            }
        }
    }

    /// Everything this rule matches, `other` matches too (decided exactly).
    pub fn within(&self, other: &Rule) -> bool {
        let tools_within = match (&self.tools, &other.tools) {
            (a, b) if a == b => true,
            (ToolSet::Exact(name), ToolSet::McpServer(server)) => {
                name.starts_with(&format!("mcp__{server}__"))
            }
            _ => false,
        };
        if !tools_within {
            return false;
        }
        match (&self.spec, &other.spec) {
            (_, Spec::Any) => true,
            (Spec::Any, _) => false,
            (Spec::Command(a), Spec::Command(b))
            | (Spec::Path(a), Spec::Path(b))
            | (Spec::Host(a), Spec::Host(b))
            | (Spec::Text(a), Spec::Text(b)) => a.within(b),
            _ => false,
        }
    }

    /// A call both rules match, as text, when their specifiers overlap.
    pub fn overlap_witness(&self, other: &Rule) -> Option<String> {
        if self.tools != other.tools {
            return None;
        }
        match (&self.spec, &other.spec) {
            (Spec::Command(a), Spec::Command(b))
            | (Spec::Path(a), Spec::Path(b))
            | (Spec::Host(a), Spec::Host(b))
            | (Spec::Text(a), Spec::Text(b)) => a.overlap(b),
            (Spec::Any, _) | (_, Spec::Any) => Some(String::new()),
            _ => None,
        }
    }

    /// A call this rule matches and `other` does not, when there is one.
    pub fn escape_witness(&self, other: &Rule) -> Option<String> {
        match (&self.spec, &other.spec) {
            (Spec::Command(a), Spec::Command(b))
            | (Spec::Path(a), Spec::Path(b))
            | (Spec::Host(a), Spec::Host(b))
            | (Spec::Text(a), Spec::Text(b)) => a.escapes(b),
            _ => None,
        }
    }

    /// The rule matches every call of its tool (or a pattern that matches everything).
    pub fn is_unbounded(&self) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Path(p) => Pattern::glob("/**", GlobKind::Path).within(p),
            Spec::Command(p) | Spec::Host(p) | Spec::Text(p) => Pattern::everything().within(p),
        }
    }

    /// The tool part of the rule as written.
    pub fn tool_name(&self) -> &str {
        self.name()
    }
}

/// A path specifier as an absolute pattern: `//abs` and `/abs` are absolute, `~/` is home,
/// `./x` and `x/y` are under the project, and a bare name (`.env`, `*.pem`) matches at any depth
/// of the project, as in gitignore.
fn path_pattern(spec: &str, roots: &Roots) -> String {
    let project = roots.project.trim_end_matches('/');
    if let Some(rest) = spec.strip_prefix("//") {
        format!("/{rest}")
    } else if spec.starts_with('/') {
        spec.to_string()
    } else if spec == "~" {
        roots.home.clone()
    } else if let Some(rest) = spec.strip_prefix("~/") {
        format!("{}/{rest}", roots.home.trim_end_matches('/'))
    } else if let Some(rest) = spec.strip_prefix("./") {
        format!("{project}/{rest}")
    } else if spec.contains('/') {
        format!("{project}/{spec}")
    } else {
        format!("{project}/**/{spec}")
    }
}

/// The lower-cased host of a URL (userinfo and port dropped).
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}
