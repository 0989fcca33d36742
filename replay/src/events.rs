//! Reading the events table for the replay: only the columns it needs, one project bucket at a
//! time, so memory follows the largest bucket rather than the whole history.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use arrow_array::{
    Array, BooleanArray, RecordBatch, StringArray, TimestampMicrosecondArray, UInt32Array,
};
use leastgrant_ingest::schema::{Event, Outcome, col, column, decided_by};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};

use crate::error::ReplayError;

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
    /// Who decided whether it could run, where the history recorded the decision (the
    /// `decided_by` column); a Claude Code result saying the auto-mode classifier denied the
    /// call is read as the classifier's decision.
    pub decided_by: Option<Decider>,
    /// It ran in Claude Code's auto mode, where a classifier, not a person, let calls through.
    pub auto_mode: bool,
}

/// Who decided whether a call could run, as the history recorded it (`decided_by` in
/// docs/formats.md): parsed once when the table is read, so the replay compares no text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decider {
    /// A person at a prompt, for this call.
    User,
    /// A person at a prompt, for the rest of the session.
    UserSession,
    /// A person's standing approval.
    UserPermanent,
    /// Configuration: rules, a mode, a policy; no prompt.
    Config,
    /// A hook.
    Hook,
    /// An automatic judge (Claude Code's auto-mode classifier).
    Classifier,
}

impl Decider {
    /// The stored value's decider; `None` for a value this build does not know.
    pub fn parse(value: &str) -> Option<Decider> {
        Some(match value {
            decided_by::USER => Decider::User,
            decided_by::USER_SESSION => Decider::UserSession,
            decided_by::USER_PERMANENT => Decider::UserPermanent,
            decided_by::CONFIG => Decider::Config,
            decided_by::HOOK => Decider::Hook,
            decided_by::CLASSIFIER => Decider::Classifier,
            _ => return None,
        })
    }

    /// A person decided (the only decisions that are human evidence).
    pub fn is_person(self) -> bool {
        matches!(
            self,
            Decider::User | Decider::UserSession | Decider::UserPermanent
        )
    }

    /// The decider of an event: its recorded `decided_by`, else the classifier when the
    /// outcome was read from the classifier's refusal text.
    fn of(recorded: Option<&str>, outcome: Outcome, outcome_rule: &str) -> Option<Decider> {
        match recorded.and_then(Decider::parse) {
            Some(decider) => Some(decider),
            None if outcome == Outcome::Denied && outcome_rule == CLASSIFIER_RULE => {
                Some(Decider::Classifier)
            }
            None => None,
        }
    }
}

/// The `outcome_rule` of a call the auto-mode classifier denied (ingest's `outcome::classify`).
const CLASSIFIER_RULE: &str = "classifier";

/// The permission mode in which Claude Code's classifier decides instead of a person.
const AUTO_MODE: &str = "auto";

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
            decided_by: Decider::of(e.decided_by.as_deref(), e.outcome, &e.outcome_rule),
            auto_mode: e.permission_mode.as_deref() == Some(AUTO_MODE),
        }
    }
}

