//! The ledger under load: many hook processes at once lose no line and tear none; rotation
//! under concurrent appends keeps every line; fifty hook processes crossing the rotation size
//! keep the documented bound (`ledger.rs`); a huge tool input, or hundreds of long strings,
//! make a small line.

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

/// Fifty hook processes at once, on a ledger just short of its rotation size with every
/// rotation slot taken: one rotation happens, the oldest rotation is dropped (no fifth file),
/// every file stays within the documented bound, and every process's line is written once.
#[test]
fn fifty_hook_processes_at_the_rotation_size_keep_the_bound_and_every_line() {
    use leastgrant_hook::ledger::{KEPT, MAX_LINE, ROTATE_AT};
    let home = Arc::new(scratch("bound"));
    let state = home.join("state");
    let mut filler = String::new();
    let mut n = 0;
    while (filler.len() as u64) < ROTATE_AT - 4096 {
        filler.push_str(&format!(
            "{{\"kind\":\"filler\",\"call_id\":\"filler-{n}\",\"pad\":\"{}\"}}\n",
            "x".repeat(900)
        ));
        n += 1;
    }
    std::fs::write(state.join("ledger.jsonl"), &filler).unwrap();
    for k in 1..=KEPT {
        std::fs::write(
            state.join(format!("ledger.jsonl.{k}")),
            format!("{{\"kind\":\"filler\",\"call_id\":\"rotation-{k}\"}}\n"),
        )
        .unwrap();
    }
    #[cfg(unix)]
    for name in [
        "ledger.jsonl",
        "ledger.jsonl.1",
        "ledger.jsonl.2",
        "ledger.jsonl.3",
    ] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(state.join(name), std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let workers: Vec<_> = (0..50)
        .map(|i| {
            let home = Arc::clone(&home);
            std::thread::spawn(move || {
                let payload = json!({"session_id": "s", "cwd": "/w/app", "permission_mode": "default",
                    "hook_event_name": "PreToolUse", "tool_name": "Bash",
                    "tool_input": {"command": format!("echo {i}")},
                    "tool_use_id": format!("toolu_{i}")});
                run_hook(&home, "claude-code", payload.to_string().as_bytes())
            })
        })
        .collect();
    for worker in workers {
        assert_eq!(worker.join().unwrap().0, Some(0));
    }
    let all = lines(&state);
    let ids: Vec<&str> = all.iter().filter_map(|l| l["call_id"].as_str()).collect();
    for i in 0..50 {
        let id = format!("toolu_{i}");
        assert_eq!(ids.iter().filter(|x| **x == id).count(), 1, "{id}");
    }
    assert_eq!(ids.iter().filter(|x| x.starts_with("filler-")).count(), n);
    // The oldest rotation was dropped; the others moved down one.
    assert!(!ids.contains(&"rotation-3"));
    assert!(ids.contains(&"rotation-1") && ids.contains(&"rotation-2"));
    assert!(!state.join(format!("ledger.jsonl.{}", KEPT + 1)).exists());
    let bound = ROTATE_AT + 50 * MAX_LINE as u64;
    for k in 0..=KEPT {
        let name = if k == 0 {
            "ledger.jsonl".to_string()
        } else {
            format!("ledger.jsonl.{k}")
        };
        // The writer that passes the size rotates after its line, so when every process
        // opened the file before the rotation no current file is left: that is size 0.
        let len = std::fs::metadata(state.join(&name)).map_or(0, |m| m.len());
        assert!(len <= bound, "{name}: {len} bytes, past {bound}");
    }
}

/// A call whose input holds hundreds of long strings still makes one line within
/// [`MAX_LINE`](leastgrant_hook::ledger::MAX_LINE), with every field of the line kept.
#[test]
fn a_call_with_hundreds_of_long_strings_makes_a_line_within_the_bound() {
    let home = scratch("many-strings");
    let edits: Vec<Value> = (0..300)
        .map(|i| json!({"old_string": format!("{i}{}", "o".repeat(4000)), "new_string": "n".repeat(4000)}))
        .collect();
    let payload = json!({"session_id": "s", "cwd": "/w/app", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "MultiEdit",
        "tool_input": {"file_path": "/w/app/a.rs", "edits": edits}, "tool_use_id": "toolu_many"});
    let (code, stdout, _) = run_hook(&home, "claude-code", payload.to_string().as_bytes());
    assert_eq!(code, Some(0), "{stdout}");
    let ledger = std::fs::read_to_string(home.join("state/ledger.jsonl")).unwrap();
    assert!(
        ledger.len() <= leastgrant_hook::ledger::MAX_LINE,
        "a {} byte line",
        ledger.len()
    );
    let line: Value = serde_json::from_str(ledger.trim_end()).unwrap();
    for key in [
        "kind",
        "call_id",
        "verdict",
        "tool_name",
        "tool_input",
        "reasons",
    ] {
        assert!(line.get(key).is_some(), "{key} kept: {line}");
    }
    assert_eq!(line["call_id"], "toolu_many");
}
