//! `leastgrant simulate`, `export` and `check --envelope` driven end to end on a Claude Code
//! history in a temporary home: ingest → simulate → export → inspect → decide with the export.

use std::path::Path;

use serde_json::Value;

use crate::support::{at_home, claude_week, json_of, scratch};

#[test]
fn ingest_simulate_export_inspect_and_decide_with_the_export() {
    let home = scratch("simulate");
    claude_week(&home, "2.1.0");
    let ingested = json_of(&at_home(&home, &["ingest", "--json"]));
    assert_eq!(ingested["events"], 8);

    let simulated = json_of(&at_home(&home, &["simulate", "--json"]));
    let settings = simulated["settings"].as_array().unwrap();
    for key in [
        "id",
        "posture",
        "params",
        "events",
        "allow",
        "ask",
        "deny",
        "misses",
        "miss_rate_upper",
        "friction",
        "catches",
    ] {
        assert!(
            settings.iter().all(|s| s.get(key).is_some()),
            "every setting has `{key}`"
        );
    }
    assert!(simulated["assumptions"]["unattended_asks"].is_string());
    let assist = settings.iter().find(|s| s["id"] == "assist").unwrap();
    // Five asks (friction), two learned allows (design §5), and the refused push caught.
    assert_eq!(
        (assist["ask"].as_u64(), assist["allow"].as_u64()),
        (Some(6), Some(2))
    );
    assert_eq!(
        (
            assist["friction"].as_u64(),
            assist["catches"].as_u64(),
            assist["misses"].as_u64()
        ),
        (Some(5), Some(1), Some(0))
    );
    let replay_dir = home.join(".leastgrant/replay");
    for table in [
        "settings",
        "projects",
        "curves",
        "bands",
        "misses",
        "promotions",
        "friction",
    ] {
        let path = replay_dir.join(format!("{table}.parquet"));
        assert!(
            path.is_file() || table == "misses",
            "{} is written",
            path.display()
        );
    }

    // The text table names the recommendation and the assumption.
    let text = at_home(&home, &["simulate"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("runs freely")
            && text.contains("recommended:")
            && text.contains("assumption:"),
        "{text}"
    );

    let envelope = home.join("frozen.lgenv");
    let exported = json_of(&at_home(
        &home,
        &[
            "export",
            "--setting",
            "assist",
            "--out",
            envelope.to_str().unwrap(),
            "--json",
        ],
    ));
    assert_eq!(exported["setting"], "assist");
    assert_eq!(exported["projects"], 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&envelope).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the frozen envelope is owner-only");
    }
    let inspected = json_of(&at_home(
        &home,
        &["export", "--inspect", envelope.to_str().unwrap(), "--json"],
    ));
    assert_eq!(inspected["digest"], exported["digest"]);
    assert_eq!(inspected["digest_ok"], true);
    assert_eq!(inspected["posture"], "assist");
    assert_eq!(inspected["projects"][0]["key"], "/home/dev/proj");

    // Day 8: `npm test` was approved five times before the replay ended: the export allows it,
    // and says which envelope decided.
    let check = |command: &str, envelope: &Path| {
        at_home(
            &home,
            &[
                "check",
                "--json",
                "--project",
                "/home/dev/proj",
                "--envelope",
                envelope.to_str().unwrap(),
                "--at",
                "2026-01-08T10:00:00Z",
                command,
            ],
        )
    };
    let allowed = check("npm test", &envelope);
    assert_eq!(
        allowed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&allowed.stdout)
    );
    let verdict: Value = serde_json::from_slice(&allowed.stdout).unwrap();
    let codes: Vec<&str> = verdict["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["code"].as_str())
        .collect();
    assert!(
        codes.contains(&"learned.confirmed") && codes.contains(&"envelope"),
        "{codes:?}"
    );
    // The refused push was asked about, so it was learned as a denial: it asks.
    assert_eq!(
        check("git push origin main", &envelope).status.code(),
        Some(1)
    );

    // The rules in force are replayed too: a deny rule turns every `npm test` into a deny, and
    // the summary and the export say which rules were audited.
    let rules = home.join("rules.json");
    std::fs::write(
        &rules,
        r#"{"deny": ["Bash(npm test)"], "defaultMode": "ask"}"#,
    )
    .unwrap();
    let ruled = json_of(&at_home(
        &home,
        &["simulate", "--json", "--rules", rules.to_str().unwrap()],
    ));
    let assist = ruled["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "assist")
        .unwrap();
    assert_eq!(
        (assist["deny"].as_u64(), assist["allow"].as_u64()),
        (Some(7), Some(0))
    );
    assert!(
        ruled["assumptions"]["rules"]
            .as_str()
            .unwrap()
            .contains("rules.json")
    );
    let ruled_envelope = home.join("ruled.lgenv");
    json_of(&at_home(
        &home,
        &[
            "export",
            "--setting",
            "assist",
            "--rules",
            rules.to_str().unwrap(),
            "--out",
            ruled_envelope.to_str().unwrap(),
            "--json",
        ],
    ));
    let inspected = json_of(&at_home(
        &home,
        &[
            "export",
            "--inspect",
            ruled_envelope.to_str().unwrap(),
            "--json",
        ],
    ));
    assert!(
        inspected["rules"][0]
            .as_str()
            .unwrap()
            .contains("rules.json"),
        "{}",
        inspected["rules"]
    );

    // A changed byte is refused with the reason, never decided with.
    let mut bytes = std::fs::read(&envelope).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    let tampered = home.join("tampered.lgenv");
    std::fs::write(&tampered, bytes).unwrap();
    let refused = check("npm test", &tampered);
    assert_eq!(refused.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("digest") || stderr.contains("damaged"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&home);
}
