//! Shell analysis: from a command line to the effective commands that would run.
//!
//! Four stages, each pessimistic: [`lex`] tokenizes with POSIX quoting, [`parse`] turns tokens
//! into a flat inventory of simple commands (descending into substitutions and compound bodies),
//! [`unwrap`] peels wrappers (`sudo`, `env`, `sh -c`, `xargs`, …) down to the program that
//! really runs, and [`script`] flattens a script's commands into those effective commands.
//! Anything a stage cannot account for is recorded as a problem, never guessed.

pub(crate) mod lex;
pub(crate) mod parse;
pub(crate) mod quote;
pub(crate) mod script;
pub(crate) mod unwrap;

/// Stands for a value the analysis cannot know (an unset variable, a substitution's output).
/// A private-use character, so it cannot collide with real text.
pub const UNRESOLVED: char = '\u{E000}';

/// `text` holds [`UNRESOLVED`]: `text.contains(UNRESOLVED)`, asked first of the bytes. Every
/// word is asked this many times, and a search for a character outside ASCII goes through the
/// substring searcher; `0xEE` (the lead byte of U+E000 to U+EFFF) is in no ASCII text.
pub(crate) fn holds_unresolved(text: &str) -> bool {
    // `contains` on bytes is the word-at-a-time `memchr`, not a loop per byte.
    text.as_bytes().contains(&0xEE) && text.contains(UNRESOLVED)
}

/// How deep substitutions and nested shells may go before the analysis gives up.
pub const MAX_DEPTH: usize = 8;
