//! Test histories: events built from case files, and synthetic histories written as a real
//! events table through ingest's own writer.

use std::path::Path;

use leastgrant_ingest::schema::{Event, Outcome};
use leastgrant_replay::events::ReplayEvent;

pub const DAY_US: i64 = 86_400_000_000;
/// 2026-01-01T00:00:00Z.
pub const T0: i64 = 1_767_225_600_000_000;

/// A replay event for project `project`.
#[allow(clippy::too_many_arguments)]
pub fn event(
    project: &str,
    index: usize,
    ts_us: i64,
    session: &str,
    tool: &str,
    input: serde_json::Value,
    outcome: Outcome,
    attended: Option<bool>,
) -> ReplayEvent {
    ReplayEvent {
        event_id: format!("{project}#{index}"),
        agent: "claude-code".to_string(),
        source: format!("test:{index}"),
        project_key: project.to_string(),
        project_root: project.to_string(),
        session_id: session.to_string(),
        seq: u32::try_from(index).unwrap(),
        ts_us: Some(ts_us),
        cwd: Some(project.to_string()),
        attended,
        tool_name: tool.to_string(),
        tool_input: input.to_string(),
        outcome,
        decided_by: None,
        auto_mode: false,
    }
}

/// Writes events as an events table (ingest's writer: the real layout).
pub fn write_table(dir: &Path, events: Vec<Event>) {
    leastgrant_ingest::table::write_fragments(dir, "synthetic", events).unwrap();
}

/// Replay events of a synthetic project, for library-level tests.
pub fn as_replay(events: &[Event]) -> Vec<ReplayEvent> {
    events.iter().map(ReplayEvent::from).collect()
}

/// A synthetic history (see `leastgrant_replay::synthetic`).
pub fn synthetic(projects: usize, per_project: usize, seed: u64) -> Vec<Event> {
    leastgrant_replay::synthetic::history(projects, per_project, seed)
}
