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
use crate::static_index::{self, NameIndex};

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
pub struct Judgement {
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

impl Judgement {
    /// A judgement with the capability's default blast radius.
    pub fn new(capability: Capability) -> Judgement {
        Judgement {
            capability,
            blast: capability.default_blast(),
            targets: Vec::new(),
            opaque: None,
            recursive: false,
            persistence: false,
        }
    }

    /// Not understood: the engine cannot tell what this will do.
    pub fn opaque(capability: Capability, why: &str) -> Judgement {
        let mut j = Judgement::new(capability);
        j.opaque = Some(why.to_string());
        j
    }

    pub(crate) fn with_paths<'w>(
        mut self,
        words: impl IntoIterator<Item = &'w Word>,
        access: Access,
    ) -> Judgement {
        self.targets
            .extend(words.into_iter().map(|w| (w.clone(), access)));
        self
    }

    pub(crate) fn reach(mut self, reach: Reach) -> Judgement {
        self.blast.reach = self.blast.reach.max(reach);
        self
    }

    pub(crate) fn reversibility(mut self, r: Reversibility) -> Judgement {
        self.blast.reversibility = self.blast.reversibility.max(r);
        self
    }

    pub(crate) fn exposure(mut self, e: Exposure) -> Judgement {
        self.blast.exposure = self.blast.exposure.max(e);
        self
    }

    pub(crate) fn scale(mut self, s: Scale) -> Judgement {
        self.blast.scale = self.blast.scale.max(s);
        self
    }

    pub(crate) fn recursive(mut self, yes: bool) -> Judgement {
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
    pub fn positionals(&self, valued: &[&str]) -> Vec<&'a Word> {
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
            } else if valued.contains(&t) {
                skip_next = true;
            }
        }
        out
    }

    /// The first positional word (usually a subcommand), lower-cased.
    pub fn sub(&self, valued: &[&str]) -> String {
        self.positionals(valued)
            .first()
            .map(|w| w.text.to_ascii_lowercase())
            .unwrap_or_default()
    }

    /// The option is present, as `--long`, `--long=…`, `-x`, or inside a cluster like `-rf`.
    pub fn has(&self, flag: &str) -> bool {
        self.args.iter().take_while(|w| w.text != "--").any(|w| {
            let t = w.text.as_str();
            if flag.starts_with("--") {
                t.strip_prefix(flag)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
            } else if let Some(letter) = flag.strip_prefix('-').filter(|l| l.len() == 1) {
                t == flag
                    || (t.starts_with('-')
                        && !t.starts_with("--")
                        && t.len() > 2
                        && t.get(1..).is_some_and(|c| {
                            c.chars().all(|ch| ch.is_ascii_alphabetic()) && c.contains(letter)
                        }))
            } else {
                t == flag
            }
        })
    }

    /// Any of the options is present.
    pub fn has_any(&self, flags: &[&str]) -> bool {
        flags.iter().any(|f| self.has(f))
    }

    /// The value of an option (`-o x`, `-ox`, `--out x`, `--out=x`).
    pub fn value(&self, flags: &[&str]) -> Option<&'a Word> {
        let mut iter = self.args.iter().peekable();
        while let Some(word) = iter.next() {
            let t = word.text.as_str();
            for flag in flags {
                if t == *flag {
                    return iter.peek().copied();
                }
            }
        }
        None
    }

    /// Values of options given in the attached forms (`--out=x`, `-ox`) as synthetic words.
    pub fn attached_value(&self, flags: &[&str]) -> Option<Word> {
        self.args.iter().find_map(|word| {
            flags.iter().find_map(|flag| {
                let rest = if flag.starts_with("--") {
                    word.text
                        .strip_prefix(flag)
                        .and_then(|r| r.strip_prefix('='))
                } else {
                    word.text.strip_prefix(flag).filter(|r| !r.is_empty())
                }?;
                let mut w = word.clone();
                w.text = rest.to_string();
                Some(w)
            })
        })
    }

    /// `value` or `attached_value`.
    pub fn any_value(&self, flags: &[&str]) -> Option<Word> {
        self.value(flags)
            .cloned()
            .or_else(|| self.attached_value(flags))
    }
}

