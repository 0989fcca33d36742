//! A target placed as a credential, a persistence point, a control file or leastgrant's state
//! never reaches allow through learning, whatever the evidence: the call is learned thousands of
//! times as confirmed or granted over many sessions and days, under every posture and the
//! loosest thresholds, and is still not allowed.

use leastgrant_engine::{
    Context, Decision, Envelope, Evidence, NoAnswers, Posture, SessionState, Settings, Thresholds,
    ToolCall, analyze, decide,
};
use proptest::prelude::*;

use crate::support::*;

/// Paths whose placement is a floor (relative to the project, or `~/` for the home), with the
/// access that makes it one: `true` when only a write is a floor.
const FLOOR_TARGETS: &[(&str, bool)] = &[
    ("~/.aws/credentials", false),
    ("~/.ssh/id_ed25519", false),
    (".env", false),
    (".env.production", false),
    ("client_secret.json", false),
    ("config/database.yml", false),
    ("~/.config/sops/age/keys.txt", false),
    ("~/.bashrc", true),
    ("~/.ssh/authorized_keys", true),
    (".git/hooks/pre-commit", true),
    ("~/.config/autostart/x.desktop", true),
    ("CLAUDE.md", true),
    (".roo/mcp.json", true),
    ("pytest.ini", true),
    (".github/workflows/ci.yml", true),
    ("~/.codex/config.toml", true),
    ("~/.leastgrant/rules.json", true),
    (".leastgrant/rules.json", true),
];

const READS: &[&str] = &["cat {}", "head -n 5 {}", "sed -n 1,20p {}", "tool:Read"];
const WRITES: &[&str] = &[
    "cp README.md {}",
    "echo x > {}",
    "echo x >> {}",
    "touch {}",
    "tool:Write",
    "tool:Edit",
];

fn absolute(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => format!("{HOME}/{rest}"),
        None => format!("{PROJECT}/{path}"),
    }
}

fn call_for(template: &str, path: &str) -> ToolCall {
    let file_path = absolute(path);
    let input = match template {
        "tool:Read" => serde_json::json!({ "file_path": file_path }),
        "tool:Write" => serde_json::json!({ "file_path": file_path, "content": "x" }),
        "tool:Edit" => {
            serde_json::json!({ "file_path": file_path, "old_string": "a", "new_string": "b" })
        }
        shell => return ToolCall::shell(&shell.replace("{}", path), Some(PROJECT)),
    };
    ToolCall {
        tool: template.trim_start_matches("tool:").to_string(),
        input,
        cwd: Some(PROJECT.to_string()),
        descriptor: None,
    }
}

/// The loosest thresholds a setting can have: any confidence, one session, one day, every tier.
fn loosest() -> Thresholds {
    Thresholds {
        confidence_by_tier: [0.0, 0.0, 0.0],
        min_sessions: 1,
        min_days: 1,
        min_approval: 0.0,
        min_observed: 0.0,
        max_tier: 4,
        ..Thresholds::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_floor_target_is_never_allowed_by_learning(
        target in prop::sample::select(FLOOR_TARGETS),
        read in prop::sample::select(READS),
        write in prop::sample::select(WRITES),
        granted in any::<bool>(),
        sessions in 1u32..60,
    ) {
        let (path, only_write) = target;
        let template = if only_write { write } else if granted { read } else { write };
        let call = call_for(template, path);
        let analysis = analyze(&call, &roots());
        let evidence = if granted { Evidence::Granted } else { Evidence::Confirmed };
        let mut envelope = Envelope::default();
        // Thousands of approvals: 3,000 over `sessions` sessions a day for 100 days.
        for i in 0..3000i64 {
            let day = i % 100;
            let session = format!("s{}-{}", day, i % i64::from(sessions));
            envelope.learn_event(&analysis, evidence, T0 + day * DAY_US + i, &session, None);
        }
        for posture in [Posture::Observe, Posture::Assist, Posture::Autopilot, Posture::Strict] {
            for thresholds in [Thresholds::default(), loosest()] {
                let settings = Settings { posture, thresholds };
                let verdict = decide(
                    &analysis,
                    &Context {
                        envelope: &envelope,
                        session: &SessionState::default(),
                        answers: &NoAnswers,
                        settings: &settings,
                        now_us: T0 + 101 * DAY_US,
                    },
                );
                // Observe enforces only the integrity floor, so what it would have decided is
                // the advisory decision; every other posture enforces it.
                prop_assert_ne!(
                    verdict.advisory,
                    Decision::Allow,
                    "{} under {:?}: {}",
                    template.replace("{}", path),
                    posture,
                    verdict.headline
                );
                if posture != Posture::Observe {
                    prop_assert_ne!(verdict.decision, Decision::Allow);
                }
            }
        }
    }
}

/// The same learning allows a plain neighbour, so the property above is about the floors and
/// not about learning that never allows.
#[test]
fn the_same_learning_allows_a_plain_neighbour() {
    for template in READS.iter().chain(WRITES) {
        let call = call_for(template, "docs/notes.md");
        let analysis = analyze(&call, &roots());
        let mut envelope = Envelope::default();
        for i in 0..3000i64 {
            let day = i % 100;
            let session = format!("s{}-{}", day, i % 7);
            envelope.learn_event(
                &analysis,
                Evidence::Confirmed,
                T0 + day * DAY_US + i,
                &session,
                None,
            );
        }
        let settings = Settings {
            posture: Posture::Assist,
            thresholds: loosest(),
        };
        let verdict = decide(
            &analysis,
            &Context {
                envelope: &envelope,
                session: &SessionState::default(),
                answers: &NoAnswers,
                settings: &settings,
                now_us: T0 + 101 * DAY_US,
            },
        );
        assert_eq!(
            verdict.decision,
            Decision::Allow,
            "{template}: {}",
            verdict.headline
        );
    }
}
