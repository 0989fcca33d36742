//! `leastgrant lint`: what a policy does that its author may not have meant.
//!
//! Every finding is proved on the rules' automata and comes with a call that shows it: a rule
//! that can never decide (shadowed), a narrower allow that silently removes an ask's prompt, an
//! allow or ask that overlaps a deny without lying inside it (so it carves nothing), an unknown
//! or missing `defaultMode`, and allows that match every call of their tool.

use super::{DefaultMode, Policy};

/// Tool names rules can name besides the path tools (Claude Code's spelling; MCP tools are
/// `mcp__…`).
const OTHER_TOOLS: &[&str] = &[
    "Bash",
    "WebFetch",
    "WebSearch",
    "Task",
    "Agent",
    "TodoWrite",
    "ExitPlanMode",
    "EnterPlanMode",
    "SlashCommand",
    "Skill",
    "AskUserQuestion",
    "BashOutput",
    "KillShell",
];
use crate::model::Decision;

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Stable code: `shadowed`, `prompt-removed`, `overlap-not-contained`, `default-mode`,
    /// `broad-allow`.
    pub code: &'static str,
    /// The rules involved, as written.
    pub rules: Vec<String>,
    /// For people.
    pub text: String,
}

/// Shows a witness string; the automata use private-use characters for "anything else".
fn show(witness: &str) -> String {
    let printable: String = witness
        .chars()
        .map(|c| {
            if ('\u{E100}'..='\u{E1FF}').contains(&c) {
                'x'
            } else {
                c
            }
        })
        .collect();
    if printable.is_empty() {
        "(any call)".to_string()
    } else {
        format!("`{printable}`")
    }
}

/// Lints a policy.
pub fn lint(policy: &Policy) -> Vec<Finding> {
    let mut findings = Vec::new();
    match policy.unknown_default_mode.as_deref() {
        Some("<missing>") => findings.push(Finding {
            code: "default-mode",
            rules: Vec::new(),
            text: "no `defaultMode`: calls no rule matches are denied; write `\"defaultMode\": \"ask\"` to let floors and learning decide them, or `\"deny\"` to say you mean it".to_string(),
        }),
        Some(other) => findings.push(Finding {
            code: "default-mode",
            rules: Vec::new(),
            text: format!("`defaultMode` is `{other}`, which is neither `ask` nor `deny`: unmatched calls are denied"),
        }),
        None => {}
    }
    let rules = &policy.rules;
    for (i, a) in rules.iter().enumerate() {
        for (j, b) in rules.iter().enumerate() {
            // Rules that share no call cannot shadow, narrow or overlap each other.
            if i == j || !policy.related(i, j) {
                continue;
            }
            let a_in_b = policy.rule_within(i, j);
            let b_in_a = policy.rule_within(j, i);
            match (a.decision, b.decision) {
                (Decision::Allow | Decision::Ask, Decision::Deny) => {
                    if a_in_b && b_in_a {
                        findings.push(Finding {
                            code: "shadowed",
                            rules: vec![a.text.clone(), b.text.clone()],
                            text: format!("`{}` matches exactly what `{}` denies, so it never decides anything (a carve-out must be strictly narrower)", a.text, b.text),
                        });
                    } else if !a_in_b && let Some(both) = a.overlap_witness(b) {
                        let outside = a
                            .escape_witness(b)
                            .map(|w| format!(", and also {} which the deny does not", show(&w)))
                            .unwrap_or_default();
                        findings.push(Finding {
                                code: "overlap-not-contained",
                                rules: vec![a.text.clone(), b.text.clone()],
                                text: format!("`{}` overlaps `{}` without lying inside it, so it carves nothing out: {} matches both and is denied{outside}", a.text, b.text, show(&both)),
                            });
                    }
                }
                (Decision::Allow, Decision::Ask) => {
                    if a_in_b && !b_in_a {
                        let example = a.overlap_witness(b).map(|w| show(&w)).unwrap_or_default();
                        findings.push(Finding {
                            code: "prompt-removed",
                            rules: vec![a.text.clone(), b.text.clone()],
                            text: format!("`{}` is narrower than `{}` and wins over it, so calls like {example} run without the prompt the ask rule asks for", a.text, b.text),
                        });
                    } else if a_in_b && b_in_a {
                        findings.push(Finding {
                            code: "shadowed",
                            rules: vec![a.text.clone(), b.text.clone()],
                            text: format!("`{}` and `{}` match the same calls; a tie goes to ask, so the allow never decides anything", a.text, b.text),
                        });
                    }
                }
                (x, y) if x == y && i < j && a_in_b && b_in_a => findings.push(Finding {
                    code: "shadowed",
                    rules: vec![a.text.clone(), b.text.clone()],
                    text: format!("`{}` and `{}` match the same calls", a.text, b.text),
                }),
                _ => {}
            }
        }
    }
    for rule in rules
        .iter()
        .filter(|r| r.decision == Decision::Allow && r.is_unbounded())
    {
        findings.push(Finding {
            code: "broad-allow",
            rules: vec![rule.text.clone()],
            text: format!("`{}` allows every `{}` call, past every floor learning would keep; prefer the commands you mean", rule.text, rule.tool_name()),
        });
    }
    for key in &policy.unknown_keys {
        findings.push(Finding {
            code: "unknown-key",
            rules: Vec::new(),
            text: format!("the key `{key}` means nothing to leastgrant and is ignored"),
        });
    }
    for dropped in &policy.dropped {
        findings.push(Finding {
            code: "untrusted-allow",
            rules: vec![dropped.clone()],
            text: format!("`{dropped}` comes from the project's own rules file, which may only tighten; the allow is ignored"),
        });
    }
    for rule in rules {
        if !OTHER_TOOLS.contains(&rule.tool_name())
            && !super::takes_path_rules(rule.tool_name())
            && !rule.text.starts_with("mcp__")
        {
            findings.push(Finding {
                code: "unknown-tool",
                rules: vec![rule.text.clone()],
                text: format!("`{}` names no tool leastgrant knows (names are case-sensitive: `Read`, `Bash`, …), so it never matches", rule.text),
            });
        }
        let spec = rule
            .text
            .split_once('(')
            .map(|(_, s)| s.trim_end_matches(')'))
            .unwrap_or("");
        if spec.ends_with(" :*") || spec.ends_with(' ') {
            findings.push(Finding {
                code: "never-matches",
                rules: vec![rule.text.clone()],
                text: format!(
                    "`{}` ends in a space, so it matches nothing anyone types",
                    rule.text
                ),
            });
        }
        if ["Read", "Edit", "Write"].contains(&rule.tool_name())
            && spec.len() > 1
            && spec.ends_with('/')
        {
            findings.push(Finding {
                code: "never-matches",
                rules: vec![rule.text.clone()],
                text: format!(
                    "`{}` ends in `/`, and a path never does; write `{}**` for everything below it",
                    rule.text, spec
                ),
            });
        }
    }
    if policy.default_mode == DefaultMode::Ask && rules.is_empty() {
        findings.push(Finding {
            code: "empty",
            rules: Vec::new(),
            text: "the policy has no rules".to_string(),
        });
    }
    findings
}
