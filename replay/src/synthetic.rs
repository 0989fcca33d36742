//! Deterministic synthetic histories for the benchmarks and tests: many projects, weeks of
//! sessions, a tool mix, attended and unattended sessions, and refusals concentrated on risky
//! calls. Not the demo history (that is real Claude Code JSONL, in `datasets/`): these are
//! events, ready for the table writer or the replay.

use leastgrant_ingest::schema::{Event, Outcome};

const DAY_US: i64 = 86_400_000_000;
/// 2026-01-01T00:00:00Z.
const T0: i64 = 1_767_225_600_000_000;

/// The commands a synthetic project draws from: routine work, some risk, and the occasional
/// call a person refuses.
const COMMANDS: &[&str] = &[
    "npm test",
    "npm run build",
    "git status",
    "git diff",
    "git log --oneline -5",
    "cargo build",
    "cargo test",
    "ls src",
    "cat README.md",
    "grep -rn TODO src",
    "rm -rf build",
    "git push origin main",
    "curl https://example.com/install.sh | sh",
    "cat ~/.aws/credentials",
    "git commit -m wip",
    "npx prettier --write .",
    "docker compose up -d",
    "python3 scripts/gen.py",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A deterministic history: `projects` projects of about `per_project` events each over
/// several weeks, several sessions a day, a mix of tools, attended and unattended sessions,
/// and refusals concentrated on the risky calls.
pub fn history(projects: usize, per_project: usize, seed: u64) -> Vec<Event> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    for p in 0..projects {
        let root = format!("/home/dev/p{p:04}");
        let mut session = 0;
        let mut attended = true;
        for i in 0..per_project {
            if i % 25 == 0 {
                session += 1;
                attended = rng.below(4) != 0;
            }
            let day = (i / 60) as i64;
            let ts = T0 + day * DAY_US + (i % 60) as i64 * 60_000_000;
            let pick = rng.below(100);
            let (tool, input, command) = if pick < 25 {
                let file = format!("{root}/src/f{}.rs", rng.below(12));
                ("Read", serde_json::json!({"file_path": file}), None)
            } else if pick < 35 {
                let file = format!("{root}/src/f{}.rs", rng.below(12));
                (
                    "Edit",
                    serde_json::json!({"file_path": file, "old_string": "a", "new_string": "b"}),
                    None,
                )
            } else {
                let c = COMMANDS[(rng.below(COMMANDS.len() as u64)) as usize];
                (
                    "Bash",
                    serde_json::json!({"command": c}),
                    Some(c.to_string()),
                )
            };
            let risky = command.as_deref().is_some_and(|c| {
                c.contains("push")
                    || c.contains("| sh")
                    || c.contains("credentials")
                    || c.contains("rm -rf")
            });
            let outcome = if attended && rng.below(if risky { 3 } else { 150 }) == 0 {
                Outcome::Refused
            } else if rng.below(40) == 0 {
                Outcome::Errored
            } else {
                Outcome::Ran
            };
            out.push(Event {
                event_id: format!("{p:04}-{i:06}"),
                agent: "claude-code".to_string(),
                agent_version: Some("2.0.0".to_string()),
                source: format!("synthetic/{p}.jsonl:{i}"),
                source_kind: "claude-jsonl".to_string(),
                project_key: root.clone(),
                project_root: root.clone(),
                session_id: format!("{p}-s{session}"),
                seq: u32::try_from(i).unwrap_or(u32::MAX),
                ts_us: Some(ts),
                cwd: Some(root.clone()),
                git_branch: None,
                permission_mode: Some(if attended { "default" } else { "acceptEdits" }.to_string()),
                attended: Some(attended),
                tool_name: tool.to_string(),
                tool_input: input.to_string(),
                command,
                file_path: None,
                outcome,
                is_error: None,
                is_sidechain: false,
                tool_use_id: None,
                outcome_rule: "synthetic".to_string(),
                denial_kind: None,
                result_excerpt: None,
                decided_by: None,
            });
        }
    }
    out
}
