//! Prints every analysis and decision of the real corpus as stable text, so a refactoring of the
//! engine can be checked byte for byte (`cargo run -q -p leastgrant-engine --example analyses`).
//!
//! Reads the SpecStory Bash calls the classification bench reads (`tests/it/specstory.rs`, with
//! the bench's roots) and every case of `tests/data/bypass.toml` (with that corpus's roots). For
//! each call it prints the analysis (every action's capability, blast radius, targets and their
//! placement, signature, spellings, subject, flags, understood and problems) and the decision
//! against a small fixed envelope under each posture, with and without rules and grants, and in
//! a tainted session: the verdict and every reason. The text names fields, never Rust types, so
//! moving or renaming a type leaves it unchanged. Must not: read the clock or the environment.

use std::fmt::Write as _;
use std::path::Path;

use leastgrant_engine::{
    Action, Analysis, Answers, Context, Envelope, Evidence, Grant, GrantScope, GrantVerdict,
    NoAnswers, Policy, Posture, Roots, RulesAndGrants, SessionState, Settings, ToolCall, Verdict,
    analyze, decide,
};
use serde::Deserialize;

#[path = "../tests/it/specstory.rs"]
mod specstory;

const DAY_US: i64 = 86_400_000_000;
/// 2026-01-01T00:00:00Z.
const T0: i64 = 1_767_225_600_000_000;

#[derive(Deserialize)]
struct Corpus {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    id: String,
    command: String,
    tool: Option<String>,
    input: Option<String>,
}

fn bypass_calls(project: &str) -> Vec<(String, ToolCall)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bypass.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let corpus: Corpus = toml::from_str(&text).unwrap_or_else(|e| panic!("bypass.toml: {e}"));
    corpus
        .case
        .into_iter()
        .map(|case| {
            let call = match case.tool {
                Some(tool) => ToolCall {
                    tool,
                    input: serde_json::from_str(case.input.as_deref().unwrap_or("{}"))
                        .unwrap_or_else(|e| panic!("{}: bad input JSON: {e}", case.id)),
                    cwd: Some(project.to_string()),
                    descriptor: None,
                },
                None => ToolCall::shell(&case.command, Some(project)),
            };
            (case.id, call)
        })
        .collect()
}

fn render_action(out: &mut String, index: usize, action: &Action) {
    let b = &action.blast;
    let _ = writeln!(
        out,
        "  action {index}: capability={} tier={} reach={:?} reversibility={:?} exposure={:?} scale={:?}",
        action.capability.as_str(),
        action.tier(),
        b.reach,
        b.reversibility,
        b.exposure,
        b.scale
    );
    let _ = writeln!(out, "    blast: {}", b.describe());
    let _ = writeln!(out, "    signature: {}", action.signature);
    let _ = writeln!(out, "    display: {}", action.display);
    let _ = writeln!(
        out,
        "    understood={} unknowns={:?}",
        action.understood, action.unknowns
    );
    let f = &action.flags;
    let _ = writeln!(
        out,
        "    flags: privilege={} piped_from_network={} fetch_run={} persistence={} remote={} in_loop={} background={}",
        f.privilege,
        f.piped_from_network,
        f.fetch_run,
        f.persistence,
        f.remote,
        f.in_loop,
        f.background
    );
    for t in &action.targets {
        let p = &t.placement;
        let _ = writeln!(
            out,
            "    target: {} access={} glob={} recursive={} zone={:?} secret={} persistence={} control={} own_state={}",
            t.path,
            t.access.as_str(),
            t.glob,
            t.recursive,
            p.zone,
            p.secret,
            p.persistence,
            p.control,
            p.own_state
        );
    }
    let s = &action.subject;
    let _ = writeln!(
        out,
        "    subject: tool={} command={:?} written={:?} risky_wrapper={} text={:?} unnamed_effects={}",
        s.tool, s.command, s.written, s.risky_wrapper, s.text, s.unnamed_effects
    );
    let _ = writeln!(out, "    spelling: {}", s.spelling);
    let _ = writeln!(
        out,
        "    spelling_without_flags: {}",
        s.spelling_without_flags
    );
    let _ = writeln!(
        out,
        "    call_args={} descriptor={:?}",
        s.call_args
            .as_deref()
            .map_or_else(|| "-".to_string(), ToString::to_string),
        s.descriptor
    );
}

fn render_analysis(out: &mut String, analysis: &Analysis) {
    let _ = writeln!(
        out,
        " understood={} piped_from_network={} problems={:?}",
        analysis.understood, analysis.piped_from_network, analysis.problems
    );
    for (i, action) in analysis.actions.iter().enumerate() {
        render_action(out, i, action);
    }
}

fn render_verdict(out: &mut String, label: &str, verdict: &Verdict) {
    let _ = writeln!(
        out,
        "  decide[{label}]: {} (advisory {}) headline={:?}",
        verdict.decision.as_str(),
        verdict.advisory.as_str(),
        verdict.headline
    );
    for reason in &verdict.reasons {
        let _ = writeln!(
            out,
            "    reason {} {:?}: {}",
            reason.code, reason.weight, reason.text
        );
    }
    for (i, action) in verdict.actions.iter().enumerate() {
        let _ = writeln!(
            out,
            "    action {i}: {} floored={} promotion={:?} reasons={:?}",
            action.decision.as_str(),
            action.floored,
            action.promotion,
            action
                .reasons
                .iter()
                .map(|r| r.code.as_str())
                .collect::<Vec<_>>()
        );
    }
}

