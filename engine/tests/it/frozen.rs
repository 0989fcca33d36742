//! The frozen envelope: it answers exactly what the envelope it froze answers, names its
//! digest, notices tampering, and never panics on damaged bytes.

use leastgrant_engine::{
    Capability, DecayTable, Envelope, Evidence, Frozen, FrozenMeta, Learned, Posture,
    ProjectEnvelope, Settings, Thresholds, encode,
};
use proptest::prelude::*;

use crate::support::{DAY_US, T0};

const SIGNATURES: [&str; 5] = [
    "npm test",
    "git status",
    "cat <path>",
    "ls",
    "rm -rf <path>",
];

fn envelope_from(events: &[(usize, u8, usize, i64, usize)]) -> Envelope {
    let kinds = [
        Evidence::Confirmed,
        Evidence::Observed,
        Evidence::Denied,
        Evidence::Granted,
    ];
    let mut envelope = Envelope::default();
    for &(s, tier, k, day, session) in events {
        envelope.learn_signature(
            SIGNATURES[s % SIGNATURES.len()],
            tier,
            kinds[k % kinds.len()],
            T0 + day * DAY_US,
            &format!("s{session}"),
        );
    }
    envelope
        .transitions
        .insert((Capability::FsReadWorkspace, Capability::ExecTest), 3);
    envelope
}

fn tracked_envelope(events: &[(usize, u8, usize, i64, usize)], half_life: f64) -> Envelope {
    let mut tracked = Envelope::tracking(std::sync::Arc::new(DecayTable::new(half_life)));
    let built = envelope_from(events);
    // The same folds, into an envelope that keeps its sums.
    let kinds = [
        Evidence::Confirmed,
        Evidence::Observed,
        Evidence::Denied,
        Evidence::Granted,
    ];
    for &(s, tier, k, day, session) in events {
        tracked.learn_signature(
            SIGNATURES[s % SIGNATURES.len()],
            tier,
            kinds[k % kinds.len()],
            T0 + day * DAY_US,
            &format!("s{session}"),
        );
    }
    tracked.transitions = built.transitions;
    tracked
}

fn meta() -> FrozenMeta {
    FrozenMeta {
        setting_id: "assist-test".to_string(),
        settings: Settings {
            posture: Posture::Autopilot,
            thresholds: Thresholds {
                half_life_days: 30.0,
                min_days: 3,
                ..Thresholds::default()
            },
        },
        rules: vec!["Bash(npm test)".to_string()],
        provenance: serde_json::json!({"events": 12}),
    }
}

fn freeze(envelope: &Envelope) -> Vec<u8> {
    encode(
        &meta(),
        &[
            ProjectEnvelope {
                key: "/home/dev/other",
                root: "/home/dev/other",
                envelope: &Envelope::default(),
            },
            ProjectEnvelope {
                key: "/home/dev/proj",
                root: "/home/dev/proj",
                envelope,
            },
        ],
    )
}

proptest! {
    #[test]
    fn frozen_answers_what_the_live_envelope_answers(
        events in prop::collection::vec((0usize..5, 0u8..4, 0usize..4, 0i64..2400, 0usize..40), 0..80),
        now_day in 0i64..2800,
    ) {
        let envelope = envelope_from(&events);
        let bytes = freeze(&envelope);
        let frozen = Frozen::parse(&bytes).unwrap();
        prop_assert!(frozen.verify().is_ok());
        let project = frozen.project_for("/home/dev/proj/src").unwrap();
        prop_assert_eq!(project.key(), "/home/dev/proj");
        let thresholds = frozen.settings().thresholds;
        let table = DecayTable::new(thresholds.half_life_days);
        for signature in SIGNATURES.iter().chain(&["never seen"]) {
            for tier in 0..4 {
                let now = T0 + now_day * DAY_US;
                let live = envelope.familiarity(signature, tier, now, &thresholds);
                prop_assert_eq!(project.familiarity(signature, tier, now, &thresholds), live);
                prop_assert_eq!(envelope.familiarity_weighted(signature, tier, now, &thresholds, &table), live);
            }
        }
        // An envelope that keeps its sums current answers bit for bit the same, whether its
        // evidence arrived in time order or not.
        for in_time_order in [true, false] {
            let mut ordered = events.clone();
            if in_time_order {
                ordered.sort_by_key(|e| e.3);
            }
            let tracked = tracked_envelope(&ordered, thresholds.half_life_days);
            for signature in SIGNATURES {
                for tier in 0..4 {
                    let now = T0 + now_day * DAY_US;
                    prop_assert_eq!(
                        tracked.familiarity(signature, tier, now, &thresholds),
                        envelope.familiarity(signature, tier, now, &thresholds),
                        "{} at tier {}", signature, tier
                    );
                }
            }
        }
        prop_assert_eq!(project.events(), envelope.events);
        prop_assert!(project.transition_seen(Capability::FsReadWorkspace, Capability::ExecTest));
        prop_assert!(!project.transition_seen(Capability::ExecTest, Capability::FsReadWorkspace));
        let inspected: Vec<_> = project.signatures().map(Option::unwrap).collect();
        prop_assert_eq!(inspected.len(), envelope.signatures.len());
        for (frozen_sig, (signature, stats)) in inspected.iter().zip(&envelope.signatures) {
            prop_assert_eq!(&frozen_sig.signature, signature);
            prop_assert_eq!(&frozen_sig.buckets, &stats.by_day_tier);
            prop_assert_eq!(frozen_sig.facts.denied, stats.denied);
            prop_assert_eq!(frozen_sig.total_seen, stats.total_seen);
            prop_assert_eq!(frozen_sig.last_seen_us, stats.last_seen_us);
        }
    }

    #[test]
    fn damaged_bytes_are_an_error_or_an_answer_never_a_panic(
        events in prop::collection::vec((0usize..5, 0u8..4, 0usize..4, 0i64..40, 0usize..6), 1..20),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        bits in 1u8..=255,
    ) {
        let bytes = freeze(&envelope_from(&events));
        let truncated = &bytes[..cut.index(bytes.len())];
        prop_assert!(Frozen::parse(truncated).is_err() || Frozen::parse(truncated).unwrap().verify().is_err());
        let mut flipped = bytes.clone();
        let at = flip.index(flipped.len());
        flipped[at] ^= bits;
        if let Ok(frozen) = Frozen::parse(&flipped) {
            prop_assert!(frozen.verify().is_err(), "a changed byte at {} went unnoticed", at);
            for project in frozen.projects() {
                for signature in SIGNATURES {
                    let _ = project.familiarity(signature, 1, T0, &Thresholds::default());
                }
                let _ = project.signatures().count();
            }
        }
    }
}

