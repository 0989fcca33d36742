//! The dependency edges of design §3, read from `cargo metadata`: the engine is a leaf that
//! depends on nothing heavy; the hook depends on the engine only; report never on replay; the
//! demo generator on none of the engine, replay, report or hook, and nothing but the CLI on it.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// The host triple, so metadata resolves only this platform's dependencies (offline).
fn host() -> String {
    let output = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string()
}

fn metadata() -> Value {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
            &host(),
            "--manifest-path",
        ])
        .arg(format!("{root}/Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

/// Package name → names of its normal (non-dev, non-build) dependencies, transitively.
fn normal_closure(meta: &Value) -> BTreeMap<String, BTreeSet<String>> {
    let names: BTreeMap<&str, &str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let mut direct: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for node in meta["resolve"]["nodes"].as_array().unwrap() {
        let id = node["id"].as_str().unwrap();
        let deps = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null())
            })
            .map(|d| d["pkg"].as_str().unwrap())
            .collect();
        direct.insert(id, deps);
    }
    let mut closure = BTreeMap::new();
    for (&id, &name) in &names {
        let mut seen = BTreeSet::new();
        let mut stack = vec![id];
        while let Some(next) = stack.pop() {
            for &dep in direct.get(next).map(Vec::as_slice).unwrap_or(&[]) {
                if seen.insert(names[dep].to_string()) {
                    stack.push(dep);
                }
            }
        }
        closure.insert(name.to_string(), seen);
    }
    closure
}

const WORKSPACE: &[&str] = &[
    "leastgrant",
    "leastgrant-engine",
    "leastgrant-ingest",
    "leastgrant-replay",
    "leastgrant-report",
    "leastgrant-hook",
    "leastgrant-demo",
    "leastgrant-python",
];
const HEAVY: &[&str] = &[
    "arrow",
    "arrow-array",
    "arrow-schema",
    "parquet",
    "polars",
    "rusqlite",
    "plotters",
    "clap",
    "rayon",
    "tokio",
    "indicatif",
    "anyhow",
];

#[test]
fn the_engine_is_a_leaf_with_nothing_heavy() {
    let closure = normal_closure(&metadata());
    let engine = &closure["leastgrant-engine"];
    for name in WORKSPACE.iter().chain(HEAVY) {
        assert!(
            !engine.contains(*name),
            "the engine must not depend on {name}; it depends on {engine:?}"
        );
    }
    // serde_json and sha2 with their helpers (13 today); growing past this needs a decision
    // recorded in docs/decisions.md.
    assert!(
        engine.len() <= 16,
        "the engine's dependency tree grew: {engine:?}"
    );
}

#[test]
fn the_hook_depends_on_the_engine_only() {
    let closure = normal_closure(&metadata());
    let hook = &closure["leastgrant-hook"];
    for name in WORKSPACE
        .iter()
        .filter(|n| **n != "leastgrant-engine")
        .chain(HEAVY)
    {
        assert!(!hook.contains(*name), "the hook must not depend on {name}");
    }
}

#[test]
fn ingest_report_replay_python_and_demo_keep_to_their_edges() {
    let closure = normal_closure(&metadata());
    for (crate_name, forbidden) in [
        (
            "leastgrant-ingest",
            &[
                "leastgrant-engine",
                "leastgrant-replay",
                "leastgrant-report",
                "leastgrant-hook",
                "leastgrant-demo",
            ][..],
        ),
        (
            "leastgrant-report",
            &[
                "leastgrant-engine",
                "leastgrant-replay",
                "leastgrant-ingest",
                "leastgrant-hook",
                "leastgrant-demo",
            ][..],
        ),
        (
            "leastgrant-replay",
            &["leastgrant-report", "leastgrant-hook", "leastgrant-demo"][..],
        ),
        (
            // The Python package wires the crates to Arrow; it draws nothing and is not the
            // command line (the hook crate's rules, grants and `check` it reads, as the CLI).
            "leastgrant-python",
            &["leastgrant", "leastgrant-report", "leastgrant-demo"][..],
        ),
        (
            "leastgrant-demo",
            &[
                "leastgrant-engine",
                "leastgrant-replay",
                "leastgrant-report",
                "leastgrant-hook",
                "clap",
                "anyhow",
                "indicatif",
                "plotters",
            ][..],
        ),
    ] {
        for name in forbidden {
            assert!(
                !closure[crate_name].contains(*name),
                "{crate_name} must not depend on {name}"
            );
        }
    }
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().filter_map(Result::ok) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                if !text.starts_with("//!") {
                    missing.push(path.display().to_string());
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files without a leading `//!` doc: {missing:?}"
    );
}
