//! Placing a path: where a resolved path lies — inside the project, in which outside zone — and
//! whether it is a credential, a persistence point, a control file or leastgrant's own state.
//!
//! Placement is by the path's text and, where the caller can see the file system, by where its
//! symbolic links lead: the engine does no I/O, so a caller that can hands it a
//! [`crate::model::Resolver`] with the roots ([`Roots::see_links`]), every path is placed as
//! written and as resolved, and the stricter placement wins. An unresolved path (see
//! [`resolution`], which turns a word into a path) is placed nowhere, which makes the action not
//! understood. The lists below are a floor: callers may add to them.

use crate::model::{Placement, Zone};
use crate::static_index::{NameIndex, NameSet, name_set, packed_names, slots_for};

mod control;
mod resolution;
mod secrets;
mod sockets;

use control::CONTROL_PATHS as CONTROL_SUFFIXES;
use resolution::segments;
pub use resolution::{
    Links, Roots, ignores_case, is_within, is_within_case_aware, join, normalize, resolve,
};
pub(crate) use resolution::{is_normal, resolve_in};
use secrets::{SECRET_DIRS, SECRET_FILES};
pub(crate) use sockets::is_container_socket;

/// Where a path the engine cannot resolve lies: nowhere it knows.
pub const UNRESOLVED_PLACEMENT: Placement = Placement {
    zone: Zone::Unresolved,
    secret: false,
    persistence: false,
    control: false,
    own_state: false,
    privileged: false,
};

/// Places a resolved path (or `None` for an unresolved one): as written and, where the roots
/// see links, as the file system resolves it; the stricter placement wins.
pub fn place(resolved: Option<&str>, roots: &Roots) -> Placement {
    let Some(path) = resolved else {
        return UNRESOLVED_PLACEMENT;
    };
    let as_written = place_text(path, roots);
    match roots.links.elsewhere(path, roots) {
        Some((real, real_roots)) => as_written.stricter(place_text(&real, real_roots)),
        None => as_written,
    }
}

/// `place(Some(path), roots).zone == Zone::Workspace`, without placing the path against every
/// list when the roots see no links (a runner's working directory is asked this on every call).
pub fn in_workspace(path: &str, roots: &Roots) -> bool {
    if roots.links.sees() {
        return place(Some(path), roots).zone == Zone::Workspace;
    }
    // `zone_of`'s first test: within the project and not a credential tree.
    is_within(path, &roots.project) && !is_credential_tree(path, &roots.home)
}

/// Where `resolved` (absolute and normalised) leads through symbolic links, when the roots see
/// links and that is somewhere else than its text says.
pub fn link_target(resolved: &str, roots: &Roots) -> Option<String> {
    roots.links.elsewhere(resolved, roots).map(|(real, _)| real)
}

/// [`is_sweep_of_secrets`] of a path as written or where its links lead.
pub fn sweeps_secrets(resolved: &str, roots: &Roots) -> bool {
    is_sweep_of_secrets(resolved, roots)
        || roots
            .links
            .elsewhere(resolved, roots)
            .is_some_and(|(real, real_roots)| is_sweep_of_secrets(&real, real_roots))
}

/// Places a path by its text.
fn place_text(path: &str, roots: &Roots) -> Placement {
    // Lower-cased on the stack when it fits (nearly every path): no allocation per placement.
    let mut buffer = [0u8; 256];
    let heap: String;
    let lower: &str = match buffer.get_mut(..path.len()) {
        Some(bytes) => {
            bytes.copy_from_slice(path.as_bytes());
            bytes.make_ascii_lowercase();
            match std::str::from_utf8(bytes) {
                Ok(lower) => lower,
                Err(_) => {
                    heap = path.to_ascii_lowercase();
                    &heap
                }
            }
        }
        None => {
            heap = path.to_ascii_lowercase();
            &heap
        }
    };
    let own_state = roots.holds_own_state(path);
    let zone = zone_of(path, lower, roots, is_credential_tree(lower, &roots.home));
    let hits = list_hits(lower);
    let name = lower
        .bytes()
        .rposition(|b| b == b'/')
        .and_then(|at| lower.get(at + 1..))
        .unwrap_or(lower);
    // `~/bin` is on many users' PATH: what lands there runs in place of a familiar command.
    let home_bin = strip_home(lower, &roots.home)
        .and_then(|rest| rest.strip_prefix("/bin"))
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    Placement {
        zone,
        secret: is_secret(name, &hits),
        persistence: home_bin || is_persistence(lower, name, &hits),
        control: own_state || is_control(name, &hits),
        own_state,
        privileged: sockets::is_container_socket(lower),
    }
}

