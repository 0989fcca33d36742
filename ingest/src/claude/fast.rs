//! The fast reading of one Claude Code record, and of a tool input's stored text: a strict
//! scanner over the line's bytes that borrows what it keeps and jumps over strings with `memchr`.
//!
//! It accepts only lines it is sure `serde_json` accepts as a `Value` (JSON syntax, no raw
//! control byte, no surrogate escape, no number with an exponent or over 300 digits, nesting
//! under 100, unescaped keys) and reads the same fields as [`super::record`]'s visitors; on
//! anything else it answers "unsure" (`None`) and the line is read by `serde_json` as before, so
//! which lines are torn, and what each field reads, does not change.

use std::borrow::Cow;

use super::record::{Block, ClaudeRecord, Input, ResultContent, Scalar};
use super::scan;

/// Nesting deeper than this is left to `serde_json` (its limit is 128).
const MAX_DEPTH: u32 = 100;

/// Integer digits beyond which a number may overflow `f64` (left to `serde_json`).
const MAX_DIGITS: usize = 300;

/// "Not sure": the line or value is left to `serde_json`.
struct Unsure;

type Sure<T> = Result<T, Unsure>;

/// A string as written: its text between the quotes, whether it holds escapes, and whether
/// each escape is the one `serde_json` writes (then the raw text is how it writes the value).
#[derive(Clone, Copy)]
struct RawStr<'a> {
    raw: &'a str,
    escaped: bool,
    canonical: bool,
}

impl<'a> RawStr<'a> {
    /// The string's value, borrowed unless it holds escapes.
    fn value(self) -> Sure<Cow<'a, str>> {
        if self.escaped {
            unescape(self.raw).map(Cow::Owned)
        } else {
            Ok(Cow::Borrowed(self.raw))
        }
    }
}

/// Four hex digits (either case), as `serde_json` reads them.
fn hex4(digits: &[u8]) -> Option<u32> {
    if digits.len() != 4 {
        return None;
    }
    digits
        .iter()
        .try_fold(0u32, |n, d| Some(n * 16 + char::from(*d).to_digit(16)?))
}

/// The value of a string's escaped text (escapes already checked by [`Cursor::string`]).
fn unescape(raw: &str) -> Sure<String> {
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'\\', bytes.get(at..).unwrap_or(&[])) {
        out.push_str(raw.get(at..at + found).ok_or(Unsure)?);
        at += found;
        let escape = bytes.get(at + 1).copied().ok_or(Unsure)?;
        let (ch, width) = match escape {
            b'"' => ('"', 2),
            b'\\' => ('\\', 2),
            b'/' => ('/', 2),
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => {
                let n = hex4(bytes.get(at + 2..at + 6).ok_or(Unsure)?).ok_or(Unsure)?;
                (char::from_u32(n).ok_or(Unsure)?, 6)
            }
            _ => return Err(Unsure),
        };
        out.push(ch);
        at += width;
    }
    out.push_str(raw.get(at..).ok_or(Unsure)?);
    Ok(out)
}

/// Whether `bytes` hold a byte under 0x20 (a raw control character: whitespace between tokens
/// to JSON, an error inside a string; such lines are left to `serde_json`). Chunked so that the
/// compiler checks many bytes per instruction.
fn has_control(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(32);
    let found = chunks
        .by_ref()
        .any(|chunk| chunk.iter().fold(u8::MAX, |m, b| m.min(*b)) < 0x20);
    found || chunks.remainder().iter().any(|b| *b < 0x20)
}