const COLUMNS: [&str; 16] = [
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
    col::OUTCOME_RULE,
    col::PERMISSION_MODE,
    col::DECIDED_BY,
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

/// Where each project's rows are in one bucket's files, found by reading `project_key` alone:
/// the replay then reads a few projects at a time, so its memory follows the largest project,
/// not the bucket.
#[derive(Debug, Clone, Default)]
pub struct BucketIndex {
    files: Vec<PathBuf>,
    /// Per project, in key order: (file, first row, rows) runs.
    projects: BTreeMap<String, Vec<(usize, usize, usize)>>,
}

impl BucketIndex {
    /// The projects, in key order.
    pub fn projects(&self) -> impl Iterator<Item = &str> {
        self.projects.keys().map(String::as_str)
    }

    /// How many rows a project has in the bucket (0 for a key it does not hold).
    pub fn rows(&self, key: &str) -> usize {
        self.projects
            .get(key)
            .map_or(0, |runs| runs.iter().map(|(_, _, len)| len).sum())
    }

    /// What identifies the bucket's contents without reading them again: every file's name and
    /// length, and every project's rows (16 hex digits of SHA-256). Two tables with the same
    /// digests per bucket hold the same files with the same projects.
    pub fn digest(&self) -> Result<String, ReplayError> {
        let mut parts = Vec::new();
        for path in &self.files {
            let length = fs::metadata(path)
                .map_err(|e| fail(path, "read", &e))?
                .len();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            parts.push(format!("file {name} {length}"));
        }
        for (key, runs) in &self.projects {
            let rows: usize = runs.iter().map(|(_, _, len)| len).sum();
            parts.push(format!("project {key} {rows}"));
        }
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        Ok(leastgrant_ingest::common::stable_id(&parts))
    }
}

fn parquet_files(bucket: &Path) -> Result<Vec<PathBuf>, ReplayError> {
    let mut files: Vec<PathBuf> = fs::read_dir(bucket)
        .map_err(|e| ReplayError(format!("cannot read {}: {e}", bucket.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    Ok(files)
}

/// Reads the `project_key` column of every file of a bucket.
pub fn index_bucket(bucket: &Path) -> Result<BucketIndex, ReplayError> {
    let files = parquet_files(bucket)?;
    let mut projects: BTreeMap<String, Vec<(usize, usize, usize)>> = BTreeMap::new();
    for (f, path) in files.iter().enumerate() {
        let reader = open(path, &[col::PROJECT_KEY], None)?;
        let mut row = 0usize;
        for batch in reader {
            let batch = batch.map_err(|e| fail(path, "read", &e))?;
            let keys = column::<StringArray>(&batch, col::PROJECT_KEY)
                .map_err(|e| fail(path, "decode", &e))?;
            for i in 0..batch.num_rows() {
                let runs = projects.entry(keys.value(i).to_string()).or_default();
                match runs.last_mut() {
                    Some((file, start, len)) if *file == f && *start + *len == row => *len += 1,
                    _ => runs.push((f, row, 1)),
                }
                row += 1;
            }
        }
    }
    Ok(BucketIndex { files, projects })
}

/// The events of `keys` (projects of the index), one list per key in that order, each in
/// replay order. Only the rows of those projects are decoded.
pub fn read_projects(
    index: &BucketIndex,
    keys: &[&str],
) -> Result<Vec<Vec<ReplayEvent>>, ReplayError> {
    let mut wanted: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
    for key in keys {
        for (file, start, len) in index.projects.get(*key).into_iter().flatten() {
            wanted.entry(*file).or_default().push((*start, *len));
        }
    }
    let mut out: Vec<Vec<ReplayEvent>> = vec![Vec::new(); keys.len()];
    let slot: BTreeMap<&str, usize> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    for (file, mut runs) in wanted {
        let Some(path) = index.files.get(file) else {
            continue;
        };
        runs.sort_unstable();
        let mut selectors = Vec::new();
        let mut at = 0usize;
        for (start, len) in runs {
            if start > at {
                selectors.push(RowSelector::skip(start - at));
            }
            selectors.push(RowSelector::select(len));
            at = start + len;
        }
        let mut events = Vec::new();
        for batch in open(path, &COLUMNS, Some(RowSelection::from(selectors)))? {
            let batch = batch.map_err(|e| fail(path, "read", &e))?;
            decode(&batch, &mut events).map_err(|e| fail(path, "decode", &e))?;
        }
        for event in events {
            if let Some(list) = slot
                .get(event.project_key.as_str())
                .and_then(|i| out.get_mut(*i))
            {
                list.push(event);
            }
        }
    }
    for events in &mut out {
        order(events);
    }
    Ok(out)
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

fn fail(path: &Path, what: &str, e: &dyn std::fmt::Display) -> ReplayError {
    ReplayError(format!("cannot {what} {}: {e}", path.display()))
}

/// The value of a nullable text column at a row; `None` when null or the column is absent.
fn value(array: Option<&StringArray>, i: usize) -> Option<&str> {
    array.and_then(|a| (!a.is_null(i)).then(|| a.value(i)))
}

/// A reader of `columns` of one file, of the selected rows only when a selection is given.
fn open(
    path: &Path,
    columns: &[&str],
    rows: Option<RowSelection>,
) -> Result<ParquetRecordBatchReader, ReplayError> {
    let file = File::open(path).map_err(|e| fail(path, "open", &e))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| fail(path, "read", &e))?;
    let schema = builder.parquet_schema();
    let wanted: Vec<usize> = schema
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| columns.contains(&c.name()))
        .map(|(i, _)| i)
        .collect();
    let mask = ProjectionMask::leaves(schema, wanted);
    let builder = builder.with_projection(mask);
    let builder = match rows {
        Some(selection) => builder.with_row_selection(selection),
        None => builder,
    };
    builder.build().map_err(|e| fail(path, "read", &e))
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
    // Tables written before these columns existed have none: no decision recorded, no mode.
    let optional = |name: &str| column::<StringArray>(batch, name).ok();
    let (outcome_rule, mode, decided) = (
        optional(col::OUTCOME_RULE),
        optional(col::PERMISSION_MODE),
        optional(col::DECIDED_BY),
    );
    for i in 0..batch.num_rows() {
        // An outcome this build does not know is treated as unanswered: it labels nothing.
        let outcome = Outcome::parse(outcome.value(i)).unwrap_or(Outcome::Unmatched);
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
            outcome,
            decided_by: Decider::of(
                value(decided, i),
                outcome,
                value(outcome_rule, i).unwrap_or(""),
            ),
            auto_mode: value(mode, i) == Some(AUTO_MODE),
        });
    }
    Ok(())
}
