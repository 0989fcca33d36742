//! Decisions with a real frozen envelope, through the real binary: what was learned runs, a
//! credential read still asks, a session that read secrets asks again, and a damaged or
//! missing envelope never widens a verdict.

use std::path::Path;

use leastgrant_engine::{
    Envelope, Evidence, FrozenMeta, Posture, ProjectEnvelope, Roots, Settings, Thresholds,
    ToolCall, analyze, encode,
};
use serde_json::{Value, json};

use crate::conformance::{run_hook, scratch};

const DAY_US: i64 = 86_400_000_000;
const PROJECT: &str = "/w/app";

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

/// An envelope in which `commands` were each approved in six sessions over the last six days.
fn learned(home: &Path, commands: &[&str]) -> String {
    let roots = Roots::new(PROJECT, &home.display().to_string());
    let mut envelope = Envelope::default();
    for command in commands {
        let analysis = analyze(&ToolCall::shell(command, Some(PROJECT)), &roots);
        for day in 1..=6 {
            envelope.learn_event(
                &analysis,
                Evidence::Confirmed,
                now_us() - day * DAY_US,
                &format!("past-{day}"),
                None,
            );
        }
    }
    let meta = FrozenMeta {
        setting_id: "assist.c0.6-0.6-0.6".to_string(),
        settings: Settings {
            posture: Posture::Assist,
            thresholds: Thresholds {
                confidence_by_tier: [0.6, 0.6, 0.6],
                ..Thresholds::default()
            },
        },
        rules: Vec::new(),
        provenance: json!({}),
    };
    let bytes = encode(
        &meta,
        &[ProjectEnvelope {
            key: PROJECT,
            root: PROJECT,
            envelope: &envelope,
        }],
    );
    std::fs::write(home.join("state/envelope.lgenv"), &bytes).unwrap();
    leastgrant_engine::Frozen::parse(&bytes).unwrap().digest()
}

fn shell(session: &str, command: &str, cwd: &str) -> Vec<u8> {
    json!({"session_id": session, "transcript_path": "/t", "cwd": cwd, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
        "tool_use_id": format!("toolu_{session}_{}", command.len())})
    .to_string()
    .into_bytes()
}

