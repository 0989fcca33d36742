//! Cursor IDE history: the `state.vscdb` SQLite store. Composers (`composerData:<id>`) order
//! their bubbles (`bubbleId:<composer>:<bubble>`); a bubble with `toolFormerData` is one tool
//! call. The project comes from the composer's `workspaceIdentifier`, else from the workspace
//! storage that lists the composer.
//!
//! Cursor keeps the database open in WAL mode, so it is never opened in place: the database and
//! its `-wal` are copied to a private directory and read there, which sees committed work still
//! in the log and cannot disturb (or be blocked by) a running Cursor.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::Value;

use crate::common::{
    BadCounts, command_and_path, excerpt, open_regular, parse_timestamp_us, project_key,
    read_regular, stable_id, unread,
};
use crate::schema::{Event, Outcome, UNKNOWN_PROJECT, agent};
use crate::source::{Flag, Machine, Source, just_the_file};

/// The stored agent name.
const AGENT: &str = agent::CURSOR;

/// Cursor's global `state.vscdb`, with its write-ahead log.
pub const SOURCE: Source = Source {
    kind: "cursor-vscdb",
    flag: Flag {
        long: "cursor",
        value_name: "PATH",
        help: "A Cursor `state.vscdb` (repeatable) [default: Cursor's global database on this \
               machine]",
    },
    default_places,
    discover: just_the_file,
    files,
    max_file_bytes: MAX_DATABASE_BYTES,
    // A database is read through SQLite, from a private copy, not from the bytes.
    read: |path, _contents, bad| read_cursor(path, bad),
};

fn default_places(machine: &Machine<'_>) -> Vec<PathBuf> {
    let appdata = (machine.env)("APPDATA").map(PathBuf::from);
    default_paths(machine.home, appdata.as_deref())
}

/// The largest database (or log) read: Cursor's global database grows to gigabytes.
pub const MAX_DATABASE_BYTES: u64 = 16 << 30;

/// The largest `workspace.json` read.
const MAX_WORKSPACE_JSON_BYTES: u64 = 1 << 20;

/// The database and its log: committed work not yet in the database is part of it.
fn files(path: &Path) -> Vec<PathBuf> {
    std::iter::once(path.to_path_buf())
        .chain(wal_of(path))
        .collect()
}

/// The global databases present under `home` (Linux, macOS, and Windows via `appdata`).
pub fn default_paths(home: &Path, appdata: Option<&Path>) -> Vec<PathBuf> {
    let mut candidates = vec![
        home.join(".config/Cursor/User/globalStorage/state.vscdb"),
        home.join("Library/Application Support/Cursor/User/globalStorage/state.vscdb"),
    ];
    if let Some(appdata) = appdata {
        candidates.push(appdata.join("Cursor/User/globalStorage/state.vscdb"));
    }
    // Anything there but a directory: one that is not a regular file is named as skipped.
    candidates.retain(|p| p.exists() && !p.is_dir());
    candidates
}

/// The database's write-ahead log, when it has one: committed work not yet in the database.
fn wal_of(path: &Path) -> Option<PathBuf> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    Some(PathBuf::from(wal)).filter(|w| w.is_file())
}

/// Reads every tool call in a Cursor global database.
pub fn read_cursor(path: &Path, bad: &mut BadCounts) -> Vec<Event> {
    let Some(snapshot) = Snapshot::take(path, bad) else {
        return Vec::new();
    };
    let Some(db) = snapshot.open(bad) else {
        return Vec::new();
    };
    let projects = workspace_projects(path, bad);
    let source_path = path.display().to_string();
    let mut events = Vec::new();
    let composers = match key_values(&db, "composerData:") {
        Ok(rows) => rows,
        Err(_) => {
            bad.add("not-a-cursor-database");
            return Vec::new();
        }
    };
    for (key, value) in composers {
        let Some(composer) = value.as_deref().and_then(parse_json) else {
            bad.add("bad-json");
            continue;
        };
        let id = key.trim_start_matches("composerData:").to_string();
        let context = ComposerContext::new(&id, &composer, &projects, &source_path);
        for (seq, (bubble_key, bubble)) in bubbles(&db, &id, &composer, bad).into_iter().enumerate()
        {
            if let Some(event) = tool_event(&context, &bubble_key, &bubble, seq, bad) {
                events.push(event);
            }
        }
    }
    events
}

