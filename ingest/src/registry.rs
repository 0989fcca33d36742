//! Every source, listed once, and finding their files.
//!
//! Adding a source is one reader module with its `SOURCE` and one line in [`SOURCES`]; the
//! command line's flags and default discovery come from this list.
//!
//! Owns: the sources and their claim order, the [`SourceFile`] a run reads, and discovery (the
//! places given, which must exist, else every source's default places). Must not: read
//! a source or the environment.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::source::{Machine, Source};
use crate::{
    claude, claude_settings, codex, codex_rules, copilot, copilot_permissions, cursor, gemini,
    ledger, otel, specstory,
};

/// Every source, in claim order: of two sources recording the same event (a Claude Code call in
/// a transcript and in the hook's ledger), the earlier in this list owns it.
pub const SOURCES: [&Source; 12] = [
    &claude::SOURCE,
    &specstory::SOURCE,
    &cursor::SOURCE,
    &codex::SOURCE,
    &copilot::SOURCE,
    &gemini::SOURCE,
    &ledger::SOURCE,
    &otel::SOURCE,
    // Standing approvals: rows of their own (never a call another source records).
    &claude_settings::SOURCE,
    &claude_settings::USER_SOURCE,
    &codex_rules::SOURCE,
    &copilot_permissions::SOURCE,
];

/// The sources that annotate rather than record: their events are not rows but what they
/// recorded of calls other sources record (who decided them), joined onto those rows by
/// the decision store (`decisions.rs`, above this module).
const ANNOTATING: [&str; 1] = [otel::SOURCE.kind];

/// Whether the source of stored kind `kind` annotates ([`ANNOTATING`]).
pub fn annotates(kind: &str) -> bool {
    ANNOTATING.contains(&kind)
}

/// The source whose stored kind is `kind`.
pub fn source_of_kind(kind: &str) -> Option<&'static Source> {
    SOURCES.iter().copied().find(|s| s.kind == kind)
}

/// A file to ingest.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Its reader.
    pub source: &'static Source,
    /// Where it is.
    pub path: PathBuf,
}

impl SourceFile {
    /// Where the source sits in [`SOURCES`] (sources not listed there come after, by kind).
    fn rank(&self) -> (usize, &'static str) {
        let kind = self.source.kind;
        let index = SOURCES.iter().position(|s| s.kind == kind);
        (index.unwrap_or(SOURCES.len()), kind)
    }
}

/// Sources in claim order, then paths: the order a run claims events in.
impl Ord for SourceFile {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank()
            .cmp(&other.rank())
            .then_with(|| self.path.cmp(&other.path))
    }
}

impl PartialOrd for SourceFile {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for SourceFile {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for SourceFile {}

/// The files of `source` at one place.
pub fn files_at(source: &'static Source, place: &Path) -> Vec<SourceFile> {
    (source.discover)(place)
        .into_iter()
        .map(|path| SourceFile { source, path })
        .collect()
}

/// A place given for a source that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingPlace {
    /// The source's flag, without dashes.
    pub flag: &'static str,
    /// The place as given.
    pub path: PathBuf,
}

impl std::fmt::Display for MissingPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`--{} {}`: no such file or directory",
            self.flag,
            self.path.display()
        )
    }
}

impl std::error::Error for MissingPlace {}

/// The first place `given` that does not exist, as an error: a place named on purpose that is
/// not there is a mistake to report, not an empty history (a default place that does not exist
/// is passed over).
pub fn check_places(given: &[(&'static Source, Vec<PathBuf>)]) -> Result<(), MissingPlace> {
    let missing = given
        .iter()
        .flat_map(|(source, places)| places.iter().map(move |place| (*source, place)))
        .find(|(_, place)| std::fs::symlink_metadata(place).is_err());
    match missing {
        Some((source, path)) => Err(MissingPlace {
            flag: source.flag.long,
            path: path.clone(),
        }),
        None => Ok(()),
    }
}

/// The files to read: at the places `given` per source when any source has some (a source given
/// none is then not read), else at every source's default places on `machine`. A place that
/// does not exist has no files ([`check_places`] says so first).
pub fn discover(
    given: &[(&'static Source, Vec<PathBuf>)],
    machine: &Machine<'_>,
) -> Vec<SourceFile> {
    let explicit = given.iter().any(|(_, places)| !places.is_empty());
    let mut files = Vec::new();
    for source in SOURCES {
        let places: Vec<PathBuf> = if explicit {
            given
                .iter()
                .filter(|(s, _)| s.kind == source.kind)
                .flat_map(|(_, places)| places.iter().cloned())
                .collect()
        } else {
            (source.default_places)(machine)
        };
        for place in places {
            files.extend(files_at(source, &place));
        }
    }
    files
}
