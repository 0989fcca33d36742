//! `leastgrant-hook --agent claude-code|cursor|codex|copilot|gemini`: reads one hook payload on standard input and
//! answers on standard output, as the agent's hook configuration (written by `leastgrant
//! install`) runs it before and after every tool call.
//!
//! `leastgrant-hook --version` prints which build it is (`shipped` or `unshipped`, then how it was
//! built), for `leastgrant doctor` and `leastgrant install` to tell the shipped build from another.
//!
//! The exit code is always 0: agents read 2 as a deny and other codes as "the hook failed",
//! which fails open on Claude Code, Codex CLI and Gemini CLI. What went wrong around a decision goes to standard error.
//!
//! The process starts at C's `main`, not std's: std's start-up installs a stack-overflow handler
//! (it reads `/proc/self/maps`, maps an alternate signal stack: 19 system calls and ~40 k
//! instructions, ~0.09 ms of a 0.8 ms process on the benchmark machine), which a process that
//! lives a millisecond and never overflows a thread's stack does not need. What else std's
//! start-up does that the hook relies on is done in [`start`]: standard descriptors 0–2 are
//! opened on `/dev/null` when closed (so no file the hook opens can become its standard
//! output), and `SIGPIPE` is ignored (a reader that went away is an `EPIPE`, not a kill).
//! Arguments and the environment are read through std as before: glibc hands them to std at
//! load time. Only on glibc Linux, then: elsewhere std learns the arguments in its own start-up,
//! so the hook keeps std's `main` there.
#![cfg_attr(all(target_os = "linux", target_env = "gnu"), no_main)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::unreachable
)]

use std::io::Write;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::io::Errno;

use leastgrant_hook::agent;
use leastgrant_hook::catalogue::Agent;
use leastgrant_hook::layout;
use leastgrant_hook::payload::{MAX_INPUT, ascii_json};
use leastgrant_hook::{Environment, answer};

/// A writer that never closes standard input must not hold the agent up: after this the input is
/// treated as missing (a deny where the agent honours one).
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Which build this is: `shipped (…)` when made by `cargo hook-build` or `cargo hook-install`
/// (`.cargo/config.toml`: the hook profile, static, packed relocations — the alias sets
/// `LEASTGRANT_HOOK_BUILD` to say so), else `unshipped (…)` with the profile kind and linking.
/// The first word after the version is what `leastgrant doctor` and `install` read.
fn build() -> String {
    let linking = if cfg!(target_feature = "crt-static") {
        "static"
    } else {
        "dynamic"
    };
    match option_env!("LEASTGRANT_HOOK_BUILD") {
        Some(how) if linking == "static" && !cfg!(debug_assertions) => format!("shipped ({how})"),
        _ => format!(
            "unshipped ({} profile, {linking})",
            if cfg!(debug_assertions) {
                "a debug"
            } else {
                "an optimised"
            }
        ),
    }
}

/// The process's entry point (module docs): what std's start-up would do that the hook relies
/// on, then the hook. Always 0 (module docs).
// SAFETY: `no_mangle` makes this the program's `main`, which `#![no_main]` leaves undefined: the
// one symbol of that name, with C's signature, called once by the C runtime.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    start();
    run();
    let _ = std::io::stdout().flush();
    0
}

/// Elsewhere std's own start-up runs (module docs).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() {
    run();
}

/// What std's start-up does that the hook relies on (module docs).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn start() {
    // A standard descriptor that is closed would be the next file opened (the envelope, the
    // ledger): open `/dev/null` in its place first, as std's start-up does.
    let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let mut fds = [
        PollFd::new(&stdin, PollFlags::empty()),
        PollFd::new(&stdout, PollFlags::empty()),
        PollFd::new(&stderr, PollFlags::empty()),
    ];
    let closed = match poll(&mut fds, Some(&Timespec::default())) {
        Ok(_) => fds
            .iter()
            .filter(|fd| fd.revents().contains(PollFlags::NVAL))
            .count(),
        Err(_) => 0,
    };
    for _ in 0..closed {
        // The lowest free descriptor is taken: the closed standard one, lowest first.
        if let Ok(null) = rustix::fs::open(
            "/dev/null",
            rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY,
            rustix::fs::Mode::empty(),
        ) {
            let _ = std::os::fd::IntoRawFd::into_raw_fd(null);
        }
    }
    // SAFETY: setting a signal's disposition to "ignore" runs no code of ours in a handler; the
    // process has one thread here.
    #[allow(unsafe_code)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

