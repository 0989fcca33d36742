//! The hook's own start (it starts at C's `main`, not std's: `main.rs`), through the real
//! binary: what std's start-up did that the hook relies on still holds. A reader of standard
//! output that went away is an `EPIPE`, not a kill by `SIGPIPE` (the exit code stays 0); and
//! with standard output and error closed the hook still decides and writes one whole ledger line
//! (a closed standard descriptor is opened on `/dev/null`, so no file it opens takes its place).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::conformance::{hook_binary, scratch};

fn payload(id: &str) -> Vec<u8> {
    json!({"session_id": "s", "cwd": "/w/app", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "git status"}, "tool_use_id": id})
    .to_string()
    .into_bytes()
}

fn ledger(home: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(home.join("state/ledger.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Starts `command` (the hook, or a shell that execs it) under `home` with standard output on
/// `stdout`, writes one payload whose call id is `call_id`, and returns the ledger's lines once
/// it exited 0.
fn run_once(home: &Path, mut command: Command, stdout: Stdio, call_id: &str) -> Vec<Value> {
    let mut child = command
        .env("HOME", home)
        .env("LEASTGRANT_HOME", home.join("state"))
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&payload(call_id))
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    ledger(home)
}

#[test]
fn a_reader_that_went_away_does_not_kill_the_hook() {
    let home = scratch("start-epipe");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut hook = Command::new(hook_binary());
    hook.args(["--agent", "claude-code"]);
    let lines = run_once(&home, hook, Stdio::from(writer), "toolu_epipe");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["call_id"], "toolu_epipe");
}

#[test]
fn with_standard_output_and_error_closed_the_hook_still_decides_and_logs() {
    let home = scratch("start-closed");
    let mut shell = Command::new("sh");
    shell.args([
        "-c",
        r#"exec "$0" --agent claude-code >&- 2>&-"#,
        hook_binary(),
    ]);
    let lines = run_once(&home, shell, Stdio::null(), "toolu_closed");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["call_id"], "toolu_closed");
    assert_eq!(lines[0]["kind"], "decision");
}
