//! Cursor IDE: real SQLite databases built with the documented schema, read through the same
//! run as every other source. Cases in `tests/data/cursor_cases.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::cursor::read_cursor;
use leastgrant_ingest::registry::SourceFile;
use leastgrant_ingest::run::run;
use leastgrant_ingest::schema::Event;
use leastgrant_ingest::table::read_table;
use rusqlite::Connection;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::support::*;

#[derive(Deserialize)]
struct CaseFile {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    id: String,
    layout: String,
    link: String,
    tool: String,
    bubble_mode: Option<i64>,
    outcome: String,
    rule: String,
    command: Option<String>,
    file_path: Option<String>,
    project: Option<String>,
    mode: Option<String>,
    is_error: Option<bool>,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(data("cursor_cases.toml")).unwrap();
    toml::from_str::<CaseFile>(&text).unwrap().case
}

const CREATED_MS: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn create_tables(db: &Connection) {
    db.execute_batch(
        "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
         CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);",
    )
    .unwrap();
}

fn put(db: &Connection, table: &str, key: &str, value: &Value) {
    db.execute(
        &format!("INSERT INTO {table} (key, value) VALUES (?1, ?2)"),
        rusqlite::params![key, value.to_string().into_bytes()],
    )
    .unwrap();
}

/// A Cursor `User/` directory: the global database with one composer per case, and the
/// workspace storage that links composers to projects. Returns the global database's path.
fn build_install(root: &Path, cases: &[Case]) -> PathBuf {
    let global_dir = root.join("User/globalStorage");
    std::fs::create_dir_all(&global_dir).unwrap();
    let global_path = global_dir.join("state.vscdb");
    let global = Connection::open(&global_path).unwrap();
    create_tables(&global);

    let beta = root.join("User/workspaceStorage/beta-hash");
    std::fs::create_dir_all(&beta).unwrap();
    std::fs::write(
        beta.join("workspace.json"),
        json!({"folder": "file:///home/dev/beta"}).to_string(),
    )
    .unwrap();
    let gamma = root.join("User/workspaceStorage/gamma-hash");
    std::fs::create_dir_all(&gamma).unwrap();
    std::fs::write(
        gamma.join("workspace.json"),
        json!({"folder": "file:///home/dev/gamma%20project"}).to_string(),
    )
    .unwrap();
    let gamma_db = Connection::open(gamma.join("state.vscdb")).unwrap();
    create_tables(&gamma_db);
    let listed: Vec<Value> = cases
        .iter()
        .filter(|c| c.link == "storage-list")
        .map(|c| json!({"composerId": c.id, "createdAt": CREATED_MS, "unifiedMode": "agent"}))
        .collect();
    put(
        &gamma_db,
        "ItemTable",
        "composer.composerData",
        &json!({"allComposers": listed}),
    );

    for (n, case) in cases.iter().enumerate() {
        let tool: Value = serde_json::from_str(&case.tool)
            .unwrap_or_else(|e| panic!("case {}: tool is not JSON: {e}", case.id));
        let created = CREATED_MS + n as i64 * 60_000;
        let iso = |offset_s: i64| {
            let secs = (created / 1000 + offset_s) % 86_400;
            format!(
                "2026-01-01T{:02}:{:02}:{:02}.000Z",
                secs / 3600,
                secs / 60 % 60,
                secs % 60
            )
        };
        let user = json!({"bubbleId": "b-user", "type": 1, "text": "please", "createdAt": iso(0)});
        let mut call = json!({"bubbleId": "b-tool", "type": 2, "capabilityType": 15,
            "createdAt": iso(5), "toolFormerData": tool});
        if let Some(mode) = case.bubble_mode {
            call["unifiedMode"] = json!(mode);
        }
        let mut composer =
            json!({"composerId": case.id, "createdAt": created, "unifiedMode": "agent"});
        match case.link.as_str() {
            "identifier" => {
                composer["workspaceIdentifier"] =
                    json!({"id": "alpha-hash", "uri": {"fsPath": "/home/dev/alpha"}})
            }
            "storage-hash" => composer["workspaceIdentifier"] = json!({"id": "beta-hash"}),
            _ => {}
        }
        match case.layout.as_str() {
            "legacy" => composer["conversation"] = json!([user, call]),
            layout => {
                if layout == "headers" {
                    composer["_v"] = json!(3);
                    composer["fullConversationHeadersOnly"] = json!([{"bubbleId": "b-user", "type": 1}, {"bubbleId": "b-tool", "type": 2}]);
                }
                for bubble in [&user, &call] {
                    let id = bubble["bubbleId"].as_str().unwrap();
                    put(
                        &global,
                        "cursorDiskKV",
                        &format!("bubbleId:{}:{id}", case.id),
                        bubble,
                    );
                }
            }
        }
        put(
            &global,
            "cursorDiskKV",
            &format!("composerData:{}", case.id),
            &composer,
        );
    }
    global_path
}

