//! The runtime hook that agents call before (and after) every tool call.
//!
//! Owns: the agents' wire formats (Claude Code, Cursor), loading the frozen envelope, deciding
//! with the engine's `decide` under the envelope's setting, answering in the agent's format,
//! appending to the decision ledger, and the file grant store the hook and the CLI share; the
//! workspace, rules and grants a decision outside the hook reads, `leastgrant check`'s decision,
//! and the rules and grants a replay answers with (the CLI and the Python package call them).
//!
//! Must not: depend on ingest, replay, report or anything heavy; panic (the same lints as the
//! engine apply); or answer anything wider than the envelope that was audited. Input it cannot
//! read gets a deny wherever the agent honours one, never silence that reads as permission.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::unreachable
)]

pub mod agent;
pub mod answers;
pub mod catalogue;
pub mod check;
pub mod files;
pub mod grants;
pub mod layout;
pub mod ledger;
pub mod links;
pub mod payload;
pub mod policy;
pub mod rules_cache;
pub mod session;
pub mod sha_ni;
pub mod state;
pub mod workspace;

use std::path::{Path, PathBuf};

use leastgrant_engine::{
    Context, Decision, Envelope, Frozen, GrantStore, Learned, Reason, Roots, RulesAndGrants,
    Settings, Weight, analyze, decide,
};
use serde_json::{Value, json};

use crate::agent::Request;
use crate::catalogue::{Agent, Surface};
use crate::ledger::{Ledger, cut_long_strings};

/// What the hook knows of its surroundings: read by the binary, given by tests.
#[derive(Debug, Clone)]
pub struct Environment {
    /// The user's home directory.
    pub home: String,
    /// leastgrant's state directory (envelope, ledger, rules, grants).
    pub state_dir: PathBuf,
    /// The hook process's working directory, for payloads that carry none.
    pub process_cwd: Option<String>,
    /// Now, in microseconds since the epoch.
    pub now_us: i64,
}

/// What the hook prints and logs.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Standard output: one JSON object, or nothing (no opinion).
    pub stdout: Option<String>,
    /// For standard error: what went wrong around the decision (never the decision itself).
    pub notes: Vec<String>,
}

/// Answers one hook invocation. Never panics; the exit code is always 0 (exit 2 would be read
/// as a deny by some agents even where the hook meant none).
pub fn answer(agent: Agent, input: &[u8], env: &Environment) -> Answer {
    files::remembering_dirs(|| answer_call(agent, input, env))
}

fn answer_call(agent: Agent, input: &[u8], env: &Environment) -> Answer {
    let mut notes = Vec::new();
    let ledger = Ledger::new(&env.state_dir);
    let payload = match payload::parse(input) {
        Ok(payload) => payload,
        Err(error) => {
            let reason = format!(
                "leastgrant could not read what the agent sent ({}), so it refuses rather than guess",
                error.0
            );
            log(&ledger, &unreadable_line(agent, env, &error.0), &mut notes);
            return Answer {
                stdout: Some(payload::ascii_json(&agent::unreadable(agent, &reason))),
                notes,
            };
        }
    };
    let request = agent::request(agent, &payload);
    match request.surface {
        Surface::Ran { ok } => {
            log(&ledger, &ran_line(agent, env, &request, ok), &mut notes);
            if let Some(call) = &request.call {
                let cwd = request
                    .cwd
                    .clone()
                    .or_else(|| env.process_cwd.clone())
                    .unwrap_or_default();
                let root = layout::project_root(Path::new(&cwd));
                let mut roots = Roots::new(&root.display().to_string(), &env.home);
                roots.state_dir = env.state_dir.display().to_string();
                roots.see_links(std::sync::Arc::new(links::FileSystemLinks::default()));
                let analysis = analyze(call, &roots);
                let file = session::path(&env.state_dir, agent.as_str(), &request.session_id);
                if let Err(e) = session::record(&env.state_dir, &file, &analysis) {
                    notes.push(format!("leastgrant: cannot record the session: {e}"));
                }
            }
            return Answer {
                stdout: None,
                notes,
            };
        }
        Surface::Other => {
            return Answer {
                stdout: None,
                notes,
            };
        }
        _ => {}
    }
    let decided = decide_request(agent, &request, env, &mut notes);
    let rendered = agent::render(
        request.surface,
        decided.decision,
        &decided.reason,
        &decided.ask_instead,
    );
    log(
        &ledger,
        &decision_line(agent, env, &request, &decided, rendered.answered),
        &mut notes,
    );
    Answer {
        stdout: rendered.stdout.map(|v| payload::ascii_json(&v)),
        notes,
    }
}

fn log(ledger: &Ledger, line: &Value, notes: &mut Vec<String>) {
    if let Err(e) = ledger.append(line) {
        notes.push(format!(
            "leastgrant: cannot append to {}: {e}",
            ledger.path().display()
        ));
    }
}

