//! Credential-shaped tokens: what a service's token, an `Authorization:` header, a `token=`-style
//! assignment or a long random string looks like, and the marker that names its kind. Shared by
//! the signature (which redacts them), the spelling of a command and the URL checks of `net`
//! (a query value shaped like a token is a credential in the URL).
//!
//! Must not: know about commands, paths or signatures.

/// What the tokens of well-known services start with.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xapp-",
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "pk_live_",
    "AKIA",
    "ASIA",
    "AIza",
    "ya29.",
    "npm_",
    "pypi-",
    "hf_",
    "shpat_",
    "eyJ",
];

/// A credential-shaped token, replaced by a marker that names what kind it was.
pub fn redact_token(text: &str) -> Option<&'static str> {
    // The last `=`, found once: whether there is one, and the value after it.
    redact_token_at(text, text.rfind('='))
}

/// [`redact_token`] of a text whose last `=` is at `last_equals` (found by the caller).
pub(crate) fn redact_token_at(text: &str, last_equals: Option<usize>) -> Option<&'static str> {
    const PREFIXES: &[&str] = TOKEN_PREFIXES;
    let has_assignment = last_equals.is_some();
    // Too short for a token prefix (16), a header (15) or a random string (32), and no `=`.
    if text.len() < 15 && !has_assignment {
        return None;
    }
    let value = last_equals
        .and_then(|at| text.get(at + 1..))
        .unwrap_or(text);
    let value = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .unwrap_or(value);
    let long_enough = value.len() >= 16;
    // The first byte is asked of a set before any prefix is compared: most values start like
    // no token (a path's `/`, a flag's `-`).
    #[allow(clippy::indexing_slicing)] // compile time only
    const FIRST_BYTES: u128 = {
        let mut set = 0u128;
        let mut i = 0;
        while i < PREFIXES.len() {
            let b = PREFIXES[i].as_bytes()[0];
            assert!(b < 128, "token prefixes start with an ASCII byte");
            set |= 1 << b;
            i += 1;
        }
        set
    };
    let first = value.as_bytes().first();
    let may_start_token = first.is_some_and(|&b| b < 128 && (FIRST_BYTES >> b) & 1 == 1);
    if long_enough
        && may_start_token
        && PREFIXES
            .iter()
            .any(|p| p.as_bytes().first() == first && value.starts_with(p))
    {
        return Some("«redacted:token»");
    }
    let header = text.len() > 14
        && text
            .get(..14)
            .is_some_and(|h| h.eq_ignore_ascii_case("authorization:"));
    if !header && !has_assignment {
        return long_random(value);
    }
    if (header || names_credential_before_equals(text)) && value.len() >= 6 {
        return Some("«redacted:credential»");
    }
    long_random(value)
}

/// Some `=` in `text` follows `token`, `password`, `secret`, `api_key` or `apikey`, compared
/// without case: what `text.to_ascii_lowercase()` containing `token=` (or the others) says,
/// without the lower-cased copy or a substring search per name.
fn names_credential_before_equals(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(at, &b)| {
        b == b'='
            && ["token", "password", "secret", "api_key", "apikey"]
                .iter()
                .any(|name| {
                    at.checked_sub(name.len())
                        .and_then(|start| bytes.get(start..at))
                        .is_some_and(|before| before.eq_ignore_ascii_case(name.as_bytes()))
                })
    })
}

/// Long random-looking strings: mixed case letters and digits, no separators.
fn long_random(value: &str) -> Option<&'static str> {
    // A `.` is no byte of such a string, and most long words (paths, hosts) have one: asked
    // first with the slice's `memchr`, it settles them without the loop below.
    if value.len() < 32 || value.as_bytes().contains(&b'.') {
        return None;
    }
    let (mut digit, mut upper, mut lower) = (false, false, false);
    for b in value.bytes() {
        match b {
            b'0'..=b'9' => digit = true,
            b'A'..=b'Z' => upper = true,
            b'a'..=b'z' => lower = true,
            b'+' | b'/' | b'=' | b'_' | b'-' => {}
            _ => return None,
        }
    }
    (digit && upper && lower).then_some("«redacted:token»")
}
