//! The ledger under load: many hook processes at once lose no line and tear none; rotation
//! under concurrent appends keeps every line; a huge tool input makes a small line.

use std::collections::BTreeSet;
use std::sync::Arc;

use leastgrant_hook::ledger::Ledger;
use serde_json::{Value, json};

use crate::conformance::{run_hook, scratch};

fn lines(dir: &std::path::Path) -> Vec<Value> {
    let mut out = Vec::new();
    for name in [
        "ledger.jsonl.3",
        "ledger.jsonl.2",
        "ledger.jsonl.1",
        "ledger.jsonl",
    ] {
        if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
            for line in text.lines() {
                out.push(
                    serde_json::from_str(line)
                        .unwrap_or_else(|e| panic!("a torn line ({e}): {line}")),
                );
            }
        }
    }
    out
}

#[test]
fn concurrent_hook_processes_lose_and_tear_no_line() {
    let home = Arc::new(scratch("concurrent"));
    let workers: Vec<_> = (0..24)
        .map(|i| {
            let home = Arc::clone(&home);
            std::thread::spawn(move || {
                let payload = json!({"session_id": "s", "cwd": "/w/app", "permission_mode": "default",
                    "hook_event_name": "PreToolUse", "tool_name": "Bash",
                    "tool_input": {"command": format!("echo {i} {}", "x".repeat(3000))},
                    "tool_use_id": format!("toolu_{i}")});
                run_hook(&home, "claude-code", payload.to_string().as_bytes())
            })
        })
        .collect();
    for worker in workers {
        assert_eq!(worker.join().unwrap().0, Some(0));
    }
    let ids: BTreeSet<String> = lines(&home.join("state"))
        .iter()
        .map(|l| l["call_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 24);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join("state/ledger.jsonl"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn rotation_under_concurrent_appends_keeps_every_line() {
    let home = scratch("rotation");
    let dir = Arc::new(home.join("state"));
    let workers: Vec<_> = (0..8)
        .map(|t| {
            let dir = Arc::clone(&dir);
            std::thread::spawn(move || {
                let ledger = Ledger::new(&dir).rotating_at(12_000);
                for n in 0..50 {
                    ledger
                        .append(&json!({"kind": "decision", "call_id": format!("{t}-{n}")}))
                        .unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let all = lines(&dir);
    let ids: BTreeSet<String> = all
        .iter()
        .map(|l| l["call_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!((all.len(), ids.len()), (400, 400));
    assert!(dir.join("ledger.jsonl.1").exists(), "it rotated");
}

#[test]
fn a_huge_tool_input_makes_a_small_ledger_line() {
    let home = scratch("huge");
    let content = "A".repeat(50 * 1024 * 1024);
    let payload = json!({"session_id": "s", "cwd": "/w/app", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": "/w/app/big.txt", "content": content}, "tool_use_id": "toolu_big"});
    let (code, stdout, _) = run_hook(&home, "claude-code", payload.to_string().as_bytes());
    assert_eq!(code, Some(0));
    assert!(
        stdout.len() < 2048 && stdout.contains("permissionDecision"),
        "{stdout}"
    );
    let ledger = std::fs::read_to_string(home.join("state/ledger.jsonl")).unwrap();
    assert!(ledger.len() < 8 * 1024, "a {} byte line", ledger.len());
    assert!(ledger.contains("[cut]"));
}
