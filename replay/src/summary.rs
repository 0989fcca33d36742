//! Results across projects: totals per setting, the miss rate's Wilson upper bound, the
//! learning curves' median and quantile band, the Pareto frontier, and the recommendation.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::classify::{LabelCounts, MissBudgetOn, Options, Unattended};
use crate::replay::{Counts, CurvePoint, ProjectRun};
use crate::settings::Setting;

/// The share of the person's refusals a recommended setting may let through, unless told
/// otherwise (docs/decisions.md: why 10%).
pub const DEFAULT_MISS_BUDGET: f64 = 0.10;

/// The z of the reported upper bound: one-sided 95%.
pub const UPPER_Z: f64 = 1.645;

/// Prompt-rate resolution of the bands: whole percents.
const BINS: usize = 101;

/// The Wilson score upper bound of `successes` out of `trials`; 1 when there were no trials
/// (nothing is known).
pub fn wilson_upper_bound(successes: u64, trials: u64, z: f64) -> f64 {
    if trials == 0 {
        return 1.0;
    }
    let n = trials as f64;
    let p = (successes as f64 / n).clamp(0.0, 1.0);
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let margin = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre + margin) / (1.0 + z2 / n)).min(1.0)
}

/// Histograms of per-project prompt rates at each point of a curve.
#[derive(Debug, Clone, Default)]
pub struct Band {
    points: Vec<[u32; BINS]>,
}

impl Band {
    /// Adds another band's histograms (sums of counts: any order gives the same band).
    pub fn merge(&mut self, other: &Band) {
        if self.points.len() < other.points.len() {
            self.points.resize(other.points.len(), [0; BINS]);
        }
        for (mine, theirs) in self.points.iter_mut().zip(&other.points) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
    }

    /// The histograms without their empty bins: per point, `[bin, projects]` pairs.
    pub fn to_sparse(&self) -> Vec<Vec<[u32; 2]>> {
        self.points
            .iter()
            .map(|h| {
                h.iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(|(bin, n)| [bin as u32, *n])
                    .collect()
            })
            .collect()
    }

    /// A band from [`Band::to_sparse`]; `None` when a bin is out of range.
    pub fn from_sparse(points: &[Vec<[u32; 2]>]) -> Option<Band> {
        let mut band = Band {
            points: vec![[0; BINS]; points.len()],
        };
        for (histogram, bins) in band.points.iter_mut().zip(points) {
            for [bin, n] in bins {
                *histogram.get_mut(usize::try_from(*bin).ok()?)? += n;
            }
        }
        Some(band)
    }

    fn add(&mut self, curve: &[CurvePoint], min_events: u32) {
        if self.points.len() < curve.len() {
            self.points.resize(curve.len(), [0; BINS]);
        }
        for (point, histogram) in curve.iter().zip(self.points.iter_mut()) {
            if point.events >= min_events.max(1) {
                let bin = (point.prompt_rate() * 100.0).round() as usize;
                if let Some(slot) = histogram.get_mut(bin.min(BINS - 1)) {
                    *slot += 1;
                }
            }
        }
    }

    /// Per point: projects, the 25th percentile, the median and the 75th percentile.
    pub fn quantiles(&self) -> Vec<(u32, f64, f64, f64)> {
        self.points
            .iter()
            .map(|h| {
                let n: u32 = h.iter().sum();
                let q = |fraction: f64| {
                    let target = (fraction * f64::from(n)).ceil().max(1.0) as u32;
                    let mut seen = 0;
                    for (bin, count) in h.iter().enumerate() {
                        seen += count;
                        if seen >= target {
                            return bin as f64 / 100.0;
                        }
                    }
                    1.0
                };
                (n, q(0.25), q(0.5), q(0.75))
            })
            .take_while(|(n, ..)| *n > 0)
            .collect()
    }
}

/// One setting across every project.
#[derive(Debug, Clone)]
pub struct SettingTotals {
    /// The setting.
    pub setting: Setting,
    /// Counts before the split (or all) and from the split on.
    pub periods: [Counts; 2],
    /// Reason codes behind friction.
    pub friction_reasons: BTreeMap<String, u64>,
    /// Signatures promoted, and the sum of their times to promotion in µs (an integer, so a
    /// sum over shards is the sum of one run whatever the order).
    pub promotions: (u64, i128),
    /// The band of the per-window curve.
    pub window_band: Band,
    /// The band of the per-day curve.
    pub day_band: Band,
}

