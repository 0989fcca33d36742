//! The demo's text helpers: the seeded generator (SplitMix64), ids, numbered lines, and writing
//! JSON records key by key in Claude Code's order.
//!
//! The bottom of the crate: it knows no project, stack or session.

use std::fmt::Write as _;

/// One of `templates`, `{topic}` filled with `topic`.
pub(super) fn pick_fmt(rng: &mut Rng, templates: &[&str], topic: &str) -> String {
    rng.pick(templates).replace("{topic}", topic)
}

/// Lines as the Read tool numbers them: the number right-aligned in six columns, then `→`.
pub(super) fn number_lines(start: u64, lines: &[&str]) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{:>6}→{line}", start + i as u64);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The seeded generator, ids, time and JSON text.

/// SplitMix64: small, fast, and the same sequence everywhere.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn new(seed: u64, stream: u64) -> Rng {
        let mut rng = Rng(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
        rng.next();
        rng
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `from..=to`.
    pub(super) fn range(&mut self, from: u64, to: u64) -> u64 {
        from + self.below(to.saturating_sub(from) + 1)
    }

    /// Uniform in `[0, 1)`.
    pub(super) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub(super) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One of `items`, which must not be empty.
    pub(super) fn pick<'t, T>(&mut self, items: &'t [T]) -> &'t T {
        let index = self.below(items.len() as u64) as usize;
        &items[index]
    }
}

pub(super) fn uuid(rng: &mut Rng) -> String {
    let a = rng.next();
    let b = rng.next();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        8 | ((b >> 62) & 3),
        (b >> 48) & 0xfff,
        b & 0xffff_ffff_ffff
    )
}

pub(super) fn base62(rng: &mut Rng, len: usize) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    (0..len).map(|_| char::from(*rng.pick(ALPHABET))).collect()
}

pub(super) fn hex(rng: &mut Rng, len: usize) -> String {
    let mut out = format!("{:016x}{:016x}", rng.next(), rng.next());
    out.truncate(len);
    out
}

/// A JSON string literal.
pub(super) fn jstr(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    push_str_literal(&mut out, text);
    out
}

pub(super) fn push_str_literal(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A JSON object written key by key, in the order given (`serde_json`'s map sorts its keys).
pub(super) struct Obj(pub(super) String);

impl Obj {
    pub(super) fn new() -> Obj {
        Obj(String::from("{"))
    }

    pub(super) fn key(&mut self, key: &str) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        push_str_literal(&mut self.0, key);
        self.0.push(':');
    }

    /// A string value.
    pub(super) fn s(mut self, key: &str, value: &str) -> Obj {
        self.key(key);
        push_str_literal(&mut self.0, value);
        self
    }

    /// A value that is already JSON text.
    pub(super) fn raw(mut self, key: &str, json: &str) -> Obj {
        self.key(key);
        self.0.push_str(json);
        self
    }

    pub(super) fn n(mut self, key: &str, value: u64) -> Obj {
        self.key(key);
        let _ = write!(self.0, "{value}");
        self
    }

    pub(super) fn b(mut self, key: &str, value: bool) -> Obj {
        self.key(key);
        self.0.push_str(if value { "true" } else { "false" });
        self
    }

    pub(super) fn done(mut self) -> String {
        self.0.push('}');
        self.0
    }
}
