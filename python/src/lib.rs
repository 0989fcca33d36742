//! `leastgrant._native`, the Python package's native module: the workspace's ingest and replay
//! called from Python, every table handed over through the Arrow C stream interface (the
//! `__arrow_c_stream__` PyCapsule protocol), so pyarrow and polars take the Rust buffers as
//! they are.
//!
//! Owns: converting Python arguments into the replay's settings and options (the same choices
//! `leastgrant simulate` offers, its rules and grants read by the hook crate's `answers`), and
//! Arrow in and out; `check` is the hook crate's `check`, as `leastgrant check` calls it.
//! Must not: ingest, replay, fold totals, read rules or grants, decide or write a table any
//! other way than the `leastgrant-ingest`, `leastgrant-replay` and `leastgrant-hook` crates
//! do — this file is wiring only.

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::SchemaRef;
use leastgrant_hook::answers::{RuleFiles, RulesSnapshot};
use leastgrant_hook::layout;
use leastgrant_ingest::registry::{discover, source_of_kind};
use leastgrant_ingest::schema::{from_batch, schema, to_batch};
use leastgrant_ingest::source::Machine;
use leastgrant_replay::events::ReplayEvent;
use leastgrant_replay::output::{Outputs, global_batches, project_batches};
use leastgrant_replay::settings::{Grid, GridFile, Setting, baselines};
use leastgrant_replay::summary::Summary;
use leastgrant_replay::{
    MissBudgetOn, Options, ProjectAnswers, Shard, Unattended, run, run_events,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use serde_json::Value;

/// The allocator the `leastgrant` binary ships with (`src/main.rs`): the package's ingest and
/// replay run as fast as the command line's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The name the Arrow PyCapsule interface gives a stream's capsule.
const STREAM: &CStr = c"arrow_array_stream";

fn failed(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

fn invalid(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// An Arrow table held by Rust: its schema and batches, exported without copying through
/// `__arrow_c_stream__` (pyarrow's `pa.table(t)`, polars' `pl.DataFrame(t)`).
#[pyclass(module = "leastgrant._native", frozen)]
struct Table {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

#[pymethods]
impl Table {
    /// The Arrow PyCapsule stream protocol: a capsule holding an `ArrowArrayStream` over the
    /// batches (the buffers are shared, not copied). `requested_schema` is not supported and is
    /// ignored, as the protocol allows.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = RecordBatchIterator::new(
            self.batches.clone().into_iter().map(Ok),
            self.schema.clone(),
        );
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, STREAM)
    }

    /// Rows in the table.
    fn __len__(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

impl Table {
    fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Table {
        Table { schema, batches }
    }
}

/// Reads an Arrow stream from any object implementing `__arrow_c_stream__` (a pyarrow table, a
/// polars DataFrame, …).
fn stream_from(object: &Bound<'_, PyAny>) -> PyResult<RecordBatchStreamReader> {
    let capsule = object.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        invalid("`__arrow_c_stream__` did not return a capsule holding an Arrow stream")
    })?;
    let pointer = capsule.pointer_checked(Some(STREAM))?;
    // SAFETY: the capsule, named `arrow_array_stream`, holds an `ArrowArrayStream` by the
    // PyCapsule interface's contract, alive while `capsule` is; `from_raw` moves the stream out
    // and marks the capsule's copy released, so the capsule's destructor does not release it
    // again.
    #[allow(unsafe_code)]
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(pointer.as_ptr().cast()) };
    RecordBatchStreamReader::try_new(stream).map_err(failed)
}

/// The events of an Arrow stream with the events table's columns and types.
fn events_from(object: &Bound<'_, PyAny>) -> PyResult<Vec<ReplayEvent>> {
    let mut events = Vec::new();
    for batch in stream_from(object)? {
        let batch = batch.map_err(failed)?;
        for event in from_batch(&batch).map_err(|e| {
            invalid(format!(
                "the events do not have the events table's columns and types: {e}"
            ))
        })? {
            events.push(ReplayEvent::from(&event));
        }
    }
    Ok(events)
}

