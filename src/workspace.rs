//! Where the CLI finds things: the project and home roots, leastgrant's state directory, the
//! rule policy files and the grant store. The engine gets all of it as plain values.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::Args;
use leastgrant_engine::{Policy, Roots};
use leastgrant_hook::grants::FileGrantStore;
use leastgrant_hook::layout;

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
        Workspace::discover(self.cwd.as_deref(), self.project.as_deref())
    }
}

/// The directories one invocation works in.
pub struct Workspace {
    /// Where the call runs.
    pub cwd: PathBuf,
    /// Project, home and state directory.
    pub roots: Roots,
}

impl Workspace {
    /// Resolves `--cwd` (default: the current directory, or the project when `--project` names
    /// one the current directory is not in) and `--project` (default: the enclosing git
    /// repository, else the working directory). `LEASTGRANT_HOME` moves the state directory
    /// (default `~/.leastgrant`).
    pub fn discover(cwd: Option<&Path>, project: Option<&Path>) -> Result<Workspace> {
        let here = std::env::current_dir().context("cannot read the current directory")?;
        let project = match project {
            Some(dir) => Some(std::path::absolute(dir).context("cannot resolve --project")?),
            None => None,
        };
        let cwd = match (cwd, &project) {
            (Some(dir), _) => std::path::absolute(dir).context("cannot resolve --cwd")?,
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
            leastgrant_hook::policy::default_rule_files(&self.roots)
        } else {
            given.to_vec()
        }
    }

    /// The policy in force (empty when there is no policy file), with Claude Code's settings
    /// layers added when `with_claude` is set.
    pub fn policy_with(&self, given: &[PathBuf], with_claude: bool) -> Result<Policy> {
        let mut layers = vec![self.policy(given)?];
        if with_claude {
            layers.extend(self.claude_layers()?.into_iter().map(|(_, p)| p));
        }
        Ok(Policy::merge(layers))
    }

    /// The policy in force (empty when there is no policy file): the hook's own loading, so
    /// `check` and the hook read the same rules the same way.
    pub fn policy(&self, given: &[PathBuf]) -> Result<Policy> {
        leastgrant_hook::policy::load_policy(
            &self.policy_files(given),
            &self.roots,
            !given.is_empty(),
        )
        .map_err(anyhow::Error::msg)
    }

    /// Claude Code's own settings layers that exist (user, project, local), as policies whose
    /// unmatched calls fall through.
    pub fn claude_layers(&self) -> Result<Vec<(PathBuf, Policy)>> {
        let files = [
            PathBuf::from(&self.roots.home).join(".claude/settings.json"),
            PathBuf::from(&self.roots.project).join(".claude/settings.json"),
            PathBuf::from(&self.roots.project).join(".claude/settings.local.json"),
        ];
        let mut layers = Vec::new();
        for file in files.into_iter().filter(|f| f.exists()) {
            let Some(bytes) = leastgrant_hook::files::read_regular(
                &file,
                leastgrant_hook::files::Links::Follow,
                leastgrant_hook::files::Trust::Anyone,
                leastgrant_hook::files::MAX_RULES_BYTES,
            )?
            else {
                continue;
            };
            let value: serde_json::Value = serde_json::from_slice(&bytes)
                .with_context(|| format!("`{}` is not valid JSON", file.display()))?;
            let policy = Policy::from_claude_settings(&value, &self.roots).with_context(|| {
                format!("`{}` holds rules leastgrant cannot read", file.display())
            })?;
            layers.push((file, policy));
        }
        Ok(layers)
    }

    /// The project's grant store (`<state>/grants/projects/<digest>/grants.json`).
    pub fn grants(&self) -> FileGrantStore {
        leastgrant_hook::policy::grant_store(&self.roots)
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
