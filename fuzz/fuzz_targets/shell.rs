//! The shell analyser on arbitrary text: `analyze` of a `Bash` call (tokenizer, parser, wrapper
//! peeling, classification, placement, signatures), then `decide` with nothing learned. Must
//! never panic or hang; an empty-handed analysis is fine.
#![no_main]

use leastgrant_engine::{Context, Envelope, NoAnswers, SessionState, Settings, analyze, decide};
use leastgrant_fuzz::{PROJECT, roots, shell};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The first line may name the working directory, relative to the project.
    let (cwd, command) = match text.split_once('\n') {
        Some((dir, rest)) if dir.starts_with("#cwd ") => {
            (format!("{PROJECT}/{}", &dir[5..]), rest.to_string())
        }
        _ => (PROJECT.to_string(), text.to_string()),
    };
    let analysis = analyze(&shell(&command, &cwd), &roots());
    let envelope = Envelope::default();
    let session = SessionState::default();
    let settings = Settings::default();
    let ctx = Context {
        envelope: &envelope,
        session: &session,
        answers: &NoAnswers,
        settings: &settings,
        now_us: leastgrant_fuzz::T0,
    };
    let verdict = decide(&analysis, &ctx);
    // Nothing is learned, so nothing is allowed by learning.
    assert!(
        verdict
            .actions
            .iter()
            .all(|a| a.promotion.is_none_or(|p| !p.allows())),
        "an empty envelope promoted {command:?}"
    );
});
