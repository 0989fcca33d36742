//! The rules and grants the hook applies to a project, read as the hook reads them, for a
//! replay to answer with (`leastgrant simulate`, the Python package's `simulate` and its Spark
//! executors): what is audited is what the hook will enforce. Both kinds implement the engine's
//! [`ProjectAnswers`], the seam the replay reads answers through: [`RuleFiles`] reads the files
//! per project where the replay runs; [`RulesSnapshot`] is what `RuleFiles` reads for a set of
//! projects, read once (on a Spark driver) and carried as JSON to machines that do not hold the
//! files, answering exactly as `RuleFiles` would have there.
//!
//! Must not: read a rules file or a grant any other way than `policy.rs` and `grants.rs` do, or
//! compile rules any other way than `policy::compile_policy`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use leastgrant_engine::{Grant, GrantStore, Policy, ProjectAnswers, Roots};
use serde_json::{Value, json};

use crate::{grants, policy};

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

    /// Everything [`RuleFiles::for_project`] and [`RuleFiles::fingerprint`] would read for the
    /// projects rooted at `project_roots` (as the events table spells them), read now, once per
    /// file: the rules files in force for each project, each file's JSON (or why it cannot be
    /// used) and digest, and each project's grants.
    pub fn snapshot<'a>(&self, project_roots: impl IntoIterator<Item = &'a str>) -> RulesSnapshot {
        let mut snapshot = RulesSnapshot {
            given: !self.given.is_empty(),
            state_dir: self.state_dir.clone(),
            describe: self.describe(),
            files: BTreeMap::new(),
            projects: BTreeMap::new(),
        };
        for root in project_roots {
            // The roots the replay builds from this root name the same project (the home
            // directory does not change which files are read).
            let (files, roots) = self.files(&Roots::new(root, "/"));
            if snapshot.projects.contains_key(&roots.project) {
                continue;
            }
            for file in &files {
                snapshot
                    .files
                    .entry(file.clone())
                    .or_insert_with(|| ReadFile {
                        rules: policy::read_rules_file(file, &roots),
                        digest: policy::rules_digest(file),
                    });
            }
            let grants = policy::grant_store(&roots).load().map_err(|e| e.0);
            snapshot
                .projects
                .insert(roots.project.clone(), ReadProject { files, grants });
        }
        snapshot
    }
}

impl ProjectAnswers for RuleFiles {
    fn for_project(&self, roots: &Roots) -> Result<(Policy, Vec<Grant>), String> {
        RuleFiles::for_project(self, roots)
    }

    fn fingerprint(&self, roots: &Roots) -> Vec<(String, String)> {
        RuleFiles::fingerprint(self, roots)
    }

    fn describe(&self) -> String {
        RuleFiles::describe(self)
    }
}

/// One rules file as read for a snapshot.
#[derive(Debug, Clone)]
struct ReadFile {
    /// [`policy::read_rules_file`]'s answer.
    rules: Result<Option<Value>, String>,
    /// [`policy::rules_digest`]'s answer.
    digest: Option<String>,
}

/// One project as read for a snapshot.
#[derive(Debug, Clone)]
struct ReadProject {
    /// The rules files in force, in order.
    files: Vec<PathBuf>,
    /// Its grants, or why they cannot be read.
    grants: Result<Vec<Grant>, String>,
}

/// What [`RuleFiles`] reads for a set of projects, read once, as a value: it answers for those
/// projects as `RuleFiles` would on the machine that read it (the same policy, compiled against
/// the replay's own roots, the same grants, the same errors, the same description and
/// fingerprints), anywhere. [`RulesSnapshot::to_json`] and [`RulesSnapshot::from_json`] carry it
/// between machines; a rules file is stored once however many projects it applies to.
#[derive(Debug, Clone)]
pub struct RulesSnapshot {
    given: bool,
    state_dir: String,
    describe: String,
    files: BTreeMap<PathBuf, ReadFile>,
    projects: BTreeMap<String, ReadProject>,
}

/// The snapshot's JSON format version.
const SNAPSHOT_VERSION: u64 = 1;

impl RulesSnapshot {
    /// The projects it answers for (their roots, normalised), in order.
    pub fn projects(&self) -> impl Iterator<Item = &str> {
        self.projects.keys().map(String::as_str)
    }

    fn project(&self, roots: &Roots) -> Result<(&ReadProject, Roots), String> {
        let mut roots = roots.clone();
        roots.state_dir = self.state_dir.clone();
        let project = self.projects.get(&roots.project).ok_or_else(|| {
            format!(
                "no rules were read for the project at `{}` when the replay was planned",
                roots.project
            )
        })?;
        Ok((project, roots))
    }

