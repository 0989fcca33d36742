//! Codex CLI rollouts: the hand-written rollout under `tests/data/codex/` read through discovery
//! and the run, checked against `tests/data/codex_cases.toml`.

use std::collections::BTreeMap;

use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::run::{SourceFile, SourceKind, run};
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
    outcome: String,
    rule: String,
    command: Option<String>,
    tool: Option<String>,
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
    let mut failures = Vec::new();
    for case in &expected.case {
        let Some(event) = by_call.get(&case.call) else {
            failures.push(format!("{}: no event", case.call));
            continue;
        };
        let mut check = |what: &str, got: Option<String>, want: Option<&String>| {
            if let Some(want) = want
                && got.as_ref() != Some(want)
            {
                failures.push(format!("{}: {what} {got:?}, expected {want:?}", case.call));
            }
        };
        check(
            "outcome",
            Some(event.outcome.as_str().to_string()),
            Some(&case.outcome),
        );
        check("rule", Some(event.outcome_rule.clone()), Some(&case.rule));
        check("command", event.command.clone(), case.command.as_ref());
        check("tool", Some(event.tool_name.clone()), case.tool.as_ref());
        check("mode", event.permission_mode.clone(), case.mode.as_ref());
        if case.attended.is_some() && event.attended != case.attended {
            failures.push(format!("{}: attended {:?}", case.call, event.attended));
        }
        if event.project_root != "/home/dev/proj"
            || event.session_id != "0199aaaa-0000-7000-8000-000000000001"
            || event.git_branch.as_deref() != Some("main")
            || event.agent_version.as_deref() != Some("0.50.0")
            || event.ts_us.is_none()
        {
            failures.push(format!("{}: session facts wrong: {event:?}", case.call));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_rollout_ingests_once() {
    let dir = scratch("codex-run");
    let files: Vec<SourceFile> = leastgrant_ingest::codex::discover(&data("codex/sessions"))
        .into_iter()
        .map(|path| SourceFile {
            kind: SourceKind::Codex,
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
