//! Ingest throughput against DuckDB on the same transcripts (`cargo bench -p leastgrant-ingest`).
//!
//! Builds a corpus of about `LEASTGRANT_BENCH_MB` megabytes (default 1024) by replaying the real
//! Claude Code samples in `../shared/datasets/` with shifted ids and times, then measures, on one
//! core each: leastgrant's ingest (JSON lines → events → Parquet with zstd) and DuckDB's
//! `read_json` → Parquet (zstd) through Python. Prints MB/s per core for both, the ratio
//! (budget: at least 5×, issue 15), and peak memory against the largest single file. Skips with
//! a printed reason where the samples or DuckDB are missing. Each side is run three times and its
//! best run is reported (the machines are shared and noisy); ours runs on the allocator the
//! product ships with. No assertion on time. `LEASTGRANT_BENCH_KEEP=1` keeps the corpus (to time
//! the `leastgrant` binary on it).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use leastgrant_ingest::registry::SourceFile;
use leastgrant_ingest::run::run;

/// The allocator `leastgrant` and the Python package ship with (`src/main.rs`,
/// `python/src/lib.rs`): the bench measures the ingest users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs per side; the best is reported.
const RUNS: usize = 3;

fn samples() -> Vec<PathBuf> {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/datasets/claude-code"
    ));
    leastgrant_ingest::claude::discover(root)
}

/// Rewrites every id-like string (uuids, tool ids, session ids) and the timestamps so each
/// copy is a distinct history: ids get a copy suffix, times shift by a day per copy.
fn shifted(line: &str, copy: usize) -> String {
    let suffixed = line
        .replace("\"toolu_", &format!("\"toolu_c{copy}_"))
        .replace("\"tool_use_id\":\"", &format!("\"tool_use_id\":\"c{copy}-"))
        .replace("\"id\":\"", &format!("\"id\":\"c{copy}-"))
        .replace("\"uuid\":\"", &format!("\"uuid\":\"c{copy}-"))
        .replace("\"sessionId\":\"", &format!("\"sessionId\":\"c{copy}-"));
    // Shift the day of month within 2025 by the copy number (mod 28) — enough to be distinct.
    suffixed.replace(
        "\"timestamp\":\"2025-",
        &format!("\"timestamp\":\"{}-", 2030 + copy % 50),
    )
}

fn build_corpus(dir: &Path, target_mb: usize) -> (u64, u64) {
    let files = samples();
    let originals: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect();
    let sample_bytes: usize = originals.iter().map(String::len).sum();
    let copies = (target_mb << 20).div_ceil(sample_bytes.max(1));
    std::fs::create_dir_all(dir).unwrap_or_default();
    let mut total = 0u64;
    let mut largest = 0u64;
    for copy in 0..copies {
        for (i, text) in originals.iter().enumerate() {
            let path = dir.join(format!("c{copy:05}-{i}.jsonl"));
            let mut out = std::io::BufWriter::new(
                std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}")),
            );
            let mut size = 0u64;
            for line in text.lines() {
                let l = shifted(line, copy);
                size += l.len() as u64 + 1;
                let _ = writeln!(out, "{l}");
            }
            total += size;
            largest = largest.max(size);
        }
    }
    (total, largest)
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    if samples().is_empty() {
        println!("skipping: no Claude Code samples under ../shared/datasets/claude-code");
        return;
    }
    let target_mb: usize = std::env::var("LEASTGRANT_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let work = std::env::temp_dir().join("leastgrant-ingest-bench");
    let _ = std::fs::remove_dir_all(&work);
    let corpus = work.join("corpus");
    let (bytes, largest) = build_corpus(&corpus, target_mb);
    let mb = bytes as f64 / 1e6;
    println!(
        "corpus: {mb:.0} MB in {} files (largest {:.1} MB)",
        std::fs::read_dir(&corpus).map(|d| d.count()).unwrap_or(0),
        largest as f64 / 1e6
    );

    // leastgrant, one thread.
    let files: Vec<SourceFile> = std::fs::read_dir(&corpus)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| SourceFile {
                    source: &leastgrant_ingest::claude::SOURCE,
                    path: e.path(),
                })
                .collect()
        })
        .unwrap_or_default();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    // Best of a few fresh runs on each side: the machines are shared and noisy, and the best run
    // is the one least disturbed.
    let before = peak_rss_kb();
    let mut ours = f64::INFINITY;
    let mut summary = None;
    for attempt in 0..RUNS {
        // A new directory each time: creating files where many were just deleted is slower on
        // ext4, which would measure the file system, not the ingest.
        let table = work.join(format!("table-{attempt}"));
        let start = Instant::now();
        let result = pool
            .install(|| run(files.clone(), &table, &|_| {}))
            .unwrap_or_else(|e| panic!("{e}"));
        ours = ours.min(start.elapsed().as_secs_f64());
        summary = Some(result);
    }
    let events = summary.map_or(0, |s| s.events);
    let peak = peak_rss_kb().max(before);
    println!(
        "leastgrant: {:.1} MB/s per core ({} events, {:.1} s), peak memory {:.0} MB = {:.1}× the largest file",
        mb / ours,
        events,
        ours,
        peak as f64 / 1024.0,
        peak as f64 * 1024.0 / largest.max(1) as f64
    );

    // DuckDB, one thread.
    let script = format!(
        "import duckdb, time, resource\ncon = duckdb.connect()\ncon.execute('SET threads=1')\ncon.execute('SET enable_progress_bar=false')\nbest = float('inf')\nfor _ in range({}):\n    t = time.time()\n    con.execute(\"COPY (SELECT * FROM read_json('{}/*.jsonl', format='newline_delimited', union_by_name=true, ignore_errors=true, maximum_object_size=67108864)) TO '{}/duck.parquet' (FORMAT parquet, COMPRESSION zstd)\")\n    best = min(best, time.time() - t)\nprint(best, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
        RUNS,
        corpus.display(),
        work.display()
    );
    match Command::new("python3").args(["-c", &script]).output() {
        Ok(out) if out.status.success() => {
            // The timing is the last line; anything DuckDB printed before it is not ours.
            let text = String::from_utf8_lossy(&out.stdout);
            let mut parts = text.lines().last().unwrap_or("").split_whitespace();
            let secs: f64 = parts
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(f64::NAN);
            let rss_kb: f64 = parts
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(f64::NAN);
            println!(
                "duckdb read_json → parquet: {:.1} MB/s per core ({secs:.1} s), peak memory {:.0} MB",
                mb / secs,
                rss_kb / 1024.0
            );
            println!(
                "ratio: leastgrant is {:.2}× DuckDB (budget: at least 5×)",
                (mb / ours) / (mb / secs)
            );
        }
        Ok(out) => println!(
            "skipping DuckDB: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("failed")
        ),
        Err(e) => println!("skipping DuckDB: python3 is not available ({e})"),
    }
    if std::env::var_os("LEASTGRANT_BENCH_KEEP").is_some() {
        println!("kept {}", work.display());
    } else {
        let _ = std::fs::remove_dir_all(&work);
    }
}
