//! What the knowledge tables say about one program invocation: the invocation as the tables see
//! it (the program, its words, `git -c` keys) with the helpers entries read options through, and
//! the classification an entry returns. Below the families and the index; knows no program.

use crate::model::{Access, Blast, Capability, Exposure, Reach, Reversibility, Scale};
use crate::shell::lex::Word;
use crate::static_index::Names;

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
    /// It follows symbolic links while it walks (`grep -R`, `rg -L`, `find -L`): the links
    /// below a directory it walks lead to targets too.
    pub follows_links: bool,
    /// It writes through the symbolic links below the directories it writes: a recursive copy
    /// overwrites an existing file of its destination tree through a link there (GNU `cp -r`
    /// opens an existing destination file, link or not), `rsync -K` writes into a linked
    /// directory. The links below a written directory lead to written targets too.
    pub writes_through_links: bool,
    /// Its written path may be a directory its read paths are copied into by name (`cp a.md
    /// docs` writes `docs/a.md`, through a link if that is one).
    pub copies_into: bool,
    /// Names it writes into its written directories, names it picks itself (`curl -O
    /// https://x/a.tgz` writes `a.tgz` in the working directory, through a link if that is
    /// one): each a name or a glob of names in the directory (`*`: any name there, one the
    /// engine cannot know, such as a server's).
    pub lands: Vec<String>,
    /// Its glob words are matched by the program itself in a way the caller's disk expansion
    /// does not cover (a structured Grep's negated `glob` filter, `!*.py`): they are placed by
    /// their text, never expanded on the caller's disk.
    pub program_globs: bool,
    /// It installs something that runs later (cron, services, login items).
    pub persistence: bool,
    /// The code it runs is not in a file the engine could place (inline code, editor and pager
    /// commands, plugins or toolchains named by an option): the unread-code floor.
    pub unread_code: bool,
    /// Bit `i`: argument `i` is a pattern the program matches lines or names against (grep's
    /// first operand, find's `-name` value), not a path it opens: never a target, and
    /// `<pattern>` in the signature. Arguments past the 64th are never marked.
    pub patterns: u64,
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
            follows_links: false,
            writes_through_links: false,
            copies_into: false,
            lands: Vec::new(),
            program_globs: false,
            persistence: false,
            unread_code: false,
            patterns: 0,
        }
    }

    /// Not understood: the engine cannot tell what this will do.
    pub fn opaque(capability: Capability, why: &str) -> Classification {
        let mut j = Classification::new(capability);
        j.opaque = Some(why.to_string());
        j
    }

    /// Runs code the engine cannot read: opaque, and a floor no evidence unlocks.
    pub fn unread(capability: Capability, why: &str) -> Classification {
        let mut j = Classification::opaque(capability, why);
        j.unread_code = true;
        j
    }

    /// Marks an existing judgement as running code the engine cannot read.
    pub(crate) fn runs_unread(mut self, why: &str) -> Classification {
        if self.opaque.is_none() {
            self.opaque = Some(why.to_string());
        }
        self.unread_code = true;
        self
    }

    /// Marks `words` (arguments of `inv`) as patterns, not paths.
    pub(crate) fn with_patterns<'w>(
        mut self,
        inv: &Invocation<'_>,
        words: impl IntoIterator<Item = &'w Word>,
    ) -> Classification {
        for word in words {
            if let Some(at) = inv.args.iter().position(|a| std::ptr::eq(a, word))
                && at < 64
            {
                self.patterns |= 1 << at;
            }
        }
        self
    }

    /// Argument `at` is a pattern.
    pub fn is_pattern(&self, at: usize) -> bool {
        at < 64 && self.patterns & (1 << at) != 0
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

    /// It walks following symbolic links ([`Classification::follows_links`]); a walk is
    /// recursive.
    pub(crate) fn following_links(mut self, yes: bool) -> Classification {
        self.follows_links |= yes;
        self.recursive(yes)
    }

    /// It writes through the links below the directories it writes
    /// ([`Classification::writes_through_links`]).
    pub(crate) fn writing_through_links(mut self, yes: bool) -> Classification {
        self.writes_through_links |= yes;
        self
    }

    /// It writes `name` (a name or a glob of names, [`Classification::lands`]) into its
    /// written directories.
    pub(crate) fn landing(mut self, name: String) -> Classification {
        if !self.lands.contains(&name) {
            self.lands.push(name);
        }
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
        positional_words(self.args, is_valued).collect()
    }

    /// The first two positional words (usually a subcommand and its first operand), empty
    /// when absent: found without listing every positional.
    pub(crate) fn first_positionals(&self, valued: Names<'_>) -> (&'a str, &'a str) {
        let mut words = positional_words(self.args, |t| valued.contains(t));
        let sub = words.next().map_or("", |w| w.text.as_str());
        let arg = words.next().map_or("", |w| w.text.as_str());
        (sub, arg)
    }

    /// The first positional word (usually a subcommand), lower-cased.
    pub(crate) fn sub(&self, valued: Names<'_>) -> String {
        positional_words(self.args, |t| valued.contains(t))
            .next()
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
        // An option spelled with `-` is present only in a word that starts with `-`: when no
        // word does (a command without options), those options are not looked for one by one.
        let any_dashed = self.args.iter().any(|w| w.text.starts_with('-'));
        flags
            .iter_bytes()
            .any(|f| (any_dashed || !f.starts_with(b"-")) && self.has_bytes(f))
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
        // A word is compared with every option only when it starts as some option does: with
        // options all spelled with `-` (nearly every list), a word without one is skipped.
        let all_dashed = flags.iter_bytes().all(|f| f.starts_with(b"-"));
        self.args.iter().find_map(|word| {
            if all_dashed && !word.text.starts_with('-') {
                return None;
            }
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
                w.set_text(rest.to_string());
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

/// A table entry's function: judges an invocation of one of its programs.
pub(super) type Judge = fn(&Invocation<'_>) -> Classification;

/// The positional words of `args`, in order, given the options that take a value (the word
/// after one is its value). Everything after `--` is positional.
fn positional_words(
    args: &[Word],
    is_valued: impl Fn(&str) -> bool,
) -> impl Iterator<Item = &Word> {
    let mut skip_next = false;
    let mut rest_positional = false;
    args.iter().filter(move |word| {
        if skip_next {
            skip_next = false;
            return false;
        }
        let t = word.text.as_str();
        if rest_positional || !t.starts_with('-') || t == "-" {
            return true;
        }
        if t == "--" {
            rest_positional = true;
        } else if is_valued(t) {
            skip_next = true;
        }
        false
    })
}
