//! `leastgrant export --to/--check/--diff` end to end: a Claude Code history ingested,
//! simulated and frozen, then rendered as native rules into a settings file with foreign rules,
//! checked, and compared.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{at_home, claude_week, scratch};

/// A home with the week's history ingested and the `assist` setting's envelope frozen, and
/// the envelope's path.
fn frozen(name: &str) -> (PathBuf, String) {
    let home = scratch(&format!("native-{name}"));
    claude_week(&home, "2.1.0");
    assert!(at_home(&home, &["ingest", "--json"]).status.success());
    let envelope = home.join("envelope.lgenv").to_str().unwrap().to_string();
    let exported = at_home(
        &home,
        &["export", "--setting", "assist", "--out", &envelope],
    );
    assert!(exported.status.success(), "{}", text(&exported));
    (home, envelope)
}

/// `leastgrant <args>` for the project `/home/dev/proj` of the envelope `env`, as of
/// 2026-01-08.
fn on_project(home: &Path, env: &str, args: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend([
        "--project",
        "/home/dev/proj",
        "--envelope",
        env,
        "--at",
        "2026-01-08",
    ]);
    at_home(home, &all)
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).to_string() + &String::from_utf8_lossy(&output.stderr)
}

#[test]
fn export_to_claude_merges_checks_and_diffs() {
    let (home, envelope) = frozen("claude");
    let env = envelope.as_str();

    // An existing settings file with foreign rules and settings.
    let settings = home.join("proj/.claude/settings.local.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let foreign = "{\n  \"env\": {\"A\": \"1\"},\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"],\n    \"ask\": [\"Bash(git push:*)\"],\n    \"allow\": []\n  }\n}\n";
    std::fs::write(&settings, foreign).unwrap();
    let out = settings.to_str().unwrap();
    let args = ["export", "--to", "claude", "--out", out];
    let first = on_project(&home, env, &args);
    assert!(first.status.success(), "{}", text(&first));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        written["permissions"]["allow"],
        json!(["Bash(npm test)"]),
        "{}",
        text(&first)
    );
    assert_eq!(written["permissions"]["deny"], json!(["Read(./.env)"]));
    assert_eq!(written["permissions"]["ask"], json!(["Bash(git push:*)"]));
    assert_eq!(written["env"], json!({"A": "1"}));
    let backup = home.join("proj/.claude/settings.local.json.leastgrant-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), foreign);
    // Idempotent, and the backup is made once.
    let after_first = std::fs::read_to_string(&settings).unwrap();
    assert!(on_project(&home, env, &args).status.success());
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), after_first);
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), foreign);

    let check = |file: &str| on_project(&home, env, &["export", "--check", file, "--to", "claude"]);
    let ok = check(out);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));

    // A broad file: every rule exceeds, each with a witness.
    let broad = home.join("broad.json");
    std::fs::write(&broad, r#"{"permissions": {"allow": ["Bash(npm:*)", "Bash(*)", "Read(**)", "Bash(cat ~/.ssh/id_rsa)"]}}"#).unwrap();
    let exceeded = check(broad.to_str().unwrap());
    let said = text(&exceeded);
    assert_eq!(exceeded.status.code(), Some(1), "{said}");
    assert_eq!(said.matches("exceeds ").count(), 4, "{said}");
    assert_eq!(said.matches("witness: ").count(), 4, "{said}");

    // An unparsable file is named and left untouched.
    let bad = home.join("bad.json");
    std::fs::write(&bad, "{not json").unwrap();
    let refused = check(bad.to_str().unwrap());
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused).contains("bad.json"), "{}", text(&refused));
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), "{not json");
    let bad_out = [
        "export",
        "--to",
        "claude",
        "--project",
        "/home/dev/proj",
        "--envelope",
        env,
        "--out",
        bad.to_str().unwrap(),
    ];
    let refused = at_home(&home, &bad_out);
    assert!(!refused.status.success());
    assert!(text(&refused).contains("bad.json"), "{}", text(&refused));
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), "{not json");

    // The diff from the written file to the broad one: widened, each with a witness.
    let diffed = on_project(
        &home,
        env,
        &["export", "--diff", out, broad.to_str().unwrap()],
    );
    let said = text(&diffed);
    assert_eq!(diffed.status.code(), Some(1), "{said}");
    assert!(said.contains("widened   Bash(npm:*)"), "{said}");
    // `npm test` is still covered by the broad rules: nothing narrowed.
    assert!(!said.contains("narrowed"), "{said}");
    let back = on_project(
        &home,
        env,
        &["export", "--diff", broad.to_str().unwrap(), out],
    );
    assert_eq!(back.status.code(), Some(0), "{}", text(&back));
    assert!(
        text(&back).contains("narrowed  Bash(cat ~/.ssh/id_rsa)"),
        "{}",
        text(&back)
    );
}

