//! Export: the envelopes a setting ends the replay with, frozen with the setting in force.
//!
//! A project's section is written as soon as its replay ends and its envelope dropped, so an
//! export holds one batch of projects at a time, whatever the size of the fleet.

use std::io::Write;
use std::path::Path;

use leastgrant_engine::{
    Envelope, Exported, FrozenMeta, FrozenWriter, ProjectEnvelope, Roots, encode,
};
use serde_json::json;

use crate::classify::Options;
use crate::error::ReplayError;
use crate::replay::ProjectRun;
use crate::run::run;
use crate::settings::{Method, Setting};

/// Replays `table` under `setting` and freezes every project's final envelope to `out`.
pub fn freeze_table(
    table: &Path,
    setting: &Setting,
    options: &Options,
    out: &mut dyn Write,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Exported, ReplayError> {
    let settings = engine_settings(setting)?;
    let options = Options {
        keep_envelopes: true,
        max_windows: 0,
        max_days: 0,
        ..options.clone()
    };
    let write = |out: &mut dyn Write, bytes: &[u8]| {
        out.write_all(bytes)
            .map_err(|e| ReplayError(format!("cannot write the envelope: {e}")))
    };
    let (mut writer, preamble) = FrozenWriter::start();
    write(out, &preamble)?;
    let mut events = 0u64;
    let mut last: Option<i64> = None;
    // Each rules file audited, with its digest, so `doctor` can say when one changed since.
    let mut rules_files = serde_json::Map::new();
    run(
        table,
        std::slice::from_ref(setting),
        &options,
        0.0,
        &mut |runs| {
            for run in runs {
                let (key, root, envelope, count, latest) = take(run);
                events += count;
                last = last.max(latest);
                if let Some(answers) = &options.answers {
                    let roots = Roots::new(&root, options.home.as_deref().unwrap_or(""));
                    for (file, digest) in answers.fingerprint(&roots) {
                        rules_files.insert(file, json!(digest));
                    }
                }
                let section = writer.section(&ProjectEnvelope {
                    key: &key,
                    root: &root,
                    envelope: &envelope,
                });
                write(out, &section)?;
            }
            Ok(())
        },
        progress,
    )?;
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
    let meta = FrozenMeta {
        setting_id: setting.id.clone(),
        settings,
        rules,
        provenance,
    };
    let (tail, exported) = writer.finish(&meta);
    write(out, &tail)?;
    Ok(exported)
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
        // Calls: standing approvals are rows, not events a project made (their time counts,
        // as the envelope holds what they granted).
        run.events
            .iter()
            .filter(|e| e.outcome != leastgrant_ingest::schema::Outcome::Granted)
            .count() as u64,
        run.events.iter().filter_map(|e| e.ts_us).max(),
    )
}

fn engine_settings(setting: &Setting) -> Result<leastgrant_engine::Settings, ReplayError> {
    match &setting.method {
        Method::Engine(settings) => Ok(*settings),
        _ => Err(ReplayError(format!(
            "`{}` is a baseline; only engine settings can be exported",
            setting.id
        ))),
    }
}

/// Freezes envelopes under an engine setting, in memory.
pub fn freeze(
    setting: &Setting,
    projects: &[ProjectEnvelope<'_>],
    rules: Vec<String>,
    provenance: serde_json::Value,
) -> Result<Vec<u8>, ReplayError> {
    let meta = FrozenMeta {
        setting_id: setting.id.clone(),
        settings: engine_settings(setting)?,
        rules,
        provenance,
    };
    Ok(encode(&meta, projects))
}
