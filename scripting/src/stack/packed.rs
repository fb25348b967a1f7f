//! Saved frames as the words that differ from a reference frame of the same length ([`Packed`]),
//! how they are packed in one pass ([`Changes`]) and put back, and the bridge between two
//! references that lets a restore over other frames write only the words that differ.

use std::rc::Rc;

/// Words by index (see [`bridge`]).
pub(super) type Bridge = Rc<[(u32, u64)]>;

/// Saved frames: `words` long, as the words that differ from `reference`, or whole where there
/// is no reference. The words that differ are mostly the process's own heap pointers and
/// counters, whose high halves are those of the reference's word or of the process's other
/// pointers: `packed` is a bitmap of which words differ, their kinds (2 bits each: whole,
/// high half of the reference's word, high half of `base`), `base`, then the words' halves
/// (the low half, and the high half of whole words), two to a `u64`. `packed` is kept
/// at its exact length: grown by pushes, its capacity was up to twice its length, and these
/// buffers were 44 % of a master-worker run's heap (docs/PERFORMANCE.md, issue 46).
#[derive(Default)]
pub(super) struct Packed {
    pub(super) words: usize,
    pub(super) reference: Option<Rc<[u64]>>,
    pub(super) packed: Box<[u64]>,
}

/// Puts `words` in `kept`, reusing its allocation where the length is the same (a process
/// that suspends at the same place again differs from its reference in as many words, most
/// of the time), else in one of exactly their length.
pub(super) fn keep(kept: &mut Box<[u64]>, words: &[u64]) {
    if kept.len() == words.len() {
        kept.copy_from_slice(words);
    } else {
        *kept = words.into();
    }
}

/// A changed word kept whole (see [`Packed`]).
const WHOLE: u64 = 0;
/// A changed word whose high half is its reference word's.
const HIGH_OF_REFERENCE: u64 = 1;
/// A changed word whose high half is the base's.
const HIGH_OF_BASE: u64 = 2;
const HIGH: u64 = 0xffff_ffff_0000_0000;

/// The words of frames that differ from their reference, gathered in one pass into the
/// parts of [`Packed`]'s layout, in buffers sized for every word changing (so that the loop
/// over the changes neither branches on their kinds nor checks capacities): the save's share
/// of the million-worker run's time was mostly the changes (docs/PERFORMANCE.md, issue 46).
#[derive(Default)]
pub(super) struct Changes {
    bitmap: Vec<u64>,
    kinds: Vec<u64>,
    halves: Vec<u32>,
    /// Changed words so far.
    pub(super) count: usize,
    /// Halves kept so far.
    kept: usize,
    /// The first changed word whose high half is not its reference word's.
    base: Option<u64>,
}

impl Changes {
    /// Gathers the words of `frames` that differ from `reference` (of the same length).
    fn find(&mut self, frames: &[u64], reference: &[u64]) {
        let words = frames.len();
        for (buffer, len) in [
            (&mut self.bitmap, words.div_ceil(64)),
            (&mut self.kinds, words.div_ceil(32)),
        ] {
            buffer.clear();
            buffer.resize(len, 0);
        }
        self.halves.resize(2 * words, 0);
        (self.count, self.kept, self.base) = (0, 0, None);
        // Most groups of 8 words are unchanged: find those with one XOR-OR over the group,
        // which the compiler vectorises, and look at words one by one only in the others.
        let groups = frames.chunks_exact(8).zip(reference.chunks_exact(8));
        for (group, (words, expected)) in groups.enumerate() {
            let differs = words.iter().zip(expected).fold(0, |acc, (a, b)| acc | (a ^ b));
            if differs != 0 {
                self.note(group * 8, words, expected);
            }
        }
        let rest = words / 8 * 8;
        self.note(rest, &frames[rest..], &reference[rest..]);
    }

    /// Adds the words of `words` (from index `first` of the frames) that differ from
    /// `expected`.
    fn note(&mut self, first: usize, words: &[u64], expected: &[u64]) {
        for (k, (&word, &was)) in words.iter().zip(expected).enumerate() {
            if word != was {
                self.add(first + k, word, was);
            }
        }
    }

    /// Adds the word at index `i`, `word` where the reference holds `was`, keeping its low
    /// half only where its high half is the reference word's or the base's.
    fn add(&mut self, i: usize, word: u64, was: u64) {
        self.bitmap[i / 64] |= 1 << (i % 64);
        let of_reference = (word ^ was) & HIGH == 0;
        if !of_reference && self.base.is_none() {
            self.base = Some(word);
        }
        let of_base = (word ^ self.base.unwrap_or(word)) & HIGH == 0;
        let kind =
            u64::from(of_reference) * HIGH_OF_REFERENCE + u64::from(!of_reference && of_base) * HIGH_OF_BASE;
        self.kinds[self.count / 32] |= kind << (2 * (self.count % 32));
        self.count += 1;
        self.halves[self.kept] = word as u32;
        self.halves[self.kept + 1] = (word >> 32) as u32;
        self.kept += 1 + usize::from(kind == WHOLE);
    }

