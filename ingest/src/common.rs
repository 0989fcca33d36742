//! What every reader shares: bad-input accounting, robust JSON lines, stable event ids,
//! attendance from a permission mode, project keys and timestamps (the project of a session is
//! `project`'s).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::schema::agent;

/// Counts of input that could not be used, by reason. Never fatal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BadCounts(pub BTreeMap<String, u64>);

impl BadCounts {
    /// Counts one occurrence of `reason`.
    pub fn add(&mut self, reason: &str) {
        *self.0.entry(reason.to_string()).or_insert(0) += 1;
    }

    /// Adds another set of counts.
    pub fn merge(&mut self, other: &BadCounts) {
        for (reason, count) in &other.0 {
            *self.0.entry(reason.clone()).or_insert(0) += count;
        }
    }

    /// Nothing was bad.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Lines over this many bytes are counted (they are still read, up to [`MAX_LINE`]).
pub const LONG_LINE: usize = 1 << 20;
/// Lines over this many bytes are skipped.
pub const MAX_LINE: usize = 64 << 20;

/// One JSON record of a JSON-lines file, with its 1-based line number.
pub struct Record {
    /// Line number (1-based).
    pub line: u32,
    /// The parsed value.
    pub value: Value,
}

/// Parses JSON lines robustly: a UTF-8 BOM is stripped, CRLF tolerated, NUL runs removed,
/// invalid UTF-8 decoded lossily, a line holding two glued records split, and a torn line
/// counted and skipped. A last line without a newline is read only when it is whole JSON (a
/// record still being written never is: it is left for the next run, which reads the file
/// again once it has changed); the byte offset after the last newline is returned.
pub fn json_lines(bytes: &[u8], bad: &mut BadCounts) -> (Vec<Record>, usize) {
    let mut records = Vec::new();
    let complete = each_json_line(bytes, bad, |line, text, _| {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => {
                records.push(Record { line, value });
                true
            }
            Err(_) => false,
        }
    });
    (records, complete)
}

/// The JSON values `text` holds back to back, when it is nothing but two or more whole values.
fn whole_values(text: &str) -> Option<Vec<&str>> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
    let mut parts = Vec::new();
    let mut start = 0;
    while let Some(value) = stream.next() {
        value.ok()?;
        let end = stream.byte_offset();
        parts.push(text.get(start..end)?.trim());
        start = end;
    }
    (parts.len() >= 2 && text.get(start..)?.trim().is_empty()).then_some(parts)
}

