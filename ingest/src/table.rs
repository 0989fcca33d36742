//! The events table on disk: `events/bucket=NN/<source digest>.parquet` files (zstd, sorted by
//! project, time, sequence) and `manifest.json`, which says what each source file was when it
//! was read and which events it owns.
//!
//! One fragment per source file and bucket, so a grown or changed transcript replaces only its
//! own fragments. An event id belongs to the first source (in path order) that recorded it: a
//! call cloned into a resumed session's file is kept once. Every file is written to a temporary
//! name and renamed into place, so a crash leaves the previous table readable.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde_json::{Value, json};

use crate::common::stable_id;
use crate::schema::{Event, SCHEMA_VERSION, SCHEMA_VERSION_KEY, from_batch, to_batch};

/// Buckets projects hash into: one project's history always sits in one bucket.
pub const BUCKETS: u32 = 64;

/// The bucket of a project key.
pub fn bucket_of(project_key: &str) -> u32 {
    let id = stable_id(&[project_key]);
    u32::from_str_radix(id.get(..8).unwrap_or("0"), 16).unwrap_or(0) % BUCKETS
}

/// What the manifest remembers of one source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceEntry {
    /// The reader that read it.
    pub kind: String,
    /// Size in bytes when read.
    pub size: u64,
    /// Modification time (ns since the epoch) when read.
    pub mtime_ns: u128,
    /// SHA-256 (16 hex) of the bytes read.
    pub hash: String,
    /// Fragment files holding its events, relative to the table directory.
    pub fragments: Vec<String>,
    /// The event ids it owns.
    pub event_ids: Vec<String>,
}

/// The manifest: source path → what was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// By source path.
    pub sources: BTreeMap<String, SourceEntry>,
}

/// An ingest failure that stops the run (bad input never does; an unwritable table does).
#[derive(Debug)]
pub struct TableError(pub String);

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TableError {}

fn err(what: &str, path: &Path, e: impl std::fmt::Display) -> TableError {
    TableError(format!("cannot {what} `{}`: {e}", path.display()))
}

const MANIFEST: &str = "manifest.json";

impl Manifest {
    /// Loads the manifest of a table directory (empty when there is none yet).
    pub fn load(dir: &Path) -> Result<Manifest, TableError> {
        let path = dir.join(MANIFEST);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(e) => return Err(err("read", &path, e)),
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| err("parse", &path, e))?;
        let mut manifest = Manifest::default();
        let Some(sources) = value.get("sources").and_then(Value::as_object) else {
            return Err(err("use", &path, "no `sources`"));
        };
        for (source, entry) in sources {
            let text = |k: &str| {
                entry
                    .get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let list = |k: &str| -> Vec<String> {
                entry
                    .get(k)
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            manifest.sources.insert(
                source.clone(),
                SourceEntry {
                    kind: text("kind"),
                    size: entry.get("size").and_then(Value::as_u64).unwrap_or(0),
                    mtime_ns: text("mtime_ns").parse().unwrap_or(0),
                    hash: text("hash"),
                    fragments: list("fragments"),
                    event_ids: list("event_ids"),
                },
            );
        }
        Ok(manifest)
    }

    /// Writes the manifest atomically.
    pub fn save(&self, dir: &Path) -> Result<(), TableError> {
        let sources: serde_json::Map<String, Value> = self
            .sources
            .iter()
            .map(|(path, e)| {
                (
                    path.clone(),
                    json!({"kind": e.kind, "size": e.size, "mtime_ns": e.mtime_ns.to_string(), "hash": e.hash, "fragments": e.fragments, "event_ids": e.event_ids}),
                )
            })
            .collect();
        let value = json!({"version": 1, "schema_version": SCHEMA_VERSION, "sources": sources});
        let text = serde_json::to_string(&value).map_err(|e| TableError(e.to_string()))?;
        write_atomically(&dir.join(MANIFEST), text.as_bytes())
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), TableError> {
    let staged = staged_name(path);
    let mut file = create_private(&staged)?;
    file.write_all(bytes)
        .map_err(|e| err("write", &staged, e))?;
    file.sync_all().map_err(|e| err("sync", &staged, e))?;
    fs::rename(&staged, path).map_err(|e| err("replace", path, e))
}

/// A new file only its owner can read: the table holds commands, paths and results, which
/// carry secrets.
fn create_private(path: &Path) -> Result<File, TableError> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).map_err(|e| err("create", path, e))
}