/// A decision and what it rests on.
struct Decided {
    decision: Decision,
    reason: String,
    ask_instead: String,
    codes: Vec<String>,
    headline: String,
    evidence: Option<String>,
    signatures: Vec<String>,
    project: String,
    envelope: Option<String>,
    setting: Option<String>,
}

fn decide_request(
    agent: Agent,
    request: &Request,
    env: &Environment,
    notes: &mut Vec<String>,
) -> Decided {
    let cwd = request
        .cwd
        .clone()
        .or_else(|| env.process_cwd.clone())
        .unwrap_or_else(|| "/".to_string());
    let mut cautions: Vec<Reason> = Vec::new();
    let caution = |code: &str, text: String| Reason {
        code: code.to_string(),
        text,
        weight: Weight::Raises,
    };

    // The frozen envelope: memory-mapped, read only where a decision looks.
    let envelope_path = layout::envelope_path(&env.state_dir);
    let mapped = match state::map(&envelope_path) {
        Ok(mapped) => mapped,
        Err(e) => {
            cautions.push(caution(
                "hook.envelope-unreadable",
                format!("the frozen envelope cannot be read ({e})"),
            ));
            None
        }
    };
    let frozen = match mapped.as_deref().map(Frozen::parse).transpose() {
        Ok(frozen) => frozen,
        Err(e) => {
            cautions.push(caution(
                "hook.envelope-damaged",
                format!("{e}; run `leastgrant export` again"),
            ));
            None
        }
    };
    // The project's index items and head are checked as they are read (a damaged one asks).
    let project = match frozen.as_ref().map(|f| f.project_for(&cwd)).transpose() {
        Ok(project) => project.flatten(),
        Err(e) => {
            cautions.push(caution(
                "hook.envelope-damaged",
                format!("{e}; run `leastgrant export` again"),
            ));
            None
        }
    };
    let project_root = project
        .as_ref()
        .map(|p| p.root().to_string())
        .unwrap_or_else(|| layout::project_root(Path::new(&cwd)).display().to_string());
    let mut roots = Roots::new(&project_root, &env.home);
    roots.state_dir = env.state_dir.display().to_string();
    // Rules and grants are found by the roots as given; placement also sees the links.
    let mut placing = roots.clone();
    placing.see_links(std::sync::Arc::new(links::FileSystemLinks::default()));

    let policy = match policy::load_compiled(&policy::default_rule_files(&roots), &roots, notes) {
        Ok(policy) => policy,
        Err(e) => {
            cautions.push(caution("hook.rules-unreadable", e));
            leastgrant_engine::CompiledPolicy::new(Vec::new(), roots.clone())
        }
    };
    let grants = match policy::grant_store(&roots).load() {
        Ok(grants) => grants,
        Err(e) => {
            cautions.push(caution("hook.grants-unreadable", e.0));
            Vec::new()
        }
    };
    let answers = RulesAndGrants {
        policy: &policy,
        grants: &grants,
    };
    let empty = Envelope::default();
    let learned: &dyn Learned = match &project {
        Some(project) => project,
        None => &empty,
    };
    let settings: Settings = frozen.as_ref().map(|f| *f.settings()).unwrap_or_default();
    let session_file = session::path(&env.state_dir, agent.as_str(), &request.session_id);
    let session = match session::load(&env.state_dir, &session_file) {
        Ok(session) => session,
        Err(e) => {
            cautions.push(caution("hook.session-untrusted", e.to_string()));
            leastgrant_engine::SessionState::default()
        }
    };
    // The ledger becomes evidence when ingested: one another user could plant is not written to.
    if let Err(e) = Ledger::new(&env.state_dir).check() {
        cautions.push(caution("hook.ledger-untrusted", e.to_string()));
    }
    let ctx = Context {
        envelope: learned,
        session: &session,
        answers: &answers,
        settings: &settings,
        now_us: env.now_us,
    };

    let (mut decision, mut reasons, signatures) = match &request.call {
        Some(call) => {
            let mut call = call.clone();
            call.cwd = Some(cwd.clone());
            let analysis = analyze(&call, &placing);
            let verdict = decide(&analysis, &ctx);
            let signatures = analysis
                .actions
                .iter()
                .map(|a| a.signature.clone())
                .collect();
            (verdict.decision, verdict.reasons, signatures)
        }
        None => {
            let problem = request
                .problem
                .clone()
                .unwrap_or_else(|| "the payload describes no call".to_string());
            (
                Decision::Ask,
                vec![caution(
                    "hook.no-call",
                    format!("{problem}, so a person must decide"),
                )],
                Vec::new(),
            )
        }
    };
    // A signature the decision looked up whose bytes failed their check read as never seen.
    if let Some(e) = project.as_ref().and_then(|p| p.damage()) {
        cautions.push(caution(
            "hook.envelope-damaged",
            format!("{e}; run `leastgrant export` again"),
        ));
    }
    // A rules table item a lookup read that failed its check: the answer asked (the engine's
    // `CompiledPolicy`); the table goes, so the next call rebuilds it from its rules file.
    if let Some((table, e)) = policy.damaged() {
        let slot = layout::rules_cache_path(&env.state_dir, Path::new(table.name()));
        let _ = std::fs::remove_file(&slot);
        cautions.push(caution(
            "hook.rules-damaged",
            format!(
                "the compiled table of the rules file `{}` ({}) is damaged ({}); it is rebuilt \
                 from the rules file on the next call",
                table.name(),
                slot.display(),
                e.0
            ),
        ));
    }
    // What could not be loaded never widens a verdict: anything it would have allowed asks.
    if !cautions.is_empty() {
        decision = decision.max(Decision::Ask);
        for c in &cautions {
            notes.push(format!("leastgrant: {}", c.text));
        }
        let mut all = cautions;
        all.append(&mut reasons);
        reasons = all;
    }
    let headline =
        leastgrant_engine::headline(&reasons).unwrap_or_else(|| "no reason recorded".to_string());
    // What decided it: the first reason pulling the way the verdict went (a deny rule or floor,
    // what raised the ask, the rule, grant or learned evidence that allowed it).
    let deciding = match decision {
        Decision::Deny => Weight::Blocks,
        Decision::Ask => Weight::Raises,
        Decision::Allow => Weight::Lowers,
    };
    let evidence = reasons
        .iter()
        .find(|r| r.weight == deciding)
        .map(|r| format!("{}: {}", r.code, r.text));
    let digest = frozen.as_ref().map(Frozen::digest);
    let setting = frozen.as_ref().map(|f| f.setting_id().to_string());
    let whose = match (&digest, &project) {
        (Some(d), Some(_)) => format!("envelope {}", d.get(..12).unwrap_or(d)),
        (Some(d), None) => format!(
            "envelope {} has nothing learned for this directory",
            d.get(..12).unwrap_or(d)
        ),
        (None, _) => "nothing learned yet".to_string(),
    };
    let reason = format!("leastgrant: {headline} ({whose})");
    let how = match request.call.as_ref() {
        Some(call) => match call.input.get("command").and_then(Value::as_str) {
            Some(command) => format!("`leastgrant allow '{}'`", command.replace('\'', "'\\''")),
            None => format!("`leastgrant allow --tool {} --input '…'`", call.tool),
        },
        None => "`leastgrant allow`".to_string(),
    };
    let ask_instead = format!(
        "leastgrant would ask you first: {headline} ({whose}). {} cannot ask here, so it is \
         refused; if you want it, approve it once with {how} and try again.",
        agent.title()
    );
    let decided = Decided {
        decision,
        reason,
        ask_instead,
        codes: reasons.iter().map(|r| r.code.clone()).collect(),
        headline,
        evidence,
        signatures,
        project: project_root,
        envelope: digest,
        setting,
    };
    state::keep_until_exit((mapped, policy));
    decided
}

