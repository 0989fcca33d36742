//! `leastgrant ingest --otel` driven end to end: a Claude Code history, then the collector's log
//! of who decided its calls (OTLP/JSON as a file exporter writes it), then `simulate` — the
//! labels follow the recorded decisions, and an approval the history only inferred stops
//! teaching `confirmed` once the log says no person gave it.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{at_home, claude_week, json_of, scratch};

/// One export request holding a `claude_code.tool_decision` record.
fn decision(session: &str, id: &str, decision: &str, source: &str) -> String {
    let attribute = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    json!({"resourceLogs": [{
        "resource": {"attributes": [attribute("service.name", "claude-code"), attribute("service.version", "2.1.190")]},
        "scopeLogs": [{"scope": {"name": "com.anthropic.claude_code.events", "version": "2.1.190"},
            "logRecords": [{"timeUnixNano": "1767261600000000000", "body": {"stringValue": "claude_code.tool_decision"},
                "attributes": [attribute("event.name", "tool_decision"), attribute("session.id", session),
                    attribute("tool_name", "Bash"), attribute("tool_use_id", id),
                    attribute("decision", decision), attribute("source", source),
                    {"key": "event.sequence", "value": {"intValue": "3"}}]}]}]}]})
    .to_string()
}

/// The collector's log: every `npm test` let through by `test_source`, the push refused at the
/// prompt; plus a torn last export.
fn write_log(home: &Path, test_source: &str) -> PathBuf {
    let dir = home.join("collector");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::new();
    for day in 0..7 {
        let session = format!("session-{day}");
        text.push_str(&decision(
            &session,
            &format!("toolu_{day}_0"),
            "accept",
            test_source,
        ));
        text.push('\n');
    }
    text.push_str(&decision("session-6", "toolu_6_1", "reject", "user_reject"));
    text.push('\n');
    text.push_str("{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\"\n");
    let path = dir.join("claude-code.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

fn simulate(home: &Path) -> Value {
    json_of(&at_home(home, &["simulate", "--json"]))
}

/// `ingest` of the Claude Code history with the collector's log at `log`; `extra` is `--json`
/// or nothing.
fn ingest_with_log(home: &Path, log: &Path, extra: &[&str]) -> Output {
    let projects = home.join(".claude/projects");
    let mut args = vec!["ingest"];
    args.extend_from_slice(extra);
    args.extend([
        "--claude",
        projects.to_str().unwrap(),
        "--otel",
        log.to_str().unwrap(),
    ]);
    at_home(home, &args)
}

/// The `assist` setting's asks and allows, and the Claude Code label counts.
fn assist_and_labels(simulated: &Value) -> ((u64, u64), Value) {
    let assist = simulated["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "assist")
        .unwrap();
    let labels = &simulated["labels"]["agents"]["claude-code"];
    (
        (
            assist["ask"].as_u64().unwrap(),
            assist["allow"].as_u64().unwrap(),
        ),
        json!({
            "observed": labels["observed"], "inferred": labels["inferred"], "unjudged": labels["unjudged"],
        }),
    )
}

#[test]
fn decisions_from_the_log_replace_the_inferred_labels() {
    let home = scratch("otel");
    claude_week(&home, "2.1.190");

    // The transcripts alone: every label inferred; the person is taken to have approved each
    // test run, so `assist` learns to let it through (design §5).
    let ingested = json_of(&at_home(&home, &["ingest", "--json"]));
    assert_eq!(ingested["events"], 8);
    assert_eq!(ingested["decisions"]["recorded"], 0);
    let (assist, labels) = assist_and_labels(&simulate(&home));
    assert_eq!(labels, json!({"observed": 0, "inferred": 8, "unjudged": 0}));
    assert_eq!(assist, (6, 2));

    // The log says a rule let every test run through: no person approved one. The tests teach
    // `observed` at most, so nothing is learned, and every run is still asked about.
    let log = write_log(&home, "config");
    let ingested = json_of(&ingest_with_log(&home, &log, &["--json"]));
    assert_eq!(ingested["events"], 8);
    assert_eq!(
        ingested["decisions"],
        json!({"recorded": 8, "joined": 8, "other_session": 0, "unmatched": 0})
    );
    assert_eq!(ingested["bad_lines"]["unterminated-last-line"], Value::Null);
    assert_eq!(ingested["bad_lines"]["torn-line"], 1);
    let (assist, labels) = assist_and_labels(&simulate(&home));
    assert_eq!(labels, json!({"observed": 1, "inferred": 7, "unjudged": 7}));
    assert_eq!(assist, (8, 0));

    // The log rewritten: a person approved each run at the prompt. The labels are observed, and
    // `assist` learns as it did from the inference.
    let log = write_log(&home, "user_temporary");
    let ingested = json_of(&ingest_with_log(&home, &log, &["--json"]));
    assert_eq!(ingested["decisions"]["joined"], 8);
    let (assist, labels) = assist_and_labels(&simulate(&home));
    assert_eq!(labels, json!({"observed": 8, "inferred": 0, "unjudged": 0}));
    assert_eq!(assist, (6, 2));

    // The text summary says what was joined.
    let text = ingest_with_log(&home, &log, &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("for 8 call(s): 8 joined, 0 on a row of another session, 0 with no call"),
        "{text}"
    );
}
