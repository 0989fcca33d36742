//! Standard output and standard error for every command: what `println!`, `print!` and
//! `eprintln!` mean in this crate (main.rs routes them here). A reader that went away — `leastgrant
//! check --json ls | true`, `… | head -1` — ends the output, not the command: the write fails with
//! `EPIPE`, nothing more is written, and the command still exits with its documented code (0–3),
//! where the standard macros would panic and exit 101. Any other failure to write standard output
//! (a full disk) also ends the output, and is remembered so `main` can report it and exit 3.
//!
//! Must not: decide what a command prints, or buffer it (each call is written at once).

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output can no longer be written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// The first error other than a closed reader, for `main` to report.
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// Writes `args` (and a newline when `newline`) to standard output, unless it was closed.
pub fn out(args: fmt::Arguments<'_>, newline: bool) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| {
        if newline {
            stdout.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    if let Err(error) = written {
        close(error);
    }
}

/// Ends standard output after `error`; remembers it unless the reader went away.
fn close(error: io::Error) {
    CLOSED.store(true, Ordering::Relaxed);
    if error.kind() != io::ErrorKind::BrokenPipe
        && let Ok(mut failed) = FAILED.lock()
    {
        failed.get_or_insert(error);
    }
}

/// Standard output as a writer, for output streamed in pieces (`export --inspect` of a fleet):
/// the same rules as [`out`] — once it fails, the rest is dropped, and only a failure other than
/// a closed reader is remembered for `main`.
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !CLOSED.load(Ordering::Relaxed)
            && let Err(error) = io::stdout().lock().write_all(buf)
        {
            close(error);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !CLOSED.load(Ordering::Relaxed)
            && let Err(error) = io::stdout().lock().flush()
        {
            close(error);
        }
        Ok(())
    }
}

/// Writes `args` and a newline to standard error; a closed standard error is ignored.
pub fn err(args: fmt::Arguments<'_>) {
    let mut stderr = io::stderr().lock();
    let _ = stderr
        .write_fmt(args)
        .and_then(|()| stderr.write_all(b"\n"));
}

/// Flushes standard output; the error other than a closed reader that ended it, if any.
pub fn finish() -> Option<io::Error> {
    if !CLOSED.load(Ordering::Relaxed)
        && let Err(error) = io::stdout().lock().flush()
        && error.kind() != io::ErrorKind::BrokenPipe
    {
        return Some(error);
    }
    FAILED.lock().ok().and_then(|mut failed| failed.take())
}
