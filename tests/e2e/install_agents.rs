//! `leastgrant install`, `uninstall` and `doctor` for Codex CLI, Copilot CLI and Gemini CLI, end
//! to end in a temporary home with the real `leastgrant` and `leastgrant-hook`: each agent's
//! configuration (fixtures in `tests/data/install/`) keeps every entry that is not leastgrant's,
//! is backed up once, a second install changes nothing, the command written answers a payload
//! in that agent's format, `doctor` sees the entries and shows the agent's enforcement row, and
//! uninstall gives the file back byte for byte.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// One agent's case: where its configuration lives, the fixture placed there, and a payload
/// its gate sends with what the answer must say.
struct AgentCase {
    agent: &'static str,
    /// The configuration file under the home.
    file: &'static str,
    fixture: &'static str,
    /// The events `install` registers, each with the pointer to the command in its last item.
    events: &'static [(&'static str, &'static str)],
    /// A gate payload for `rm -rf build`, which a deny rule refuses.
    payload: Value,
    /// Where the answer says deny.
    verdict_at: &'static str,
}

fn cases() -> Vec<AgentCase> {
    vec![
        AgentCase {
            agent: "codex",
            file: ".codex/hooks.json",
            fixture: "tests/data/install/codex-hooks.json",
            events: &[
                ("PreToolUse", "/hooks/0/command"),
                ("PostToolUse", "/hooks/0/command"),
                ("PermissionRequest", "/hooks/0/command"),
            ],
            payload: json!({"session_id": "s1", "turn_id": "u1", "transcript_path": null, "cwd": "/w/app",
                "model": "m", "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": ["rm", "-rf", "build"]}, "tool_use_id": "c1"}),
            verdict_at: "/hookSpecificOutput/permissionDecision",
        },
        AgentCase {
            agent: "copilot",
            file: ".copilot/hooks/leastgrant.json",
            fixture: "tests/data/install/copilot-hooks.json",
            events: &[("PreToolUse", "/bash"), ("PostToolUse", "/bash")],
            payload: json!({"session_id": "s1", "cwd": "/w/app", "hook_event_name": "PreToolUse",
                "tool_name": "bash", "tool_input": {"command": "rm -rf build"}, "tool_use_id": "t1"}),
            verdict_at: "/hookSpecificOutput/permissionDecision",
        },
        AgentCase {
            agent: "gemini",
            file: ".gemini/settings.json",
            fixture: "tests/data/install/gemini-settings.json",
            events: &[
                ("BeforeTool", "/hooks/0/command"),
                ("AfterTool", "/hooks/0/command"),
            ],
            payload: json!({"session_id": "g1", "cwd": "/w/app", "hook_event_name": "BeforeTool",
                "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf build"}}),
            verdict_at: "/decision",
        },
    ]
}

fn hook_binary() -> PathBuf {
    let hook = Path::new(env!("CARGO_BIN_EXE_leastgrant")).with_file_name("leastgrant-hook");
    assert!(
        hook.exists(),
        "no leastgrant-hook next to leastgrant: `cargo build -p leastgrant-hook` first"
    );
    hook
}

/// A fresh sandbox `<temp>/leastgrant-e2e-agents-<name>-<pid>` with a project (`proj`, a git
/// root) and a state directory; returns it and the path of `file` under its home, whose
/// directory is made.
fn sandbox(name: &str, file: &str) -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!(
        "leastgrant-e2e-agents-{name}-{}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("proj/.git")).unwrap();
    fs::create_dir_all(root.join("state")).unwrap();
    let file = root.join("home").join(file);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    (root, file)
}

