//! `leastgrant simulate` and `leastgrant export`: replay the events table under settings and
//! baselines, print the table a person acts on, write the output tables; freeze a setting's
//! envelopes for the hook, and inspect a frozen file.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use leastgrant_engine::Frozen;
use leastgrant_replay::output::Outputs;
use leastgrant_replay::settings::{Grid, GridFile, Setting, baselines, native_twins};
use leastgrant_replay::summary::{DEFAULT_MISS_BUDGET, Summary};
use leastgrant_replay::{
    MissBudgetOn, Options, ProjectAnswers, Shard, Unattended, export, run, run_shard,
};
use serde_json::{Value, json};

use leastgrant_hook::answers::RuleFiles;
use leastgrant_hook::layout;

use crate::shared::summary_table::table_text;
use crate::shared::time::parse_time;

/// Which settings to compare: a grid file, grid flags, or the standard comparison.
#[derive(Args, Clone, Default)]
pub struct GridArgs {
    /// A TOML grid: `[grid]` lists (every combination) and/or `[[setting]]` entries.
    #[arg(long, value_name = "FILE")]
    grid: Option<PathBuf>,
    /// Postures to compare (observe, assist, autopilot, strict), comma-separated.
    #[arg(long, value_delimiter = ',')]
    posture: Vec<String>,
    /// Required confidence for tiers 0 and 1 (tier 2 keeps at least its default).
    #[arg(long, value_delimiter = ',')]
    confidence: Vec<f64>,
    /// z of the Wilson bound.
    #[arg(long, value_delimiter = ',')]
    z: Vec<f64>,
    /// Minimum distinct sessions of approval.
    #[arg(long, value_delimiter = ',')]
    min_sessions: Vec<u32>,
    /// Minimum distinct days of approval.
    #[arg(long, value_delimiter = ',')]
    min_days: Vec<u32>,
    /// Half-life of evidence, in days.
    #[arg(long, value_delimiter = ',')]
    half_life: Vec<f64>,
    /// Decayed sightings the observation route needs.
    #[arg(long, value_delimiter = ',')]
    min_observed: Vec<f64>,
    /// The highest tier learning may promote.
    #[arg(long, value_delimiter = ',')]
    max_tier: Vec<u8>,
    /// Also replay each setting's "native rules only" twin: its envelope exported as the
    /// agents' exact allow rules, no hook (the standard comparison has the default's).
    #[arg(long)]
    native: bool,
}

impl GridArgs {
    fn flags_given(&self) -> bool {
        !(self.posture.is_empty()
            && self.confidence.is_empty()
            && self.z.is_empty()
            && self.min_sessions.is_empty()
            && self.min_days.is_empty()
            && self.half_life.is_empty()
            && self.min_observed.is_empty()
            && self.max_tier.is_empty())
    }

    /// The settings, then the baselines.
    pub fn settings(&self) -> Result<Vec<Setting>> {
        let mut settings = Vec::new();
        if let Some(path) = &self.grid {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the grid {}", path.display()))?;
            settings.extend(GridFile::parse(&text)?.settings()?);
        }
        if self.flags_given() {
            let tier2 = leastgrant_engine::Thresholds::default().confidence_by_tier[2];
            let grid = Grid {
                posture: self.posture.clone(),
                confidence: self
                    .confidence
                    .iter()
                    .map(|c| [*c, *c, c.max(tier2)])
                    .collect(),
                approvals: Vec::new(),
                z: self.z.clone(),
                min_sessions: self.min_sessions.clone(),
                min_days: self.min_days.clone(),
                half_life_days: self.half_life.clone(),
                min_observed: self.min_observed.clone(),
                max_tier: self.max_tier.clone(),
                native: false,
            };
            for setting in grid.expand()? {
                if !settings.iter().any(|s| s.id == setting.id) {
                    settings.push(setting);
                }
            }
        }
        if settings.is_empty() {
            settings = Grid::standard();
        }
        if self.native {
            for twin in native_twins(&settings) {
                if !settings.iter().any(|s| s.id == twin.id) {
                    settings.push(twin);
                }
            }
        }
        settings.extend(baselines());
        Ok(settings)
    }
}

