//! `leastgrant doctor`: whether the hook is in place and has what it needs — the hook binary,
//! each agent's entries in the user and project configuration, the frozen envelope, the modes
//! and owners of leastgrant's state files and directories (a link, a device, another user's
//! file or one others can write fails: the hook refuses it), whether an agent will delete
//! history before `ingest` has read it (`retention`) — and what each agent can enforce at all.
//!
//! Owns the checks and their verdicts (ok, warn, fail; only a fail makes the exit code 1) and
//! their texts. What each agent registers and enforces is the hook's catalogue
//! (`leastgrant_hook::catalogue`); configurations are read through `install`, the envelope
//! through the engine's frozen-envelope reader; writes nothing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Result;
use clap::Args;
use leastgrant_engine::Frozen;
use leastgrant_hook::catalogue::{Agent, OnFailure};
use leastgrant_hook::files::{self, Links, Trust};
use leastgrant_hook::layout::{self, envelope_path};
use serde_json::{Value, json};

use crate::shared::agent_config::{
    FoundEntry, Scope, config_file, default_hook_path, find_our_entries, read_config,
};
use crate::shared::time::human;
use crate::workspace::Workspace;

mod retention;

#[derive(Args)]
pub struct DoctorArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One line of the report.
struct Check {
    id: String,
    status: Status,
    text: String,
}

fn check(id: &str, status: Status, text: String) -> Check {
    Check {
        id: id.to_string(),
        status,
        text,
    }
}

/// An envelope older than this is reported as stale: it has not learned the last month.
const STALE_ENVELOPE: Duration = Duration::from_secs(30 * 24 * 3600);

