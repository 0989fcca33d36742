//! `leastgrant install`, `uninstall` and `doctor` driven end to end in a temporary home: the
//! agents' configuration files (fixtures in `tests/data/install/`) keep everything that is not
//! leastgrant's, a second run changes nothing, a different hook binary needs `--repoint`, and
//! `doctor` reports what is missing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const CLAUDE_FIXTURE: &str = "tests/data/install/claude-settings.json";
const CURSOR_FIXTURE: &str = "tests/data/install/cursor-hooks.json";
const INVALID_FIXTURE: &str = "tests/data/install/invalid.json";

/// A temporary root holding `home/`, `proj/` (a git repository with a `sub/` directory),
/// `state/` (`LEASTGRANT_HOME`) and `bin/leastgrant-hook` (an executable stand-in).
fn sandbox(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!(
        "leastgrant-e2e-install-{name}-{}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("home")).unwrap();
    fs::create_dir_all(root.join("proj/.git")).unwrap();
    fs::create_dir_all(root.join("proj/sub")).unwrap();
    let hook = fake_hook(&root.join("bin"));
    assert!(hook.exists());
    root
}

/// An executable file named `leastgrant-hook` in `dir`.
fn fake_hook(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let hook = dir.join("leastgrant-hook");
    fs::write(&hook, "#!/bin/sh\nexit 0\n").unwrap();
    set_mode(&hook, 0o755);
    hook
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn leastgrant_in(root: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leastgrant"))
        .env("HOME", root.join("home"))
        .env("LEASTGRANT_HOME", root.join("state"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("leastgrant runs")
}

fn leastgrant(root: &Path, args: &[&str]) -> Output {
    leastgrant_in(root, &root.join("proj"), args)
}

fn hook_of(root: &Path) -> String {
    root.join("bin/leastgrant-hook").display().to_string()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            stdout(output),
            stderr(output)
        )
    })
}

fn succeeded(output: &Output) -> &Output {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        stdout(output),
        stderr(output)
    );
    output
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

fn fixture(path: &str) -> Vec<u8> {
    fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// Copies a fixture to `dest` (creating its directory).
fn place(fixture_path: &str, dest: &Path) -> Vec<u8> {
    fs::create_dir_all(dest.parent().unwrap()).unwrap();
    let bytes = fixture(fixture_path);
    fs::write(dest, &bytes).unwrap();
    bytes
}

/// The commands of every handler in a Claude Code event.
fn claude_commands(config: &Value, event: &str) -> Vec<String> {
    config["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn claude_install_keeps_the_file_and_uninstall_gives_it_back() {
    let root = sandbox("claude-round-trip");
    let settings = root.join("home/.claude/settings.json");
    let original = place(CLAUDE_FIXTURE, &settings);
    set_mode(&settings, 0o640);
    let hook = hook_of(&root);
    let command = format!("{hook} --agent claude-code");

    let out = leastgrant(
        &root,
        &["install", "claude-code", "--hook", &hook, "--json"],
    );
    let report = json_of(succeeded(&out));
    assert_eq!(report["changed"], true, "{report}");
    assert_eq!(report["command"], command.as_str(), "{report}");
    assert_eq!(
        report["events"],
        serde_json::json!(["PreToolUse", "PostToolUse", "PostToolUseFailure"])
    );
    assert_eq!(report["backup_created"], true, "{report}");

    let installed = read_json(&settings);
    let before: Value = serde_json::from_slice(&original).unwrap();
    for key in [
        "$schema",
        "permissions",
        "model",
        "env",
        "cleanupPeriodDays",
    ] {
        assert_eq!(installed[key], before[key], "{key} changed");
    }
    assert_eq!(installed["hooks"]["Stop"], before["hooks"]["Stop"]);
    // The other tool's gate stays first; ours follows as its own matcher group.
    let pre = installed["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2);
    assert_eq!(pre[0], before["hooks"]["PreToolUse"][0]);
    for event in ["PreToolUse", "PostToolUse", "PostToolUseFailure"] {
        let groups = installed["hooks"][event].as_array().unwrap();
        let ours = groups.last().unwrap();
        assert_eq!(
            *ours,
            serde_json::json!({"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 10}]}),
            "{event}"
        );
    }
    // Keys keep their order and numbers their spelling.
    let text = fs::read_to_string(&settings).unwrap();
    assert!(text.ends_with("}\n"), "{text}");
    let at = |needle: &str| text.find(needle).unwrap();
    assert!(at("\"$schema\"") < at("\"permissions\"") && at("\"model\"") < at("\"hooks\""));
    assert!(at("\"hooks\"") < at("\"env\"") && at("\"env\"") < at("\"cleanupPeriodDays\""));
    assert!(text.contains("\"cleanupPeriodDays\": 1.5e1"), "{text}");
    assert!(text.contains("héllo"), "{text}");
    assert_eq!(mode_of(&settings), 0o640, "the file's mode is kept");

    let backup = root.join("home/.claude/settings.json.leastgrant-backup");
    assert_eq!(
        fs::read(&backup).unwrap(),
        original,
        "the backup is the file before"
    );

    // A second install changes nothing, and says so.
    let written = fs::read(&settings).unwrap();
    let out = leastgrant(&root, &["install", "claude-code", "--hook", &hook]);
    assert!(
        stdout(succeeded(&out)).contains("nothing changed"),
        "{}",
        stdout(&out)
    );
    assert_eq!(fs::read(&settings).unwrap(), written);

    // Uninstall removes exactly ours: the file is the fixture again, byte for byte.
    let out = leastgrant(&root, &["uninstall", "claude-code", "--json"]);
    let report = json_of(succeeded(&out));
    assert_eq!(report["removed"], 3, "{report}");
    assert_eq!(read_json(&settings), before);
    assert_eq!(fs::read(&settings).unwrap(), original);
    assert_eq!(mode_of(&settings), 0o640);
    assert_eq!(
        fs::read(&backup).unwrap(),
        original,
        "an older backup is never overwritten"
    );

    let out = leastgrant(&root, &["uninstall", "claude-code"]);
    assert!(stdout(succeeded(&out)).contains("nothing changed"));
    assert_eq!(fs::read(&settings).unwrap(), original);
}

#[test]
fn a_different_hook_binary_is_refused_until_repoint() {
    let root = sandbox("repoint");
    let settings = root.join("home/.claude/settings.json");
    place(CLAUDE_FIXTURE, &settings);
    let first = hook_of(&root);
    succeeded(&leastgrant(
        &root,
        &["install", "claude-code", "--hook", &first],
    ));
    let installed = fs::read(&settings).unwrap();

    let second = fake_hook(&root.join("bin2")).display().to_string();
    let out = leastgrant(&root, &["install", "claude-code", "--hook", &second]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&first) && err.contains(&second) && err.contains("--repoint"),
        "{err}"
    );
    assert_eq!(
        fs::read(&settings).unwrap(),
        installed,
        "refused: untouched"
    );

    let out = leastgrant(
        &root,
        &["install", "claude-code", "--hook", &second, "--repoint"],
    );
    succeeded(&out);
    let config = read_json(&settings);
    for event in ["PreToolUse", "PostToolUse", "PostToolUseFailure"] {
        let commands = claude_commands(&config, event);
        assert!(
            commands.contains(&format!("{second} --agent claude-code")),
            "{commands:?}"
        );
        assert!(!commands.iter().any(|c| c.contains(&first)), "{commands:?}");
    }
    assert!(
        claude_commands(&config, "PreToolUse")
            .contains(&"/usr/local/bin/other-guard --check".into())
    );
}

#[test]
fn cursor_install_writes_only_known_events_and_uninstall_gives_the_file_back() {
    let root = sandbox("cursor-round-trip");
    let hooks_file = root.join("home/.cursor/hooks.json");
    let original = place(CURSOR_FIXTURE, &hooks_file);
    let hook = hook_of(&root);
    let command = format!("{hook} --agent cursor");

    succeeded(&leastgrant(&root, &["install", "cursor", "--hook", &hook]));
    let config = read_json(&hooks_file);
    assert_eq!(config["version"], 1);
    let mut events: Vec<&str> = config["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    events.sort_unstable();
    assert_eq!(
        events,
        [
            "afterFileEdit",
            "afterMCPExecution",
            "afterShellExecution",
            "beforeMCPExecution",
            "beforeReadFile",
            "beforeShellExecution",
            "preToolUse",
            "stop"
        ],
        "no event name Cursor does not know"
    );
    let shell = config["hooks"]["beforeShellExecution"].as_array().unwrap();
    assert_eq!(
        shell[0],
        serde_json::json!({"command": "./hooks/audit.sh", "timeout": 30})
    );
    assert_eq!(
        shell[1],
        serde_json::json!({"command": command, "timeout": 10, "failClosed": true})
    );
    for gate in ["beforeMCPExecution", "beforeReadFile"] {
        assert_eq!(
            config["hooks"][gate],
            serde_json::json!([{"command": command, "timeout": 10, "failClosed": true}]),
            "{gate}"
        );
    }
    assert_eq!(
        config["hooks"]["preToolUse"],
        serde_json::json!([{"command": command, "timeout": 10, "failClosed": true, "matcher": "Read|Write|Delete"}])
    );
    for observer in ["afterShellExecution", "afterMCPExecution", "afterFileEdit"] {
        assert_eq!(
            config["hooks"][observer],
            serde_json::json!([{"command": command, "timeout": 10}]),
            "{observer}: an observer never fails closed"
        );
    }
    assert_eq!(
        fs::read(root.join("home/.cursor/hooks.json.leastgrant-backup")).unwrap(),
        original
    );

    let written = fs::read(&hooks_file).unwrap();
    let out = leastgrant(&root, &["install", "cursor", "--hook", &hook, "--json"]);
    assert_eq!(json_of(succeeded(&out))["changed"], false);
    assert_eq!(fs::read(&hooks_file).unwrap(), written);

    succeeded(&leastgrant(&root, &["uninstall", "cursor"]));
    assert_eq!(
        read_json(&hooks_file),
        serde_json::from_slice::<Value>(&original).unwrap()
    );
    assert_eq!(fs::read(&hooks_file).unwrap(), original);
}

#[test]
fn uninstall_keeps_another_tools_handler_in_a_shared_group() {
    let root = sandbox("shared-group");
    let settings = root.join("home/.claude/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let hook = hook_of(&root);
    let shared = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "other-guard"},
        {"type": "command", "command": format!("'{hook}' --agent claude-code")}
    ]}]}});
    fs::write(&settings, serde_json::to_string_pretty(&shared).unwrap()).unwrap();

    let out = leastgrant(&root, &["uninstall", "claude-code", "--json"]);
    assert_eq!(json_of(succeeded(&out))["removed"], 1);
    assert_eq!(
        read_json(&settings),
        serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "other-guard"}
        ]}]}})
    );
}