fn zone_of(path: &str, lower: &str, roots: &Roots, credential_tree: bool) -> Zone {
    if is_within(path, &roots.project) && !credential_tree {
        return Zone::Workspace;
    }
    if credential_tree {
        return Zone::CredentialTree;
    }
    if is_within(lower, "/etc") || is_within(lower, "/private/etc") {
        return Zone::Etc;
    }
    if ["/tmp", "/var/tmp", "/private/tmp"]
        .iter()
        .any(|t| is_within(lower, t))
        || segments(lower).any(|s| s == "tmp" || s == "temp")
    {
        return Zone::Temp;
    }
    if [
        "/usr",
        "/opt",
        "/bin",
        "/sbin",
        "/lib",
        "/lib64",
        "/boot",
        "c:/windows",
        "c:/program files",
    ]
    .iter()
    .any(|t| is_within(lower, t))
    {
        return Zone::System;
    }
    if ["/var", "/proc", "/sys", "/dev", "/run"]
        .iter()
        .any(|t| is_within(lower, t))
    {
        return Zone::Runtime;
    }
    if is_within(path, &roots.home) || is_within(lower, "/home") || is_within(lower, "/users") {
        return Zone::Home;
    }
    Zone::Other
}

/// The home directory is compared lower-cased, as the lower-cased paths it is compared with are: macOS and
/// Windows file systems ignore case (`/Users/Dev/.SSH` is `~/.ssh`), and elsewhere a case-only
/// twin of home is rare enough to be judged as home.
/// `lower` (a lower-cased path, or one compared without case) with the home directory taken off
/// its front, the home compared lower-cased without being copied (this runs for every placed
/// path).
fn strip_home<'p>(lower: &'p str, home: &str) -> Option<&'p str> {
    let head = lower.get(..home.len())?;
    if head.eq_ignore_ascii_case(home) {
        lower.get(home.len()..)
    } else {
        None
    }
}

/// Directories that hold credential stores somewhere below them: a recursive read of one sweeps
/// secrets.
/// `path` is a directory whose recursive read sweeps credentials, compared without case (as
/// its lower-cased form would be, without making one); `home` is the roots' home as given
/// (compared by [`strip_home`]).
fn is_credential_tree(path: &str, home: &str) -> bool {
    const EXACT: [&str; 9] = [
        "/",
        "/home",
        "/users",
        "/etc",
        "/private/etc",
        "/root",
        "/var/root",
        "c:/",
        "c:/users",
    ];
    // Below the home: these, compared without case.
    const HOME_TAILS: [&str; 5] = ["", "/", "/.config", "/.local", "/.local/share"];
    // Lengths first: an equal text has the same length. No exact entry is longer than
    // `LONGEST_EXACT` bytes, and most placed paths are longer than that and than the home with
    // any of its tails: they are not compared at all.
    #[allow(clippy::indexing_slicing)] // compile time only
    const LONGEST_EXACT: usize = {
        let (mut longest, mut i) = (0, 0);
        while i < EXACT.len() {
            if EXACT[i].len() > longest {
                longest = EXACT[i].len();
            }
            i += 1;
        }
        longest
    };
    let after_home = path.len().checked_sub(home.len());
    path.len() <= LONGEST_EXACT && EXACT.iter().any(|e| path.eq_ignore_ascii_case(e))
        || after_home.is_some_and(|extra| HOME_TAILS.iter().any(|t| t.len() == extra))
            && strip_home(path, home)
                .is_some_and(|rest| HOME_TAILS.iter().any(|r| rest.eq_ignore_ascii_case(r)))
}

