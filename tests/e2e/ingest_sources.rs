//! `leastgrant ingest` against what a repository, another process or time can do to its sources
//! (issue 18), through the real binary: special files and link loops skipped by name, a place
//! that does not exist refused, sources keyed by their canonical path (two spellings, a rename, a
//! deletion released or kept), two ingests into one table, and a ledger pair split by rotation.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::{finishing, isolated, json_of, leastgrant};

fn scratch(name: &str) -> PathBuf {
    crate::support::scratch(&format!("sources-{name}"))
}

/// A Claude Code session file with one call per `(id, command)`, each with a result.
fn write_session(path: &Path, session: &str, calls: &[(&str, &str)]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut lines = Vec::new();
    for (n, (id, command)) in calls.iter().enumerate() {
        let ts = format!("2026-03-01T10:{n:02}:00Z");
        lines.push(
            json!({"type": "assistant", "uuid": format!("a-{session}-{id}"),
            "sessionId": session, "timestamp": ts, "cwd": "/home/dev/proj",
            "permissionMode": "default",
            "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash",
                "input": {"command": command}}]}}),
        );
        lines.push(json!({"type": "user", "uuid": format!("u-{session}-{id}"),
            "sessionId": session, "timestamp": ts,
            "message": {"content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]}}));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// Runs `leastgrant args…` in `home`, killed if it hangs ([`finishing`]).
fn finishing_at(home: &Path, args: &[&str]) -> Output {
    let child = isolated(
        &mut Command::new(env!("CARGO_BIN_EXE_leastgrant")),
        home,
        home,
    )
    .args(args)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    finishing(child, args)
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The skipped files of a JSON summary, as file names by reason.
fn skipped_names(summary: &Value) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut names = std::collections::BTreeMap::new();
    for (reason, paths) in summary["skipped_files"].as_object().unwrap() {
        let mut files: Vec<String> = paths
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                Path::new(p.as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        files.sort();
        names.insert(reason.clone(), files);
    }
    names
}

#[test]
fn special_files_and_link_loops_are_skipped_by_name_without_reading() {
    let home = scratch("special");
    let projects = home.join(".claude/projects");
    let project = projects.join("-home-dev-proj");
    write_session(
        &project.join("s1.jsonl"),
        "s1",
        &[("t1", "ls"), ("t2", "pwd")],
    );
    std::os::unix::fs::symlink("/dev/zero", project.join("zero.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", project.join("random.jsonl")).unwrap();
    let fifo = project.join("fifo.jsonl");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let _socket = std::os::unix::net::UnixListener::bind(project.join("socket.jsonl")).unwrap();
    // A sparse file past the size limit: nothing is on disk, and nothing may be read.
    std::fs::File::create(project.join("huge.jsonl"))
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    // Two links to an ancestor: without a visited set the walk is exponential, then endless.
    std::os::unix::fs::symlink("..", project.join("up")).unwrap();
    std::os::unix::fs::symlink("..", project.join("up-again")).unwrap();
    std::os::unix::fs::symlink("../..", projects.join("top")).unwrap();

    let out = home.join("table");
    let output = finishing_at(
        &home,
        &[
            "ingest",
            "--json",
            "--out",
            path_str(&out),
            "--claude",
            path_str(&projects),
        ],
    );
    let summary = json_of(&output);
    assert_eq!(summary["events"], 2, "{summary}");
    assert_eq!(summary["files"], 1, "the session is read once: {summary}");
    assert_eq!(summary["duplicates"], 0, "{summary}");
    let skipped = skipped_names(&summary);
    assert_eq!(
        skipped
            .get("not-a-regular-file")
            .cloned()
            .unwrap_or_default(),
        ["fifo.jsonl", "random.jsonl", "socket.jsonl", "zero.jsonl"],
        "{summary}"
    );
    assert_eq!(
        skipped
            .get("file-over-size-limit")
            .cloned()
            .unwrap_or_default(),
        ["huge.jsonl"],
        "{summary}"
    );
    assert_eq!(summary["bad_lines"]["not-a-regular-file"], 4, "{summary}");
    assert_eq!(summary["bad_lines"]["file-over-size-limit"], 1, "{summary}");

    // The same rules for files named on the command line, and the names in the text report.
    let output = finishing_at(
        &home,
        &[
            "ingest",
            "--out",
            path_str(&home.join("table-named")),
            "--claude",
            path_str(&project.join("zero.jsonl")),
            "--claude",
            path_str(&fifo),
            "--specstory",
            path_str(&project.join("random.jsonl")),
            "--cursor",
            path_str(&fifo),
            "--codex",
            path_str(&project.join("huge.jsonl")),
            "--ledger",
            path_str(&fifo),
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    for line in [
        format!(
            "not-a-regular-file: {}",
            project.join("zero.jsonl").display()
        ),
        format!("not-a-regular-file: {}", fifo.display()),
        format!(
            "not-a-regular-file: {}",
            project.join("random.jsonl").display()
        ),
        format!(
            "file-over-size-limit: {}",
            project.join("huge.jsonl").display()
        ),
    ] {
        assert!(text.contains(&line), "`{line}` not in:\n{text}");
    }
}

#[test]
fn a_place_that_does_not_exist_is_an_error_for_every_source() {
    let home = scratch("missing");
    for flag in ["claude", "specstory", "cursor", "codex", "ledger"] {
        let out = home.join(format!("table-{flag}"));
        let output = leastgrant(
            &home,
            &home,
            &[
                "ingest",
                "--out",
                path_str(&out),
                &format!("--{flag}"),
                "/nonexistent/place",
            ],
        );
        assert_eq!(output.status.code(), Some(3), "--{flag}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "`--{flag} /nonexistent/place`: no such file or directory"
            )),
            "--{flag}: {stderr}"
        );
        assert!(!out.exists(), "--{flag}: no table is made");
    }
}

fn ingest_json(home: &Path, args: &[&str]) -> Value {
    let mut all = vec!["ingest", "--json"];
    all.extend_from_slice(args);
    json_of(&leastgrant(home, home, &all))
}

fn manifest_keys(table: &Path) -> Vec<String> {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(table.join("manifest.json")).unwrap()).unwrap();
    manifest["sources"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// What a table holds, from a run that reads nothing new: comparable across tables.
fn holdings(summary: &Value) -> Value {
    json!({"events": summary["events"], "by_agent": summary["by_agent"],
        "by_outcome": summary["by_outcome"]})
}

#[test]
fn one_folder_named_two_ways_is_one_source_per_file() {
    let home = scratch("spellings");
    let projects = home.join("d/projects");
    write_session(&projects.join("-p/s1.jsonl"), "s1", &[("t1", "ls")]);
    write_session(&projects.join("-p/s2.jsonl"), "s2", &[("t2", "pwd")]);
    let out = home.join("table");
    let summary = ingest_json(
        &home,
        &[
            "--out",
            path_str(&out),
            "--claude",
            path_str(&projects),
            "--claude",
            "./d/projects/",
            "--claude",
            "d/../d/projects",
        ],
    );
    assert_eq!(summary["files"], 2, "{summary}");
    assert_eq!(summary["duplicates"], 0, "{summary}");
    let canonical = std::fs::canonicalize(&projects).unwrap();
    assert_eq!(
        manifest_keys(&out),
        [
            canonical.join("-p/s1.jsonl").display().to_string(),
            canonical.join("-p/s2.jsonl").display().to_string(),
        ]
    );
    // Named another way on the next run: nothing is read again.
    let again = ingest_json(
        &home,
        &["--out", path_str(&out), "--claude", "./d/projects"],
    );
    assert_eq!(
        (again["files"].clone(), again["events"].clone()),
        (json!(0), json!(2))
    );
}

#[test]
fn a_renamed_source_takes_its_new_path_and_is_not_duplicated() {
    let home = scratch("rename");
    let projects = home.join("projects");
    write_session(
        &projects.join("-p/s1.jsonl"),
        "s1",
        &[("t1", "ls"), ("t2", "pwd")],
    );
    let out = home.join("table");
    let args = ["--out", path_str(&out), "--claude", path_str(&projects)];
    let first = ingest_json(&home, &args);
    assert_eq!(first["events"], 2);
    std::fs::rename(
        projects.join("-p/s1.jsonl"),
        projects.join("-p/renamed.jsonl"),
    )
    .unwrap();
    let second = ingest_json(&home, &args);
    assert_eq!(second["events"], 2, "{second}");
    assert_eq!(second["duplicates"], 0, "{second}");
    assert_eq!(
        second["new_events"], 2,
        "the events move to the new path: {second}"
    );
    assert_eq!(second["released"], 1, "{second}");
    let keys = manifest_keys(&out);
    assert_eq!(keys.len(), 1);
    assert!(keys[0].ends_with("/-p/renamed.jsonl"), "{keys:?}");
}

/// Session `a` holds calls t1, t2; session `b` was resumed from it and holds a copy of t1 and
/// its own t3. `a` is deleted (Claude Code's cleanup): by default the table then holds what a
/// fresh ingest of `b` holds (t1 claimed by `b` now); with `--keep-deleted`, what it held.
#[test]
fn a_deleted_source_is_released_or_kept_on_purpose() {
    let home = scratch("deleted");
    let projects = home.join("projects");
    let a = projects.join("-p/a.jsonl");
    write_session(&a, "a", &[("t1", "ls"), ("t2", "pwd")]);
    write_session(
        &projects.join("-p/b.jsonl"),
        "b",
        &[("t1", "ls"), ("t3", "id")],
    );
    let released = home.join("released");
    let kept = home.join("kept");
    for table in [&released, &kept] {
        let first = ingest_json(
            &home,
            &["--out", path_str(table), "--claude", path_str(&projects)],
        );
        assert_eq!(
            (first["events"].clone(), first["duplicates"].clone()),
            (json!(3), json!(1))
        );
    }
    std::fs::remove_file(&a).unwrap();

    let after = ingest_json(
        &home,
        &[
            "--out",
            path_str(&released),
            "--claude",
            path_str(&projects),
        ],
    );
    let fresh = ingest_json(
        &home,
        &[
            "--out",
            path_str(&home.join("fresh")),
            "--claude",
            path_str(&projects),
        ],
    );
    assert_eq!(holdings(&after), holdings(&fresh), "{after} vs {fresh}");
    assert_eq!(after["events"], 2);
    assert_eq!(after["released"], 1, "{after}");
    let settled = ingest_json(
        &home,
        &[
            "--out",
            path_str(&released),
            "--claude",
            path_str(&projects),
        ],
    );
    assert_eq!(settled["files"], 0, "{settled}");
    assert_eq!(holdings(&settled), holdings(&fresh));

    let keeping = ingest_json(
        &home,
        &[
            "--out",
            path_str(&kept),
            "--keep-deleted",
            "--claude",
            path_str(&projects),
        ],
    );
    assert_eq!(keeping["kept_deleted"], 1, "{keeping}");
    assert_eq!(keeping["released"], 0, "{keeping}");
    assert_eq!(
        keeping["events"], 3,
        "the deleted session's events stay: {keeping}"
    );
    assert_eq!(manifest_keys(&kept).len(), 2);
}

/// Holds the table's lock from this process (as a running ingest does) and starts an ingest:
/// it says it waits, and finishes once the lock is let go.
#[test]
fn a_second_ingest_waits_for_the_table_with_a_message() {
    let home = scratch("lock-wait");
    let projects = home.join("projects");
    write_session(&projects.join("-p/s1.jsonl"), "s1", &[("t1", "ls")]);
    let out = home.join("table");
    std::fs::create_dir_all(&out).unwrap();
    let lock = std::fs::File::create(out.join("ingest.lock")).unwrap();
    lock.lock().unwrap();
    let mut child: Child = Command::new(env!("CARGO_BIN_EXE_leastgrant"))
        .env("HOME", &home)
        .args([
            "ingest",
            "--json",
            "--out",
            path_str(&out),
            "--claude",
            path_str(&projects),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.contains("another ingest is writing") && line.contains("waiting"),
        "{line:?}"
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "it waits while the lock is held"
    );
    lock.unlock().unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["events"], 1, "{summary}");
}

/// Two ingests of different sources into one table at the same time, several times: both exit
/// 0, and the table equals ingesting both sets one after the other.
#[test]
fn two_concurrent_ingests_into_one_table_equal_two_in_sequence() {
    let home = scratch("concurrent");
    for (name, seed) in [("x", "1"), ("y", "2")] {
        let dir = home.join(name);
        let output = leastgrant(
            &home,
            &home,
            &[
                "demo",
                "--out",
                path_str(&dir),
                "--seed",
                seed,
                "--projects",
                "6",
                "--days",
                "14",
            ],
        );
        assert!(output.status.success(), "{output:?}");
    }
    let x = home.join("x/projects");
    let y = home.join("y/projects");
    let sequential = home.join("sequential");
    ingest_json(
        &home,
        &["--out", path_str(&sequential), "--claude", path_str(&x)],
    );
    ingest_json(
        &home,
        &["--out", path_str(&sequential), "--claude", path_str(&y)],
    );
    let want = holdings(&ingest_json(
        &home,
        &[
            "--out",
            path_str(&sequential),
            "--claude",
            path_str(&x),
            "--claude",
            path_str(&y),
        ],
    ));
    for round in 0..4 {
        let table = home.join(format!("together-{round}"));
        let spawn = |places: &Path| {
            Command::new(env!("CARGO_BIN_EXE_leastgrant"))
                .env("HOME", &home)
                .args([
                    "ingest",
                    "--json",
                    "--out",
                    path_str(&table),
                    "--claude",
                    path_str(places),
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (first, second) = (spawn(&x), spawn(&y));
        for child in [first, second] {
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "round {round}: {output:?}");
        }
        let check = ingest_json(
            &home,
            &[
                "--out",
                path_str(&table),
                "--claude",
                path_str(&x),
                "--claude",
                path_str(&y),
            ],
        );
        assert_eq!(
            check["files"], 0,
            "round {round}: nothing left unrecorded: {check}"
        );
        assert_eq!(holdings(&check), want, "round {round}");
        let mut keys = manifest_keys(&table);
        keys.sort();
        let mut want_keys = manifest_keys(&sequential);
        want_keys.sort();
        assert_eq!(keys, want_keys, "round {round}");
    }
}

/// The hook rotated its ledger between a decision and its `ran` line: read as one ledger, the
/// call ran (not a refusal).
#[test]
fn a_pair_split_by_rotation_is_one_call_that_ran() {
    let home = scratch("rotation");
    let state = home.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let decision = json!({"v": 1, "kind": "decision", "ts_us": 1767225600000000i64,
        "agent": "claude-code", "event": "PreToolUse", "session_id": "s1", "call_id": "toolu_1",
        "cwd": "/w/app", "project": "/w/app", "permission_mode": "default", "attended": true,
        "tool_name": "Bash", "tool_input": {"command": "npm test"}, "verdict": "ask",
        "answered": "ask", "reasons": [], "headline": "", "signatures": [], "envelope": null,
        "setting": null});
    let ran = json!({"v": 1, "kind": "ran", "ts_us": 1767225605000000i64, "agent": "claude-code",
        "event": "PostToolUse", "session_id": "s1", "call_id": "toolu_1", "ok": true});
    std::fs::write(state.join("ledger.jsonl.1"), format!("{decision}\n")).unwrap();
    std::fs::write(state.join("ledger.jsonl"), format!("{ran}\n")).unwrap();
    let summary = ingest_json(
        &home,
        &[
            "--out",
            path_str(&home.join("table")),
            "--ledger",
            path_str(&state),
        ],
    );
    assert_eq!(summary["by_outcome"], json!({"ran": 1}), "{summary}");
    assert_eq!(summary["bad_lines"], json!({}), "{summary}");
}
