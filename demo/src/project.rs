//! The demo's projects (names, stacks, where they live) and the schedule of sessions over the
//! days, and the filling of a template with a project's names.
//!
//! Owns no text of its own beyond the project names; what a stack's work looks like is in
//! `vocabulary.rs`.

use leastgrant_ingest::common::days_from_civil;

use crate::text::Rng;
use crate::vocabulary::Stack;

pub(crate) struct Project {
    pub(crate) name: String,
    /// The Python package name (`-` → `_`).
    pub(crate) package: String,
    pub(crate) stack: Stack,
    pub(crate) root: String,
    pub(crate) weight: u64,
}

pub(crate) const HOME: &str = "/home/demo";

const NAMES: [(Stack, [&str; 5]); 4] = [
    (
        Stack::Rust,
        [
            "ledger-core",
            "tilewright",
            "logshipper",
            "rivet-cli",
            "quill-parser",
        ],
    ),
    (
        Stack::Node,
        [
            "storefront-web",
            "admin-console",
            "standup-bot",
            "docs-site",
            "pricing-widget",
        ],
    ),
    (
        Stack::Python,
        [
            "etl-nightly",
            "churn-model",
            "invoice-api",
            "scrape-kit",
            "geo-tools",
        ],
    ),
    (
        Stack::Go,
        [
            "edge-proxy",
            "metrics-agent",
            "kvstore",
            "deploy-bot",
            "feature-flags",
        ],
    ),
];

/// `count` projects, the stacks interleaved so that any prefix mixes them; the first are the
/// busiest.
pub(crate) fn projects(count: usize) -> Vec<Project> {
    (0..count)
        .map(|i| {
            let (stack, names) = NAMES[i % 4];
            let base = names[(i / 4) % 5];
            let name = if i < 20 {
                base.to_string()
            } else {
                format!("{base}-{}", i / 20 + 1)
            };
            Project {
                package: name.replace('-', "_"),
                root: format!("{HOME}/src/{name}"),
                name,
                stack,
                weight: 8u64.saturating_sub(i as u64 / 2).max(1),
            }
        })
        .collect()
}

/// One session in the schedule.
pub(crate) struct Slot {
    pub(crate) project: usize,
    pub(crate) start_ms: i64,
    pub(crate) day: u32,
}

/// Monday 2026-06-01, as days since 1970-01-01.
fn start_day() -> i64 {
    days_from_civil(2026, 6, 1)
}

/// Several sessions on each working day, now and then one at a weekend; projects drawn by
/// weight, every project getting at least one session when there are enough.
pub(crate) fn schedule(seed: u64, day_count: u32, projects: &[Project]) -> Vec<Slot> {
    let mut rng = Rng::new(seed, 0);
    let total_weight: u64 = projects.iter().map(|p| p.weight).sum();
    let mut slots = Vec::new();
    for day in 0..day_count {
        let days = start_day() + i64::from(day);
        let weekday = (days + 3).rem_euclid(7); // 0 is Monday
        let count = if weekday < 5 {
            rng.range(3, 7)
        } else {
            u64::from(rng.chance(0.3))
        };
        let mut starts: Vec<i64> = (0..count)
            .map(|_| {
                let minute = rng.range(7 * 60, 18 * 60 + 30) as i64;
                (days * 86_400 + minute * 60 + rng.below(60) as i64) * 1000 + rng.below(1000) as i64
            })
            .collect();
        starts.sort_unstable();
        for start_ms in starts {
            let mut draw = rng.below(total_weight);
            let mut project = 0;
            for (i, p) in projects.iter().enumerate() {
                if draw < p.weight {
                    project = i;
                    break;
                }
                draw -= p.weight;
            }
            slots.push(Slot {
                project,
                start_ms,
                day,
            });
        }
    }
    // Every project at least once: a missing one takes the latest session of the busiest.
    for missing in 0..projects.len() {
        if slots.len() < projects.len() {
            break;
        }
        if slots.iter().any(|s| s.project == missing) {
            continue;
        }
        let mut counts = vec![0usize; projects.len()];
        for s in &slots {
            if let Some(c) = counts.get_mut(s.project) {
                *c += 1;
            }
        }
        let busiest = (0..projects.len())
            .max_by_key(|i| (counts.get(*i).copied().unwrap_or(0), usize::MAX - i))
            .unwrap_or(0);
        if let Some(slot) = slots.iter_mut().rev().find(|s| s.project == busiest) {
            slot.project = missing;
        }
    }
    slots
}

/// Claude Code's directory name for a working directory: every character outside `[A-Za-z0-9]`
/// becomes `-` (`/home/demo/src/app` → `-home-demo-src-app`).
pub(crate) fn encode_project_dir(root: &str) -> String {
    root.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Fills a template's placeholders.
pub(crate) fn fill(template: &str, project: &Project, other: &str, branch: &str) -> String {
    if !template.contains('{') {
        return template.to_string();
    }
    let stack = project.stack.data();
    template
        .replace("{name}", &project.name)
        .replace("{package}", &project.package)
        .replace("{root}", &project.root)
        .replace("{home}", HOME)
        .replace("{other}", other)
        .replace("{branch}", branch)
        .replace("{ext}", stack.ext)
        .replace("{publish}", stack.publish)
        .replace(
            "{file}",
            &stack
                .files
                .first()
                .map_or(String::new(), |f| f.replace("{name}", &project.name))
                .replace("{package}", &project.package),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_project_gets_a_session_and_busier_ones_get_more() {
        let projects = projects(20);
        let slots = schedule(1, 28, &projects);
        let mut counts = vec![0usize; projects.len()];
        for slot in &slots {
            counts[slot.project] += 1;
        }
        assert!(counts.iter().all(|c| *c > 0), "{counts:?}");
        assert!(counts[0] > counts[19], "{counts:?}");
        assert!(slots.windows(2).all(|w| w[0].day <= w[1].day));
    }

    #[test]
    fn project_names_are_unique_past_the_first_twenty() {
        let projects = projects(200);
        let mut roots: Vec<&str> = projects.iter().map(|p| p.root.as_str()).collect();
        roots.sort_unstable();
        roots.dedup();
        assert_eq!(roots.len(), 200);
        assert_eq!(projects[20].name, "ledger-core-2");
        assert_eq!(projects[20].package, "ledger_core_2");
    }

    #[test]
    fn project_directories_are_named_as_claude_code_names_them() {
        assert_eq!(
            encode_project_dir("/home/demo/src/rivet-cli"),
            "-home-demo-src-rivet-cli"
        );
        assert_eq!(encode_project_dir("/a/b_c.d"), "-a-b-c-d");
    }
}
