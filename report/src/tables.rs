//! Reading the replay's output directory into plain rows: the Parquet tables (only the columns
//! the report shows) and `summary.json`.
//!
//! Owns: the in-memory form of the results ([`Results`]) and tolerance for what the contract
//! allows: a table with no rows is not written by the replay, so an absent optional table reads
//! as empty. Must not: recompute anything the replay decided (frontier, recommendation, bounds).

use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

use crate::columns::{self as col, AXIS_WINDOW};
use crate::error::ReportError;

/// One setting's totals (a row of `settings.parquet`).
#[derive(Debug, Clone)]
pub struct Setting {
    /// Its id.
    pub id: String,
    /// Its posture (`baseline` for baselines).
    pub posture: String,
    /// Whether it is a baseline.
    pub baseline: bool,
    /// Calls replayed.
    pub events: u64,
    /// Calls let run.
    pub allow: u64,
    /// Calls asked about.
    pub ask: u64,
    /// Calls denied.
    pub deny: u64,
    /// Allowed calls the person had refused.
    pub misses: u64,
    /// Of those, risky calls (tier ≥ 2 or near a floor); the rest are routine.
    pub misses_risky: u64,
    /// Asked or denied calls the person had refused.
    pub catches: u64,
    /// Allowed calls that ran.
    pub saved: u64,
    /// Asked calls the person approved.
    pub friction: u64,
    /// Denied calls the person approved.
    pub false_blocks: u64,
    /// Calls with no label.
    pub unlabeled: u64,
    /// Refused calls.
    pub refused: u64,
    /// Wilson upper bound on the miss rate.
    pub miss_rate_upper: f64,
    /// On the frontier.
    pub frontier: bool,
    /// The recommendation.
    pub recommended: bool,
    /// Signatures promoted.
    pub promotions: u64,
}

impl Setting {
    /// Asks / calls.
    pub fn prompt_rate(&self) -> f64 {
        ratio(self.ask, self.events)
    }

    /// Whether the setting enforces something learned (not a baseline, not `observe`).
    pub fn enforcing(&self) -> bool {
        !self.baseline && self.posture != "observe"
    }
}

/// `part / whole`, 0 when nothing.
pub fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// One setting in one project (a row of `projects.parquet`).
#[derive(Debug, Clone)]
pub struct Project {
    /// The setting's id.
    pub setting_id: String,
    /// The project's key.
    pub project_key: String,
    /// Calls replayed.
    pub events: u64,
    /// Calls asked about.
    pub ask: u64,
    /// Misses.
    pub misses: u64,
    /// Of those, risky calls.
    pub misses_risky: u64,
    /// Refused calls.
    pub refused: u64,
}

/// One window of one project's learning curve.
#[derive(Debug, Clone)]
pub struct CurvePoint {
    /// The setting's id.
    pub setting_id: String,
    /// The project's key.
    pub project_key: String,
    /// The window's index.
    pub x: u64,
    /// Calls in the window.
    pub events: u64,
    /// Asks / calls in the window.
    pub prompt_rate: f64,
}

/// The quantiles of the projects' prompt rates at one window.
#[derive(Debug, Clone)]
pub struct BandPoint {
    /// The setting's id.
    pub setting_id: String,
    /// The window's index.
    pub x: u64,
    /// Projects with a point there.
    pub projects: u64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub median: f64,
    /// 75th percentile.
    pub p75: f64,
}

/// One miss: a call the setting let through that the person had refused.
#[derive(Debug, Clone)]
pub struct Miss {
    /// The setting's id.
    pub setting_id: String,
    /// The project's key.
    pub project_key: String,
    /// When (UTC µs).
    pub ts_us: Option<i64>,
    /// The tool.
    pub tool_name: String,
    /// The tool's input (JSON text).
    pub tool_input: String,
    /// Reason codes, comma-separated.
    pub reason_codes: String,
    /// The engine's words.
    pub reasons: String,
    /// Risky (tier ≥ 2 or near a floor), not routine.
    pub risky: bool,
}

