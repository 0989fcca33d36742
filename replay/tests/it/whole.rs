//! Whole-history properties: any thread count gives byte-identical outputs; a grid's column for
//! a setting equals a run of that setting alone; the export of a history without its last event
//! decides that event exactly as the replay did; the real samples replay completely.

use std::path::{Path, PathBuf};

use leastgrant_engine::{
    Context, Frozen, NoAnswers, ProjectEnvelope, Roots, SessionState, ToolCall, analyze, decide,
};
use leastgrant_ingest::schema::Outcome;
use leastgrant_replay::export::freeze;
use leastgrant_replay::output::Outputs;
use leastgrant_replay::replay::{Options, Unattended, home_of, replay_project};
use leastgrant_replay::settings::{Grid, Method, Setting, baselines};

use crate::support::{DAY_US, as_replay, event, synthetic, write_table};

/// A fresh directory under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let path =
            std::env::temp_dir().join(format!("leastgrant-replay-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn all_settings() -> Vec<Setting> {
    let mut settings = Grid::standard();
    settings.extend(baselines());
    settings
}

fn replay_into(table: &Path, out: &Path, threads: usize) {
    let settings = all_settings();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut outputs = Outputs::create(out).unwrap();
        let summary = leastgrant_replay::run(
            table,
            &settings,
            &Options::default(),
            0.02,
            &mut |runs| outputs.add(&settings, runs),
            &|_| {},
        )
        .unwrap();
        outputs.finish(&summary).unwrap();
    });
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn one_thread_and_two_give_byte_identical_outputs() {
    let scratch = Scratch::new("determinism");
    let table = scratch.0.join("table");
    write_table(&table, synthetic(24, 400, 7));
    replay_into(&table, &scratch.0.join("one"), 1);
    replay_into(&table, &scratch.0.join("two"), 2);
    let (one, two) = (files(&scratch.0.join("one")), files(&scratch.0.join("two")));
    let names: Vec<&str> = one.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "bands.parquet",
            "capabilities.parquet",
            "curves.parquet",
            "friction.parquet",
            "misses.parquet",
            "projects.parquet",
            "promotions.parquet",
            "settings.parquet",
            "summary.json"
        ]
    );
    for ((name, a), (_, b)) in one.iter().zip(&two) {
        assert!(a == b, "{name} differs between one thread and two");
    }
    // The summary is not trivially empty: refusals were caught and missed.
    let summary: serde_json::Value = serde_json::from_slice(&one.last().unwrap().1).unwrap();
    let settings = summary["settings"].as_array().unwrap();
    assert!(settings.iter().any(|s| s["misses"].as_u64().unwrap() > 0));
    assert!(settings.iter().all(|s| s["refused"].as_u64().unwrap() > 0));
    assert_eq!(summary["projects"], 24);
}

#[test]
fn a_grid_column_equals_a_run_of_that_setting_alone() {
    let settings = all_settings();
    let options = Options {
        keep_verdicts: true,
        ..Options::default()
    };
    for project in synthetic(3, 700, 11).chunks(700) {
        let events = as_replay(project);
        let grid = replay_project(events.clone(), &settings, &options);
        for (i, setting) in settings.iter().enumerate() {
            let alone = replay_project(events.clone(), std::slice::from_ref(setting), &options);
            let (g, a) = (&grid.settings[i], &alone.settings[0]);
            assert_eq!(g.verdicts, a.verdicts, "{}", setting.id);
            assert_eq!(g.periods, a.periods, "{}", setting.id);
            assert_eq!(g.windows, a.windows, "{}", setting.id);
            assert_eq!(g.days, a.days, "{}", setting.id);
            assert_eq!(g.promotions, a.promotions, "{}", setting.id);
            assert_eq!(g.friction_reasons, a.friction_reasons, "{}", setting.id);
            assert_eq!(g.misses, a.misses, "{}", setting.id);
        }
    }
}

