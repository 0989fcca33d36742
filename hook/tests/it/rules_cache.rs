//! Compiled rules tables through the real binary (issue 14): every case of
//! `tests/data/rules_cache.toml` decides the same whether the rules file's table is made by the
//! call, used as kept, damaged, of other bytes, of another layout version or left behind by an
//! older rules file; a valid table naming the rules file's bytes is what the hook goes by; a
//! refused rules file is refused again from its table; a thousand rules decide as a handful do.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use leastgrant_engine::{Roots, SourceKey, compile_rules};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::conformance::scratch;

#[derive(Deserialize)]
struct Cases {
    policy: Vec<PolicyCase>,
}

#[derive(Deserialize)]
struct PolicyCase {
    name: String,
    rules: String,
    calls: Vec<Call>,
}

#[derive(Deserialize)]
struct Call {
    command: String,
    decision: String,
    reason: String,
}

fn cases() -> Cases {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules_cache.toml");
    toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A home with a git project `proj` and `rules` as the user's rules file.
fn home(name: &str, rules: &str) -> (PathBuf, PathBuf) {
    let home = scratch(&format!("rules-cache-{name}"));
    std::fs::write(home.join("state/rules.json"), rules).unwrap();
    let project = home.join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    (home, project)
}

/// The hook's (decision, reason) for `command` run in `project`.
fn decide(home: &Path, project: &Path, command: &str) -> (String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_leastgrant-hook"))
        .args(["--agent", "claude-code"])
        .env("HOME", home)
        .env("LEASTGRANT_HOME", home.join("state"))
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let payload = json!({"session_id": "s-1", "transcript_path": "/t", "cwd": project,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_use_id": "toolu_1"});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let out = &answer["hookSpecificOutput"];
    (
        out["permissionDecision"].as_str().unwrap().to_string(),
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

/// The table slot of the user's rules file.
fn table_of(home: &Path) -> PathBuf {
    leastgrant_hook::layout::rules_cache_path(&home.join("state"), &home.join("state/rules.json"))
}

fn check_calls(home: &Path, project: &Path, case: &PolicyCase, state: &str) {
    for call in &case.calls {
        let (decision, reason) = decide(home, project, &call.command);
        // A damaged item is found where a call reads it: that call asks (or denies: a deny
        // found, or the rules file's `defaultMode`), naming the rules file when it asks, and
        // removes the table, which the next call rebuilds.
        if state == "damaged" && !table_of(home).exists() {
            assert!(decision == "ask" || decision == "deny", "{reason}");
            if decision == "ask" {
                assert!(
                    reason.contains("is damaged") && reason.contains("rules.json"),
                    "{reason}"
                );
            }
            continue;
        }
        assert_eq!(
            (decision.as_str(), reason.contains(&call.reason)),
            (call.decision.as_str(), true),
            "{} ({state}): `{}` answered {decision}: {reason}",
            case.name,
            call.command
        );
    }
}

/// What can be in a table's slot besides the table of the rules file's bytes.
fn spoil(table: &Path, how: &str, home: &Path) {
    let mut bytes = std::fs::read(table).unwrap();
    match how {
        "damaged" => {
            let at = bytes.len() / 2;
            bytes[at] ^= 0x01;
        }
        "cut short" => bytes.truncate(bytes.len() - 3),
        "another layout version" => bytes[8] = 99,
        "not a table" => bytes = b"{\"allow\": [\"Bash\"]}".to_vec(),
        "of other bytes" => {
            // A valid table of a rules file that allows everything (a stale or foreign one).
            let value = json!({"allow": ["Bash", "Read"], "defaultMode": "ask"});
            let roots = Roots::new(&home.join("proj").display().to_string(), "/h");
            bytes = compile_rules(&value, &roots, &SourceKey::default()).unwrap();
        }
        _ => unreachable!(),
    }
    std::fs::write(table, bytes).unwrap();
}

#[test]
fn every_case_decides_the_same_whatever_state_its_table_is_in() {
    for (n, case) in cases().policy.iter().enumerate() {
        let (home, project) = home(&format!("case{n}"), &case.rules);
        check_calls(&home, &project, case, "made by the call");
        let table = table_of(&home);
        let meta = std::fs::metadata(&table).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{}", case.name);
        let kept = std::fs::read(&table).unwrap();
        check_calls(&home, &project, case, "kept");
        for how in [
            "damaged",
            "cut short",
            "another layout version",
            "not a table",
            "of other bytes",
        ] {
            spoil(&table, how, &home);
            check_calls(&home, &project, case, how);
            // Replaced by the table of the rules file's bytes (a damaged item no call read
            // stays, the table's length intact).
            assert_eq!(std::fs::read(&table).unwrap().len(), kept.len(), "{how}");
            std::fs::write(&table, &kept).unwrap();
        }
    }
}

/// A rules file edited after its table was made decides by its new text at once.
#[test]
fn a_changed_rules_file_is_decided_by_its_new_text() {
    let (home, project) = home(
        "changed",
        r#"{"allow": ["Bash(git status:*)"], "defaultMode": "ask"}"#,
    );
    assert_eq!(decide(&home, &project, "git status").0, "allow");
    std::fs::write(
        home.join("state/rules.json"),
        r#"{"deny": ["Bash(git status:*)"], "defaultMode": "ask"}"#,
    )
    .unwrap();
    assert_eq!(decide(&home, &project, "git status").0, "deny");
    // Same length, other bytes.
    std::fs::write(
        home.join("state/rules.json"),
        r#"{"ask":  ["Bash(git status:*)"], "defaultMode": "ask"}"#,
    )
    .unwrap();
    assert_eq!(decide(&home, &project, "git status").0, "ask");
}

/// The hook goes by a valid table that names the rules file's bytes (so it does not parse the
/// file): here a table made to deny what the file allows, which only a used table can explain.
#[test]
fn a_table_naming_the_rules_files_bytes_is_what_the_hook_goes_by() {
    let rules = r#"{"allow": ["Bash(git status:*)"], "defaultMode": "ask"}"#;
    let (home, project) = home("used", rules);
    assert_eq!(decide(&home, &project, "git status").0, "allow");
    let key = SourceKey {
        digest: Sha256::digest(rules.as_bytes()).into(),
        ..SourceKey::default()
    };
    let other = json!({"deny": ["Bash(git status:*)"], "defaultMode": "ask"});
    let roots = Roots::new(&project.display().to_string(), &home.display().to_string());
    std::fs::write(
        table_of(&home),
        compile_rules(&other, &roots, &key).unwrap(),
    )
    .unwrap();
    let (decision, reason) = decide(&home, &project, "git status");
    assert_eq!(decision, "deny", "{reason}");
}

/// A table someone else could have written, or reached through a link, is not read.
#[test]
fn a_table_in_reach_of_others_is_not_read() {
    let rules = r#"{"allow": ["Bash(git status:*)"], "defaultMode": "ask"}"#;
    let (home, project) = home("others", rules);
    assert_eq!(decide(&home, &project, "git status").0, "allow");
    let key = SourceKey {
        digest: Sha256::digest(rules.as_bytes()).into(),
        ..SourceKey::default()
    };
    let other = json!({"allow": ["Bash(git status:*)", "Bash(rm:*)"], "defaultMode": "ask"});
    let roots = Roots::new(&project.display().to_string(), &home.display().to_string());
    let forged = compile_rules(&other, &roots, &key).unwrap();
    let table = table_of(&home);
    // Writable by the group: refused, and replaced by the rules file's own table.
    std::fs::write(&table, &forged).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&table, std::fs::Permissions::from_mode(0o664)).unwrap();
    assert_eq!(decide(&home, &project, "rm x").0, "ask");
    // A link to a table elsewhere: refused the same way.
    let elsewhere = home.join("forged.lgrules");
    std::fs::write(&elsewhere, &forged).unwrap();
    std::fs::remove_file(&table).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &table).unwrap();
    assert_eq!(decide(&home, &project, "rm x").0, "ask");
}

/// A thousand rules: the call decides as it would with the few rules its command can match.
#[test]
fn a_thousand_rules_decide_as_their_candidates_do() {
    let mut allow: Vec<String> = (0..600).map(|i| format!("Bash(tool{i} *)")).collect();
    allow.push("Bash(git status:*)".to_string());
    let ask: Vec<String> = (0..200).map(|i| format!("Bash(tool{i} push:*)")).collect();
    let deny: Vec<String> = (0..200)
        .map(|i| format!("Read(~/secret{i}/**)"))
        .chain(["Bash(git:*)".to_string()])
        .collect();
    let rules = json!({"allow": allow, "ask": ask, "deny": deny, "defaultMode": "ask"});
    let (home, project) = home("thousand", &rules.to_string());
    for state in ["made", "kept"] {
        let decided = |command: &str| decide(&home, &project, command);
        assert_eq!(decided("git status").0, "allow", "{state}");
        assert_eq!(decided("git push").0, "deny", "{state}");
        assert_eq!(decided("tool7 build").0, "allow", "{state}");
        assert_eq!(decided("tool7 push origin").0, "ask", "{state}");
        let (decision, reason) = decided("cat ~/secret150/key");
        assert_eq!(decision, "deny", "{state}");
        assert!(reason.contains("Read(~/secret150/**)"), "{reason}");
    }
}

/// The project's own rules file has a table of its own, and may still only tighten: its allows
/// are dropped, its denies carve nothing out of the user's.
#[test]
fn a_project_rules_files_table_only_tightens() {
    let (home, project) = home(
        "project",
        r#"{"allow": ["Bash(git push:*)", "Bash(ls)"], "defaultMode": "ask"}"#,
    );
    std::fs::create_dir_all(project.join(".leastgrant")).unwrap();
    std::fs::write(
        project.join(".leastgrant/rules.json"),
        r#"{"allow": ["Bash(rm:*)"], "deny": ["Bash(git push:*)"], "defaultMode": "ask"}"#,
    )
    .unwrap();
    for state in ["made", "kept"] {
        assert_eq!(decide(&home, &project, "git push").0, "deny", "{state}");
        assert_eq!(decide(&home, &project, "rm x").0, "ask", "{state}");
        assert_eq!(decide(&home, &project, "ls").0, "allow", "{state}");
    }
    let table = leastgrant_hook::layout::rules_cache_path(
        &home.join("state"),
        &project.join(".leastgrant/rules.json"),
    );
    assert!(table.exists(), "{}", table.display());
}

/// Where `text` is in the table's bytes (a rule's text is the end of its item, before the
/// item's eight-byte check).
fn find(bytes: &[u8], text: &str) -> usize {
    bytes
        .windows(text.len())
        .position(|w| w == text.as_bytes())
        .unwrap_or_else(|| panic!("{text} is not in the table"))
}

/// A Bash call reads the items its searches land on and those bracketing them: the first and
/// last path rules bracket the groups around them, the middle one is read only by calls that
/// touch paths.
const FEW_RULES: &str = r#"{"allow": ["Bash(git status:*)"],
    "deny": ["Read(~/.aws/**)", "Read(~/.ssh/**)", "Read(~/.zzz/**)"], "defaultMode": "ask"}"#;

/// A byte of an item the call reads, flipped: the call asks, naming the rules file and its
/// table, and removes the table; the next call rebuilds it and answers as before.
#[test]
fn a_damaged_item_a_call_reads_asks_naming_the_file_and_is_rebuilt() {
    let (home, project) = home("damaged-read", FEW_RULES);
    assert_eq!(decide(&home, &project, "git status").0, "allow");
    let table = table_of(&home);
    let kept = std::fs::read(&table).unwrap();
    let mut damaged = kept.clone();
    damaged[find(&kept, "Bash(git status:*)") + 6] ^= 0x01;
    std::fs::write(&table, &damaged).unwrap();
    let (decision, reason) = decide(&home, &project, "git status");
    assert_eq!(decision, "ask", "{reason}");
    assert!(
        reason.contains("is damaged")
            && reason.contains(&home.join("state/rules.json").display().to_string()),
        "{reason}"
    );
    assert!(!table.exists(), "the damaged table is removed");
    assert_eq!(decide(&home, &project, "git status").0, "allow");
    assert_eq!(std::fs::read(&table).unwrap(), kept);
}

/// A byte of an item the call does not read, flipped: the call answers as before (it checks
/// what it reads, not the whole table), and the table stays until a call reads that item.
#[test]
fn a_damaged_item_a_call_does_not_read_leaves_its_answer() {
    let (home, project) = home("damaged-unread", FEW_RULES);
    let before = decide(&home, &project, "git status");
    assert_eq!(before.0, "allow");
    let table = table_of(&home);
    let kept = std::fs::read(&table).unwrap();
    let mut damaged = kept.clone();
    damaged[find(&kept, "Read(~/.ssh/**)") + 6] ^= 0x01;
    std::fs::write(&table, &damaged).unwrap();
    assert_eq!(decide(&home, &project, "git status"), before);
    assert_eq!(std::fs::read(&table).unwrap(), damaged);
    // A call that reads it finds it.
    let (decision, reason) = decide(&home, &project, "cat ~/.ssh/id_rsa");
    assert_ne!(decision, "allow", "{reason}");
    assert!(reason.contains("is damaged"), "{reason}");
    assert!(!table.exists());
}

/// Two items swapped in the search order (their slots exchanged): a call that reads either
/// asks, naming the file; a table cut short does not open and is rebuilt at once.
#[test]
fn a_reordered_or_truncated_table_never_widens() {
    let (home, project) = home("reordered", FEW_RULES);
    assert_eq!(decide(&home, &project, "git status").0, "allow");
    let table = table_of(&home);
    let kept = std::fs::read(&table).unwrap();
    // The header (112 bytes), then a slot of 8 bytes per rank (docs/formats.md): the first
    // two ranks, the Bash rule and the first path rule.
    let mut swapped = kept.clone();
    let (a, b) = (112, 120);
    let first: Vec<u8> = swapped[a..a + 8].to_vec();
    swapped.copy_within(b..b + 8, a);
    swapped[b..b + 8].copy_from_slice(&first);
    std::fs::write(&table, &swapped).unwrap();
    let (decision, reason) = decide(&home, &project, "git status");
    assert_eq!(decision, "ask", "{reason}");
    assert!(reason.contains("is damaged"), "{reason}");
    assert_eq!(decide(&home, &project, "git status").0, "allow");
    for len in [kept.len() - 1, kept.len() - 9, 120, 50] {
        std::fs::write(&table, &kept[..len]).unwrap();
        assert_eq!(
            decide(&home, &project, "git status").0,
            "allow",
            "cut to {len}"
        );
        assert_eq!(std::fs::read(&table).unwrap(), kept, "cut to {len}");
    }
}
