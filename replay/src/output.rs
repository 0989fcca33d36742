//! The replay's output tables: Parquet files written project by project as the replay goes
//! (so memory does not grow with the history), each staged and renamed into place when
//! complete, owner-only; `summary.json`; and a shard's `shard.json`. Every column is named here
//! and in `docs/formats.md`, nowhere else.
//!
//! Rows reach the Parquet writer in batches of [`CHUNK`] rows whatever batches they arrive in,
//! so a table's bytes depend on its rows alone: any thread count, and a merge of shards, write
//! the same file.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::error::ReplayError;
use crate::replay::{Counts, CurvePoint, ProjectRun};
use crate::settings::Setting;
use crate::shard::{MANIFEST, Manifest};
use crate::summary::{Summary, UPPER_Z, rate, wilson_upper_bound};

/// Rows per row group of the output tables.
const ROW_GROUP: usize = 65_536;

/// Rows per batch handed to the Parquet writer (a divisor of [`ROW_GROUP`]).
pub const CHUNK: usize = 8_192;

/// The tables written a project at a time, in the order of their rows' projects.
pub const PER_PROJECT: [&str; 5] = ["projects", "curves", "misses", "promotions", "capabilities"];

/// One column of a batch being built.
enum Values {
    Text(Vec<Option<String>>),
    Count(Vec<u64>),
    Real(Vec<f64>),
    Flag(Vec<bool>),
    Time(Vec<Option<i64>>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Text(v) => v.len(),
            Values::Count(v) => v.len(),
            Values::Real(v) => v.len(),
            Values::Flag(v) => v.len(),
            Values::Time(v) => v.len(),
        }
    }

    /// The values, to be taken off the front a chunk at a time.
    fn into_front(self) -> Front {
        match self {
            Values::Text(v) => Front::Text(v.into_iter()),
            Values::Count(v) => Front::Count(v.into_iter()),
            Values::Real(v) => Front::Real(v.into_iter()),
            Values::Flag(v) => Front::Flag(v.into_iter()),
            Values::Time(v) => Front::Time(v.into_iter()),
        }
    }

    /// Appends values of the same kind; `false` when the kinds differ.
    fn extend(&mut self, other: Values) -> bool {
        match (self, other) {
            (Values::Text(a), Values::Text(b)) => a.extend(b),
            (Values::Count(a), Values::Count(b)) => a.extend(b),
            (Values::Real(a), Values::Real(b)) => a.extend(b),
            (Values::Flag(a), Values::Flag(b)) => a.extend(b),
            (Values::Time(a), Values::Time(b)) => a.extend(b),
            _ => return false,
        }
        true
    }

    /// The values of a column as a table read back holds them; `None` for a kind no output
    /// table has, or a null where none is written.
    fn of(array: &dyn Array) -> Option<Values> {
        let any = array.as_any();
        Some(match array.data_type() {
            DataType::Utf8 => {
                let a = any.downcast_ref::<StringArray>()?;
                Values::Text(a.iter().map(|v| v.map(str::to_string)).collect())
            }
            DataType::UInt64 => {
                let a = any.downcast_ref::<UInt64Array>()?;
                Values::Count(a.iter().collect::<Option<Vec<u64>>>()?)
            }
            DataType::Float64 => {
                let a = any.downcast_ref::<Float64Array>()?;
                Values::Real(a.iter().collect::<Option<Vec<f64>>>()?)
            }
            DataType::Boolean => {
                let a = any.downcast_ref::<BooleanArray>()?;
                Values::Flag(a.iter().collect::<Option<Vec<bool>>>()?)
            }
            DataType::Timestamp(TimeUnit::Microsecond, Some(zone)) if zone.as_ref() == "UTC" => {
                let a = any.downcast_ref::<TimestampMicrosecondArray>()?;
                Values::Time(a.iter().collect())
            }
            _ => return None,
        })
    }
}

/// A column's values being taken off the front: each chunk taken is moved out on its own, so
/// cutting many rows into chunks holds them once (plus a chunk), never a copy of the rest.
enum Front {
    Text(std::vec::IntoIter<Option<String>>),
    Count(std::vec::IntoIter<u64>),
    Real(std::vec::IntoIter<f64>),
    Flag(std::vec::IntoIter<bool>),
    Time(std::vec::IntoIter<Option<i64>>),
}

