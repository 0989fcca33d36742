//! The Claude Code reader: the real samples' exact counts, and one generated fixture per
//! pitfall and outcome.

use std::collections::BTreeMap;

use leastgrant_ingest::claude::{discover, read_claude};
use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::schema::{Event, Outcome};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::support::*;

#[derive(Deserialize)]
struct Counts {
    file: Vec<FileCounts>,
}

#[derive(Deserialize)]
struct FileCounts {
    name: String,
    calls: usize,
    #[serde(flatten)]
    outcomes: BTreeMap<String, usize>,
}

#[test]
fn the_real_samples_have_the_pinned_counts() {
    let Some(root) = shared("claude-code") else {
        println!("skipped: ../shared/datasets/claude-code is absent");
        return;
    };
    let counts: Counts =
        toml::from_str(&std::fs::read_to_string(data("claude_counts.toml")).unwrap()).unwrap();
    let files = discover(&root);
    assert_eq!(files.len(), counts.file.len(), "{files:?}");
    for expected in &counts.file {
        let path = files
            .iter()
            .find(|f| f.file_name().unwrap().to_str() == Some(&expected.name))
            .unwrap();
        let mut bad = BadCounts::default();
        let events = read_claude(path, &std::fs::read(path).unwrap(), &mut bad);
        assert_eq!(events.len(), expected.calls, "{}", expected.name);
        let mut by_outcome: BTreeMap<String, usize> = BTreeMap::new();
        for e in &events {
            *by_outcome
                .entry(e.outcome.as_str().to_string())
                .or_insert(0) += 1;
            assert_eq!(e.attended, None, "no mode is recorded in these versions");
            assert!(e.ts_us.is_some() && !e.session_id.is_empty() && !e.project_key.is_empty());
        }
        assert_eq!(by_outcome, expected.outcomes, "{}", expected.name);
        assert!(
            bad.0.keys().all(|k| !k.contains("torn")),
            "{}: {bad:?}",
            expected.name
        );
    }
}

/// A tiny transcript builder: one JSON object per line.
struct Transcript(Vec<String>);

impl Transcript {
    fn new() -> Transcript {
        Transcript(Vec::new())
    }

    fn push(&mut self, value: Value) -> &mut Self {
        self.0.push(value.to_string());
        self
    }

    fn call(&mut self, id: &str, name: &str, input: Value) -> &mut Self {
        self.push(json!({"type": "assistant", "uuid": format!("a-{id}"), "sessionId": "s1", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/home/dev/proj", "version": "2.1.200",
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}}))
    }

    fn result(&mut self, id: &str, text: &str, is_error: bool, extra: Value) -> &mut Self {
        let mut record = json!({"type": "user", "uuid": format!("u-{id}"), "sessionId": "s1", "timestamp": "2026-03-01T10:00:01.000Z", "cwd": "/home/dev/proj",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": is_error}]}});
        if let (Some(r), Some(e)) = (record.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                r.insert(k.clone(), v.clone());
            }
        }
        self.push(record)
    }

    fn prompt(&mut self, mode: &str) -> &mut Self {
        self.push(json!({"type": "user", "uuid": format!("p-{mode}-{}", self.0.len()), "sessionId": "s1", "timestamp": "2026-03-01T09:59:00Z", "permissionMode": mode, "message": {"role": "user", "content": "go"}}))
    }

    fn bytes(&self) -> Vec<u8> {
        let mut text = self.0.join("\n");
        text.push('\n');
        text.into_bytes()
    }
}

fn read(bytes: &[u8]) -> (Vec<Event>, BadCounts) {
    let mut bad = BadCounts::default();
    let events = read_claude(std::path::Path::new("/x/s1.jsonl"), bytes, &mut bad);
    (events, bad)
}

fn outcome_of(events: &[Event], id: &str) -> (Outcome, String) {
    let e = events
        .iter()
        .find(|e| e.tool_use_id.as_deref() == Some(id))
        .unwrap_or_else(|| panic!("no event {id}"));
    (e.outcome, e.outcome_rule.clone())
}

