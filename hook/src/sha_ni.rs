//! SHA-256's block function on the CPU's SHA instructions, registered with the engine
//! (`leastgrant_engine::sha256`) when the C library says they are usable, so that a hook
//! process never runs the `sha2` crate's own CPU probe: two `cpuid` per process, each a trip
//! to the hypervisor in a virtual machine (≈ 20–26 µs of a 0.8 ms call there; docs/decisions.md,
//! "The fixed cost of a call"). glibc probed the CPU at start-up anyway and keeps the answer
//! (`__x86_get_cpuid_feature_leaf`, glibc 2.33+).
//!
//! Only the shipped build asks glibc (`--cfg leastgrant_glibc_cpu`, set by `cargo hook-build` and
//! `cargo hook-install`, whose static start-up already needs glibc 2.36): a build without it
//! links against any glibc and keeps `sha2` throughout. The digests are SHA-256 either way; a
//! test holds this block function to the engine's plain one and `sha2`'s digests.
//!
//! This is the hook's third place of `unsafe` (docs/decisions.md): the call into glibc and
//! reading the table it returns, and calling a function compiled for instructions the CPU is
//! then known to have.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_alignr_epi8, _mm_blend_epi16, _mm_extract_epi32, _mm_set_epi32,
    _mm_sha256msg1_epu32, _mm_sha256msg2_epu32, _mm_sha256rnds2_epu32, _mm_shuffle_epi32,
};

/// Registers the SHA-instruction block function when this is the shipped build and glibc found
/// the instructions usable; otherwise nothing changes (`sha2` hashes).
pub fn register() {
    #[cfg(all(
        leastgrant_glibc_cpu,
        target_arch = "x86_64",
        target_os = "linux",
        target_env = "gnu"
    ))]
    if glibc::sha_usable() {
        leastgrant_engine::sha256::register_compress(compress);
    }
}

#[cfg(all(
    leastgrant_glibc_cpu,
    target_arch = "x86_64",
    target_os = "linux",
    target_env = "gnu"
))]
mod glibc {
    /// glibc's `struct cpuid_feature` (`<sys/platform/x86.h>`): a CPUID leaf's registers (eax,
    /// ebx, ecx, edx) as the CPU gave them, and which of their features are usable.
    #[repr(C)]
    struct CpuidFeature {
        cpuid: [u32; 4],
        active: [u32; 4],
    }

    #[allow(unsafe_code)]
    unsafe extern "C" {
        /// glibc 2.33+: its table of one CPUID leaf (0: leaf 1, 1: leaf 7 subleaf 0).
        fn __x86_get_cpuid_feature_leaf(leaf: u32) -> *const CpuidFeature;
    }

    /// SSE2, SSSE3, SSE4.1 (leaf 1: edx 26, ecx 9, ecx 19) and SHA (leaf 7: ebx 29) usable,
    /// as glibc's start-up found them.
    pub fn sha_usable() -> bool {
        // SAFETY: the function takes any leaf number and returns a pointer to a static table
        // glibc filled before `main` and never writes again (a zeroed one for a leaf it does
        // not know); `as_ref` reads nothing from a null pointer.
        #[allow(unsafe_code)]
        let (leaf1, leaf7) = unsafe {
            (
                __x86_get_cpuid_feature_leaf(0).as_ref(),
                __x86_get_cpuid_feature_leaf(1).as_ref(),
            )
        };
        let (Some(leaf1), Some(leaf7)) = (leaf1, leaf7) else {
            return false;
        };
        let bit = |reg: u32, n: u32| reg & (1 << n) != 0;
        let [_, _, ecx1, edx1] = leaf1.active;
        let [_, ebx7, _, _] = leaf7.active;
        let _ = (leaf1.cpuid, leaf7.cpuid);
        bit(edx1, 26) && bit(ecx1, 9) && bit(ecx1, 19) && bit(ebx7, 29)
    }
}

/// The block function, for the engine: callable only once the instructions are known usable.
#[cfg(target_arch = "x86_64")]
#[cfg_attr(not(leastgrant_glibc_cpu), allow(dead_code))]
fn compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: registered (`register`) only when glibc found SHA, SSE2, SSSE3 and SSE4.1
    // usable, and called by tests only when std finds them.
    #[allow(unsafe_code)]
    unsafe {
        compress_sha(state, blocks)
    }
}

/// Four words as a vector, the first in the lowest lane.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn lanes(w: [u32; 4]) -> __m128i {
    let [a, b, c, d] = w.map(|x| x as i32);
    _mm_set_epi32(d, c, b, a)
}

/// Words `4 i .. 4 i + 4` of `words`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn four(words: &[u32], i: usize) -> __m128i {
    let at = |j: usize| words.get(4 * i + j).copied().unwrap_or_default();
    lanes([at(0), at(1), at(2), at(3)])
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn schedule(v0: __m128i, v1: __m128i, v2: __m128i, v3: __m128i) -> __m128i {
    let t1 = _mm_sha256msg1_epu32(v0, v1);
    let t2 = _mm_alignr_epi8::<4>(v3, v2);
    let t3 = _mm_add_epi32(t1, t2);
    _mm_sha256msg2_epu32(t3, v3)
}

