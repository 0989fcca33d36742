//! The parts of a SpecStory tool-use block's body, and the HTML character references its text
//! carries: what the block parser fills in and the input recovery reads.
//!
//! Must not: parse blocks or recover inputs (the modules above it do).

use serde_json::{Map, Value};

/// A block's body read into the parts SpecStory renders.
#[derive(Default)]
pub(super) struct Body {
    /// The input's text lines, raw, blank ones left out.
    pub(super) text: Vec<String>,
    /// The input's code fences: info string and raw content.
    pub(super) fences: Vec<(String, String)>,
    /// A generic `**Input:**` list (`- key: `value``) or a `Parameters:` JSON object.
    pub(super) fields: Map<String, Value>,
    /// The result, raw.
    pub(super) result: Option<String>,
    /// The result sat under an `**Error:**` label.
    pub(super) labelled_error: bool,
    /// The result's fence was never closed.
    pub(super) unclosed_result: bool,
}

/// Decodes HTML character references (`&lt;` `&gt;` `&amp;` `&quot;` `&#39;` `&#96;`, any
/// `&#N;` / `&#xH;`) in one pass, so `&amp;lt;` stays `&lt;`.
pub(super) fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(rest.get(..at).unwrap_or(""));
        let tail = rest.get(at..).unwrap_or("");
        let decoded = tail
            .get(1..)
            .and_then(|t| t.split_once(';'))
            .and_then(|(name, _)| {
                let ch = match name {
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "amp" => Some('&'),
                    "quot" => Some('"'),
                    "apos" => Some('\''),
                    _ => {
                        let number = name.strip_prefix('#')?;
                        let code = match number.strip_prefix(['x', 'X']) {
                            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                            None => number.parse().ok()?,
                        };
                        char::from_u32(code)
                    }
                }?;
                Some((ch, name.len() + 2))
            });
        match decoded {
            Some((ch, consumed)) => {
                out.push(ch);
                rest = tail.get(consumed..).unwrap_or("");
            }
            None => {
                out.push('&');
                rest = tail.get(1..).unwrap_or("");
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_decode_once() {
        assert_eq!(
            decode_entities("a &lt;b&gt; &amp;lt; &#39;&#96;&#x41; &nope; &"),
            "a <b> &lt; '`A &nope; &"
        );
    }
}
