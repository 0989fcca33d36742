//! Resolving a path: from a word as the shell sees it to one absolute, lexically normal path,
//! against the working directory and the [`Roots`]. `~` is the home, `..` is resolved by the
//! text unless it follows a symbolic link (the caller's [`Resolver`], seen through [`Links`]);
//! a path it cannot resolve (an unknown variable, another user's `~`, `/proc/<pid>/cwd`) is
//! `None`. Also the roots themselves, and whether a path lies within a directory (with or
//! without case). Where a resolved path lies is [`super`]'s (placement).

use std::sync::Arc;

use crate::model::Resolver;

/// The directories a decision is made relative to. Inputs, never read from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// The project root (the workspace).
    pub project: String,
    /// The user's home directory.
    pub home: String,
    /// leastgrant's own state directory (envelopes, ledger, config): writing there is denied.
    pub state_dir: String,
    /// What the caller's file system says about symbolic links (nothing, unless
    /// [`Roots::see_links`] was called).
    pub links: Links,
}

/// A caller's [`Resolver`] and the roots as it resolves them: a resolved path is placed against
/// the resolved roots, so a project reached through a link is still the project.
#[derive(Clone, Default)]
pub struct Links {
    seen: Option<Arc<SeenLinks>>,
}

struct SeenLinks {
    resolver: Arc<dyn Resolver + Send + Sync>,
    /// The roots with each directory resolved (and no links of their own).
    real: Roots,
}

impl std::fmt::Debug for Links {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.seen {
            Some(seen) => write!(
                f,
                "Links(project {}, home {}, state {})",
                seen.real.project, seen.real.home, seen.real.state_dir
            ),
            None => f.write_str("Links(none)"),
        }
    }
}

