//! What the replay compares: engine settings (a posture and its thresholds), grids of them from
//! flags or a TOML file, the baselines every run includes, and the "native rules only" twin of
//! an engine setting (what exporting its envelope as the agents' own allow rules achieves
//! without the hook).

use leastgrant_engine::{Posture, Settings, Thresholds};
use serde::Deserialize;
use serde_json::{Value, json};

/// How a setting decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    /// The engine's `decide` with this posture and these thresholds.
    Engine(Settings),
    /// Baseline: every call asks.
    AlwaysAsk,
    /// Baseline: the agent's own defaults — read-only tools run, everything else asks.
    AgentDefaults,
    /// Baseline: a call asks until the person approves it once, then runs forever.
    FirstApproval,
    /// No hook: the envelope this engine setting learns, exported as each agent's exact native
    /// allow rules at every moment (`leastgrant export --to`), and the agent's own matcher
    /// deciding — what the rules match runs, everything else asks (`native.rs`, above this module).
    Native(Settings),
}

/// One setting of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// Stable and readable: the posture, then what differs from the defaults.
    pub id: String,
    /// How it decides.
    pub method: Method,
}

impl Setting {
    /// An engine setting with its id derived from what differs from the defaults.
    pub fn engine(settings: Settings) -> Setting {
        Setting {
            id: engine_id(&settings),
            method: Method::Engine(settings),
        }
    }

    /// The "native rules only" twin of an engine setting: `native.` and the engine setting's
    /// id.
    pub fn native(settings: Settings) -> Setting {
        Setting {
            id: format!("{NATIVE_PREFIX}{}", engine_id(&settings)),
            method: Method::Native(settings),
        }
    }

    /// The posture's name, `native` for native rules, or `baseline`.
    pub fn posture(&self) -> &'static str {
        match &self.method {
            Method::Engine(s) => s.posture.as_str(),
            Method::Native(_) => "native",
            _ => "baseline",
        }
    }

    /// A baseline, not something to recommend (native rules are one: no hook).
    pub fn is_baseline(&self) -> bool {
        !matches!(self.method, Method::Engine(_))
    }

    /// The parameters, as JSON.
    pub fn params(&self) -> Value {
        match &self.method {
            Method::Engine(s) => leastgrant_engine::thresholds_json(&s.thresholds),
            Method::Native(s) => {
                let mut params = leastgrant_engine::thresholds_json(&s.thresholds);
                params["posture"] = json!(s.posture.as_str());
                params["baseline"] = json!(NATIVE_MEANING);
                params
            }
            Method::AlwaysAsk => json!({"baseline": "always ask"}),
            Method::AgentDefaults => {
                json!({"baseline": "the agent's defaults: read-only tools run, the rest asks"})
            }
            Method::FirstApproval => json!({"baseline": "allow after the first approval"}),
        }
    }
}

impl Setting {
    /// What the outputs say of the setting: its id, posture and parameters. A shard records
    /// it; [`Setting::from_description`] reads it back.
    pub fn description(&self) -> Value {
        json!({"id": self.id, "posture": self.posture(), "params": self.params()})
    }

    /// The setting a [`Setting::description`] describes; an error names what does not fit.
    pub fn from_description(value: &Value) -> Result<Setting, String> {
        let id = value["id"]
            .as_str()
            .ok_or_else(|| format!("a setting without an id: {value}"))?;
        let setting = match value["posture"].as_str() {
            Some("baseline") => baselines()
                .into_iter()
                .find(|b| b.id == id)
                .ok_or_else(|| format!("no baseline `{id}` in this build"))?,
            Some("native") => {
                let p = &value["params"];
                let name = p["posture"].as_str().unwrap_or_default();
                Setting {
                    id: id.to_string(),
                    method: Method::Native(engine_settings(id, name, p)?),
                }
            }
            Some(name) => Setting {
                id: id.to_string(),
                method: Method::Engine(engine_settings(id, name, &value["params"])?),
            },
            None => return Err(format!("the setting `{id}` has no posture")),
        };
        // Read back exactly: what a merge writes must be what the shards described.
        if setting.description() == *value {
            Ok(setting)
        } else {
            Err(format!(
                "the setting `{id}` does not read back as it was written: {value}"
            ))
        }
    }
}

