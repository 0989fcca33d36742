//! Network addresses as the floors see them: the cloud metadata service in every spelling a
//! client accepts, and URLs that carry credentials.
//!
//! The metadata service answers anyone on the machine with the instance's cloud credentials, so
//! reaching it is never learnable, however the address is written: dotted, decimal
//! (`2852039166`), hex (`0xa9fea9fe`), octal (`0251.0376.0251.0376`), short (`169.254.43518`),
//! IPv4 inside IPv6 (`::ffff:169.254.169.254`, `::ffff:a9fe:a9fe`, NAT64), AWS's IPv6 address
//! (`fd00:ec2::254`), a provider's name (`metadata.google.internal`), a wildcard-DNS name that
//! spells the address (`169.254.169.254.nip.io`), percent-encoded or in full-width digits (which
//! URL parsers map to ASCII). Link-local addresses in general (`169.254.0.0/16`, `fe80::/10`)
//! count: ECS, OpenStack and others serve credentials there too.
//!
//! A leaf: text in, an answer out. Must not: do I/O or resolve names (a name that resolves to the
//! address only at run time cannot be known here), nor allocate for an ordinary ASCII host.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::model::ActionFlags;

/// What the words of one action say about where it connects, for the floors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reaches {
    /// The cloud metadata service or another link-local address.
    pub metadata: bool,
    /// A URL that carries credentials.
    pub credentials: bool,
    /// A container runtime's control socket (a path, a `unix://` URL, `DOCKER_HOST`).
    pub container_socket: bool,
}

impl Reaches {
    /// Marks the action's flags with what its words reach.
    pub fn mark(&self, flags: &mut ActionFlags) {
        flags.metadata |= self.metadata;
        flags.url_credentials |= self.credentials;
        flags.container_socket |= self.container_socket;
    }

    /// What the URLs among a structured call's string values reach (WebFetch's `url`, an MCP
    /// tool's arguments), a bounded walk.
    pub fn of_input(input: &serde_json::Value) -> Reaches {
        fn walk(value: &serde_json::Value, depth: u8, into: &mut Reaches) {
            match value {
                serde_json::Value::String(text) => {
                    into.add(Reaches::of_url(text));
                    // A URL inside prose (Gemini's `web_fetch` takes its URLs in the prompt).
                    if text.contains("://") && text.contains(char::is_whitespace) {
                        for word in text.split_whitespace().filter(|w| w.contains("://")) {
                            let url = word
                                .trim_start_matches(['(', '[', '<', '"', '\'', '`'])
                                .trim_end_matches([
                                    ')', ']', '>', '"', '\'', '`', '.', ',', ';', ':', '!', '?',
                                ]);
                            into.add(Reaches::of_url(url));
                        }
                    }
                }
                serde_json::Value::Array(items) if depth < 8 => {
                    items.iter().for_each(|v| walk(v, depth + 1, into));
                }
                serde_json::Value::Object(map) if depth < 8 => {
                    map.values().for_each(|v| walk(v, depth + 1, into));
                }
                _ => {}
            }
        }
        let mut reaches = Reaches::default();
        walk(input, 0, &mut reaches);
        reaches
    }

    fn add(&mut self, other: Reaches) {
        self.metadata |= other.metadata;
        self.credentials |= other.credentials;
        self.container_socket |= other.container_socket;
    }

    /// What one URL reaches (nothing when `text` is not a URL).
    pub fn of_url(text: &str) -> Reaches {
        match split_url(text) {
            Some(url) => Reaches {
                metadata: url_reaches_metadata(&url),
                credentials: carries_credentials(&url),
                container_socket: (url.scheme.eq_ignore_ascii_case("unix")
                    || url.scheme.eq_ignore_ascii_case("npipe"))
                    && crate::paths::is_container_socket(url.rest),
            },
            None => Reaches::default(),
        }
    }
}

/// Variables that point a container client at a daemon: whatever they name, the client then
/// drives that daemon's API.
pub const CONTAINER_HOST_VARIABLES: &[&str] = &["DOCKER_HOST", "CONTAINER_HOST"];

/// Whether a URL's host, as either kind of parser reads it, is the metadata service.
pub fn url_reaches_metadata(url: &Url<'_>) -> bool {
    is_metadata_host(url.host) || url.host_before_backslash.is_some_and(is_metadata_host)
}

