//! Envelope arithmetic from `envelope.toml`, plus order independence and the safety
//! invariants the design names (a thousand approvals of a credential read still ask, …).

use leastgrant_engine::{
    Envelope, Evidence, Familiarity, Gates, Promotion, Settings, Thresholds, ToolCall, can_promote,
    wilson_lower_bound,
};
use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct Cases {
    wilson: Vec<Wilson>,
    needed: Vec<Needed>,
    required: Vec<Required>,
    scenario: Vec<Scenario>,
}

#[derive(Deserialize)]
struct Wilson {
    successes: f64,
    trials: f64,
    bound: f64,
}

#[derive(Deserialize)]
struct Needed {
    confidence: f64,
    approvals: u32,
}

#[derive(Deserialize)]
struct Required {
    tier: u8,
    confidence: f64,
}

#[derive(Deserialize)]
struct Query {
    signature: String,
    tier: u8,
    day: i64,
}

#[derive(Deserialize)]
struct Bulk {
    signature: String,
    tier: u8,
    evidence: String,
    from_day: i64,
    count: i64,
}

#[derive(Deserialize)]
struct Scenario {
    name: String,
    #[serde(default)]
    events: Vec<(String, u8, String, i64, String)>,
    bulk: Option<Bulk>,
    query: Query,
    confirmed: Option<f64>,
    bound: Option<f64>,
    approval_days: Option<u32>,
    approval_sessions: Option<u32>,
    denied: Option<u32>,
    promotion: Option<String>,
}

fn promotion_name(p: Promotion) -> &'static str {
    match p {
        Promotion::Granted => "granted",
        Promotion::Confirmed => "confirmed",
        Promotion::Observed => "observed",
        Promotion::BlastTooHigh => "blast-too-high",
        Promotion::PreviouslyDenied => "previously-denied",
        Promotion::NeedsApprovals { .. } => "needs-approvals",
        Promotion::NeedsDays { .. } => "needs-days",
        Promotion::NeedsSessions { .. } => "needs-sessions",
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4 || (a.is_infinite() && b.is_infinite())
}

#[test]
fn envelope_arithmetic() {
    let cases: Cases = load("envelope.toml");
    let t = Thresholds::default();
    let mut failures = Failures::default();
    for c in &cases.wilson {
        let got = wilson_lower_bound(c.successes, c.trials, t.z);
        if !close(got, c.bound) {
            failures.fail(format!(
                "wilson({}, {}) = {got}, expected {}",
                c.successes, c.trials, c.bound
            ));
        }
    }
    for c in &cases.needed {
        failures.check(
            &format!("approvals needed for {}", c.confidence),
            c.approvals,
            t.approvals_needed(c.confidence),
        );
    }
    for c in &cases.required {
        let got = t.required_confidence(c.tier);
        if !close(got, c.confidence) {
            failures.fail(format!(
                "required confidence at tier {} = {got}, expected {}",
                c.tier, c.confidence
            ));
        }
    }
    for s in &cases.scenario {
        let mut envelope = Envelope::default();
        for (signature, tier, kind, day, session) in &s.events {
            envelope.learn_signature(signature, *tier, evidence(kind), T0 + day * DAY_US, session);
        }
        if let Some(bulk) = &s.bulk {
            for i in 0..bulk.count {
                envelope.learn_signature(
                    &bulk.signature,
                    bulk.tier,
                    evidence(&bulk.evidence),
                    T0 + (bulk.from_day + i) * DAY_US,
                    &format!("bulk-{i}"),
                );
            }
        }
        let fam = envelope.familiarity(
            &s.query.signature,
            s.query.tier,
            T0 + s.query.day * DAY_US,
            &t,
        );
        if let Some(expected) = s.confirmed
            && !close(fam.confirmed, expected)
        {
            failures.fail(format!(
                "{}: confirmed {} expected {expected}",
                s.name, fam.confirmed
            ));
        }
        if let Some(expected) = s.bound
            && !close(fam.approval_bound, expected)
        {
            failures.fail(format!(
                "{}: bound {} expected {expected}",
                s.name, fam.approval_bound
            ));
        }
        if let Some(expected) = s.approval_days {
            failures.check(
                &format!("{}: approval days", s.name),
                expected,
                fam.approval_days,
            );
        }
        if let Some(expected) = s.approval_sessions {
            failures.check(
                &format!("{}: approval sessions", s.name),
                expected,
                fam.approval_sessions,
            );
        }
        if let Some(expected) = s.denied {
            failures.check(&format!("{}: denied", s.name), expected, fam.denied);
        }
        if let Some(expected) = &s.promotion {
            let got = promotion_name(can_promote(&fam, s.query.tier, false, &t));
            failures.check(&format!("{}: promotion", s.name), expected.as_str(), got);
        }
    }
    let total =
        cases.wilson.len() + cases.needed.len() + cases.required.len() + cases.scenario.len();
    failures.finish("envelope", total);
}

