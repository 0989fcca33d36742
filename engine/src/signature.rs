//! Signatures: the identity learning is keyed on.
//!
//! Built from the parsed, unwrapped argv one token at a time, never from the raw string:
//! volatile parts become typed placeholders (`<path>`, `<path:secret>`, `<url:host>`, `<sha>`,
//! `<n>`, `<text>`, …), flags are sorted, and what changes risk survives (redirect targets,
//! `git -c` keys, execution-changing assignments, privilege). Secrets are redacted.

pub(crate) mod precision;

use std::borrow::Cow;

use crate::model::{Placement, Zone};
use crate::net::{self, Reaches};
use crate::paths::{Roots, UNRESOLVED_PLACEMENT, is_container_socket, place, resolve_in};
use crate::shell::UNRESOLVED;
use crate::shell::lex::Word;
use crate::tokens::{redact_token, redact_token_at};

/// The placeholder for a placed path.
/// (A constant: signatures take it without a copy.)
pub fn path_placeholder(placement: &Placement) -> &'static str {
    if placement.own_state {
        return "<path:state>";
    }
    match placement.zone {
        Zone::Unresolved => "<path:unresolved>",
        _ if placement.secret => "<path:secret>",
        _ if placement.privileged => "<path:privileged>",
        _ if placement.persistence => "<path:persistence>",
        _ if placement.control => "<path:control>",
        Zone::Workspace => "<path>",
        Zone::CredentialTree => "<path:outside:credential-tree>",
        Zone::Etc => "<path:outside:etc>",
        Zone::System => "<path:outside:system>",
        Zone::Runtime => "<path:outside:runtime>",
        Zone::Temp => "<path:outside:temp>",
        Zone::Home => "<path:outside:home>",
        Zone::Other => "<path:outside:other>",
    }
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit())
}

fn is_uuid(s: &str) -> bool {
    // 8-4-4-4-12: 36 bytes, asked before splitting (every argument is asked).
    if s.len() != 36 {
        return false;
    }
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts.iter().all(|p| is_hex(p))
}

fn is_version(s: &str) -> bool {
    let body = s.strip_prefix('v').unwrap_or(s);
    let mut parts = body.split(['.', '-', '+']);
    let first_numeric = parts
        .next()
        .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    first_numeric
        && body.contains('.')
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c))
}

/// A token that looks like a file path rather than a word.
pub fn looks_like_path(s: &str) -> bool {
    if s.is_empty() || s.starts_with('-') {
        return false;
    }
    if matches!(s.as_bytes().first(), Some(b'~' | b'.')) {
        // (`.` and `..` among them.)
        return true;
    }
    // One pass over the bytes: any `/`, else the last `.` (where `rsplit_once('.')` splits).
    // Eight bytes at a time: `!(((x & 0x7f…) + 0x7f…) | x | 0x7f…)` has the high bit set of
    // exactly the bytes of `x` that are zero, so of `word ^ pattern` where `word` has the
    // pattern's byte.
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let bytes_equal = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        !(((x & LOWS) + LOWS) | x | LOWS)
    };
    let bytes = s.as_bytes();
    let mut last_dot = None;
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        if let Ok(array) = <[u8; 8]>::try_from(chunk) {
            let word = u64::from_le_bytes(array);
            if bytes_equal(word, b'/') != 0 {
                return true;
            }
            let dots = bytes_equal(word, b'.');
            if dots != 0 {
                last_dot = Some(base + (63 - dots.leading_zeros() as usize) / 8);
            }
        }
        base += 8;
    }
    for (at, b) in chunks.remainder().iter().enumerate() {
        match b {
            b'/' => return true,
            b'.' => last_dot = Some(base + at),
            _ => {}
        }
    }
    last_dot
        .and_then(|at| Some((s.get(..at)?, s.get(at + 1..)?)))
        .is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        })
}