/// One promotion: how long a signature took to stop asking.
#[derive(Debug, Clone)]
pub struct Promotion {
    /// The setting's id.
    pub setting_id: String,
    /// Days from first sighting to promotion.
    pub days: f64,
}

/// Prompts of one setting with one reason code.
#[derive(Debug, Clone)]
pub struct Friction {
    /// The setting's id.
    pub setting_id: String,
    /// The reason code of the action that asked.
    pub reason_code: String,
    /// Prompts.
    pub count: u64,
}

/// Actions of one capability in one project (a row of `capabilities.parquet`).
#[derive(Debug, Clone)]
pub struct Capability {
    /// The project's key.
    pub project_key: String,
    /// The capability.
    pub capability: String,
    /// Actions of that capability.
    pub actions: u64,
}

/// What `summary.json` adds to the tables.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The assumptions, key → value, as the replay wrote them.
    pub assumptions: Vec<(String, Value)>,
    /// Projects replayed.
    pub projects: Option<u64>,
    /// Share of actions the engine understood.
    pub actions_understood: Option<f64>,
    /// The recommendation's id and why.
    pub recommended: Option<(String, String)>,
    /// The time split, when the replay was run with `--tune-until`.
    pub time_split: Option<Value>,
    /// Events per learning-curve window.
    pub window_events: u64,
    /// Where the labels came from; `None` for a replay written before it was kept.
    pub labels: Option<Labels>,
}

/// Where the replay's labels came from (`summary.json`'s `labels`), whatever the setting.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Labels {
    /// Per agent, by name.
    pub agents: Vec<LabelCounts>,
    /// Over every agent (`agent` is `total`).
    pub total: LabelCounts,
    /// The assumption behind the inferred labels.
    pub assumption: String,
    /// What a weakly labelled agent is.
    pub weak_meaning: String,
}

impl Labels {
    /// The rows of the labels table, the same on both pages: each agent in order, then the
    /// total when there is more than one agent.
    pub fn rows(&self) -> Vec<LabelRow<'_>> {
        let mut rows: Vec<LabelRow<'_>> = self
            .agents
            .iter()
            .map(|counts| LabelRow {
                agent: Some(&counts.agent),
                weak: counts.weak,
                counts,
            })
            .collect();
        if self.agents.len() > 1 {
            rows.push(LabelRow {
                agent: None,
                weak: false,
                counts: &self.total,
            });
        }
        rows
    }

    /// What a weakly labelled agent is, when an agent in the table is one and the replay said.
    pub fn weak_note(&self) -> Option<&str> {
        (self.agents.iter().any(|a| a.weak) && !self.weak_meaning.is_empty())
            .then_some(self.weak_meaning.as_str())
    }
}

/// One row of the labels table ([`Labels::rows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelRow<'a> {
    /// The agent; `None` on the total's row.
    pub agent: Option<&'a str>,
    /// The agent is weakly labelled.
    pub weak: bool,
    /// The row's counts.
    pub counts: &'a LabelCounts,
}

/// One agent's (or the total's) labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelCounts {
    /// The agent.
    pub agent: String,
    /// Calls.
    pub events: u64,
    /// Labelled by a decision the history recorded.
    pub observed: u64,
    /// Labelled by inference (the permission mode, the result text, the unattended assumption).
    pub inferred: u64,
    /// Labelled calls that ran on configuration, a hook or the auto-mode classifier: observed
    /// evidence at most.
    pub unjudged: u64,
    /// Denied by Claude Code's auto-mode classifier.
    pub classifier_denied: u64,
    /// No label.
    pub unlabeled: u64,
    /// The agent records neither approvals nor most denials (Codex).
    pub weak: bool,
}

/// Everything the report shows.
#[derive(Debug, Clone, Default)]
pub struct Results {
    /// The settings, in the replay's order.
    pub settings: Vec<Setting>,
    /// Per setting and project.
    pub projects: Vec<Project>,
    /// Window learning curves.
    pub curves: Vec<CurvePoint>,
    /// Window bands.
    pub bands: Vec<BandPoint>,
    /// Misses.
    pub misses: Vec<Miss>,
    /// Promotions.
    pub promotions: Vec<Promotion>,
    /// Friction by reason.
    pub friction: Vec<Friction>,
    /// The capability mix per project.
    pub capabilities: Vec<Capability>,
    /// `summary.json`.
    pub summary: Summary,
}

