//! The one place leastgrant's hook and CLI touch the files they decide with: reading a file only
//! when it is a regular file of bounded size (a device, FIFO or socket — or a link to one — is
//! never read, and never blocks the open), trusting a decision file only when it belongs to this
//! user and no one else can write it, creating directories and files owner-only whatever the
//! umask, appending, and replacing a file atomically.
//!
//! Every refusal is a [`FileError`] that names the file and says why, for the hook's reason and
//! the CLI's error. Must not: know which file is which (`layout.rs`), or depend on any other
//! module of the crate.

use std::fs::{self, File, Metadata};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use rustix::fs::{Mode, OFlags};

/// The largest rules file read (a policy is a few kilobytes).
pub const MAX_RULES_BYTES: u64 = 4 << 20;
/// The largest grants file read.
pub const MAX_GRANTS_BYTES: u64 = 16 << 20;
/// The largest session file read (a few booleans).
pub const MAX_SESSION_BYTES: u64 = 64 << 10;
/// The largest frozen envelope mapped (a 50,000-signature envelope is about 7 MB).
pub const MAX_ENVELOPE_BYTES: u64 = 256 << 20;

/// Whether a path's last component may be a symbolic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Follow it (the user's own rules may live in a dotfiles checkout).
    Follow,
    /// Refuse it: leastgrant writes this file itself, never as a link.
    Refuse,
}

/// Whom a file must belong to before its contents decide anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Anyone (a repository's own rules, which can only tighten).
    Anyone,
    /// This user, and writable by no one else: a decision file.
    Owner,
}

/// Why a file was not read, written or trusted.
#[derive(Debug)]
pub enum Problem {
    /// The system refused (missing permissions, a vanished file, …).
    Io(io::Error),
    /// A symbolic link where leastgrant keeps its own file.
    Link,
    /// A device, FIFO, socket or directory where a file was expected.
    NotRegular(&'static str),
    /// Larger than what is read of such a file.
    TooLarge {
        /// Its size.
        len: u64,
        /// The most read.
        limit: u64,
    },
    /// Owned by another user.
    Foreign {
        /// Its owner.
        uid: u32,
    },
    /// Writable by the group or by everyone.
    Writable {
        /// Its permission bits.
        mode: u32,
    },
}

/// A file that was not read, written or trusted, and why.
#[derive(Debug)]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub problem: Problem,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match &self.problem {
            Problem::Io(error) => write!(f, "cannot read `{path}`: {error}"),
            Problem::Link => write!(
                f,
                "`{path}` is a symbolic link where leastgrant keeps its own file, so it is not followed"
            ),
            Problem::NotRegular(kind) => write!(
                f,
                "`{path}` is {kind}, not a regular file, so leastgrant does not read it"
            ),
            Problem::TooLarge { len, limit } => write!(
                f,
                "`{path}` is {len} bytes, more than the {limit} leastgrant reads of it"
            ),
            Problem::Foreign { uid } => write!(
                f,
                "`{path}` belongs to another user (uid {uid}), so leastgrant does not trust it"
            ),
            Problem::Writable { mode } => write!(
                f,
                "`{path}` can be written by other users (mode {mode:o}), so leastgrant does not trust it; `chmod go-w` it"
            ),
        }
    }
}

impl std::error::Error for FileError {}

fn error(path: &Path, problem: Problem) -> FileError {
    FileError {
        path: path.to_path_buf(),
        problem,
    }
}

fn io_error(path: &Path, e: io::Error) -> FileError {
    error(path, Problem::Io(e))
}

/// What kind of thing a non-regular file is, for the reason.
pub fn kind(meta: &Metadata) -> &'static str {
    let file_type = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else {
        "not a file"
    }
}

/// This process's user (the effective one: whose files it creates), asked of the kernel once:
/// leastgrant never changes it, and a hook call checks a dozen files against it.
#[cfg(unix)]
fn me() -> u32 {
    static ME: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *ME.get_or_init(|| rustix::process::geteuid().as_raw())
}

