//! Rules: the seed's worked examples decided through `decide`, the linter's findings, and
//! containment checked against brute-force enumeration.

use leastgrant_engine::{
    Answers, CompiledPolicy, CompiledRules, Context, Envelope, GlobKind, Pattern, Policy,
    SessionState, Settings, SourceKey, analyze, compile_rules, compile_rules_refusal, decide, lint,
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

/// Patterns that would take seconds to compare or match are refused when the policy loads,
/// with the bound they pass; long but tame ones load.
#[test]
fn pathological_patterns_are_refused_at_load() {
    let load = |rule: &str| {
        let value = serde_json::json!({"deny": [rule], "defaultMode": "ask"});
        Policy::from_json(&value, &roots())
    };
    let cases = [
        // A literal of 10,000 characters.
        (
            format!("Bash({})", "x".repeat(10_000)),
            "longer than 1024 characters",
        ),
        // `*a` 3,000 times.
        (
            format!("Bash({})", "*a".repeat(3_000)),
            "longer than 1024 characters",
        ),
        // Any run, then `a`, then 16 single characters: a DFA must remember which of the last 17
        // characters were `a` (2^16 states).
        (
            format!("Read(/**a{})", "?".repeat(16)),
            "more than 4096 automaton states",
        ),
        (format!("WebFetch(*a{})", "*b".repeat(300)), ""),
    ];
    for (rule, why) in &cases {
        match load(rule) {
            Err(error) if !why.is_empty() => {
                let text = error.to_string();
                assert!(text.contains(why), "{text}");
                assert!(text.starts_with("rule `"), "{text}");
            }
            Ok(_) if why.is_empty() => {}
            other => panic!("{}…: {:?}", &rule[..20], other.map(|p| p.rules.len())),
        }
    }
    // `*a` 400 times loads (800 characters, a DFA of a few hundred states) and matches.
    let stars = format!("Bash({})", "*a".repeat(400));
    let policy = load(&stars).unwrap();
    let rule = &policy.rules[0];
    assert!(rule.within(rule));
    let matching = "xa".repeat(400);
    let value = serde_json::json!({"deny": [stars.clone()], "defaultMode": "ask"});
    let policy = Policy::from_json(&value, &roots()).unwrap();
    let decided = |command: &str| {
        let analysis = analyze(
            &leastgrant_engine::ToolCall::shell(command, Some(PROJECT)),
            &roots(),
        );
        analysis
            .actions
            .iter()
            .map(|a| policy.resolve(a).map(|r| r.rule))
            .collect::<Vec<_>>()
    };
    assert_eq!(decided(&matching), vec![Some(stars.clone())]);
    assert_eq!(decided("xa"), vec![None]);
}

/// A thousand rules of one shape load (containment is computed only between rules whose
/// literal prefixes can meet) and carve out as a pair of them alone would.
#[test]
fn a_thousand_rules_load_and_resolve_as_two_would() {
    let mut allow: Vec<String> = (0..1000).map(|i| format!("Bash(cmd{i} *)")).collect();
    allow.push("Bash(git status:*)".to_string());
    let value = serde_json::json!({
        "allow": allow,
        "deny": ["Bash(cmd7 rm *)", "Bash(git:*)"],
        "defaultMode": "ask",
    });
    let policy = Policy::from_json(&value, &roots()).unwrap();
    let decided = |command: &str| {
        let analysis = analyze(
            &leastgrant_engine::ToolCall::shell(command, Some(PROJECT)),
            &roots(),
        );
        let action = &analysis.actions[0];
        policy
            .resolve(action)
            .map(|r| (r.decision.as_str().to_string(), r.rule))
    };
    let answer = |d: &str, r: &str| Some((d.to_string(), r.to_string()));
    assert_eq!(decided("cmd7 rm x"), answer("deny", "Bash(cmd7 rm *)"));
    assert_eq!(decided("cmd7 ls x"), answer("allow", "Bash(cmd7 *)"));
    assert_eq!(decided("cmd999 x"), answer("allow", "Bash(cmd999 *)"));
    assert_eq!(decided("git status"), answer("allow", "Bash(git status:*)"));
    assert_eq!(decided("git push"), answer("deny", "Bash(git:*)"));
    assert_eq!(decided("cmd1000 x"), None);
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
        // The determinised pattern matches what the pattern's text says, on every string.
        for s in &strings {
            prop_assert_eq!(pa.matches(s), glob_matches(&a, kind, s), "{:?} on {:?}", a, s);
        }
    }

    /// A policy compares only rules whose prefixes can meet, and that loses nothing: what it
    /// holds as contained is what comparing every pair says.
    #[test]
    fn a_policy_knows_every_containment_comparing_every_pair_would(
        specs in prop::collection::vec((pattern_text(), 0usize..4, 0usize..3), 1..12),
    ) {
        let tools = ["Bash", "Read", "WebFetch", "mcp__s"];
        let mut lists = [Vec::new(), Vec::new(), Vec::new()];
        for (spec, tool, tier) in &specs {
            let tool = tools[*tool];
            let rule = if spec.is_empty() || tool == "mcp__s" { tool.to_string() } else { format!("{tool}(x{spec})") };
            lists[*tier].push(rule);
        }
        let value = serde_json::json!({"allow": lists[0], "ask": lists[1], "deny": lists[2], "defaultMode": "ask"});
        let Ok(policy) = Policy::from_json(&value, &roots()) else { return Ok(()); };
        for (i, a) in policy.rules.iter().enumerate() {
            for (j, b) in policy.rules.iter().enumerate() {
                prop_assert_eq!(policy.rule_within(i, j), a.within(b), "{} within {}", a.text, b.text);
            }
        }
    }
}