name_set! {
    /// [`SECRET_FILES`] hashed at compile time: every placed path's file name is looked up.
    static SECRET_FILE_NAMES = &SECRET_FILES;
}

const SECRET_EXTENSIONS: &[&str] = &[
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".jks",
    ".keystore",
    ".asc",
    ".gpg",
    ".ppk",
    ".kdb",
    ".kdbx",
    ".keyring",
    ".tfstate",
    ".age",
];

const TEMPLATE_SUFFIXES: &[&str] = &[
    ".example",
    ".sample",
    ".template",
    ".dist",
    ".default",
    ".defaults",
    ".tpl",
];

#[derive(Clone, Copy)]
enum ListKind {
    Secret,
    Persistence,
    Control,
}

/// The lists placed segment by segment, in the order [`ListKind`] names them.
const SEGMENT_LISTS: [(&[&str], ListKind); 3] = [
    (&SECRET_DIRS, ListKind::Secret),
    (PERSISTENCE_DIRS, ListKind::Persistence),
    (&CONTROL_SUFFIXES, ListKind::Control),
];

const NEEDLE_COUNT: usize = SECRET_DIRS.len() + PERSISTENCE_DIRS.len() + CONTROL_SUFFIXES.len();

/// Where a needle sits in [`SEGMENT_LISTS`]: (list, entry, length of its first segment).
type NeedleSlot = (u8, u16, u8);

/// Each needle's first segment and its slot; exists only while compiling.
#[allow(clippy::indexing_slicing)] // compile time only
const FIRST_SEGMENTS: ([&str; NEEDLE_COUNT], [NeedleSlot; NEEDLE_COUNT]) = {
    let mut firsts = [""; NEEDLE_COUNT];
    let mut slots = [(0u8, 0u16, 0u8); NEEDLE_COUNT];
    let (mut at, mut l) = (0, 0);
    while l < SEGMENT_LISTS.len() {
        let list = SEGMENT_LISTS[l].0;
        let mut e = 0;
        while e < list.len() {
            let bytes = list[e].as_bytes();
            let mut end = 0;
            while end < bytes.len() && bytes[end] != b'/' {
                end += 1;
            }
            firsts[at] = match std::str::from_utf8(bytes.split_at(end).0) {
                Ok(first) => first,
                Err(_) => "",
            };
            slots[at] = (l as u8, e as u16, end as u8);
            at += 1;
            e += 1;
        }
        l += 1;
    }
    (firsts, slots)
};

/// (how many groups, each group's first segment, every needle's slot in group order, each
/// group's span in that order).
type Groups = (
    usize,
    [&'static str; NEEDLE_COUNT],
    [NeedleSlot; NEEDLE_COUNT],
    [(u16, u16); NEEDLE_COUNT],
);

/// The needles grouped by first segment: (how many distinct first segments, each group's first
/// segment, every needle's slot in group order, each group's span in that order). Many needles
/// share a first segment (`.config/…`, `etc/…`, `.github/…`); indexed one entry per needle, they
/// made probe chains tens of slots long that every path segment walked.
#[allow(clippy::indexing_slicing)] // compile time only
const GROUPS: Groups = {
    let (firsts, slots) = FIRST_SEGMENTS;
    let mut keys = [""; NEEDLE_COUNT];
    let mut ordered = [(0u8, 0u16, 0u8); NEEDLE_COUNT];
    let mut spans = [(0u16, 0u16); NEEDLE_COUNT];
    let mut placed = [false; NEEDLE_COUNT];
    let (mut groups, mut at, mut i) = (0, 0, 0);
    while i < NEEDLE_COUNT {
        if !placed[i] {
            keys[groups] = firsts[i];
            let start = at;
            let mut j = i;
            while j < NEEDLE_COUNT {
                if !placed[j] && bytes_equal(firsts[j].as_bytes(), firsts[i].as_bytes()) {
                    ordered[at] = slots[j];
                    placed[j] = true;
                    at += 1;
                }
                j += 1;
            }
            spans[groups] = (start as u16, at as u16);
            groups += 1;
        }
        i += 1;
    }
    (groups, keys, ordered, spans)
};

#[allow(clippy::indexing_slicing)] // compile time only
const fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Every needle's slot, grouped by first segment.
static GROUPED_SLOTS: [NeedleSlot; NEEDLE_COUNT] = GROUPS.2;

/// Each group's span in [`GROUPED_SLOTS`].
static GROUP_SPANS: [(u16, u16); NEEDLE_COUNT] = GROUPS.3;

/// The needles of group `group`.
fn group_slots(group: usize) -> &'static [NeedleSlot] {
    GROUP_SPANS
        .get(group)
        .and_then(|&(start, end)| GROUPED_SLOTS.get(usize::from(start)..usize::from(end)))
        .unwrap_or(&[])
}

