//! The seam between whoever reads the answers given in advance (rules and grants) and the
//! replay that applies them: [`ProjectAnswers`], per project. Owns the trait only; the hook
//! crate implements it over the files it reads (and over those files read once and shipped as
//! a value), the replay calls it.
//!
//! Must not: read a file or know where the answers come from.

use std::fmt::Debug;

use crate::grants::Grant;
use crate::paths::Roots;
use crate::rules::Policy;

/// The answers given in advance per project (rules and grants), for the replay: the command
/// line and the Python package hand the replay the hook's own reading of them, so what is
/// audited is what will run.
pub trait ProjectAnswers: Send + Sync + Debug {
    /// The policy and grants in force for a project.
    fn for_project(&self, roots: &Roots) -> Result<(Policy, Vec<Grant>), String>;
    /// What the summary says about them (the files read, or "none").
    fn describe(&self) -> String;
    /// The rules files read for a project, with a digest of each, for the export to record.
    fn fingerprint(&self, _roots: &Roots) -> Vec<(String, String)> {
        Vec::new()
    }
}
