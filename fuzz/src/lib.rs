//! What the fuzz targets share: the roots every call is analysed under, a small vocabulary of
//! calls the structured targets draw from (so random bytes become calls the engine learns and
//! decides, not only noise), and envelopes learned from such calls and frozen.
//!
//! Must not: decide anything itself, or mirror more of the replay than the targets compare
//! (the replay's own calls of the engine are in `replay/src/replay.rs`).

use leastgrant_engine::{
    Analysis, DAY_US, Envelope, Evidence, FrozenMeta, Posture, ProjectEnvelope, Roots, Settings,
    Thresholds, ToolCall, analyze, encode,
};
use libfuzzer_sys::arbitrary::Unstructured;
use serde_json::json;

/// The project every structured target works in.
pub const PROJECT: &str = "/home/dev/proj";
/// Its home directory.
pub const HOME: &str = "/home/dev";
/// 2026-01-01T00:00:00Z.
pub const T0: i64 = 1_767_225_600_000_000;

/// The roots of [`PROJECT`].
pub fn roots() -> Roots {
    Roots::new(PROJECT, HOME)
}

/// A shell call in the project.
pub fn shell(command: &str, cwd: &str) -> ToolCall {
    ToolCall {
        tool: "Bash".to_string(),
        input: json!({ "command": command }),
        cwd: Some(cwd.to_string()),
        descriptor: None,
    }
}

const PROGRAMS: &[&str] = &[
    "cat",
    "ls",
    "git status",
    "git diff",
    "git push",
    "rm -rf",
    "npm test",
    "cargo build",
    "curl -s",
    "echo",
    "grep -r TODO",
    "python3",
    "sed -i s/a/b/",
    "cp",
    "chmod +x",
    "tee",
    "head -n 5",
    "find . -name",
    "sudo",
    "env",
    "bash -c",
    "make",
];

const OPERANDS: &[&str] = &[
    "README.md",
    "src/lib.rs",
    "../x",
    "~/.ssh/id_rsa",
    "~/.ssh/config",
    "~/.bashrc",
    ".git/hooks/pre-commit",
    "/etc/passwd",
    "docs/x.md",
    "build",
    "*.rs",
    "$HOME/.aws/credentials",
    ".env",
    "https://example.com/x.sh",
    "http://169.254.169.254/latest",
    "~/.leastgrant/grants",
    ".claude/settings.json",
    "target",
    "-la",
    "> out.txt",
    "| sh",
    "&& ls",
    "$(id)",
    "'a b'",
];

const FILE_TOOLS: &[&str] = &["Read", "Write", "Edit", "Glob", "Grep", "WebFetch"];

/// One call drawn from the vocabulary, or a few raw bytes of shell text.
pub fn call(u: &mut Unstructured<'_>) -> ToolCall {
    let kind = u.int_in_range(0..=9u8).unwrap_or(0);
    match kind {
        0 => {
            let len = u.int_in_range(0..=24usize).unwrap_or(0);
            let bytes = u.bytes(len).unwrap_or(&[]);
            shell(&String::from_utf8_lossy(bytes), PROJECT)
        }
        1 => {
            let tool = *u.choose(FILE_TOOLS).unwrap_or(&"Read");
            let operand = *u.choose(OPERANDS).unwrap_or(&"README.md");
            let path = if operand.starts_with('/') || operand.starts_with('~') {
                operand.replace('~', HOME)
            } else {
                format!("{PROJECT}/{operand}")
            };
            ToolCall {
                tool: tool.to_string(),
                input: json!({ "file_path": path, "pattern": operand, "url": operand, "content": "x" }),
                cwd: Some(PROJECT.to_string()),
                descriptor: None,
            }
        }
        _ => {
            let program = *u.choose(PROGRAMS).unwrap_or(&"ls");
            let count = u.int_in_range(0..=3usize).unwrap_or(0);
            let mut text = program.to_string();
            for _ in 0..count {
                text.push(' ');
                text.push_str(u.choose(OPERANDS).unwrap_or(&"README.md"));
            }
            let cwd = if u.ratio(1, 5).unwrap_or(false) {
                format!("{PROJECT}/src")
            } else {
                PROJECT.to_string()
            };
            shell(&text, &cwd)
        }
    }
}

