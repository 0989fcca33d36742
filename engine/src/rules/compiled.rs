//! The compiled form of a rules file (issue 14): what a hook call needs to resolve a call
//! against hundreds or thousands of rules without parsing them all.
//!
//! Compiling parses and checks every rule once (the same [`Policy::from_json`] the CLI uses, so
//! a pathological pattern is refused here, with its bound named) and writes a small binary
//! table: each rule's text and tier, and where a call can find it — Bash rules by the first word
//! every command they match starts with, rules of other tools by the tool, path rules by their
//! anchor (root, home, project) and the literal text before their first wildcard. A call looks
//! up the rules its action can match (candidates), parses only those against its roots, and
//! resolves them as the whole policy would: resolution depends only on the rules that match,
//! and the candidates are a superset of them, in the policy's order.
//!
//! Reading is bounds-checked throughout. Opening checks the magic, version, lengths, a checksum
//! over every byte, and the search order (every rule once, sorted, its key in bounds), so a
//! lookup finds every rule of its key; a file that fails is refused whole and the caller parses
//! the rules file again. A candidate's other fields, and its strings' UTF-8, are checked when it
//! is one, and one that does not decode (which the checksum makes all but impossible) makes the
//! call ask. The checksum guards against
//! accidental damage, not a forger: the table lives where the rules file it was made from
//! lives, in a directory only its owner can write. Layout: docs/formats.md, "Compiled rules".

use serde_json::Value;

use super::{
    Anchor, DefaultMode, Policy, PolicyError, Rule, Source, Spec, ToolSet, anchor_root,
    base_name_form, path_anchor, takes_path_rules,
};
use crate::model::{Action, Answer, AnswerSource, Answers, Decision};
use crate::paths::Roots;
use crate::shell::UNRESOLVED;

/// The first bytes of a compiled rules file.
pub const COMPILED_MAGIC: [u8; 8] = *b"LGRULES\0";
/// The layout version this build writes and reads.
pub const COMPILED_VERSION: u32 = 1;
/// The most rules one compiled table holds.
const MAX_RULES: usize = 1 << 20;
const HEADER_LEN: usize = 112;
const ENTRY_LEN: usize = 20;
const FLAG_DENY_DEFAULT: u32 = 1;
const FLAG_REJECTED: u32 = 2;

/// What identifies the rules file a table was compiled from: the SHA-256 of its bytes, and
/// its file status when the table was written (device, inode, size, modification and change
/// times in nanoseconds), trusted only when the file was already older than the racy window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SourceKey {
    /// SHA-256 of the rules file's bytes.
    pub digest: [u8; 32],
    /// `[dev, ino, size, mtime_ns, ctime_ns]` of the file the bytes were read from.
    pub stat: [u64; 5],
    /// The file status identifies the bytes: it had not changed for a while when the table was
    /// written, so a later change gives it another change time.
    pub stat_trusted: bool,
}

/// A compiled table that cannot be used: the caller parses the rules file instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledError(pub &'static str);

impl std::fmt::Display for CompiledError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "compiled rules: {}", self.0)
    }
}

impl std::error::Error for CompiledError {}

/// Where a call finds a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
enum Group {
    /// A Bash rule whose every match starts with the key as its whole first word.
    BashWord = 0,
    /// A Bash rule whose literal text ends inside the first word (`Bash(npm*)`, `Bash(*)`).
    BashPartial = 1,
    /// A rule of the tool named by the key (bare rules, hosts, other tools' text).
    Tool = 2,
    /// A rule for every tool of an MCP server (`mcp__server`).
    McpServer = 3,
    /// A path rule: the key is the literal text after its anchor.
    Path = 4,
    /// A bare rule of a file tool family, which a deny extends to any tool reaching files.
    Always = 5,
}

impl Group {
    fn from_byte(b: u8) -> Option<Group> {
        Some(match b {
            0 => Group::BashWord,
            1 => Group::BashPartial,
            2 => Group::Tool,
            3 => Group::McpServer,
            4 => Group::Path,
            5 => Group::Always,
            _ => return None,
        })
    }
}