impl Results {
    /// The setting with this id.
    pub fn setting(&self, id: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| s.id == id)
    }

    /// The recommended setting.
    pub fn recommended(&self) -> Option<&Setting> {
        self.settings.iter().find(|s| s.recommended)
    }

    /// Where the labels came from, when the replay kept it and it names an agent: the pages'
    /// labels section, absent otherwise.
    pub fn labels(&self) -> Option<&Labels> {
        self.summary
            .labels
            .as_ref()
            .filter(|l| !l.agents.is_empty())
    }

    /// The settings the focused plots compare: the recommendation, then the enforcing settings
    /// on the frontier (fewest prompts first); at most three. Without either, the enforcing
    /// settings with the fewest prompts.
    pub fn focus(&self) -> Vec<&Setting> {
        let mut out: Vec<&Setting> = self.recommended().into_iter().collect();
        let mut frontier: Vec<&Setting> = self
            .settings
            .iter()
            .filter(|s| s.frontier && s.enforcing() && !s.recommended)
            .collect();
        frontier.sort_by(|a, b| a.prompt_rate().total_cmp(&b.prompt_rate()));
        out.extend(frontier);
        if out.is_empty() {
            let mut enforcing: Vec<&Setting> =
                self.settings.iter().filter(|s| s.enforcing()).collect();
            enforcing.sort_by(|a, b| a.prompt_rate().total_cmp(&b.prompt_rate()));
            out.extend(enforcing);
        }
        out.truncate(3);
        out
    }
}

/// Reads the results directory.
pub fn read(dir: &Path) -> Result<Results, ReportError> {
    if !dir.is_dir() {
        return Err(ReportError::NoResults {
            dir: dir.to_path_buf(),
            why: if dir.exists() {
                "it is not a directory".into()
            } else {
                "it does not exist".into()
            },
        });
    }
    let settings_path = dir.join(col::settings::FILE);
    let summary_path = dir.join(col::SUMMARY_FILE);
    for path in [&settings_path, &summary_path] {
        if !path.is_file() {
            return Err(ReportError::NoResults {
                dir: dir.to_path_buf(),
                why: format!(
                    "it has no `{}`",
                    path.file_name().unwrap_or_default().to_string_lossy()
                ),
            });
        }
    }
    let summary = read_summary(&summary_path)?;
    let settings = read_settings(&settings_path)?;
    let focus_ids: Vec<String> = {
        let partial = Results {
            settings: settings.clone(),
            ..Results::default()
        };
        let mut ids: Vec<String> = partial.focus().iter().map(|s| s.id.clone()).collect();
        ids.extend(settings.iter().filter(|s| s.baseline).map(|s| s.id.clone()));
        ids
    };
    let mut results = Results {
        settings,
        summary,
        ..Results::default()
    };
    results.projects = read_projects(&dir.join(col::projects::FILE))?;
    let (curves, bands) = read_curves(dir, &focus_ids)?;
    results.curves = curves;
    results.bands = bands;
    results.misses = read_misses(&dir.join(col::misses::FILE))?;
    results.promotions = read_promotions(&dir.join(col::promotions::FILE))?;
    results.friction = read_friction(&dir.join(col::friction::FILE))?;
    results.capabilities = read_capabilities(&dir.join(col::capabilities::FILE))?;
    Ok(results)
}

