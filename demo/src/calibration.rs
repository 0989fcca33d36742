//! The demo's calibration: the chances that shape a session (permission modes, risky calls,
//! refusals, interrupts). `datasets/README.md` explains each number against the published figures.
//!
//! Owns only these numbers; what they decide is played out in `session.rs`.

/// Share of sessions started in each permission mode: `default` is attended; `acceptEdits` still
/// asks before shell commands, fetches and MCP calls; `bypassPermissions` never asks.
pub(crate) const MODE_DEFAULT: f64 = 0.14;
pub(crate) const MODE_ACCEPT_EDITS: f64 = 0.46;
/// Chance that a turn carries one risky call (a credential read, `curl … | sh`, a force push…).
pub(crate) const RISKY_PER_TURN: f64 = 0.055;
/// Chance that a person refuses a risky call they are asked about.
pub(crate) const REFUSE_RISKY: f64 = 0.85;
/// Chance that a person refuses a routine call they are asked about.
pub(crate) const REFUSE_ROUTINE: f64 = 0.003;
/// Chance that a refusal carries the person's words (the agent then carries on).
pub(crate) const FEEDBACK_RISKY: f64 = 0.3;
pub(crate) const FEEDBACK_ROUTINE: f64 = 0.6;
/// Chance that a long-running call (a build, a test run, a dev server, a sub-agent) is
/// interrupted.
pub(crate) const INTERRUPT_LONG: f64 = 0.012;