/// A JSON object or array written as one word (`{"a": 1}`, `[{"id":2}]`): braces or brackets
/// at both ends and a key or string inside (a brace expansion `{a,b}` has neither).
pub fn looks_like_json(s: &str) -> bool {
    let bracketed =
        (s.starts_with('{') && s.ends_with('}')) || (s.starts_with('[') && s.ends_with(']'));
    bracketed && s.len() > 2 && (s.contains('"') || s.contains(':'))
}

const SQL_VERBS: &[&str] = &[
    "select", "insert", "update", "delete", "drop", "truncate", "alter", "create", "grant",
    "revoke", "copy", "call", "do", "merge", "vacuum", "reindex", "attach", "pragma", "with",
    "explain", "show", "describe",
];

/// Normalises one argument.
pub fn normalize_arg(text: &str, cwd: Option<&str>, roots: &Roots) -> String {
    Normalizer::new(cwd, roots).arg(text).into_owned()
}

/// Normalises the arguments of one action, placing each distinct path once: the same words are
/// both targets and signature parts, and placement is the costly step.
pub struct Normalizer<'a> {
    /// The arguments belong to a network client: a bare `host/path` is an address, not a file.
    pub network: bool,
    /// What the words normalised so far reach: the metadata service, credentials in a URL, a
    /// container runtime's socket. The caller marks the action's flags with it.
    pub reaches: Reaches,
    cwd: Option<&'a str>,
    /// `cwd` is known to be normal (`paths::resolve_in`).
    pub(crate) cwd_normal: bool,
    roots: &'a Roots,
    placed: Vec<(String, Option<String>, Placement)>,
}