    /// Writes the changes into `packed` as [`Packed`] says.
    fn write(&self, packed: &mut Vec<u64>) {
        packed.clear();
        packed.extend_from_slice(&self.bitmap);
        packed.extend_from_slice(&self.kinds[..self.count.div_ceil(32)]);
        packed.push(self.base.unwrap_or(0));
        let pairs = self.halves[..self.kept].chunks_exact(2);
        let odd = pairs.remainder().first().map(|&low| u64::from(low));
        packed.extend(pairs.map(|pair| u64::from(pair[1]) << 32 | u64::from(pair[0])));
        packed.extend(odd);
    }
}

/// Writes into `packed` `frames` packed against `reference` (of the same length) as
/// [`Packed`] says, through `changes`.
pub(super) fn pack(frames: &[u64], reference: &[u64], changes: &mut Changes, packed: &mut Vec<u64>) {
    changes.find(frames, reference);
    changes.write(packed);
}

/// The bitmap of packed frames (see [`Packed`]).
fn bitmap(saved: &Packed) -> &[u64] {
    &saved.packed[..saved.words.div_ceil(64)]
}

/// The indices of the set bits of `bitmap`, in order.
fn set_bits(bitmap: &[u64]) -> SetBits<'_> {
    SetBits {
        bitmap,
        block: 0,
        bits: bitmap.first().copied().unwrap_or(0),
    }
}

/// See [`set_bits`]: a plain loop over the blocks, which the restores run per changed word.
struct SetBits<'a> {
    bitmap: &'a [u64],
    block: usize,
    bits: u64,
}

impl Iterator for SetBits<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.block += 1;
            self.bits = *self.bitmap.get(self.block)?;
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.block * 64 + bit)
    }
}

pub(super) fn unpack(to: *mut u64, saved: &Packed) {
    // SAFETY: [to, to + words) lies within the stack's mapped, writable pages (checked by the
    // caller), and no live frame is there: the process that suspended there last was saved.
    unsafe {
        match &saved.reference {
            None => std::ptr::copy_nonoverlapping(saved.packed.as_ptr(), to, saved.words),
            Some(reference) => {
                std::ptr::copy_nonoverlapping(reference.as_ptr(), to, saved.words);
                write_changes(to, saved);
            }
        }
    }
}

/// Writes `saved`'s words that differ from its reference (see [`Packed`]).
///
/// # Safety
/// `to` is valid for writes of `saved.words` words.
unsafe fn write_changes(to: *mut u64, saved: &Packed) {
    let Some(reference) = &saved.reference else {
        return;
    };
    let bitmap = bitmap(saved);
    let changed: usize = bitmap.iter().map(|bits| bits.count_ones() as usize).sum();
    let (kinds, rest) = saved.packed[bitmap.len()..].split_at(changed.div_ceil(32));
    let (base, halves) = (rest[0], &rest[1..]);
    let half = |h: usize| (halves[h / 2] >> (32 * (h % 2))) & !HIGH;
    let mut next = 0;
    for (k, i) in set_bits(bitmap).enumerate() {
        let low = half(next);
        next += 1;
        let word = match (kinds[k / 32] >> (2 * (k % 32))) & 3 {
            HIGH_OF_REFERENCE => reference[i] & HIGH | low,
            HIGH_OF_BASE => base & HIGH | low,
            _ => {
                next += 1;
                half(next - 1) << 32 | low
            }
        };
        unsafe { to.add(i).write(word) };
    }
}

/// What turns frames `old` into frames `new` when both end at the same address: `new`'s
/// words, by index, where the two differ or `old` has none.
pub(super) fn bridge(old: &[u64], new: &[u64]) -> Bridge {
    let shift = new.len() as isize - old.len() as isize;
    new.iter()
        .enumerate()
        .filter(|&(j, &word)| {
            usize::try_from(j as isize - shift)
                .ok()
                .is_none_or(|i| old[i] != word)
        })
        .map(|(j, &word)| (j as u32, word))
        .collect()
}