/// Two `Links` are equal when they are the same resolver (or both none).
impl PartialEq for Links {
    fn eq(&self, other: &Links) -> bool {
        match (&self.seen, &other.seen) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for Links {}

impl Links {
    /// The roots see links: a caller's resolver was given ([`Roots::see_links`]).
    pub(crate) fn sees(&self) -> bool {
        self.seen.is_some()
    }

    /// Where `path` (absolute and normalised) leads through links, when that is somewhere else
    /// than its text says, with the roots to place it against. A path below a root that is
    /// itself a link (`/home/u` → `/data/u`) leads where its text says.
    pub(super) fn elsewhere(&self, path: &str, roots: &Roots) -> Option<(String, &Roots)> {
        let seen = self.seen.as_deref()?;
        let real = seen.resolver.resolve(path)?;
        if real == path {
            return None;
        }
        // The same place, spelled through the roots' own links.
        let translated = [
            (&roots.state_dir, &seen.real.state_dir),
            (&roots.project, &seen.real.project),
            (&roots.home, &seen.real.home),
        ]
        .into_iter()
        .find_map(|(root, real_root)| {
            let rest = path.strip_prefix(root.as_str())?;
            (rest.is_empty() || rest.starts_with('/')).then(|| format!("{real_root}{rest}"))
        });
        if translated.as_deref() == Some(real.as_str()) {
            return None;
        }
        Some((real, &seen.real))
    }

    /// [`Resolver::links_below`] of the caller's resolver; none without one.
    pub(crate) fn below(&self, dir: &str) -> Option<Vec<String>> {
        match self.seen.as_deref() {
            Some(seen) => seen.resolver.links_below(dir),
            None => Some(Vec::new()),
        }
    }

    /// [`Resolver::expand_glob`] of the caller's resolver; none without one.
    pub(crate) fn expand_glob(&self, glob: &str) -> Option<Vec<String>> {
        self.seen.as_deref()?.resolver.expand_glob(glob)
    }

    /// `path` (absolute, not normalised) has a `..` after a link: the kernel walks up from where
    /// the link leads, the text from where the link sits.
    fn dot_dot_after_link(&self, joined: &str, lexical: &str) -> bool {
        let Some(seen) = self.seen.as_deref() else {
            return false;
        };
        let has_dot_dot = joined.split('/').any(|segment| segment == "..");
        if !has_dot_dot {
            return false;
        }
        let physical = seen.resolver.resolve(joined);
        let textual = seen
            .resolver
            .resolve(lexical)
            .unwrap_or_else(|| lexical.to_string());
        physical.is_some_and(|p| p != textual)
    }
}

impl Roots {
    /// leastgrant's own state: the state directory and the project's `.leastgrant` directory
    /// (its rules), compared without case (a case-insensitive file system is one directory).
    pub fn holds_own_state(&self, path: &str) -> bool {
        // `<project>/.leastgrant`, compared in two parts rather than built for every path.
        let project = self.project.trim_end_matches('/');
        // The short tail is compared before the long head: most paths have no `/.leastgrant`
        // there.
        is_within_ignore_case(path, &self.state_dir)
            || path
                .get(project.len()..)
                .is_some_and(|rest| is_within_ignore_case(rest, "/.leastgrant"))
                && path
                    .get(..project.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(project))
    }

    /// `path` is an ancestor of the state directory (deleting or overwriting it recursively
    /// reaches the state). The project's own `.leastgrant` rules may only tighten, so a
    /// project-wide edit reaching them is not an integrity breach.
    pub fn contains_own_state(&self, path: &str) -> bool {
        is_within_ignore_case(&self.state_dir, path)
    }

    /// Roots for a project with the state directory at `~/.leastgrant`.
    pub fn new(project: &str, home: &str) -> Roots {
        Roots {
            project: normalize(project),
            home: normalize(home),
            state_dir: join(&normalize(home), ".leastgrant"),
            links: Links::default(),
        }
    }

    /// Places every path also where `resolver` says its links lead (call it once the roots are
    /// final: the project, home and state directory are resolved here too).
    pub fn see_links(&mut self, resolver: Arc<dyn Resolver + Send + Sync>) {
        let real = |dir: &str| {
            resolver
                .resolve(dir)
                .map(|r| normalize(&r))
                .unwrap_or_else(|| dir.to_string())
        };
        let real = Roots {
            project: real(&self.project),
            home: real(&self.home),
            state_dir: real(&self.state_dir),
            links: Links::default(),
        };
        self.links = Links {
            seen: Some(Arc::new(SeenLinks { resolver, real })),
        };
    }
}

/// Resolves `raw` (as the shell would see it after quoting) against `cwd` and normalises it
/// lexically. `None` when it cannot be resolved.
pub fn resolve(raw: &str, cwd: Option<&str>, roots: &Roots) -> Option<String> {
    resolve_in(raw, cwd, false, roots)
}

/// [`resolve`], told whether `cwd` is known to be normal: a relative path joined onto a normal
/// directory is normal exactly when its own segments are, so only they are looked at.
pub(crate) fn resolve_in(
    raw: &str,
    cwd: Option<&str>,
    cwd_normal: bool,
    roots: &Roots,
) -> Option<String> {
    if raw.is_empty() || crate::shell::holds_unresolved(raw) {
        return None;
    }
    if is_windows_path(raw) {
        return Some(raw.replace('\\', "/"));
    }
    let mut known_normal = None;
    let joined = if raw == "~" {
        roots.home.clone()
    } else if raw == "~+" || raw.starts_with("~+/") {
        // `~+` is the working directory.
        join(cwd?, raw.get(2..).unwrap_or("").trim_start_matches('/'))
    } else if let Some(rest) = raw.strip_prefix("~/") {
        join(&roots.home, rest)
    } else if raw.starts_with('~') {
        return None; // another user's home: not knowable without reading /etc/passwd
    } else if raw.starts_with('/') {
        raw.to_string()
    } else {
        let dir = cwd?;
        if cwd_normal {
            known_normal = Some(rest_is_normal(raw.as_bytes()));
        }
        join(dir, raw)
    };
    let path = if known_normal.unwrap_or_else(|| is_normal(&joined)) {
        joined
    } else {
        let path = normalize_segments(&joined);
        if roots.links.dot_dot_after_link(&joined, &path) {
            return None;
        }
        path
    };
    // Aliases of other places: a process's cwd or root, an open descriptor. Where they lead is
    // not knowable from the text.
    let alias = path.starts_with("/dev/fd/")
        || path.strip_prefix("/proc/").is_some_and(|rest| {
            let mut parts = rest.split('/');
            let _pid = parts.next();
            matches!(parts.next(), Some("cwd" | "root" | "fd"))
        });
    if alias {
        return None;
    }
    Some(path)
}

fn is_windows_path(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    raw.starts_with("\\\\")
        || (bytes.len() >= 3
            && bytes.first().is_some_and(u8::is_ascii_alphabetic)
            && bytes.get(1) == Some(&b':')
            && matches!(bytes.get(2), Some(b'\\') | Some(b'/')))
}

/// `text.split('/')`, found byte by byte: path segments are short, and a search per segment
/// costs more than the bytes it skips.
pub(super) fn segments(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match find_slash(current.as_bytes()) {
            Some(at) => {
                rest = current.get(at + 1..);
                current.get(..at)
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// The first `/` of `bytes`, eight bytes at a time: `!(((x & 0x7f…) + 0x7f…) | x | 0x7f…)`
/// has the high bit set of exactly the bytes of `x` that are zero, so of `word ^ 0x2f2f…`
/// where `word` has a `/`.
fn find_slash(bytes: &[u8]) -> Option<usize> {
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const SLASHES: u64 = 0x2f2f_2f2f_2f2f_2f2f;
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        if let Ok(array) = <[u8; 8]>::try_from(chunk) {
            let x = u64::from_le_bytes(array) ^ SLASHES;
            let slashes = !(((x & LOWS) + LOWS) | x | LOWS);
            if slashes != 0 {
                return Some(base + (slashes.trailing_zeros() / 8) as usize);
            }
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|b| *b == b'/')
        .map(|at| base + at)
}

/// Joins a relative path onto a directory.
pub fn join(dir: &str, rest: &str) -> String {
    let mut joined = String::with_capacity(dir.len() + 1 + rest.len());
    joined.push_str(dir);
    if !dir.ends_with('/') {
        joined.push('/');
    }
    joined.push_str(rest);
    joined
}

/// Lexical normalisation: collapses `//`, `.` and `..` (never above `/`).
pub fn normalize(path: &str) -> String {
    if is_normal(path) {
        return path.to_string();
    }
    normalize_segments(path)
}

/// [`normalize`] of a path known not to be normal already (`resolve` has just asked).
fn normalize_segments(path: &str) -> String {
    // Each kept segment is `/` and its text; `..` cuts the last one off again.
    let mut out = String::with_capacity(path.len());
    for segment in segments(path) {
        match segment {
            "" | "." => {}
            ".." => {
                let last = out.bytes().rposition(|b| b == b'/').unwrap_or(0);
                out.truncate(last);
            }
            other => {
                out.push('/');
                out.push_str(other);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Already what [`normalize`] would make of it.
/// (Absolute, and no empty, `.` or `..` segment: one pass over the bytes, as this runs for every
/// resolved path.)
pub(crate) fn is_normal(path: &str) -> bool {
    let bytes = path.as_bytes();
    match bytes {
        [] => false,
        [b'/'] => true,
        [b'/', rest @ ..] => rest_is_normal(rest),
        _ => false,
    }
}

/// The bytes after a path's `/` hold no empty, `.` or `..` segment. Each segment starts at the
/// beginning or after a `/`: it is empty, `.` or `..` exactly when the bytes there are the end,
/// `/`, `.` then the end or `/`, or `..` then the end or `/`. One pass, looking only past each
/// `/`.
fn rest_is_normal(rest: &[u8]) -> bool {
    let segment_ok = |at: usize| {
        !matches!(
            (rest.get(at), rest.get(at + 1), rest.get(at + 2)),
            (None | Some(b'/'), _, _)
                | (Some(b'.'), None | Some(b'/'), _)
                | (Some(b'.'), Some(b'.'), None | Some(b'/'))
        )
    };
    if !segment_ok(0) {
        return false;
    }
    // The `/`s found eight bytes at a time: a byte of `word ^ pattern` is zero exactly where
    // `word` has a `/`, and `!(((x & 0x7f…) + 0x7f…) | x | 0x7f…)` has the high bit of exactly
    // those bytes set (no borrow crosses bytes, unlike the shorter test for any zero byte).
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const SLASHES: u64 = 0x2f2f_2f2f_2f2f_2f2f;
    let mut chunks = rest.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        if let Ok(array) = <[u8; 8]>::try_from(chunk) {
            let x = u64::from_le_bytes(array) ^ SLASHES;
            let mut slashes = !(((x & LOWS) + LOWS) | x | LOWS);
            while slashes != 0 {
                let at = base + (slashes.trailing_zeros() / 8) as usize;
                if !segment_ok(at + 1) {
                    return false;
                }
                slashes &= slashes - 1;
            }
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .enumerate()
        .all(|(at, &b)| b != b'/' || segment_ok(base + at + 1))
}

/// `path` equals `dir` or lies below it.
pub fn is_within(path: &str, dir: &str) -> bool {
    if dir == "/" {
        return true;
    }
    path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// [`is_within`], case-blind (ASCII), without allocating.
/// A path on a file system that ignores case by default: macOS `/Users/…` and `/Volumes/…`,
/// Windows drive paths. Ingest groups such projects without case
/// (`leastgrant_ingest::common::project_key`), and the hook finds them the same way.
pub fn ignores_case(path: &str) -> bool {
    let bytes = path.as_bytes();
    let drive = bytes.get(1) == Some(&b':') && bytes.first().is_some_and(u8::is_ascii_alphabetic);
    let head = |prefix: &str| {
        path.get(..prefix.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(prefix))
    };
    drive || head("/users/") || head("/volumes/")
}

/// `path` is `dir` or inside it, compared without case where the file system ignores it.
pub fn is_within_case_aware(path: &str, dir: &str) -> bool {
    is_within(path, dir) || ignores_case(dir) && is_within_ignore_case(path, dir)
}

fn is_within_ignore_case(path: &str, dir: &str) -> bool {
    if dir == "/" {
        return true;
    }
    path.get(..dir.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(dir))
        && path
            .get(dir.len()..)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `is_normal` as first written: split at every `/` after the first.
    fn is_normal_by_split(path: &str) -> bool {
        match path.as_bytes() {
            [] => false,
            [b'/'] => true,
            [b'/', rest @ ..] => rest
                .split(|b| *b == b'/')
                .all(|segment| !matches!(segment, b"" | b"." | b"..")),
            _ => false,
        }
    }

    /// The one-pass test agrees with splitting on every path of up to seven bytes over `/`, `.`
    /// and a letter.
    #[test]
    fn is_normal_agrees_with_splitting() {
        let mut paths = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..7 {
            last = last
                .iter()
                .flat_map(|p| ['/', '.', 'a'].map(|c| format!("{p}{c}")))
                .collect();
            paths.extend(last.iter().cloned());
        }
        for path in &paths {
            assert_eq!(is_normal(path), is_normal_by_split(path), "{path:?}");
            // Longer paths, so that the `/`s fall in every position of the eight-byte chunks.
            for longer in [
                format!("/abcdefghijklmno{path}"),
                format!("/abcdefg{path}"),
                format!("/abc{path}defghijkl"),
                format!("{path}/abcdefghijklmnop"),
                format!("{path}{path}{path}"),
            ] {
                assert_eq!(
                    is_normal(&longer),
                    is_normal_by_split(&longer),
                    "{longer:?}"
                );
            }
        }
    }

    /// Told that the working directory is normal, resolution gives what it gives untold, for
    /// every relative, absolute and home path of up to six bytes over `/`, `.`, `~` and a letter.
    #[test]
    fn a_normal_working_directory_resolves_alike() {
        let roots = Roots::new("/work/project", "/home/dev");
        let mut raws = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..6 {
            last = last
                .iter()
                .flat_map(|p| ['/', '.', '~', 'a'].map(|c| format!("{p}{c}")))
                .collect();
            raws.extend(last.iter().cloned());
        }
        for cwd in ["/", "/work/project", "/work/project/src"] {
            for raw in &raws {
                assert_eq!(
                    resolve_in(raw, Some(cwd), true, &roots),
                    resolve(raw, Some(cwd), &roots),
                    "{raw:?} in {cwd}"
                );
            }
        }
    }

    /// The eight-bytes-at-once `/` search finds what a byte search finds, a `/` at every
    /// position of texts longer than two chunks.
    #[test]
    fn find_slash_agrees_with_a_byte_search() {
        for len in 0..20usize {
            for at in 0..=len {
                for other in [None, Some(len.saturating_sub(1)), Some(at / 2)] {
                    let mut bytes = vec![b'a'; len];
                    for slash in [Some(at), other].into_iter().flatten() {
                        if let Some(b) = bytes.get_mut(slash) {
                            *b = b'/';
                        }
                    }
                    let expected = bytes.iter().position(|b| *b == b'/');
                    assert_eq!(find_slash(&bytes), expected, "{bytes:?}");
                }
            }
        }
    }
}