#[test]
fn every_outcome_is_told_apart() {
    let mut t = Transcript::new();
    t.prompt("default");
    t.call("ran", "Bash", json!({"command": "ls"}))
        .result("ran", "file", false, json!({}));
    t.call("err", "Bash", json!({"command": "false"})).result(
        "err",
        "Exit code 1",
        true,
        json!({}),
    );
    t.call("ref", "Bash", json!({"command": "rm -rf x"})).result("ref", "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.", true, json!({}));
    t.call("sib", "Read", json!({"file_path": "/home/dev/proj/a"})).result("sib", "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.", true, json!({}));
    t.call("int", "Bash", json!({"command": "sleep 100"}))
        .result(
            "int",
            "The user doesn't want to proceed with this tool use.",
            true,
            json!({"toolUseResult": {"interrupted": true}}),
        );
    t.call("hook", "Bash", json!({"command": "curl x"})).result(
        "hook",
        "PreToolUse:Bash hook error: blocked",
        true,
        json!({"toolDenialKind": "permission-rule"}),
    );
    t.call("cls", "Bash", json!({"command": "x"})).result("cls", "Permission for this action was denied by the Claude Code auto mode classifier. Reason: risky", true, json!({}));
    t.call("ask", "AskUserQuestion", json!({"questions": []})).result("ask", "The user doesn't want to proceed with this tool use. The user wants to clarify these questions.", true, json!({}));
    t.call("plan", "ExitPlanMode", json!({"plan": "p"})).result("plan", "The agent proposed a plan that was rejected by the user. The user chose to stay in plan mode.", true, json!({}));
    t.call("fb", "Edit", json!({"file_path": "/home/dev/proj/a"})).result("fb", "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nuse b", true, json!({}));
    t.call("mark", "Bash", json!({"command": "make"})).result(
        "mark",
        "[Request interrupted by user for tool use]",
        true,
        json!({}),
    );
    t.call("kind", "Bash", json!({"command": "y"})).result(
        "kind",
        "rejected",
        true,
        json!({"toolDenialKind": "user-rejected"}),
    );
    t.call("none", "Bash", json!({"command": "z"}));
    let (events, bad) = read(&t.bytes());
    assert!(bad.is_empty(), "{bad:?}");
    let expect = [
        ("ran", Outcome::Ran),
        ("err", Outcome::Errored),
        ("ref", Outcome::Refused),
        ("sib", Outcome::Cancelled),
        ("int", Outcome::Interrupted),
        ("hook", Outcome::Denied),
        ("cls", Outcome::Denied),
        ("ask", Outcome::Answered),
        ("plan", Outcome::Refused),
        ("fb", Outcome::Refused),
        ("mark", Outcome::Interrupted),
        ("kind", Outcome::Refused),
        ("none", Outcome::Unmatched),
    ];
    for (id, outcome) in expect {
        assert_eq!(outcome_of(&events, id).0, outcome, "{id}");
    }
    assert_eq!(outcome_of(&events, "fb").1, "refusal-with-feedback");
    let hook = events
        .iter()
        .find(|e| e.tool_use_id.as_deref() == Some("hook"))
        .unwrap();
    assert_eq!(hook.denial_kind.as_deref(), Some("permission-rule"));
    let ran = events
        .iter()
        .find(|e| e.tool_use_id.as_deref() == Some("ran"))
        .unwrap();
    assert_eq!(
        (
            ran.command.as_deref(),
            ran.agent_version.as_deref(),
            ran.cwd.as_deref()
        ),
        (Some("ls"), Some("2.1.200"), Some("/home/dev/proj"))
    );
    assert_eq!(ran.ts_us, Some(1_772_359_200_000_000));
}

#[test]
fn the_permission_mode_is_carried_forward_and_sets_attended() {
    let mut t = Transcript::new();
    t.call("before", "Bash", json!({"command": "a"}))
        .result("before", "ok", false, json!({}));
    t.push(json!({"type": "permission-mode", "permissionMode": "plan", "sessionId": "s1"}));
    t.call("plan", "Bash", json!({"command": "b"}))
        .result("plan", "ok", false, json!({}));
    t.prompt("acceptEdits");
    t.call("accept", "Bash", json!({"command": "c"}))
        .result("accept", "ok", false, json!({}));
    t.prompt("bypassPermissions");
    t.call("bypass", "Bash", json!({"command": "d"}))
        .result("bypass", "ok", false, json!({}));
    t.prompt("someFutureMode");
    t.call("future", "Bash", json!({"command": "e"}))
        .result("future", "ok", false, json!({}));
    let (events, _) = read(&t.bytes());
    let get = |id: &str| {
        events
            .iter()
            .find(|e| e.tool_use_id.as_deref() == Some(id))
            .map(|e| (e.permission_mode.clone(), e.attended))
            .unwrap()
    };
    assert_eq!(get("before"), (None, None), "never assume default");
    assert_eq!(get("plan"), (Some("plan".into()), Some(true)));
    assert_eq!(get("accept"), (Some("acceptEdits".into()), Some(false)));
    assert_eq!(
        get("bypass"),
        (Some("bypassPermissions".into()), Some(false))
    );
    assert_eq!(get("future"), (Some("someFutureMode".into()), None));
}

#[test]
fn bad_lines_are_counted_and_the_rest_is_read() {
    let mut t = Transcript::new();
    t.call("a", "Bash", json!({"command": "a"}))
        .result("a", "ok", false, json!({}));
    let good_call = t.0.pop().unwrap();
    let good_result = t.0.pop().unwrap();
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(good_result.as_bytes()); // the call record (popped in reverse)
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(b"{\"type\":\"pr-link\",\"prNu");
    bytes.extend_from_slice(good_call.as_bytes()); // a torn record glued to the result
    bytes.extend_from_slice(b"\n{\"type\": \"user\", \"broken\n");
    bytes.extend_from_slice(b"\0\0\0{\"type\":\"system\",\"uuid\":\"s\"}\n");
    bytes.extend_from_slice(b"{\"type\":\"system\",\"uuid\":\"bad-utf8-\xff\"}\n");
    let long = format!(
        "{{\"type\":\"system\",\"uuid\":\"long\",\"content\":\"{}\"}}\n",
        "x".repeat(1_100_000)
    );
    bytes.extend_from_slice(long.as_bytes());
    bytes.extend_from_slice(b"{\"type\":\"brand-new-type\",\"uuid\":\"n\"}\n");
    bytes.extend_from_slice(b"{\"type\":\"assistant\",\"uuid\":\"partial"); // being written: no newline
    let (events, bad) = read(&bytes);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0].outcome,
        Outcome::Ran,
        "the glued result was salvaged"
    );
    for reason in [
        "glued-records",
        "torn-line",
        "nul-bytes",
        "invalid-utf8",
        "line-over-1mb",
        "claude-unknown-record-type",
        "unterminated-last-line",
    ] {
        assert_eq!(bad.0.get(reason), Some(&1), "{reason}: {bad:?}");
    }
}

