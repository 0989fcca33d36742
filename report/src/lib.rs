//! Plots and the report bundle (HTML, Markdown) from the replay's Parquet output.
//!
//! Owns: reading replay output and turning it into pictures and pages a person can act on.
//!
//! Must not: recompute decisions or depend on the engine or the replay crate: it reads their
//! published tables only. Filled in by the report work.