#[test]
fn the_header_carries_the_setting_rules_and_provenance() {
    let bytes = freeze(&Envelope::default());
    let frozen = Frozen::parse(&bytes).unwrap();
    assert_eq!(frozen.settings(), &meta().settings);
    assert_eq!(frozen.setting_id(), "assist-test");
    assert_eq!(frozen.rules(), vec!["Bash(npm test)".to_string()]);
    assert_eq!(frozen.provenance()["events"], 12);
    assert_eq!(frozen.digest().len(), 64);
    assert!(frozen.project_for("/home/dev/elsewhere").is_none());
    assert_eq!(
        frozen.project_for("/home/dev/other").unwrap().key(),
        "/home/dev/other"
    );
    let other = frozen.project("/home/dev/other").unwrap();
    assert_eq!(other.signature_count(), 0);
    assert!(other.familiarity("ls", 0, T0, &Thresholds::default()).novel);
}

#[test]
fn another_format_is_refused_with_a_reason() {
    let mut bytes = freeze(&Envelope::default());
    bytes[8] = 9;
    let error = Frozen::parse(&bytes).unwrap_err().to_string();
    assert!(error.contains("format version 9"), "{error}");
    let error = Frozen::parse(b"{\"json\": true}").unwrap_err().to_string();
    assert!(error.contains("magic"), "{error}");
}

/// In an envelope of thousands of signatures every signature is found with its own
/// statistics, and near misses (a prefix, a longer text) are not found.
#[test]
fn every_signature_of_a_large_envelope_is_found() {
    let mut envelope = Envelope::default();
    let names: Vec<String> = (0..5000)
        .map(|i| format!("tool-{i} --flag <path> <n>"))
        .collect();
    for (i, name) in names.iter().enumerate() {
        for day in 0..(1 + i % 4) as i64 {
            envelope.learn_signature(
                name,
                (i % 3) as u8,
                Evidence::Confirmed,
                T0 + day * DAY_US,
                &format!("s{day}"),
            );
        }
        if i % 7 == 0 {
            envelope.learn_signature(name, 0, Evidence::Denied, T0, "s0");
        }
    }
    let bytes = freeze(&envelope);
    let frozen = Frozen::parse(&bytes).unwrap();
    let project = frozen.project("/home/dev/proj").unwrap();
    let thresholds = frozen.settings().thresholds;
    let now = T0 + 10 * DAY_US;
    for name in &names {
        for tier in [0, 2] {
            assert_eq!(
                project.familiarity(name, tier, now, &thresholds),
                envelope.familiarity(name, tier, now, &thresholds),
                "{name}"
            );
        }
    }
    for absent in [
        "tool-5000 --flag <path> <n>",
        "tool-1 --flag <path>",
        "",
        "tool-1 --flag <path> <n> ",
    ] {
        assert!(
            project.familiarity(absent, 0, now, &thresholds).novel,
            "{absent:?}"
        );
    }
}

/// A project on a file system that ignores case is found whatever case the working directory
/// is spelled in; elsewhere case matters.
#[test]
fn a_project_is_found_as_its_file_system_would_find_it() {
    let bytes = encode(
        &meta(),
        &[
            ProjectEnvelope {
                key: "/users/dev/app",
                root: "/Users/Dev/App",
                envelope: &Envelope::default(),
            },
            ProjectEnvelope {
                key: "/home/Dev/Site",
                root: "/home/Dev/Site",
                envelope: &Envelope::default(),
            },
        ],
    );
    let frozen = Frozen::parse(&bytes).unwrap();
    for cwd in ["/Users/Dev/App", "/users/dev/app/src", "/USERS/DEV/APP"] {
        assert_eq!(
            frozen.project_for(cwd).map(|p| p.key()),
            Some("/users/dev/app"),
            "{cwd}"
        );
    }
    assert!(frozen.project_for("/Users/Dev/Apple").is_none());
    assert_eq!(
        frozen.project_for("/home/Dev/Site/x").map(|p| p.key()),
        Some("/home/Dev/Site")
    );
    assert!(frozen.project_for("/home/dev/site").is_none());
}
