//! A whole events table replayed: its buckets in order, a few projects per thread at a time,
//! folded in a fixed order so that any thread count gives the same results.

use std::path::Path;

use rayon::prelude::*;

use crate::error::ReplayError;
use crate::events;
use crate::replay::{self, Options, ProjectRun};
use crate::settings::Setting;
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
    let mut summary = Summary::new(settings, options, miss_budget);
    // A few projects per thread at a time: each finished project carries its curves for every
    // setting, so holding a whole bucket's results would grow with the history.
    let batch = rayon::current_num_threads().max(1) * 2;
    let plan = replay::Plan::new(settings);
    for bucket in events::buckets(table)? {
        // Only `project_key` of the whole bucket is held; the rows of a few projects at a time
        // are read, replayed, handed on and dropped.
        let index = events::index_bucket(&bucket)?;
        let keys: Vec<&str> = index.projects().collect();
        for chunk in keys.chunks(batch) {
            let runs: Vec<ProjectRun> = events::read_projects(&index, chunk)?
                .into_par_iter()
                .map(|events| {
                    let count = events.len() as u64;
                    let run = plan.project(events, options);
                    progress(count);
                    run
                })
                .collect();
            for run in &runs {
                summary.add(run);
            }
            each(&runs)?;
        }
    }
    Ok(summary)
}
