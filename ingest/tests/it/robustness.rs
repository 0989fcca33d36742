//! Bad input never panics and never loses what is good: arbitrary bytes, and real-looking records
//! cut, glued and corrupted at random, through every line-based reader.

use std::path::Path;

use leastgrant_ingest::common::BadCounts;
use proptest::prelude::*;
use serde_json::json;

fn call(id: usize) -> String {
    json!({"type": "assistant", "uuid": format!("a{id}"), "sessionId": "s", "timestamp": "2026-03-01T10:00:00Z",
        "message": {"content": [{"type": "tool_use", "id": format!("t{id}"), "name": "Bash", "input": {"command": "ls"}}]}})
    .to_string()
}

/// One damage applied to one line.
#[derive(Debug, Clone)]
enum Damage {
    Cut(usize),
    Nul(usize),
    Glue,
    InvalidUtf8(usize),
    None,
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (0usize..400).prop_map(Damage::Cut),
        (0usize..400).prop_map(Damage::Nul),
        Just(Damage::Glue),
        (0usize..400).prop_map(Damage::InvalidUtf8),
        Just(Damage::None),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let path = Path::new("x.jsonl");
        let mut bad = BadCounts::default();
        let _ = leastgrant_ingest::claude::read_claude(path, &bytes, &mut bad);
        let _ = leastgrant_ingest::codex::read_codex(path, &bytes, &mut bad);
        let _ = leastgrant_ingest::ledger::read_ledger(path, &bytes, &mut bad);
        let text = String::from_utf8_lossy(&bytes);
        let _ = leastgrant_ingest::specstory::read_specstory(Path::new("x.md"), &text, &mut bad);
    }

    /// Every undamaged call is read, whatever happened to the lines around it.
    #[test]
    fn damaged_lines_cost_only_themselves(damages in proptest::collection::vec(damage(), 1..12)) {
        let mut bytes = Vec::new();
        let mut intact = 0;
        for (id, damage) in damages.iter().enumerate() {
            let line = call(id).into_bytes();
            match damage {
                Damage::Cut(at) => bytes.extend_from_slice(&line[..(*at).min(line.len() - 1)]),
                Damage::Nul(at) => {
                    let at = (*at).min(line.len());
                    bytes.extend_from_slice(&line[..at]);
                    bytes.extend_from_slice(&[0, 0, 0]);
                    bytes.extend_from_slice(&line[at..]);
                    intact += 1;
                }
                Damage::Glue => {
                    // Two records on one line: both are read.
                    bytes.extend_from_slice(&line);
                    bytes.extend_from_slice(call(1000 + id).as_bytes());
                    intact += 2;
                }
                Damage::InvalidUtf8(at) => {
                    // Inside the command string, so the record still parses.
                    let text = String::from_utf8(line).unwrap();
                    let at = text.find("\"ls\"").unwrap() + 1 + (*at % 2);
                    bytes.extend_from_slice(&text.as_bytes()[..at]);
                    bytes.push(0xff);
                    bytes.extend_from_slice(&text.as_bytes()[at..]);
                    intact += 1;
                }
                Damage::None => {
                    bytes.extend_from_slice(&line);
                    intact += 1;
                }
            }
            bytes.push(b'\n');
        }
        let mut bad = BadCounts::default();
        let events = leastgrant_ingest::claude::read_claude(Path::new("x.jsonl"), &bytes, &mut bad);
        prop_assert_eq!(events.len(), intact, "bad: {:?}", bad.0);
    }
}
