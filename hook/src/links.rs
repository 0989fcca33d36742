//! Symbolic links as the file system has them at call time: the engine's [`Resolver`], answered
//! by walking a path's longest existing prefix as the kernel would, for the hook and
//! `leastgrant check`.
//!
//! Also what the links below a walked directory lead to, and what a glob names, each by a
//! bounded `read_dir` walk.
//!
//! Must not: open a file (only `lstat`, `readlink` and `read_dir`), walk more than
//! [`MAX_COMPONENTS`] components or follow more than [`MAX_LINKS`] links of a path, or fail: a
//! path it cannot resolve is placed by its text alone. What it answers is true when the hook asks, not necessarily when the agent runs
//! the call (`docs/decisions.md`, "Symbolic links").

use leastgrant_engine::Resolver;

/// The most components of one path it walks back over; a longer path is left to its text.
pub const MAX_COMPONENTS: usize = 48;

/// The real file system's links. What it learns of each directory entry (missing, a link and
/// where to, anything else) is remembered for the life of the value — one hook call — so targets
/// that share a prefix cost one `lstat` per new component.
#[derive(Debug, Default)]
pub struct FileSystemLinks {
    // A B-tree, not a hash map: std's hasher seeds itself from the kernel (a `getrandom` call per
    // hook process) for the handful of paths one call looks at.
    seen: std::sync::Mutex<std::collections::BTreeMap<String, Entry>>,
}

#[derive(Debug, Clone)]
enum Entry {
    Missing,
    Link(String),
    Other,
}

impl FileSystemLinks {
    fn entry(&self, path: &str) -> Entry {
        if let Ok(seen) = self.seen.lock()
            && let Some(entry) = seen.get(path)
        {
            return entry.clone();
        }
        let entry = match std::fs::symlink_metadata(path) {
            Err(_) => Entry::Missing,
            Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(path) {
                Ok(target) => Entry::Link(target.to_string_lossy().into_owned()),
                Err(_) => Entry::Missing,
            },
            Ok(_) => Entry::Other,
        };
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(path.to_string(), entry.clone());
        }
        entry
    }
}

impl Resolver for FileSystemLinks {
    fn resolve(&self, path: &str) -> Option<String> {
        walk(path, |here| self.entry(here))
    }

    fn links_below(&self, dir: &str) -> Option<Vec<String>> {
        links_below(dir, |path| self.resolve(path))
    }

    fn expand_glob(&self, glob: &str) -> Option<Vec<String>> {
        leastgrant_engine::expand_glob(glob, |dir| {
            let listing = std::fs::read_dir(dir).ok()?;
            // One more than the expansion may look at is enough to say it is too many.
            Some(
                listing
                    .flatten()
                    .take(leastgrant_engine::MAX_GLOB_ENTRIES + 1)
                    .map(|entry| {
                        // A link may lead to a directory: a `**` walks into it, as zsh's `***`.
                        let may_be_dir = entry
                            .file_type()
                            .map_or(true, |kind| kind.is_dir() || kind.is_symlink());
                        (entry.file_name().to_string_lossy().into_owned(), may_be_dir)
                    })
                    .collect(),
            )
        })
    }
}

/// The most directory entries one walk below a directory looks at (`grep -R`, `rg -L`):
/// beyond it the walk cannot tell where every link leads, and says so.
pub const MAX_WALK_ENTRIES: usize = 4_096;

