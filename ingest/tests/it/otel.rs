//! Claude Code's OpenTelemetry logs: the reader on a collector's file-exporter output made from
//! the documented schema (`tests/data/otel/`), and its join onto the transcript's rows through
//! real runs into a real table — whichever arrives first, after the log changes, and after it
//! is gone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::otel::{SOURCE as OTEL, read_otel};
use leastgrant_ingest::registry::{SourceFile, files_at};
use leastgrant_ingest::run::{Summary, run};
use leastgrant_ingest::schema::Event;
use leastgrant_ingest::table::read_table;
use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct Cases {
    call: Vec<Call>,
    counts: Counts,
    bad: BTreeMap<String, u64>,
}

#[derive(Deserialize)]
struct Call {
    tool_use_id: String,
    decided_by: String,
    outcome: String,
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
struct Counts {
    recorded: u64,
    joined: u64,
    other_session: u64,
    unmatched: u64,
}

fn cases() -> Cases {
    toml::from_str(&std::fs::read_to_string(data("otel/cases.toml")).unwrap()).unwrap()
}

const LOG: &str = "collector/claude-code-logs.jsonl";

/// The fixture's transcripts and log copied into a scratch directory, so a test can change them.
fn copy_fixture(name: &str) -> PathBuf {
    let dir = scratch(name);
    for rest in ["projects/-home-dev-shop", "collector"] {
        let from = data("otel").join(rest);
        std::fs::create_dir_all(dir.join(rest)).unwrap();
        for entry in std::fs::read_dir(&from).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.join(rest).join(entry.file_name())).unwrap();
        }
    }
    dir
}

fn transcripts(dir: &Path) -> Vec<SourceFile> {
    files_at(&leastgrant_ingest::claude::SOURCE, &dir.join("projects"))
}

fn logs(dir: &Path) -> Vec<SourceFile> {
    files_at(&OTEL, &dir.join("collector"))
}

fn ingest(sources: Vec<SourceFile>, table: &Path) -> Summary {
    run(sources, table, &|_| {}).unwrap()
}

/// Each row's call id → (decided_by or "-", outcome).
fn rows(table: &Path) -> BTreeMap<String, (String, String)> {
    read_table(table)
        .unwrap()
        .into_iter()
        .map(|e: Event| {
            (
                e.tool_use_id.unwrap_or_default(),
                (
                    e.decided_by.unwrap_or_else(|| "-".to_string()),
                    e.outcome.as_str().to_string(),
                ),
            )
        })
        .collect()
}

fn expected_rows() -> BTreeMap<String, (String, String)> {
    cases()
        .call
        .into_iter()
        .map(|c| (c.tool_use_id, (c.decided_by, c.outcome)))
        .collect()
}

fn undecided_rows() -> BTreeMap<String, (String, String)> {
    expected_rows()
        .into_iter()
        .map(|(id, (_, outcome))| (id, ("-".to_string(), outcome)))
        .collect()
}

fn counts(summary: &Summary) -> Counts {
    let d = summary.decisions;
    Counts {
        recorded: d.recorded,
        joined: d.joined,
        other_session: d.other_session,
        unmatched: d.unmatched,
    }
}

#[test]
fn the_log_reads_into_one_annotation_per_decided_call_and_counts_the_rest() {
    let path = data("otel").join(LOG);
    let mut bad = BadCounts::default();
    let annotations = read_otel(&path, &std::fs::read(&path).unwrap(), &mut bad);
    let cases = cases();
    assert_eq!(annotations.len() as u64, cases.counts.recorded);
    let by_id: BTreeMap<&str, &str> = annotations
        .iter()
        .map(|a| {
            (
                a.tool_use_id.as_deref().unwrap(),
                a.decided_by.as_deref().unwrap(),
            )
        })
        .collect();
    for call in &cases.call {
        // The log's decision of toolu_09 names another session: read here, not joined later.
        if call.decided_by != "-" {
            assert_eq!(
                by_id.get(call.tool_use_id.as_str()),
                Some(&call.decided_by.as_str()),
                "{}",
                call.tool_use_id
            );
        }
    }
    assert_eq!(by_id.get("toolu_09OtherSession00000"), Some(&"user"));
    assert_eq!(by_id.get("toolu_10NoTranscript000000"), Some(&"user"));
    assert_eq!(bad.0, cases.bad);
    // The raw words stay for audits; the ids are the transcript's.
    let first = annotations.first().unwrap();
    assert_eq!(first.denial_kind.as_deref(), Some("accept/user_temporary"));
    assert_eq!(first.agent_version.as_deref(), Some("2.1.190"));
    assert_eq!(
        first.event_id,
        leastgrant_ingest::common::claude_event_id("toolu_01AcceptOnce000000000")
    );
    assert!(first.source.ends_with("claude-code-logs.jsonl:1"));
}

