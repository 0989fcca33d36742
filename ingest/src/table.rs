//! The events table on disk: `events/bucket=NN/<batch digest>.parquet` files (zstd, sorted by
//! project, time, sequence) and `manifest.json`, which says what each source file was when it
//! was read, which events it owns and which fragments hold them.
//!
//! The sources read in one run are written in batches: one fragment per batch and bucket, so a
//! run over thousands of transcripts writes tens of files, not thousands (each file costs a
//! create, a Parquet writer and its codecs; DuckDB and polars read few large files faster than
//! many small ones). A changed source's old rows are removed from the fragments that held them
//! (a fragment no source lists any more is deleted), then its new rows are written with its
//! batch. An event id belongs to the first source (in path order) that recorded it: a call
//! cloned into a resumed session's file is kept once. Every file is written to a temporary name
//! and renamed into place, and fragments the manifest does not list (left by a run that stopped
//! before saving it) are removed when the next run starts, so an event is never duplicated. One
//! run writes a table at a time: it holds an exclusive lock on `ingest.lock` in the directory.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use serde::{Deserialize, Serialize};

use crate::common::stable_id;
use arrow_array::RecordBatch;

use crate::schema::{
    Event, SCHEMA_VERSION, SCHEMA_VERSION_KEY, col, from_batch, to_batch, to_batch_of,
};

/// Buckets projects hash into: one project's history always sits in one bucket.
pub const BUCKETS: u32 = 64;

/// The bucket of a project key.
pub fn bucket_of(project_key: &str) -> u32 {
    let id = stable_id(&[project_key]);
    u32::from_str_radix(id.get(..8).unwrap_or("0"), 16).unwrap_or(0) % BUCKETS
}

/// [`bucket_of`] of each key in turn, hashing a key once while it repeats (events come grouped
/// by project: a hash per event was an eighth of an ingest).
pub fn buckets_of<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<u32> {
    let mut last: Option<(&str, u32)> = None;
    keys.into_iter()
        .map(|key| match last {
            Some((seen, bucket)) if seen == key => bucket,
            _ => {
                let bucket = bucket_of(key);
                last = Some((key, bucket));
                bucket
            }
        })
        .collect()
}

/// What the manifest remembers of one source file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceEntry {
    /// The reader that read it.
    #[serde(default)]
    pub kind: String,
    /// Size in bytes when read.
    #[serde(default)]
    pub size: u64,
    /// Modification time (ns since the epoch) when read; a string, as JSON readers lose
    /// integers this large.
    #[serde(default, with = "decimal_string")]
    pub mtime_ns: u128,
    /// XXH3-128 (32 hex) of the bytes read (a Cursor database with its log).
    #[serde(default)]
    pub hash: String,
    /// Fragment files holding its events, relative to the table directory.
    #[serde(default)]
    pub fragments: Vec<String>,
    /// The event ids it owns, as numbers (an id is 16 hex digits): the manifest holds every id
    /// of the table, so each costs 8 bytes in memory rather than a string.
    #[serde(default, with = "hex_ids")]
    pub event_ids: Vec<u64>,
    /// Its owned events by agent and by outcome, so a run's totals need no read-back (absent
    /// in manifests written before they were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<SourceCounts>,
    /// How many of its events another source owned when it was read (absent in manifests
    /// written before they were counted: unknown). When an owner is released, a source that had
    /// some is read again, to claim what it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<u64>,
    /// The `--project-root` its sessions were forced into when it was read (absent: none); a
    /// run forcing another, or none, reads it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_root: Option<String>,
}

/// Owned events of one source, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceCounts {
    /// By agent.
    pub by_agent: BTreeMap<String, u64>,
    /// By outcome.
    pub by_outcome: BTreeMap<String, u64>,
    /// By the basis of their project (`crate::project::Basis`: `recorded`, `touched`, …);
    /// absent in manifests written before sessions were placed by it, whose sources are read
    /// again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_basis: Option<BTreeMap<String, u64>>,
}

impl SourceCounts {
    /// The counts of `events`.
    pub fn of(events: &[Event]) -> SourceCounts {
        let mut counts = SourceCounts::default();
        for event in events {
            counts.add(event);
        }
        counts
    }

    /// Counts one event.
    pub fn add(&mut self, event: &Event) {
        *self.by_agent.entry(event.agent.clone()).or_insert(0) += 1;
        *self
            .by_outcome
            .entry(event.outcome.as_str().to_string())
            .or_insert(0) += 1;
    }
}

/// The manifest: source path → what was read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// By source path.
    pub sources: BTreeMap<String, SourceEntry>,
}

/// The manifest file: the entries with the format's versions.
#[derive(Serialize, Deserialize)]
struct ManifestFile<'a> {
    version: u32,
    schema_version: Cow<'a, str>,
    sources: Cow<'a, BTreeMap<String, SourceEntry>>,
}