/// The settings, options and miss budget of a run, from the JSON the Python side sends:
/// `settings` (setting descriptions, as `shard.json` records them), else `grid_toml` (a grid
/// file's text) and/or `grid` (the grid flags of `leastgrant simulate`), else the standard
/// comparison; the baselines always follow, as in `leastgrant simulate`.
struct RunConfig {
    settings: Vec<Setting>,
    options: Options,
    miss_budget: f64,
}

impl RunConfig {
    fn parse(json: &str) -> PyResult<RunConfig> {
        let v: Value = serde_json::from_str(json).map_err(invalid)?;
        let mut settings = Vec::new();
        if let Some(list) = v["settings"].as_array() {
            for description in list {
                settings.push(Setting::from_description(description).map_err(invalid)?);
            }
        } else {
            if let Some(text) = v["grid_toml"].as_str() {
                settings.extend(
                    GridFile::parse(text)
                        .and_then(|g| g.settings())
                        .map_err(invalid)?,
                );
            }
            if v["grid"].is_object() {
                let mut flags = v["grid"].clone();
                // As `leastgrant simulate --confidence c`: tiers 0 and 1 at c, tier 2 at least
                // its default.
                if let Some(list) = flags["confidence"].as_array() {
                    let tier2 = leastgrant_engine::Thresholds::default().confidence_by_tier[2];
                    let per_tier: Vec<Value> = list
                        .iter()
                        .map(|c| match c.as_f64() {
                            Some(c) => serde_json::json!([c, c, c.max(tier2)]),
                            None => c.clone(),
                        })
                        .collect();
                    flags["confidence"] = Value::Array(per_tier);
                }
                let grid: Grid = serde_json::from_value(flags)
                    .map_err(|e| invalid(format!("`grid` is not a grid of settings: {e}")))?;
                for setting in grid.expand().map_err(invalid)? {
                    if !settings.iter().any(|s| s.id == setting.id) {
                        settings.push(setting);
                    }
                }
            }
            if settings.is_empty() {
                settings = Grid::standard();
            }
            settings.extend(baselines());
        }
        let unattended = v["unattended"].as_str().unwrap_or("approve");
        let miss_budget_on = v["miss_budget_on"].as_str().unwrap_or("all");
        let options = Options {
            unattended: Unattended::parse(unattended).ok_or_else(|| {
                invalid(format!(
                    "unattended must be approve, observe or skip, not `{unattended}`"
                ))
            })?,
            home: v["history_home"].as_str().map(str::to_string),
            window: v["window"]
                .as_u64()
                .map_or(50, |w| u32::try_from(w).unwrap_or(u32::MAX).max(1)),
            split_at_us: v["split_at_us"].as_i64(),
            miss_budget_on: MissBudgetOn::parse(miss_budget_on).ok_or_else(|| {
                invalid(format!(
                    "miss_budget_on must be all or risky, not `{miss_budget_on}`"
                ))
            })?,
            answers: answers(&v)?,
            ..Options::default()
        };
        let miss_budget = v["miss_budget"]
            .as_f64()
            .unwrap_or(leastgrant_replay::summary::DEFAULT_MISS_BUDGET);
        if !(0.0..=1.0).contains(&miss_budget) {
            return Err(invalid(format!(
                "miss_budget is a share between 0 and 1, not {miss_budget}"
            )));
        }
        Ok(RunConfig {
            settings,
            options,
            miss_budget,
        })
    }
}

/// The rules and grants a run replays with, as `leastgrant simulate` chooses them: none with
/// `"no_rules": true`; else what `"answers"` holds (a [`RulesSnapshot`]'s JSON, read on a Spark
/// driver by [`read_answers`]); else the files of `"rules"` (empty or absent: the hook's default
/// files of each project) with the grants of `"state_dir"` (absent: `$LEASTGRANT_HOME`, else
/// `~/.leastgrant`, as the command line finds it).
fn answers(v: &Value) -> PyResult<Option<Arc<dyn ProjectAnswers>>> {
    if v["no_rules"].as_bool() == Some(true) {
        return Ok(None);
    }
    if v["answers"].is_object() {
        let snapshot = RulesSnapshot::from_json(&v["answers"]).map_err(invalid)?;
        return Ok(Some(Arc::new(snapshot)));
    }
    Ok(Some(Arc::new(rule_files(v)?)))
}

