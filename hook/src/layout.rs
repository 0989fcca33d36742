//! Where leastgrant's things are, for the CLI and the hook alike: the home directory, the state
//! directory (`$LEASTGRANT_HOME`, else `~/.leastgrant`) and the files in it (frozen envelope,
//! ledger, rules and their compiled tables, grants, sessions, the events table, the replay's results), the project root
//! of a directory, and the identity a project's grants are kept under. Nothing else spells
//! these names or reads these variables.
//!
//! Must not: create, read or write any of these files (their owners do), or depend on anything
//! above it in the crate.

use std::path::{Path, PathBuf};

/// The frozen envelope's file name in the state directory (what `leastgrant export` writes).
pub const ENVELOPE: &str = "envelope.lgenv";

/// The decision ledger's file name in the state directory.
pub const LEDGER: &str = "ledger.jsonl";

/// The rules file's name, in the state directory and in a project's `.leastgrant/`.
pub const RULES: &str = "rules.json";

/// The state directory's name under the home directory, and a project's own directory.
pub const STATE_DIR_NAME: &str = ".leastgrant";

/// The user's home directory: `$HOME`, else `/`.
pub fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The state directory: `leastgrant_home` (`$LEASTGRANT_HOME`) when set, else `~/.leastgrant`.
pub fn state_dir(home: &Path, leastgrant_home: Option<&Path>) -> PathBuf {
    match leastgrant_home {
        Some(dir) => dir.to_path_buf(),
        None => home.join(STATE_DIR_NAME),
    }
}

/// The state directory this process is told to use: `$LEASTGRANT_HOME`, else `~/.leastgrant`.
pub fn state_dir_from_env(home: &Path) -> PathBuf {
    state_dir(
        home,
        std::env::var_os("LEASTGRANT_HOME")
            .map(PathBuf::from)
            .as_deref(),
    )
}

/// The frozen envelope of a state directory.
pub fn envelope_path(state_dir: &Path) -> PathBuf {
    state_dir.join(ENVELOPE)
}

/// The decision ledger of a state directory.
pub fn ledger_path(state_dir: &Path) -> PathBuf {
    state_dir.join(LEDGER)
}

/// The user's rules file (`<state>/rules.json`).
pub fn rules_path(state_dir: &Path) -> PathBuf {
    state_dir.join(RULES)
}

/// A project's own rules file (`<project>/.leastgrant/rules.json`).
pub fn project_rules_path(project: &Path) -> PathBuf {
    project.join(STATE_DIR_NAME).join(RULES)
}

/// Where a rules file's compiled table is kept (`<state>/cache/rules/<name>.lgrules`, the name
/// the first 32 hex digits of the SHA-256 of the rules file's path as given): one slot per rules
/// file, replaced when the file changes.
pub fn rules_cache_path(state_dir: &Path, rules_file: &Path) -> PathBuf {
    use leastgrant_engine::sha256::Sha256;
    let digest = Sha256::digest(rules_file.as_os_str().as_encoded_bytes());
    let name: String = leastgrant_engine::hex(&digest).chars().take(32).collect();
    state_dir
        .join("cache")
        .join("rules")
        .join(format!("{name}.lgrules"))
}

/// Where every project's grants are (`<state>/grants`).
pub fn grants_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("grants")
}

/// Where the hook keeps what each session has done (`<state>/sessions`).
pub fn sessions_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("sessions")
}

/// The events table `ingest` writes (`<state>/data`).
pub fn data_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("data")
}

/// The replay's results `simulate` writes (`<state>/replay`).
pub fn replay_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("replay")
}

/// The project root of a directory: its enclosing git repository, else the directory itself,
/// spelled as given (placement and the ledger use the agent's own spelling).
pub fn project_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .to_path_buf()
}

/// A path with every symlink resolved, else as given (it may not exist here).
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The identity a project's grants are kept under: its root's canonical path, so a checkout
/// reached through a symlink is one project whichever spelling the CLI or the agent used.
pub fn project_identity(root: &str) -> String {
    canonical(Path::new(root)).to_string_lossy().into_owned()
}
