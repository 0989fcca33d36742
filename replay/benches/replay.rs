//! Replay benchmarks (design §8), printed as ratios against baselines measured in the same run:
//!
//! 1. event×settings per second once classified, on a 64-setting grid (budget: 20 million on
//!    this 2-core machine, issue 15);
//! 2. the 64-setting grid in one pass against 64 single-setting runs (each of which would also
//!    read and classify the history again; budget: the grid at most 1/4 of the single runs);
//! 3. peak memory against history size: the same replay on histories of growing size made of
//!    projects of one size, and on one with a single large project (memory must follow the
//!    largest project, not the total).
//!
//! `LEASTGRANT_BENCH_EVENTS` sets the in-memory history (default 400,000 events);
//! `LEASTGRANT_BENCH_MEMORY_EVENTS` the largest on-disk history of part 3 (default 1,000,000;
//! 10,000,000 is the design's size and takes several minutes to write).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use leastgrant_replay::events::ReplayEvent;
use leastgrant_replay::replay::{ClassifiedProject, Options, Plan, classify_project};
use leastgrant_replay::settings::{Grid, Setting};
use leastgrant_replay::synthetic;
use rayon::prelude::*;

const PER_PROJECT: usize = 2_000;

fn grid64() -> Vec<Setting> {
    let grid = Grid {
        posture: vec!["assist".into(), "autopilot".into()],
        confidence: [0.5, 0.6, 0.7, 0.8].iter().map(|c| [*c, *c, 0.8]).collect(),
        min_days: vec![1, 2, 3, 4],
        min_sessions: vec![1, 2],
        ..Grid::default()
    };
    let settings = grid.expand().unwrap_or_default();
    assert_eq!(settings.len(), 64);
    settings
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = f();
        best = best.min(start.elapsed());
        last = Some(out);
    }
    (best, last.unwrap_or_else(f))
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    // Part 3 runs in a child process per history, so each peak is its own.
    if let Ok(table) = std::env::var("LEASTGRANT_BENCH_CHILD_TABLE") {
        child(Path::new(&table));
        return;
    }
    let events = env_number("LEASTGRANT_BENCH_EVENTS", 400_000);
    let projects = (events / PER_PROJECT).max(1);
    println!(
        "replay benchmark: {} events, {projects} projects of {PER_PROJECT}, {} threads",
        projects * PER_PROJECT,
        rayon::current_num_threads()
    );
    let history = synthetic::history(projects, PER_PROJECT, 42);
    let grouped: Vec<Vec<ReplayEvent>> = history
        .chunks(PER_PROJECT)
        .map(|chunk| chunk.iter().map(ReplayEvent::from).collect())
        .collect();
    drop(history);
    let options = Options::default();
    let total_events: usize = grouped.iter().map(Vec::len).sum();

    let (classify_time, classified): (Duration, Vec<ClassifiedProject>) = best_of(1, || {
        grouped
            .clone()
            .into_par_iter()
            .map(|events| classify_project(events, &options))
            .collect()
    });
    let distinct: usize = classified
        .iter()
        .map(ClassifiedProject::distinct_calls)
        .sum();
    println!(
        "classified once: {:.2} s ({distinct} distinct calls, {:.0} events/s)",
        classify_time.as_secs_f64(),
        total_events as f64 / classify_time.as_secs_f64()
    );

    let grid = grid64();
    let plan = Plan::new(&grid);
    let (grid_time, _) = best_of(3, || {
        classified
            .par_iter()
            .map(|p| plan.classified(p, &options).len())
            .sum::<usize>()
    });
    let rate = (total_events * grid.len()) as f64 / grid_time.as_secs_f64();
    println!(
        "\n1. 64-setting grid once classified: {:.3} s → {:.1} M event×settings/s ({:.2}× the 20 M budget)",
        grid_time.as_secs_f64(),
        rate / 1e6,
        rate / 20e6
    );

    let first = Plan::new(&grid[..1]);
    let (single_time, _) = best_of(3, || {
        classified
            .par_iter()
            .map(|p| first.classified(p, &options).len())
            .sum::<usize>()
    });
    let singles_time: Duration = grid
        .iter()
        .map(|setting| {
            let alone = Plan::new(std::slice::from_ref(setting));
            best_of(1, || {
                classified
                    .par_iter()
                    .map(|p| alone.classified(p, &options).len())
                    .sum::<usize>()
            })
            .0
        })
        .sum();
    let singles_with_classification = singles_time + classify_time * 64;
    println!(
        "2. one setting: {:.3} s; 64 single runs once classified: {:.2} s ({:.2}× the grid; budget ≥ 4); \
         64 single runs that each classify: {:.1} s ({:.1}× the grid)",
        single_time.as_secs_f64(),
        singles_time.as_secs_f64(),
        singles_time.as_secs_f64() / grid_time.as_secs_f64(),
        singles_with_classification.as_secs_f64(),
        singles_with_classification.as_secs_f64() / (grid_time + classify_time).as_secs_f64()
    );

    memory();
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leastgrant-bench-replay-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn memory() {
    let largest = env_number("LEASTGRANT_BENCH_MEMORY_EVENTS", 1_000_000);
    let per = 500;
    println!("\n3. peak memory (64 settings, outputs written), one child process each:");
    let mut shapes: Vec<(usize, usize, String)> = [largest / 10, largest / 3, largest]
        .iter()
        .map(|n| {
            (
                (n / per).max(1),
                per,
                format!("{n} events in {} projects of {per}", (n / per).max(1)),
            )
        })
        .collect();
    // 50,000 events at the synthetic pace of 60 a day is over two years of one project.
    let big = (largest / 10).clamp(per, 50_000);
    shapes.push((1, big, format!("{big} events in 1 project")));
    for (projects, per_project, label) in shapes {
        let table = scratch("table");
        let write_start = Instant::now();
        // Written in slices so the parent's own memory stays small.
        let slice = (200_000 / per_project).max(1);
        let mut written = 0;
        let mut seed = 1;
        while written < projects {
            let n = slice.min(projects - written);
            let mut events = synthetic::history(n, per_project, seed);
            for e in &mut events {
                // Distinct projects across slices.
                e.project_key = format!("{}-{seed}", e.project_key);
                e.project_root = e.project_key.clone();
                e.cwd = Some(e.project_key.clone());
            }
            leastgrant_ingest::table::write_fragments(&table, &format!("bench-{seed}"), events)
                .unwrap_or_default();
            written += n;
            seed += 1;
        }
        let write_time = write_start.elapsed();
        let start = Instant::now();
        let output = std::process::Command::new(std::env::current_exe().unwrap_or_default())
            .env("LEASTGRANT_BENCH_CHILD_TABLE", &table)
            .output();
        let elapsed = start.elapsed();
        match output {
            Ok(out) => println!(
                "   {label}: peak {} MiB, {:.1} s (table written in {:.1} s)",
                String::from_utf8_lossy(&out.stdout).trim(),
                elapsed.as_secs_f64(),
                write_time.as_secs_f64()
            ),
            Err(e) => println!("   {label}: the child did not run: {e}"),
        }
        let _ = std::fs::remove_dir_all(&table);
    }
}

fn child(table: &Path) {
    let grid = grid64();
    let out = table.with_extension("out");
    let mut outputs = match leastgrant_replay::output::Outputs::create(&out) {
        Ok(o) => o,
        Err(e) => {
            println!("error: {e}");
            return;
        }
    };
    let options = Options::default();
    let result = leastgrant_replay::run(
        table,
        &grid,
        &options,
        0.02,
        &mut |runs| outputs.add(&grid, runs),
        &|_| {},
    );
    match result.and_then(|summary| outputs.finish(&summary)) {
        Ok(()) => println!("{}", peak_rss_kib() / 1024),
        Err(e) => println!("error: {e}"),
    }
    let _ = std::fs::remove_dir_all(&out);
}
