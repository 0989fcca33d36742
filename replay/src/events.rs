//! Reading the events table for the replay: only the columns it needs, one project bucket at a
//! time, so memory follows the largest bucket rather than the whole history.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use arrow_array::{
    Array, BooleanArray, RecordBatch, StringArray, TimestampMicrosecondArray, UInt32Array,
};
use leastgrant_ingest::schema::{Event, Outcome, col, column};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::ReplayError;

/// What the replay needs of one event.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayEvent {
    /// Stable id.
    pub event_id: String,
    /// The agent.
    pub agent: String,
    /// Where it was read.
    pub source: String,
    /// The project key.
    pub project_key: String,
    /// The project root.
    pub project_root: String,
    /// The session.
    pub session_id: String,
    /// Order within the session.
    pub seq: u32,
    /// UTC µs, when known.
    pub ts_us: Option<i64>,
    /// Working directory.
    pub cwd: Option<String>,
    /// A person was answering prompts.
    pub attended: Option<bool>,
    /// The tool.
    pub tool_name: String,
    /// The tool input, JSON text.
    pub tool_input: String,
    /// How it ended.
    pub outcome: Outcome,
}

impl From<&Event> for ReplayEvent {
    fn from(e: &Event) -> ReplayEvent {
        ReplayEvent {
            event_id: e.event_id.clone(),
            agent: e.agent.clone(),
            source: e.source.clone(),
            project_key: e.project_key.clone(),
            project_root: e.project_root.clone(),
            session_id: e.session_id.clone(),
            seq: e.seq,
            ts_us: e.ts_us,
            cwd: e.cwd.clone(),
            attended: e.attended,
            tool_name: e.tool_name.clone(),
            tool_input: e.tool_input.clone(),
            outcome: e.outcome,
        }
    }
}

const COLUMNS: [&str; 13] = [
    col::EVENT_ID,
    col::AGENT,
    col::SOURCE,
    col::PROJECT_KEY,
    col::PROJECT_ROOT,
    col::SESSION_ID,
    col::SEQ,
    col::TS,
    col::CWD,
    col::ATTENDED,
    col::TOOL_NAME,
    col::TOOL_INPUT,
    col::OUTCOME,
];

/// The table's bucket directories, in order (`events/bucket=NN`).
pub fn buckets(table: &Path) -> Result<Vec<PathBuf>, ReplayError> {
    let dir = table.join("events");
    let entries = fs::read_dir(&dir).map_err(|e| {
        ReplayError(format!(
            "no events table at {} ({e}); run `leastgrant ingest` first",
            table.display()
        ))
    })?;
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    Ok(out)
}

/// Every event of one bucket, grouped by project, each project in replay order: time, then
/// session, then sequence. An event without a time takes its session's last known time.
pub fn read_bucket(bucket: &Path) -> Result<BTreeMap<String, Vec<ReplayEvent>>, ReplayError> {
    let mut files: Vec<PathBuf> = fs::read_dir(bucket)
        .map_err(|e| ReplayError(format!("cannot read {}: {e}", bucket.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    let mut projects: BTreeMap<String, Vec<ReplayEvent>> = BTreeMap::new();
    for file in files {
        for event in read_file(&file)? {
            projects
                .entry(event.project_key.clone())
                .or_default()
                .push(event);
        }
    }
    for events in projects.values_mut() {
        order(events);
    }
    Ok(projects)
}

/// Sorts into replay order and fills missing times from the session.
pub fn order(events: &mut [ReplayEvent]) {
    events.sort_by(|a, b| {
        (&a.session_id, a.seq, &a.event_id).cmp(&(&b.session_id, b.seq, &b.event_id))
    });
    let mut last: Option<(String, i64)> = None;
    for event in events.iter_mut() {
        match (event.ts_us, &last) {
            (Some(ts), _) => last = Some((event.session_id.clone(), ts)),
            (None, Some((session, ts))) if *session == event.session_id => event.ts_us = Some(*ts),
            _ => {}
        }
    }
    events.sort_by(|a, b| {
        (a.ts_us.unwrap_or(0), &a.session_id, a.seq, &a.event_id).cmp(&(
            b.ts_us.unwrap_or(0),
            &b.session_id,
            b.seq,
            &b.event_id,
        ))
    });
}

fn read_file(path: &Path) -> Result<Vec<ReplayEvent>, ReplayError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        ReplayError(format!("cannot {what} {}: {e}", path.display()))
    };
    let file = File::open(path).map_err(|e| fail("open", &e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| fail("read", &e))?;
    let schema = builder.parquet_schema();
    let wanted: Vec<usize> = schema
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| COLUMNS.contains(&c.name()))
        .map(|(i, _)| i)
        .collect();
    let mask = ProjectionMask::leaves(schema, wanted);
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| fail("read", &e))?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| fail("read", &e))?;
        decode(&batch, &mut out).map_err(|e| fail("decode", &e))?;
    }
    Ok(out)
}

fn decode(batch: &RecordBatch, out: &mut Vec<ReplayEvent>) -> Result<(), String> {
    let text = |name: &str| column::<StringArray>(batch, name).map_err(|e| e.to_string());
    let seq = column::<UInt32Array>(batch, col::SEQ).map_err(|e| e.to_string())?;
    let ts = column::<TimestampMicrosecondArray>(batch, col::TS).map_err(|e| e.to_string())?;
    let attended = column::<BooleanArray>(batch, col::ATTENDED).map_err(|e| e.to_string())?;
    let (event_id, agent, source, project_key, project_root) = (
        text(col::EVENT_ID)?,
        text(col::AGENT)?,
        text(col::SOURCE)?,
        text(col::PROJECT_KEY)?,
        text(col::PROJECT_ROOT)?,
    );
    let (session_id, cwd, tool_name, tool_input, outcome) = (
        text(col::SESSION_ID)?,
        text(col::CWD)?,
        text(col::TOOL_NAME)?,
        text(col::TOOL_INPUT)?,
        text(col::OUTCOME)?,
    );
    for i in 0..batch.num_rows() {
        out.push(ReplayEvent {
            event_id: event_id.value(i).to_string(),
            agent: agent.value(i).to_string(),
            source: source.value(i).to_string(),
            project_key: project_key.value(i).to_string(),
            project_root: project_root.value(i).to_string(),
            session_id: session_id.value(i).to_string(),
            seq: seq.value(i),
            ts_us: (!ts.is_null(i)).then(|| ts.value(i)),
            cwd: (!cwd.is_null(i)).then(|| cwd.value(i).to_string()),
            attended: (!attended.is_null(i)).then(|| attended.value(i)),
            tool_name: tool_name.value(i).to_string(),
            tool_input: tool_input.value(i).to_string(),
            // An outcome this build does not know is treated as unanswered: it labels nothing.
            outcome: Outcome::parse(outcome.value(i)).unwrap_or(Outcome::Unmatched),
        });
    }
    Ok(())
}
