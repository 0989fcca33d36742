//! Standing approvals: Claude Code settings (project, local, user), Codex `.rules` and the
//! Copilot CLI's `permissions-config.json`, read from fixtures made from each documented format
//! (no real sample exists in `../shared/datasets/`) through discovery and the run; malformed
//! parts counted, never fatal; a changed file re-read at its new time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use leastgrant_ingest::registry::{SourceFile, files_at};
use leastgrant_ingest::run::run;
use leastgrant_ingest::schema::{Event, Outcome, decided_by};
use leastgrant_ingest::source::Source;
use leastgrant_ingest::standing::{EVERY_PROJECT, RULE_KEY, modified_us, unusable};
use leastgrant_ingest::table::read_table;
use leastgrant_ingest::{claude_settings, codex_rules, copilot_permissions};

use crate::support::*;

fn rule(event: &Event) -> String {
    let input: serde_json::Value = serde_json::from_str(&event.tool_input).unwrap();
    input[RULE_KEY].as_str().unwrap().to_string()
}

/// What a run read: the rules by project (each project's in file order), the rows, and what
/// was counted as unusable.
type Read = (
    BTreeMap<String, Vec<String>>,
    Vec<Event>,
    BTreeMap<String, u64>,
);

/// Ingests the places into a fresh table.
fn ingest(name: &str, places: &[(&'static Source, PathBuf)]) -> Read {
    let table = scratch(name);
    let files: Vec<SourceFile> = places
        .iter()
        .flat_map(|(source, place)| files_at(source, place))
        .collect();
    let summary = run(files, &table, &|_| {}).unwrap();
    let mut rows = read_table(&table).unwrap();
    rows.sort_by(|a, b| {
        (&a.source_kind, &a.session_id, a.seq).cmp(&(&b.source_kind, &b.session_id, b.seq))
    });
    let mut by_project: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in &rows {
        assert_eq!(row.outcome, Outcome::Granted, "{row:?}");
        assert_eq!(row.decided_by.as_deref(), Some(decided_by::USER_PERMANENT));
        by_project
            .entry(row.project_key.clone())
            .or_default()
            .push(rule(row));
    }
    let _ = std::fs::remove_dir_all(&table);
    (by_project, rows, summary.bad.0)
}

#[test]
fn claude_settings_are_granted_rows_for_their_project_and_the_users_for_every_project() {
    let project = data("standing/claude/proj");
    let (by_project, rows, bad) = ingest(
        "claude-settings",
        &[
            (&claude_settings::SOURCE, project.clone()),
            (&claude_settings::SOURCE, data("standing/claude/torn")),
            (&claude_settings::USER_SOURCE, data("standing/claude/user")),
        ],
    );
    let key = project.display().to_string();
    let mut project_rules = by_project[&key].clone();
    project_rules.sort();
    assert_eq!(
        project_rules,
        [
            "Bash",
            "Bash(*)",
            "Bash(cargo test:*)",
            "Bash(npm run test:*)",
            "Read(./src/**)",
            "WebFetch(domain:docs.rs)",
            "mcp__github__get_issue",
        ]
    );
    assert_eq!(
        by_project[EVERY_PROJECT],
        [
            "Bash(git status:*)",
            "Read(~/.aws/credentials)",
            "mcp__github"
        ]
    );
    assert_eq!(by_project.len(), 2, "{by_project:?}");
    // The time the file says: its modification time.
    let local = project.join(".claude/settings.local.json");
    let cargo = rows
        .iter()
        .find(|r| rule(r) == "Bash(cargo test:*)")
        .unwrap();
    assert_eq!(cargo.ts_us, modified_us(&local));
    assert!(cargo.ts_us.is_some());
    assert_eq!(
        cargo.source,
        format!("{}#permissions.allow[0]", local.display())
    );
    assert_eq!(cargo.source_kind, "claude-settings");
    assert_eq!(cargo.cwd.as_deref(), Some(key.as_str()));
    // `42` and `""` are not rules; the torn file is unparsable; nothing else is lost.
    assert_eq!(bad.get(unusable::NOT_A_RULE), Some(&2), "{bad:?}");
    assert_eq!(bad.get(unusable::UNPARSABLE_FILE), Some(&1), "{bad:?}");
}

#[test]
fn codex_prefix_rules_that_allow_are_bash_prefix_rules_for_every_project() {
    let (by_project, rows, bad) = ingest(
        "codex-rules",
        &[(&codex_rules::SOURCE, data("standing/codex/rules"))],
    );
    assert_eq!(by_project.len(), 1);
    assert_eq!(
        by_project[EVERY_PROJECT],
        [
            "Bash(cargo test:*)",
            "Bash(git status:*)",
            "Bash(git diff:*)",
            "Bash(make 'build it':*)",
            "Bash",
            "Bash(ls:*)",
        ]
    );
    // `prompt` and `forbidden` grant nothing; the torn statement and the pattern with 128
    // expansions are counted, and the statements after them read.
    assert_eq!(bad.get(unusable::UNPARSABLE_RULE), Some(&1), "{bad:?}");
    assert_eq!(
        bad.get(unusable::TOO_MANY_ALTERNATIVES),
        Some(&1),
        "{bad:?}"
    );
    let git = rows.iter().find(|r| rule(r) == "Bash(git diff:*)").unwrap();
    assert!(git.source.ends_with("default.rules:3"), "{}", git.source);
    assert_eq!(git.agent, "codex");
}

#[test]
fn copilot_approvals_are_rules_for_their_location() {
    let (by_project, _, bad) = ingest(
        "copilot-permissions",
        &[(&copilot_permissions::SOURCE, data("standing/copilot"))],
    );
    assert_eq!(
        by_project["/home/dev/app"],
        [
            "Bash(git push:*)",
            "Bash(npm:*)",
            "Read(//home/dev/app/**)",
            "Edit(//home/dev/app/**)",
            "mcp__github__get_issue",
            "mcp__playwright",
            "report_intent",
        ]
    );
    assert_eq!(by_project["/home/dev/lib"], ["Bash(cargo:*)"]);
    assert_eq!(by_project.len(), 2);
    assert_eq!(bad.get(unusable::NOT_A_TOOL), Some(&1), "{bad:?}");
    assert_eq!(bad.get(unusable::NOT_A_RULE), Some(&2), "{bad:?}");
}

fn set_modified(path: &Path, at: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

/// A changed file is read again: its rules as they are now, at its new time; a rule removed no
/// longer counts at all (the file keeps no history, and neither does the table). A file only
/// touched keeps its rows and their time.
#[test]
fn a_changed_settings_file_counts_its_rules_from_its_new_time() {
    let dir = scratch("standing-incremental");
    let claude = dir.join("proj/.claude");
    std::fs::create_dir_all(&claude).unwrap();
    let file = claude.join("settings.local.json");
    let write = |rules: &[&str], at: SystemTime| {
        let json = serde_json::json!({"permissions": {"allow": rules}});
        std::fs::write(&file, json.to_string()).unwrap();
        set_modified(&file, at);
    };
    let table = dir.join("table");
    let t1 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_780_000_000);
    let t2 = t1 + Duration::from_secs(86_400);
    let files = || files_at(&claude_settings::SOURCE, &dir.join("proj"));
    let rules_now = || {
        let mut rows: Vec<(String, Option<i64>)> = read_table(&table)
            .unwrap()
            .iter()
            .map(|r| (rule(r), r.ts_us))
            .collect();
        rows.sort();
        rows
    };
    let us = |t: SystemTime| {
        Some(
            t.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_micros() as i64,
        )
    };

    write(&["Bash(cargo test:*)", "Bash(git log:*)"], t1);
    run(files(), &table, &|_| {}).unwrap();
    assert_eq!(
        rules_now(),
        [
            ("Bash(cargo test:*)".to_string(), us(t1)),
            ("Bash(git log:*)".to_string(), us(t1))
        ]
    );
    // Touched, same contents: nothing re-read, the time kept.
    set_modified(&file, t2);
    let touched = run(files(), &table, &|_| {}).unwrap();
    assert_eq!(touched.files_read, 0);
    assert_eq!(rules_now()[0].1, us(t1));
    // Changed: one rule added, one removed.
    write(&["Bash(cargo test:*)", "Bash(npm test:*)"], t2);
    let changed = run(files(), &table, &|_| {}).unwrap();
    assert_eq!(changed.files_read, 1);
    assert_eq!(
        rules_now(),
        [
            ("Bash(cargo test:*)".to_string(), us(t2)),
            ("Bash(npm test:*)".to_string(), us(t2))
        ]
    );
    // Gone: its rows are released with it.
    std::fs::remove_file(&file).unwrap();
    run(files(), &table, &|_| {}).unwrap();
    assert!(rules_now().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

mod robustness {
    use leastgrant_ingest::common::BadCounts;
    use leastgrant_ingest::{claude_settings, codex_rules, copilot_permissions};
    use proptest::prelude::*;

    /// Pieces of `.rules` text, so random statements reach deep into the parser.
    const PIECES: &[&str] = &[
        "prefix_rule",
        "(",
        ")",
        "[",
        "]",
        ",",
        "=",
        "pattern",
        "decision",
        "\"allow\"",
        "'prompt'",
        "\"git\"",
        "\"\"\"x\ny\"\"\"",
        "# c\n",
        "\n",
        "\"unterminated",
        "\\",
        "True",
        "12",
        "host_executable",
        "{",
        "}",
        "match",
        "\"a b\"",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let mut bad = BadCounts::default();
            let _ = claude_settings::allow_rules(&bytes, &mut bad);
            let _ = copilot_permissions::locations(&bytes, &mut bad);
            let _ = codex_rules::allow_rules(&String::from_utf8_lossy(&bytes), &mut bad);
        }

        /// Any sequence of statement pieces parses without panicking, and costs nothing read
        /// before it: the rules before a torn statement are kept.
        #[test]
        fn a_torn_statement_costs_only_itself(pieces in proptest::collection::vec(0usize..PIECES.len(), 0..40)) {
            let tail: String = pieces.iter().map(|i| PIECES[*i]).collect::<Vec<_>>().join(" ");
            let text = format!("prefix_rule(pattern = [\"zz\", \"top\"])\n{tail}");
            let mut bad = BadCounts::default();
            let rules = codex_rules::allow_rules(&text, &mut bad);
            prop_assert!(rules.iter().any(|r| r.rule == "Bash(zz top:*)"), "{text}");
        }
    }
}
