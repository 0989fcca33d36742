//! Codex CLI rollouts: the hand-written rollout under `tests/data/codex/` read through discovery
//! and the run, checked against `tests/data/codex_cases.toml`.

use std::collections::BTreeMap;

use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::registry::SourceFile;
use leastgrant_ingest::run::run;
use leastgrant_ingest::table::read_table;
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
    mode: Option<String>,
    attended: Option<bool>,
}

#[test]
fn every_call_of_the_rollout_reads_as_documented() {
    let expected: CaseFile =
        toml::from_str(&std::fs::read_to_string(data("codex_cases.toml")).unwrap()).unwrap();
    let roots = leastgrant_ingest::codex::default_roots(
        std::path::Path::new("/nonexistent"),
        Some(&data("codex")),
    );
    assert_eq!(roots.len(), 1, "sessions/ is found under CODEX_HOME");
    let files = leastgrant_ingest::codex::discover(&roots[0]);
    assert_eq!(files.len(), 1);

    let mut bad = BadCounts::default();
    let bytes = std::fs::read(&files[0]).unwrap();
    let events = leastgrant_ingest::codex::read_codex(&files[0], &bytes, &mut bad);
    assert_eq!(bad.0, expected.bad);
    assert_eq!(events.len(), expected.case.len());
    let by_call: BTreeMap<String, _> = events
        .iter()
        .map(|e| (e.tool_use_id.clone().unwrap(), e))
        .collect();
    let mut found = Mismatches::default();
    for case in &expected.case {
        let Some(event) = by_call.get(&case.call) else {
            found.fail(format!("{}: no event", case.call));
            continue;
        };
        let id = case.call.as_str();
        found.call(id, event, &case.pinned);
        found.check(
            id,
            "mode",
            event.permission_mode.as_ref(),
            case.mode.as_ref(),
        );
        found.check(id, "attended", event.attended, case.attended);
        found.check(
            id,
            "project",
            Some(event.project_root.as_str()),
            Some("/home/dev/proj"),
        );
        found.check(
            id,
            "session",
            Some(event.session_id.as_str()),
            Some("0199aaaa-0000-7000-8000-000000000001"),
        );
        found.check(id, "branch", event.git_branch.as_deref(), Some("main"));
        found.check(
            id,
            "version",
            event.agent_version.as_deref(),
            Some("0.50.0"),
        );
        if event.ts_us.is_none() {
            found.fail(format!("{id}: no time"));
        }
    }
    found.assert_none();
}

#[test]
fn a_rollout_ingests_once() {
    let dir = scratch("codex-run");
    let files: Vec<SourceFile> = leastgrant_ingest::codex::discover(&data("codex/sessions"))
        .into_iter()
        .map(|path| SourceFile {
            source: &leastgrant_ingest::codex::SOURCE,
            path,
        })
        .collect();
    let table = dir.join("table");
    let first = run(files.clone(), &table, &|_| {}).unwrap();
    assert_eq!(first.by_agent.get("codex"), Some(&9));
    let second = run(files, &table, &|_| {}).unwrap();
    assert_eq!((second.files_read, second.events), (0, 9));
    let ids: std::collections::BTreeSet<String> = read_table(&table)
        .unwrap()
        .into_iter()
        .map(|e| e.event_id)
        .collect();
    assert_eq!(ids.len(), 9, "event ids are distinct");
}
