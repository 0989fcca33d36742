//! What the end-to-end tests share: running `leastgrant` in a temporary home with nothing of
//! this machine's environment leaking in, and reading its JSON answer.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// Runs `leastgrant args…` with `HOME` set to `home` and the discovery variables cleared, in
/// `cwd`.
pub fn leastgrant(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leastgrant"))
        .env("HOME", home)
        .env_remove("LEASTGRANT_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("APPDATA")
        .env_remove("CODEX_HOME")
        .env_remove("COPILOT_HOME")
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("leastgrant runs")
}

/// The JSON a successful run printed.
pub fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}
