//! Shell words as text: [`quote_word`] quotes a word so a shell reads it back as that one word
//! (an argument vector joined into a command line); [`push_word`] and [`push_quoted`] spell a
//! word for the text rules match, quoted only where the shell would need it, a word whose value
//! is unknown as one [`UNRESOLVED`] character. The two differ on purpose: rule text leaves `~`
//! and `^` bare as they were written, a joined argument quotes them.

use super::UNRESOLVED;
use super::lex::Word;

/// Appends a word as [`push_quoted`] would. A word whose value is unknown becomes one
/// [`UNRESOLVED`] character: a deny rule treats it as "could be anything".
pub fn push_word(out: &mut String, word: &Word) {
    if word.is_literal() {
        push_quoted(out, &word.text, true);
    } else {
        out.push(UNRESOLVED);
    }
}

/// Appends a literal word, quoted if it holds spaces or shell syntax, so `git 'status; rm -rf x'`
/// never reads as `git status; rm -rf x` to a rule. Unknown words keep their written form.
pub fn push_quoted(out: &mut String, text: &str, literal: bool) {
    if !literal || is_plain(text) {
        out.push_str(text);
    } else {
        out.push('\'');
        for (i, piece) in text.split('\'').enumerate() {
            if i > 0 {
                out.push_str("'\\''");
            }
            out.push_str(piece);
        }
        out.push('\'');
    }
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

/// Needs no quoting for a rule's text: letters and digits (any script) and `-_./=:@%+,^~`.
/// Asked of the bytes first, by table (every word of every command is asked, three times).
fn is_plain(text: &str) -> bool {
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

/// `word` as a shell must be given it to read it back as that one word: bare when it is only
/// ASCII letters, digits and `-_./=:@%+,`, else in single quotes (a `'` inside as `'\''`).
pub fn quote_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::lex::{Token, lex};
    use super::*;

    /// A quoted word reads back, through the tokenizer, as exactly that one word.
    #[test]
    fn a_quoted_word_reads_back_as_itself() {
        for word in [
            "plain",
            "",
            "two words",
            "it's",
            "~",
            "$HOME",
            "a;b",
            "`x`",
            "*.rs",
            "é",
            "-x=1,2",
        ] {
            let quoted = quote_word(word);
            let words: Vec<String> = lex(&quoted)
                .tokens
                .into_iter()
                .filter_map(|t| match t {
                    Token::Word(w) => Some(w.text.into_string()),
                    _ => None,
                })
                .collect();
            assert_eq!(words, vec![word.to_string()], "{word} quoted as {quoted}");
        }
        assert_eq!(quote_word("src/main.rs"), "src/main.rs");
        assert_eq!(quote_word("~"), "'~'");
    }
}