/// What every call of one composer shares.
struct ComposerContext<'a> {
    id: &'a str,
    project_root: String,
    mode: Option<String>,
    created_us: Option<i64>,
    source_path: &'a str,
}

impl<'a> ComposerContext<'a> {
    fn new(
        id: &'a str,
        composer: &Value,
        projects: &WorkspaceProjects,
        source_path: &'a str,
    ) -> Self {
        let identifier = composer.get("workspaceIdentifier");
        let from_identifier = identifier
            .and_then(|w| w.pointer("/uri/fsPath").or_else(|| w.pointer("/uri/path")))
            .and_then(Value::as_str)
            .map(str::to_string);
        let from_storage_hash = identifier
            .and_then(|w| w.get("id"))
            .and_then(Value::as_str)
            .and_then(|hash| projects.by_storage.get(hash).cloned());
        let project_root = from_identifier
            .or(from_storage_hash)
            .or_else(|| projects.by_composer.get(id).cloned())
            .unwrap_or_else(|| UNKNOWN_PROJECT.to_string());
        ComposerContext {
            id,
            project_root,
            mode: composer
                .get("unifiedMode")
                .or_else(|| composer.get("forceMode"))
                .and_then(mode_name),
            created_us: composer.get("createdAt").and_then(epoch_ms_us),
            source_path,
        }
    }
}

/// The composer's bubbles in conversation order: the headers' order over separate rows, the
/// embedded `conversation` of legacy composers, else every row of the composer by time.
fn bubbles(
    db: &Connection,
    composer_id: &str,
    composer: &Value,
    bad: &mut BadCounts,
) -> Vec<(String, Value)> {
    if let Some(conversation) = composer.get("conversation").and_then(Value::as_array) {
        return conversation
            .iter()
            .enumerate()
            .map(|(i, bubble)| {
                let id = bubble
                    .get("bubbleId")
                    .and_then(Value::as_str)
                    .map_or_else(|| i.to_string(), str::to_string);
                (format!("composerData:{composer_id}/{id}"), bubble.clone())
            })
            .collect();
    }
    let prefix = format!("bubbleId:{composer_id}:");
    if let Some(headers) = composer
        .get("fullConversationHeadersOnly")
        .and_then(Value::as_array)
    {
        let mut found = Vec::new();
        for header in headers {
            let Some(bubble_id) = header.get("bubbleId").and_then(Value::as_str) else {
                continue;
            };
            let key = format!("{prefix}{bubble_id}");
            match value_of(db, &key) {
                Ok(Some(bytes)) => match parse_json(&bytes) {
                    Some(bubble) => found.push((key, bubble)),
                    None => bad.add("bad-json"),
                },
                // Headers are written before the bubble; a missing one is a conversation cut
                // short, not damage.
                Ok(None) => bad.add("missing-bubble"),
                Err(_) => bad.add("unreadable-row"),
            }
        }
        return found;
    }
    let mut found: Vec<(String, Value)> = Vec::new();
    match key_values(db, &prefix) {
        Ok(rows) => {
            for (key, value) in rows {
                match value.as_deref().and_then(parse_json) {
                    Some(bubble) => found.push((key, bubble)),
                    None => bad.add("bad-json"),
                }
            }
        }
        Err(_) => bad.add("unreadable-row"),
    }
    found.sort_by_key(|(key, bubble)| (bubble_time_us(bubble), key.clone()));
    found
}

