//! A whole events table replayed (or one shard of its projects): its buckets in order, a few
//! projects per thread at a time, folded in a fixed order so that any thread count gives the
//! same results.

use std::path::Path;

use rayon::prelude::*;

use crate::error::ReplayError;
use crate::events;
use crate::replay::{self, Options, ProjectRun};
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
    for bucket in events::buckets(table)? {
        // Only `project_key` of the whole bucket is held; the rows of a few projects at a time
        // are read, replayed, handed on and dropped.
        let index = events::index_bucket(&bucket)?;
        let name = bucket.file_name().unwrap_or_default().to_string_lossy();
        digests.push(format!("{name} {}", index.digest()?));
        let mut keys: Vec<(u64, &str)> = Vec::new();
        for key in index.projects() {
            if shard.holds(key) {
                keys.push((ordinal, key));
            }
            ordinal += 1;
        }
        for chunk in keys.chunks(batch) {
            let names: Vec<&str> = chunk.iter().map(|(_, key)| *key).collect();
            let runs: Vec<ProjectRun> = events::read_projects(&index, &names)?
                .into_par_iter()
                .map(|events| {
                    let count = events.len() as u64;
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
