//! The agents' record shapes as they are at the end of 2026 (research/transcripts.md and
//! landscape-2026.md), in hand-written files under `tests/data/agents2026/`: Claude Code 2.1.x
//! denial kinds, sub-agent layout and Windows-written transcripts; Codex forks, sub-agents,
//! escalations and record types the reader does not know.

use std::collections::BTreeMap;

use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::registry::SourceFile;
use leastgrant_ingest::run::run;
use leastgrant_ingest::schema::{Event, Outcome};

use crate::support::*;

const CLAUDE_PROJECT: &str = "agents2026/claude/projects/C--Users-dev-app";
const CLAUDE_SESSION: &str = "5b1c0e7a-1111-4222-8333-444455556666";

fn by_call(events: &[Event]) -> BTreeMap<String, &Event> {
    events
        .iter()
        .map(|e| (e.tool_use_id.clone().unwrap_or_default(), e))
        .collect()
}

fn outcome_of<'a>(events: &'a BTreeMap<String, &Event>, call: &str) -> (Outcome, &'a str) {
    let event = events
        .get(call)
        .unwrap_or_else(|| panic!("{call}: no event"));
    (event.outcome, event.outcome_rule.as_str())
}

/// Only the session and its sub-agent's transcript are found: not the sub-agent's
/// `.meta.json`, a workflow's `journal.jsonl`, a spilled output or `sessions-index.json`.
#[test]
fn claude_discovery_finds_the_session_and_its_subagent() {
    let root = data("agents2026/claude/projects");
    let mut found: Vec<String> = leastgrant_ingest::claude::discover(&root)
        .iter()
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            format!("C--Users-dev-app/{CLAUDE_SESSION}.jsonl"),
            format!("C--Users-dev-app/{CLAUDE_SESSION}/subagents/agent-a7f3.jsonl"),
        ]
    );
}

/// 2.1.x writes `toolDenialKind` with each denial: the classifier's (`automode-blocked`) is the
/// `classifier` rule replay reads as the classifier's decision, a PreToolUse hook's deny
/// (marked `permission-rule` too) is `hook`, a permission rule's is `denial-kind-rule`; a call
/// stopped because a parallel sibling errored did not run (`cancelled`). The
/// file was written on Windows: a BOM, CRLF line ends, no newline after the last record (whose
/// result is still read), a `C:\` working directory.
#[test]
fn claude_2_1_denials_and_a_windows_written_transcript() {
    let path = data(&format!("{CLAUDE_PROJECT}/{CLAUDE_SESSION}.jsonl"));
    let mut bad = BadCounts::default();
    let events = read_source(&leastgrant_ingest::claude::SOURCE, &path, &mut bad);
    let calls = by_call(&events);
    assert_eq!(events.len(), 9);
    assert_eq!(
        outcome_of(&calls, "toolu_c1"),
        (Outcome::Denied, "classifier")
    );
    assert_eq!(outcome_of(&calls, "toolu_c2"), (Outcome::Denied, "hook"));
    assert_eq!(
        outcome_of(&calls, "toolu_c3"),
        (Outcome::Denied, "denial-kind-rule")
    );
    assert_eq!(outcome_of(&calls, "toolu_c4"), (Outcome::Ran, "result"));
    assert_eq!(outcome_of(&calls, "toolu_c5"), (Outcome::Ran, "result"));
    // Parallel calls: one failed, so its sibling was stopped before it ran (not errored).
    assert_eq!(
        outcome_of(&calls, "toolu_c7"),
        (Outcome::Errored, "is-error")
    );
    assert_eq!(
        outcome_of(&calls, "toolu_c8"),
        (Outcome::Cancelled, "sibling-errored")
    );
    // The tool's own input check failed: errored, by its own rule.
    assert_eq!(
        outcome_of(&calls, "toolu_c9"),
        (Outcome::Errored, "tool-use-error")
    );
    // The last record has no newline after it: read, and counted as such.
    assert_eq!(outcome_of(&calls, "toolu_c6"), (Outcome::Ran, "result"));
    for event in &events {
        assert_eq!(event.permission_mode.as_deref(), Some("auto"));
        assert_eq!(event.attended, Some(false));
        assert_eq!(event.session_id, CLAUDE_SESSION);
        assert_eq!(event.project_key, "c:/users/dev/app", "{}", event.source);
        assert_eq!(event.agent_version.as_deref(), Some("2.1.280"));
    }
    assert_eq!(
        calls["toolu_c1"].denial_kind.as_deref(),
        Some("automode-blocked")
    );
    assert_eq!(
        calls["toolu_c3"].file_path.as_deref(),
        Some(r"C:\Users\dev\.ssh\id_ed25519")
    );
    assert_eq!(calls["toolu_c4"].tool_name, "mcp__github__create_issue");
    assert_eq!(
        bad.0,
        BTreeMap::from([
            // `turn_end`: a type no other parser confirms, counted, the file still read.
            ("claude-unknown-record-type".to_string(), 1),
            ("last-line-without-newline".to_string(), 1),
        ])
    );
}