fn read_summary(path: &Path) -> Result<Summary, ReportError> {
    let fail = |why: String| ReportError::Read {
        path: path.to_path_buf(),
        why,
    };
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let json: Value = serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))?;
    let s = col::summary::ASSUMPTIONS;
    let assumptions: Vec<(String, Value)> = json
        .get(s)
        .and_then(Value::as_object)
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let window_events = assumptions
        .iter()
        .find(|(k, _)| k == col::summary::WINDOW_EVENTS)
        .and_then(|(_, v)| v.as_u64())
        .unwrap_or(50);
    let recommended = json.get(col::summary::RECOMMENDED).and_then(|r| {
        Some((
            r.get(col::summary::ID)?.as_str()?.to_string(),
            r.get(col::summary::WHY)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        ))
    });
    Ok(Summary {
        assumptions,
        projects: json.get(col::summary::PROJECTS).and_then(Value::as_u64),
        actions_understood: json
            .get(col::summary::ACTIONS_UNDERSTOOD)
            .and_then(Value::as_f64),
        recommended,
        time_split: json
            .get(col::summary::TIME_SPLIT)
            .filter(|v| !v.is_null())
            .cloned(),
        window_events,
        labels: json.get(col::summary::LABELS).and_then(read_labels),
    })
}

fn read_labels(labels: &Value) -> Option<Labels> {
    use col::summary::labels as k;
    let counts = |agent: &str, v: &Value| {
        let n = |key: &str| v.get(key).and_then(Value::as_u64).unwrap_or(0);
        LabelCounts {
            agent: agent.to_string(),
            events: n(k::EVENTS),
            observed: n(k::OBSERVED),
            inferred: n(k::INFERRED),
            unjudged: n(k::UNJUDGED),
            classifier_denied: n(k::CLASSIFIER_DENIED),
            unlabeled: n(k::UNLABELED),
            weak: v.get(k::WEAK).and_then(Value::as_bool).unwrap_or(false),
        }
    };
    let agents = labels.get(k::AGENTS)?.as_object()?;
    let text = |key: &str| {
        labels
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    Some(Labels {
        agents: agents.iter().map(|(a, v)| counts(a, v)).collect(),
        total: counts("total", labels.get(k::TOTAL).unwrap_or(&Value::Null)),
        assumption: text(k::ASSUMPTION),
        weak_meaning: text(k::WEAK_MEANING),
    })
}

fn read_settings(path: &Path) -> Result<Vec<Setting>, ReportError> {
    use col::settings as c;
    let mut out = Vec::new();
    scan(
        path,
        &[
            c::SETTING_ID,
            c::POSTURE,
            c::BASELINE,
            c::EVENTS,
            c::ALLOW,
            c::ASK,
            c::DENY,
            c::MISSES,
            c::CATCHES,
            c::SAVED,
            c::FRICTION,
            c::FALSE_BLOCKS,
            c::UNLABELED,
            c::REFUSED,
            c::MISSES_RISKY,
            c::MISS_RATE_UPPER,
            c::FRONTIER,
            c::RECOMMENDED,
            c::PROMOTIONS,
        ],
        |b| {
            let (id, posture) = (texts(b, c::SETTING_ID)?, texts(b, c::POSTURE)?);
            let (baseline, frontier, recommended) = (
                flags(b, c::BASELINE)?,
                flags(b, c::FRONTIER)?,
                flags(b, c::RECOMMENDED)?,
            );
            let (events, allow, ask, deny) = (
                counts(b, c::EVENTS)?,
                counts(b, c::ALLOW)?,
                counts(b, c::ASK)?,
                counts(b, c::DENY)?,
            );
            let (misses, catches, saved, friction) = (
                counts(b, c::MISSES)?,
                counts(b, c::CATCHES)?,
                counts(b, c::SAVED)?,
                counts(b, c::FRICTION)?,
            );
            let (false_blocks, unlabeled, refused, promotions) = (
                counts(b, c::FALSE_BLOCKS)?,
                counts(b, c::UNLABELED)?,
                counts(b, c::REFUSED)?,
                counts(b, c::PROMOTIONS)?,
            );
            let upper = reals(b, c::MISS_RATE_UPPER)?;
            let misses_risky = counts(b, c::MISSES_RISKY)?;
            for i in 0..b.num_rows() {
                out.push(Setting {
                    id: id[i].clone(),
                    posture: posture[i].clone(),
                    baseline: baseline[i],
                    events: events[i],
                    allow: allow[i],
                    ask: ask[i],
                    deny: deny[i],
                    misses: misses[i],
                    misses_risky: misses_risky[i],
                    catches: catches[i],
                    saved: saved[i],
                    friction: friction[i],
                    false_blocks: false_blocks[i],
                    unlabeled: unlabeled[i],
                    refused: refused[i],
                    miss_rate_upper: upper[i],
                    frontier: frontier[i],
                    recommended: recommended[i],
                    promotions: promotions[i],
                });
            }
            Ok(())
        },
    )?;
    Ok(out)
}

fn read_projects(path: &Path) -> Result<Vec<Project>, ReportError> {
    use col::projects as c;
    optional(
        path,
        &[
            c::SETTING_ID,
            c::PROJECT_KEY,
            c::EVENTS,
            c::ASK,
            c::MISSES,
            c::MISSES_RISKY,
            c::REFUSED,
        ],
        |b, out| {
            let (setting, project) = (texts(b, c::SETTING_ID)?, texts(b, c::PROJECT_KEY)?);
            let misses_risky = counts(b, c::MISSES_RISKY)?;
            let (events, ask, misses, refused) = (
                counts(b, c::EVENTS)?,
                counts(b, c::ASK)?,
                counts(b, c::MISSES)?,
                counts(b, c::REFUSED)?,
            );
            for i in 0..b.num_rows() {
                out.push(Project {
                    setting_id: setting[i].clone(),
                    project_key: project[i].clone(),
                    events: events[i],
                    ask: ask[i],
                    misses: misses[i],
                    misses_risky: misses_risky[i],
                    refused: refused[i],
                });
            }
            Ok(())
        },
    )
}

/// The window curves and bands of the settings the report plots (the curves table has a row
/// per setting, project and point, so the rest is dropped as it is read).
fn read_curves(
    dir: &Path,
    wanted: &[String],
) -> Result<(Vec<CurvePoint>, Vec<BandPoint>), ReportError> {
    let mut curves = Vec::new();
    let path = dir.join(col::curves::FILE);
    if path.is_file() {
        use col::curves as c;
        scan(
            &path,
            &[
                c::SETTING_ID,
                c::PROJECT_KEY,
                c::AXIS,
                c::X,
                c::EVENTS,
                c::PROMPT_RATE,
            ],
            |b| {
                let (setting, project, axis) = (
                    texts(b, c::SETTING_ID)?,
                    texts(b, c::PROJECT_KEY)?,
                    texts(b, c::AXIS)?,
                );
                let (x, events, rate) = (
                    counts(b, c::X)?,
                    counts(b, c::EVENTS)?,
                    reals(b, c::PROMPT_RATE)?,
                );
                for i in 0..b.num_rows() {
                    if axis[i] == AXIS_WINDOW && wanted.contains(&setting[i]) {
                        curves.push(CurvePoint {
                            setting_id: setting[i].clone(),
                            project_key: project[i].clone(),
                            x: x[i],
                            events: events[i],
                            prompt_rate: rate[i],
                        });
                    }
                }
                Ok(())
            },
        )?;
    }
    let mut bands = Vec::new();
    let path = dir.join(col::bands::FILE);
    if path.is_file() {
        use col::bands as c;
        scan(
            &path,
            &[
                c::SETTING_ID,
                c::AXIS,
                c::X,
                c::PROJECTS,
                c::P25,
                c::MEDIAN,
                c::P75,
            ],
            |b| {
                let (setting, axis) = (texts(b, c::SETTING_ID)?, texts(b, c::AXIS)?);
                let (x, projects) = (counts(b, c::X)?, counts(b, c::PROJECTS)?);
                let (p25, median, p75) =
                    (reals(b, c::P25)?, reals(b, c::MEDIAN)?, reals(b, c::P75)?);
                for i in 0..b.num_rows() {
                    if axis[i] == AXIS_WINDOW && wanted.contains(&setting[i]) {
                        bands.push(BandPoint {
                            setting_id: setting[i].clone(),
                            x: x[i],
                            projects: projects[i],
                            p25: p25[i],
                            median: median[i],
                            p75: p75[i],
                        });
                    }
                }
                Ok(())
            },
        )?;
    }
    Ok((curves, bands))
}

fn read_misses(path: &Path) -> Result<Vec<Miss>, ReportError> {
    use col::misses as c;
    optional(
        path,
        &[
            c::SETTING_ID,
            c::PROJECT_KEY,
            c::TS,
            c::TOOL_NAME,
            c::TOOL_INPUT,
            c::REASON_CODES,
            c::REASONS,
            c::RISKY,
        ],
        |b, out| {
            let (setting, project, tool, input) = (
                texts(b, c::SETTING_ID)?,
                texts(b, c::PROJECT_KEY)?,
                texts(b, c::TOOL_NAME)?,
                texts(b, c::TOOL_INPUT)?,
            );
            let (codes, reasons, ts) = (
                texts(b, c::REASON_CODES)?,
                texts(b, c::REASONS)?,
                times(b, c::TS)?,
            );
            let risky = flags(b, c::RISKY)?;
            for i in 0..b.num_rows() {
                out.push(Miss {
                    setting_id: setting[i].clone(),
                    project_key: project[i].clone(),
                    ts_us: ts[i],
                    tool_name: tool[i].clone(),
                    tool_input: input[i].clone(),
                    reason_codes: codes[i].clone(),
                    reasons: reasons[i].clone(),
                    risky: risky[i],
                });
            }
            Ok(())
        },
    )
}

fn read_promotions(path: &Path) -> Result<Vec<Promotion>, ReportError> {
    use col::promotions as c;
    optional(path, &[c::SETTING_ID, c::DAYS_TO_PROMOTION], |b, out| {
        let (setting, days) = (texts(b, c::SETTING_ID)?, reals(b, c::DAYS_TO_PROMOTION)?);
        for i in 0..b.num_rows() {
            out.push(Promotion {
                setting_id: setting[i].clone(),
                days: days[i],
            });
        }
        Ok(())
    })
}

fn read_friction(path: &Path) -> Result<Vec<Friction>, ReportError> {
    use col::friction as c;
    let rows = texts_and_count(path, [c::SETTING_ID, c::REASON_CODE, c::COUNT])?;
    Ok(rows
        .into_iter()
        .map(|(setting_id, reason_code, count)| Friction {
            setting_id,
            reason_code,
            count,
        })
        .collect())
}

fn read_capabilities(path: &Path) -> Result<Vec<Capability>, ReportError> {
    use col::capabilities as c;
    let rows = texts_and_count(path, [c::PROJECT_KEY, c::CAPABILITY, c::ACTIONS])?;
    Ok(rows
        .into_iter()
        .map(|(project_key, capability, actions)| Capability {
            project_key,
            capability,
            actions,
        })
        .collect())
}

/// The rows of an optional table read as two text columns and a count, in that order.
fn texts_and_count(
    path: &Path,
    [first, second, count]: [&str; 3],
) -> Result<Vec<(String, String, u64)>, ReportError> {
    optional(path, &[first, second, count], |b, out| {
        let (a, t, n) = (texts(b, first)?, texts(b, second)?, counts(b, count)?);
        for i in 0..b.num_rows() {
            out.push((a[i].clone(), t[i].clone(), n[i]));
        }
        Ok(())
    })
}

/// The rows of a table the replay writes only when it has rows: none when the file is absent.
fn optional<T>(
    path: &Path,
    columns: &[&str],
    mut decode: impl FnMut(&RecordBatch, &mut Vec<T>) -> Result<(), String>,
) -> Result<Vec<T>, ReportError> {
    let mut out = Vec::new();
    if path.is_file() {
        scan(path, columns, |b| decode(b, &mut out))?;
    }
    Ok(out)
}

/// Reads a Parquet file batch by batch, only the named columns; a missing column is an error
/// that names it.
fn scan(
    path: &Path,
    columns: &[&str],
    mut each: impl FnMut(&RecordBatch) -> Result<(), String>,
) -> Result<(), ReportError> {
    let fail = |why: String| ReportError::Read {
        path: path.to_path_buf(),
        why,
    };
    let file = File::open(path).map_err(|e| fail(e.to_string()))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| fail(e.to_string()))?;
    let schema = builder.parquet_schema();
    let present: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
    if let Some(missing) = columns.iter().find(|c| !present.contains(c)) {
        return Err(fail(format!(
            "it has no `{missing}` column (docs/formats.md lists what the replay writes)"
        )));
    }
    let wanted: Vec<usize> = schema
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| columns.contains(&c.name()))
        .map(|(i, _)| i)
        .collect();
    let mask = ProjectionMask::leaves(schema, wanted);
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| fail(e.to_string()))?;
    for batch in reader {
        let batch = batch.map_err(|e| fail(e.to_string()))?;
        each(&batch).map_err(fail)?;
    }
    Ok(())
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a dyn Array, String> {
    batch
        .column_by_name(name)
        .map(|c| c.as_ref())
        .ok_or_else(|| format!("it has no `{name}` column"))
}