/// `leastgrant doctor`: exit 0 when no check failed, 1 when one did.
pub fn doctor_command(args: &DoctorArgs) -> Result<ExitCode> {
    let workspace = Workspace::discover(None, None)?;
    let mut checks = Vec::new();
    let installed = agent_checks(&workspace, &mut checks);
    checks.insert(0, hook_binary_check(&installed));
    checks.insert(1, hook_build_check(&installed, &workspace));
    envelope_checks(&workspace, &mut checks);
    permission_checks(&workspace, &mut checks);
    for finding in retention::retention_checks(&workspace) {
        let status = if finding.warn {
            Status::Warn
        } else {
            Status::Ok
        };
        checks.push(check(finding.id, status, finding.text));
    }

    let failed = checks.iter().any(|c| c.status == Status::Fail);
    if args.json {
        let value = json!({
            "ok": !failed,
            "checks": checks.iter().map(|c| json!({"id": c.id, "status": c.status.as_str(), "text": c.text})).collect::<Vec<_>>(),
            "enforcement": enforcement_json(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        for c in &checks {
            println!("{:<4}  {:<20}  {}", c.status.as_str(), c.id, c.text);
        }
        println!();
        print_enforcement();
    }
    Ok(ExitCode::from(u8::from(failed)))
}

/// The hook binaries the installed entries run, for the binary check.
struct Installed {
    hooks: Vec<String>,
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

fn hook_binary_check(installed: &Installed) -> Check {
    let path = match default_hook_path() {
        Ok(path) => path,
        Err(error) => return check("hook.binary", Status::Fail, format!("{error:#}")),
    };
    if is_executable(&path) {
        return check(
            "hook.binary",
            Status::Ok,
            format!("{} is executable", path.display()),
        );
    }
    let why = if path.exists() {
        "is not an executable file"
    } else {
        "does not exist"
    };
    let elsewhere_ok =
        !installed.hooks.is_empty() && installed.hooks.iter().all(|h| is_executable(Path::new(h)));
    if elsewhere_ok {
        check(
            "hook.binary",
            Status::Warn,
            format!(
                "{} {why}, but every installed entry runs a hook binary that does",
                path.display()
            ),
        )
    } else {
        check(
            "hook.binary",
            Status::Fail,
            format!(
                "{} {why}: install leastgrant-hook next to leastgrant, or run `leastgrant install --hook PATH`",
                path.display()
            ),
        )
    }
}

/// Calls of the hook timed by `doctor`, and the median above which it warns.
const TIMED_CALLS: usize = 5;
const SLOW_CALL: Duration = Duration::from_millis(2);

/// Which build the registered hook is (its `--version`), and the median of [`TIMED_CALLS`] whole
/// calls of it with a copy of the current envelope, in a private scratch state directory so
/// nothing reaches the real ledger or session files. Warns on another build or a median above
/// [`SLOW_CALL`].
fn hook_build_check(installed: &Installed, workspace: &Workspace) -> Check {
    let hook = match installed.hooks.first() {
        Some(hook) => PathBuf::from(hook),
        None => match default_hook_path() {
            Ok(path) => path,
            Err(error) => return check("hook.build", Status::Warn, format!("{error:#}")),
        },
    };
    if !is_executable(&hook) {
        return check(
            "hook.build",
            Status::Warn,
            format!("{} cannot be run, so its build is unknown", hook.display()),
        );
    }
    let (mut status, build) = match crate::install::hook_build(&hook) {
        Some(build) if build.shipped => (Status::Ok, build.text),
        Some(build) => (
            Status::Warn,
            format!(
                "{}, not the shipped build: `cargo hook-install` makes it (README, Installing the hook)",
                build.text
            ),
        ),
        None => (
            Status::Warn,
            "a build older than `leastgrant-hook --version`: run `cargo hook-install`".to_string(),
        ),
    };
    let timing = match time_hook(&hook, workspace) {
        Ok(median) => {
            let slow = median > SLOW_CALL;
            if slow {
                status = Status::Warn;
            }
            format!(
                "median of {TIMED_CALLS} calls with the current envelope {:.2} ms{}",
                median.as_secs_f64() * 1e3,
                if slow {
                    ", above the 2 ms an agent should pay per tool call"
                } else {
                    ""
                }
            )
        }
        Err(error) => {
            status = Status::Warn;
            format!("not timed: {error:#}")
        }
    };
    check(
        "hook.build",
        status,
        format!("{} is {build}; {timing}", hook.display()),
    )
}

/// The median wall time of [`TIMED_CALLS`] runs of `hook` on a Read payload in the project,
/// after one untimed call: the scratch state holds copies of the envelope and of the user's
/// rules file, and the first call compiles the copy's rules table, as the first call after a
/// rules change does for real (`rules_cache.rs`); the timed calls load it.
fn time_hook(hook: &Path, workspace: &Workspace) -> Result<Duration> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let scratch = std::env::temp_dir().join(format!("leastgrant-doctor-{}", std::process::id()));
    let state = scratch.join("state");
    files::create_private_dir(&state)?;
    let timed = (|| -> Result<Duration> {
        let envelope = envelope_path(Path::new(&workspace.roots.state_dir));
        if let Ok(Some(mapped)) = leastgrant_hook::state::map(&envelope) {
            files::stage(&layout::envelope_path(&state), &mapped)?;
        }
        let rules = layout::rules_path(Path::new(&workspace.roots.state_dir));
        if let Ok(Some(bytes)) =
            files::read_regular(&rules, Links::Follow, Trust::Owner, files::MAX_RULES_BYTES)
        {
            files::stage(&layout::rules_path(&state), &bytes)?;
        }
        let project = &workspace.roots.project;
        let payload = json!({"session_id": "leastgrant-doctor", "hook_event_name": "PreToolUse",
            "cwd": project, "tool_name": "Read",
            "tool_input": {"file_path": format!("{project}/README.md")}})
        .to_string();
        let mut times = Vec::with_capacity(TIMED_CALLS + 1);
        for _ in 0..=TIMED_CALLS {
            let started = std::time::Instant::now();
            let mut child = Command::new(hook)
                .args(["--agent", "claude-code"])
                .env("HOME", &workspace.roots.home)
                .env("LEASTGRANT_HOME", &state)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(payload.as_bytes())?;
            }
            while child.try_wait()?.is_none() {
                if started.elapsed() > Duration::from_secs(10) {
                    let _ = child.kill();
                    let _ = child.wait();
                    anyhow::bail!("a call took more than 10 s");
                }
                std::thread::sleep(Duration::from_micros(50));
            }
            times.push(started.elapsed());
        }
        // The first call compiled the rules table and found the binary's pages cold.
        let mut times: Vec<Duration> = times.into_iter().skip(1).collect();
        times.sort();
        Ok(times.get(TIMED_CALLS / 2).copied().unwrap_or_default())
    })();
    let _ = fs::remove_dir_all(&scratch);
    timed
}

/// What one agent's configuration in one scope holds.
enum ScopeState {
    /// No file, or no leastgrant entry in it.
    Absent(String),
    /// leastgrant entries (possibly not all of them).
    Present(Vec<FoundEntry>),
    /// The file cannot be read as a configuration.
    Broken(String),
}

fn agent_checks(workspace: &Workspace, checks: &mut Vec<Check>) -> Installed {
    let mut installed = Installed { hooks: Vec::new() };
    let mut installed_agents = Vec::new();
    for agent in Agent::ALL {
        let user_file = config_file(agent, Scope::User, workspace);
        let project_file = config_file(agent, Scope::Project, workspace);
        let states: Vec<(Scope, PathBuf, ScopeState)> = [
            (Scope::User, user_file.clone()),
            (Scope::Project, project_file.clone()),
        ]
        .into_iter()
        .map(|(scope, file)| {
            let state = if scope == Scope::Project && file == user_file {
                ScopeState::Absent("the project's configuration is the user's".to_string())
            } else {
                scope_state(agent, &file)
            };
            (scope, file, state)
        })
        .collect();
        let anywhere = states
            .iter()
            .any(|(_, _, s)| matches!(s, ScopeState::Present(_)));
        if anywhere {
            installed_agents.push(agent);
        }
        for (scope, file, state) in states {
            let id = format!("{}.{}", agent.as_str(), scope.name());
            let result = match state {
                ScopeState::Absent(why) => check(
                    &id,
                    if anywhere { Status::Ok } else { Status::Warn },
                    format!("not installed in {} ({why})", file.display()),
                ),
                ScopeState::Broken(why) => check(&id, Status::Fail, why),
                ScopeState::Present(found) => {
                    installed.hooks.extend(found.iter().map(|f| f.hook.clone()));
                    present_check(agent, &id, &file, &found)
                }
            };
            checks.push(result);
        }
    }
    checks.push(if installed_agents.is_empty() {
        check(
            "hooks.installed",
            Status::Fail,
            "the hook is installed for no agent: run `leastgrant install <agent>` (claude-code, cursor, codex, copilot or gemini)".to_string(),
        )
    } else {
        let names: Vec<&str> = installed_agents.iter().map(|a| a.as_str()).collect();
        check(
            "hooks.installed",
            Status::Ok,
            format!("installed for {}", names.join(", ")),
        )
    });
    if installed_agents.contains(&Agent::ClaudeCode) && installed_agents.contains(&Agent::Cursor) {
        checks.push(check(
            "hooks.overlap",
            Status::Warn,
            "Cursor also runs Claude Code's hooks from .claude/settings.json: with both installed, a Cursor call can be judged twice, once in Claude Code's format".to_string(),
        ));
    }
    installed.hooks.sort();
    installed.hooks.dedup();
    installed
}

fn scope_state(agent: Agent, file: &Path) -> ScopeState {
    match read_config(file, agent) {
        Err(error) => ScopeState::Broken(format!(
            "{error:#}: {} cannot read its hooks from it either",
            agent.title()
        )),
        Ok(config) => match config {
            None => ScopeState::Absent("no such file".to_string()),
            Some(config) => {
                let found = find_our_entries(agent, &config.document);
                if found.is_empty() {
                    ScopeState::Absent("no leastgrant entry".to_string())
                } else {
                    ScopeState::Present(found)
                }
            }
        },
    }
}

fn present_check(agent: Agent, id: &str, file: &Path, found: &[FoundEntry]) -> Check {
    let missing: Vec<&str> = agent
        .registered()
        .map(|event| event.name)
        .filter(|event| !found.iter().any(|f| f.event == *event))
        .collect();
    let mut hooks: Vec<&str> = found.iter().map(|f| f.hook.as_str()).collect();
    hooks.sort_unstable();
    hooks.dedup();
    let broken: Vec<&str> = hooks
        .iter()
        .copied()
        .filter(|h| !is_executable(Path::new(h)))
        .collect();
    if !broken.is_empty() {
        let consequence = match agent.on_failure() {
            OnFailure::Open => format!("{} lets every call through unjudged", agent.title()),
            OnFailure::Closed => format!("{} refuses every gated call", agent.title()),
        };
        return check(
            id,
            Status::Fail,
            format!(
                "{} runs {}, which is missing or not executable: {consequence}",
                file.display(),
                broken.join(", ")
            ),
        );
    }
    if !missing.is_empty() {
        return check(
            id,
            Status::Warn,
            format!(
                "{} lacks {}: run `leastgrant install {}{}` again",
                file.display(),
                missing.join(", "),
                agent.as_str(),
                if id.ends_with(".project") {
                    " --project"
                } else {
                    ""
                }
            ),
        );
    }
    // Cursor's gates fail closed only with `failClosed`; Copilot CLI's always do.
    if agent == Agent::Cursor {
        let open_gates: Vec<&str> = agent
            .registered()
            .filter(|e| e.surface.gates())
            .filter(|e| {
                found
                    .iter()
                    .any(|f| f.event == e.name && f.fail_closed != Some(true))
            })
            .map(|e| e.name)
            .collect();
        if !open_gates.is_empty() {
            return check(
                id,
                Status::Warn,
                format!(
                    "{}: {} without failClosed, so a crash or timeout lets the call run: run `leastgrant install {}` again",
                    file.display(),
                    open_gates.join(", "),
                    agent.as_str()
                ),
            );
        }
    }
    let mut text = format!("installed in {} ({})", file.display(), hooks.join(", "));
    if agent.on_failure() == OnFailure::Closed {
        text.push_str("; gates fail closed");
    }
    check(id, Status::Ok, text)
}

fn envelope_checks(workspace: &Workspace, checks: &mut Vec<Check>) {
    let path = envelope_path(Path::new(&workspace.roots.state_dir));
    // Mapped, not read: a fleet's envelope is hashed page by page without a copy.
    // Refused unless a regular file of this user's that no one else can write (files.rs).
    let mapped = match leastgrant_hook::state::map(&path) {
        Ok(Some(mapped)) => Ok(mapped),
        Ok(None) => Err(format!(
            "no frozen envelope at {}: the hook has learned nothing and asks about everything unfamiliar; run `leastgrant ingest`, then `leastgrant export`",
            path.display()
        )),
        Err(error) => Err(error.to_string()),
    };
    let bytes = match mapped {
        Ok(bytes) => bytes,
        Err(text) => {
            checks.push(check("envelope.file", Status::Fail, text));
            checks.push(check(
                "envelope.project",
                Status::Warn,
                "unknown: there is no readable envelope".to_string(),
            ));
            return;
        }
    };
    let frozen = match Frozen::parse(&bytes) {
        Ok(frozen) => frozen,
        Err(error) => {
            checks.push(check(
                "envelope.file",
                Status::Fail,
                format!(
                    "{} is damaged ({error}): run `leastgrant export` again",
                    path.display()
                ),
            ));
            checks.push(check(
                "envelope.project",
                Status::Warn,
                "unknown: the envelope is damaged".to_string(),
            ));
            return;
        }
    };
    let digest = frozen.digest();
    let short = digest.get(..16).unwrap_or(&digest);
    let age = fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok());
    let age_text = age.map_or_else(
        || "of unknown age".to_string(),
        |a| format!("exported {} ago", human(a)),
    );
    let projects = frozen.project_count();
    checks.push(match frozen.verify() {
        Err(error) => check(
            "envelope.file",
            Status::Fail,
            format!(
                "{} is damaged ({error}): run `leastgrant export` again",
                path.display()
            ),
        ),
        Ok(()) => {
            let stale = age.is_some_and(|a| a > STALE_ENVELOPE);
            check(
                "envelope.file",
                if stale { Status::Warn } else { Status::Ok },
                format!(
                    "{}: digest {short}…, {projects} project(s), setting `{}`, {age_text}{}",
                    path.display(),
                    frozen.setting_id(),
                    if stale {
                        "; export again to learn from the last month"
                    } else {
                        ""
                    }
                ),
            )
        }
    });
    checks.push(rules_check(&frozen, &workspace.roots));
    let cwd = workspace.cwd_text();
    checks.push(match frozen.project_for(&cwd) {
        Err(error) => check(
            "envelope.project",
            Status::Warn,
            format!("unknown: {error}"),
        ),
        Ok(Some(project)) => check(
            "envelope.project",
            Status::Ok,
            format!(
                "this directory is in the envelope's project {} ({} signature(s))",
                project.root(),
                project.signature_count()
            ),
        ),
        Ok(None) => check(
            "envelope.project",
            Status::Warn,
            format!(
                "the envelope has no project holding {cwd}: the hook treats every call here as unfamiliar"
            ),
        ),
    });
}

/// The rules in force here against the ones the envelope's replay audited (recorded by export
/// with a digest each): a changed rules file means the hook enforces something never audited.
fn rules_check(frozen: &Frozen<'_>, roots: &leastgrant_engine::Roots) -> Check {
    let meta = match frozen.meta() {
        Ok(meta) => meta,
        Err(error) => {
            return check("envelope.rules", Status::Warn, format!("unknown: {error}"));
        }
    };
    let Some(recorded) = meta
        .provenance
        .get("rules_files")
        .and_then(Value::as_object)
    else {
        return check(
            "envelope.rules",
            Status::Ok,
            "the envelope does not record which rules it was audited with (exported by an earlier version)".to_string(),
        );
    };
    let places = leastgrant_hook::policy::rule_file_places(roots);
    let current = leastgrant_hook::policy::rules_fingerprint(&places);
    let mut changes = Vec::new();
    for place in &places {
        let place = place.display().to_string();
        let now = current
            .iter()
            .find(|(file, _)| *file == place)
            .map(|(_, d)| d);
        match (recorded.get(&place).and_then(Value::as_str), now) {
            (Some(then), Some(now)) if then == now => {}
            (Some(_), Some(_)) => changes.push(format!("{place} changed")),
            (None, Some(_)) => changes.push(format!("{place} is new")),
            (Some(_), None) => changes.push(format!("{place} was removed")),
            (None, None) => {}
        }
    }
    if changes.is_empty() {
        check(
            "envelope.rules",
            Status::Ok,
            format!(
                "the rules in force here are the ones the envelope was audited with ({} file(s))",
                current.len()
            ),
        )
    } else {
        check(
            "envelope.rules",
            Status::Warn,
            format!(
                "the rules changed since the envelope was exported ({}): the hook applies them as they are now, which no replay has audited; run `leastgrant simulate` and `leastgrant export` again",
                changes.join(", ")
            ),
        )
    }
}

/// Checks one of leastgrant's own paths: a file (or directory, `dir`) of this user's that no one
/// else can write. A link, a device or FIFO, another user's file, or group or other write access
/// fails (anyone could change what the hook allows: the hook refuses such a file and asks); read
/// access for others warns.
fn mode_check(id: &str, path: &Path, dir: bool, absent: &str) -> Check {
    let expected = if dir { 0o700 } else { 0o600 };
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(_) => return check(id, Status::Ok, format!("{} {absent}", path.display())),
    };
    let fail = |text: String| check(id, Status::Fail, text);
    if meta.file_type().is_symlink() {
        return fail(format!(
            "{} is a symbolic link where leastgrant keeps its own {}; the hook refuses it and asks",
            path.display(),
            if dir { "directory" } else { "file" }
        ));
    }
    if dir != meta.is_dir() || (!dir && !meta.is_file()) {
        return fail(format!(
            "{} is {}, where leastgrant expects its own {}; the hook refuses it and asks",
            path.display(),
            files::kind(&meta),
            if dir { "directory" } else { "file" }
        ));
    }
    if let Err(error) = files::check_trusted(path, &meta, Trust::Owner) {
        return fail(format!("{error}; the hook refuses it and asks"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            check(
                id,
                Status::Warn,
                format!(
                    "{} is readable by others (mode {mode:o}, {expected:o} expected): chmod {expected:o} it",
                    path.display()
                ),
            )
        } else {
            check(id, Status::Ok, format!("{} mode {mode:o}", path.display()))
        }
    }
    #[cfg(not(unix))]
    {
        let _ = expected;
        check(
            id,
            Status::Ok,
            format!("{}: modes are not checked on this platform", path.display()),
        )
    }
}

/// The worst of `checks` under `id`, or one ok line saying how many there were.
fn worst_of(id: &str, checks: Vec<Check>, what: &str) -> Check {
    let count = checks.len();
    match checks.into_iter().max_by_key(|c| c.status) {
        Some(c) if c.status != Status::Ok => c,
        _ => check(id, Status::Ok, format!("{count} {what}, owner-only")),
    }
}

/// The entries of a directory (none when it cannot be listed).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .collect();
    found.sort();
    found
}

