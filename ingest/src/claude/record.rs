//! One Claude Code JSONL record, read for just the fields the reader uses.
//!
//! Tool results, message text and file snapshots make up most of a transcript and are never
//! kept, so they are walked without building a `serde_json::Value`. Walking still checks every
//! value exactly as parsing into a `Value` would (syntax, number range, nesting depth), so a
//! line is accepted or counted as torn as before. Fields are lenient like `Value::as_str`: a
//! field of an unexpected type reads as absent, and a repeated key keeps its last value.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The fields of a record the reader uses; absent when missing or of another type.
#[derive(Default)]
pub struct ClaudeRecord<'a> {
    /// `type`.
    pub kind: Scalar<'a>,
    /// `uuid`.
    pub uuid: Scalar<'a>,
    /// `permissionMode`.
    pub permission_mode: Scalar<'a>,
    /// `cwd`.
    pub cwd: Scalar<'a>,
    /// `timestamp`.
    pub timestamp: Scalar<'a>,
    /// `sessionId`.
    pub session_id: Scalar<'a>,
    /// `session_id` (older spelling).
    pub session_id_snake: Scalar<'a>,
    /// `version`.
    pub version: Scalar<'a>,
    /// `gitBranch`.
    pub git_branch: Scalar<'a>,
    /// `isSidechain`.
    pub is_sidechain: Scalar<'a>,
    /// `toolDenialKind`.
    pub tool_denial_kind: Scalar<'a>,
    /// `toolUseResult.interrupted`.
    pub interrupted: Scalar<'a>,
    /// `message.content` when it is an array.
    pub blocks: Option<Vec<Block<'a>>>,
}

impl<'a> ClaudeRecord<'a> {
    /// The scalar field a top-level key fills, for both readers (`serde_json`'s and
    /// `fast::parse`); `message` and `toolUseResult` are read by each reader's nested readers,
    /// and any other key is skipped.
    pub fn scalar(&mut self, key: &str) -> Option<&mut Scalar<'a>> {
        Some(match key {
            "type" => &mut self.kind,
            "uuid" => &mut self.uuid,
            "permissionMode" => &mut self.permission_mode,
            "cwd" => &mut self.cwd,
            "timestamp" => &mut self.timestamp,
            "sessionId" => &mut self.session_id,
            "session_id" => &mut self.session_id_snake,
            "version" => &mut self.version,
            "gitBranch" => &mut self.git_branch,
            "isSidechain" => &mut self.is_sidechain,
            "toolDenialKind" => &mut self.tool_denial_kind,
            _ => return None,
        })
    }
}

/// A content block of a message; absent fields when the block is not an object.
#[derive(Default)]
pub struct Block<'a> {
    /// `type`.
    pub kind: Scalar<'a>,
    /// `id` (of a `tool_use`).
    pub id: Scalar<'a>,
    /// `name` (of a `tool_use`).
    pub name: Scalar<'a>,
    /// `input` (of a `tool_use`), whole: it is stored.
    pub input: Option<Input<'a>>,
    /// `tool_use_id` (of a `tool_result`).
    pub tool_use_id: Scalar<'a>,
    /// `content` (of a `tool_result`).
    pub content: ResultContent<'a>,
    /// `is_error` (of a `tool_result`).
    pub is_error: Scalar<'a>,
}

impl<'a> Block<'a> {
    /// The scalar field a block's key fills, for both readers; `input` and `content` are read
    /// by each reader's own readers, and any other key is skipped.
    pub fn scalar(&mut self, key: &str) -> Option<&mut Scalar<'a>> {
        Some(match key {
            "type" => &mut self.kind,
            "id" => &mut self.id,
            "name" => &mut self.name,
            "tool_use_id" => &mut self.tool_use_id,
            "is_error" => &mut self.is_error,
            _ => return None,
        })
    }
}

/// A tool input: parsed by `serde_json`, or written out by the fast reading as it read it.
pub enum Input<'a> {
    /// Read by `serde_json`.
    Value(Value),
    /// Written as `serde_json::Value` writes it (compact, keys sorted), with its members' keys
    /// and raw values when it is an object.
    Written {
        /// The input as `Value` writes it.
        text: String,
        /// Each member's key and raw value, in key order.
        members: Vec<(&'a str, &'a str)>,
    },
    /// Its text in the line, checked, which the fast reading could not write out (a repeated
    /// key): `serde_json` reads it.
    Raw(&'a str),
}

/// A string or boolean field; anything else is kept only as "not a string or boolean".
#[derive(Default)]
pub enum Scalar<'a> {
    /// Missing, or of another type.
    #[default]
    Other,
    /// A string.
    Text(Cow<'a, str>),
    /// A boolean.
    Bool(bool),
}

