//! Standing approvals end to end: a Claude Code history whose project and user settings allow
//! some of its commands, through the real `leastgrant ingest` (default discovery from the
//! project's directory, and explicit flags) and `simulate`. The approvals are counted as
//! `granted` rows, shown apart in the replay's labels, grant what they match from the first
//! call — and a standing approval of `cat .env` never unlocks the credential floor.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::support::{ingest_claude, json_of, leastgrant};

const DAY: i64 = 86_400;

fn iso(seconds: i64) -> String {
    let day = 1 + seconds / DAY;
    let rest = seconds % DAY;
    format!(
        "2026-01-{day:02}T{:02}:{:02}:00Z",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// Three attended sessions on three days in `project`, each running (approved) `cargo test`,
/// `cat .env` and `git status`.
fn write_history(home: &Path, project: &Path) {
    let cwd = project.display().to_string();
    let dir = home.join(".claude/projects/-proj");
    std::fs::create_dir_all(&dir).unwrap();
    for day in 0..3 {
        let session = format!("session-{day}");
        let mut lines = Vec::new();
        for (n, command) in ["cargo test", "cat .env", "git status"].iter().enumerate() {
            let id = format!("toolu_{day}_{n}");
            let ts = iso(day * DAY + 10 * 3600 + n as i64 * 60);
            lines.push(json!({"type": "assistant", "uuid": format!("a-{id}"), "sessionId": session,
                "timestamp": ts, "cwd": cwd, "version": "2.1.0", "permissionMode": "default",
                "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}}));
            lines.push(
                json!({"type": "user", "uuid": format!("u-{id}"), "sessionId": session,
                "timestamp": ts, "message": {"content": [{"type": "tool_result", "tool_use_id": id,
                "content": "ok", "is_error": false}]}}),
            );
        }
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(dir.join(format!("{session}.jsonl")), text).unwrap();
    }
}

/// A settings file allowing `rules`, modified at 2025-12-31 (before the history).
fn write_settings(path: &Path, rules: &[&str]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text = json!({"permissions": {"allow": rules}}).to_string();
    std::fs::write(path, text).unwrap();
    let before = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_139_200);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(before)
        .unwrap();
}

fn setting<'a>(summary: &'a Value, id: &str) -> &'a Value {
    summary["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no setting `{id}`"))
}

#[test]
fn standing_approvals_are_granted_evidence_and_never_unlock_a_floor() {
    let home = std::env::temp_dir().join(format!("leastgrant-e2e-standing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let project = home.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    write_history(&home, &project);

    // Without the settings: the history alone.
    let bare = home.join("bare");
    let projects = home.join(".claude/projects");
    let only_history = ingest_claude(&home, &projects, &bare);
    assert_eq!(only_history["events"], 9);
    let before = json_of(&leastgrant(
        &home,
        &home,
        &["simulate", "--events", bare.to_str().unwrap(), "--json"],
    ));

    // The project's local settings ("don't ask again") and the user's own.
    write_settings(
        &project.join(".claude/settings.local.json"),
        &[
            "Bash(cargo test:*)",
            "Bash(cat .env)",
            "Bash",
            "Read(./.env)",
        ],
    );
    write_settings(&home.join(".claude/settings.json"), &["Bash(git status:*)"]);
    // Default discovery from the project's directory finds the history, the project's
    // settings and the user's.
    let ingested = json_of(&leastgrant(&home, &project, &["ingest", "--json"]));
    assert_eq!(ingested["by_outcome"]["granted"], 5, "{ingested}");
    assert_eq!(ingested["events"], 14);
    let after = json_of(&leastgrant(&home, &project, &["simulate", "--json"]));

    // Shown as such: five standing approvals in the project (the user's given to it too), one
    // too broad to be a signature (`Bash`), none unusable; the calls are still nine.
    let labels = &after["labels"]["agents"]["claude-code"];
    assert_eq!(labels["events"], 9, "{labels}");
    assert_eq!(labels["standing"], 5, "{labels}");
    assert_eq!(labels["standing_too_broad"], 1, "{labels}");
    assert_eq!(labels["standing_unusable"], 0, "{labels}");
    // `cargo test`, `git status` and `cat .env` (granted, but floored).
    assert_eq!(labels["standing_signatures"], 3, "{labels}");

    // The strongest consent: `cargo test` and `git status` run from their first call.
    let (was, now) = (setting(&before, "assist"), setting(&after, "assist"));
    assert_eq!(now["events"], 9);
    assert_eq!(was["allow"], 0, "{was}");
    assert_eq!(now["allow"], 6, "{now}");
    assert_eq!(now["ask"], 3, "{now}");
    // And never past a floor: every engine setting asks `cat .env` exactly as often as without
    // the approvals (each ask approved in the history: friction for the credential floor).
    assert_eq!(now["friction_reasons"]["floor.secret"], 3, "{now}");
    for (was, now) in before["settings"]
        .as_array()
        .unwrap()
        .iter()
        .zip(after["settings"].as_array().unwrap())
        .filter(|(s, _)| s["baseline"] == false)
    {
        assert_eq!(was["id"], now["id"]);
        assert_eq!(
            now["friction_reasons"]["floor.secret"], was["friction_reasons"]["floor.secret"],
            "{}",
            now["id"]
        );
        assert!(
            now["allow"].as_u64() >= was["allow"].as_u64(),
            "{}",
            now["id"]
        );
    }

    // The text table says where the evidence came from.
    let text = leastgrant(&home, &project, &["simulate"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("standing approvals") && text.contains("1 too broad"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&home);
}
