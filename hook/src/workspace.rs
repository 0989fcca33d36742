//! Where a decision outside the hook is made (`leastgrant check`, `allow`, `doctor`, and the
//! Python package's `check`): the working directory, the project and home roots, the state
//! directory, the rules files and Claude Code settings in force, and the project's grant store.
//! The engine gets all of it as plain values.
//!
//! Must not: decide (that is `check.rs` and the engine), or spell a place `layout.rs` owns.

use std::path::{Path, PathBuf};

use leastgrant_engine::{Policy, Roots};

use crate::files;
use crate::grants::FileGrantStore;
use crate::layout;
use crate::policy;

/// Why a workspace, its rules or a call cannot be used: one sentence for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// An error saying what could not be done, and why.
pub(crate) fn error(what: &str, why: impl std::fmt::Display) -> Error {
    Error(format!("{what}: {why}"))
}

/// The directories one invocation works in.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// Where the call runs.
    pub cwd: PathBuf,
    /// Project, home and state directory.
    pub roots: Roots,
}

impl Workspace {
    /// Resolves `cwd` (default: the current directory, or the project when `project` names
    /// one the current directory is not in) and `project` (default: the enclosing git
    /// repository, else the working directory). `LEASTGRANT_HOME` moves the state directory
    /// (default `~/.leastgrant`).
    pub fn discover(cwd: Option<&Path>, project: Option<&Path>) -> Result<Workspace, Error> {
        let here =
            std::env::current_dir().map_err(|e| error("cannot read the current directory", e))?;
        let project = match project {
            Some(dir) => {
                Some(std::path::absolute(dir).map_err(|e| error("cannot resolve --project", e))?)
            }
            None => None,
        };
        let cwd = match (cwd, &project) {
            (Some(dir), _) => {
                std::path::absolute(dir).map_err(|e| error("cannot resolve --cwd", e))?
            }
            // A call checked for another project runs there: a runner started outside the
            // project runs code the engine has not read, which is not what was asked.
            (None, Some(project)) if !here.starts_with(project) => project.clone(),
            (None, _) => here,
        };
        let project = project.unwrap_or_else(|| layout::project_root(&cwd));
        let home = layout::home();
        // Symlinked spellings of a directory are one directory: rules and grants key on it.
        let canonical = |p: PathBuf| layout::canonical(&p);
        let (cwd, project, home) = (canonical(cwd), canonical(project), canonical(home));
        let mut roots = Roots::new(&text(&project), &text(&home));
        roots.state_dir = text(&layout::state_dir_from_env(&home));
        Ok(Workspace { cwd, roots })
    }

    /// The policy files in force: the ones given, else those of the default locations that
    /// exist (`<state>/rules.json`, then `<project>/.leastgrant/rules.json`).
    pub fn policy_files(&self, given: &[PathBuf]) -> Vec<PathBuf> {
        if given.is_empty() {
            policy::default_rule_files(&self.roots)
        } else {
            given.to_vec()
        }
    }

    /// The policy in force (empty when there is no policy file), with Claude Code's settings
    /// layers added when `with_claude` is set.
    pub fn policy_with(&self, given: &[PathBuf], with_claude: bool) -> Result<Policy, Error> {
        let mut layers = vec![self.policy(given)?];
        if with_claude {
            layers.extend(self.claude_layers()?.into_iter().map(|(_, p)| p));
        }
        Ok(Policy::merge(layers))
    }

    /// The policy in force (empty when there is no policy file): the hook's own loading, so
    /// `check` and the hook read the same rules the same way.
    pub fn policy(&self, given: &[PathBuf]) -> Result<Policy, Error> {
        policy::load_policy(&self.policy_files(given), &self.roots, !given.is_empty())
            .map_err(Error)
    }

    /// Claude Code's own settings layers that exist (user, project, local), as policies whose
    /// unmatched calls fall through.
    pub fn claude_layers(&self) -> Result<Vec<(PathBuf, Policy)>, Error> {
        let files = [
            PathBuf::from(&self.roots.home).join(".claude/settings.json"),
            PathBuf::from(&self.roots.project).join(".claude/settings.json"),
            PathBuf::from(&self.roots.project).join(".claude/settings.local.json"),
        ];
        let mut layers = Vec::new();
        for file in files.into_iter().filter(|f| f.exists()) {
            let Some(bytes) = files::read_regular(
                &file,
                files::Links::Follow,
                files::Trust::Anyone,
                files::MAX_RULES_BYTES,
            )
            .map_err(|e| Error(e.to_string()))?
            else {
                continue;
            };
            let value: serde_json::Value = serde_json::from_slice(&bytes)
                .map_err(|e| error(&format!("`{}` is not valid JSON", file.display()), e))?;
            let policy = Policy::from_claude_settings(&value, &self.roots).map_err(|e| {
                error(
                    &format!("`{}` holds rules leastgrant cannot read", file.display()),
                    e,
                )
            })?;
            layers.push((file, policy));
        }
        Ok(layers)
    }

    /// The project's grant store (`<state>/grants/projects/<digest>/grants.json`).
    pub fn grants(&self) -> FileGrantStore {
        policy::grant_store(&self.roots)
    }

    /// The working directory as text.
    pub fn cwd_text(&self) -> String {
        text(&self.cwd)
    }
}

/// A path as text.
pub fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
