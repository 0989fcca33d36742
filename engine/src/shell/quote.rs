//! Shell words as text: [`quote_word`] quotes a word so a shell reads it back as that one word
//! (an argument vector joined into a command line); [`push_word`] and [`push_quoted`] spell a
//! word for the text rules match, quoted only where the shell would need it, a word whose value
//! is unknown as one [`UNRESOLVED`] character. The two differ on purpose: rule text leaves `~`
//! and `^` bare as they were written, a joined argument quotes them.

use super::UNRESOLVED;
use super::is_plain;
use super::lex::{Text, Word};

/// Appends a word as [`push_quoted`] would. A word whose value is unknown becomes one
/// [`UNRESOLVED`] character: a deny rule treats it as "could be anything".
pub fn push_word(out: &mut String, word: &Word) {
    if word.is_literal() {
        push_text(out, &word.text);
    } else {
        out.push(UNRESOLVED);
    }
}

/// [`push_quoted`] of a literal word's text, whose need of quotes was settled when it was made
/// ([`Text::is_plain`]): a word's text is spelled several times.
pub fn push_text(out: &mut String, text: &Text) {
    if text.is_plain() {
        out.push_str(text);
    } else {
        push_quoted(out, text, true);
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
