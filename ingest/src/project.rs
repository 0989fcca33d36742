//! The project of a session: the one rule every source's events are placed by.
//!
//! A session's project is the root it worked in, wherever its history now sits: a copied
//! SpecStory export under `<dir>/.specstory/history/`, or a Claude Code transcript moved to
//! another `projects` folder, still belongs to the project it recorded. Readers say what the
//! session recorded ([`record`]); [`place`] then decides, per session, on this basis, first that
//! applies:
//!
//! 1. `forced`: the run's `--project-root`, for every session it reads.
//! 2. `recorded`: the working directory the session recorded (Claude Code and Codex `cwd`,
//!    Copilot `workspace.yaml`, Gemini `projects.json`, Cursor's workspace folder, the hook's
//!    project), unless it is `/`, a top-level directory or a home directory ([`is_too_wide`]).
//! 3. `touched`: the root the paths the session touched imply. A file named both relative
//!    (`pkg/a.go`) and absolute (`/src/app/pkg/a.go`) names the working directory exactly
//!    (`/src/app`); the best-supported such anchor wins. Else the deepest directory holding
//!    three quarters of the absolute paths, raised to the nearest directory a root marker in
//!    those paths shows (`.git/`, `.specstory/`, `go.mod`, `Cargo.toml`, …) and to the file's
//!    own place when that holds it. Paths in agents' own state (`~/.claude/…`, any dot
//!    directory right under a home) and in temporary directories are not evidence.
//! 4. `recorded` again: a working directory that is too wide, when nothing was touched.
//! 5. `file`: where the history sits (above `.specstory/history/`, else the file's folder; a
//!    Gemini folder's name), or `unknown` where a store (Cursor's database, the ledger) names
//!    no project for it.
//!
//! Owns: that rule, its guards and the names of its bases. Must not: read the file system or
//! the environment (the run hands in the home directory), so a history places the same on any
//! machine.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::common::project_key;
use crate::schema::{Event, UNKNOWN_PROJECT};

/// Why a session's events are in their project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Basis {
    /// The run's `--project-root`.
    Forced,
    /// The working directory the session recorded.
    Recorded,
    /// The root the paths the session touched imply.
    Touched,
    /// Where the history file sits: nothing else was known.
    File,
    /// A store that names no project for the session, and nothing touched.
    Unknown,
}

impl Basis {
    /// Every basis, in the order of the rule.
    pub const ALL: [Basis; 5] = [
        Basis::Forced,
        Basis::Recorded,
        Basis::Touched,
        Basis::File,
        Basis::Unknown,
    ];

    /// The name in summaries and the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Forced => "forced",
            Basis::Recorded => "recorded",
            Basis::Touched => "touched",
            Basis::File => "file",
            Basis::Unknown => "unknown",
        }
    }
}

/// How a run places sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placing {
    /// `--project-root`: every session read goes to this project.
    pub forced: Option<String>,
    /// The home directory of the machine running the ingest, also too wide to be a project
    /// (whatever its shape).
    pub home: Option<String>,
}

/// Sets what a reader knows of the project of `events` (one session or more): the working
/// directory they recorded, else their file's place (the folder above `.specstory/history/`,
/// else the file's folder), left for [`place`] to decide. A recorded root gets its key; an
/// unrecorded one an empty key, which is how [`place`] tells them apart.
pub fn record(events: &mut [Event], recorded: Option<&str>, path: &Path) {
    match recorded {
        Some(root) => record_root(events, root),
        None => record_place(events, &file_place(path)),
    }
}

/// Sets a recorded project root on `events`.
pub fn record_root(events: &mut [Event], root: &str) {
    let key = project_key(root);
    for event in events {
        event.project_root = root.to_string();
        event.project_key.clone_from(&key);
    }
}

/// Sets the place a reader falls back to on `events` when they record no root (the file's
/// place, a folder's name, or [`UNKNOWN_PROJECT`]): their key stays empty until [`place`].
pub fn record_place(events: &mut [Event], place: &str) {
    for event in events {
        event.project_root = place.to_string();
        event.project_key.clear();
    }
}

