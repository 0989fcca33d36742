//! JSON with comments, as Gemini CLI reads its `settings.json`: `//` line comments, `/* */`
//! block comments and trailing commas before `}` or `]`. [`plain`] turns such text into plain
//! JSON for serde_json and the order-keeping reader, blanking what it drops so that an error's
//! line and column still point into the file as written. Text inside strings is never touched
//! (`"https://example.com"` holds no comment). Must not: accept anything else that is not JSON
//! (single quotes, bare keys, a comma with no value before it); the parsers after it judge that.

/// `text` as plain JSON: `None` when it has no comment and no trailing comma (the text is
/// plain already), else the text with every comment and trailing comma turned into blanks
/// (line breaks inside a block comment kept). A block comment that is never closed is left as
/// it is, for the JSON parser to refuse.
pub fn plain(text: &str) -> Option<String> {
    let uncommented = without_comments(text);
    let source = uncommented.as_deref().unwrap_or(text);
    match without_trailing_commas(source) {
        Some(done) => Some(done),
        None => uncommented,
    }
}

/// Steps over a string starting at `bytes[at]` (a `"`), copying it to `out`; returns the index
/// after its closing quote (or the end, for a string never closed).
fn copy_string(bytes: &[u8], mut at: usize, out: &mut Vec<u8>) -> usize {
    out.push(b'"');
    at += 1;
    while let Some(&b) = bytes.get(at) {
        out.push(b);
        at += 1;
        match b {
            b'\\' => {
                if let Some(&escaped) = bytes.get(at) {
                    out.push(escaped);
                    at += 1;
                }
            }
            b'"' => break,
            _ => {}
        }
    }
    at
}

/// A blank for a byte that is dropped: line breaks stay, everything else becomes a space.
fn blank(b: u8) -> u8 {
    if b == b'\n' || b == b'\r' { b } else { b' ' }
}

fn without_comments(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut changed = false;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match (b, bytes.get(at + 1).copied()) {
            (b'"', _) => at = copy_string(bytes, at, &mut out),
            (b'/', Some(b'/')) => {
                while let Some(&c) = bytes.get(at).filter(|c| **c != b'\n') {
                    out.push(blank(c));
                    at += 1;
                }
                changed = true;
            }
            (b'/', Some(b'*')) => {
                let Some(close) = find(bytes, at + 2, b"*/") else {
                    // Never closed: left for the parser to refuse.
                    out.extend_from_slice(bytes.get(at..).unwrap_or_default());
                    break;
                };
                let end = close + 2;
                out.extend(
                    bytes
                        .get(at..end)
                        .unwrap_or_default()
                        .iter()
                        .map(|c| blank(*c)),
                );
                at = end;
                changed = true;
            }
            _ => {
                out.push(b);
                at += 1;
            }
        }
    }
    // Only ASCII bytes were replaced, each by an ASCII byte, and whole comments at once.
    changed.then(|| String::from_utf8(out).ok()).flatten()
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// `text` (without comments) with each comma that follows a value and precedes a `}` or `]`
/// blanked; `None` when there is none.
fn without_trailing_commas(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut changed = false;
    // The last byte written that is not white space: a comma after `[`, `{` or `,` follows no
    // value and is left for the parser to refuse.
    let mut last = None;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        if b == b'"' {
            at = copy_string(bytes, at, &mut out);
            last = Some(b'"');
            continue;
        }
        if b == b',' && !matches!(last, Some(b'[' | b'{' | b',') | None) {
            let next = bytes
                .get(at + 1..)
                .and_then(|rest| rest.iter().find(|c| !c.is_ascii_whitespace()));
            if matches!(next, Some(b'}' | b']')) {
                out.push(b' ');
                at += 1;
                changed = true;
                continue;
            }
        }
        if !b.is_ascii_whitespace() {
            last = Some(b);
        }
        out.push(b);
        at += 1;
    }
    changed.then(|| String::from_utf8(out).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::plain;

    fn parse(text: &str) -> serde_json::Value {
        serde_json::from_str(&plain(text).unwrap_or_else(|| text.to_string())).unwrap()
    }

    #[test]
    fn plain_json_is_left_alone() {
        assert_eq!(plain(r#"{"a": [1, 2], "b": "x"}"#), None);
        assert_eq!(plain(r#"{"url": "https://example.com/*x*/"}"#), None);
    }

    #[test]
    fn comments_and_trailing_commas_go_and_strings_stay() {
        let text = "{\n  // a line comment\n  \"url\": \"https://example.com//x\", /* a\n block */\n  \"q\": \"a \\\" // b\",\n  \"list\": [1, 2,],\n}\n";
        assert_eq!(
            parse(text),
            serde_json::json!({"url": "https://example.com//x", "q": "a \" // b", "list": [1, 2]})
        );
        // Blanked, not removed: the same length, the same lines.
        let done = plain(text).unwrap();
        assert_eq!(done.len(), text.len());
        assert_eq!(done.lines().count(), text.lines().count());
    }

    #[test]
    fn a_comma_that_follows_no_value_and_an_open_comment_are_refused() {
        for text in ["[,]", "{,}", "[1,,]", "{\"a\": 1 /* open"] {
            let done = plain(text).unwrap_or_else(|| text.to_string());
            assert!(
                serde_json::from_str::<serde_json::Value>(&done).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_comment_at_the_end_without_a_line_break_and_non_ascii_inside() {
        assert_eq!(
            parse("{\"a\": \"é\"} // fin — ✓"),
            serde_json::json!({"a": "é"})
        );
        assert_eq!(parse("[1 /* ü */, 2]"), serde_json::json!([1, 2]));
    }
}