/// The rules files and state directory of a run's JSON (`"rules"`, `"state_dir"`).
fn rule_files(v: &Value) -> PyResult<RuleFiles> {
    let mut given = Vec::new();
    for file in v["rules"].as_array().into_iter().flatten() {
        let file = file
            .as_str()
            .ok_or_else(|| invalid(format!("`rules` lists file paths, not {file}")))?;
        given.push(PathBuf::from(file));
    }
    let state_dir = match v["state_dir"].as_str() {
        Some(dir) => PathBuf::from(dir),
        None => layout::state_dir_from_env(&layout::home()),
    };
    Ok(RuleFiles {
        given,
        state_dir: state_dir.display().to_string(),
    })
}

/// Reads, here and now, the rules and grants a run of `config` would read for the projects
/// rooted at `project_roots`, as JSON text for the run's `"answers"`: what a Spark driver ships
/// to executors that do not hold the files. `None` when the run replays without rules.
#[pyfunction]
fn read_answers(
    py: Python<'_>,
    config: &str,
    project_roots: Vec<String>,
) -> PyResult<Option<String>> {
    let v: Value = serde_json::from_str(config).map_err(invalid)?;
    if v["no_rules"].as_bool() == Some(true) {
        return Ok(None);
    }
    let files = rule_files(&v)?;
    let snapshot = py.detach(|| files.snapshot(project_roots.iter().map(String::as_str)));
    serde_json::to_string(&snapshot.to_json())
        .map(Some)
        .map_err(failed)
}

/// A replay's tables kept in memory, by name, in the order they arrive.
#[derive(Default)]
struct Collected {
    tables: BTreeMap<&'static str, Vec<RecordBatch>>,
}

