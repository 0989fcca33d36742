//! What the end-to-end tests share: a fresh temporary home, running `leastgrant` in it with
//! nothing of this machine's environment leaking in, reading its JSON answer, and the small
//! Claude Code history several tests learn from.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// A fresh empty directory for one test, `<temp>/leastgrant-e2e-<name>-<pid>`: whatever an
/// earlier run left there is removed first. `name` must differ between tests.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leastgrant-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `leastgrant args…` in `home` with `HOME` set to it ([`leastgrant`]).
pub fn at_home(home: &Path, args: &[&str]) -> Output {
    leastgrant(home, home, args)
}

/// Runs `leastgrant args…` with `HOME` set to `home` and the discovery variables cleared, in
/// `cwd`.
pub fn leastgrant(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leastgrant"))
        .env("HOME", home)
        .env_remove("LEASTGRANT_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("APPDATA")
        .env_remove("CODEX_HOME")
        .env_remove("COPILOT_HOME")
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("leastgrant runs")
}

/// The JSON a successful run printed.
pub fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// What Claude Code writes as the result of a call the person refused at the prompt.
pub const REFUSAL: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/// Seven attended Claude Code sessions (`session-0` … `session-6`) in `/home/dev/proj`, one a
/// day from 2026-01-01, each running `npm test` at 10:00 (call `toolu_<day>_0`, approved as far
/// as the transcript tells); on the last day also a `git push origin main` at 10:01
/// (`toolu_6_1`) the person refused. `version` is the Claude Code version the records carry.
pub fn claude_week(home: &Path, version: &str) {
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
                "cwd": "/home/dev/proj", "version": version, "permissionMode": "default",
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
