//! Gemini CLI chat recordings: the two real samples (JSONL and the older JSON) with pinned
//! counts, and a fixture home made from the documented format for the rest (projects placed
//! through `projects.json`, a SHA-256 folder name and `.project_root`; rewritten turns, `$set`,
//! `$rewindTo`, a torn line, an unknown record), read through default discovery and the run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::gemini::{Places, SOURCE, read_gemini};
use leastgrant_ingest::registry::SourceFile;
use leastgrant_ingest::run::run;
use leastgrant_ingest::schema::Event;
use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct CaseFile {
    bad: BTreeMap<String, u64>,
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    call: String,
    #[serde(flatten)]
    pinned: Pinned,
    project: String,
    sidechain: Option<bool>,
}

fn gemini_files(home: &Path) -> Vec<SourceFile> {
    discovered(&SOURCE, home, home)
}

#[test]
fn the_real_samples_have_the_pinned_counts() {
    let Some(root) = shared("gemini/VibeCodingTracker/examples") else {
        println!("skipped: ../shared/datasets/gemini is absent");
        return;
    };
    // (file, calls, session, project hash): neither sample comes with its projects.json, so
    // each is placed by its recording's projectHash.
    let pinned = [
        (
            "test_conversation_gemini.jsonl",
            12,
            "0ab84937-9fe7-4284-986a-33c832af0b6a",
            "9da8b3dfb8655182ac1f0e66601c367e34f8d18447a29759eeba4d7e45dc60ea",
            [
                ("read_file", 7),
                ("replace", 1),
                ("update_topic", 3),
                ("write_file", 1),
            ]
            .as_slice(),
        ),
        (
            "test_conversation_gemini.json",
            7,
            "8a20078e-2d5e-4f81-a640-9b879bbb7e6d",
            "ab14fe397f91d5f283525b3178d2314aef552f761131c42172a21b7bf735e73d",
            [("read_file", 3), ("write_file", 4)].as_slice(),
        ),
    ];
    for (name, calls, session, project, tools) in pinned {
        let path = root.join(name);
        let mut bad = BadCounts::default();
        let events = read_gemini(
            &path,
            &std::fs::read(&path).unwrap(),
            &Places::default(),
            &mut bad,
        );
        assert!(bad.is_empty(), "{name}: {bad:?}");
        assert_eq!(events.len(), calls, "{name}");
        assert!(events.iter().all(|e| e.outcome.as_str() == "ran"), "{name}");
        assert!(events.iter().all(|e| e.decided_by.is_none()), "{name}");
        let sessions: BTreeSet<&str> = events.iter().map(|e| e.session_id.as_str()).collect();
        assert_eq!(sessions, BTreeSet::from([session]), "{name}");
        let projects: BTreeSet<&str> = events.iter().map(|e| e.project_root.as_str()).collect();
        assert_eq!(projects, BTreeSet::from([project]), "{name}");
        let mut by_tool: BTreeMap<&str, usize> = BTreeMap::new();
        for e in &events {
            *by_tool.entry(e.tool_name.as_str()).or_insert(0) += 1;
        }
        assert_eq!(by_tool, tools.iter().copied().collect(), "{name}");
        let ids: BTreeSet<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
        assert_eq!(
            ids.len(),
            calls,
            "{name}: one event per call, however often rewritten"
        );
    }
}

#[test]
fn every_call_of_the_fixture_reads_as_documented() {
    let expected: CaseFile =
        toml::from_str(&std::fs::read_to_string(data("gemini_cases.toml")).unwrap()).unwrap();
    let files = gemini_files(&data("gemini/home"));
    assert_eq!(
        files.len(),
        4,
        "the recordings in chats/, not logs.json: {files:?}"
    );
    let mut bad = BadCounts::default();
    let events: Vec<Event> = files
        .iter()
        .flat_map(|f| read_source(&SOURCE, &f.path, &mut bad))
        .collect();
    assert_eq!(bad.0, expected.bad);
    assert_eq!(events.len(), expected.case.len());
    let by_call: BTreeMap<&str, &Event> = events
        .iter()
        .map(|e| (e.tool_use_id.as_deref().unwrap(), e))
        .collect();
    let mut found = Mismatches::default();
    for case in &expected.case {
        let id = case.call.as_str();
        let Some(event) = by_call.get(id) else {
            found.fail(format!("{id}: no event"));
            continue;
        };
        found.call(id, event, &case.pinned);
        found.check(
            id,
            "project",
            Some(&event.project_root),
            Some(&case.project),
        );
        found.check(
            id,
            "sidechain",
            Some(event.is_sidechain),
            Some(case.sidechain.unwrap_or(false)),
        );
        if event.decided_by.is_some() {
            found.fail(format!("{id}: Gemini records no decision"));
        }
        if event.ts_us.is_none() {
            found.fail(format!("{id}: no time"));
        }
    }
    found.assert_none();
}

/// The home's `projects.json` is part of every recording placed through it: a project moved in
/// it places the session again on the next run.
#[test]
fn recordings_ingest_incrementally_and_follow_projects_json() {
    let dir = scratch("gemini-run");
    let home = dir.join("home");
    let gemini = home.join(".gemini");
    copy(&data("gemini/home/.gemini"), &gemini);
    let table = dir.join("table");
    let first = run(gemini_files(&home), &table, &|_| {}).unwrap();
    assert_eq!(first.by_agent.get("gemini"), Some(&10));
    let second = run(gemini_files(&home), &table, &|_| {}).unwrap();
    assert_eq!((second.files_read, second.events), (0, 10));
    std::fs::write(
        gemini.join("projects.json"),
        r#"{"projects": {"/srv/widgets": "widgets", "/home/dev/legacy": "legacy"}}"#,
    )
    .unwrap();
    let third = run(gemini_files(&home), &table, &|_| {}).unwrap();
    // Every session placed through it, or that it may place (the folder no file names); not the
    // one its `.project_root` places.
    assert_eq!((third.files_read, third.events), (3, 10));
    let roots: BTreeSet<String> = leastgrant_ingest::table::read_table(&table)
        .unwrap()
        .into_iter()
        .map(|e| e.project_root)
        .collect();
    assert!(
        roots.contains("/srv/widgets") && !roots.contains("/home/dev/widgets"),
        "{roots:?}"
    );
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
