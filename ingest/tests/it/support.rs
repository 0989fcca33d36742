//! Shared test helpers: where the real samples are, and scratch directories.

use std::path::PathBuf;

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

    /// Notes a free-form failure.
    pub fn fail(&mut self, message: String) {
        self.0.push(message);
    }

    /// Fails the test with every difference found.
    pub fn assert_none(&self) {
        assert!(self.0.is_empty(), "{}", self.0.join("\n"));
    }
}