/// A glob matched by backtracking over its text, the way the pattern language is documented:
/// the reference the automata are checked against (for the patterns `pattern_text` makes).
fn glob_matches(pattern: &str, kind: GlobKind, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    fn go(p: &[char], t: &[char], kind: GlobKind, at_start: bool, after_slash: bool) -> bool {
        let Some((&c, rest)) = p.split_first() else {
            return t.is_empty();
        };
        let star = |class: &dyn Fn(char) -> bool, rest: &[char]| {
            (0..=t.len())
                .take_while(|n| *n == 0 || class(t[*n - 1]))
                .any(|n| go(rest, &t[n..], kind, false, false))
        };
        match (c, kind) {
            ('*', GlobKind::Text) => star(&|_| true, rest),
            ('*', GlobKind::Command) if rest.is_empty() => star(&|_| true, rest),
            ('*', GlobKind::Command) => star(&|c: char| !c.is_whitespace(), rest),
            ('*', GlobKind::Path) if rest.first() == Some(&'*') => {
                let rest = &rest[1..];
                if rest.first() == Some(&'/') {
                    let rest = &rest[1..];
                    go(rest, t, kind, false, false)
                        || (1..=t.len())
                            .any(|n| t[n - 1] == '/' && go(rest, &t[n..], kind, false, false))
                } else {
                    star(&|_| true, rest)
                }
            }
            ('*', GlobKind::ShellGlob) if at_start || after_slash => {
                // A glob never matches a leading dot.
                go(rest, t, kind, false, false)
                    || (t.first().is_some_and(|c| *c != '/' && *c != '.')
                        && (1..=t.len())
                            .take_while(|n| t[*n - 1] != '/')
                            .any(|n| go(rest, &t[n..], kind, false, false)))
            }
            ('*', GlobKind::Path | GlobKind::ShellGlob) => star(&|c| c != '/', rest),
            ('?', GlobKind::ShellGlob) if at_start || after_slash => {
                t.first().is_some_and(|c| *c != '/' && *c != '.')
                    && go(rest, &t[1..], kind, false, false)
            }
            ('?', GlobKind::Path | GlobKind::ShellGlob) => {
                t.first().is_some_and(|c| *c != '/') && go(rest, &t[1..], kind, false, false)
            }
            (c, _) => t.first() == Some(&c) && go(rest, &t[1..], kind, false, c == '/'),
        }
    }
    go(&p, &t, kind, true, false)
}

/// A policy compiled to its table ([`compile_rules`]), reopened and answered through the
/// candidates its index finds.
fn compiled(value: &serde_json::Value) -> CompiledPolicy {
    let bytes = compile_rules(value, &roots(), &SourceKey::default()).unwrap();
    let table = CompiledRules::open(bytes).unwrap();
    CompiledPolicy::new(vec![(table, false)], roots())
}

fn answers_of(
    answers: &dyn Answers,
    analysis: &leastgrant_engine::Analysis,
) -> Vec<Option<(String, String)>> {
    analysis
        .actions
        .iter()
        .map(|a| {
            answers
                .answer(a)
                .map(|r| (r.decision.as_str().to_string(), r.rule))
        })
        .collect()
}

