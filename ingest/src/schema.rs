//! The events table: one row per tool call, its columns spelled here and nowhere else.
//!
//! Raw facts only — nothing here depends on the engine's knowledge, so a newer engine can
//! replay an older table. `schema_version` travels in each file's key-value metadata.

use std::borrow::Borrow;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, StringBuilder, TimestampMicrosecondBuilder, UInt32Builder,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, RecordBatch, StringArray, TimestampMicrosecondArray, UInt32Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, TimeUnit};

/// Bumped whenever a column is added, removed or changes meaning.
pub const SCHEMA_VERSION: &str = "3";

/// The metadata key holding [`SCHEMA_VERSION`].
pub const SCHEMA_VERSION_KEY: &str = "leastgrant.schema_version";

/// The `project_root` (and key) of a call whose source names no project.
pub const UNKNOWN_PROJECT: &str = "(unknown)";

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// It ran (successfully or not: see `is_error`).
    Ran,
    /// It ran and failed.
    Errored,
    /// A person refused it at the permission prompt.
    Refused,
    /// A parallel sibling of a refusal: it never ran, but nobody refused it.
    Cancelled,
    /// A person interrupted it while it ran.
    Interrupted,
    /// A hook, a rule or a classifier denied it.
    Denied,
    /// It asked the person a question and the person answered (not a refusal).
    Answered,
    /// No result was recorded.
    Unmatched,
    /// Not a call: a standing approval, a rule of an agent's settings file in force from `ts`
    /// (the file's modification time); `tool_input` holds the rule (the standing-approval readers).
    Granted,
}

impl Outcome {
    /// Every outcome.
    pub const ALL: [Outcome; 9] = [
        Outcome::Ran,
        Outcome::Errored,
        Outcome::Refused,
        Outcome::Cancelled,
        Outcome::Interrupted,
        Outcome::Denied,
        Outcome::Answered,
        Outcome::Unmatched,
        Outcome::Granted,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ran => "ran",
            Outcome::Errored => "errored",
            Outcome::Refused => "refused",
            Outcome::Cancelled => "cancelled",
            Outcome::Interrupted => "interrupted",
            Outcome::Denied => "denied",
            Outcome::Answered => "answered",
            Outcome::Unmatched => "unmatched",
            Outcome::Granted => "granted",
        }
    }

    /// Parses the stored name.
    pub fn parse(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

/// One tool call as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Stable across re-ingests: a digest of the agent, the session and the call's own id (or
    /// its position when the agent records none).
    pub event_id: String,
    /// `claude-code`, `cursor`, `codex`, `gemini`, …
    pub agent: String,
    /// The agent's version, when recorded.
    pub agent_version: Option<String>,
    /// Where it was read: `path:line` or `path#key`.
    pub source: String,
    /// The reader: `claude-jsonl`, `specstory`, `cursor-vscdb`, `ledger`.
    pub source_kind: String,
    /// The project, normalised (forward slashes, no trailing slash): the grouping key.
    pub project_key: String,
    /// The project root as the history gives it.
    pub project_root: String,
    /// The session (conversation) id.
    pub session_id: String,
    /// Order within the session.
    pub seq: u32,
    /// When the call was made, UTC microseconds; `None` when unknown.
    pub ts_us: Option<i64>,
    /// The working directory of the call.
    pub cwd: Option<String>,
    /// The git branch, when recorded.
    pub git_branch: Option<String>,
    /// The agent's permission mode in force (raw value: `default`, `acceptEdits`, …).
    pub permission_mode: Option<String>,
    /// Whether a person was answering prompts: from the mode (`None` when unknown).
    pub attended: Option<bool>,
    /// The agent's tool name.
    pub tool_name: String,
    /// The tool input as JSON text.
    pub tool_input: String,
    /// Shell tools: the command.
    pub command: Option<String>,
    /// File tools: the path.
    pub file_path: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// The result was flagged as an error.
    pub is_error: Option<bool>,
    /// Recorded inside a sub-agent.
    pub is_sidechain: bool,
    /// The agent's id for the call.
    pub tool_use_id: Option<String>,
    /// Which rule decided the outcome (so the rules can be re-run).
    pub outcome_rule: String,
    /// The agent's denial kind, raw (`permission-rule`, `user-rejected`, …).
    pub denial_kind: Option<String>,
    /// The start of the result text (at most 2 KB), for audits of the outcome.
    pub result_excerpt: Option<String>,
    /// Who decided the call's permission, where the source records the decision itself (one
    /// of [`decided_by`]); `None` when no decision was recorded (never inferred from a mode or
    /// a result text: `outcome_rule` says how the outcome was read).
    pub decided_by: Option<String>,
}

