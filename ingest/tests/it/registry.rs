//! The source registry: every source listed once with its own kind and flag, the claim order,
//! and discovery from a machine's default places or from the places given.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use leastgrant_ingest::registry::{SOURCES, SourceFile, discover};
use leastgrant_ingest::source::{Machine, Source};

use crate::support::scratch;

fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, b"").unwrap();
}

/// The files found, by source kind, as paths relative to `root`.
fn by_kind(files: &[SourceFile], root: &Path) -> BTreeMap<&'static str, BTreeSet<String>> {
    let mut found: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.path.strip_prefix(root).unwrap();
        found
            .entry(file.source.kind)
            .or_default()
            .insert(relative.display().to_string());
    }
    found
}

fn expected(pairs: &[(&'static str, &[&str])]) -> BTreeMap<&'static str, BTreeSet<String>> {
    pairs
        .iter()
        .map(|(kind, paths)| (*kind, paths.iter().map(|p| p.to_string()).collect()))
        .collect()
}

/// A home with every source in its default place, a state directory and a project with a
/// SpecStory history; the current directory is inside the project.
struct Home {
    root: PathBuf,
    home: PathBuf,
    cwd: PathBuf,
    state: PathBuf,
}

impl Home {
    fn new(name: &str) -> Home {
        let root = scratch(name);
        let home = root.join("home");
        touch(&home.join(".claude/projects/-w-app/s1.jsonl"));
        touch(&home.join(".claude/projects/-w-app/journal.jsonl"));
        touch(&home.join(".config/claude/projects/-w-lib/s2.jsonl"));
        touch(&home.join(".codex/sessions/2026/03/01/rollout-a.jsonl"));
        touch(&home.join(".codex/archived_sessions/rollout-b.jsonl"));
        touch(&home.join(".codex/sessions/notes.jsonl"));
        touch(&home.join(".config/Cursor/User/globalStorage/state.vscdb"));
        touch(&home.join(".copilot/session-state/s-1/events.jsonl"));
        touch(&home.join(".copilot/session-state/s-1/workspace.yaml"));
        touch(&home.join(".gemini/tmp/abc123/chats/session-1.jsonl"));
        touch(&home.join(".gemini/tmp/abc123/logs.json"));
        let state = root.join("state");
        touch(&state.join("ledger.jsonl"));
        touch(&state.join("ledger.jsonl.2"));
        touch(&root.join("project/.specstory/history/a.md"));
        touch(&root.join("project/.specstory/history/notes.txt"));
        let cwd = root.join("project/src/deep");
        std::fs::create_dir_all(&cwd).unwrap();
        Home {
            root,
            home,
            cwd,
            state,
        }
    }

    fn discover(
        &self,
        given: &[(&'static Source, Vec<PathBuf>)],
        env: &[(&str, PathBuf)],
    ) -> Vec<SourceFile> {
        let lookup = |name: &str| {
            env.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        };
        let machine = Machine {
            home: &self.home,
            cwd: &self.cwd,
            state_dir: &self.state,
            env: &lookup,
        };
        discover(given, &machine)
    }
}

#[test]
fn every_source_has_its_own_kind_and_flag() {
    let kinds: BTreeSet<&str> = SOURCES.iter().map(|s| s.kind).collect();
    let flags: BTreeSet<&str> = SOURCES.iter().map(|s| s.flag.long).collect();
    assert_eq!(kinds.len(), SOURCES.len());
    assert_eq!(flags.len(), SOURCES.len());
    // The ingest command's own flags.
    assert!(!flags.contains("out") && !flags.contains("json"));
}

/// Whatever the paths, a Claude Code transcript claims an event before the ledger recording the
/// same call, and a file named twice is read once.
#[test]
fn files_sort_by_claim_order_then_path() {
    let file = |source: &'static Source, path: &str| SourceFile {
        source,
        path: PathBuf::from(path),
    };
    let mut files = vec![
        file(&leastgrant_ingest::ledger::SOURCE, "/a/ledger.jsonl"),
        file(&leastgrant_ingest::claude::SOURCE, "/z/s2.jsonl"),
        file(&leastgrant_ingest::claude::SOURCE, "/y/s1.jsonl"),
        file(&leastgrant_ingest::ledger::SOURCE, "/a/ledger.jsonl"),
    ];
    files.sort();
    files.dedup();
    let order: Vec<(&str, &str)> = files
        .iter()
        .map(|f| (f.source.kind, f.path.to_str().unwrap()))
        .collect();
    assert_eq!(
        order,
        [
            ("claude-jsonl", "/y/s1.jsonl"),
            ("claude-jsonl", "/z/s2.jsonl"),
            ("ledger", "/a/ledger.jsonl"),
        ]
    );
}

#[test]
fn nothing_given_finds_every_source_in_its_default_places() {
    let home = Home::new("registry-defaults");
    let found = by_kind(&home.discover(&[], &[]), &home.root);
    assert_eq!(
        found,
        expected(&[
            (
                "claude-jsonl",
                &[
                    "home/.claude/projects/-w-app/s1.jsonl",
                    "home/.config/claude/projects/-w-lib/s2.jsonl",
                ]
            ),
            (
                "codex-jsonl",
                &[
                    "home/.codex/sessions/2026/03/01/rollout-a.jsonl",
                    "home/.codex/archived_sessions/rollout-b.jsonl",
                ]
            ),
            (
                "copilot-jsonl",
                &["home/.copilot/session-state/s-1/events.jsonl"]
            ),
            (
                "cursor-vscdb",
                &["home/.config/Cursor/User/globalStorage/state.vscdb"]
            ),
            (
                "gemini-chats",
                &["home/.gemini/tmp/abc123/chats/session-1.jsonl"]
            ),
            // One ledger: its rotations are its files, read with it.
            ("ledger", &["state/ledger.jsonl"]),
            ("specstory", &["project/.specstory/history/a.md"]),
        ])
    );
}

/// `$CLAUDE_CONFIG_DIR` and `$CODEX_HOME` replace the home's places; `$APPDATA` adds Cursor's
/// Windows place.
#[test]
fn the_environment_moves_the_default_places() {
    let home = Home::new("registry-env");
    let elsewhere = home.root.join("elsewhere");
    touch(&elsewhere.join("claude/projects/-w-x/s3.jsonl"));
    touch(&elsewhere.join("codex/sessions/rollout-c.jsonl"));
    touch(&elsewhere.join("AppData/Cursor/User/globalStorage/state.vscdb"));
    let env = [
        ("CLAUDE_CONFIG_DIR", elsewhere.join("claude")),
        ("CODEX_HOME", elsewhere.join("codex")),
        ("APPDATA", elsewhere.join("AppData")),
    ];
    let found = by_kind(&home.discover(&[], &env), &home.root);
    let set = |paths: &[&str]| paths.iter().map(|p| p.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        found["claude-jsonl"],
        set(&["elsewhere/claude/projects/-w-x/s3.jsonl"])
    );
    assert_eq!(
        found["codex-jsonl"],
        set(&["elsewhere/codex/sessions/rollout-c.jsonl"])
    );
    assert_eq!(
        found["cursor-vscdb"],
        set(&[
            "home/.config/Cursor/User/globalStorage/state.vscdb",
            "elsewhere/AppData/Cursor/User/globalStorage/state.vscdb",
        ])
    );
}

/// Places given for one source: only that source is read, the others' defaults are not.
#[test]
fn places_given_replace_every_default() {
    let home = Home::new("registry-given");
    let history = home.root.join("project/.specstory/history");
    let given = vec![
        (&leastgrant_ingest::specstory::SOURCE, vec![history]),
        (&leastgrant_ingest::codex::SOURCE, Vec::new()),
    ];
    let found = by_kind(&home.discover(&given, &[]), &home.root);
    assert_eq!(
        found,
        expected(&[("specstory", &["project/.specstory/history/a.md"])])
    );
}