/// The event for a bubble that is a tool call.
fn tool_event(
    context: &ComposerContext<'_>,
    bubble_key: &str,
    bubble: &Value,
    seq: usize,
    bad: &mut BadCounts,
) -> Option<Event> {
    let tool = bubble.get("toolFormerData").filter(|t| t.is_object())?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let name = text(tool.get("name")).filter(|n| !n.is_empty())?;
    // `rawArgs` is what the model sent; `params` is Cursor's normalised form.
    let input_text = text(tool.get("rawArgs"))
        .filter(|t| !t.trim().is_empty())
        .or_else(|| text(tool.get("params")))
        .unwrap_or_else(|| "{}".to_string());
    let input: Value = serde_json::from_str(&input_text).unwrap_or(Value::Null);
    let params: Value = text(tool.get("params"))
        .and_then(|p| serde_json::from_str(&p).ok())
        .unwrap_or(Value::Null);
    let (mut command, mut file_path) = command_and_path(&input);
    if command.is_none() && file_path.is_none() {
        (command, file_path) = command_and_path(&params);
    }
    let result: Value = match tool.get("result") {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(other) => other.clone(),
        None => Value::Null,
    };
    let (outcome, rule, is_error) = outcome_of(tool, &result);
    if rule == "cursor-no-result"
        && let Some(status) = tool.get("status").and_then(Value::as_str)
        && status != "loading"
    {
        // A status this reader does not know (a newer Cursor's): left unmatched, and counted.
        bad.add("cursor-unknown-tool-status");
    }
    let ts_us = bubble_time_us(bubble).or(context.created_us);
    if ts_us.is_none() {
        bad.add("missing-timestamp");
    }
    let call_id = text(tool.get("toolCallId"));
    let bubble_id = bubble_key.rsplit([':', '/']).next().unwrap_or(bubble_key);
    let result_text = result
        .get("output")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| text(tool.get("error")))
        .or_else(|| result.as_str().map(str::to_string))
        .or_else(|| (!result.is_null()).then(|| result.to_string()));
    let mode = bubble
        .get("unifiedMode")
        .and_then(mode_name)
        .or_else(|| context.mode.clone());
    Some(Event {
        event_id: stable_id(&[AGENT, context.id, call_id.as_deref().unwrap_or(bubble_id)]),
        agent: AGENT.to_string(),
        agent_version: None,
        source: format!("{}#{bubble_key}", context.source_path),
        source_kind: SOURCE.kind.to_string(),
        project_key: project_key(&context.project_root),
        project_root: context.project_root.clone(),
        session_id: context.id.to_string(),
        seq: u32::try_from(seq).unwrap_or(u32::MAX),
        ts_us,
        cwd: text(params.get("cwd")).or_else(|| text(input.get("cwd"))),
        git_branch: None,
        permission_mode: mode,
        // Cursor's auto-run and allow-list settings are not in the database: whether anyone
        // was asked is unknown.
        attended: None,
        tool_name: name,
        tool_input: input_text,
        command,
        file_path,
        outcome,
        is_error,
        is_sidechain: false,
        tool_use_id: call_id,
        outcome_rule: rule.to_string(),
        denial_kind: text(tool.get("userDecision")).filter(|d| d == "rejected"),
        result_excerpt: result_text.map(|t| excerpt(&t, 2048)),
        decided_by: None,
    })
}

/// How a Cursor tool call ended, the rule that said so, and whether it was flagged an error.
fn outcome_of(tool: &Value, result: &Value) -> (Outcome, &'static str, Option<bool>) {
    let status = tool.get("status").and_then(Value::as_str).unwrap_or("");
    if tool.get("userDecision").and_then(Value::as_str) == Some("rejected") {
        return (Outcome::Refused, "cursor-user-decision-rejected", None);
    }
    if result.get("rejected").and_then(Value::as_bool) == Some(true) {
        return (Outcome::Refused, "cursor-result-rejected", None);
    }
    if status == "cancelled" {
        return (Outcome::Interrupted, "cursor-status-cancelled", None);
    }
    if result.get("notInterrupted").and_then(Value::as_bool) == Some(false) {
        return (Outcome::Interrupted, "cursor-interrupted", None);
    }
    if status == "error" {
        return (Outcome::Errored, "cursor-status-error", Some(true));
    }
    if status == "completed" {
        let exit = result
            .get("exitCodeV2")
            .or_else(|| result.get("exitCode"))
            .and_then(Value::as_i64);
        return match exit {
            Some(code) if code != 0 => (Outcome::Errored, "cursor-exit-code", Some(true)),
            _ => (Outcome::Ran, "cursor-status-completed", Some(false)),
        };
    }
    // `loading` (still running when the database was written) or no status at all.
    (Outcome::Unmatched, "cursor-no-result", None)
}