#[test]
fn the_export_of_a_history_without_its_last_event_decides_that_event_as_the_replay_did() {
    let engine_settings: Vec<Setting> = Grid::standard()
        .into_iter()
        .filter(|s| matches!(s.method, Method::Engine(_)))
        .collect();
    let mut checked = 0;
    let mut seen = std::collections::BTreeSet::new();
    for (p, project) in synthetic(6, 500, 23).chunks(500).enumerate() {
        let mut events = as_replay(project);
        let last_ts = events.iter().filter_map(|e| e.ts_us).max().unwrap();
        let root = events[0].project_root.clone();
        // The last event opens a session of its own (the hook starts every session clean), at
        // a time of its own; cycle through calls that learning can and cannot promote.
        let (tool, input) = [
            ("Bash", serde_json::json!({"command": "npm test"})),
            ("Bash", serde_json::json!({"command": "git status"})),
            (
                "Read",
                serde_json::json!({"file_path": format!("{root}/src/f3.rs")}),
            ),
            ("Bash", serde_json::json!({"command": "cargo build"})),
            ("Bash", serde_json::json!({"command": "ls src"})),
            ("Bash", serde_json::json!({"command": "rm -rf build"})),
        ][p % 6]
            .clone();
        let last = event(
            &root,
            events.len(),
            last_ts + DAY_US / 3,
            "last-session",
            tool,
            input.clone(),
            Outcome::Ran,
            Some(true),
        );
        events.push(last);
        let options = Options {
            keep_verdicts: true,
            keep_envelopes: true,
            ..Options::default()
        };
        let full = replay_project(events.clone(), &engine_settings, &options);
        let all_but_last = replay_project(
            events[..events.len() - 1].to_vec(),
            &engine_settings,
            &options,
        );
        for (i, setting) in engine_settings.iter().enumerate() {
            let envelope = all_but_last.settings[i].envelope.as_ref().unwrap();
            let bytes = freeze(
                setting,
                &[ProjectEnvelope {
                    key: &root,
                    root: &root,
                    envelope,
                }],
                Vec::new(),
                serde_json::json!({}),
            )
            .unwrap();
            let frozen = Frozen::parse(&bytes).unwrap();
            let Method::Engine(expected_settings) = &setting.method else {
                unreachable!()
            };
            assert_eq!(frozen.settings(), expected_settings);
            let project = frozen.project_for(&format!("{root}/src")).unwrap().unwrap();
            let call = ToolCall {
                tool: tool.to_string(),
                input: input.clone(),
                cwd: Some(root.clone()),
                descriptor: None,
            };
            let analysis = analyze(&call, &Roots::new(&root, &home_of(&root)));
            let ctx = Context {
                envelope: &project,
                session: &SessionState::default(),
                answers: &NoAnswers,
                settings: frozen.settings(),
                now_us: last_ts + DAY_US / 3,
            };
            let live = decide(&analysis, &ctx).decision;
            let replayed = *full.settings[i].verdicts.last().unwrap();
            assert_eq!(
                live, replayed,
                "project {root}, setting {}, call {tool} {input}",
                setting.id
            );
            seen.insert(live);
            checked += 1;
        }
    }
    assert_eq!(checked, 6 * engine_settings.len());
    // Both sides of the line were exercised: learned allows and asks.
    assert_eq!(seen.len(), 2, "{seen:?}");
}

