//! The runtime hook that agents call before every tool call.
//!
//! Owns: the agents' wire formats (Claude Code, Cursor), loading the frozen envelope, calling the
//! engine's `decide`, answering in the agent's format, and appending to the decision ledger.
//!
//! Must not: depend on ingest, replay, report or anything heavy; panic (the same lints as the
//! engine apply); or answer anything wider than the envelope that was audited. The binary comes
//! with the hook work; today the crate holds the file grant store, which the hook and the CLI
//! share.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::unreachable
)]

pub mod grants;
