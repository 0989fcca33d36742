//! The frozen envelope: it answers exactly what the envelope it froze answers, names its
//! digest, notices tampering — every changed byte a call reads is an error, appended or cut
//! bytes are an error before anything is read — finds the project a fleet's index holds for a
//! directory as a scan of every project would, and never panics on damaged bytes.

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
        let project = frozen.project_for("/home/dev/proj/src").unwrap().unwrap();
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
    fn a_changed_byte_a_call_reads_is_an_error_never_another_answer(
        events in prop::collection::vec((0usize..5, 0u8..4, 0usize..4, 0i64..40, 0usize..6), 1..20),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        bits in 1u8..=255,
        appended in prop::collection::vec(any::<u8>(), 1..40),
    ) {
        let bytes = freeze(&envelope_from(&events));
        let truth = answers(&bytes, "/home/dev/proj/src").unwrap();
        // Cut or extended: refused before anything is read.
        let truncated = &bytes[..cut.index(bytes.len())];
        prop_assert!(Frozen::parse(truncated).is_err());
        let mut longer = bytes.clone();
        longer.extend_from_slice(&appended);
        prop_assert!(Frozen::parse(&longer).is_err());
        // One byte changed: the whole-file digest notices, and a call either sees an error or
        // reads only bytes that did not change (the same answers), for the project it is in
        // and for a directory no project holds.
        let mut flipped = bytes.clone();
        let at = flip.index(flipped.len());
        flipped[at] ^= bits;
        if let Ok(frozen) = Frozen::parse(&flipped) {
            prop_assert!(frozen.verify().is_err(), "a changed byte at {} went unnoticed", at);
            for project in frozen.projects().flatten() {
                let _ = project.signatures().count();
            }
        }
        for cwd in ["/home/dev/proj/src", "/home/dev/other", "/elsewhere"] {
            if let Ok(seen) = answers(&flipped, cwd) {
                prop_assert_eq!(&seen, &answers(&bytes, cwd).unwrap(), "byte {} changed the answer in {}", at, cwd);
            }
        }
        prop_assert!(truth.is_some());
    }

    /// A fleet's index finds, for any directory, the project a scan of every root would: the
    /// deepest root holding it, without case where the root's file system ignores case, the
    /// last exported among equal roots.
    #[test]
    fn the_index_finds_what_a_scan_of_every_root_finds(
        roots in prop::collection::vec(root_strategy(), 1..24),
        cwds in prop::collection::vec(root_strategy(), 1..24),
    ) {
        let envelope = Envelope::default();
        let keys: Vec<String> = (0..roots.len()).map(|i| format!("p{i}")).collect();
        let projects: Vec<ProjectEnvelope<'_>> = roots
            .iter()
            .zip(&keys)
            .map(|(root, key)| ProjectEnvelope { key, root, envelope: &envelope })
            .collect();
        let bytes = encode(&meta(), &projects);
        let frozen = Frozen::parse(&bytes).unwrap();
        prop_assert_eq!(frozen.project_count(), roots.len());
        for cwd in cwds.iter().chain(&roots) {
            let found = frozen.project_for(cwd).unwrap().map(|p| p.key().to_string());
            prop_assert_eq!(found, scan(&roots, cwd), "{} in {:?}", cwd, roots);
        }
    }
}

/// Roots and directories from a small alphabet, so they nest, collide, differ in case, and
/// have siblings that sort between a directory and its children (`/a-b` between `/a` and
/// `/a/b`).
fn root_strategy() -> impl Strategy<Value = String> {
    let segment = prop::sample::select(vec!["a", "A", "b", "a-b", "a.b", "Users", "users", "x"]);
    prop::collection::vec(segment, 0..4).prop_map(|parts| {
        let mut path = String::new();
        for part in parts {
            path.push('/');
            path.push_str(part);
        }
        if path.is_empty() {
            "/".to_string()
        } else {
            path
        }
    })
}

/// What the index must find: every root compared, the deepest holding `cwd` (the last of equal
/// depth), compared without case where the root ignores it.
fn scan(roots: &[String], cwd: &str) -> Option<String> {
    let holds = |root: &str| {
        let (path, dir) = if ignores_case(root) {
            (cwd.to_ascii_lowercase(), root.to_ascii_lowercase())
        } else {
            (cwd.to_string(), root.to_string())
        };
        dir == "/" || path == dir || path.strip_prefix(&dir).is_some_and(|r| r.starts_with('/'))
    };
    roots
        .iter()
        .enumerate()
        .filter(|(_, root)| holds(root))
        .max_by_key(|(_, root)| root.len())
        .map(|(i, _)| format!("p{i}"))
}

/// macOS `/Users/…` and `/Volumes/…`, and Windows drive paths, ignore case (as `paths.rs`).
fn ignores_case(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let bytes = path.as_bytes();
    (bytes.get(1) == Some(&b':') && bytes[0].is_ascii_alphabetic())
        || lower.starts_with("/users/")
        || lower.starts_with("/volumes/")
}

/// Everything a call in `cwd` reads from the envelope: the setting, the project, each
/// signature's familiarity at each tier, transitions and events; an error when anything it
/// read was damaged.
#[derive(Debug, PartialEq)]
struct Answers {
    setting: String,
    project: Option<(String, u64, bool, Vec<leastgrant_engine::Familiarity>)>,
}

