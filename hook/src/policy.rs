//! The advance answers in force for a project: the rules files and the grants, loaded the same
//! way for the hook and for `leastgrant check`. A rules file is read only when it is a regular
//! file of bounded size (a link to one is followed); the user's, in the state directory, only
//! when it is the user's own and no one else can write it or its directory (`files.rs`).

use std::borrow::Borrow;
use std::path::{Path, PathBuf};

use leastgrant_engine::{CompiledPolicy, Policy, Roots};
use serde_json::Value;

use crate::files::{self, Links, Trust};
use crate::grants::FileGrantStore;
use crate::layout;
use crate::rules_cache;

/// The rules files in force by default, those that exist: `<state>/rules.json`, then
/// `<project>/.leastgrant/rules.json`.
pub fn default_rule_files(roots: &Roots) -> Vec<PathBuf> {
    rule_file_places(roots)
        .into_iter()
        .filter(|p| p.exists())
        .collect()
}

/// Where the default rules files of a project are, whether or not they exist.
pub fn rule_file_places(roots: &Roots) -> [PathBuf; 2] {
    [
        layout::rules_path(Path::new(&roots.state_dir)),
        project_rules(roots),
    ]
}

fn project_rules(roots: &Roots) -> PathBuf {
    layout::project_rules_path(Path::new(&roots.project))
}

/// The policy of `files` (empty when there are none). The repository's own rules file is
/// written by whoever writes the repository: it may tighten the user's policy, never loosen it,
/// unless the person named it explicitly (`given`).
pub fn load_policy(files: &[PathBuf], roots: &Roots, given: bool) -> Result<Policy, String> {
    compile_policy(files, roots, given, |file| read_rules_file(file, roots))
}

/// One rules file read as [`load_policy`] reads it, not yet compiled: its JSON, or `None` when
/// it is gone, or why it cannot be used. A file in the state directory is read only when it
/// and its directories are the user's own. What it says depends on the file and the state
/// directory only (not on the project), so a file read once serves every project.
pub fn read_rules_file(file: &Path, roots: &Roots) -> Result<Option<Value>, String> {
    let state_dir = Path::new(&roots.state_dir);
    let trust = if file.starts_with(state_dir) {
        files::check_dirs(state_dir, file).map_err(|e| e.to_string())?;
        Trust::Owner
    } else {
        Trust::Anyone
    };
    let Some(bytes) = files::read_regular(file, Links::Follow, trust, files::MAX_RULES_BYTES)
        .map_err(|e| format!("the rules file cannot be used: {e}"))?
    else {
        // Gone since it was listed: nothing to apply.
        return Ok(None);
    };
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("`{}` is not valid JSON: {e}", file.display()))?;
    Ok(Some(value))
}

/// The policy of `files`, each read by `read` ([`read_rules_file`], or what it returned
/// earlier and elsewhere), in order: the first file that cannot be read or compiled is the
/// error, as [`load_policy`] reports it.
pub fn compile_policy<V: Borrow<Value>>(
    files: &[PathBuf],
    roots: &Roots,
    given: bool,
    mut read: impl FnMut(&Path) -> Result<Option<V>, String>,
) -> Result<Policy, String> {
    let project_file = project_rules(roots);
    let mut layers = Vec::new();
    for file in files {
        let Some(value) = read(file)? else {
            continue;
        };
        let policy = Policy::from_json(value.borrow(), roots)
            .map_err(|e| format!("`{}` is not a rules file: {e}", file.display()))?;
        layers.push(if given || *file != project_file {
            policy
        } else {
            policy.tighten_only()
        });
    }
    Ok(if layers.is_empty() {
        Policy::empty()
    } else {
        Policy::merge(layers)
    })
}

/// The hook's policy of `files`: the same layers as [`load_policy`] (never given by name), each
/// loaded as its compiled table (`rules_cache.rs`), so a call parses only the rules it can
/// match. What cannot be kept (the table's directory) is a note.
pub fn load_compiled(
    files: &[PathBuf],
    roots: &Roots,
    notes: &mut Vec<String>,
) -> Result<CompiledPolicy, String> {
    let project_file = project_rules(roots);
    let state_dir = Path::new(&roots.state_dir);
    let mut layers = Vec::new();
    for file in files {
        let trust = if file.starts_with(state_dir) {
            files::check_dirs(state_dir, file).map_err(|e| e.to_string())?;
            Trust::Owner
        } else {
            Trust::Anyone
        };
        if let Some(table) = rules_cache::load(file, trust, state_dir, roots, notes)? {
            layers.push((table, *file == project_file));
        }
    }
    Ok(CompiledPolicy::new(layers, roots.clone()))
}

/// Each of `files` that exists, with the SHA-256 (hex) of its bytes: what `export` records of
/// the rules it audited, and what `doctor` compares the files in force with.
pub fn rules_fingerprint(files: &[PathBuf]) -> Vec<(String, String)> {
    files
        .iter()
        .filter_map(|file| Some((file.display().to_string(), rules_digest(file)?)))
        .collect()
}

/// The SHA-256 (hex) of a rules file's bytes, when it exists and can be read.
pub fn rules_digest(file: &Path) -> Option<String> {
    use leastgrant_engine::sha256::Sha256;
    let bytes =
        files::read_regular(file, Links::Follow, Trust::Anyone, files::MAX_RULES_BYTES).ok()??;
    Some(leastgrant_engine::hex(&Sha256::digest(&bytes)))
}

/// The grant store of the project, kept under its identity: `leastgrant allow` (whose roots are
/// canonical) and the hook (whose roots are the agent's spelling, perhaps through a symlink)
/// reach the same store.
pub fn grant_store(roots: &Roots) -> FileGrantStore {
    FileGrantStore::new(
        &layout::grants_dir(Path::new(&roots.state_dir)),
        &layout::project_identity(&roots.project),
    )
}