fn anchor_byte(anchor: Anchor) -> u8 {
    match anchor {
        Anchor::Absolute => 0,
        Anchor::Home => 1,
        Anchor::Project => 2,
    }
}

fn anchor_from(b: u8) -> Option<Anchor> {
    match b {
        0 => Some(Anchor::Absolute),
        1 => Some(Anchor::Home),
        2 => Some(Anchor::Project),
        _ => None,
    }
}

fn decision_byte(d: Decision) -> u8 {
    match d {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Deny => 2,
    }
}

fn decision_from(b: u8) -> Option<Decision> {
    match b {
        0 => Some(Decision::Allow),
        1 => Some(Decision::Ask),
        2 => Some(Decision::Deny),
        _ => None,
    }
}

/// The text before the first whitespace (as the automata's `Space` class reads it).
fn first_word(text: &str) -> &str {
    text.find(char::is_whitespace)
        .and_then(|at| text.get(..at))
        .unwrap_or(text)
}

/// The literal text a path pattern's rest starts with: up to its first character that is not
/// plainly itself in some glob dialect.
fn literal_head(text: &str) -> &str {
    text.split(['*', '?', '[', '{', '\\']).next().unwrap_or("")
}

/// Where a parsed rule is found, and its key.
fn locate(rule: &Rule) -> (Group, String, Anchor) {
    let tool_group = |rule: &Rule| match &rule.tools {
        ToolSet::Exact(name) => (Group::Tool, name.clone(), Anchor::Absolute),
        ToolSet::McpServer(server) => (Group::McpServer, server.clone(), Anchor::Absolute),
    };
    match &rule.spec {
        Spec::Any if takes_path_rules(rule.name()) => {
            (Group::Always, String::new(), Anchor::Absolute)
        }
        Spec::Any | Spec::Host(_) | Spec::Text(_) => tool_group(rule),
        Spec::Command(lazy) => {
            let key = match &lazy.source {
                Source::CommandPrefix(prefix) => Some(first_word(prefix)),
                Source::Glob(text, _) => match text.find('*') {
                    None => Some(first_word(text)),
                    Some(star) => text
                        .get(..star)
                        .filter(|head| head.contains(char::is_whitespace))
                        .map(first_word),
                },
                Source::Folded(_) => None,
            };
            match key {
                Some(word) => (Group::BashWord, word.to_string(), Anchor::Absolute),
                None => (Group::BashPartial, String::new(), Anchor::Absolute),
            }
        }
        Spec::Path(..) => {
            let spec = rule
                .text
                .find('(')
                .and_then(|open| rule.text.get(open + 1..rule.text.len().saturating_sub(1)))
                .unwrap_or("");
            let (anchor, rest) = path_anchor(spec);
            (Group::Path, literal_head(&rest).to_string(), anchor)
        }
    }
}

/// A 64-bit checksum over `parts`, eight bytes a step (damage, not forgery: module docs).
fn checksum(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0x243F_6A88_85A3_08D3;
    let mut total = 0u64;
    for part in parts {
        let mut chunks = part.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            h ^= h >> 29;
        }
        let mut word = [0u8; 8];
        for (slot, byte) in word.iter_mut().zip(chunks.remainder()) {
            *slot = *byte;
        }
        h = (h ^ u64::from_le_bytes(word) ^ 0xFF).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 31;
        total = total.wrapping_add(part.len() as u64);
    }
    (h ^ total).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ (h >> 32)
}

fn header(key: &SourceKey, flags: u32, count: u32, body_len: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN);
    out.extend_from_slice(&COMPILED_MAGIC);
    out.extend_from_slice(&COMPILED_VERSION.to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&key.digest);
    for v in key.stat {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&u32::from(key.stat_trusted).to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&body_len.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out
}

fn seal(mut head: Vec<u8>, body: &[u8]) -> Vec<u8> {
    let sum = checksum(&[&head, body]);
    head.extend_from_slice(&sum.to_le_bytes());
    head.extend_from_slice(body);
    head
}

fn too_big(what: &str) -> PolicyError {
    PolicyError(format!("{what} is too large to compile"))
}

