//! The command line's `simulate` of the scale benchmark (its 64-setting grid and the
//! baselines, no rules: `run_shard` into `Outputs`) on the system allocator, for a heap
//! profiler: the `leastgrant` binary links mimalloc, which heaptrack and massif do not see.
//! docs/decisions.md, "The scale benchmark", has what it found.
//!
//! ```sh
//! cargo build --release -p leastgrant-replay --example memprof
//! heaptrack target/release/examples/memprof TABLE OUT_DIR
//! ```
use leastgrant_replay::output::Outputs;
use leastgrant_replay::settings::baselines;
use leastgrant_replay::{Grid, Options, Shard};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let tier2 = leastgrant_engine::Thresholds::default().confidence_by_tier[2];
    let grid = Grid {
        posture: vec!["assist".into(), "autopilot".into()],
        confidence: [0.5, 0.6, 0.7, 0.8]
            .iter()
            .map(|c: &f64| [*c, *c, c.max(tier2)])
            .collect(),
        min_sessions: vec![1, 2],
        min_days: vec![1, 2, 3, 4],
        ..Grid::default()
    };
    let mut settings = grid.expand().unwrap();
    settings.extend(baselines());
    let options = Options::default();
    let mut out = Outputs::create(std::path::Path::new(&a[2])).unwrap();
    let (summary, _m) = leastgrant_replay::run_shard(
        std::path::Path::new(&a[1]),
        &settings,
        &options,
        0.1,
        Shard::WHOLE,
        &mut |runs| out.add(&settings, runs),
        &|_| {},
    )
    .unwrap();
    out.finish(&summary).unwrap();
}