#[test]
fn the_real_samples_replay_and_every_refusal_is_a_miss_or_a_catch() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/datasets");
    if !samples.is_dir() {
        eprintln!("skipped: the real samples are not at {}", samples.display());
        return;
    }
    let scratch = Scratch::new("real");
    let table = scratch.0.join("table");
    let mut sources: Vec<leastgrant_ingest::registry::SourceFile> =
        leastgrant_ingest::claude::discover(&samples.join("claude-code"))
            .into_iter()
            .map(|path| leastgrant_ingest::registry::SourceFile {
                source: &leastgrant_ingest::claude::SOURCE,
                path,
            })
            .collect();
    for entry in walk(&samples.join("specstory")) {
        if entry.extension().is_some_and(|x| x == "md")
            && entry.components().any(|c| c.as_os_str() == "history")
        {
            sources.push(leastgrant_ingest::registry::SourceFile {
                source: &leastgrant_ingest::specstory::SOURCE,
                path: entry,
            });
        }
    }
    leastgrant_ingest::run::run(sources, &table, &|_| {}).unwrap();
    let refused = leastgrant_ingest::table::read_table(&table)
        .unwrap()
        .iter()
        .filter(|e| e.outcome == Outcome::Refused)
        .count() as u64;
    assert!(refused > 0, "the samples hold refusals");
    let settings = all_settings();
    let summary = leastgrant_replay::run(
        &table,
        &settings,
        &Options::default(),
        0.02,
        &mut |_| Ok(()),
        &|_| {},
    )
    .unwrap();
    for s in &summary.settings {
        let t = s.total();
        assert_eq!(
            t.miss + t.catch,
            refused,
            "{}: misses {} + catches {} ≠ refusals {refused}",
            s.setting.id,
            t.miss,
            t.catch
        );
    }
    let always_ask = summary
        .settings
        .iter()
        .find(|s| s.setting.id == "baseline.always-ask")
        .unwrap()
        .total();
    assert_eq!((always_ask.miss, always_ask.catch), (0, refused));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path)
            } else {
                out.push(path)
            }
        }
    }
    out
}

#[test]
fn a_time_split_tunes_on_the_earlier_part_and_scores_on_the_later() {
    let scratch = Scratch::new("split");
    let table = scratch.0.join("table");
    // 600 events a project at 60 a day: ten days; split after the sixth.
    write_table(&table, synthetic(8, 600, 5));
    let split = crate::support::T0 + 6 * DAY_US;
    let options = Options {
        split_at_us: Some(split),
        ..Options::default()
    };
    let summary = leastgrant_replay::run(
        &table,
        &all_settings(),
        &options,
        0.5,
        &mut |_| Ok(()),
        &|_| {},
    )
    .unwrap();
    for s in &summary.settings {
        let [early, late] = s.periods;
        assert_eq!(
            (early.events, late.events),
            (8 * 360, 8 * 240),
            "{}",
            s.setting.id
        );
    }
    let json = summary.to_json();
    let tuned = &json["time_split"]["tuned_on_earlier"];
    let id = tuned["id"]
        .as_str()
        .expect("a setting is tuned on the earlier part");
    let chosen = summary
        .settings
        .iter()
        .find(|s| s.setting.id == id)
        .unwrap();
    assert_eq!(
        tuned["events"], chosen.periods[1].events,
        "it is scored on the later part"
    );
    assert_eq!(
        Some(
            summary
                .settings
                .iter()
                .position(|s| s.setting.id == id)
                .unwrap()
        ),
        summary.recommend(Some(0))
    );
}

/// Fixed rules for every project, as a CLI would load them from files.
#[derive(Debug)]
struct FixedAnswers(serde_json::Value);

impl leastgrant_replay::ProjectAnswers for FixedAnswers {
    fn for_project(
        &self,
        roots: &Roots,
    ) -> Result<(leastgrant_engine::Policy, Vec<leastgrant_engine::Grant>), String> {
        let policy =
            leastgrant_engine::Policy::from_json(&self.0, roots).map_err(|e| e.to_string())?;
        Ok((policy, Vec::new()))
    }

    fn describe(&self) -> String {
        format!("fixed: {}", self.0)
    }
}