impl Collected {
    fn add(&mut self, batches: Vec<(&'static str, RecordBatch)>) {
        for (name, batch) in batches {
            self.tables.entry(name).or_default().push(batch);
        }
    }

    fn finish(mut self, summary: &Summary) -> PyResult<(BTreeMap<String, Table>, String)> {
        self.add(global_batches(summary).map_err(failed)?);
        let tables = self
            .tables
            .into_iter()
            .filter_map(|(name, batches)| {
                let schema = batches.first()?.schema();
                Some((name.to_string(), Table::new(schema, batches)))
            })
            .collect();
        let json = serde_json::to_string_pretty(&summary.to_json()).map_err(failed)?;
        Ok((tables, json))
    }
}

/// Replays the events table at `table` (as `leastgrant simulate --events`), keeping the output
/// tables in memory: `({name: Table}, summary_json)`. A table with no rows is absent, as the
/// CLI writes no file for it.
#[pyfunction]
fn simulate_table(
    py: Python<'_>,
    table: PathBuf,
    config: &str,
) -> PyResult<(BTreeMap<String, Table>, String)> {
    let config = RunConfig::parse(config)?;
    let mut collected = Collected::default();
    let summary = py
        .detach(|| {
            run(
                &table,
                &config.settings,
                &config.options,
                config.miss_budget,
                &mut |runs| {
                    collected.add(project_batches(&config.settings, runs)?);
                    Ok(())
                },
                &|_| {},
            )
        })
        .map_err(failed)?;
    collected.finish(&summary)
}

/// Replays events given as an Arrow stream with the events table's schema (a polars or pyarrow
/// table), in the order one run of a table holding them replays its projects:
/// `({name: Table}, summary_json)`.
#[pyfunction]
fn simulate_events(
    py: Python<'_>,
    events: &Bound<'_, PyAny>,
    config: &str,
) -> PyResult<(BTreeMap<String, Table>, String)> {
    let config = RunConfig::parse(config)?;
    let events = events_from(events)?;
    let mut collected = Collected::default();
    let (summary, _) = py
        .detach(|| {
            run_events(
                events,
                None,
                &config.settings,
                &config.options,
                config.miss_budget,
                Shard::WHOLE,
                &mut |runs| {
                    collected.add(project_batches(&config.settings, runs)?);
                    Ok(())
                },
                &|_| {},
            )
        })
        .map_err(failed)?;
    collected.finish(&summary)
}

/// Replays the events of one part of a table (a Spark partition: whole projects) as shard
/// `index` of `count` and writes the shard's output directory to `out` (its tables and
/// `shard.json`), for `leastgrant merge` to combine with the other parts. `projects` lists every
/// project of the whole table with its rows.
#[pyfunction]
fn simulate_part(
    py: Python<'_>,
    events: &Bound<'_, PyAny>,
    projects: Vec<(String, u64)>,
    index: u32,
    count: u32,
    config: &str,
    out: PathBuf,
) -> PyResult<()> {
    let config = RunConfig::parse(config)?;
    let label = Shard::new(index, count).map_err(invalid)?;
    let events = events_from(events)?;
    py.detach(|| {
        let mut outputs = Outputs::create(&out)?;
        let (summary, manifest) = run_events(
            events,
            Some(&projects),
            &config.settings,
            &config.options,
            config.miss_budget,
            label,
            &mut |runs| outputs.add(&config.settings, runs),
            &|_| {},
        )?;
        outputs.finish_shard(&summary, &manifest)
    })
    .map_err(failed)
}

/// Merges shard output directories into `out` (`leastgrant merge`); returns `summary.json`'s
/// text.
#[pyfunction]
fn merge(py: Python<'_>, dirs: Vec<PathBuf>, out: PathBuf) -> PyResult<String> {
    let summary = py
        .detach(|| leastgrant_replay::merge::merge(&dirs, &out))
        .map_err(failed)?;
    serde_json::to_string_pretty(&summary.to_json()).map_err(failed)
}

/// Ingests into the table at `table` (as `leastgrant ingest --out`): the places given per
/// source kind (`[(kind, path)]`), else every source's default places under `home`. Returns the
/// run's summary as JSON text.
#[pyfunction]
#[pyo3(signature = (table, places, home, cwd, state_dir))]
fn ingest(
    py: Python<'_>,
    table: PathBuf,
    places: Vec<(String, PathBuf)>,
    home: PathBuf,
    cwd: PathBuf,
    state_dir: PathBuf,
) -> PyResult<String> {
    let mut given: Vec<(&'static leastgrant_ingest::source::Source, Vec<PathBuf>)> = Vec::new();
    for (kind, place) in places {
        let source = source_named(&kind).ok_or_else(|| {
            invalid(format!(
                "`{kind}` is not a source kind (one of: {})",
                source_kinds().join(", ")
            ))
        })?;
        match given.iter_mut().find(|(s, _)| std::ptr::eq(*s, source)) {
            Some((_, list)) => list.push(place),
            None => given.push((source, vec![place])),
        }
    }
    leastgrant_ingest::registry::check_places(&given).map_err(invalid)?;
    let env = |name: &str| std::env::var_os(name);
    let machine = Machine {
        home: &home,
        cwd: &cwd,
        state_dir: &state_dir,
        env: &env,
    };
    let files = discover(&given, &machine);
    let summary = py
        .detach(|| leastgrant_ingest::run::run(files, &table, &|_| {}))
        .map_err(failed)?;
    let skipped: Vec<Value> = summary
        .skipped
        .iter()
        .map(|f| serde_json::json!({"path": f.path.display().to_string(), "reason": f.reason}))
        .collect();
    Ok(serde_json::json!({
        "events": summary.events,
        "new_events": summary.new_events,
        "duplicates": summary.duplicates,
        "by_agent": summary.by_agent,
        "by_outcome": summary.by_outcome,
        "bad_lines": summary.bad.0,
        "files": summary.files_read,
        "files_unchanged": summary.files_unchanged,
        "bytes": summary.bytes_read,
        "skipped": skipped,
        "table": table.display().to_string(),
    })
    .to_string())
}

/// The source whose stored kind or command-line flag (`claude-jsonl`, `claude`) is `name`.
fn source_named(name: &str) -> Option<&'static leastgrant_ingest::source::Source> {
    source_of_kind(name).or_else(|| {
        leastgrant_ingest::registry::SOURCES
            .iter()
            .find(|s| s.flag.long == name.replace('_', "-"))
            .copied()
    })
}

/// Every source's stored kind name.
fn source_kinds() -> Vec<&'static str> {
    leastgrant_ingest::registry::SOURCES
        .iter()
        .map(|s| s.kind)
        .collect()
}