impl SettingTotals {
    /// Counts over the whole history.
    pub fn total(&self) -> Counts {
        let mut total = self.periods[0];
        total.merge(&self.periods[1]);
        total
    }
}

/// Everything the replay concluded.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Per setting, in order.
    pub settings: Vec<SettingTotals>,
    /// Projects replayed.
    pub projects: u64,
    /// Actions understood, and actions in all.
    pub understood: (u64, u64),
    /// Actions by capability, across projects.
    pub capabilities: BTreeMap<String, u64>,
    /// The assumption for unattended asks.
    pub unattended: Unattended,
    /// Events per curve window.
    pub window: u32,
    /// The miss budget: the share of refusals a recommended setting may let through.
    pub miss_budget: f64,
    /// Which misses and refusals the budget counts: all, or the risky ones only.
    pub miss_budget_on: MissBudgetOn,
    /// Where the labels came from, per agent (setting-independent).
    pub labels: BTreeMap<String, LabelCounts>,
    /// The split time (µs), if tuned on the earlier part.
    pub split_at_us: Option<i64>,
    /// The rules and grants the replay decided with.
    pub rules: String,
    /// What a person should know about the run (projects replayed without their rules, …).
    pub notes: Vec<String>,
}

impl Summary {
    /// An empty summary for these settings.
    pub fn new(settings: &[Setting], options: &Options, miss_budget: f64) -> Summary {
        Summary {
            settings: settings
                .iter()
                .map(|s| SettingTotals {
                    setting: s.clone(),
                    periods: [Counts::default(); 2],
                    friction_reasons: BTreeMap::new(),
                    promotions: (0, 0),
                    window_band: Band::default(),
                    day_band: Band::default(),
                })
                .collect(),
            projects: 0,
            understood: (0, 0),
            capabilities: BTreeMap::new(),
            unattended: options.unattended,
            window: options.window,
            miss_budget,
            miss_budget_on: options.miss_budget_on,
            labels: BTreeMap::new(),
            split_at_us: options.split_at_us,
            rules: options
                .answers
                .as_ref()
                .map_or_else(|| "none".to_string(), |a| a.describe()),
            notes: Vec::new(),
        }
    }

    /// Folds one project in (projects arrive in a fixed order, so the sums are deterministic).
    pub fn add(&mut self, run: &ProjectRun) {
        self.projects += 1;
        self.understood.0 += run.understood.0;
        self.understood.1 += run.understood.1;
        self.notes.extend(run.notes.iter().cloned());
        for (agent, counts) in &run.labels {
            self.labels.entry(agent.clone()).or_default().merge(counts);
        }
        for (capability, count) in &run.capabilities {
            *self
                .capabilities
                .entry((*capability).to_string())
                .or_insert(0) += count;
        }
        for (totals, result) in self.settings.iter_mut().zip(&run.settings) {
            for (period, counts) in totals.periods.iter_mut().zip(&result.periods) {
                period.merge(counts);
            }
            for (code, count) in &result.friction_reasons {
                *totals
                    .friction_reasons
                    .entry((*code).to_string())
                    .or_insert(0) += count;
            }
            for p in &result.promotions {
                totals.promotions.0 += 1;
                totals.promotions.1 += i128::from(p.promoted_us) - i128::from(p.first_seen_us);
            }
            // A partial last window says little about the rate; half a window is the minimum.
            totals.window_band.add(&result.windows, self.window / 2);
            totals.day_band.add(&result.days, 1);
        }
    }

