//! Compiled rules tables (issue 14): a rules file is parsed and checked once, when it changes,
//! and every later hook call loads its table (`leastgrant_engine::CompiledRules`) and parses only
//! the rules its call can match.
//!
//! A table is kept at `layout::rules_cache_path` (one slot per rules file, in the state
//! directory, whatever directory the rules file is in), written atomically and owner-only, and
//! read only as a regular file of this user's in directories no one else can write. It is used
//! only when it opens cleanly (its header checked; each item is checked where a lookup reads
//! it, and one that fails makes the call ask and the table be rebuilt by the next call) and
//! names the rules file's current bytes: its
//! recorded file status (device, inode, size, modification and change times) equals the file's,
//! and that status was already [`RACY_NS`] old when the table was written, so any write since
//! would have given the file another change time; otherwise the file is read and its SHA-256
//! compared with the table's. A table that is missing, damaged, of another version or of other
//! bytes is replaced from the rules file, which is parsed as `leastgrant check` parses it. A
//! rules file that is refused (bad JSON, a rule past its bounds) is recorded as refused with its
//! error, so the next call refuses it as fast. Writing the table can fail (a read-only state
//! directory): the call goes on with the table it compiled.

use std::io::Read;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use leastgrant_engine::sha256::Sha256;
use leastgrant_engine::{
    CompiledRules, Roots, SourceKey, TableBytes, compile_rules, compile_rules_refusal,
};

use crate::files::{self, Links, Trust};
use crate::layout;

/// How long a rules file must have been left alone for its file status to identify its bytes:
/// file systems that keep coarse times (two seconds on some) cannot tell apart two writes
/// closer than their granularity.
pub const RACY_NS: u64 = 3_000_000_000;

/// The largest table read (a rules file is at most `files::MAX_RULES_BYTES`; its table is
/// smaller than twice that).
pub const MAX_TABLE_BYTES: u64 = 3 * files::MAX_RULES_BYTES;

/// The rules file `file` as a compiled table (`None` when it is gone), its table used or made
/// as the module docs say. `Err` carries the refusal, for the caller to report.
pub fn load(
    file: &Path,
    trust: Trust,
    state_dir: &Path,
    roots: &Roots,
    notes: &mut Vec<String>,
) -> Result<Option<CompiledRules>, String> {
    // Named by its rules file: a lookup that finds an item damaged names it, and the hook
    // removes the table (`lib.rs`).
    let named = |table: Option<CompiledRules>| table.map(|t| t.named(file.display().to_string()));
    load_unnamed(file, trust, state_dir, roots, notes).map(named)
}

