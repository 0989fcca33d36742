//! Structured calls on arbitrary JSON: `analyze` of any tool name and input (Claude Code's,
//! Cursor's, Codex's, Copilot's, Gemini's and MCP tools), then `decide` with nothing learned.
//! Input: the tool name, a newline, the JSON input.
#![no_main]

use leastgrant_engine::{
    Context, Envelope, NoAnswers, SessionState, Settings, ToolCall, analyze, decide,
};
use leastgrant_fuzz::{PROJECT, roots};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (tool, input) = text.split_once('\n').unwrap_or(("Read", &text));
    let input = serde_json::from_str(input).unwrap_or(serde_json::Value::Null);
    let call = ToolCall {
        tool: tool.to_string(),
        input,
        cwd: Some(PROJECT.to_string()),
        descriptor: None,
    };
    let analysis = analyze(&call, &roots());
    let envelope = Envelope::default();
    let session = SessionState::default();
    let ctx = Context {
        envelope: &envelope,
        session: &session,
        answers: &NoAnswers,
        settings: &Settings::default(),
        now_us: leastgrant_fuzz::T0,
    };
    let _ = decide(&analysis, &ctx);
});
