//! Hash indexes over the engine's static name tables, built at compile time.
//!
//! The hook is a process that lives under a millisecond, so an index built on first use (a hash
//! map of the 720 program names, another of the path lists) was a visible share of every call:
//! allocations, hashing and the first touch of each table page. Here the table is filled in
//! `const` evaluation: an open-addressing array of positions (plain integers, not pointers), so
//! it sits in read-only data with nothing to relocate at start-up and nothing to build, and a
//! lookup costs what a hash map's does (one FNV-1a hash, a probe or two). Indexing inside the
//! `const fn`s below runs only in the compiler: an out-of-range index there fails the build,
//! never a decision.

/// FNV-1a: the keys are short, fixed names, so a keyed hasher would buy nothing.
pub(crate) const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        #[allow(clippy::indexing_slicing)] // bounded by the loop condition
        {
            hash ^= bytes[i] as u64;
        }
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

/// The number of slots for `keys` keys: a power of two at least twice as many, so a probe
/// chain stays short and always ends at an empty slot.
pub(crate) const fn slots_for(keys: usize) -> usize {
    (2 * keys + 1).next_power_of_two()
}

/// An open-addressing table of key positions (`position + 1`; 0 is empty), `S` slots.
pub(crate) struct NameIndex<const S: usize> {
    slots: [u16; S],
}

impl<const S: usize> NameIndex<S> {
    /// Every key's position, inserted in order: equal keys share a probe chain, earlier first.
    pub(crate) const fn of(keys: &[&str]) -> NameIndex<S> {
        NameIndex::of_first(keys, keys.len())
    }

    /// [`NameIndex::of`] the first `n` of `keys`.
    #[allow(clippy::indexing_slicing)] // compile time only: an out-of-range index fails the build
    pub(crate) const fn of_first(keys: &[&str], n: usize) -> NameIndex<S> {
        assert!(
            n < u16::MAX as usize,
            "a static index holds fewer than 65,535 names"
        );
        assert!(
            S.is_power_of_two() && S > n,
            "slots_for(keys.len()) slots are needed"
        );
        let mut slots = [0u16; S];
        let mut i = 0;
        while i < n {
            let mut at = (fnv1a(keys[i].as_bytes()) as usize) & (S - 1);
            while slots[at] != 0 {
                at = (at + 1) & (S - 1);
            }
            slots[at] = (i + 1) as u16;
            i += 1;
        }
        NameIndex { slots }
    }

    /// The positions of every key equal to `key`, in the order they were inserted. `key_at`
    /// reads a position's key back from the tables.
    pub(crate) fn positions<'a, 'k: 'a>(
        &'a self,
        key: &'a str,
        key_at: impl Fn(usize) -> Option<&'k [u8]> + 'a,
    ) -> impl Iterator<Item = usize> + 'a {
        let mask = S - 1;
        let start = (fnv1a(key.as_bytes()) as usize) & mask;
        // A chain ends at an empty slot; at most every slot is visited.
        (0..S)
            .map(move |step| self.slots.get((start + step) & mask).copied().unwrap_or(0))
            .take_while(|slot| *slot != 0)
            .map(|slot| usize::from(slot) - 1)
            .filter(move |position| key_at(*position) == Some(key.as_bytes()))
    }
}

/// The total length of `names`, for sizing a [`PackedNames`].
pub(crate) const fn total_len(names: &[&str]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < names.len() {
        #[allow(clippy::indexing_slicing)] // bounded by the loop condition
        {
            total += names[i].len();
        }
        i += 1;
    }
    total
}

/// Names packed into one byte array with their spans. A table of `&str` is a table of pointers,
/// each relocated (and its page copied) every time a position-independent process starts; this
/// is plain bytes and integers in read-only data.
pub(crate) struct PackedNames<const BYTES: usize, const N: usize> {
    bytes: [u8; BYTES],
    /// (start, length) of each name in `bytes`.
    spans: [(u32, u16); N],
}

impl<const BYTES: usize, const N: usize> PackedNames<BYTES, N> {
    #[allow(clippy::indexing_slicing)] // compile time only: an out-of-range index fails the build
    pub(crate) const fn of(names: &[&str]) -> PackedNames<BYTES, N> {
        assert!(names.len() == N, "size the spans with names.len()");
        let mut bytes = [0u8; BYTES];
        let mut spans = [(0u32, 0u16); N];
        let (mut at, mut i) = (0, 0);
        while i < N {
            let name = names[i].as_bytes();
            assert!(
                name.len() <= u16::MAX as usize,
                "a packed name is at most 65,535 bytes"
            );
            spans[i] = (at as u32, name.len() as u16);
            let mut b = 0;
            while b < name.len() {
                bytes[at] = name[b];
                at += 1;
                b += 1;
            }
            i += 1;
        }
        assert!(at == BYTES, "size the bytes with total_len(names)");
        PackedNames { bytes, spans }
    }

    /// The name at `position`, as bytes (what a hot comparison needs: no UTF-8 check).
    pub(crate) fn bytes_at(&self, position: usize) -> Option<&[u8]> {
        self.names().bytes_at(position)
    }

    /// Every name, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.iter_bytes()
            .filter_map(|bytes| std::str::from_utf8(bytes).ok())
    }

    /// Every name as bytes, in order.
    pub(crate) fn iter_bytes(&self) -> impl Iterator<Item = &[u8]> {
        self.names().iter_bytes()
    }

    /// A view of these names.
    pub(crate) fn names(&self) -> Names<'_> {
        Names {
            bytes: &self.bytes,
            spans: &self.spans,
        }
    }
}

