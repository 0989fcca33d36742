//! Deciding with the frozen envelope what a native rule's calls would get: the engine's
//! `decide` with the envelope's own setting and what its project learned, the rules files the
//! hook applies, no grants (they are revocable; a native rule is not) and no session taint — the
//! same path `check --envelope` takes. Must not: decide any other way than through `decide`.

use anyhow::{Context as _, Result, anyhow};
use leastgrant_engine::{
    Context, Decision, Envelope, Frozen, FrozenProject, Learned, NativeExtensions, NativeRule,
    NativeShape, Policy, Roots, RulesAndGrants, SessionState, Settings, ToolCall, analyze, decide,
    native_witnesses,
};
use serde_json::json;

/// Where a rule's match-set stands against what the envelope allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// Every call it matches is one the envelope allows.
    Within,
    /// It matches this call, which the envelope does not allow.
    Exceeds(String),
    /// Neither proven within nor shown to exceed, and why.
    Unsupported(String),
}

impl Containment {
    /// `within`, `exceeds` or `unsupported`.
    pub fn word(&self) -> &'static str {
        match self {
            Containment::Within => "within",
            Containment::Exceeds(_) => "exceeds",
            Containment::Unsupported(_) => "unsupported",
        }
    }
}

/// The decision context for one project: its envelope, its rules, its roots.
pub struct Judge<'a> {
    pub project: Option<FrozenProject<'a>>,
    pub settings: Settings,
    pub policy: Policy,
    pub roots: Roots,
    pub now_us: i64,
}

impl<'a> Judge<'a> {
    /// The envelope's project for `roots.project`, checked as `check --envelope` checks it.
    pub fn new(frozen: &Frozen<'a>, policy: Policy, roots: Roots, now_us: i64) -> Result<Self> {
        frozen.verify()?;
        let project = frozen.project_for(&roots.project)?;
        Ok(Judge {
            project,
            settings: *frozen.settings(),
            policy,
            roots,
            now_us,
        })
    }

    /// The verdict for one call, run in the project root.
    pub fn decision(&self, call: &ToolCall) -> Result<Decision> {
        let grants = Vec::new();
        let answers = RulesAndGrants {
            policy: &self.policy,
            grants: &grants,
        };
        let empty = Envelope::default();
        let learned: &dyn Learned = match &self.project {
            Some(project) => project,
            None => &empty,
        };
        let session = SessionState::default();
        let ctx = Context {
            envelope: learned,
            session: &session,
            answers: &answers,
            settings: &self.settings,
            now_us: self.now_us,
        };
        let analysis = analyze(call, &self.roots);
        let verdict = decide(&analysis, &ctx);
        if let Some(error) = self.project.as_ref().and_then(|p| p.damage()) {
            return Err(anyhow!(error)).context("the frozen envelope is damaged");
        }
        Ok(verdict.decision)
    }

    fn shell_allowed(&self, command: &str) -> Result<bool> {
        let call = ToolCall::shell(command, Some(&self.roots.project));
        Ok(self.decision(&call)? == Decision::Allow)
    }

    fn file_allowed(&self, tool: &str, path: &str) -> Result<bool> {
        let path = match path.strip_prefix("~/") {
            Some(rest) => format!("{}/{rest}", self.roots.home.trim_end_matches('/')),
            None => path.to_string(),
        };
        let call = ToolCall {
            tool: tool.to_string(),
            input: json!({ "file_path": path }),
            cwd: Some(self.roots.project.clone()),
            descriptor: None,
        };
        Ok(self.decision(&call)? == Decision::Allow)
    }

    /// Whether `rule`'s match-set, under a matcher that accepts `extensions`, lies within what
    /// the envelope allows.
    pub fn contain(&self, rule: &NativeRule, extensions: NativeExtensions) -> Result<Containment> {
        let first_refused = |candidates: Vec<String>| -> Result<Option<String>> {
            for candidate in candidates {
                if !self.shell_allowed(&candidate)? {
                    return Ok(Some(candidate));
                }
            }
            Ok(None)
        };
        Ok(match &rule.shape {
            NativeShape::Exact(command) => {
                if self.shell_allowed(command)? {
                    Containment::Within
                } else {
                    Containment::Exceeds(command.clone())
                }
            }
            NativeShape::Words(words) => {
                match first_refused(native_witnesses(&words.join(" "), extensions))? {
                    Some(w) => Containment::Exceeds(w),
                    None => Containment::Unsupported(
                        "a prefix matches every continuation, and no finite check proves them all"
                            .into(),
                    ),
                }
            }
            NativeShape::Text(prefix) => {
                let mut candidates = native_witnesses(prefix.trim_end(), extensions);
                candidates.push(format!("{prefix}x; rm -rf ~"));
                match first_refused(candidates)? {
                    Some(w) => Containment::Exceeds(w),
                    None => {
                        Containment::Unsupported("a text prefix matches every continuation".into())
                    }
                }
            }
            NativeShape::Everything(tool) if tool == "Bash" => {
                match first_refused(vec!["rm -rf ~".into(), "cat ~/.ssh/id_rsa".into()])? {
                    Some(w) => Containment::Exceeds(w),
                    None => Containment::Unsupported("every command".into()),
                }
            }
            NativeShape::Everything(tool) | NativeShape::PathPattern { tool, .. } => {
                for secret in ["~/.ssh/id_rsa", "~/.bashrc", "/etc/shadow"] {
                    if !self.file_allowed(tool, secret)? {
                        return Ok(Containment::Exceeds(format!("{tool} {secret}")));
                    }
                }
                Containment::Unsupported(format!("`{}`: a path pattern", rule.text))
            }
            NativeShape::Path { tool, path } => {
                if !self.file_allowed(tool, path)? {
                    return Ok(Containment::Exceeds(format!("{tool} {path}")));
                }
                // A gitignore-style path also matches everything beneath it.
                let child = format!("{}/.env", path.trim_end_matches('/'));
                if !self.file_allowed(tool, &child)? {
                    return Ok(Containment::Exceeds(format!("{tool} {child}")));
                }
                Containment::Unsupported(format!(
                    "`{}` also matches whatever is beneath the path",
                    rule.text
                ))
            }
            NativeShape::Other => {
                Containment::Unsupported(format!("`{}` is not a rule leastgrant models", rule.text))
            }
        })
    }
}
