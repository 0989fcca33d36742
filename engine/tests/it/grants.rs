//! Grants: identity, canonical arguments, coverage, descriptor pins, and how grants and rules
//! answer together (deny over allow).

use leastgrant_engine::{
    Context, Envelope, Grant, GrantScope, GrantVerdict, Policy, RulesAndGrants, SessionState,
    Settings, ToolCall, analyze, decide, descriptor_digest,
};
use serde_json::json;

use crate::support::*;

#[test]
fn identity_is_content_stable_and_regranting_upserts() {
    let a = Grant::new(
        "Read",
        GrantVerdict::Allow,
        GrantScope::ThisCall {
            args: json!({"file_path": "/p/a", "limit": 10}),
        },
    );
    let b = Grant::new(
        "Read",
        GrantVerdict::Allow,
        GrantScope::ThisCall {
            args: json!({"limit": 10, "file_path": "/p/a"}),
        },
    )
    .with_note("again")
    .with_created_at_ms(5);
    assert_eq!(
        a.id(),
        b.id(),
        "key order and metadata never change the identity"
    );
    assert_eq!(a.id().len(), 16);
    assert!(a.id().chars().all(|c| c.is_ascii_hexdigit()));
    let deny = Grant::new(
        "Read",
        GrantVerdict::Deny,
        GrantScope::ThisCall {
            args: json!({"file_path": "/p/a", "limit": 10}),
        },
    );
    assert_ne!(a.id(), deny.id(), "the verdict is part of the identity");
    let tool = Grant::new("Read", GrantVerdict::Allow, GrantScope::ThisTool);
    assert_ne!(a.id(), tool.id(), "the scope is part of the identity");
}

#[test]
fn covers_compares_arguments_canonically() {
    let grant = Grant::new(
        "Bash",
        GrantVerdict::Allow,
        GrantScope::ThisCall {
            args: json!({"command": "npm test"}),
        },
    );
    assert!(grant.covers("Bash", &json!({"command": "npm test"})));
    assert!(
        grant.covers(
            "Bash",
            &json!({"description": "Run the tests", "command": "npm test"})
        ),
        "prose is not identity"
    );
    assert!(!grant.covers("Bash", &json!({"command": "npm test -- --watch"})));
    assert!(!grant.covers("Read", &json!({"command": "npm test"})));
    let tool = Grant::new("WebSearch", GrantVerdict::Allow, GrantScope::ThisTool);
    assert!(tool.covers("WebSearch", &json!({"query": "anything"})));
}

fn decide_with(policy: &Policy, grants: &[Grant], call: &ToolCall) -> (String, String) {
    let answers = RulesAndGrants { policy, grants };
    let envelope = Envelope::default();
    let session = SessionState::default();
    let settings = Settings::default();
    let ctx = Context {
        envelope: &envelope,
        session: &session,
        answers: &answers,
        settings: &settings,
        now_us: T0,
    };
    let verdict = decide(&analyze(call, &roots()), &ctx);
    let first = verdict
        .reasons
        .first()
        .map(|r| r.text.clone())
        .unwrap_or_default();
    (verdict.decision.as_str().to_string(), first)
}

fn policy(json: &str) -> Policy {
    Policy::from_json(&serde_json::from_str(json).unwrap(), &roots()).unwrap()
}

#[test]
fn an_action_grant_covers_every_spelling_of_the_action() {
    let analysis = analyze_command("ls -la src");
    let grant = Grant::new(
        "Bash",
        GrantVerdict::Allow,
        GrantScope::ThisAction {
            spelling: analysis.actions[0].subject.spelling.clone(),
        },
    );
    let none = Policy::empty();
    for spelling in [
        "ls -la src",
        "ls -al src",
        "ls -a -l src",
        "timeout 5 ls -la src",
    ] {
        let (verdict, why) = decide_with(
            &none,
            std::slice::from_ref(&grant),
            &ToolCall::shell(spelling, Some(PROJECT)),
        );
        assert_eq!(verdict, "allow", "{spelling}: {why}");
    }
    let (verdict, _) = decide_with(
        &none,
        &[grant],
        &ToolCall::shell("ls -la ~/.ssh", Some(PROJECT)),
    );
    assert_eq!(verdict, "ask");
}