/// Four rounds: the message words `w` (with the round constants added) into the state halves.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn rounds4(abef: &mut __m128i, cdgh: &mut __m128i, w: __m128i, i: usize) {
    let t1 = _mm_add_epi32(w, four(&leastgrant_engine::sha256::K, i));
    *cdgh = _mm_sha256rnds2_epu32(*cdgh, *abef, t1);
    let t2 = _mm_shuffle_epi32::<0x0E>(t1);
    *abef = _mm_sha256rnds2_epu32(*abef, *cdgh, t2);
}

/// SHA-256's block function with the SHA instructions (Intel's published sequence, as the
/// `sha2` crate's x86 backend has it), the message words loaded big-endian.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn compress_sha(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    let dcba = four(state, 0);
    let efgh = four(state, 1);
    let cdab = _mm_shuffle_epi32::<0xB1>(dcba);
    let efgh = _mm_shuffle_epi32::<0x1B>(efgh);
    let mut abef = _mm_alignr_epi8::<8>(cdab, efgh);
    let mut cdgh = _mm_blend_epi16::<0xF0>(efgh, cdab);
    for block in blocks {
        let (abef_save, cdgh_save) = (abef, cdgh);
        let mut words = [0u32; 16];
        for (word, bytes) in words.iter_mut().zip(block.chunks_exact(4)) {
            let mut b = [0u8; 4];
            b.copy_from_slice(bytes);
            *word = u32::from_be_bytes(b);
        }
        let (mut w0, mut w1, mut w2, mut w3) = (
            four(&words, 0),
            four(&words, 1),
            four(&words, 2),
            four(&words, 3),
        );
        rounds4(&mut abef, &mut cdgh, w0, 0);
        rounds4(&mut abef, &mut cdgh, w1, 1);
        rounds4(&mut abef, &mut cdgh, w2, 2);
        rounds4(&mut abef, &mut cdgh, w3, 3);
        // Rounds 16–63: each schedule step makes the next four words from the last sixteen.
        for i in 4..16 {
            let next = schedule(w0, w1, w2, w3);
            rounds4(&mut abef, &mut cdgh, next, i);
            (w0, w1, w2, w3) = (w1, w2, w3, next);
        }
        abef = _mm_add_epi32(abef, abef_save);
        cdgh = _mm_add_epi32(cdgh, cdgh_save);
    }
    let feba = _mm_shuffle_epi32::<0x1B>(abef);
    let dchg = _mm_shuffle_epi32::<0xB1>(cdgh);
    let dcba = _mm_blend_epi16::<0xF0>(feba, dchg);
    let hgef = _mm_alignr_epi8::<8>(dchg, feba);
    *state = [
        _mm_extract_epi32::<0>(dcba) as u32,
        _mm_extract_epi32::<1>(dcba) as u32,
        _mm_extract_epi32::<2>(dcba) as u32,
        _mm_extract_epi32::<3>(dcba) as u32,
        _mm_extract_epi32::<0>(hgef) as u32,
        _mm_extract_epi32::<1>(hgef) as u32,
        _mm_extract_epi32::<2>(hgef) as u32,
        _mm_extract_epi32::<3>(hgef) as u32,
    ];
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use leastgrant_engine::sha256::{Sha256, plain_compress};

    /// The SHA-instruction block function gives the plain one's state and `sha2`'s digests,
    /// for every length around the block and padding boundaries, fed whole and in pieces (on a
    /// CPU with the instructions; elsewhere there is nothing to run).
    #[test]
    fn the_sha_instructions_give_the_plain_digests() {
        let usable = std::arch::is_x86_feature_detected!("sha")
            && std::arch::is_x86_feature_detected!("ssse3")
            && std::arch::is_x86_feature_detected!("sse4.1");
        if !usable {
            eprintln!("this CPU has no SHA instructions: nothing to compare");
            return;
        }
        let data: Vec<u8> = (0..700u32).map(|i| (i * 31 + 7) as u8).collect();
        for len in 0..data.len() {
            let part = data.get(..len).unwrap_or_default();
            let mut fast = Sha256::with_compress(super::compress);
            let mut plain = Sha256::with_compress(plain_compress);
            for piece in part.chunks(1 + len % 67) {
                fast.update(piece);
                plain.update(piece);
            }
            let fast = fast.finalize();
            assert_eq!(fast, plain.finalize(), "{len}");
            let reference: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(part).into();
            assert_eq!(fast, reference, "{len}");
        }
        let mut state = [1u32, 2, 3, 4, 5, 6, 7, 8];
        let mut plain = state;
        let blocks = [[0xA5u8; 64], [0x3Cu8; 64], [0u8; 64]];
        super::compress(&mut state, &blocks);
        plain_compress(&mut plain, &blocks);
        assert_eq!(state, plain);
    }
}
