//! Every transcript reader on arbitrary bytes, through the registry's read functions (the same
//! `Source::read` a run calls): Claude Code JSONL, SpecStory, Codex, Copilot, Gemini and the
//! hook's ledger (Cursor's reads SQLite and is left to its own tests). Input: one byte choosing
//! the source, then the files' bytes separated by `\n%%FILE%%\n` (Copilot's events then its
//! `workspace.yaml`; the ledger's rotation then its current file). Must never panic or hang.
#![no_main]

use std::path::Path;

use leastgrant_ingest::common::BadCounts;
use leastgrant_ingest::registry::source_of_kind;
use leastgrant_ingest::source::Contents;
use libfuzzer_sys::fuzz_target;

const SEPARATOR: &[u8] = b"\n%%FILE%%\n";

/// Per source: its stored kind, the path it is read as, and the files making it up.
const SOURCES: &[(&str, &str, &[&str])] = &[
    (
        "claude-jsonl",
        "/fuzz/home/.claude/projects/-w-app/s1.jsonl",
        &["/fuzz/home/.claude/projects/-w-app/s1.jsonl"],
    ),
    (
        "specstory",
        "/w/app/.specstory/history/2026-03-01_10-00-00Z-x.md",
        &["/w/app/.specstory/history/2026-03-01_10-00-00Z-x.md"],
    ),
    (
        "codex-jsonl",
        "/fuzz/home/.codex/sessions/2026/03/01/rollout-2026-03-01T10-00-00-1.jsonl",
        &["/fuzz/home/.codex/sessions/2026/03/01/rollout-2026-03-01T10-00-00-1.jsonl"],
    ),
    (
        "copilot-jsonl",
        "/fuzz/home/.copilot/session-state/5e551011/events.jsonl",
        &[
            "/fuzz/home/.copilot/session-state/5e551011/events.jsonl",
            "/fuzz/home/.copilot/session-state/5e551011/workspace.yaml",
        ],
    ),
    (
        "gemini-chats",
        "/fuzz/home/.gemini/tmp/widgets/chats/session-2026-09-01T10-00-1.jsonl",
        &["/fuzz/home/.gemini/tmp/widgets/chats/session-2026-09-01T10-00-1.jsonl"],
    ),
    (
        "gemini-chats",
        "/fuzz/home/.gemini/tmp/widgets/chats/session-2026-08-01T09-00-2.json",
        &["/fuzz/home/.gemini/tmp/widgets/chats/session-2026-08-01T09-00-2.json"],
    ),
    (
        "ledger",
        "/fuzz/state/ledger.jsonl",
        &["/fuzz/state/ledger.jsonl.1", "/fuzz/state/ledger.jsonl"],
    ),
];

fn split(mut bytes: &[u8], parts: usize) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(parts);
    while out.len() + 1 < parts {
        match bytes.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
            Some(at) => {
                out.push(&bytes[..at]);
                bytes = &bytes[at + SEPARATOR.len()..];
            }
            None => break,
        }
    }
    out.push(bytes);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let (kind, path, files) = SOURCES[usize::from(which) % SOURCES.len()];
    let source = source_of_kind(kind).expect("a registered source kind");
    let mut contents = Contents::default();
    for (file, bytes) in files.iter().zip(split(rest, files.len())) {
        contents.push(Path::new(file), bytes.to_vec());
    }
    let mut bad = BadCounts::default();
    let events = (source.read)(Path::new(path), &contents, &mut bad);
    for event in &events {
        assert!(
            !event.event_id.is_empty(),
            "an event without an id from {kind}"
        );
    }
});
