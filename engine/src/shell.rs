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
    holds_byte(text.as_bytes(), 0xEE) && text.contains(UNRESOLVED)
}

/// `bytes.contains(&byte)`, eight bytes at a time: a byte of `word ^ pattern` is zero exactly
/// where `word` holds `byte`, and `(x - 0x01…) & !x & 0x80…` is non-zero exactly when some byte
/// of `x` is zero. The texts asked are short: the slice's `memchr` cost more in setting up
/// than in reading them.
pub(crate) fn holds_byte(bytes: &[u8], byte: u8) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let pattern = ONES * u64::from(byte);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        if let Ok(array) = <[u8; 8]>::try_from(chunk) {
            let x = u64::from_le_bytes(array) ^ pattern;
            if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
                return true;
            }
        }
    }
    // The last few bytes one by one: `contains` would set up a search for them.
    #[allow(clippy::manual_contains)]
    let found = chunks.remainder().iter().any(|b| *b == byte);
    found
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

/// An ASCII byte that needs no quoting in a rule's text (a byte outside ASCII is not: its
/// character is asked by [`is_plain`]).
pub(crate) fn is_plain_byte(b: u8) -> bool {
    PLAIN_BYTES.get(usize::from(b)).copied().unwrap_or(false)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-bytes-at-once test says what `contains` says, for every byte value at every
    /// position of texts longer than two chunks.
    #[test]
    fn holds_byte_agrees_with_contains() {
        for len in [0, 1, 7, 8, 9, 16, 17] {
            for at in 0..len {
                for value in 0..=255u8 {
                    let mut bytes = vec![b'a'; len];
                    if let Some(b) = bytes.get_mut(at) {
                        *b = value;
                    }
                    for byte in [b'a', 0xEE, b'=', 0, 0x80, 0xFF] {
                        assert_eq!(
                            holds_byte(&bytes, byte),
                            bytes.contains(&byte),
                            "{byte:#x} in {bytes:?}"
                        );
                    }
                }
            }
        }
    }
}
