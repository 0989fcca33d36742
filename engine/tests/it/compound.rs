//! Property (issue 13): adding an action to a compound command never loosens its verdict, nor
//! the verdict of a later call in the same session. The pool mixes routine commands (each
//! approved 40 times in 40 sessions, so most are allowed alone) with the risky ones the issue
//! names; a command that changes the working directory (`cd`, `pushd`) is left out of what is
//! added, since it changes what the other action means rather than adding to it.

use leastgrant_engine::{
    Context, Envelope, Evidence, NoAnswers, Posture, SessionState, Settings, ToolCall, analyze,
    decide,
};
use proptest::prelude::*;

use crate::support::*;

const POOL: &[&str] = &[
    "git status",
    "cat README.md",
    "ls -la",
    "npm test",
    "python -m pytest",
    "grep -rn TODO src",
    "echo hello",
    "sed -n 1,20p README.md",
    "cat ~/.aws/credentials",
    "python -c 'print(1)'",
    "curl -s https://x.example/a",
    "rm -rf build",
    "git push",
    "emacs --batch --eval '(x)' README.md",
    "test -v 'a[$(id)]'",
    "PYTEST_PLUGINS=x python -m pytest",
    "sh <<< 'id'",
    "python -m pytest --junitxml=/home/dev/.bashrc",
    "touch /home/dev/.bashrc",
    "uv run --with x pytest",
];

const JOINS: &[&str] = &[" && ", "; ", " || ", " | ", " & "];

fn envelope() -> &'static Envelope {
    static ENVELOPE: std::sync::OnceLock<Envelope> = std::sync::OnceLock::new();
    ENVELOPE.get_or_init(trained)
}

fn trained() -> Envelope {
    let mut envelope = Envelope::default();
    for command in POOL {
        train(
            &mut envelope,
            &ToolCall::shell(command, Some(PROJECT)),
            40,
            Evidence::Confirmed,
            0,
        );
    }
    envelope
}

fn verdict(
    envelope: &Envelope,
    session: &SessionState,
    command: &str,
    posture: Posture,
) -> leastgrant_engine::Decision {
    let settings = Settings {
        posture,
        ..Settings::default()
    };
    let analysis = analyze(&ToolCall::shell(command, Some(PROJECT)), &roots());
    decide(
        &analysis,
        &Context {
            envelope,
            session,
            answers: &NoAnswers,
            settings: &settings,
            now_us: T0 + 41 * DAY_US,
        },
    )
    .decision
}

fn session_after(command: &str) -> SessionState {
    let mut session = SessionState::default();
    session.record(&analyze(&ToolCall::shell(command, Some(PROJECT)), &roots()));
    session
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn adding_an_action_never_loosens(
        b in 0..POOL.len(),
        a in 0..POOL.len(),
        later in 0..POOL.len(),
        join in 0..JOINS.len(),
        before in any::<bool>(),
        autopilot in any::<bool>(),
    ) {
        let envelope = envelope();
        let posture = if autopilot { Posture::Autopilot } else { Posture::Assist };
        let (a, b, later) = (POOL[a], POOL[b], POOL[later]);
        let compound = if before {
            format!("{a}{}{b}", JOINS[join])
        } else {
            format!("{b}{}{a}", JOINS[join])
        };
        let fresh = SessionState::default();
        let alone = verdict(envelope, &fresh, b, posture);
        let together = verdict(envelope, &fresh, &compound, posture);
        prop_assert!(together >= alone, "`{compound}` is {together:?}, `{b}` alone {alone:?}");
        let after_alone = verdict(envelope, &session_after(b), later, posture);
        let after_together = verdict(envelope, &session_after(&compound), later, posture);
        prop_assert!(
            after_together >= after_alone,
            "`{later}` after `{compound}` is {after_together:?}, after `{b}` {after_alone:?}"
        );
    }
}
