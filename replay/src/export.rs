//! Export: the envelopes a setting ends the replay with, frozen with the setting in force.

use std::path::Path;

use leastgrant_engine::{Envelope, FrozenMeta, ProjectEnvelope, Roots, encode};
use serde_json::json;

use crate::error::ReplayError;
use crate::replay::{Options, ProjectRun};
use crate::run::run;
use crate::settings::{Method, Setting};

/// Replays `table` under `setting` and freezes every project's final envelope.
pub fn freeze_table(
    table: &Path,
    setting: &Setting,
    options: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<u8>, ReplayError> {
    let options = Options {
        keep_envelopes: true,
        max_windows: 0,
        max_days: 0,
        ..options.clone()
    };
    let mut kept: Vec<(String, String, Envelope, u64, Option<i64>)> = Vec::new();
    run(
        table,
        std::slice::from_ref(setting),
        &options,
        0.0,
        &mut |runs| {
            for run in runs {
                kept.push(take(run));
            }
            Ok(())
        },
        progress,
    )?;
    let events: u64 = kept.iter().map(|k| k.3).sum();
    let last = kept.iter().filter_map(|k| k.4).max();
    // Each rules file audited, with its digest, so `doctor` can say when one changed since.
    let mut rules_files = serde_json::Map::new();
    if let Some(answers) = &options.answers {
        for (_, root, _, _, _) in &kept {
            let roots = Roots::new(root, options.home.as_deref().unwrap_or(""));
            for (file, digest) in answers.fingerprint(&roots) {
                rules_files.insert(file, json!(digest));
            }
        }
    }
    let provenance = json!({
        "rules_files": rules_files,
        "events_table": table.display().to_string(),
        "events": events,
        "last_event_us": last,
        "unattended_asks": options.unattended.as_str(),
        "leastgrant": env!("CARGO_PKG_VERSION"),
    });
    // What the replay decided with, so `export --inspect` says which rules were audited.
    let rules = options
        .answers
        .as_ref()
        .map(|a| vec![a.describe()])
        .unwrap_or_default();
    freeze(setting, &kept_refs(&kept), rules, provenance)
}

fn take(run: &ProjectRun) -> (String, String, Envelope, u64, Option<i64>) {
    let envelope = run
        .settings
        .first()
        .and_then(|s| s.envelope.clone())
        .unwrap_or_default();
    (
        run.project_key.clone(),
        run.project_root.clone(),
        envelope,
        run.events.len() as u64,
        run.events.iter().filter_map(|e| e.ts_us).max(),
    )
}

fn kept_refs(kept: &[(String, String, Envelope, u64, Option<i64>)]) -> Vec<ProjectEnvelope<'_>> {
    kept.iter()
        .map(|(key, root, envelope, _, _)| ProjectEnvelope {
            key,
            root,
            envelope,
        })
        .collect()
}

/// Freezes envelopes under an engine setting.
pub fn freeze(
    setting: &Setting,
    projects: &[ProjectEnvelope<'_>],
    rules: Vec<String>,
    provenance: serde_json::Value,
) -> Result<Vec<u8>, ReplayError> {
    let Method::Engine(settings) = &setting.method else {
        return Err(ReplayError(format!(
            "`{}` is a baseline; only engine settings can be exported",
            setting.id
        )));
    };
    let meta = FrozenMeta {
        setting_id: setting.id.clone(),
        settings: *settings,
        rules,
        provenance,
    };
    Ok(encode(&meta, projects))
}
