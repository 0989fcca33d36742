//! The rules and grants the hook applies to a project, read as the hook reads them, for a
//! replay to answer with (`leastgrant simulate` and the Python package's `simulate`): what is
//! audited is what the hook will enforce. The replay's `ProjectAnswers` trait is implemented by
//! its callers over [`RuleFiles`] (this crate does not depend on the replay).
//!
//! Must not: read a rules file or a grant any other way than `policy.rs` does.

use std::path::PathBuf;

use leastgrant_engine::{Grant, GrantStore, Policy, Roots};

use crate::policy;

/// The rules files named for a replay (empty: the hook's default files of each project) and
/// the state directory whose `rules.json` and grants apply.
#[derive(Debug, Clone)]
pub struct RuleFiles {
    /// Files named with `--rules`; empty: the hook's default files.
    pub given: Vec<PathBuf>,
    /// The state directory (its `rules.json` and grants).
    pub state_dir: String,
}

impl RuleFiles {
    /// The rules files in force for a project, and its roots with this state directory.
    fn files(&self, roots: &Roots) -> (Vec<PathBuf>, Roots) {
        let mut roots = roots.clone();
        roots.state_dir = self.state_dir.clone();
        let files = if self.given.is_empty() {
            policy::default_rule_files(&roots)
        } else {
            self.given.clone()
        };
        (files, roots)
    }

    /// The policy and grants in force for a project.
    pub fn for_project(&self, roots: &Roots) -> Result<(Policy, Vec<Grant>), String> {
        let (files, roots) = self.files(roots);
        let policy = policy::load_policy(&files, &roots, !self.given.is_empty())?;
        let grants = policy::grant_store(&roots).load().map_err(|e| e.0)?;
        Ok((policy, grants))
    }

    /// The rules files read for a project, with the SHA-256 of each.
    pub fn fingerprint(&self, roots: &Roots) -> Vec<(String, String)> {
        policy::rules_fingerprint(&self.files(roots).0)
    }

    /// What the summary says the replay answered with.
    pub fn describe(&self) -> String {
        if self.given.is_empty() {
            format!(
                "the hook's: {}/rules.json and each project's .leastgrant/rules.json where they exist, and the grants in {}/grants",
                self.state_dir, self.state_dir
            )
        } else {
            let files: Vec<String> = self.given.iter().map(|f| f.display().to_string()).collect();
            format!(
                "{}, and the grants in {}/grants",
                files.join(", "),
                self.state_dir
            )
        }
    }
}
