//! The decision ledger: one line per decision and per call that ran, appended by many hook
//! processes at once (docs/formats.md, "Decision ledger").
//!
//! Each line is one `write` on a file opened with `O_APPEND`, so concurrent appends neither
//! interleave nor overwrite. Rotation renames under an exclusive lock; a writer that opened the
//! file just before a rotation appends to the renamed file, so no line is lost (it would take
//! [`KEPT`] further rotations between its open and its write to lose one).
//!
//! The bound: a line is at most [`MAX_LINE`] bytes (a decision line is 0.5–1 KB: docs/formats.md);
//! the ledger is rotated once it passes [`ROTATE_AT`], by the writer that saw it pass, and
//! [`KEPT`] rotations are kept, so the ledger's files hold at most
//! `(KEPT + 1) × (ROTATE_AT + writers × MAX_LINE)` bytes, where `writers` is how many hook
//! processes append between one crossing the size and its rotation (the processes running at
//! once). The ledger and
//! its lock are opened without following a link or blocking on a FIFO, created owner-only, and
//! must be regular files of this user's that no one else can write (`files.rs`): the ledger
//! becomes evidence when it is ingested, so a planted one is refused, and the hook asks.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::files::{self, FileError, Trust};
use crate::layout;
use crate::payload::ascii_json;

/// Past this size the ledger is rotated.
pub const ROTATE_AT: u64 = 16 * 1024 * 1024;

/// Rotated files kept (`ledger.jsonl.1` … `.3`; ingest reads the same three).
pub const KEPT: u32 = 3;

/// Longest string kept from a tool input.
const MAX_STRING: usize = 4096;

/// The longest line written, newline included: a line past it is written again with its
/// strings and lists cut shorter, and at last with its large fields replaced by their size.
pub const MAX_LINE: usize = 16 * 1024;

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

    /// Whether the ledger can be trusted and appended to: in directories no one else can write,
    /// and, where it exists, a regular file of this user's that no one else can write.
    pub fn check(&self) -> Result<(), FileError> {
        let base = self.path.parent().unwrap_or(&self.path);
        files::check_dirs(base, &self.path)?;
        match fs::symlink_metadata(&self.path) {
            Err(_) => Ok(()),
            Ok(meta) if meta.file_type().is_symlink() => Err(FileError {
                path: self.path.clone(),
                problem: files::Problem::Link,
            }),
            Ok(meta) if !meta.is_file() => Err(FileError {
                path: self.path.clone(),
                problem: files::Problem::NotRegular(files::kind(&meta)),
            }),
            Ok(meta) => files::check_trusted(&self.path, &meta, Trust::Owner),
        }
    }

    /// Appends one line. Errors are returned for the caller to report; they never change a
    /// verdict.
    pub fn append(&self, line: &Value) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            files::create_private_dir(dir)?;
        }
        let text = fitted(line);
        let mut file = files::open_append(&self.path).map_err(std::io::Error::other)?;
        file.write_all(text.as_bytes())?;
        if file.metadata().map(|m| m.len()).unwrap_or(0) > self.rotate_at {
            self.rotate()?;
        }
        Ok(())
    }

    fn rotate(&self) -> std::io::Result<()> {
        let lock_path = self.path.with_extension("lock");
        let lock = files::open_lock(&lock_path).map_err(std::io::Error::other)?;
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

/// A tool input with every long string cut, so one huge `Write` cannot make a huge line.
pub fn cut_long_strings(value: &Value) -> Value {
    cut(value, MAX_STRING, usize::MAX)
}

/// `value` with strings longer than `max_string` bytes cut, and lists and objects longer than
/// `max_items` cut to that many (a list's last item says how many were cut).
fn cut(value: &Value, max_string: usize, max_items: usize) -> Value {
    match value {
        Value::String(s) if s.len() > max_string => {
            let mut end = max_string;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            Value::String(format!("{}…[cut]", s.get(..end).unwrap_or("")))
        }
        Value::Array(items) => {
            let mut kept: Vec<Value> = items
                .iter()
                .take(max_items)
                .map(|v| cut(v, max_string, max_items))
                .collect();
            if items.len() > max_items {
                kept.push(Value::String(format!(
                    "…[cut {} more]",
                    items.len() - max_items
                )));
            }
            Value::Array(kept)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .take(max_items)
                .map(|(k, v)| (k.clone(), cut(v, max_string, max_items)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// Each field of a line cut as [`cut`] says (every field kept).
fn cut_fields(line: &Value, max_string: usize, max_items: usize) -> Value {
    match line {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), cut(v, max_string, max_items)))
                .collect(),
        ),
        other => cut(other, max_string, max_items),
    }
}

/// The line as written: within [`MAX_LINE`] bytes, newline included.
fn fitted(line: &Value) -> String {
    let mut text = ascii_json(line);
    for (max_string, max_items) in [(512, 64), (64, 16)] {
        if text.len() < MAX_LINE {
            break;
        }
        text = ascii_json(&cut_fields(line, max_string, max_items));
    }
    if text.len() >= MAX_LINE {
        // Still too long (deep nesting): every field past 512 bytes gives its size instead.
        let mut small = cut_fields(line, 64, 16);
        if let Value::Object(map) = &mut small {
            for value in map.values_mut() {
                let len = ascii_json(value).len();
                if len > 512 {
                    *value = Value::String(format!("[cut: {len} bytes]"));
                }
            }
        }
        text = ascii_json(&small);
    }
    text.push('\n');
    text
}
