//! What the engine knows about programs: one table per family, each entry a program name and
//! the function that judges an invocation of it.
//!
//! A classification is sparse: a capability (whose default blast radius fills the rest), the paths
//! the program touches and how, and whether it is opaque (the engine cannot tell what it will
//! do). A program no table claims is unknown, and unknown is not understood. Each family has a
//! case file under `engine/tests/data/knowledge/`.

mod classification;
mod cloud;
mod files;
mod network;
mod packages;
mod runtime;
mod vcs;

use crate::static_index::{self, NameIndex, PackedNames, name_set};
use classification::Judge;
pub(crate) use classification::{Classification, Invocation};

/// All tables, later families winning a name clash.
const TABLES: [&[(&[&str], Judge)]; 6] = [
    files::TABLE,
    vcs::TABLE,
    packages::TABLE,
    cloud::TABLE,
    runtime::TABLE,
    network::TABLE,
];

/// The tables are read only while compiling: at run time the index keeps the judges (function
/// pointers, relocated at start-up) and the names packed as bytes (nothing to relocate), so
/// starting the hook does not rewrite a page of pointers per 512 names.
const ENTRY_COUNT: usize = {
    let (mut count, mut t) = (0, 0);
    while t < TABLES.len() {
        #[allow(clippy::indexing_slicing)] // compile time only
        {
            count += TABLES[t].len();
        }
        t += 1;
    }
    count
};

const NAME_COUNT: usize = {
    let mut count = 0;
    let mut t = 0;
    while t < TABLES.len() {
        let mut e = 0;
        #[allow(clippy::indexing_slicing)] // compile time only
        while e < TABLES[t].len() {
            count += TABLES[t][e].0.len();
            e += 1;
        }
        t += 1;
    }
    count
};

/// Every name and the entry (counted across the tables) it belongs to, in table order; exists
/// only while compiling.
#[allow(clippy::indexing_slicing)] // compile time only
const NAMES: ([&str; NAME_COUNT], [u16; NAME_COUNT]) = {
    let mut names = [""; NAME_COUNT];
    let mut entries = [0u16; NAME_COUNT];
    let (mut at, mut entry, mut t) = (0, 0, 0);
    while t < TABLES.len() {
        let mut e = 0;
        while e < TABLES[t].len() {
            let mut n = 0;
            while n < TABLES[t][e].0.len() {
                names[at] = TABLES[t][e].0[n];
                entries[at] = entry as u16;
                at += 1;
                n += 1;
            }
            entry += 1;
            e += 1;
        }
        t += 1;
    }
    (names, entries)
};

/// Each entry's judge, in table order.
#[allow(clippy::indexing_slicing)] // compile time only
static JUDGES: [Judge; ENTRY_COUNT] = {
    let mut judges = [TABLES[0][0].1; ENTRY_COUNT];
    let (mut at, mut t) = (0, 0);
    while t < TABLES.len() {
        let mut e = 0;
        while e < TABLES[t].len() {
            judges[at] = TABLES[t][e].1;
            at += 1;
            e += 1;
        }
        t += 1;
    }
    judges
};

/// Each name's entry, in table order.
static NAME_ENTRIES: [u16; NAME_COUNT] = NAMES.1;

/// Every name, packed.
static NAME_TEXT: PackedNames<{ static_index::total_len(&NAMES.0) }, NAME_COUNT> =
    PackedNames::of(&NAMES.0);

/// Program names hashed at compile time into name positions; a name in several entries keeps
/// them in table order, so the last is the one that wins.
static BY_NAME: NameIndex<{ static_index::slots_for(NAME_COUNT) }> = NameIndex::of(&NAMES.0);

/// The judge of a program name, the later table winning a clash.
fn judge_of(program: &str) -> Option<Judge> {
    let position = BY_NAME
        .positions(program, |p| NAME_TEXT.bytes_at(p))
        .last()?;
    let entry = NAME_ENTRIES.get(position)?;
    JUDGES.get(usize::from(*entry)).copied()
}