/// A borrowed view of packed names, whatever their count: two slices, so a list written at a
/// call site costs no relocation per name (see [`flags!`]).
#[derive(Clone, Copy)]
pub(crate) struct Names<'a> {
    bytes: &'a [u8],
    spans: &'a [(u32, u16)],
}

impl<'a> Names<'a> {
    /// The name at `position`, as bytes.
    fn bytes_at(&self, position: usize) -> Option<&'a [u8]> {
        let (start, len) = *self.spans.get(position)?;
        let start = start as usize;
        self.bytes.get(start..start + usize::from(len))
    }

    /// `name` is one of them.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.iter_bytes().any(|n| n == name.as_bytes())
    }

    /// Every name as bytes, in order.
    pub(crate) fn iter_bytes(&self) -> impl Iterator<Item = &'a [u8]> + use<'a> {
        let names = *self;
        (0..self.spans.len()).filter_map(move |p| names.bytes_at(p))
    }
}

/// `flags!["-o", "--out"]`: a list written where it is used, stored packed, as [`Names`].
macro_rules! flags {
    ($($flag:literal),* $(,)?) => {{
        const LIST: &[&str] = &[$($flag),*];
        static PACKED: $crate::static_index::PackedNames<
            { $crate::static_index::total_len(LIST) },
            { LIST.len() },
        > = $crate::static_index::PackedNames::of(LIST);
        PACKED.names()
    }};
}

/// A static list of names, packed, with its compile-time index: `contains` is a hash probe,
/// not a scan. Declared with [`name_set!`].
pub(crate) struct NameSet<const BYTES: usize, const N: usize, const S: usize> {
    names: PackedNames<BYTES, N>,
    index: NameIndex<S>,
}

impl<const BYTES: usize, const N: usize, const S: usize> NameSet<BYTES, N, S> {
    pub(crate) const fn of(names: &[&str]) -> NameSet<BYTES, N, S> {
        NameSet {
            names: PackedNames::of(names),
            index: NameIndex::of(names),
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.index
            .positions(name, |p| self.names.bytes_at(p))
            .next()
            .is_some()
    }

    /// Every name, in the list's order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.names.iter()
    }

    /// Every name as bytes, in the list's order.
    pub(crate) fn iter_bytes(&self) -> impl Iterator<Item = &[u8]> {
        self.names.iter_bytes()
    }
}

/// `static NAME: PackedNames<…> = LIST;` — a `&[&str]` list stored packed; the list itself is
/// read only while compiling.
macro_rules! packed_names {
    ($(#[$attr:meta])* $vis:vis static $name:ident = $list:expr;) => {
        $(#[$attr])*
        $vis static $name: $crate::static_index::PackedNames<
            { $crate::static_index::total_len($list) },
            { $list.len() },
        > = $crate::static_index::PackedNames::of($list);
    };
}

/// `static NAME: NameSet<…> = LIST;` — a `&[&str]` list stored packed with a compile-time
/// hash index.
macro_rules! name_set {
    ($(#[$attr:meta])* $vis:vis static $name:ident = $list:expr;) => {
        $(#[$attr])*
        $vis static $name: $crate::static_index::NameSet<
            { $crate::static_index::total_len($list) },
            { $list.len() },
            { $crate::static_index::slots_for($list.len()) },
        > = $crate::static_index::NameSet::of($list);
    };
}

pub(crate) use {flags, name_set, packed_names};

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: [&str; 9] = ["npm", "git", "", "a/b", "git", "Git", "gi", "npm", "a"];
    const INDEX: NameIndex<{ slots_for(9) }> = NameIndex::of(&KEYS);

    fn found(key: &str) -> Vec<usize> {
        INDEX
            .positions(key, |p| KEYS.get(p).map(|k| k.as_bytes()))
            .collect()
    }

    #[test]
    fn every_key_is_found_at_each_of_its_positions_in_order() {
        assert_eq!(found("git"), [1, 4]);
        assert_eq!(found("npm"), [0, 7]);
        assert_eq!(found(""), [2]);
        assert_eq!(found("a/b"), [3]);
        assert_eq!(found("Git"), [5]);
        assert!(found("gitx").is_empty());
        assert!(found("g").is_empty());
        assert!(found("A").is_empty());
    }

    #[test]
    fn a_name_set_holds_its_names_and_nothing_else() {
        const NAMES: &[&str] = &["id_rsa", ".netrc", "credentials"];
        name_set!(static SET = NAMES;);
        for name in NAMES {
            assert!(SET.contains(name));
        }
        assert_eq!(SET.iter().collect::<Vec<_>>(), NAMES);
        for other in ["id_rsa.pub", "", "netrc", "Credentials"] {
            assert!(!SET.contains(other), "{other}");
        }
    }

    #[test]
    fn packed_names_give_back_every_name_in_order() {
        const NAMES: [&str; 5] = ["git", "", "npm", "caf\u{e9}", "a/b"];
        const PACKED: PackedNames<{ total_len(&NAMES) }, 5> = PackedNames::of(&NAMES);
        assert_eq!(PACKED.iter().collect::<Vec<_>>(), NAMES);
        assert_eq!(PACKED.bytes_at(3), Some("caf\u{e9}".as_bytes()));
        assert_eq!(PACKED.bytes_at(5), None);
    }

    #[test]
    fn the_compile_time_hash_is_fnv1a() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
