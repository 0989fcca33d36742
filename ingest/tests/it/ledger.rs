//! The hook's decision ledger: the fixtures under `tests/data/ledger/` (the current file and one
//! rotation, read as one ledger) read through discovery and checked against
//! `tests/data/ledger/cases.toml`; event ids shared with the Claude transcript reader; a run into
//! a table and back; arbitrary lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use leastgrant_ingest::common::{BadCounts, stable_id};
use leastgrant_ingest::ledger::{discover, files, read_ledger, read_ledger_files};
use leastgrant_ingest::registry::SourceFile;
use leastgrant_ingest::run::run;
use leastgrant_ingest::schema::Event;
use leastgrant_ingest::table::read_table;
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::json;

use crate::support::*;

#[derive(Deserialize)]
struct CaseFile {
    bad: BTreeMap<String, BTreeMap<String, u64>>,
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    file: String,
    line: u32,
    /// The parts of the event id.
    id: Vec<String>,
    #[serde(flatten)]
    row: Row,
}

/// What an event says, every field pinned.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Row {
    agent: String,
    session: String,
    tool_use_id: Option<String>,
    ts_us: Option<i64>,
    cwd: Option<String>,
    project: String,
    project_key: String,
    mode: Option<String>,
    attended: Option<bool>,
    tool: String,
    input: String,
    command: Option<String>,
    file_path: Option<String>,
    outcome: String,
    rule: String,
    is_error: Option<bool>,
    denial_kind: Option<String>,
}

fn row(event: &Event) -> Row {
    Row {
        agent: event.agent.clone(),
        session: event.session_id.clone(),
        tool_use_id: event.tool_use_id.clone(),
        ts_us: event.ts_us,
        cwd: event.cwd.clone(),
        project: event.project_root.clone(),
        project_key: event.project_key.clone(),
        mode: event.permission_mode.clone(),
        attended: event.attended,
        tool: event.tool_name.clone(),
        input: event.tool_input.clone(),
        command: event.command.clone(),
        file_path: event.file_path.clone(),
        outcome: event.outcome.as_str().to_string(),
        rule: event.outcome_rule.clone(),
        is_error: event.is_error,
        denial_kind: event.denial_kind.clone(),
    }
}

fn read(path: &Path) -> (Vec<Event>, BadCounts) {
    let mut bad = BadCounts::default();
    let bytes = std::fs::read(path).unwrap();
    let events = read_ledger(path, &bytes, &mut bad);
    (events, bad)
}