    /// The policy and grants in force for a project, as [`RuleFiles::for_project`] answered
    /// where the snapshot was read.
    pub fn for_project(&self, roots: &Roots) -> Result<(Policy, Vec<Grant>), String> {
        let (project, roots) = self.project(roots)?;
        let policy =
            policy::compile_policy(&project.files, &roots, self.given, |file| {
                match self.files.get(file).map(|f| &f.rules) {
                    Some(Ok(value)) => Ok(value.as_ref()),
                    Some(Err(e)) => Err(e.clone()),
                    None => Err(format!("`{}` was not read", file.display())),
                }
            })?;
        let grants = project.grants.clone()?;
        Ok((policy, grants))
    }

    /// The rules files read for a project, with the SHA-256 of each.
    pub fn fingerprint(&self, roots: &Roots) -> Vec<(String, String)> {
        let Ok((project, _)) = self.project(roots) else {
            return Vec::new();
        };
        project
            .files
            .iter()
            .filter_map(|file| {
                let digest = self.files.get(file)?.digest.clone()?;
                Some((file.display().to_string(), digest))
            })
            .collect()
    }

    /// What the summary says the replay answered with ([`RuleFiles::describe`]).
    pub fn describe(&self) -> String {
        self.describe.clone()
    }

    /// The snapshot as JSON.
    pub fn to_json(&self) -> Value {
        let text = |path: &Path| path.display().to_string();
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|(path, read)| {
                let (rules, error) = match &read.rules {
                    Ok(rules) => (rules.clone(), None),
                    Err(e) => (None, Some(e.clone())),
                };
                json!({"path": text(path), "rules": rules, "error": error, "digest": read.digest})
            })
            .collect();
        let projects: Vec<Value> = self
            .projects
            .iter()
            .map(|(root, read)| {
                let (grants, error) = match &read.grants {
                    Ok(list) => (Some(grants::to_json(list)), None),
                    Err(e) => (None, Some(e.clone())),
                };
                json!({
                    "project": root,
                    "files": read.files.iter().map(|f| text(f)).collect::<Vec<_>>(),
                    "grants": grants,
                    "grants_error": error,
                })
            })
            .collect();
        json!({
            "version": SNAPSHOT_VERSION,
            "given": self.given,
            "state_dir": self.state_dir,
            "describe": self.describe,
            "files": files,
            "projects": projects,
        })
    }

    /// A snapshot from [`RulesSnapshot::to_json`]'s JSON.
    pub fn from_json(value: &Value) -> Result<RulesSnapshot, String> {
        let bad = |why: &str| format!("not a rules snapshot: {why}");
        if value.get("version").and_then(Value::as_u64) != Some(SNAPSHOT_VERSION) {
            return Err(bad("unknown or missing `version`"));
        }
        let text = |v: &Value, key: &str| -> Result<String, String> {
            v.get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| bad(&format!("no `{key}`")))
        };
        let optional =
            |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        let list = |v: &Value, key: &str| -> Result<Vec<Value>, String> {
            v.get(key)
                .and_then(Value::as_array)
                .cloned()
                .ok_or_else(|| bad(&format!("no `{key}` list")))
        };
        let mut snapshot = RulesSnapshot {
            given: value.get("given").and_then(Value::as_bool).unwrap_or(false),
            state_dir: text(value, "state_dir")?,
            describe: text(value, "describe")?,
            files: BTreeMap::new(),
            projects: BTreeMap::new(),
        };
        for file in list(value, "files")? {
            let rules = match optional(&file, "error") {
                Some(e) => Err(e),
                None => Ok(file.get("rules").filter(|r| !r.is_null()).cloned()),
            };
            snapshot.files.insert(
                PathBuf::from(text(&file, "path")?),
                ReadFile {
                    rules,
                    digest: optional(&file, "digest"),
                },
            );
        }
        for project in list(value, "projects")? {
            let root = text(&project, "project")?;
            let mut files = Vec::new();
            for file in list(&project, "files")? {
                files.push(PathBuf::from(
                    file.as_str()
                        .ok_or_else(|| bad("a file that is not a path"))?,
                ));
            }
            let grants = match optional(&project, "grants_error") {
                Some(e) => Err(e),
                None => {
                    let file = project.get("grants").unwrap_or(&Value::Null);
                    Ok(grants::from_json(file, Path::new(&root)).map_err(|e| e.0)?)
                }
            };
            snapshot
                .projects
                .insert(root, ReadProject { files, grants });
        }
        Ok(snapshot)
    }
}

impl ProjectAnswers for RulesSnapshot {
    fn for_project(&self, roots: &Roots) -> Result<(Policy, Vec<Grant>), String> {
        RulesSnapshot::for_project(self, roots)
    }

    fn fingerprint(&self, roots: &Roots) -> Vec<(String, String)> {
        RulesSnapshot::fingerprint(self, roots)
    }

    fn describe(&self) -> String {
        RulesSnapshot::describe(self)
    }
}