impl<'a> Normalizer<'a> {
    /// A normaliser for paths relative to `cwd`.
    pub fn new(cwd: Option<&'a str>, roots: &'a Roots) -> Normalizer<'a> {
        Normalizer {
            network: false,
            reaches: Reaches::default(),
            cwd,
            cwd_normal: false,
            roots,
            placed: Vec::new(),
        }
    }

    /// The roots paths are placed against.
    pub fn roots(&self) -> &'a Roots {
        self.roots
    }

    /// Resolves and places `raw`, once per distinct text.
    pub fn place(&mut self, raw: &str) -> (Option<String>, Placement) {
        let index = self.index_of(raw);
        self.placed
            .get(index)
            .map_or((None, UNRESOLVED_PLACEMENT), |(_, resolved, placement)| {
                (resolved.clone(), *placement)
            })
    }

    /// `raw` resolved (as [`Normalizer::place`] gives it), borrowed from the cache.
    pub fn resolved(&mut self, raw: &str) -> Option<&str> {
        let index = self.index_of(raw);
        self.placed
            .get(index)
            .and_then(|(_, resolved, _)| resolved.as_deref())
    }

    /// Where `raw` lies, without copying its resolved path.
    pub fn placement(&mut self, raw: &str) -> Placement {
        let index = self.index_of(raw);
        let placement = self
            .placed
            .get(index)
            .map_or(UNRESOLVED_PLACEMENT, |(_, _, placement)| *placement);
        self.reaches.container_socket |= placement.privileged;
        placement
    }

    /// Normalises an assignment's value; a variable that points a container client at a daemon
    /// reaches that daemon's API, whatever it names.
    pub fn assignment(&mut self, name: &str, value: &str) -> String {
        if net::CONTAINER_HOST_VARIABLES.contains(&name) {
            self.reaches.container_socket = true;
        }
        format!("{name}={}", self.arg(value))
    }

    /// A URL's placeholder: `<url:metadata>` for the metadata service in any spelling,
    /// `<url:HOST:credentials>` when it carries credentials (never templated away with the
    /// rest), `<socket:…>` for a `unix://` socket, else `<url:HOST>`.
    fn url(&mut self, text: &str) -> Option<String> {
        let url = net::split_url(text)?;
        if net::url_reaches_metadata(&url) {
            self.reaches.metadata = true;
            return Some("<url:metadata>".to_string());
        }
        let scheme = url.scheme.to_ascii_lowercase();
        let host = url.host.to_ascii_lowercase();
        // `unix:///var/run/docker.sock`, `npipe:////./pipe/docker_engine`,
        // `http+unix://%2Fvar%2Frun%2Fdocker.sock/info`.
        let socket = if scheme == "unix" || scheme == "npipe" {
            Some(url.rest)
        } else if scheme.ends_with("+unix") {
            Some(url.host)
        } else {
            None
        };
        if let Some(socket) = socket {
            let decoded = crate::paths::percent_decode(socket);
            if is_container_socket(&decoded) {
                self.reaches.container_socket = true;
                return Some("<socket:privileged>".to_string());
            }
            return Some(format!("<socket:{scheme}>"));
        }
        let credentials = net::carries_credentials(&url);
        self.reaches.credentials |= credentials;
        Some(match (host.is_empty(), credentials) {
            (true, false) => "<url>".to_string(),
            (true, true) => "<url:credentials>".to_string(),
            (false, false) => format!("<url:{host}>"),
            (false, true) => format!("<url:{host}:credentials>"),
        })
    }

    /// The cache slot of `raw`, filled on first sight.
    fn index_of(&mut self, raw: &str) -> usize {
        if let Some(index) = self.placed.iter().position(|(r, _, _)| r == raw) {
            return index;
        }
        let resolved = resolve_in(raw, self.cwd, self.cwd_normal, self.roots);
        let placement = place(resolved.as_deref(), self.roots);
        self.placed.push((raw.to_string(), resolved, placement));
        self.placed.len().saturating_sub(1)
    }

    /// Normalises one argument.
    pub fn arg<'t>(&mut self, text: &'t str) -> Cow<'t, str> {
        self.arg_at(text, 0, false, false)
    }

    /// [`Normalizer::arg`] of `word`'s text or part of it, told what was settled of the word
    /// when it was made: whether it is literal ([`Word::is_literal`]) and whether it needs
    /// quotes ([`crate::shell::lex::Text::is_plain`]); a text is not searched again for what
    /// it cannot hold.
    pub fn arg_of<'t>(&mut self, text: &'t str, word: &Word) -> Cow<'t, str> {
        self.arg_at(text, 0, word.is_literal(), word.text.is_plain())
    }

    /// `arg`, with nested forms (`@file`, `NAME=value`, `rev:path`) followed a bounded number of
    /// levels: `@@@@…` or `a:a:a:…` must not recurse without end.
    /// `literal`: the text is known to hold no [`UNRESOLVED`] (a literal word's, or a part of
    /// a text this already searched: every nested form is). `unspaced`: the text is known to
    /// hold no whitespace (a word's that needs no quotes, or a part of one).
    fn arg_at<'t>(
        &mut self,
        text: &'t str,
        depth: u8,
        literal: bool,
        unspaced: bool,
    ) -> Cow<'t, str> {
        if !literal
            && crate::shell::holds_unresolved(text)
            && let Some(at) = text.find(UNRESOLVED)
        {
            // `http://169.254.170.2$AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`: judged by its
            // literal start, which names the host (stricter, whatever run time appends).
            if text
                .get(..at)
                .and_then(net::split_url)
                .is_some_and(|url| net::url_reaches_metadata(&url))
            {
                self.reaches.metadata = true;
                return Cow::Borrowed("<url:metadata>");
            }
            return Cow::Borrowed("<dynamic>");
        }
        if depth > 2 {
            return Cow::Borrowed("<text>");
        }
        if looks_like_json(text) {
            // A JSON document is one value: split at its `=` or `:` it would read as an
            // assignment or a `rev:path`, and its strings may hold credentials.
            return Cow::Borrowed("<json>");
        }
        if let Some(file) = text.strip_prefix('@').filter(|f| looks_like_path(f)) {
            return Cow::Owned(format!("@{}", self.arg_at(file, depth + 1, true, unspaced)));
        }
        // Whether the text has a `=` or a `:` at all, asked once of its bytes (the slice's
        // `memchr`): without them, the splits and the URL test below have nothing to find, and
        // the token check need not look for the last `=`.
        let bytes = text.as_bytes();
        let (has_equals, has_colon) = holds_equals_colon(bytes);
        let assignment = if has_equals {
            text.split_once('=')
        } else {
            None
        };
        if let Some((name, value)) = assignment {
            let identifier = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if identifier && !value.is_empty() {
                let lower = name.to_ascii_lowercase();
                if [
                    "token",
                    "password",
                    "passwd",
                    "secret",
                    "key",
                    "credential",
                    "auth",
                ]
                .iter()
                .any(|s| lower.contains(s))
                {
                    return Cow::Owned(format!("{name}=«redacted:credential»"));
                }
                if net::CONTAINER_HOST_VARIABLES.contains(&name) {
                    self.reaches.container_socket = true;
                }
                return Cow::Owned(format!(
                    "{name}={}",
                    self.arg_at(value, depth + 1, true, unspaced)
                ));
            }
        }
        // Before the token check: a URL's credentials are a floor, not only a redaction.
        // (`url` finds no scheme without a `:`, and marks nothing then.)
        if has_colon && let Some(url) = self.url(text) {
            return Cow::Owned(url);
        }
        let redacted = if assignment.is_some() {
            redact_token(text)
        } else {
            redact_token_at(text, None)
        };
        if let Some(redacted) = redacted {
            return Cow::Borrowed(redacted);
        }
        if self.network
            && !text.starts_with(['.', '/', '~', '-', '@'])
            && net::is_metadata_host(net::bare_host(text))
        {
            // `nc 169.254.169.254 80`, `curl 2852039166/latest`, `ping 0xa9fea9fe`: before the
            // number, hash and version shapes those spellings also have.
            self.reaches.metadata = true;
            return Cow::Borrowed("<host:metadata>");
        }
        if is_uuid(text) {
            return Cow::Borrowed("<uuid>");
        }
        if (7..=40).contains(&text.len())
            && is_hex(text)
            && text.chars().any(|c| c.is_ascii_digit())
            && text.chars().any(|c| c.is_ascii_alphabetic())
        {
            return Cow::Borrowed("<sha>");
        }
        if is_version(text) {
            return Cow::Borrowed("<version>");
        }
        if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
            return Cow::Borrowed("<n>");
        }
        if let Some(port) = text.strip_prefix(':')
            && (2..=5).contains(&port.len())
            && port.chars().all(|c| c.is_ascii_digit())
        {
            return Cow::Borrowed("<port>");
        }
        if has_colon && let Some((left, right)) = text.split_once(':') {
            if left.contains('@') && !left.contains('/') && !left.contains(' ') {
                // `user@host:path`: the host is what a learned signature must not generalise over.
                let host = left.rsplit('@').next().unwrap_or("").to_ascii_lowercase();
                return Cow::Owned(format!("<remote:{host}>"));
            }
            // `rev:path` (git show HEAD:.env): the path keeps its placement.
            if !left.is_empty() && !left.contains(['/', ' ']) && looks_like_path(right) {
                return Cow::Owned(format!(
                    "{}:{}",
                    self.arg_at(left, depth + 1, true, unspaced),
                    self.arg_at(right, depth + 1, true, unspaced)
                ));
            }
        }
        // Asked of the bytes when the text is ASCII (`char::is_whitespace` there is these six),
        // and the characters counted only when the bytes could be more than 48 of them.
        let spaced = if unspaced {
            false
        } else if text.is_ascii() {
            text.bytes()
                .any(|b| matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' '))
        } else {
            text.chars().any(char::is_whitespace)
        };
        if spaced || (text.len() > 48 && text.chars().count() > 48 && !looks_like_path(text)) {
            let trimmed = text.trim_start();
            let first = trimmed
                .split(|c: char| !c.is_ascii_alphabetic())
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            return if SQL_VERBS.contains(&first.as_str()) {
                Cow::Owned(format!("<sql:{first}>"))
            } else {
                Cow::Borrowed("<text>")
            };
        }
        if self.network && !text.starts_with(['.', '/', '~', '-', '@']) {
            // A network client's bare `host/path` or `user@host` names a host.
            let authority = text.split('/').next().unwrap_or(text);
            let host = authority.rsplit('@').next().unwrap_or(authority);
            let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
            if host.contains('.')
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            {
                return Cow::Owned(format!("<host:{host}>"));
            }
        }
        if looks_like_path(text) {
            let placement = self.placement(text);
            return Cow::Borrowed(path_placeholder(&placement));
        }
        Cow::Borrowed(text)
    }
}