/// A sub-agent's file under `<session>/subagents/` carries the parent's session id; its refusal
/// is the sub-agent wording.
#[test]
fn claude_subagent_file_is_a_sidechain_of_its_session() {
    let path = data(&format!(
        "{CLAUDE_PROJECT}/{CLAUDE_SESSION}/subagents/agent-a7f3.jsonl"
    ));
    let mut bad = BadCounts::default();
    let events = read_source(&leastgrant_ingest::claude::SOURCE, &path, &mut bad);
    assert!(bad.0.is_empty(), "{:?}", bad.0);
    let [event] = events.as_slice() else {
        panic!("one call: {events:?}")
    };
    assert_eq!(
        (event.outcome, event.outcome_rule.as_str()),
        (Outcome::Refused, "subagent-refusal")
    );
    assert!(event.is_sidechain);
    assert_eq!(event.session_id, CLAUDE_SESSION);
    assert_eq!(event.project_key, "c:/users/dev/app");
}

fn codex_file(session: &str, start: &str) -> std::path::PathBuf {
    data(&format!(
        "agents2026/codex/sessions/2026/11/20/rollout-2026-11-20T{start}-{session}.jsonl"
    ))
}

const PARENT: &str = "019a0000-0000-7000-8000-00000000000a";
const FORK: &str = "019a0000-0000-7000-8000-00000000000b";
const CHILD: &str = "019a0000-0000-7000-8000-00000000000c";

fn read_codex(session: &str, start: &str, bad: &mut BadCounts) -> Vec<Event> {
    read_source(
        &leastgrant_ingest::codex::SOURCE,
        &codex_file(session, start),
        bad,
    )
}

/// An escalation the session went on past without an output was not let run (refused, its own
/// rule); one at the end of the file may still be waiting (unmatched). Record and item types
/// the reader does not know are counted; hosted tools with no call id are not.
#[test]
fn codex_escalations_and_unknown_types() {
    let mut bad = BadCounts::default();
    let events = read_codex(PARENT, "09-00-00", &mut bad);
    let calls = by_call(&events);
    assert_eq!(events.len(), 4);
    assert_eq!(
        outcome_of(&calls, "call_p1"),
        (Outcome::Ran, "codex-output")
    );
    assert_eq!(
        outcome_of(&calls, "call_p2"),
        (Outcome::Refused, "codex-escalation-unanswered")
    );
    assert_eq!(
        calls["call_p2"].command.as_deref(),
        Some("git push origin main")
    );
    assert_eq!(
        outcome_of(&calls, "call_p3"),
        (Outcome::Ran, "codex-output")
    );
    assert_eq!(
        outcome_of(&calls, "call_p4"),
        (Outcome::Unmatched, "no-result")
    );
    assert!(events.iter().all(|e| !e.is_sidechain));
    assert_eq!(
        bad.0,
        BTreeMap::from([
            ("codex-unknown-item-type".to_string(), 1),
            ("codex-unknown-record-type".to_string(), 1),
        ])
    );
}

