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

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::model::{Access, Blast, Capability, Exposure, Reach, Reversibility, Scale};
use crate::shell::lex::Word;

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
fn tables() -> [&'static [(&'static [&'static str], Judge)]; 6] {
    [
        files::TABLE,
        vcs::TABLE,
        packages::TABLE,
        cloud::TABLE,
        runtime::TABLE,
        network::TABLE,
    ]
}

/// FNV-1a for the indexes built at start-up: the keys are short, fixed program names, so a
/// keyed (SipHash) hasher buys nothing and costs the hook a visible part of its start.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = hash;
    }
}

/// A map keyed by static names, hashed with [`Fnv`].
pub(crate) type NameMap<V> = HashMap<&'static str, V, std::hash::BuildHasherDefault<Fnv>>;

/// Program name → judge, built once from the tables (later tables win a clash).
fn index() -> &'static NameMap<Judge> {
    static INDEX: OnceLock<NameMap<Judge>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let names: usize = tables()
            .iter()
            .flat_map(|t| t.iter().map(|(names, _)| names.len()))
            .sum();
        let mut map = NameMap::with_capacity_and_hasher(names, Default::default());
        for table in tables() {
            for (names, judge) in table {
                for name in *names {
                    map.insert(*name, *judge);
                }
            }
        }
        map
    })
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
    index().get(program).map(|judge| judge(invocation))
}

/// Every program some table knows, for coverage reports.
pub fn known_programs() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = tables()
        .iter()
        .flat_map(|t| t.iter().flat_map(|(names, _)| names.iter().copied()))
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}
