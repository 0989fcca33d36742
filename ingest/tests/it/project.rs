//! The project of a session: the cases of `tests/data/project_cases.toml` through
//! `project::place`; copied histories ingested into a real table (a SpecStory tree copied under
//! another `.specstory/history/`, Claude Code transcripts moved to another `projects` folder),
//! `--project-root` forcing and releasing a placement; and the real getspecstory export placed
//! the same in its folder and copied elsewhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use leastgrant_ingest::project::{self, Basis, Placing};
use leastgrant_ingest::registry::{SourceFile, files_at};
use leastgrant_ingest::run::{Options, Summary, run_with};
use leastgrant_ingest::schema::{Event, Outcome, UNKNOWN_PROJECT};
use leastgrant_ingest::{claude, specstory, table};
use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    file: String,
    recorded: Option<String>,
    #[serde(default)]
    store_unknown: bool,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    cwds: Vec<String>,
    home: Option<String>,
    forced: Option<String>,
    root: String,
    basis: String,
}

/// A call of the session as a reader leaves it, before placing.
fn call(seq: u32, file_path: Option<&str>, cwd: Option<&str>) -> Event {
    Event {
        event_id: format!("{seq:016x}"),
        agent: "claude-code".to_string(),
        agent_version: None,
        source: format!("case:{seq}"),
        source_kind: "case".to_string(),
        project_key: String::new(),
        project_root: String::new(),
        session_id: "s".to_string(),
        seq,
        ts_us: None,
        cwd: cwd.map(str::to_string),
        git_branch: None,
        permission_mode: None,
        attended: None,
        tool_name: "Read".to_string(),
        tool_input: "{}".to_string(),
        command: None,
        file_path: file_path.map(str::to_string),
        outcome: Outcome::Ran,
        is_error: None,
        is_sidechain: false,
        tool_use_id: None,
        outcome_rule: "result".to_string(),
        denial_kind: None,
        result_excerpt: None,
        decided_by: None,
    }
}

#[test]
fn every_case_is_placed_as_written() {
    let text = std::fs::read_to_string(data("project_cases.toml")).unwrap();
    let cases: Cases = toml::from_str(&text).unwrap();
    assert!(cases.case.len() >= 20);
    let mut mismatches = Mismatches::default();
    for case in &cases.case {
        let mut events: Vec<Event> = case
            .paths
            .iter()
            .map(|p| Some(p.as_str()))
            .chain(std::iter::once(None))
            .zip(0..)
            .map(|(path, seq)| call(seq, path, None))
            .chain(
                case.cwds
                    .iter()
                    .zip(1000..)
                    .map(|(cwd, seq)| call(seq, None, Some(cwd))),
            )
            .collect();
        let file = Path::new(&case.file);
        if case.store_unknown {
            project::record_root(&mut events, UNKNOWN_PROJECT);
        } else {
            project::record(&mut events, case.recorded.as_deref(), file);
        }
        let placing = Placing {
            forced: case.forced.clone(),
            home: case.home.clone(),
        };
        let bases = project::place(&mut events, &placing);
        let roots: Vec<&str> = events.iter().map(|e| e.project_root.as_str()).collect();
        let want_key = leastgrant_ingest::common::project_key(&case.root);
        if !roots.iter().all(|r| *r == case.root)
            || !events.iter().all(|e| e.project_key == want_key)
        {
            mismatches.fail(format!(
                "{}: placed at {roots:?}, expected {}",
                case.name, case.root
            ));
        }
        let names: Vec<&str> = bases.iter().map(|b| b.as_str()).collect();
        if !names.iter().all(|n| *n == case.basis) || names.len() != events.len() {
            mismatches.fail(format!(
                "{}: basis {names:?}, expected {}",
                case.name, case.basis
            ));
        }
    }
    mismatches.assert_none();
}

/// Every basis has its name, in the rule's order.
#[test]
fn bases_are_named_in_the_rules_order() {
    let names: Vec<&str> = Basis::ALL.iter().map(|b| b.as_str()).collect();
    assert_eq!(names, ["forced", "recorded", "touched", "file", "unknown"]);
}

