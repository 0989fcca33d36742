//! Permission rules in Claude Code's language, resolved by proof: an allow or ask carves out of a
//! deny only when its match-set is a strict subset of the deny's.
//!
//! Owns: parsing rule strings (`Bash(git push:*)`, `Read(//**/.env*)`, `WebFetch(domain:x)`,
//! `mcp__server`), compiling them to [`pattern::Pattern`]s against the roots, matching them to
//! an [`Action`] (Bash rules on each action of a command, file rules on every path any action
//! reads or writes), resolving the matches, and linting a policy. Reading policy files is the
//! CLI's job; this module takes their JSON.

pub(crate) mod compiled;
pub(crate) mod lint;
pub(crate) mod pattern;

use std::collections::HashMap;
use std::fmt;
use std::sync::{OnceLock, RwLock};

use serde_json::Value;

use crate::model::{Access, Action, Answer, AnswerSource, Answers, Decision};
use crate::paths::Roots;
use pattern::{GlobKind, MAX_DFA_STATES, Pattern};

/// The longest rule specifier, in characters: past it a rule is refused where it is loaded.
pub const MAX_SPECIFIER_CHARS: usize = 1024;

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
    Command(Lazy),
    /// Resolved absolute paths (and the same pattern folded, for case-insensitive matching).
    Path(Lazy, Lazy),
    /// The host of a URL, lower-cased.
    Host(Lazy),
    /// The primary argument of any other tool.
    Text(Lazy),
}

/// A pattern compiled the first time it is used: a hook call compiles only the rules its
/// action could match, not every rule of the file.
#[derive(Debug, Clone)]
struct Lazy {
    source: Source,
    compiled: OnceLock<Pattern>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Glob(String, GlobKind),
    CommandPrefix(String),
    /// Another pattern's source, lower-cased.
    Folded(Box<Source>),
}

impl Source {
    fn compile(&self) -> Pattern {
        match self {
            Source::Glob(text, kind) => Pattern::glob(text, *kind),
            Source::CommandPrefix(prefix) => Pattern::command_prefix(prefix),
            Source::Folded(source) => source.compile().folded(),
        }
    }
}

impl Lazy {
    fn new(source: Source) -> Lazy {
        Lazy {
            source,
            compiled: OnceLock::new(),
        }
    }

    fn glob(text: &str, kind: GlobKind) -> Lazy {
        Lazy::new(Source::Glob(text.to_string(), kind))
    }

    /// What every string the pattern matches starts with, read from the rule's text (the
    /// characters before its first wildcard), without compiling it.
    fn head(&self) -> &str {
        match &self.source {
            Source::CommandPrefix(prefix) => prefix,
            Source::Glob(text, GlobKind::Command | GlobKind::Text) => {
                text.split('*').next().unwrap_or("")
            }
            Source::Glob(text, GlobKind::Path | GlobKind::ShellGlob) => {
                text.split(['*', '?', '[', '{', '\\']).next().unwrap_or("")
            }
            Source::Folded(_) => "",
        }
    }

    /// A wildcard for one character after a `*`: the one shape whose DFA can grow large.
    fn could_explode(&self) -> bool {
        match &self.source {
            Source::Glob(text, GlobKind::Path) => text
                .find('*')
                .is_some_and(|star| text.get(star..).is_some_and(|rest| rest.contains('?'))),
            Source::Folded(source) => Lazy::new((**source).clone()).could_explode(),
            _ => false,
        }
    }
}

impl std::ops::Deref for Lazy {
    type Target = Pattern;

    fn deref(&self) -> &Pattern {
        self.compiled.get_or_init(|| self.source.compile())
    }
}

impl PartialEq for Lazy {
    fn eq(&self, other: &Lazy) -> bool {
        self.source == other.source
    }
}

impl Eq for Lazy {}

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
    /// Keys of the policy object leastgrant does not know (a typo such as `"allow "` would
    /// otherwise be silently ignored).
    pub unknown_keys: Vec<String>,
    /// Allow rules dropped from a lower-trust layer (see [`Policy::tighten_only`]).
    pub dropped: Vec<String>,
    /// Which rules can relate, and the containments decided so far.
    analysis: Analysis,
}