/// A URL split as clients split it: `scheme://userinfo@host:port/path?query#fragment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Url<'a> {
    /// The scheme, as written (`https`, `HTTP`, `unix`).
    pub scheme: &'a str,
    /// What stands before the last `@` of the authority, when anything does.
    pub userinfo: Option<&'a str>,
    /// The host, brackets of an IPv6 literal kept, without the port.
    pub host: &'a str,
    /// Everything after the authority: path, query and fragment.
    pub rest: &'a str,
    /// The host as a reader that takes `\` for `/` (WHATWG URL parsers, hence WebFetch) sees it,
    /// when that differs (`http://169.254.169.254\@example.com/`).
    pub host_before_backslash: Option<&'a str>,
}

/// Schemes whose URLs WHATWG parsers read with any number of slashes (`http:/h`, `http:h`).
const SPECIAL_SCHEMES: &[&str] = &["http", "https", "ws", "wss", "ftp"];

/// Splits `text` as a URL when it starts with a scheme: `scheme://…`, or for the web schemes
/// `scheme:` followed by anything (`http:/169.254.169.254`, `http:\\host`).
pub fn split_url(text: &str) -> Option<Url<'_>> {
    let colon = text.find(':')?;
    let scheme = text.get(..colon)?;
    if scheme.is_empty()
        || !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    {
        return None;
    }
    let after = text.get(colon + 1..)?;
    let special = SPECIAL_SCHEMES
        .iter()
        .any(|s| s.eq_ignore_ascii_case(scheme));
    let body = match after.strip_prefix("//") {
        Some(body) => body,
        None if special && !after.is_empty() && !after.starts_with(' ') => after,
        None => return None,
    };
    let body = if special {
        body.trim_start_matches(['/', '\\'])
    } else {
        body
    };
    let end = body.find(['/', '?', '#']).unwrap_or(body.len());
    let authority = body.get(..end)?;
    let rest = body.get(end..)?;
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(at) => (authority.get(..at), authority.get(at + 1..)?),
        None => (None, authority),
    };
    let host_before_backslash = if special && authority.contains('\\') {
        let first = authority.split('\\').next().unwrap_or("");
        let first = first.rsplit('@').next().unwrap_or(first);
        Some(strip_port(first))
    } else {
        None
    };
    Some(Url {
        scheme,
        userinfo,
        host: strip_port(hostport),
        rest,
        host_before_backslash,
    })
}

/// `host:port` → `host`; `[v6]:port` → `[v6]`.
fn strip_port(hostport: &str) -> &str {
    if hostport.starts_with('[') {
        return match hostport.find(']') {
            Some(close) => hostport.get(..=close).unwrap_or(hostport),
            None => hostport,
        };
    }
    match hostport.rfind(':') {
        // More than one colon and no brackets: a bare IPv6 address, no port.
        Some(at) if hostport.find(':') == Some(at) => hostport.get(..at).unwrap_or(hostport),
        _ => hostport,
    }
}

/// The host a network client's bare operand names (`169.254.169.254/latest`, `user@host:22`,
/// `[fd00:ec2::254]:80`, `fd00:ec2::254`).
pub fn bare_host(text: &str) -> &str {
    let authority = text.split(['/', '?', '#']).next().unwrap_or(text);
    let host = authority.rsplit('@').next().unwrap_or(authority);
    strip_port(host)
}

/// Host names of the metadata service (lower case, no trailing dot).
const METADATA_NAMES: &[&str] = &[
    // Google Cloud.
    "metadata.google.internal",
    "metadata.goog",
    // The short name GCE and others resolve through the search domain.
    "metadata",
    // AWS EC2's name for it.
    "instance-data",
    "instance-data.ec2.internal",
    // Azure, Oracle, Tencent, Equinix, Hetzner, DigitalOcean aliases seen in SSRF lists.
    "metadata.azure.com",
    "metadata.tencentyun.com",
    "metadata.platformequinix.com",
    "metadata.packet.net",
];

/// Whether `host` is the cloud metadata service or another link-local address, in any spelling
/// a client accepts.
pub fn is_metadata_host(host: &str) -> bool {
    if host.is_empty() {
        return false;
    }
    if host.contains('%') || !host.is_ascii() {
        // Percent-encoding and full-width digits or dots, which URL parsers turn into ASCII.
        return is_metadata_ascii(&to_ascii_host(host));
    }
    is_metadata_ascii(host)
}

