//! The hook's integration tests: the agents' catalogue against the binary, the rules and
//! grants a replay answers with (read where they are, and shipped as a snapshot), the file grant
//! store, the wire-format conformance cases of `tests/data/conformance.toml` through the real
//! binary, the ledger under concurrency, and decisions with a real frozen envelope, compiled
//! rules tables in every state, and the build marker `--version` prints.

mod answers;
mod catalogue;
mod conformance;
mod envelope;
mod fuzz;
mod grants;
mod ledger;
mod rules_cache;
mod untrusted;
mod version;