/// Judges an invocation; `None` when no table knows the program.
pub fn classify(invocation: &Invocation<'_>) -> Option<Classification> {
    let lowered;
    let mut program = invocation.program;
    if program.bytes().any(|b| b.is_ascii_uppercase()) {
        lowered = program.to_ascii_lowercase();
        program = &lowered;
    }
    let program = program.strip_suffix(".exe").unwrap_or(program);
    let judge = judge_of(program)?;
    Some(judge(invocation))
}

name_set! {
    /// Programs that run code they read from their input, so a network fetch piped into one runs
    /// what was fetched (shells and `sh -c` are the shell analysis's own).
    pub(crate) static RUNS_INPUT = &[
        "busybox", "python", "python3", "python2", "pypy", "pypy3", "py", "ipython", "node",
        "nodejs", "perl", "ruby", "php", "lua", "luajit", "pwsh", "powershell", "eval", "source",
        ".", "deno", "bun", "ed", "ex", "irb", "jshell", "tclsh", "rscript", "r", "julia",
        "osascript", "qjs", "gawk", "awk",
    ];
}

name_set! {
    /// Programs whose arguments name hosts, not paths, though their capability is not a network
    /// one (diagnostics, sockets, a remote shell): their arguments learn as hosts.
    pub(crate) static NAMES_HOSTS = &[
        "ping", "dig", "host", "nslookup", "traceroute", "tracepath", "mtr", "whois", "nc", "ncat",
        "netcat", "telnet", "ssh",
    ];
}

name_set! {
    /// Copy and sync tools that name local files as well as `user@host:` remotes: their
    /// arguments learn as paths even when their capability is a network one.
    pub(crate) static NAMES_LOCAL_PATHS = &["scp", "rsync", "sftp", "rclone", "aws", "gsutil", "git"];
}

/// Every program some table knows.
#[cfg(test)]
fn known_programs() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = NAME_TEXT.iter().collect();
    all.sort_unstable();
    all.dedup();
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compile-time index answers what a map filled in table order would: every name is
    /// found, at its last entry, and nothing else is.
    #[test]
    fn the_name_index_finds_the_last_entry_of_every_name() {
        let mut expected: std::collections::HashMap<&str, usize> = Default::default();
        let mut entry = 0;
        for table in TABLES {
            for (names, _) in table {
                for name in *names {
                    expected.insert(name, entry);
                }
                entry += 1;
            }
        }
        assert_eq!(expected.len(), known_programs().len());
        for (name, entry) in &expected {
            let position = BY_NAME
                .positions(name, |p| NAME_TEXT.bytes_at(p))
                .last()
                .unwrap();
            assert_eq!(usize::from(NAME_ENTRIES[position]), *entry, "{name}");
            assert!(judge_of(name).is_some());
        }
        for absent in ["", "gitx", "gi", "zzzz", "npm ", "Git"] {
            assert!(judge_of(absent).is_none(), "{absent}");
        }
    }

    /// The program lists kept beside the tables name programs the tables know (or the shell's
    /// own `eval`, `source`, `.` and `busybox`).
    #[test]
    fn the_program_lists_name_known_programs() {
        let builtins = ["eval", "source", ".", "busybox"];
        let names = RUNS_INPUT
            .iter()
            .chain(NAMES_HOSTS.iter())
            .chain(NAMES_LOCAL_PATHS.iter());
        for name in names {
            assert!(
                judge_of(name).is_some() || builtins.contains(&name),
                "`{name}` is in no table"
            );
        }
    }

    /// A program belongs to one family: a name in two entries would be decided by table order
    /// alone, silently.
    #[test]
    fn no_program_sits_in_two_entries() {
        const FAMILIES: [&str; 6] = ["files", "vcs", "packages", "cloud", "runtime", "network"];
        let mut seen: std::collections::HashMap<&str, &str> = Default::default();
        let mut clashes = Vec::new();
        for (family, table) in FAMILIES.iter().zip(TABLES) {
            for (names, _) in table {
                for name in *names {
                    if let Some(earlier) = seen.insert(name, family) {
                        clashes.push(format!("`{name}` in {earlier} and {family}"));
                    }
                }
            }
        }
        assert!(clashes.is_empty(), "{}", clashes.join("\n"));
    }
}
