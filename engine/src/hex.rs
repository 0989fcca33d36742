//! Lower-case hex of bytes: how digests appear in file names, reason lines and records.

/// `bytes` as lower-case hex, two digits per byte (digit by digit, not through the formatter:
/// the hook spells a few digests per call, and `write!` per byte cost ~250 instructions a byte).
pub fn hex(bytes: &[u8]) -> String {
    let digit = |d: u8| char::from_digit(u32::from(d), 16).unwrap_or('0');
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(digit(b >> 4));
        s.push(digit(b & 0x0f));
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_lower_case_digits_per_byte() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa5, 0xff, 0x10]), "000fa5ff10");
        assert_eq!(super::hex(&[]), "");
    }
}
