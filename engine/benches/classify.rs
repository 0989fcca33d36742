//! Classification throughput and coverage on real shell commands (`cargo bench -p
//! leastgrant-engine`).
//!
//! Reads the Bash calls of the SpecStory histories in `../shared/datasets/` (skipping with a
//! printed reason where that folder is absent, using the bypass corpus instead), then prints:
//! commands per second on one core for the full analysis, the same for tokenizing alone as a
//! baseline measured in this run, their ratio, the budget ratio (200,000/s), the share the
//! engine understands, and what blocks the rest. No wall-clock assertion: numbers only.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use leastgrant_engine::{
    Context, Envelope, Evidence, NoAnswers, Roots, SessionState, Settings, ToolCall, analyze,
    decide, lex,
};

#[path = "../tests/it/specstory.rs"]
mod specstory;
use specstory::specstory_commands;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BUDGET_PER_SECOND: f64 = 200_000.0;

fn corpus_commands() -> Vec<String> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bypass.toml"),
    )
    .unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            l.strip_prefix("command = '")
                .and_then(|r| r.strip_suffix('\''))
        })
        .map(str::to_string)
        .collect()
}

fn per_second(commands: &[String], rounds: usize, mut f: impl FnMut(&str)) -> f64 {
    let start = Instant::now();
    for _ in 0..rounds {
        for command in commands {
            f(command);
        }
    }
    (commands.len() * rounds) as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let dir = specstory::specstory_dir();
    let mut commands = specstory_commands(&dir);
    let source = if commands.is_empty() {
        println!(
            "skipping the real commands: {} is absent; using the bypass corpus instead",
            dir.display()
        );
        commands = corpus_commands();
        "bypass corpus"
    } else {
        "SpecStory Bash calls"
    };
    if commands.is_empty() {
        println!("no commands to measure");
        return;
    }
    // The histories come from one developer's machine; their paths place against these roots.
    let roots = Roots::new("/Users/sean/Source/SpecStory/getspecstory", "/Users/sean");
    let cwd = Some(roots.project.as_str());
    let calls: Vec<ToolCall> = commands.iter().map(|c| ToolCall::shell(c, cwd)).collect();

    let rounds = (200_000 / commands.len()).max(3);
    // Warm up, then measure: the baseline (tokenize only) and the full analysis.
    let _ = per_second(&commands, 1, |c| {
        black_box(lex(c));
    });
    let lex_rate = per_second(&commands, rounds, |c| {
        black_box(lex(c));
    });
    let mut index = 0usize;
    let analyze_rate = per_second(&commands, rounds, |_| {
        let call = &calls[index % calls.len()];
        index += 1;
        black_box(analyze(call, &roots));
    });

    // decide() against a 50,000-signature envelope, as the hook will.
    let mut envelope = Envelope::default();
    for i in 0..50_000u32 {
        envelope.learn_signature(
            &format!("cmd{i} <path> -x"),
            1,
            Evidence::Confirmed,
            1_767_225_600_000_000 + i64::from(i % 90) * 86_400_000_000,
            &format!("s{}", i % 97),
        );
    }
    let analyses: Vec<_> = calls.iter().map(|c| analyze(c, &roots)).collect();
    let settings = Settings::default();
    let session = SessionState::default();
    let ctx = Context {
        envelope: &envelope,
        session: &session,
        answers: &NoAnswers,
        settings: &settings,
        now_us: 1_767_225_600_000_000 + 100 * 86_400_000_000,
    };
    let start = Instant::now();
    let mut decided = 0usize;
    for _ in 0..rounds {
        for analysis in &analyses {
            black_box(decide(analysis, &ctx));
            decided += 1;
        }
    }
    let decide_rate = decided as f64 / start.elapsed().as_secs_f64();

    // Coverage: how much the engine understands, and what blocks the rest.
    let mut understood = 0usize;
    let mut blockers: BTreeMap<String, usize> = BTreeMap::new();
    let mut capabilities: BTreeMap<&'static str, usize> = BTreeMap::new();
    for analysis in &analyses {
        if analysis.understood {
            understood += 1;
        }
        for action in &analysis.actions {
            *capabilities.entry(action.capability.as_str()).or_default() += 1;
        }
        let mut seen = std::collections::BTreeSet::new();
        for problem in &analysis.problems {
            let class = classify_blocker(problem);
            if seen.insert(class.clone()) {
                *blockers.entry(class).or_default() += 1;
            }
        }
    }

    println!("source: {source}, {} commands", commands.len());
    println!(
        "tokenize only (baseline): {:>12.0} commands/s/core",
        lex_rate
    );
    println!(
        "full analysis:            {:>12.0} commands/s/core  ({:.2}x the tokenizer's cost)",
        analyze_rate,
        lex_rate / analyze_rate
    );
    println!(
        "budget ratio:             {:>12.2}x the 200,000/s budget",
        analyze_rate / BUDGET_PER_SECOND
    );
    println!(
        "decide, 50k-signature envelope: {:>6.0} decisions/s ({:.2} µs each)",
        decide_rate,
        1e6 / decide_rate
    );
    println!(
        "understood: {understood} of {} ({:.1}%)",
        analyses.len(),
        100.0 * understood as f64 / analyses.len() as f64
    );
    println!("what blocks the rest (commands affected):");
    let mut ranked: Vec<_> = blockers.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (reason, count) in ranked.iter().take(25) {
        println!("  {count:>5}  {reason}");
    }
    println!("capability mix (actions):");
    let mut caps: Vec<_> = capabilities.into_iter().collect();
    caps.sort_by_key(|c| std::cmp::Reverse(c.1));
    for (cap, count) in caps {
        println!("  {count:>5}  {cap}");
    }
}

/// Groups a problem sentence into a class: unknown programs by name, paths by kind.
fn classify_blocker(problem: &str) -> String {
    if let Some(rest) = problem.strip_prefix('`')
        && let Some((name, tail)) = rest.split_once('`')
    {
        if tail.contains("program the engine does not know") {
            return format!("unknown program `{name}`");
        }
        if tail.contains("cannot resolve") {
            return "a path the engine cannot resolve (variable, glob root)".to_string();
        }
        if tail.contains("changes which program") {
            return "an assignment that changes which program runs".to_string();
        }
    }
    problem.to_string()
}