fn run() {
    // The shipped build hashes with the SHA instructions glibc found (`sha_ni.rs`).
    leastgrant_hook::sha_ni::register();
    let mut args = std::env::args().skip(1);
    let mut agent_name = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--version" | "-V" => {
                println!("leastgrant-hook {} {}", env!("CARGO_PKG_VERSION"), build());
                return;
            }
            "--agent" => agent_name = args.next(),
            other => {
                if let Some(name) = other.strip_prefix("--agent=") {
                    agent_name = Some(name.to_string());
                }
            }
        }
    }
    let Some(agent) = agent_name.as_deref().and_then(Agent::parse) else {
        // Without an agent there is no format to answer in; say so where a person will see it.
        let names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
        eprintln!(
            "leastgrant-hook: `--agent` with one of {} is required (got {agent_name:?}); run `leastgrant install` again",
            names.join(", ")
        );
        return;
    };
    let input = read_input(agent);
    let home = layout::home();
    let env = Environment {
        home: home.display().to_string(),
        state_dir: layout::state_dir_from_env(&home),
        process_cwd: std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
        now_us: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
            .unwrap_or(0),
    };
    let reply = answer(agent, &input, &env);
    for note in &reply.notes {
        eprintln!("{note}");
    }
    if let Some(text) = reply.stdout {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

/// Standard input, bounded in size and in time: a writer that never closes it gets the
/// "no complete input" answer after [`READ_TIMEOUT`]. The wait is a `poll` on the descriptor
/// rather than a watchdog thread: a second thread costs the hook a clone, a malloc arena and a
/// two-thread exit on every call (docs/decisions.md, the hook's speed).
fn read_input(agent: Agent) -> Vec<u8> {
    let deadline = Instant::now() + READ_TIMEOUT;
    let stdin = std::io::stdin();
    // Read straight into the vector's spare room: a zeroed 16 KB stack chunk cost every call a
    // 16 KB memset and four stack pages (docs/decisions.md, the hook's speed).
    let mut bytes: Vec<u8> = Vec::with_capacity(8 * 1024);
    while bytes.len() <= MAX_INPUT {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(left) = Timespec::try_from(left) else {
            break;
        };
        let mut ready = [PollFd::new(&stdin, PollFlags::IN)];
        match poll(&mut ready, Some(&left)) {
            Ok(0) => no_input_in_time(agent),
            Ok(_) => {}
            Err(Errno::INTR) => continue,
            // Not pollable (never on a pipe or a file): read, as a plain hook would.
            Err(_) => {}
        }
        // Never a read into no room: that returns 0, which reads as the end of the input.
        if bytes.len() == bytes.capacity() {
            bytes.reserve(bytes.len().max(8 * 1024));
        }
        match rustix::io::read(&stdin, rustix::buffer::spare_capacity(&mut bytes)) {
            Ok(0) => break,
            Ok(_) => {}
            Err(Errno::INTR | Errno::AGAIN) => {}
            Err(_) => break,
        }
    }
    bytes.truncate(MAX_INPUT + 1);
    bytes
}

/// Answers for the hook when the writer never finished, and ends the process.
fn no_input_in_time(agent: Agent) -> ! {
    let reason = format!(
        "leastgrant received no complete input within {} s, so it refuses rather than guess",
        READ_TIMEOUT.as_secs()
    );
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(ascii_json(&agent::unreadable(agent, &reason)).as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
    std::process::exit(0);
}