/// Where the events are and what the replay assumes.
#[derive(Args, Clone)]
pub struct ReplayArgs {
    /// The events table [default: `~/.leastgrant/data`, as `leastgrant ingest` writes it].
    #[arg(long, value_name = "DIR")]
    events: Option<PathBuf>,
    /// What an ask learns when the call ran with nobody answering prompts: approve
    /// (confirmed), observe (observed only) or skip (nothing, unlabeled).
    #[arg(long, default_value = "approve")]
    unattended: String,
    /// The home directory the history's `~` meant [default: guessed per project root].
    #[arg(long)]
    history_home: Option<String>,
    /// A rules file to replay with (repeatable) [default: the hook's, `~/.leastgrant/rules.json`
    /// and each project's `.leastgrant/rules.json`, with your grants].
    #[arg(long = "rules", value_name = "FILE")]
    rules: Vec<PathBuf>,
    /// Replay with no rules and no grants: learning and floors only.
    #[arg(long, conflicts_with = "rules")]
    no_rules: bool,
    /// Which misses the miss budget counts: all (every refused call let through) or risky
    /// (calls at tier ≥ 2 or near a floor; a routine command a person stopped is friction).
    #[arg(long, default_value = "all", value_name = "all|risky")]
    miss_budget_on: String,
}

impl ReplayArgs {
    fn table(&self) -> PathBuf {
        self.events
            .clone()
            .unwrap_or_else(|| layout::data_dir(&layout::state_dir_from_env(&layout::home())))
    }

    fn options(&self) -> Result<Options> {
        Ok(Options {
            unattended: Unattended::parse(&self.unattended).ok_or_else(|| {
                anyhow!(
                    "--unattended must be approve, observe or skip, not `{}`",
                    self.unattended
                )
            })?,
            miss_budget_on: MissBudgetOn::parse(&self.miss_budget_on).ok_or_else(|| {
                anyhow!(
                    "--miss-budget-on must be all or risky, not `{}`",
                    self.miss_budget_on
                )
            })?,
            home: self.history_home.clone(),
            answers: (!self.no_rules).then(|| {
                file_answers(
                    &layout::state_dir_from_env(&layout::home()),
                    self.rules.clone(),
                )
            }),
            ..Options::default()
        })
    }
}

/// The rules (`given`, else the hook's default files) and grants of a state directory, for the
/// replay (the hook crate's [`RuleFiles`] implements the replay's `ProjectAnswers`).
pub fn file_answers(state_dir: &Path, given: Vec<PathBuf>) -> Arc<dyn ProjectAnswers> {
    Arc::new(RuleFiles {
        given,
        state_dir: state_dir.display().to_string(),
    })
}

#[derive(Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    replay: ReplayArgs,
    #[command(flatten)]
    grid: GridArgs,
    /// Where the result tables go [default: `~/.leastgrant/replay`].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The share of your refusals the recommended setting may let through.
    #[arg(long, default_value_t = DEFAULT_MISS_BUDGET)]
    miss_budget: f64,
    /// Tune on events before this date (YYYY-MM-DD, UTC) and score the choice on the rest.
    #[arg(long, value_name = "DATE")]
    tune_until: Option<String>,
    /// Events per learning-curve window.
    #[arg(long, default_value_t = 50)]
    window: u32,
    /// Print the JSON summary instead of the table.
    #[arg(long)]
    json: bool,
    /// Replay only shard K of N (0 ≤ K < N): the projects whose key hashes to K modulo N
    /// (docs/fleet.md). Its output directory gets a `shard.json`; `leastgrant merge` combines
    /// the N directories into the tables of one run.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
}

fn progress_bar(quiet: bool, what: &str) -> Option<ProgressBar> {
    (std::io::stderr().is_terminal() && !quiet).then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{spinner}} {what}: {{pos}} events  {{per_sec}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar
    })
}

/// Replays the table and writes the outputs; returns the summary.
pub fn simulate(
    table: &Path,
    settings: &[Setting],
    options: &Options,
    miss_budget: f64,
    out: &Path,
    quiet: bool,
) -> Result<Summary> {
    simulate_shard(table, settings, options, miss_budget, out, quiet, None)
}