/// Every worked example of the seed answers the same through the compiled table as through
/// the whole policy, action by action.
#[test]
fn compiled_tables_answer_every_seed_case_as_the_policy_does() {
    let seed: Seed = load("rules/seed.toml");
    let mut total = 0;
    for group in &seed.policy {
        let value: serde_json::Value = serde_json::from_str(&group.json).unwrap();
        let whole = policy(&group.json);
        let table = compiled(&value);
        for case in &group.cases {
            let call = call(
                &case.command,
                case.tool.as_deref(),
                case.input.as_deref(),
                None,
            );
            let analysis = analyze(&call, &roots());
            total += analysis.actions.len();
            assert_eq!(
                answers_of(&table, &analysis),
                answers_of(&whole, &analysis),
                "{}: {}{}",
                group.name,
                case.command,
                case.input.as_deref().unwrap_or("")
            );
        }
    }
    assert!(total > 50, "{total} actions");
}

/// The fixed header of a compiled table (docs/formats.md, "Compiled rules tables").
const TABLE_HEADER: usize = 112;

/// A table's header is checked when it opens: any byte of it changed, or the table cut short
/// or grown, and it does not open (the hook then rebuilds it from the rules file).
#[test]
fn a_table_with_its_header_damaged_or_its_length_changed_does_not_open() {
    let value = serde_json::json!({"allow": ["Bash(git status:*)", "Read(./src/**)"],
        "deny": ["Read(~/.ssh/**)", "Bash(git push:*)"], "defaultMode": "ask"});
    let bytes = compile_rules(&value, &roots(), &SourceKey::default()).unwrap();
    assert!(CompiledRules::open(bytes.clone()).is_ok());
    for at in 0..TABLE_HEADER {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x20;
        assert!(
            CompiledRules::open(flipped).is_err(),
            "byte {at} flipped still opens"
        );
    }
    for len in 0..bytes.len() {
        assert!(
            CompiledRules::open(bytes[..len].to_vec()).is_err(),
            "cut to {len}"
        );
    }
    let mut grown = bytes.clone();
    grown.push(0);
    assert!(CompiledRules::open(grown).is_err());
}

/// The rules and calls the damage tests put through a table.
const DAMAGE_RULES: &str = r#"{"allow": ["Bash(git status:*)", "Bash(npm*)", "Read(./src/**)", "WebFetch(domain:example.com)"],
    "ask": ["Bash(git:*)"], "deny": ["Read(~/.ssh/**)", "Bash(git push:*)", "Read(.env)"], "defaultMode": "ask"}"#;
const DAMAGE_CALLS: [&str; 7] = [
    "git status",
    "git push origin",
    "git log",
    "npm test",
    "cat ~/.ssh/id_rsa",
    "cat src/main.rs",
    "ls",
];

/// Each action of `command`, answered by the whole policy and by a fresh policy of `table`:
/// (whole, table's, whether a lookup found the table damaged).
type Answered = (Option<(String, String)>, Option<(String, String)>, bool);

fn answered(whole: &Policy, table: &CompiledRules, command: &str) -> Vec<Answered> {
    let analysis = analyze(&call(command, None, None, None), &roots());
    analysis
        .actions
        .iter()
        .map(|action| {
            let policy = CompiledPolicy::new(vec![(table.clone(), false)], roots());
            let got = policy
                .answer(action)
                .map(|a| (a.decision.as_str().to_string(), a.rule));
            let want = whole
                .answer(action)
                .map(|a| (a.decision.as_str().to_string(), a.rule));
            (want, got, policy.damaged().is_some())
        })
        .collect()
}

/// What damage may do to an answer: nothing, or be found, and then never allow.
fn never_widened(answers: &[Answered], what: &str, command: &str) -> bool {
    let mut found = false;
    for (want, got, damaged) in answers {
        if *damaged {
            found = true;
            let decision = got.as_ref().map(|(d, _)| d.as_str());
            assert!(
                matches!(decision, Some("ask" | "deny")),
                "{what}: `{command}` found the damage and answered {got:?}"
            );
        } else {
            assert_eq!(got, want, "{what}: `{command}` answered unlike the policy");
        }
    }
    found
}