fn is_metadata_ascii(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    if let Some(inner) = host.strip_prefix('[') {
        let inner = inner.strip_suffix(']').unwrap_or(inner);
        return is_metadata_v6(inner);
    }
    if host.contains(':') {
        return is_metadata_v6(host);
    }
    if METADATA_NAMES.iter().any(|n| n.eq_ignore_ascii_case(host)) {
        return true;
    }
    if let Some(v4) = parse_ipv4(host) {
        return is_metadata_v4(v4);
    }
    names_metadata_address(host)
}

/// An IPv6 literal (a zone `%eth0` or `%25eth0` allowed) that is or carries a metadata address.
fn is_metadata_v6(text: &str) -> bool {
    let address = text.split('%').next().unwrap_or(text);
    let Ok(v6) = address.parse::<Ipv6Addr>() else {
        return false;
    };
    let s = v6.segments();
    // AWS's IPv6 metadata service lives in fd00:ec2::/32.
    if s[0] == 0xfd00 && s[1] == 0x0ec2 {
        return true;
    }
    // Link-local fe80::/10.
    if s[0] & 0xffc0 == 0xfe80 {
        return true;
    }
    // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d).
    let embedded = Ipv4Addr::new(
        (s[6] >> 8) as u8,
        (s[6] & 0xff) as u8,
        (s[7] >> 8) as u8,
        (s[7] & 0xff) as u8,
    );
    let carries_v4 = s[..5] == [0, 0, 0, 0, 0] && (s[5] == 0xffff || s[5] == 0)
        || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    carries_v4 && is_metadata_v4(embedded)
}

/// 169.254.0.0/16 (AWS, GCP, Azure, Oracle, OpenStack, DigitalOcean, ECS's 169.254.170.2) and
/// Alibaba's 100.100.100.200.
fn is_metadata_v4(v4: Ipv4Addr) -> bool {
    v4.is_link_local() || v4 == Ipv4Addr::new(100, 100, 100, 200)
}

/// An IPv4 address in the forms `inet_aton` and curl accept: one to four parts separated by
/// dots, each decimal, `0x` hex or `0` octal, the last filling the remaining bytes
/// (`2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376`, `169.254.43518`, `169.16689662`).
pub fn parse_ipv4(text: &str) -> Option<Ipv4Addr> {
    if text.is_empty() {
        return None;
    }
    let mut parts = [0u32; 4];
    let mut count = 0usize;
    for part in text.split('.') {
        let slot = parts.get_mut(count)?;
        *slot = parse_number(part)?;
        count += 1;
    }
    let value = match count {
        1 => parts[0],
        2 if parts[0] <= 0xff && parts[1] <= 0xff_ffff => parts[0] << 24 | parts[1],
        3 if parts[0] <= 0xff && parts[1] <= 0xff && parts[2] <= 0xffff => {
            parts[0] << 24 | parts[1] << 16 | parts[2]
        }
        4 if parts.iter().all(|p| *p <= 0xff) => {
            parts[0] << 24 | parts[1] << 16 | parts[2] << 8 | parts[3]
        }
        _ => return None,
    };
    Some(Ipv4Addr::from(value))
}

/// One part of a legacy IPv4 address: decimal, `0x` hex or `0` octal, at most 32 bits.
fn parse_number(part: &str) -> Option<u32> {
    let (digits, radix) =
        if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
            (hex, 16)
        } else if part.len() > 1 && part.starts_with('0') {
            (part.get(1..)?, 8)
        } else {
            (part, 10)
        };
    if digits.is_empty() {
        // `0x` alone is 0 to inet_aton; `0` is handled as decimal above.
        return (radix == 16).then_some(0);
    }
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

