//! Where a JSON string's scan stops: the next `"` or `\` of a line, sixteen bytes at a time.
//!
//! Nine bytes in ten of a Claude Code transcript are inside strings (tool inputs, tool results
//! and their copy in `toolUseResult`), and those strings hold an escape every 20–35 bytes (the
//! `\n` and `\"` of code). A scan that restarts after each escape must be cheap to restart, so a
//! stop is found with two SSE2 compares and a move-mask over sixteen bytes (x86-64, through
//! `safe_arch`'s safe wrappers: the workspace has no `unsafe` outside the hook), and over the
//! remaining bytes of a line shorter than sixteen by re-reading the line's last sixteen. A run of
//! more than 64 bytes without a stop goes to `memchr2`, which reads 32 at a time.

/// Bytes compared at once.
const WIDTH: usize = 16;

/// Bytes looked at [`WIDTH`] at a time before the rest of the run goes to `memchr2`.
const SHORT_RUN: usize = 64;

/// Bit `i` set when byte `i` of `chunk` is `"` or `\`.
#[cfg(target_arch = "x86_64")]
fn stops(chunk: &[u8; WIDTH]) -> u32 {
    use safe_arch::{
        bitor_m128i, cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i,
        set_splat_i8_m128i,
    };
    let bytes = load_unaligned_m128i(chunk);
    let quotes = cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(b'"' as i8));
    let backslashes = cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(b'\\' as i8));
    // The move-mask sets only the low 16 bits.
    move_mask_i8_m128i(bitor_m128i(quotes, backslashes)) as u32
}

/// Bit `i` set when byte `i` of `chunk` is `"` or `\`: byte by byte, for other architectures
/// (the compiler vectorises it) and as the reference the tests hold the SSE2 reading to.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn stops_bytewise(chunk: &[u8; WIDTH]) -> u32 {
    chunk.iter().enumerate().fold(0, |mask, (i, b)| {
        mask | (u32::from(*b == b'"' || *b == b'\\') << i)
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn stops(chunk: &[u8; WIDTH]) -> u32 {
    stops_bytewise(chunk)
}

/// The sixteen bytes of `bytes` from `at`, when there are that many.
fn chunk_at(bytes: &[u8], at: usize) -> Option<&[u8; WIDTH]> {
    bytes.get(at..)?.first_chunk()
}

/// The stops of the first sixteen bytes at or after `from` that hold one, as a base position
/// and a mask of the stops from it (bit `i`: `base + i`, never before `from`), so that a string
/// with several escapes close together is read from one mask. `None`: no stop to the line's end.
#[inline]
pub fn stops_from(bytes: &[u8], from: usize) -> Option<(usize, u32)> {
    let mut at = from;
    while let Some(chunk) = chunk_at(bytes, at) {
        let mask = stops(chunk);
        if mask != 0 {
            return Some((at, mask));
        }
        at += WIDTH;
        if at - from >= SHORT_RUN {
            return memchr::memchr2(b'"', b'\\', bytes.get(at..)?).map(|i| (at + i, 1));
        }
    }
    if at >= bytes.len() {
        return None;
    }
    // Fewer than sixteen bytes left: the line's last sixteen, without those before `at`.
    let Some(last) = bytes.len().checked_sub(WIDTH) else {
        return plain(bytes, at).map(|stop| (stop, 1));
    };
    let mask = stops(chunk_at(bytes, last)?) & (u32::MAX << (at - last));
    (mask != 0).then_some((last, mask))
}

/// The position of the first `"` or `\` in `bytes` at or after `from`.
#[cfg(test)]
fn next_stop(bytes: &[u8], from: usize) -> Option<usize> {
    stops_from(bytes, from).map(|(base, mask)| base + mask.trailing_zeros() as usize)
}

/// The first stop at or after `from`, byte by byte (lines shorter than sixteen bytes).
fn plain(bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .iter()
        .position(|b| *b == b'"' || *b == b'\\')
        .map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_is_found_at_every_start_in_lines_of_every_length() {
        // Lines of 0..=150 bytes with stops at varied places, from every start: covers the
        // sixteen-byte steps, the switch to memchr2, and the re-read last sixteen.
        for len in 0..=150usize {
            for seed in 0..6usize {
                let line: Vec<u8> = (0..len)
                    .map(|i| match (i * 7 + seed * 13) % (11 + seed * 17) {
                        0 => b'"',
                        5 if seed % 2 == 0 => b'\\',
                        _ => b'a' + (i % 26) as u8,
                    })
                    .collect();
                for from in 0..=len + 1 {
                    assert_eq!(
                        next_stop(&line, from),
                        plain(&line, from),
                        "len {len} seed {seed} from {from}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_bytewise_mask_is_the_simd_mask() {
        let mut chunk = [0u8; WIDTH];
        for pattern in 0u32..=0xFFFF {
            for (i, byte) in chunk.iter_mut().enumerate() {
                *byte = match (pattern >> i & 1, i % 3) {
                    (1, 0) => b'"',
                    (1, _) => b'\\',
                    (_, 0) => 0x80 | b'"',
                    _ => b'x',
                };
            }
            assert_eq!(stops(&chunk), pattern);
            assert_eq!(stops_bytewise(&chunk), pattern);
        }
    }
}
