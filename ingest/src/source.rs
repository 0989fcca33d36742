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
    /// The files whose contents make up the source at a path: a database's log is part of it,
    /// a ledger's rotations are (oldest first). Their bytes are read into [`Contents`] for
    /// [`Source::read`] and the manifest's hash.
    pub files: fn(&Path) -> Vec<PathBuf>,
    /// The largest file of this source that is read; a larger one is skipped, and named in the
    /// run's summary.
    pub max_file_bytes: u64,
    /// Reads one source's contents into events, counting what it cannot use in `bad`.
    pub read: fn(&Path, &Contents, &mut BadCounts) -> Vec<Event>,
}

/// The largest transcript, export or ledger file read (2 GiB): far above any real one, and a
/// bound on what one file can make a run hold in memory.
pub const MAX_TEXT_FILE_BYTES: u64 = 2 << 30;

/// The bytes of a source's files, one after another in [`Source::files`] order, and where each
/// file's bytes end.
#[derive(Debug, Default)]
pub struct Contents {
    /// Every file's bytes, concatenated.
    pub bytes: Vec<u8>,
    /// Each file and the offset in `bytes` where its bytes end.
    pub ends: Vec<(PathBuf, usize)>,
}

impl Contents {
    /// Adds a file's bytes after those already held.
    pub fn push(&mut self, path: &Path, bytes: Vec<u8>) {
        if self.bytes.is_empty() {
            self.bytes = bytes;
        } else {
            self.bytes.extend_from_slice(&bytes);
        }
        self.ends.push((path.to_path_buf(), self.bytes.len()));
    }

    /// Each file with its own bytes, in order.
    pub fn files(&self) -> impl Iterator<Item = (&Path, &[u8])> {
        let mut start = 0;
        self.ends.iter().map(move |(path, end)| {
            let bytes = self.bytes.get(start..*end).unwrap_or(&[]);
            start = *end;
            (path.as_path(), bytes)
        })
    }
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

/// A source's key: its canonical path — its directory with links and `.`/`..` resolved, and its
/// own name — so one file named through two spellings of its folder is one source. The name
/// itself is kept, not followed: a link is reported, and keyed, as the name it has in the
/// history (a link to `/dev/zero` is named as the link). A path whose directory does not
/// resolve is kept as given.
pub fn canonical(path: &Path) -> PathBuf {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    std::fs::canonicalize(parent)
        .map(|p| p.join(name))
        .unwrap_or_else(|_| path.to_path_buf())
}
