//! Differential: the replay's decision against the hook's. A random history is learned as the
//! replay learns it (`Envelope::learn_event`, with the replay's tracked decay table or without),
//! frozen as `leastgrant export` freezes it, and read back as the hook reads it
//! (`Frozen::parse`, `project_for`). Then random calls, in one session, are decided both ways:
//! the replay's path (`prepare` then `judge` against the live envelope, as
//! `replay/src/replay.rs` does) and the hook's (`decide` against the frozen project, under the
//! setting read back from the file). The enforced and advisory decisions, and each action's
//! decision and deciding reason, must be identical.
#![no_main]

use std::sync::Arc;

use leastgrant_engine::{
    Context, DecayTable, Envelope, Frozen, Judgement, NoAnswers, SessionState, Situation, analyze,
    decide, judge, prepare,
};
use leastgrant_fuzz::{History, PROJECT, call, freeze, roots, settings};
use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let setting = settings(&mut u);
    let history = History::draw(&mut u, 40);
    let mut live = if u.ratio(1, 2).unwrap_or(false) {
        Envelope::tracking(Arc::new(DecayTable::new(setting.thresholds.half_life_days)))
    } else {
        Envelope::default()
    };
    history.learn_into(&mut live);
    let bytes = freeze(&live, setting);
    let frozen = Frozen::parse(&bytes).expect("a fresh export parses");
    let project = frozen
        .project_for(PROJECT)
        .expect("the index reads")
        .expect("the project is found");
    let hook_settings = frozen.settings();
    let roots = roots();
    let mut session = SessionState::default();
    let mut now = history.last();
    let queries = u.int_in_range(1..=8usize).unwrap_or(1);
    let mut judgements: Vec<Judgement> = Vec::new();
    let mut frozen_judgements: Vec<Judgement> = Vec::new();
    for _ in 0..queries {
        now += i64::from(u.int_in_range(0..=200u8).unwrap_or(0)) * 3_600_000_000;
        let analysis = analyze(&call(&mut u), &roots);
        // The replay: prepared once, judged against the live envelope.
        let prepared = prepare(&analysis, &NoAnswers);
        let situation = Situation {
            learned: &live,
            session: &session,
            settings: &setting,
            now_us: now,
        };
        let replay = judge(&analysis, &prepared, &situation, &mut judgements);
        // The hook: decided against the frozen project.
        let ctx = Context {
            envelope: &project,
            session: &session,
            answers: &NoAnswers,
            settings: hook_settings,
            now_us: now,
        };
        let hook = decide(&analysis, &ctx);
        let frozen_situation = Situation {
            learned: &project,
            session: &session,
            settings: hook_settings,
            now_us: now,
        };
        judge(
            &analysis,
            &prepared,
            &frozen_situation,
            &mut frozen_judgements,
        );
        let signatures: Vec<&str> = analysis
            .actions
            .iter()
            .map(|a| a.signature.as_str())
            .collect();
        assert_eq!(
            replay,
            (hook.decision, hook.advisory),
            "replay and hook disagree on {signatures:?} under {setting:?}"
        );
        for ((live_j, frozen_j), verdict) in
            judgements.iter().zip(&frozen_judgements).zip(&hook.actions)
        {
            assert_eq!(
                live_j.decision, verdict.decision,
                "an action's decision differs: {signatures:?}"
            );
            assert_eq!(
                live_j.code(),
                frozen_j.code(),
                "an action's deciding reason differs: {signatures:?} ({:?} vs {:?})",
                live_j.learned,
                frozen_j.learned
            );
        }
        assert!(project.damage().is_none(), "a fresh export reports damage");
        if u.ratio(1, 2).unwrap_or(false) {
            session.record(&analysis);
        }
    }
});