/// A position in one line.
struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: u32,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            text,
            bytes: text.as_bytes(),
            at: 0,
            depth: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Sure<()> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(Unsure)
        }
    }

    fn at_end(&mut self) -> bool {
        self.ws();
        self.at == self.bytes.len()
    }

    /// A string: its raw text, escapes checked (a surrogate escape is left to `serde_json`,
    /// which refuses a lone one) and noted whether each is the one `serde_json` writes.
    fn string(&mut self) -> Sure<RawStr<'a>> {
        self.eat(b'"')?;
        let start = self.at;
        let mut escaped = false;
        let mut canonical = true;
        let mut from = start;
        loop {
            let (base, mut stops) = scan::stops_from(self.bytes, from).ok_or(Unsure)?;
            // Each stop of this mask in turn: the closing quote, or an escape passed over.
            while stops != 0 {
                let at = base + stops.trailing_zeros() as usize;
                if self.bytes.get(at) == Some(&b'"') {
                    let raw = self.text.get(start..at).ok_or(Unsure)?;
                    self.at = at + 1;
                    return Ok(RawStr {
                        raw,
                        escaped,
                        canonical,
                    });
                }
                escaped = true;
                let width = match self.bytes.get(at + 1) {
                    Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
                    Some(b'/') => {
                        canonical = false;
                        2
                    }
                    Some(b'u') => {
                        let digits = self.bytes.get(at + 2..at + 6).ok_or(Unsure)?;
                        let n = hex4(digits).ok_or(Unsure)?;
                        if (0xD800..=0xDFFF).contains(&n) {
                            return Err(Unsure);
                        }
                        canonical &= written_as_serde_json_writes(digits);
                        6
                    }
                    _ => return Err(Unsure),
                };
                // The escaped byte may be a quote or backslash: its stop is passed over.
                from = at + width;
                stops = u32::MAX
                    .checked_shl((from - base) as u32)
                    .map_or(0, |keep| stops & keep);
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        self.at - start
    }

    /// A number without an exponent and with few enough digits to be a finite `f64`.
    fn number(&mut self) -> Sure<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.at += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(Unsure);
                }
            }
            Some(b'1'..=b'9') => {
                if self.digits() > MAX_DIGITS {
                    return Err(Unsure);
                }
            }
            _ => return Err(Unsure),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(Unsure);
            }
        }
        match self.peek() {
            Some(b'e' | b'E') => Err(Unsure),
            _ => Ok(()),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Sure<()> {
        if self.bytes.get(self.at..self.at + word.len()) == Some(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(Unsure)
        }
    }

    fn enter(&mut self) -> Sure<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Unsure);
        }
        Ok(())
    }

    /// An object, each member's value read by `member` (given the key, which must hold no
    /// escape).
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Sure<()>) -> Sure<()> {
        self.eat(b'{')?;
        self.enter()?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.ws();
            let key = self.string()?;
            if key.escaped {
                return Err(Unsure);
            }
            self.ws();
            self.eat(b':')?;
            self.ws();
            member(self, key.raw)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return Err(Unsure),
            }
        }
    }

    /// An array, each element read by `element`.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Sure<()>) -> Sure<()> {
        self.eat(b'[')?;
        self.enter()?;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.ws();
            element(self)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return Err(Unsure),
            }
        }
    }

    /// Any value, checked and passed over.
    fn skip(&mut self) -> Sure<()> {
        match self.peek() {
            Some(b'"') => self.string().map(|_| ()),
            Some(b'{') => self.object(|c, _| c.skip()),
            Some(b'[') => self.array(Cursor::skip),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Unsure),
        }
    }

    /// Any value, passed over: its text.
    fn raw_value(&mut self) -> Sure<&'a str> {
        let start = self.at;
        self.skip()?;
        self.text.get(start..self.at).ok_or(Unsure)
    }

    /// A string or boolean; anything else is passed over as [`Scalar::Other`].
    fn scalar(&mut self) -> Sure<Scalar<'a>> {
        match self.peek() {
            Some(b'"') => Ok(Scalar::Text(self.string()?.value()?)),
            Some(b't') => self.literal(b"true").map(|()| Scalar::Bool(true)),
            Some(b'f') => self.literal(b"false").map(|()| Scalar::Bool(false)),
            _ => self.skip().map(|()| Scalar::Other),
        }
    }

    /// `message`: the blocks of its `content` (the last one) when it is an object.
    fn message(&mut self) -> Sure<Option<Vec<Block<'a>>>> {
        if self.peek() != Some(b'{') {
            return self.skip().map(|()| None);
        }
        let mut blocks = None;
        self.object(|c, key| {
            if key == "content" {
                blocks = c.blocks()?;
                Ok(())
            } else {
                c.skip()
            }
        })?;
        Ok(blocks)
    }

    /// A message's `content`: its blocks when it is an array.
    fn blocks(&mut self) -> Sure<Option<Vec<Block<'a>>>> {
        if self.peek() != Some(b'[') {
            return self.skip().map(|()| None);
        }
        let mut blocks = Vec::new();
        self.array(|c| {
            blocks.push(c.block()?);
            Ok(())
        })?;
        Ok(Some(blocks))
    }

    /// A content block; one that is not an object reads as absent fields.
    fn block(&mut self) -> Sure<Block<'a>> {
        let mut block = Block::default();
        if self.peek() != Some(b'{') {
            return self.skip().map(|()| block);
        }
        self.object(|c, key| {
            if let Some(field) = block.scalar(key) {
                *field = c.scalar()?;
                return Ok(());
            }
            match key {
                "input" => block.input = Some(c.input()?),
                "content" => block.content = c.result_content()?,
                _ => return c.skip(),
            }
            Ok(())
        })?;
        Ok(block)
    }

    /// A tool input, written out as it is read; its raw text when it cannot be (read again).
    fn input(&mut self) -> Sure<Input<'a>> {
        let (start, depth) = (self.at, self.depth);
        let mut text = String::new();
        match canonical(self, &mut text) {
            Ok(members) => Ok(Input::Written { text, members }),
            Err(Unsure) => {
                self.at = start;
                self.depth = depth;
                self.raw_value().map(Input::Raw)
            }
        }
    }

    /// A tool result's `content`: a string, the texts of an array's elements, or other.
    fn result_content(&mut self) -> Sure<ResultContent<'a>> {
        match self.peek() {
            Some(b'"') => Ok(ResultContent::Text(self.string()?.value()?)),
            Some(b'[') => {
                let mut texts = Vec::new();
                self.array(|c| {
                    texts.push(c.text_of()?);
                    Ok(())
                })?;
                Ok(ResultContent::Texts(texts))
            }
            _ => self.skip().map(|()| ResultContent::Other),
        }
    }

    /// An element of a tool result's content: its (last) `text` when that is a string.
    fn text_of(&mut self) -> Sure<Option<Cow<'a, str>>> {
        if self.peek() != Some(b'{') {
            return self.skip().map(|()| None);
        }
        let mut text = Scalar::Other;
        self.object(|c, key| {
            if key == "text" {
                text = c.scalar()?;
                Ok(())
            } else {
                c.skip()
            }
        })?;
        Ok(match text {
            Scalar::Text(text) => Some(text),
            _ => None,
        })
    }

    /// `toolUseResult`: its (last) `interrupted` when it is an object.
    fn use_result(&mut self) -> Sure<Scalar<'a>> {
        if self.peek() != Some(b'{') {
            return self.skip().map(|()| Scalar::Other);
        }
        let mut interrupted = Scalar::Other;
        self.object(|c, key| {
            if key == "interrupted" {
                interrupted = c.scalar()?;
                Ok(())
            } else {
                c.skip()
            }
        })?;
        Ok(interrupted)
    }
}

