//! Differential: rule containment against brute-force matching. Two patterns (each a kind —
//! text, command, path or shell glob, a command prefix, a literal — and a specifier from the
//! input); whatever containment, escape and overlap claim is checked against matching every
//! string of up to four characters over the patterns' own characters and a few others:
//! `within` never holds where a string matches the first and not the second, a witness is
//! what it says it is, and "no overlap" is never refuted by a string both match.
#![no_main]

use leastgrant_engine::{GlobKind, Pattern};
use libfuzzer_sys::fuzz_target;

fn pattern(kind: u8, text: &str) -> Pattern {
    match kind % 6 {
        0 => Pattern::glob(text, GlobKind::Text),
        1 => Pattern::glob(text, GlobKind::Command),
        2 => Pattern::glob(text, GlobKind::Path),
        3 => Pattern::glob(text, GlobKind::ShellGlob),
        4 => Pattern::command_prefix(text),
        _ => Pattern::literal(text),
    }
}

/// Every string of up to `max` characters over `alphabet`.
fn strings(alphabet: &[char], max: usize) -> Vec<String> {
    let mut all = vec![String::new()];
    let mut layer = vec![String::new()];
    for _ in 0..max {
        let mut next = Vec::with_capacity(layer.len() * alphabet.len());
        for s in &layer {
            for c in alphabet {
                let mut t = s.clone();
                t.push(*c);
                next.push(t);
            }
        }
        all.extend(next.iter().cloned());
        layer = next;
    }
    all
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 || data.len() > 64 {
        return;
    }
    let (kinds, rest) = data.split_at(1);
    let text = String::from_utf8_lossy(rest);
    let (a_text, b_text) = text.split_once('\u{0}').unwrap_or((&text, "*"));
    let a = pattern(kinds[0] & 7, a_text);
    let b = pattern(kinds[0] >> 3, b_text);
    if a.too_complex() || b.too_complex() {
        return;
    }
    // The alphabet: the specifiers' own characters (glob syntax included), then separators and
    // a letter neither uses.
    let mut alphabet: Vec<char> = Vec::new();
    for c in a_text
        .chars()
        .chain(b_text.chars())
        .chain(['/', ' ', 'q', '.'])
    {
        if !alphabet.contains(&c) && alphabet.len() < 7 {
            alphabet.push(c);
        }
    }
    let max = if alphabet.len() > 5 { 3 } else { 4 };
    let mut candidates = strings(&alphabet, max);
    candidates.push(a_text.to_string());
    candidates.push(b_text.to_string());
    let within = a.within(&b);
    let escape = a.escapes(&b);
    let overlap = a.overlap(&b);
    // `within` is exactly "no escape found".
    assert_eq!(
        within,
        escape.is_none(),
        "within and escapes disagree: {a_text:?} {b_text:?}"
    );
    if let Some(w) = escape.as_deref().filter(|w| !w.is_empty()) {
        assert!(
            a.matches(w) && !b.matches(w),
            "escape witness {w:?} is not one: {a_text:?} ⊄ {b_text:?}"
        );
    }
    if let Some(w) = overlap.as_deref().filter(|w| !w.is_empty()) {
        assert!(
            a.matches(w) && b.matches(w),
            "overlap witness {w:?} is not one: {a_text:?} ∩ {b_text:?}"
        );
    }
    for s in &candidates {
        let (in_a, in_b) = (a.matches(s), b.matches(s));
        if within {
            assert!(
                !in_a || in_b,
                "{a_text:?} ⊆ {b_text:?} claimed, but {s:?} matches only the first"
            );
        }
        if overlap.is_none() {
            assert!(
                !(in_a && in_b),
                "no overlap claimed between {a_text:?} and {b_text:?}, but both match {s:?}"
            );
        }
    }
});
