//! Shards and their merge: for N in {1, 2, 3, 7}, the N shards of a synthetic history merged
//! (given in any order) write the same bytes as one run, every table and `summary.json`; and
//! what a merge refuses: a shard that does not exist, shards of other settings or of another
//! events table, a missing or repeated shard, a directory that is not a shard. Events replayed
//! from memory (`run_events`, the Python package's and Spark's path), whole or in parts of any
//! grouping of projects, write the same bytes too.

use std::path::{Path, PathBuf};

use leastgrant_engine::Roots;
use leastgrant_replay::merge::merge;
use leastgrant_replay::output::Outputs;
use leastgrant_replay::replay::Options;
use leastgrant_replay::settings::{Grid, Setting, baselines};
use leastgrant_replay::shard::{MANIFEST, Shard, shard_of};
use leastgrant_replay::{ProjectAnswers, run_events, run_shard};

use crate::support::{DAY_US, T0, as_replay, synthetic, write_table};

/// A fresh directory under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!(
            "leastgrant-replay-shards-{name}-{}",
            std::process::id()
        ));
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

/// Rules that cannot be read for every third project, so the summary has notes, in project
/// order.
#[derive(Debug)]
struct SomeBroken;

impl ProjectAnswers for SomeBroken {
    fn for_project(
        &self,
        roots: &Roots,
    ) -> Result<(leastgrant_engine::Policy, Vec<leastgrant_engine::Grant>), String> {
        let number: u32 = roots
            .project
            .trim_start_matches("/home/dev/p")
            .parse()
            .unwrap_or(0);
        if number.is_multiple_of(3) {
            return Err(format!("rules of p{number} unreadable"));
        }
        let policy = leastgrant_engine::Policy::from_json(
            &serde_json::json!({"permissions": {"allow": []}}),
            roots,
        )
        .map_err(|e| e.to_string())?;
        Ok((policy, Vec::new()))
    }

    fn describe(&self) -> String {
        "every third project's rules are unreadable".to_string()
    }
}

fn settings() -> Vec<Setting> {
    let mut settings = Grid::standard();
    settings.extend(baselines());
    settings
}

fn options() -> Options {
    Options {
        window: 40,
        split_at_us: Some(T0 + 4 * DAY_US),
        answers: Some(std::sync::Arc::new(SomeBroken)),
        ..Options::default()
    }
}

/// Replays `shard` (the whole table when `None`) of `table` into `out`.
fn replay(table: &Path, out: &Path, shard: Option<Shard>, settings: &[Setting], budget: f64) {
    let mut outputs = Outputs::create(out).unwrap();
    let (summary, manifest) = run_shard(
        table,
        settings,
        &options(),
        budget,
        shard.unwrap_or(Shard::WHOLE),
        &mut |runs| outputs.add(settings, runs),
        &|_| {},
    )
    .unwrap();
    match shard {
        Some(_) => outputs.finish_shard(&summary, &manifest).unwrap(),
        None => outputs.finish(&summary).unwrap(),
    }
}

/// Every file of a directory by name, with its bytes.
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

/// Writes the N shards of `table` under `base/shards-N/K`, returned in a scrambled order.
fn shards(table: &Path, base: &Path, count: u32, settings: &[Setting]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = (0..count)
        .map(|k| {
            let dir = base.join(format!("shards-{count}/{k}"));
            replay(
                table,
                &dir,
                Some(Shard::new(k, count).unwrap()),
                settings,
                0.05,
            );
            assert!(dir.join(MANIFEST).exists());
            dir
        })
        .collect();
    // The merge may not depend on the order it is given the shards in.
    dirs.reverse();
    if dirs.len() > 2 {
        dirs.swap(0, 1);
    }
    dirs
}

