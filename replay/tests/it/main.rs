//! The replay's integration tests: hand-computed histories, determinism, grids against single
//! runs, shards merged against one run, the export round trip, and the real samples.

mod adversarial;
mod cases;
mod shards;
mod standing;
mod support;
mod whole;
