//! Copilot CLI sessions: the real samples (an `events.jsonl`, an older whole-file session, six
//! `--output-format json` captures) with pinned counts, and a fixture made from the documented
//! event schema for what no real sample holds (every permission result, a torn line, an
//! unknown event type, a permission without its call, an abort), read through discovery and the
//! run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::copilot::{SOURCE, discover, read_copilot};
use leastgrant_ingest::run::run;
use leastgrant_ingest::schema::Event;
use leastgrant_ingest::table::read_table;
use serde::Deserialize;

use crate::support::*;

/// The fixture session's folder.
const SESSION: &str = "copilot/session-state/5e551011-0000-4000-8000-000000000001";

#[derive(Deserialize)]
struct Counts {
    file: Vec<FileCounts>,
}

#[derive(Deserialize)]
struct FileCounts {
    path: String,
    calls: usize,
    outcomes: BTreeMap<String, usize>,
    project: String,
    session: String,
    bad: BTreeMap<String, u64>,
}

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
    decided_by: String,
    denial_kind: Option<String>,
    sidechain: Option<bool>,
}

fn outcomes(events: &[Event]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for e in events {
        *counts.entry(e.outcome.as_str().to_string()).or_insert(0) += 1;
    }
    counts
}

/// Reads a source as a run does: its files' bytes, then its reader.
#[test]
fn the_real_samples_have_the_pinned_counts() {
    let Some(root) = shared("copilot") else {
        println!("skipped: ../shared/datasets/copilot is absent");
        return;
    };
    let counts: Counts =
        toml::from_str(&std::fs::read_to_string(data("copilot_counts.toml")).unwrap()).unwrap();
    let mut total = 0;
    for expected in &counts.file {
        let path = root.join(&expected.path);
        let mut bad = BadCounts::default();
        let events = read_copilot(&path, &std::fs::read(&path).unwrap(), None, &mut bad);
        let name = &expected.path;
        assert_eq!(events.len(), expected.calls, "{name}");
        assert_eq!(outcomes(&events), expected.outcomes, "{name}");
        assert_eq!(bad.0, expected.bad, "{name}");
        let projects: BTreeSet<&str> = events.iter().map(|e| e.project_root.as_str()).collect();
        let sessions: BTreeSet<&str> = events.iter().map(|e| e.session_id.as_str()).collect();
        let folder = path.parent().unwrap().display().to_string();
        let want_project = match expected.project.as_str() {
            "-" => BTreeSet::new(),
            "(the file's folder)" => BTreeSet::from([folder.as_str()]),
            project => BTreeSet::from([project]),
        };
        assert_eq!(projects, want_project, "{name}");
        let want_session = match expected.session.as_str() {
            "-" => BTreeSet::new(),
            session => BTreeSet::from([session]),
        };
        assert_eq!(sessions, want_session, "{name}");
        let ids: BTreeSet<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
        assert_eq!(ids.len(), events.len(), "{name}: event ids are distinct");
        assert!(
            events.iter().all(|e| e.decided_by.is_none()),
            "{name}: no permission events, so no decisions"
        );
        total += events.len();
    }
    assert_eq!(total, 11 + 59 + 102);
}

#[test]
fn every_call_of_the_fixture_reads_as_documented() {
    let expected: CaseFile =
        toml::from_str(&std::fs::read_to_string(data("copilot_cases.toml")).unwrap()).unwrap();
    let files = discover(&data("copilot/session-state"));
    assert_eq!(files, [data(SESSION).join("events.jsonl")]);
    assert_eq!(
        (SOURCE.files)(&files[0]),
        [
            data(SESSION).join("events.jsonl"),
            data(SESSION).join("workspace.yaml")
        ],
        "the workspace file is part of the session"
    );
    let mut bad = BadCounts::default();
    let events = read_source(&SOURCE, &files[0], &mut bad);
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
        let decided = event.decided_by.as_deref().unwrap_or("-");
        found.check(
            id,
            "decided_by",
            Some(decided),
            Some(case.decided_by.as_str()),
        );
        found.check(
            id,
            "denial_kind",
            event.denial_kind.as_ref(),
            case.denial_kind.as_ref(),
        );
        found.check(
            id,
            "sidechain",
            Some(event.is_sidechain),
            Some(case.sidechain.unwrap_or(false)),
        );
        // workspace.yaml's cwd wins over session.start's (a subfolder here).
        found.check(
            id,
            "project",
            Some(event.project_root.as_str()),
            Some("/home/dev/widgets"),
        );
        found.check(
            id,
            "mode",
            event.permission_mode.as_deref(),
            Some("interactive"),
        );
        found.check(id, "attended", event.attended, Some(true));
        found.check(
            id,
            "version",
            event.agent_version.as_deref(),
            Some("1.0.40"),
        );
        found.check(
            id,
            "session",
            Some(event.session_id.as_str()),
            Some("5e551011-0000-4000-8000-000000000001"),
        );
        if event.ts_us.is_none() {
            found.fail(format!("{id}: no time"));
        }
    }
    found.assert_none();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Found in `~/.copilot/session-state` by default, read once, read again when the session
/// grows, and the table's rows carry the decisions.
#[test]
fn a_session_in_its_default_place_ingests_incrementally() {
    let dir = scratch("copilot-run");
    let home = dir.join("home");
    copy_dir(
        &data("copilot/session-state"),
        &home.join(".copilot/session-state"),
    );
    let files = discovered(&SOURCE, &home, &dir);
    assert_eq!(files.len(), 1);
    let table = dir.join("table");
    let first = run(files.clone(), &table, &|_| {}).unwrap();
    assert_eq!(first.by_agent.get("copilot"), Some(&15));
    assert_eq!(first.bad.0.get("torn-line"), Some(&1));
    let second = run(files.clone(), &table, &|_| {}).unwrap();
    assert_eq!((second.files_read, second.events), (0, 15));

    let events: PathBuf =
        home.join(".copilot/session-state/5e551011-0000-4000-8000-000000000001/events.jsonl");
    let mut text = std::fs::read_to_string(&events).unwrap();
    text.push_str(concat!(
        r#"{"type":"tool.execution_start","data":{"toolCallId":"c16","toolName":"bash","#,
        r#""arguments":{"command":"git status"}},"id":"e900","timestamp":"2026-09-01T11:00:00.000Z","parentId":null}"#,
        "\n"
    ));
    std::fs::write(&events, text).unwrap();
    let third = run(files, &table, &|_| {}).unwrap();
    assert_eq!((third.files_read, third.events), (1, 16));
    let rows = read_table(&table).unwrap();
    let decided: BTreeMap<&str, usize> = rows.iter().fold(BTreeMap::new(), |mut m, e| {
        *m.entry(e.decided_by.as_deref().unwrap_or("-")).or_insert(0) += 1;
        m
    });
    assert_eq!(
        decided,
        BTreeMap::from([
            ("-", 6),
            ("config", 4),
            ("hook", 2),
            ("user", 2),
            ("user-permanent", 1),
            ("user-session", 1),
        ])
    );
}
