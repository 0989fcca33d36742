//! Turning the bytes an agent sent into JSON, whatever the transport did to them: a UTF-8 BOM
//! (Cursor on Windows pipes through PowerShell), invalid UTF-8, lone UTF-16 surrogate escapes
//! (Windows and Node hosts), CRLF. What still cannot be read is an error with a reason, never a
//! panic.

use serde_json::Value;

/// The most input the hook reads. A `Write` of a large file arrives whole; past this the call is
/// judged conservatively rather than read into memory.
pub const MAX_INPUT: usize = 64 * 1024 * 1024;

/// Why the input could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadError(pub String);

/// Parses hook input into a JSON object.
pub fn parse(bytes: &[u8]) -> Result<Value, PayloadError> {
    if bytes.len() > MAX_INPUT {
        return Err(PayloadError(format!(
            "the hook input is larger than {} MiB",
            MAX_INPUT / (1024 * 1024)
        )));
    }
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(PayloadError(
            "the hook input is UTF-16, not UTF-8".to_string(),
        ));
    }
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    // Invalid bytes become U+FFFD: a path with them is then unreadable, which the engine treats
    // as not understood, rather than the whole call going unjudged.
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_start_matches('\u{feff}').trim();
    if text.is_empty() {
        return Err(PayloadError("the hook received no input".to_string()));
    }
    let repaired = replace_lone_surrogates(text);
    match serde_json::from_str::<Value>(&repaired) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(PayloadError(
            "the hook input is JSON but not an object".to_string(),
        )),
        Err(e) => Err(PayloadError(format!(
            "the hook input is not valid JSON: {e}"
        ))),
    }
}

/// Replaces `\uD800`–`\uDFFF` escapes that are not a well-formed pair with `\uFFFD`; serde_json
/// rejects the whole document otherwise.
pub fn replace_lone_surrogates(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\u") && !text.contains("\\U") {
        return std::borrow::Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes.get(i).copied().unwrap_or(0);
        if !in_string {
            if b == b'"' {
                in_string = true;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' => {
                let next = bytes.get(i + 1).copied();
                if next == Some(b'u') {
                    let unit = hex4(bytes, i + 2);
                    match unit {
                        Some(high @ 0xD800..=0xDBFF) => {
                            let low = (bytes.get(i + 6) == Some(&b'\\')
                                && bytes.get(i + 7) == Some(&b'u'))
                            .then(|| hex4(bytes, i + 8))
                            .flatten();
                            if matches!(low, Some(0xDC00..=0xDFFF)) {
                                let _ = high;
                                i += 12;
                            } else {
                                out.push_str(text.get(last..i).unwrap_or(""));
                                out.push_str("\\uFFFD");
                                i += 6;
                                last = i;
                            }
                        }
                        Some(0xDC00..=0xDFFF) => {
                            out.push_str(text.get(last..i).unwrap_or(""));
                            out.push_str("\\uFFFD");
                            i += 6;
                            last = i;
                        }
                        _ => i += 2,
                    }
                } else {
                    i += 2;
                }
            }
            _ => i += 1,
        }
    }
    if last == 0 {
        return std::borrow::Cow::Borrowed(text);
    }
    out.push_str(text.get(last..).unwrap_or(""));
    std::borrow::Cow::Owned(out)
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at.checked_add(4)?)?;
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

/// JSON text with every non-ASCII character escaped, so no host's code page can mangle it.
pub fn ascii_json(value: &Value) -> String {
    // Written straight into a buffer (the same bytes as `to_string`, without the formatter's
    // step-by-step growth: a ledger line took ~100 reallocations).
    let mut bytes = Vec::with_capacity(1024);
    let text = match serde_json::to_writer(&mut bytes, value) {
        Ok(()) => String::from_utf8(bytes).unwrap_or_else(|_| value.to_string()),
        Err(_) => value.to_string(),
    };
    if text.is_ascii() {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}
