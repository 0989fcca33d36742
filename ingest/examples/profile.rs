//! Ingests one directory of Claude Code transcripts on one thread, for profilers
//! (`perf record`, `valgrind --tool=callgrind`): `cargo build --profile bench -p leastgrant-ingest
//! --example profile`, then `profile CORPUS TABLE` on a corpus the ingest bench kept
//! (`LEASTGRANT_BENCH_KEEP=1`).

use std::path::PathBuf;

use leastgrant_ingest::registry::SourceFile;
use leastgrant_ingest::run::run;

fn main() {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let (Some(corpus), Some(table)) = (args.next(), args.next()) else {
        eprintln!("usage: profile CORPUS TABLE");
        std::process::exit(2);
    };
    let files: Vec<SourceFile> = leastgrant_ingest::claude::discover(&corpus)
        .into_iter()
        .map(|path| SourceFile {
            source: &leastgrant_ingest::claude::SOURCE,
            path,
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&table);
    let start = std::time::Instant::now();
    match pool.install(|| run(files, &table, &|_| {})) {
        Ok(summary) => println!(
            "{} events from {} files in {:.3} s",
            summary.events,
            summary.files_read,
            start.elapsed().as_secs_f64()
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}

/// The allocator the `leastgrant` binary ships with (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