fn load_unnamed(
    file: &Path,
    trust: Trust,
    state_dir: &Path,
    roots: &Roots,
    notes: &mut Vec<String>,
) -> Result<Option<CompiledRules>, String> {
    let cannot_use = |e: &dyn std::fmt::Display| format!("the rules file cannot be used: {e}");
    // The file's status, checked as `open_regular` checks it, is all a settled table needs:
    // the file is opened only when its bytes must be read (three system calls fewer a call).
    let Some(meta) = files::inspect(file, Links::Follow, trust, files::MAX_RULES_BYTES)
        .map_err(|e| cannot_use(&e))?
    else {
        // Gone since it was listed: nothing to apply.
        return Ok(None);
    };
    let table_path = layout::rules_cache_path(state_dir, file);
    let cached = read_table(state_dir, &table_path);
    if let Some(table) = &cached {
        let key = table.source_key();
        if key.stat_trusted && key.stat == status(&meta) {
            return usable(cached);
        }
    }
    let Some(regular) = files::open_regular(file, Links::Follow, trust, files::MAX_RULES_BYTES)
        .map_err(|e| cannot_use(&e))?
    else {
        return Ok(None);
    };
    // What is read is what the open file's status says.
    let stat = status(&regular.meta);
    let mut bytes = Vec::with_capacity(usize::try_from(regular.len).unwrap_or(0).saturating_add(1));
    regular
        .file
        .take(files::MAX_RULES_BYTES.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| cannot_use(&e))?;
    if bytes.len() as u64 > files::MAX_RULES_BYTES {
        return Err(cannot_use(&format!(
            "`{}` grew past {} bytes while it was read",
            file.display(),
            files::MAX_RULES_BYTES
        )));
    }
    let key = SourceKey {
        digest: Sha256::digest(&bytes),
        stat,
        stat_trusted: settled(&stat),
    };
    if let Some(table) = cached
        && table.source_key().digest == key.digest
    {
        // The same bytes: the table stands; record the file's status once it identifies them.
        if key.stat_trusted {
            store(state_dir, &table_path, &table.rekeyed(&key), notes);
        }
        return usable(Some(table));
    }
    let compiled = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Err(e) => compile_rules_refusal(
            &format!("`{}` is not valid JSON: {e}", file.display()),
            &key,
        ),
        Ok(value) => compile_rules(&value, roots, &key).unwrap_or_else(|e| {
            compile_rules_refusal(
                &format!("`{}` is not a rules file: {e}", file.display()),
                &key,
            )
        }),
    };
    store(state_dir, &table_path, &compiled, notes);
    let table = CompiledRules::open(compiled)
        .map_err(|e| format!("`{}` could not be compiled: {e}", file.display()))?;
    usable(Some(table))
}

/// A table, or the refusal it records.
fn usable(table: Option<CompiledRules>) -> Result<Option<CompiledRules>, String> {
    match table {
        Some(table) => match table.rejected() {
            Some(refusal) => Err(refusal.to_string()),
            None => Ok(Some(table)),
        },
        None => Ok(None),
    }
}

/// The table at `path` when it is leastgrant's own and opens cleanly. It is mapped, not read:
/// a call reads its header and the few items its lookups touch (a 1,000-rule table is ~50 KB),
/// from the page cache's pages. A table is only ever replaced by rename ([`store`]), never
/// written in place (`state.rs`), so a mapped table is never modified under a call.
fn read_table(state_dir: &Path, path: &Path) -> Option<CompiledRules> {
    files::check_dirs(state_dir, path).ok()?;
    let mapped = crate::state::map_own(path, MAX_TABLE_BYTES).ok()??;
    CompiledRules::open(TableBytes::shared(mapped)).ok()
}

/// Writes a table atomically, owner-only; a failure is a note, never a verdict.
fn store(state_dir: &Path, path: &Path, bytes: &[u8], notes: &mut Vec<String>) {
    let Some(dir) = path.parent() else {
        return;
    };
    let staged = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let written = files::create_private_dir(dir)
        .and_then(|()| {
            files::check_dirs(state_dir, path).map_err(|e| std::io::Error::other(e.to_string()))
        })
        .and_then(|()| files::replace(path, &staged, bytes));
    if let Err(e) = written {
        notes.push(format!(
            "leastgrant: cannot keep the compiled rules in {}: {e}",
            dir.display()
        ));
    }
}

/// `[dev, ino, size, mtime_ns, ctime_ns]`.
fn status(meta: &std::fs::Metadata) -> [u64; 5] {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let ns = |secs: i64, nsecs: i64| {
            (secs as u64)
                .wrapping_mul(1_000_000_000)
                .wrapping_add(nsecs as u64)
        };
        [
            meta.dev(),
            meta.ino(),
            meta.size(),
            ns(meta.mtime(), meta.mtime_nsec()),
            ns(meta.ctime(), meta.ctime_nsec()),
        ]
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        [0; 5]
    }
}

/// The file was last changed at least [`RACY_NS`] ago (never on a system without change times).
fn settled(stat: &[u64; 5]) -> bool {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0);
    let [_, ino, _, mtime, ctime] = *stat;
    ino != 0 && now.saturating_sub(mtime.max(ctime)) >= RACY_NS && mtime.max(ctime) <= now
}