fn decision_line(
    agent: Agent,
    env: &Environment,
    request: &Request,
    decided: &Decided,
    answered: &str,
) -> Value {
    json!({
        "v": 1,
        "kind": "decision",
        "ts_us": env.now_us,
        "agent": agent.as_str(),
        "event": request.event,
        "session_id": request.session_id,
        "call_id": request.call_id,
        "cwd": request.cwd,
        "project": decided.project,
        "permission_mode": request.permission_mode,
        "attended": request.attended(),
        "tool_name": request.call.as_ref().map(|c| c.tool.clone()),
        "tool_input": request.call.as_ref().map(|c| cut_long_strings(&c.input)),
        "verdict": decided.decision.as_str(),
        "answered": answered,
        "reasons": decided.codes,
        "headline": decided.headline,
        "evidence": decided.evidence,
        "signatures": decided.signatures,
        "envelope": decided.envelope,
        "setting": decided.setting,
    })
}

fn ran_line(agent: Agent, env: &Environment, request: &Request, ok: bool) -> Value {
    json!({
        "v": 1,
        "kind": "ran",
        "ts_us": env.now_us,
        "agent": agent.as_str(),
        "event": request.event,
        "session_id": request.session_id,
        "call_id": request.call_id,
        "ok": ok,
    })
}

fn unreadable_line(agent: Agent, env: &Environment, problem: &str) -> Value {
    json!({
        "v": 1,
        "kind": "unreadable",
        "ts_us": env.now_us,
        "agent": agent.as_str(),
        "problem": problem,
    })
}