    /// Folds in another summary of the same settings over other projects: every total is a
    /// sum of integers, so any order of folding gives the same summary. Notes are left to the
    /// caller, who knows the projects' order.
    pub fn merge(&mut self, other: &Summary) {
        self.projects += other.projects;
        self.understood.0 += other.understood.0;
        self.understood.1 += other.understood.1;
        for (capability, count) in &other.capabilities {
            *self.capabilities.entry(capability.clone()).or_insert(0) += count;
        }
        for (agent, counts) in &other.labels {
            self.labels.entry(agent.clone()).or_default().merge(counts);
        }
        for (mine, theirs) in self.settings.iter_mut().zip(&other.settings) {
            for (period, counts) in mine.periods.iter_mut().zip(&theirs.periods) {
                period.merge(counts);
            }
            for (code, count) in &theirs.friction_reasons {
                *mine.friction_reasons.entry(code.clone()).or_insert(0) += count;
            }
            mine.promotions.0 += theirs.promotions.0;
            mine.promotions.1 += theirs.promotions.1;
            mine.window_band.merge(&theirs.window_band);
            mine.day_band.merge(&theirs.day_band);
        }
    }

    /// Settings not dominated on (prompt rate, misses): nothing else asks less without
    /// missing more, or misses less without asking more.
    pub fn frontier(&self) -> Vec<bool> {
        let points: Vec<(f64, u64)> = self
            .settings
            .iter()
            .map(|s| {
                let t = s.total();
                (rate(t.ask, t.events), t.miss)
            })
            .collect();
        points
            .iter()
            .map(|(p, m)| {
                !points
                    .iter()
                    .any(|(q, n)| q <= p && n <= m && (q < p || n < m))
            })
            .collect()
    }