fn wrong_type(name: &str, kind: &DataType) -> String {
    format!("its `{name}` column is of an unexpected type ({kind})")
}

/// Text values (null → empty).
fn texts(batch: &RecordBatch, name: &str) -> Result<Vec<String>, String> {
    let a = column(batch, name)?;
    let get = |i: usize, v: &str| {
        if a.is_null(i) {
            String::new()
        } else {
            v.to_string()
        }
    };
    Ok(match a.data_type() {
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            (0..a.len()).map(|i| get(i, s.value(i))).collect()
        }
        DataType::LargeUtf8 => {
            let s = a.as_string::<i64>();
            (0..a.len()).map(|i| get(i, s.value(i))).collect()
        }
        DataType::Utf8View => {
            let s = a.as_string_view();
            (0..a.len()).map(|i| get(i, s.value(i))).collect()
        }
        other => return Err(wrong_type(name, other)),
    })
}

/// The values of a primitive column converted, with `null` where a value is null.
fn primitives<T: ArrowPrimitiveType, R: Copy>(
    a: &dyn Array,
    null: R,
    convert: impl Fn(T::Native) -> R,
) -> Vec<R> {
    let v = a.as_primitive::<T>();
    (0..v.len())
        .map(|i| {
            if v.is_null(i) {
                null
            } else {
                convert(v.value(i))
            }
        })
        .collect()
}