/// Creates a directory (and its parents) only its owner can enter.
pub fn create_private_dir(path: &Path) -> Result<(), TableError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path).map_err(|e| err("create", path, e))
}

fn staged_name(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".staged");
    path.with_file_name(name)
}

/// Writes one source's events as its fragments (one per bucket); returns their relative paths.
pub fn write_fragments(
    dir: &Path,
    source: &str,
    mut events: Vec<Event>,
) -> Result<Vec<String>, TableError> {
    events.sort_by(|a, b| {
        a.project_key
            .cmp(&b.project_key)
            .then(a.ts_us.cmp(&b.ts_us))
            .then(a.session_id.cmp(&b.session_id))
            .then(a.seq.cmp(&b.seq))
    });
    let mut by_bucket: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
    for event in events {
        by_bucket
            .entry(bucket_of(&event.project_key))
            .or_default()
            .push(event);
    }
    let name = format!("{}.parquet", stable_id(&[source]));
    let mut written = Vec::new();
    for (bucket, events) in by_bucket {
        let relative = format!("events/bucket={bucket:02}/{name}");
        let path = dir.join(&relative);
        if let Some(parent) = path.parent() {
            create_private_dir(parent)?;
        }
        write_parquet(&path, &events)?;
        written.push(relative);
    }
    Ok(written)
}

/// Writes events to one Parquet file (zstd, the schema version in the metadata), atomically.
pub fn write_parquet(path: &Path, events: &[Event]) -> Result<(), TableError> {
    let batch = to_batch(events).map_err(|e| err("build a record batch for", path, e))?;
    let properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(3).map_err(|e| TableError(e.to_string()))?,
        ))
        .set_key_value_metadata(Some(vec![KeyValue::new(
            SCHEMA_VERSION_KEY.to_string(),
            SCHEMA_VERSION.to_string(),
        )]))
        .build();
    let staged = staged_name(path);
    let file = create_private(&staged)?;
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties))
        .map_err(|e| err("write", &staged, e))?;
    writer.write(&batch).map_err(|e| err("write", &staged, e))?;
    writer.close().map_err(|e| err("finish", &staged, e))?;
    fs::rename(&staged, path).map_err(|e| err("replace", path, e))
}

/// Reads one Parquet file of the table.
pub fn read_parquet(path: &Path) -> Result<Vec<Event>, TableError> {
    let file = File::open(path).map_err(|e| err("open", path, e))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| err("read", path, e))?
        .build()
        .map_err(|e| err("read", path, e))?;
    let mut events = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| err("read", path, e))?;
        events.extend(from_batch(&batch).map_err(|e| err("decode", path, e))?);
    }
    Ok(events)
}

/// Every event of a table directory, in bucket then file order.
pub fn read_table(dir: &Path) -> Result<Vec<Event>, TableError> {
    let mut files = Vec::new();
    let events_dir = dir.join("events");
    let Ok(buckets) = fs::read_dir(&events_dir) else {
        return Ok(Vec::new());
    };
    for bucket in buckets.filter_map(Result::ok) {
        if let Ok(entries) = fs::read_dir(bucket.path()) {
            files.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "parquet")),
            );
        }
    }
    files.sort();
    let mut events = Vec::new();
    for file in files {
        events.extend(read_parquet(&file)?);
    }
    Ok(events)
}

/// Removes fragments a source no longer has.
pub fn remove_stale(dir: &Path, old: &[String], new: &[String]) -> Result<(), TableError> {
    let keep: BTreeSet<&String> = new.iter().collect();
    for fragment in old.iter().filter(|f| !keep.contains(f)) {
        let path = dir.join(fragment);
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(err("remove", &path, e)),
        }
    }
    Ok(())
}