#[test]
fn export_to_gemini_keeps_foreign_rules_and_codex_and_copilot_prefixes_exceed() {
    let (home, envelope) = frozen("agents");
    let run = |args: &[&str]| on_project(&home, &envelope, args);

    // Gemini: the exact rule lands in leastgrant's block; the foreign rule stays byte for byte.
    let policy = home.join("policies/project.toml");
    std::fs::create_dir_all(policy.parent().unwrap()).unwrap();
    let foreign = "# team rules\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"rm -rf\"\ndecision = \"deny\"\npriority = 500\n";
    std::fs::write(&policy, foreign).unwrap();
    let out = policy.to_str().unwrap();
    let exported = run(&["export", "--to", "gemini", "--out", out]);
    assert!(exported.status.success(), "{}", text(&exported));
    let written = std::fs::read_to_string(&policy).unwrap();
    assert!(written.starts_with(foreign), "{written}");
    assert!(
        written.contains("argsPattern = \"\\\"command\\\":\\\"npm test\\\"\""),
        "{written}"
    );
    assert!(!written.contains("git push"), "{written}");
    assert!(
        run(&["export", "--to", "gemini", "--out", out])
            .status
            .success()
    );
    assert_eq!(std::fs::read_to_string(&policy).unwrap(), written);
    let checked = run(&["export", "--check", out]);
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked));
    std::fs::write(&policy, "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"npm test\"\ndecision = \"allow\"\n").unwrap();
    let prefix = run(&["export", "--check", out]);
    assert_eq!(prefix.status.code(), Some(1), "{}", text(&prefix));
    assert!(
        text(&prefix).contains("witness: npm test"),
        "{}",
        text(&prefix)
    );

    // Codex: a prefix of an allowed command still admits continuations the envelope refuses.
    let rules = home.join("default.rules");
    std::fs::write(
        &rules,
        "prefix_rule(\n    pattern = [\"npm\", \"test\"],\n    match = [\"npm test\"],\n)\n",
    )
    .unwrap();
    let codex = run(&["export", "--check", rules.to_str().unwrap()]);
    assert_eq!(codex.status.code(), Some(1), "{}", text(&codex));
    assert!(
        text(&codex).contains("witness: npm test "),
        "{}",
        text(&codex)
    );
    let exported = run(&["export", "--to", "codex", "--out", rules.to_str().unwrap()]);
    assert!(exported.status.success(), "{}", text(&exported));
    assert!(
        text(&exported).starts_with("0 codex rules"),
        "{}",
        text(&exported)
    );

    // Copilot: an identifier approval covers the program's every use.
    let config = home.join("permissions-config.json");
    std::fs::write(&config, r#"{"locations": {"/home/dev/proj": {"tool_approvals": [{"kind": "commands", "commandIdentifiers": ["npm"]}]}}}"#).unwrap();
    let copilot = run(&["export", "--check", config.to_str().unwrap()]);
    assert_eq!(copilot.status.code(), Some(1), "{}", text(&copilot));
}
