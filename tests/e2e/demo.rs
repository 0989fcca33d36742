//! `leastgrant demo` end to end: the same seed writes the same bytes; `leastgrant ingest` reads
//! every line of the demo history; the replay counts every refusal, and always asking catches
//! them all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{ingest_claude, json_of, leastgrant, scratch, simulate_events};

fn temp(name: &str) -> PathBuf {
    scratch(&format!("demo-{name}"))
}

/// Every file below `dir`, by path relative to it, with its bytes.
fn files_below(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), bytes);
            }
        }
    }
    files
}

fn demo(home: &Path, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["demo", "--out", out.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    json_of(&leastgrant(home, home, &args))
}

#[test]
fn the_same_seed_writes_the_same_bytes() {
    let home = temp("bytes");
    let (a, b) = (home.join("a"), home.join("b"));
    let first = demo(&home, &a, &[]);
    let second = demo(&home, &b, &[]);
    assert_eq!(first["events"], second["events"]);
    let (files_a, files_b) = (files_below(&a), files_below(&b));
    let transcripts = files_a
        .keys()
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .count();
    assert_eq!(Some(transcripts as u64), first["files"].as_u64());
    assert!(transcripts > 50, "{transcripts} transcripts");
    assert!(files_a == files_b, "two runs with one seed differ");

    // Writing again over a demo history replaces it with the same bytes.
    demo(&home, &a, &[]);
    assert!(files_below(&a) == files_b, "a rewrite differs");

    // Another seed, another history.
    let other = home.join("other");
    demo(&home, &other, &["--seed", "2"]);
    assert!(
        files_below(&other) != files_b,
        "seeds 1 and 2 wrote the same"
    );
    // About 100 MB; kept only when the test fails.
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn ingest_reads_every_line_and_the_replay_counts_every_refusal() {
    let home = temp("pipeline");
    let out = home.join("demo");
    let summary = demo(&home, &out, &[]);
    let events = summary["events"].as_u64().unwrap();
    let refusals = summary["refusals"].as_u64().unwrap();
    assert!(events > 5_000, "{summary}");
    assert!(refusals > 0, "{summary}");
    assert_eq!(summary["projects"], 20);

    let projects = out.join("projects");
    let table = home.join("table");
    let ingested = ingest_claude(&home, &projects, &table);
    assert_eq!(ingested["bad_lines"], serde_json::json!({}), "{ingested}");
    assert_eq!(ingested["files"], summary["files"]);
    assert_eq!(ingested["events"].as_u64(), Some(events));
    assert_eq!(ingested["duplicates"], 0);
    let outcomes = &ingested["by_outcome"];
    assert_eq!(outcomes["refused"].as_u64(), Some(refusals), "{outcomes}");
    for outcome in ["ran", "errored", "interrupted"] {
        assert!(
            outcomes[outcome].as_u64().unwrap_or(0) > 0,
            "no `{outcome}` in {outcomes}"
        );
    }

    let replay = home.join("replay");
    let simulated = simulate_events(&home, &table, &replay, &[]);
    let settings = simulated["settings"].as_array().unwrap();
    assert!(settings.len() > 3);
    for setting in settings {
        assert_eq!(
            setting["refused"].as_u64(),
            Some(refusals),
            "{}",
            setting["id"]
        );
        assert_eq!(
            setting["events"].as_u64(),
            Some(events),
            "{}",
            setting["id"]
        );
    }
    let always_ask = settings
        .iter()
        .find(|s| s["id"] == "baseline.always-ask")
        .unwrap();
    assert_eq!(always_ask["catches"].as_u64(), Some(refusals));
    assert_eq!(always_ask["misses"], 0);

    // The standard comparison has the default setting's "native rules only" twin beside it:
    // exact rules exported as it learns, no hook. It never blocks, is never recommended, lets
    // something run (the demo's projects repeat their commands) but less than the hook's
    // setting (exact recorded commands only, and no rule for other tools), and says why it asked.
    let by_id = |id: &str| settings.iter().find(|s| s["id"] == id).unwrap();
    let (native, hook) = (by_id("native.assist"), by_id("assist"));
    assert_eq!(native["posture"], "native", "{native}");
    assert_eq!(native["baseline"], true);
    assert_eq!(native["recommended"], false);
    assert_eq!(native["params"]["posture"], "assist");
    assert_eq!(
        native["params"]["confidence_by_tier"],
        hook["params"]["confidence_by_tier"]
    );
    assert_eq!(native["deny"], 0);
    let allowed = native["allow"].as_u64().unwrap();
    assert!(allowed > 0, "{native}");
    assert!(
        allowed < hook["allow"].as_u64().unwrap(),
        "{native}\n{hook}"
    );
    let reasons = native["friction_reasons"].as_object().unwrap();
    assert!(
        reasons.keys().all(|code| code.starts_with("native.")),
        "{reasons:?}"
    );
    let explained: u64 = reasons.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(Some(explained), native["friction"].as_u64());
    for code in [
        "native.not-shell",
        "native.unrecorded",
        "native.not-allowed",
    ] {
        assert!(
            reasons[code].as_u64().unwrap_or(0) > 0,
            "no {code}: {reasons:?}"
        );
    }

    // The table a person reads shows the twin next to the setting it exports, with its legend.
    let text = leastgrant(
        &home,
        &home,
        &[
            "simulate",
            "--events",
            table.to_str().unwrap(),
            "--out",
            home.join("replay-native").to_str().unwrap(),
            "--posture",
            "assist",
            "--native",
        ],
    );
    assert!(text.status.success(), "{text:?}");
    let text = String::from_utf8(text.stdout).unwrap();
    let row = |id: &str| {
        text.lines()
            .find(|l| {
                l.get(2..)
                    .is_some_and(|rest| rest.starts_with(&format!("{id} ")))
            })
            .unwrap_or_else(|| panic!("no row `{id}` in\n{text}"))
            .to_string()
    };
    // Each setting replays on its own, so the rows give the standard comparison's numbers.
    for (id, setting) in [("native.assist", native), ("assist", hook)] {
        let runs_freely = 100.0 * setting["allow"].as_f64().unwrap() / events as f64;
        // After the mark column (`*`, `+` or blank): the id, then what runs freely.
        let line = row(id);
        let cells: Vec<&str> = line[2..].split_whitespace().collect();
        assert_eq!(cells[1], format!("{runs_freely:.1}%"), "{id}: {cells:?}");
    }
    assert!(text.contains("native.<setting>: no hook"), "{text}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn refuses_to_replace_a_directory_it_did_not_write() {
    let home = temp("foreign");
    let out = home.join("out");
    let foreign = out.join("projects/-home-someone-src-app/session.jsonl");
    std::fs::create_dir_all(foreign.parent().unwrap()).unwrap();
    std::fs::write(&foreign, "{}\n").unwrap();
    let output = leastgrant(&home, &home, &["demo", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("did not write"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read(&foreign).unwrap(), b"{}\n");
    let _ = std::fs::remove_dir_all(&home);
}