/// What resolving and linting ask of pairs of rules, worked out when first asked: a hook call
/// compares only the rules its action matches, the replay and lint fill the cache as they go.
#[derive(Debug, Default)]
struct Analysis {
    relations: OnceLock<Relations>,
    /// `(i, j)` → rule `i` matches nothing rule `j` does not.
    within: RwLock<HashMap<(u32, u32), bool>>,
}

impl Clone for Analysis {
    fn clone(&self) -> Analysis {
        Analysis::default()
    }
}

impl PartialEq for Analysis {
    fn eq(&self, _: &Analysis) -> bool {
        true
    }
}

/// Per rule, what any two related rules share: the same tool family (an exact tool, or an MCP
/// server with its tools) and literal prefixes one of which starts the other. Two rules without
/// both match no call in common, so neither lies within the other and they cannot overlap.
#[derive(Debug, Clone, PartialEq, Default)]
struct Relations {
    family: Vec<String>,
    prefix: Vec<String>,
}

impl Relations {
    fn of(rules: &[Rule]) -> Relations {
        Relations {
            family: rules.iter().map(Rule::family).collect(),
            prefix: rules.iter().map(|r| r.head().to_string()).collect(),
        }
    }

    /// Rules `i` and `j` can share a call.
    fn related(&self, i: usize, j: usize) -> bool {
        let (Some(fi), Some(fj)) = (self.family.get(i), self.family.get(j)) else {
            return false;
        };
        let (Some(pi), Some(pj)) = (self.prefix.get(i), self.prefix.get(j)) else {
            return false;
        };
        fi == fj && (pi.starts_with(pj.as_str()) || pj.starts_with(pi.as_str()))
    }
}

const READ_TOOLS: &[&str] = &["Read", "NotebookRead", "Grep", "Glob", "LS"];
const WRITE_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit", "Delete"];

/// Tools whose rule specifier is a path: those that read and those that write.
pub(crate) fn takes_path_rules(tool: &str) -> bool {
    READ_TOOLS.contains(&tool) || WRITE_TOOLS.contains(&tool)
}

impl Policy {
    /// An empty policy: nothing matches, unmatched calls fall through.
    pub fn empty() -> Policy {
        Policy::new(Vec::new(), DefaultMode::Ask, None)
    }

    /// Reads a policy from JSON: a bare `{allow, ask, deny, defaultMode}` object, or Claude
    /// Code's settings shape `{"permissions": {…}}`. Paths in rules are compiled against
    /// `roots`.
    pub fn from_json(value: &Value, roots: &Roots) -> Result<Policy, PolicyError> {
        let object = value
            .as_object()
            .ok_or_else(|| PolicyError("a policy must be a JSON object".to_string()))?;
        let tiers_at_top = ["allow", "ask", "deny"]
            .iter()
            .any(|k| object.contains_key(*k));
        if object.contains_key("permissions") && tiers_at_top {
            return Err(PolicyError(
                "both a `permissions` object and top-level `allow`/`ask`/`deny` lists: use one shape".to_string(),
            ));
        }
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
        let (default_mode, unknown_default_mode) = match body.get("defaultMode") {
            Some(Value::String(mode)) if mode == "ask" => (DefaultMode::Ask, None),
            Some(Value::String(mode)) if mode == "deny" => (DefaultMode::Deny, None),
            Some(Value::String(other)) => (DefaultMode::Deny, Some(other.clone())),
            Some(other) => (DefaultMode::Deny, Some(other.to_string())),
            None => (DefaultMode::Deny, Some("<missing>".to_string())),
        };
        const KNOWN: &[&str] = &[
            "allow",
            "ask",
            "deny",
            "defaultMode",
            "additionalDirectories",
            "disableBypassPermissionsMode",
            "$schema",
        ];
        let unknown_keys: Vec<String> = if object.contains_key("permissions") {
            body.keys()
                .filter(|k| !KNOWN.contains(&k.as_str()))
                .cloned()
                .collect()
        } else {
            object
                .keys()
                .filter(|k| !KNOWN.contains(&k.as_str()))
                .cloned()
                .collect()
        };
        let mut policy = Policy::new(rules, default_mode, unknown_default_mode);
        policy.unknown_keys = unknown_keys;
        Ok(policy)
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
        Policy {
            rules,
            default_mode,
            unknown_default_mode,
            unknown_keys: Vec::new(),
            dropped: Vec::new(),
            analysis: Analysis::default(),
        }
    }