/// Every file of the ledger at `ledger`, read together (oldest first).
fn read_all(ledger: &Path) -> (Vec<Event>, BadCounts) {
    let contents: Vec<(PathBuf, Vec<u8>)> = files(ledger)
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    let mut bad = BadCounts::default();
    let events = read_ledger_files(
        contents.iter().map(|(p, b)| (p.as_path(), b.as_slice())),
        &mut bad,
    );
    (events, bad)
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn every_line_of_the_ledger_reads_as_documented() {
    let expected: CaseFile =
        toml::from_str(&std::fs::read_to_string(data("ledger/cases.toml")).unwrap()).unwrap();
    let ledgers = discover(&data("ledger"));
    let names: Vec<String> = ledgers.iter().map(|f| file_name(f)).collect();
    assert_eq!(names, ["ledger.jsonl"]);
    let in_order = files(&ledgers[0]);
    let names: Vec<String> = in_order.iter().map(|f| file_name(f)).collect();
    assert_eq!(names, ["ledger.jsonl.1", "ledger.jsonl"], "oldest first");
    let (all, bad) = read_all(&ledgers[0]);
    let mut want_bad = BTreeMap::new();
    for counts in expected.bad.values() {
        for (reason, n) in counts {
            *want_bad.entry(reason.clone()).or_insert(0) += n;
        }
    }
    assert_eq!(bad.0, want_bad, "bad counts");
    let mut found = Mismatches::default();
    for path in &in_order {
        let name = file_name(path);
        let source_prefix = format!("{}:", path.display());
        let events: Vec<&Event> = all
            .iter()
            .filter(|e| e.source.starts_with(&source_prefix))
            .collect();
        let cases: Vec<&Case> = expected.case.iter().filter(|c| c.file == name).collect();
        let lines: Vec<u32> = events.iter().map(|e| e.seq).collect();
        let want_lines: Vec<u32> = cases.iter().map(|c| c.line).collect();
        assert_eq!(
            lines, want_lines,
            "{name}: one event per decision, in line order"
        );
        for (event, case) in events.iter().zip(&cases) {
            let at = format!("{name}:{}", case.line);
            let parts: Vec<&str> = case.id.iter().map(String::as_str).collect();
            found.check(
                &at,
                "event_id",
                Some(&event.event_id),
                Some(&stable_id(&parts)),
            );
            found.check(&at, "fields", Some(row(event)), Some(case.row.clone()));
            let source = format!("{}:{}", path.display(), case.line);
            found.check(&at, "source", Some(&event.source), Some(&source));
            found.check(
                &at,
                "source_kind",
                Some(event.source_kind.as_str()),
                Some("ledger"),
            );
            found.check(&at, "seq", Some(event.seq), Some(case.line));
            if event.agent_version.is_some()
                || event.git_branch.is_some()
                || event.is_sidechain
                || event.result_excerpt.is_some()
            {
                found.fail(format!(
                    "{at}: the ledger records no version, branch, sidechain or result"
                ));
            }
        }
    }
    found.assert_none();
}

#[test]
fn discovery_finds_the_ledger_and_its_three_rotations_only() {
    let dir = scratch("ledger-discover");
    for name in [
        "ledger.jsonl.1",
        "ledger.jsonl.3",
        "ledger.jsonl.4",
        "ledger.jsonl.bak",
        "ledger.lock",
    ] {
        std::fs::write(dir.join(name), "").unwrap();
    }
    let ledger = dir.join("ledger.jsonl");
    // One ledger, named by its current file even before that exists.
    assert_eq!(discover(&dir), std::slice::from_ref(&ledger));
    let names: Vec<String> = files(&ledger).iter().map(|f| file_name(f)).collect();
    assert_eq!(names, ["ledger.jsonl.3", "ledger.jsonl.1"], "oldest first");
    std::fs::write(&ledger, "").unwrap();
    std::fs::create_dir(dir.join("ledger.jsonl.2")).unwrap();
    let names: Vec<String> = files(&ledger).iter().map(|f| file_name(f)).collect();
    assert_eq!(names, ["ledger.jsonl.3", "ledger.jsonl.1", "ledger.jsonl"]);
    // A rotation given names its ledger; a file given is a ledger.
    assert_eq!(
        discover(&dir.join("ledger.jsonl.1")),
        std::slice::from_ref(&ledger)
    );
    assert_eq!(discover(&ledger), [ledger]);
    assert!(discover(&dir.join("missing")).is_empty());
    let empty = scratch("ledger-discover-empty");
    assert!(discover(&empty).is_empty());
}

/// A Claude Code transcript holding one call, `npm test`, with the ledger's `toolu_01ask`.
fn transcript_with_the_ledgers_call(path: &Path) {
    let call = json!({"type": "assistant", "uuid": "a1", "sessionId": "s1",
        "timestamp": "2026-01-01T00:00:11Z", "cwd": "/w/app", "version": "2.1.0",
        "message": {"content": [{"type": "tool_use", "id": "toolu_01ask", "name": "Bash",
            "input": {"command": "npm test", "description": "Run tests"}}]}});
    let result = json!({"type": "user", "uuid": "u1", "sessionId": "s1",
        "timestamp": "2026-01-01T00:00:13Z",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_01ask", "content": "ok"}]}});
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("{call}\n{result}\n")).unwrap();
}

#[test]
fn a_claude_call_in_the_ledger_has_the_transcripts_event_id() {
    let dir = scratch("ledger-same-id");
    let transcript = dir.join("s1.jsonl");
    transcript_with_the_ledgers_call(&transcript);
    let mut bad = BadCounts::default();
    let claude = leastgrant_ingest::claude::read_claude(
        &transcript,
        &std::fs::read(&transcript).unwrap(),
        &mut bad,
    );
    let (ledger, _) = read(&data("ledger/ledger.jsonl"));
    let in_ledger = ledger
        .iter()
        .find(|e| e.tool_use_id.as_deref() == Some("toolu_01ask"))
        .unwrap();
    assert_eq!(claude.len(), 1);
    assert_eq!(claude[0].event_id, in_ledger.event_id);
}

/// The ledger through a run: stored, read back unchanged, and a call the transcript also holds
/// kept once (the transcript sorts first, as `~/.claude` does before `~/.leastgrant`).
#[test]
fn the_ledger_ingests_into_a_table_and_reads_back() {
    let dir = scratch("ledger-run");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    for name in ["ledger.jsonl", "ledger.jsonl.1"] {
        std::fs::copy(data("ledger").join(name), state.join(name)).unwrap();
    }
    let transcript = dir.join("claude/projects/-w-app/s1.jsonl");
    transcript_with_the_ledgers_call(&transcript);
    let ledgers: Vec<PathBuf> = discover(&state);
    assert_eq!(ledgers.len(), 1);
    let mut sources: Vec<SourceFile> = ledgers
        .iter()
        .map(|path| SourceFile {
            source: &leastgrant_ingest::ledger::SOURCE,
            path: path.clone(),
        })
        .collect();
    sources.push(SourceFile {
        source: &leastgrant_ingest::claude::SOURCE,
        path: transcript.clone(),
    });
    let table = dir.join("table");
    let summary = run(sources.clone(), &table, &|_| {}).unwrap();
    // 9 + 2 ledger events and the transcript's one, which the ledger also holds.
    assert_eq!(
        (summary.files_read, summary.events, summary.duplicates),
        (2, 11, 1)
    );
    assert_eq!(summary.by_agent.get("cursor"), Some(&4));
    assert_eq!(summary.by_outcome.get("denied"), Some(&2));
    assert_eq!(
        summary.bad.0.get("ledger-ran-without-decision"),
        None,
        "the split pair meets across the rotation"
    );

    let mut want: Vec<Event> = read_all(&ledgers[0]).0;
    want.retain(|e| e.tool_use_id.as_deref() != Some("toolu_01ask"));
    want.sort_by(|a, b| a.event_id.cmp(&b.event_id));
    let stored = read_table(&table).unwrap();
    let shared: Vec<&Event> = stored
        .iter()
        .filter(|e| e.tool_use_id.as_deref() == Some("toolu_01ask"))
        .collect();
    assert_eq!(shared.len(), 1, "a call in both histories is stored once");
    assert_eq!(shared[0].source_kind, "claude-jsonl");
    let mut got: Vec<Event> = stored
        .into_iter()
        .filter(|e| e.source_kind == "ledger")
        .collect();
    got.sort_by(|a, b| a.event_id.cmp(&b.event_id));
    assert_eq!(got, want);

    let again = run(sources, &table, &|_| {}).unwrap();
    assert_eq!((again.files_read, again.events), (0, 11));
}

/// One ledger line of any shape: a decision or a ran line for a few calls, with fields dropped
/// or of the wrong type, or another version or kind.
fn ledger_line() -> impl Strategy<Value = String> {
    let agent = prop_oneof![Just("claude-code"), Just("cursor"), Just("")];
    let call = prop_oneof![
        Just("toolu_1"),
        Just("toolu_2"),
        Just("h:1111111111111111"),
        Just("h:2222222222222222")
    ];
    let event = prop_oneof![
        Just("PreToolUse"),
        Just("PermissionRequest"),
        Just("PostToolUse"),
        Just("beforeShellExecution")
    ];
    let answered = prop_oneof![Just("allow"), Just("ask"), Just("deny"), Just("abstain")];
    let kind = prop_oneof![Just("decision"), Just("ran"), Just("unreadable"), Just("x")];
    (
        kind,
        agent,
        call,
        event,
        answered,
        0i64..4,
        prop_oneof![Just(json!(1)), Just(json!(2)), Just(json!("1"))],
        proptest::collection::vec(0usize..12, 0..3),
        any::<bool>(),
    )
        .prop_map(|(kind, agent, call, event, answered, ts, v, drop, ok)| {
            let mut line = json!({"v": v, "kind": kind, "ts_us": ts, "agent": agent,
                "event": event, "session_id": "s", "call_id": call, "tool_name": "Bash",
                "tool_input": {"command": "ls"}, "answered": answered, "ok": ok,
                "attended": ok, "project": "/p"});
            let keys = [
                "v",
                "kind",
                "ts_us",
                "agent",
                "session_id",
                "call_id",
                "tool_name",
                "tool_input",
                "answered",
                "ok",
                "attended",
                "project",
            ];
            for i in drop {
                if let Some(key) = keys.get(i) {
                    line[*key] = if i % 2 == 0 { json!(null) } else { json!([1]) };
                }
            }
            line.to_string()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever the lines, the reader does not panic, gives each event a distinct id, and
    /// every outcome agrees with its rule.
    #[test]
    fn any_ledger_lines_read_without_panic_into_distinct_events(
        lines in proptest::collection::vec(ledger_line(), 0..24),
    ) {
        let text = lines.join("\n") + "\n";
        let mut bad = BadCounts::default();
        let events = read_ledger(Path::new("ledger.jsonl"), text.as_bytes(), &mut bad);
        let ids: std::collections::BTreeSet<&str> =
            events.iter().map(|e| e.event_id.as_str()).collect();
        prop_assert_eq!(ids.len(), events.len());
        prop_assert!(events.len() <= lines.len());
        for event in &events {
            let outcome = match event.outcome_rule.as_str() {
                "ledger-ran" => "ran",
                "ledger-ran-failed" => "errored",
                "ledger-denied" => "denied",
                "ledger-asked-not-run" => "refused",
                "ledger-no-post" => "unmatched",
                other => panic!("unknown rule {other}"),
            };
            prop_assert_eq!(event.outcome.as_str(), outcome);
            prop_assert_eq!(event.denial_kind.is_some(), outcome == "denied");
        }
    }
}
