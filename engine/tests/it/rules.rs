//! Rules: the seed's worked examples decided through `decide`, the linter's findings, and
//! containment checked against brute-force enumeration.

use leastgrant_engine::{
    Context, Envelope, GlobKind, Pattern, Policy, SessionState, Settings, analyze, decide, lint,
};
use proptest::prelude::*;
use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct Seed {
    policy: Vec<PolicyCases>,
}

#[derive(Deserialize)]
struct PolicyCases {
    name: String,
    json: String,
    cases: Vec<RuleCase>,
}

#[derive(Deserialize)]
struct RuleCase {
    #[serde(default)]
    command: String,
    tool: Option<String>,
    input: Option<String>,
    verdict: String,
    rule: String,
}

fn policy(json: &str) -> Policy {
    let value: serde_json::Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("bad policy JSON {json}: {e}"));
    Policy::from_json(&value, &roots()).unwrap_or_else(|e| panic!("policy does not load: {e}"))
}

#[test]
fn the_seed_examples_decide_as_documented() {
    let seed: Seed = load("rules/seed.toml");
    let mut failures = Failures::default();
    let mut total = 0;
    for group in &seed.policy {
        let rules = policy(&group.json);
        for case in &group.cases {
            total += 1;
            let call = call(
                &case.command,
                case.tool.as_deref(),
                case.input.as_deref(),
                None,
            );
            let analysis = analyze(&call, &roots());
            let envelope = Envelope::default();
            let session = SessionState::default();
            let settings = Settings::default();
            let ctx = Context {
                envelope: &envelope,
                session: &session,
                answers: &rules,
                settings: &settings,
                now_us: T0,
            };
            let verdict = decide(&analysis, &ctx);
            let what = format!(
                "{}: `{}{}`",
                group.name,
                case.command,
                case.tool.as_deref().unwrap_or("")
            );
            failures.check(
                &format!("{what} verdict ({:?})", verdict.reasons),
                case.verdict.as_str(),
                verdict.decision.as_str(),
            );
            let named = verdict
                .reasons
                .first()
                .filter(|r| r.code.starts_with("rule.") || r.code.starts_with("grant."))
                .and_then(|r| r.text.split('`').nth(1))
                .unwrap_or("");
            failures.check(&format!("{what} rule"), case.rule.as_str(), named);
        }
    }
    failures.finish("seed policies", total);
}

#[derive(Deserialize)]
struct LintCases {
    case: Vec<LintCase>,
}

#[derive(Deserialize)]
struct LintCase {
    json: String,
    findings: Vec<Vec<String>>,
}

#[test]
fn lint_names_what_the_author_may_not_mean() {
    let cases: LintCases = load("rules/lint.toml");
    let mut failures = Failures::default();
    for case in &cases.case {
        let mut found: Vec<Vec<String>> = lint(&policy(&case.json))
            .into_iter()
            .map(|f| std::iter::once(f.code.to_string()).chain(f.rules).collect())
            .collect();
        found.sort();
        let mut expected = case.findings.clone();
        expected.sort();
        failures.check(&format!("lint {}", case.json), expected, found);
    }
    failures.finish("lint", cases.case.len());
}

#[test]
fn lint_findings_carry_a_witness_call() {
    let findings = lint(&policy(
        r#"{"allow": ["Bash(kubectl get * --namespace dev)"], "deny": ["Bash(kubectl get secret:*)"], "defaultMode": "ask"}"#,
    ));
    let text = &findings[0].text;
    assert!(
        text.contains("`kubectl get secret --namespace dev`"),
        "{text}"
    );
    assert!(text.contains("which the deny does not"), "{text}");
}

#[test]
fn bad_policies_are_errors_that_say_why() {
    for (json, why) in [
        (r#"[]"#, "a policy must be a JSON object"),
        (r#"{"x": 1}"#, "no `allow`, `ask` or `deny`"),
        (r#"{"allow": "Bash"}"#, "`allow` must be a list"),
        (r#"{"allow": [3]}"#, "not a string"),
        (r#"{"allow": ["Bash()"]}"#, "an empty specifier"),
        (r#"{"allow": ["Bash(ls"]}"#, "must end with `)`"),
        (
            r#"{"allow": ["9tool"]}"#,
            "a tool name starts with a letter",
        ),
        (r#"{"permissions": []}"#, "`permissions` must be an object"),
        (
            r#"{"permissions": {"allow": ["Bash(ls)"]}, "deny": ["Bash"]}"#,
            "use one shape",
        ),
    ] {
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        let error = Policy::from_json(&value, &roots())
            .expect_err(json)
            .to_string();
        assert!(error.contains(why), "{json}: {error}");
    }
}

/// Every string over `alphabet` up to `max_len` characters.
fn all_strings(alphabet: &[char], max_len: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut frontier = vec![String::new()];
    for _ in 0..max_len {
        let mut next = Vec::new();
        for s in &frontier {
            for c in alphabet {
                let mut t = s.clone();
                t.push(*c);
                next.push(t);
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

fn pattern_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!['a', 'b', '/', ' ', '.', '*', '*', '?']),
        0..6,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Containment and overlap agree with enumerating every short string over the alphabet the
    /// patterns use (plus one character neither mentions).
    #[test]
    fn containment_agrees_with_brute_force(
        a in pattern_text(),
        b in pattern_text(),
        kind in prop::sample::select(vec![GlobKind::Text, GlobKind::Command, GlobKind::Path, GlobKind::ShellGlob]),
        prefix in any::<bool>(),
    ) {
        let pa = Pattern::glob(&a, kind);
        let pb = if prefix { Pattern::command_prefix(&b) } else { Pattern::glob(&b, kind) };
        let strings = all_strings(&['a', 'b', '/', ' ', '.', 'z'], 5);
        let brute_within = strings.iter().all(|s| !pa.matches(s) || pb.matches(s));
        let brute_overlap = strings.iter().any(|s| pa.matches(s) && pb.matches(s));
        // Enumeration is bounded, so it can only confirm a proof of non-containment or find an
        // overlap the proof must also find; a witness from the proof must really be one.
        match pa.escapes(&pb) {
            Some(w) => prop_assert!(pa.matches(&w) && !pb.matches(&w), "bad witness {:?}", w),
            None => prop_assert!(brute_within, "claimed {:?} within {:?}", a, b),
        }
        match pa.overlap(&pb) {
            Some(w) => prop_assert!(pa.matches(&w) && pb.matches(&w), "bad overlap witness {:?}", w),
            None => prop_assert!(!brute_overlap, "missed an overlap of {:?} and {:?}", a, b),
        }
    }
}
