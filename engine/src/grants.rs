//! Grants: a human's answer for a tool, a call or a signature, kept across sessions.
//!
//! A grant's identity is a content-stable 16-hex digest of `{tool, verdict, scope}`, hashed over
//! JSON with explicitly sorted keys, so granting the same thing again upserts it. Arguments
//! compare canonically (key order never matters; prose fields such as a Bash call's
//! `description` are not part of a call's identity). A grant may pin the tool's descriptor
//! digest: when the tool's schema changes, the grant no longer covers it and the person is asked
//! again. Deny beats allow at the consumer ([`RulesAndGrants`]).
//! Storage is behind the [`GrantStore`] seam; the file store lives with the hook, which owns I/O.

use std::fmt;

use crate::sha256::Sha256;
use serde_json::Value;

use crate::model::{Action, Answer, AnswerSource, Answers, Decision};
use crate::tools::canonical_args;

/// Allow or deny; both persist alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GrantVerdict {
    /// Let it run.
    Allow,
    /// Refuse it.
    Deny,
}

impl GrantVerdict {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            GrantVerdict::Allow => "allow",
            GrantVerdict::Deny => "deny",
        }
    }
}

/// What a grant covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantScope {
    /// Every call of the tool.
    ThisTool,
    /// Calls whose arguments are canonically equal to these.
    ThisCall {
        /// The arguments, canonical (see `canonical_args`).
        args: Value,
    },
    /// This action however it is spelled: the program, its flags in any order, and the paths it
    /// touches resolved (`rm -rf ./src/` = `rm -fr src`). A deny grant also covers the action
    /// with extra flags.
    ThisAction {
        /// The action's spelling (see [`crate::Subject::spelling`]).
        spelling: String,
    },
}

/// One grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The tool, in Claude Code's spelling.
    pub tool: String,
    /// Allow or deny.
    pub verdict: GrantVerdict,
    /// What it covers.
    pub scope: GrantScope,
    /// The tool's descriptor digest when granted; a different digest means "ask again".
    pub pinned_descriptor: Option<String>,
    /// When it was granted (ms since the epoch), if known.
    pub created_at_ms: Option<i64>,
    /// Why, in the granter's words.
    pub note: Option<String>,
    id: String,
}

impl Grant {
    /// A grant; its identity is derived from `{tool, verdict, scope}`.
    pub fn new(tool: &str, verdict: GrantVerdict, scope: GrantScope) -> Grant {
        let scope = match scope {
            GrantScope::ThisCall { args } => GrantScope::ThisCall {
                args: canonical_args(tool, &args),
            },
            other => other,
        };
        let identity = serde_json::json!({
            "tool": tool,
            "verdict": verdict.as_str(),
            "scope": scope_json(&scope),
        });
        Grant {
            tool: tool.to_string(),
            verdict,
            scope,
            pinned_descriptor: None,
            created_at_ms: None,
            note: None,
            id: digest16(&identity),
        }
    }

    /// Pins the tool's descriptor digest.
    pub fn with_pinned_descriptor(mut self, digest: &str) -> Grant {
        self.pinned_descriptor = Some(digest.to_string());
        self
    }

    /// Records when it was granted.
    pub fn with_created_at_ms(mut self, at_ms: i64) -> Grant {
        self.created_at_ms = Some(at_ms);
        self
    }

    /// Records why.
    pub fn with_note(mut self, note: &str) -> Grant {
        self.note = Some(note.to_string());
        self
    }

    /// The content-stable 16-hex identity.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The grant covers a call of `tool` with `args` (its own scope only: `Signature` grants
    /// need an analysed action, see [`Grant::covers_action`]).
    pub fn covers(&self, tool: &str, args: &Value) -> bool {
        if tool != self.tool {
            return false;
        }
        match &self.scope {
            GrantScope::ThisTool => true,
            GrantScope::ThisCall { args: granted } => *granted == canonical_args(tool, args),
            GrantScope::ThisAction { .. } => false,
        }
    }

    /// The grant covers an analysed action; a pinned descriptor must match the call's.
    pub fn covers_action(&self, action: &Action) -> bool {
        let subject = &action.subject;
        if subject.tool != self.tool {
            return false;
        }
        if let Some(pinned) = &self.pinned_descriptor
            && subject.descriptor.as_deref() != Some(pinned.as_str())
        {
            return false;
        }
        match &self.scope {
            GrantScope::ThisTool => true,
            GrantScope::ThisCall { args } => subject.call_args.as_deref() == Some(args),
            GrantScope::ThisAction { spelling } => match self.verdict {
                GrantVerdict::Allow => subject.spelling == *spelling,
                GrantVerdict::Deny => {
                    subject.spelling == *spelling
                        || subject.spelling_without_flags == strip_flags(spelling)
                }
            },
        }
    }

