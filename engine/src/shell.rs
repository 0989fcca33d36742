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

/// Which bytes need no quoting in a rule's text: ASCII letters, digits and `-_./=:@%+,^~`
/// (bytes of other characters are 0: those are asked of the character).
#[allow(clippy::indexing_slicing)] // compile time only
static PLAIN_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0u8;
    while b < 128 {
        table[b as usize] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'/' | b'=' | b':' | b'@' | b'%' | b'+' | b',' | b'^' | b'~'
            );
        b += 1;
    }
    table
};

/// Needs no quoting for a rule's text (`quote::push_quoted`): letters and digits (any script)
/// and `-_./=:@%+,^~`. Asked of the bytes first, by table; a lexed word's text is asked once,
/// when it is made (`lex::Text`), and spelled several times.
pub(crate) fn is_plain(text: &str) -> bool {
    let plain_byte = |b: u8| PLAIN_BYTES.get(usize::from(b)).copied().unwrap_or(false);
    if text.is_empty() {
        return false;
    }
    // One pass over the bytes: a byte outside ASCII (0 in the table) sends the word to the
    // test by character.
    if text.bytes().all(plain_byte) {
        return true;
    }
    if text.is_ascii() {
        return false;
    }
    text.chars().all(|c| {
        if c.is_ascii() {
            plain_byte(c as u8)
        } else {
            c.is_alphanumeric()
        }
    })
}

/// How deep substitutions and nested shells may go before the analysis gives up.
pub const MAX_DEPTH: usize = 8;