/// Compiles the JSON of a rules file: every rule parsed and checked against `roots` (the
/// bounds of [`Policy::from_json`]), then laid out for lookup. A file that does not parse gives
/// its error, which [`compile_rules_refusal`] can record.
pub fn compile_rules(
    value: &Value,
    roots: &Roots,
    key: &SourceKey,
) -> Result<Vec<u8>, PolicyError> {
    let policy = Policy::from_json(value, roots)?;
    let count = policy.rules.len();
    if count > MAX_RULES {
        return Err(too_big("the rules file"));
    }
    let located: Vec<(Group, String, Anchor)> = policy.rules.iter().map(locate).collect();
    let mut order: Vec<(Group, &[u8], u32)> = located
        .iter()
        .zip(0u32..)
        .map(|((group, key, _), id)| (*group, key.as_bytes(), id))
        .collect();
    order.sort_unstable();
    let mut strings = Vec::new();
    let mut entries = Vec::with_capacity(count * ENTRY_LEN);
    let mut push = |text: &str| -> Result<(u32, u32), PolicyError> {
        let off = u32::try_from(strings.len()).map_err(|_| too_big("the rules file"))?;
        let len = u32::try_from(text.len()).map_err(|_| too_big("a rule"))?;
        strings.extend_from_slice(text.as_bytes());
        Ok((off, len))
    };
    for (rule, (group, key_text, anchor)) in policy.rules.iter().zip(&located) {
        let (text_off, text_len) = push(&rule.text)?;
        let (key_off, key_len) = push(key_text)?;
        entries.extend_from_slice(&text_off.to_le_bytes());
        entries.extend_from_slice(&text_len.to_le_bytes());
        entries.extend_from_slice(&key_off.to_le_bytes());
        entries.extend_from_slice(&key_len.to_le_bytes());
        entries.extend_from_slice(&[
            decision_byte(rule.decision),
            *group as u8,
            anchor_byte(*anchor),
            0,
        ]);
    }
    let mut body = entries;
    for (_, _, id) in &order {
        body.extend_from_slice(&id.to_le_bytes());
    }
    body.extend_from_slice(&strings);
    let flags = match policy.default_mode {
        DefaultMode::Deny => FLAG_DENY_DEFAULT,
        DefaultMode::Ask => 0,
    };
    let body_len = u32::try_from(body.len()).map_err(|_| too_big("the rules file"))?;
    Ok(seal(header(key, flags, count as u32, body_len), &body))
}

/// A table recording that the rules file was refused, and why: the next call gives the same
/// error without parsing the file again.
pub fn compile_rules_refusal(message: &str, key: &SourceKey) -> Vec<u8> {
    let text = message.get(..message.len().min(4096)).unwrap_or("refused");
    seal(
        header(key, FLAG_REJECTED, 0, text.len() as u32),
        text.as_bytes(),
    )
}

/// One rule of a table: its text, tier, group, key and anchor.
#[derive(Debug, Clone, Copy)]
struct Entry<'a> {
    text: &'a str,
    decision: Decision,
    key: &'a str,
    anchor: Anchor,
}

/// What a table's search order is sorted by: a rule's group byte and key bytes.
type SearchKey<'a> = (u8, &'a [u8]);

/// A table's bytes: read into memory, or any other owner of them (the hook maps its tables
/// from the file: a call touches the file's pages in the page cache, with no copy into fresh
/// heap pages).
#[derive(Clone)]
pub struct TableBytes(std::sync::Arc<dyn AsRef<[u8]> + Send + Sync>);

impl TableBytes {
    /// Bytes held by `owner` (a memory map, …).
    pub fn shared(owner: impl AsRef<[u8]> + Send + Sync + 'static) -> TableBytes {
        TableBytes(std::sync::Arc::new(owner))
    }
}

impl From<Vec<u8>> for TableBytes {
    fn from(bytes: Vec<u8>) -> TableBytes {
        TableBytes::shared(bytes)
    }
}

impl std::ops::Deref for TableBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

impl std::fmt::Debug for TableBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TableBytes({} bytes)", self.len())
    }
}

