//! Standing approvals in the replay, from memory (`run_events`): a user-level rule is given to
//! every project of its agent — and only its agent's — and grants from its time; a rule dated
//! after the calls grants nothing before it; a too-broad rule grants nothing; a standing approval
//! of a credential read never passes the floor.

use std::collections::BTreeMap;

use leastgrant_engine::Decision;
use leastgrant_ingest::schema::Outcome;
use leastgrant_ingest::standing::{EVERY_PROJECT, RULE_KEY};
use leastgrant_replay::events::ReplayEvent;
use leastgrant_replay::replay::Options;
use leastgrant_replay::run_events;
use leastgrant_replay::settings::Setting;
use leastgrant_replay::shard::Shard;

use crate::support::{DAY_US, T0, event};

fn command(text: &str) -> serde_json::Value {
    serde_json::json!({ "command": text })
}

/// A standing approval row of `agent` for `project` at `ts_us`.
fn standing(agent: &str, project: &str, rule: &str, ts_us: i64) -> ReplayEvent {
    let mut row = event(
        project,
        0,
        ts_us,
        &format!("standing:{agent}"),
        rule.split('(').next().unwrap(),
        serde_json::json!({ RULE_KEY: rule }),
        Outcome::Granted,
        None,
    );
    row.event_id = format!("{agent}:{project}:{rule}");
    row.agent = agent.to_string();
    row.cwd = (project != EVERY_PROJECT).then(|| project.to_string());
    row
}

#[test]
fn standing_approvals_grant_from_their_time_for_their_agent_and_never_past_a_floor() {
    let (a, b) = ("/home/dev/a", "/home/dev/b");
    let mut events = Vec::new();
    for (project, agent) in [(a, "claude-code"), (b, "codex")] {
        for day in 0..3i64 {
            for (n, text) in ["cargo test", "cat .env", "git status"].iter().enumerate() {
                let at = T0 + day * DAY_US + n as i64 * 60_000_000;
                let mut call = event(
                    project,
                    (day * 3) as usize + n,
                    at,
                    &format!("{agent}-{day}"),
                    "Bash",
                    command(text),
                    Outcome::Ran,
                    Some(true),
                );
                call.agent = agent.to_string();
                events.push(call);
            }
        }
    }
    // The user's Claude Code settings, dated before the history; a project rule dated after it.
    for rule in ["Bash(cargo test:*)", "Bash(cat .env)", "Bash(*)"] {
        events.push(standing("claude-code", EVERY_PROJECT, rule, T0 - DAY_US));
    }
    events.push(standing(
        "claude-code",
        a,
        "Bash(git status:*)",
        T0 + 10 * DAY_US,
    ));

    let settings = [Setting::engine(leastgrant_engine::Settings::default())];
    let options = Options {
        keep_verdicts: true,
        home: Some("/home/dev".into()),
        ..Options::default()
    };
    let mut verdicts: BTreeMap<String, Vec<Decision>> = BTreeMap::new();
    let (summary, _) = run_events(
        events,
        None,
        &settings,
        &options,
        0.05,
        Shard::WHOLE,
        &mut |runs| {
            for run in runs {
                verdicts.insert(run.project_key.clone(), run.settings[0].verdicts.clone());
            }
            Ok(())
        },
        &|_| {},
    )
    .unwrap();
    use Decision::{Allow, Ask};
    // Claude Code's project: `cargo test` granted from the first call; `cat .env` granted and
    // still asked (the credential floor); `git status` asks (its rule came after).
    assert_eq!(
        verdicts[a],
        [Allow, Ask, Ask, Allow, Ask, Ask, Allow, Ask, Ask]
    );
    // Codex's project: Claude Code's user settings are not Codex's.
    assert!(verdicts[b].iter().all(|d| *d == Ask), "{:?}", verdicts[b]);
    // The user-level rows are not a project of their own.
    assert_eq!(verdicts.len(), 2);
    let claude = &summary.labels["claude-code"];
    assert_eq!(
        (claude.events, claude.standing, claude.standing_too_broad),
        (9, 4, 1)
    );
    // `cargo test`, `cat .env` and (at its time) `git status`.
    assert_eq!(claude.standing_signatures, 3);
    assert_eq!(summary.labels["codex"].standing, 0);
}
