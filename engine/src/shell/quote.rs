//! Shell words as text a rule matches: a literal word quoted only where the shell would need it,
//! a word whose value is unknown as one [`super::UNRESOLVED`] character.

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
    let plain = || {
        !text.is_empty()
            && text.chars().all(|c| {
                c.is_alphanumeric()
                    || matches!(
                        c,
                        '-' | '_' | '.' | '/' | '=' | ':' | '@' | '%' | '+' | ',' | '^' | '~'
                    )
            })
    };
    if !literal || plain() {
        out.push_str(text);
    } else {
        out.push('\'');
        out.push_str(&text.replace('\'', "'\\''"));
        out.push('\'');
    }
}