/// Past the header, a table is checked item by item where a lookup reads it (the header, the
/// items its searches land on and bracket, its candidates): whatever one byte is changed, every
/// call answers as the whole policy does, or finds the damage and asks (or denies), never
/// allows. A byte of an item the call does not read leaves its answer right; one of an item it
/// reads is found.
#[test]
fn a_damaged_item_is_found_where_it_is_read_and_never_widens_an_answer() {
    let value: serde_json::Value = serde_json::from_str(DAMAGE_RULES).unwrap();
    let whole = policy(DAMAGE_RULES);
    let bytes = compile_rules(&value, &roots(), &SourceKey::default()).unwrap();
    let item_of = |text: &str| {
        bytes
            .windows(text.len())
            .position(|w| w == text.as_bytes())
            .unwrap()
    };
    let (ssh, push) = (item_of("Read(~/.ssh/**)"), item_of("Bash(git push:*)"));
    let mut found = vec![0usize; DAMAGE_CALLS.len()];
    for at in TABLE_HEADER..bytes.len() {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x04;
        let table = CompiledRules::open(flipped)
            .unwrap_or_else(|e| panic!("byte {at}: the header is intact, yet {e}"))
            .named("rules.json");
        for (n, command) in DAMAGE_CALLS.iter().enumerate() {
            let answers = answered(&whole, &table, command);
            if never_widened(&answers, &format!("byte {at} flipped"), command) {
                found[n] += 1;
                // The answer names the rules file whose table is damaged.
                assert!(
                    answers.iter().any(|(_, got, _)| got
                        .as_ref()
                        .is_some_and(|(_, r)| r.contains("rules.json"))),
                    "byte {at}, `{command}`: {answers:?}"
                );
            }
            // The deny of `~/.ssh` is an item `git status` never reads; `git push` reads the
            // rule that denies it.
            if at == ssh + 2 && *command == "git status" {
                assert!(answers.iter().all(|(_, _, damaged)| !damaged));
            }
            if at == push + 2 && *command == "git push origin" {
                assert!(answers.iter().any(|(_, _, damaged)| *damaged));
            }
        }
    }
    // Every call reads only part of the table: no call finds every flip.
    let past_header = bytes.len() - TABLE_HEADER;
    for (n, command) in DAMAGE_CALLS.iter().enumerate() {
        assert!(
            found[n] > 0 && found[n] < past_header,
            "`{command}` found {} of {past_header} flips",
            found[n]
        );
    }
}

/// Items reordered (two ranks' slots swapped, so each names the other's item) and items cut
/// (a slot's length shortened): found where read, never widening.
#[test]
fn reordered_or_cut_items_are_found_where_they_are_read() {
    let value: serde_json::Value = serde_json::from_str(DAMAGE_RULES).unwrap();
    let whole = policy(DAMAGE_RULES);
    let bytes = compile_rules(&value, &roots(), &SourceKey::default()).unwrap();
    let table = CompiledRules::open(bytes.clone()).unwrap();
    let count = table.len();
    let slot = |rank: usize| TABLE_HEADER + rank * 8;
    let mut found = 0;
    for i in 0..count {
        for j in i + 1..count {
            let mut swapped = bytes.clone();
            let (a, b) = (slot(i), slot(j));
            let first: Vec<u8> = swapped[a..a + 8].to_vec();
            swapped.copy_within(b..b + 8, a);
            swapped[b..b + 8].copy_from_slice(&first);
            let table = CompiledRules::open(swapped).unwrap();
            for command in DAMAGE_CALLS {
                found += usize::from(never_widened(
                    &answered(&whole, &table, command),
                    &format!("ranks {i} and {j} swapped"),
                    command,
                ));
            }
        }
        let mut cut = bytes.clone();
        let len_at = slot(i) + 4;
        cut[len_at] -= 1;
        let table = CompiledRules::open(cut).unwrap();
        for command in DAMAGE_CALLS {
            found += usize::from(never_widened(
                &answered(&whole, &table, command),
                &format!("rank {i} cut"),
                command,
            ));
        }
    }
    assert!(found > 0);
}

/// A rules file that is refused is recorded as refused, with its error.
#[test]
fn a_refused_rules_file_compiles_to_its_refusal() {
    let value = serde_json::json!({"deny": [format!("Read(/**a{})", "?".repeat(16))], "defaultMode": "ask"});
    let error = compile_rules(&value, &roots(), &SourceKey::default()).unwrap_err();
    assert!(error.to_string().contains("too complex"), "{error}");
    let refusal = compile_rules_refusal(&error.to_string(), &SourceKey::default());
    let table = CompiledRules::open(refusal).unwrap();
    assert_eq!(table.rejected(), Some(error.to_string().as_str()));
}