/// Event ids in memory as numbers, on disk as the 16-hex strings the table holds.
mod hex_ids {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(ids: &[u64], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(ids.iter().map(|id| format!("{id:016x}")))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u64>, D::Error> {
        let texts = Vec::<std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(texts.iter().map(|t| super::event_key(t)).collect())
    }
}

/// An event id as a number: its 16 hex digits (any other text, which no reader writes, is
/// hashed to one).
pub fn event_key(event_id: &str) -> u64 {
    match u64::from_str_radix(event_id, 16) {
        Ok(key) if event_id.len() == 16 => key,
        _ => u64::from_str_radix(&stable_id(&[event_id]), 16).unwrap_or(0),
    }
}

/// `u128` as a decimal string.
mod decimal_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &u128, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u128, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(text.parse().unwrap_or(0))
    }
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

/// The lock file of a table directory.
pub const LOCK_FILE: &str = "ingest.lock";

/// How long a run waits for another run writing the same table before it gives up.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// The exclusive lock of a table directory, held while a run writes it; released when dropped
/// (and by the system when the process ends, however it ends).
#[derive(Debug)]
pub struct TableLock {
    _file: File,
}

/// Takes the table's lock, waiting up to `wait` for a run that holds it (calling `waiting`
/// once, when this run starts to wait).
pub fn lock_table(
    dir: &Path,
    wait: std::time::Duration,
    waiting: &dyn Fn(),
) -> Result<TableLock, TableError> {
    let path = dir.join(LOCK_FILE);
    let mut options = fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path).map_err(|e| err("open", &path, e))?;
    let started = std::time::Instant::now();
    let mut told = false;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(TableLock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(e)) => return Err(err("lock", &path, e)),
        }
        if started.elapsed() >= wait {
            return Err(TableError(format!(
                "another ingest into `{}` still holds its lock after {} s: try again when it \
                 has finished",
                dir.display(),
                wait.as_secs()
            )));
        }
        if !told {
            waiting();
            told = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

impl Manifest {
    /// Loads the manifest of a table directory (empty when there is none yet, and when the
    /// table was written under another schema version: then every source is read again and the
    /// old fragments, which no entry lists, are removed).
    pub fn load(dir: &Path) -> Result<Manifest, TableError> {
        let path = dir.join(MANIFEST);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(e) => return Err(err("read", &path, e)),
        };
        let file: ManifestFile<'_> =
            serde_json::from_slice(&bytes).map_err(|e| err("parse", &path, e))?;
        if file.schema_version != SCHEMA_VERSION {
            return Ok(Manifest::default());
        }
        Ok(Manifest {
            sources: file.sources.into_owned(),
        })
    }

    /// Writes the manifest atomically.
    pub fn save(&self, dir: &Path) -> Result<(), TableError> {
        let file = ManifestFile {
            version: 1,
            schema_version: Cow::Borrowed(SCHEMA_VERSION),
            sources: Cow::Borrowed(&self.sources),
        };
        let bytes = serde_json::to_vec(&file).map_err(|e| TableError(e.to_string()))?;
        write_atomically(&dir.join(MANIFEST), &bytes)
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

/// Writes a batch's events as its fragments (one per bucket, named by `batch`); returns their
/// relative paths.
pub fn write_fragments(
    dir: &Path,
    batch: &str,
    events: Vec<Event>,
) -> Result<Vec<String>, TableError> {
    // References sorted, not the events: moving events of a few hundred bytes each was most of
    // the sort (the same stable order).
    let mut sorted: Vec<&Event> = events.iter().collect();
    sorted.sort_by(|a, b| {
        a.project_key
            .cmp(&b.project_key)
            .then(a.ts_us.cmp(&b.ts_us))
            .then(a.session_id.cmp(&b.session_id))
            .then(a.seq.cmp(&b.seq))
    });
    let mut by_bucket: BTreeMap<u32, Vec<&Event>> = BTreeMap::new();
    let buckets = buckets_of(sorted.iter().map(|e| e.project_key.as_str()));
    for (event, bucket) in sorted.into_iter().zip(buckets) {
        by_bucket.entry(bucket).or_default().push(event);
    }
    let name = format!("{}.parquet", stable_id(&[batch]));
    let mut written = Vec::new();
    for (bucket, rows) in by_bucket {
        let relative = format!("events/bucket={bucket:02}/{name}");
        let path = dir.join(&relative);
        if let Some(parent) = path.parent() {
            create_private_dir(parent)?;
        }
        let records = to_batch_of(&rows).map_err(|e| err("build a record batch for", &path, e))?;
        write_batch_file(&path, &records)?;
        written.push(relative);
    }
    Ok(written)
}

/// The columns written with zstd. The event and tool-use ids are not: they are random (a digest,
/// an agent's random id), zstd spent ~38 instructions a byte on them (27 M of a demo ingest's
/// 934 M) to halve them by entropy coding alone.
const COMPRESSED_COLUMNS: [&str; 5] = [
    col::SOURCE,
    col::TOOL_INPUT,
    col::COMMAND,
    col::FILE_PATH,
    col::RESULT_EXCERPT,
];

/// The columns whose values are (nearly) all distinct: written without a dictionary.
const DISTINCT_COLUMNS: [&str; 5] = [
    col::EVENT_ID,
    col::SOURCE,
    col::TOOL_INPUT,
    col::TOOL_USE_ID,
    col::RESULT_EXCERPT,
];

/// Writes events to one Parquet file (zstd, the schema version in the metadata), atomically.
pub fn write_parquet(path: &Path, events: &[Event]) -> Result<(), TableError> {
    let batch = to_batch(events).map_err(|e| err("build a record batch for", path, e))?;
    write_batch_file(path, &batch)
}

/// Writes a record batch of events to one Parquet file, atomically.
fn write_batch_file(path: &Path, batch: &RecordBatch) -> Result<(), TableError> {
    let zstd = Compression::ZSTD(ZstdLevel::try_new(1).map_err(|e| TableError(e.to_string()))?);
    // Only the long-text and id columns are compressed: the rest are dictionary-encoded to a few
    // bytes, and each compressed column chunk costs a codec (zstd contexts) to write and read,
    // which dominated writing and reading a transcript's small fragment.
    let mut properties = WriterProperties::builder().set_compression(Compression::UNCOMPRESSED);
    for column in COMPRESSED_COLUMNS {
        properties = properties.set_column_compression(ColumnPath::from(column), zstd);
    }
    // Columns whose values are (nearly) all distinct: a dictionary only costs a hash and an
    // intern per value before falling back to plain, and their statistics a comparison (min/max
    // of random ids prune nothing; nothing here reads them).
    for column in DISTINCT_COLUMNS {
        properties = properties
            .set_column_dictionary_enabled(ColumnPath::from(column), false)
            .set_column_statistics_enabled(ColumnPath::from(column), EnabledStatistics::None);
    }
    let properties = properties
        .set_key_value_metadata(Some(vec![KeyValue::new(
            SCHEMA_VERSION_KEY.to_string(),
            SCHEMA_VERSION.to_string(),
        )]))
        .build();
    let staged = staged_name(path);
    let file = create_private(&staged)?;
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties))
        .map_err(|e| err("write", &staged, e))?;
    writer.write(batch).map_err(|e| err("write", &staged, e))?;
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

/// The bucket a fragment's relative path (`events/bucket=NN/…`) names.
pub fn fragment_bucket(fragment: &str) -> Option<u32> {
    fragment
        .strip_prefix("events/bucket=")?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// Removes the rows of `ids` from a fragment other sources still hold rows in; a fragment left
/// empty is deleted.
pub fn remove_rows(dir: &Path, fragment: &str, ids: &HashSet<u64>) -> Result<(), TableError> {
    let path = dir.join(fragment);
    let events = match read_parquet(&path) {
        Ok(events) => events,
        // Already gone (an earlier run removed it before its manifest was saved).
        Err(_) if !path.exists() => return Ok(()),
        Err(e) => return Err(e),
    };
    let before = events.len();
    let kept: Vec<Event> = events
        .into_iter()
        .filter(|e| !ids.contains(&event_key(&e.event_id)))
        .collect();
    if kept.is_empty() {
        return remove_fragment(dir, fragment);
    }
    if kept.len() < before {
        write_parquet(&path, &kept)?;
    }
    Ok(())
}

/// Deletes a fragment (already gone is fine).
pub fn remove_fragment(dir: &Path, fragment: &str) -> Result<(), TableError> {
    let path = dir.join(fragment);
    match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(err("remove", &path, e)),
    }
}

/// Removes the fragments (and staged leftovers) under `events/` that no manifest entry lists:
/// what a run wrote before it stopped without saving its manifest. Its sources are read again.
pub fn remove_unlisted(dir: &Path, manifest: &Manifest) -> Result<usize, TableError> {
    let listed: HashSet<&str> = manifest
        .sources
        .values()
        .flat_map(|e| e.fragments.iter().map(String::as_str))
        .collect();
    let mut removed = 0;
    let Ok(buckets) = fs::read_dir(dir.join("events")) else {
        return Ok(0);
    };
    for bucket in buckets.filter_map(Result::ok) {
        let bucket_name = bucket.file_name().to_string_lossy().into_owned();
        if !bucket_name.starts_with("bucket=") {
            continue;
        }
        let Ok(files) = fs::read_dir(bucket.path()) else {
            continue;
        };
        for file in files.filter_map(Result::ok) {
            let name = file.file_name().to_string_lossy().into_owned();
            let ours = name.ends_with(".parquet") || name.ends_with(".parquet.staged");
            let relative = format!("events/{bucket_name}/{name}");
            if ours && !listed.contains(relative.as_str()) {
                remove_fragment(dir, &relative)?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}