/// One line read as a record, when the fast reading is sure of it (`None`: read it with
/// `serde_json`, which also decides whether it is JSON at all).
pub fn parse(text: &str) -> Option<ClaudeRecord<'_>> {
    if has_control(text.as_bytes()) {
        return None;
    }
    let mut cursor = Cursor::new(text);
    cursor.ws();
    // A line that is JSON but not an object is rare: serde_json reads it.
    if cursor.peek() != Some(b'{') {
        return None;
    }
    let mut record = ClaudeRecord::default();
    cursor
        .object(|c, key| match key {
            "message" => {
                record.blocks = c.message()?;
                Ok(())
            }
            "toolUseResult" => {
                record.interrupted = c.use_result()?;
                Ok(())
            }
            other => match record.scalar(other) {
                Some(field) => {
                    *field = c.scalar()?;
                    Ok(())
                }
                None => c.skip(),
            },
        })
        .ok()?;
    cursor.at_end().then_some(record)
}

/// What a call keeps of its tool input: the stored JSON text, the shell command and the file
/// path (as `crate::common::command_and_path` reads them).
pub struct InputFacts {
    /// The input as `serde_json::Value` writes it: compact, object keys sorted.
    pub text: String,
    /// The shell command.
    pub command: Option<String>,
    /// The file path.
    pub file_path: Option<String>,
}

