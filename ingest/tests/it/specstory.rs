//! The SpecStory reader: synthetic exports read into exact events (a Claude Code session, a Codex
//! CLI session, a cut-off file, Cursor's double rendering, a file without a header), and the
//! pinned counts of the real getspecstory samples.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use leastgrant_ingest::common::{BadCounts, parse_timestamp_us, project_key, stable_id};
use leastgrant_ingest::project::{self, Placing};
use leastgrant_ingest::schema::{Event, Outcome};
use leastgrant_ingest::specstory::read_specstory;
use serde::Deserialize;

use crate::support::*;

const CLAUDE: &str =
    "specstory/claude/.specstory/history/2026-03-01_10-00-00Z-the-widget-build-fails.md";
const CODEX: &str = "specstory/codex/.specstory/history/2026-03-02_09-00-00Z-list-the-docs.md";
const CUT_OFF: &str = "specstory/broken/2026-03-03_08-00-00Z-cut-off.md";

/// An export read and placed in its project, as ingest does.
fn read(path: &Path) -> (Vec<Event>, BadCounts) {
    let mut bad = BadCounts::default();
    let mut events = read_specstory(path, &std::fs::read_to_string(path).unwrap(), &mut bad);
    project::place(&mut events, &Placing::default());
    (events, bad)
}

