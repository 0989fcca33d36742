//! The decision ledger: one line per decision and per call that ran, appended by many hook
//! processes at once (docs/formats.md, "Decision ledger").
//!
//! Each line is one `write` on a file opened with `O_APPEND`, so concurrent appends neither
//! interleave nor overwrite. Rotation renames under an exclusive lock; a writer that opened the
//! file just before a rotation appends to the renamed file, so no line is lost.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::layout;
use crate::payload::ascii_json;

/// Past this size the ledger is rotated.
pub const ROTATE_AT: u64 = 16 * 1024 * 1024;

/// Rotated files kept (`ledger.jsonl.1` … `.3`).
const KEPT: u32 = 3;

/// Longest string kept from a tool input.
const MAX_STRING: usize = 4096;

/// The ledger of a state directory.
#[derive(Debug, Clone)]
pub struct Ledger {
    path: PathBuf,
    rotate_at: u64,
}

impl Ledger {
    /// The ledger in `state_dir`.
    pub fn new(state_dir: &Path) -> Ledger {
        Ledger {
            path: layout::ledger_path(state_dir),
            rotate_at: ROTATE_AT,
        }
    }

    /// The same ledger, rotated at a different size (tests).
    pub fn rotating_at(mut self, bytes: u64) -> Ledger {
        self.rotate_at = bytes;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line. Errors are returned for the caller to report; they never change a
    /// verdict.
    pub fn append(&self, line: &Value) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir)?;
        }
        let mut text = ascii_json(line);
        text.push('\n');
        let mut file = open_append(&self.path)?;
        file.write_all(text.as_bytes())?;
        if file.metadata().map(|m| m.len()).unwrap_or(0) > self.rotate_at {
            self.rotate()?;
        }
        Ok(())
    }

    fn rotate(&self) -> std::io::Result<()> {
        let lock_path = self.path.with_extension("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)?;
        lock.lock()?;
        // Another process may have rotated while this one waited.
        let still_big = fs::metadata(&self.path)
            .map(|m| m.len() > self.rotate_at)
            .unwrap_or(false);
        if still_big {
            for n in (1..KEPT).rev() {
                let from = rotated(&self.path, n);
                if from.exists() {
                    fs::rename(&from, rotated(&self.path, n + 1))?;
                }
            }
            fs::rename(&self.path, rotated(&self.path, 1))?;
        }
        lock.unlock()
    }
}

fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

fn open_append(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Creates the state directory owner-only when it does not exist.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A tool input with every long string cut, so one huge `Write` cannot make a huge line.
pub fn cut_long_strings(value: &Value) -> Value {
    match value {
        Value::String(s) if s.len() > MAX_STRING => {
            let mut end = MAX_STRING;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            Value::String(format!("{}…[cut]", s.get(..end).unwrap_or("")))
        }
        Value::Array(items) => Value::Array(items.iter().map(cut_long_strings).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), cut_long_strings(v)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}
