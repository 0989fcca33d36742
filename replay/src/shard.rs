//! Shards of a replay: which projects shard K of N replays, the fingerprints that tell whether
//! shards belong to one run, and the shard manifest (`shard.json`) a shard writes beside its
//! tables, so that `merge` rebuilds exactly the tables and summary of one unsharded run.
//!
//! A project's shard is the first four bytes of SHA-256 over its key and a NUL (the number the
//! events table's bucket is taken from, modulo 64), big-endian, modulo N: stable across runs,
//! machines and versions, and independent of the events table's layout.
//!
//! Must not: read or write the output tables (output.rs writes them, merge.rs combines them).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::classify::{MissBudgetOn, Options, Unattended};
use crate::error::ReplayError;
use crate::replay::Counts;
use crate::settings::Setting;
use crate::summary::{Band, Summary};

/// The manifest's file name in a shard's output directory.
pub const MANIFEST: &str = "shard.json";

/// The manifest's format: a merge refuses another.
pub const FORMAT: u64 = 2;

/// Shard `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K: 0 to N − 1.
    pub index: u32,
    /// N: at least 1.
    pub count: u32,
}

impl Shard {
    /// The whole table: shard 0 of 1.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`; an error unless 0 ≤ K < N.
    pub fn new(index: u32, count: u32) -> Result<Shard, ReplayError> {
        if count == 0 {
            return Err(ReplayError(
                "a replay has at least one shard: N must be 1 or more, not 0".to_string(),
            ));
        }
        if index >= count {
            return Err(ReplayError(format!(
                "shard {index} of {count} does not exist: shards are numbered 0 to {}",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    /// Reads `K/N`.
    pub fn parse(text: &str) -> Result<Shard, ReplayError> {
        let bad = || ReplayError(format!("a shard is written K/N (e.g. 0/4), not `{text}`"));
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        Shard::new(k, n)
    }

    /// Whether this shard replays the project.
    pub fn holds(&self, project_key: &str) -> bool {
        shard_of(project_key, self.count) == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The shard of `count` a project belongs to.
pub fn shard_of(project_key: &str, count: u32) -> u32 {
    let id = leastgrant_ingest::common::stable_id(&[project_key]);
    let hash = u32::from_str_radix(id.get(..8).unwrap_or("0"), 16).unwrap_or(0);
    hash % count.max(1)
}

/// Everything that decides a replay's results besides the events: the settings, the options
/// and the miss budget. Shards with different descriptions cannot be merged.
pub fn run_description(settings: &[Setting], options: &Options, miss_budget: f64) -> Value {
    json!({
        "settings": settings.iter().map(Setting::description).collect::<Vec<_>>(),
        "unattended": options.unattended.as_str(),
        "miss_budget_on": options.miss_budget_on.as_str(),
        "window": options.window,
        "max_windows": options.max_windows,
        "max_days": options.max_days,
        "split_at_us": options.split_at_us,
        "home": options.home,
        "rules": options.answers.as_ref().map_or_else(|| "none".to_string(), |a| a.describe()),
        "miss_budget": miss_budget,
    })
}

/// One project a shard replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardProject {
    /// Its place among every project of the events table, in the order one run replays them
    /// (bucket, then key).
    pub ordinal: u64,
    /// The project key.
    pub key: String,
    /// The summary's notes about it.
    pub notes: Vec<String>,
}

/// What a shard records beside its tables.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Which shard.
    pub shard: Shard,
    /// [`run_description`].
    pub run: Value,
    /// 16 hex digits of SHA-256 over the description (canonical JSON).
    pub run_fingerprint: String,
    /// 16 hex digits of SHA-256 over every bucket's files (names, lengths) and projects (keys,
    /// rows).
    pub events_fingerprint: String,
    /// Projects in the whole events table.
    pub table_projects: u64,
    /// The shard's projects, in replay order.
    pub projects: Vec<ShardProject>,
}

impl Manifest {
    /// A manifest for a shard of a run, before any project.
    pub fn new(shard: Shard, settings: &[Setting], options: &Options, miss_budget: f64) -> Self {
        let run = run_description(settings, options, miss_budget);
        Manifest {
            shard,
            run_fingerprint: leastgrant_engine::digest16(&run),
            run,
            events_fingerprint: String::new(),
            table_projects: 0,
            projects: Vec::new(),
        }
    }

    /// `shard.json`: the manifest and the shard's summary totals.
    pub fn to_json(&self, summary: &Summary) -> Value {
        let settings: Vec<Value> = summary
            .settings
            .iter()
            .map(|s| {
                json!({
                    "id": s.setting.id,
                    "periods": s.periods,
                    "friction_reasons": s.friction_reasons,
                    "promotions": s.promotions.0,
                    "promotion_us": s.promotions.1.to_string(),
                    "window_band": s.window_band.to_sparse(),
                    "day_band": s.day_band.to_sparse(),
                })
            })
            .collect();
        json!({
            "format": FORMAT,
            "shard": self.shard.index,
            "shards": self.shard.count,
            "run_fingerprint": self.run_fingerprint,
            "events_fingerprint": self.events_fingerprint,
            "table_projects": self.table_projects,
            "run": self.run,
            "projects": self.projects.iter().map(|p| json!({
                "ordinal": p.ordinal,
                "key": p.key,
                "notes": p.notes,
            })).collect::<Vec<_>>(),
            "totals": {
                "understood": [summary.understood.0, summary.understood.1],
                "capabilities": summary.capabilities,
                "labels": summary.labels,
                "settings": settings,
            },
        })
    }

    /// Reads a shard's `shard.json`: the manifest and the shard's summary, its notes in the
    /// shard's project order.
    pub fn read(dir: &Path) -> Result<(Manifest, Summary), ReplayError> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read(&path).map_err(|e| {
            ReplayError(format!(
                "`{}` holds no shard of a replay ({}: {e}); write shards with `leastgrant simulate --shard K/N`",
                dir.display(),
                MANIFEST
            ))
        })?;
        let value: Value = serde_json::from_slice(&text)
            .map_err(|e| ReplayError(format!("cannot read {}: {e}", path.display())))?;
        let damaged = |what: &str| {
            ReplayError(format!(
                "{} is damaged or from another version: {what}",
                path.display()
            ))
        };
        if value["format"].as_u64() != Some(FORMAT) {
            return Err(damaged(&format!(
                "format {} (this build reads {FORMAT})",
                value["format"]
            )));
        }
        let number = |field: &str| value[field].as_u64().ok_or_else(|| damaged(field));
        let index = u32::try_from(number("shard")?).map_err(|_| damaged("shard"))?;
        let count = u32::try_from(number("shards")?).map_err(|_| damaged("shards"))?;
        let shard = Shard::new(index, count).map_err(|e| damaged(&e.0))?;
        let run = value["run"].clone();
        let run_fingerprint = value["run_fingerprint"].as_str().unwrap_or("").to_string();
        if leastgrant_engine::digest16(&run) != run_fingerprint {
            return Err(damaged("its run does not match its fingerprint"));
        }
        let text_of = |field: &str| {
            value[field]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| damaged(field))
        };
        let mut projects = Vec::new();
        for project in value["projects"]
            .as_array()
            .ok_or_else(|| damaged("projects"))?
        {
            projects.push(ShardProject {
                ordinal: project["ordinal"]
                    .as_u64()
                    .ok_or_else(|| damaged("a project's ordinal"))?,
                key: project["key"]
                    .as_str()
                    .ok_or_else(|| damaged("a project's key"))?
                    .to_string(),
                notes: serde_json::from_value(project["notes"].clone())
                    .map_err(|_| damaged("a project's notes"))?,
            });
        }
        let manifest = Manifest {
            shard,
            events_fingerprint: text_of("events_fingerprint")?,
            table_projects: number("table_projects")?,
            run_fingerprint,
            run,
            projects,
        };
        let summary = manifest
            .summary(&value["totals"])
            .map_err(|e| damaged(&e))?;
        Ok((manifest, summary))
    }

    /// The shard's summary from its recorded totals.
    fn summary(&self, totals: &Value) -> Result<Summary, String> {
        let settings = self.settings()?;
        let run = &self.run;
        let options = Options {
            window: run["window"]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or("no window")?,
            unattended: run["unattended"]
                .as_str()
                .and_then(Unattended::parse)
                .ok_or("no unattended")?,
            miss_budget_on: run["miss_budget_on"]
                .as_str()
                .and_then(MissBudgetOn::parse)
                .ok_or("no miss_budget_on")?,
            split_at_us: run["split_at_us"].as_i64(),
            ..Options::default()
        };
        let miss_budget = run["miss_budget"].as_f64().ok_or("no miss budget")?;
        let mut summary = Summary::new(&settings, &options, miss_budget);
        summary.rules = run["rules"].as_str().ok_or("no rules")?.to_string();
        summary.projects = self.projects.len() as u64;
        summary.notes = self
            .projects
            .iter()
            .flat_map(|p| p.notes.iter().cloned())
            .collect();
        let understood: [u64; 2] =
            serde_json::from_value(totals["understood"].clone()).map_err(|e| e.to_string())?;
        summary.understood = (understood[0], understood[1]);
        summary.capabilities = serde_json::from_value(totals["capabilities"].clone())
            .map_err(|e| format!("capabilities: {e}"))?;
        summary.labels =
            serde_json::from_value(totals["labels"].clone()).map_err(|e| format!("labels: {e}"))?;
        let recorded = totals["settings"].as_array().ok_or("no settings totals")?;
        if recorded.len() != summary.settings.len() {
            return Err("its totals do not match its settings".to_string());
        }
        for (s, t) in summary.settings.iter_mut().zip(recorded) {
            if t["id"].as_str() != Some(s.setting.id.as_str()) {
                return Err(format!("the totals of `{}` are out of place", s.setting.id));
            }
            let periods: [Counts; 2] =
                serde_json::from_value(t["periods"].clone()).map_err(|e| e.to_string())?;
            s.periods = periods;
            s.friction_reasons =
                serde_json::from_value::<BTreeMap<String, u64>>(t["friction_reasons"].clone())
                    .map_err(|e| e.to_string())?;
            s.promotions = (
                t["promotions"].as_u64().ok_or("no promotions")?,
                t["promotion_us"]
                    .as_str()
                    .and_then(|n| n.parse().ok())
                    .ok_or("no promotion_us")?,
            );
            let band = |field: &str| -> Result<Band, String> {
                let sparse: Vec<Vec<[u32; 2]>> =
                    serde_json::from_value(t[field].clone()).map_err(|e| e.to_string())?;
                Band::from_sparse(&sparse).ok_or_else(|| format!("a bin of {field}"))
            };
            s.window_band = band("window_band")?;
            s.day_band = band("day_band")?;
        }
        Ok(summary)
    }

    /// The settings the run described.
    pub fn settings(&self) -> Result<Vec<Setting>, String> {
        self.run["settings"]
            .as_array()
            .ok_or("no settings")?
            .iter()
            .map(Setting::from_description)
            .collect()
    }
}
