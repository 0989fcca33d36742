//! The leastgrant decision model, shared by the offline replay and the runtime hook.
//!
//! Owns: shell analysis, the knowledge tables, classification of a tool call into [`Action`]s
//! with a capability, a blast radius and a signature ([`analyze()`]), envelope learning
//! ([`Envelope`]) and the decision itself ([`decide()`]). This file is the boundary: the modules
//! are private, and what other crates use is re-exported below.
//!
//! Must not: do I/O, read a clock or the environment, spawn threads, or depend on anything heavy.
//! Time, the project root, the home directory and all state are inputs, so the same call with the
//! same inputs gets the same verdict in the replay and in the hook.
//!
//! Why the decision path cannot fail: a verdict is always produced. Input the engine cannot
//! account for is *not understood*, which is itself a reason to ask; it never becomes an error
//! or a panic (the lints below enforce the latter).
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::unreachable
)]

// The modules, bottom first: each imports only from those above it in this list.
mod analyze;
mod answers;
mod decay;
mod decide;
mod envelope;
mod frozen;
mod glob;
mod grants;
mod hex;
mod knowledge;
mod model;
mod native;
mod net;
mod paths;
mod rules;
mod session;
pub mod sha256;
mod shell;
mod signature;
mod spelling;
mod static_index;
mod targets;
mod tokens;
mod tools;

// The boundary: everything another crate (the hook, the replay, the CLI) or the engine's own
// tests and benchmarks use, and nothing else.

// A tool call, what it does, and where its paths lie.
pub use analyze::analyze;
pub use model::{
    Access, Action, ActionFlags, Analysis, Blast, Capability, Exposure, NoLinks, Placement, Reach,
    Resolver, Reversibility, Scale, Subject, Target, ToolCall, Zone,
};
pub use paths::{Links, Roots, percent_decode, place, resolve};
pub use tools::canonical_tool;

// The decision: `prepare` once per call, `judge` per setting, `decide` with the words.
pub use decide::{
    ActionVerdict, Context, Floor, Judgement, Posed, Posture, PreparedAction, Reason, Ruling,
    Settings, Situation, Stage, Verdict, Weight, decide, decide_prepared, floors, headline, judge,
    judge_learned, judge_posed, pose, prepare,
};
pub use model::{Answer, AnswerSource, Answers, Decision, NoAnswers};
pub use session::SessionState;

// Learning.
pub use decay::{DecayTable, Exact, Weights};
pub use envelope::stats::{
    Approvals, DAY_US, Evidence, Familiarity, SignatureStats, Thresholds, day_of, stable_hash,
    wilson_lower_bound,
};
pub use envelope::{Envelope, Gates, Learned, Promotion, can_promote, riskiest};

// The frozen envelope the hook reads.
pub use frozen::{
    Exported, FORMAT_VERSION, Frozen, FrozenError, FrozenMeta, FrozenProject, FrozenWriter,
    ProjectEnvelope, encode, thresholds_json,
};

// Answers given in advance: the rule language and grants, and the seam the replay reads them
// through.
pub use answers::ProjectAnswers;
pub use grants::{
    Grant, GrantScope, GrantStore, GrantStoreError, GrantVerdict, RulesAndGrants,
    descriptor_digest, digest16, scope_from_json, scope_json,
};
pub use rules::compiled::{
    COMPILED_VERSION, CompiledError, CompiledPolicy, CompiledRules, SourceKey, TableBytes,
    compile_rules, compile_rules_refusal,
};
pub use rules::lint::{Finding, lint};
pub use rules::pattern::{GlobKind, Pattern};
pub use rules::{DefaultMode, Policy, PolicyError, Rule};

// Native allow rules as each agent's matcher reads them (`export --to`, the replay's
// native-rules setting).
pub use native::{
    NativeAgent, NativeExtensions, NativeRule, NativeShape, claude_shape, is_plain_command,
    native_witnesses, recorded_command, rule_words,
};

// Shared with the hook.
pub use hex::hex;

// The shell analysis and glob reach, for the engine's case tests.
pub use glob::glob_may_reach_dir;
// Glob expansion over a caller's directory listing, for the hook and `check`.
pub use glob::{MAX_GLOB_ENTRIES, MAX_GLOB_PATHS, expand_glob};
pub use shell::lex::{Token, lex};
pub use shell::parse::parse;
pub use shell::unwrap::unwrap;

// Quoting a word for a shell to read back (the CLI writes hook commands with it).
pub use shell::quote::quote_word;