fn by_session(events: Vec<Event>) -> BTreeMap<String, Event> {
    events
        .into_iter()
        .map(|e| (e.session_id.clone(), e))
        .collect()
}

#[test]
fn every_case_reads_as_documented() {
    let dir = scratch("cursor-cases");
    let cases = cases();
    let path = build_install(&dir, &cases);
    let mut bad = BadCounts::default();
    let events = by_session(read_cursor(&path, &mut bad));
    assert!(bad.is_empty(), "unexpected bad input: {:?}", bad.0);
    assert_eq!(events.len(), cases.len(), "one event per case");
    let mut found = Mismatches::default();
    for case in &cases {
        let Some(event) = events.get(&case.id) else {
            found.fail(format!("{}: no event", case.id));
            continue;
        };
        let id = case.id.as_str();
        found.call(
            id,
            event,
            &Pinned {
                outcome: case.outcome.clone(),
                rule: case.rule.clone(),
                // A case's `tool` is the tool record written, not the name read.
                tool: None,
                command: case.command.clone(),
                file_path: case.file_path.clone(),
            },
        );
        found.check(
            id,
            "project",
            Some(&event.project_root),
            case.project.as_ref(),
        );
        found.check(
            id,
            "mode",
            event.permission_mode.as_ref(),
            case.mode.as_ref(),
        );
        found.check(id, "is_error", event.is_error, case.is_error);
        found.check(id, "agent", Some(event.agent.as_str()), Some("cursor"));
        found.check(
            id,
            "source_kind",
            Some(event.source_kind.as_str()),
            Some("cursor-vscdb"),
        );
        found.check(id, "attended", Some(event.attended), Some(None));
        found.check(id, "seq", Some(event.seq), Some(1));
        if event.ts_us.is_none() {
            found.fail(format!("{id}: no time"));
        }
    }
    found.assert_none();
}