/// Some space-separated token of `text` is one [`redact_token`] replaces. One pass over the
/// bytes: a token shorter than 15 bytes without `=` is never one (`redact_token`'s own first
/// test), so only the others are asked.
fn any_token_redacts(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut start = 0;
    // The token's last `=`, relative to its start: `redact_token` need not search for it again.
    let mut last_equals: Option<usize> = None;
    let mut from = 0;
    while let Some(at) = space_or_equals(bytes, from) {
        if bytes.get(at) == Some(&b' ') {
            if (at - start >= 15 || last_equals.is_some())
                && text
                    .get(start..at)
                    .and_then(|token| redact_token_at(token, last_equals))
                    .is_some()
            {
                return true;
            }
            start = at + 1;
            last_equals = None;
        } else {
            last_equals = Some(at - start);
        }
        from = at + 1;
    }
    (text.len() - start >= 15 || last_equals.is_some())
        && text
            .get(start..)
            .and_then(|token| redact_token_at(token, last_equals))
            .is_some()
}

/// Whether `bytes` hold a `=` and whether they hold a `:`, in one pass of eight bytes at a
/// time (two searches of a short argument cost more in setting up than in reading it).
#[allow(clippy::manual_contains)] // the last bytes one by one, on purpose (below)
fn holds_equals_colon(bytes: &[u8]) -> (bool, bool) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let (mut equals, mut colon) = (0u64, 0u64);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        if let Ok(array) = <[u8; 8]>::try_from(chunk) {
            let word = u64::from_le_bytes(array);
            equals |= zero_bytes(word ^ (ONES * u64::from(b'=')));
            colon |= zero_bytes(word ^ (ONES * u64::from(b':')));
        }
    }
    let rest = chunks.remainder();
    // The last few bytes one by one (`contains` would set up a search for them).
    (
        equals != 0 || rest.iter().any(|b| *b == b'='),
        colon != 0 || rest.iter().any(|b| *b == b':'),
    )
}