/// Turns `on_stack`, the frames ending where `to` + `saved.words` does, into `saved`, both
/// packed against references joined by `bridge`: `on_stack`'s changed words go back to
/// `target` (the reference of `saved`), the bridge turns the words where the two references
/// differ, and `saved`'s changed words are written.
///
/// # Safety
/// `to` is valid for writes of `saved.words` words; `bridge` was made from `on_stack`'s
/// reference to `target`.
pub(super) unsafe fn unpack_over(
    to: *mut u64,
    saved: &Packed,
    target: &[u64],
    on_stack: &Packed,
    bridge: &[(u32, u64)],
) {
    // A word at index i of `on_stack` is at index i + shift of `saved`.
    let shift = saved.words as isize - on_stack.words as isize;
    let reverted = set_bits(bitmap(on_stack)).filter_map(|i| usize::try_from(i as isize + shift).ok());
    // SAFETY (both loops, and write_changes): every index is below saved.words.
    for j in reverted {
        unsafe { to.add(j).write(target[j]) };
    }
    for &(j, word) in bridge {
        unsafe { to.add(j as usize).write(word) };
    }
    unsafe { write_changes(to, saved) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Frames packed against a reference unpack to themselves, whatever words differ.
        #[test]
        fn packed_frames_unpack_to_the_same_words(
            reference in proptest::collection::vec(any::<u64>(), 1..300),
            changes in proptest::collection::vec((any::<usize>(), any::<u64>()), 0..80),
        ) {
            let mut frames = reference.clone();
            change(&mut frames, &changes);
            round_trip(&frames, &reference, |differing| differing)?;
        }

        /// Frames whose changed words keep the high half of their reference word or of one
        /// other (a process's heap pointers) unpack to themselves, in half the words.
        #[test]
        fn narrow_changes_unpack_to_the_same_words(
            reference in proptest::collection::vec(any::<u64>(), 1..300),
            changes in proptest::collection::vec((any::<usize>(), any::<u32>(), any::<bool>()), 0..80),
            base in any::<u64>(),
        ) {
            let mut frames = reference.clone();
            let n = frames.len();
            for &(at, low, of_reference) in &changes {
                let high = if of_reference { reference[at % n] } else { base };
                frames[at % n] = high & HIGH | u64::from(low);
            }
            round_trip(&frames, &reference, |differing| differing.div_ceil(2))?;
        }

        /// Frames restored over other frames (of another length and reference, ending at the
        /// same address) through the bridge between their references come out whole.
        #[test]
        fn frames_restored_over_others_come_out_whole(
            common in proptest::collection::vec(any::<u64>(), 1..200),
            old_extra in proptest::collection::vec(any::<u64>(), 0..40),
            new_extra in proptest::collection::vec(any::<u64>(), 0..40),
            reference_changes in proptest::collection::vec((any::<usize>(), any::<u64>()), 0..20),
            old_changes in proptest::collection::vec((any::<usize>(), any::<u64>()), 0..20),
            new_changes in proptest::collection::vec((any::<usize>(), any::<u64>()), 0..20),
        ) {
            // Two references sharing their outer words (the end), differing in some of them.
            let old_reference: Vec<u64> = old_extra.iter().chain(&common).copied().collect();
            let mut new_reference: Vec<u64> = new_extra.iter().chain(&common).copied().collect();
            change(&mut new_reference, &reference_changes);
            let (mut old, mut new) = (old_reference.clone(), new_reference.clone());
            change(&mut old, &old_changes);
            change(&mut new, &new_changes);
            let (old_packed, new_packed) = (packed(&old, &old_reference), packed(&new, &new_reference));
            // The stack: garbage, then `old` at its end.
            let size = old.len().max(new.len()) + 3;
            let mut stack = vec![0xdead_beef_u64; size];
            stack[size - old.len()..].copy_from_slice(&old);
            let bridge = bridge(&old_reference, &new_reference);
            let at = size - new.len();
            // SAFETY: the stack holds new.len() words from `at`.
            unsafe {
                unpack_over(stack[at..].as_mut_ptr(), &new_packed, &new_reference, &old_packed, &bridge)
            };
            prop_assert_eq!(&stack[at..], &new[..]);
        }
    }

    /// Packs `frames` against `reference`: the packed words are at most the header and
    /// `body(words that differ)`, and unpack to `frames`.
    fn round_trip(
        frames: &[u64],
        reference: &[u64],
        body: impl Fn(usize) -> usize,
    ) -> Result<(), TestCaseError> {
        let packed = packed(frames, reference);
        let differing = frames.iter().zip(reference).filter(|(a, b)| a != b).count();
        let header = frames.len().div_ceil(64) + differing.div_ceil(32) + 1;
        prop_assert!(packed.packed.len() <= header + body(differing));
        let mut out = vec![0u64; frames.len()];
        unpack(out.as_mut_ptr(), &packed);
        prop_assert_eq!(out, frames);
        Ok(())
    }

    fn change(words: &mut [u64], changes: &[(usize, u64)]) {
        let n = words.len();
        for &(at, word) in changes {
            words[at % n] = word;
        }
    }

    fn packed(frames: &[u64], reference: &[u64]) -> Packed {
        let (mut changes, mut changed) = (Changes::default(), Vec::new());
        pack(frames, reference, &mut changes, &mut changed);
        Packed {
            words: frames.len(),
            packed: changed.into(),
            reference: Some(reference.into()),
        }
    }
}