/// [`json_lines`] without building `Value`s: each cleaned line's text goes to `record`, which
/// parses it as it needs and returns whether it was valid JSON (it must have no effect when it
/// was not: a torn line is retried from each `{"` inside it). Returns the byte offset after the
/// last complete line.
pub fn each_json_line(
    bytes: &[u8],
    bad: &mut BadCounts,
    mut record: impl FnMut(u32, &str, &mut BadCounts) -> bool,
) -> usize {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let complete = match memchr::memrchr(b'\n', bytes) {
        Some(at) => at + 1,
        None => 0,
    };
    let body = bytes.get(..complete).unwrap_or(&[]);
    let mut start = 0;
    // Newlines found with memchr: splitting byte by byte was a tenth of an ingest.
    for (index, end) in memchr::memchr_iter(b'\n', body).enumerate() {
        let raw = body.get(start..end).unwrap_or(&[]);
        start = end + 1;
        let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        if raw.len() > MAX_LINE {
            bad.add("line-over-64mb");
            continue;
        }
        if raw.len() > LONG_LINE {
            bad.add("line-over-1mb");
        }
        let cleaned: Vec<u8>;
        let raw = if memchr::memchr(0, raw).is_some() {
            bad.add("nul-bytes");
            cleaned = raw.iter().copied().filter(|b| *b != 0).collect();
            cleaned.as_slice()
        } else {
            raw
        };
        // simdutf8 answers as `std::str::from_utf8` does, about ten times faster on text that
        // is mostly ASCII; an invalid line is read lossily as before.
        let text = match simdutf8::basic::from_utf8(raw) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                bad.add("invalid-utf8");
                String::from_utf8_lossy(raw)
            }
        };
        if record(line, &text, bad) {
            continue;
        }
        // Two whole records written without a newline between them: read each.
        if let Some(parts) = whole_values(&text) {
            for part in parts {
                record(line, part, bad);
            }
            bad.add("glued-records");
            continue;
        }
        // A crash can glue the start of one record to a whole next one: `{…"prNu{"parentUuid"…}`.
        let salvaged = text
            .match_indices("{\"")
            .filter(|(at, _)| *at > 0)
            .any(|(at, _)| text.get(at..).is_some_and(|rest| record(line, rest, bad)));
        bad.add(if salvaged {
            "glued-records"
        } else {
            "torn-line"
        });
    }
    let tail = bytes.get(complete..).unwrap_or(&[]).trim_ascii();
    if !tail.is_empty() {
        // A last line with no newline: a record still being written is never whole JSON (an
        // object's text cut short does not parse), so a whole one is read (a file written
        // without the final newline, as some Windows tools rewrite it); a cut one is left.
        let line = u32::try_from(memchr::memchr_iter(b'\n', body).count() + 1).unwrap_or(u32::MAX);
        let whole = memchr::memchr(0, tail).is_none()
            && std::str::from_utf8(tail).is_ok_and(|text| {
                serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
                    && record(line, text, bad)
            });
        bad.add(if whole {
            "last-line-without-newline"
        } else {
            "unterminated-last-line"
        });
    }
    complete
}

/// A 32-hex content digest of bytes (XXH3-128). It only tells a file that was touched from
/// one that changed (size and time already differ): not a security boundary, as whoever can
/// write a transcript can write anything into it; SHA-256 here was an eighth of ingest's time.
pub fn content_digest(bytes: &[u8]) -> String {
    format!("{:032x}", twox_hash::XxHash3_128::oneshot(bytes))
}

/// A stable 16-hex id from parts (SHA-256 of the parts joined by NUL).
pub fn stable_id(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    // Hex digits pushed one by one: a `format!` per byte cost more than the hash.
    let mut id = String::with_capacity(16);
    for byte in hasher.finalize().iter().take(8) {
        for nibble in [byte >> 4, byte & 15] {
            id.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
        }
    }
    id
}

/// The event id of a Claude Code call, from its `tool_use` id: the same whichever source
/// records the call (its transcript, the hook's ledger), so the table keeps it once.
pub fn claude_event_id(tool_use_id: &str) -> String {
    stable_id(&[agent::CLAUDE_CODE, tool_use_id])
}

/// Whether a person was answering prompts under a Claude Code permission mode.
pub fn attended_for(mode: Option<&str>) -> Option<bool> {
    match mode? {
        "default" | "plan" => Some(true),
        "acceptEdits" | "bypassPermissions" | "dontAsk" | "auto" => Some(false),
        _ => None,
    }
}

/// A project path normalised for grouping: forward slashes, no trailing slash, and lower-cased
/// where the file system ignores case by default (macOS `/Users/…` and `/Volumes/…`, Windows
/// drive paths), so `/Users/Dev/App` and `/Users/dev/app` are one project. The engine matches a
/// frozen project's root the same way (the engine's `ignores_case`, in `engine/src/paths.rs`).
pub fn project_key(root: &str) -> String {
    let mut key = root.replace('\\', "/");
    while key.len() > 1 && key.ends_with('/') {
        key.pop();
    }
    let bytes = key.as_bytes();
    if bytes.len() >= 2
        && bytes.get(1) == Some(&b':')
        && bytes.first().is_some_and(u8::is_ascii_alphabetic)
    {
        return key.to_lowercase();
    }
    let lower = key.to_lowercase();
    if lower.starts_with("/users/") || lower.starts_with("/volumes/") {
        return lower;
    }
    key
}