/// Where a history file sits, as a project: the folder above `.specstory/history/` for an
/// export in one, else the file's folder; absolute, so it never depends on where ingest ran.
pub fn file_place(path: &Path) -> String {
    let layout = path.ancestors().find_map(|dir| {
        let history = dir.file_name()? == "history";
        let specstory = dir.parent()?;
        (history && specstory.file_name()? == ".specstory").then(|| specstory.parent())?
    });
    let dir = match layout.or_else(|| path.parent()) {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::path::absolute(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}

/// Places every session of one source's events (as its reader left them, [`record`]) in its
/// project; returns each event's basis, in order.
pub fn place(events: &mut [Event], placing: &Placing) -> Vec<Basis> {
    if let Some(root) = &placing.forced {
        record_root(events, root);
        return vec![Basis::Forced; events.len()];
    }
    let mut bases = vec![Basis::Unknown; events.len()];
    // Whether each event's recorded root stands, judged once per distinct key: a file's events
    // share one.
    let mut judged: HashMap<&str, bool> = HashMap::new();
    let settled: Vec<bool> = events
        .iter()
        .map(|e| {
            *judged.entry(e.project_key.as_str()).or_insert_with(|| {
                !e.project_key.is_empty()
                    && e.project_key != UNKNOWN_PROJECT
                    && !is_too_wide(&e.project_key, placing)
            })
        })
        .collect();
    let mut sessions: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (index, event) in events.iter().enumerate() {
        sessions
            .entry(event.session_id.as_str())
            .or_default()
            .push(index);
    }
    let sessions: Vec<Vec<usize>> = sessions.into_values().collect();
    for members in sessions {
        let settled = |index: &usize| settled.get(*index).copied().unwrap_or(false);
        let touched = if !members.iter().all(settled) {
            let session: Vec<&Event> = members.iter().filter_map(|i| events.get(*i)).collect();
            touched_root(&session, placing)
        } else {
            None
        };
        for index in members {
            let Some(event) = events.get_mut(index) else {
                continue;
            };
            let basis = if settled(&index) {
                Basis::Recorded
            } else if let Some(root) = &touched {
                record_root(std::slice::from_mut(event), root);
                Basis::Touched
            } else if event.project_root == UNKNOWN_PROJECT || event.project_root.is_empty() {
                record_root(std::slice::from_mut(event), UNKNOWN_PROJECT);
                Basis::Unknown
            } else if !event.project_key.is_empty() {
                // A recorded root too wide to be a project, and nothing touched: still where the
                // session ran, which says more than where its file sits.
                Basis::Recorded
            } else {
                event.project_key = project_key(&event.project_root);
                Basis::File
            };
            if let Some(slot) = bases.get_mut(index) {
                *slot = basis;
            }
        }
    }
    bases
}

/// Whether a directory (a [`project_key`]) is too wide to be a project: `/`, a drive, a
/// top-level directory that holds others' work (`/Users`, `/home`, `/tmp`, `/var`, …), a home
/// directory (`/Users/<name>`, `/home/<name>`, `/root`, `c:/users/<name>`) or the running
/// machine's home. A top-level project such as `/app` or `/repo` (a container's) is a project.
pub fn is_too_wide(key: &str, placing: &Placing) -> bool {
    if placing
        .home
        .as_deref()
        .is_some_and(|home| project_key(home) == key)
    {
        return true;
    }
    let parts = components(key);
    let lower = |part: &str| part.to_ascii_lowercase();
    match parts.as_slice() {
        [] | [_] => true,
        ["", top] => WIDE_TOPS.contains(&lower(top).as_str()),
        [_, top] => lower(top) == "users",
        [_, top, _] => matches!(lower(top).as_str(), "users" | "home"),
        _ => false,
    }
}

/// Top-level directories that hold other people's work, the system's or scratch, never one
/// project.
const WIDE_TOPS: &[&str] = &[
    "users", "home", "root", "volumes", "tmp", "var", "private", "usr", "opt", "mnt", "media",
    "etc", "dev", "proc", "sys", "nix", "bin", "lib", "sbin", "library", "system",
];

/// A path split into its components after its root: `("", …)` for `/…`, `("c:", …)` for a
/// drive path; empty for a relative one.
fn components(path: &str) -> Vec<&str> {
    if !(path.starts_with('/') || is_drive(path)) {
        return Vec::new();
    }
    let mut parts = Vec::new();
    if path.starts_with('/') {
        parts.push("");
    }
    parts.extend(path.split('/').filter(|p| !p.is_empty()));
    parts
}

fn is_drive(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2
        && bytes.get(1) == Some(&b':')
        && bytes.first().is_some_and(u8::is_ascii_alphabetic)
}

/// Directories whose presence in a path marks the folder holding them as a project root.
const ROOT_DIRS: &[&str] = &[
    ".git",
    ".specstory",
    ".github",
    ".vscode",
    ".idea",
    ".cursor",
    ".claude",
    ".codex",
    ".gemini",
    "node_modules",
];

/// Files that sit at a project's root.
const ROOT_FILES: &[&str] = &[
    "go.mod",
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "Gemfile",
    "pom.xml",
    "build.gradle",
    "CMakeLists.txt",
    ".gitignore",
    "CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
];

/// Top-level directories whose files are never evidence of a project.
const SCRATCH_TOPS: &[&str] = &["tmp", "dev", "proc", "sys", "etc"];

/// One absolute path a session touched, however often.
struct Touched<'a> {
    /// How many times (calls) it was touched.
    calls: u64,
    /// Its components as spelled.
    spelled: Vec<&'a str>,
    /// A working directory (all of it is a directory), not a file path.
    directory: bool,
}

/// Whether a path (components, lower-cased) is evidence of where a session worked: not an
/// agent's own state (a dot directory right under a home, `/root/.…`) and not scratch.
fn is_evidence(keyed: &[String]) -> bool {
    let part = |i: usize| keyed.get(i).map(String::as_str).unwrap_or("");
    let scratch = SCRATCH_TOPS.contains(&part(1))
        || (part(1) == "private" && matches!(part(2), "tmp" | "var"))
        || (part(1) == "var" && part(2) == "folders")
        || (part(1) == "root" && part(2).starts_with('.'));
    if part(0).is_empty() && scratch {
        return false;
    }
    !(matches!(part(1), "users" | "home") && part(3).starts_with('.'))
}

/// What a session touched: its absolute paths (by lower-cased components) and relative ones
/// (lower-cased, without `./`), each with the calls that named it. Compared without case, as
/// macOS sessions spell one folder both ways (`/Users/x/Source`, `/Users/x/source`); the root
/// keeps a spelling the session used.
#[derive(Default)]
struct Evidence<'a> {
    absolute: BTreeMap<Vec<String>, Touched<'a>>,
    relative: BTreeMap<String, u64>,
}