#[test]
fn the_log_joins_onto_the_transcript_whichever_arrives_first() {
    let dir = copy_fixture("otel-orders");
    let cases = cases();

    // The transcript first, then the log: the transcript's rows are read again and decided.
    let first = dir.join("transcript-first");
    let alone = ingest(transcripts(&dir), &first);
    assert_eq!(alone.decisions.recorded, 0);
    assert_eq!(rows(&first), undecided_rows());
    let both = ingest([transcripts(&dir), logs(&dir)].concat(), &first);
    assert_eq!(rows(&first), expected_rows());
    assert_eq!(counts(&both), cases.counts);
    assert_eq!(both.events, 9, "no row lost when its source is read again");
    assert_eq!(both.bad.0.get("otel-session-mismatch"), Some(&1));

    // The log first: nothing joined, every decision unmatched; then the transcript finds them.
    let second = dir.join("log-first");
    let log_alone = ingest(logs(&dir), &second);
    assert_eq!(log_alone.events, 0);
    assert_eq!(
        counts(&log_alone),
        Counts {
            recorded: 9,
            joined: 0,
            other_session: 0,
            unmatched: 9
        }
    );
    let later = ingest([transcripts(&dir), logs(&dir)].concat(), &second);
    assert_eq!(later.files_unchanged, 1, "the log is not read again");
    assert_eq!(rows(&second), expected_rows());
    assert_eq!(counts(&later), cases.counts);

    // A run that reads nothing keeps the counts.
    let again = ingest([transcripts(&dir), logs(&dir)].concat(), &second);
    assert_eq!((again.files_read, again.files_unchanged), (0, 2));
    assert_eq!(counts(&again), cases.counts);
}

#[test]
fn a_changed_log_redecides_its_calls_and_a_removed_one_undecides_them() {
    let dir = copy_fixture("otel-change");
    let table = dir.join("table");
    ingest([transcripts(&dir), logs(&dir)].concat(), &table);
    assert_eq!(rows(&table), expected_rows());

    // The collector appends a decision for a call already in the table.
    let log = dir.join(LOG);
    let mut text = std::fs::read_to_string(&log).unwrap();
    let line = std::fs::read_to_string(data("otel").join(LOG))
        .unwrap()
        .lines()
        .find(|l| l.contains("toolu_03AllowedByRule00000"))
        .unwrap()
        .replace("toolu_03AllowedByRule00000", "toolu_06NoDecision00000000");
    text.push_str(&line);
    text.push('\n');
    std::fs::write(&log, text).unwrap();
    let summary = ingest([transcripts(&dir), logs(&dir)].concat(), &table);
    assert_eq!(
        summary.files_read, 2,
        "the log, and the transcript it decides"
    );
    let mut want = expected_rows();
    want.insert(
        "toolu_06NoDecision00000000".to_string(),
        ("config".to_string(), "ran".to_string()),
    );
    assert_eq!(rows(&table), want);
    assert_eq!(summary.events, 9);
    assert_eq!(summary.decisions.joined, 8);

    // The log is gone: its decisions leave the table with it.
    std::fs::remove_file(&log).unwrap();
    let summary = ingest(transcripts(&dir), &table);
    assert_eq!(summary.released, 1);
    assert_eq!(summary.decisions.recorded, 0);
    assert_eq!(rows(&table), undecided_rows());
}

#[test]
fn discovery_takes_a_file_or_the_json_files_below_a_directory() {
    let dir = copy_fixture("otel-discover");
    std::fs::write(dir.join("collector/notes.txt"), "not a log").unwrap();
    std::fs::create_dir_all(dir.join("collector/host-b")).unwrap();
    std::fs::write(dir.join("collector/host-b/claude-code-logs.json"), "").unwrap();
    let found = leastgrant_ingest::otel::discover(&dir.join("collector"));
    let names: Vec<String> = found
        .iter()
        .map(|p| {
            p.strip_prefix(dir.join("collector"))
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(
        names,
        ["claude-code-logs.jsonl", "host-b/claude-code-logs.json"]
    );
    assert_eq!(
        leastgrant_ingest::otel::discover(&dir.join(LOG)),
        [dir.join(LOG)]
    );
}

/// A run that stopped after saving the store and before rewriting the rows leaves those calls
/// pending: the next run reads their transcript again, though neither file changed. Without the
/// pending list the rows would stay undecided (the control).
#[test]
fn a_run_stopped_before_the_rows_were_rewritten_is_finished_by_the_next() {
    let dir = copy_fixture("otel-pending");
    let both = || [transcripts(&dir), logs(&dir)].concat();
    let done = dir.join("done");
    ingest(both(), &done);
    let store = std::fs::read_to_string(done.join("decisions.json")).unwrap();
    let mut stopped: serde_json::Value = serde_json::from_str(&store).unwrap();
    let ids: Vec<serde_json::Value> = stopped["sources"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|s| s["decisions"].as_array().unwrap().clone())
        .map(|d| d["event_id"].clone())
        .collect();
    assert_eq!(ids.len(), 9);

    for (name, pending) in [("control", vec![]), ("stopped", ids)] {
        // The transcript's rows as they were; the store as the stopped run saved it.
        let table = dir.join(name);
        ingest(transcripts(&dir), &table);
        stopped["pending"] = serde_json::Value::Array(pending.clone());
        std::fs::write(table.join("decisions.json"), stopped.to_string()).unwrap();
        let summary = ingest(both(), &table);
        assert_eq!(summary.files_unchanged, 2 - summary.files_read);
        if pending.is_empty() {
            assert_eq!(rows(&table), undecided_rows(), "{name}");
        } else {
            assert_eq!(summary.files_read, 1, "the transcript, read again");
            assert_eq!(rows(&table), expected_rows(), "{name}");
            let after: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(table.join("decisions.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(after["pending"], serde_json::json!([]));
        }
    }
}