#[test]
fn cloned_records_and_out_of_order_results_are_handled() {
    let mut t = Transcript::new();
    t.call("one", "Bash", json!({"command": "a"}));
    t.call("two", "Bash", json!({"command": "b"}));
    t.result("two", "second first", false, json!({}));
    t.result("one", "then first", true, json!({}));
    let copy = t.0.clone();
    t.0.extend(copy); // a resume that cloned the records (same uuids)
    t.push(json!({"type": "user", "uuid": "orphan", "message": {"content": [{"type": "tool_result", "tool_use_id": "ghost", "content": "x"}]}}));
    let (events, bad) = read(&t.bytes());
    assert_eq!(events.len(), 2);
    assert_eq!(outcome_of(&events, "one").0, Outcome::Errored);
    assert_eq!(outcome_of(&events, "two").0, Outcome::Ran);
    assert_eq!(bad.0.get("claude-duplicate-record"), Some(&4));
    assert_eq!(bad.0.get("claude-result-without-call"), Some(&1));
    let ids: std::collections::BTreeSet<_> = events.iter().map(|e| e.event_id.clone()).collect();
    assert_eq!(ids.len(), 2);
}

#[test]
fn every_layout_generation_is_discovered() {
    let root = scratch("layouts");
    let project = root.join("-home-dev-proj");
    std::fs::create_dir_all(project.join("sess-2/subagents/workflows/w1")).unwrap();
    std::fs::create_dir_all(project.join("sess-2/tool-results")).unwrap();
    for file in [
        "sess-1.jsonl",
        "agent-abc.jsonl",
        "sess-2.jsonl",
        "sess-2/subagents/agent-def.jsonl",
        "sess-2/subagents/workflows/w1/agent-x.jsonl",
        "sess-2/subagents/workflows/w1/journal.jsonl",
        "sess-2/tool-results/toolu_1.txt",
        "sessions-index.json",
    ] {
        std::fs::write(project.join(file), "").unwrap();
    }
    let found: Vec<String> = discover(&root)
        .iter()
        .map(|p| p.strip_prefix(&project).unwrap().display().to_string())
        .collect();
    // Sorted by path components: the directory `sess-2` comes before the file `sess-2.jsonl`.
    assert_eq!(
        found,
        [
            "agent-abc.jsonl",
            "sess-1.jsonl",
            "sess-2/subagents/agent-def.jsonl",
            "sess-2/subagents/workflows/w1/agent-x.jsonl",
            "sess-2.jsonl"
        ]
    );
}

#[test]
fn lines_skipped_by_the_byte_scan_change_nothing_they_could_hold() {
    let mut t = Transcript::new();
    t.call("first", "Bash", json!({"command": "a"})) // the session's cwd is now known
        .result("first", "ok", false, json!({}));
    // Whole lines of known types without a call, a result or a mode: skipped unparsed.
    t.push(json!({"type": "assistant", "uuid": "text", "message": {"content": [{"type": "text", "text": "hi"}]}}));
    t.push(json!({"type": "progress", "uuid": "p"}));
    // A call and its result spelled with escapes: the scan must not skip them.
    t.0.push(r#"{"type":"assistant","uuid":"esc","sessionId":"s1","timestamp":"2026-03-01T10:00:02Z","message":{"content":[{"type":"tool\u005fuse","id":"escaped","name":"Bash","input":{"command":"b"}}]}}"#.to_string());
    // A mode set on a line that is otherwise skippable still applies to the next call.
    t.prompt("bypassPermissions");
    t.call("after", "Bash", json!({"command": "c"}));
    // A new record type is still parsed and counted.
    t.push(json!({"type": "brand-new", "uuid": "n"}));
    let (events, bad) = read(&t.bytes());
    let ids: Vec<_> = events
        .iter()
        .filter_map(|e| e.tool_use_id.clone())
        .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(ids.contains(&"escaped".to_string()), "{ids:?}");
    let after = events
        .iter()
        .find(|e| e.tool_use_id.as_deref() == Some("after"))
        .unwrap_or_else(|| panic!("no call after the mode"));
    assert_eq!(after.permission_mode.as_deref(), Some("bypassPermissions"));
    assert_eq!(bad.0.get("claude-unknown-record-type"), Some(&1), "{bad:?}");
}
