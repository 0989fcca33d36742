//! A whole events table replayed (or one shard of its projects): its buckets in order, a few
//! projects per thread at a time, folded in a fixed order so that any thread count gives the
//! same results. The standing approvals that apply to every project (`(every project)` rows) are
//! read first and given to each project of their agent; they are not a project of their own.

use std::collections::BTreeMap;
use std::path::Path;

use leastgrant_ingest::schema::Outcome;
use leastgrant_ingest::standing::EVERY_PROJECT;
use leastgrant_ingest::table::bucket_of;

use rayon::prelude::*;

use crate::classify::Options;
use crate::error::ReplayError;
use crate::events::{self, ReplayEvent};
use crate::replay::{self, ProjectRun};
use crate::settings::Setting;
use crate::shard::{Manifest, Shard, ShardProject};
use crate::summary::Summary;

/// Replays a whole events table: one bucket at a time (memory follows the largest bucket), the
/// projects of a bucket in parallel, folded in a fixed order so any thread count gives the same
/// results. `each` receives every bucket's finished projects; `progress` the events done.
pub fn run(
    table: &Path,
    settings: &[Setting],
    options: &Options,
    miss_budget: f64,
    each: &mut dyn FnMut(&[ProjectRun]) -> Result<(), ReplayError>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Summary, ReplayError> {
    run_shard(
        table,
        settings,
        options,
        miss_budget,
        Shard::WHOLE,
        each,
        progress,
    )
    .map(|(summary, _)| summary)
}

/// [`run`] over the projects of one shard only; also returns the shard's manifest (its
/// projects' places among all of the table's, and the fingerprints a merge checks). Every
/// bucket's `project_key` column is read, so each project's place is the one it has in a run
/// of the whole table.
pub fn run_shard(
    table: &Path,
    settings: &[Setting],
    options: &Options,
    miss_budget: f64,
    shard: Shard,
    each: &mut dyn FnMut(&[ProjectRun]) -> Result<(), ReplayError>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Summary, Manifest), ReplayError> {
    let mut summary = Summary::new(settings, options, miss_budget);
    let mut manifest = Manifest::new(shard, settings, options, miss_budget);
    let mut digests = Vec::new();
    let mut ordinal = 0u64;
    // A few projects per thread at a time: each finished project carries its curves for every
    // setting, so holding a whole bucket's results would grow with the history.
    let batch = rayon::current_num_threads().max(1) * 2;
    let plan = replay::Plan::new(settings);
    let every = every_project(table)?;
    for bucket in events::buckets(table)? {
        // Only `project_key` of the whole bucket is held; the rows of a few projects at a time
        // are read, replayed, handed on and dropped.
        let index = events::index_bucket(&bucket)?;
        let name = bucket.file_name().unwrap_or_default().to_string_lossy();
        digests.push(format!("{name} {}", index.digest()?));
        let mut keys: Vec<(u64, &str)> = Vec::new();
        for key in index.projects().filter(|key| *key != EVERY_PROJECT) {
            if shard.holds(key) {
                keys.push((ordinal, key));
            }
            ordinal += 1;
        }
        for chunk in chunks(&keys, &index, batch) {
            let names: Vec<&str> = chunk.iter().map(|(_, key)| *key).collect();
            let runs: Vec<ProjectRun> = events::read_projects(&index, &names)?
                .into_par_iter()
                .map(|events| {
                    let count = events.len() as u64;
                    let events = with_every_project(events, &every);
                    let run = plan.project(events, options);
                    progress(count);
                    run
                })
                .collect();
            for (run, (at, key)) in runs.iter().zip(chunk) {
                summary.add(run);
                manifest.projects.push(ShardProject {
                    ordinal: *at,
                    key: (*key).to_string(),
                    notes: run.notes.clone(),
                });
            }
            each(&runs)?;
        }
    }
    let parts: Vec<&str> = digests.iter().map(String::as_str).collect();
    manifest.events_fingerprint = leastgrant_ingest::common::stable_id(&parts);
    manifest.table_projects = ordinal;
    Ok((summary, manifest))
}

/// Rows read together at least, when the projects are small: each read of a bucket opens its
/// files and decompresses the pages that hold the rows selected, so reading a fleet of small
/// projects a few at a time decompressed the same pages again and again (20,000 projects of 50
/// events: a fifth of an export's time in zstd, 13 s against 3.7 s for the same events in 2,000
/// projects).
const ROWS_PER_READ: usize = 65_536;
/// Projects read together at most: what a chunk holds after its replay (each project's curves
/// for every setting) grows with them.
const PROJECTS_PER_READ: usize = 256;

/// The bucket's projects in chunks to read and replay together: at least `batch` (a few per
/// thread), more while their rows stay under [`ROWS_PER_READ`], never more than
/// [`PROJECTS_PER_READ`]. The chunks keep the key order, so the results do not depend on them.
fn chunks<'k>(
    keys: &'k [(u64, &'k str)],
    index: &events::BucketIndex,
    batch: usize,
) -> Vec<&'k [(u64, &'k str)]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut rows = 0;
    for (at, (_, key)) in keys.iter().enumerate() {
        let taken = at - start;
        if taken >= batch && (rows + index.rows(key) > ROWS_PER_READ || taken >= PROJECTS_PER_READ)
        {
            out.push(&keys[start..at]);
            start = at;
            rows = 0;
        }
        rows += index.rows(key);
    }
    if start < keys.len() {
        out.push(&keys[start..]);
    }
    out
}