fn bad_counts(pairs: &[(&str, u64)]) -> BadCounts {
    BadCounts(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
}

/// What every event of one file shares.
struct Fixture {
    path: PathBuf,
    agent: &'static str,
    session: &'static str,
    root: String,
}

impl Fixture {
    /// A call that ran with a result; tests override the rest.
    fn call(&self, seq: u32, line: usize, id: &str, time: &str, tool: &str, input: &str) -> Event {
        Event {
            event_id: id.to_string(),
            agent: self.agent.to_string(),
            agent_version: None,
            source: format!("{}:{line}", self.path.display()),
            source_kind: "specstory".to_string(),
            project_key: project_key(&self.root),
            project_root: self.root.clone(),
            session_id: self.session.to_string(),
            seq,
            ts_us: parse_timestamp_us(time),
            cwd: None,
            git_branch: None,
            permission_mode: None,
            attended: None,
            tool_name: tool.to_string(),
            tool_input: input.to_string(),
            command: None,
            file_path: None,
            outcome: Outcome::Ran,
            is_error: None,
            is_sidechain: false,
            tool_use_id: None,
            outcome_rule: "result".to_string(),
            denial_kind: None,
            result_excerpt: None,
            decided_by: None,
        }
    }
}

fn text(s: &str) -> Option<String> {
    Some(s.to_string())
}

const REFUSAL: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

#[test]
fn a_claude_code_session_reads_into_exact_events() {
    let path = data(CLAUDE);
    let f = Fixture {
        // It reads `./widget/src/lib.rs` and edits `/home/dev/widgets/widget/src/lib.rs`: it
        // worked in `/home/dev/widgets`, wherever the export now sits.
        root: "/home/dev/widgets".to_string(),
        path,
        agent: "claude-code",
        session: "5f0c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f",
    };
    let (events, bad) = read(&f.path);
    let expected = vec![
        // Entities decoded; `Exit code 1` is Claude Code's failed-command result.
        Event {
            command: text(r#"cargo build -p widget 2>&1 | grep -c "error" && echo <done>"#),
            outcome: Outcome::Errored,
            outcome_rule: "is-error".to_string(),
            is_error: Some(true),
            result_excerpt: text("Exit code 1\nerror[E0425]: cannot find value `count` in this scope"),
            ..f.call(
                0,
                26,
                "3bdeaec826ddac09",
                "2026-03-01T10:00:07Z",
                "Bash",
                r#"{"command":"cargo build -p widget 2>&1 | grep -c \"error\" && echo <done>","description":"Build the widget crate"}"#,
            )
        },
        Event {
            file_path: text("./widget/src/lib.rs"),
            result_excerpt: text("     1→pub fn total() -> u32 {\n     2→    count + 1\n     3→}"),
            ..f.call(1, 40, "12302aafa086652d", "2026-03-01T10:00:09Z", "Read", r#"{"file_path":"./widget/src/lib.rs"}"#)
        },
        // Edit shows no input; its result names the file.
        Event {
            file_path: text("/home/dev/widgets/widget/src/lib.rs"),
            result_excerpt: text("The file /home/dev/widgets/widget/src/lib.rs has been updated successfully."),
            ..f.call(
                2,
                53,
                "ea80b952765e4a7d",
                "2026-03-01T10:00:12Z",
                "Edit",
                r#"{"file_path":"/home/dev/widgets/widget/src/lib.rs"}"#,
            )
        },
        Event {
            file_path: text("./widget"),
            is_sidechain: true,
            result_excerpt: text("Found 1 file\nwidget/src/lib.rs"),
            ..f.call(3, 63, "29d7098b148951ce", "2026-03-01T10:00:14Z", "Grep", r#"{"path":"./widget","pattern":"count"}"#)
        },
        Event {
            command: text("cargo publish -p widget"),
            outcome: Outcome::Refused,
            outcome_rule: "refusal-text".to_string(),
            result_excerpt: text(REFUSAL),
            ..f.call(
                4,
                75,
                "475a2010f2738038",
                "2026-03-01T10:00:20Z",
                "Bash",
                r#"{"command":"cargo publish -p widget","description":"Publish the crate"}"#,
            )
        },
        // No result, then the user's interrupt marker.
        Event {
            command: text("for attempt in 1 2 3; do\n  cargo test -p widget && break\ndone"),
            outcome: Outcome::Interrupted,
            outcome_rule: "specstory-interrupt-marker".to_string(),
            ..f.call(
                5,
                100,
                "6aaa93e08de3fb77",
                "2026-03-01T10:00:44Z",
                "Bash",
                r#"{"command":"for attempt in 1 2 3; do\n  cargo test -p widget && break\ndone","description":"Run the widget tests, retrying flaky ones"}"#,
            )
        },
        // A quiet command: SpecStory shows no result.
        Event {
            command: text("cargo fmt --check"),
            outcome_rule: "specstory-no-result".to_string(),
            ..f.call(
                6,
                125,
                "e787e87f4a958400",
                "2026-03-01T10:02:18Z",
                "Bash",
                r#"{"command":"cargo fmt --check","description":"Check the formatting"}"#,
            )
        },
    ];
    assert_eq!(events, expected);
    assert!(bad.is_empty(), "{bad:?}");
    // The id is the session's, the call's position and its content: not the file's name.
    let first = &events[0];
    assert_eq!(
        first.event_id,
        stable_id(&[
            "specstory",
            "claude-code",
            f.session,
            "0",
            "Bash",
            &first.tool_input
        ])
    );
}

#[test]
fn a_codex_session_reads_into_exact_events() {
    let path = data(CODEX);
    let f = Fixture {
        root: data("specstory/codex").display().to_string(),
        path,
        agent: "codex",
        session: "019d0000-aaaa-7bbb-8ccc-000000000001",
    };
    let (events, bad) = read(&f.path);
    let expected = vec![
        // A one-line command sits in the summary.
        Event {
            command: text("ls -1 docs && wc -l docs/*.md"),
            result_excerpt: text(
                "Chunk ID: 0a1b2c\nWall time: 0.0100 seconds\nProcess exited with code 0\nOutput:\nguide.md\n  12 docs/guide.md",
            ),
            ..f.call(
                0,
                15,
                "f77a00928184d362",
                "2026-03-02T09:00:03Z",
                "exec_command",
                r#"{"command":"ls -1 docs && wc -l docs/*.md"}"#,
            )
        },
        // A multi-line one in a bash fence, before the result's fence.
        Event {
            command: text("cat > CHANGELOG.md <<'END'\n# Changelog\nEND"),
            result_excerpt: text(
                "Chunk ID: 0a1b2d\nWall time: 0.0050 seconds\nProcess exited with code 0\nOutput:",
            ),
            ..f.call(
                1,
                29,
                "444da0bb4ddd8ef3",
                "2026-03-02T09:00:06Z",
                "exec_command",
                r#"{"command":"cat > CHANGELOG.md <<'END'\n# Changelog\nEND"}"#,
            )
        },
        // The diff is input, not a result.
        Event {
            outcome_rule: "specstory-no-result".to_string(),
            ..f.call(
                2,
                46,
                "f4b78ef107f6970c",
                "2026-03-02T09:00:09Z",
                "apply_patch",
                r#"{"summary":"**Update: `docs/guide.md`**"}"#,
            )
        },
    ];
    assert_eq!(events, expected);
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn a_cut_off_export_is_counted_and_read_on() {
    let path = data(CUT_OFF);
    // Not under `.specstory/history`: the project is the directory Claude Code reset to.
    let f = Fixture {
        path,
        agent: "claude-code",
        session: "7a7a7a7a-0000-4000-8000-000000000003",
        root: "/home/dev/app".to_string(),
    };
    let (events, bad) = read(&f.path);
    let expected = vec![
        // Its closing tag is missing: it ends at the next header.
        Event {
            command: text("cd /tmp && pwd"),
            result_excerpt: text("/tmp\n\nShell cwd was reset to /home/dev/app"),
            ..f.call(
                0,
                15,
                "9d26b1aa4df71be2",
                "2026-03-03T08:00:02Z",
                "Bash",
                r#"{"command":"cd /tmp && pwd","description":"Show the working directory"}"#,
            )
        },
        Event {
            file_path: text("/home/dev/app/README.md"),
            result_excerpt: text("     1→# App"),
            ..f.call(
                1,
                29,
                "ed7fd8f288cbd2b4",
                "2026-03-03T08:00:05Z",
                "Read",
                r#"{"file_path":"/home/dev/app/README.md"}"#,
            )
        },
        // The file ends inside this call's result.
        Event {
            command: text("ls -la"),
            result_excerpt: text("total 0"),
            ..f.call(
                2,
                40,
                "1fcf002aec3318ca",
                "2026-03-03T08:00:07Z",
                "Bash",
                r#"{"command":"ls -la","description":"List the files"}"#,
            )
        },
    ];
    assert_eq!(events, expected);
    assert_eq!(
        bad,
        bad_counts(&[
            ("specstory-unclosed-result-fence", 1),
            ("specstory-unterminated-tool-use", 2)
        ])
    );
}

#[test]
fn a_session_saved_under_two_names_has_the_same_event_ids() {
    let original = data(CLAUDE);
    let text = std::fs::read_to_string(&original).unwrap();
    let copy = original.with_file_name("2026-03-01_10-00-00Z.md");
    let mut bad = BadCounts::default();
    let first = read_specstory(&original, &text, &mut bad);
    let second = read_specstory(&copy, &text, &mut bad);
    let ids = |events: &[Event]| {
        events
            .iter()
            .map(|e| e.event_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&first), ids(&second));
    assert_ne!(first[0].source, second[0].source);
}

#[test]
fn an_export_without_a_header_gets_a_session_from_its_name() {
    let text = "# 2026-03-04 12:00:00Z\n\n_**Agent (m 2026-03-04 12:00:01Z)**_\n\n<tool-use data-tool-type=\"read\" data-tool-name=\"Read\"><details>\n<summary>Tool use: **Read**</summary>\n `notes.txt`\n</details></tool-use>\n";
    let mut bad = BadCounts::default();
    let events = read_specstory(
        Path::new("/work/app/.specstory/history/2026-03-04_12-00-00Z-notes.md"),
        text,
        &mut bad,
    );
    assert_eq!(bad, bad_counts(&[("specstory-no-session-header", 1)]));
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(
        (e.agent.as_str(), e.session_id.clone()),
        ("unknown", stable_id(&["2026-03-04_12-00-00Z-notes"]))
    );
    assert_eq!(
        (e.project_root.as_str(), e.file_path.as_deref()),
        ("/work/app", Some("notes.txt"))
    );
    assert_eq!(
        (e.outcome, e.outcome_rule.as_str()),
        (Outcome::Ran, "specstory-no-result")
    );
}

/// A copied export (no working directory in the text): the project is the root of the absolute
/// paths the session touched (its agent's own plan file is not evidence), wherever the copy
/// sits, not the copy's directory (which made every edit look like a write outside the project).
#[test]
fn a_copied_export_finds_its_project_from_the_paths_it_touches() {
    let block = |path: &str| {
        format!(
            "<tool-use data-tool-type=\"write\" data-tool-name=\"Edit\"><details>\n<summary>Tool use: **Edit**</summary>\n\n```json\n{{\"file_path\": \"{path}\", \"old_string\": \"a\", \"new_string\": \"b\"}}\n```\n</details></tool-use>\n"
        )
    };
    let text = format!(
        "<!-- Claude Code Session 11111111-2222-3333-4444-555555555555 (2026-03-04 12:00:00Z) -->\n\n_**Agent (m 2026-03-04 12:00:01Z)**_\n\n{}{}{}",
        block("/Users/dev/src/webapp/lib/a.go"),
        block("/Users/dev/src/webapp/cmd/main.go"),
        block("/Users/dev/.claude/plans/p.md"),
    );
    for copy in [
        "/data/exports/webapp/history/2026-03-04_12-00-00Z-edit.md",
        "/data/exports/other/history/2026-03-04_12-00-00Z-edit.md",
        "/data/exports/.specstory/history/2026-03-04_12-00-00Z-edit.md",
    ] {
        let mut bad = BadCounts::default();
        let mut events = read_specstory(Path::new(copy), &text, &mut bad);
        assert_eq!(events.len(), 3, "{bad:?}");
        let bases = project::place(&mut events, &Placing::default());
        assert!(
            events
                .iter()
                .all(|e| e.project_root == "/Users/dev/src/webapp"
                    && e.project_key == "/users/dev/src/webapp"),
            "{copy}: {:?}",
            events.iter().map(|e| &e.project_root).collect::<Vec<_>>()
        );
        assert!(
            bases.iter().all(|b| *b == project::Basis::Touched),
            "{bases:?}"
        );
    }
}

#[test]
fn cursor_renders_one_call_twice() {
    // A Cursor IDE export puts the call in the message text, then again, empty, as the tool.
    let text = "<!-- Cursor IDE Session c0c0c0c0-1111-2222-3333-444444444444 (2026-03-05 09:00:00Z) -->\n\n\
_**User (2026-03-05 09:00:00Z)**_\n\nWhy does it not compile?\n\n---\n\n\
_**Agent (test-model)**_\n\n\
<tool-use data-tool-type=\"read\" data-tool-name=\"read_file\">\n<details><summary>Tool use: **read_file** • Read file: src/&#96;odd&#96; name.rs</summary>\n\n</details>\n</tool-use>\n\n\
<tool-use data-tool-type=\"read\" data-tool-name=\"read_file\"><details>\n<summary>Tool use: **read_file**</summary>\n\n</details></tool-use>\n\n\
_**Agent (test-model)**_\n\nA field is missing.\n";
    let mut bad = BadCounts::default();
    let events = read_specstory(
        Path::new("/work/app/.specstory/history/2026-03-05_09-00-00Z.md"),
        text,
        &mut bad,
    );
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(
        (e.agent.as_str(), e.tool_name.as_str()),
        ("cursor", "read_file")
    );
    assert_eq!(e.file_path.as_deref(), Some("src/`odd` name.rs"));
    assert_eq!((e.ts_us, e.source.ends_with(":11")), (None, true));
}

#[derive(Deserialize)]
struct SampleCounts {
    files: usize,
    calls: usize,
    sidechain: usize,
    untimed: usize,
    distinct_event_ids: usize,
    agents: BTreeMap<String, usize>,
    outcomes: BTreeMap<String, usize>,
    rules: BTreeMap<String, usize>,
}

#[test]
fn the_real_samples_have_the_pinned_counts() {
    let Some(root) = shared("specstory/getspecstory/history") else {
        println!("skipped: ../shared/datasets/specstory/getspecstory/history is absent");
        return;
    };
    let expected: SampleCounts =
        toml::from_str(&std::fs::read_to_string(data("specstory_counts.toml")).unwrap()).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    assert_eq!(files.len(), expected.files);
    let mut bad = BadCounts::default();
    let mut events = Vec::new();
    for path in &files {
        events.extend(read_specstory(
            path,
            &std::fs::read_to_string(path).unwrap(),
            &mut bad,
        ));
    }
    assert!(bad.is_empty(), "{bad:?}");
    let tally = |key: fn(&Event) -> String| {
        let mut counts = BTreeMap::new();
        for e in &events {
            *counts.entry(key(e)).or_insert(0) += 1;
        }
        counts
    };
    assert_eq!(events.len(), expected.calls);
    assert_eq!(tally(|e| e.agent.clone()), expected.agents);
    assert_eq!(tally(|e| e.outcome.as_str().to_string()), expected.outcomes);
    assert_eq!(tally(|e| e.outcome_rule.clone()), expected.rules);
    assert_eq!(
        events.iter().filter(|e| e.is_sidechain).count(),
        expected.sidechain
    );
    assert_eq!(
        events.iter().filter(|e| e.ts_us.is_none()).count(),
        expected.untimed
    );
    let ids: BTreeSet<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
    assert_eq!(ids.len(), expected.distinct_event_ids);
    for e in &events {
        assert!(e.attended.is_none() && e.permission_mode.is_none() && e.agent_version.is_none());
        let shell = matches!(e.tool_name.as_str(), "Bash" | "exec_command");
        assert_eq!(shell, e.command.is_some(), "{}: {}", e.source, e.tool_input);
    }
}

#[test]
fn fragments_of_the_format_never_panic() {
    let fragments = [
        "<tool-use",
        "_**Agent**_\n<tool-use>\n<summary>",
        "_**Agent**_\n\n<tool-use data-tool-name=\"X\"><details>\n<summary>Tool use: **",
        "_**Agent (x)**_\n<tool-use data-tool-type=\"generic\" data-tool-name=\"G\"><details>\n<summary>Tool use: **G**</summary>\n**Input:**\n- plan: `abc\n",
        "_**Agent**_\n<tool-use data-tool-type=\"shell\" data-tool-name=\"Bash\"><details>\n```text\n",
        "&#xFFFFFFFF; &#55296; & &amp",
        "\u{feff}_**Agent (é 2026-13-40 99:99:99-9999)**_",
    ];
    for fragment in fragments {
        let mut bad = BadCounts::default();
        let _ = read_specstory(Path::new(""), fragment, &mut bad);
    }
}
