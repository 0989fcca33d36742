//! One ingest run: under the table's lock, release the sources that are gone, read the sources
//! that are new or changed since the manifest, in parallel, claim their events in claim order
//! (the registry's order of sources, then paths: ownership of a cloned event is deterministic),
//! write them in batches, and report what was read, what was skipped and why.
//!
//! Sources are keyed by their canonical path. Before anything is read, a manifest entry whose
//! files are all gone is released (its rows removed) unless the run keeps deleted sources, and an
//! entry whose key is not the canonical name of its source (the same file named another way) is
//! released; a source that had events another owned is then read again, so it claims what the
//! released sources held and the table equals a fresh ingest of what exists.
//!
//! Annotating sources (Claude Code's OpenTelemetry logs) are read first, into the decision store
//! (`crate::decisions`) rather than the table: the sources owning the rows of calls whose
//! decision changed are read again, and every source's events get their recorded decisions
//! before they are claimed.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use rayon::prelude::*;

use crate::common::{BadCounts, content_digest, read_regular, regular_file};
use crate::decisions::{self, DecisionCounts, Store};
use crate::project::{self, Basis, Placing};
use crate::registry::{SourceFile, annotates, source_of_kind};
use crate::schema::Event;
use crate::source::{Contents, canonical, just_the_file};
use crate::table::{
    LOCK_WAIT, Manifest, SourceCounts, SourceEntry, TableError, buckets_of, event_key,
    fragment_bucket, lock_table, remove_fragment, remove_rows, remove_unlisted, write_fragments,
};

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
    /// The source files not read this run, with why (also counted in `bad`), by path.
    pub skipped: Vec<SkippedFile>,
    /// Sources released this run: gone, or named another way; their rows were removed.
    pub released: u64,
    /// Sources that are gone but whose rows were kept ([`Options::keep_deleted`]).
    pub kept_deleted: u64,
    /// Events in the table by the basis of their project (`crate::project::Basis`).
    pub by_basis: BTreeMap<String, u64>,
    /// Calls with a recorded decision (from annotating sources), joined or not.
    pub decisions: DecisionCounts,
}

/// A source file a run did not read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SkippedFile {
    /// The file.
    pub path: PathBuf,
    /// Why: one of [`crate::common::unread`].
    pub reason: &'static str,
}

/// How a run treats the table and tells its caller what it does.
pub struct Options<'a> {
    /// Keep the rows of sources that no longer exist (Claude Code deletes old transcripts)
    /// rather than release them.
    pub keep_deleted: bool,
    /// Called after each file.
    pub progress: &'a (dyn Fn(Progress) + Sync),
    /// Called once, when another run holds the table's lock and this one starts to wait.
    pub waiting: &'a dyn Fn(),
    /// How sessions are placed in their projects (`--project-root`, the machine's home).
    pub placing: Placing,
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
    /// A file of the source that was not read, and why (nothing of the source was read then).
    skipped: Option<(PathBuf, &'static str)>,
    /// The new manifest entry when the file was read.
    entry: Option<SourceEntry>,
    /// The updated entry of a file touched without a change in content.
    touched: Option<SourceEntry>,
    events: Vec<Event>,
    /// The basis of each event's project, in order.
    bases: Vec<Basis>,
    bad: BadCounts,
    bytes: u64,
}

/// A batch is written once its sources hold this many transcript bytes or events: large enough
/// that a run writes few files, small enough to bound memory whatever the history's size.
const BATCH_BYTES: u64 = 32 * 1024 * 1024;
const BATCH_EVENTS: usize = 50_000;

/// Sources read and claimed, waiting to be written together.
#[derive(Default)]
struct Batch {
    /// Each source's key, its new manifest entry and the buckets its events fall in.
    sources: Vec<(String, SourceEntry, BTreeSet<u32>)>,
    events: Vec<Event>,
    bytes: u64,
}

impl Batch {
    fn full(&self) -> bool {
        self.bytes >= BATCH_BYTES || self.events.len() >= BATCH_EVENTS
    }
}

/// How many manifest entries list each fragment.
fn fragment_references(manifest: &Manifest) -> HashMap<String, usize> {
    let mut references = HashMap::new();
    for entry in manifest.sources.values() {
        for fragment in &entry.fragments {
            *references.entry(fragment.clone()).or_insert(0) += 1;
        }
    }
    references
}

