//! What the hook remembers of a session between calls: the facts that make a later call in the
//! same session riskier (secrets read, code fetched, …), so the hook applies the same session
//! taint the replay applied — a verdict never wider than the audited one.
//!
//! One small file per session under `<state>/sessions/`, named by a digest of the agent and the
//! session id, written on each after-event (the call ran) by staging and renaming. Concurrent
//! after-events of one session can race; the loser's facts are lost, which can only make a
//! later call *less* tainted than it should be until the next call that ran records them again.
//! Files older than a week are not read.

use std::path::{Path, PathBuf};

use leastgrant_engine::{Analysis, Capability, SessionState};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Sessions older than this are forgotten.
const MAX_AGE: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// The file of one session.
pub fn path(state_dir: &Path, agent: &str, session_id: &str) -> PathBuf {
    let digest = Sha256::digest(format!("{agent}\0{session_id}").as_bytes());
    let name = leastgrant_engine::hex(digest.get(..8).unwrap_or_default());
    crate::layout::sessions_dir(state_dir).join(format!("{name}.json"))
}

/// The session so far (a fresh session when there is no usable file).
pub fn load(path: &Path) -> SessionState {
    let fresh = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < MAX_AGE);
    if !fresh {
        return SessionState::default();
    }
    let Some(value) = std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
    else {
        return SessionState::default();
    };
    let flag = |key: &str| value.get(key).and_then(Value::as_bool).unwrap_or(false);
    SessionState {
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
    }
}

/// Records a call that ran.
pub fn record(path: &Path, analysis: &Analysis) -> std::io::Result<()> {
    let mut state = load(path);
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
        crate::ledger::create_private_dir(dir)?;
    }
    let staged = path.with_extension(format!("json.{}", std::process::id()));
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&staged)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
    }
    std::fs::rename(&staged, path)
}
