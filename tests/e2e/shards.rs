//! `simulate --shard K/N` and `merge` through the real binary on the demo history: three shards
//! merged (given out of order) print the same summary and write the same bytes as one
//! `simulate`; a shard that does not exist, a missing shard, and shards of other settings or
//! another events table are refused with an error that says which.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{at_home, ingest_claude, json_of, scratch};

fn temp() -> PathBuf {
    scratch("shards")
}

fn run(home: &Path, args: &[&str]) -> Output {
    at_home(home, args)
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

/// A failed run's exit code (3: an error) and what it said.
fn refused(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Demo history → events table: the table's path.
fn demo_table(home: &Path, name: &str, seed: &str) -> String {
    let demo = home.join(format!("demo-{name}"));
    json_of(&run(
        home,
        &[
            "demo",
            "--out",
            demo.to_str().unwrap(),
            "--projects",
            "12",
            "--days",
            "30",
            "--seed",
            seed,
            "--json",
        ],
    ));
    let table = home.join(format!("table-{name}"));
    ingest_claude(home, &demo.join("projects"), &table);
    table.to_str().unwrap().to_string()
}

#[test]
fn three_shards_merged_are_one_simulate() {
    let home = temp();
    let table = demo_table(&home, "one", "1");
    let dir = |name: &str| home.join(name).to_str().unwrap().to_string();
    let whole = json_of(&run(
        &home,
        &[
            "simulate",
            "--events",
            &table,
            "--out",
            &dir("whole"),
            "--json",
        ],
    ));
    assert_eq!(whole["projects"], 12);
    for k in 0..3 {
        let shard = format!("{k}/3");
        let out = dir(&format!("shard-{k}"));
        let partial = json_of(&run(
            &home,
            &[
                "simulate", "--shard", &shard, "--events", &table, "--out", &out, "--json",
            ],
        ));
        assert!(partial["projects"].as_u64().unwrap() < 12, "{shard}");
    }
    // In the order a scheduler might list them.
    let merged = json_of(&run(
        &home,
        &[
            "merge",
            &dir("shard-2"),
            &dir("shard-0"),
            &dir("shard-1"),
            "--out",
            &dir("merged"),
            "--json",
        ],
    ));
    assert_eq!(merged, whole);
    let (a, b) = (files(&home.join("whole")), files(&home.join("merged")));
    let names: Vec<&str> = a.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, b.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>());
    assert!(names.contains(&"curves.parquet") && names.contains(&"summary.json"));
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name}: the merge differs from one simulate");
    }

    // The text a person reads says what a shard is.
    let text = run(
        &home,
        &[
            "simulate",
            "--shard",
            "1/3",
            "--events",
            &table,
            "--out",
            &dir("shard-1"),
        ],
    );
    assert!(text.status.success());
    assert!(
        String::from_utf8_lossy(&text.stdout)
            .contains("combine the 3 shards with `leastgrant merge`")
    );

    // Shards that do not exist.
    for (shard, words) in [("3/3", "numbered 0 to 2"), ("0/0", "N must be 1 or more")] {
        let e = refused(&run(
            &home,
            &[
                "simulate",
                "--shard",
                shard,
                "--events",
                &table,
                "--out",
                &dir("x"),
            ],
        ));
        assert!(e.contains(words), "{shard}: {e}");
    }
    // A missing shard: the result would be incomplete.
    let e = refused(&run(
        &home,
        &[
            "merge",
            &dir("shard-0"),
            &dir("shard-2"),
            "--out",
            &dir("m"),
        ],
    ));
    assert!(e.contains("shard 1/3 of the run is missing"), "{e}");
    // A shard of other settings.
    let other = dir("other-settings");
    json_of(&run(
        &home,
        &[
            "simulate",
            "--shard",
            "1/3",
            "--posture",
            "strict",
            "--events",
            &table,
            "--out",
            &other,
            "--json",
        ],
    ));
    let e = refused(&run(
        &home,
        &[
            "merge",
            &dir("shard-0"),
            &other,
            &dir("shard-2"),
            "--out",
            &dir("m"),
        ],
    ));
    assert!(e.contains("different settings or options"), "{e}");
    // A shard of another events table.
    let table_two = demo_table(&home, "two", "2");
    let other = dir("other-events");
    json_of(&run(
        &home,
        &[
            "simulate", "--shard", "1/3", "--events", &table_two, "--out", &other, "--json",
        ],
    ));
    let e = refused(&run(
        &home,
        &[
            "merge",
            &dir("shard-0"),
            &other,
            &dir("shard-2"),
            "--out",
            &dir("m"),
        ],
    ));
    assert!(e.contains("different events tables"), "{e}");
    assert!(!home.join("m").exists(), "a refused merge wrote nothing");
    let _ = std::fs::remove_dir_all(&home);
}
