//! The conformance and edge cases of research/hooks.md §7–§8 as data: a payload goes into the
//! real `leastgrant-hook` binary, and its exact answer (structure, with `<r>` standing for a
//! non-empty reason), its exit code and the ledger line it wrote are checked.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct File {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    agent: String,
    /// The payload as text (or `payload_hex` for bytes that are not UTF-8).
    payload: Option<String>,
    payload_hex: Option<String>,
    #[serde(default)]
    bom: bool,
    /// A rules file for the state directory, so the engine's verdict is what the case needs.
    rules: Option<String>,
    /// The answer; absent means no output at all.
    expect: Option<String>,
    /// Fields of the last ledger line.
    ledger: Option<toml::Table>,
}

pub fn hook_binary() -> &'static str {
    env!("CARGO_BIN_EXE_leastgrant-hook")
}

/// A scratch home with a state directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leastgrant-hook-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("state")).unwrap();
    dir
}

/// The hook for `agent`, in a scratch home, with piped standard input and output.
fn hook_command(home: &Path, agent: &str) -> Command {
    let mut command = Command::new(hook_binary());
    command
        .args(["--agent", agent])
        .env("HOME", home)
        .env("LEASTGRANT_HOME", home.join("state"))
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    command
}

/// Runs the hook; returns (exit code, stdout, stderr).
pub fn run_hook(home: &Path, agent: &str, input: &[u8]) -> (Option<i32>, String, String) {
    let mut child = hook_command(home, agent)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `expected` with `"<r>"` matching any non-empty string.
fn matches(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::String(a), Value::String(e)) if e == "<r>" => !a.trim().is_empty(),
        (Value::Object(a), Value::Object(e)) => {
            a.len() == e.len()
                && e.iter()
                    .all(|(k, v)| a.get(k).is_some_and(|av| matches(av, v)))
        }
        (Value::Array(a), Value::Array(e)) => {
            a.len() == e.len() && a.iter().zip(e).all(|(x, y)| matches(x, y))
        }
        (a, e) => a == e,
    }
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn conformance_cases() {
    let file: File = toml::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/conformance.toml"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut failures = Vec::new();
    for (n, case) in file.case.iter().enumerate() {
        let home = scratch(&format!("case{n}"));
        if let Some(rules) = &case.rules {
            std::fs::write(home.join("state/rules.json"), rules).unwrap();
        }
        let mut input = Vec::new();
        if case.bom {
            input.extend_from_slice(&[0xEF, 0xBB, 0xBF]);
        }
        match (&case.payload, &case.payload_hex) {
            (Some(text), None) => {
                let state = home.join("state").display().to_string();
                input.extend_from_slice(text.replace("STATE", &state).as_bytes());
            }
            (None, Some(h)) => input.extend(hex(h)),
            (None, None) => {}
            _ => panic!("{}: payload or payload_hex, not both", case.name),
        }
        let (code, stdout, stderr) = run_hook(&home, &case.agent, &input);
        let mut problems = Vec::new();
        if code != Some(0) {
            problems.push(format!("exit {code:?} (stderr: {stderr})"));
        }
        if !stdout.is_ascii() {
            problems.push("stdout is not ASCII".to_string());
        }
        match &case.expect {
            None if !stdout.is_empty() => {
                problems.push(format!("expected no output, got {stdout}"))
            }
            None => {}
            Some(expected) => {
                let expected: Value = serde_json::from_str(expected).unwrap();
                let lines: Vec<&str> = stdout.lines().collect();
                match lines.as_slice() {
                    [line] => match serde_json::from_str::<Value>(line) {
                        Ok(actual) if matches(&actual, &expected) => {}
                        Ok(actual) => {
                            problems.push(format!("answer {actual}\n    expected {expected}"))
                        }
                        Err(e) => problems.push(format!("not JSON ({e}): {stdout}")),
                    },
                    _ => problems.push(format!("expected one line, got {stdout:?}")),
                }
            }
        }
        if let Some(fields) = &case.ledger {
            let text = std::fs::read_to_string(home.join("state/ledger.jsonl")).unwrap_or_default();
            let last: Value = text
                .lines()
                .last()
                .and_then(|l| serde_json::from_str(l).ok())
                .unwrap_or(Value::Null);
            for (key, want) in fields {
                let want: Value = serde_json::to_value(want).unwrap();
                if last.get(key) != Some(&want)
                    && !(want == Value::String("<null>".into())
                        && last.get(key) == Some(&Value::Null))
                {
                    problems.push(format!(
                        "ledger `{key}` is {:?}, expected {want}",
                        last.get(key)
                    ));
                }
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{}:\n  {}", case.name, problems.join("\n  ")));
        }
        let _ = std::fs::remove_dir_all(&home);
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Starts the hook and writes `first` to it without closing its input; `rest`, if any, follows
/// after `pause` and then the input closes. Returns stdout.
fn run_hook_held_open(
    home: &Path,
    agent: &str,
    first: &[u8],
    rest: Option<(Vec<u8>, std::time::Duration)>,
) -> String {
    let mut child = hook_command(home, agent)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(first).unwrap();
    stdin.flush().unwrap();
    let writer = std::thread::spawn(move || {
        match rest {
            Some((bytes, pause)) => {
                std::thread::sleep(pause);
                let _ = stdin.write_all(&bytes);
                drop(stdin);
            }
            // Hold the input open well past the hook's limit.
            None => {
                std::thread::sleep(std::time::Duration::from_secs(8));
                drop(stdin);
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    // The writer of a held-open input is left to finish on its own.
    drop(writer);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_writer_that_never_closes_the_input_gets_a_refusal_not_silence() {
    let payload = br#"{"session_id":"s","hook_event_name":"PreToolUse","cwd":"/w","tool_name":"Bash","tool_input":{"command":"ls"}"#;
    for (agent, field) in [
        ("claude-code", "/hookSpecificOutput/permissionDecision"),
        ("cursor", "/permission"),
    ] {
        let home = scratch(&format!("held-open-{agent}"));
        let stdout = run_hook_held_open(&home, agent, payload, None);
        let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(
            answer.pointer(field),
            Some(&Value::from("deny")),
            "{agent}: {stdout}"
        );
        // The time limit's answer: had the hook waited for the writer to close (8 s), it would
        // have refused a torn payload with another reason.
        assert!(stdout.contains("no complete input"), "{agent}: {stdout}");
        let _ = std::fs::remove_dir_all(&home);
    }
}

#[test]
fn a_payload_written_in_pieces_is_read_whole() {
    let home = scratch("pieces");
    let payload = br#"{"session_id":"s","hook_event_name":"PreToolUse","cwd":"/w","tool_name":"Bash","tool_input":{"command":"cat ~/.ssh/id_rsa"}}"#;
    let (head, tail) = payload.split_at(40);
    let stdout = run_hook_held_open(
        &home,
        "claude-code",
        head,
        Some((tail.to_vec(), std::time::Duration::from_millis(300))),
    );
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
    // The whole call was read: a credential read reaches a person, not an unreadable-input deny.
    assert_eq!(
        answer.pointer("/hookSpecificOutput/permissionDecision"),
        Some(&Value::from("ask")),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&home);
}