/// [`simulate`], of one shard's projects only when `shard` is given (its outputs then include
/// `shard.json`, for `leastgrant merge`).
pub fn simulate_shard(
    table: &Path,
    settings: &[Setting],
    options: &Options,
    miss_budget: f64,
    out: &Path,
    quiet: bool,
    shard: Option<Shard>,
) -> Result<Summary> {
    if !(0.0..=1.0).contains(&miss_budget) {
        bail!("--miss-budget is a share between 0 and 1, not {miss_budget}");
    }
    let bar = progress_bar(quiet, "replaying");
    let progress = |events: u64| {
        if let Some(bar) = &bar {
            bar.inc(events);
        }
    };
    let mut outputs = Outputs::create(out)?;
    let (summary, manifest) = run_shard(
        table,
        settings,
        options,
        miss_budget,
        shard.unwrap_or(Shard::WHOLE),
        &mut |runs| outputs.add(settings, runs),
        &progress,
    )?;
    match shard {
        Some(_) => outputs.finish_shard(&summary, &manifest)?,
        None => outputs.finish(&summary)?,
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(summary)
}

pub fn simulate_command(args: &SimulateArgs) -> Result<ExitCode> {
    let shard = args.shard.as_deref().map(Shard::parse).transpose()?;
    let settings = args.grid.settings()?;
    let options = Options {
        window: args.window.max(1),
        split_at_us: args.tune_until.as_deref().map(parse_time).transpose()?,
        ..args.replay.options()?
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| layout::replay_dir(&layout::state_dir_from_env(&layout::home())));
    let table = args.replay.table();
    let summary = simulate_shard(
        &table,
        &settings,
        &options,
        args.miss_budget,
        &out,
        args.json,
        shard,
    )?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary.to_json())?);
    } else {
        if let Some(shard) = shard {
            println!(
                "shard {shard}: these results cover this shard's projects only; combine the {} shards with `leastgrant merge`\n",
                shard.count
            );
        }
        print!("{}", table_text(&summary));
        println!("\nresults: {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    replay: ReplayArgs,
    #[command(flatten)]
    grid: GridArgs,
    /// The setting to freeze [default: the recommended one].
    #[arg(long, value_name = "ID")]
    setting: Option<String>,
    /// The share of your refusals the recommended setting may let through.
    #[arg(long, default_value_t = DEFAULT_MISS_BUDGET)]
    miss_budget: f64,
    /// Where the frozen envelope goes [default: `~/.leastgrant/envelope.lgenv`].
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Show what a frozen envelope holds instead of exporting.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["setting", "out"])]
    inspect: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    native: crate::native::NativeArgs,
}

pub fn export_command(args: &ExportArgs) -> Result<ExitCode> {
    if let Some(path) = &args.inspect {
        return inspect(path, args.json);
    }
    if args.native.given() {
        // `--out` names the agent's rule file here; the envelope is `--envelope`'s.
        return crate::native::run(
            &args.native,
            &args.replay.table(),
            args.out.as_deref(),
            &default_envelope_path(),
        );
    }
    let settings = args.grid.settings()?;
    let options = args.replay.options()?;
    let table = args.replay.table();
    let setting = match &args.setting {
        Some(id) => settings
            .iter()
            .find(|s| &s.id == id)
            .cloned()
            .ok_or_else(|| {
                let ids: Vec<&str> = settings.iter().map(|s| s.id.as_str()).collect();
                anyhow!(
                    "no setting `{id}` in this grid; the grid has: {}",
                    ids.join(", ")
                )
            })?,
        None => {
            // The recommendation needs the whole grid; its tables are not needed here.
            let bar = progress_bar(args.json, "choosing a setting");
            let summary = run(
                &table,
                &settings,
                &options,
                args.miss_budget,
                &mut |_| Ok(()),
                &|n| {
                    if let Some(bar) = &bar {
                        bar.inc(n);
                    }
                },
            )?;
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            let index = summary.recommend(None).ok_or_else(|| {
                anyhow!("no setting meets the miss budget; name one with --setting")
            })?;
            summary.settings[index].setting.clone()
        }
    };
    let bar = progress_bar(args.json, "freezing");
    let out = args.out.clone().unwrap_or_else(default_envelope_path);
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        leastgrant_ingest::table::create_private_dir(parent).map_err(|e| anyhow!("{e}"))?;
    }
    // Written a project at a time to a staged file, then renamed over the old one: the hook
    // maps the file it finds, and a file is never changed in place.
    let exported = write_staged(&out, |file| {
        Ok(export::freeze_table(
            &table,
            &setting,
            &options,
            file,
            &|n| {
                if let Some(bar) = &bar {
                    bar.inc(n);
                }
            },
        )?)
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "path": out.display().to_string(),
                "setting": setting.id,
                "digest": exported.digest,
                "projects": exported.projects,
                "signatures": exported.signatures,
                "bytes": exported.bytes,
            }))?
        );
    } else {
        println!(
            "froze {} projects ({} signatures) under `{}` to {}\ndigest {}",
            exported.projects,
            exported.signatures,
            setting.id,
            out.display(),
            exported.digest
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `path` through `write` into `<path>.staged` (owner-only), synced, then renamed over
/// `path`; the staged file is removed when writing fails.
fn write_staged<T>(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<T>,
) -> Result<T> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".staged");
    let staged = path.with_file_name(name);
    // Created afresh and exclusively, owner-only: whatever is at that name (a crash's leftover, a
    // planted link) is removed first, never followed.
    let file = leastgrant_hook::files::create_private_file(&staged)
        .with_context(|| format!("cannot create {}", staged.display()))?;
    let mut buffered = std::io::BufWriter::with_capacity(1 << 20, file);
    let written = write(&mut buffered).and_then(|value| {
        let file = buffered
            .into_inner()
            .map_err(|e| anyhow!("{}", e.error()))?;
        file.sync_all()?;
        Ok(value)
    });
    match written {
        Ok(value) => {
            std::fs::rename(&staged, path)
                .with_context(|| format!("cannot replace {}", path.display()))?;
            Ok(value)
        }
        Err(error) => {
            let _ = std::fs::remove_file(&staged);
            Err(error.context(format!("cannot write {}", path.display())))
        }
    }
}