/// The first position from `from` of a ` ` or a `=`. Eight bytes are asked at once whether
/// any is either (most bytes of a display text are neither): a byte of `word ^ pattern` is
/// zero exactly where `word` has the pattern's byte, and `(x - 0x01…) & !x & 0x80…` is non-zero
/// exactly when some byte of `x` is zero.
fn space_or_equals(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    let mut at = from;
    while let Some(chunk) = bytes
        .get(at..at + 8)
        .and_then(|c| <[u8; 8]>::try_from(c).ok())
    {
        let word = u64::from_le_bytes(chunk);
        if has_zero_byte(word ^ (ONES * u64::from(b' ')))
            || has_zero_byte(word ^ (ONES * u64::from(b'=')))
        {
            break;
        }
        at += 8;
    }
    bytes
        .get(at..)?
        .iter()
        .position(|b| matches!(b, b' ' | b'='))
        .map(|found| at + found)
}

/// Redacts credential-shaped tokens in text meant for people.
pub fn redact_text(owned: impl AsRef<str> + Into<String>) -> String {
    let text = owned.as_ref();
    // Nothing to redact: an owned text is handed back without a copy.
    if !any_token_redacts(text) {
        return owned.into();
    }
    text.split(' ')
        .map(|token| match redact_token(token) {
            Some(marker) => marker.to_string(),
            None => token.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-bytes-at-once search finds what a search byte by byte finds, from every start,
    /// in every text of up to ten bytes over a space, a `=` and a letter (and longer ones).
    #[test]
    fn space_or_equals_agrees_with_a_byte_search() {
        let mut texts = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..10 {
            last = last
                .iter()
                .flat_map(|p| [' ', '=', 'a'].map(|c| format!("{p}{c}")))
                .collect();
            texts.extend(last.iter().cloned());
        }
        texts.push(format!("{}={}", "x".repeat(37), "y".repeat(20)));
        texts.push(format!("{} {}", "é".repeat(9), "z".repeat(17)));
        for text in &texts {
            let bytes = text.as_bytes();
            for from in 0..=bytes.len() + 1 {
                let by_byte = bytes
                    .get(from..)
                    .and_then(|rest| rest.iter().position(|b| matches!(b, b' ' | b'=')))
                    .map(|at| from + at);
                assert_eq!(
                    space_or_equals(bytes, from),
                    by_byte,
                    "{text:?} from {from}"
                );
            }
        }
    }

    /// Whether some token of a text is redacted, as splitting the text and asking each token.
    #[test]
    fn any_token_redacts_agrees_with_asking_each_token() {
        let tokens = [
            "",
            "ls",
            "-la",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "TOKEN=abc",
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "Authorization:",
            "Bearer",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "a=b=c",
            "/usr/local/bin/something-long",
            "xoxb-1234567890-abcdefghij",
            "0123456789abcdef0123456789abcdef0123",
        ];
        for a in tokens {
            for b in tokens {
                for c in ["", " ", "  "] {
                    let text = format!("{a}{c}{b}");
                    let by_token = text.split(' ').any(|t| redact_token(t).is_some());
                    assert_eq!(any_token_redacts(&text), by_token, "{text:?}");
                }
            }
        }
    }

    /// The one-pass test of `=` and `:` says what two searches say, on every text of up to ten
    /// bytes over `=`, `:` and a letter.
    #[test]
    fn holds_equals_colon_agrees_with_two_searches() {
        let mut texts = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..10 {
            last = last
                .iter()
                .flat_map(|p| ['=', ':', 'a'].map(|c| format!("{p}{c}")))
                .collect();
            texts.extend(last.iter().cloned());
        }
        for text in &texts {
            let bytes = text.as_bytes();
            assert_eq!(
                holds_equals_colon(bytes),
                (bytes.contains(&b'='), bytes.contains(&b':')),
                "{text:?}"
            );
        }
    }

    /// `looks_like_path` as first written, byte by byte.
    fn looks_like_path_by_byte(s: &str) -> bool {
        if s.is_empty() || s.starts_with('-') {
            return false;
        }
        if matches!(s.as_bytes().first(), Some(b'~' | b'.')) {
            return true;
        }
        if s.contains('/') {
            return true;
        }
        s.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        })
    }

    /// The eight-bytes-at-once test agrees with the byte-by-byte one on every text of up to
    /// eight bytes over `/`, `.`, a letter and a digit, each also behind a longer stem.
    #[test]
    fn looks_like_path_agrees_with_a_byte_scan() {
        let mut texts = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..8 {
            last = last
                .iter()
                .flat_map(|p| ['/', '.', 'a', '1'].map(|c| format!("{p}{c}")))
                .collect();
            texts.extend(last.iter().cloned());
        }
        for text in &texts {
            for t in [
                text.clone(),
                format!("abcdefghijk{text}"),
                format!("abc{text}xyz.md"),
            ] {
                assert_eq!(looks_like_path(&t), looks_like_path_by_byte(&t), "{t:?}");
            }
        }
    }
}
