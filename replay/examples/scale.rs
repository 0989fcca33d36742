//! The scale benchmark (docs/decisions.md, "The scale benchmark"): writes a synthetic events
//! table of any size to disk in bounded memory (slices of the benchmarks' synthetic history,
//! each slice its own projects), then times the real `leastgrant simulate` on it with
//! `/usr/bin/time -v` (elapsed time and peak resident memory) and reports events × settings
//! per second. The table is deleted afterwards unless `--keep` is given.
//!
//! ```sh
//! CARGO_TARGET_DIR=target cargo build --release -p leastgrant --bin leastgrant
//! cargo run --release -p leastgrant-replay --example scale -- \
//!   --events 100000000 --dir /work/scale --leastgrant target/release/leastgrant
//! ```
//!
//! Flags: `--events N` (default 10,000,000), `--per-project N` (events per project, default
//! 2,000), `--slice N` (events generated and written at a time, default 500,000: the writer's
//! memory), `--dir DIR` (the table goes to `DIR/data`, the replay's outputs to `DIR/replay`),
//! `--leastgrant BIN` (the command line to time; without it the table is only written),
//! `--nice N` (run the replay under `nice -n N`), `--keep` (keep the table and outputs),
//! `--write-only`. The replay compares the benchmark's 64-setting grid (2 postures × 4
//! confidences × 4 minimum days × 2 minimum sessions) and the baselines, with no rules.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use leastgrant_replay::synthetic;

/// The benchmark's 64-setting grid as `leastgrant simulate` flags.
const GRID: &[&str] = &[
    "--posture",
    "assist,autopilot",
    "--confidence",
    "0.5,0.6,0.7,0.8",
    "--min-days",
    "1,2,3,4",
    "--min-sessions",
    "1,2",
];

struct Args {
    events: u64,
    per_project: u64,
    slice: u64,
    dir: PathBuf,
    leastgrant: Option<PathBuf>,
    nice: Option<i32>,
    keep: bool,
    write_only: bool,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        events: 10_000_000,
        per_project: 2_000,
        slice: 500_000,
        dir: std::env::temp_dir().join("leastgrant-scale"),
        leastgrant: None,
        nice: None,
        keep: false,
        write_only: false,
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let mut value = || given.next().ok_or(format!("{flag} needs a value"));
        let number = |text: String| {
            text.replace('_', "")
                .parse::<u64>()
                .map_err(|e| format!("{text}: {e}"))
        };
        match flag.as_str() {
            "--events" => args.events = number(value()?)?,
            "--per-project" => args.per_project = number(value()?)?.max(1),
            "--slice" => args.slice = number(value()?)?.max(1),
            "--dir" => args.dir = PathBuf::from(value()?),
            "--leastgrant" => args.leastgrant = Some(PathBuf::from(value()?)),
            "--nice" => args.nice = Some(value()?.parse().map_err(|e| format!("--nice: {e}"))?),
            "--keep" => args.keep = true,
            "--write-only" => args.write_only = true,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(args)
}

/// Bytes under `path`.
fn size_of(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| size_of(&e.path()))
        .sum()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Writes `args.events` events as slices of whole projects; returns the events written.
fn write(args: &Args, table: &Path) -> Result<u64, String> {
    let per_slice = (args.slice / args.per_project).max(1);
    let per_project = usize::try_from(args.per_project).map_err(|e| e.to_string())?;
    let mut written = 0u64;
    let mut seed = 1u64;
    let start = Instant::now();
    while written < args.events {
        let left = args.events - written;
        let projects = per_slice.min(left.div_ceil(args.per_project));
        let mut events =
            synthetic::history(usize::try_from(projects).unwrap_or(1), per_project, seed);
        events.truncate(usize::try_from(left).unwrap_or(usize::MAX));
        // Each slice is its own projects (its own roots, sessions and event ids): the synthetic
        // history names them p0000, p0001, … in every slice.
        for e in &mut events {
            let old = e.project_root.clone();
            let new = format!("/home/dev/s{seed:05}{}", &old["/home/dev/".len()..]);
            e.tool_input = e.tool_input.replace(&old, &new);
            e.cwd = Some(new.clone());
            e.project_key = new.clone();
            e.project_root = new;
            e.session_id = format!("s{seed}-{}", e.session_id);
            e.event_id = format!("s{seed}-{}", e.event_id);
        }
        written += events.len() as u64;
        leastgrant_ingest::table::write_fragments(table, &format!("scale-{seed}"), events)
            .map_err(|e| e.to_string())?;
        seed += 1;
        if seed.is_multiple_of(20) {
            eprintln!(
                "  {written} events written, {:.0} s",
                start.elapsed().as_secs_f64()
            );
        }
    }
    Ok(written)
}

/// The value of a `/usr/bin/time -v` line.
fn time_field<'a>(report: &'a str, name: &str) -> Option<&'a str> {
    report
        .lines()
        .find_map(|l| l.trim().strip_prefix(name))
        .map(str::trim)
}