#[test]
fn damaged_rows_are_counted_and_the_rest_is_read() {
    let dir = scratch("cursor-damaged");
    let cases = cases();
    let path = build_install(&dir, &cases);
    let db = Connection::open(&path).unwrap();
    db.execute(
        "INSERT INTO cursorDiskKV (key, value) VALUES ('composerData:torn', ?1)",
        [b"{\"composerId\": \"torn\", \"fullConv".to_vec()],
    )
    .unwrap();
    db.execute(
        "INSERT INTO cursorDiskKV (key, value) VALUES ('composerData:null', NULL)",
        [],
    )
    .unwrap();
    put(
        &db,
        "cursorDiskKV",
        "composerData:cut-short",
        &json!({"composerId": "cut-short", "_v": 3, "createdAt": CREATED_MS,
            "fullConversationHeadersOnly": [{"bubbleId": "never-written", "type": 2}]}),
    );
    // A value stored as TEXT rather than BLOB is still JSON.
    db.execute(
        "INSERT INTO cursorDiskKV (key, value) VALUES ('composerData:as-text', ?1)",
        [json!({"composerId": "as-text", "createdAt": CREATED_MS, "conversation": [
            {"bubbleId": "t", "type": 2, "toolFormerData": {"name": "read_file", "rawArgs": "{\"target_file\":\"a.rs\"}", "status": "completed"}},
            // A status no source documents (a newer Cursor's): unmatched, and counted.
            {"bubbleId": "u", "type": 2, "toolFormerData": {"name": "run_terminal_command_v2", "toolCallId": "call-new", "rawArgs": "{\"command\":\"make\"}", "status": "awaiting_review"}}
        ]})
        .to_string()],
    )
    .unwrap();
    drop(db);
    let mut bad = BadCounts::default();
    let events = read_cursor(&path, &mut bad);
    assert_eq!(events.len(), cases.len() + 2);
    assert_eq!(bad.0.get("bad-json"), Some(&2), "{:?}", bad.0);
    assert_eq!(
        bad.0.get("cursor-unknown-tool-status"),
        Some(&1),
        "{:?}",
        bad.0
    );
    let new = events
        .iter()
        .find(|e| e.tool_use_id.as_deref() == Some("call-new"))
        .unwrap();
    assert_eq!(
        (new.outcome_rule.as_str(), new.command.as_deref()),
        ("cursor-no-result", Some("make"))
    );
    assert_eq!(bad.0.get("missing-bubble"), Some(&1), "{:?}", bad.0);

    let not_a_database = dir.join("garbage.vscdb");
    std::fs::write(&not_a_database, b"this is not SQLite").unwrap();
    let mut bad = BadCounts::default();
    assert!(read_cursor(&not_a_database, &mut bad).is_empty());
    assert_eq!(bad.0.get("not-a-cursor-database"), Some(&1), "{:?}", bad.0);
}

/// Cursor holds the database open in WAL mode: committed work still in the log is read, the
/// files are left exactly as they were, and work added later is picked up by the next run
/// without duplicating anything.
#[test]
fn a_live_wal_database_is_read_without_disturbing_it() {
    let dir = scratch("cursor-wal");
    let cases = cases();
    let path = build_install(&dir, &cases);
    let live = Connection::open(&path).unwrap();
    live.execute_batch("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;")
        .unwrap();
    let add_composer = |id: &str| {
        let call = json!({"bubbleId": "c", "type": 2, "createdAt": "2026-02-01T10:00:00Z",
            "toolFormerData": {"name": "run_terminal_cmd", "toolCallId": id, "rawArgs": "{\"command\":\"make\"}", "status": "completed", "result": "{\"exitCodeV2\":0}"}});
        put(&live, "cursorDiskKV", &format!("bubbleId:{id}:c"), &call);
        put(
            &live,
            "cursorDiskKV",
            &format!("composerData:{id}"),
            &json!({"composerId": id, "_v": 3, "createdAt": CREATED_MS,
                "fullConversationHeadersOnly": [{"bubbleId": "c", "type": 2}]}),
        );
    };
    add_composer("in-the-log");
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    assert!(wal.is_file(), "the test needs the write to sit in the log");
    let before = (std::fs::read(&path).unwrap(), std::fs::read(&wal).unwrap());

    let table = dir.join("table");
    let source = vec![SourceFile {
        source: &leastgrant_ingest::cursor::SOURCE,
        path: path.clone(),
    }];
    let first = run(source.clone(), &table, &|_| {}).unwrap();
    assert_eq!(first.events, cases.len() as u64 + 1);
    assert_eq!(
        (std::fs::read(&path).unwrap(), std::fs::read(&wal).unwrap()),
        before,
        "reading changed Cursor's files"
    );

    let again = run(source.clone(), &table, &|_| {}).unwrap();
    assert_eq!((again.files_read, again.new_events), (0, 0));

    add_composer("later");
    let grown = run(source, &table, &|_| {}).unwrap();
    assert_eq!(grown.events, cases.len() as u64 + 2);
    assert_eq!(grown.duplicates + grown.new_events, cases.len() as u64 + 2);
    let sessions: std::collections::BTreeSet<String> = read_table(&table)
        .unwrap()
        .into_iter()
        .map(|e| e.session_id)
        .collect();
    assert!(sessions.contains("in-the-log") && sessions.contains("later"));
    drop(live);
}
