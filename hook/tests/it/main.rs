//! The hook's integration tests: the agents' catalogue against the binary, the rules and
//! grants a replay answers with (read where they are, and shipped as a snapshot), the file grant
//! store, the wire-format conformance cases of `tests/data/conformance.toml` through the real
//! binary, the ledger under concurrency, and decisions with a real frozen envelope, compiled
//! rules tables in every state, the build marker `--version` prints, and what the hook's own
//! start keeps of std's.

mod answers;
mod catalogue;
mod conformance;
mod envelope;
mod fuzz;
mod grants;
mod ledger;
mod rules_cache;
mod start;
mod untrusted;
mod version;
