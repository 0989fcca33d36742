//! What the end-to-end tests share: a fresh temporary home, running `leastgrant` in it with
//! nothing of this machine's environment leaking in, reading its JSON answer, and the small
//! Claude Code history several tests learn from.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

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

/// `command` set to run in `cwd` with `HOME` set to `home` and the variables that would lead
/// it to this machine's agents or state cleared.
pub fn isolated<'a>(command: &'a mut Command, home: &Path, cwd: &Path) -> &'a mut Command {
    command
        .env("HOME", home)
        .env_remove("LEASTGRANT_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("APPDATA")
        .env_remove("CODEX_HOME")
        .env_remove("COPILOT_HOME")
        .current_dir(cwd)
}

/// Runs `leastgrant args…` with `HOME` set to `home` and the discovery variables cleared, in
/// `cwd`.
pub fn leastgrant(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    isolated(
        &mut Command::new(env!("CARGO_BIN_EXE_leastgrant")),
        home,
        cwd,
    )
    .args(args)
    .output()
    .expect("leastgrant runs")
}

/// Waits for a `leastgrant args…` started with piped output, and kills it if it has not
/// finished after two minutes: a hang fails the test instead of stopping the suite. (A guard,
/// not a measurement: no test asserts a duration.)
pub fn finishing(mut child: Child, args: &[&str]) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("leastgrant {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// [`scratch`] as a home holding a project: `<home>/proj`, a git root. Returns both.
pub fn scratch_project(name: &str) -> (PathBuf, PathBuf) {
    let home = scratch(name);
    let project = home.join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    (home, project)
}

/// `ingest --claude <projects> --out <table> --json` in `home`: the summary it printed.
pub fn ingest_claude(home: &Path, projects: &Path, table: &Path) -> Value {
    json_of(&at_home(
        home,
        &[
            "ingest",
            "--claude",
            projects.to_str().unwrap(),
            "--out",
            table.to_str().unwrap(),
            "--json",
        ],
    ))
}

/// `simulate --events <table> --out <replay> --json` and `extra` in `home`: the summary it
/// printed.
pub fn simulate_events(home: &Path, table: &Path, replay: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "simulate",
        "--events",
        table.to_str().unwrap(),
        "--out",
        replay.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    json_of(&at_home(home, &args))
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