/// Engine settings from a description's posture name and parameters.
fn engine_settings(id: &str, name: &str, p: &Value) -> Result<Settings, String> {
    let posture = leastgrant_engine::Posture::parse(name)
        .ok_or_else(|| format!("the setting `{id}` has an unknown posture `{name}`"))?;
    let real = |field: &str| {
        p[field]
            .as_f64()
            .ok_or_else(|| format!("the setting `{id}` has no valid `{field}`"))
    };
    let whole = |field: &str| {
        p[field]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("the setting `{id}` has no valid `{field}`"))
    };
    let tiers: Vec<f64> = p["confidence_by_tier"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let confidence_by_tier: [f64; 3] = tiers
        .try_into()
        .map_err(|_| format!("the setting `{id}` has no valid `confidence_by_tier`"))?;
    let thresholds = Thresholds {
        confidence_by_tier,
        z: real("z")?,
        min_sessions: whole("min_sessions")?,
        min_days: whole("min_days")?,
        min_approval: real("min_approval")?,
        min_observed: real("min_observed")?,
        max_tier: u8::try_from(whole("max_tier")?)
            .map_err(|_| format!("the setting `{id}` has no valid `max_tier`"))?,
        half_life_days: real("half_life_days")?,
    };
    Ok(Settings {
        posture,
        thresholds,
    })
}

/// The ids of native-rules settings begin with this.
pub const NATIVE_PREFIX: &str = "native.";

/// What a native-rules setting is, in the outputs' words.
pub const NATIVE_MEANING: &str = "native rules only: the envelope this setting learns, exported \
     as each agent's exact allow rules as it goes; what the agent's own matcher lets through runs \
     (no hook: no floors inside compound commands, no session taint), the rest asks";

/// The "native rules only" twins of the engine settings among `settings`, in order.
pub fn native_twins(settings: &[Setting]) -> Vec<Setting> {
    settings
        .iter()
        .filter_map(|s| match &s.method {
            Method::Engine(engine) => Some(Setting::native(*engine)),
            _ => None,
        })
        .collect()
}

/// The baselines every run includes, after the settings.
pub fn baselines() -> Vec<Setting> {
    [
        ("baseline.always-ask", Method::AlwaysAsk),
        ("baseline.agent-defaults", Method::AgentDefaults),
        ("baseline.first-approval", Method::FirstApproval),
    ]
    .into_iter()
    .map(|(id, method)| Setting {
        id: id.to_string(),
        method,
    })
    .collect()
}

fn engine_id(settings: &Settings) -> String {
    let d = Thresholds::default();
    let t = &settings.thresholds;
    let mut id = settings.posture.as_str().to_string();
    let mut part = |differs: bool, text: String| {
        if differs {
            id.push('.');
            id.push_str(&text);
        }
    };
    part(
        t.confidence_by_tier != d.confidence_by_tier,
        format!(
            "c{}-{}-{}",
            t.confidence_by_tier[0], t.confidence_by_tier[1], t.confidence_by_tier[2]
        ),
    );
    part(t.z != d.z, format!("z{}", t.z));
    part(
        t.min_sessions != d.min_sessions,
        format!("s{}", t.min_sessions),
    );
    part(t.min_days != d.min_days, format!("d{}", t.min_days));
    part(
        t.min_observed != d.min_observed,
        format!("o{}", t.min_observed),
    );
    part(t.max_tier != d.max_tier, format!("t{}", t.max_tier));
    part(
        t.half_life_days != d.half_life_days,
        format!("h{}", t.half_life_days),
    );
    id
}

/// Lists of values; a grid is every combination. An empty list keeps the default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    /// Postures by name.
    #[serde(default)]
    pub posture: Vec<String>,
    /// Required confidence for tiers 0, 1 and 2.
    #[serde(default)]
    pub confidence: Vec<[f64; 3]>,
    /// Clean-record approvals required for tiers 0, 1 and 2 (an alternative to `confidence`:
    /// `n` approvals is the confidence `n / (n + z²)`).
    #[serde(default)]
    pub approvals: Vec<[u32; 3]>,
    /// z of the Wilson bound.
    #[serde(default)]
    pub z: Vec<f64>,
    /// Minimum distinct sessions of approval.
    #[serde(default)]
    pub min_sessions: Vec<u32>,
    /// Minimum distinct days of approval.
    #[serde(default)]
    pub min_days: Vec<u32>,
    /// Half-life in days.
    #[serde(default)]
    pub half_life_days: Vec<f64>,
    /// Decayed sightings the observation route needs.
    #[serde(default)]
    pub min_observed: Vec<f64>,
    /// The highest promotable tier.
    #[serde(default)]
    pub max_tier: Vec<u8>,
    /// Also each setting's "native rules only" twin ([`Setting::native`]).
    #[serde(default)]
    pub native: bool,
}

/// A grid file: `[grid]` lists, and/or `[[setting]]` single settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridFile {
    /// Every combination of these.
    #[serde(default)]
    pub grid: Option<Grid>,
    /// Settings listed one by one (single values).
    #[serde(default)]
    pub setting: Vec<Grid>,
}

/// Why a grid could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridError(pub String);

impl std::fmt::Display for GridError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GridError {}

/// Past this many settings a grid is almost certainly a typo.
pub const MAX_SETTINGS: usize = 4096;

