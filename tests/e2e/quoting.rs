//! One quoting rule: ingest joins a Codex argument vector into the `command` column with its own
//! copy of the engine's `quote_word` (ingest may not depend on the engine), so the two must give
//! the same word for every input, or the engine would read a recorded command differently.

use proptest::prelude::*;

const CASES: &[&str] = &[
    "",
    "plain",
    "src/main.rs",
    "a b",
    "it's",
    "$HOME",
    "*.py",
    "--flag=value",
    "x;y",
    "tab\there",
    "new\nline",
    "ünï",
    "'",
    "\"",
    "back\\slash",
];

#[test]
fn ingest_and_the_engine_quote_every_listed_word_alike() {
    for word in CASES {
        assert_eq!(
            leastgrant_ingest::codex::quote_word(word),
            leastgrant_engine::quote_word(word),
            "{word:?}"
        );
    }
}

proptest! {
    #[test]
    fn ingest_and_the_engine_quote_any_word_alike(word in "\\PC{0,12}") {
        prop_assert_eq!(
            leastgrant_ingest::codex::quote_word(&word),
            leastgrant_engine::quote_word(&word)
        );
    }
}
