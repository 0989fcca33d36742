//! The flags that say where a command runs and which rules files it reads. Where things are
//! found from them (the roots, the state directory, the rules files, the grant store) is the
//! hook crate's `workspace`, shared with the Python package.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
pub use leastgrant_hook::workspace::Workspace;

/// Where a command runs and which rules files it reads (the flags every command that decides
/// shares).
#[derive(Args)]
pub struct Location {
    /// The directory the call runs in [default: the current directory].
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The project root [default: the enclosing git repository, else --cwd].
    #[arg(long)]
    pub project: Option<PathBuf>,
    /// A rules file (JSON: `{allow, ask, deny, defaultMode}` or Claude Code's
    /// `{"permissions": …}`); repeat to layer several [default: `~/.leastgrant/rules.json` and
    /// `<project>/.leastgrant/rules.json`, where they exist].
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
}

impl Location {
    /// The workspace these flags name.
    pub fn workspace(&self) -> Result<Workspace> {
        Ok(Workspace::discover(
            self.cwd.as_deref(),
            self.project.as_deref(),
        )?)
    }
}