fn leastgrant(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leastgrant"))
        .env("HOME", root.join("home"))
        .env("LEASTGRANT_HOME", root.join("state"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("COPILOT_HOME")
        .current_dir(root.join("proj"))
        .args(args)
        .output()
        .expect("leastgrant runs")
}

fn json_of(output: &Output) -> Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Runs an installed command as the agent would: through the shell, the payload on stdin.
fn run_installed(root: &Path, command: &str, payload: &Value) -> Value {
    let mut child = Command::new("sh")
        .args(["-c", command])
        .env("HOME", root.join("home"))
        .env("LEASTGRANT_HOME", root.join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the hook always exits 0");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn codex_copilot_and_gemini_install_answer_and_uninstall_without_touching_foreign_entries() {
    let hook = hook_binary();
    let hook_text = hook.display().to_string();
    for case in cases() {
        let (root, file) = sandbox(case.agent, case.file);
        let original = fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(case.fixture)).unwrap();
        fs::write(&file, &original).unwrap();
        let before: Value = serde_json::from_slice(&original).unwrap();

        let report = json_of(&leastgrant(
            &root,
            &["install", case.agent, "--hook", &hook_text, "--json"],
        ));
        assert_eq!(report["changed"], true, "{}", case.agent);
        assert_eq!(report["backup_created"], true, "{}", case.agent);
        let config: Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
        let command = format!("{hook_text} --agent {}", case.agent);
        for (event, pointer) in case.events {
            let items = config["hooks"][*event].as_array().unwrap();
            let ours = items.last().unwrap();
            assert_eq!(
                ours.pointer(pointer).and_then(Value::as_str),
                Some(command.as_str()),
                "{} {event}: {ours}",
                case.agent
            );
        }
        // Every entry that was there before is still there, unchanged, ahead of leastgrant's.
        for (event, items) in before["hooks"].as_object().unwrap() {
            let now = config["hooks"][event].as_array().unwrap();
            for (n, item) in items.as_array().unwrap().iter().enumerate() {
                assert_eq!(&now[n], item, "{} {event}", case.agent);
            }
        }
        for (key, value) in before.as_object().unwrap() {
            if key != "hooks" {
                assert_eq!(&config[key], value, "{} {key}", case.agent);
            }
        }
        let backup = file.with_file_name(format!(
            "{}.leastgrant-backup",
            file.file_name().unwrap().to_string_lossy()
        ));
        assert_eq!(fs::read(&backup).unwrap(), original, "{}", case.agent);

        // Idempotent: nothing changes, and the backup is the first one still.
        let written = fs::read(&file).unwrap();
        let again = json_of(&leastgrant(
            &root,
            &["install", case.agent, "--hook", &hook_text, "--json"],
        ));
        assert_eq!(again["changed"], false, "{}", case.agent);
        assert_eq!(fs::read(&file).unwrap(), written, "{}", case.agent);

        // The command written is the real hook, answering in this agent's format.
        fs::write(
            root.join("state/rules.json"),
            r#"{"deny": ["Bash(rm -rf build)"]}"#,
        )
        .unwrap();
        let (gate, pointer) = case.events[0];
        let installed = config["hooks"][gate]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap()
            .to_string();
        let answer = run_installed(&root, &installed, &case.payload);
        assert_eq!(
            answer.pointer(case.verdict_at),
            Some(&Value::from("deny")),
            "{}: {answer}",
            case.agent
        );

        // doctor sees the entries and reports what the agent enforces.
        let out = leastgrant(&root, &["doctor", "--json"]);
        let doctor: Value = serde_json::from_slice(&out.stdout).unwrap();
        let check = doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == format!("{}.user", case.agent))
            .unwrap();
        assert_eq!(check["status"], "ok", "{}: {check}", case.agent);
        let row = doctor["enforcement"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["agent"] == case.agent)
            .unwrap_or_else(|| panic!("{}: no enforcement row in {doctor}", case.agent));
        for field in ["allow_deny", "ask", "reads", "on_failure", "attended"] {
            assert!(
                row[field].as_str().is_some_and(|t| !t.is_empty()),
                "{}: {field}",
                case.agent
            );
        }

        let removed = json_of(&leastgrant(&root, &["uninstall", case.agent, "--json"]));
        assert_eq!(removed["removed"], case.events.len(), "{}", case.agent);
        assert_eq!(fs::read(&file).unwrap(), original, "{}", case.agent);
        let _ = fs::remove_dir_all(&root);
    }
}

#[test]
fn a_configuration_that_cannot_be_parsed_is_left_untouched_and_named() {
    for case in cases() {
        let (root, file) = sandbox(&format!("bad-{}", case.agent), case.file);
        fs::write(&file, b"{\"hooks\": [").unwrap();
        let out = leastgrant(&root, &["install", case.agent, "--hook", "/bin/true"]);
        assert_ne!(out.status.code(), Some(0), "{}", case.agent);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&file.display().to_string()),
            "{}: {stderr}",
            case.agent
        );
        assert_eq!(fs::read(&file).unwrap(), b"{\"hooks\": [", "{}", case.agent);
        let _ = fs::remove_dir_all(&root);
    }
}

