//! `leastgrant ingest --otel` driven end to end: a Claude Code history, then the collector's log
//! of who decided its calls (OTLP/JSON as a file exporter writes it), then `simulate` — the
//! labels follow the recorded decisions, and an approval the history only inferred stops
//! teaching `confirmed` once the log says no person gave it.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::json_of;

fn home() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leastgrant-e2e-otel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn leastgrant(home: &Path, args: &[&str]) -> Output {
    crate::support::leastgrant(home, home, args)
}

const REFUSAL: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/// Seven attended sessions on seven days in January 2026, each running `npm test`, and on the
/// last a `git push` the person refused: as far as the transcripts tell, a person approved each
/// test run.
fn write_history(home: &Path) {
    let dir = home.join(".claude/projects/-home-dev-proj");
    std::fs::create_dir_all(&dir).unwrap();
    for day in 0..7 {
        let session = format!("session-{day}");
        let mut lines = Vec::new();
        for (n, command, refused) in [(0, "npm test", false), (1, "git push origin main", true)] {
            if n == 1 && day != 6 {
                continue;
            }
            let id = format!("toolu_{day}_{n}");
            let ts = format!("2026-01-{:02}T10:{n:02}:00Z", day + 1);
            lines.push(json!({"type": "assistant", "uuid": format!("a-{id}"), "sessionId": session, "timestamp": ts,
                "cwd": "/home/dev/proj", "version": "2.1.190", "permissionMode": "default",
                "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}}));
            let (content, is_error) = if refused {
                (REFUSAL, true)
            } else {
                ("ok", false)
            };
            lines.push(json!({"type": "user", "uuid": format!("u-{id}"), "sessionId": session, "timestamp": ts,
                "message": {"content": [{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error}]}}));
        }
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(dir.join(format!("{session}.jsonl")), text).unwrap();
    }
}

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
    json_of(&leastgrant(home, &["simulate", "--json"]))
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
    let home = home();
    write_history(&home);
    let projects = home.join(".claude/projects");
    let projects = projects.to_str().unwrap();

    // The transcripts alone: every label inferred; the person is taken to have approved each
    // test run, so `assist` learns to let it through (design §5).
    let ingested = json_of(&leastgrant(&home, &["ingest", "--json"]));
    assert_eq!(ingested["events"], 8);
    assert_eq!(ingested["decisions"]["recorded"], 0);
    let (assist, labels) = assist_and_labels(&simulate(&home));
    assert_eq!(labels, json!({"observed": 0, "inferred": 8, "unjudged": 0}));
    assert_eq!(assist, (6, 2));

    // The log says a rule let every test run through: no person approved one. The tests teach
    // `observed` at most, so nothing is learned, and every run is still asked about.
    let log = write_log(&home, "config");
    let ingested = json_of(&leastgrant(
        &home,
        &[
            "ingest",
            "--json",
            "--claude",
            projects,
            "--otel",
            log.to_str().unwrap(),
        ],
    ));
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
    let ingested = json_of(&leastgrant(
        &home,
        &[
            "ingest",
            "--json",
            "--claude",
            projects,
            "--otel",
            log.to_str().unwrap(),
        ],
    ));
    assert_eq!(ingested["decisions"]["joined"], 8);
    let (assist, labels) = assist_and_labels(&simulate(&home));
    assert_eq!(labels, json!({"observed": 8, "inferred": 0, "unjudged": 0}));
    assert_eq!(assist, (6, 2));

    // The text summary says what was joined.
    let text = leastgrant(
        &home,
        &[
            "ingest",
            "--claude",
            projects,
            "--otel",
            log.to_str().unwrap(),
        ],
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("for 8 call(s): 8 joined, 0 on a row of another session, 0 with no call"),
        "{text}"
    );
}