/// The facts of a tool input the fast reading wrote out ([`Input::Written`]): its text, and the
/// command and file path read from its members.
pub fn input_facts(text: String, members: &[(&str, &str)]) -> InputFacts {
    let string = |key: &str| -> Option<String> {
        let value = members.iter().find(|(k, _)| *k == key)?.1;
        let mut cursor = Cursor::new(value);
        match cursor.peek() {
            Some(b'"') => cursor.string().ok()?.value().ok().map(Cow::into_owned),
            _ => None,
        }
    };
    let command = string("command").or_else(|| string("cmd")).or_else(|| {
        let value = members.iter().find(|(k, _)| *k == "command")?.1;
        let mut cursor = Cursor::new(value);
        if cursor.peek() != Some(b'[') {
            return None;
        }
        let mut words: Vec<String> = Vec::new();
        cursor
            .array(|c| {
                if let Scalar::Text(word) = c.scalar()? {
                    words.push(word.into_owned());
                }
                Ok(())
            })
            .ok()?;
        Some(words.join(" "))
    });
    let file_path = [
        "file_path",
        "notebook_path",
        "target_file",
        "path",
        "filePath",
    ]
    .into_iter()
    .find_map(string);
    InputFacts {
        text,
        command,
        file_path,
    }
}

/// Whether a `\u` escape with these four digits is the one `serde_json` writes for its
/// character: only control characters without a short escape (`\b`, `\t`, `\n`, `\f`,
/// `\r`) are written so, as `\u00xx` in lower case (as JavaScript's `JSON.stringify` writes
/// them too). With every escape of a string so (and no `\/`), the string written again is its
/// raw text.
fn written_as_serde_json_writes(digits: &[u8]) -> bool {
    let control = match digits {
        [b'0', b'0', high @ (b'0' | b'1'), low] => char::from(*low)
            .to_digit(16)
            .filter(|_| !low.is_ascii_uppercase())
            .map(|low| u32::from(high - b'0') * 16 + low),
        _ => None,
    };
    control.is_some_and(|c| !matches!(c, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d))
}

