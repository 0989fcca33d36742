//! SHA-256 for the digests a hook call computes (the frozen envelope's item checks, the names of
//! its state files): the `sha2` crate's, or the same function over a block function the program
//! registers ([`register_compress`]).
//!
//! Why: `sha2` probes the CPU for its SHA instructions in every process that hashes (two
//! `cpuid`, each a trip to the hypervisor in a virtual machine: ≈ 20–26 µs of a 0.8 ms hook call
//! there). The shipped hook asks the C library, which probed the CPU at start-up anyway, and
//! registers a block function using those instructions (`hook/src/sha_ni.rs`); everything else
//! keeps `sha2`. Both compute SHA-256: the digests are the same bytes, checked against `sha2`
//! and the standard's test vectors.

use std::sync::OnceLock;

/// A SHA-256 block function: `state` advanced over each 64-byte block in turn.
pub type Compress = fn(&mut [u32; 8], &[[u8; 64]]);

static COMPRESS: OnceLock<Compress> = OnceLock::new();

/// Makes [`Sha256`] use `compress` from now on in this process (the first registration
/// stands); false when one was registered already.
pub fn register_compress(compress: Compress) -> bool {
    COMPRESS.set(compress).is_ok()
}

const H0: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// The round constants (FIPS 180-4), for block functions.
pub const K: [u32; 64] = [
    0x428a_2f98,
    0x7137_4491,
    0xb5c0_fbcf,
    0xe9b5_dba5,
    0x3956_c25b,
    0x59f1_11f1,
    0x923f_82a4,
    0xab1c_5ed5,
    0xd807_aa98,
    0x1283_5b01,
    0x2431_85be,
    0x550c_7dc3,
    0x72be_5d74,
    0x80de_b1fe,
    0x9bdc_06a7,
    0xc19b_f174,
    0xe49b_69c1,
    0xefbe_4786,
    0x0fc1_9dc6,
    0x240c_a1cc,
    0x2de9_2c6f,
    0x4a74_84aa,
    0x5cb0_a9dc,
    0x76f9_88da,
    0x983e_5152,
    0xa831_c66d,
    0xb003_27c8,
    0xbf59_7fc7,
    0xc6e0_0bf3,
    0xd5a7_9147,
    0x06ca_6351,
    0x1429_2967,
    0x27b7_0a85,
    0x2e1b_2138,
    0x4d2c_6dfc,
    0x5338_0d13,
    0x650a_7354,
    0x766a_0abb,
    0x81c2_c92e,
    0x9272_2c85,
    0xa2bf_e8a1,
    0xa81a_664b,
    0xc24b_8b70,
    0xc76c_51a3,
    0xd192_e819,
    0xd699_0624,
    0xf40e_3585,
    0x106a_a070,
    0x19a4_c116,
    0x1e37_6c08,
    0x2748_774c,
    0x34b0_bcb5,
    0x391c_0cb3,
    0x4ed8_aa4a,
    0x5b9c_ca4f,
    0x682e_6ff3,
    0x748f_82ee,
    0x78a5_636f,
    0x84c8_7814,
    0x8cc7_0208,
    0x90be_fffa,
    0xa450_6ceb,
    0xbef9_a3f7,
    0xc671_78f2,
];

/// A SHA-256 computation, fed by [`Sha256::update`].
#[derive(Clone)]
pub struct Sha256(Inner);

#[derive(Clone)]
enum Inner {
    Blocks {
        compress: Compress,
        state: [u32; 8],
        pending: [u8; 64],
        filled: usize,
        len: u64,
    },
    Crate(sha2::Sha256),
}

impl Default for Sha256 {
    fn default() -> Sha256 {
        Sha256::new()
    }
}

impl std::fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sha256")
    }
}

impl Sha256 {
    /// A computation with the registered block function, else `sha2`'s.
    pub fn new() -> Sha256 {
        match COMPRESS.get() {
            Some(compress) => Sha256::with_compress(*compress),
            None => Sha256(Inner::Crate(<sha2::Sha256 as sha2::Digest>::new())),
        }
    }

    /// A computation with `compress` as its block function (tests compare one with `sha2`).
    pub fn with_compress(compress: Compress) -> Sha256 {
        Sha256(Inner::Blocks {
            compress,
            state: H0,
            pending: [0; 64],
            filled: 0,
            len: 0,
        })
    }

    /// The SHA-256 of `data`.
    pub fn digest(data: impl AsRef<[u8]>) -> [u8; 32] {
        let mut hasher = Sha256::new();
        hasher.update(data);
        hasher.finalize()
    }

