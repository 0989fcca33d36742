//! The replay's integration tests: hand-computed histories, determinism, grids against single
//! runs, the export round trip, and the real samples.

mod cases;
mod support;
mod whole;
