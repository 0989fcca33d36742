//! Ingest integration tests: readers on real samples and generated fixtures, and the table.

mod agents2026;
mod claude;
mod codex;
mod copilot;
mod cursor;
mod gemini;
mod ledger;
mod otel;
mod project;
mod registry;
mod robustness;
mod specstory;
mod standing;
mod support;
mod table;
