//! Properties: `decide` never panics on arbitrary text or JSON, folding is order-independent,
//! and shared sightings with approvals of a setting's own are that setting's statistics.

use leastgrant_engine::{
    Approvals, DecayTable, Envelope, Evidence, SignatureStats, Thresholds, ToolCall, analyze,
    stable_hash,
};
use proptest::prelude::*;

use crate::support::*;

fn decide_any(call: &ToolCall) {
    let verdict = decide_fresh(&analyze(call, &roots()), T0);
    // Whatever the input, there is a verdict and a reason for anything but allow.
    assert!(verdict.decision.as_str() == "allow" || !verdict.reasons.is_empty());
}

fn shellish() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "git",
        "status",
        "rm",
        "-rf",
        "$(",
        ")",
        "`",
        "'",
        "\"",
        "$'\\x41'",
        "|",
        "&&",
        "||",
        ";",
        "&",
        "\n",
        "<<EOF\n",
        "EOF",
        ">",
        ">>",
        "2>&1",
        "(",
        "{",
        "}",
        "if",
        "then",
        "fi",
        "for",
        "do",
        "done",
        "case",
        "esac",
        "in",
        "sudo",
        "env",
        "sh",
        "-c",
        "bash",
        "xargs",
        "find",
        "-exec",
        "{}",
        "\\;",
        "~/.ssh",
        "..",
        "/etc/passwd",
        "$HOME",
        "${x:-$(id)}",
        "*",
        "eval",
        "curl",
        "x",
        " ",
        "\\",
        "#",
        "=",
        "PATH=",
    ]);
    prop::collection::vec(atoms, 0..24).prop_map(|parts| parts.join(" "))
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        ".{0,40}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "command",
                    "file_path",
                    "path",
                    "pattern",
                    "url",
                    "target_file",
                    "x",
                    "mode"
                ])
                .prop_map(str::to_string),
                inner,
                0..5
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn decide_never_panics_on_arbitrary_text(text in ".{0,200}") {
        decide_any(&ToolCall::shell(&text, Some(PROJECT)));
    }

    #[test]
    fn decide_never_panics_on_shell_shaped_text(text in shellish()) {
        decide_any(&ToolCall::shell(&text, Some(PROJECT)));
    }

    #[test]
    fn decide_never_panics_on_arbitrary_tool_calls(
        tool in prop::sample::select(vec!["Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch", "Task", "mcp__s__get_x", "run_terminal_cmd", "read_file", "delete_file", "Unknown"]),
        input in json_value(),
    ) {
        decide_any(&ToolCall { tool: tool.to_string(), input, cwd: Some(PROJECT.to_string()), descriptor: None });
    }

    #[test]
    fn folding_is_order_independent(
        events in prop::collection::vec((0usize..4, 0u8..3, 0usize..4, 0i64..2000, 0usize..5), 0..60),
        seed in any::<u64>(),
    ) {
        let signatures = ["npm test", "git status", "cat <path>", "ls"];
        let kinds = [Evidence::Confirmed, Evidence::Observed, Evidence::Denied, Evidence::Granted];
        let fold = |order: &[usize]| {
            let mut envelope = Envelope::default();
            for &i in order {
                let (s, tier, k, day, session) = events[i];
                envelope.learn_signature(signatures[s], tier, kinds[k], T0 + day * DAY_US, &format!("s{session}"));
            }
            envelope
        };
        let forward: Vec<usize> = (0..events.len()).collect();
        let mut shuffled = forward.clone();
        // A deterministic shuffle from the seed.
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
        }
        prop_assert_eq!(fold(&forward), fold(&shuffled));
    }
}

/// One step of [`approvals_with_shared_sightings_are_a_settings_own_statistics`]: a day
/// (an offset from the previous one: a jump past the horizon, an earlier day, the same day or
/// a later one), a tier, the shared evidence, whether the setting's differs (by approvals
/// only), a session and the tier asked about afterwards.
type Step = (i64, u8, usize, bool, usize, u8);

