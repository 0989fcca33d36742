//! `leastgrant ingest` places a copied history in the project it worked in: a SpecStory tree
//! collected under another `<dir>/.specstory/history/` is replayed against its own root (its
//! edits are writes inside the project, not outside it), `--project-root` forces one project
//! and is refused without places to read, and `simulate` sees the projects ingest gave.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{at_home, json_of, scratch, simulate_events};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/ingest/tests/data/project/specstory"
);

fn home(name: &str) -> PathBuf {
    scratch(&format!("project-{name}"))
}

/// The fixture exports copied under `<home>/collected/.specstory/history/`.
fn collect(home: &Path) -> PathBuf {
    let history = home.join("collected/.specstory/history");
    std::fs::create_dir_all(&history).unwrap();
    for entry in std::fs::read_dir(FIXTURES).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, history.join(path.file_name().unwrap())).unwrap();
    }
    history
}

fn run(home: &Path, args: &[&str]) -> std::process::Output {
    at_home(home, args)
}

/// `simulate` of the events table `table` into `replay`, without rules.
fn simulate(home: &Path, table: &str, replay: &str) -> Value {
    simulate_events(home, Path::new(table), Path::new(replay), &["--no-rules"])
}

#[test]
fn a_collected_specstory_tree_is_replayed_against_its_own_root() {
    let home = home("collected");
    let history = collect(&home);
    let history = history.to_str().unwrap();
    let table = home.join("table");
    let table = table.to_str().unwrap();
    let replay = home.join("replay");
    let replay = replay.to_str().unwrap();

    let summary = json_of(&run(
        &home,
        &["ingest", "--specstory", history, "--out", table, "--json"],
    ));
    // The Claude Code session touched /Users/ana/code/shop; the Codex one touched no path.
    assert_eq!(
        summary["by_project_basis"],
        serde_json::json!({"touched": 6, "file": 1}),
        "{summary}"
    );
    let text = run(&home, &["ingest", "--specstory", history, "--out", table]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("projects from: touched 6, file 1"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );

    let simulated = simulate(&home, table, replay);
    assert_eq!(simulated["projects"], 2, "{simulated}");
    // The edit and the new test are writes inside the shop; only the agent's plan file, in its
    // own folder under the home, is outside.
    assert_eq!(
        simulated["capabilities"]["fs.write.workspace"], 2,
        "{simulated}"
    );
    assert_eq!(
        simulated["capabilities"]["fs.write.outside"], 1,
        "{simulated}"
    );

    let forced = json_of(&run(
        &home,
        &[
            "ingest",
            "--specstory",
            history,
            "--out",
            table,
            "--project-root",
            "/Users/ana/code/shop",
            "--json",
        ],
    ));
    assert_eq!(
        forced["files"], 2,
        "another placement reads the sources again"
    );
    assert_eq!(forced["by_project_basis"], serde_json::json!({"forced": 7}));
    let simulated = simulate(&home, table, replay);
    assert_eq!(simulated["projects"], 1, "{simulated}");
}

#[test]
fn project_root_needs_the_places_it_applies_to() {
    let home = home("forced-alone");
    let output = run(&home, &["ingest", "--project-root", "/srv/app", "--json"]);
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("name the places"), "{stderr}");
    assert!(!home.join(".leastgrant/data").exists());
}