/// The stored values of the `decided_by` column: who decided whether a call could run, as the
/// source recorded it.
pub mod decided_by {
    /// A person, at a prompt, for this call only (Claude Code `user_temporary`, `user_reject`,
    /// `user_abort`; Copilot `approved`, `denied-interactively-by-user`).
    pub const USER: &str = "user";
    /// A person, at a prompt, for the rest of the session (Copilot `approved-for-session`).
    pub const USER_SESSION: &str = "user-session";
    /// A person's standing approval: the click that stored it, and each later call it covered
    /// (Claude Code `user_permanent`; Copilot `approved-for-location`).
    pub const USER_PERMANENT: &str = "user-permanent";
    /// Configuration without a prompt: permission rules, a mode, an organisation's policy
    /// (Claude Code `config`; Copilot `denied-by-rules`, `denied-by-content-exclusion-policy`,
    /// `denied-no-approval-rule-and-could-not-request-from-user`, an approval a managed policy
    /// handled).
    pub const CONFIG: &str = "config";
    /// A hook (Claude Code `hook`; Copilot `denied-by-permission-request-hook`, a request a
    /// hook resolved).
    pub const HOOK: &str = "hook";
    /// An automatic judge (a decision source naming a classifier).
    pub const CLASSIFIER: &str = "classifier";

    /// Every value.
    pub const ALL: [&str; 6] = [USER, USER_SESSION, USER_PERMANENT, CONFIG, HOOK, CLASSIFIER];
}

/// The stored names of the agents that more than one reader records (the `agent` column; the
/// hook's `--agent` names them the same way in its ledger).
pub mod agent {
    /// Claude Code.
    pub const CLAUDE_CODE: &str = "claude-code";
    /// The Codex CLI.
    pub const CODEX: &str = "codex";
    /// Cursor.
    pub const CURSOR: &str = "cursor";
    /// The GitHub Copilot CLI.
    pub const COPILOT: &str = "copilot";
    /// The Gemini CLI.
    pub const GEMINI: &str = "gemini";
}

/// Column names, in table order. No other module spells them.
pub mod col {
    #![allow(missing_docs)]
    pub const EVENT_ID: &str = "event_id";
    pub const AGENT: &str = "agent";
    pub const AGENT_VERSION: &str = "agent_version";
    pub const SOURCE: &str = "source";
    pub const SOURCE_KIND: &str = "source_kind";
    pub const PROJECT_KEY: &str = "project_key";
    pub const PROJECT_ROOT: &str = "project_root";
    pub const SESSION_ID: &str = "session_id";
    pub const SEQ: &str = "seq";
    pub const TS: &str = "ts";
    pub const CWD: &str = "cwd";
    pub const GIT_BRANCH: &str = "git_branch";
    pub const PERMISSION_MODE: &str = "permission_mode";
    pub const ATTENDED: &str = "attended";
    pub const TOOL_NAME: &str = "tool_name";
    pub const TOOL_INPUT: &str = "tool_input";
    pub const COMMAND: &str = "command";
    pub const FILE_PATH: &str = "file_path";
    pub const OUTCOME: &str = "outcome";
    pub const IS_ERROR: &str = "is_error";
    pub const IS_SIDECHAIN: &str = "is_sidechain";
    pub const TOOL_USE_ID: &str = "tool_use_id";
    pub const OUTCOME_RULE: &str = "outcome_rule";
    pub const DENIAL_KIND: &str = "denial_kind";
    pub const RESULT_EXCERPT: &str = "result_excerpt";
    pub const DECIDED_BY: &str = "decided_by";
}

