//! Prequential replay of the events table under many settings at once.
//!
//! Owns: classifying each event once with the engine, replaying settings and threshold grids
//! per project (decide first, then learn, no look-ahead), the "native rules only" setting's
//! verdicts (the agents' own matchers over the rules exported as the replay goes), the metrics
//! (outcome classes, Wilson bounds, learning curves, the Pareto frontier), the output tables,
//! shards of a replay and their merge, and exporting the frozen envelope.
//!
//! Must not: draw anything, or make a decision any other way than through the engine's
//! `judge`/`decide`, which is what makes a replayed verdict identical to a live one.

pub mod classify;
mod error;
pub mod events;
pub mod export;
pub mod merge;
pub mod native;
pub mod output;
pub mod replay;
mod run;
pub mod settings;
pub mod shard;
mod shared;
pub mod summary;
pub mod synthetic;

pub use classify::{MissBudgetOn, Options, ProjectAnswers, Unattended};
pub use error::ReplayError;
pub use replay::{ProjectRun, replay_project};
pub use run::{run, run_events, run_shard};
pub use settings::{Grid, GridFile, Setting};
pub use shard::Shard;
pub use summary::Summary;
