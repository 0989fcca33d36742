//! The file grant store: one directory per project, `grants.json` owner-only and replaced
//! atomically.
//!
//! Layout: `<root>/projects/<16-hex digest of the project path>/grants.json`. Every write stages
//! the whole file as `grants.json.staged` (created 0600, and its mode reset to 0600 right after
//! opening, so a staged file left by a crash with a wider mode is narrowed before anything is
//! written into it), syncs it, and renames it over the old file. A crash before the rename
//! leaves the old file intact. Single writer per project: concurrent writers are unsupported
//! and the last rename wins.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use leastgrant_engine::{
    Grant, GrantScope, GrantStore, GrantStoreError, GrantVerdict, digest16, scope_from_json,
    scope_json,
};
use serde_json::{Value, json};

/// Grants of one project, in one JSON file.
#[derive(Debug, Clone)]
pub struct FileGrantStore {
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
        if let Ok(dir) = File::open(&self.dir) {
            // Make the rename itself durable; a failure here loses nothing already written.
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// The first half of a write: the whole new file, staged and synced, not yet in place.
    /// Public so tests can stop a write where a crash would.
    pub fn stage(&self, grants: &[Grant]) -> Result<PathBuf, GrantStoreError> {
        create_private_dir(&self.dir)?;
        let staged = self.staged_path();
        let mut file = open_private(&staged).map_err(|e| io_error("create", &staged, &e))?;
        let text = serde_json::to_string_pretty(&to_json(grants))
            .map_err(|e| GrantStoreError(e.to_string()))?;
        file.write_all(text.as_bytes())
            .map_err(|e| io_error("write", &staged, &e))?;
        file.write_all(b"\n")
            .map_err(|e| io_error("write", &staged, &e))?;
        file.sync_all().map_err(|e| io_error("sync", &staged, &e))?;
        Ok(staged)
    }
}

fn create_private_dir(dir: &Path) -> Result<(), GrantStoreError> {
    fs::create_dir_all(dir).map_err(|e| io_error("create", dir, &e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| io_error("restrict", dir, &e))?;
    }
    Ok(())
}

/// Creates the staged file afresh, owner-only. Whatever was at that name before — a staged file
/// a crash left behind, or a symlink planted there — is removed first, and the file is created
/// exclusively (`O_CREAT|O_EXCL` never follows a symlink), then its mode is set again.
fn open_private(path: &Path) -> io::Result<File> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// The grants file must be a regular file (not a symlink) that nobody else can write.
fn check_private(path: &Path) -> Result<(), GrantStoreError> {
    let meta = fs::symlink_metadata(path).map_err(|e| io_error("inspect", path, &e))?;
    if !meta.file_type().is_file() {
        return Err(GrantStoreError(format!(
            "`{}` is not a regular file; refusing to trust it",
            path.display()
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o022 != 0 {
            return Err(GrantStoreError(format!(
                "`{}` can be written by others (mode {:o}); refusing to trust it",
                path.display(),
                meta.permissions().mode() & 0o777
            )));
        }
    }
    Ok(())
}

fn to_json(grants: &[Grant]) -> Value {
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

fn from_json(value: &Value, path: &Path) -> Result<Vec<Grant>, GrantStoreError> {
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
        match fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("inspect", &path, &e)),
            Ok(_) => check_private(&path)?,
        }
        let text = fs::read_to_string(&path).map_err(|e| io_error("read", &path, &e))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| GrantStoreError(format!("`{}` is not valid JSON: {e}", path.display())))?;
        from_json(&value, &path)
    }
}