/// The Arrow schema of the table, with the schema version in its metadata.
pub fn schema() -> Arc<Schema> {
    let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let fields = vec![
        Field::new(col::EVENT_ID, DataType::Utf8, false),
        Field::new(col::AGENT, DataType::Utf8, false),
        Field::new(col::AGENT_VERSION, DataType::Utf8, true),
        Field::new(col::SOURCE, DataType::Utf8, false),
        Field::new(col::SOURCE_KIND, DataType::Utf8, false),
        Field::new(col::PROJECT_KEY, DataType::Utf8, false),
        Field::new(col::PROJECT_ROOT, DataType::Utf8, false),
        Field::new(col::SESSION_ID, DataType::Utf8, false),
        Field::new(col::SEQ, DataType::UInt32, false),
        Field::new(col::TS, ts, true),
        Field::new(col::CWD, DataType::Utf8, true),
        Field::new(col::GIT_BRANCH, DataType::Utf8, true),
        Field::new(col::PERMISSION_MODE, DataType::Utf8, true),
        Field::new(col::ATTENDED, DataType::Boolean, true),
        Field::new(col::TOOL_NAME, DataType::Utf8, false),
        Field::new(col::TOOL_INPUT, DataType::Utf8, false),
        Field::new(col::COMMAND, DataType::Utf8, true),
        Field::new(col::FILE_PATH, DataType::Utf8, true),
        Field::new(col::OUTCOME, DataType::Utf8, false),
        Field::new(col::IS_ERROR, DataType::Boolean, true),
        Field::new(col::IS_SIDECHAIN, DataType::Boolean, false),
        Field::new(col::TOOL_USE_ID, DataType::Utf8, true),
        Field::new(col::OUTCOME_RULE, DataType::Utf8, false),
        Field::new(col::DENIAL_KIND, DataType::Utf8, true),
        Field::new(col::RESULT_EXCERPT, DataType::Utf8, true),
        Field::new(col::DECIDED_BY, DataType::Utf8, true),
    ];
    let metadata: std::collections::HashMap<String, String> =
        [(SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string())]
            .into_iter()
            .collect();
    Arc::new(Schema::new_with_metadata(fields, metadata))
}

/// Events as one record batch.
pub fn to_batch(events: &[Event]) -> Result<RecordBatch, ArrowError> {
    to_batch_of(events)
}

/// [`to_batch`] of events held or referred to.
pub fn to_batch_of<E: Borrow<Event>>(events: &[E]) -> Result<RecordBatch, ArrowError> {
    fn strings<'a, E: Borrow<Event>>(
        events: &'a [E],
        f: impl Fn(&'a Event) -> Option<&'a str>,
    ) -> ArrayRef {
        // Sized first: growing the long text columns by doubling copied them over and over.
        let bytes = events
            .iter()
            .map(|e| f(e.borrow()).map_or(0, str::len))
            .sum();
        let mut b = StringBuilder::with_capacity(events.len(), bytes);
        for e in events {
            b.append_option(f(e.borrow()));
        }
        Arc::new(b.finish())
    }
    let mut seq = UInt32Builder::new();
    let mut ts = TimestampMicrosecondBuilder::new().with_timezone("UTC");
    let mut attended = BooleanBuilder::new();
    let mut is_error = BooleanBuilder::new();
    let mut sidechain = BooleanBuilder::new();
    for e in events.iter().map(Borrow::borrow) {
        seq.append_value(e.seq);
        ts.append_option(e.ts_us);
        attended.append_option(e.attended);
        is_error.append_option(e.is_error);
        sidechain.append_value(e.is_sidechain);
    }
    let columns: Vec<ArrayRef> = vec![
        strings(events, |e| Some(&e.event_id)),
        strings(events, |e| Some(&e.agent)),
        strings(events, |e| e.agent_version.as_deref()),
        strings(events, |e| Some(&e.source)),
        strings(events, |e| Some(&e.source_kind)),
        strings(events, |e| Some(&e.project_key)),
        strings(events, |e| Some(&e.project_root)),
        strings(events, |e| Some(&e.session_id)),
        Arc::new(seq.finish()),
        Arc::new(ts.finish()),
        strings(events, |e| e.cwd.as_deref()),
        strings(events, |e| e.git_branch.as_deref()),
        strings(events, |e| e.permission_mode.as_deref()),
        Arc::new(attended.finish()),
        strings(events, |e| Some(&e.tool_name)),
        strings(events, |e| Some(&e.tool_input)),
        strings(events, |e| e.command.as_deref()),
        strings(events, |e| e.file_path.as_deref()),
        strings(events, |e| Some(e.outcome.as_str())),
        Arc::new(is_error.finish()),
        Arc::new(sidechain.finish()),
        strings(events, |e| e.tool_use_id.as_deref()),
        strings(events, |e| Some(&e.outcome_rule)),
        strings(events, |e| e.denial_kind.as_deref()),
        strings(events, |e| e.result_excerpt.as_deref()),
        strings(events, |e| e.decided_by.as_deref()),
    ];
    RecordBatch::try_new(schema(), columns)
}

