//! The frozen envelope's two JSON sections: the shared one every call reads (the setting in
//! force, and the meta section's digest) and the meta one only inspection reads (the rules
//! the replay decided with, and provenance); and each project's head (its key, root, events,
//! signature count and transitions).

use serde_json::{Value, json};

use super::layout::{DIGEST_LEN, FrozenError, damaged, mismatch, sha256};
use crate::decide::{Posture, Settings};
use crate::envelope::Envelope;
use crate::envelope::stats::Thresholds;
use crate::hex::hex;
use crate::model::Capability;

/// What is frozen besides the envelopes.
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenMeta {
    /// The replay's id for the setting.
    pub setting_id: String,
    /// Posture and thresholds in force.
    pub settings: Settings,
    /// The rules in force, as written (empty when the replay used none).
    pub rules: Vec<String>,
    /// Free-form provenance: the events table, the last event, the tool version.
    pub provenance: Value,
}

/// The meta section's bytes.
pub fn meta_bytes(meta: &FrozenMeta) -> Vec<u8> {
    json!({"rules": meta.rules, "provenance": meta.provenance})
        .to_string()
        .into_bytes()
}

/// The shared section's bytes, naming the meta section's digest.
pub fn shared_bytes(meta: &FrozenMeta, meta_digest: &[u8; DIGEST_LEN]) -> Vec<u8> {
    json!({
        "setting_id": meta.setting_id,
        "settings": settings_json(&meta.settings),
        "meta_sha256": hex(meta_digest),
    })
    .to_string()
    .into_bytes()
}

/// The shared section, read.
#[derive(Debug, Clone)]
pub struct Shared {
    pub setting_id: String,
    pub settings: Settings,
    pub meta_digest: String,
}

/// Reads the shared section (its digest already checked).
pub fn read_shared(bytes: &[u8]) -> Result<Shared, FrozenError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|_| damaged("shared section"))?;
    let text = |f: &str| {
        value
            .get(f)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| damaged("shared section"))
    };
    Ok(Shared {
        setting_id: text("setting_id")?,
        settings: settings_from(value.get("settings").unwrap_or(&Value::Null))?,
        meta_digest: text("meta_sha256")?,
    })
}

/// Reads the meta section, checked against the digest the shared section names.
pub fn read_meta(bytes: &[u8], shared: &Shared) -> Result<FrozenMeta, FrozenError> {
    if hex(&sha256(bytes)) != shared.meta_digest {
        return Err(mismatch("its rules and provenance"));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|_| damaged("meta section"))?;
    let rules = value
        .get("rules")
        .and_then(Value::as_array)
        .ok_or_else(|| damaged("meta section"))?
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    Ok(FrozenMeta {
        setting_id: shared.setting_id.clone(),
        settings: shared.settings,
        rules,
        provenance: value.get("provenance").cloned().unwrap_or(Value::Null),
    })
}

/// A project's head, as frozen.
pub fn head_bytes(key: &str, root: &str, envelope: &Envelope) -> Vec<u8> {
    let transitions: Vec<String> = envelope
        .transitions
        .keys()
        .map(|(a, b)| format!("{}>{}", a.as_str(), b.as_str()))
        .collect();
    json!({
        "key": key,
        "root": root,
        "events": envelope.events,
        "signatures": envelope.signatures.len(),
        "transitions": transitions,
    })
    .to_string()
    .into_bytes()
}

/// A project's head, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    pub key: String,
    pub root: String,
    pub events: u64,
    pub signatures: usize,
    pub transitions: Vec<(Capability, Capability)>,
}

/// Reads a project's head (its digest already checked).
pub fn read_head(bytes: &[u8]) -> Result<Head, FrozenError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|_| damaged("project head"))?;
    let text = |f: &str| {
        value
            .get(f)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| damaged("project head"))
    };
    let number = |f: &str| {
        value
            .get(f)
            .and_then(Value::as_u64)
            .ok_or_else(|| damaged("project head"))
    };
    let transitions = value
        .get("transitions")
        .and_then(Value::as_array)
        .ok_or_else(|| damaged("project head"))?
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|t| t.split_once('>'))
        .filter_map(|(a, b)| Some((Capability::parse(a)?, Capability::parse(b)?)))
        .collect();
    Ok(Head {
        key: text("key")?,
        root: text("root")?,
        events: number("events")?,
        signatures: usize::try_from(number("signatures")?).map_err(|_| damaged("project head"))?,
        transitions,
    })
}

/// A setting as JSON: the posture and [`thresholds_json`].
pub fn settings_json(settings: &Settings) -> Value {
    let mut value = thresholds_json(&settings.thresholds);
    if let Value::Object(map) = &mut value {
        map.insert("posture".to_string(), json!(settings.posture.as_str()));
    }
    value
}

/// Thresholds as JSON, as the frozen envelope, the replay's `params` and `export --inspect`
/// write them.
pub fn thresholds_json(t: &Thresholds) -> Value {
    json!({
        "confidence_by_tier": t.confidence_by_tier,
        "z": t.z,
        "min_sessions": t.min_sessions,
        "min_days": t.min_days,
        "min_approval": t.min_approval,
        "min_observed": t.min_observed,
        "max_tier": t.max_tier,
        "half_life_days": t.half_life_days,
    })
}

fn settings_from(value: &Value) -> Result<Settings, FrozenError> {
    let bad = |field: &str| FrozenError(format!("the setting has no valid `{field}`"));
    let num = |field: &str| {
        value
            .get(field)
            .and_then(Value::as_f64)
            .ok_or_else(|| bad(field))
    };
    let int = |field: &str| {
        value
            .get(field)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| bad(field))
    };
    let posture = value
        .get("posture")
        .and_then(Value::as_str)
        .and_then(Posture::parse)
        .ok_or_else(|| bad("posture"))?;
    let confidence: Vec<f64> = value
        .get("confidence_by_tier")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let confidence_by_tier: [f64; 3] = confidence
        .try_into()
        .map_err(|_| bad("confidence_by_tier"))?;
    Ok(Settings {
        posture,
        thresholds: Thresholds {
            confidence_by_tier,
            z: num("z")?,
            min_sessions: int("min_sessions")?,
            min_days: int("min_days")?,
            min_approval: num("min_approval")?,
            min_observed: num("min_observed")?,
            max_tier: u8::try_from(int("max_tier")?).map_err(|_| bad("max_tier"))?,
            half_life_days: num("half_life_days")?,
        },
    })
}
