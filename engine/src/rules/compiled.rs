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
//! Reading is bounds-checked throughout, and a call checks what it reads, not the whole table
//! (format 2; format 1 hashed and order-checked every byte at open, ~130 k instructions of
//! every call at 1,000 rules). Opening checks the header: magic, version, its own 64-bit
//! check, and the length it records (a table cut short or grown does not open, and the caller
//! parses the rules file again). The rules are items in the search order (group, key, id), each
//! ending with a 64-bit check over its bytes, its rank and the rules file's digest. A search
//! reads slots and keys unchecked, then checks the two items that bracket its answer and that
//! their keys do bracket it, as the frozen envelope's tables do; the candidates it returns are
//! checked items. A checked item is what the writer put at that rank, and the writer's order is
//! sorted, so a bracket that checks pins the answer, and a damaged byte the search read either
//! fails a check or did not change the answer. An item that fails is an error for the call
//! ([`CompiledPolicy::damaged`]), which then asks (or denies) and never allows on it; an item
//! the call does not read cannot change its answer. The checks guard against accidental
//! damage, not a forger: the table lives in the state directory, which only its owner can
//! write and which holds the user's rules file anyway. Layout: docs/formats.md, "Compiled
//! rules tables".

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
pub const COMPILED_VERSION: u32 = 2;
/// The most rules one compiled table holds.
const MAX_RULES: usize = 1 << 20;
const HEADER_LEN: usize = 112;
/// Per rank: the item's offset (from the first item) and length, u32 each.
const SLOT_LEN: usize = 8;
/// An item's fixed fields: id (u32), tier, group, anchor, 0, key length (u32).
const ITEM_HEAD: usize = 12;
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

/// One step of a table's check: for a fixed word a bijection of the state, and for a fixed
/// state a bijection of the word, so two inputs differing in one word always differ after it.
fn mix(h: u64, word: u64) -> u64 {
    let h = (h ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 29)
}