impl Scalar<'_> {
    /// The string, like `Value::as_str`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The boolean, like `Value::as_bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Scalar::Bool(value) => Some(*value),
            _ => None,
        }
    }
}

/// A tool result's `content`: a string, the `text` of each element of an array, or other.
#[derive(Default)]
pub enum ResultContent<'a> {
    /// Missing, or neither a string nor an array.
    #[default]
    Other,
    /// A string.
    Text(Cow<'a, str>),
    /// An array: each element's `text` when it is an object with a string `text`.
    Texts(Vec<Option<Cow<'a, str>>>),
}

impl ResultContent<'_> {
    /// A tool result's text: the string, or the text blocks of an array joined.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            ResultContent::Text(text) => Cow::Borrowed(text),
            ResultContent::Texts(texts) => Cow::Owned(
                texts
                    .iter()
                    .flatten()
                    .map(|t| t.as_ref())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            ResultContent::Other => Cow::Borrowed(""),
        }
    }
}

/// Reads one line as a record with `serde_json`: `None` when it is not valid JSON (the reader
/// tries the fast reading first, and comes here when it is unsure).
pub fn parse_record(text: &str) -> Option<ClaudeRecord<'_>> {
    serde_json::from_str::<ClaudeRecord<'_>>(text).ok()
}

/// Every visitor here accepts any JSON value, so that a record of an unexpected shape reads as
/// absent fields rather than failing the line: these make a visitor take the kinds of value it
/// does not read as `$other`, walking the contents of arrays and objects.
macro_rules! accept_scalars {
    ($output:ty, $other:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<$output, E> {
            Ok($other)
        }
        fn visit_i64<E>(self, _: i64) -> Result<$output, E> {
            Ok($other)
        }
        fn visit_u64<E>(self, _: u64) -> Result<$output, E> {
            Ok($other)
        }
        fn visit_f64<E>(self, _: f64) -> Result<$output, E> {
            Ok($other)
        }
        fn visit_unit<E>(self) -> Result<$output, E> {
            Ok($other)
        }
    };
}

macro_rules! accept_str {
    ($output:ty, $other:expr) => {
        fn visit_str<E>(self, _: &str) -> Result<$output, E> {
            Ok($other)
        }
    };
}

macro_rules! accept_seq {
    ($output:ty, $other:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<$output, A::Error> {
            while seq.next_element::<Skip>()?.is_some() {}
            Ok($other)
        }
    };
}

macro_rules! accept_map {
    ($output:ty, $other:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$output, A::Error> {
            while map.next_entry::<Skip, Skip>()?.is_some() {}
            Ok($other)
        }
    };
}

/// A value walked, checked as `Value` would check it, and dropped.
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Skip, D::Error> {
        struct SkipVisitor;
        impl<'de> Visitor<'de> for SkipVisitor {
            type Value = Skip;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            accept_scalars!(Skip, Skip);
            accept_str!(Skip, Skip);
            accept_seq!(Skip, Skip);
            accept_map!(Skip, Skip);
        }
        deserializer.deserialize_any(SkipVisitor)
    }
}

/// An object key, borrowed unless it holds escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key<'de>, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_string())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Scalar<'de>, D::Error> {
        struct ScalarVisitor;
        impl<'de> Visitor<'de> for ScalarVisitor {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Text(Cow::Borrowed(text)))
            }
            fn visit_string<E>(self, text: String) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Text(Cow::Owned(text)))
            }
            fn visit_bool<E>(self, value: bool) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Bool(value))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_str<E>(self, text: &str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Text(Cow::Owned(text.to_string())))
            }
            fn visit_unit<E>(self) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            accept_seq!(Scalar<'de>, Scalar::Other);
            accept_map!(Scalar<'de>, Scalar::Other);
        }
        deserializer.deserialize_any(ScalarVisitor)
    }
}

impl<'de> Deserialize<'de> for ClaudeRecord<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ClaudeRecord<'de>, D::Error> {
        struct RecordVisitor;
        impl<'de> Visitor<'de> for RecordVisitor {
            type Value = ClaudeRecord<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Claude Code record")
            }
            accept_scalars!(ClaudeRecord<'de>, ClaudeRecord::default());
            accept_str!(ClaudeRecord<'de>, ClaudeRecord::default());
            accept_seq!(ClaudeRecord<'de>, ClaudeRecord::default());
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut record = ClaudeRecord::default();
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    match key.as_ref() {
                        "message" => record.blocks = map.next_value::<Message<'de>>()?.0,
                        "toolUseResult" => {
                            record.interrupted = map.next_value::<UseResult<'de>>()?.0;
                        }
                        other => match record.scalar(other) {
                            Some(field) => *field = map.next_value()?,
                            None => {
                                map.next_value::<Skip>()?;
                            }
                        },
                    }
                }
                Ok(record)
            }
        }
        deserializer.deserialize_any(RecordVisitor)
    }
}

