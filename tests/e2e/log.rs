//! `leastgrant log` through the real binaries: the real `leastgrant-hook` decides calls for four
//! agents in two projects and writes the ledger (plus a rotated file with an older line), then
//! `leastgrant log` lists them newest first and filters by agent, project, verdict, what the
//! agent was told, time and reason code, each with what decided it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{json_of, leastgrant};

fn hook_binary() -> PathBuf {
    let hook = Path::new(env!("CARGO_BIN_EXE_leastgrant")).with_file_name("leastgrant-hook");
    assert!(
        hook.exists(),
        "no leastgrant-hook next to leastgrant: `cargo build -p leastgrant-hook` first"
    );
    hook
}

fn run_hook(home: &Path, agent: &str, input: &[u8]) {
    let mut child = Command::new(hook_binary())
        .args(["--agent", agent])
        .env("HOME", home)
        .env_remove("LEASTGRANT_HOME")
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

fn log(home: &Path, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["log", "--json"];
    all.extend_from_slice(args);
    json_of(&leastgrant(home, home, &all))
        .as_array()
        .unwrap()
        .clone()
}

fn agents(entries: &[Value]) -> Vec<&str> {
    entries
        .iter()
        .map(|e| e["agent"].as_str().unwrap())
        .collect()
}

#[test]
fn log_lists_the_hooks_decisions_newest_first_and_filters_them() {
    let home = std::env::temp_dir().join(format!("leastgrant-e2e-log-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let state = home.join(".leastgrant");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("rules.json"),
        r#"{"allow": ["Bash(npm test)"], "deny": ["Bash(rm -rf build)"], "defaultMode": "ask"}"#,
    )
    .unwrap();
    // An older line in a rotated file.
    let old = json!({"v": 1, "kind": "decision", "ts_us": 1_000_000, "agent": "claude-code",
        "event": "PreToolUse", "project": "/w/app", "tool_name": "Bash", "tool_input": {"command": "ls"},
        "verdict": "allow", "answered": "allow", "reasons": ["rule.allow"], "headline": "your rule `Bash(ls)` allows it",
        "envelope": null, "setting": null});
    std::fs::write(state.join("ledger.jsonl.1"), format!("{old}\n")).unwrap();

    let calls: [(&str, Value); 4] = [
        (
            "claude-code",
            json!({"session_id": "s1", "cwd": "/w/app", "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": "npm test"}, "tool_use_id": "t1"}),
        ),
        (
            "codex",
            json!({"session_id": "s2", "cwd": "/w/app", "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": ["cat", "/w/app/.env"]}, "tool_use_id": "c1"}),
        ),
        (
            "gemini",
            json!({"session_id": "g1", "cwd": "/w/other", "hook_event_name": "BeforeTool",
                "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf build"}}),
        ),
        (
            "copilot",
            json!({"timestamp": 1, "cwd": "/w/app", "toolName": "bash", "toolArgs": "{\"command\":\"ls\"}",
                "toolResult": {"resultType": "success"}}),
        ),
    ];
    for (agent, payload) in &calls {
        run_hook(&home, agent, payload.to_string().as_bytes());
    }
    run_hook(&home, "cursor", b"{");

    // Newest first: the unreadable input, gemini, codex, claude-code, then the rotated line; the
    // copilot call that ran is not a decision.
    let all = log(&home, &["--limit", "0"]);
    assert_eq!(
        agents(&all),
        ["cursor", "gemini", "codex", "claude-code", "claude-code"]
    );
    let times: Vec<i64> = all.iter().map(|e| e["ts_us"].as_i64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    assert_eq!(all[4]["ts_us"], 1_000_000);
    assert_eq!(agents(&log(&home, &["--limit", "2"])), ["cursor", "gemini"]);

    let codex = log(&home, &["--agent", "codex"]);
    assert_eq!(codex.len(), 1);
    assert_eq!(codex[0]["verdict"], "ask");
    assert_eq!(codex[0]["answered"], "deny");
    assert!(codex[0]["evidence"].as_str().unwrap().starts_with("floor."));
    assert!(codex[0].get("envelope").is_some());

    assert_eq!(
        agents(&log(&home, &["--verdict", "deny"])),
        ["cursor", "gemini"]
    );
    assert_eq!(
        agents(&log(&home, &["--answered", "deny"])),
        ["cursor", "gemini", "codex"]
    );
    assert_eq!(agents(&log(&home, &["--reason", "floor"])), ["codex"]);
    assert_eq!(agents(&log(&home, &["--reason", "rule.deny"])), ["gemini"]);
    assert_eq!(agents(&log(&home, &["--reason", "rule"])).len(), 3);
    assert_eq!(
        agents(&log(&home, &["--reason", "hook.unreadable"])),
        ["cursor"]
    );
    assert_eq!(agents(&log(&home, &["--project", "/w/other"])), ["gemini"]);
    assert_eq!(
        agents(&log(&home, &["--project", "/w/app", "--verdict", "allow"])),
        ["claude-code", "claude-code"]
    );
    let since = times[2].to_string();
    let until = times[1].to_string();
    assert_eq!(
        agents(&log(&home, &["--since", &since, "--until", &until])),
        ["gemini", "codex"]
    );
    assert!(log(&home, &["--since", "1d", "--agent", "claude-code"]).len() == 1);

    let gemini = &log(&home, &["--agent", "gemini"])[0];
    assert_eq!(
        gemini["evidence"],
        "rule.deny: your rule `Bash(rm -rf build)` denies it"
    );

    // In words: the time, agent, verdict, what decided it.
    let out = leastgrant(
        &home,
        &home,
        &["log", "--verdict", "deny", "--agent", "gemini"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("gemini  deny  BeforeTool  Bash: rm -rf build"),
        "{text}"
    );
    assert!(
        text.contains("why: rule.deny: your rule `Bash(rm -rf build)` denies it"),
        "{text}"
    );
    let out = leastgrant(&home, &home, &["log", "--agent", "codex"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("codex  ask (told deny)"), "{text}");

    let out = leastgrant(&home, &home, &["log", "--since", "tomorrow"]);
    assert_eq!(out.status.code(), Some(3));
    let _ = std::fs::remove_dir_all(&home);
}
