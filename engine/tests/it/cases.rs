//! Case files for the shell analysis, signatures, floors, decide order and postures.

use leastgrant_engine::{Envelope, Evidence, Posture, Settings, Token, lex, parse, unwrap};
use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct ShellCases {
    lex: Vec<LexCase>,
    split: Vec<SplitCase>,
    unwrap: Vec<UnwrapCase>,
}

#[derive(Deserialize)]
struct LexCase {
    input: String,
    words: Vec<String>,
    #[serde(default)]
    problems: bool,
    #[serde(default)]
    substitutions: Vec<String>,
}

#[derive(Deserialize)]
struct SplitCase {
    input: String,
    programs: Vec<String>,
    #[serde(default)]
    problems: bool,
}

#[derive(Deserialize)]
struct UnwrapCase {
    input: String,
    program: String,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    wrappers: Vec<String>,
    #[serde(default)]
    opaque: bool,
}

#[test]
fn shell_cases() {
    let cases: ShellCases = load("shell.toml");
    let mut failures = Failures::default();
    let total = cases.lex.len() + cases.split.len() + cases.unwrap.len();
    for case in &cases.lex {
        let lexed = lex(&case.input);
        // Whether a word is literal is settled once when it is lexed, and its written form kept
        // only when it differs from the value: both must say what the text says.
        for token in &lexed.tokens {
            let word = match token {
                Token::Word(w) | Token::Arith(w) => Some(w),
                Token::Redirect(r) => Some(&r.target),
                _ => None,
            };
            if let Some(w) = word {
                failures.check(
                    &format!("lex literal `{}` in `{}`", w.text, case.input),
                    !w.text.contains('\u{E000}'),
                    w.is_literal(),
                );
                // A word written as its plain value holds no `$` (the secret-variable test
                // skips it).
                failures.check(
                    &format!("lex plain written form of `{}` in `{}`", w.text, case.input),
                    false,
                    w.raw_is_plain() && w.raw().contains('$'),
                );
                // A word without quoting or expansion is written as its value.
                if !w.raw().contains(['$', '`', '\\', '\'', '"', '(']) {
                    failures.check(
                        &format!("lex written form of `{}` in `{}`", w.text, case.input),
                        w.text.as_str(),
                        w.raw(),
                    );
                }
            }
        }
        let words: Vec<String> = lexed
            .tokens
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(w.text.replace('\u{E000}', "<?>")),
                _ => None,
            })
            .collect();
        failures.check(&format!("lex words `{}`", case.input), &case.words, &words);
        failures.check(
            &format!("lex problems `{}`", case.input),
            case.problems,
            !lexed.problems.is_empty(),
        );
        if !case.substitutions.is_empty() {
            let subs: Vec<String> = lexed
                .tokens
                .iter()
                .flat_map(|t| match t {
                    Token::Word(w) => w
                        .substitutions
                        .iter()
                        .map(|s| s.source.clone())
                        .collect::<Vec<_>>(),
                    Token::Redirect(r) => r
                        .target
                        .substitutions
                        .iter()
                        .map(|s| s.source.clone())
                        .collect(),
                    _ => Vec::new(),
                })
                .collect();
            failures.check(
                &format!("lex substitutions `{}`", case.input),
                &case.substitutions,
                &subs,
            );
        }
    }
    for case in &cases.split {
        let script = parse(&case.input, 0);
        let programs: Vec<String> = script
            .commands
            .iter()
            .flat_map(unwrap)
            .map(|e| e.program.replace('\u{E000}', "<?>"))
            .collect();
        failures.check(
            &format!("split `{}`", case.input),
            &case.programs,
            &programs,
        );
        failures.check(
            &format!("split problems `{}`", case.input),
            case.problems,
            !script.problems.is_empty(),
        );
    }
    for case in &cases.unwrap {
        let script = parse(&case.input, 0);
        let effective = script.commands.iter().flat_map(unwrap).next_back();
        let Some(effective) = effective else {
            failures.fail(format!("unwrap `{}`: nothing", case.input));
            continue;
        };
        failures.check(
            &format!("unwrap program `{}`", case.input),
            case.program.clone(),
            effective.program.replace('\u{E000}', "<?>"),
        );
        if let Some(args) = &case.args {
            let actual: Vec<String> = effective.args.iter().map(|w| w.text.to_string()).collect();
            failures.check(&format!("unwrap args `{}`", case.input), args, &actual);
        }
        let wrappers: Vec<String> = effective
            .wrappers
            .iter()
            .map(|w| w.as_str().to_string())
            .collect();
        failures.check(
            &format!("unwrap wrappers `{}`", case.input),
            &case.wrappers,
            &wrappers,
        );
        failures.check(
            &format!("unwrap opaque `{}` ({:?})", case.input, effective.opaque),
            case.opaque,
            effective.opaque.is_some(),
        );
    }
    failures.finish("shell", total);
}

#[derive(Deserialize)]
struct SignatureCases {
    case: Vec<SignatureCase>,
    #[serde(default)]
    same: Vec<Vec<String>>,
    #[serde(default)]
    distinct: Vec<Vec<String>>,
}

#[derive(Deserialize)]
struct SignatureCase {
    #[serde(default)]
    command: String,
    tool: Option<String>,
    input: Option<String>,
    signatures: Vec<String>,
}

fn signatures_of(command: &str) -> Vec<String> {
    analyze_command(command)
        .actions
        .iter()
        .map(|a| a.signature.clone())
        .collect()
}