/// Counts (null → 0; negative → 0).
fn counts(batch: &RecordBatch, name: &str) -> Result<Vec<u64>, String> {
    let a = column(batch, name)?;
    Ok(match a.data_type() {
        DataType::UInt64 => primitives::<UInt64Type, _>(a, 0, |x| x),
        DataType::Int64 => primitives::<Int64Type, _>(a, 0, |x| x.max(0) as u64),
        DataType::UInt32 => primitives::<UInt32Type, _>(a, 0, u64::from),
        DataType::Int32 => primitives::<Int32Type, _>(a, 0, |x| x.max(0) as u64),
        other => return Err(wrong_type(name, other)),
    })
}

/// Real numbers (null → NaN, which the plots skip).
fn reals(batch: &RecordBatch, name: &str) -> Result<Vec<f64>, String> {
    let a = column(batch, name)?;
    Ok(match a.data_type() {
        DataType::Float64 => primitives::<Float64Type, _>(a, f64::NAN, |x| x),
        DataType::Float32 => primitives::<Float32Type, _>(a, f64::NAN, f64::from),
        other => return Err(wrong_type(name, other)),
    })
}

/// Flags (null → false).
fn flags(batch: &RecordBatch, name: &str) -> Result<Vec<bool>, String> {
    let a = column(batch, name)?;
    match a.data_type() {
        DataType::Boolean => {
            let v = a.as_boolean();
            Ok((0..a.len()).map(|i| !v.is_null(i) && v.value(i)).collect())
        }
        other => Err(wrong_type(name, other)),
    }
}

/// Timestamps in UTC microseconds (any time zone annotation; an integer column is taken as µs).
fn times(batch: &RecordBatch, name: &str) -> Result<Vec<Option<i64>>, String> {
    let a = column(batch, name)?;
    match a.data_type() {
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            Ok(primitives::<TimestampMicrosecondType, _>(a, None, Some))
        }
        DataType::Int64 => Ok(primitives::<Int64Type, _>(a, None, Some)),
        other => Err(wrong_type(name, other)),
    }
}