    /// The recommended setting on a period (`None`: the whole history): the fewest prompts
    /// among enforcing settings that let through at most the budget's share of refusals.
    pub fn recommend(&self, period: Option<usize>) -> Option<usize> {
        let counts = |s: &SettingTotals| match period {
            Some(p) => s.periods.get(p).copied().unwrap_or_default(),
            None => s.total(),
        };
        self.settings
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.setting.is_baseline() && s.setting.posture() != "observe")
            .filter(|(_, s)| {
                let (miss, refused) = self.miss_budget_on.of(&counts(s));
                miss as f64 <= self.miss_budget * refused as f64
            })
            .min_by(|(ia, a), (ib, b)| {
                let (ca, cb) = (counts(a), counts(b));
                rate(ca.ask, ca.events)
                    .total_cmp(&rate(cb.ask, cb.events))
                    .then(ca.miss.cmp(&cb.miss))
                    .then(ia.cmp(ib))
            })
            .map(|(i, _)| i)
    }

    /// Why the recommendation, in a sentence.
    pub fn why(&self, index: usize, period: Option<usize>) -> String {
        let Some(s) = self.settings.get(index) else {
            return String::new();
        };
        let c = match period {
            Some(p) => s.periods.get(p).copied().unwrap_or_default(),
            None => s.total(),
        };
        let (miss, refused) = self.miss_budget_on.of(&c);
        let of_what = match self.miss_budget_on {
            MissBudgetOn::All => "of what you refused",
            MissBudgetOn::Risky => "of the risky calls you refused (tier ≥ 2 or near a floor)",
        };
        format!(
            "the fewest prompts ({:.1}% of calls) among settings that let through at most {:.0}% \
             {of_what} (it let through {miss} of {refused})",
            100.0 * rate(c.ask, c.events),
            100.0 * self.miss_budget,
        )
    }

    /// Where the labels came from, per agent and in total, with the assumption used: the
    /// `labels` object of the JSON summary.
    pub fn labels_json(&self) -> Value {
        let mut total = LabelCounts::default();
        let mut agents = serde_json::Map::new();
        for (agent, counts) in &self.labels {
            total.merge(counts);
            let mut entry = json!(counts);
            entry["weak"] = json!(agent == leastgrant_ingest::schema::agent::CODEX);
            agents.insert(agent.clone(), entry);
        }
        json!({
            "agents": agents,
            "total": total,
            "assumption": self.labels_assumption(),
            "weak_meaning": "the agent records neither approvals nor most denials (Codex): its labels are inferred from the mode, and a refusal is rarely seen, so its misses are undercounted",
        })
    }

    /// The assumption behind the inferred labels, in a sentence.
    pub fn labels_assumption(&self) -> String {
        format!(
            "observed: a decision the history recorded (decided_by), a person's taken as they made \
             it; inferred: a call that ran while the mode says a person was answering prompts was \
             approved, a refusal is read from the result text, and a call that ran with nobody \
             answering is labelled by --unattended {}; calls that ran on configuration, a hook or \
             Claude Code's auto-mode classifier teach `observed` at most",
            self.unattended.as_str()
        )
    }

    /// The JSON summary (`--json` and `summary.json`).
    pub fn to_json(&self) -> Value {
        let frontier = self.frontier();
        let recommended = self.recommend(None);
        let settings: Vec<Value> = self
            .settings
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let t = s.total();
                json!({
                    "id": s.setting.id,
                    "posture": s.setting.posture(),
                    "params": s.setting.params(),
                    "baseline": s.setting.is_baseline(),
                    "events": t.events,
                    "allow": t.allow,
                    "ask": t.ask,
                    "deny": t.deny,
                    "misses": t.miss,
                    "misses_risky": t.miss_risky,
                    "misses_routine": t.miss_routine(),
                    "refused": t.refused,
                    "refused_risky": t.refused_risky,
                    "classifier_denied": t.classifier_denied,
                    "asks_observed": t.ask_observed,
                    "asks_inferred": t.ask_inferred,
                    "miss_rate": if t.refused == 0 { 0.0 } else { t.miss as f64 / t.refused as f64 },
                    "miss_rate_upper": wilson_upper_bound(t.miss, t.refused, UPPER_Z),
                    "friction": t.friction,
                    "catches": t.catch,
                    "saved": t.saved,
                    "false_blocks": t.false_block,
                    "unlabeled": t.unlabeled,
                    "prompt_rate": rate(t.ask, t.events),
                    "promotions": s.promotions.0,
                    "mean_days_to_promotion": if s.promotions.0 == 0 { Value::Null } else { json!(s.promotions.1 as f64 / s.promotions.0 as f64 / 86_400e6) },
                    "friction_reasons": s.friction_reasons,
                    "frontier": frontier.get(i).copied().unwrap_or(false),
                    "recommended": recommended == Some(i),
                })
            })
            .collect();
        let mut out = json!({
            "settings": settings,
            "assumptions": {
                "unattended_asks": self.unattended.as_str(),
                "unattended_meaning": match self.unattended {
                    Unattended::Approve => "an ask on a call that ran with nobody answering prompts counts as approved (confirmed evidence, friction)",
                    Unattended::Observe => "an ask on a call that ran with nobody answering prompts counts as observed only (friction)",
                    Unattended::Skip => "an ask on a call that ran with nobody answering prompts teaches nothing and is unlabeled",
                },
                "miss_budget": self.miss_budget,
                "miss_budget_on": self.miss_budget_on.as_str(),
                "risky": "a call with an action at tier 2 or above, or near a floor (one it hits, or a fact floors look at); other misses are routine",
                "miss_rate": "misses / refused events; upper bound: Wilson, one-sided 95%",
                "rules": self.rules,
                "window_events": self.window,
            },
            "projects": self.projects,
            "labels": self.labels_json(),
            "capabilities": self.capabilities,
            "notes": self.notes,
            "actions_understood": if self.understood.1 == 0 { 1.0 } else { self.understood.0 as f64 / self.understood.1 as f64 },
            "recommended": recommended.map(|i| json!({
                "id": self.settings.get(i).map(|s| s.setting.id.clone()),
                "why": self.why(i, None),
            })),
        });
        if let Some(split) = self.split_at_us {
            let tuned = self.recommend(Some(0));
            let hindsight = self.recommend(Some(1));
            let score = |i: Option<usize>| {
                i.and_then(|i| self.settings.get(i)).map(|s| {
                    let c = s.periods[1];
                    json!({
                        "id": s.setting.id,
                        "events": c.events,
                        "ask": c.ask,
                        "prompt_rate": rate(c.ask, c.events),
                        "misses": c.miss,
                        "misses_risky": c.miss_risky,
                        "refused": c.refused,
                        "refused_risky": c.refused_risky,
                        "miss_rate_upper": wilson_upper_bound(c.miss, c.refused, UPPER_Z),
                    })
                })
            };
            out["time_split"] = json!({
                "split_at_us": split,
                "tuned_on_earlier": score(tuned),
                "best_in_hindsight_on_later": score(hindsight),
                "why": tuned.map(|i| self.why(i, Some(0))),
            });
        }
        out
    }
}

/// `part / whole`, 0 when empty.
pub fn rate(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}