/// Writes the value at the cursor as `serde_json::Value` would (compact, keys sorted, strings
/// escaped by `serde_json`, numbers as it prints them); returns the members (key, raw value)
/// when it is an object.
fn canonical<'a>(cursor: &mut Cursor<'a>, out: &mut String) -> Sure<Vec<(&'a str, &'a str)>> {
    cursor.ws();
    match cursor.peek() {
        Some(b'{') => {
            // Each member is written once, `"key":value`, in the order read; when the keys were
            // not in order the written members are put in order (a copy, not a second reading).
            let object = out.len();
            out.push('{');
            let mut members: Vec<(&'a str, &'a str, std::ops::Range<usize>)> = Vec::new();
            cursor.object(|c, key| {
                if members.is_empty() {
                    out.push('"');
                } else {
                    out.push_str(",\"");
                }
                let written = out.len() - 1;
                out.push_str(key);
                out.push_str("\":");
                let start = c.at;
                canonical(c, out)?;
                members.push((
                    key,
                    c.text.get(start..c.at).ok_or(Unsure)?,
                    written..out.len(),
                ));
                Ok(())
            })?;
            out.push('}');
            // `Value`'s map is a `BTreeMap`: keys in byte order, a repeated key's last value.
            if !members.is_sorted_by(|a, b| a.0 < b.0) {
                members.sort_by(|a, b| a.0.cmp(b.0));
                if members
                    .windows(2)
                    .any(|w| w.first().map(|m| m.0) == w.get(1).map(|m| m.0))
                {
                    return Err(Unsure);
                }
                let read = out.split_off(object);
                out.push('{');
                for (index, (_, _, written)) in members.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    let written = written.start - object..written.end - object;
                    out.push_str(read.get(written).ok_or(Unsure)?);
                }
                out.push('}');
            }
            Ok(members
                .into_iter()
                .map(|(key, raw, _)| (key, raw))
                .collect())
        }
        Some(b'[') => {
            let mut first = true;
            out.push('[');
            cursor.array(|c| {
                if !first {
                    out.push(',');
                }
                first = false;
                canonical(c, out).map(|_| ())
            })?;
            out.push(']');
            Ok(Vec::new())
        }
        Some(b'"') => {
            let string = cursor.string()?;
            if !string.canonical {
                let value = string.value()?;
                out.push_str(&serde_json::to_string(value.as_ref()).map_err(|_| Unsure)?);
            } else {
                out.push('"');
                out.push_str(string.raw);
                out.push('"');
            }
            Ok(Vec::new())
        }
        Some(b'-' | b'0'..=b'9') => {
            let start = cursor.at;
            cursor.number()?;
            let number = cursor.text.get(start..cursor.at).ok_or(Unsure)?;
            // A plain integer prints as written; any other number as `serde_json` prints it.
            let plain = number != "-0"
                && !number.contains('.')
                && (number.parse::<u64>().is_ok() || number.parse::<i64>().is_ok());
            if plain {
                out.push_str(number);
            } else {
                let value: serde_json::Value = serde_json::from_str(number).map_err(|_| Unsure)?;
                out.push_str(&value.to_string());
            }
            Ok(Vec::new())
        }
        _ => {
            let literal = cursor.raw_value()?;
            out.push_str(literal);
            Ok(Vec::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::{Block, ClaudeRecord, Input, Scalar};
    use crate::common::command_and_path;

    fn scalar(s: &Scalar<'_>) -> String {
        match s {
            Scalar::Other => "-".to_string(),
            Scalar::Text(t) => format!("{t:?}"),
            Scalar::Bool(b) => b.to_string(),
        }
    }

    fn input(input: &Option<Input<'_>>) -> String {
        let of_value = |v: &serde_json::Value| {
            let (command, path) = command_and_path(v);
            format!("{v} {command:?} {path:?}")
        };
        match input {
            None => "none".to_string(),
            Some(Input::Value(v)) => of_value(v),
            Some(Input::Written { text, members }) => {
                let f = super::input_facts(text.clone(), members);
                format!("{} {:?} {:?}", f.text, f.command, f.file_path)
            }
            Some(Input::Raw(raw)) => of_value(&serde_json::from_str(raw).unwrap()),
        }
    }

    fn block(b: &Block<'_>) -> String {
        format!(
            "[{} {} {} {} {} {} {:?}]",
            scalar(&b.kind),
            scalar(&b.id),
            scalar(&b.name),
            scalar(&b.tool_use_id),
            scalar(&b.is_error),
            input(&b.input),
            b.content.text()
        )
    }

    /// Every field the reader uses, written out.
    fn render(r: &ClaudeRecord<'_>) -> String {
        let fields = [
            &r.kind,
            &r.uuid,
            &r.permission_mode,
            &r.cwd,
            &r.timestamp,
            &r.session_id,
            &r.session_id_snake,
            &r.version,
            &r.git_branch,
            &r.is_sidechain,
            &r.tool_denial_kind,
            &r.interrupted,
        ];
        let mut out: Vec<String> = fields.iter().map(|s| scalar(s)).collect();
        out.push(match &r.blocks {
            None => "no blocks".to_string(),
            Some(blocks) => blocks.iter().map(block).collect::<Vec<_>>().join(","),
        });
        out.join(" ")
    }

    /// The fast reading agrees with `serde_json` on every line it is sure of (and on whether
    /// it is JSON), and the tool input text it writes is `Value`'s.
    fn agrees(line: &str) -> bool {
        let slow = serde_json::from_str::<ClaudeRecord<'_>>(line).ok();
        match super::parse(line) {
            None => false,
            Some(fast) => {
                let slow =
                    slow.unwrap_or_else(|| panic!("fast accepted a line serde refuses: {line}"));
                assert_eq!(render(&fast), render(&slow), "{line}");
                true
            }
        }
    }

    /// A JSON string's raw text from pieces: plain runs of varied lengths (so escapes land on
    /// every offset of the sixteen-byte scan) and every kind of escape; a piece is one the
    /// fast reading must refuse (a lone surrogate, a bad escape, a bare quote) once in 64.
    /// Also whether every piece was one it must read.
    fn raw_string(pieces: &[(u8, u8)]) -> (String, bool) {
        const SURE: [&str; 13] = [
            "", "\\n", "\\\"", "\\\\", "\\/", "\\t", "\\b", "\\f", "\\r", "\\u00e9", "\\u001f",
            "\\u000A", "\\u0041",
        ];
        const REFUSED: [&str; 4] = ["\\ud83d", "\\x", "\"", "\\u12g"];
        let mut sure = true;
        let text = pieces
            .iter()
            .map(|(run, escape)| {
                let plain = "abcdefghijklmnopqrstuvwxyz0123456789é"
                    .chars()
                    .cycle()
                    .take(usize::from(*run % 40))
                    .collect::<String>();
                let escape = if *escape < 4 {
                    sure = false;
                    REFUSED[usize::from(*escape)]
                } else {
                    SURE[usize::from(*escape) % SURE.len()]
                };
                plain + escape
            })
            .collect();
        (text, sure)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

        /// Strings with escapes anywhere, in the fields the reader keeps (an input's value and
        /// key order, a result's text) and in one it passes over: the fast reading agrees with
        /// `serde_json`, is sure of every line of escapes it knows, and refuses the others.
        #[test]
        fn the_fast_reading_agrees_on_strings_with_escapes_anywhere(
            a in proptest::collection::vec((0u8..=255, 0u8..=255), 0..12),
            b in proptest::collection::vec((0u8..=255, 0u8..=255), 0..12),
            c in proptest::collection::vec((0u8..=255, 0u8..=255), 0..12),
        ) {
            let ((a, a_sure), (b, b_sure), (c, c_sure)) = (raw_string(&a), raw_string(&b), raw_string(&c));
            let call = format!(
                r#"{{"type":"assistant","uuid":"u","message":{{"content":[{{"type":"tool_use","id":"t","name":"Bash","input":{{"z":[{{"y":"{b}","x":1}}],"command":"{a}"}}}}]}}}}"#
            );
            let result = format!(
                r#"{{"type":"user","uuid":"v","message":{{"content":[{{"type":"tool_result","tool_use_id":"t","content":"{a}"}}]}},"toolUseResult":{{"stdout":"{c}","interrupted":false}}}}"#
            );
            for (line, sure) in [(call, a_sure && b_sure), (result, a_sure && c_sure)] {
                proptest::prop_assert_eq!(agrees(&line), sure, "{}", line);
            }
        }
    }

    #[test]
    fn the_fast_reading_agrees_with_serde_json() {
        let cases = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/claude/fast_cases.jsonl"
        ))
        .unwrap();
        let sure = cases.lines().filter(|line| agrees(line)).count();
        // Most cases are read fast; the unsure ones (bad JSON, surrogates, exponents, escaped
        // keys, deep nesting, tabs, non-objects) go to serde_json.
        assert_eq!(sure, 27, "lines read fast");
    }

    #[test]
    fn inputs_with_objects_inside_are_written_out_by_the_fast_reading() {
        // Objects in arrays and in objects, keys out of order at every level: written out in
        // one reading (what `Value` writes is checked by the test above), not handed to serde.
        let cases = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/claude/fast_cases.jsonl"
        ))
        .unwrap();
        for id in ["toolu_40", "toolu_41"] {
            let line = cases.lines().find(|l| l.contains(id)).unwrap();
            let record = super::parse(line).unwrap();
            let input = &record.blocks.as_ref().unwrap()[0].input;
            assert!(matches!(input, Some(Input::Written { .. })), "{id}");
        }
    }

    #[test]
    fn the_fast_reading_agrees_on_the_real_samples() {
        let root = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/datasets/claude-code"
        ));
        let mut lines = 0;
        for file in crate::claude::discover(root) {
            let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
            for line in text.lines() {
                agrees(line);
                // A line cut anywhere is refused by both, or read alike.
                for cut in [line.len() / 3, line.len() / 2, line.len().saturating_sub(2)] {
                    if let Some(part) = line.get(..cut) {
                        agrees(part);
                    }
                }
                lines += 1;
            }
        }
        println!("{lines} lines compared");
    }
}
