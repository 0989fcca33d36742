//! What the engine knows about programs: one table per family, each entry a program name and
//! the function that judges an invocation of it.
//!
//! A judgement is sparse: a capability (whose default blast radius fills the rest), the paths
//! the program touches and how, and whether it is opaque (the engine cannot tell what it will
//! do). A program no table claims is unknown, and unknown is not understood. Each family has a
//! case file under `engine/tests/data/knowledge/`.

mod cloud;
mod files;
mod network;
mod packages;
mod runtime;
mod vcs;

use crate::model::{Access, Blast, Capability, Exposure, Reach, Reversibility, Scale};
use crate::shell::lex::Word;
use crate::static_index::{self, NameIndex, Names, PackedNames};

/// One program invocation, wrappers already peeled.
#[derive(Debug, Clone, Copy)]
pub struct Invocation<'a> {
    /// The program's base name.
    pub program: &'a str,
    /// Its arguments.
    pub args: &'a [Word],
    /// `git -c` keys.
    pub config_keys: &'a [String],
}

/// What a program invocation does, as far as the tables know.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// The kind of action.
    pub capability: Capability,
    /// Its blast radius (the capability's default unless the entry says otherwise).
    pub blast: Blast,
    /// Paths it touches.
    pub targets: Vec<(Word, Access)>,
    /// Why the engine cannot tell what it will do, when it cannot.
    pub opaque: Option<String>,
    /// It walks directories recursively, so a credential tree among its targets is a sweep of
    /// secrets.
    pub recursive: bool,
    /// It installs something that runs later (cron, services, login items).
    pub persistence: bool,
}

impl Classification {
    /// A judgement with the capability's default blast radius.
    pub fn new(capability: Capability) -> Classification {
        Classification {
            capability,
            blast: capability.default_blast(),
            targets: Vec::new(),
            opaque: None,
            recursive: false,
            persistence: false,
        }
    }

    /// Not understood: the engine cannot tell what this will do.
    pub fn opaque(capability: Capability, why: &str) -> Classification {
        let mut j = Classification::new(capability);
        j.opaque = Some(why.to_string());
        j
    }

    pub(crate) fn with_paths<'w>(
        mut self,
        words: impl IntoIterator<Item = &'w Word>,
        access: Access,
    ) -> Classification {
        self.targets
            .extend(words.into_iter().map(|w| (w.clone(), access)));
        self
    }

    pub(crate) fn reach(mut self, reach: Reach) -> Classification {
        self.blast.reach = self.blast.reach.max(reach);
        self
    }

    pub(crate) fn reversibility(mut self, r: Reversibility) -> Classification {
        self.blast.reversibility = self.blast.reversibility.max(r);
        self
    }

    pub(crate) fn exposure(mut self, e: Exposure) -> Classification {
        self.blast.exposure = self.blast.exposure.max(e);
        self
    }

    pub(crate) fn scale(mut self, s: Scale) -> Classification {
        self.blast.scale = self.blast.scale.max(s);
        self
    }

    pub(crate) fn recursive(mut self, yes: bool) -> Classification {
        self.recursive |= yes;
        if yes {
            self.blast.scale = self.blast.scale.max(Scale::Many);
        }
        self
    }
}

impl<'a> Invocation<'a> {
    /// The words that are not options, given the options that take a value. Everything after
    /// `--` is positional.
    pub(crate) fn positionals(&self, valued: Names<'_>) -> Vec<&'a Word> {
        self.positionals_where(|t| valued.contains(t))
    }

    /// [`Invocation::positionals`], with the options that take a value given by a test.
    pub(crate) fn positionals_where(&self, is_valued: impl Fn(&str) -> bool) -> Vec<&'a Word> {
        let mut out = Vec::new();
        let mut skip_next = false;
        let mut rest_positional = false;
        for word in self.args {
            if skip_next {
                skip_next = false;
                continue;
            }
            let t = word.text.as_str();
            if rest_positional || !t.starts_with('-') || t == "-" {
                out.push(word);
            } else if t == "--" {
                rest_positional = true;
            } else if is_valued(t) {
                skip_next = true;
            }
        }
        out
    }

    /// The first positional word (usually a subcommand), lower-cased.
    pub(crate) fn sub(&self, valued: Names<'_>) -> String {
        self.positionals(valued)
            .first()
            .map(|w| w.text.to_ascii_lowercase())
            .unwrap_or_default()
    }

    /// The option is present, as `--long`, `--long=…`, `-x`, or inside a cluster like `-rf`.
    pub fn has(&self, flag: &str) -> bool {
        self.has_bytes(flag.as_bytes())
    }

    /// [`Invocation::has`] on bytes (the packed flag lists are compared without a UTF-8 check).
    fn has_bytes(&self, flag: &[u8]) -> bool {
        self.args.iter().take_while(|w| w.text != "--").any(|w| {
            let t = w.text.as_bytes();
            if flag.starts_with(b"--") {
                t.strip_prefix(flag)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"="))
            } else if let Some(&[letter]) = flag.strip_prefix(b"-") {
                t == flag
                    || (t.starts_with(b"-")
                        && !t.starts_with(b"--")
                        && t.len() > 2
                        && t.get(1..).is_some_and(|c| {
                            c.iter().all(u8::is_ascii_alphabetic) && c.contains(&letter)
                        }))
            } else {
                t == flag
            }
        })
    }

    /// Any of the options is present.
    pub(crate) fn has_any(&self, flags: Names<'_>) -> bool {
        flags.iter_bytes().any(|f| self.has_bytes(f))
    }

    /// The value of an option given as a separate word (`-o x`, `--out x`).
    pub(crate) fn value(&self, flags: Names<'_>) -> Option<&'a Word> {
        self.value_where(|t| flags.contains(t))
    }

    /// [`Invocation::value`] of one option.
    pub(crate) fn value_of(&self, flag: &str) -> Option<&'a Word> {
        self.value_where(|t| t == flag)
    }

    fn value_where(&self, is_flag: impl Fn(&str) -> bool) -> Option<&'a Word> {
        let mut iter = self.args.iter().peekable();
        while let Some(word) = iter.next() {
            if is_flag(&word.text) {
                return iter.peek().copied();
            }
        }
        None
    }

    /// Values of options given in the attached forms (`--out=x`, `-ox`) as synthetic words.
    pub(crate) fn attached_value(&self, flags: Names<'_>) -> Option<Word> {
        self.args.iter().find_map(|word| {
            flags.iter_bytes().find_map(|flag| {
                // Compared as bytes; a whole name's end is a character boundary of the word.
                word.text.as_bytes().strip_prefix(flag)?;
                let after = word.text.get(flag.len()..)?;
                let rest = if flag.starts_with(b"--") {
                    after.strip_prefix('=')
                } else {
                    Some(after).filter(|r| !r.is_empty())
                }?;
                let mut w = word.clone();
                w.text = rest.to_string();
                Some(w)
            })
        })
    }

    /// `value` or `attached_value`.
    pub(crate) fn any_value(&self, flags: Names<'_>) -> Option<Word> {
        self.value(flags)
            .cloned()
            .or_else(|| self.attached_value(flags))
    }
}

type Judge = fn(&Invocation<'_>) -> Classification;

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
}
