//! `leastgrant-hook --version`, through the real binary: the build marker that `leastgrant doctor`
//! and `install` read. The binary under test is cargo's test build, never the shipped one, so it
//! must say `unshipped` with its profile kind and linking — only `cargo hook-build` or
//! `cargo hook-install` (`.cargo/config.toml`) make a binary that says `shipped`.

use std::process::{Command, Stdio};

#[test]
fn the_test_build_says_it_is_not_the_shipped_one() {
    let out = Command::new(env!("CARGO_BIN_EXE_leastgrant-hook"))
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().next().unwrap_or_default();
    let expected = format!(
        "leastgrant-hook {} unshipped (a debug profile, ",
        env!("CARGO_PKG_VERSION")
    );
    assert!(line.starts_with(&expected), "{text}");
}