#[test]
fn the_rules_in_force_decide_in_the_replay_as_in_the_hook() {
    let project = "/home/dev/p";
    let events: Vec<_> = (0..3)
        .flat_map(|day| {
            let at = crate::support::T0 + day * DAY_US;
            [
                event(
                    project,
                    2 * day as usize,
                    at,
                    &format!("s{day}"),
                    "Bash",
                    json_command("cat .env"),
                    Outcome::Ran,
                    Some(true),
                ),
                event(
                    project,
                    2 * day as usize + 1,
                    at + 60_000_000,
                    &format!("s{day}"),
                    "Bash",
                    json_command("npm test"),
                    Outcome::Ran,
                    Some(true),
                ),
            ]
        })
        .collect();
    let setting = Setting::engine(leastgrant_engine::Settings::default());
    let plain = Options {
        keep_verdicts: true,
        home: Some("/home/dev".into()),
        ..Options::default()
    };
    let without = replay_project(events.clone(), std::slice::from_ref(&setting), &plain);
    let with_rules = Options {
        answers: Some(std::sync::Arc::new(FixedAnswers(serde_json::json!({
            "allow": ["Bash(cat .env)"], "deny": ["Bash(npm test)"], "defaultMode": "ask"
        })))),
        ..plain.clone()
    };
    let with = replay_project(events, std::slice::from_ref(&setting), &with_rules);
    let names = |run: &leastgrant_replay::ProjectRun| -> Vec<&str> {
        run.settings[0]
            .verdicts
            .iter()
            .map(|d| d.as_str())
            .collect()
    };
    // Without rules: the credential read is a floor (asks), `npm test` asks until learned.
    assert_eq!(names(&without), ["ask", "ask", "ask", "ask", "ask", "ask"]);
    // With them: the allow rule lets the read through past its floor; the deny rule denies.
    assert_eq!(
        names(&with),
        ["allow", "deny", "allow", "deny", "allow", "deny"]
    );
    let total = with.settings[0].total();
    assert_eq!((total.saved, total.false_block), (3, 3));
    let summary = leastgrant_replay::Summary::new(&[setting], &with_rules, 0.1);
    assert!(
        summary.to_json()["assumptions"]["rules"]
            .as_str()
            .unwrap()
            .starts_with("fixed: ")
    );
}

fn json_command(command: &str) -> serde_json::Value {
    serde_json::json!({ "command": command })
}

/// Learning settings share one envelope, keep approvals of their own where their evidence
/// differed only by approvals (an allow where the shared envelope asks), and whole statistics of
/// their own where it differed otherwise (`crate::shared`); an export keeps a whole envelope per
/// setting. Both must
/// decide every event alike, with the same words on every miss: on histories with every kind of
/// label (refusals, cancellations, hook denials, the classifier's decisions, unattended and auto
/// mode), standing approvals, rules that allow past a floor and deny, several half-lives and z,
/// and a project spanning five years (evidence past the horizon is pruned).
#[test]
fn settings_sharing_an_envelope_decide_as_settings_with_their_own() {
    let mut settings = Grid {
        posture: vec!["assist".into(), "autopilot".into(), "strict".into()],
        confidence: vec![[0.5, 0.5, 0.8], [0.7, 0.7, 0.8]],
        min_days: vec![1, 3],
        min_sessions: vec![1, 2],
        half_life_days: vec![2.0, 90.0],
        ..Grid::default()
    }
    .expand()
    .unwrap();
    settings.extend(
        Grid {
            posture: vec!["assist".into(), "observe".into()],
            z: vec![1.0],
            min_observed: vec![2.0],
            max_tier: vec![1],
            ..Grid::default()
        }
        .expand()
        .unwrap(),
    );
    settings.extend(baselines());
    let mut projects: Vec<Vec<leastgrant_replay::events::ReplayEvent>> =
        synthetic(2, 900, 5).chunks(900).map(as_replay).collect();
    // Five years, one call every two to three days.
    let mut long = as_replay(&synthetic(1, 800, 9));
    for (i, e) in long.iter_mut().enumerate() {
        e.ts_us = Some(crate::support::T0 + i as i64 * (DAY_US * 5 / 2));
    }
    projects.push(long);
    for events in &mut projects {
        for (i, e) in events.iter_mut().enumerate() {
            match i % 17 {
                3 => e.outcome = Outcome::Cancelled,
                5 => e.outcome = Outcome::Interrupted,
                7 => e.decided_by = Some(leastgrant_replay::events::Decider::Hook),
                9 => e.auto_mode = true,
                11 => e.attended = None,
                13 => {
                    e.outcome = Outcome::Denied;
                    e.decided_by = Some(leastgrant_replay::events::Decider::Classifier);
                }
                15 => e.decided_by = Some(leastgrant_replay::events::Decider::User),
                _ => {}
            }
        }
    }
    // Standing approvals part-way through each history: `granted` for every setting, which
    // settings with approvals of their own (and statistics of their own) fold too.
    for events in &mut projects {
        let root = events[0].project_key.clone();
        for (at, rule) in [(300, "Bash(git status)"), (500, "Bash(cargo test)")] {
            let mut row = event(
                &root,
                10_000 + at,
                events[at].ts_us.unwrap(),
                "standing:claude-code",
                "Bash",
                serde_json::json!({ leastgrant_ingest::standing::RULE_KEY: rule }),
                Outcome::Granted,
                None,
            );
            row.event_id = format!("standing:{root}:{rule}");
            events.push(row);
        }
    }
    let rules = std::sync::Arc::new(FixedAnswers(serde_json::json!({
        "allow": ["Bash(cat ~/.aws/credentials)"], "deny": ["Bash(docker compose up -d)"]
    })));
    for unattended in [Unattended::Approve, Unattended::Observe, Unattended::Skip] {
        for answers in [None, Some(rules.clone())] {
            let shared = Options {
                keep_verdicts: true,
                unattended,
                answers: answers
                    .clone()
                    .map(|a| a as std::sync::Arc<dyn leastgrant_replay::ProjectAnswers>),
                ..Options::default()
            };
            let own = Options {
                keep_envelopes: true,
                ..shared.clone()
            };
            let mut misses = 0;
            let mut promotions = 0;
            for events in &projects {
                let a = replay_project(events.clone(), &settings, &shared);
                let b = replay_project(events.clone(), &settings, &own);
                for (i, setting) in settings.iter().enumerate() {
                    let (s, o) = (&a.settings[i], &b.settings[i]);
                    let what = format!("{} ({unattended:?})", setting.id);
                    assert!(s.envelope.is_none());
                    assert_eq!(s.verdicts, o.verdicts, "{what}");
                    assert_eq!(s.periods, o.periods, "{what}");
                    assert_eq!(s.windows, o.windows, "{what}");
                    assert_eq!(s.days, o.days, "{what}");
                    assert_eq!(s.promotions, o.promotions, "{what}");
                    assert_eq!(s.friction_reasons, o.friction_reasons, "{what}");
                    assert_eq!(s.misses, o.misses, "{what}");
                    misses += s.misses.len();
                    promotions += s.promotions.len();
                }
            }
            // The comparison covers misses (their words), and promotions where learning
            // decides (a policy answers every call: its default mode asks).
            assert!(misses > 0, "{unattended:?}");
            assert_eq!(promotions > 0, answers.is_none(), "{unattended:?}");
        }
    }
}