/// Writes a batch: its fragments, then each source's entry, then the old rows of the sources it
/// replaces are removed from the fragments that held them. The caller saves the manifest.
fn write_batch(
    out: &Path,
    batch: Batch,
    manifest: &mut Manifest,
    references: &mut HashMap<String, usize>,
) -> Result<(), TableError> {
    if batch.sources.is_empty() {
        return Ok(());
    }
    // Named by what it holds: the same sources with the same contents give the same name.
    let name = batch
        .sources
        .iter()
        .map(|(key, entry, _)| format!("{key}\0{}", entry.hash))
        .collect::<Vec<_>>()
        .join("\0");
    let fragments = write_fragments(out, &name, batch.events)?;
    let mut sources = batch.sources;
    for (_, entry, buckets) in &mut sources {
        entry.fragments = fragments
            .iter()
            .filter(|f| fragment_bucket(f).is_some_and(|b| buckets.contains(&b)))
            .cloned()
            .collect();
    }
    // The rows just written, by fragment: a source read again with the same contents (another
    // placement) writes a fragment of the same name, whose new rows are not stale.
    let mut fresh: HashMap<&str, HashSet<u64>> = HashMap::new();
    for (_, entry, _) in &sources {
        for fragment in &entry.fragments {
            fresh
                .entry(fragment.as_str())
                .or_default()
                .extend(entry.event_ids.iter().copied());
        }
    }
    let mut stale: BTreeMap<String, HashSet<u64>> = BTreeMap::new();
    for (key, entry, _) in &sources {
        for fragment in &entry.fragments {
            *references.entry(fragment.clone()).or_insert(0) += 1;
        }
        if let Some(old) = manifest.sources.insert(key.clone(), entry.clone()) {
            for fragment in old.fragments {
                if let Some(count) = references.get_mut(&fragment) {
                    *count = count.saturating_sub(1);
                }
                let written = fresh.get(fragment.as_str());
                stale.entry(fragment.clone()).or_default().extend(
                    old.event_ids
                        .iter()
                        .copied()
                        .filter(|id| !written.is_some_and(|w| w.contains(id))),
                );
            }
        }
    }
    remove_stale(out, stale, references)
}

/// Removes rows no entry owns any more: a fragment no entry lists is deleted, the others lose
/// the rows of `ids`.
fn remove_stale(
    out: &Path,
    stale: BTreeMap<String, HashSet<u64>>,
    references: &mut HashMap<String, usize>,
) -> Result<(), TableError> {
    for (fragment, ids) in stale {
        if references.get(&fragment).copied().unwrap_or(0) == 0 {
            references.remove(&fragment);
            remove_fragment(out, &fragment)?;
        } else {
            remove_rows(out, &fragment, &ids)?;
        }
    }
    Ok(())
}

/// Whether a manifest entry still names a source: some file of it exists, and its key is the
/// canonical name discovery gives that source (not the same file named another way, nor a
/// rotation read on its own by an earlier version).
fn entry_state(key: &str, kind: &str) -> EntryState {
    let path = Path::new(key);
    let source = source_of_kind(kind);
    let files = source.map_or_else(|| just_the_file(path), |s| (s.files)(path));
    if !files.iter().any(|f| std::fs::symlink_metadata(f).is_ok()) {
        return EntryState::Gone;
    }
    let named = source.is_none_or(|s| (s.discover)(path) == [path.to_path_buf()]);
    if named && canonical(path) == path {
        EntryState::Current
    } else {
        EntryState::Alias
    }
}

enum EntryState {
    Current,
    Gone,
    Alias,
}

/// Releases the entries that no longer name a source (gone ones only when `keep_deleted` is
/// off): their rows are removed and the manifest saved. Returns the entries to read again: when
/// anything was released, those that had events another source owned (or may have: counted
/// before duplicates were).
fn release(
    out: &Path,
    manifest: &mut Manifest,
    references: &mut HashMap<String, usize>,
    keep_deleted: bool,
    summary: &mut Summary,
) -> Result<Vec<(String, String)>, TableError> {
    let mut released = Vec::new();
    for (key, entry) in &manifest.sources {
        match entry_state(key, &entry.kind) {
            EntryState::Current => {}
            EntryState::Gone if keep_deleted => summary.kept_deleted += 1,
            EntryState::Gone | EntryState::Alias => released.push(key.clone()),
        }
    }
    if released.is_empty() {
        return Ok(Vec::new());
    }
    let mut stale: BTreeMap<String, HashSet<u64>> = BTreeMap::new();
    for key in &released {
        let Some(old) = manifest.sources.remove(key) else {
            continue;
        };
        for fragment in old.fragments {
            if let Some(count) = references.get_mut(&fragment) {
                *count = count.saturating_sub(1);
            }
            stale
                .entry(fragment)
                .or_default()
                .extend(old.event_ids.iter().copied());
        }
    }
    remove_stale(out, stale, references)?;
    manifest.save(out)?;
    summary.released = released.len() as u64;
    Ok(manifest
        .sources
        .iter()
        .filter(|(_, entry)| entry.duplicates != Some(0))
        .map(|(key, entry)| (key.clone(), entry.kind.clone()))
        .collect())
}

