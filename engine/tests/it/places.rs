//! The placement tables, a case per row (`tests/data/places/`): every control file is placed as
//! control, and every file routine work writes is not; a write to each is floored with its row's
//! reason in the words.

use leastgrant_engine::{ToolCall, analyze, place, resolve};
use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct Table {
    case: Vec<Case>,
    #[serde(default)]
    not: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    #[serde(default)]
    row: String,
    path: String,
}

fn absolute(path: &str) -> String {
    if let Some(rest) = path.strip_prefix("~/") {
        format!("{HOME}/{rest}")
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{PROJECT}/{path}")
    }
}

#[test]
fn every_control_row_is_placed_as_control_and_writing_it_is_floored() {
    let table: Table = load("places/control.toml");
    let roots = roots();
    let mut failures = Failures::default();
    for case in &table.case {
        let path = absolute(&case.path);
        let placement = place(resolve(&path, Some(PROJECT), &roots).as_deref(), &roots);
        failures.check(
            &format!("{} ({}) is control", case.path, case.row),
            true,
            placement.control,
        );
        let call = ToolCall {
            tool: "Write".to_string(),
            input: serde_json::json!({ "file_path": path, "content": "x" }),
            cwd: Some(PROJECT.to_string()),
            descriptor: None,
        };
        let verdict = decide_fresh(&analyze(&call, &roots), T0);
        let reason = verdict
            .reasons
            .iter()
            .find(|r| r.code == "floor.control-file");
        match reason {
            Some(r) if !r.text.contains("which steers an agent") => {}
            // leastgrant's own rules: the integrity floor, which denies.
            None if placement.own_state && verdict.decision.as_str() == "deny" => {}
            other => failures.fail(format!(
                "writing {} is a control-file floor with its row's reason: {:?}",
                case.path,
                other.map(|r| &r.text)
            )),
        }
    }
    for case in &table.not {
        let path = absolute(&case.path);
        let placement = place(resolve(&path, Some(PROJECT), &roots).as_deref(), &roots);
        failures.check(
            &format!("{} is not control", case.path),
            false,
            placement.control,
        );
    }
    failures.finish("places/control", table.case.len() + table.not.len());
}

#[test]
fn every_secret_row_is_placed_as_a_credential_and_templates_are_not() {
    let table: Table = load("places/secrets.toml");
    let roots = roots();
    let mut failures = Failures::default();
    for case in &table.case {
        let path = absolute(&case.path);
        let placement = place(resolve(&path, Some(PROJECT), &roots).as_deref(), &roots);
        failures.check(
            &format!("{} ({}) is a credential", case.path, case.row),
            true,
            placement.secret,
        );
        let verdict = decide_fresh(
            &analyze(
                &ToolCall::shell(&format!("cat '{path}'"), Some(PROJECT)),
                &roots,
            ),
            T0,
        );
        failures.check(
            &format!("cat {} hits the secret floor", case.path),
            true,
            verdict.reasons.iter().any(|r| r.code == "floor.secret"),
        );
    }
    for case in &table.not {
        let path = absolute(&case.path);
        let placement = place(resolve(&path, Some(PROJECT), &roots).as_deref(), &roots);
        failures.check(
            &format!("{} is no credential", case.path),
            false,
            placement.secret,
        );
    }
    failures.finish("places/secrets", table.case.len() + table.not.len());
}

#[test]
fn every_container_socket_row_is_privileged_and_reaching_it_is_floored() {
    let table: Table = load("places/sockets.toml");
    let roots = roots();
    let mut failures = Failures::default();
    for case in &table.case {
        let path = absolute(&case.path);
        let placement = place(resolve(&path, Some(PROJECT), &roots).as_deref(), &roots);
        failures.check(
            &format!("{} ({}) is privileged", case.path, case.row),
            true,
            placement.privileged,
        );
        let verdict = decide_fresh(
            &analyze(
                &ToolCall::shell(
                    &format!("curl -sS --unix-socket '{path}' http://localhost/containers/json"),
                    Some(PROJECT),
                ),
                &roots,
            ),
            T0,
        );
        failures.check(
            &format!("curl --unix-socket {} hits the privilege floor", case.path),
            true,
            verdict.reasons.iter().any(|r| r.code == "floor.privilege"),
        );
    }
    for case in &table.not {
        let path = absolute(&case.path);
        let placement = place(resolve(&path, Some(PROJECT), &roots).as_deref(), &roots);
        failures.check(
            &format!("{} is no container socket", case.path),
            false,
            placement.privileged,
        );
    }
    failures.finish("places/sockets", table.case.len() + table.not.len());
}