type Judge = fn(&Invocation<'_>) -> Judgement;

/// All tables, later families winning a name clash.
const TABLES: [&[(&[&str], Judge)]; 6] = [
    files::TABLE,
    vcs::TABLE,
    packages::TABLE,
    cloud::TABLE,
    runtime::TABLE,
    network::TABLE,
];

/// Where a program name sits in [`TABLES`]: (table, entry, name).
type Slot = (u8, u16, u8);

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

/// Every name and its slot, in table order; exists only while compiling.
#[allow(clippy::indexing_slicing)] // compile time only
const NAMES: ([&str; NAME_COUNT], [Slot; NAME_COUNT]) = {
    let mut names = [""; NAME_COUNT];
    let mut slots = [(0u8, 0u16, 0u8); NAME_COUNT];
    let (mut at, mut t) = (0, 0);
    while t < TABLES.len() {
        let mut e = 0;
        while e < TABLES[t].len() {
            let mut n = 0;
            while n < TABLES[t][e].0.len() {
                names[at] = TABLES[t][e].0[n];
                slots[at] = (t as u8, e as u16, n as u8);
                at += 1;
                n += 1;
            }
            e += 1;
        }
        t += 1;
    }
    (names, slots)
};

/// Every name's slot, in table order.
static SLOTS: [Slot; NAME_COUNT] = NAMES.1;

/// Program names hashed at compile time into positions of [`SLOTS`]; a name in several entries
/// keeps them in table order, so the last is the one that wins.
static BY_NAME: NameIndex<{ static_index::slots_for(NAME_COUNT) }> = NameIndex::of(&NAMES.0);

fn entry_at(slot: &Slot) -> Option<&'static (&'static [&'static str], Judge)> {
    TABLES.get(usize::from(slot.0))?.get(usize::from(slot.1))
}

fn name_at(slot: &Slot) -> Option<&'static str> {
    entry_at(slot)?.0.get(usize::from(slot.2)).copied()
}

/// Where a program name's judge sits, the later table winning a clash.
fn slot_of(program: &str) -> Option<&'static Slot> {
    let position = BY_NAME
        .positions(program, |p| SLOTS.get(p).and_then(name_at))
        .last()?;
    SLOTS.get(position)
}

/// Judges an invocation; `None` when no table knows the program.
pub fn judge(invocation: &Invocation<'_>) -> Option<Judgement> {
    let lowered;
    let mut program = invocation.program;
    if program.bytes().any(|b| b.is_ascii_uppercase()) {
        lowered = program.to_ascii_lowercase();
        program = &lowered;
    }
    let program = program.strip_suffix(".exe").unwrap_or(program);
    let (_, judge) = entry_at(slot_of(program)?)?;
    Some(judge(invocation))
}

/// Every program some table knows, for coverage reports.
pub fn known_programs() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = TABLES
        .iter()
        .flat_map(|t| t.iter().flat_map(|(names, _)| names.iter().copied()))
        .collect();
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
        let mut expected: std::collections::HashMap<&str, Slot> = Default::default();
        for (t, table) in TABLES.iter().enumerate() {
            for (e, (names, _)) in table.iter().enumerate() {
                for (n, name) in names.iter().enumerate() {
                    let slot = (t as u8, e as u16, n as u8);
                    expected.insert(name, slot);
                }
            }
        }
        assert_eq!(expected.len(), known_programs().len());
        for (name, slot) in &expected {
            assert_eq!(slot_of(name), Some(slot), "{name}");
        }
        for absent in ["", "gitx", "gi", "zzzz", "npm ", "Git"] {
            assert_eq!(slot_of(absent), None, "{absent}");
        }
    }
}