/// A compiled rules table, checked whole when opened.
#[derive(Debug, Clone)]
pub struct CompiledRules {
    bytes: TableBytes,
    /// Where the string region starts (each string checked as UTF-8 where it is read).
    strings_at: usize,
    key: SourceKey,
    flags: u32,
    count: usize,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

impl CompiledRules {
    /// Opens a table, checking every byte of it (module docs).
    pub fn open(bytes: impl Into<TableBytes>) -> Result<CompiledRules, CompiledError> {
        let bytes: TableBytes = bytes.into();
        let bad = CompiledError;
        if bytes.get(..8) != Some(&COMPILED_MAGIC[..]) {
            return Err(bad("not a compiled rules file"));
        }
        if u32_at(&bytes, 8) != Some(COMPILED_VERSION) {
            return Err(bad("another layout version"));
        }
        let head = bytes.get(..HEADER_LEN - 8).ok_or(bad("truncated header"))?;
        let flags = u32_at(&bytes, 12).ok_or(bad("truncated header"))?;
        let count = u32_at(&bytes, 92).ok_or(bad("truncated header"))? as usize;
        let body_len = u32_at(&bytes, 96).ok_or(bad("truncated header"))? as usize;
        let sum = u64_at(&bytes, HEADER_LEN - 8).ok_or(bad("truncated header"))?;
        let body = bytes.get(HEADER_LEN..).ok_or(bad("truncated header"))?;
        if body.len() != body_len {
            return Err(bad("its length does not match its header"));
        }
        if checksum(&[head, body]) != sum {
            return Err(bad("its checksum does not match (damaged)"));
        }
        let digest: [u8; 32] = bytes
            .get(16..48)
            .and_then(|d| d.try_into().ok())
            .ok_or(bad("truncated header"))?;
        let mut stat = [0u64; 5];
        for (i, slot) in stat.iter_mut().enumerate() {
            *slot = u64_at(&bytes, 48 + 8 * i).ok_or(bad("truncated header"))?;
        }
        let key = SourceKey {
            digest,
            stat,
            stat_trusted: u32_at(&bytes, 88) == Some(1),
        };
        if flags & !(FLAG_DENY_DEFAULT | FLAG_REJECTED) != 0 {
            return Err(bad("unknown flags"));
        }
        // The strings are checked as UTF-8 where they are read (`string`: a candidate's text and
        // key), not all of them here: a table whose checksum matches holds what its writer wrote,
        // and one that does not decode where a call reads it makes the call ask. The whole
        // region took ~26 k instructions of every call at 1,000 rules.
        let strings_at = HEADER_LEN.saturating_add(count.saturating_mul(ENTRY_LEN + 4));
        let table = CompiledRules {
            bytes,
            strings_at,
            key,
            flags,
            count,
        };
        if flags & FLAG_REJECTED != 0 {
            if count != 0 || std::str::from_utf8(table.body()).is_err() {
                return Err(bad("a refusal that is not text"));
            }
            return Ok(table);
        }
        if count > MAX_RULES
            || body_len < count.saturating_mul(ENTRY_LEN + 4)
            || count.checked_mul(ENTRY_LEN + 4).is_none()
        {
            return Err(bad("more rules than it holds bytes"));
        }
        // Every id once in the search order, and that order sorted by (group, key, id); the
        // other fields of a rule are read when it is a candidate (`entry`, which refuses what
        // does not decode, and the call then asks).
        let body = table.body();
        let entries = body
            .get(..count * ENTRY_LEN)
            .ok_or(bad("more rules than it holds bytes"))?;
        let order = body
            .get(count * ENTRY_LEN..count * (ENTRY_LEN + 4))
            .ok_or(bad("more rules than it holds bytes"))?;
        let strings = table.bytes.get(strings_at..).unwrap_or(&[]);
        // Strictly increasing (group, key, id) with every id below the count: each rule once
        // (a rule has one group and key, so a second listing would repeat its triple).
        let mut previous: Option<(u8, &[u8], u32)> = None;
        for word in order.chunks_exact(4) {
            let id = u32_at(word, 0).ok_or(bad("a search order out of bounds"))?;
            if id as usize >= count {
                return Err(bad("a search order naming no rule"));
            }
            let at = id as usize * ENTRY_LEN;
            let raw = entries
                .get(at..at + ENTRY_LEN)
                .ok_or(bad("a rule out of bounds"))?;
            let group = *raw.get(17).ok_or(bad("a rule out of bounds"))?;
            Group::from_byte(group).ok_or(bad("a rule of no group"))?;
            let (off, len) = (
                u32_at(raw, 8).unwrap_or(u32::MAX) as usize,
                u32_at(raw, 12).unwrap_or(u32::MAX) as usize,
            );
            let key = off
                .checked_add(len)
                .and_then(|end| strings.get(off..end))
                .ok_or(bad("a key out of bounds"))?;
            if let Some(before) = previous
                && before >= (group, key, id)
            {
                return Err(bad("a search order not sorted"));
            }
            previous = Some((group, key, id));
        }
        Ok(table)
    }