/// Parses an ISO-8601 UTC timestamp (`2026-01-16T15:23:36.123Z`, `2026-01-16 15:23:36Z`, with or
/// without fraction, `Z` or `+00:00`) into microseconds since the epoch.
pub fn parse_timestamp_us(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Some(parts) = claude_timestamp(text.as_bytes()) {
        return civil_us(parts);
    }
    let (date, rest) = text.split_at_checked(10)?;
    let mut parts = date.split('-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: i64 = parts.next()?.parse().ok()?;
    let day: i64 = parts.next()?.parse().ok()?;
    let rest = rest.strip_prefix(['T', ' '])?;
    let (clock, zone) = match rest.find(['Z', '+', '-']) {
        Some(at) => (rest.get(..at)?, rest.get(at..)?),
        None => (rest, "Z"),
    };
    if !(zone == "Z" || zone == "+00:00" || zone == "+0000" || zone == "-00:00") {
        return None;
    }
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut hms = hms.split(':');
    let hour: i64 = hms.next()?.parse().ok()?;
    let minute: i64 = hms.next()?.parse().ok()?;
    let second: i64 = hms.next().unwrap_or("0").parse().ok()?;
    let micros: i64 = if fraction.is_empty() {
        0
    } else {
        let digits: String = fraction.chars().take(6).collect();
        let value: i64 = digits.parse().ok()?;
        value * 10i64.pow(6 - u32::try_from(digits.len()).ok()?)
    };
    civil_us([year, month, day, hour, minute, second, micros])
}

/// The parts of the form Claude Code writes, `2026-01-16T15:23:36.123Z`, read without the
/// general parser (a timestamp per call was 2% of an ingest): year, month, day, hour, minute,
/// second, microseconds; `None` when `bytes` has another form.
fn claude_timestamp(bytes: &[u8]) -> Option<[i64; 7]> {
    let form: &[u8; 24] = bytes.try_into().ok()?;
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        form.get(range)?.iter().try_fold(0i64, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
        })
    };
    let separators = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if separators
        .iter()
        .any(|(at, sep)| form.get(*at) != Some(sep))
        || form.get(19) != Some(&b'.')
        || form.get(23) != Some(&b'Z')
    {
        return None;
    }
    Some([
        number(0..4)?,
        number(5..7)?,
        number(8..10)?,
        number(11..13)?,
        number(14..16)?,
        number(17..19)?,
        number(20..23)? * 1000,
    ])
}

/// Microseconds since the epoch of a date and time, when each part is in range.
fn civil_us([year, month, day, hour, minute, second, micros]: [i64; 7]) -> Option<i64> {
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + minute) * 60_000_000 + second * 1_000_000 + micros)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `(year, month, day)` of a day since 1970-01-01; the inverse of [`days_from_civil`].
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A UTC timestamp in milliseconds as Claude Code writes it: `2026-06-01T09:30:00.000Z` (the
/// inverse of [`parse_timestamp_us`] at millisecond precision).
pub fn iso_millis(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let rest = seconds.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        ms.rem_euclid(1000)
    )
}

/// A record's time; text that does not parse is counted under `reason` and the time left
/// unknown.
pub fn timestamp_or_count(text: Option<&str>, reason: &str, bad: &mut BadCounts) -> Option<i64> {
    let parsed = parse_timestamp_us(text?);
    if parsed.is_none() {
        bad.add(reason);
    }
    parsed
}

/// The first `max` bytes of `text`, cut at a character boundary.
pub fn excerpt(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or("").to_string()
}