impl<'a> Evidence<'a> {
    /// Adds a path a call named; a working directory too wide to be a project (a session run
    /// from the home directory names it on every call) says nothing.
    fn add(&mut self, path: &'a str, directory: bool, placing: &Placing) {
        let path = path.trim();
        if path.is_empty() || path.contains('\\') {
            // Windows paths are compared slashed: `touched_root` adds them so.
            return;
        }
        if path.starts_with('/') || is_drive(path) {
            let spelled = components(path);
            if spelled.len() < 2 {
                return;
            }
            let keyed: Vec<String> = spelled.iter().map(|p| p.to_lowercase()).collect();
            if !is_evidence(&keyed) || directory && is_too_wide(&project_key(path), placing) {
                return;
            }
            let entry = self.absolute.entry(keyed).or_insert(Touched {
                calls: 0,
                spelled,
                directory,
            });
            entry.calls += 1;
            entry.directory &= directory;
        } else {
            let mut rest = path;
            while let Some(after) = rest.strip_prefix("./") {
                rest = after;
            }
            let rest = rest.trim_end_matches('/');
            if rest.is_empty() || rest == "." || rest.split('/').any(|p| p == "..") {
                return;
            }
            *self.relative.entry(rest.to_lowercase()).or_insert(0) += 1;
        }
    }
}

/// The root the paths a session touched imply, when they imply one (module docs, step 3).
fn touched_root(session: &[&Event], placing: &Placing) -> Option<String> {
    // Windows paths, slashed, live as long as the evidence that borrows them.
    let slashed: Vec<(String, bool)> = session
        .iter()
        .flat_map(|e| {
            [
                e.file_path.as_deref().map(|p| (p, false)),
                e.cwd.as_deref().map(|p| (p, true)),
            ]
        })
        .flatten()
        .filter(|(p, _)| p.contains('\\'))
        .map(|(p, directory)| (p.replace('\\', "/"), directory))
        .collect();
    let mut evidence = Evidence::default();
    for event in session {
        if let Some(path) = event.file_path.as_deref() {
            evidence.add(path, false, placing);
        }
        if let Some(cwd) = event.cwd.as_deref() {
            evidence.add(cwd, true, placing);
        }
    }
    for (path, directory) in &slashed {
        evidence.add(path, *directory, placing);
    }
    anchored_root(&evidence, placing).or_else(|| covering_root(session, &evidence, placing))
}

