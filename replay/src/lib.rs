//! Prequential replay of the events table under many settings at once.
//!
//! Owns: classifying each event once with the engine, replaying settings and threshold grids
//! per project (decide first, then learn, no look-ahead), the metrics (outcome classes, Wilson
//! bounds, learning curves, the Pareto frontier), the output tables and exporting the frozen
//! envelope.
//!
//! Must not: draw anything, or make a decision any other way than through the engine's
//! `judge`/`decide`, which is what makes a replayed verdict identical to a live one.

pub mod events;
pub mod export;
pub mod output;
pub mod replay;
pub mod settings;
pub mod summary;
pub mod synthetic;

use std::path::Path;

use rayon::prelude::*;

pub use replay::{Options, ProjectAnswers, ProjectRun, Unattended, replay_project};
pub use settings::{Grid, GridFile, Setting};
pub use summary::Summary;

/// Why a replay could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError(pub String);

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReplayError {}

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
