//! The whole loop on one machine: a Claude Code history of approvals → `ingest` → `simulate` →
//! `export` → `install` → the real `leastgrant-hook`, which lets the learned routine command run,
//! still asks before a credential read, and records both in the ledger that the next `ingest`
//! reads back.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::json_of;

/// A Unix time in seconds as a transcript timestamp.
fn iso_seconds(secs: u64) -> String {
    leastgrant_ingest::common::iso_millis(secs as i64 * 1000)
}

const DAY: u64 = 86_400;

fn leastgrant(home: &Path, args: &[&str]) -> Output {
    crate::support::leastgrant(home, home, args)
}

/// Seven attended sessions over the last ten days, each approving `npm test`.
fn write_history(home: &Path) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let dir = home.join(".claude/projects/-home-dev-proj");
    std::fs::create_dir_all(&dir).unwrap();
    for n in 0..7u64 {
        let session = format!("past-{n}");
        let ts = iso_seconds(now - (10 - n) * DAY);
        let id = format!("toolu_past_{n}");
        let lines = [
            json!({"type": "assistant", "uuid": format!("a-{id}"), "sessionId": session, "timestamp": ts,
                "cwd": "/home/dev/proj", "version": "2.1.0", "permissionMode": "default",
                "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "npm test"}}]}}),
            json!({"type": "user", "uuid": format!("u-{id}"), "sessionId": session, "timestamp": ts,
                "message": {"content": [{"type": "tool_result", "tool_use_id": id, "content": "ok", "is_error": false}]}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(dir.join(format!("{session}.jsonl")), text).unwrap();
    }
}

fn hook_binary() -> Option<PathBuf> {
    let hook = Path::new(env!("CARGO_BIN_EXE_leastgrant")).with_file_name("leastgrant-hook");
    hook.exists().then_some(hook)
}

/// Runs the command `install` wrote into Claude Code's settings, as Claude Code would.
fn run_installed(home: &Path, payload: &Value) -> Value {
    let settings: Value =
        serde_json::from_slice(&std::fs::read(home.join(".claude/settings.json")).unwrap())
            .unwrap();
    let command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let mut words = command.split_whitespace();
    let program = words.next().unwrap().trim_matches('"');
    let mut child = Command::new(program)
        .args(words)
        .env("HOME", home)
        .env_remove("LEASTGRANT_HOME")
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
    let text = String::from_utf8(out.stdout).unwrap();
    if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(text.trim()).unwrap()
    }
}

fn pre_tool_use(id: &str, command: &str) -> Value {
    json!({"session_id": "live", "transcript_path": "/t", "cwd": "/home/dev/proj", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": id})
}

#[test]
fn the_learned_routine_runs_and_a_credential_read_still_asks() {
    let Some(hook) = hook_binary() else {
        eprintln!(
            "skipped: no leastgrant-hook next to leastgrant (`cargo test --workspace` builds it)"
        );
        return;
    };
    let home = std::env::temp_dir().join(format!("leastgrant-e2e-hook-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    write_history(&home);

    assert_eq!(
        json_of(&leastgrant(&home, &["ingest", "--json"]))["events"],
        7
    );
    let simulated = json_of(&leastgrant(&home, &["simulate", "--json"]));
    assert!(
        simulated["settings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == "assist")
    );
    let exported = json_of(&leastgrant(
        &home,
        &["export", "--setting", "assist", "--json"],
    ));
    assert_eq!(
        PathBuf::from(exported["path"].as_str().unwrap()),
        home.join(".leastgrant/envelope.lgenv"),
        "the export goes where the hook looks"
    );
    let installed = leastgrant(
        &home,
        &["install", "claude-code", "--hook", hook.to_str().unwrap()],
    );
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );

    let routine = run_installed(&home, &pre_tool_use("toolu_live_1", "npm test"));
    let out = &routine["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "allow", "{routine}");
    let digest = exported["digest"].as_str().unwrap();
    assert!(
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains(&digest[..12]),
        "{routine}"
    );
    let secret = run_installed(&home, &pre_tool_use("toolu_live_2", "cat .env"));
    assert_eq!(
        secret["hookSpecificOutput"]["permissionDecision"], "ask",
        "{secret}"
    );
    let ran = json!({"session_id": "live", "transcript_path": "/t", "cwd": "/home/dev/proj", "permission_mode": "default",
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "npm test"},
        "tool_use_id": "toolu_live_1", "tool_response": {"stdout": "ok"}});
    assert_eq!(run_installed(&home, &ran), Value::Null);

    // The next ingest reads the ledger: the live routine ran, the credential read was asked and
    // never ran.
    let again = json_of(&leastgrant(&home, &["ingest", "--json"]));
    assert_eq!(again["events"], 9, "{again}");

    // `doctor` says which build the registered hook is (this test's build is not the shipped
    // one, so it warns) and times calls of it with the current envelope, away from the ledger.
    let (status, text) = doctor_check(&home, "hook.build");
    assert_eq!(status, "warn", "{text}");
    assert!(text.contains("unshipped"), "{text}");
    assert!(
        text.contains("median of 5 calls with the current envelope"),
        "{text}"
    );
    let lines = std::fs::read_to_string(home.join(".leastgrant/ledger.jsonl")).unwrap();
    assert_eq!(
        lines.lines().count(),
        3,
        "doctor's calls reach no real ledger"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// The status and text of one `doctor --json` check.
fn doctor_check(home: &Path, id: &str) -> (String, String) {
    // Exits 1 here (no hook installed): the report is on standard output all the same.
    let out = leastgrant(home, &["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no `{id}` check: {report}"))
        .clone();
    (
        check["status"].as_str().unwrap().to_string(),
        check["text"].as_str().unwrap().to_string(),
    )
}

/// `export` records each rules file it audited with a digest; `doctor` warns once the rules in
/// force differ (changed, removed or new), since the hook would enforce what no replay audited.
#[test]
fn doctor_warns_when_the_rules_changed_since_the_export() {
    let home = std::env::temp_dir().join(format!("leastgrant-e2e-rules-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(home.join(".leastgrant")).unwrap();
    write_history(&home);
    let rules = home.join(".leastgrant/rules.json");
    std::fs::write(&rules, r#"{"deny": ["Bash(curl:*)"]}"#).unwrap();
    assert_eq!(
        json_of(&leastgrant(&home, &["ingest", "--json"]))["events"],
        7
    );
    let exported = json_of(&leastgrant(
        &home,
        &["export", "--setting", "assist", "--json"],
    ));
    assert!(exported["path"].is_string(), "{exported}");

    let (status, text) = doctor_check(&home, "envelope.rules");
    assert_eq!(status, "ok", "{text}");

    std::fs::write(&rules, r#"{"deny": ["Bash(curl:*)", "Bash(wget:*)"]}"#).unwrap();
    let (status, text) = doctor_check(&home, "envelope.rules");
    assert_eq!(status, "warn", "{text}");
    assert!(text.contains("rules.json changed"), "{text}");

    std::fs::remove_file(&rules).unwrap();
    let (status, text) = doctor_check(&home, "envelope.rules");
    assert_eq!(status, "warn", "{text}");
    assert!(text.contains("was removed"), "{text}");

    let _ = std::fs::remove_dir_all(&home);
}