fn permission_checks(workspace: &Workspace, checks: &mut Vec<Check>) {
    let state = PathBuf::from(&workspace.roots.state_dir);
    checks.push(mode_check(
        "perm.state-dir",
        &state,
        true,
        "does not exist yet (ingest, export and the hook create it)",
    ));
    checks.push(mode_check(
        "perm.envelope",
        &envelope_path(&state),
        false,
        "does not exist",
    ));
    let ledger = layout::ledger_path(&state);
    checks.push(mode_check(
        "perm.ledger",
        &ledger,
        false,
        "does not exist yet (the hook has not answered a call)",
    ));
    checks.push(mode_check(
        "perm.ledger-lock",
        &ledger.with_extension("lock"),
        false,
        "does not exist yet (the ledger has not been rotated)",
    ));
    // The user's rules may be a link (a dotfiles checkout): what it leads to is judged.
    let rules = layout::rules_path(&state);
    checks.push(
        match files::open_regular(&rules, Links::Follow, Trust::Owner, files::MAX_RULES_BYTES) {
            Ok(None) => check(
                "perm.rules",
                Status::Ok,
                format!("{} does not exist", rules.display()),
            ),
            Ok(Some(_)) => check(
                "perm.rules",
                Status::Ok,
                format!("{} is yours and no one else can write it", rules.display()),
            ),
            Err(error) => check(
                "perm.rules",
                Status::Fail,
                format!("{error}; the hook refuses it and asks"),
            ),
        },
    );
    // Grants of every project: `<state>/grants/projects/<digest>/grants.json`, and the
    // directories above them (whoever can write one can take a deny grant away).
    let grants = layout::grants_dir(&state);
    let projects = grants.join("projects");
    let mut grant_checks = vec![
        mode_check("perm.grants", &grants, true, "does not exist"),
        mode_check("perm.grants", &projects, true, "does not exist"),
    ];
    for dir in entries(&projects) {
        grant_checks.push(mode_check("perm.grants", &dir, true, "does not exist"));
    }
    let grants_files: Vec<PathBuf> = leastgrant_hook::grants::every_project_file(&grants)
        .into_iter()
        .filter(|p| fs::symlink_metadata(p).is_ok())
        .collect();
    if grants_files.is_empty() && !grants.exists() {
        checks.push(check(
            "perm.grants",
            Status::Ok,
            "no grants file (no `leastgrant allow` or `deny` yet)".to_string(),
        ));
    } else {
        let count = grants_files.len();
        for file in &grants_files {
            grant_checks.push(mode_check("perm.grants", file, false, "does not exist"));
        }
        checks.push(worst_of(
            "perm.grants",
            grant_checks,
            &format!("grants file(s) ({count}) and their directories"),
        ));
    }
    // What each session has done: `<state>/sessions/<digest>.json`.
    let sessions = layout::sessions_dir(&state);
    let mut session_checks = vec![mode_check(
        "perm.sessions",
        &sessions,
        true,
        "does not exist",
    )];
    let session_files = entries(&sessions);
    let count = session_files.len();
    for file in &session_files {
        session_checks.push(mode_check("perm.sessions", file, false, "does not exist"));
    }
    checks.push(worst_of(
        "perm.sessions",
        session_checks,
        &format!("session file(s) ({count}) and their directory"),
    ));
}

fn enforcement_json() -> Value {
    Value::Array(
        Agent::ALL
            .into_iter()
            .map(|agent| {
                let e = agent.enforcement();
                json!({
                    "agent": agent.as_str(),
                    "allow_deny": e.allow_deny,
                    "ask": e.ask,
                    "reads": e.reads,
                    "on_failure": e.on_failure,
                    "attended": e.attended,
                })
            })
            .collect(),
    )
}

fn print_enforcement() {
    println!("what each agent enforces");
    for agent in Agent::ALL {
        let e = agent.enforcement();
        let rows = [
            ("allow, deny", e.allow_deny),
            ("ask", e.ask),
            ("reads", e.reads),
            ("crash, timeout", e.on_failure),
            ("attended", e.attended),
        ];
        for (i, (what, text)) in rows.iter().enumerate() {
            let name = if i == 0 { agent.as_str() } else { "" };
            println!("  {name:<12} {what:<15} {text}");
        }
    }
}
