//! Lower-case hex of bytes: how digests appear in file names, reason lines and records.

use std::fmt::Write;

/// `bytes` as lower-case hex, two digits per byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}
