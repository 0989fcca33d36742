//! Reading every agent history into the one events table.
//!
//! Owns: discovery of transcript sources (Claude Code JSONL, Cursor `state.vscdb`, SpecStory
//! Markdown exports, the hook ledger), parsing them into raw events, and the events table schema
//! (column names are spelled here and nowhere else).
//!
//! Must not: decide anything or depend on the engine. The table holds raw facts, so that a newer
//! engine can replay an older table. Filled in by the ingest work; empty until then.
