//! Shards merged into one run: the shards' manifests checked against each other (one run's
//! settings, one events table, every shard once), the summary totals folded, and the
//! per-project tables interleaved in the order one unsharded run writes them, so the merged
//! directory holds the same tables, byte for byte, and the same `summary.json`.
//!
//! Must not: replay anything, or depend on the order the shard directories are given in.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::{Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use crate::error::ReplayError;
use crate::output::{Outputs, PER_PROJECT};
use crate::shard::{Manifest, Shard};
use crate::summary::Summary;

/// One shard's output directory, read.
struct Part {
    dir: PathBuf,
    manifest: Manifest,
    summary: Summary,
}

/// Merges the shard output directories `dirs` into `out`; returns the merged summary.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Summary, ReplayError> {
    let mut parts = Vec::new();
    for dir in dirs {
        let (manifest, summary) = Manifest::read(dir)?;
        parts.push(Part {
            dir: dir.clone(),
            manifest,
            summary,
        });
    }
    parts.sort_by_key(|p| p.manifest.shard.index);
    check(&parts)?;
    refuse_overwriting(&parts, out)?;
    let order = order(&parts)?;

    let Some((first, rest)) = parts.split_first() else {
        return Err(ReplayError("no shards to merge".to_string()));
    };
    let mut summary = first.summary.clone();
    for part in rest {
        summary.merge(&part.summary);
    }
    summary.notes = order
        .iter()
        .flat_map(|(shard, at)| {
            parts
                .get(*shard)
                .and_then(|p| p.manifest.projects.get(*at))
                .map(|p| p.notes.clone())
                .unwrap_or_default()
        })
        .collect();

    let mut outputs = Outputs::create(out)?;
    for table in PER_PROJECT {
        interleave(&parts, &order, table, &mut outputs)?;
    }
    outputs.finish(&summary)?;
    Ok(summary)
}

