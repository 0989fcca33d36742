//! Shared fixtures: the standard roots, loading case files, training an envelope, and a
//! collector that reports every failing case together.

use std::path::PathBuf;

use leastgrant_engine::{
    Analysis, Context, Envelope, Evidence, NoAnswers, Roots, SessionState, Settings, ToolCall,
    Verdict, analyze, decide,
};

pub const PROJECT: &str = "/home/dev/proj";
pub const HOME: &str = "/home/dev";
pub const DAY_US: i64 = 86_400_000_000;
/// 2026-01-01T00:00:00Z.
pub const T0: i64 = 1_767_225_600_000_000;

pub fn roots() -> Roots {
    Roots::new(PROJECT, HOME)
}

pub fn data(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

pub fn load<T: serde::de::DeserializeOwned>(relative: &str) -> T {
    toml::from_str(&data(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// A shell command or a structured call, as case files write them.
pub fn call(command: &str, tool: Option<&str>, input: Option<&str>, cwd: Option<&str>) -> ToolCall {
    match tool {
        Some(tool) => ToolCall {
            tool: tool.to_string(),
            input: serde_json::from_str(input.unwrap_or("{}"))
                .unwrap_or_else(|e| panic!("bad input JSON for {tool}: {e}")),
            cwd: Some(cwd.unwrap_or(PROJECT).to_string()),
            descriptor: None,
        },
        None => ToolCall::shell(command, Some(cwd.unwrap_or(PROJECT))),
    }
}

pub fn analyze_command(command: &str) -> Analysis {
    analyze(&ToolCall::shell(command, Some(PROJECT)), &roots())
}

/// Trains `envelope` with `approvals` confirmed approvals of the call, one per session per day.
pub fn train(
    envelope: &mut Envelope,
    call: &ToolCall,
    approvals: u32,
    evidence: Evidence,
    start_day: i64,
) {
    let analysis = analyze(call, &roots());
    for i in 0..approvals {
        let at = T0 + (start_day + i64::from(i)) * DAY_US;
        envelope.learn_event(
            &analysis,
            evidence,
            at,
            &format!("session-{start_day}-{i}"),
            None,
        );
    }
}

pub fn decide_at(
    envelope: &Envelope,
    call: &ToolCall,
    settings: &Settings,
    now_us: i64,
) -> Verdict {
    decide_in(envelope, &SessionState::default(), call, settings, now_us)
}

/// Decides `call` in a session that has already run some commands.
pub fn decide_in(
    envelope: &Envelope,
    session: &SessionState,
    call: &ToolCall,
    settings: &Settings,
    now_us: i64,
) -> Verdict {
    let analysis = analyze(call, &roots());
    decide(
        &analysis,
        &Context {
            envelope,
            session,
            answers: &NoAnswers,
            settings,
            now_us,
        },
    )
}

/// Collects failures so one run shows every failing case.
#[derive(Default)]
pub struct Failures(Vec<String>);

impl Failures {
    pub fn check<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, expected: T, actual: T) {
        if expected != actual {
            self.0.push(format!(
                "{what}\n      expected {expected:?}\n      actual   {actual:?}"
            ));
        }
    }

    pub fn fail(&mut self, text: String) {
        self.0.push(text);
    }

    pub fn finish(self, area: &str, total: usize) {
        assert!(total > 0, "{area}: no cases were run");
        assert!(
            self.0.is_empty(),
            "{area}: {} of {total} cases failed:\n  {}",
            self.0.len(),
            self.0.join("\n  ")
        );
    }
}

/// The evidence kind a case file names.
pub fn evidence(name: &str) -> Evidence {
    match name {
        "confirmed" => Evidence::Confirmed,
        "observed" => Evidence::Observed,
        "denied" => Evidence::Denied,
        "granted" => Evidence::Granted,
        other => panic!("unknown evidence {other}"),
    }
}

/// Analyses a case: a shell command, or a structured tool call when `tool` is given.
pub fn analyze_case(command: &str, tool: Option<&str>, input: Option<&str>) -> Analysis {
    analyze(&call(command, tool, input, None), &roots())
}

/// Decides an analysed call with no rules, the default settings and nothing learned.
pub fn decide_fresh(analysis: &Analysis, now_us: i64) -> Verdict {
    let envelope = Envelope::default();
    let session = SessionState::default();
    let settings = Settings::default();
    decide(
        analysis,
        &Context {
            envelope: &envelope,
            session: &session,
            answers: &NoAnswers,
            settings: &settings,
            now_us,
        },
    )
}
