//! The hook's input fuzzed in-process through `answer`: arbitrary bytes and arbitrary payloads
//! of every event an agent sends never panic, always leave standard output empty or one JSON
//! object, and never answer a gate event with silence.

use leastgrant_hook::catalogue::Agent;
use leastgrant_hook::{Environment, answer};
use proptest::prelude::*;
use serde_json::{Value, json};

fn environment() -> Environment {
    let dir = std::env::temp_dir().join(format!("leastgrant-hook-fuzz-{}", std::process::id()));
    Environment {
        home: dir.join("home").display().to_string(),
        state_dir: dir.join("state"),
        process_cwd: Some("/w/app".to_string()),
        now_us: 1_767_225_600_000_000,
    }
}

fn checked(agent: Agent, input: &[u8]) -> Option<Value> {
    let reply = answer(agent, input, &environment());
    reply.stdout.map(|text| {
        assert!(text.is_ascii(), "non-ASCII output: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,40}".prop_map(Value::String),
        prop::sample::select(vec![
            "rm -rf /",
            "cat ~/.aws/credentials",
            "/w/app/.env",
            "npm test",
            "$(curl x|sh)"
        ])
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "command",
                    "file_path",
                    "path",
                    "pattern",
                    "url",
                    "content",
                    "x"
                ])
                .prop_map(str::to_string),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const CLAUDE_EVENTS: &[&str] = &[
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SessionStart",
    "",
];
const CURSOR_EVENTS: &[&str] = &[
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
    "preToolUse",
    "afterShellExecution",
    "afterFileEdit",
    "postToolUse",
    "stop",
    "",
];
const TOOLS: &[&str] = &[
    "Bash",
    "Read",
    "Write",
    "Edit",
    "Grep",
    "Glob",
    "WebFetch",
    "Task",
    "mcp__s__t",
    "Shell",
    "Delete",
    "Frobnicate",
    "",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400), cursor in any::<bool>()) {
        let agent = if cursor { Agent::Cursor } else { Agent::ClaudeCode };
        // Unreadable input is answered (a deny), never silence.
        let answered = checked(agent, &bytes);
        if serde_json::from_slice::<Value>(&bytes).map(|v| !v.is_object()).unwrap_or(true) {
            prop_assert!(answered.is_some());
        }
    }

    #[test]
    fn arbitrary_payloads_never_panic_and_gates_always_answer(
        cursor in any::<bool>(),
        event in any::<prop::sample::Index>(),
        tool in prop::sample::select(TOOLS),
        input in json_value(),
        as_string in any::<bool>(),
        extra in json_value(),
    ) {
        let (agent, events) = if cursor { (Agent::Cursor, CURSOR_EVENTS) } else { (Agent::ClaudeCode, CLAUDE_EVENTS) };
        let event = event.get(events);
        let tool_input = if as_string { Value::String(input.to_string()) } else { input.clone() };
        let payload = json!({
            "session_id": "s", "conversation_id": "c", "cwd": "/w/app", "workspace_roots": ["/w/app"],
            "hook_event_name": event, "tool_name": tool, "tool_input": tool_input,
            "command": input.get("command").cloned().unwrap_or(json!("ls")),
            "file_path": input.get("file_path").cloned().unwrap_or(json!("/w/app/a")),
            "extra": extra,
        });
        let answered = checked(agent, payload.to_string().as_bytes());
        let gate = matches!(*event, "PreToolUse" | "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" | "preToolUse");
        if gate {
            prop_assert!(answered.is_some(), "a gate event went unanswered: {}", payload);
        }
        if let Some(answer) = answered {
            // Never an allow that no rule or envelope gave: nothing was learned here.
            prop_assert!(answer["permission"] != "allow" && answer["hookSpecificOutput"]["permissionDecision"] != "allow", "{}", answer);
        }
    }
}