    /// Feeds `data`.
    pub fn update(&mut self, data: impl AsRef<[u8]>) {
        let mut data = data.as_ref();
        match &mut self.0 {
            Inner::Crate(hasher) => sha2::Digest::update(hasher, data),
            Inner::Blocks {
                compress,
                state,
                pending,
                filled,
                len,
            } => {
                *len = len.wrapping_add(data.len() as u64);
                if *filled > 0 {
                    let take = (64 - *filled).min(data.len());
                    if let (Some(to), Some(from)) =
                        (pending.get_mut(*filled..*filled + take), data.get(..take))
                    {
                        to.copy_from_slice(from);
                    }
                    *filled += take;
                    data = data.get(take..).unwrap_or_default();
                    if *filled < 64 {
                        return;
                    }
                    compress(state, std::slice::from_ref(pending));
                    *filled = 0;
                }
                let (blocks, rest) = data.as_chunks::<64>();
                if !blocks.is_empty() {
                    compress(state, blocks);
                }
                if let Some(to) = pending.get_mut(..rest.len()) {
                    to.copy_from_slice(rest);
                }
                *filled = rest.len();
            }
        }
    }

    /// The digest.
    pub fn finalize(self) -> [u8; 32] {
        match self.0 {
            Inner::Crate(hasher) => sha2::Digest::finalize(hasher).into(),
            Inner::Blocks {
                compress,
                mut state,
                mut pending,
                filled,
                len,
            } => {
                // The padding: a 1 bit, zeros, the length in bits (big-endian) in the last 8
                // bytes of the last block.
                if let Some(rest) = pending.get_mut(filled..) {
                    rest.fill(0);
                }
                if let Some(one) = pending.get_mut(filled) {
                    *one = 0x80;
                }
                if filled >= 56 {
                    compress(&mut state, std::slice::from_ref(&pending));
                    pending = [0; 64];
                }
                if let Some(tail) = pending.get_mut(56..) {
                    tail.copy_from_slice(&len.wrapping_mul(8).to_be_bytes());
                }
                compress(&mut state, std::slice::from_ref(&pending));
                let mut out = [0u8; 32];
                for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
                    bytes.copy_from_slice(&word.to_be_bytes());
                }
                out
            }
        }
    }
}

/// The block function in plain Rust (FIPS 180-4, 6.2.2), a [`Compress`] for tests to hold
/// others to beside `sha2`'s digests; calls use `sha2` or the registered one.
pub fn plain_compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    for block in blocks {
        let mut w = [0u32; 64];
        for (word, bytes) in w.iter_mut().zip(block.chunks_exact(4)) {
            let mut b = [0u8; 4];
            b.copy_from_slice(bytes);
            *word = u32::from_be_bytes(b);
        }
        for t in 16..64 {
            let at = |i: usize| w.get(i).copied().unwrap_or_default();
            let (w15, w2) = (at(t - 15), at(t - 2));
            let s0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
            let s1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
            let next = at(t - 16)
                .wrapping_add(s0)
                .wrapping_add(at(t - 7))
                .wrapping_add(s1);
            if let Some(slot) = w.get_mut(t) {
                *slot = next;
            }
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
        for (k, w) in K.iter().zip(w) {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = h
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(*k)
                .wrapping_add(w);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            h = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
            *s = s.wrapping_add(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(data: &[u8]) -> [u8; 32] {
        <sha2::Sha256 as sha2::Digest>::digest(data).into()
    }

    /// The block path gives `sha2`'s digest for every length around the block and padding
    /// boundaries, fed whole and in pieces, and the standard's vectors.
    #[test]
    fn blocks_give_sha2s_digests() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in 0..data.len() {
            let want = reference(&data[..len]);
            let mut whole = Sha256::with_compress(plain_compress);
            whole.update(&data[..len]);
            assert_eq!(whole.finalize(), want, "{len}");
            for cut in [1, 3, 55, 56, 63, 64, 65, 129] {
                let mut pieces = Sha256::with_compress(plain_compress);
                for piece in data[..len].chunks(cut) {
                    pieces.update(piece);
                }
                assert_eq!(pieces.finalize(), want, "{len} in pieces of {cut}");
            }
        }
        let hex = |d: [u8; 32]| crate::hex(&d);
        let mut abc = Sha256::with_compress(plain_compress);
        abc.update(b"abc");
        assert_eq!(
            hex(abc.finalize()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(Sha256::with_compress(plain_compress).finalize()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
