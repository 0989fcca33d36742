//! `leastgrant ingest` driven end to end: discovery in a temporary home, the JSON summary, the
//! table on disk, a second run that reads nothing, and bad input that is counted, not fatal.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::json;

use crate::support::json_of;

fn home(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "leastgrant-e2e-ingest-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("proj")).unwrap();
    dir
}

fn ingest(home: &Path, args: &[&str]) -> Output {
    let mut all = vec!["ingest"];
    all.extend_from_slice(args);
    crate::support::leastgrant(home, &home.join("proj"), &all)
}

/// Two Bash calls in a Claude Code session, one refused, and a line torn mid-write.
fn write_claude_session(home: &Path) {
    let dir = home.join(".claude/projects/-home-dev-proj");
    std::fs::create_dir_all(&dir).unwrap();
    let call = |id: &str, ts: &str, command: &str| {
        json!({"type": "assistant", "uuid": format!("a-{id}"), "sessionId": "s1", "timestamp": ts,
            "cwd": "/home/dev/proj", "version": "2.1.0", "permissionMode": "default",
            "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}})
    };
    let result = |id: &str, ts: &str, text: &str, is_error: bool| {
        json!({"type": "user", "uuid": format!("u-{id}"), "sessionId": "s1", "timestamp": ts,
            "message": {"content": [{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": is_error}]}})
    };
    let lines = [
        call("t1", "2026-03-01T10:00:00Z", "cargo test").to_string(),
        result("t1", "2026-03-01T10:00:05Z", "ok", false).to_string(),
        r#"{"type": "assistant", "uuid": "torn", "sessi"#.to_string(),
        call("t2", "2026-03-01T10:01:00Z", "git push --force").to_string(),
        result(
            "t2",
            "2026-03-01T10:01:02Z",
            "The user doesn't want to proceed with this tool use. The tool use was rejected.",
            true,
        )
        .to_string(),
    ];
    std::fs::write(dir.join("s1.jsonl"), lines.join("\n") + "\n").unwrap();
}

#[test]
fn discovers_the_history_in_home_and_reports_what_it_skipped() {
    let home = home("discover");
    write_claude_session(&home);
    let output = ingest(&home, &["--json"]);
    assert!(
        output.stderr.is_empty(),
        "no progress bar on a pipe: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let first = json_of(&output);
    assert_eq!(first["events"], 2, "{first}");
    assert_eq!(first["files"], 1, "{first}");
    assert_eq!(first["by_agent"], json!({"claude-code": 2}), "{first}");
    assert_eq!(
        first["by_outcome"],
        json!({"ran": 1, "refused": 1}),
        "{first}"
    );
    assert_eq!(first["bad_lines"]["torn-line"], 1, "{first}");
    let table = home.join(".leastgrant/data");
    assert_eq!(first["table"], table.display().to_string());
    let parquet_files = walk(&table)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .count();
    assert!(
        parquet_files >= 1,
        "no Parquet file under {}",
        table.display()
    );

    // Nothing changed: nothing is read, nothing is duplicated.
    let second = json_of(&ingest(&home, &["--json"]));
    assert_eq!(
        (second["events"].clone(), second["files"].clone()),
        (json!(2), json!(0))
    );
    assert_eq!(second["files_unchanged"], 1, "{second}");
}

/// A Cursor global database with one composer and one terminal call, where Cursor keeps it on
/// Linux, and a Codex rollout under `~/.codex/sessions`: both found without flags.
#[test]
fn discovers_cursor_and_codex_histories_in_home() {
    let home = home("discover-all");
    let global = home.join(".config/Cursor/User/globalStorage");
    std::fs::create_dir_all(&global).unwrap();
    let db = rusqlite::Connection::open(global.join("state.vscdb")).unwrap();
    db.execute_batch(
        "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
         CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);",
    )
    .unwrap();
    let bubble = json!({"bubbleId": "b1", "type": 2, "createdAt": "2026-03-01T10:00:00Z",
        "toolFormerData": {"name": "run_terminal_cmd", "toolCallId": "t1",
            "rawArgs": "{\"command\":\"cargo test\"}", "status": "completed",
            "userDecision": "rejected"}});
    let composer = json!({"composerId": "c1", "_v": 3, "createdAt": 1_772_359_200_000_i64,
        "workspaceIdentifier": {"id": "h", "uri": {"fsPath": "/home/dev/proj"}},
        "fullConversationHeadersOnly": [{"bubbleId": "b1", "type": 2}]});
    for (key, value) in [("bubbleId:c1:b1", bubble), ("composerData:c1", composer)] {
        db.execute(
            "INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)",
            rusqlite::params![key, value.to_string().into_bytes()],
        )
        .unwrap();
    }
    drop(db);
    let rollouts = home.join(".codex/sessions/2026/03/01");
    std::fs::create_dir_all(&rollouts).unwrap();
    let records = [
        json!({"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta",
            "payload": {"id": "s1", "cwd": "/home/dev/proj"}}),
        json!({"timestamp": "2026-03-01T10:00:01Z", "type": "response_item",
            "payload": {"type": "function_call", "name": "shell", "call_id": "k1",
                "arguments": "{\"command\":[\"bash\",\"-lc\",\"ls\"]}"}}),
        json!({"timestamp": "2026-03-01T10:00:02Z", "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "k1", "output": "a b"}}),
    ];
    let text: String = records.iter().map(|r| r.to_string() + "\n").collect();
    std::fs::write(rollouts.join("rollout-2026-03-01T10-00-00-s1.jsonl"), text).unwrap();

    let result = json_of(&ingest(&home, &["--json"]));
    assert_eq!(
        result["by_agent"],
        json!({"codex": 1, "cursor": 1}),
        "{result}"
    );
    assert_eq!(
        result["by_outcome"],
        json!({"ran": 1, "refused": 1}),
        "{result}"
    );
    assert_eq!(result["files"], 2, "{result}");
}

#[test]
fn a_file_that_is_not_a_cursor_database_is_counted_not_fatal() {
    let home = home("bad-cursor");
    write_claude_session(&home);
    let garbage = home.join("state.vscdb");
    std::fs::write(&garbage, b"not SQLite at all").unwrap();
    let claude = home.join(".claude/projects");
    let out = home.join("table");
    let result = json_of(&ingest(
        &home,
        &[
            "--cursor",
            garbage.to_str().unwrap(),
            "--claude",
            claude.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--json",
        ],
    ));
    assert_eq!(result["events"], 2, "{result}");
    assert_eq!(result["bad_lines"]["not-a-cursor-database"], 1, "{result}");
}

#[test]
fn text_summary_says_what_was_skipped() {
    let home = home("text");
    write_claude_session(&home);
    let output = ingest(&home, &[]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("holds 2 event(s)"), "{text}");
    assert!(text.contains("torn-line: 1"), "{text}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}