/// A host name that spells a metadata address for a wildcard-DNS service to answer with it:
/// four numeric labels (`169.254.169.254.nip.io`), four numbers joined by dashes inside a label
/// (`169-254-169-254.sslip.io`, `app-169-254-169-254.nip.io`), or eight hex digits
/// (`a9fea9fe.nip.io`).
fn names_metadata_address(host: &str) -> bool {
    let labels = || host.split('.');
    let count = labels().count();
    for start in 0..count.saturating_sub(3) {
        let mut quad = labels().skip(start).take(4);
        let mut bytes = [0u8; 4];
        let all = bytes.iter_mut().all(|b| {
            quad.next()
                .and_then(decimal_octet)
                .map(|v| *b = v)
                .is_some()
        });
        if all && is_metadata_v4(Ipv4Addr::from(bytes)) {
            return true;
        }
    }
    labels().any(|label| {
        dashed_quad_is_metadata(label)
            || label.len() == 8
                && label.chars().all(|c| c.is_ascii_hexdigit())
                && u32::from_str_radix(label, 16).is_ok_and(|v| is_metadata_v4(Ipv4Addr::from(v)))
    })
}

/// Four dash-separated decimal octets in a label that make a metadata address.
fn dashed_quad_is_metadata(label: &str) -> bool {
    let mut window = [None::<u8>; 4];
    for piece in label.split('-') {
        window.rotate_left(1);
        window[3] = decimal_octet(piece);
        if let [Some(a), Some(b), Some(c), Some(d)] = window
            && is_metadata_v4(Ipv4Addr::new(a, b, c, d))
        {
            return true;
        }
    }
    false
}

fn decimal_octet(label: &str) -> Option<u8> {
    if label.is_empty() || label.len() > 3 || !label.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    label.parse().ok()
}

