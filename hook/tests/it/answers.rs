//! The rules and grants a replay answers with, read once as a snapshot and carried as JSON text
//! (as a Spark driver ships them to executors): for every project the snapshot answers exactly
//! as reading the files there does — the same compiled policy under the replay's own roots, the
//! same grants, the same error for a file that cannot be used, the same fingerprints and
//! description — with the files gone.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use leastgrant_engine::{Grant, GrantScope, GrantStore, GrantVerdict, ProjectAnswers, Roots};
use leastgrant_hook::answers::{RuleFiles, RulesSnapshot};
use leastgrant_hook::policy;
use serde_json::json;

fn temp_root(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("leastgrant-answers-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

fn write(path: &Path, value: &serde_json::Value) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).unwrap();
}

/// A machine: a state directory with the user's rules and a grant for one project, a project
/// whose own rules file may only tighten, one whose rules file is not JSON, and one with none.
struct Machine {
    base: PathBuf,
    state: PathBuf,
    projects: Vec<String>,
}

fn machine(name: &str) -> Machine {
    let base = temp_root(name);
    let state = base.join("state");
    fs::create_dir_all(&state).unwrap();
    fs::set_permissions(&state, fs::Permissions::from_mode(0o700)).unwrap();
    write(
        &state.join("rules.json"),
        &json!({
            "allow": ["Bash(git status:*)", "Read(~/notes/**)"],
            "deny": ["Bash(aws:*)", "Read(//**/.env*)"],
            "defaultMode": "ask",
        }),
    );
    let tightening = base.join("work/tightening");
    write(
        &tightening.join(".leastgrant/rules.json"),
        &json!({"allow": ["Bash(curl:*)"], "deny": ["Bash(npm publish:*)"]}),
    );
    let broken = base.join("work/broken");
    fs::create_dir_all(broken.join(".leastgrant")).unwrap();
    fs::write(broken.join(".leastgrant/rules.json"), b"{\"allow\": [").unwrap();
    let plain = base.join("work/plain");
    fs::create_dir_all(&plain).unwrap();
    let projects: Vec<String> = [&tightening, &broken, &plain]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    // A grant for the tightening project, kept under its identity as `leastgrant allow` keeps it.
    let roots = Roots {
        state_dir: state.display().to_string(),
        ..Roots::new(&projects[0], "/")
    };
    policy::grant_store(&roots)
        .save(Grant::new(
            "Bash",
            GrantVerdict::Allow,
            GrantScope::ThisAction {
                spelling: "make test".into(),
            },
        ))
        .unwrap();
    Machine {
        base,
        state,
        projects,
    }
}

/// The replay's roots for a project: its own home guess, not the snapshot's.
fn replay_roots(project: &str) -> Roots {
    Roots::new(project, "/home/someone")
}

fn assert_same_answers(files: &RuleFiles, snapshot: &RulesSnapshot, projects: &[String]) {
    for project in projects {
        let roots = replay_roots(project);
        let read = files.for_project(&roots);
        let shipped = ProjectAnswers::for_project(snapshot, &roots);
        assert_eq!(read, shipped, "{project}");
        assert_eq!(
            files.fingerprint(&roots),
            ProjectAnswers::fingerprint(snapshot, &roots),
            "{project}"
        );
    }
    assert_eq!(files.describe(), ProjectAnswers::describe(snapshot));
}

/// The snapshot as it reaches an executor: JSON text, parsed again.
fn shipped(snapshot: &RulesSnapshot) -> RulesSnapshot {
    let text = serde_json::to_string(&snapshot.to_json()).unwrap();
    RulesSnapshot::from_json(&serde_json::from_str(&text).unwrap()).unwrap()
}

#[test]
fn a_snapshot_of_the_hooks_files_answers_as_the_files_do_with_the_files_gone() {
    let m = machine("default");
    let files = RuleFiles {
        given: Vec::new(),
        state_dir: m.state.display().to_string(),
    };
    let snapshot = shipped(&files.snapshot(m.projects.iter().map(String::as_str)));
    assert_same_answers(&files, &snapshot, &m.projects);
    // What the files say is really in the answers: the grant, the tightening project's rules,
    // and the broken file's error.
    let (_, grants) = files.for_project(&replay_roots(&m.projects[0])).unwrap();
    assert_eq!(grants.len(), 1);
    let broken = files
        .for_project(&replay_roots(&m.projects[1]))
        .unwrap_err();
    assert!(broken.contains("is not valid JSON"), "{broken}");
    let (tightened, _) = files.for_project(&replay_roots(&m.projects[0])).unwrap();
    let (plain, _) = files.for_project(&replay_roots(&m.projects[2])).unwrap();
    assert_ne!(tightened, plain);
    // With the files gone, the snapshot still answers as they did.
    let expected: Vec<_> = m
        .projects
        .iter()
        .map(|p| files.for_project(&replay_roots(p)))
        .collect();
    fs::remove_dir_all(&m.base).unwrap();
    let after: Vec<_> = m
        .projects
        .iter()
        .map(|p| ProjectAnswers::for_project(&snapshot, &replay_roots(p)))
        .collect();
    assert_eq!(expected, after);
}

#[test]
fn a_snapshot_of_named_files_answers_as_they_do_and_refuses_an_unplanned_project() {
    let m = machine("given");
    let team = m.base.join("team-rules.json");
    write(
        &team,
        &json!({"allow": ["Bash(cargo test:*)"], "deny": ["Bash(npm test:*)"]}),
    );
    let files = RuleFiles {
        given: vec![team, m.base.join("work/tightening/.leastgrant/rules.json")],
        state_dir: m.state.display().to_string(),
    };
    let snapshot = shipped(&files.snapshot(m.projects.iter().map(String::as_str)));
    assert_same_answers(&files, &snapshot, &m.projects);
    assert_eq!(snapshot.projects().count(), 3);
    let unplanned = ProjectAnswers::for_project(&snapshot, &replay_roots("/elsewhere/p"));
    assert!(
        unplanned
            .unwrap_err()
            .contains("no rules were read for the project at `/elsewhere/p`")
    );
    let _ = fs::remove_dir_all(&m.base);
}
