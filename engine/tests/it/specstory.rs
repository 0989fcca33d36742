//! Real shell commands from the SpecStory histories in `../shared/datasets/` (shared by the
//! real-data test and the classification benchmark).

use std::path::{Path, PathBuf};

/// Where the SpecStory sample lives, relative to the engine crate.
pub fn specstory_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/datasets/specstory/getspecstory/history")
}

/// Bash commands from SpecStory exports: the single-backtick line after a Bash tool-use
/// summary, HTML entities decoded. Empty when the folder is absent.
pub fn specstory_commands(dir: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(_) => return Vec::new(),
    };
    files.sort();
    let mut commands = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains("<summary>Tool use: **Bash**</summary>") {
                continue;
            }
            for candidate in lines.iter().skip(i + 1).take(4) {
                let t = candidate.trim();
                let inner = t.strip_prefix('`').and_then(|r| r.strip_suffix('`'));
                if let Some(inner) = inner.filter(|i| !i.is_empty() && !t.starts_with("```")) {
                    commands.push(decode_entities(inner));
                    break;
                }
            }
        }
    }
    commands
}

fn decode_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}
