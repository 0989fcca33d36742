//! What the replay's loop costs, for `valgrind --tool=callgrind` (instruction counts do not
//! depend on what else the machine runs): a synthetic history is classified, then replayed
//! once under the benchmark's 64-setting grid (`grid`) or once per setting (`singles`).
//!
//! `cargo build --release -p leastgrant-replay --example grid_cost`, then
//! `valgrind --tool=callgrind --toggle-collect='*replay_classified*' \
//!   target/release/examples/grid_cost grid 20000` (and `singles 20000`).

use leastgrant_replay::events::ReplayEvent;
use leastgrant_replay::replay::{Options, Plan, classify_project};
use leastgrant_replay::settings::Grid;
use leastgrant_replay::synthetic;

const PER_PROJECT: usize = 2_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("grid", String::as_str);
    let events: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let grid = Grid {
        posture: vec!["assist".into(), "autopilot".into()],
        confidence: [0.5, 0.6, 0.7, 0.8].iter().map(|c| [*c, *c, 0.8]).collect(),
        min_days: vec![1, 2, 3, 4],
        min_sessions: vec![1, 2],
        ..Grid::default()
    }
    .expand()
    .unwrap_or_default();
    let options = Options::default();
    let history = synthetic::history((events / PER_PROJECT).max(1), PER_PROJECT, 42);
    let classified: Vec<_> = history
        .chunks(PER_PROJECT)
        .map(|chunk| classify_project(chunk.iter().map(ReplayEvent::from).collect(), &options))
        .collect();
    let mut decided = 0usize;
    match mode {
        "singles" => {
            for setting in &grid {
                let plan = Plan::new(std::slice::from_ref(setting));
                for project in &classified {
                    decided += plan.classified(project, &options).len() * project.len();
                }
            }
        }
        _ => {
            let plan = Plan::new(&grid);
            for project in &classified {
                decided += plan.classified(project, &options).len() * project.len();
            }
        }
    }
    println!("{mode}: {decided} event×settings");
}
