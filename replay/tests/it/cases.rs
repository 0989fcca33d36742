//! The hand-computed histories of `tests/data/cases.toml` and `tests/data/native.toml`: every
//! verdict and every outcome class pinned — of the hook's setting and, where a case has
//! `[case.native]`, of its "native rules only" twin replayed beside it — all failing cases
//! reported together.

use leastgrant_ingest::schema::Outcome;
use leastgrant_replay::events::Decider;
use leastgrant_replay::replay::SettingRun;
use leastgrant_replay::replay::{Counts, Options, Unattended, replay_project};
use leastgrant_replay::settings::{Grid, Method, Setting, baselines};
use serde::Deserialize;

use crate::support::{DAY_US, T0, event};

#[derive(Deserialize)]
struct File {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    setting: SettingSpec,
    #[serde(default)]
    unattended: Option<String>,
    events: Vec<EventSpec>,
    verdicts: Vec<String>,
    counts: CountSpec,
    /// The native-rules twin's verdicts and counts, replayed beside the setting.
    native: Option<NativeSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NativeSpec {
    verdicts: Vec<String>,
    counts: CountSpec,
    /// Reason codes of the twin's friction, each count pinned.
    #[serde(default)]
    friction: std::collections::BTreeMap<String, u64>,
}

#[derive(Deserialize)]
struct SettingSpec {
    baseline: Option<String>,
    #[serde(flatten)]
    grid: toml::Table,
}

#[derive(Deserialize)]
struct EventSpec {
    day: f64,
    session: String,
    command: Option<String>,
    tool: Option<String>,
    input: Option<String>,
    outcome: String,
    attended: Option<bool>,
    /// The recorded decider (`decided_by`'s stored value), when the history has one.
    decided_by: Option<String>,
    /// The permission mode `auto` (Claude Code's classifier decides).
    #[serde(default)]
    auto: bool,
    /// The agent (`claude-code` unless named).
    agent: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CountSpec {
    #[serde(default)]
    miss: u64,
    #[serde(default)]
    catch: u64,
    #[serde(default)]
    saved: u64,
    #[serde(default)]
    friction: u64,
    #[serde(default)]
    false_block: u64,
    #[serde(default)]
    unlabeled: u64,
    #[serde(default)]
    refused: u64,
    // Compared only where a case names them.
    miss_risky: Option<u64>,
    refused_risky: Option<u64>,
    classifier_denied: Option<u64>,
    ask_observed: Option<u64>,
    ask_inferred: Option<u64>,
}

fn setting(spec: &SettingSpec) -> Setting {
    if let Some(name) = &spec.baseline {
        let id = format!("baseline.{name}");
        return baselines()
            .into_iter()
            .find(|b| b.id == id)
            .unwrap_or_else(|| panic!("no baseline {id}"));
    }
    // Single values are written bare; the grid takes lists.
    let mut table = toml::Table::new();
    for (key, value) in &spec.grid {
        let list = match value {
            toml::Value::Array(_) => value.clone(),
            other => toml::Value::Array(vec![other.clone()]),
        };
        table.insert(key.clone(), list);
    }
    let grid: Grid = table.try_into().unwrap();
    let mut settings = grid.expand().unwrap();
    assert_eq!(settings.len(), 1, "a case names one setting");
    settings.remove(0)
}

/// Compares one setting's run with a case's verdicts and counts.
fn compare(
    name: &str,
    result: &SettingRun,
    verdicts: &[String],
    counts: &CountSpec,
    failures: &mut Vec<String>,
) {
    let actual: Vec<&str> = result.verdicts.iter().map(|d| d.as_str()).collect();
    if actual != verdicts {
        failures.push(format!(
            "{name}:\n  verdicts {actual:?}\n  expected {verdicts:?}"
        ));
    }
    let total = result.total();
    let given = |value: Option<u64>, actual: u64| value.unwrap_or(actual);
    let expected = Counts {
        events: verdicts.len() as u64,
        allow: verdicts.iter().filter(|v| *v == "allow").count() as u64,
        ask: verdicts.iter().filter(|v| *v == "ask").count() as u64,
        deny: verdicts.iter().filter(|v| *v == "deny").count() as u64,
        miss: counts.miss,
        catch: counts.catch,
        saved: counts.saved,
        friction: counts.friction,
        false_block: counts.false_block,
        unlabeled: counts.unlabeled,
        refused: counts.refused,
        miss_risky: given(counts.miss_risky, total.miss_risky),
        refused_risky: given(counts.refused_risky, total.refused_risky),
        classifier_denied: given(counts.classifier_denied, total.classifier_denied),
        ask_observed: given(counts.ask_observed, total.ask_observed),
        ask_inferred: given(counts.ask_inferred, total.ask_inferred),
    };
    if total != expected {
        failures.push(format!(
            "{name}:\n  counts   {total:?}\n  expected {expected:?}"
        ));
    }
}

#[test]
fn hand_computed_histories() {
    let mut cases = Vec::new();
    for name in ["cases.toml", "native.toml"] {
        let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
        let file: File = toml::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        cases.extend(file.case);
    }
    assert!(cases.iter().any(|c| c.native.is_some()));
    let mut failures = Vec::new();
    for case in &cases {
        let events = case
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let (tool, input) = match (&e.command, &e.tool) {
                    (Some(c), None) => ("Bash", serde_json::json!({ "command": c })),
                    (None, Some(t)) => (
                        t.as_str(),
                        serde_json::from_str(e.input.as_deref().unwrap_or("{}")).unwrap(),
                    ),
                    _ => panic!("{}: an event needs a command or a tool", case.name),
                };
                let mut event = event(
                    "/home/dev/p",
                    i,
                    T0 + (e.day * DAY_US as f64) as i64,
                    &e.session,
                    tool,
                    input,
                    Outcome::parse(&e.outcome).unwrap(),
                    Some(e.attended.unwrap_or(true)),
                );
                event.decided_by = e
                    .decided_by
                    .as_deref()
                    .map(|d| Decider::parse(d).unwrap_or_else(|| panic!("no decider {d}")));
                event.auto_mode = e.auto;
                if let Some(agent) = &e.agent {
                    event.agent = agent.clone();
                }
                event
            })
            .collect();
        let options = Options {
            keep_verdicts: true,
            unattended: case
                .unattended
                .as_deref()
                .map_or(Unattended::Approve, |u| Unattended::parse(u).unwrap()),
            home: Some("/home/dev".to_string()),
            ..Options::default()
        };
        let setting = setting(&case.setting);
        let mut settings = vec![setting.clone()];
        if case.native.is_some() {
            let Method::Engine(engine) = setting.method else {
                panic!("{}: a native twin needs an engine setting", case.name)
            };
            settings.push(Setting::native(engine));
        }
        let run = replay_project(events, &settings, &options);
        compare(
            &case.name,
            &run.settings[0],
            &case.verdicts,
            &case.counts,
            &mut failures,
        );
        if let Some(native) = &case.native {
            let name = format!("{} [{}]", case.name, settings[1].id);
            compare(
                &name,
                &run.settings[1],
                &native.verdicts,
                &native.counts,
                &mut failures,
            );
            let friction: std::collections::BTreeMap<String, u64> = run.settings[1]
                .friction_reasons
                .iter()
                .map(|(code, n)| (code.to_string(), *n))
                .collect();
            if friction != native.friction {
                failures.push(format!(
                    "{name}:\n  friction {friction:?}\n  expected {:?}",
                    native.friction
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