/// The shared evidence, and the setting's: `confirmed` and `observed` may trade places (an
/// allow where the shared asks, an ask where it allows), anything else is the same.
fn evidences((_, _, kind, differs, _, _): &Step) -> (Evidence, Evidence) {
    let shared = [
        Evidence::Confirmed,
        Evidence::Observed,
        Evidence::Observed,
        Evidence::Confirmed,
        Evidence::Denied,
        Evidence::Granted,
    ][*kind % 6];
    let own = match shared {
        Evidence::Confirmed if *differs => Evidence::Observed,
        Evidence::Observed if *differs => Evidence::Confirmed,
        other => other,
    };
    (shared, own)
}

fn day_step() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => 0i64..3,
        2 => 3i64..40,
        1 => -30i64..0,
        1 => 1400i64..1700,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The replay's settings share the sightings and keep their approvals once those differ
    /// (`Approvals`): with the shared sightings they must give the very numbers, to the bit,
    /// of statistics the setting folded on its own, and turn back into those statistics.
    #[test]
    fn approvals_with_shared_sightings_are_a_settings_own_statistics(
        steps in prop::collection::vec((day_step(), 0u8..5, 0usize..6, any::<bool>(), 0usize..4, 0u8..5), 1..80),
        split in 0usize..80,
        half_life in prop_oneof![Just(2.0f64), Just(90.0f64)],
    ) {
        let table = DecayTable::new(half_life);
        let thresholds = Thresholds { half_life_days: half_life, ..Thresholds::default() };
        let mut shared = SignatureStats::default();
        let mut own = SignatureStats::default();
        let mut approvals: Option<Approvals> = None;
        let mut day = 20_000i64;
        for (i, step) in steps.iter().enumerate() {
            day += step.0;
            let at = day * DAY_US + 3_600_000_000;
            let (tier, asked) = (step.1, step.5);
            let session = stable_hash(&format!("s{}", step.4));
            if i == split {
                approvals = Some(shared.approvals());
            }
            let (shared_evidence, own_evidence) = evidences(step);
            let own_evidence = if approvals.is_some() { own_evidence } else { shared_evidence };
            own.learn(tier, own_evidence, at, session, Some(half_life));
            shared.learn(tier, shared_evidence, at, session, Some(half_life));
            if let Some(approvals) = &mut approvals && own_evidence == Evidence::Confirmed {
                approvals.learn(&shared, tier, at, session, Some(half_life));
            }
            let now = at + DAY_US * (i64::from(asked) * 3);
            let expected = format!("{:?}", own.familiarity(asked, now, &thresholds, &table));
            let got = match &approvals {
                Some(approvals) => shared.familiarity_with(approvals, asked, now, &thresholds, &table),
                None => shared.familiarity(asked, now, &thresholds, &table),
            };
            prop_assert_eq!(&format!("{got:?}"), &expected, "step {}", i);
            if let Some(approvals) = &approvals {
                let whole = shared.with_approvals(approvals);
                prop_assert_eq!(&whole, &own, "step {}", i);
                let got = whole.familiarity(asked, now, &thresholds, &table);
                prop_assert_eq!(&format!("{got:?}"), &expected, "step {}", i);
            }
        }
    }
}

/// Deep nesting of every shape gets a verdict: no stack overflow, no unbounded recursion.
#[test]
fn deep_nesting_still_gets_a_verdict() {
    let depth = 10_000;
    let shapes = [
        format!("{}true{}", "{ ".repeat(depth), "; }".repeat(depth)),
        format!("{}id{}", "$(".repeat(depth), ")".repeat(depth)),
        format!("{}id{}", "( ".repeat(depth), " )".repeat(depth)),
        format!(
            "{}id{}",
            "if true; then ".repeat(depth),
            "; fi".repeat(depth)
        ),
        format!(
            "{}id{}",
            "`echo ".repeat(depth.min(64)),
            "`".repeat(depth.min(64))
        ),
        format!("echo {}", "{".repeat(40_000)),
        format!("echo {}x{}", "${a:-".repeat(depth), "}".repeat(depth)),
        "sh -c '".repeat(100),
    ];
    for shape in &shapes {
        let verdict = decide_fresh(
            &analyze(&ToolCall::shell(shape, Some(PROJECT)), &roots()),
            T0,
        );
        assert_ne!(
            verdict.decision.as_str(),
            "allow",
            "deep shape allowed: {}…",
            &shape[..40.min(shape.len())]
        );
    }
}
