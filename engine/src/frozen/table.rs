//! A checked sorted table: items sorted by a key, found by binary search, each item carrying a
//! check over its position and bytes. The project index and every project's signatures are one.
//!
//! The search reads slots and keys unchecked (every read bounds-checked), then checks the two
//! items that bracket the answer and that their keys do bracket it: a damaged byte the search
//! read either sends it to a bracket that fails those checks (an error) or did not change the
//! answer. So a lookup hashes two items whatever the size of the table, and no answer rests on a
//! byte that was not checked.
//!
//! ```text
//! slots: per item u32 offset (into the items), u32 length
//! items: u32 key length, key, payload, 16-byte check
//! ```

use std::cmp::Ordering;

use super::layout::{
    CHECK_LEN, DIGEST_LEN, FrozenError, SLOT_LEN, damaged, item_check, len_u32, mismatch, read_u32,
};

/// A table read from its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Table<'a> {
    slots: &'a [u8],
    items: &'a [u8],
    count: usize,
    tag: &'static [u8],
    salt: [u8; DIGEST_LEN],
    what: &'static str,
}

/// One checked item: its key and the payload after it.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    pub key: &'a [u8],
    pub payload: &'a [u8],
}

impl<'a> Table<'a> {
    /// A table of `count` items (`what` names it in errors). `tag` and `salt` are what every
    /// item's check binds it to.
    pub fn new(
        slots: &'a [u8],
        items: &'a [u8],
        count: usize,
        tag: &'static [u8],
        salt: [u8; DIGEST_LEN],
        what: &'static str,
    ) -> Result<Table<'a>, FrozenError> {
        if count.checked_mul(SLOT_LEN) != Some(slots.len()) {
            return Err(damaged(what));
        }
        Ok(Table {
            slots,
            items,
            count,
            tag,
            salt,
            what,
        })
    }

    /// Items in the table.
    pub fn len(&self) -> usize {
        self.count
    }

    fn raw(&self, position: usize) -> Option<&'a [u8]> {
        let at = position.checked_mul(SLOT_LEN)?;
        let offset = read_u32(self.slots, at)? as usize;
        let len = read_u32(self.slots, at.checked_add(4)?)? as usize;
        self.items.get(offset..offset.checked_add(len)?)
    }

    fn key_unchecked(&self, position: usize) -> Option<&'a [u8]> {
        let raw = self.raw(position)?;
        let len = read_u32(raw, 0)? as usize;
        raw.get(4..4usize.checked_add(len)?)
    }

    /// The item at `position`, checked.
    pub fn item(&self, position: usize) -> Result<Item<'a>, FrozenError> {
        let raw = self.raw(position).ok_or_else(|| damaged(self.what))?;
        let body_len = raw
            .len()
            .checked_sub(CHECK_LEN)
            .ok_or_else(|| damaged(self.what))?;
        let (body, check) = raw.split_at(body_len);
        if item_check(self.tag, &self.salt, position as u64, body) != check {
            return Err(mismatch(self.what));
        }
        let key_len = read_u32(body, 0).ok_or_else(|| damaged(self.what))? as usize;
        let key_end = 4usize
            .checked_add(key_len)
            .filter(|end| *end <= body.len())
            .ok_or_else(|| damaged(self.what))?;
        Ok(Item {
            key: body.get(4..key_end).unwrap_or_default(),
            payload: body.get(key_end..).unwrap_or_default(),
        })
    }

    /// How many items have a key ordered at or before `target` (by `cmp`), with the bracketing
    /// items checked. With `Equal` counted as before, the last such item is the greatest key
    /// not after the target.
    pub fn rank(
        &self,
        target: &[u8],
        cmp: fn(&[u8], &[u8]) -> Ordering,
    ) -> Result<usize, FrozenError> {
        let (mut low, mut high) = (0usize, self.count);
        while low < high {
            let mid = low + (high - low) / 2;
            let key = self.key_unchecked(mid).ok_or_else(|| damaged(self.what))?;
            if cmp(key, target) == Ordering::Greater {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        let bracketed = (low == 0 || cmp(self.item(low - 1)?.key, target) != Ordering::Greater)
            && (low == self.count || cmp(self.item(low)?.key, target) == Ordering::Greater);
        if bracketed {
            Ok(low)
        } else {
            Err(mismatch(self.what))
        }
    }
}

/// Builds a table from items already in key order: `(key, payload)`. Returns the slots and the
/// items.
pub fn build(
    items: impl Iterator<Item = (Vec<u8>, Vec<u8>)>,
    tag: &[u8],
    salt: &[u8],
) -> (Vec<u8>, Vec<u8>) {
    let mut slots = Vec::new();
    let mut out = Vec::new();
    for (position, (key, payload)) in items.enumerate() {
        let start = out.len();
        out.extend_from_slice(&len_u32(key.len()).to_le_bytes());
        out.extend_from_slice(&key);
        out.extend_from_slice(&payload);
        let check = item_check(
            tag,
            salt,
            position as u64,
            out.get(start..).unwrap_or_default(),
        );
        out.extend_from_slice(&check);
        slots.extend_from_slice(&len_u32(start).to_le_bytes());
        slots.extend_from_slice(&len_u32(out.len() - start).to_le_bytes());
    }
    (slots, out)
}