#[test]
fn merged_shards_write_the_bytes_of_one_run() {
    let scratch = Scratch::new("equal");
    let table = scratch.0.join("table");
    // Projects in several buckets, more projects than the largest N has shards.
    write_table(&table, synthetic(30, 300, 3));
    let settings = settings();
    let whole = scratch.0.join("whole");
    replay(&table, &whole, None, &settings, 0.05);
    let expected = files(&whole);
    let names: Vec<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
    assert!(!names.contains(&MANIFEST), "{names:?}");
    assert!(names.contains(&"promotions.parquet"), "{names:?}");
    let summary: serde_json::Value = serde_json::from_slice(&expected.last().unwrap().1).unwrap();
    assert_eq!(summary["projects"], 30);
    assert_eq!(summary["notes"].as_array().unwrap().len(), 10, "{summary}");
    assert!(summary["time_split"].is_object());

    for count in [1, 2, 3, 7] {
        let dirs = shards(&table, &scratch.0, count, &settings);
        // Every project is in exactly one shard, the one its key hashes to.
        let mut held = 0;
        for dir in &dirs {
            let manifest: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.join(MANIFEST)).unwrap()).unwrap();
            let k = manifest["shard"].as_u64().unwrap() as u32;
            for project in manifest["projects"].as_array().unwrap() {
                assert_eq!(shard_of(project["key"].as_str().unwrap(), count), k);
                held += 1;
            }
        }
        assert_eq!(held, 30, "{count} shards");

        let merged = scratch.0.join(format!("merged-{count}"));
        let summary = merge(&dirs, &merged).unwrap();
        assert_eq!(summary.projects, 30);
        let got = files(&merged);
        let got_names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(got_names, names, "{count} shards");
        for ((name, a), (_, b)) in got.iter().zip(&expected) {
            assert!(
                a == b,
                "{name} of {count} merged shards differs from one run"
            );
        }
    }
}

#[test]
fn a_shard_is_k_of_n_with_k_below_n() {
    assert_eq!(Shard::parse("2/3").unwrap(), Shard { index: 2, count: 3 });
    for (text, words) in [
        ("3/3", "shards are numbered 0 to 2"),
        ("7/3", "shards are numbered 0 to 2"),
        ("0/0", "N must be 1 or more"),
        ("1", "K/N"),
        ("a/3", "K/N"),
        ("-1/3", "K/N"),
    ] {
        let error = Shard::parse(text).unwrap_err().to_string();
        assert!(error.contains(words), "`{text}`: {error}");
    }
    // Stable: the same key, the same shard, every run (pinned values).
    assert_eq!(shard_of("/home/dev/p0001", 1), 0);
    let spread: std::collections::BTreeSet<u32> = (0..40)
        .map(|p| shard_of(&format!("/home/dev/p{p:04}"), 3))
        .collect();
    assert_eq!(
        spread.len(),
        3,
        "forty keys fall in every one of three shards"
    );
}

#[test]
fn a_merge_refuses_shards_that_are_not_one_runs() {
    let scratch = Scratch::new("refuse");
    let table = scratch.0.join("table");
    write_table(&table, synthetic(9, 200, 5));
    let settings = settings();
    let dirs = shards(&table, &scratch.0, 3, &settings);
    let shard = |k: usize| scratch.0.join(format!("shards-3/{k}"));
    let error = |dirs: &[PathBuf]| {
        merge(dirs, &scratch.0.join("merged"))
            .unwrap_err()
            .to_string()
    };

    // The merge may not write over a shard it reads.
    let e = merge(&dirs, &shard(0)).unwrap_err().to_string();
    assert!(e.contains("is one of the shards"), "{e}");

    // A missing shard: the merged result would be incomplete.
    let e = error(&[shard(0), shard(2)]);
    assert!(e.contains("shard 1/3 of the run is missing"), "{e}");
    let e = error(&[shard(2)]);
    assert!(e.contains("shard 0/3, 1/3 of the run are missing"), "{e}");

    // The same shard twice.
    let copy = scratch.0.join("copy-of-1");
    std::fs::create_dir_all(&copy).unwrap();
    for (name, bytes) in files(&shard(1)) {
        std::fs::write(copy.join(name), bytes).unwrap();
    }
    let e = error(&[shard(0), shard(1), copy.clone(), shard(2)]);
    assert!(e.contains("shard 1/3 is given twice"), "{e}");

    // Another N.
    let other_n = scratch.0.join("other-n");
    replay(
        &table,
        &other_n,
        Some(Shard::new(1, 2).unwrap()),
        &settings,
        0.05,
    );
    let e = error(&[shard(0), other_n.clone(), shard(2)]);
    assert!(e.contains("share their N"), "{e}");

    // Other settings: another grid, and the same grid with another miss budget.
    let fewer = scratch.0.join("fewer");
    replay(
        &table,
        &fewer,
        Some(Shard::new(1, 3).unwrap()),
        &settings[1..],
        0.05,
    );
    let e = error(&[shard(0), fewer, shard(2)]);
    assert!(e.contains("different settings or options"), "{e}");
    let budget = scratch.0.join("budget");
    replay(
        &table,
        &budget,
        Some(Shard::new(1, 3).unwrap()),
        &settings,
        0.2,
    );
    let e = error(&[shard(0), budget, shard(2)]);
    assert!(e.contains("different settings or options"), "{e}");

    // Another events table (one more project).
    let other_table = scratch.0.join("other-table");
    write_table(&other_table, synthetic(10, 200, 5));
    let other = scratch.0.join("other-events");
    replay(
        &other_table,
        &other,
        Some(Shard::new(1, 3).unwrap()),
        &settings,
        0.05,
    );
    let e = error(&[shard(0), other, shard(2)]);
    assert!(e.contains("different events tables"), "{e}");

    // A directory without a manifest, and a shard replayed again as a whole run.
    let e = error(std::slice::from_ref(&table));
    assert!(e.contains("holds no shard of a replay"), "{e}");
    replay(&table, &shard(2), None, &settings, 0.05);
    assert!(!shard(2).join(MANIFEST).exists());
    let e = error(&[shard(0), shard(1), shard(2)]);
    assert!(e.contains("holds no shard of a replay"), "{e}");

    // A damaged manifest.
    let manifest = shard(1).join(MANIFEST);
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("\"window\": 40", "\"window\": 41")).unwrap();
    let e = error(&[shard(0), shard(1)]);
    assert!(e.contains("damaged"), "{e}");

    // Nothing was written where a merge failed.
    assert!(!scratch.0.join("merged/summary.json").exists());
}

