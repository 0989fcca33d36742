//! The file grant store: one directory per project, `grants.json` owner-only and replaced
//! atomically.
//!
//! Layout: `<root>/projects/<16-hex digest of the project path>/grants.json`. Every write stages
//! the whole file as `grants.json.staged` (created afresh, owner-only, whatever was at that name
//! removed first), syncs it, and renames it over the old file (`files::stage`). A crash before
//! the rename leaves the old file intact. Single writer per project: concurrent writers are
//! unsupported and the last rename wins. A grants file is read only when it is a regular file of
//! bounded size, this user's and writable by no one else, in directories no one else can write
//! (`files.rs`); otherwise loading fails with the reason, and the hook asks.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use leastgrant_engine::{
    Grant, GrantScope, GrantStore, GrantStoreError, GrantVerdict, digest16, scope_from_json,
    scope_json,
};
use serde_json::{Value, json};

use crate::files::{self, Links, Trust};

/// Grants of one project, in one JSON file.
#[derive(Debug, Clone)]
pub struct FileGrantStore {
    /// The directory below which every directory must be the user's own (the state directory).
    base: PathBuf,
    dir: PathBuf,
}

const FILE: &str = "grants.json";
const STAGED: &str = "grants.json.staged";
const FORMAT_VERSION: u64 = 1;

fn io_error(what: &str, path: &Path, error: &io::Error) -> GrantStoreError {
    GrantStoreError(format!("cannot {what} `{}`: {error}", path.display()))
}

/// The grants file of every project that has a directory under `root` (existing or not).
pub fn every_project_file(root: &Path) -> Vec<PathBuf> {
    fs::read_dir(root.join("projects"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join(FILE))
        .collect()
}

impl FileGrantStore {
    /// The store of `project` (its identity, `layout::project_identity`) under `root`.
    pub fn new(root: &Path, project: &str) -> FileGrantStore {
        let digest = digest16(&Value::String(project.to_string()));
        FileGrantStore {
            base: root.parent().unwrap_or(root).to_path_buf(),
            dir: root.join("projects").join(digest),
        }
    }

    /// The grants file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    /// The staged file a write goes through.
    pub fn staged_path(&self) -> PathBuf {
        self.dir.join(STAGED)
    }

    fn write_all(&self, grants: &[Grant]) -> Result<(), GrantStoreError> {
        let staged = self.stage(grants)?;
        fs::rename(&staged, self.path()).map_err(|e| io_error("replace", &self.path(), &e))?;
        if let Ok(dir) = fs::File::open(&self.dir) {
            // Make the rename itself durable; a failure here loses nothing already written.
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// The first half of a write: the whole new file, staged and synced, not yet in place.
    /// Public so tests can stop a write where a crash would.
    pub fn stage(&self, grants: &[Grant]) -> Result<PathBuf, GrantStoreError> {
        files::create_private_dir(&self.dir).map_err(|e| io_error("create", &self.dir, &e))?;
        files::check_dirs(&self.base, &self.path()).map_err(|e| GrantStoreError(e.to_string()))?;
        let staged = self.staged_path();
        let mut text = serde_json::to_string_pretty(&to_json(grants))
            .map_err(|e| GrantStoreError(e.to_string()))?;
        text.push('\n');
        files::stage(&staged, text.as_bytes()).map_err(|e| io_error("write", &staged, &e))?;
        Ok(staged)
    }
}

/// A grants file's JSON (what the store writes).
pub(crate) fn to_json(grants: &[Grant]) -> Value {
    let list: Vec<Value> = grants
        .iter()
        .map(|g| {
            json!({
                "id": g.id(),
                "tool": g.tool,
                "verdict": g.verdict.as_str(),
                "scope": scope_json(&g.scope),
                "pinned_descriptor": g.pinned_descriptor,
                "created_at_ms": g.created_at_ms,
                "note": g.note,
            })
        })
        .collect();
    json!({"version": FORMAT_VERSION, "grants": list})
}

/// The grants of a grants file's JSON (`path` names it in errors).
pub(crate) fn from_json(value: &Value, path: &Path) -> Result<Vec<Grant>, GrantStoreError> {
    let bad =
        |why: &str| GrantStoreError(format!("`{}` is not a grants file: {why}", path.display()));
    if value.get("version").and_then(Value::as_u64) != Some(FORMAT_VERSION) {
        return Err(bad("unknown or missing `version`"));
    }
    let list = value
        .get("grants")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `grants` list"))?;
    list.iter()
        .map(|entry| {
            let text = |k: &str| entry.get(k).and_then(Value::as_str);
            let verdict = match text("verdict") {
                Some("allow") => GrantVerdict::Allow,
                Some("deny") => GrantVerdict::Deny,
                _ => return Err(bad("a grant without `verdict` allow or deny")),
            };
            let tool = text("tool").ok_or_else(|| bad("a grant without `tool`"))?;
            let scope: GrantScope = entry
                .get("scope")
                .and_then(scope_from_json)
                .ok_or_else(|| bad("a grant with an unknown `scope`"))?;
            let id = text("id").ok_or_else(|| bad("a grant without `id`"))?;
            let mut grant = Grant::restore(tool, verdict, scope, id)?;
            if let Some(pin) = text("pinned_descriptor") {
                grant = grant.with_pinned_descriptor(pin);
            }
            if let Some(at) = entry.get("created_at_ms").and_then(Value::as_i64) {
                grant = grant.with_created_at_ms(at);
            }
            if let Some(note) = text("note") {
                grant = grant.with_note(note);
            }
            Ok(grant)
        })
        .collect()
}

impl GrantStore for FileGrantStore {
    fn save(&mut self, grant: Grant) -> Result<Grant, GrantStoreError> {
        let mut grants = self.load()?;
        match grants.iter_mut().find(|g| g.id() == grant.id()) {
            Some(existing) => *existing = grant.clone(),
            None => grants.push(grant.clone()),
        }
        self.write_all(&grants)?;
        Ok(grant)
    }

    fn revoke(&mut self, id: &str) -> Result<Option<Grant>, GrantStoreError> {
        let mut grants = self.load()?;
        let Some(at) = grants.iter().position(|g| g.id() == id) else {
            return Ok(None);
        };
        let removed = grants.remove(at);
        self.write_all(&grants)?;
        Ok(Some(removed))
    }

    fn clear(&mut self) -> Result<(), GrantStoreError> {
        self.write_all(&[])
    }

    fn load(&self) -> Result<Vec<Grant>, GrantStoreError> {
        let path = self.path();
        let untrusted = |e: files::FileError| GrantStoreError(e.to_string());
        files::check_dirs(&self.base, &path).map_err(untrusted)?;
        let Some(bytes) =
            files::read_regular(&path, Links::Refuse, Trust::Owner, files::MAX_GRANTS_BYTES)
                .map_err(untrusted)?
        else {
            return Ok(Vec::new());
        };
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| GrantStoreError(format!("`{}` is not valid JSON: {e}", path.display())))?;
        from_json(&value, &path)
    }
}