/// A bit per (length, first byte, last byte) of a segment, folded into 4,096 bits.
const fn filter_index(len: usize, first: u8, last: u8) -> usize {
    ((len & 31) << 7) | (((first ^ last.rotate_left(3)) & 127) as usize)
}

/// The bits of every group's first segment, set at compile time: a path segment whose bit is
/// clear is no needle's first segment, and is not hashed (most of a path's segments).
#[allow(clippy::indexing_slicing)] // compile time only
static FIRST_SEGMENT_FILTER: [u64; 64] = {
    let mut bits = [0u64; 64];
    let mut g = 0;
    while g < GROUPS.0 {
        let key = GROUPS.1[g].as_bytes();
        if !key.is_empty() {
            let at = filter_index(key.len(), key[0], key[key.len() - 1]);
            bits[at / 64] |= 1 << (at % 64);
        }
        g += 1;
    }
    bits
};

/// `segment` (not empty) may be some group's first segment.
fn may_start_needle(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    let at = filter_index(bytes.len(), first, last);
    FIRST_SEGMENT_FILTER
        .get(at / 64)
        .is_some_and(|word| word & (1 << (at % 64)) != 0)
}

/// Groups of needles by first segment, hashed at compile time (`static_index`): placing a path
/// costs a hash per segment instead of a substring search per list entry, and nothing is built
/// when a process starts.
static BY_FIRST_SEGMENT: NameIndex<{ slots_for(NEEDLE_COUNT) }> =
    NameIndex::of_first(&GROUPS.1, GROUPS.0);

packed_names! {
    /// The lists of [`SEGMENT_LISTS`] as the run time reads them (packed: see `static_index`).
    static SECRET_DIR_NEEDLES = &SECRET_DIRS;
}
packed_names! {
    static PERSISTENCE_DIR_NEEDLES = PERSISTENCE_DIRS;
}
packed_names! {
    static CONTROL_NEEDLES = &CONTROL_SUFFIXES;
}

fn needle_at(slot: &NeedleSlot) -> Option<(&'static [u8], ListKind)> {
    let entry = usize::from(slot.1);
    match slot.0 {
        0 => Some((SECRET_DIR_NEEDLES.bytes_at(entry)?, ListKind::Secret)),
        1 => Some((
            PERSISTENCE_DIR_NEEDLES.bytes_at(entry)?,
            ListKind::Persistence,
        )),
        2 => Some((CONTROL_NEEDLES.bytes_at(entry)?, ListKind::Control)),
        _ => None,
    }
}

fn first_segment_at(slot: &NeedleSlot) -> Option<&'static [u8]> {
    let (needle, _) = needle_at(slot)?;
    needle.get(..usize::from(slot.2))
}

/// Which lists match some run of whole segments of `lower`.
#[derive(Default)]
struct ListHits {
    secret: bool,
    persistence: bool,
    control: bool,
    /// A dot-file or dot-directory whose name ends in `rules`, or a dot-directory other than
    /// `.git` followed by an instruction directory (`.windsurf/rules`, `.roo/commands`): found
    /// in the same pass over the segments (see [`is_control`]).
    dotted_control: bool,
}