/// `~/.leastgrant/envelope.lgenv` (or under `$LEASTGRANT_HOME`): where the hook looks.
pub fn default_envelope_path() -> PathBuf {
    layout::envelope_path(&layout::state_dir_from_env(&layout::home()))
}

/// Shows a frozen envelope a project at a time: the file is mapped, not read, so a fleet's
/// envelope costs the memory of its largest project.
fn inspect(path: &Path, as_json: bool) -> Result<ExitCode> {
    // A file the user names: followed through a link, but never a FIFO or a device.
    let mapped = leastgrant_hook::state::map_named(path)?
        .ok_or_else(|| anyhow!("cannot read {}: no such file", path.display()))?;
    let frozen = Frozen::parse(&mapped)?;
    let verified = frozen.verify();
    let meta = frozen.meta();
    let settings = frozen.settings();
    let (rules, provenance) = match &meta {
        Ok(meta) => (meta.rules.clone(), meta.provenance.clone()),
        Err(_) => (Vec::new(), Value::Null),
    };
    let thresholds = leastgrant_engine::thresholds_json(&settings.thresholds);
    let rules_text = if rules.is_empty() {
        "none".to_string()
    } else {
        rules.join("; ")
    };
    if !as_json {
        println!("{}", path.display());
        println!(
            "  format {}, digest {} ({})",
            leastgrant_engine::FORMAT_VERSION,
            frozen.digest(),
            if verified.is_ok() {
                "verified"
            } else {
                "DOES NOT MATCH"
            }
        );
        println!(
            "  setting {} (posture {}), rules: {rules_text}",
            frozen.setting_id(),
            settings.posture.as_str(),
        );
        println!("  thresholds {thresholds}");
        println!("  provenance {provenance}");
        println!("  {} projects", frozen.project_count());
    }
    // Projects are written as they are read, so memory holds one project whatever the fleet.
    let mut out = std::io::BufWriter::new(crate::shared::output::Stdout);
    use std::io::Write as _;
    if as_json {
        let head = json!({
            "path": path.display().to_string(),
            "format_version": leastgrant_engine::FORMAT_VERSION,
            "digest": frozen.digest(),
            "digest_ok": verified.is_ok(),
            "setting_id": frozen.setting_id(),
            "posture": settings.posture.as_str(),
            "thresholds": thresholds,
            "rules": rules,
            "provenance": provenance,
        });
        writeln!(out, "{{")?;
        for (key, value) in head.as_object().into_iter().flatten() {
            writeln!(out, "  {}: {},", json!(key), value)?;
        }
        write!(out, "  \"projects\": [")?;
    }
    let mut damaged = None;
    let mut first = true;
    for project in frozen.projects() {
        let project = match project {
            Ok(project) => project,
            Err(error) => {
                damaged.get_or_insert(error);
                continue;
            }
        };
        let mut top: Vec<_> = project.signatures().flatten().collect();
        top.sort_by(|a, b| {
            b.total_seen
                .cmp(&a.total_seen)
                .then(a.signature.cmp(&b.signature))
        });
        top.truncate(5);
        if as_json {
            let entry = json!({
                "key": project.key(),
                "root": project.root(),
                "signatures": project.signature_count(),
                "most_seen": top.iter().map(|s| json!({
                    "signature": s.signature,
                    "seen": s.total_seen,
                    "denied": s.facts.denied,
                    "worst_tier": s.worst_tier,
                })).collect::<Vec<_>>(),
            });
            write!(out, "{}\n    {entry}", if first { "" } else { "," })?;
            first = false;
        } else {
            writeln!(
                out,
                "  project {} ({} signatures)",
                project.key(),
                project.signature_count()
            )?;
            for s in &top {
                writeln!(out, "    {:>6}×  {}", s.total_seen, s.signature)?;
            }
        }
    }
    if as_json {
        writeln!(out, "\n  ]\n}}")?;
    }
    out.flush()?;
    verified?;
    meta?;
    if let Some(error) = damaged {
        return Err(error.into());
    }
    Ok(ExitCode::SUCCESS)
}