fn decision(home: &Path, input: &[u8]) -> (String, String) {
    let (code, stdout, stderr) = run_hook(home, "claude-code", input);
    assert_eq!(code, Some(0), "{stderr}");
    let answer: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let out = &answer["hookSpecificOutput"];
    (
        out["permissionDecision"].as_str().unwrap().to_string(),
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

fn last_reasons(home: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(home.join("state/ledger.jsonl")).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    last["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn what_was_learned_runs_and_a_credential_read_still_asks() {
    let home = scratch("learned");
    let digest = learned(&home, &["npm test", "curl https://example.com/status"]);
    let (verdict, reason) = decision(&home, &shell("s1", "npm test", PROJECT));
    assert_eq!(verdict, "allow", "{reason}");
    assert!(
        reason.contains(&digest[..12]),
        "the reason names the envelope: {reason}"
    );
    assert!(last_reasons(&home).contains(&"learned.confirmed".to_string()));
    let (verdict, reason) = decision(&home, &shell("s1", "cat .env", PROJECT));
    assert_eq!(verdict, "ask", "{reason}");
    assert!(last_reasons(&home).contains(&"floor.secret".to_string()));
    // In a subdirectory of the project, the project's envelope applies.
    let (verdict, _) = decision(&home, &shell("s1", "npm test", "/w/app/packages/ui"));
    assert_eq!(verdict, "allow");
    // Another project has learned nothing, and says so.
    let (verdict, reason) = decision(&home, &shell("s1", "npm test", "/w/other"));
    assert_eq!(verdict, "ask");
    assert!(
        reason.contains("nothing learned for this directory"),
        "{reason}"
    );
}

#[test]
fn a_session_that_read_secrets_asks_before_talking_to_the_network() {
    let home = scratch("taint");
    learned(&home, &["curl https://example.com/status"]);
    assert_eq!(
        decision(
            &home,
            &shell("clean", "curl https://example.com/status", PROJECT)
        )
        .0,
        "allow"
    );
    // In session "t" a credential read ran (the agent reports it after the fact).
    let ran = json!({"session_id": "t", "transcript_path": "/t", "cwd": PROJECT, "permission_mode": "default",
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "cat .env"},
        "tool_use_id": "toolu_t_1", "tool_response": {"stdout": "TOKEN=x"}});
    let (code, stdout, _) = run_hook(&home, "claude-code", ran.to_string().as_bytes());
    assert_eq!((code, stdout.as_str()), (Some(0), ""));
    let (verdict, reason) = decision(
        &home,
        &shell("t", "curl https://example.com/status", PROJECT),
    );
    assert_eq!(verdict, "ask", "{reason}");
    assert!(last_reasons(&home).contains(&"session.taint".to_string()));
    // Other sessions are not affected.
    assert_eq!(
        decision(
            &home,
            &shell("other", "curl https://example.com/status", PROJECT)
        )
        .0,
        "allow"
    );
}

#[test]
fn a_damaged_envelope_never_widens_a_verdict() {
    let home = scratch("damaged");
    learned(&home, &["npm test"]);
    let path = home.join("state/envelope.lgenv");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&path, &bytes).unwrap();
    let (code, stdout, stderr) = run_hook(&home, "claude-code", &shell("s1", "npm test", PROJECT));
    assert_eq!(code, Some(0));
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(last_reasons(&home).contains(&"hook.envelope-damaged".to_string()));
    assert!(stderr.contains("frozen envelope"), "{stderr}");
    // Denials stay denials: the integrity floor does not depend on the envelope.
    let state = home.join("state").display().to_string();
    let (verdict, _) = decision(&home, &shell("s1", &format!("rm -rf {state}"), PROJECT));
    assert_eq!(verdict, "deny");
}

/// An envelope of the first format asks, and the reason says which envelope and why.
#[test]
fn an_envelope_of_the_first_format_asks_and_says_so() {
    let home = scratch("format-1");
    std::fs::create_dir_all(home.join("state")).unwrap();
    let old = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/envelope-v1.lgenv");
    std::fs::copy(old, home.join("state/envelope.lgenv")).unwrap();
    let (verdict, reason) = decision(&home, &shell("s1", "npm test", PROJECT));
    assert_eq!(verdict, "ask");
    assert!(
        reason.contains("frozen envelope: format version 1, this build reads version 2"),
        "{reason}"
    );
    assert!(last_reasons(&home).contains(&"hook.envelope-damaged".to_string()));
}

/// Every changed byte the call reads asks (`hook.envelope-damaged`) where the intact envelope
/// allows: only the bytes a call never reads (rules and provenance, the file's digest) may
/// change and leave the allow.
#[test]
fn a_changed_byte_the_call_reads_asks_and_names_the_envelope() {
    let home = scratch("flipped");
    learned(&home, &["npm test"]);
    let path = home.join("state/envelope.lgenv");
    let intact = std::fs::read(&path).unwrap();
    assert_eq!(
        decision(&home, &shell("s0", "npm test", PROJECT)).0,
        "allow"
    );
    let meta_start = intact
        .windows(9)
        .position(|w| w == b"{\"provena" || w == b"{\"rules\":")
        .unwrap();
    // The meta section is `{"provenance":{},"rules":[]}` here: it ends at its `]}`.
    let meta_end = meta_start
        + intact[meta_start..]
            .windows(2)
            .position(|w| w == b"]}")
            .unwrap()
        + 1;
    let mut asked = 0;
    for at in (0..intact.len()).step_by(5) {
        let mut bytes = intact.clone();
        bytes[at] ^= 0x20;
        std::fs::write(&path, &bytes).unwrap();
        let (verdict, reason) = decision(&home, &shell("s0", "npm test", PROJECT));
        if verdict == "allow" {
            assert!(
                (meta_start..=meta_end).contains(&at) || at >= intact.len() - 32,
                "byte {at} changed and the call still allowed"
            );
        } else {
            assert_eq!(verdict, "ask", "byte {at}");
            assert!(reason.contains("frozen envelope"), "byte {at}: {reason}");
            asked += 1;
        }
    }
    assert!(asked > intact.len() / 10, "{asked} asks");
}
