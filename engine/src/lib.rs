//! The leastgrant decision model, shared by the offline replay and the runtime hook.
//!
//! Owns: shell analysis ([`shell`]), the knowledge tables ([`knowledge`]), classification of a
//! tool call into [`Action`]s with a capability, a blast radius and a signature ([`analyze`]),
//! envelope learning ([`envelope`]) and the decision itself ([`decide`]).
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

pub mod analyze;
pub mod decay;
pub mod decide;
pub mod envelope;
pub mod frozen;
pub mod glob;
pub mod grants;
pub mod hex;
pub mod knowledge;
pub mod model;
pub mod paths;
pub mod rules;
pub mod session;
pub mod shell;
pub mod signature;
mod spelling;
mod static_index;
mod targets;
pub mod tools;

pub use analyze::analyze;
pub use decide::{Posture, Reason, Settings, Verdict, decide};
pub use envelope::{Envelope, Evidence, Thresholds};
pub use model::{
    Action, Analysis, Answers, Blast, Capability, Decision, Exposure, Reach, Reversibility, Scale,
    Target, ToolCall,
};
pub use paths::Roots;
pub use session::SessionState;