/// `h:mm:ss` or `m:ss.ss` in seconds.
fn seconds(clock: &str) -> f64 {
    clock.split(':').fold(0.0, |total, part| {
        total * 60.0 + part.parse::<f64>().unwrap_or(0.0)
    })
}

fn replay(args: &Args, bin: &Path, table: &Path, events: u64) -> Result<(), String> {
    let out = args.dir.join("replay");
    let _ = std::fs::remove_dir_all(&out);
    let mut command = Command::new("/usr/bin/time");
    command.arg("-v");
    if let Some(n) = args.nice {
        command.args(["nice", "-n", &n.to_string()]);
    }
    command
        .arg(bin)
        .args(["simulate", "--events"])
        .arg(table)
        .arg("--out")
        .arg(&out)
        .args(["--no-rules", "--json"])
        .args(GRID);
    println!("load average before the replay: {}", load_average());
    let done = command.output().map_err(|e| format!("cannot run: {e}"))?;
    let report = String::from_utf8_lossy(&done.stderr);
    if !done.status.success() {
        return Err(format!("the replay failed:\n{report}"));
    }
    println!("load average after the replay: {}", load_average());
    let summary: serde_json::Value =
        serde_json::from_slice(&done.stdout).map_err(|e| format!("summary: {e}"))?;
    let settings = summary["settings"].as_array().map_or(0, Vec::len) as u64;
    let elapsed =
        time_field(&report, "Elapsed (wall clock) time (h:mm:ss or m:ss):").map_or(0.0, seconds);
    let user: f64 = time_field(&report, "User time (seconds):")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let system: f64 = time_field(&report, "System time (seconds):")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let peak_kib: u64 = time_field(&report, "Maximum resident set size (kbytes):")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let cpu = time_field(&report, "Percent of CPU this job got:").unwrap_or("?");
    println!(
        "replay: {events} events × {settings} settings in {elapsed:.1} s wall ({user:.1} s user, {system:.1} s system, {cpu} CPU), peak RSS {} MiB",
        peak_kib / 1024
    );
    if elapsed > 0.0 {
        println!(
            "  {:.2} M events×settings/s wall, {:.2} M per CPU-second; {:.0} events/s",
            (events * settings) as f64 / elapsed / 1e6,
            (events * settings) as f64 / (user + system).max(f64::MIN_POSITIVE) / 1e6,
            events as f64 / elapsed
        );
    }
    println!(
        "outputs: {:.1} MiB; events replayed per setting {}",
        size_of(&out) as f64 / 1048576.0,
        summary["settings"][0]["events"]
    );
    Ok(())
}

fn main() {
    let args = match parse() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("scale: {e}");
            std::process::exit(2);
        }
    };
    let table = args.dir.join("data");
    let _ = std::fs::remove_dir_all(&table);
    println!(
        "writing {} events ({} per project) to {} (load average {})",
        args.events,
        args.per_project,
        table.display(),
        load_average()
    );
    let start = Instant::now();
    let result = write(&args, &table).and_then(|events| {
        println!(
            "table: {events} events, {:.1} MiB on disk, written in {:.1} s",
            size_of(&table) as f64 / 1048576.0,
            start.elapsed().as_secs_f64()
        );
        match (&args.leastgrant, args.write_only) {
            (Some(bin), false) => replay(&args, bin, &table, events),
            _ => Ok(()),
        }
    });
    if !args.keep {
        let _ = std::fs::remove_dir_all(&table);
        let _ = std::fs::remove_dir_all(args.dir.join("replay"));
    }
    if let Err(e) = result {
        eprintln!("scale: {e}");
        std::process::exit(1);
    }
}