std::thread_local! {
    /// The directories [`check_dirs`] found trusted inside [`remembering_dirs`], with whether
    /// the last component was followed (a state directory reached through a link) or had to be
    /// a directory itself; `None` outside it.
    static TRUSTED_DIRS: std::cell::RefCell<Option<Vec<(PathBuf, bool)>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` remembering every directory [`check_dirs`] finds trusted until `f` returns, so one
/// hook call inspects its state directory once rather than once per file it reads there (rules,
/// their table, grants, session, ledger). Only a directory that exists, is a directory and
/// passed the checks is remembered — one that is missing is asked again, as it may be created
/// meanwhile. A directory's owner and mode can change between a check and a later read either
/// way (only its owner or root can change them); remembering them for the length of one call
/// widens nothing that re-checking would catch.
pub fn remembering_dirs<T>(f: impl FnOnce() -> T) -> T {
    let outer = TRUSTED_DIRS.with(|m| m.try_borrow_mut().ok().map(|mut m| m.replace(Vec::new())));
    let result = f();
    TRUSTED_DIRS.with(|m| {
        if let (Ok(mut m), Some(outer)) = (m.try_borrow_mut(), outer) {
            *m = outer;
        }
    });
    result
}

fn remembered(dir: &Path, followed: bool) -> bool {
    TRUSTED_DIRS.with(|m| {
        m.try_borrow().is_ok_and(|m| {
            m.as_ref()
                .is_some_and(|seen| seen.iter().any(|(d, f)| *f == followed && d == dir))
        })
    })
}

fn remember(dir: &Path, followed: bool) {
    TRUSTED_DIRS.with(|m| {
        if let Ok(mut m) = m.try_borrow_mut()
            && let Some(seen) = m.as_mut()
        {
            seen.push((dir.to_path_buf(), followed));
        }
    });
}

/// Whether `meta` (of `path`) may decide anything under `trust`: this user's, and writable by no
/// one else.
pub fn check_trusted(path: &Path, meta: &Metadata, trust: Trust) -> Result<(), FileError> {
    if trust == Trust::Anyone {
        return Ok(());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != me() {
            return Err(error(path, Problem::Foreign { uid: meta.uid() }));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(error(path, Problem::Writable { mode: mode & 0o777 }));
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta);
    Ok(())
}

fn check_regular(path: &Path, meta: &Metadata, limit: u64) -> Result<(), FileError> {
    if meta.file_type().is_symlink() {
        return Err(error(path, Problem::Link));
    }
    if !meta.is_file() {
        return Err(error(path, Problem::NotRegular(kind(meta))));
    }
    if meta.len() > limit {
        return Err(error(
            path,
            Problem::TooLarge {
                len: meta.len(),
                limit,
            },
        ));
    }
    Ok(())
}

/// The status of `path` if it is a regular file of at most `limit` bytes that `trust` accepts
/// (what [`open_regular`] checks before it opens one); `None` when nothing is there. For a
/// caller that may need only the status (a rules file whose compiled table records it).
pub fn inspect(
    path: &Path,
    links: Links,
    trust: Trust,
    limit: u64,
) -> Result<Option<Metadata>, FileError> {
    let meta = match links {
        Links::Follow => fs::metadata(path),
        Links::Refuse => fs::symlink_metadata(path),
    };
    let meta = match meta {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path, e)),
    };
    check_regular(path, &meta, limit)?;
    check_trusted(path, &meta, trust)?;
    Ok(Some(meta))
}

/// A regular file opened for reading, with the length checked on the open file.
#[derive(Debug)]
pub struct Regular {
    /// The open file.
    pub file: File,
    /// Its length when it was checked.
    pub len: u64,
    /// Its status, from the open file (the rules cache keys on it: `rules_cache.rs`).
    pub meta: Metadata,
}

/// Opens `path` for reading if it is a regular file of at most `limit` bytes that `trust`
/// accepts; `None` when nothing is there. The path is inspected first (a device is never
/// opened: opening one can have effects), opened without blocking (a FIFO swapped in cannot
/// hold the open) and, with [`Links::Refuse`], without following a link; then the open file is
/// checked again, so what is read is what was checked.
///
/// The frozen envelope's reader maps `Regular::file` with `Regular::len`.
pub fn open_regular(
    path: &Path,
    links: Links,
    trust: Trust,
    limit: u64,
) -> Result<Option<Regular>, FileError> {
    let before = match links {
        Links::Follow => fs::metadata(path),
        Links::Refuse => fs::symlink_metadata(path),
    };
    let before = match before {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path, e)),
    };
    check_regular(path, &before, limit)?;
    let file = match open_read(path, links) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path, e)),
    };
    let meta = file.metadata().map_err(|e| io_error(path, e))?;
    check_regular(path, &meta, limit)?;
    check_trusted(path, &meta, trust)?;
    Ok(Some(Regular {
        len: meta.len(),
        file,
        meta,
    }))
}

#[cfg(unix)]
fn open_read(path: &Path, links: Links) -> io::Result<File> {
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    if links == Links::Refuse {
        flags |= OFlags::NOFOLLOW;
    }
    Ok(File::from(rustix::fs::open(path, flags, Mode::empty())?))
}

#[cfg(not(unix))]
fn open_read(path: &Path, _links: Links) -> io::Result<File> {
    File::open(path)
}

/// The bytes of a regular file of at most `limit` bytes ([`open_regular`]); `None` when nothing
/// is there. A file that grows past the limit while it is read is refused.
pub fn read_regular(
    path: &Path,
    links: Links,
    trust: Trust,
    limit: u64,
) -> Result<Option<Vec<u8>>, FileError> {
    let Some(regular) = open_regular(path, links, trust, limit)? else {
        return Ok(None);
    };
    let mut bytes = Vec::with_capacity(usize::try_from(regular.len).unwrap_or(0));
    regular
        .file
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(path, e))?;
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if len > limit {
        return Err(error(path, Problem::TooLarge { len, limit }));
    }
    Ok(Some(bytes))
}

/// A directory is trusted when it is this user's or root's, and no one else can write it — or
/// only with the sticky bit set (like `/tmp`), where no one can remove or rename another's
/// entries and whatever they add is refused by its owner.
fn check_trusted_dir(dir: &Path, meta: &Metadata) -> Result<(), FileError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != me() && meta.uid() != 0 {
            return Err(error(dir, Problem::Foreign { uid: meta.uid() }));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 && mode & 0o1000 == 0 {
            return Err(error(dir, Problem::Writable { mode: mode & 0o777 }));
        }
    }
    #[cfg(not(unix))]
    let _ = (dir, meta);
    Ok(())
}

/// Every directory from `base` down to `file`'s parent that exists must be a directory of this
/// user's that no one else can write (`check_trusted_dir`): otherwise another user could put a file of theirs in
/// place, or take one of leastgrant's away (a deny grant). `base` may be reached through a link
/// (a state directory the user moved); the directories below it are leastgrant's own and may
/// not be links.
pub fn check_dirs(base: &Path, file: &Path) -> Result<(), FileError> {
    let Some(parent) = file.parent() else {
        return Ok(());
    };
    let Ok(below) = parent.strip_prefix(base) else {
        return Ok(());
    };
    let mut dir = base.to_path_buf();
    let mut components = below.components();
    let mut first = true;
    loop {
        if !remembered(&dir, first) {
            let meta = if first {
                fs::metadata(&dir)
            } else {
                fs::symlink_metadata(&dir)
            };
            match meta {
                Ok(meta) => {
                    if meta.file_type().is_symlink() {
                        return Err(error(&dir, Problem::Link));
                    }
                    if !meta.is_dir() {
                        return Err(error(&dir, Problem::NotRegular(kind(&meta))));
                    }
                    check_trusted_dir(&dir, &meta)?;
                    remember(&dir, first);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(io_error(&dir, e)),
            }
        }
        first = false;
        match components.next() {
            Some(component) => dir.push(component),
            None => return Ok(()),
        }
    }
}

/// Creates `dir` and every missing directory above it owner-only (0700), whatever the umask.
/// Directories that exist are left as they are (`check_dirs` and `doctor` judge them).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    // A directory `check_dirs` found in this call is there (`remembering_dirs`).
    if remembered(dir, true) || remembered(dir, false) {
        return Ok(());
    }
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => {
            // A link to a directory (the user's) is used as it is; anything else fails below.
            if fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
                return Ok(());
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_private_dir(parent)?;
    }
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => {}
        // Another process made it meanwhile.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(e),
    }
    set_private(dir, 0o700)
}

#[cfg(unix)]
fn set_private(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_private(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Creates `path` afresh, owner-only (0600 whatever the umask). Whatever was at that name before
/// — a file a crash left behind, or a link planted there — is removed first, and the file is
/// created exclusively (`O_CREAT|O_EXCL` never follows a link).
pub fn create_private_file(path: &Path) -> io::Result<File> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// Replaces `path` with `bytes` atomically: written whole to `staged` (created afresh,
/// owner-only), synced, renamed over `path`, and the rename synced. A crash before the rename
/// leaves the old file intact.
pub fn replace(path: &Path, staged: &Path, bytes: &[u8]) -> io::Result<()> {
    stage(staged, bytes)?;
    if let Err(e) = fs::rename(staged, path) {
        let _ = fs::remove_file(staged);
        return Err(e);
    }
    if let Some(dir) = path.parent()
        && let Ok(dir) = File::open(dir)
    {
        // Make the rename itself durable; a failure here loses nothing already written.
        let _ = dir.sync_all();
    }
    Ok(())
}

/// The first half of [`replace`]: `bytes` in `staged`, created afresh owner-only and synced.
pub fn stage(staged: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = create_private_file(staged)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Opens `path` for appending, creating it owner-only. Never follows a link, never blocks on a
/// FIFO, and the open file must be a regular file of this user's that no one else can write.
pub fn open_append(path: &Path) -> Result<File, FileError> {
    open_own(path, true)
}

/// Opens (creating owner-only) a lock file: like [`open_append`], without appending.
pub fn open_lock(path: &Path) -> Result<File, FileError> {
    open_own(path, false)
}

fn open_own(path: &Path, append: bool) -> Result<File, FileError> {
    // Whatever is there is inspected before it is opened: opening a device can have effects.
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => return Err(error(path, Problem::Link)),
        Ok(meta) if !meta.is_file() => return Err(error(path, Problem::NotRegular(kind(&meta)))),
        _ => {}
    }
    let file = open_write(path, append).map_err(|e| {
        if is_link(path) {
            error(path, Problem::Link)
        } else {
            io_error(path, e)
        }
    })?;
    let meta = file.metadata().map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        return Err(error(path, Problem::NotRegular(kind(&meta))));
    }
    check_trusted(path, &meta, Trust::Owner)?;
    Ok(file)
}

fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(unix)]
fn open_write(path: &Path, append: bool) -> io::Result<File> {
    let mut flags = OFlags::WRONLY
        | OFlags::CREATE
        | OFlags::NOFOLLOW
        | OFlags::NONBLOCK
        | OFlags::CLOEXEC
        | OFlags::NOCTTY;
    if append {
        flags |= OFlags::APPEND;
    }
    Ok(File::from(rustix::fs::open(
        path,
        flags,
        Mode::from_raw_mode(0o600),
    )?))
}

#[cfg(not(unix))]
fn open_write(path: &Path, append: bool) -> io::Result<File> {
    fs::OpenOptions::new()
        .write(true)
        .create(true)
        .append(append)
        .open(path)
}