/// A mode as stored: Cursor writes names in newer composers and numbers in bubbles.
fn mode_name(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(match n.as_i64() {
            Some(1) => "ask".to_string(),
            Some(2) => "agent".to_string(),
            Some(5) => "plan".to_string(),
            _ => n.to_string(),
        }),
        _ => None,
    }
}

/// A bubble's time: its ISO `createdAt`, else the client start time (float epoch ms).
fn bubble_time_us(bubble: &Value) -> Option<i64> {
    match bubble.get("createdAt") {
        Some(Value::String(s)) => parse_timestamp_us(s),
        Some(number @ Value::Number(_)) => epoch_ms_us(number),
        _ => None,
    }
    .or_else(|| {
        bubble
            .pointer("/timingInfo/clientStartTime")
            .and_then(epoch_ms_us)
    })
}

fn epoch_ms_us(value: &Value) -> Option<i64> {
    let ms = value.as_f64()?;
    // Anything before 2000 or after 2100 is not a time Cursor wrote.
    (9.4e11..4.2e12)
        .contains(&ms)
        .then(|| (ms * 1000.0).round() as i64)
}

fn parse_json(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice(bytes).ok()
}

/// Rows of `cursorDiskKV` whose key starts with `prefix`, in key order. The range on the unique
/// key index keeps this a seek, not a scan.
fn key_values(db: &Connection, prefix: &str) -> rusqlite::Result<Vec<(String, Option<Vec<u8>>)>> {
    let mut upper = prefix.to_string();
    upper.push('\u{10FFFF}');
    let mut statement = db
        .prepare("SELECT key, value FROM cursorDiskKV WHERE key >= ?1 AND key < ?2 ORDER BY key")?;
    let rows = statement.query_map([prefix, upper.as_str()], |row| {
        Ok((row.get::<_, String>(0)?, bytes_of(row.get_ref(1)?)))
    })?;
    rows.collect()
}

fn value_of(db: &Connection, key: &str) -> rusqlite::Result<Option<Vec<u8>>> {
    db.query_row(
        "SELECT value FROM cursorDiskKV WHERE key = ?1",
        [key],
        |row| Ok(bytes_of(row.get_ref(0)?)),
    )
    .optional()
    .map(Option::flatten)
}

/// Values are JSON stored as BLOB or TEXT, and may be NULL.
fn bytes_of(value: ValueRef<'_>) -> Option<Vec<u8>> {
    match value {
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        _ => None,
    }
}

/// Which project each workspace storage directory, and each composer it lists, belongs to.
#[derive(Default)]
struct WorkspaceProjects {
    by_storage: HashMap<String, String>,
    by_composer: HashMap<String, String>,
}

/// Reads `…/User/workspaceStorage/*/workspace.json` (and each one's composer list) beside the
/// global database at `…/User/globalStorage/state.vscdb`.
fn workspace_projects(global: &Path, bad: &mut BadCounts) -> WorkspaceProjects {
    let mut projects = WorkspaceProjects::default();
    let Some(user) = global.parent().and_then(Path::parent) else {
        return projects;
    };
    let Ok(entries) = std::fs::read_dir(user.join("workspaceStorage")) else {
        return projects;
    };
    for entry in entries.filter_map(Result::ok) {
        let dir = entry.path();
        let Some(folder) = read_regular(&dir.join("workspace.json"), MAX_WORKSPACE_JSON_BYTES)
            .ok()
            .and_then(|b| parse_json(&b))
            .and_then(|w| {
                w.get("folder")
                    .or_else(|| w.get("workspace"))
                    .and_then(Value::as_str)
                    .map(path_of_uri)
            })
        else {
            continue;
        };
        let hash = entry.file_name().to_string_lossy().into_owned();
        let database = dir.join("state.vscdb");
        if database.is_file()
            && let Some(snapshot) = Snapshot::take(&database, bad)
            && let Some(db) = snapshot.open(bad)
        {
            for composer in listed_composers(&db) {
                projects.by_composer.insert(composer, folder.clone());
            }
        }
        projects.by_storage.insert(hash, folder);
    }
    projects
}

