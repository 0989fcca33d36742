//! The hook's payload → answer on arbitrary bytes: `leastgrant_hook::answer` for one agent, in
//! a temporary home whose state directory holds a real frozen envelope (learned for
//! `/home/dev/proj`), so a payload reaches the envelope lookup, the rules, the session files and
//! the ledger. Input: one byte choosing the agent, then the payload. The answer must be one
//! ASCII JSON object or nothing; the hook must never panic.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use leastgrant_engine::{Envelope, Settings};
use leastgrant_fuzz::{History, T0, freeze};
use leastgrant_hook::catalogue::Agent;
use leastgrant_hook::{Environment, answer, layout};
use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

fn home() -> &'static PathBuf {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let home =
            std::env::temp_dir().join(format!("leastgrant-fuzz-hook-{}", std::process::id()));
        let state = home.join(".leastgrant");
        std::fs::create_dir_all(&state).expect("a temporary state directory");
        // A learned envelope: every event of a fixed history, frozen under the default setting.
        let seed: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let history = History::draw(&mut Unstructured::new(&seed), 200);
        let mut envelope = Envelope::default();
        history.learn_into(&mut envelope);
        std::fs::write(
            layout::envelope_path(&state),
            freeze(&envelope, Settings::default()),
        )
        .expect("the envelope written");
        home
    })
}

fuzz_target!(|data: &[u8]| {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let Some((&which, payload)) = data.split_first() else {
        return;
    };
    let agent = Agent::ALL[usize::from(which) % Agent::ALL.len()];
    let home = home();
    let state_dir = home.join(".leastgrant");
    // Sessions and the ledger grow with every call; start them over now and then.
    if CALLS.fetch_add(1, Ordering::Relaxed) % 2000 == 1999 {
        let _ = std::fs::remove_dir_all(layout::sessions_dir(&state_dir));
        let _ = std::fs::remove_file(layout::ledger_path(&state_dir));
    }
    let env = Environment {
        home: home.display().to_string(),
        state_dir,
        process_cwd: Some("/home/dev/proj".to_string()),
        now_us: T0 + 400 * leastgrant_engine::DAY_US,
    };
    let reply = answer(agent, payload, &env);
    if let Some(text) = reply.stdout {
        assert!(text.is_ascii(), "a non-ASCII answer: {text}");
        let value: serde_json::Value = serde_json::from_str(&text).expect("the answer is JSON");
        assert!(value.is_object(), "the answer is not an object: {text}");
    }
});
