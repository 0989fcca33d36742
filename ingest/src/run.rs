//! One ingest run: read the sources that are new or changed since the manifest, in parallel,
//! write their fragments in path order (so ownership of a cloned event is deterministic), and
//! report what was read, what was skipped and why.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, UNIX_EPOCH};

use rayon::prelude::*;

use crate::common::{BadCounts, content_digest};
use crate::schema::Event;
use crate::table::{
    Manifest, SourceCounts, SourceEntry, TableError, event_key, remove_stale, write_fragments,
};

/// Which reader a source file needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceKind {
    /// Claude Code JSONL.
    Claude,
    /// A SpecStory Markdown export.
    SpecStory,
    /// A Cursor IDE `state.vscdb` (with its write-ahead log).
    Cursor,
    /// A Codex CLI rollout JSONL.
    Codex,
    /// The hook's decision ledger (`ledger.jsonl` or a rotation).
    Ledger,
}

impl SourceKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Claude => "claude-jsonl",
            SourceKind::SpecStory => "specstory",
            SourceKind::Cursor => "cursor-vscdb",
            SourceKind::Codex => "codex-jsonl",
            SourceKind::Ledger => "ledger",
        }
    }

    /// Reads one file's bytes. Adding a source is one file with one such function.
    fn read(self, path: &Path, bytes: &[u8], bad: &mut BadCounts) -> Vec<Event> {
        match self {
            SourceKind::Claude => crate::claude::read_claude(path, bytes, bad),
            SourceKind::SpecStory => {
                let text = String::from_utf8_lossy(bytes);
                if matches!(text, std::borrow::Cow::Owned(_)) {
                    bad.add("invalid-utf8");
                }
                crate::specstory::read_specstory(path, text.trim_start_matches('\u{feff}'), bad)
            }
            // A database is read through SQLite, from a private copy.
            SourceKind::Cursor => crate::cursor::read_cursor(path, bad),
            SourceKind::Codex => crate::codex::read_codex(path, bytes, bad),
            SourceKind::Ledger => crate::ledger::read_ledger(path, bytes, bad),
        }
    }

    /// The files whose contents make up the source: a database's log is part of it.
    fn files(self, path: &Path) -> Vec<PathBuf> {
        match self {
            SourceKind::Cursor => std::iter::once(path.to_path_buf())
                .chain(crate::cursor::wal_of(path))
                .collect(),
            SourceKind::Claude | SourceKind::SpecStory | SourceKind::Codex | SourceKind::Ledger => {
                vec![path.to_path_buf()]
            }
        }
    }
}

/// A file to ingest.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SourceFile {
    /// Its reader.
    pub kind: SourceKind,
    /// Where it is.
    pub path: PathBuf,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Events in the table after the run.
    pub events: u64,
    /// Events added or replaced by this run.
    pub new_events: u64,
    /// Events dropped because another source already recorded them (resumed sessions, copies).
    pub duplicates: u64,
    /// Files read this run.
    pub files_read: u64,
    /// Files unchanged since the last run (not read again).
    pub files_unchanged: u64,
    /// Bytes read this run.
    pub bytes_read: u64,
    /// Events in the table by agent.
    pub by_agent: BTreeMap<String, u64>,
    /// Events in the table by outcome.
    pub by_outcome: BTreeMap<String, u64>,
    /// What could not be used, by reason (this run).
    pub bad: BadCounts,
}

/// Progress after each file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    /// Files handled so far.
    pub files: u64,
    /// Of how many.
    pub total_files: u64,
    /// Bytes read so far.
    pub bytes: u64,
    /// Events read so far.
    pub events: u64,
}

