//! The events table: written, read back (also by an independent reader when one is installed),
//! idempotent, incremental, and deduplicated across files.

use std::path::Path;
use std::process::Command;

use leastgrant_ingest::registry::SourceFile;
use leastgrant_ingest::run::run;
use leastgrant_ingest::schema::SCHEMA_VERSION;
use leastgrant_ingest::table::read_table;
use serde_json::json;

use crate::support::*;

fn call_line(id: &str, ts: &str, command: &str) -> String {
    json!({"type": "assistant", "uuid": format!("a-{id}"), "sessionId": "s1", "timestamp": ts, "cwd": "/home/dev/proj", "version": "2.1.0",
        "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}}).to_string()
}

fn result_line(id: &str, ts: &str) -> String {
    json!({"type": "user", "uuid": format!("u-{id}"), "sessionId": "s1", "timestamp": ts,
        "message": {"content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]}})
    .to_string()
}

fn transcript(calls: &[(&str, &str)]) -> String {
    let mut text = String::new();
    for (i, (id, command)) in calls.iter().enumerate() {
        let ts = format!("2026-03-01T10:00:{:02}.000Z", i);
        text.push_str(&call_line(id, &ts, command));
        text.push('\n');
        text.push_str(&result_line(id, &ts));
        text.push('\n');
    }
    text
}

fn claude(path: &Path) -> SourceFile {
    SourceFile {
        source: &leastgrant_ingest::claude::SOURCE,
        path: path.to_path_buf(),
    }
}

#[test]
fn ingesting_twice_gives_the_same_table_and_reads_nothing_again() {
    let dir = scratch("twice");
    let file = dir.join("s1.jsonl");
    std::fs::write(&file, transcript(&[("t1", "ls"), ("t2", "git status")])).unwrap();
    let out = dir.join("table");
    let first = run(vec![claude(&file)], &out, &|_| {}).unwrap();
    assert_eq!(
        (first.files_read, first.new_events, first.events),
        (1, 2, 2)
    );
    let table = read_table(&out).unwrap();
    let second = run(vec![claude(&file)], &out, &|_| {}).unwrap();
    assert_eq!(
        (
            second.files_read,
            second.files_unchanged,
            second.new_events,
            second.events
        ),
        (0, 1, 0, 2)
    );
    assert_eq!(read_table(&out).unwrap(), table);
}

/// A run stopped before it saved the manifest leaves fragments the manifest does not know: the
/// next run reads those sources again and replaces the fragments, never duplicating an event.
#[test]
fn a_run_that_never_saved_its_manifest_is_repaired_not_duplicated() {
    let dir = scratch("unsaved");
    let file = dir.join("s1.jsonl");
    std::fs::write(&file, transcript(&[("t1", "ls"), ("t2", "git status")])).unwrap();
    let out = dir.join("table");
    run(vec![claude(&file)], &out, &|_| {}).unwrap();
    let table = read_table(&out).unwrap();
    std::fs::remove_file(out.join("manifest.json")).unwrap();
    let again = run(vec![claude(&file)], &out, &|_| {}).unwrap();
    assert_eq!((again.files_read, again.events), (1, 2));
    assert_eq!(read_table(&out).unwrap(), table);
}

/// Totals come from counts kept per source; a manifest written before counts were kept is
/// counted from its fragments once (by a run that does not read that source), and remembers the
/// counts from then on. A run that reads the source reads it again once: counts from before
/// projects were placed by their basis have none per basis.
#[test]
fn a_manifest_without_counts_is_counted_from_its_fragments() {
    let dir = scratch("no-counts");
    let file = dir.join("s1.jsonl");
    std::fs::write(&file, transcript(&[("t1", "ls"), ("t2", "git status")])).unwrap();
    let out = dir.join("table");
    let first = run(vec![claude(&file)], &out, &|_| {}).unwrap();
    let path = out.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for entry in manifest["sources"].as_object_mut().unwrap().values_mut() {
        assert!(entry.as_object_mut().unwrap().remove("counts").is_some());
    }
    std::fs::write(&path, manifest.to_string()).unwrap();
    let second = run(Vec::new(), &out, &|_| {}).unwrap();
    assert_eq!(second.files_read, 0);
    assert_eq!(
        (second.events, &second.by_agent, &second.by_outcome),
        (first.events, &first.by_agent, &first.by_outcome)
    );
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(saved.contains("\"counts\""), "{saved}");
    assert!(second.by_basis.is_empty(), "{:?}", second.by_basis);
    let third = run(vec![claude(&file)], &out, &|_| {}).unwrap();
    assert_eq!(third.files_read, 1);
    assert_eq!(third.by_basis, first.by_basis);
    let fourth = run(vec![claude(&file)], &out, &|_| {}).unwrap();
    assert_eq!(fourth.files_read, 0);
}

#[test]
fn a_grown_file_adds_only_its_new_events() {
    let dir = scratch("grown");
    let file = dir.join("s1.jsonl");
    std::fs::write(&file, transcript(&[("t1", "ls")])).unwrap();
    let out = dir.join("table");
    run(vec![claude(&file)], &out, &|_| {}).unwrap();
    std::fs::write(&file, transcript(&[("t1", "ls"), ("t2", "npm test")])).unwrap();
    let summary = run(vec![claude(&file)], &out, &|_| {}).unwrap();
    assert_eq!(summary.events, 2);
    let table = read_table(&out).unwrap();
    let commands: Vec<_> = table.iter().map(|e| e.command.clone().unwrap()).collect();
    assert_eq!(commands, ["ls", "npm test"], "sorted by time, no duplicate");
}

#[test]
fn calls_cloned_into_a_resumed_session_are_kept_once() {
    let dir = scratch("clones");
    let old = dir.join("a-old.jsonl");
    let resumed = dir.join("b-resumed.jsonl");
    std::fs::write(&old, transcript(&[("t1", "ls"), ("t2", "git status")])).unwrap();
    std::fs::write(
        &resumed,
        transcript(&[("t1", "ls"), ("t2", "git status"), ("t3", "npm test")]),
    )
    .unwrap();
    let out = dir.join("table");
    let summary = run(vec![claude(&resumed), claude(&old)], &out, &|_| {}).unwrap();
    assert_eq!((summary.events, summary.duplicates), (3, 2));
    // The earlier path owns the shared calls, whatever order the sources were given in.
    let table = read_table(&out).unwrap();
    let owner = |cmd: &str| {
        table
            .iter()
            .find(|e| e.command.as_deref() == Some(cmd))
            .unwrap()
            .source
            .clone()
    };
    assert!(owner("ls").contains("a-old.jsonl"));
    assert!(owner("npm test").contains("b-resumed.jsonl"));
}

#[test]
fn files_carry_the_schema_version_and_one_project_per_bucket() {
    let dir = scratch("meta");
    let file = dir.join("s1.jsonl");
    std::fs::write(&file, transcript(&[("t1", "ls")])).unwrap();
    let out = dir.join("table");
    run(vec![claude(&file)], &out, &|_| {}).unwrap();
    let parquet: Vec<_> = walk(&out)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    assert_eq!(parquet.len(), 1);
    let bucket = parquet[0]
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(bucket.starts_with("bucket="), "{bucket}");
    let reader =
        parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&parquet[0]).unwrap())
            .unwrap();
    use parquet::file::reader::FileReader;
    let kv = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .clone();
    assert!(kv.iter().any(
        |k| k.key == "leastgrant.schema_version" && k.value.as_deref() == Some(SCHEMA_VERSION)
    ));
}

/// The table holds commands and results, which carry secrets: only its owner may read it.
#[cfg(unix)]
#[test]
fn the_table_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("private");
    let file = dir.join("s1.jsonl");
    std::fs::write(&file, transcript(&[("t1", "cat .env")])).unwrap();
    let out = dir.join("table");
    run(vec![claude(&file)], &out, &|_| {}).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let files = walk(&out);
    assert!(files.len() >= 2, "a fragment and the manifest: {files:?}");
    for path in files {
        assert_eq!(mode(&path), 0o600, "{}", path.display());
        let mut dir = path.parent().unwrap();
        while dir != out.parent().unwrap() {
            assert_eq!(mode(dir), 0o700, "{}", dir.display());
            dir = dir.parent().unwrap();
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// DuckDB (installed by `.ci/run` from PyPI) reads the table the way users will point it at it.
#[test]
fn an_independent_reader_sees_the_same_table() {
    let probe = Command::new("python3")
        .args(["-c", "import duckdb"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        println!("skipped: python3 with duckdb is not installed (`pip install duckdb`)");
        return;
    }
    let dir = scratch("duckdb");
    let file = dir.join("s1.jsonl");
    std::fs::write(
        &file,
        transcript(&[("t1", "ls"), ("t2", "git status"), ("t3", "npm test")]),
    )
    .unwrap();
    let out = dir.join("table");
    run(vec![claude(&file)], &out, &|_| {}).unwrap();
    let query = format!(
        "import duckdb; r = duckdb.sql(\"select count(*), count(distinct event_id), min(command), max(outcome), any_value(bucket) from read_parquet('{}/events/*/*.parquet', hive_partitioning=true)\").fetchall()[0]; print('|'.join(map(str, r)))",
        out.display()
    );
    let output = Command::new("python3")
        .args(["-c", &query])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let fields: Vec<&str> = line.split('|').collect();
    assert_eq!(&fields[..4], ["3", "3", "git status", "ran"], "{line}");
}

#[test]
fn an_unreadable_source_is_counted_not_fatal() {
    let dir = scratch("unreadable");
    let good = dir.join("s1.jsonl");
    std::fs::write(&good, transcript(&[("t1", "ls")])).unwrap();
    let out = dir.join("table");
    let summary = run(
        vec![claude(&dir.join("missing.jsonl")), claude(&good)],
        &out,
        &|_| {},
    )
    .unwrap();
    assert_eq!(summary.events, 1);
    assert_eq!(summary.bad.0.get("unreadable-file"), Some(&1));
}

fn transcript_in(project: &str, session: &str, calls: &[(&str, &str)]) -> String {
    transcript(calls)
        .replace("/home/dev/proj", project)
        .replace("\"s1\"", &format!("\"{session}\""))
}

fn parquet_files(out: &Path) -> Vec<std::path::PathBuf> {
    walk(out)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect()
}

fn sorted(
    mut events: Vec<leastgrant_ingest::schema::Event>,
) -> Vec<leastgrant_ingest::schema::Event> {
    events.sort_by(|a, b| a.event_id.cmp(&b.event_id));
    events
}

/// Many transcripts of one project are written as one fragment, not one each.
#[test]
fn the_sources_of_a_run_share_fragments() {
    let dir = scratch("batched");
    let files: Vec<_> = (0..20)
        .map(|i| {
            let file = dir.join(format!("s{i:02}.jsonl"));
            let id = format!("t{i}");
            std::fs::write(
                &file,
                transcript_in("/w/app", &format!("s{i}"), &[(&id, "ls")]),
            )
            .unwrap();
            claude(&file)
        })
        .collect();
    let out = dir.join("table");
    let summary = run(files, &out, &|_| {}).unwrap();
    assert_eq!(summary.events, 20);
    assert_eq!(parquet_files(&out).len(), 1);
}

/// After sources change, grow and shrink, the incremental table holds exactly what a fresh
/// ingest of the final files holds: the changed sources' old rows are gone from the fragments
/// they shared, the unchanged sources' rows are intact, and nothing is duplicated.
#[test]
fn an_incremental_table_equals_a_fresh_one_after_changes() {
    let dir = scratch("incremental-equals-fresh");
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    let c = dir.join("c.jsonl");
    let d = dir.join("d.jsonl");
    std::fs::write(
        &a,
        transcript_in("/w/app", "sa", &[("a1", "ls"), ("a2", "git status")]),
    )
    .unwrap();
    std::fs::write(&b, transcript_in("/w/app", "sb", &[("b1", "npm test")])).unwrap();
    std::fs::write(
        &c,
        transcript_in(
            "/w/other",
            "sc",
            &[("c1", "cargo test"), ("c2", "cargo build")],
        ),
    )
    .unwrap();
    std::fs::write(&d, transcript_in("/w/third", "sd", &[("d1", "make")])).unwrap();
    let all = || vec![claude(&a), claude(&b), claude(&c), claude(&d)];
    let out = dir.join("table");
    run(all(), &out, &|_| {}).unwrap();

    // b grows, c loses a call and gains another, d's project changes; a is untouched.
    std::fs::write(
        &b,
        transcript_in(
            "/w/app",
            "sb",
            &[("b1", "npm test"), ("b2", "npm run build")],
        ),
    )
    .unwrap();
    std::fs::write(
        &c,
        transcript_in(
            "/w/other",
            "sc",
            &[("c1", "cargo test"), ("c3", "cargo fmt")],
        ),
    )
    .unwrap();
    std::fs::write(&d, transcript_in("/w/moved", "sd", &[("d1", "make")])).unwrap();
    let second = run(all(), &out, &|_| {}).unwrap();
    assert_eq!((second.files_read, second.files_unchanged), (3, 1));

    let fresh = dir.join("fresh");
    let from_scratch = run(all(), &fresh, &|_| {}).unwrap();
    assert_eq!(second.events, from_scratch.events);
    assert_eq!(second.by_outcome, from_scratch.by_outcome);
    let incremental = sorted(read_table(&out).unwrap());
    assert_eq!(incremental, sorted(read_table(&fresh).unwrap()));
    let commands: Vec<_> = incremental
        .iter()
        .filter_map(|e| e.command.clone())
        .collect();
    assert_eq!(commands.len(), 7, "{commands:?}");
    assert!(!commands.contains(&"cargo build".to_string()));

    // And once more with nothing changed: nothing read, the same table.
    let third = run(all(), &out, &|_| {}).unwrap();
    assert_eq!((third.files_read, third.events), (0, second.events));
    assert_eq!(sorted(read_table(&out).unwrap()), incremental);
}

/// A fragment no manifest entry lists (a run stopped between writing a batch and saving the
/// manifest) is removed when the next run starts; the table's own fragments are kept.
#[test]
fn fragments_the_manifest_does_not_list_are_removed() {
    let dir = scratch("unlisted");
    let file = dir.join("s1.jsonl");
    std::fs::write(&file, transcript(&[("t1", "ls")])).unwrap();
    let out = dir.join("table");
    run(vec![claude(&file)], &out, &|_| {}).unwrap();
    let kept = parquet_files(&out);
    let stray = out.join("events/bucket=07/0123456789abcdef.parquet");
    std::fs::create_dir_all(stray.parent().unwrap()).unwrap();
    std::fs::copy(&kept[0], &stray).unwrap();
    let staged = out.join("events/bucket=07/0123456789abcdef.parquet.staged");
    std::fs::write(&staged, b"half").unwrap();
    let again = run(vec![claude(&file)], &out, &|_| {}).unwrap();
    assert_eq!((again.files_read, again.events), (0, 1));
    assert!(!stray.exists() && !staged.exists());
    assert_eq!(parquet_files(&out), kept);
    assert_eq!(read_table(&out).unwrap().len(), 1);
}

/// macOS and Windows file systems ignore case: sessions that spelled one project's directory
/// two ways are one project; on Linux they are two.
#[test]
fn case_variants_of_a_project_are_one_project_where_the_file_system_ignores_case() {
    let dir = scratch("case-variants");
    let sources: Vec<_> = [
        ("a", "/Users/Dev/App"),
        ("b", "/Users/dev/app"),
        ("c", "/home/dev/app"),
        ("d", "/home/Dev/App"),
        ("e", "C:\\Work\\App"),
        ("f", "c:/work/app"),
    ]
    .iter()
    .map(|(name, project)| {
        let file = dir.join(format!("{name}.jsonl"));
        let id = format!("t-{name}");
        std::fs::write(&file, transcript_in(project, name, &[(&id, "ls")])).unwrap();
        claude(&file)
    })
    .collect();
    let out = dir.join("table");
    run(sources, &out, &|_| {}).unwrap();
    let mut keys: Vec<String> = read_table(&out)
        .unwrap()
        .into_iter()
        .map(|e| e.project_key)
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(
        keys,
        [
            "/home/Dev/App",
            "/home/dev/app",
            "/users/dev/app",
            "c:/work/app"
        ]
    );
}

/// A table written under an earlier schema version is rebuilt: every source read again, the old
/// fragments removed.
#[test]
fn a_table_of_an_earlier_schema_is_rebuilt() {
    let dir = scratch("old-schema");
    let file = dir.join("s1.jsonl");
    std::fs::write(&file, transcript(&[("t1", "ls"), ("t2", "git status")])).unwrap();
    let out = dir.join("table");
    run(vec![claude(&file)], &out, &|_| {}).unwrap();
    let path = out.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    manifest["schema_version"] = json!("0");
    std::fs::write(&path, manifest.to_string()).unwrap();
    let old = parquet_files(&out);
    // A fragment of the old layout that the new run would not write again.
    let stray = out.join("events/bucket=63/old-layout.parquet");
    std::fs::create_dir_all(stray.parent().unwrap()).unwrap();
    std::fs::copy(&old[0], &stray).unwrap();
    let again = run(vec![claude(&file)], &out, &|_| {}).unwrap();
    assert_eq!((again.files_read, again.events), (1, 2));
    assert!(!stray.exists());
    assert_eq!(read_table(&out).unwrap().len(), 2);
}
