//! The frozen-envelope decoder on arbitrary bytes: `Frozen::parse` (what the hook runs on the
//! memory-mapped file), then everything a call or `inspect` reads — the whole-file digest, the
//! meta section, every project and signature, the project for a few directories and the
//! familiarity of a few signatures. Input: a first byte 0 takes the rest as the file; any other
//! first byte learns a history from the rest, freezes it and flips bytes of the result (so the
//! fuzzer reaches past the header's digest without learning SHA-256). Errors are fine; a panic,
//! a hang or a damaged file answering as if whole is not.
#![no_main]

use leastgrant_engine::{Envelope, Frozen, Learned, Thresholds};
use leastgrant_fuzz::{History, PROJECT, T0, freeze, settings};
use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

fn read_all(bytes: &[u8]) {
    let Ok(frozen) = Frozen::parse(bytes) else {
        return;
    };
    let _ = frozen.verify();
    let _ = frozen.meta();
    let _ = frozen.settings();
    let _ = frozen.setting_id();
    let _ = frozen.digest();
    for project in frozen.projects().take(64) {
        let Ok(project) = project else { continue };
        let _ = (project.key(), project.root(), project.signature_count());
        for signature in project.signatures().take(256).flatten() {
            let _ = signature;
        }
        let _ = project.damage();
    }
    for cwd in [
        PROJECT,
        "/home/dev/proj/src/deep",
        "/",
        "/home/dev",
        "/HOME/DEV/PROJ",
    ] {
        if let Ok(Some(project)) = frozen.project_for(cwd) {
            let thresholds = Thresholds::default();
            for signature in [
                "cat <project-file>",
                "ls",
                "git status",
                "rm -rf <path>",
                "",
            ] {
                for tier in 0..4 {
                    let _ = project.familiarity(signature, tier, T0, &thresholds);
                }
            }
            let _ = project.events();
            let _ = project.damage();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode == 0 {
        read_all(rest);
        return;
    }
    let mut u = Unstructured::new(rest);
    let setting = settings(&mut u);
    let history = History::draw(&mut u, 24);
    let mut envelope = Envelope::default();
    history.learn_into(&mut envelope);
    let mut bytes = freeze(&envelope, setting);
    // A whole file reads back whole.
    let whole = Frozen::parse(&bytes).expect("a fresh export parses");
    whole.verify().expect("a fresh export verifies");
    assert_eq!(whole.settings(), &setting, "the setting round-trips");
    // Then flips, each at a position and with a mask the input chooses.
    let original = bytes.clone();
    let flips = u.int_in_range(0..=4usize).unwrap_or(0);
    for _ in 0..flips {
        let at = u
            .int_in_range(0..=bytes.len().saturating_sub(1))
            .unwrap_or(0);
        let mask = u.int_in_range(1..=255u8).unwrap_or(1);
        if let Some(byte) = bytes.get_mut(at) {
            *byte ^= mask;
        }
    }
    if bytes != original {
        // Every flipped byte is covered by the whole-file digest.
        if let Ok(frozen) = Frozen::parse(&bytes) {
            assert!(frozen.verify().is_err(), "a flipped file verifies");
        }
    }
    read_all(&bytes);
});