/// The composers a workspace database lists: Cursor 2's `allComposers`, Cursor 3's
/// `selectedComposerIds`.
fn listed_composers(db: &Connection) -> Vec<String> {
    let value: Option<Vec<u8>> = db
        .query_row(
            "SELECT value FROM ItemTable WHERE key = 'composer.composerData'",
            [],
            |row| Ok(bytes_of(row.get_ref(0)?)),
        )
        .optional()
        .ok()
        .flatten()
        .flatten();
    let Some(data) = value.as_deref().and_then(parse_json) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = data
        .get("allComposers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            c.get("composerId")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    ids.extend(
        data.get("selectedComposerIds")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str().map(str::to_string)),
    );
    ids
}

/// `file:///home/me/p%20x` → `/home/me/p x`; `file:///c%3A/Users/me` → `c:/Users/me`.
fn path_of_uri(uri: &str) -> String {
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned();
    let bytes = decoded.as_bytes();
    // A Windows drive after the leading slash.
    if bytes.first() == Some(&b'/')
        && bytes.get(2) == Some(&b':')
        && bytes.get(1).is_some_and(u8::is_ascii_alphabetic)
    {
        return decoded.get(1..).unwrap_or(&decoded).to_string();
    }
    decoded
}

/// A private copy of a database and its log, removed when dropped.
struct Snapshot {
    dir: PathBuf,
    database: PathBuf,
}

static SNAPSHOTS: AtomicU64 = AtomicU64::new(0);

impl Snapshot {
    fn take(path: &Path, bad: &mut BadCounts) -> Option<Snapshot> {
        let dir = std::env::temp_dir().join(format!(
            "leastgrant-cursor-{}-{}",
            std::process::id(),
            SNAPSHOTS.fetch_add(1, Ordering::Relaxed)
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        if builder.create(&dir).is_err() {
            bad.add("unreadable-file");
            return None;
        }
        let snapshot = Snapshot {
            database: dir.join("state.vscdb"),
            dir,
        };
        let mut copies = vec![(path.to_path_buf(), snapshot.database.clone())];
        if let Some(wal) = wal_of(path) {
            copies.push((wal, snapshot.dir.join("state.vscdb-wal")));
        }
        for (from, to) in copies {
            // Only a regular file is copied, through a descriptor checked to be one.
            let copied = open_regular(&from, MAX_DATABASE_BYTES).and_then(|mut file| {
                let mut copy = std::fs::File::create(&to).map_err(|_| unread::UNREADABLE)?;
                std::io::copy(&mut file, &mut copy).map_err(|_| unread::UNREADABLE)
            });
            if let Err(reason) = copied {
                bad.add(reason);
                return None;
            }
        }
        Some(snapshot)
    }

    fn open(&self, bad: &mut BadCounts) -> Option<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        match Connection::open_with_flags(&self.database, flags) {
            Ok(db) => Some(db),
            Err(_) => {
                bad.add("not-a-cursor-database");
                None
            }
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_become_paths() {
        assert_eq!(path_of_uri("file:///home/me/p%20x"), "/home/me/p x");
        assert_eq!(path_of_uri("file:///c%3A/Users/me"), "c:/Users/me");
        assert_eq!(path_of_uri("file:///bad%zz"), "/bad%zz");
    }

    #[test]
    fn modes_are_named() {
        assert_eq!(mode_name(&serde_json::json!(2)).as_deref(), Some("agent"));
        assert_eq!(
            mode_name(&serde_json::json!("plan")).as_deref(),
            Some("plan")
        );
        assert_eq!(mode_name(&serde_json::json!(9)).as_deref(), Some("9"));
        assert_eq!(mode_name(&serde_json::json!(null)), None);
    }
}