fn list_hits(lower: &str) -> ListHits {
    // Most paths have few segments: keep them on the stack.
    let mut stack: [&str; 24] = [""; 24];
    let mut count = 0;
    let mut heap: Vec<&str> = Vec::new();
    let mut hits = ListHits::default();
    // The segment before, empty ones included: `is_control` asks of each dotted segment the one
    // right after it.
    let mut previous_dotted = false;
    for segment in segments(lower) {
        if previous_dotted && INSTRUCTION_DIRS.contains(&segment) {
            hits.dotted_control = true;
        }
        let dotted = segment.starts_with('.') && segment.len() > 1;
        if dotted && segment.ends_with("rules") {
            hits.dotted_control = true;
        }
        previous_dotted = dotted && segment != ".git";
        if segment.is_empty() {
            continue;
        }
        match stack.get_mut(count) {
            Some(slot) if heap.is_empty() => {
                *slot = segment;
                count += 1;
            }
            _ => {
                if heap.is_empty() {
                    heap.extend_from_slice(stack.get(..count).unwrap_or(&[]));
                }
                heap.push(segment);
            }
        }
    }
    let segments: &[&str] = if heap.is_empty() {
        stack.get(..count).unwrap_or(&[])
    } else {
        &heap
    };
    for (i, segment) in segments.iter().enumerate() {
        if !may_start_needle(segment) {
            continue;
        }
        let candidates = BY_FIRST_SEGMENT
            .positions(segment, |g| {
                group_slots(g).first().and_then(first_segment_at)
            })
            .flat_map(group_slots)
            .filter_map(needle_at);
        for (needle, kind) in candidates {
            let mut rest = segments.get(i..).unwrap_or(&[]).iter();
            let matches = needle
                .split(|b| *b == b'/')
                .all(|part| rest.next().map(|s| s.as_bytes()) == Some(part));
            if matches {
                match kind {
                    ListKind::Secret => hits.secret = true,
                    ListKind::Persistence => hits.persistence = true,
                    ListKind::Control => hits.control = true,
                }
            }
        }
    }
    hits
}

/// `needle` appears as whole segments in `lower` (for the short lists outside the index).
fn has_segment_path(lower: &str, needle: &str) -> bool {
    let mut rest = lower;
    while let Some(at) = rest.find('/') {
        rest = rest.get(at + 1..).unwrap_or("");
        if let Some(tail) = rest.strip_prefix(needle)
            && (tail.is_empty() || tail.starts_with('/'))
        {
            return true;
        }
    }
    false
}

/// `name` is the lower-cased path's last segment.
fn is_secret(name: &str, hits: &ListHits) -> bool {
    if hits.secret {
        return true;
    }
    // Every template suffix and secret extension is one `.` and a word: `name` ends with one
    // exactly when its extension (from its last `.`) is that one, so the extension is taken
    // once and compared, not every suffix searched for.
    let extension = name
        .bytes()
        .rposition(|b| b == b'.')
        .and_then(|at| name.get(at..))
        .unwrap_or("");
    if TEMPLATE_SUFFIXES.contains(&extension) || extension == ".pub" {
        return false;
    }
    if SECRET_FILE_NAMES.contains(name)
        || secrets::pattern_holding(name).is_some()
        || SECRET_EXTENSIONS.contains(&extension)
    {
        return true;
    }
    // A recursive read of a credential tree is judged by the reader; the tree itself is a
    // directory, not a secret, so `ls ~` stays a plain outside read.
    false
}

/// Placement of a credential tree, for the readers that sweep directories recursively.
pub fn is_sweep_of_secrets(resolved: &str, roots: &Roots) -> bool {
    let lower = resolved.to_ascii_lowercase();
    is_credential_tree(&lower, &roots.home)
        || !is_within(resolved, &roots.project)
            && [
                ".ssh", ".aws", ".gnupg", ".kube", ".config", ".docker", ".azure",
            ]
            .iter()
            .any(|d| has_segment_path(&lower, d))
}