impl Grid {
    /// The default comparison: assist and autopilot over days and tier-1 confidence, plus
    /// observe and strict at their defaults, and the native-rules twin of the default setting.
    pub fn standard() -> Vec<Setting> {
        let mut settings = Grid {
            posture: vec!["observe".into(), "strict".into()],
            ..Grid::default()
        }
        .expand()
        .unwrap_or_default();
        let d = Thresholds::default();
        let learning = Grid {
            posture: vec!["assist".into(), "autopilot".into()],
            confidence: [0.5, 0.6, 0.7]
                .iter()
                .map(|c| [*c, *c, d.confidence_by_tier[2]])
                .collect(),
            min_days: vec![1, 2, 3],
            ..Grid::default()
        };
        settings.extend(learning.expand().unwrap_or_default());
        settings.push(Setting::native(Settings::default()));
        settings
    }

    /// Every combination, in a fixed order, de-duplicated by id.
    pub fn expand(&self) -> Result<Vec<Setting>, GridError> {
        let d = Thresholds::default();
        let postures: Vec<Posture> = if self.posture.is_empty() {
            vec![Posture::Assist]
        } else {
            self.posture
                .iter()
                .map(|name| {
                    Posture::parse(name).ok_or_else(|| {
                        GridError(format!(
                            "unknown posture `{name}` (observe, assist, autopilot or strict)"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?
        };
        let or = |list: &[f64], default: f64| -> Vec<f64> {
            if list.is_empty() {
                vec![default]
            } else {
                list.to_vec()
            }
        };
        let zs = or(&self.z, d.z);
        let mut confidences: Vec<Option<[f64; 3]>> =
            self.confidence.iter().copied().map(Some).collect();
        let approvals: Vec<[u32; 3]> = self.approvals.clone();
        if confidences.is_empty() && approvals.is_empty() {
            confidences.push(None);
        }
        let sessions = if self.min_sessions.is_empty() {
            vec![d.min_sessions]
        } else {
            self.min_sessions.clone()
        };
        let days = if self.min_days.is_empty() {
            vec![d.min_days]
        } else {
            self.min_days.clone()
        };
        let halves = or(&self.half_life_days, d.half_life_days);
        let observed = or(&self.min_observed, d.min_observed);
        let tiers = if self.max_tier.is_empty() {
            vec![d.max_tier]
        } else {
            self.max_tier.clone()
        };
        for c in self
            .confidence
            .iter()
            .flatten()
            .chain(&self.min_observed)
            .chain(&self.z)
        {
            if !c.is_finite() || *c < 0.0 {
                return Err(GridError(format!("`{c}` is not a usable threshold")));
            }
        }
        let mut out: Vec<Setting> = Vec::new();
        for posture in &postures {
            for z in &zs {
                let per_tier: Vec<Option<[f64; 3]>> = confidences
                    .iter()
                    .copied()
                    .chain(approvals.iter().map(|n| {
                        let z2 = z * z;
                        Some(n.map(|n| f64::from(n) / (f64::from(n) + z2)))
                    }))
                    .collect();
                for confidence in &per_tier {
                    for s in &sessions {
                        for dd in &days {
                            for h in &halves {
                                for o in &observed {
                                    for t in &tiers {
                                        let thresholds = Thresholds {
                                            confidence_by_tier: confidence
                                                .unwrap_or(d.confidence_by_tier),
                                            z: *z,
                                            min_sessions: *s,
                                            min_days: *dd,
                                            min_observed: *o,
                                            max_tier: *t,
                                            half_life_days: *h,
                                            // The floor under the table must not undo a lower table.
                                            min_approval: confidence.map_or(d.min_approval, |c| {
                                                c.iter().copied().fold(d.min_approval, f64::min)
                                            }),
                                        };
                                        let setting = Setting::engine(Settings {
                                            posture: *posture,
                                            thresholds,
                                        });
                                        if !out.iter().any(|o| o.id == setting.id) {
                                            out.push(setting);
                                        }
                                        if out.len() * (1 + usize::from(self.native)) > MAX_SETTINGS
                                        {
                                            return Err(GridError(format!(
                                                "the grid has more than {MAX_SETTINGS} settings; narrow it"
                                            )));
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if self.native {
            out.extend(native_twins(&out));
        }
        Ok(out)
    }
}

impl GridFile {
    /// Parses a grid file.
    pub fn parse(text: &str) -> Result<GridFile, GridError> {
        toml::from_str(text).map_err(|e| GridError(format!("the grid file is not valid: {e}")))
    }

    /// Its settings: the grid's combinations, then the listed settings.
    pub fn settings(&self) -> Result<Vec<Setting>, GridError> {
        let mut out = match &self.grid {
            Some(grid) => grid.expand()?,
            None => Vec::new(),
        };
        for single in &self.setting {
            for setting in single.expand()? {
                if !out.iter().any(|o| o.id == setting.id) {
                    out.push(setting);
                }
            }
        }
        if out.is_empty() {
            return Err(GridError(
                "the grid file lists no settings (`[grid]` or `[[setting]]`)".to_string(),
            ));
        }
        Ok(out)
    }
}