    fn body(&self) -> &[u8] {
        self.bytes.get(HEADER_LEN..).unwrap_or(&[])
    }

    /// The bytes (to write to disk).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The same table naming `key`: the rules file's bytes are the same, its status is newer.
    pub fn rekeyed(&self, key: &SourceKey) -> Vec<u8> {
        let body = self.body();
        seal(
            header(key, self.flags, self.count as u32, body.len() as u32),
            body,
        )
    }

    /// What the table was compiled from.
    pub fn source_key(&self) -> &SourceKey {
        &self.key
    }

    /// Why the rules file was refused, when it was.
    pub fn rejected(&self) -> Option<&str> {
        (self.flags & FLAG_REJECTED != 0)
            .then(|| std::str::from_utf8(self.body()).unwrap_or("refused"))
    }

    /// The rules file's fall-back.
    pub fn default_mode(&self) -> DefaultMode {
        if self.flags & FLAG_DENY_DEFAULT != 0 {
            DefaultMode::Deny
        } else {
            DefaultMode::Ask
        }
    }

    /// How many rules it holds.
    pub fn len(&self) -> usize {
        self.count
    }

    /// It holds no rule.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn order_id(&self, rank: usize) -> Option<u32> {
        u32_at(self.body(), self.count * ENTRY_LEN + rank * 4)
    }

    fn string(&self, off: u32, len: u32) -> Option<&str> {
        let start = self.strings_at.checked_add(off as usize)?;
        let bytes = self.bytes.get(start..start.checked_add(len as usize)?)?;
        std::str::from_utf8(bytes).ok()
    }