#[test]
fn projects_handed_over_all_at_once_write_the_bytes_of_a_few_at_a_time() {
    // One hand-over of every project adds several writer chunks of rows to a table at once
    // (they are cut off its front a chunk at a time): the files are the usual run's.
    let scratch = Scratch::new("one-batch");
    let table = scratch.0.join("table");
    write_table(&table, synthetic(48, 400, 7));
    replay_into(&table, &scratch.0.join("chunks"), 1);
    let settings = all_settings();
    let mut all = Vec::new();
    let summary = leastgrant_replay::run(
        &table,
        &settings,
        &Options::default(),
        0.02,
        &mut |runs| {
            all.extend_from_slice(runs);
            Ok(())
        },
        &|_| {},
    )
    .unwrap();
    let curves = leastgrant_replay::output::project_batches(&settings, &all)
        .unwrap()
        .into_iter()
        .find(|(name, _)| *name == "curves")
        .unwrap()
        .1
        .num_rows();
    assert!(
        curves > 2 * leastgrant_replay::output::CHUNK,
        "{curves} curve rows"
    );
    let mut outputs = Outputs::create(&scratch.0.join("once")).unwrap();
    outputs.add(&settings, &all).unwrap();
    outputs.finish(&summary).unwrap();
    let (chunks, once) = (
        files(&scratch.0.join("chunks")),
        files(&scratch.0.join("once")),
    );
    assert_eq!(chunks.len(), once.len());
    for ((name, a), (_, b)) in chunks.iter().zip(&once) {
        assert!(
            a == b,
            "{name} differs when every project is handed over at once"
        );
    }
}
