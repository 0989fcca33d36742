//! A checkout reached through a symlink is one project: a grant `leastgrant allow` stores from
//! the link is the grant the real `leastgrant-hook` finds, whether the agent reports the link or
//! the real path as its working directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn hook_binary() -> Option<PathBuf> {
    let hook = Path::new(env!("CARGO_BIN_EXE_leastgrant")).with_file_name("leastgrant-hook");
    hook.exists().then_some(hook)
}

/// The hook's answer to a Claude Code `PreToolUse` of `npm test` run in `cwd`.
fn hook_answer(hook: &Path, home: &Path, cwd: &Path) -> Value {
    let payload = json!({"session_id": "s", "transcript_path": "/t", "cwd": cwd, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "npm test"},
        "tool_use_id": "toolu_1"});
    let mut child = Command::new(hook)
        .args(["--agent", "claude-code"])
        .env("HOME", home)
        .env_remove("LEASTGRANT_HOME")
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        payload.to_string().as_bytes(),
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[cfg(unix)]
#[test]
fn a_grant_made_through_a_symlinked_checkout_is_found_through_either_path() {
    let Some(hook) = hook_binary() else {
        eprintln!(
            "skipped: no leastgrant-hook next to leastgrant (`cargo test --workspace` builds it)"
        );
        return;
    };
    let base = std::env::temp_dir().join(format!("leastgrant-e2e-symlink-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let home = base.join("home");
    let real = base.join("disk/checkout");
    let link = base.join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(real.join(".git")).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();

    // Nothing granted yet: the hook asks, through either path.
    for cwd in [&link, &real] {
        let answer = hook_answer(&hook, &home, cwd);
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"],
            "ask",
            "{}: {answer}",
            cwd.display()
        );
    }

    let allowed = crate::support::leastgrant(&home, &link, &["allow", "npm test"]);
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );

    for cwd in [&link, &real] {
        let answer = hook_answer(&hook, &home, cwd);
        let out = &answer["hookSpecificOutput"];
        assert_eq!(
            out["permissionDecision"],
            "allow",
            "{}: {answer}",
            cwd.display()
        );
        assert!(
            out["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("grant"),
            "{answer}"
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}
