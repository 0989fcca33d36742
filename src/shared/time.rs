//! Time at the CLI's edge: the clock (the engine takes time as an input), the times a person
//! writes on the command line, and an age as a person reads it.

use anyhow::{Result, anyhow};

/// Now, in microseconds. The CLI is the edge that reads the clock; the engine takes time as an
/// input.
pub fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A time for `--tune-until` and `--at`: microseconds, `YYYY-MM-DD` or
/// `YYYY-MM-DDTHH:MM:SS[.f]Z`, UTC.
pub fn parse_time(text: &str) -> Result<i64> {
    if let Ok(us) = text.parse::<i64>() {
        return Ok(us);
    }
    let full = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_string()
    };
    leastgrant_ingest::common::parse_timestamp_us(&full)
        .ok_or_else(|| anyhow!("`{text}` is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC)"))
}

/// An age as a person reads it: seconds, minutes, hours or days.
pub fn human(age: std::time::Duration) -> String {
    let seconds = age.as_secs();
    match seconds {
        0..120 => format!("{seconds} seconds"),
        120..7200 => format!("{} minutes", seconds / 60),
        7200..172_800 => format!("{} hours", seconds / 3600),
        _ => format!("{} days", seconds / 86_400),
    }
}