/// The shards belong to one run of one events table, and each of its N shards is given once.
fn check(parts: &[Part]) -> Result<(), ReplayError> {
    let Some(first) = parts.first() else {
        return Err(ReplayError("no shards to merge".to_string()));
    };
    let count = first.manifest.shard.count;
    for part in parts {
        let (a, b) = (&first.manifest, &part.manifest);
        if b.shard.count != count {
            return Err(ReplayError(format!(
                "`{}` is shard {} and `{}` is shard {}: shards of one run share their N",
                first.dir.display(),
                a.shard,
                part.dir.display(),
                b.shard
            )));
        }
        if b.run_fingerprint != a.run_fingerprint {
            return Err(ReplayError(format!(
                "`{}` and `{}` were replayed with different settings or options (run fingerprints {} and {}): replay every shard with the same flags",
                first.dir.display(),
                part.dir.display(),
                a.run_fingerprint,
                b.run_fingerprint
            )));
        }
        if b.events_fingerprint != a.events_fingerprint || b.table_projects != a.table_projects {
            return Err(ReplayError(format!(
                "`{}` and `{}` replayed different events tables (events fingerprints {} and {}): replay every shard from the same table",
                first.dir.display(),
                part.dir.display(),
                a.events_fingerprint,
                b.events_fingerprint
            )));
        }
    }
    for pair in parts.windows(2) {
        if let [a, b] = pair
            && a.manifest.shard.index == b.manifest.shard.index
        {
            return Err(ReplayError(format!(
                "shard {} is given twice: `{}` and `{}`",
                a.manifest.shard,
                a.dir.display(),
                b.dir.display()
            )));
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|k| !parts.iter().any(|p| p.manifest.shard.index == *k))
        .map(|k| Shard { index: k, count }.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(ReplayError(format!(
            "shard {} of the run {} missing: a merge needs all {count} shards",
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" }
        )));
    }
    Ok(())
}

/// The merged output may not be written over a shard being read.
fn refuse_overwriting(parts: &[Part], out: &Path) -> Result<(), ReplayError> {
    let Ok(target) = out.canonicalize() else {
        return Ok(());
    };
    for part in parts {
        if part.dir.canonicalize().is_ok_and(|dir| dir == target) {
            return Err(ReplayError(format!(
                "`--out` {} is one of the shards; merge into another directory",
                out.display()
            )));
        }
    }
    Ok(())
}

/// Every project of the table once, in the order one run replays them: (shard position in
/// `parts`, project position in its manifest).
fn order(parts: &[Part]) -> Result<Vec<(usize, usize)>, ReplayError> {
    let mut order: Vec<(u64, usize, usize)> = Vec::new();
    for (shard, part) in parts.iter().enumerate() {
        for (at, project) in part.manifest.projects.iter().enumerate() {
            order.push((project.ordinal, shard, at));
        }
    }
    order.sort_unstable();
    let total = parts.first().map_or(0, |p| p.manifest.table_projects);
    let complete = order.len() as u64 == total
        && order
            .iter()
            .enumerate()
            .all(|(i, (ordinal, ..))| *ordinal == i as u64);
    if !complete {
        return Err(ReplayError(format!(
            "the shards hold {} projects where the events table has {total}, or hold one twice: they do not cover the table once",
            order.len()
        )));
    }
    Ok(order
        .into_iter()
        .map(|(_, shard, at)| (shard, at))
        .collect())
}

/// A shard's table read a batch at a time.
struct Cursor {
    reader: Option<ParquetRecordBatchReader>,
    batch: Option<RecordBatch>,
    at: usize,
    path: PathBuf,
}

impl Cursor {
    fn open(path: PathBuf) -> Result<Cursor, ReplayError> {
        let reader = if path.exists() {
            let file = File::open(&path)
                .map_err(|e| ReplayError(format!("cannot open {}: {e}", path.display())))?;
            Some(
                ParquetRecordBatchReaderBuilder::try_new(file)
                    .and_then(|b| b.build())
                    .map_err(|e| ReplayError(format!("cannot read {}: {e}", path.display())))?,
            )
        } else {
            None
        };
        Ok(Cursor {
            reader,
            batch: None,
            at: 0,
            path,
        })
    }

    /// The current batch with rows left, reading the next when one is used up.
    fn current(&mut self) -> Result<Option<&RecordBatch>, ReplayError> {
        while self.batch.as_ref().is_none_or(|b| self.at >= b.num_rows()) {
            let Some(reader) = self.reader.as_mut() else {
                return Ok(None);
            };
            match reader.next() {
                Some(batch) => {
                    self.batch = Some(batch.map_err(|e| {
                        ReplayError(format!("cannot read {}: {e}", self.path.display()))
                    })?);
                    self.at = 0;
                }
                None => {
                    self.reader = None;
                    self.batch = None;
                    return Ok(None);
                }
            }
        }
        Ok(self.batch.as_ref())
    }

    /// The rows of project `key` at the cursor (contiguous: a shard writes a project's rows
    /// together), handed to `take` a batch slice at a time.
    fn take(
        &mut self,
        key: &str,
        take: &mut dyn FnMut(&RecordBatch) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        loop {
            let Some(batch) = self.current()?.cloned() else {
                return Ok(());
            };
            let keys = batch
                .column_by_name("project_key")
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .ok_or_else(|| {
                    ReplayError(format!(
                        "{} has no `project_key` column",
                        self.path.display()
                    ))
                })?;
            let mut end = self.at;
            while end < batch.num_rows() && keys.is_valid(end) && keys.value(end) == key {
                end += 1;
            }
            if end > self.at {
                take(&batch.slice(self.at, end - self.at))?;
            }
            self.at = end;
            if end < batch.num_rows() {
                return Ok(());
            }
        }
    }

    /// Rows left that no project of the shard's manifest claimed.
    fn finish(mut self) -> Result<(), ReplayError> {
        if self.current()?.is_some() {
            return Err(ReplayError(format!(
                "{} has rows for projects its shard's manifest does not list",
                self.path.display()
            )));
        }
        Ok(())
    }
}

/// Writes one per-project table: each project's rows from its shard, in the run's order.
fn interleave(
    parts: &[Part],
    order: &[(usize, usize)],
    table: &str,
    outputs: &mut Outputs,
) -> Result<(), ReplayError> {
    let mut cursors = parts
        .iter()
        .map(|p| Cursor::open(p.dir.join(format!("{table}.parquet"))))
        .collect::<Result<Vec<_>, _>>()?;
    for (shard, at) in order {
        let (Some(cursor), Some(project)) = (
            cursors.get_mut(*shard),
            parts.get(*shard).and_then(|p| p.manifest.projects.get(*at)),
        ) else {
            continue;
        };
        cursor.take(&project.key, &mut |rows| outputs.add_rows(table, rows))?;
    }
    for cursor in cursors {
        cursor.finish()?;
    }
    Ok(())
}