/// The replay's `Gates` (each tier's required confidence and approvals worked out once) answer
/// as `can_promote` does, over thresholds of every shape (tiers past the table and past the
/// gated ones, z, minimums) and familiarities around each gate.
#[test]
fn gates_promote_as_can_promote_does() {
    let mut checked = 0;
    for (max_tier, confidence, z, min_days, min_sessions, min_observed) in [
        (2, [0.6, 0.6, 0.8], 1.645, 2, 2, 8.0),
        (2, [0.5, 0.5, 0.8], 1.0, 1, 1, 3.0),
        (4, [0.8, 0.7, 0.9], 2.33, 4, 3, 0.5),
        (12, [0.55, 0.65, 0.75], 1.96, 0, 0, 0.0),
        (0, [0.99, 0.6, 0.8], 1.645, 3, 1, 20.0),
    ] {
        let thresholds = Thresholds {
            confidence_by_tier: confidence,
            z,
            min_sessions,
            min_days,
            max_tier,
            min_observed,
            ..Thresholds::default()
        };
        let gates = Gates::new(&thresholds);
        for tier in 0..=14u8 {
            for confirmed in [0.0, 0.4, 0.5, 1.0, 2.49, 2.5, 7.0, 40.0] {
                for approval_bound in [0.0, 0.5, 0.6, 0.7999, 0.8, 0.95] {
                    for (days, sessions, seen) in
                        [(0, 0, 0.0), (1, 1, 3.0), (3, 2, 8.0), (5, 4, 30.0)]
                    {
                        for (denied, granted) in [(0, false), (1, false), (0, true)] {
                            let fam = Familiarity {
                                confirmed,
                                seen,
                                denied,
                                approval_days: days,
                                approval_sessions: sessions,
                                sessions,
                                approval_bound,
                                granted,
                                novel: false,
                            };
                            for harmless in [false, true] {
                                assert_eq!(
                                    gates.can_promote(&fam, tier, harmless),
                                    can_promote(&fam, tier, harmless, &thresholds),
                                    "{thresholds:?} tier {tier} {fam:?} harmless {harmless}"
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 80_000, "{checked}");
}

#[test]
fn a_thousand_approvals_of_a_credential_read_still_ask() {
    let call = ToolCall::shell("cat ~/.aws/credentials", Some(PROJECT));
    let mut envelope = Envelope::default();
    train(&mut envelope, &call, 1000, Evidence::Confirmed, 0);
    let verdict = decide_at(&envelope, &call, &Settings::default(), T0 + 1001 * DAY_US);
    assert_eq!(verdict.decision.as_str(), "ask", "{:?}", verdict.reasons);
}

#[test]
fn a_denial_four_hundred_days_old_still_blocks_promotion() {
    let call = ToolCall::shell("npm test", Some(PROJECT));
    let mut envelope = Envelope::default();
    train(&mut envelope, &call, 1, Evidence::Denied, 0);
    train(&mut envelope, &call, 200, Evidence::Confirmed, 200);
    let verdict = decide_at(&envelope, &call, &Settings::default(), T0 + 400 * DAY_US);
    assert_eq!(verdict.decision.as_str(), "ask");
    assert_eq!(
        verdict.reasons.first().map(|r| r.code.as_str()),
        Some("gap.denied")
    );
}

#[test]
fn five_hundred_observations_of_git_push_never_promote() {
    let call = ToolCall::shell("git push", Some(PROJECT));
    let mut envelope = Envelope::default();
    train(&mut envelope, &call, 500, Evidence::Observed, 0);
    let verdict = decide_at(&envelope, &call, &Settings::default(), T0 + 500 * DAY_US);
    assert_eq!(verdict.decision.as_str(), "ask");
}

#[test]
fn a_refused_compound_blames_only_its_riskiest_action() {
    let analysis = analyze_command("cd src && rm -rf /srv/data");
    let mut envelope = Envelope::default();
    envelope.learn_event(&analysis, Evidence::Denied, T0, "s", None);
    assert_eq!(envelope.signatures.len(), 1);
    assert!(
        envelope.signatures.keys().all(|s| s.starts_with("rm")),
        "{:?}",
        envelope.signatures.keys()
    );
}
