//! Shared test helpers: where the real samples are, scratch directories, a source read or
//! discovered as the run does it, and the comparison of what a case expects with what was read.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::registry::{SourceFile, discover};
use leastgrant_ingest::schema::Event;
use leastgrant_ingest::source::{Contents, Machine, Source};

/// `../shared/datasets/<rest>` relative to the workspace root, when it exists.
pub fn shared(rest: &str) -> Option<PathBuf> {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/datasets"
    ))
    .join(rest);
    path.exists().then_some(path)
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leastgrant-ingest-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn data(rest: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(rest)
}

/// A place read by `source` as the run reads it: its files' bytes gathered, then read whole.
pub fn read_source(source: &Source, path: &Path, bad: &mut BadCounts) -> Vec<Event> {
    let mut contents = Contents::default();
    for file in (source.files)(path) {
        contents.push(&file, std::fs::read(&file).unwrap());
    }
    (source.read)(path, &contents, bad)
}

/// The files of `source` that default discovery finds under `home` (no environment variable
/// set; the state directory is `<cwd>/state`).
pub fn discovered(source: &Source, home: &Path, cwd: &Path) -> Vec<SourceFile> {
    let none = |_: &str| -> Option<OsString> { None };
    let machine = Machine {
        home,
        cwd,
        state_dir: &cwd.join("state"),
        env: &none,
    };
    discover(&[], &machine)
        .into_iter()
        .filter(|f| f.source.kind == source.kind)
        .collect()
}

/// What the agents' cases pin of a call: its outcome and the rule that gave it, and, where the
/// case names them, the tool, the command and the file path (a case's `#[serde(flatten)]`
/// part).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Pinned {
    pub outcome: String,
    pub rule: String,
    pub tool: Option<String>,
    pub command: Option<String>,
    pub file_path: Option<String>,
}

/// Differences between what a case expects and what was read, reported together at the end.
#[derive(Default)]
pub struct Mismatches(pub Vec<String>);

impl Mismatches {
    /// Notes a difference when `want` is given and `got` differs.
    pub fn check<T: PartialEq + std::fmt::Debug>(
        &mut self,
        case: &str,
        what: &str,
        got: Option<T>,
        want: Option<T>,
    ) {
        if want.is_some() && got != want {
            self.0
                .push(format!("{case}: {what} {got:?}, expected {want:?}"));
        }
    }

    /// Notes every difference between a call as read and what its case pins.
    pub fn call(&mut self, case: &str, event: &Event, want: &Pinned) {
        self.check(
            case,
            "outcome",
            Some(event.outcome.as_str()),
            Some(want.outcome.as_str()),
        );
        self.check(
            case,
            "rule",
            Some(event.outcome_rule.as_str()),
            Some(want.rule.as_str()),
        );
        self.check(case, "tool", Some(&event.tool_name), want.tool.as_ref());
        self.check(
            case,
            "command",
            event.command.as_ref(),
            want.command.as_ref(),
        );
        self.check(
            case,
            "file_path",
            event.file_path.as_ref(),
            want.file_path.as_ref(),
        );
    }

    /// Notes a free-form failure.
    pub fn fail(&mut self, message: String) {
        self.0.push(message);
    }

    /// Fails the test with every difference found.
    pub fn assert_none(&self) {
        assert!(self.0.is_empty(), "{}", self.0.join("\n"));
    }
}