#[test]
fn project_install_writes_under_the_git_root() {
    let root = sandbox("project");
    let hook = hook_of(&root);
    let sub = root.join("proj/sub");
    for agent in ["claude-code", "cursor"] {
        let out = leastgrant_in(
            &root,
            &sub,
            &["install", agent, "--project", "--hook", &hook, "--json"],
        );
        let report = json_of(succeeded(&out));
        assert_eq!(report["scope"], "project");
    }
    let settings = root.join("proj/.claude/settings.json");
    let hooks_file = root.join("proj/.cursor/hooks.json");
    assert_eq!(
        claude_commands(&read_json(&settings), "PreToolUse"),
        [format!("{hook} --agent claude-code")]
    );
    assert_eq!(
        read_json(&hooks_file)["hooks"]["beforeShellExecution"][0]["command"],
        format!("{hook} --agent cursor")
    );
    assert!(!root.join("proj/sub/.claude").exists());
    assert!(!root.join("home/.claude").exists() && !root.join("home/.cursor").exists());

    let out = leastgrant_in(&root, &sub, &["doctor", "--json"]);
    let report = json_of(&out);
    let status = |id: &str| {
        check_of(&report, id)["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("claude-code.project"), "ok");
    assert_eq!(status("cursor.project"), "ok");
    assert_eq!(status("claude-code.user"), "ok", "covered by the project");

    succeeded(&leastgrant_in(
        &root,
        &sub,
        &["uninstall", "claude-code", "--project"],
    ));
    assert_eq!(read_json(&settings), serde_json::json!({"hooks": {}}));
}

#[test]
fn invalid_json_is_refused_and_left_untouched() {
    let root = sandbox("invalid");
    let hook = hook_of(&root);
    for (agent, file) in [
        ("claude-code", root.join("home/.claude/settings.json")),
        ("cursor", root.join("home/.cursor/hooks.json")),
    ] {
        let original = place(INVALID_FIXTURE, &file);
        for args in [
            vec!["install", agent, "--hook", hook.as_str()],
            vec!["uninstall", agent],
        ] {
            let out = leastgrant(&root, &args);
            assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stdout(&out));
            assert!(
                stderr(&out).contains("is not valid JSON"),
                "{}",
                stderr(&out)
            );
            assert_eq!(fs::read(&file).unwrap(), original);
        }
        let mut backup = file.clone().into_os_string();
        backup.push(".leastgrant-backup");
        assert!(!Path::new(&backup).exists());
    }
    // `hooks` that is not an object is refused too.
    let settings = root.join("home/.claude/settings.json");
    fs::write(&settings, "{\"hooks\": [1]}").unwrap();
    let out = leastgrant(&root, &["install", "claude-code", "--hook", &hook]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(fs::read_to_string(&settings).unwrap(), "{\"hooks\": [1]}");
}

#[test]
fn a_new_file_is_created_owner_only_with_its_directories() {
    let root = sandbox("fresh");
    let hook = hook_of(&root);
    let out = leastgrant(&root, &["install", "cursor", "--hook", &hook, "--json"]);
    let report = json_of(succeeded(&out));
    assert_eq!(report["changed"], true);
    assert_eq!(report["backup"], Value::Null, "nothing to back up");
    let hooks_file = root.join("home/.cursor/hooks.json");
    assert_eq!(mode_of(&hooks_file), 0o600);
    let text = fs::read_to_string(&hooks_file).unwrap();
    assert!(
        text.starts_with("{\n  \"version\": 1,\n  \"hooks\": {\n"),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
    let leftovers: Vec<_> = fs::read_dir(root.join("home/.cursor"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers, ["hooks.json"], "no temp file left behind");
}

#[test]
fn a_hook_path_with_spaces_is_quoted_and_still_recognised() {
    let root = sandbox("spaces");
    let hook = fake_hook(&root.join("my tools")).display().to_string();
    succeeded(&leastgrant(
        &root,
        &["install", "claude-code", "--hook", &hook],
    ));
    let settings = root.join("home/.claude/settings.json");
    let commands = claude_commands(&read_json(&settings), "PreToolUse");
    assert_eq!(commands, [format!("\"{hook}\" --agent claude-code")]);

    let out = leastgrant(&root, &["install", "claude-code", "--hook", &hook]);
    assert!(stdout(succeeded(&out)).contains("nothing changed"));
    let out = leastgrant(&root, &["doctor", "--json"]);
    assert_eq!(
        check_of(&json_of(&out), "claude-code.user")["status"],
        "ok",
        "{}",
        stdout(&out)
    );
    let out = leastgrant(&root, &["uninstall", "claude-code", "--json"]);
    assert_eq!(json_of(succeeded(&out))["removed"], 3);
}

#[test]
fn the_default_hook_is_leastgrant_hook_next_to_leastgrant() {
    let root = sandbox("default-hook");
    let out = leastgrant(&root, &["install", "claude-code", "--json"]);
    let report = json_of(succeeded(&out));
    let expected = Path::new(env!("CARGO_BIN_EXE_leastgrant")).with_file_name("leastgrant-hook");
    assert_eq!(report["hook"], expected.display().to_string());
    assert_eq!(report["hook_exists"], expected.exists(), "{}", stderr(&out));
    if !expected.exists() {
        assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    }
}

fn check_of<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check `{id}` in {report}"))
}

#[test]
fn doctor_on_a_fresh_home_fails_and_says_why() {
    let root = sandbox("doctor-fresh");
    let out = leastgrant(&root, &["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["ok"], false);
    for check in report["checks"].as_array().unwrap() {
        assert!(
            check["id"].is_string() && check["text"].is_string(),
            "{check}"
        );
        assert!(
            ["ok", "warn", "fail"].contains(&check["status"].as_str().unwrap()),
            "{check}"
        );
    }
    let status = |id: &str| {
        check_of(&report, id)["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("hooks.installed"), "fail");
    assert_eq!(status("envelope.file"), "fail");
    for id in [
        "claude-code.user",
        "claude-code.project",
        "cursor.user",
        "cursor.project",
    ] {
        assert_eq!(status(id), "warn", "{id}");
    }
    for id in [
        "perm.state-dir",
        "perm.envelope",
        "perm.ledger",
        "perm.grants",
    ] {
        assert_eq!(status(id), "ok", "{id}: absent is not a problem");
    }
    let agents: Vec<&str> = report["enforcement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["agent"].as_str().unwrap())
        .collect();
    assert_eq!(
        agents,
        ["claude-code", "cursor", "codex", "copilot", "gemini"]
    );
    let cursor = &report["enforcement"][1];
    assert!(cursor["on_failure"].as_str().unwrap().contains("CLOSED"));
    assert!(
        report["enforcement"][0]["on_failure"]
            .as_str()
            .unwrap()
            .contains("OPEN")
    );

    // The text report: one line per check, led by its status, then the table.
    let out = leastgrant(&root, &["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), report["checks"].as_array().unwrap().len());
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("ok ") || l.starts_with("warn ") || l.starts_with("fail ")),
        "{text}"
    );
    assert!(text.contains("what each agent enforces"), "{text}");
}

#[test]
fn doctor_after_install_sees_the_entries_and_a_damaged_envelope() {
    let root = sandbox("doctor-installed");
    let hook = hook_of(&root);
    for agent in ["claude-code", "cursor"] {
        succeeded(&leastgrant(&root, &["install", agent, "--hook", &hook]));
    }
    let state = root.join("state");
    fs::create_dir_all(&state).unwrap();
    set_mode(&state, 0o700);
    fs::write(state.join("envelope.lgenv"), b"LGFROZEN not really").unwrap();
    set_mode(&state.join("envelope.lgenv"), 0o644);
    fs::write(state.join("ledger.jsonl"), b"").unwrap();
    set_mode(&state.join("ledger.jsonl"), 0o666);

    let out = leastgrant(&root, &["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json_of(&out);
    let status = |id: &str| {
        check_of(&report, id)["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let text = |id: &str| check_of(&report, id)["text"].as_str().unwrap().to_string();
    assert_eq!(
        status("claude-code.user"),
        "ok",
        "{}",
        text("claude-code.user")
    );
    assert_eq!(status("cursor.user"), "ok", "{}", text("cursor.user"));
    assert!(text("cursor.user").contains("fail closed"));
    assert_eq!(status("claude-code.project"), "ok");
    assert_eq!(status("hooks.installed"), "ok");
    assert_eq!(status("hooks.overlap"), "warn");
    assert_eq!(status("envelope.file"), "fail");
    assert!(text("envelope.file").contains("damaged"), "{report}");
    assert_eq!(status("envelope.project"), "warn");
    assert_eq!(status("perm.state-dir"), "ok");
    assert_eq!(status("perm.envelope"), "warn", "readable by others");
    assert_eq!(status("perm.ledger"), "fail", "writable by others");

    // Once the hook binary is gone, the entries that run it fail.
    fs::remove_file(root.join("bin/leastgrant-hook")).unwrap();
    let report = json_of(&leastgrant(&root, &["doctor", "--json"]));
    let status = |id: &str| {
        check_of(&report, id)["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("claude-code.user"), "fail");
    assert_eq!(status("cursor.user"), "fail");
}

#[test]
fn doctor_warns_when_cursor_gates_can_fail_open() {
    let root = sandbox("doctor-fail-open");
    let hook = hook_of(&root);
    let hooks_file = root.join("home/.cursor/hooks.json");
    fs::create_dir_all(hooks_file.parent().unwrap()).unwrap();
    // An older install: every event, but no failClosed.
    let entry = serde_json::json!([{"command": format!("{hook} --agent cursor")}]);
    let events = [
        "beforeShellExecution",
        "beforeMCPExecution",
        "beforeReadFile",
        "preToolUse",
        "afterShellExecution",
        "afterMCPExecution",
        "afterFileEdit",
    ];
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|e| (e.to_string(), entry.clone()))
        .collect();
    let config = serde_json::json!({"version": 1, "hooks": hooks});
    fs::write(&hooks_file, config.to_string()).unwrap();

    let report = json_of(&leastgrant(&root, &["doctor", "--json"]));
    let cursor = check_of(&report, "cursor.user");
    assert_eq!(cursor["status"], "warn", "{cursor}");
    assert!(
        cursor["text"].as_str().unwrap().contains("failClosed"),
        "{cursor}"
    );

    // Installing again brings the old entries up to date, one entry per event.
    let out = leastgrant(&root, &["install", "cursor", "--hook", &hook, "--json"]);
    assert_eq!(
        json_of(succeeded(&out))["events"].as_array().unwrap().len(),
        7
    );
    let config = read_json(&hooks_file);
    for event in events {
        assert_eq!(
            config["hooks"][event].as_array().unwrap().len(),
            1,
            "{event}"
        );
    }
    assert_eq!(config["hooks"]["beforeReadFile"][0]["failClosed"], true);
    let report = json_of(&leastgrant(&root, &["doctor", "--json"]));
    assert_eq!(check_of(&report, "cursor.user")["status"], "ok");
}