/// A column of a batch, as the array type the schema gives it; an error names the column when
/// it is missing or of another type.
pub fn column<'a, T: Array + 'static>(
    batch: &'a RecordBatch,
    name: &str,
) -> Result<&'a T, ArrowError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| {
            ArrowError::SchemaError(format!("the events table has no usable `{name}` column"))
        })
}

/// Reads events back from a record batch written by [`to_batch`].
pub fn from_batch(batch: &RecordBatch) -> Result<Vec<Event>, ArrowError> {
    let text = |name: &str| column::<StringArray>(batch, name);
    let flag = |name: &str| column::<BooleanArray>(batch, name);
    let seq = column::<UInt32Array>(batch, col::SEQ)?;
    let ts = column::<TimestampMicrosecondArray>(batch, col::TS)?;
    let opt = |a: &StringArray, i: usize| (!a.is_null(i)).then(|| a.value(i).to_string());
    let optb = |a: &BooleanArray, i: usize| (!a.is_null(i)).then(|| a.value(i));
    let (event_id, agent, agent_version, source, source_kind) = (
        text(col::EVENT_ID)?,
        text(col::AGENT)?,
        text(col::AGENT_VERSION)?,
        text(col::SOURCE)?,
        text(col::SOURCE_KIND)?,
    );
    let (project_key, project_root, session_id, cwd, git_branch) = (
        text(col::PROJECT_KEY)?,
        text(col::PROJECT_ROOT)?,
        text(col::SESSION_ID)?,
        text(col::CWD)?,
        text(col::GIT_BRANCH)?,
    );
    let (permission_mode, tool_name, tool_input, command, file_path) = (
        text(col::PERMISSION_MODE)?,
        text(col::TOOL_NAME)?,
        text(col::TOOL_INPUT)?,
        text(col::COMMAND)?,
        text(col::FILE_PATH)?,
    );
    let (outcome, tool_use_id, outcome_rule, denial_kind, result_excerpt) = (
        text(col::OUTCOME)?,
        text(col::TOOL_USE_ID)?,
        text(col::OUTCOME_RULE)?,
        text(col::DENIAL_KIND)?,
        text(col::RESULT_EXCERPT)?,
    );
    // Absent in tables written before schema version 3: no decision was recorded then.
    let decided_by = batch
        .column_by_name(col::DECIDED_BY)
        .map(|_| text(col::DECIDED_BY))
        .transpose()?;
    let (attended, is_error, sidechain) = (
        flag(col::ATTENDED)?,
        flag(col::IS_ERROR)?,
        flag(col::IS_SIDECHAIN)?,
    );
    (0..batch.num_rows())
        .map(|i| {
            Ok(Event {
                event_id: event_id.value(i).to_string(),
                agent: agent.value(i).to_string(),
                agent_version: opt(agent_version, i),
                source: source.value(i).to_string(),
                source_kind: source_kind.value(i).to_string(),
                project_key: project_key.value(i).to_string(),
                project_root: project_root.value(i).to_string(),
                session_id: session_id.value(i).to_string(),
                seq: seq.value(i),
                ts_us: (!ts.is_null(i)).then(|| ts.value(i)),
                cwd: opt(cwd, i),
                git_branch: opt(git_branch, i),
                permission_mode: opt(permission_mode, i),
                attended: optb(attended, i),
                tool_name: tool_name.value(i).to_string(),
                tool_input: tool_input.value(i).to_string(),
                command: opt(command, i),
                file_path: opt(file_path, i),
                outcome: Outcome::parse(outcome.value(i)).ok_or_else(|| {
                    ArrowError::ParseError(format!("unknown outcome `{}`", outcome.value(i)))
                })?,
                is_error: optb(is_error, i),
                is_sidechain: sidechain.value(i),
                tool_use_id: opt(tool_use_id, i),
                outcome_rule: outcome_rule.value(i).to_string(),
                denial_kind: opt(denial_kind, i),
                result_excerpt: opt(result_excerpt, i),
                decided_by: decided_by.and_then(|a| opt(a, i)),
            })
        })
        .collect()
}