#[test]
fn events_replayed_from_memory_whole_or_in_any_parts_write_the_bytes_of_one_run() {
    let scratch = Scratch::new("memory");
    let table = scratch.0.join("table");
    let events = synthetic(30, 300, 3);
    write_table(&table, events.clone());
    let settings = settings();
    let whole = scratch.0.join("whole");
    replay(&table, &whole, None, &settings, 0.05);
    let expected = files(&whole);

    // The events in another order than the table's: run_events orders projects and events.
    let mut memory = as_replay(&events);
    memory.reverse();
    let from_memory = scratch.0.join("from-memory");
    let mut outputs = Outputs::create(&from_memory).unwrap();
    let (summary, _) = run_events(
        memory.clone(),
        None,
        &settings,
        &options(),
        0.05,
        Shard::WHOLE,
        &mut |runs| outputs.add(&settings, runs),
        &|_| {},
    )
    .unwrap();
    outputs.finish(&summary).unwrap();
    assert!(
        files(&from_memory) == expected,
        "run_events differs from run"
    );

    // Parts that are not hash shards (projects dealt round-robin by key, as a Spark
    // partitioner might group them), each labelled as one shard of the run, merge into it.
    let mut keys: Vec<String> = memory.iter().map(|e| e.project_key.clone()).collect();
    keys.sort();
    keys.dedup();
    let listed: Vec<(String, u64)> = keys
        .iter()
        .map(|k| {
            (
                k.clone(),
                memory.iter().filter(|e| &e.project_key == k).count() as u64,
            )
        })
        .collect();
    let count = 4u32;
    let mut dirs = Vec::new();
    for part in 0..count {
        let mine: Vec<_> = memory
            .iter()
            .filter(|e| {
                keys.iter().position(|k| k == &e.project_key).unwrap() as u32 % count == part
            })
            .cloned()
            .collect();
        let dir = scratch.0.join(format!("part-{part}"));
        let mut outputs = Outputs::create(&dir).unwrap();
        let (summary, manifest) = run_events(
            mine,
            Some(&listed),
            &settings,
            &options(),
            0.05,
            Shard::new(part, count).unwrap(),
            &mut |runs| outputs.add(&settings, runs),
            &|_| {},
        )
        .unwrap();
        outputs.finish_shard(&summary, &manifest).unwrap();
        dirs.push(dir);
    }
    let merged = scratch.0.join("merged-parts");
    merge(&dirs, &merged).unwrap();
    let got = files(&merged);
    assert_eq!(got.len(), expected.len());
    for ((name, a), (_, b)) in got.iter().zip(&expected) {
        assert!(a == b, "{name} of merged parts differs from one run");
    }

    // A part without one of the table's projects is refused by the merge, naming the gap.
    let err = merge(&dirs[1..], &scratch.0.join("merged-short")).unwrap_err();
    assert!(err.0.contains("shard 0/4 of the run is missing"), "{err}");
}
