//! What a source of agent history is: the [`Source`] each reader describes itself with, and the
//! [`Machine`] its default places are found on.
//!
//! Owns: the shape every reader fills in (its stored kind name, its command-line flag, where it
//! lives by default, how a place becomes files, which files make up one source, how one is read).
//! Must not: know any particular source (each reader defines its own `SOURCE`, and the registry
//! lists them) or read the environment (the caller hands it in through [`Machine`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::common::BadCounts;
use crate::schema::Event;

/// One kind of agent history and everything the ingest needs to know about it. Each reader
/// module defines one as its `SOURCE`; `registry::SOURCES` lists them all.
#[derive(Debug)]
pub struct Source {
    /// The stored name: the `source_kind` column and the manifest's `kind` (`claude-jsonl`).
    pub kind: &'static str,
    /// The `leastgrant ingest` flag naming places of this source.
    pub flag: Flag,
    /// The places this source has on a machine by default (directories or files, as `discover`
    /// takes them); only those that exist, where the reader says so.
    pub default_places: fn(&Machine<'_>) -> Vec<PathBuf>,
    /// The source files at one place (a directory's transcripts, or the file itself).
    pub discover: fn(&Path) -> Vec<PathBuf>,
    /// The files whose contents make up the source at a path: a database's log is part of it.
    /// Their bytes are read and concatenated for [`Source::read`] and the manifest's hash.
    pub files: fn(&Path) -> Vec<PathBuf>,
    /// Reads one source's bytes into events, counting what it cannot use in `bad`.
    pub read: fn(&Path, &[u8], &mut BadCounts) -> Vec<Event>,
}

/// A source's command-line flag: `--<long> <VALUE_NAME>`, repeatable.
#[derive(Debug)]
pub struct Flag {
    /// The long name, without dashes.
    pub long: &'static str,
    /// The value's name in the help (`DIR`, `PATH`).
    pub value_name: &'static str,
    /// The help line, with the default places.
    pub help: &'static str,
}

/// What default places depend on, read by the caller: the library reads no environment.
pub struct Machine<'a> {
    /// The user's home directory.
    pub home: &'a Path,
    /// The current directory.
    pub cwd: &'a Path,
    /// leastgrant's state directory (where the hook's ledger is).
    pub state_dir: &'a Path,
    /// An environment variable's value, if set.
    pub env: &'a dyn Fn(&str) -> Option<OsString>,
}

/// The `files` of a source that is one file, and the `discover` of a place that is the file.
pub fn just_the_file(path: &Path) -> Vec<PathBuf> {
    vec![path.to_path_buf()]
}