name_set! {
    /// [`PERSISTENCE_FILES`] hashed at compile time, as [`SECRET_FILE_NAMES`].
    static PERSISTENCE_FILE_NAMES = PERSISTENCE_FILES;
}

const PERSISTENCE_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".envrc",
    ".direnvrc",
    ".gitconfig",
    ".gitmodules",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    ".pnp.cjs",
    "bunfig.toml",
    ".pre-commit-config.yaml",
    ".bazelrc",
    "crontab",
    ".vimrc",
    ".exrc",
    ".inputrc",
    ".tmux.conf",
    "authorized_keys",
    "authorized_keys2",
    "environment",
    "rc.local",
    "ld.so.preload",
    "config.fish",
    ".bash_aliases",
    ".curlrc",
    ".wgetrc",
    // Python imports these at every interpreter start.
    "sitecustomize.py",
    "usercustomize.py",
];

const PERSISTENCE_DIRS: &[&str] = &[
    ".ssh/config",
    ".ssh/rc",
    ".git/hooks",
    ".husky",
    ".vscode",
    ".idea",
    ".devcontainer",
    ".config/systemd",
    ".config/autostart",
    ".config/fish",
    ".local/bin",
    ".cargo/bin",
    ".config/git",
    "library/launchagents",
    "library/launchdaemons",
    "etc/systemd",
    "etc/cron.d",
    "etc/cron.daily",
    "etc/cron.hourly",
    "etc/cron.weekly",
    "etc/cron.monthly",
    "etc/init.d",
    "etc/profile.d",
    "var/spool/cron",
    "etc/sudoers.d",
    "start menu/programs/startup",
];

/// `name` is `lower`'s last segment.
fn is_persistence(lower: &str, name: &str, hits: &ListHits) -> bool {
    // A `.pth` file in site-packages runs its `import` lines at every interpreter start (a
    // `.pth` elsewhere is usually a model checkpoint).
    let site_pth = name.ends_with(".pth")
        && lower
            .split('/')
            .any(|s| s == "site-packages" || s == "dist-packages");
    hits.persistence
        || site_pth
        || PERSISTENCE_FILE_NAMES.contains(name)
        || lower == "/etc/profile"
        || lower == "/etc/bash.bashrc"
        || lower == "/etc/crontab"
}

const INSTRUCTION_DIRS: &[&str] = &[
    "rules",
    "commands",
    "agents",
    "subagents",
    "skills",
    "prompts",
    "instructions",
    "chatmodes",
    "modes",
    "output-styles",
    "workflows",
    "hooks",
];

/// `name` is the lower-cased path's last segment; `hits` its list hits.
fn is_control(name: &str, hits: &ListHits) -> bool {
    if hits.control {
        return true;
    }
    // The first byte is compared before the whole prefix: most names match no row's.
    let first = name.as_bytes().first().copied();
    if control::CONTROL_NAME_PREFIXES
        .iter()
        .any(|row| row.path.as_bytes().first().copied() == first && name.starts_with(row.path))
    {
        return true;
    }
    if [
        ".instructions.md",
        "-instructions.md",
        ".prompt.md",
        ".chatmode.md",
        ".mdc",
    ]
    .iter()
    .any(|s| name.ends_with(s))
    {
        return true;
    }
    // A dot-file or dot-directory whose name ends in `rules`, or a vendor dot-directory
    // followed by an instruction directory (`.windsurf/rules`, `.roo/commands`): asked while
    // the lists were matched (`ListHits::dotted_control`).
    hits.dotted_control
}

/// Why writing `path` is a control-file floor, from the table's row it matches.
pub fn control_reason(path: &str) -> Option<&'static str> {
    control::reason(&path.to_ascii_lowercase())
}