    /// Rebuilds a stored grant, checking its identity.
    pub fn restore(
        tool: &str,
        verdict: GrantVerdict,
        scope: GrantScope,
        stored_id: &str,
    ) -> Result<Grant, GrantStoreError> {
        let grant = Grant::new(tool, verdict, scope);
        if grant.id != stored_id {
            return Err(GrantStoreError(format!(
                "grant `{stored_id}` does not match its content (expected `{}`): the file was edited by hand",
                grant.id
            )));
        }
        Ok(grant)
    }
}

/// The scope as JSON (for identities and storage).
pub fn scope_json(scope: &GrantScope) -> Value {
    match scope {
        GrantScope::ThisTool => serde_json::json!({"kind": "this-tool"}),
        GrantScope::ThisCall { args } => serde_json::json!({"kind": "this-call", "args": args}),
        GrantScope::ThisAction { spelling } => {
            serde_json::json!({"kind": "this-action", "spelling": spelling})
        }
    }
}

/// Reads a scope written by [`scope_json`].
pub fn scope_from_json(value: &Value) -> Option<GrantScope> {
    match value.get("kind")?.as_str()? {
        "this-tool" => Some(GrantScope::ThisTool),
        "this-call" => Some(GrantScope::ThisCall {
            args: value.get("args")?.clone(),
        }),
        "this-action" => Some(GrantScope::ThisAction {
            spelling: value.get("spelling")?.as_str()?.to_string(),
        }),
        _ => None,
    }
}

/// A spelling with its flags removed (words starting with `-` after the program).
fn strip_flags(spelling: &str) -> String {
    let mut words = spelling.split(' ');
    let program = words.next().unwrap_or("");
    std::iter::once(program)
        .chain(words.filter(|w| !(w.starts_with('-') && w.len() > 1)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first 16 hex digits of SHA-256 over canonical JSON (see [`canonical_json`]).
pub fn digest16(value: &Value) -> String {
    let mut text = String::new();
    canonical_json(value, &mut text);
    let hash = Sha256::digest(text.as_bytes());
    crate::hex::hex(hash.get(..8).unwrap_or_default())
}

/// `value` as compact JSON with every object's keys in byte order, whatever order the map keeps
/// them in (serde_json keeps insertion order when any crate in a build enables its
/// `preserve_order` feature). Scalars are written by serde_json itself, so the text is what
/// `to_string` gives with sorted maps: the text grant ids have always been hashed over.
fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical_json(item, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A tool's descriptor digest (its name, description and input schema, canonically): pin it
/// in a grant, and a changed schema asks again.
pub fn descriptor_digest(descriptor: &Value) -> String {
    digest16(descriptor)
}

/// A grant store could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantStoreError(pub String);

impl fmt::Display for GrantStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GrantStoreError {}

/// Where grants are kept. Sync and object-safe, so a hook can hold a `Box<dyn GrantStore>`.
pub trait GrantStore {
    /// Upserts a grant (same identity replaces) and returns it.
    fn save(&mut self, grant: Grant) -> Result<Grant, GrantStoreError>;
    /// Removes a grant by identity and returns it, as the audit record.
    fn revoke(&mut self, id: &str) -> Result<Option<Grant>, GrantStoreError>;
    /// Removes every grant.
    fn clear(&mut self) -> Result<(), GrantStoreError>;
    /// Every grant; a store that does not exist yet reads as empty.
    fn load(&self) -> Result<Vec<Grant>, GrantStoreError>;
}

/// A human's answers given in advance: grants and a rule policy, consulted together. A deny
/// grant beats everything; then the policy's resolution (its denies beat allow grants); then an
/// allow grant, which is more specific than any rule.
pub struct RulesAndGrants<'a> {
    /// Rules in force: a [`Policy`](crate::rules::Policy), or the hook's compiled tables.
    pub policy: &'a dyn Answers,
    /// Grants in force.
    pub grants: &'a [Grant],
}

impl Answers for RulesAndGrants<'_> {
    fn answer(&self, action: &Action) -> Option<Answer> {
        let covering = |verdict: GrantVerdict| {
            self.grants
                .iter()
                .find(|g| g.verdict == verdict && g.covers_action(action))
        };
        if let Some(grant) = covering(GrantVerdict::Deny) {
            return Some(Answer {
                decision: Decision::Deny,
                rule: grant.id().to_string(),
                source: AnswerSource::Grant,
            });
        }
        let from_policy = self.policy.answer(action);
        if from_policy
            .as_ref()
            .is_some_and(|hit| hit.decision == Decision::Deny)
        {
            return from_policy;
        }
        if let Some(grant) = covering(GrantVerdict::Allow) {
            return Some(Answer {
                decision: Decision::Allow,
                rule: grant.id().to_string(),
                source: AnswerSource::Grant,
            });
        }
        from_policy
    }
}