    /// A layer a less trusted party can write (a repository's own rules file) may only tighten:
    /// its allow rules are dropped, so it can never carve out of the user's denies.
    pub fn tighten_only(self) -> Policy {
        let (allows, kept): (Vec<Rule>, Vec<Rule>) = self
            .rules
            .into_iter()
            .partition(|r| r.decision == Decision::Allow);
        let mut policy = Policy::new(kept, self.default_mode, self.unknown_default_mode);
        policy.unknown_keys = self.unknown_keys;
        policy.dropped = allows.into_iter().map(|r| r.text).collect();
        policy
    }

    /// Merges several policies (settings layers): rules concatenate; the strictest fall-back wins.
    pub fn merge(layers: Vec<Policy>) -> Policy {
        let default_mode = if layers.iter().any(|p| p.default_mode == DefaultMode::Deny) {
            DefaultMode::Deny
        } else {
            DefaultMode::Ask
        };
        let unknown = layers.iter().find_map(|p| p.unknown_default_mode.clone());
        let unknown_keys: Vec<String> =
            layers.iter().flat_map(|p| p.unknown_keys.clone()).collect();
        let dropped: Vec<String> = layers.iter().flat_map(|p| p.dropped.clone()).collect();
        let rules = layers.into_iter().flat_map(|p| p.rules).collect();
        let mut policy = Policy::new(rules, default_mode, unknown);
        policy.unknown_keys = unknown_keys;
        policy.dropped = dropped;
        policy
    }

    /// Rule `i` matches nothing rule `j` does not (decided once per pair, and only for rules
    /// that can share a call).
    pub fn rule_within(&self, i: usize, j: usize) -> bool {
        if i == j {
            return i < self.rules.len();
        }
        if !self.related(i, j) {
            return false;
        }
        let (Ok(key_i), Ok(key_j)) = (u32::try_from(i), u32::try_from(j)) else {
            return false;
        };
        if let Some(known) = self
            .analysis
            .within
            .read()
            .ok()
            .and_then(|cache| cache.get(&(key_i, key_j)).copied())
        {
            return known;
        }
        let within = match (self.rules.get(i), self.rules.get(j)) {
            (Some(a), Some(b)) => a.within(b),
            _ => false,
        };
        if let Ok(mut cache) = self.analysis.within.write() {
            cache.insert((key_i, key_j), within);
        }
        within
    }

    /// Rules `i` and `j` can match a call in common (when not, lint need not compare them).
    fn related(&self, i: usize, j: usize) -> bool {
        self.analysis
            .relations
            .get_or_init(|| Relations::of(&self.rules))
            .related(i, j)
    }

    fn strictly_within(&self, i: usize, j: usize) -> bool {
        self.rule_within(i, j) && !self.rule_within(j, i)
    }

