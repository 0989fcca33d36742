//! Knowledge tables: one case file per family under `tests/data/knowledge/`.

use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    #[serde(default)]
    command: String,
    tool: Option<String>,
    input: Option<String>,
    capability: Option<String>,
    capabilities: Option<Vec<String>>,
    understood: bool,
    tier: Option<u8>,
}

#[test]
fn knowledge_cases() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/knowledge");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("knowledge case directory")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    files.sort();
    let mut failures = Failures::default();
    let mut total = 0;
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "toml"))
    {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let cases: Cases = load(&format!("knowledge/{name}"));
        for case in &cases.case {
            total += 1;
            let analysis = analyze_case(&case.command, case.tool.as_deref(), case.input.as_deref());
            let what = format!(
                "{name}: `{}{}`",
                case.command,
                case.tool
                    .as_deref()
                    .map(|t| format!("{t} {}", case.input.as_deref().unwrap_or("")))
                    .unwrap_or_default()
            );
            let caps: Vec<String> = analysis
                .actions
                .iter()
                .map(|a| a.capability.as_str().to_string())
                .collect();
            if let Some(expected) = &case.capabilities {
                failures.check(&format!("{what} capabilities"), expected, &caps);
            } else if let Some(expected) = &case.capability {
                failures.check(&format!("{what} capability"), Some(expected), caps.first());
            }
            failures.check(
                &format!("{what} understood ({:?})", analysis.problems),
                case.understood,
                analysis.understood,
            );
            if let Some(tier) = case.tier {
                failures.check(
                    &format!("{what} tier"),
                    Some(tier),
                    analysis.actions.first().map(|a| a.tier()),
                );
            }
        }
    }
    failures.finish("knowledge", total);
}

/// macOS file systems ignore case: `/users/dev` is the home `/Users/Dev`, and a recursive
/// search of it sweeps the credentials below it.
#[test]
fn a_macos_home_is_a_credential_tree_in_any_case() {
    use leastgrant_engine::Zone;
    use leastgrant_engine::place;
    use leastgrant_engine::{Roots, ToolCall, analyze};
    let roots = Roots::new("/Users/Dev/proj", "/Users/Dev");
    for path in ["/Users/Dev", "/users/dev", "/USERS/DEV/.config"] {
        assert_eq!(
            place(Some(path), &roots).zone,
            Zone::CredentialTree,
            "{path}"
        );
    }
    let call = ToolCall::shell("grep -r password /users/dev", Some("/Users/Dev/proj"));
    let caps: Vec<&str> = analyze(&call, &roots)
        .actions
        .iter()
        .map(|a| a.capability.as_str())
        .collect();
    assert_eq!(caps, ["secret.read"]);
}

/// A glob reaches a directory when each of its segments could expand to the directory's, case
/// blind; `?` is one character, also outside ASCII.
#[test]
fn globs_reach_directories_segment_by_segment() {
    use leastgrant_engine::glob_may_reach_dir as reaches;
    assert!(reaches("/home/dev/.leastg*", "/home/dev/.leastgrant"));
    assert!(reaches(
        "/home/dev/.lea?tgrant/rules.json",
        "/home/dev/.leastgrant"
    ));
    assert!(reaches(
        "/HOME/dev/.[a-z]eastgrant",
        "/home/dev/.leastgrant"
    ));
    assert!(reaches("/home/Jos?/.leastgrant", "/home/josé/.leastgrant"));
    assert!(reaches("/home/**/x", "/home/dev/.leastgrant"));
    assert!(!reaches("/home/dev/.leastgr?", "/home/dev/.leastgrant"));
    assert!(
        !reaches("/home/*", "/home/dev/.leastgrant"),
        "above it, not at or below"
    );
    assert!(!reaches("/home/dev/src/*", "/home/dev/.leastgrant"));
}
