//! The agents' catalogue against the real `leastgrant-hook` binary: every event `leastgrant
//! install` registers is a surface the hook answers, and for every event the catalogue lists
//! and every verdict, the binary answers exactly as the catalogue says (allow, ask, deny or
//! nothing) in that agent's format, and records that answer in the ledger.

use leastgrant_engine::Decision;
use leastgrant_hook::catalogue::{Agent, Answered, Carries, Event, Surface};
use serde_json::{Value, json};

use crate::conformance::{run_hook, scratch};

#[test]
fn every_registered_event_is_a_surface_the_hook_answers() {
    for agent in Agent::ALL {
        let registered: Vec<&Event> = agent.registered().collect();
        assert!(
            registered.iter().any(|e| e.surface.gates()),
            "{}: install registers no gate",
            agent.as_str()
        );
        for event in registered {
            assert_ne!(
                event.surface,
                Surface::Other,
                "{}: install registers `{}`, which the hook has no opinion on",
                agent.as_str(),
                event.name
            );
        }
        let mut names: Vec<&str> = agent.events().iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), agent.events().len(), "an event listed twice");
    }
}

/// A payload of `event` whose call the rules below allow, deny, or (with no rules) ask about:
/// what it carries decides the fields.
fn payload(agent: Agent, event: &Event) -> (Value, &'static str) {
    let mut payload = json!({
        "session_id": "s1", "conversation_id": "c1", "cwd": "/w/app",
        "permission_mode": "default", "hook_event_name": event.name, "tool_use_id": "t1",
    });
    let (fields, rule) = match (agent, event.carries) {
        (_, Carries::Shell) => (json!({"command": "rm -rf build"}), "Bash(rm -rf build)"),
        (_, Carries::Mcp) => (
            json!({"tool_name": "create_issue", "tool_input": "{\"title\": \"x\"}", "mcp_server_name": "github"}),
            "mcp__github",
        ),
        (_, Carries::FileRead) => (json!({"file_path": "/w/app/a.txt"}), "Read(//w/app/a.txt)"),
        (_, Carries::FileEdited) => (json!({"file_path": "/w/app/a.txt"}), "Edit(//w/app/a.txt)"),
        (Agent::Cursor, Carries::Tool) => (
            json!({"tool_name": "Shell", "tool_input": {"command": "rm -rf build"}}),
            "Bash(rm -rf build)",
        ),
        (Agent::ClaudeCode | Agent::Codex, Carries::Tool) => (
            json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}}),
            "Bash(rm -rf build)",
        ),
        (Agent::Copilot, Carries::Tool) => (
            json!({"tool_name": "bash", "tool_input": {"command": "rm -rf build"}}),
            "Bash(rm -rf build)",
        ),
        (Agent::Gemini, Carries::Tool) => (
            json!({"tool_name": "run_shell_command", "tool_input": {"command": "rm -rf build"}}),
            "Bash(rm -rf build)",
        ),
        (_, Carries::CopilotTool) => {
            // The camelCase dialect names no event: what it carries says which it is.
            payload = json!({"timestamp": 1767225600000_i64, "cwd": "/w/app"});
            let mut fields =
                json!({"toolName": "bash", "toolArgs": "{\"command\": \"rm -rf build\"}"});
            if event.surface == (Surface::Ran { ok: true }) {
                fields["toolResult"] = json!({"resultType": "success"});
            }
            (fields, "Bash(rm -rf build)")
        }
    };
    for (key, value) in fields.as_object().into_iter().flatten() {
        payload[key] = value.clone();
    }
    (payload, rule)
}

/// What an answer on standard output says, read in the agent's own format.
fn said(agent: Agent, stdout: &str) -> Answered {
    if stdout.trim().is_empty() {
        return Answered::Abstain;
    }
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
    let verdict = match agent {
        Agent::ClaudeCode => {
            let out = &answer["hookSpecificOutput"];
            out["permissionDecision"]
                .as_str()
                .or_else(|| out["decision"]["behavior"].as_str())
        }
        Agent::Cursor => answer["permission"].as_str(),
        Agent::Codex => {
            let out = &answer["hookSpecificOutput"];
            out["permissionDecision"]
                .as_str()
                .or_else(|| out["decision"]["behavior"].as_str())
        }
        Agent::Copilot => answer["permissionDecision"]
            .as_str()
            .or_else(|| answer["hookSpecificOutput"]["permissionDecision"].as_str()),
        Agent::Gemini => answer["decision"].as_str(),
    };
    match verdict {
        Some("allow") => Answered::Allow,
        Some("ask") => Answered::Ask,
        Some("deny") => Answered::Deny,
        _ => panic!("no verdict in {stdout}"),
    }
}

#[test]
fn the_hook_answers_every_event_and_verdict_as_the_catalogue_says() {
    let mut failures = Vec::new();
    for agent in Agent::ALL {
        for event in agent.events() {
            let (payload, rule) = payload(agent, event);
            for decision in [Decision::Allow, Decision::Ask, Decision::Deny] {
                let home = scratch(&format!("catalogue-{}-{}", agent.as_str(), event.name));
                let rules = match decision {
                    Decision::Allow => Some(json!({"allow": [rule]})),
                    Decision::Deny => Some(json!({"deny": [rule]})),
                    Decision::Ask => None,
                };
                if let Some(rules) = rules {
                    std::fs::write(home.join("state/rules.json"), rules.to_string()).unwrap();
                }
                let (code, stdout, stderr) =
                    run_hook(&home, agent.as_str(), payload.to_string().as_bytes());
                let ledger = std::fs::read_to_string(home.join("state/ledger.jsonl")).unwrap();
                let last: Value = serde_json::from_str(ledger.lines().last().unwrap()).unwrap();
                let _ = std::fs::remove_dir_all(&home);
                let case = format!("{} {} {}", agent.as_str(), event.name, decision.as_str());
                assert_eq!(code, Some(0), "{case}: {stderr}");
                let want = event.surface.answers(decision);
                let got = said(agent, &stdout);
                if got != want {
                    failures.push(format!(
                        "{case}: answered {got:?}, the catalogue says {want:?}: {stdout}"
                    ));
                }
                match event.surface {
                    Surface::Ran { ok } => {
                        if last["kind"] != "ran" || last["ok"] != ok {
                            failures.push(format!("{case}: ledger {last}"));
                        }
                    }
                    _ => {
                        if last["answered"] != want.as_str() || last["verdict"] != decision.as_str()
                        {
                            failures.push(format!("{case}: ledger {last}"));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