    /// Resolves the rules matching `action`: an uncarved deny denies; otherwise the most
    /// specific allow or ask wins (a tie goes to ask); nothing matching is the fall-back's.
    pub fn resolve(&self, action: &Action) -> Option<Answer> {
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
                DefaultMode::Deny => Some(Answer {
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

    fn hit(&self, index: usize) -> Option<Answer> {
        self.rules.get(index).map(|r| Answer {
            decision: r.decision,
            rule: r.text.clone(),
            source: AnswerSource::Rule,
        })
    }
}

impl Answers for Policy {
    fn answer(&self, action: &Action) -> Option<Answer> {
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
        // A rule is named as written, cut short when it is too long to read in a message.
        let shown: String = if text.chars().count() > 80 {
            text.chars().take(60).chain("…".chars()).collect()
        } else {
            text.to_string()
        };
        let bad = |why: &str| PolicyError(format!("rule `{shown}`: {why}"));
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
        if let Some(spec) = specifier
            && spec.chars().count() > MAX_SPECIFIER_CHARS
        {
            return Err(bad(&format!(
                "the specifier is longer than {MAX_SPECIFIER_CHARS} characters; a rule that long \
                 is not one a person can review"
            )));
        }
        let tools = match name.strip_prefix("mcp__") {
            Some(rest) if !rest.contains("__") => ToolSet::McpServer(rest.to_string()),
            _ => ToolSet::Exact(name.to_string()),
        };
        let spec = match specifier {
            None => Spec::Any,
            Some("*") => Spec::Any,
            Some(spec) if name == "Bash" => match spec.strip_suffix(":*") {
                Some(prefix) => Spec::Command(Lazy::new(Source::CommandPrefix(prefix.to_string()))),
                None => Spec::Command(Lazy::glob(spec, GlobKind::Command)),
            },
            Some(spec) if takes_path_rules(name) => {
                let source = Source::Glob(path_pattern(spec, roots), GlobKind::Path);
                Spec::Path(
                    Lazy::new(source.clone()),
                    Lazy::new(Source::Folded(Box::new(source))),
                )
            }
            Some(spec) if name == "WebFetch" => match spec.strip_prefix("domain:") {
                Some(host) => Spec::Host(Lazy::glob(&host.to_ascii_lowercase(), GlobKind::Text)),
                None => Spec::Text(Lazy::glob(spec, GlobKind::Text)),
            },
            Some(spec) => Spec::Text(Lazy::glob(spec, GlobKind::Text)),
        };
        let rule = Rule {
            text: text.to_string(),
            decision,
            tools,
            spec,
        };
        // Only a pattern with a wildcard for one character after a `*` can need a large DFA;
        // those are determinised here, with the bound (the rest on first comparison).
        let too_complex = |p: &Lazy| p.could_explode() && p.too_complex();
        let too_complex = match &rule.spec {
            Spec::Any => false,
            Spec::Path(p, folded) => too_complex(p) || too_complex(folded),
            Spec::Command(p) | Spec::Host(p) | Spec::Text(p) => too_complex(p),
        };
        if too_complex {
            return Err(bad(&format!(
                "the pattern is too complex: matching it would need more than {MAX_DFA_STATES} \
                 automaton states; use fewer wildcards"
            )));
        }
        Ok(rule)
    }

    /// What every call the rule matches starts with (its specifier's text before the first
    /// wildcard; nothing for a bare rule).
    fn head(&self) -> &str {
        match &self.spec {
            Spec::Any => "",
            Spec::Command(p) | Spec::Path(p, _) | Spec::Host(p) | Spec::Text(p) => p.head(),
        }
    }

    /// The family of tools a rule names: the tool, or for MCP the server (a server's rule and
    /// its tools' rules can relate).
    fn family(&self) -> String {
        match &self.tools {
            ToolSet::Exact(name) => match name.strip_prefix("mcp__") {
                Some(rest) => format!("mcp__{}", rest.split("__").next().unwrap_or(rest)),
                None => name.clone(),
            },
            ToolSet::McpServer(server) => format!("mcp__{server}"),
        }
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

    /// The rule matches the action. Bash rules see each action's command: a deny or ask either
    /// form (as written, peeled, or by the program's base name), and a word whose value is unknown
    /// as "could be anything"; an allow only the peeled form when no risky wrapper was peeled.
    /// File rules see every path the action reads (Read; running a file reads it) or changes
    /// (Edit, Write) — for a deny, whatever tool touches it, including a directory above it that
    /// the action walks, which is the file-access cross-check. An allow never covers an action
    /// with effects the rule does not name (assignments, redirections out of the project) or a
    /// path that cannot be resolved.
    pub fn matches(&self, action: &Action) -> bool {
        let subject = &action.subject;
        let name = self.name();
        if self.decision == Decision::Allow
            && (subject.unnamed_effects
                || action
                    .targets
                    .iter()
                    .any(|t| t.placement.zone == crate::model::Zone::Unresolved))
        {
            return false;
        }
        match &self.spec {
            Spec::Command(pattern) => {
                if subject.tool != "Bash" {
                    return false;
                }
                if self.decision == Decision::Allow {
                    let form = if subject.risky_wrapper {
                        subject.written.as_deref()
                    } else {
                        subject.command.as_deref()
                    };
                    // A command that does not start as the rule does is not compiled against.
                    return form
                        .is_some_and(|c| c.starts_with(pattern.head()) && pattern.matches(c));
                }
                let by_base_name = subject.command.as_deref().and_then(base_name_form);
                [
                    subject.command.as_deref(),
                    subject.written.as_deref(),
                    by_base_name.as_deref(),
                ]
                .into_iter()
                .flatten()
                .any(|text| {
                    if text.contains(crate::shell::UNRESOLVED) {
                        pattern.overlap(&Pattern::with_unknowns(text)).is_some()
                    } else {
                        text.starts_with(pattern.head()) && pattern.matches(text)
                    }
                })
            }
            Spec::Path(pattern, folded) if matches!(name, "Read" | "Edit" | "Write") => {
                let wanted = |access: Access| match name {
                    "Read" => matches!(access, Access::Read | Access::Execute),
                    _ => matches!(access, Access::Write | Access::Delete),
                };
                let family = if name == "Read" {
                    READ_TOOLS
                } else {
                    WRITE_TOOLS
                };
                let relevant: Vec<_> = action.targets.iter().filter(|t| wanted(t.access)).collect();
                if self.decision == Decision::Deny {
                    // Any tool reaching a denied path is denied.
                    relevant.iter().any(|t| deny_reaches(pattern, folded, t))
                } else {
                    // Allows and asks speak for their own tools, and every path must be covered.
                    family.contains(&subject.tool.as_str())
                        && !relevant.is_empty()
                        && relevant.iter().all(|t| !t.glob && pattern.matches(&t.path))
                }
            }
            Spec::Path(pattern, folded) => {
                if !self.tool_matches(&subject.tool) || action.targets.is_empty() {
                    return false;
                }
                if self.decision == Decision::Deny {
                    action
                        .targets
                        .iter()
                        .any(|t| deny_reaches(pattern, folded, t))
                } else {
                    action
                        .targets
                        .iter()
                        .all(|t| !t.glob && pattern.matches(&t.path))
                }
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
                                && action
                                    .targets
                                    .iter()
                                    .any(|t| matches!(t.access, Access::Read | Access::Execute))
                    }
                    "Edit" | "Write" => {
                        WRITE_TOOLS.contains(&subject.tool.as_str())
                            || self.decision == Decision::Deny
                                && action
                                    .targets
                                    .iter()
                                    .any(|t| !matches!(t.access, Access::Read | Access::Execute))
                    }
                    _ => false,
                }
            }
        }
    }

    /// The set of calls this rule's specifier matches, as a pattern (a bare rule: all of them).
    fn language(&self) -> &Pattern {
        static EVERYTHING: std::sync::OnceLock<Pattern> = std::sync::OnceLock::new();
        static EVERY_PATH: std::sync::OnceLock<Pattern> = std::sync::OnceLock::new();
        match &self.spec {
            Spec::Any if takes_path_rules(self.name()) => {
                EVERY_PATH.get_or_init(|| Pattern::glob("/**", GlobKind::Path))
            }
            Spec::Any => EVERYTHING.get_or_init(Pattern::everything),
            Spec::Command(p) | Spec::Path(p, _) | Spec::Host(p) | Spec::Text(p) => p,
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
        self.same_kind(other) && self.language().within(other.language())
    }

    fn same_kind(&self, other: &Rule) -> bool {
        matches!(
            (&self.spec, &other.spec),
            (Spec::Any, _)
                | (_, Spec::Any)
                | (Spec::Command(_), Spec::Command(_))
                | (Spec::Path(..), Spec::Path(..))
                | (Spec::Host(_), Spec::Host(_))
                | (Spec::Text(_), Spec::Text(_))
        )
    }

    /// A call both rules match, as text, when their specifiers overlap.
    pub fn overlap_witness(&self, other: &Rule) -> Option<String> {
        if self.tools != other.tools || !self.same_kind(other) {
            return None;
        }
        self.language().overlap(other.language())
    }

    /// A call this rule matches and `other` does not, when there is one.
    pub fn escape_witness(&self, other: &Rule) -> Option<String> {
        if !self.same_kind(other) {
            return None;
        }
        self.language().escapes(other.language())
    }

    /// The rule matches every call of its tool (or a pattern that matches everything).
    pub fn is_unbounded(&self) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Path(p, _) => Pattern::glob("/**", GlobKind::Path).within(p),
            Spec::Command(p) | Spec::Host(p) | Spec::Text(p) => Pattern::everything().within(p),
        }
    }

    /// The tool part of the rule as written.
    pub fn tool_name(&self) -> &str {
        self.name()
    }
}

/// A deny path pattern reaches a target: the path itself, anything a glob could expand to,
/// or anything below a directory the action walks — compared with and without case.
fn deny_reaches(pattern: &Pattern, folded: &Pattern, target: &crate::model::Target) -> bool {
    let lower = target.path.to_ascii_lowercase();
    if target.glob {
        let expands = Pattern::glob(&target.path, GlobKind::ShellGlob);
        let expands_folded = Pattern::glob(&lower, GlobKind::ShellGlob);
        return pattern.overlap(&expands).is_some() || folded.overlap(&expands_folded).is_some();
    }
    if pattern.matches(&target.path) || folded.matches(&lower) {
        return true;
    }
    target.recursive && {
        let below = Pattern::glob(&format!("{}/**", pattern::escape(&lower)), GlobKind::Path);
        folded.overlap(&below).is_some()
    }
}

/// The command with its program's directory dropped: `/bin/rm -rf x` is `rm -rf x` to a deny.
fn base_name_form(command: &str) -> Option<String> {
    let (program, rest) = command.split_once(' ').unwrap_or((command, ""));
    let base = program.rsplit('/').next()?;
    (base != program).then(|| {
        if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base} {rest}")
        }
    })
}