/// `/`, drives, the top-level folders that hold others' work and homes are too wide; a
/// project below them, or a container's `/app`, is not.
#[test]
fn too_wide_to_be_a_project() {
    let placing = Placing {
        forced: None,
        home: Some("/work/me".to_string()),
    };
    for wide in [
        "/",
        "c:",
        "/users",
        "/home",
        "/tmp",
        "/users/ana",
        "/home/bo",
        "/root",
        "c:/users/fay",
        "/work/me",
    ] {
        assert!(project::is_too_wide(wide, &placing), "{wide}");
    }
    for narrow in [
        "/app",
        "/users/ana/code",
        "/home/bo/src/api",
        "c:/users/fay/repo",
    ] {
        assert!(!project::is_too_wide(narrow, &placing), "{narrow}");
    }
}

fn options(placing: Placing) -> Options<'static> {
    Options {
        keep_deleted: false,
        progress: &|_| {},
        waiting: &|| {},
        placing,
    }
}

fn ingest(sources: Vec<SourceFile>, table: &Path, placing: Placing) -> Summary {
    run_with(sources, table, &options(placing)).unwrap()
}

/// Events in the table by project root.
fn by_root(table_dir: &Path) -> BTreeMap<String, u64> {
    let mut roots = BTreeMap::new();
    for event in table::read_table(table_dir).unwrap() {
        *roots.entry(event.project_root).or_insert(0) += 1;
    }
    roots
}

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Copies a fixture folder's files into `to` (created).
fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}

/// A SpecStory tree collected from a developer and put under a security team's
/// `<dir>/.specstory/history/`: the session that read `./src/cart/total.rs` and edited
/// `/Users/ana/code/shop/src/cart/total.rs` belongs to `/Users/ana/code/shop`, not to `<dir>`;
/// the one that touched no path falls back to where it sits. `--project-root` forces both, is
/// remembered, and a run without it places them by their paths again.
#[test]
fn a_copied_specstory_tree_is_placed_where_it_worked() {
    let dir = scratch("project-copied-specstory");
    let history = dir.join(".specstory/history");
    copy_files(&data("project/specstory"), &history);
    let table_dir = dir.join("table");
    let sources = || files_at(&specstory::SOURCE, &history);
    let here = std::fs::canonicalize(&dir).unwrap().display().to_string();

    let first = ingest(sources(), &table_dir, Placing::default());
    assert_eq!(first.by_basis, counts(&[("touched", 6), ("file", 1)]));
    assert_eq!(
        by_root(&table_dir),
        counts(&[("/Users/ana/code/shop", 6), (here.as_str(), 1)])
    );

    let unchanged = ingest(sources(), &table_dir, Placing::default());
    assert_eq!((unchanged.files_read, unchanged.files_unchanged), (0, 2));
    assert_eq!(unchanged.by_basis, first.by_basis);

    let forced = Placing {
        forced: Some("/Users/ana/code/shop".to_string()),
        home: None,
    };
    let second = ingest(sources(), &table_dir, forced.clone());
    assert_eq!(
        second.files_read, 2,
        "another placement reads the sources again"
    );
    assert_eq!(second.by_basis, counts(&[("forced", 7)]));
    assert_eq!(by_root(&table_dir), counts(&[("/Users/ana/code/shop", 7)]));
    let again = ingest(sources(), &table_dir, forced);
    assert_eq!(again.files_read, 0);

    let third = ingest(sources(), &table_dir, Placing::default());
    assert_eq!(third.files_read, 2);
    assert_eq!(third.by_basis, first.by_basis);
}

/// Claude Code transcripts moved into another `projects` folder keep the project their `cwd`
/// names; one started in the home directory goes to the project it worked in.
#[test]
fn moved_claude_transcripts_keep_the_project_they_recorded() {
    let dir = scratch("project-moved-claude");
    let projects = dir.join("projects/-srv-collected-laptop-7");
    copy_files(&data("project/claude"), &projects);
    let table_dir = dir.join("table");
    let summary = ingest(
        files_at(&claude::SOURCE, &dir.join("projects")),
        &table_dir,
        Placing {
            forced: None,
            home: Some("/home/sec".to_string()),
        },
    );
    assert_eq!(summary.by_basis, counts(&[("recorded", 3), ("touched", 4)]));
    assert_eq!(
        by_root(&table_dir),
        counts(&[("/home/bo/src/api", 3), ("/home/bo/src/web", 4)])
    );
}