/// Gemini CLI reads its `settings.json` with `//` and `/* */` comments and trailing commas:
/// install reads such a file (a `//` inside a string is no comment), keeps every setting,
/// keeps the file as it was in the backup and says the rewrite drops the comments; doctor sees
/// the entries; uninstall leaves the settings as they were, as plain JSON. With an older backup
/// in the way, a commented file is not rewritten.
#[test]
fn gemini_settings_with_comments_are_read_and_kept_in_the_backup() {
    let hook = hook_binary();
    let hook_text = hook.display().to_string();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/install");
    let original = fs::read(data.join("gemini-settings-comments.json")).unwrap();
    let plain: Value = serde_json::from_slice(
        &fs::read(data.join("gemini-settings-comments.plain.json")).unwrap(),
    )
    .unwrap();
    let (root, file) = sandbox("gemini-comments", ".gemini/settings.json");
    fs::write(&file, &original).unwrap();
    let backup = file.with_file_name("settings.json.leastgrant-backup");

    let out = leastgrant(
        &root,
        &["install", "gemini", "--hook", &hook_text, "--json"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let report = json_of(&out);
    assert_eq!(report["changed"], true);
    assert_eq!(report["backup_created"], true);
    assert!(stderr.contains("had comments"), "{stderr}");
    assert!(stderr.contains(&backup.display().to_string()), "{stderr}");
    assert_eq!(fs::read(&backup).unwrap(), original);
    let mut config: Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    let command = format!("{hook_text} --agent gemini");
    for event in ["BeforeTool", "AfterTool"] {
        let ours = config["hooks"][event]
            .as_array_mut()
            .unwrap()
            .pop()
            .unwrap();
        assert_eq!(ours["hooks"][0]["command"], command.as_str(), "{event}");
    }
    // Without leastgrant's entries, the settings are exactly the commented file's.
    config["hooks"]
        .as_object_mut()
        .unwrap()
        .retain(|_, v| !v.as_array().unwrap().is_empty());
    assert_eq!(config, plain);

    let doctor: Value =
        serde_json::from_slice(&leastgrant(&root, &["doctor", "--json"]).stdout).unwrap();
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "gemini.user")
        .unwrap();
    assert_eq!(check["status"], "ok", "{check}");

    let removed = json_of(&leastgrant(&root, &["uninstall", "gemini", "--json"]));
    assert_eq!(removed["removed"], 2);
    let back: Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    assert_eq!(back, plain);

    // The comments back, and the backup of the first install still there: not rewritten.
    fs::write(&file, &original).unwrap();
    let out = leastgrant(&root, &["install", "gemini", "--hook", &hook_text]);
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("has comments") && stderr.contains("move that backup away"),
        "{stderr}"
    );
    assert_eq!(fs::read(&file).unwrap(), original);
    let _ = fs::remove_dir_all(&root);
}

/// Claude Code refuses a comment in its settings, so a commented `settings.json` is not
/// valid for it here either: install names the file and leaves it untouched.
#[test]
fn claude_settings_with_comments_stay_an_error() {
    let (root, file) = sandbox("claude-comments", ".claude/settings.json");
    let text = b"{\n  // a comment\n  \"theme\": \"dark\"\n}\n";
    fs::write(&file, text).unwrap();
    let out = leastgrant(&root, &["install", "claude-code", "--hook", "/bin/true"]);
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not valid JSON"), "{stderr}");
    assert_eq!(fs::read(&file).unwrap(), text);
    let _ = fs::remove_dir_all(&root);
}
