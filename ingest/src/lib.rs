//! Reading every agent history into the one events table.
//!
//! Owns: discovery of transcript sources (Claude Code JSONL, SpecStory Markdown exports, Cursor
//! `state.vscdb`, Codex CLI rollouts, Copilot CLI sessions, Gemini CLI chat recordings, the
//! hook's decision ledger, Claude Code's OpenTelemetry logs, and the standing approvals of Claude
//! Code's settings, Codex's `.rules` and the Copilot CLI's `permissions-config.json` — each a
//! reader's `SOURCE`, listed once in [`registry::SOURCES`]), parsing them into raw events
//! ([`schema::Event`]), joining recorded decisions onto them ([`decisions`]), and writing the
//! events table (Parquet, zstd, one partition per project bucket). Column names are spelled in
//! [`schema`] and nowhere else.
//!
//! Modules, bottom first (none imports from one above it): `schema`; `common`, `outcome`;
//! `project` (the project of a session: one rule for every source); `source`, `standing`; the
//! readers `claude`, `claude_settings`, `codex`, `codex_rules`, `copilot`, `copilot_permissions`,
//! `cursor`, `gemini`, `ledger`, `otel`, `specstory`; `registry`; `table`; `decisions`; `run`.
//!
//! Must not: decide anything or depend on the engine. The table holds raw facts, so that a newer
//! engine can replay an older table.

pub mod claude;
pub mod claude_settings;
pub mod codex;
pub mod codex_rules;
pub mod common;
pub mod copilot;
pub mod copilot_permissions;
pub mod cursor;
pub mod decisions;
pub mod gemini;
pub mod ledger;
pub mod otel;
pub mod outcome;
pub mod project;
pub mod registry;
pub mod run;
pub mod schema;
pub mod source;
pub mod specstory;
pub mod standing;
pub mod table;