/// A manifest written before sessions were placed by their basis has no counts per basis: its
/// sources are read again once, and placed.
#[test]
fn a_table_from_before_the_rule_is_placed_again() {
    let dir = scratch("project-old-manifest");
    let history = dir.join("copy/.specstory/history");
    copy_files(&data("project/specstory"), &history);
    let table_dir = dir.join("table");
    let sources = || files_at(&specstory::SOURCE, &history);
    ingest(sources(), &table_dir, Placing::default());
    let mut manifest = table::Manifest::load(&table_dir).unwrap();
    for entry in manifest.sources.values_mut() {
        if let Some(counts) = entry.counts.as_mut() {
            counts.by_basis = None;
        }
    }
    manifest.save(&table_dir).unwrap();
    let again = ingest(sources(), &table_dir, Placing::default());
    assert_eq!(again.files_read, 2);
    assert_eq!(again.by_basis, counts(&[("touched", 6), ("file", 1)]));
    let settled = ingest(sources(), &table_dir, Placing::default());
    assert_eq!(settled.files_read, 0);
}

/// The real getspecstory export (one project, `specstory-cli`, whose exports lived in
/// `specstory-cli/.specstory/history/`), read where it is stored and copied under another
/// `<dir>/.specstory/history/`: both place each call in the same project, almost all in
/// `…/getspecstory/specstory-cli`, and none in `<dir>` but the calls that touched no path.
#[test]
fn the_real_export_is_placed_the_same_wherever_it_sits() {
    let Some(real) = shared("specstory/getspecstory/history") else {
        eprintln!("skipped: ../shared/datasets/specstory/getspecstory/history is absent");
        return;
    };
    let dir = scratch("project-real-specstory");
    // Links, not copies: the sample stays where it is.
    let placed = dir.join("collected/.specstory/history");
    std::fs::create_dir_all(&placed).unwrap();
    for entry in std::fs::read_dir(&real).unwrap() {
        let path = entry.unwrap().path();
        std::os::unix::fs::symlink(&path, placed.join(path.file_name().unwrap())).unwrap();
    }
    let at_home = dir.join("at-home");
    let copied = dir.join("copied");
    let home_summary = ingest(
        files_at(&specstory::SOURCE, &real),
        &at_home,
        Placing::default(),
    );
    let copied_summary = ingest(
        files_at(&specstory::SOURCE, &placed),
        &copied,
        Placing::default(),
    );
    assert_eq!(home_summary.by_basis, copied_summary.by_basis);
    let keys = |table_dir: &Path| -> BTreeMap<String, (String, String)> {
        table::read_table(table_dir)
            .unwrap()
            .into_iter()
            .map(|e| (e.event_id, (e.project_key, e.project_root)))
            .collect()
    };
    let (home_keys, copied_keys) = (keys(&at_home), keys(&copied));
    let collected = std::fs::canonicalize(dir.join("collected"))
        .unwrap()
        .display()
        .to_string();
    let real_dir = std::fs::canonicalize(&real).unwrap().display().to_string();
    let file_placed = copied_summary.by_basis.get("file").copied().unwrap_or(0);
    let mut differ = 0;
    for (id, (key, root)) in &copied_keys {
        let home = home_keys.get(id).expect("the same calls");
        if home.0 != *key {
            differ += 1;
            assert!(
                *root == collected && home.1 == real_dir,
                "{id}: {root} copied, {} at home",
                home.1
            );
        }
    }
    assert_eq!(differ, file_placed, "only the file-placed calls differ");
    let events = copied_keys.len() as u64;
    let in_cli = copied_keys
        .values()
        .filter(|(key, _)| key == "/users/sean/source/specstory/getspecstory/specstory-cli")
        .count() as u64;
    eprintln!(
        "real export: {events} calls, {in_cli} in specstory-cli, by basis {:?}",
        copied_summary.by_basis
    );
    assert!(in_cli * 100 >= events * 85, "{in_cli} of {events}");
    assert!(file_placed * 100 <= events * 5, "{file_placed} of {events}");
}

/// The place a file falls back to: above `.specstory/history/`, else its folder, absolute.
#[test]
fn file_places() {
    assert_eq!(
        project::file_place(Path::new("/a/b/.specstory/history/x.md")),
        "/a/b"
    );
    assert_eq!(
        project::file_place(Path::new("/a/b/history/x.md")),
        "/a/b/history"
    );
    let relative = project::file_place(Path::new("x.jsonl"));
    assert_eq!(
        PathBuf::from(relative),
        std::env::current_dir().unwrap(),
        "made absolute"
    );
}