#[test]
fn deny_beats_allow_between_grants_and_rules() {
    let call = ToolCall::shell("npm test", Some(PROJECT));
    let sig = analyze(&call, &roots()).actions[0].subject.spelling.clone();
    let allow = Grant::new(
        "Bash",
        GrantVerdict::Allow,
        GrantScope::ThisAction {
            spelling: sig.clone(),
        },
    );
    let deny = Grant::new(
        "Bash",
        GrantVerdict::Deny,
        GrantScope::ThisAction { spelling: sig },
    );
    // A deny grant beats an allow rule.
    let (v, why) = decide_with(
        &policy(r#"{"allow": ["Bash(npm test:*)"], "defaultMode": "ask"}"#),
        std::slice::from_ref(&deny),
        &call,
    );
    assert_eq!(
        (v.as_str(), why.contains(deny.id())),
        ("deny", true),
        "{why}"
    );
    // A deny rule beats an allow grant.
    let (v, why) = decide_with(
        &policy(r#"{"deny": ["Bash(npm:*)"], "defaultMode": "ask"}"#),
        std::slice::from_ref(&allow),
        &call,
    );
    assert_eq!(
        (v.as_str(), why.contains("Bash(npm:*)")),
        ("deny", true),
        "{why}"
    );
    // An allow grant is more specific than an ask rule.
    let (v, _) = decide_with(
        &policy(r#"{"ask": ["Bash(npm:*)"], "defaultMode": "ask"}"#),
        std::slice::from_ref(&allow),
        &call,
    );
    assert_eq!(v, "allow");
    // Both grants: deny wins.
    let (v, _) = decide_with(&Policy::empty(), &[allow, deny], &call);
    assert_eq!(v, "deny");
}

#[test]
fn a_changed_descriptor_asks_again() {
    let schema = json!({"name": "create_issue", "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}}});
    let changed = json!({"name": "create_issue", "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}, "run": {"type": "string"}}}});
    let pinned = descriptor_digest(&schema);
    assert_eq!(
        pinned,
        descriptor_digest(&serde_json::from_str::<serde_json::Value>(&schema.to_string()).unwrap())
    );
    assert_ne!(pinned, descriptor_digest(&changed));
    let grant = Grant::new(
        "mcp__github__create_issue",
        GrantVerdict::Allow,
        GrantScope::ThisTool,
    )
    .with_pinned_descriptor(&pinned);
    let mut call = ToolCall {
        tool: "mcp__github__create_issue".to_string(),
        input: json!({"title": "x"}),
        cwd: Some(PROJECT.to_string()),
        descriptor: Some(pinned),
    };
    let (v, _) = decide_with(&Policy::empty(), std::slice::from_ref(&grant), &call);
    assert_eq!(v, "allow");
    call.descriptor = Some(descriptor_digest(&changed));
    let (v, _) = decide_with(&Policy::empty(), std::slice::from_ref(&grant), &call);
    assert_eq!(v, "ask", "a schema change is a re-ask signal");
    call.descriptor = None;
    let (v, _) = decide_with(&Policy::empty(), &[grant], &call);
    assert_eq!(v, "ask", "an unknown descriptor cannot match a pin");
}

#[test]
fn grants_never_open_the_integrity_floor() {
    let grant = Grant::new("Bash", GrantVerdict::Allow, GrantScope::ThisTool);
    let (v, _) = decide_with(
        &Policy::empty(),
        &[grant],
        &ToolCall::shell("rm -rf ~/.leastgrant", Some(PROJECT)),
    );
    assert_eq!(v, "deny");
}

/// Grant ids are stored in grant files and printed to people: they must not change when the
/// code does. Pinned from the ids the engine gave before the identity was hashed over explicitly
/// sorted keys (commit 74f9f4b), nested objects and a prose field included.
#[test]
fn grant_ids_are_pinned() {
    let cases = [
        (
            Grant::new("Bash", GrantVerdict::Allow, GrantScope::ThisTool),
            "3d6a722592095988",
        ),
        (
            Grant::new(
                "Bash",
                GrantVerdict::Deny,
                GrantScope::ThisAction {
                    spelling: "rm -f -r /home/dev/proj/src".to_string(),
                },
            ),
            "0e6ffee4fa7568b7",
        ),
        (
            Grant::new(
                "Bash",
                GrantVerdict::Allow,
                GrantScope::ThisCall {
                    args: json!({"description": "status", "command": "git status"}),
                },
            ),
            "7e17212fdf6c1a46",
        ),
        (
            Grant::new(
                "mcp__github__create_issue",
                GrantVerdict::Allow,
                GrantScope::ThisCall {
                    args: json!({"title": "x", "body": {"z": [1, "é\"\n"], "a": null}, "labels": []}),
                },
            ),
            "0237211ab3e4ba37",
        ),
    ];
    let ids: Vec<&str> = cases.iter().map(|(g, _)| g.id()).collect();
    let pinned: Vec<&str> = cases.iter().map(|(_, id)| *id).collect();
    assert_eq!(ids, pinned);
    assert_eq!(
        descriptor_digest(
            &json!({"name": "t", "inputSchema": {"type": "object", "properties": {}}})
        ),
        "0df53ebc499c64aa"
    );
}