#[test]
fn signature_cases() {
    let cases: SignatureCases = load("signatures.toml");
    let mut failures = Failures::default();
    for case in &cases.case {
        let analysis = leastgrant_engine::analyze(
            &call(
                &case.command,
                case.tool.as_deref(),
                case.input.as_deref(),
                None,
            ),
            &roots(),
        );
        let actual: Vec<String> = analysis
            .actions
            .iter()
            .map(|a| a.signature.clone())
            .collect();
        failures.check(
            &format!("signature `{}`", case.command),
            &case.signatures,
            &actual,
        );
    }
    for group in &cases.same {
        let first = group.first().map(|c| signatures_of(c)).unwrap_or_default();
        for other in group.iter().skip(1) {
            failures.check(
                &format!("same signature as `{}`: `{other}`", group[0]),
                &first,
                &signatures_of(other),
            );
        }
    }
    for group in &cases.distinct {
        for (i, a) in group.iter().enumerate() {
            for b in group.iter().skip(i + 1) {
                if signatures_of(a) == signatures_of(b) {
                    failures.fail(format!(
                        "`{a}` and `{b}` share a signature: {:?}",
                        signatures_of(a)
                    ));
                }
            }
        }
    }
    failures.finish(
        "signatures",
        cases.case.len() + cases.same.len() + cases.distinct.len(),
    );
}

#[derive(Deserialize)]
struct FloorCases {
    case: Vec<FloorCase>,
}

#[derive(Deserialize)]
struct FloorCase {
    #[serde(default)]
    command: String,
    tool: Option<String>,
    input: Option<String>,
    /// Floor codes that must fire (on any action).
    #[serde(default)]
    floors: Vec<String>,
    /// With 40 approvals over 40 days: the verdict.
    verdict: String,
}

#[test]
fn floor_cases() {
    let cases: FloorCases = load("floors.toml");
    let mut failures = Failures::default();
    for case in &cases.case {
        let call = call(
            &case.command,
            case.tool.as_deref(),
            case.input.as_deref(),
            None,
        );
        let analysis = leastgrant_engine::analyze(&call, &roots());
        let fired: Vec<&str> = analysis
            .actions
            .iter()
            .flat_map(|a| leastgrant_engine::floors(a, &analysis))
            .map(|floor| floor.code)
            .collect();
        for floor in &case.floors {
            if !fired.contains(&floor.as_str()) {
                failures.fail(format!(
                    "`{}{}`: floor {floor} did not fire (fired: {fired:?})",
                    case.command,
                    case.tool.as_deref().unwrap_or("")
                ));
            }
        }
        if case.floors.is_empty() && !fired.is_empty() {
            failures.fail(format!(
                "`{}`: expected no floor, fired {fired:?}",
                case.command
            ));
        }
        let mut envelope = Envelope::default();
        train(&mut envelope, &call, 40, Evidence::Confirmed, 0);
        let verdict = decide_at(&envelope, &call, &Settings::default(), T0 + 41 * DAY_US);
        failures.check(
            &format!(
                "verdict after 40 approvals `{}` {:?}",
                case.command, verdict.reasons
            ),
            case.verdict.as_str(),
            verdict.decision.as_str(),
        );
    }
    failures.finish("floors", cases.case.len());
}

#[derive(Deserialize)]
struct DecideCases {
    case: Vec<DecideCase>,
}

#[derive(Deserialize)]
struct DecideCase {
    name: String,
    #[serde(default = "assist")]
    posture: String,
    /// Training: (command, evidence, count) — one per session per day from day 0.
    #[serde(default)]
    train: Vec<(String, String, u32)>,
    command: String,
    /// Commands that ran earlier in the same session.
    #[serde(default)]
    session: Vec<String>,
    /// Days after day 0 when the call is decided.
    at_day: i64,
    verdict: String,
    /// The first reason code of the deciding action.
    #[serde(default)]
    reason: Option<String>,
}

fn assist() -> String {
    "assist".to_string()
}

#[test]
fn decide_cases() {
    let cases: DecideCases = load("decide.toml");
    let mut failures = Failures::default();
    for case in &cases.case {
        let mut envelope = Envelope::default();
        for (command, kind, count) in &case.train {
            train(
                &mut envelope,
                &leastgrant_engine::ToolCall::shell(command, Some(PROJECT)),
                *count,
                evidence(kind),
                0,
            );
        }
        let settings = Settings {
            posture: Posture::parse(&case.posture)
                .unwrap_or_else(|| panic!("bad posture {}", case.posture)),
            ..Settings::default()
        };
        let mut session = leastgrant_engine::SessionState::default();
        for earlier in &case.session {
            session.record(&analyze_command(earlier));
        }
        let call = leastgrant_engine::ToolCall::shell(&case.command, Some(PROJECT));
        let verdict = decide_in(
            &envelope,
            &session,
            &call,
            &settings,
            T0 + case.at_day * DAY_US,
        );
        failures.check(
            &format!("{}: verdict ({:?})", case.name, verdict.reasons),
            case.verdict.as_str(),
            verdict.decision.as_str(),
        );
        if let Some(reason) = &case.reason {
            let first = verdict
                .reasons
                .first()
                .map(|r| r.code.clone())
                .unwrap_or_default();
            failures.check(
                &format!("{}: first reason", case.name),
                reason.as_str(),
                first.as_str(),
            );
        }
    }
    failures.finish("decide", cases.case.len());
}