/// The working directory that files named both relative and absolute show: each relative path
/// that ends an absolute one votes (once per call naming it) for the absolute path's prefix.
fn anchored_root(evidence: &Evidence<'_>, placing: &Placing) -> Option<String> {
    if evidence.relative.is_empty() {
        return None;
    }
    // Each tail of an absolute file path (lower-cased, joined) → the prefixes it ends.
    let mut tails: BTreeMap<String, Vec<(&[String], &Touched<'_>)>> = BTreeMap::new();
    for (keyed, touched) in evidence.absolute.iter().filter(|(_, t)| !t.directory) {
        for cut in 2..keyed.len() {
            let (prefix, tail) = keyed.split_at(cut);
            tails
                .entry(tail.join("/"))
                .or_default()
                .push((prefix, touched));
        }
    }
    // Candidate prefix → (calls, distinct relative paths, spelling).
    let mut votes: BTreeMap<&[String], (u64, u64, String)> = BTreeMap::new();
    for (rel, calls) in &evidence.relative {
        let Some(ends) = tails.get(rel) else {
            continue;
        };
        let mut voted: Vec<&[String]> = Vec::new();
        for (prefix, touched) in ends {
            if voted.contains(prefix) {
                continue;
            }
            voted.push(prefix);
            let spelled = join(touched.spelled.get(..prefix.len()).unwrap_or(&[]));
            if is_too_wide(&project_key(&spelled), placing) {
                continue;
            }
            let vote = votes.entry(prefix).or_insert((0, 0, spelled));
            vote.0 += calls;
            vote.1 += 1;
        }
    }
    votes
        .into_iter()
        .max_by(|a, b| {
            (a.1.0, a.1.1)
                .cmp(&(b.1.0, b.1.1))
                // Ties go to the first prefix in order: the same choice on every run.
                .then_with(|| b.0.cmp(a.0))
        })
        .map(|(_, (_, _, spelled))| spelled)
}

/// The deepest directory holding three quarters of the session's absolute paths (counted per
/// call), raised to the nearest root a marker shows and to the file's place when that holds it.
fn covering_root(session: &[&Event], evidence: &Evidence<'_>, placing: &Placing) -> Option<String> {
    let total: u64 = evidence.absolute.values().map(|t| t.calls).sum();
    if total == 0 {
        return None;
    }
    // Each directory (keyed) that holds touched paths → how many calls, and a spelling.
    let mut held: BTreeMap<&[String], (u64, &[&str])> = BTreeMap::new();
    let mut marked: std::collections::HashSet<&[String]> = Default::default();
    for (keyed, touched) in &evidence.absolute {
        let dirs = if touched.directory {
            keyed.len()
        } else {
            keyed.len() - 1
        };
        for depth in 2..=dirs {
            let (Some(dir), Some(spelled)) = (keyed.get(..depth), touched.spelled.get(..depth))
            else {
                continue;
            };
            held.entry(dir).or_insert((0, spelled)).0 += touched.calls;
        }
        for (at, part) in touched.spelled.iter().enumerate().skip(2) {
            let last = at + 1 == touched.spelled.len();
            let marks = if last && !touched.directory {
                ROOT_FILES.contains(part)
            } else {
                ROOT_DIRS.contains(part)
            };
            if let (true, Some(dir)) = (marks, keyed.get(..at)) {
                marked.insert(dir);
            }
        }
    }
    let deepest = held
        .iter()
        .filter(|(_, (calls, _))| calls * 4 >= total * 3)
        .map(|(dir, _)| *dir)
        .max_by_key(|dir| dir.len())?;
    // The nearest marked directory at or above it.
    let root = (2..=deepest.len())
        .rev()
        .filter_map(|depth| deepest.get(..depth))
        .find(|dir| marked.contains(dir) && held.contains_key(dir))
        .unwrap_or(deepest);
    let spelled = join(held.get(root)?.1);
    let key = project_key(&spelled);
    if is_too_wide(&key, placing) {
        return None;
    }
    // The file sits in a project that holds this root: that project.
    let holder = session
        .iter()
        .filter(|e| e.project_key.is_empty())
        .map(|e| e.project_root.as_str())
        .find(|place| {
            let place = project_key(place);
            !is_too_wide(&place, placing) && key.starts_with(&format!("{place}/"))
        });
    Some(holder.map_or(spelled, str::to_string))
}

/// Components back into a path (`""` first: rooted at `/`).
fn join(parts: &[&str]) -> String {
    match parts.split_first() {
        Some((&"", rest)) => format!("/{}", rest.join("/")),
        _ => parts.join("/"),
    }
}