impl Front {
    /// The next `n` values (fewer at the end).
    fn take(&mut self, n: usize) -> Values {
        match self {
            Front::Text(v) => Values::Text(v.by_ref().take(n).collect()),
            Front::Count(v) => Values::Count(v.by_ref().take(n).collect()),
            Front::Real(v) => Values::Real(v.by_ref().take(n).collect()),
            Front::Flag(v) => Values::Flag(v.by_ref().take(n).collect()),
            Front::Time(v) => Values::Time(v.by_ref().take(n).collect()),
        }
    }
}

/// Rows of one table, column by column.
#[derive(Default)]
struct Rows {
    columns: Vec<(String, Values)>,
}

impl Rows {
    fn column(&mut self, name: &'static str, make: fn() -> Values) -> &mut Values {
        let at = match self.columns.iter().position(|(n, _)| n == name) {
            Some(at) => at,
            None => {
                self.columns.push((name.to_string(), make()));
                self.columns.len() - 1
            }
        };
        &mut self.columns[at].1
    }

    /// The rows of a batch read back from an output table.
    fn of(batch: &RecordBatch) -> Result<Rows, ReplayError> {
        let mut columns = Vec::new();
        for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
            let values = Values::of(array.as_ref()).ok_or_else(|| {
                ReplayError(format!(
                    "the column `{}` ({}) is not one the replay writes",
                    field.name(),
                    field.data_type()
                ))
            })?;
            columns.push((field.name().clone(), values));
        }
        Ok(Rows { columns })
    }

    fn len(&self) -> usize {
        self.columns.first().map_or(0, |(_, v)| v.len())
    }

    /// Appends rows with the same columns.
    fn extend(&mut self, other: Rows) -> Result<(), ReplayError> {
        if other.columns.is_empty() {
            return Ok(());
        }
        if self.columns.is_empty() {
            *self = other;
            return Ok(());
        }
        let names = |rows: &Rows| {
            rows.columns
                .iter()
                .map(|(n, _)| n.clone())
                .collect::<Vec<_>>()
        };
        if names(self) != names(&other) {
            return Err(ReplayError(format!(
                "rows with the columns {:?} cannot follow rows with {:?}",
                names(&other),
                names(self)
            )));
        }
        for ((name, mine), (_, theirs)) in self.columns.iter_mut().zip(other.columns) {
            if !mine.extend(theirs) {
                return Err(ReplayError(format!("the column `{name}` changes its type")));
            }
        }
        Ok(())
    }

    /// The rows in chunks of `size` (the last one shorter), in order.
    fn into_chunks(self, size: usize) -> impl Iterator<Item = Rows> {
        let mut left = self.len();
        let mut columns: Vec<(String, Front)> = self
            .columns
            .into_iter()
            .map(|(name, values)| (name, values.into_front()))
            .collect();
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            left = left.saturating_sub(size);
            Some(Rows {
                columns: columns
                    .iter_mut()
                    .map(|(name, values)| (name.clone(), values.take(size)))
                    .collect(),
            })
        })
    }

    fn text(&mut self, name: &'static str, value: impl Into<Option<String>>) -> &mut Rows {
        if let Values::Text(v) = self.column(name, || Values::Text(Vec::new())) {
            v.push(value.into());
        }
        self
    }

    fn count(&mut self, name: &'static str, value: u64) -> &mut Rows {
        if let Values::Count(v) = self.column(name, || Values::Count(Vec::new())) {
            v.push(value);
        }
        self
    }

    fn real(&mut self, name: &'static str, value: f64) -> &mut Rows {
        if let Values::Real(v) = self.column(name, || Values::Real(Vec::new())) {
            v.push(value);
        }
        self
    }

    fn flag(&mut self, name: &'static str, value: bool) -> &mut Rows {
        if let Values::Flag(v) = self.column(name, || Values::Flag(Vec::new())) {
            v.push(value);
        }
        self
    }

    fn time(&mut self, name: &'static str, value: Option<i64>) -> &mut Rows {
        if let Values::Time(v) = self.column(name, || Values::Time(Vec::new())) {
            v.push(value);
        }
        self
    }

    fn counts(&mut self, c: &Counts) -> &mut Rows {
        self.count("events", c.events)
            .count("allow", c.allow)
            .count("ask", c.ask)
            .count("deny", c.deny)
            .count("misses", c.miss)
            .count("catches", c.catch)
            .count("saved", c.saved)
            .count("friction", c.friction)
            .count("false_blocks", c.false_block)
            .count("unlabeled", c.unlabeled)
            .count("refused", c.refused)
            .count("misses_risky", c.miss_risky)
            .count("misses_routine", c.miss_routine())
            .count("refused_risky", c.refused_risky)
            .count("classifier_denied", c.classifier_denied)
            .count("asks_observed", c.ask_observed)
            .count("asks_inferred", c.ask_inferred)
            .real("prompt_rate", rate(c.ask, c.events))
            .real(
                "miss_rate_upper",
                wilson_upper_bound(c.miss, c.refused, UPPER_Z),
            )
    }

    fn curve(&mut self, setting: &str, project: &str, axis: &str, points: &[CurvePoint]) {
        for (x, p) in points.iter().enumerate() {
            self.text("setting_id", setting.to_string())
                .text("project_key", project.to_string())
                .text("axis", axis.to_string())
                .count("x", x as u64)
                .count("events", u64::from(p.events))
                .count("allow", u64::from(p.allow))
                .count("ask", u64::from(p.ask))
                .count("deny", u64::from(p.deny))
                .real("prompt_rate", p.prompt_rate());
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn batch(self) -> Result<RecordBatch, ReplayError> {
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for (name, values) in self.columns {
            let (kind, array): (DataType, ArrayRef) = match values {
                Values::Text(v) => (DataType::Utf8, Arc::new(StringArray::from(v))),
                Values::Count(v) => (DataType::UInt64, Arc::new(UInt64Array::from(v))),
                Values::Real(v) => (DataType::Float64, Arc::new(Float64Array::from(v))),
                Values::Flag(v) => (DataType::Boolean, Arc::new(BooleanArray::from(v))),
                Values::Time(v) => (
                    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                    Arc::new(TimestampMicrosecondArray::from(v).with_timezone("UTC")),
                ),
            };
            fields.push(Field::new(name, kind, true));
            arrays.push(array);
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
            .map_err(|e| ReplayError(format!("cannot build an output batch: {e}")))
    }
}

/// The rows a batch of finished projects adds to the per-project tables, in [`PER_PROJECT`]
/// order.
fn project_rows(settings: &[Setting], runs: &[ProjectRun]) -> [Rows; 5] {
    let (mut projects, mut curves, mut misses, mut promotions) = (
        Rows::default(),
        Rows::default(),
        Rows::default(),
        Rows::default(),
    );
    let mut capabilities = Rows::default();
    for run in runs {
        for (capability, count) in &run.capabilities {
            capabilities
                .text("project_key", run.project_key.clone())
                .text("capability", (*capability).to_string())
                .count("actions", *count);
        }
        for (setting, result) in settings.iter().zip(&run.settings) {
            projects
                .text("setting_id", setting.id.clone())
                .text("project_key", run.project_key.clone())
                .text("project_root", run.project_root.clone())
                .counts(&result.total());
            curves.curve(&setting.id, &run.project_key, "window", &result.windows);
            curves.curve(&setting.id, &run.project_key, "day", &result.days);
            for miss in &result.misses {
                let Some(event) = run.events.get(miss.index) else {
                    continue;
                };
                misses
                    .text("setting_id", setting.id.clone())
                    .text("project_key", run.project_key.clone())
                    .text("event_id", event.event_id.clone())
                    .text("agent", event.agent.clone())
                    .text("session_id", event.session_id.clone())
                    .time("ts", event.ts_us)
                    .text("tool_name", event.tool_name.clone())
                    .text("tool_input", event.tool_input.clone())
                    .text("source", event.source.clone())
                    .text("reason_codes", miss.codes.join(","))
                    .text("reasons", miss.reasons.clone())
                    .flag("risky", miss.risky);
            }
            for p in &result.promotions {
                promotions
                    .text("setting_id", setting.id.clone())
                    .text("project_key", run.project_key.clone())
                    .text("signature", p.signature.clone())
                    .text("route", p.route.to_string())
                    .time("first_seen", Some(p.first_seen_us))
                    .time("promoted_at", Some(p.promoted_us))
                    .real(
                        "days_to_promotion",
                        (p.promoted_us - p.first_seen_us) as f64 / 86_400e6,
                    )
                    .count("sightings_before", u64::from(p.sightings));
            }
        }
    }
    [projects, curves, misses, promotions, capabilities]
}

/// The rows of the tables computed once from the folded summary: settings, bands, friction.
fn global_rows(summary: &Summary) -> [Rows; 3] {
    let (mut settings, mut bands, mut friction) =
        (Rows::default(), Rows::default(), Rows::default());
    let frontier = summary.frontier();
    let recommended = summary.recommend(None);
    for (i, s) in summary.settings.iter().enumerate() {
        settings
            .text("setting_id", s.setting.id.clone())
            .text("posture", s.setting.posture().to_string())
            .flag("baseline", s.setting.is_baseline())
            .text("params", s.setting.params().to_string())
            .counts(&s.total())
            .flag("frontier", frontier.get(i).copied().unwrap_or(false))
            .flag("recommended", recommended == Some(i))
            .count("promotions", s.promotions.0);
        for (axis, band) in [("window", &s.window_band), ("day", &s.day_band)] {
            for (x, (n, p25, median, p75)) in band.quantiles().into_iter().enumerate() {
                bands
                    .text("setting_id", s.setting.id.clone())
                    .text("axis", axis.to_string())
                    .count("x", x as u64)
                    .count("projects", u64::from(n))
                    .real("p25", p25)
                    .real("median", median)
                    .real("p75", p75);
            }
        }
        for (code, count) in &s.friction_reasons {
            friction
                .text("setting_id", s.setting.id.clone())
                .text("reason_code", code.clone())
                .count("count", *count);
        }
    }
    [settings, bands, friction]
}

/// A batch of finished projects as the per-project tables' record batches, named, in
/// [`PER_PROJECT`] order; a table with no rows is left out, as [`Outputs`] writes no file for
/// it. For callers that keep the tables in memory (the Python package) instead of writing them.
pub fn project_batches(
    settings: &[Setting],
    runs: &[ProjectRun],
) -> Result<Vec<(&'static str, RecordBatch)>, ReplayError> {
    named_batches(&PER_PROJECT, project_rows(settings, runs))
}

/// The tables computed once from the folded summary (`settings`, `bands`, `friction`) as
/// record batches, named; as [`project_batches`], a table with no rows is left out.
pub fn global_batches(summary: &Summary) -> Result<Vec<(&'static str, RecordBatch)>, ReplayError> {
    named_batches(&GLOBAL, global_rows(summary))
}

/// The tables written once, from the folded summary.
pub const GLOBAL: [&str; 3] = ["settings", "bands", "friction"];

fn named_batches<const N: usize>(
    names: &[&'static str; N],
    rows: [Rows; N],
) -> Result<Vec<(&'static str, RecordBatch)>, ReplayError> {
    let mut out = Vec::new();
    for (name, rows) in names.iter().zip(rows) {
        if !rows.is_empty() {
            out.push((*name, rows.batch()?));
        }
    }
    Ok(out)
}

/// An output table being written: staged under a temporary name until complete; rows are
/// handed to the writer [`CHUNK`] at a time.
struct Table {
    staged: PathBuf,
    path: PathBuf,
    writer: Option<ArrowWriter<File>>,
    pending: Rows,
}

impl Table {
    fn new(dir: &Path, name: &str) -> Table {
        let path = dir.join(format!("{name}.parquet"));
        let staged = dir.join(format!(".{name}.parquet.{}.partial", std::process::id()));
        Table {
            staged,
            path,
            writer: None,
            pending: Rows::default(),
        }
    }

    /// Adds rows; every full [`CHUNK`] is written.
    fn append(&mut self, rows: Rows) -> Result<(), ReplayError> {
        self.pending.extend(rows)?;
        if self.pending.len() < CHUNK {
            return Ok(());
        }
        // Cut from the front, each chunk moved out on its own: splitting off the rest instead
        // copied it for every chunk, holding a batch of projects' rows twice (the curves
        // table's column vectors were 16 MB of a 2 M-event run's 111 MB peak heap).
        for rows in std::mem::take(&mut self.pending).into_chunks(CHUNK) {
            if rows.len() == CHUNK {
                self.write(rows)?;
            } else {
                self.pending = rows;
            }
        }
        Ok(())
    }

    fn write(&mut self, rows: Rows) -> Result<(), ReplayError> {
        if rows.is_empty() {
            return Ok(());
        }
        let batch = rows.batch()?;
        let fail = |e: &dyn std::fmt::Display| {
            ReplayError(format!("cannot write {}: {e}", self.staged.display()))
        };
        if self.writer.is_none() {
            let file = create_private(&self.staged).map_err(|e| fail(&e))?;
            // Small row groups: the writer holds a row group in memory until it is full, and
            // the curves table has a row per point per setting per project.
            let properties = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .set_max_row_group_row_count(Some(ROW_GROUP))
                .build();
            self.writer = Some(
                ArrowWriter::try_new(file, batch.schema(), Some(properties))
                    .map_err(|e| fail(&e))?,
            );
        }
        if let Some(writer) = self.writer.as_mut() {
            writer.write(&batch).map_err(|e| fail(&e))?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<(), ReplayError> {
        let rest = std::mem::take(&mut self.pending);
        self.write(rest)?;
        let Some(writer) = self.writer.take() else {
            // Nothing was written: an absent table would look like a failed run, so remove a
            // stale one and leave none (readers treat a missing table as empty).
            let _ = fs::remove_file(&self.path);
            return Ok(());
        };
        writer
            .close()
            .map_err(|e| ReplayError(format!("cannot finish {}: {e}", self.staged.display())))?;
        fs::rename(&self.staged, &self.path)
            .map_err(|e| ReplayError(format!("cannot replace {}: {e}", self.path.display())))
    }
}

fn create_private(path: &Path) -> std::io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// The output directory, written project by project.
pub struct Outputs {
    dir: PathBuf,
    projects: Table,
    curves: Table,
    misses: Table,
    promotions: Table,
    capabilities: Table,
}

impl Outputs {
    /// Creates the directory (owner-only) and stages the tables. A `shard.json` left by an
    /// earlier shard is removed: only a finished shard has one.
    pub fn create(dir: &Path) -> Result<Outputs, ReplayError> {
        leastgrant_ingest::table::create_private_dir(dir)
            .map_err(|e| ReplayError(e.to_string()))?;
        let manifest = dir.join(MANIFEST);
        if let Err(e) = fs::remove_file(&manifest)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(ReplayError(format!(
                "cannot remove {}: {e}",
                manifest.display()
            )));
        }
        Ok(Outputs {
            dir: dir.to_path_buf(),
            projects: Table::new(dir, "projects"),
            curves: Table::new(dir, "curves"),
            misses: Table::new(dir, "misses"),
            promotions: Table::new(dir, "promotions"),
            capabilities: Table::new(dir, "capabilities"),
        })
    }

    /// Writes one batch of finished projects.
    pub fn add(&mut self, settings: &[Setting], runs: &[ProjectRun]) -> Result<(), ReplayError> {
        let [projects, curves, misses, promotions, capabilities] = project_rows(settings, runs);
        self.projects.append(projects)?;
        self.curves.append(curves)?;
        self.misses.append(misses)?;
        self.capabilities.append(capabilities)?;
        self.promotions.append(promotions)
    }

    /// Appends rows read back from another output's per-project table `table` (one of
    /// [`PER_PROJECT`]), as they are.
    pub fn add_rows(&mut self, table: &str, batch: &RecordBatch) -> Result<(), ReplayError> {
        let rows = Rows::of(batch)?;
        match table {
            "projects" => self.projects.append(rows),
            "curves" => self.curves.append(rows),
            "misses" => self.misses.append(rows),
            "promotions" => self.promotions.append(rows),
            "capabilities" => self.capabilities.append(rows),
            other => Err(ReplayError(format!(
                "`{other}` is not a table written a project at a time"
            ))),
        }
    }

    /// Writes the per-setting tables and `summary.json`, and moves everything into place.
    pub fn finish(self, summary: &Summary) -> Result<(), ReplayError> {
        let mut settings_table = Table::new(&self.dir, "settings");
        let mut bands_table = Table::new(&self.dir, "bands");
        let mut friction_table = Table::new(&self.dir, "friction");
        let [settings, bands, friction] = global_rows(summary);
        settings_table.append(settings)?;
        bands_table.append(bands)?;
        friction_table.append(friction)?;
        for table in [
            self.projects,
            self.curves,
            self.misses,
            self.promotions,
            self.capabilities,
            settings_table,
            bands_table,
            friction_table,
        ] {
            table.finish()?;
        }
        let json = serde_json::to_vec_pretty(&summary.to_json())
            .map_err(|e| ReplayError(format!("cannot encode the summary: {e}")))?;
        leastgrant_ingest::table::write_atomically(&self.dir.join("summary.json"), &json)
            .map_err(|e| ReplayError(e.to_string()))
    }

    /// [`Outputs::finish`] for a shard, then its `shard.json`, written last: a shard directory
    /// with a manifest is complete.
    pub fn finish_shard(self, summary: &Summary, manifest: &Manifest) -> Result<(), ReplayError> {
        let dir = self.dir.clone();
        self.finish(summary)?;
        let json = serde_json::to_vec_pretty(&manifest.to_json(summary))
            .map_err(|e| ReplayError(format!("cannot encode the shard manifest: {e}")))?;
        leastgrant_ingest::table::write_atomically(&dir.join(MANIFEST), &json)
            .map_err(|e| ReplayError(e.to_string()))
    }
}