fn rule_text() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec!["git", "gi", "rm", "cat", "npm", "ls", "sudo"]);
    let arg = prop::sample::select(vec![
        "", " status", " push", " *", " -rf *", "*", " .env", " x *",
    ]);
    let path = prop::sample::select(vec![
        "//**/.env*",
        "~/.ssh/**",
        "./src/**",
        "src/*.rs",
        ".env",
        "*.pem",
        "/etc/**",
        "~",
        "/home/dev/proj/SECRET*",
        "/home/dev/Proj/**",
        "/tmp/?x",
        "*",
    ]);
    let tool = prop::sample::select(vec!["Read", "Edit", "Write", "Grep"]);
    prop_oneof![
        (word.clone(), arg.clone()).prop_map(|(w, a)| format!("Bash({w}{a})")),
        (word, arg).prop_map(|(w, a)| format!("Bash({w}{}:*)", a.trim_end_matches(['*', ' ']))),
        (tool, path).prop_map(|(t, p)| format!("{t}({p})")),
        prop::sample::select(vec![
            "Bash",
            "Read",
            "Edit",
            "WebFetch(domain:example.com)",
            "WebFetch",
            "mcp__s",
            "mcp__s__t",
            "Bash(*)",
            "Read(*)",
        ])
        .prop_map(str::to_string),
    ]
}

fn call_text() -> impl Strategy<Value = (String, Option<String>, Option<String>)> {
    let command = prop::sample::select(vec![
        "git status",
        "git push origin",
        "gitk",
        "rm -rf src",
        "/bin/rm -rf /tmp/x",
        "cat .env",
        "cat ~/.ssh/id_rsa",
        "cat SRC/*.rs",
        "ls",
        "npm test",
        "sudo rm x",
        "cat .en?",
        "$X status",
        "git $X",
        "cat /home/dev/proj/secret.txt",
        "cp -r ~ /tmp/h",
        "echo hi > /etc/passwd",
        "cat /TMP/ax",
        "grep -r key /home/dev/proj/src",
    ]);
    let tool_call = prop::sample::select(vec![
        ("Read", r#"{"file_path": "/home/dev/proj/.env"}"#),
        ("Read", r#"{"file_path": "/home/dev/.ssh/id_rsa"}"#),
        (
            "Edit",
            r#"{"file_path": "/home/dev/proj/src/a.rs", "old_string": "a", "new_string": "b"}"#,
        ),
        ("Write", r#"{"file_path": "/etc/hosts", "content": "x"}"#),
        ("Grep", r#"{"pattern": "k", "path": "/home/dev/proj/SRC"}"#),
        ("WebFetch", r#"{"url": "https://EXAMPLE.com/x"}"#),
        ("mcp__s__t", r#"{"q": 1}"#),
        ("mcp__s_x__t", r#"{"q": 1}"#),
    ]);
    prop_oneof![
        command.prop_map(|c| (c.to_string(), None, None)),
        tool_call.prop_map(|(t, i)| (String::new(), Some(t.to_string()), Some(i.to_string()))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The compiled table's candidates lose no rule that matters: every call answers as the
    /// whole policy answers it (the deciding rule included).
    #[test]
    fn a_compiled_table_answers_as_the_whole_policy(
        rules in prop::collection::vec((rule_text(), 0usize..3), 0..14),
        calls in prop::collection::vec(call_text(), 1..6),
        deny_default in any::<bool>(),
    ) {
        let mut lists = [Vec::new(), Vec::new(), Vec::new()];
        for (rule, tier) in rules {
            lists[tier].push(rule);
        }
        let value = serde_json::json!({"allow": lists[0], "ask": lists[1], "deny": lists[2],
            "defaultMode": if deny_default { "deny" } else { "ask" }});
        let Ok(whole) = Policy::from_json(&value, &roots()) else { return Ok(()); };
        let table = compiled(&value);
        for (command, tool, input) in calls {
            let analysis = analyze(&call(&command, tool.as_deref(), input.as_deref(), None), &roots());
            prop_assert_eq!(answers_of(&table, &analysis), answers_of(&whole, &analysis),
                "{} {:?} under {}", command, input, value);
        }
    }
}