/// `message`: its `content` blocks when it is an object whose `content` is an array.
struct Message<'a>(Option<Vec<Block<'a>>>);

impl<'de> Deserialize<'de> for Message<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Message<'de>, D::Error> {
        struct MessageVisitor;
        impl<'de> Visitor<'de> for MessageVisitor {
            type Value = Message<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message")
            }
            accept_scalars!(Message<'de>, Message(None));
            accept_str!(Message<'de>, Message(None));
            accept_seq!(Message<'de>, Message(None));
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut blocks = None;
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    if key == "content" {
                        blocks = map.next_value::<Blocks<'de>>()?.0;
                    } else {
                        map.next_value::<Skip>()?;
                    }
                }
                Ok(Message(blocks))
            }
        }
        deserializer.deserialize_any(MessageVisitor)
    }
}

/// A message's `content`: the blocks when it is an array.
struct Blocks<'a>(Option<Vec<Block<'a>>>);

impl<'de> Deserialize<'de> for Blocks<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Blocks<'de>, D::Error> {
        struct BlocksVisitor;
        impl<'de> Visitor<'de> for BlocksVisitor {
            type Value = Blocks<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("message content")
            }
            accept_scalars!(Blocks<'de>, Blocks(None));
            accept_str!(Blocks<'de>, Blocks(None));
            accept_map!(Blocks<'de>, Blocks(None));
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element::<Block<'de>>()? {
                    blocks.push(block);
                }
                Ok(Blocks(Some(blocks)))
            }
        }
        deserializer.deserialize_any(BlocksVisitor)
    }
}

impl<'de> Deserialize<'de> for Block<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Block<'de>, D::Error> {
        struct BlockVisitor;
        impl<'de> Visitor<'de> for BlockVisitor {
            type Value = Block<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content block")
            }
            accept_scalars!(Block<'de>, Block::default());
            accept_str!(Block<'de>, Block::default());
            accept_seq!(Block<'de>, Block::default());
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut block = Block::default();
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    if let Some(field) = block.scalar(key.as_ref()) {
                        *field = map.next_value()?;
                        continue;
                    }
                    match key.as_ref() {
                        "input" => block.input = Some(Input::Value(map.next_value()?)),
                        "content" => block.content = map.next_value()?,
                        _ => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(block)
            }
        }
        deserializer.deserialize_any(BlockVisitor)
    }
}

impl<'de> Deserialize<'de> for ResultContent<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ResultContent<'de>, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = ResultContent<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("tool result content")
            }
            accept_scalars!(ResultContent<'de>, ResultContent::Other);
            accept_map!(ResultContent<'de>, ResultContent::Other);
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(ResultContent::Text(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(ResultContent::Text(Cow::Owned(text.to_string())))
            }
            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(ResultContent::Text(Cow::Owned(text)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut texts = Vec::new();
                while let Some(TextOf(text)) = seq.next_element::<TextOf<'de>>()? {
                    texts.push(text);
                }
                Ok(ResultContent::Texts(texts))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// An element of a tool result's content: its `text` when it is an object with a string one.
struct TextOf<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for TextOf<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TextOf<'de>, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = TextOf<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content element")
            }
            accept_scalars!(TextOf<'de>, TextOf(None));
            accept_str!(TextOf<'de>, TextOf(None));
            accept_seq!(TextOf<'de>, TextOf(None));
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut text = Scalar::Other;
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    if key == "text" {
                        text = map.next_value()?;
                    } else {
                        map.next_value::<Skip>()?;
                    }
                }
                Ok(TextOf(match text {
                    Scalar::Text(text) => Some(text),
                    _ => None,
                }))
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}

/// `toolUseResult`: its `interrupted` when it is an object.
struct UseResult<'a>(Scalar<'a>);

impl<'de> Deserialize<'de> for UseResult<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<UseResult<'de>, D::Error> {
        struct UseResultVisitor;
        impl<'de> Visitor<'de> for UseResultVisitor {
            type Value = UseResult<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tool use result")
            }
            accept_scalars!(UseResult<'de>, UseResult(Scalar::Other));
            accept_str!(UseResult<'de>, UseResult(Scalar::Other));
            accept_seq!(UseResult<'de>, UseResult(Scalar::Other));
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut interrupted = Scalar::Other;
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    if key == "interrupted" {
                        interrupted = map.next_value()?;
                    } else {
                        map.next_value::<Skip>()?;
                    }
                }
                Ok(UseResult(interrupted))
            }
        }
        deserializer.deserialize_any(UseResultVisitor)
    }
}