    fn entry(&self, id: u32) -> Option<Entry<'_>> {
        let at = (id as usize).checked_mul(ENTRY_LEN)?;
        let body = self.body();
        let raw = body.get(at..at.checked_add(ENTRY_LEN)?)?;
        let word = |i: usize| u32_at(raw, i);
        // The group is what the search order sorts by (`search_key`); a rule of no group does
        // not decode.
        Group::from_byte(*raw.get(17)?)?;
        Some(Entry {
            text: self.string(word(0)?, word(4)?)?,
            key: self.string(word(8)?, word(12)?)?,
            decision: decision_from(*raw.get(16)?)?,
            anchor: anchor_from(*raw.get(18)?)?,
        })
    }

    /// The ranks (positions in the search order) of `group`'s rules whose key is `key`, or of
    /// all its rules.
    fn range(&self, group: Group, key: Option<&str>) -> std::ops::Range<usize> {
        // A probe reads the rule's group byte and key bytes only: the order `open` checked is
        // of those bytes, and decoding the whole rule (its text checked as UTF-8 again) at
        // every probe cost a 1,000-rule lookup ~20 k instructions.
        let at = |rank: usize| self.order_id(rank).and_then(|id| self.search_key(id));
        let first = |below: &dyn Fn(SearchKey<'_>) -> bool| {
            let (mut lo, mut hi) = (0usize, self.count);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if at(mid).is_some_and(below) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let g = group as u8;
        match key {
            None => first(&|(e, _)| e < g)..first(&|(e, _)| e <= g),
            Some(key) => {
                let k = key.as_bytes();
                first(&|e| e < (g, k))..first(&|e| e <= (g, k))
            }
        }
    }

    /// The group byte and key bytes of rule `id`, what the search order is sorted by.
    fn search_key(&self, id: u32) -> Option<SearchKey<'_>> {
        let at = (id as usize).checked_mul(ENTRY_LEN)?;
        let raw = self.body().get(at..at.checked_add(ENTRY_LEN)?)?;
        let (off, len) = (u32_at(raw, 8)? as usize, u32_at(raw, 12)? as usize);
        let start = self.strings_at.checked_add(off)?;
        let key = self.bytes.get(start..start.checked_add(len)?)?;
        Some((*raw.get(17)?, key))
    }

    /// The rules `action` can match, by id in the policy's order: a superset of those it
    /// matches (module docs).
    fn candidates(&self, action: &Action, roots: &Roots) -> Vec<u32> {
        let mut ranks: Vec<std::ops::Range<usize>> = Vec::new();
        let subject = &action.subject;
        let tool = subject.tool.as_str();
        if tool == "Bash" {
            let base = subject.command.as_deref().and_then(base_name_form);
            let forms = [
                subject.command.as_deref(),
                subject.written.as_deref(),
                base.as_deref(),
            ];
            let mut words: Vec<&str> = Vec::new();
            let mut every = false;
            for form in forms.into_iter().flatten() {
                let word = first_word(form);
                // A word whose value is unknown could be any first word.
                every |= word.contains(UNRESOLVED);
                words.push(word);
            }
            if every {
                ranks.push(self.range(Group::BashWord, None));
            } else {
                words.sort_unstable();
                words.dedup();
                for word in words {
                    ranks.push(self.range(Group::BashWord, Some(word)));
                }
            }
            ranks.push(self.range(Group::BashPartial, None));
        }
        ranks.push(self.range(Group::Tool, Some(tool)));
        if tool.starts_with("mcp__") {
            ranks.push(self.range(Group::McpServer, None));
        }
        ranks.push(self.range(Group::Always, None));
        let mut ids: Vec<u32> = ranks
            .into_iter()
            .flatten()
            .filter_map(|rank| self.order_id(rank))
            .collect();
        if !action.targets.is_empty() {
            let prefixes: Vec<&str> = action
                .targets
                .iter()
                .map(|t| {
                    if t.glob {
                        literal_head(&t.path)
                    } else {
                        t.path.as_str()
                    }
                })
                .collect();
            for rank in self.range(Group::Path, None) {
                let Some(id) = self.order_id(rank) else {
                    continue;
                };
                let Some(entry) = self.entry(id) else {
                    // Unreadable: a candidate, which the call then refuses to read (and asks).
                    ids.push(id);
                    continue;
                };
                let root = anchor_root(entry.anchor, roots);
                if prefixes
                    .iter()
                    .any(|p| compatible(root.as_bytes(), entry.key.as_bytes(), p.as_bytes()))
                {
                    ids.push(id);
                }
            }
        }
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// `a` then `b`, and `p`, agree (ASCII case ignored) as far as the shorter goes: one could start
/// the other, so a pattern whose literal start is `ab` could meet a path starting `p`.
fn compatible(a: &[u8], b: &[u8], p: &[u8]) -> bool {
    a.iter()
        .chain(b)
        .zip(p)
        .all(|(x, y)| x.eq_ignore_ascii_case(y))
}

/// The rules in force as compiled tables, in layer order (the user's, then the project's, whose
/// allows are dropped: [`Policy::tighten_only`]), resolved per call over the candidates only.
#[derive(Debug, Clone)]
pub struct CompiledPolicy {
    layers: Vec<(CompiledRules, bool)>,
    roots: Roots,
}

impl CompiledPolicy {
    /// The layers, each with whether it may only tighten; `roots` are the call's.
    pub fn new(layers: Vec<(CompiledRules, bool)>, roots: Roots) -> CompiledPolicy {
        CompiledPolicy { layers, roots }
    }

    fn default_mode(&self) -> DefaultMode {
        if self
            .layers
            .iter()
            .any(|(t, _)| t.default_mode() == DefaultMode::Deny)
        {
            DefaultMode::Deny
        } else {
            DefaultMode::Ask
        }
    }

    /// The policy of the rules `action` can match, parsed against the call's roots, and the
    /// first rule that no longer parses against them (a pattern past its bound here).
    fn candidates(&self, action: &Action) -> (Policy, Option<String>) {
        let mut rules = Vec::new();
        let mut failed = None;
        for (table, tighten_only) in &self.layers {
            for id in table.candidates(action, &self.roots) {
                let Some(entry) = table.entry(id) else {
                    failed.get_or_insert_with(|| format!("rule {id} of a compiled rules table"));
                    continue;
                };
                if *tighten_only && entry.decision == Decision::Allow {
                    continue;
                }
                match Rule::parse(entry.text, entry.decision, &self.roots) {
                    Ok(rule) => rules.push(rule),
                    Err(_) => {
                        failed.get_or_insert_with(|| entry.text.to_string());
                    }
                }
            }
        }
        (Policy::new(rules, self.default_mode(), None), failed)
    }
}

impl Answers for CompiledPolicy {
    fn answer(&self, action: &Action) -> Option<Answer> {
        let (policy, failed) = self.candidates(action);
        let resolved = policy.resolve(action);
        match failed {
            // A rule that could not be compiled here might have denied: anything else asks.
            Some(text)
                if resolved
                    .as_ref()
                    .is_none_or(|a| a.decision != Decision::Deny) =>
            {
                Some(Answer {
                    decision: Decision::Ask,
                    rule: text,
                    source: AnswerSource::Rule,
                })
            }
            _ => resolved,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_sees_every_byte_and_the_length() {
        let a = checksum(&[b"abcdefghij"]);
        assert_ne!(a, checksum(&[b"abcdefghiJ"]));
        assert_ne!(a, checksum(&[b"abcdefghij\0"]));
        assert_eq!(a, checksum(&[b"abcdefghij"]));
    }

    /// Strings are checked as UTF-8 where a call reads them, not when the table opens: a table
    /// whose checksum matches but whose allow rule's text is not UTF-8 (a writer's bug, or a
    /// forger, never damage) opens, and the call that meets that rule asks, never allows.
    #[test]
    fn a_candidate_whose_text_is_not_utf8_asks() {
        let roots = Roots::new("/w/p", "/home/u");
        let key = SourceKey {
            digest: [0; 32],
            stat: [0; 5],
            stat_trusted: false,
        };
        let value = serde_json::json!({"allow": ["Bash(npm test)"]});
        let bytes = compile_rules(&value, &roots, &key).unwrap();
        let allowed = CompiledPolicy::new(
            vec![(CompiledRules::open(bytes.clone()).unwrap(), false)],
            roots.clone(),
        );
        let analysis = crate::analyze(&crate::ToolCall::shell("npm test", Some("/w/p")), &roots);
        let action = &analysis.actions[0];
        assert_eq!(allowed.answer(action).unwrap().decision, Decision::Allow);

        let at = bytes
            .windows(b"Bash(npm test)".len())
            .position(|w| w == b"Bash(npm test)")
            .unwrap();
        let mut body = bytes[HEADER_LEN..].to_vec();
        body[at - HEADER_LEN + 5] = 0xFF;
        let forged = seal(bytes[..HEADER_LEN - 8].to_vec(), &body);
        let table = CompiledRules::open(forged).unwrap();
        let policy = CompiledPolicy::new(vec![(table, false)], roots);
        assert_ne!(
            policy.answer(action).map(|a| a.decision),
            Some(Decision::Allow)
        );
    }

    #[test]
    fn compatibility_reads_the_two_parts_as_one() {
        assert!(compatible(b"/home/u", b"/.ssh/", b"/HOME/u/.ssh/id_rsa"));
        assert!(compatible(b"/home/u", b"/.ssh/", b"/home"));
        assert!(!compatible(b"/home/u", b"/.ssh/", b"/home/u/.aws"));
    }
}