/// Learns every third call of the corpus: some often enough to promote, some barely.
fn envelope_of(analyses: &[Analysis]) -> Envelope {
    let mut envelope = Envelope::default();
    for (i, analysis) in analyses.iter().enumerate() {
        if i % 3 != 0 {
            continue;
        }
        let (times, evidence) = match i % 4 {
            0 => (40, Evidence::Confirmed),
            1 => (3, Evidence::Confirmed),
            2 => (12, Evidence::Observed),
            _ => (1, Evidence::Denied),
        };
        for k in 0..times {
            envelope.learn_event(
                analysis,
                evidence,
                T0 + i64::from(k) * DAY_US,
                &format!("s{}", k % 17),
                None,
            );
        }
    }
    envelope
}

/// A few rules; `default_mode` is the policy's `defaultMode` (`ask` or `deny`).
fn policy(roots: &Roots, default_mode: &str) -> Policy {
    let rules = serde_json::json!({
        "permissions": {
            "defaultMode": default_mode,
            "allow": ["Bash(git status:*)", "Bash(ls:*)", "Read(//**)", "WebFetch(domain:docs.rs)"],
            "ask": ["Bash(git push:*)"],
            "deny": ["Bash(rm -rf:*)", "Read(**/.env*)", "Bash(curl:*)"]
        }
    });
    Policy::from_json(&rules, roots).unwrap_or_else(|e| panic!("policy: {e}"))
}

fn grants() -> Vec<Grant> {
    vec![
        Grant::new(
            "Bash",
            GrantVerdict::Allow,
            GrantScope::ThisAction {
                spelling: "cargo test".to_string(),
            },
        ),
        Grant::new("WebFetch", GrantVerdict::Allow, GrantScope::ThisTool),
        Grant::new(
            "Bash",
            GrantVerdict::Deny,
            GrantScope::ThisCall {
                args: serde_json::json!({"command": "git log"}),
            },
        ),
    ]
}

fn render_corpus(out: &mut String, name: &str, roots: &Roots, calls: &[(String, ToolCall)]) {
    let analyses: Vec<Analysis> = calls.iter().map(|(_, c)| analyze(c, roots)).collect();
    let envelope = envelope_of(&analyses);
    let lenient = policy(roots, "ask");
    let headless = policy(roots, "deny");
    let grants = grants();
    let rules_and_grants = RulesAndGrants {
        policy: &lenient,
        grants: &grants,
    };
    let deny_by_default = RulesAndGrants {
        policy: &headless,
        grants: &grants,
    };
    let fresh = SessionState::default();
    let tainted = SessionState {
        read_secrets: true,
        fetched_code: true,
        read_outside: true,
        ..SessionState::default()
    };
    let now_us = T0 + 45 * DAY_US;
    let postures = [
        Posture::Observe,
        Posture::Assist,
        Posture::Autopilot,
        Posture::Strict,
    ];
    let _ = writeln!(out, "corpus {name}: {} calls", calls.len());
    for ((id, call), analysis) in calls.iter().zip(&analyses) {
        let _ = writeln!(out, "call {id}: tool={} input={}", call.tool, call.input);
        render_analysis(out, analysis);
        let runs: [(&str, &dyn Answers, &SessionState); 4] = [
            ("none", &NoAnswers, &fresh),
            ("answers", &rules_and_grants, &fresh),
            ("tainted", &NoAnswers, &tainted),
            ("default-deny", &deny_by_default, &fresh),
        ];
        for posture in postures {
            let settings = Settings {
                posture,
                ..Settings::default()
            };
            for (label, answers, session) in runs {
                let verdict = decide(
                    analysis,
                    &Context {
                        envelope: &envelope,
                        session,
                        answers,
                        settings: &settings,
                        now_us,
                    },
                );
                render_verdict(out, &format!("{} {label}", posture.as_str()), &verdict);
            }
        }
    }
}

fn main() {
    let dir = specstory::specstory_dir();
    let commands = specstory::specstory_commands(&dir);
    assert!(
        !commands.is_empty(),
        "no SpecStory commands in {}",
        dir.display()
    );
    // The bench's roots: the histories come from one developer's machine.
    let roots = Roots::new("/Users/sean/Source/SpecStory/getspecstory", "/Users/sean");
    let cwd = Some(roots.project.as_str());
    let calls: Vec<(String, ToolCall)> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("specstory/{i}"), ToolCall::shell(c, cwd)))
        .collect();
    let bypass_roots = Roots::new("/home/dev/proj", "/home/dev");
    let bypass = bypass_calls(&bypass_roots.project);
    let mut out = String::new();
    render_corpus(&mut out, "specstory", &roots, &calls);
    render_corpus(&mut out, "bypass", &bypass_roots, &bypass);
    let _ = writeln!(out, "total: {} commands", calls.len() + bypass.len());
    print!("{out}");
}