/// Whether a shell glob (lower-cased, absolute) could expand to a credential, a persistence
/// point or a control file: (secret, persistence, control). Compared segment by segment with
/// the lists (a glob never spans `/`); a segment that is only `*` is not taken to name a file,
/// so `cat *` in the project is not a credential read, but `~/.ssh/*` is.
pub fn glob_may_reach(glob: &str) -> (bool, bool, bool) {
    // Each segment with whether it is literal (no `*`, `?` or `[`): a literal segment matches
    // a name exactly when their bytes are equal, which is cheaper to ask of every list entry.
    let segments: Vec<(&str, bool)> = glob
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| (s, !crate::glob::is_glob(s)))
        .collect();
    let aligns_at = |needle: &[u8], start: usize| {
        needle.split(|b| *b == b'/').enumerate().all(|(k, part)| {
            segments
                .get(start + k)
                .is_some_and(|&(seg, literal)| segment_matches(seg, literal, part))
        })
    };
    // Which lists some needle of aligns with a run of segments. A needle's first segment is
    // asked of each group of needles once: a literal segment finds its group by hash, a glob
    // segment is matched against each group's first segment, not against every needle's.
    let mut hits = ListHits::default();
    for (start, &(segment, literal)) in segments.iter().enumerate() {
        let mut check_group = |group: usize| {
            for (needle, kind) in group_slots(group).iter().filter_map(needle_at) {
                if aligns_at(needle, start) {
                    match kind {
                        ListKind::Secret => hits.secret = true,
                        ListKind::Persistence => hits.persistence = true,
                        ListKind::Control => hits.control = true,
                    }
                }
            }
        };
        if literal {
            BY_FIRST_SEGMENT
                .positions(segment, |g| {
                    group_slots(g).first().and_then(first_segment_at)
                })
                .for_each(&mut check_group);
        } else if segment != "*" {
            (0..GROUPS.0)
                .filter(|&g| {
                    group_slots(g)
                        .first()
                        .and_then(first_segment_at)
                        .is_some_and(|first| segment_matches(segment, false, first))
                })
                .for_each(&mut check_group);
        }
    }
    let last = segments.last().map_or("", |&(seg, _)| seg);
    // A last segment that is only `*` is not taken to name a file.
    let names_file = last != "*";
    let secret = hits.secret
        || names_file && glob_names_any(last, &SECRET_FILE_NAMES)
        || names_file
            && [".env", ".env.local", ".env.production"]
                .iter()
                .any(|name| segment_matches(last, !crate::glob::is_glob(last), name.as_bytes()));
    let persistence =
        hits.persistence || names_file && glob_names_any(last, &PERSISTENCE_FILE_NAMES);
    (secret, persistence, hits.control)
}

/// A glob segment that is not only `*` matches `name` (byte equality when it is `literal`).
fn segment_matches(segment: &str, literal: bool, name: &[u8]) -> bool {
    if literal {
        segment.as_bytes() == name
    } else {
        segment != "*" && crate::glob::segment_matches_bytes(segment, name)
    }
}

/// A glob segment matches one of `names` (a literal one is looked up by hash).
fn glob_names_any<const B: usize, const N: usize, const S: usize>(
    segment: &str,
    names: &NameSet<B, N, S>,
) -> bool {
    if !crate::glob::is_glob(segment) {
        return names.contains(segment);
    }
    names
        .iter_bytes()
        .any(|name| crate::glob::segment_matches_bytes(segment, name))
}

