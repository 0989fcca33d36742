//! A reader of standard output that went away (`leastgrant check --json ls | true`) ends the
//! output quietly (issue 18, item 7), through the real binary: each command that prints exits
//! with the code it exits with when its output is read — the documented 0–3, never 101 — and says
//! nothing of a panic or of printing on standard error.
//!
//! Standard output is a pipe whose reading end is closed before the command starts, so every
//! write fails with `EPIPE`, whatever the timing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use leastgrant_engine::{FrozenMeta, Settings, encode};
use serde_json::json;

use crate::support::{isolated, scratch_project};

fn scratch(name: &str) -> (PathBuf, PathBuf) {
    scratch_project(&format!("closed-{name}"))
}

fn command(home: &Path, cwd: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_leastgrant"));
    isolated(&mut command, home, cwd)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// `args` run twice: with standard output read, and with it closed. The exit codes are equal
/// and within 0–3; the closed run says nothing of a panic.
fn same_code_when_closed(home: &Path, cwd: &Path, args: &[&str]) {
    let read: Output = command(home, cwd, args)
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        !read.stdout.is_empty(),
        "{args:?} prints something: {}",
        String::from_utf8_lossy(&read.stderr)
    );
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let closed = command(home, cwd, args).stdout(writer).output().unwrap();
    let text = String::from_utf8_lossy(&closed.stderr);
    assert!(
        !text.contains("panicked") && !text.contains("failed printing"),
        "{args:?}: {text}"
    );
    assert_eq!(closed.status.code(), read.status.code(), "{args:?}: {text}");
    assert!(matches!(closed.status.code(), Some(0..=3)), "{args:?}");
}

#[test]
fn every_printing_command_ends_quietly_when_its_reader_is_gone() {
    let (home, project) = scratch("commands");
    same_code_when_closed(&home, &project, &["check", "--json", "ls"]);
    same_code_when_closed(&home, &project, &["check", "cat ~/.aws/credentials"]);
    same_code_when_closed(&home, &project, &["rules"]);
    same_code_when_closed(&home, &project, &["rules", "--json"]);
    same_code_when_closed(&home, &project, &["doctor"]);
    same_code_when_closed(&home, &project, &["doctor", "--json"]);

    let demo = home.join("demo");
    let demo_arg = demo.to_str().unwrap();
    same_code_when_closed(&home, &project, &["demo", "--out", demo_arg]);
    let transcripts = demo.join("projects");
    same_code_when_closed(
        &home,
        &project,
        &["ingest", "--claude", transcripts.to_str().unwrap()],
    );

    let envelope = home.join("envelope.lgenv");
    let meta = FrozenMeta {
        setting_id: "assist".to_string(),
        settings: Settings::default(),
        rules: Vec::new(),
        provenance: json!({}),
    };
    std::fs::write(&envelope, encode(&meta, &[])).unwrap();
    let envelope_arg = envelope.to_str().unwrap();
    same_code_when_closed(&home, &project, &["export", "--inspect", envelope_arg]);
    same_code_when_closed(
        &home,
        &project,
        &["export", "--inspect", envelope_arg, "--json"],
    );
}