/// Reads one source file's bytes with the reader of source `kind`, as ingest reads a source of
/// one file, without a table: `(events, bad_counts_json)`. Spark executors call it once per
/// file; `path` is the file's path as ingest names it (canonical).
#[pyfunction]
fn read_bytes(kind: &str, path: PathBuf, bytes: Vec<u8>) -> PyResult<(Table, String)> {
    let source =
        source_named(kind).ok_or_else(|| invalid(format!("`{kind}` is not a source kind")))?;
    let mut bad = leastgrant_ingest::common::BadCounts::default();
    let mut contents = leastgrant_ingest::source::Contents::default();
    contents.push(&path, bytes);
    let mut events = (source.read)(&path, &contents, &mut bad);
    leastgrant_ingest::project::place(&mut events, &leastgrant_ingest::project::Placing::default());
    let batch = to_batch(&events).map_err(failed)?;
    let bad = serde_json::to_string(&bad.0).map_err(failed)?;
    Ok((Table::new(schema(), vec![batch]), bad))
}

/// The events table at `dir` (as `leastgrant ingest` wrote it), one batch per fragment.
#[pyfunction]
fn read_events(py: Python<'_>, dir: PathBuf) -> PyResult<Table> {
    let events = py
        .detach(|| leastgrant_ingest::table::read_table(&dir))
        .map_err(failed)?;
    let batch = to_batch(&events).map_err(failed)?;
    Ok(Table::new(schema(), vec![batch]))
}

/// An empty table with the events table's schema.
#[pyfunction]
fn events_schema() -> PyResult<Table> {
    let batch = to_batch(&[]).map_err(failed)?;
    Ok(Table::new(schema(), vec![batch]))
}

/// The bucket (0–63) of a project key: the order one run replays projects in is (bucket, key).
#[pyfunction]
fn bucket_of(project_key: &str) -> u32 {
    leastgrant_ingest::table::bucket_of(project_key)
}

/// Whether `dir` holds an events table (its buckets).
#[pyfunction]
fn is_events_table(dir: PathBuf) -> bool {
    dir.is_dir() && leastgrant_replay::events::buckets(&dir).is_ok_and(|b| !b.is_empty())
}

/// One decision as `leastgrant check --json` makes it (the hook crate's `check`): a shell
/// `command`, or a `tool` with its `input` as JSON text, in the workspace of `cwd` and
/// `project` (defaults as the command line's), as of `now_us` (default: now). Returns the JSON
/// text `check --json` prints.
#[pyfunction]
#[pyo3(signature = (command=None, tool=None, input=None, cwd=None, project=None, rules=Vec::new(), claude_settings=false, no_grants=false, envelope=None, now_us=None))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    command: Option<&str>,
    tool: Option<&str>,
    input: Option<&str>,
    cwd: Option<PathBuf>,
    project: Option<PathBuf>,
    rules: Vec<PathBuf>,
    claude_settings: bool,
    no_grants: bool,
    envelope: Option<PathBuf>,
    now_us: Option<i64>,
) -> PyResult<String> {
    use leastgrant_hook::check;
    let workspace =
        leastgrant_hook::workspace::Workspace::discover(cwd.as_deref(), project.as_deref())
            .map_err(invalid)?;
    let call = check::tool_call(command, tool, input, &workspace.cwd_text()).map_err(invalid)?;
    let now_us = now_us.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
    });
    let options = check::Options {
        rules,
        claude_settings,
        no_grants,
        envelope,
        now_us,
    };
    let checked = py
        .detach(|| check::check(&workspace, call, &options))
        .map_err(invalid)?;
    serde_json::to_string(&check::to_json(&checked)).map_err(failed)
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Table>()?;
    m.add_function(wrap_pyfunction!(simulate_table, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_events, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_part, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(read_answers, m)?)?;
    m.add_function(wrap_pyfunction!(ingest, m)?)?;
    m.add_function(wrap_pyfunction!(read_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(read_events, m)?)?;
    m.add_function(wrap_pyfunction!(events_schema, m)?)?;
    m.add_function(wrap_pyfunction!(bucket_of, m)?)?;
    m.add_function(wrap_pyfunction!(is_events_table, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add("SOURCE_KINDS", source_kinds())?;
    Ok(())
}