/// Where the links below `dir` lead, as a program that follows links while it walks finds
/// them: breadth first, into every directory and every directory a link leads to (each once),
/// each link resolved by `resolve`. `None` past [`MAX_WALK_ENTRIES`] entries. A directory it
/// cannot read is skipped, as the program would skip it.
fn links_below(dir: &str, resolve: impl Fn(&str) -> Option<String>) -> Option<Vec<String>> {
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([dir.to_string()]);
    let mut visited = std::collections::BTreeSet::from([dir.to_string()]);
    let mut entries = 0usize;
    while let Some(here) = queue.pop_front() {
        let Ok(listing) = std::fs::read_dir(&here) else {
            continue;
        };
        for entry in listing.flatten() {
            entries += 1;
            if entries > MAX_WALK_ENTRIES {
                return None;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = format!("{here}/{}", entry.file_name().to_string_lossy());
            if kind.is_symlink() {
                let target = resolve(&path)?;
                if std::fs::metadata(&target).is_ok_and(|m| m.is_dir())
                    && visited.insert(target.clone())
                {
                    queue.push_back(target.clone());
                }
                found.push(target);
            } else if kind.is_dir() && visited.insert(path.clone()) {
                queue.push_back(path);
            }
        }
    }
    Some(found)
}

/// The most symbolic links one path may pass through (Linux's `MAXSYMLINKS`); more is a loop,
/// and the path is left to its text.
pub const MAX_LINKS: usize = 40;

/// `path` with its longest existing prefix replaced by where it really is: walked component by
/// component as the kernel would, each link followed (a dangling one too: writing through it
/// creates its target), `..` taken from where the walk is, and the rest — from the first
/// component that does not exist — appended with its `.` and `..` taken lexically (nothing in
/// it exists, so nothing in it is a link). One `lstat` per component, a `readlink` per link.
pub fn resolve_longest_prefix(path: &str) -> Option<String> {
    walk(path, |here| match std::fs::symlink_metadata(here) {
        Err(_) => Entry::Missing,
        Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(here) {
            Ok(target) => Entry::Link(target.to_string_lossy().into_owned()),
            Err(_) => Entry::Missing,
        },
        Ok(_) => Entry::Other,
    })
}

/// The walk of [`resolve_longest_prefix`], asking `entry` what each prefix is.
fn walk(path: &str, entry: impl Fn(&str) -> Entry) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let mut pending: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .rev()
        .map(str::to_string)
        .collect();
    if pending.len() > MAX_COMPONENTS {
        return None;
    }
    // Where the walk is: `/a/b` ("" at the root), and its length before each component, so a
    // step down or back up is a push or a truncation (joining the components afresh at every
    // step cost a path's resolution a string per component).
    let mut here = String::with_capacity(path.len());
    let mut starts: Vec<usize> = Vec::new();
    let mut links = 0;
    let mut exists = true;
    while let Some(segment) = pending.pop() {
        match segment.as_str() {
            "." => continue,
            ".." => {
                if let Some(start) = starts.pop() {
                    here.truncate(start);
                }
                continue;
            }
            _ => {}
        }
        starts.push(here.len());
        here.push('/');
        here.push_str(&segment);
        if !exists {
            continue;
        }
        let target = match entry(&here) {
            // Missing, not a directory, no permission: the kernel stops here too.
            Entry::Missing => {
                exists = false;
                continue;
            }
            Entry::Other => continue,
            Entry::Link(target) => target,
        };
        links += 1;
        if links > MAX_LINKS {
            return None;
        }
        if let Some(start) = starts.pop() {
            here.truncate(start);
        }
        if target.starts_with('/') {
            here.clear();
            starts.clear();
        }
        pending.extend(
            target
                .split('/')
                .filter(|s| !s.is_empty())
                .rev()
                .map(str::to_string),
        );
        if pending.len() + starts.len() > MAX_COMPONENTS * 2 {
            return None;
        }
    }
    if here.is_empty() {
        here.push('/');
    }
    Some(here)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_resolves_to_its_target_and_a_missing_rest_is_appended() {
        let dir = std::env::temp_dir().join(format!("lg-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real/sub")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        let base = std::fs::canonicalize(&dir).unwrap();
        let base = base.to_string_lossy();
        let text = dir.to_string_lossy();
        assert_eq!(
            resolve_longest_prefix(&format!("{text}/link/sub/new/file")),
            Some(format!("{base}/real/sub/new/file"))
        );
        // `..` after a link walks up from where the link leads; a dangling link is followed.
        std::os::unix::fs::symlink(dir.join("nowhere/deep"), dir.join("dangling")).unwrap();
        assert_eq!(
            resolve_longest_prefix(&format!("{text}/dangling/f")),
            Some(format!("{base}/nowhere/deep/f"))
        );
        std::os::unix::fs::symlink(dir.join("loop"), dir.join("loop")).unwrap();
        assert_eq!(resolve_longest_prefix(&format!("{text}/loop/f")), None);
        assert_eq!(
            resolve_longest_prefix(&format!("{text}/link/sub/../x")),
            Some(format!("{base}/real/x"))
        );
        assert_eq!(
            resolve_longest_prefix(&format!("{text}/missing/../x")),
            Some(format!("{base}/x"))
        );
        assert_eq!(resolve_longest_prefix("relative/path"), None);
        // The root, and `..` above it, stay the root.
        assert_eq!(resolve_longest_prefix("/"), Some("/".to_string()));
        assert_eq!(resolve_longest_prefix("/../.."), Some("/".to_string()));
        assert_eq!(
            resolve_longest_prefix(&format!("{text}/missing/../../{}", "x")),
            Some(format!(
                "{}/x",
                base.rsplit_once('/').map(|(up, _)| up).unwrap_or("")
            ))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A glob names what is on the disk: hidden names and other cases too, and a nested
    /// wildcard segment; nothing for a directory that is not there.
    #[test]
    fn a_glob_names_what_is_on_the_disk() {
        let dir = std::env::temp_dir().join(format!("lg-glob-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src/pkg")).unwrap();
        for name in [
            "src/a.py",
            "src/.hidden.py",
            "src/B.PY",
            "src/c.rs",
            "src/pkg/x.py",
        ] {
            std::fs::write(dir.join(name), "").unwrap();
        }
        let base = std::fs::canonicalize(&dir).unwrap();
        let base = base.to_string_lossy();
        let links = FileSystemLinks::default();
        let mut found = links.expand_glob(&format!("{base}/src/*.py")).unwrap();
        found.sort();
        assert_eq!(
            found,
            vec![
                format!("{base}/src/.hidden.py"),
                format!("{base}/src/B.PY"),
                format!("{base}/src/a.py"),
            ]
        );
        assert_eq!(
            links.expand_glob(&format!("{base}/*/pkg/*.py")),
            Some(vec![format!("{base}/src/pkg/x.py")])
        );
        assert_eq!(
            links.expand_glob(&format!("{base}/none/*.py")),
            Some(Vec::new())
        );
        let mut deep = links.expand_glob(&format!("{base}/**/*.py")).unwrap();
        deep.sort();
        assert_eq!(
            deep,
            vec![
                format!("{base}/src/.hidden.py"),
                format!("{base}/src/B.PY"),
                format!("{base}/src/a.py"),
                format!("{base}/src/pkg/x.py"),
            ]
        );
        // A directory of more names than an expansion may look at: cannot tell.
        std::fs::create_dir_all(dir.join("crowd")).unwrap();
        for n in 0..=leastgrant_engine::MAX_GLOB_ENTRIES {
            std::fs::write(dir.join(format!("crowd/{n}.py")), "").unwrap();
        }
        assert_eq!(links.expand_glob(&format!("{base}/crowd/*.py")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The links below a directory, through nested directories and a linked directory (each
    /// once, so a loop ends), and `None` once a walk passes its entry budget.
    #[test]
    fn the_links_below_a_directory_are_found_each_once_and_a_crowd_is_unknown() {
        let dir = std::env::temp_dir().join(format!("lg-below-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("proj/docs/deep")).unwrap();
        std::fs::create_dir_all(dir.join("home/.ssh")).unwrap();
        std::fs::write(dir.join("home/.ssh/id"), "k").unwrap();
        std::fs::write(dir.join("proj/docs/a.md"), "a").unwrap();
        std::os::unix::fs::symlink(dir.join("home/.ssh"), dir.join("proj/docs/deep/keys")).unwrap();
        std::os::unix::fs::symlink(dir.join("proj/docs"), dir.join("proj/docs/deep/loop")).unwrap();
        let base = std::fs::canonicalize(&dir).unwrap();
        let base = base.to_string_lossy();
        let links = FileSystemLinks::default();
        let mut found = links.links_below(&format!("{base}/proj/docs")).unwrap();
        found.sort();
        assert_eq!(
            found,
            vec![format!("{base}/home/.ssh"), format!("{base}/proj/docs")]
        );
        assert_eq!(
            links.links_below(&format!("{base}/proj/docs/a.md")),
            Some(Vec::new())
        );
        std::fs::create_dir_all(dir.join("crowd")).unwrap();
        for n in 0..=MAX_WALK_ENTRIES {
            std::fs::write(dir.join(format!("crowd/{n}")), "").unwrap();
        }
        assert_eq!(links.links_below(&format!("{base}/crowd")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
