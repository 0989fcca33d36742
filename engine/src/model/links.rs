//! Where a path leads through symbolic links: the question the engine asks its caller, since the
//! engine itself does no I/O. The hook and `leastgrant check` answer it from the file system at
//! call time; the replay has no file system of the past and answers nothing ([`NoLinks`]), so
//! it places every path by its text alone (`docs/decisions.md`, "Symbolic links").
//!
//! Must not: hold any placement logic (that is `paths.rs`), or be implemented with I/O here.
//! Glob expansion is asked of the same caller, for the same reason: only it sees the disk.

/// Resolves symbolic links for the engine. Implementations never open a file: they follow links
/// (`lstat`, `readlink`) and stop after a bounded number of components.
pub trait Resolver {
    /// `path` (absolute, lexically normalised, or with `..` segments the kernel must walk) with
    /// its longest existing prefix replaced by that prefix's canonical path and the rest
    /// appended: `/p/docs/x.md` → `/home/u/.aws/credentials` when `docs/x.md` is a link there,
    /// `/p/new/file` → `/p/new/file` when nothing on the way is a link. `None` when it cannot
    /// tell (then the path is placed by its text alone).
    fn resolve(&self, path: &str) -> Option<String>;

    /// Where the symbolic links found below directory `dir` (absolute, normalised) lead, each
    /// resolved: what a program that follows links while it walks (`grep -R`, `rg -L`,
    /// `find -L`) reaches besides `dir`. Empty when there are none or `dir` is no directory;
    /// `None` when it cannot tell (more entries than a call may look at). A world without
    /// links, or one the engine cannot see, has none.
    fn links_below(&self, _dir: &str) -> Option<Vec<String>> {
        Some(Vec::new())
    }

    /// The paths shell glob `glob` (absolute, normalised, braces expanded) may expand to now,
    /// each as named (not resolved): what `cat src/*.py` reads. `None` when it cannot tell
    /// (then the glob is placed by its text); implementations list directories with
    /// [`crate::expand_glob`], bounded.
    fn expand_glob(&self, _glob: &str) -> Option<Vec<String>> {
        None
    }
}

/// The resolver of a world without links, or one the engine cannot see: the replay's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoLinks;

impl Resolver for NoLinks {
    fn resolve(&self, _path: &str) -> Option<String> {
        None
    }
}