/// Ingests `sources` into the table at `out`, reading only what changed; gone sources are
/// released.
pub fn run(
    sources: Vec<SourceFile>,
    out: &Path,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Summary, TableError> {
    let options = Options {
        keep_deleted: false,
        progress,
        waiting: &|| {},
        placing: Placing::default(),
    };
    run_with(sources, out, &options)
}

/// Ingests `sources` into the table at `out` as `options` say, reading only what changed.
pub fn run_with(
    mut sources: Vec<SourceFile>,
    out: &Path,
    options: &Options<'_>,
) -> Result<Summary, TableError> {
    let progress = options.progress;
    let placing = &options.placing;
    crate::table::create_private_dir(out)?;
    let _lock = lock_table(out, LOCK_WAIT, options.waiting)?;
    for source in &mut sources {
        source.path = canonical(&source.path);
    }
    let mut manifest = Manifest::load(out)?;
    remove_unlisted(out, &manifest)?;
    let mut references = fragment_references(&manifest);
    let mut batch = Batch::default();
    let mut summary = Summary::default();
    let again = release(
        out,
        &mut manifest,
        &mut references,
        options.keep_deleted,
        &mut summary,
    )?;
    let mut forced: HashSet<PathBuf> = HashSet::new();
    for (key, kind) in again {
        let path = PathBuf::from(key);
        if let Some(source) = source_of_kind(&kind) {
            sources.push(SourceFile {
                source,
                path: path.clone(),
            });
            forced.insert(path);
        }
    }
    let (annotating, mut sources): (Vec<SourceFile>, Vec<SourceFile>) =
        sources.into_iter().partition(|s| annotates(s.source.kind));
    let mut store = Store::load(out)?;
    let index = read_annotations(annotating, &mut store, options, &mut summary);
    // The rows of calls whose decision changed (or was left pending by a stopped run) are read
    // again from the sources that own them, if those still exist.
    let mut pending: BTreeSet<u64> = store.pending_keys().collect();
    pending.extend(index.changed.iter().copied());
    if !pending.is_empty() {
        for (key, entry) in &manifest.sources {
            let owns = entry.event_ids.iter().any(|id| pending.contains(id));
            if !owns || !matches!(entry_state(key, &entry.kind), EntryState::Current) {
                continue;
            }
            if let Some(source) = source_of_kind(&entry.kind) {
                let path = PathBuf::from(key);
                sources.push(SourceFile {
                    source,
                    path: path.clone(),
                });
                forced.insert(path);
            }
        }
    }
    if index.store_changed || pending != store.pending_keys().collect() {
        store.set_pending(&pending);
        store.save(out)?;
    }
    let index = index.decisions;
    let mut other_session = store.other_session_keys();
    sources.sort();
    sources.dedup();
    // Which source owns each event id, from earlier runs (sources interned: the map holds every
    // id of the table).
    let mut source_index: HashMap<String, u32> = HashMap::new();
    let mut intern = |path: &str| -> u32 {
        let next = u32::try_from(source_index.len()).unwrap_or(u32::MAX);
        *source_index.entry(path.to_string()).or_insert(next)
    };
    // Event ids are digests already: foldhash (seeded per run) rather than SipHash.
    let mut owner: HashMap<u64, u32, foldhash::fast::RandomState> = HashMap::default();
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
    let mut unsaved = 0usize;
    // Chunks bound memory to a few files' events at a time; order within a chunk is kept.
    let chunk = rayon::current_num_threads().max(1) * 2;
    for group in sources.chunks(chunk) {
        let results: Vec<ReadResult> = group
            .par_iter()
            .map(|source| read_one(source, &manifest, forced.contains(&source.path), placing))
            .collect();
        for result in results {
            state.files += 1;
            state.bytes += result.bytes;
            summary.bad.merge(&result.bad);
            if let Some((path, reason)) = result.skipped {
                summary.bad.add(reason);
                summary.skipped.push(SkippedFile { path, reason });
                progress(state);
                continue;
            }
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
            let mut kept_bases = Vec::new();
            let mut duplicates = 0;
            for (event, basis) in result.events.into_iter().zip(result.bases) {
                let id = event_key(&event.event_id);
                match owner.get(&id) {
                    Some(other) if *other != this => duplicates += 1,
                    // The same id twice in one source: kept once.
                    Some(_)
                        if kept
                            .last()
                            .is_some_and(|k: &Event| k.event_id == event.event_id) => {}
                    _ => {
                        owner.insert(id, this);
                        kept.push(event);
                        kept_bases.push(basis);
                    }
                }
            }
            summary.duplicates += duplicates;
            entry.duplicates = Some(duplicates);
            decisions::apply(&index, &mut kept, &mut other_session, &mut summary.bad);
            state.events += kept.len() as u64;
            summary.new_events += kept.len() as u64;
            entry.event_ids = kept.iter().map(|e| event_key(&e.event_id)).collect();
            let mut counts = SourceCounts::of(&kept);
            let mut by_basis = BTreeMap::new();
            for basis in kept_bases {
                *by_basis.entry(basis.as_str().to_string()).or_insert(0) += 1;
            }
            counts.by_basis = Some(by_basis);
            entry.counts = Some(counts);
            let buckets = buckets_of(kept.iter().map(|e| e.project_key.as_str()))
                .into_iter()
                .collect();
            batch.sources.push((key, entry, buckets));
            batch.events.extend(kept);
            batch.bytes += result.bytes;
            progress(state);
            if batch.full() {
                write_batch(
                    out,
                    std::mem::take(&mut batch),
                    &mut manifest,
                    &mut references,
                )?;
                // Saved with each batch: a run stopped before this reads the batch's sources
                // again, and its unlisted fragments are removed when the next run starts.
                manifest.save(out)?;
                unsaved = 0;
            }
        }
    }
    if !batch.sources.is_empty() {
        write_batch(out, batch, &mut manifest, &mut references)?;
        unsaved += 1;
    }
    // Totals over the whole table, from each source's counts (read back from the fragments of
    // entries written before counts were kept, and remembered from then on).
    for entry in manifest.sources.values_mut() {
        let counts = match &entry.counts {
            Some(counts) => counts.clone(),
            None => {
                // Only this source's rows: a fragment may hold a whole batch.
                let owned: HashSet<u64> = entry.event_ids.iter().copied().collect();
                let mut counts = SourceCounts::default();
                for fragment in &entry.fragments {
                    for event in crate::table::read_parquet(&out.join(fragment))? {
                        if owned.contains(&event_key(&event.event_id)) {
                            counts.add(&event);
                        }
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
        for (basis, n) in counts.by_basis.unwrap_or_default() {
            *summary.by_basis.entry(basis).or_insert(0) += n;
        }
    }
    if unsaved > 0 {
        manifest.save(out)?;
    }
    // Every row whose decision changed is written: nothing is pending any more.
    if !store.pending.is_empty() || other_session != store.other_session_keys() {
        store.pending.clear();
        store.set_other_session(&other_session);
        store.save(out)?;
    }
    summary.decisions = decisions::counts(&index, &other_session, |id| owner.contains_key(&id));
    summary.skipped.sort();
    Ok(summary)
}

/// The decisions after the annotating sources were read.
struct AnnotationsRead {
    /// Every call's decision.
    decisions: decisions::Index,
    /// The calls whose decision changed.
    changed: BTreeSet<u64>,
    /// The store differs from what was loaded.
    store_changed: bool,
}

/// Reads the annotating sources that are new or changed into the store, and drops the stored
/// sources that are gone (unless the run keeps deleted sources).
fn read_annotations(
    annotating: Vec<SourceFile>,
    store: &mut Store,
    options: &Options<'_>,
    summary: &mut Summary,
) -> AnnotationsRead {
    let known = store.manifest();
    let placing = &options.placing;
    let results: Vec<ReadResult> = annotating
        .par_iter()
        .map(|source| read_one(source, &known, false, placing))
        .collect();
    let gone: Vec<String> = store
        .sources
        .iter()
        .filter(|(key, stored)| matches!(entry_state(key, &stored.read.kind), EntryState::Gone))
        .map(|(key, _)| key.clone())
        .collect();
    // The decisions before, only when some will change (an index costs a pass over them all).
    let changes = !gone.is_empty() || results.iter().any(|r| r.entry.is_some());
    let before = if changes {
        store.index()
    } else {
        decisions::Index::new()
    };
    let mut store_changed = false;
    for result in results {
        let source = &result.source;
        summary.bad.merge(&result.bad);
        if let Some((path, reason)) = result.skipped {
            summary.bad.add(reason);
            summary.skipped.push(SkippedFile { path, reason });
            continue;
        }
        let key = source.path.display().to_string();
        match (result.entry, result.touched) {
            (Some(entry), _) => {
                summary.files_read += 1;
                summary.bytes_read += result.bytes;
                store.set(key, entry, &result.events);
                store_changed = true;
            }
            (None, touched) => {
                summary.files_unchanged += 1;
                if let (Some(touched), Some(stored)) = (touched, store.sources.get_mut(&key)) {
                    stored.read = touched;
                    store_changed = true;
                }
            }
        }
    }
    for key in gone {
        if options.keep_deleted {
            summary.kept_deleted += 1;
        } else {
            store.sources.remove(&key);
            summary.released += 1;
            store_changed = true;
        }
    }
    let decisions = store.index();
    AnnotationsRead {
        changed: if changes {
            decisions::changed(&before, &decisions)
        } else {
            BTreeSet::new()
        },
        decisions,
        store_changed,
    }
}

/// Reads one source unless the manifest shows it unchanged (`entry` is `None` then) or `force`
/// says to read it whatever it shows; a source placed otherwise than `placing` places it now
/// (read with another `--project-root`, or before sessions were placed by their basis) is read
/// again too. Only regular files within the source's size limit are read; the first other
/// file is named in `skipped`, and nothing of the source is read. Its events are placed in
/// their projects ([`project::place`]).
fn read_one(
    source: &SourceFile,
    manifest: &Manifest,
    force: bool,
    placing: &Placing,
) -> ReadResult {
    let mut bad = BadCounts::default();
    let key = source.path.display().to_string();
    let unchanged = |entry: Option<SourceEntry>| ReadResult {
        source: source.clone(),
        skipped: None,
        entry,
        touched: None,
        events: Vec::new(),
        bases: Vec::new(),
        bad: BadCounts::default(),
        bytes: 0,
    };
    let skip = |file: &Path, reason: &'static str| {
        let mut result = unchanged(None);
        result.skipped = Some((file.to_path_buf(), reason));
        result
    };
    let limit = source.source.max_file_bytes;
    let files = (source.source.files)(&source.path);
    let mut metas = Vec::with_capacity(files.len());
    for file in &files {
        match regular_file(file, limit) {
            Ok(meta) => metas.push(meta),
            Err(reason) => return skip(file, reason),
        }
    }
    let size: u64 = metas.iter().map(std::fs::Metadata::len).sum();
    let mtime = metas.iter().map(mtime_ns).max().unwrap_or(0);
    let previous = manifest.sources.get(&key);
    // A source placed otherwise is read again; an annotating source has no rows to place.
    let force = force
        || (!annotates(source.source.kind)
            && previous.is_some_and(|p| {
                p.project_root != placing.forced
                    || p.counts.as_ref().is_none_or(|c| c.by_basis.is_none())
            }));
    if !force && previous.is_some_and(|p| p.size == size && p.mtime_ns == mtime) {
        return unchanged(None);
    }
    let mut contents = Contents::default();
    for file in &files {
        match read_regular(file, limit) {
            Ok(bytes) => contents.push(file, bytes),
            Err(reason) => return skip(file, reason),
        }
    }
    let hash = content_digest(&contents.bytes);
    if let Some(previous) = previous.filter(|p| !force && p.hash == hash) {
        // Touched but not changed: remember the new time, read nothing.
        let mut entry = previous.clone();
        entry.mtime_ns = mtime;
        let mut result = unchanged(None);
        result.touched = Some(entry);
        return result;
    }
    let mut events = (source.source.read)(&source.path, &contents, &mut bad);
    let bases = project::place(&mut events, placing);
    let entry = SourceEntry {
        kind: source.source.kind.to_string(),
        size,
        mtime_ns: mtime,
        hash,
        fragments: Vec::new(),
        event_ids: Vec::new(),
        counts: None,
        duplicates: None,
        project_root: placing.forced.clone(),
    };
    ReadResult {
        source: source.clone(),
        skipped: None,
        entry: Some(entry),
        touched: None,
        events,
        bases,
        bad,
        bytes: contents.bytes.len() as u64,
    }
}