/// A 64-bit check of `bytes` from the state `seed`: eight bytes a step, then the length, then a
/// bijective finish. Every step after a changed word is a bijection of the state, so a change
/// confined to one aligned eight-byte word (any flipped byte or bits within it) always changes
/// the check, and a changed length does; other damage goes unseen with odds of 2⁻⁶⁴. It guards
/// against damage, not a forger (module docs).
fn check(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = seed;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = mix(h, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        for (slot, byte) in word.iter_mut().zip(rest) {
            *slot = *byte;
        }
        h = mix(h, u64::from_le_bytes(word));
    }
    h = mix(h, bytes.len() as u64);
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

const HEADER_SEED: u64 = 0x243F_6A88_85A3_08D3;
const ITEM_SEED: u64 = 0x1319_8A2E_0370_7344;

/// What every item of a table is bound to: the rules file's bytes it was compiled from.
fn item_salt(digest: &[u8; 32]) -> u64 {
    check(ITEM_SEED, digest)
}

/// The check an item carries: its table (`salt`), its rank in the search order, its bytes.
fn item_check(salt: u64, rank: usize, item: &[u8]) -> u64 {
    check(mix(salt, rank as u64), item)
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
    let sum = check(HEADER_SEED, &out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
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
    // Items in the search order: (group, key, id), each rule once.
    let mut order: Vec<(Group, String, u32, Anchor, &Rule)> = policy
        .rules
        .iter()
        .zip(0u32..)
        .map(|(rule, id)| {
            let (group, key, anchor) = locate(rule);
            (group, key, id, anchor, rule)
        })
        .collect();
    order.sort_unstable_by(|a, b| (a.0, a.1.as_bytes(), a.2).cmp(&(b.0, b.1.as_bytes(), b.2)));
    let salt = item_salt(&key.digest);
    let mut slots = Vec::with_capacity(count * SLOT_LEN);
    let mut items = Vec::new();
    for (rank, (group, key_text, id, anchor, rule)) in order.iter().enumerate() {
        let start = items.len();
        let key_len = u32::try_from(key_text.len()).map_err(|_| too_big("a rule"))?;
        items.extend_from_slice(&id.to_le_bytes());
        items.extend_from_slice(&[
            decision_byte(rule.decision),
            *group as u8,
            anchor_byte(*anchor),
            0,
        ]);
        items.extend_from_slice(&key_len.to_le_bytes());
        items.extend_from_slice(key_text.as_bytes());
        items.extend_from_slice(rule.text.as_bytes());
        let sum = item_check(salt, rank, items.get(start..).unwrap_or_default());
        items.extend_from_slice(&sum.to_le_bytes());
        let offset = u32::try_from(start).map_err(|_| too_big("the rules file"))?;
        let len = u32::try_from(items.len() - start).map_err(|_| too_big("a rule"))?;
        slots.extend_from_slice(&offset.to_le_bytes());
        slots.extend_from_slice(&len.to_le_bytes());
    }
    let mut body = slots;
    body.extend_from_slice(&items);
    let flags = match policy.default_mode {
        DefaultMode::Deny => FLAG_DENY_DEFAULT,
        DefaultMode::Ask => 0,
    };
    let body_len = u32::try_from(body.len()).map_err(|_| too_big("the rules file"))?;
    let mut out = header(key, flags, count as u32, body_len);
    out.extend_from_slice(&body);
    Ok(out)
}

/// A table recording that the rules file was refused, and why: the next call gives the same
/// error without parsing the file again. The body is the message and its check.
pub fn compile_rules_refusal(message: &str, key: &SourceKey) -> Vec<u8> {
    let text = message.get(..message.len().min(4096)).unwrap_or("refused");
    let sum = item_check(item_salt(&key.digest), 0, text.as_bytes());
    let mut out = header(key, FLAG_REJECTED, 0, text.len() as u32 + 8);
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// One rule of a table, its item checked: its id (position in the policy), text, tier, group,
/// key and anchor.
#[derive(Debug, Clone, Copy)]
struct Entry<'a> {
    id: u32,
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

/// A compiled rules table whose header was checked when it was opened; each item is checked
/// when a lookup reads it (module docs).
#[derive(Debug, Clone)]
pub struct CompiledRules {
    bytes: TableBytes,
    key: SourceKey,
    flags: u32,
    count: usize,
    /// What every item's check is bound to (the rules file's digest).
    salt: u64,
    /// The rules file the table was compiled from, as errors name it.
    name: String,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

const DAMAGED: CompiledError = CompiledError("a rule read does not match its check (damaged)");

impl CompiledRules {
    /// Opens a table, checking its header (magic, version, its check, the length it records);
    /// its items are checked where a lookup reads them (module docs).
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
        let sum = u64_at(&bytes, HEADER_LEN - 8).ok_or(bad("truncated header"))?;
        if check(HEADER_SEED, head) != sum {
            return Err(bad("its header does not match its check (damaged)"));
        }
        let flags = u32_at(&bytes, 12).ok_or(bad("truncated header"))?;
        let count = u32_at(&bytes, 92).ok_or(bad("truncated header"))? as usize;
        let body_len = u32_at(&bytes, 96).ok_or(bad("truncated header"))? as usize;
        if bytes.len().checked_sub(HEADER_LEN) != Some(body_len) {
            return Err(bad(
                "its length does not match its header (cut short or grown)",
            ));
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
        let table = CompiledRules {
            bytes,
            key,
            flags,
            count,
            salt: item_salt(&digest),
            name: String::new(),
        };
        if flags & FLAG_REJECTED != 0 {
            // The refusal is read whenever the table is used: checked here, whole.
            if count != 0 || table.refusal().is_none() {
                return Err(bad("a refusal that is not text"));
            }
            return Ok(table);
        }
        if count > MAX_RULES || count.saturating_mul(SLOT_LEN) > body_len {
            return Err(bad("more rules than it holds bytes"));
        }
        Ok(table)
    }

    /// The table, naming `name` (the rules file it was compiled from) when an item it reads is
    /// damaged.
    pub fn named(mut self, name: impl Into<String>) -> CompiledRules {
        self.name = name.into();
        self
    }

    /// What errors call the table: the rules file it was compiled from, when named.
    pub fn name(&self) -> &str {
        if self.name.is_empty() {
            "a compiled rules table"
        } else {
            &self.name
        }
    }

    fn body(&self) -> &[u8] {
        self.bytes.get(HEADER_LEN..).unwrap_or(&[])
    }

    /// The bytes (to write to disk).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The same table naming `key`: the rules file's bytes are the same (the digest every item
    /// is bound to), its status is newer.
    pub fn rekeyed(&self, key: &SourceKey) -> Vec<u8> {
        let body = self.body();
        let mut out = header(key, self.flags, self.count as u32, body.len() as u32);
        out.extend_from_slice(body);
        out
    }

    /// What the table was compiled from.
    pub fn source_key(&self) -> &SourceKey {
        &self.key
    }

    /// The refusal's text, its check matching.
    fn refusal(&self) -> Option<&str> {
        let body = self.body();
        let (text, sum) = body.split_at_checked(body.len().checked_sub(8)?)?;
        let sum = u64_at(sum, 0)?;
        (item_check(self.salt, 0, text) == sum)
            .then(|| std::str::from_utf8(text).ok())
            .flatten()
    }

    /// Why the rules file was refused, when it was.
    pub fn rejected(&self) -> Option<&str> {
        (self.flags & FLAG_REJECTED != 0).then(|| self.refusal().unwrap_or("refused"))
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

    /// The bytes of the item at `rank`, unchecked (bounds-checked).
    fn raw(&self, rank: usize) -> Option<&[u8]> {
        if rank >= self.count {
            return None;
        }
        let body = self.body();
        let at = rank.checked_mul(SLOT_LEN)?;
        let offset = u32_at(body, at)? as usize;
        let len = u32_at(body, at.checked_add(4)?)? as usize;
        let items = body.get(self.count.checked_mul(SLOT_LEN)?..)?;
        items.get(offset..offset.checked_add(len)?)
    }

    /// The group byte and key bytes of an item's bytes (what the search order is sorted by).
    fn search_key(raw: &[u8]) -> Option<SearchKey<'_>> {
        let key_len = u32_at(raw, 8)? as usize;
        Some((
            *raw.get(5)?,
            raw.get(ITEM_HEAD..ITEM_HEAD.checked_add(key_len)?)?,
        ))
    }

    /// The bytes of the item at `rank` before its check, the check matching.
    fn checked(&self, rank: usize) -> Result<&[u8], CompiledError> {
        let raw = self.raw(rank).ok_or(DAMAGED)?;
        let (item, sum) = raw
            .split_at_checked(raw.len().checked_sub(8).ok_or(DAMAGED)?)
            .ok_or(DAMAGED)?;
        if u64_at(sum, 0) != Some(item_check(self.salt, rank, item)) {
            return Err(DAMAGED);
        }
        Ok(item)
    }

    /// The rule at `rank`, checked and decoded.
    fn entry(&self, rank: usize) -> Result<Entry<'_>, CompiledError> {
        let item = self.checked(rank)?;
        let decode = || -> Option<Entry<'_>> {
            let id = u32_at(item, 0)?;
            let key_len = u32_at(item, 8)? as usize;
            let key_end = ITEM_HEAD.checked_add(key_len)?;
            Group::from_byte(*item.get(5)?)?;
            Some(Entry {
                id: (id < self.count as u32).then_some(id)?,
                decision: decision_from(*item.get(4)?)?,
                anchor: anchor_from(*item.get(6)?)?,
                key: std::str::from_utf8(item.get(ITEM_HEAD..key_end)?).ok()?,
                text: std::str::from_utf8(item.get(key_end..)?).ok()?,
            })
        };
        // A checked item that does not decode was written so (a writer's bug or a forger):
        // refused the same way.
        decode().ok_or(CompiledError("a rule that does not decode"))
    }

    /// The first rank whose key is not `below` the target (`below` holds for a prefix of the
    /// search order), searched from rank `from` (a hint: a range's end is not before its
    /// start). The search reads items unchecked; then the two items that bracket its answer
    /// are checked, and that their keys do bracket it. Checked items are what the writer put at
    /// their ranks, in its sorted order, so the answer is the true one, or an item the search
    /// read was damaged and one of those checks fails.
    fn first(
        &self,
        from: usize,
        below: &dyn Fn(SearchKey<'_>) -> bool,
    ) -> Result<usize, CompiledError> {
        let (mut lo, mut hi) = (from.min(self.count), self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let key = self
                .raw(mid)
                .and_then(CompiledRules::search_key)
                .ok_or(DAMAGED)?;
            if below(key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let key_at = |rank: usize| -> Result<SearchKey<'_>, CompiledError> {
            CompiledRules::search_key(self.checked(rank)?).ok_or(DAMAGED)
        };
        if let Some(before) = lo.checked_sub(1)
            && !below(key_at(before)?)
        {
            return Err(DAMAGED);
        }
        if lo < self.count && below(key_at(lo)?) {
            return Err(DAMAGED);
        }
        Ok(lo)
    }

    /// The ranks (positions in the search order) of `group`'s rules whose key is `key`, or of
    /// all its rules.
    fn range(
        &self,
        group: Group,
        key: Option<&str>,
    ) -> Result<std::ops::Range<usize>, CompiledError> {
        let g = group as u8;
        Ok(match key {
            None => {
                let start = self.first(0, &|(e, _)| e < g)?;
                start..self.first(start, &|(e, _)| e <= g)?
            }
            Some(key) => {
                let k = key.as_bytes();
                let start = self.first(0, &|e| e < (g, k))?;
                start..self.first(start, &|e| e <= (g, k))?
            }
        })
    }

    /// The rules `action` can match, checked, in the policy's order: a superset of those it
    /// matches (module docs). An item it reads that fails its check is an error.
    fn candidates(&self, action: &Action, roots: &Roots) -> Result<Vec<Entry<'_>>, CompiledError> {
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
                ranks.push(self.range(Group::BashWord, None)?);
            } else {
                words.sort_unstable();
                words.dedup();
                for word in words {
                    ranks.push(self.range(Group::BashWord, Some(word))?);
                }
            }
            ranks.push(self.range(Group::BashPartial, None)?);
        }
        ranks.push(self.range(Group::Tool, Some(tool))?);
        if tool.starts_with("mcp__") {
            ranks.push(self.range(Group::McpServer, None)?);
        }
        ranks.push(self.range(Group::Always, None)?);
        let mut entries = Vec::new();
        for rank in ranks.into_iter().flatten() {
            entries.push(self.entry(rank)?);
        }
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
            for rank in self.range(Group::Path, None)? {
                let entry = self.entry(rank)?;
                let root = anchor_root(entry.anchor, roots);
                if prefixes
                    .iter()
                    .any(|p| compatible(root.as_bytes(), entry.key.as_bytes(), p.as_bytes()))
                {
                    entries.push(entry);
                }
            }
        }
        entries.sort_unstable_by_key(|e| e.id);
        entries.dedup_by_key(|e| e.id);
        Ok(entries)
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
    /// The first layer found damaged by a lookup, and how (the call asks: [`Answers::answer`]).
    damage: std::sync::OnceLock<(usize, CompiledError)>,
}

impl CompiledPolicy {
    /// The layers, each with whether it may only tighten; `roots` are the call's.
    pub fn new(layers: Vec<(CompiledRules, bool)>, roots: Roots) -> CompiledPolicy {
        CompiledPolicy {
            layers,
            roots,
            damage: std::sync::OnceLock::new(),
        }
    }

    /// The first table a lookup found damaged (an item it read failed its check), and how: the
    /// answers given since then asked, and the table should be rebuilt from its rules file.
    pub fn damaged(&self) -> Option<(&CompiledRules, &CompiledError)> {
        let (layer, error) = self.damage.get()?;
        Some((&self.layers.get(*layer)?.0, error))
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

    /// The policy of the rules `action` can match, parsed against the call's roots, and what
    /// failed: a table whose items do not check, or the first rule that no longer parses
    /// against them (a pattern past its bound here).
    fn candidates(&self, action: &Action) -> (Policy, Option<String>) {
        let mut rules = Vec::new();
        let mut failed = None;
        for (layer, (table, tighten_only)) in self.layers.iter().enumerate() {
            let entries = match table.candidates(action, &self.roots) {
                Ok(entries) => entries,
                Err(e) => {
                    failed.get_or_insert_with(|| format!("{} ({})", table.name(), e.0));
                    let _ = self.damage.set((layer, e));
                    continue;
                }
            };
            for entry in entries {
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
            // A rule that could not be read or compiled here might have denied: anything else
            // asks.
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

    /// Any change within one eight-byte word, and any change of length, changes the check.
    #[test]
    fn the_check_sees_every_bit_and_the_length() {
        let bytes: Vec<u8> = (0u8..37).collect();
        let a = check(7, &bytes);
        assert_eq!(a, check(7, &bytes));
        assert_ne!(a, check(8, &bytes));
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[at] ^= 1 << bit;
                assert_ne!(a, check(7, &flipped), "byte {at} bit {bit}");
            }
            assert_ne!(a, check(7, &bytes[..at]), "cut to {at}");
        }
        let mut grown = bytes.clone();
        grown.push(0);
        assert_ne!(a, check(7, &grown));
        // Bound to the rank.
        assert_ne!(item_check(1, 0, &bytes), item_check(1, 1, &bytes));
    }

    /// A checked item is what its writer wrote; its strings are still decoded where a call
    /// reads them: a table whose allow rule's text is not UTF-8 but whose checks match (a
    /// writer's bug, or a forger, never damage) opens, and the call that meets that rule asks,
    /// never allows.
    #[test]
    fn a_candidate_whose_text_is_not_utf8_asks() {
        let roots = Roots::new("/w/p", "/home/u");
        let key = SourceKey {
            digest: [0; 32],
            stat: [0; 5],
            stat_trusted: false,
        };
        let value = serde_json::json!({"allow": ["Bash(npm test)"], "defaultMode": "ask"});
        let bytes = compile_rules(&value, &roots, &key).unwrap();
        let allowed = CompiledPolicy::new(
            vec![(CompiledRules::open(bytes.clone()).unwrap(), false)],
            roots.clone(),
        );
        let analysis = crate::analyze(&crate::ToolCall::shell("npm test", Some("/w/p")), &roots);
        let action = &analysis.actions[0];
        assert_eq!(allowed.answer(action).unwrap().decision, Decision::Allow);
        assert!(allowed.damaged().is_none());

        // The one item: after the header and its slot; its text, then its check.
        let start = HEADER_LEN + SLOT_LEN;
        let mut forged = bytes.clone();
        let end = forged.len() - 8;
        let at = forged
            .windows(b"Bash(npm test)".len())
            .position(|w| w == b"Bash(npm test)")
            .unwrap();
        forged[at + 5] = 0xFF;
        let sum = item_check(item_salt(&key.digest), 0, &forged[start..end]);
        forged[end..].copy_from_slice(&sum.to_le_bytes());
        let table = CompiledRules::open(forged).unwrap().named("rules.json");
        let policy = CompiledPolicy::new(vec![(table, false)], roots);
        let answer = policy.answer(action).unwrap();
        assert_eq!(answer.decision, Decision::Ask);
        assert!(answer.rule.contains("rules.json"), "{}", answer.rule);
        assert!(policy.damaged().is_some());
    }

    /// A table rekeyed (the rules file's bytes the same, its status newer) keeps its items:
    /// they are bound to the rules file's digest, not its status.
    #[test]
    fn a_rekeyed_table_answers_as_before() {
        let roots = Roots::new("/w/p", "/home/u");
        let key = SourceKey {
            digest: [7; 32],
            stat: [1, 2, 3, 4, 5],
            stat_trusted: false,
        };
        let value = serde_json::json!({"allow": ["Bash(npm test)"], "deny": ["Bash(rm:*)"],
            "defaultMode": "ask"});
        let table = CompiledRules::open(compile_rules(&value, &roots, &key).unwrap()).unwrap();
        let newer = SourceKey {
            stat: [1, 2, 3, 9, 9],
            stat_trusted: true,
            ..key
        };
        let rekeyed = CompiledRules::open(table.rekeyed(&newer)).unwrap();
        assert_eq!(rekeyed.source_key(), &newer);
        let policy = CompiledPolicy::new(vec![(rekeyed, false)], roots.clone());
        for (command, decision) in [("npm test", Decision::Allow), ("rm x", Decision::Deny)] {
            let analysis = crate::analyze(&crate::ToolCall::shell(command, Some("/w/p")), &roots);
            let answer = policy.answer(&analysis.actions[0]).unwrap();
            assert_eq!(answer.decision, decision, "{command}");
        }
        assert!(policy.damaged().is_none());
    }

    #[test]
    fn compatibility_reads_the_two_parts_as_one() {
        assert!(compatible(b"/home/u", b"/.ssh/", b"/HOME/u/.ssh/id_rsa"));
        assert!(compatible(b"/home/u", b"/.ssh/", b"/home"));
        assert!(!compatible(b"/home/u", b"/.ssh/", b"/home/u/.aws"));
    }
}
