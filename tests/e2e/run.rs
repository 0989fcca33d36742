//! `leastgrant run`, the README's first command, on a machine with no agent history (a settings
//! file's standing approvals are no history): it says it uses the demo history, and ingests,
//! replays and reports it.

use crate::support::{json_of, leastgrant};

#[test]
fn with_no_history_the_main_job_runs_on_the_demo_history() {
    let home = std::env::temp_dir().join(format!("leastgrant-e2e-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(npm test:*)"]}}"#,
    )
    .unwrap();
    let out = json_of(&leastgrant(&home, &home, &["run", "--json"]));
    assert!(
        out["history"]["note"]
            .as_str()
            .unwrap()
            .contains("demo history"),
        "{}",
        out["history"]
    );
    let report = std::path::PathBuf::from(out["report"].as_str().unwrap());
    assert!(
        report.ends_with("index.html") && report.is_file(),
        "{}",
        report.display()
    );
    assert!(
        report.starts_with(home.join(".leastgrant/demo")),
        "the demo stays apart: {}",
        report.display()
    );
    let settings = out["settings"].as_array().unwrap();
    let events = out["history"]["events"].as_u64().unwrap();
    // The report says where the labels came from, per agent, as the replay counted them.
    let claude = &out["labels"]["agents"]["claude-code"];
    let md = std::fs::read_to_string(report.with_file_name("report.md")).unwrap();
    let row = format!(
        "| claude-code | {} |",
        group(claude["events"].as_u64().unwrap())
    );
    assert!(
        md.contains("\n## Labels\n") && md.contains(&row),
        "{row} in {md}"
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<h2 id=\"labels\">Labels</h2>"));
    assert!(events > 1000, "a realistic history: {events} events");
    for s in settings {
        assert_eq!(s["events"].as_u64(), Some(events), "{}", s["id"]);
    }
    let always = settings
        .iter()
        .find(|s| s["id"] == "baseline.always-ask")
        .unwrap();
    assert!(
        always["catches"].as_u64().unwrap() > 0,
        "the demo has refusals"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join(".leastgrant"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "the state directory is owner-only");
    }
    // The table a person reads.
    let text = leastgrant(&home, &home, &["run"]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("recommended:") && stdout.contains("report: "),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// A count as the report writes it: thousands grouped with commas.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