/// Evidence an event teaches.
pub fn evidence(u: &mut Unstructured<'_>) -> Evidence {
    *u.choose(&[
        Evidence::Confirmed,
        Evidence::Granted,
        Evidence::Observed,
        Evidence::Denied,
    ])
    .unwrap_or(&Evidence::Observed)
}

/// A posture and thresholds: the defaults, the loosest the grid allows, or values in between.
pub fn settings(u: &mut Unstructured<'_>) -> Settings {
    let posture = *u
        .choose(&[
            Posture::Observe,
            Posture::Assist,
            Posture::Autopilot,
            Posture::Strict,
        ])
        .unwrap_or(&Posture::Assist);
    let mut thresholds = Thresholds::default();
    if u.ratio(1, 2).unwrap_or(false) {
        let confidence = *u.choose(&[0.0, 0.3, 0.5, 0.6, 0.8, 0.95]).unwrap_or(&0.6);
        thresholds.confidence_by_tier = [confidence, confidence, confidence];
        thresholds.min_approval = *u.choose(&[0.0, 0.5, 0.6]).unwrap_or(&0.6);
        thresholds.min_sessions = u.int_in_range(0..=3u32).unwrap_or(2);
        thresholds.min_days = u.int_in_range(0..=3u32).unwrap_or(2);
        thresholds.min_observed = *u.choose(&[0.0, 1.0, 3.0, 8.0]).unwrap_or(&8.0);
        thresholds.max_tier = u.int_in_range(0..=4u8).unwrap_or(2);
        thresholds.half_life_days = *u.choose(&[1.0, 7.0, 90.0, 365.0]).unwrap_or(&90.0);
    }
    Settings {
        posture,
        thresholds,
    }
}

/// A learned history: calls with their evidence, times (µs) and sessions, in time order.
pub struct History {
    /// Each event: its analysis, what it taught, when, and in which session.
    pub events: Vec<(Analysis, Evidence, i64, String)>,
}

impl History {
    /// Up to `max` events drawn from `u`, over up to 60 days.
    pub fn draw(u: &mut Unstructured<'_>, max: usize) -> History {
        let roots = roots();
        let count = u.int_in_range(0..=max).unwrap_or(0);
        let mut at = T0;
        let mut events = Vec::with_capacity(count);
        for _ in 0..count {
            let analysis = analyze(&call(u), &roots);
            let evidence = evidence(u);
            at += i64::from(u.int_in_range(0..=3u8).unwrap_or(0)) * DAY_US
                + i64::from(u.int_in_range(0..=3600u16).unwrap_or(0)) * 1_000_000;
            let session = format!("s{}", u.int_in_range(0..=5u8).unwrap_or(0));
            events.push((analysis, evidence, at, session));
        }
        History { events }
    }

    /// The time of the last event.
    pub fn last(&self) -> i64 {
        self.events.last().map_or(T0, |e| e.2)
    }

    /// Folds every event into `envelope` as the replay does (`Envelope::learn_event`).
    pub fn learn_into(&self, envelope: &mut Envelope) {
        for (analysis, evidence, at, session) in &self.events {
            envelope.learn_event(analysis, *evidence, *at, session, None);
        }
    }
}

/// `envelope` frozen for [`PROJECT`] under `settings`, as `leastgrant export` writes it.
pub fn freeze(envelope: &Envelope, settings: Settings) -> Vec<u8> {
    let meta = FrozenMeta {
        setting_id: "fuzz".to_string(),
        settings,
        rules: Vec::new(),
        provenance: json!({ "by": "fuzz" }),
    };
    encode(
        &meta,
        &[ProjectEnvelope {
            key: PROJECT,
            root: PROJECT,
            envelope,
        }],
    )
}