/// Decodes `%XX` escapes (URL hosts, VS Code `uri.path` values); anything else is kept.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(value)) => {
                out.push(value);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Glob reach as first written: every needle of every list against every run of
    /// segments, every file name against the last segment.
    fn glob_may_reach_by_scan(glob: &str) -> (bool, bool, bool) {
        let segments: Vec<(&str, bool)> = glob
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| (s, !crate::glob::is_glob(s)))
            .collect();
        let aligns = |needle: &[u8]| {
            (0..segments.len()).any(|start| {
                needle.split(|b| *b == b'/').enumerate().all(|(k, part)| {
                    segments
                        .get(start + k)
                        .is_some_and(|&(seg, literal)| segment_matches(seg, literal, part))
                })
            })
        };
        fn names_any<'n>(segment: &str, mut names: impl Iterator<Item = &'n [u8]>) -> bool {
            if crate::glob::is_glob(segment) {
                names.any(|name| crate::glob::segment_matches_bytes(segment, name))
            } else {
                names.any(|name| segment.as_bytes() == name)
            }
        }
        let last = segments.last().map_or("", |&(seg, _)| seg);
        let names_file = last != "*";
        let env = [".env", ".env.local", ".env.production"].map(str::as_bytes);
        let secret = SECRET_DIR_NEEDLES.iter_bytes().any(aligns)
            || names_file && names_any(last, SECRET_FILE_NAMES.iter_bytes())
            || names_file && names_any(last, env.into_iter());
        let persistence = PERSISTENCE_DIR_NEEDLES.iter_bytes().any(aligns)
            || names_file && names_any(last, PERSISTENCE_FILE_NAMES.iter_bytes());
        let control = CONTROL_NEEDLES.iter_bytes().any(aligns);
        (secret, persistence, control)
    }

    /// Glob reach by groups of needles answers what a scan of every needle does, for every
    /// needle written plainly, below a directory, with each segment or its tail wild, and for
    /// globs over file names.
    #[test]
    fn glob_reach_by_groups_agrees_with_a_scan_of_every_needle() {
        let mut globs: Vec<String> = [
            "/p/*",
            "/p/*.pem",
            "/p/.env*",
            "/p/**/id_*",
            "/p/src/*.rs",
            "/etc/cron.*/x",
            "/p/.git*/hooks/*",
            "/h/.ssh/*",
            "/h/.*/credentials",
            "/h/.config/*/hosts.yml",
            "/p/[.]npmrc",
            "/p/?bashrc",
            "/p/{a,b}/x",
            "/*",
            "/",
        ]
        .map(String::from)
        .to_vec();
        for (list, _) in SEGMENT_LISTS {
            for needle in list {
                globs.push(format!("/home/u/{needle}"));
                globs.push(format!("/home/u/{needle}/*"));
                let parts: Vec<&str> = needle.split('/').collect();
                for k in 0..parts.len() {
                    for wild in ["*".to_string(), format!("{}*", &parts[k][..1])] {
                        let mut p = parts.clone();
                        p[k] = &wild;
                        globs.push(format!("/x/{}", p.join("/")));
                    }
                }
            }
        }
        for name in SECRET_FILE_NAMES
            .iter()
            .chain(PERSISTENCE_FILE_NAMES.iter())
        {
            globs.push(format!("/p/{name}"));
            globs.push(format!("/p/{}*", &name[..1]));
        }
        for glob in &globs {
            let lower = glob.to_ascii_lowercase();
            assert_eq!(
                glob_may_reach(&lower),
                glob_may_reach_by_scan(&lower),
                "{glob}"
            );
        }
    }

    /// `is_secret` compares extensions: each suffix must be one `.` followed by no other.
    #[test]
    fn template_suffixes_and_secret_extensions_are_single_extensions() {
        for suffix in TEMPLATE_SUFFIXES.iter().chain(SECRET_EXTENSIONS) {
            assert!(suffix.starts_with('.') && suffix.len() > 1, "{suffix}");
            assert_eq!(suffix.matches('.').count(), 1, "{suffix}");
        }
    }

    /// Every needle is found from its first segment: through the filter, by the index of
    /// groups, at the list and entry it came from (a needle missed here would never place).
    #[test]
    fn every_needle_is_found_from_its_first_segment() {
        let mut found = 0;
        for (l, (list, _)) in SEGMENT_LISTS.iter().enumerate() {
            for (e, needle) in list.iter().enumerate() {
                let first = needle.split('/').next().unwrap_or("");
                assert!(may_start_needle(first), "{needle}");
                let slots: Vec<NeedleSlot> = BY_FIRST_SEGMENT
                    .positions(first, |g| group_slots(g).first().and_then(first_segment_at))
                    .flat_map(group_slots)
                    .copied()
                    .collect();
                assert!(
                    slots
                        .iter()
                        .any(|s| usize::from(s.0) == l && usize::from(s.1) == e),
                    "{needle}"
                );
                found += 1;
            }
        }
        assert_eq!(found, NEEDLE_COUNT);
        assert!(!may_start_needle("getspecstory"));
    }
}