/// A forked session repeats its parent's history after the parent's `session_meta`: those calls
/// get the parent's event ids (so the table stores them once), the fork's own calls its own,
/// and every row names the fork's session.
#[test]
fn codex_fork_keys_the_copied_calls_as_the_parent() {
    let mut bad = BadCounts::default();
    let parent = read_codex(PARENT, "09-00-00", &mut bad);
    let fork = read_codex(FORK, "09-10-00", &mut bad);
    let parent_ids = by_call(&parent);
    let fork_ids = by_call(&fork);
    assert_eq!(fork.len(), 2);
    assert_eq!(
        fork_ids["call_p1"].event_id, parent_ids["call_p1"].event_id,
        "the copied call is the parent's"
    );
    assert!(fork.iter().all(|e| e.session_id == FORK));
    assert!(
        !parent
            .iter()
            .any(|e| e.event_id == fork_ids["call_f1"].event_id)
    );

    let files: Vec<SourceFile> = [PARENT, FORK]
        .iter()
        .zip(["09-00-00", "09-10-00"])
        .map(|(session, start)| SourceFile {
            source: &leastgrant_ingest::codex::SOURCE,
            path: codex_file(session, start),
        })
        .collect();
    let table = scratch("agents2026-codex-fork").join("table");
    let summary = run(files, &table, &|_| {}).unwrap();
    assert_eq!((summary.events, summary.duplicates), (5, 1));
}

/// A session a thread spawned (`source: {"subagent": …}`) is a sidechain. Calls the person
/// stopped are answered with Codex's abort text before the `turn_aborted`: interrupted, not run.
#[test]
fn codex_subagent_session_and_aborted_calls() {
    let mut bad = BadCounts::default();
    let events = read_codex(CHILD, "09-20-00", &mut bad);
    assert!(bad.0.is_empty(), "{:?}", bad.0);
    let calls = by_call(&events);
    assert_eq!(events.len(), 3);
    assert!(
        events
            .iter()
            .all(|e| e.is_sidechain && e.session_id == CHILD)
    );
    assert_eq!(calls["call_c1"].command.as_deref(), Some("rg TODO"));
    assert_eq!(
        outcome_of(&calls, "call_c1"),
        (Outcome::Ran, "codex-output")
    );
    for call in ["call_c2", "call_c3"] {
        assert_eq!(
            outcome_of(&calls, call),
            (Outcome::Interrupted, "codex-aborted-by-user"),
            "{call}"
        );
    }
}

/// Gemini calls in the states a call passes through are unfinished; a state no source
/// documents is unfinished too, and counted. MCP tools keep their `mcp__<server>__<tool>` name.
#[test]
fn gemini_call_states() {
    let path = data("agents2026/gemini/tmp/0a1b2c3d/chats/session-2026-11-20T11-00-9e000026.jsonl");
    let mut bad = BadCounts::default();
    let events = read_source(&leastgrant_ingest::gemini::SOURCE, &path, &mut bad);
    let calls = by_call(&events);
    assert_eq!(events.len(), 3);
    assert_eq!(outcome_of(&calls, "g1"), (Outcome::Ran, "gemini-success"));
    assert_eq!(calls["g1"].tool_name, "mcp__github__list_issues");
    assert_eq!(
        outcome_of(&calls, "g2"),
        (Outcome::Unmatched, "gemini-unfinished")
    );
    assert_eq!(
        outcome_of(&calls, "g3"),
        (Outcome::Unmatched, "gemini-unfinished")
    );
    assert_eq!(
        bad.0,
        BTreeMap::from([("gemini-unknown-tool-status".to_string(), 1)])
    );
}