/// Where a path rule's pattern starts: at the file system's root, the home, or the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    Absolute,
    Home,
    Project,
}

/// A path specifier as an anchor and what follows it: `//abs` and `/abs` are absolute, `~/` is
/// home, `./x` and `x/y` are under the project, and a bare name (`.env`, `*.pem`) matches at
/// any depth of the project, as in gitignore.
pub(crate) fn path_anchor(spec: &str) -> (Anchor, String) {
    if let Some(rest) = spec.strip_prefix("//") {
        (Anchor::Absolute, format!("/{rest}"))
    } else if spec.starts_with('/') {
        (Anchor::Absolute, spec.to_string())
    } else if spec == "~" {
        (Anchor::Home, String::new())
    } else if let Some(rest) = spec.strip_prefix("~/") {
        (Anchor::Home, format!("/{rest}"))
    } else if let Some(rest) = spec.strip_prefix("./") {
        (Anchor::Project, format!("/{rest}"))
    } else if spec.contains('/') {
        (Anchor::Project, format!("/{spec}"))
    } else {
        (Anchor::Project, format!("/**/{spec}"))
    }
}

/// The directory an anchor stands for, as literal text (no trailing `/`).
pub(crate) fn anchor_root(anchor: Anchor, roots: &Roots) -> &str {
    match anchor {
        Anchor::Absolute => "",
        Anchor::Home => roots.home.trim_end_matches('/'),
        Anchor::Project => roots.project.trim_end_matches('/'),
    }
}

/// A path specifier as an absolute pattern ([`path_anchor`]). The roots are literal text: a
/// directory named `w*` must not become a glob.
fn path_pattern(spec: &str, roots: &Roots) -> String {
    let (anchor, rest) = path_anchor(spec);
    format!("{}{rest}", pattern::escape(anchor_root(anchor, roots)))
}

/// The host a fetch client would connect to, lower-cased: the scheme dropped, backslashes read
/// as slashes (as browsers and Node do), userinfo and port dropped, percent-escapes decoded, a
/// trailing dot removed.
fn host_of(url: &str) -> Option<String> {
    let text = url.trim().replace('\\', "/");
    let rest = match text.find(':') {
        Some(at)
            if text.get(..at).is_some_and(|s| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
            }) =>
        {
            text.get(at + 1..)?
        }
        _ => text.as_str(),
    };
    let rest = rest.trim_start_matches('/');
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    let decoded = crate::paths::percent_decode(host).to_ascii_lowercase();
    let decoded = decoded.trim_end_matches('.');
    (!decoded.is_empty()).then(|| decoded.to_string())
}