/// Replays events held in memory rather than read from a table (the Python package, and each
/// Spark partition): the events of whole projects, in any order. `table` lists every project of
/// the whole events table with its row count (`None`: the projects of `events`); the projects
/// are replayed in the order one [`run`] of such a table replays them (bucket, then key), each
/// gets its place in that order, and the manifest's events fingerprint is taken over `table`,
/// so the outputs of several calls over disjoint projects of one `table`, labelled as the
/// shards `label` of one N, merge ([`crate::merge::merge`]) into one run's. Unlike
/// [`run_shard`], no project is filtered out: the events given are the shard's.
#[allow(clippy::too_many_arguments)]
pub fn run_events(
    events: Vec<ReplayEvent>,
    table: Option<&[(String, u64)]>,
    settings: &[Setting],
    options: &Options,
    miss_budget: f64,
    label: Shard,
    each: &mut dyn FnMut(&[ProjectRun]) -> Result<(), ReplayError>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Summary, Manifest), ReplayError> {
    let mut projects: BTreeMap<(u32, String), Vec<ReplayEvent>> = BTreeMap::new();
    let (every, events): (Vec<ReplayEvent>, Vec<ReplayEvent>) = events
        .into_iter()
        .partition(|e| e.project_key == EVERY_PROJECT);
    for event in events {
        let key = (bucket_of(&event.project_key), event.project_key.clone());
        projects.entry(key).or_default().push(event);
    }
    let mut listed: Vec<(u32, String, u64)> = match table {
        Some(table) => table
            .iter()
            .map(|(key, rows)| (bucket_of(key), key.clone(), *rows))
            .collect(),
        None => projects
            .iter()
            .map(|((bucket, key), rows)| (*bucket, key.clone(), rows.len() as u64))
            .collect(),
    };
    listed.retain(|(_, key, _)| key != EVERY_PROJECT);
    listed.sort_unstable();
    let ordinals: BTreeMap<&str, u64> = listed
        .iter()
        .enumerate()
        .map(|(at, (_, key, _))| (key.as_str(), at as u64))
        .collect();
    let lines: Vec<String> = listed
        .iter()
        .map(|(_, key, rows)| format!("project {key} {rows}"))
        .collect();
    let parts: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut summary = Summary::new(settings, options, miss_budget);
    let mut manifest = Manifest::new(label, settings, options, miss_budget);
    manifest.events_fingerprint = leastgrant_ingest::common::stable_id(&parts);
    manifest.table_projects = listed.len() as u64;
    let mut keyed = Vec::new();
    for ((_, key), events) in projects {
        let ordinal = *ordinals.get(key.as_str()).ok_or_else(|| {
            ReplayError(format!(
                "the project `{key}` is not one of the table's projects"
            ))
        })?;
        let mut events = with_every_project(events, &every);
        events::order(&mut events);
        keyed.push((ordinal, key, events));
    }
    let batch = rayon::current_num_threads().max(1) * 2;
    let plan = replay::Plan::new(settings);
    while !keyed.is_empty() {
        let rest = keyed.split_off(batch.min(keyed.len()));
        let chunk = std::mem::replace(&mut keyed, rest);
        let (places, lists): (Vec<(u64, String)>, Vec<Vec<ReplayEvent>>) = chunk
            .into_iter()
            .map(|(ordinal, key, events)| ((ordinal, key), events))
            .unzip();
        let runs: Vec<ProjectRun> = lists
            .into_par_iter()
            .map(|events| {
                let count = events.len() as u64;
                let run = plan.project(events, options);
                progress(count);
                run
            })
            .collect();
        for (run, (ordinal, key)) in runs.iter().zip(places) {
            summary.add(run);
            manifest.projects.push(ShardProject {
                ordinal,
                key,
                notes: run.notes.clone(),
            });
        }
        each(&runs)?;
    }
    Ok((summary, manifest))
}

/// The standing approvals of the whole table that apply to every project (a user's own
/// settings): the rows of [`EVERY_PROJECT`], read from its bucket.
fn every_project(table: &Path) -> Result<Vec<ReplayEvent>, ReplayError> {
    let name = format!("bucket={:02}", bucket_of(EVERY_PROJECT));
    for bucket in events::buckets(table)? {
        if bucket
            .file_name()
            .is_some_and(|n| n.to_string_lossy() == name)
        {
            let index = events::index_bucket(&bucket)?;
            if index.projects().any(|key| key == EVERY_PROJECT) {
                return Ok(events::read_projects(&index, &[EVERY_PROJECT])?
                    .into_iter()
                    .flatten()
                    .collect());
            }
        }
    }
    Ok(Vec::new())
}

/// A project's events with the user-level standing approvals of the agents it has calls of,
/// made the project's own (its key, root and working directory).
fn with_every_project(mut events: Vec<ReplayEvent>, every: &[ReplayEvent]) -> Vec<ReplayEvent> {
    let Some(first) = events.iter().find(|e| e.outcome != Outcome::Granted) else {
        return events;
    };
    let (key, root) = (first.project_key.clone(), first.project_root.clone());
    let agents: std::collections::BTreeSet<String> = events
        .iter()
        .filter(|e| e.outcome != Outcome::Granted)
        .map(|e| e.agent.clone())
        .collect();
    for row in every.iter().filter(|row| agents.contains(&row.agent)) {
        let mut row = row.clone();
        row.project_key.clone_from(&key);
        row.project_root.clone_from(&root);
        row.cwd = Some(root.clone());
        events.push(row);
    }
    events
}
