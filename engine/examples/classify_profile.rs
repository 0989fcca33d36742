//! Analyses every SpecStory Bash call the classification bench reads, a given number of times
//! (default 2), under the bench's allocator and nothing else: a fixed workload to count
//! instructions on, where the machine's load makes wall clocks useless —
//! `valgrind --tool=callgrind --toggle-collect='leastgrant_engine::analyze::analyze'
//! target/release/examples/classify_profile 2` (docs/decisions.md, speed of classification).
//! Must not: print, read the clock or the environment.

use std::hint::black_box;

use leastgrant_engine::{Roots, ToolCall, analyze};

#[path = "../tests/it/specstory.rs"]
mod specstory;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let commands = specstory::specstory_commands(&specstory::specstory_dir());
    // The bench's roots: the histories come from one developer's machine.
    let roots = Roots::new("/Users/sean/Source/SpecStory/getspecstory", "/Users/sean");
    let cwd = Some(roots.project.as_str());
    let calls: Vec<ToolCall> = commands.iter().map(|c| ToolCall::shell(c, cwd)).collect();
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2);
    for _ in 0..rounds {
        for call in &calls {
            black_box(analyze(call, &roots));
        }
    }
}
