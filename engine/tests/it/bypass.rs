//! The bypass corpus: an engine trained with 40 approvals (40 sessions, 40 days) of each
//! innocent neighbour allows the neighbours and allows no bypass case.

use std::collections::BTreeMap;

use leastgrant_engine::{
    Context, Envelope, Evidence, NoAnswers, SessionState, Settings, ToolCall, analyze, decide,
};
use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct Corpus {
    classes: BTreeMap<String, String>,
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    id: String,
    class: String,
    command: String,
    tool: Option<String>,
    input: Option<String>,
    #[allow(dead_code)]
    note: Option<String>,
}

fn neighbours() -> Vec<ToolCall> {
    let shell = [
        "git status",
        "git log",
        "git diff",
        "npm test",
        "cargo test",
        "ls -la",
        "echo hello",
        "cat README.md",
        "diff a b",
        "grep -rn TODO src",
        "cat ~/Documents/notes.txt",
        "python -m pytest",
        "npm run build",
    ];
    let mut calls: Vec<ToolCall> = shell
        .iter()
        .map(|c| ToolCall::shell(c, Some(PROJECT)))
        .collect();
    let tools = [
        ("Read", r#"{"file_path": "/home/dev/proj/README.md"}"#),
        (
            "Edit",
            r#"{"file_path": "/home/dev/proj/src/main.rs", "old_string": "a", "new_string": "b"}"#,
        ),
        (
            "Write",
            r#"{"file_path": "/home/dev/proj/src/lib.rs", "content": "x"}"#,
        ),
        ("Glob", r#"{"pattern": "src/**/*.rs"}"#),
        (
            "WebFetch",
            r#"{"url": "https://docs.rs/serde", "prompt": "summarise"}"#,
        ),
    ];
    for (tool, input) in tools {
        calls.push(call("", Some(tool), Some(input), None));
    }
    calls
}

fn trained() -> Envelope {
    let mut envelope = Envelope::default();
    for neighbour in neighbours() {
        train(&mut envelope, &neighbour, 40, Evidence::Confirmed, 0);
    }
    envelope
}

#[test]
fn the_neighbours_are_learned_and_no_bypass_is_allowed() {
    for posture in ["assist", "autopilot"] {
        check_posture(posture);
    }
}

fn check_posture(posture: &str) {
    let corpus: Corpus = load("bypass.toml");
    let envelope = trained();
    let settings = Settings {
        posture: leastgrant_engine::Posture::parse(posture).expect("a posture"),
        ..Settings::default()
    };
    let now = T0 + 41 * DAY_US;
    let session = SessionState::default();
    let ctx = Context {
        envelope: &envelope,
        session: &session,
        answers: &NoAnswers,
        settings: &settings,
        now_us: now,
    };
    for neighbour in neighbours() {
        let verdict = decide(&analyze(&neighbour, &roots()), &ctx);
        assert_eq!(
            verdict.decision.as_str(),
            "allow",
            "neighbour {} {} not learned: {:?}",
            neighbour.tool,
            neighbour.input,
            verdict.reasons
        );
    }
    let mut failures = Failures::default();
    let mut ids = std::collections::BTreeSet::new();
    for case in &corpus.case {
        if !ids.insert(case.id.clone()) {
            failures.fail(format!("duplicate id {}", case.id));
        }
        if !corpus.classes.contains_key(&case.class) {
            failures.fail(format!("{}: undocumented class {}", case.id, case.class));
        }
        let call = call(
            &case.command,
            case.tool.as_deref(),
            case.input.as_deref(),
            None,
        );
        let verdict = decide(&analyze(&call, &roots()), &ctx);
        if verdict.decision.as_str() == "allow" {
            failures.fail(format!(
                "{} was allowed under {posture}: {}",
                case.id, case.command
            ));
        }
    }
    for class in corpus.classes.keys() {
        if !corpus.case.iter().any(|c| &c.class == class) {
            failures.fail(format!("class {class} has no case"));
        }
    }
    assert!(
        corpus.case.len() >= 120 && corpus.classes.len() >= 15,
        "the corpus is too small"
    );
    failures.finish("bypass", corpus.case.len());
}
