//! `leastgrant lint`, `check --rules`, and the grant commands (`allow`, `deny`, `forget`,
//! `rules`), driven end to end in a temporary home.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn home(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leastgrant-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("proj/.git")).unwrap();
    dir
}

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leastgrant"))
        .env("HOME", home)
        .env_remove("LEASTGRANT_HOME")
        .current_dir(home.join("proj"))
        .args(args)
        .output()
        .expect("leastgrant runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn write_rules(home: &Path, json: &str) -> String {
    let path = home.join("rules.json");
    std::fs::write(&path, json).unwrap();
    path.display().to_string()
}

#[test]
fn lint_names_both_rules_and_exits_one() {
    let home = home("lint");
    let rules = write_rules(
        &home,
        r#"{"allow": ["Bash(git push --dry-run:*)"], "ask": ["Bash(git push:*)"], "defaultMode": "ask"}"#,
    );
    let out = run(&home, &["lint", "--rules", &rules]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("warning[prompt-removed]")
            && err.contains("Bash(git push --dry-run:*)")
            && err.contains("Bash(git push:*)"),
        "{err}"
    );
    let clean = write_rules(
        &home,
        r#"{"allow": ["Bash(aws * describe-*)"], "deny": ["Bash(aws:*)"], "defaultMode": "ask"}"#,
    );
    let out = run(&home, &["lint", "--rules", &clean]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let broken = write_rules(&home, r#"{"allow": ["Bash("]}"#);
    let out = run(&home, &["lint", "--rules", &broken]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("is not a rules file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_with_rules_names_the_rule_and_exits_by_verdict() {
    let home = home("check");
    let rules = write_rules(
        &home,
        r#"{"allow": ["Bash(aws * describe-*)"], "deny": ["Bash(aws:*)", "Read(//**/.env*)"], "defaultMode": "ask"}"#,
    );
    for (command, code, named) in [
        ("aws ec2 describe-instances", 0, "Bash(aws * describe-*)"),
        ("aws ec2 terminate-instances", 2, "Bash(aws:*)"),
        ("cat .env", 2, "Read(//**/.env*)"),
    ] {
        let out = run(&home, &["check", "--rules", &rules, command]);
        assert_eq!(out.status.code(), Some(code), "{command}: {}", stdout(&out));
        assert!(
            stdout(&out).contains(&format!("your rule `{named}`")),
            "{command}: {}",
            stdout(&out)
        );
    }
    // The default location is read when no --rules is given.
    std::fs::create_dir_all(home.join(".leastgrant")).unwrap();
    std::fs::copy(&rules, home.join(".leastgrant/rules.json")).unwrap();
    assert_eq!(
        run(&home, &["check", "aws ec2 terminate-instances"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn grants_are_saved_listed_used_and_forgotten() {
    let home = home("grants");
    let out = run(&home, &["allow", "cd src && npm test", "--note", "routine"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().count(),
        2,
        "one grant per action: {}",
        stdout(&out)
    );
    let out = run(&home, &["check", "cd src && npm  test"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("your grant `"), "{}", stdout(&out));
    let out = run(&home, &["deny", "WebSearch"]);
    assert_eq!(out.status.code(), Some(0));
    let out = run(
        &home,
        &[
            "check",
            "--tool",
            "WebSearch",
            "--input",
            r#"{"query": "x"}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let listed = stdout(&run(&home, &["rules"]));
    assert!(
        listed.contains("allow Bash `npm test` — routine")
            && listed.contains("deny WebSearch every call"),
        "{listed}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&run(&home, &["rules", "--json"]).stdout).unwrap();
    assert_eq!(json["grants"].as_array().unwrap().len(), 3);
    let out = run(&home, &["forget", "cd src && npm test"]);
    assert_eq!(
        stdout(&out).matches("forgot ").count(),
        2,
        "{}",
        stdout(&out)
    );
    assert_eq!(run(&home, &["check", "npm test"]).status.code(), Some(1));
    let out = run(&home, &["forget", "--all"]);
    assert!(stdout(&out).contains("forgot ") && stdout(&out).contains("WebSearch"));
    assert!(stdout(&run(&home, &["rules"])).contains("  none"));
}

#[test]
fn an_exact_grant_covers_only_that_text() {
    let home = home("exact");
    assert_eq!(
        run(&home, &["allow", "--exact", "npm test"]).status.code(),
        Some(0)
    );
    assert_eq!(run(&home, &["check", "npm test"]).status.code(), Some(0));
    assert_eq!(run(&home, &["check", "npm  test"]).status.code(), Some(1));
}

#[test]
fn an_unread_command_needs_exact_to_be_granted() {
    let home = home("unread");
    let out = run(&home, &["allow", "make deploy"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("is not understood") && stderr(&out).contains("--exact"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn claude_code_settings_layers_apply_on_request() {
    let home = home("claude");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(curl:*)"], "defaultMode": "acceptEdits"}, "model": "x"}"#,
    )
    .unwrap();
    std::fs::create_dir_all(home.join("proj/.claude")).unwrap();
    std::fs::write(
        home.join("proj/.claude/settings.local.json"),
        r#"{"permissions": {"allow": ["Bash(npm test:*)"]}}"#,
    )
    .unwrap();
    assert_eq!(
        run(&home, &["check", "curl https://x.example"])
            .status
            .code(),
        Some(1),
        "off by default"
    );
    assert_eq!(
        run(
            &home,
            &["check", "--claude-settings", "curl https://x.example"]
        )
        .status
        .code(),
        Some(2)
    );
    assert_eq!(
        run(&home, &["check", "--claude-settings", "npm test"])
            .status
            .code(),
        Some(0)
    );
    // Claude Code's defaultMode is a session mode, not a fall-back: unmatched calls still ask.
    assert_eq!(
        run(&home, &["check", "--claude-settings", "ls"])
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn the_projects_own_rules_file_may_only_tighten() {
    let home = home("project-rules");
    std::fs::create_dir_all(home.join(".leastgrant")).unwrap();
    std::fs::write(
        home.join(".leastgrant/rules.json"),
        r#"{"deny": ["Bash(rm:*)"], "defaultMode": "ask"}"#,
    )
    .unwrap();
    std::fs::create_dir_all(home.join("proj/.leastgrant")).unwrap();
    std::fs::write(
        home.join("proj/.leastgrant/rules.json"),
        r#"{"allow": ["Bash(rm -rf:*)"], "deny": ["Bash(curl:*)"], "defaultMode": "ask"}"#,
    )
    .unwrap();
    assert_eq!(
        run(&home, &["check", "rm -rf build"]).status.code(),
        Some(2),
        "the repository cannot carve out of the user's deny"
    );
    assert_eq!(
        run(&home, &["check", "curl https://x.example"])
            .status
            .code(),
        Some(2),
        "but it can tighten"
    );
    let out = run(&home, &["lint"]);
    assert!(
        stderr(&out).contains("warning[untrusted-allow]"),
        "{}",
        stderr(&out)
    );
    // And the agent cannot write that file.
    assert_eq!(
        run(&home, &["check", "echo '{}' > .leastgrant/rules.json"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn rules_compiles_the_hooks_tables_so_a_call_only_loads_them() {
    let home = home("rules-tables");
    let state = home.join(".leastgrant");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("rules.json"),
        r#"{"allow": ["Bash(npm test)"], "deny": ["Bash(curl:*)"], "defaultMode": "ask"}"#,
    )
    .unwrap();
    let tables = state.join("cache/rules");
    assert!(!tables.exists(), "no table before any command");
    let listed = run(&home, &["rules"]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let written: Vec<_> = std::fs::read_dir(&tables)
        .expect("`rules` made the tables' directory")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        written.len(),
        1,
        "one table for the one rules file: {written:?}"
    );
    assert!(written[0].extension().is_some_and(|e| e == "lgrules"));
    let mode = std::fs::metadata(&written[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the table is owner-only");
}
