//! What the hook remembers of a session between calls: the facts that make a later call in the
//! same session riskier (secrets read, code fetched, …), so the hook applies the same session
//! taint the replay applied — a verdict never wider than the audited one.
//!
//! One small file per session under `<state>/sessions/`, named by a digest of the agent and the
//! session id, written on each after-event (the call ran) by staging and renaming. Concurrent
//! after-events of one session can race; the loser's facts are lost, which can only make a
//! later call *less* tainted than it should be until the next call that ran records them again.
//! Files older than a week are not read. A session file is read only when it is a regular file
//! of bounded size, this user's and writable by no one else, in directories no one else can
//! write (`files.rs`); otherwise `load` says why, and the hook asks.

use std::path::{Path, PathBuf};

use leastgrant_engine::sha256::Sha256;
use leastgrant_engine::{Analysis, Capability, SessionState};
use serde_json::{Value, json};

use crate::files::{self, FileError, Links, Problem, Trust};

/// Sessions older than this are forgotten.
const MAX_AGE: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// The file of one session.
pub fn path(state_dir: &Path, agent: &str, session_id: &str) -> PathBuf {
    let digest = Sha256::digest(format!("{agent}\0{session_id}").as_bytes());
    let name = leastgrant_engine::hex(digest.get(..8).unwrap_or_default());
    crate::layout::sessions_dir(state_dir).join(format!("{name}.json"))
}

/// The session so far: a fresh session when there is no file or it is older than a week; an
/// error naming the file when it is there but cannot be trusted or read (a link, a device, too
/// large, another user's, writable by others, not a session).
pub fn load(state_dir: &Path, path: &Path) -> Result<SessionState, FileError> {
    files::check_dirs(state_dir, path)?;
    let Some(regular) =
        files::open_regular(path, Links::Refuse, Trust::Owner, files::MAX_SESSION_BYTES)?
    else {
        return Ok(SessionState::default());
    };
    let fresh = regular
        .file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < MAX_AGE);
    if !fresh {
        return Ok(SessionState::default());
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(regular.file, files::MAX_SESSION_BYTES),
        &mut bytes,
    )
    .map_err(|e| FileError {
        path: path.to_path_buf(),
        problem: Problem::Io(e),
    })?;
    let value = serde_json::from_slice::<Value>(&bytes).map_err(|e| FileError {
        path: path.to_path_buf(),
        problem: Problem::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not a session file: {e}"),
        )),
    })?;
    let flag = |key: &str| value.get(key).and_then(Value::as_bool).unwrap_or(false);
    Ok(SessionState {
        read_secrets: flag("read_secrets"),
        read_outside: flag("read_outside"),
        network_egress: flag("network_egress"),
        fetched_code: flag("fetched_code"),
        last_capability: value
            .get("last_capability")
            .and_then(Value::as_str)
            .and_then(Capability::parse),
        actions: value
            .get("actions")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0),
    })
}

/// Records a call that ran. A session file that cannot be trusted is not written over (the
/// error says why; the next decision in the session asks for the same reason).
pub fn record(state_dir: &Path, path: &Path, analysis: &Analysis) -> Result<(), String> {
    let mut state = load(state_dir, path).map_err(|e| e.to_string())?;
    state.record(analysis);
    let text = json!({
        "read_secrets": state.read_secrets,
        "read_outside": state.read_outside,
        "network_egress": state.network_egress,
        "fetched_code": state.fetched_code,
        "last_capability": state.last_capability.map(Capability::as_str),
        "actions": state.actions,
    })
    .to_string();
    if let Some(dir) = path.parent() {
        files::create_private_dir(dir)
            .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let staged = path.with_extension(format!("json.{}", std::process::id()));
    files::replace(path, &staged, text.as_bytes())
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}
