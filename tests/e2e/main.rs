//! End-to-end tests: the real `leastgrant` binary driven as a user or CI would, and the
//! architecture's dependency edges checked against `cargo metadata`.

mod adversarial;
mod architecture;
mod check;
mod closed_stdout;
mod demo;
mod hook;
mod ingest;
mod ingest_sources;
mod install;
mod install_agents;
mod layers;
mod log;
mod native;
mod otel;
mod policy;
mod project;
mod quoting;
mod retention;
mod run;
mod shards;
mod simulate;
mod standing;
mod support;
mod symlinked;
mod untrusted_files;