/// The shell command and file path of a tool input, whatever the agent calls the fields.
pub fn command_and_path(input: &Value) -> (Option<String>, Option<String>) {
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    let command = text(&["command", "cmd"]).or_else(|| {
        input.get("command").and_then(Value::as_array).map(|argv| {
            argv.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
    });
    let path = text(&[
        "file_path",
        "notebook_path",
        "target_file",
        "path",
        "filePath",
    ]);
    (command, path)
}

/// Why a source file was not read: each counted in [`BadCounts`] and listed by name in the
/// run's summary.
pub mod unread {
    /// A device, FIFO, socket or directory where a file was expected (or a link to one): never
    /// opened for reading, as reading one may never end.
    pub const NOT_A_REGULAR_FILE: &str = "not-a-regular-file";
    /// Larger than its source's `max_file_bytes`.
    pub const OVER_SIZE_LIMIT: &str = "file-over-size-limit";
    /// It could not be opened or read (permissions, vanished).
    pub const UNREADABLE: &str = "unreadable-file";
}

/// The metadata of a regular file (a link followed) of at most `limit` bytes, or why it is not
/// one.
pub fn regular_file(path: &Path, limit: u64) -> Result<std::fs::Metadata, &'static str> {
    let meta = std::fs::metadata(path).map_err(|_| unread::UNREADABLE)?;
    check_regular(&meta, limit)?;
    Ok(meta)
}

fn check_regular(meta: &std::fs::Metadata, limit: u64) -> Result<(), &'static str> {
    if !meta.is_file() {
        return Err(unread::NOT_A_REGULAR_FILE);
    }
    if meta.len() > limit {
        return Err(unread::OVER_SIZE_LIMIT);
    }
    Ok(())
}

/// Opens a regular file of at most `limit` bytes for reading. Opened without blocking (a FIFO
/// put in its place after a check cannot hold the open) and checked again on the open file, so
/// what is read is what was checked.
pub fn open_regular(path: &Path, limit: u64) -> Result<std::fs::File, &'static str> {
    regular_file(path, limit)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(|_| unread::UNREADABLE)?;
    let meta = file.metadata().map_err(|_| unread::UNREADABLE)?;
    check_regular(&meta, limit)?;
    Ok(file)
}

/// The bytes of a regular file of at most `limit` bytes ([`open_regular`]); a file that grows
/// past the limit while it is read is refused.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, &'static str> {
    use std::io::Read;
    let file = open_regular(path, limit)?;
    let expected = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|_| unread::UNREADABLE)?;
    if bytes.len() as u64 > limit {
        return Err(unread::OVER_SIZE_LIMIT);
    }
    Ok(bytes)
}

/// A directory's identity: its device and inode (where the platform has none, its canonical
/// path), so a directory reached again through a link is recognised.
#[cfg(unix)]
fn directory_identity(_path: &Path, meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn directory_identity(path: &Path, _meta: &std::fs::Metadata) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// Every file below `root` whose name `keep_file` accepts, descending into the directories whose
/// name `enter` accepts; sorted. Links to directories are followed, but each directory is walked
/// once (by device and inode), so a link to an ancestor cannot make the walk endless or
/// exponential. What is kept is only named here: whether it is a regular file is checked when it
/// is read. A `root` that is not a directory is itself the one file.
pub fn files_below(
    root: &Path,
    enter: impl Fn(&str) -> bool,
    keep_file: impl Fn(&str) -> bool,
) -> Vec<PathBuf> {
    match std::fs::metadata(root) {
        Ok(meta) if meta.is_dir() => {}
        _ if std::fs::symlink_metadata(root).is_ok() => return vec![root.to_path_buf()],
        _ => return Vec::new(),
    }
    let mut files = Vec::new();
    let mut walked = std::collections::HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Some(identity) = std::fs::metadata(&dir)
            .ok()
            .and_then(|meta| directory_identity(&dir, &meta))
        else {
            continue;
        };
        if !walked.insert(identity) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let is_dir = file_type.is_dir() || (file_type.is_symlink() && path.is_dir());
            if is_dir {
                if enter(&name) {
                    stack.push(path);
                }
            } else if keep_file(&name) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