/// A host with percent-escapes decoded and full-width digits, letters and dots (and the
/// ideographic full stops IDNA maps to `.`) turned into ASCII, lower case.
fn to_ascii_host(host: &str) -> String {
    let mut bytes = Vec::with_capacity(host.len());
    let raw = host.as_bytes();
    let mut at = 0;
    while let Some(&b) = raw.get(at) {
        let hex = |i: usize| raw.get(i).and_then(|c| (*c as char).to_digit(16));
        if b == b'%'
            && let (Some(hi), Some(lo)) = (hex(at + 1), hex(at + 2))
        {
            bytes.push((hi * 16 + lo) as u8);
            at += 3;
        } else {
            bytes.push(b);
            at += 1;
        }
    }
    String::from_utf8_lossy(&bytes)
        .chars()
        .map(|c| match c {
            '\u{3002}' | '\u{ff0e}' | '\u{ff61}' => '.',
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xff01 + 0x21).unwrap_or(c),
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Whether a URL carries credentials: a password in its user-info (`https://u:p@host`), a
/// token as its user name (`https://ghp_…@github.com`), or a query or fragment parameter named
/// like a key, token, password or signature (`?access_token=`, `?X-Amz-Signature=`, `#sig=`), or
/// whose value is shaped like a service's token whatever its name (`?q=AKIA…`, `#ghp_…`).
/// An ssh user name (`ssh://git@host`) and a short user name (`https://jdoe@bitbucket.org`) are
/// names, not credentials.
pub fn carries_credentials(url: &Url<'_>) -> bool {
    if let Some(userinfo) = url.userinfo.filter(|u| !u.is_empty()) {
        let password = userinfo.split_once(':').map_or("", |(_, p)| p);
        if !password.is_empty() || user_is_token(url.scheme, user_of(userinfo)) {
            return true;
        }
    }
    url.rest
        .split(['?', '#'])
        .skip(1)
        .flat_map(|part| part.split(['&', ';']))
        .any(|param| match param.split_once('=') {
            // Named like a credential, or holding one whatever its name (`?q=AKIA…`, `#ghp_…`).
            Some((name, value)) => {
                !value.is_empty()
                    && (is_credential_parameter(name)
                        || crate::tokens::redact_token(value).is_some())
            }
            None => crate::tokens::redact_token(param).is_some(),
        })
}

fn user_of(userinfo: &str) -> &str {
    userinfo.split(':').next().unwrap_or(userinfo)
}

/// A user name that is a token: not an ssh-family login, and as long as tokens are.
fn user_is_token(scheme: &str, user: &str) -> bool {
    const LOGIN_SCHEMES: &[&str] = &["ssh", "git+ssh", "ssh+git", "sftp", "scp", "rsync"];
    !LOGIN_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) && user.len() >= 16
}

/// A query parameter named like a credential (compared case-insensitively).
fn is_credential_parameter(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "key",
        "sig",
        "auth",
        "pass",
        "pwd",
        "jwt",
        "code",
        "session",
        "sessionid",
        "sid",
    ];
    const CONTAINS: &[&str] = &[
        "token",
        "secret",
        "password",
        "passwd",
        "apikey",
        "api_key",
        "api-key",
        "signature",
        "credential",
        "authorization",
        "access_key",
        "accesskey",
        "private_key",
    ];
    let lower = name.to_ascii_lowercase();
    EXACT.contains(&lower.as_str())
        || CONTAINS.iter().any(|c| lower.contains(c))
        || lower.ends_with("_key")
        || lower.ends_with("-key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_the_metadata_address() {
        for host in [
            "169.254.169.254",
            "2852039166",
            "0xa9fea9fe",
            "0XA9FEA9FE",
            "0251.0376.0251.0376",
            "0xa9.0xfe.0xa9.0xfe",
            "169.254.43518",
            "169.16689662",
            "0251.254.169.254",
            "[::ffff:169.254.169.254]",
            "[::ffff:a9fe:a9fe]",
            "[::169.254.169.254]",
            "[64:ff9b::a9fe:a9fe]",
            "[fd00:ec2::254]",
            "[fd00:ec2::254%25eth0]",
            "[fe80::1]",
            "metadata.google.internal",
            "METADATA.GOOGLE.INTERNAL.",
            "metadata",
            "169.254.170.2",
            "100.100.100.200",
            "169.254.169.254.nip.io",
            "169-254-169-254.sslip.io",
            "app-169-254-169-254.nip.io",
            "a9fea9fe.nip.io",
            "%31%36%39.254.169.254",
            "１６９.２５４.１６９.２５４",
            "169。254。169。254",
        ] {
            assert!(is_metadata_host(host), "{host}");
        }
        for host in [
            "api.github.com",
            "169.254.169.254x",
            "docs.python.org",
            "10.0.0.1",
            "127.0.0.1",
            "100.100.100.201",
            "[::1]",
            "[2001:db8::1]",
            "metadata.example.com",
            "4294967296",
            "1.2.3.4.5",
            "",
        ] {
            assert!(!is_metadata_host(host), "{host}");
        }
    }

    #[test]
    fn urls_split_as_clients_split_them() {
        let url = split_url("http://a:b@169.254.169.254:80/x?y#z").unwrap();
        assert_eq!(url.host, "169.254.169.254");
        assert_eq!(url.userinfo, Some("a:b"));
        assert_eq!(url.rest, "/x?y#z");
        assert_eq!(
            split_url("http:/169.254.169.254/").unwrap().host,
            "169.254.169.254"
        );
        assert_eq!(
            split_url("https://[fd00:ec2::254]:80/").unwrap().host,
            "[fd00:ec2::254]"
        );
        assert_eq!(
            split_url("http://evil.com@169.254.169.254/").unwrap().host,
            "169.254.169.254"
        );
        let confusing = split_url("http://169.254.169.254\\@example.com/").unwrap();
        assert_eq!(confusing.host_before_backslash, Some("169.254.169.254"));
        assert!(split_url("src/main.rs").is_none());
        assert!(split_url("HEAD:src/main.rs").is_none());
        assert!(split_url("a b:c").is_none());
    }

    #[test]
    fn credentials_in_urls() {
        for text in [
            "https://user:pass@example.com/",
            "https://x-access-token:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/a/b",
            "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/a/b",
            "https://example.com/?access_token=abc",
            "https://example.com/x?a=1&api_key=abc",
            "https://b.s3.amazonaws.com/k?X-Amz-Signature=abc&X-Amz-Credential=x",
            "https://a.blob.core.windows.net/c?sv=2020&sig=abc",
            "https://example.com/cb#access_token=abc",
            "https://docs.python.org/3/?k=AKIAIOSFODNN7EXAMPLE",
            "https://example.com/?q=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "postgres://app:hunter2@db.internal/app",
        ] {
            let url = split_url(text).unwrap();
            assert!(carries_credentials(&url), "{text}");
        }
        for text in [
            "https://example.com/",
            "ssh://git@github.com/a/b.git",
            "https://jdoe@bitbucket.org/team/repo.git",
            "https://example.com/?q=token",
            "https://example.com/?page=2&sort=asc",
            "https://example.com/?key=",
        ] {
            let url = split_url(text).unwrap();
            assert!(!carries_credentials(&url), "{text}");
        }
    }
}