fn answers(bytes: &[u8], cwd: &str) -> Result<Option<Answers>, leastgrant_engine::FrozenError> {
    let frozen = Frozen::parse(bytes)?;
    let thresholds = frozen.settings().thresholds;
    let project = match frozen.project_for(cwd)? {
        None => None,
        Some(project) => {
            let mut seen = Vec::new();
            for signature in SIGNATURES.iter().chain(&["never seen", ""]) {
                for tier in 0..4 {
                    seen.push(project.familiarity(signature, tier, T0 + 30 * DAY_US, &thresholds));
                }
            }
            if let Some(error) = project.damage() {
                return Err(error);
            }
            Some((
                project.key().to_string(),
                project.events(),
                project.transition_seen(Capability::FsReadWorkspace, Capability::ExecTest),
                seen,
            ))
        }
    };
    Ok(Some(Answers {
        setting: format!("{} {:?}", frozen.setting_id(), frozen.settings()),
        project,
    }))
}

/// Every byte of the parts every call reads — the preamble, the header, the shared section —
/// and of the index items and the project section a call in the project reads is checked:
/// changing any of them, one at a time, is an error for that call.
#[test]
fn every_byte_a_call_reads_is_checked() {
    let mut envelope = Envelope::default();
    for (i, signature) in SIGNATURES.iter().enumerate() {
        envelope.learn_signature(
            signature,
            1,
            Evidence::Confirmed,
            T0 + i as i64 * DAY_US,
            "s1",
        );
    }
    envelope
        .transitions
        .insert((Capability::FsReadWorkspace, Capability::ExecTest), 3);
    // One project only, with every signature looked up: the call reads all of its section.
    let bytes = encode(
        &meta(),
        &[ProjectEnvelope {
            key: "/home/dev/proj",
            root: "/home/dev/proj",
            envelope: &envelope,
        }],
    );
    let truth = answers(&bytes, "/home/dev/proj").unwrap();
    let meta_len = {
        let m = serde_json::json!({"rules": meta().rules, "provenance": meta().provenance});
        m.to_string().len()
    };
    let mut unnoticed = Vec::new();
    for at in 0..bytes.len() {
        for bits in [0x01u8, 0x80] {
            let mut flipped = bytes.clone();
            flipped[at] ^= bits;
            if let Ok(seen) = answers(&flipped, "/home/dev/proj")
                && seen == truth
            {
                unnoticed.push(at);
            }
        }
    }
    // The meta section (rules and provenance) is read by inspection only, which checks it:
    // the only bytes a call may not notice.
    let frozen = Frozen::parse(&bytes).unwrap();
    assert!(frozen.meta().is_ok());
    unnoticed.dedup();
    assert!(
        unnoticed.len() <= meta_len + 32,
        "{} bytes changed without the call noticing: {unnoticed:?}",
        unnoticed.len()
    );
    for at in &unnoticed {
        let mut flipped = bytes.clone();
        flipped[*at] ^= 1;
        let frozen = Frozen::parse(&flipped).unwrap();
        assert!(frozen.verify().is_err());
        // Either the meta section (its digest is in the shared section) or the file digest.
        assert!(
            frozen.meta().is_err() || *at >= bytes.len() - 32,
            "byte {at} is neither meta nor the digest"
        );
    }
}

#[test]
fn the_header_carries_the_setting_rules_and_provenance() {
    let bytes = freeze(&Envelope::default());
    let frozen = Frozen::parse(&bytes).unwrap();
    assert_eq!(frozen.settings(), &meta().settings);
    assert_eq!(frozen.setting_id(), "assist-test");
    let stored = frozen.meta().unwrap();
    assert_eq!(stored, meta());
    assert_eq!(stored.provenance["events"], 12);
    assert_eq!(frozen.digest().len(), 64);
    assert!(frozen.project_for("/home/dev/elsewhere").unwrap().is_none());
    let other = frozen.project_for("/home/dev/other").unwrap().unwrap();
    assert_eq!(other.key(), "/home/dev/other");
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

/// A file of the first format (a JSON header after the version) is refused by its version.
#[test]
fn a_first_format_file_is_refused_by_its_version() {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/frozen/v1.lgenv"),
    )
    .unwrap();
    let error = Frozen::parse(&bytes).unwrap_err().to_string();
    assert_eq!(
        error,
        "frozen envelope: format version 1, this build reads version 2: export it again"
    );
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
    let project = frozen.project_for("/home/dev/proj").unwrap().unwrap();
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
            frozen
                .project_for(cwd)
                .unwrap()
                .map(|p| p.key().to_string()),
            Some("/users/dev/app".to_string()),
            "{cwd}"
        );
    }
    assert!(frozen.project_for("/Users/Dev/Apple").unwrap().is_none());
    assert_eq!(
        frozen
            .project_for("/home/Dev/Site/x")
            .unwrap()
            .map(|p| p.key().to_string()),
        Some("/home/Dev/Site".to_string())
    );
    assert!(frozen.project_for("/home/dev/site").unwrap().is_none());
}