fn mtime_ns(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

struct ReadResult {
    source: SourceFile,
    /// The new manifest entry when the file was read.
    entry: Option<SourceEntry>,
    /// The updated entry of a file touched without a change in content.
    touched: Option<SourceEntry>,
    events: Vec<Event>,
    bad: BadCounts,
    bytes: u64,
}

/// How often the manifest is saved during a run: after this many changed files, or this long.
const SAVE_EVERY_FILES: usize = 512;
const SAVE_EVERY: Duration = Duration::from_secs(5);

/// Ingests `sources` into the table at `out`, reading only what changed.
pub fn run(
    mut sources: Vec<SourceFile>,
    out: &Path,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Summary, TableError> {
    crate::table::create_private_dir(out)?;
    sources.sort();
    sources.dedup();
    let mut manifest = Manifest::load(out)?;
    let mut summary = Summary::default();
    // Which source owns each event id, from earlier runs.
    // Which source owns each event id (sources interned: the map holds every id of the table).
    let mut source_index: HashMap<String, u32> = HashMap::new();
    let mut intern = |path: &str| -> u32 {
        let next = u32::try_from(source_index.len()).unwrap_or(u32::MAX);
        *source_index.entry(path.to_string()).or_insert(next)
    };
    let mut owner: HashMap<u64, u32> = HashMap::new();
    for (path, entry) in &manifest.sources {
        let index = intern(path);
        for id in &entry.event_ids {
            owner.entry(*id).or_insert(index);
        }
    }
    let total_files = sources.len() as u64;
    let mut state = Progress {
        total_files,
        ..Progress::default()
    };
    let (mut unsaved, mut last_save) = (0usize, Instant::now());
    // Chunks bound memory to a few files' events at a time; order within a chunk is kept.
    let chunk = rayon::current_num_threads().max(1) * 2;
    for group in sources.chunks(chunk) {
        let results: Vec<ReadResult> = group
            .par_iter()
            .map(|source| read_one(source, &manifest))
            .collect();
        for result in results {
            state.files += 1;
            state.bytes += result.bytes;
            summary.bad.merge(&result.bad);
            let key = result.source.path.display().to_string();
            let Some(mut entry) = result.entry else {
                if let Some(touched) = result.touched {
                    manifest.sources.insert(key, touched);
                    unsaved += 1;
                }
                summary.files_unchanged += 1;
                progress(state);
                continue;
            };
            summary.files_read += 1;
            summary.bytes_read += result.bytes;
            // Release what this source owned before; then claim what no other source owns.
            let this = intern(&key);
            if let Some(old) = manifest.sources.get(&key) {
                for id in &old.event_ids {
                    if owner.get(id) == Some(&this) {
                        owner.remove(id);
                    }
                }
            }
            let mut kept = Vec::new();
            for event in result.events {
                let id = event_key(&event.event_id);
                match owner.get(&id) {
                    Some(other) if *other != this => summary.duplicates += 1,
                    _ => {
                        owner.insert(id, this);
                        kept.push(event);
                    }
                }
            }
            kept.dedup_by(|a, b| a.event_id == b.event_id);
            state.events += kept.len() as u64;
            summary.new_events += kept.len() as u64;
            entry.event_ids = kept.iter().map(|e| event_key(&e.event_id)).collect();
            entry.counts = Some(SourceCounts::of(&kept));
            let old_fragments = manifest
                .sources
                .get(&key)
                .map(|e| e.fragments.clone())
                .unwrap_or_default();
            entry.fragments = write_fragments(out, &key, kept)?;
            remove_stale(out, &old_fragments, &entry.fragments)?;
            manifest.sources.insert(key, entry);
            progress(state);
            unsaved += 1;
        }
        // Saving rewrites every event id, so it is paced: a crash in between only means the
        // sources read since are read again (their fragments are replaced, not duplicated).
        if unsaved >= SAVE_EVERY_FILES || last_save.elapsed() >= SAVE_EVERY {
            manifest.save(out)?;
            (unsaved, last_save) = (0, Instant::now());
        }
    }
    // Totals over the whole table, from each source's counts (read back from the fragments of
    // entries written before counts were kept, and remembered from then on).
    for entry in manifest.sources.values_mut() {
        let counts = match &entry.counts {
            Some(counts) => counts.clone(),
            None => {
                let mut counts = SourceCounts::default();
                for fragment in &entry.fragments {
                    for event in crate::table::read_parquet(&out.join(fragment))? {
                        counts.add(&event);
                    }
                }
                entry.counts = Some(counts.clone());
                unsaved += 1;
                counts
            }
        };
        for (agent, n) in counts.by_agent {
            summary.events += n;
            *summary.by_agent.entry(agent).or_insert(0) += n;
        }
        for (outcome, n) in counts.by_outcome {
            *summary.by_outcome.entry(outcome).or_insert(0) += n;
        }
    }
    if unsaved > 0 {
        manifest.save(out)?;
    }
    Ok(summary)
}

/// Reads one source unless the manifest shows it unchanged (`entry` is `None` then).
fn read_one(source: &SourceFile, manifest: &Manifest) -> ReadResult {
    let mut bad = BadCounts::default();
    let key = source.path.display().to_string();
    let unchanged = |entry: Option<SourceEntry>| ReadResult {
        source: source.clone(),
        entry,
        touched: None,
        events: Vec::new(),
        bad: BadCounts::default(),
        bytes: 0,
    };
    let files = source.kind.files(&source.path);
    let metas: Result<Vec<std::fs::Metadata>, _> = files.iter().map(std::fs::metadata).collect();
    let Ok(metas) = metas else {
        let mut result = unchanged(None);
        result.bad.add("unreadable-file");
        return result;
    };
    let size: u64 = metas.iter().map(std::fs::Metadata::len).sum();
    let mtime = metas.iter().map(mtime_ns).max().unwrap_or(0);
    let previous = manifest.sources.get(&key);
    if previous.is_some_and(|p| p.size == size && p.mtime_ns == mtime) {
        return unchanged(None);
    }
    let mut bytes = Vec::new();
    for file in &files {
        match std::fs::read(file) {
            Ok(read) if bytes.is_empty() => bytes = read,
            Ok(read) => bytes.extend_from_slice(&read),
            Err(_) => {
                let mut result = unchanged(None);
                result.bad.add("unreadable-file");
                return result;
            }
        }
    }
    let hash = content_digest(&bytes);
    if let Some(previous) = previous.filter(|p| p.hash == hash) {
        // Touched but not changed: remember the new time, read nothing.
        let mut entry = previous.clone();
        entry.mtime_ns = mtime;
        let mut result = unchanged(None);
        result.touched = Some(entry);
        return result;
    }
    let events = source.kind.read(&source.path, &bytes, &mut bad);
    let entry = SourceEntry {
        kind: source.kind.as_str().to_string(),
        size,
        mtime_ns: mtime,
        hash,
        fragments: Vec::new(),
        event_ids: Vec::new(),
        counts: None,
    };
    ReadResult {
        source: source.clone(),
        entry: Some(entry),
        touched: None,
        events,
        bad,
        bytes: bytes.len() as u64,
    }
}
