//! One coroutine stack for all the scripted processes of a run, by stack copying.
//!
//! A suspended script's state is the part of its stack in use when it called a `sim.*`
//! primitive. A stack of its own per process keeps every page it touched resident (≈ 20 KiB)
//! and costs two memory mappings, so the kernel's `vm.max_map_count` caps a run at ~32,700
//! processes. Instead, the processes of a run take turns on one stack (the engine runs one at
//! a time): when another process is to run, the frames of the one that suspended last are
//! saved off the stack, and a process's frames are put back at the same addresses before it
//! resumes, so pointers into them stay valid. A run holds one mapping whatever its process
//! count.
//!
//! Saved frames are kept as the 8-byte words that differ from a reference: frames of the same
//! length saved earlier in the run, replaced as the run moves on ([`Current`]). Processes of
//! one script suspend at a handful of places with near-identical frames (the same return
//! addresses, the same engine state); what differs is their own pointers and counters. A
//! master-worker worker's ≈ 11 KiB of frames differs from those of the worker saved just
//! before it in ≈ 67 words, from the run's first in ≈ 420 (docs/PERFORMANCE.md). A process resumed right after it suspended (a `send` returns at
//! once) finds its frames still on the stack and copies nothing.
//!
//! The invariant that makes this sound: between a process's suspension and its resumption
//! nothing reads or writes its frames except this module's save and restore (a process never
//! resumes another; only the engine, on its own stack, resumes processes).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use corosensei::stack::{DefaultStack, Stack, StackPointer, MIN_STACK_SIZE};

/// Bytes below the last frame a suspending process marks that the switch itself may use
/// (`Yielder::suspend` and the context switch push a few words; 1 KiB leaves ample room).
const SWITCH_MARGIN: usize = 1024;

/// Distinct frame lengths kept as references; frames of further lengths are saved whole.
const MAX_REFERENCES: usize = 256;

/// Pairs of references whose differences are kept (see [`SharedStack::bridge`]).
const MAX_BRIDGES: usize = 1024;

const WORD: usize = std::mem::size_of::<u64>();

/// Words by index (see [`bridge`]).
type Bridge = Rc<[(u32, u64)]>;

/// A bridge with the references it joins (from, to).
type CachedBridge = (Rc<[u64]>, Rc<[u64]>, Bridge);

/// Saves packed against a reference before it may be replaced (see [`Current`]): a run holds
/// at most one reference per this many saves (a million-process run, ≈ 8,000 of 11 KiB).
const REFRESH_AFTER: usize = 128;

/// The reference of one frame length, and when to replace it.
///
/// The frames of a script's processes differ from those of the process saved just before in
/// ≈ 67 words, but from the first frames saved in the run in ≈ 420 (master-worker at
/// W = 100,000, docs/PERFORMANCE.md): loop counters, operation counts and clocks move with the
/// run. So the reference moves with them: once a save differs from it in half as many words
/// again as the first save against it did (and [`REFRESH_AFTER`] saves have used it), that
/// save's frames become the reference. Frames saved against an earlier reference keep it.
struct Current {
    words: Rc<[u64]>,
    uses: usize,
    /// The changes of the first save against it.
    baseline: Option<usize>,
}

impl Current {
    fn new(words: Rc<[u64]>) -> Self {
        Current {
            words,
            uses: 0,
            baseline: None,
        }
    }

    /// Counts a save of `changes` words against the reference; whether to replace it.
    fn is_stale_after(&mut self, changes: usize) -> bool {
        self.uses += 1;
        let baseline = *self.baseline.get_or_insert(changes);
        self.uses >= REFRESH_AFTER && changes > baseline + baseline / 2 + 8
    }
}

/// The stack the processes of one run take turns on.
pub struct SharedStack {
    stack: DefaultStack,
    /// Bytes usable below the base (the guard page lies below them).
    size: usize,
    /// The suspended process whose frames are on the stack and not saved yet.
    occupant: RefCell<Option<Rc<Frames>>>,
    /// Per frame length in words, the reference frames saves are packed against now.
    references: RefCell<HashMap<usize, Current>>,
    /// Per pair of references (by address; the entry holds both, so that neither address is
    /// reused while it is cached), see [`SharedStack::bridge`].
    bridges: RefCell<HashMap<(usize, usize), CachedBridge>>,
    /// Where frames are packed before they are kept at their exact size (see [`keep`]).
    scratch: RefCell<(Changes, Vec<u64>)>,
}

/// A process's frames while it is suspended.
#[derive(Default)]
pub struct Frames {
    /// An address in the innermost frame of the suspension: where the live stack ends.
    marker: Cell<usize>,
    saved: RefCell<Packed>,
    /// Whether `saved` holds the frames (else they are on the stack, or the process has not
    /// started). The buffer is kept across turns: a process saved again reuses it.
    is_saved: Cell<bool>,
}

impl Frames {
    pub fn mark(&self, marker: usize) {
        self.marker.set(marker);
    }
}

/// Saved frames: `words` long, as the words that differ from `reference`, or whole where there
/// is no reference. The words that differ are mostly the process's own heap pointers and
/// counters, whose high halves are those of the reference's word or of the process's other
/// pointers: `packed` is a bitmap of which words differ, their kinds (2 bits each: whole,
/// high half of the reference's word, high half of `base`), `base`, then the words' halves
/// (the low half, and the high half of whole words), two to a `u64`. `packed` is kept
/// at its exact length: grown by pushes, its capacity was up to twice its length, and these
/// buffers were 44 % of a master-worker run's heap (docs/PERFORMANCE.md, issue 46).
#[derive(Default)]
struct Packed {
    words: usize,
    reference: Option<Rc<[u64]>>,
    packed: Box<[u64]>,
}

impl SharedStack {
    pub fn new(size: usize) -> std::io::Result<Rc<Self>> {
        let size = size.max(MIN_STACK_SIZE);
        Ok(Rc::new(SharedStack {
            stack: DefaultStack::new(size)?,
            size,
            occupant: RefCell::new(None),
            references: RefCell::new(HashMap::new()),
            bridges: RefCell::new(HashMap::new()),
            scratch: RefCell::default(),
        }))
    }

    fn base(&self) -> usize {
        self.stack.base().get()
    }

    /// Makes the stack hold `frames` (those of a process about to resume): the frames of the
    /// process that suspended last are saved, and `frames` put back, unless they are the
    /// same. Fresh `frames` (a process not started) need nothing put back.
    pub fn enter(&self, frames: &Rc<Frames>) {
        let occupant = self.occupant.borrow_mut().take();
        if let Some(occupant) = occupant {
            if Rc::ptr_eq(&occupant, frames) {
                return;
            }
            self.save(&occupant);
            if frames.is_saved.replace(false) {
                self.restore_over(&frames.saved.borrow(), &occupant.saved.borrow());
            }
            return;
        }
        if frames.is_saved.replace(false) {
            self.restore(&frames.saved.borrow());
        }
    }

    /// Records that the process of `frames` suspended and left its frames on the stack.
    pub fn leave(&self, frames: &Rc<Frames>) {
        *self.occupant.borrow_mut() = Some(frames.clone());
    }

    fn save(&self, frames: &Frames) {
        let from = frames
            .marker
            .get()
            .saturating_sub(SWITCH_MARGIN)
            .max(self.base() - self.size)
            & !15;
        assert!(
            from < self.base(),
            "a suspended process's marker lies outside the shared stack"
        );
        let words = (self.base() - from) / WORD;
        // SAFETY: [from, base) lies within the stack's mapped, writable pages (checked above)
        // and no frame there is live (the process suspended). The bytes are taken as they are,
        // padding included: they were written by frames this code cannot see, behind a
        // context switch.
        let frames_now = unsafe { std::slice::from_raw_parts(from as *const u64, words) };
        let mut reference = self.reference(frames_now);
        let mut saved = frames.saved.borrow_mut();
        match &mut reference {
            Some(reference) => {
                let (changes, packed) = &mut *self.scratch.borrow_mut();
                pack(frames_now, reference, changes, packed);
                if let Some(fresh) = self.refreshed(frames_now, changes.count) {
                    *reference = fresh;
                    pack(frames_now, reference, changes, packed);
                }
                keep(&mut saved.packed, packed);
            }
            None => keep(&mut saved.packed, frames_now),
        }
        saved.words = words;
        saved.reference = reference;
        frames.is_saved.set(true);
    }

    /// The reference for `frames` (these, if their length has none yet); none once
    /// [`MAX_REFERENCES`] lengths have one.
    fn reference(&self, frames: &[u64]) -> Option<Rc<[u64]>> {
        let mut references = self.references.borrow_mut();
        if let Some(current) = references.get(&frames.len()) {
            return Some(current.words.clone());
        }
        if references.len() >= MAX_REFERENCES {
            return None;
        }
        let reference: Rc<[u64]> = frames.into();
        references.insert(frames.len(), Current::new(reference.clone()));
        Some(reference)
    }

    /// Counts a save of `frames` that differed from their length's reference in `changes`
    /// words; the new reference, made of `frames`, when that one is stale (see [`Current`]).
    fn refreshed(&self, frames: &[u64], changes: usize) -> Option<Rc<[u64]>> {
        let mut references = self.references.borrow_mut();
        let current = references.get_mut(&frames.len())?;
        if !current.is_stale_after(changes) {
            return None;
        }
        *current = Current::new(frames.into());
        Some(current.words.clone())
    }

    /// Restores `saved` over `on_stack`, the frames the stack holds (just saved). Both differ
    /// from their references in a few words, and the references (of two suspension points of
    /// one script) differ in a few more: only those words are written, not the whole frames.
    fn restore_over(&self, saved: &Packed, on_stack: &Packed) {
        let (Some(target), Some(source)) = (&saved.reference, &on_stack.reference) else {
            return self.restore(saved);
        };
        let bridge = self.bridge(source, target);
        let to = (self.base() - saved.words * WORD) as *mut u64;
        // SAFETY: [to, to + saved.words) lies in the stack (saved from it), free of live
        // frames, and holds `on_stack`'s frames at its end.
        unsafe { unpack_over(to, saved, target, on_stack, &bridge) };
    }

    /// The [`bridge`] from the reference `from` to the reference `to`, worked out once per
    /// pair while at most [`MAX_BRIDGES`] pairs are kept (then the cache starts again).
    fn bridge(&self, from: &Rc<[u64]>, to: &Rc<[u64]>) -> Bridge {
        let mut bridges = self.bridges.borrow_mut();
        let key = (from.as_ptr() as usize, to.as_ptr() as usize);
        if let Some((_, _, bridge)) = bridges.get(&key) {
            return bridge.clone();
        }
        if bridges.len() >= MAX_BRIDGES {
            bridges.clear();
        }
        let made = bridge(from, to);
        bridges.insert(key, (from.clone(), to.clone(), made.clone()));
        made
    }

    fn restore(&self, saved: &Packed) {
        assert!(
            saved.words * WORD <= self.size,
            "saved frames larger than the stack"
        );
        let to = (self.base() - saved.words * WORD) as *mut u64;
        unpack(to, saved);
    }
}

/// Puts `words` in `kept`, reusing its allocation where the length is the same (a process
/// that suspends at the same place again differs from its reference in as many words, most
/// of the time), else in one of exactly their length.
fn keep(kept: &mut Box<[u64]>, words: &[u64]) {
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
struct Changes {
    bitmap: Vec<u64>,
    kinds: Vec<u64>,
    halves: Vec<u32>,
    /// Changed words so far.
    count: usize,
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
fn pack(frames: &[u64], reference: &[u64], changes: &mut Changes, packed: &mut Vec<u64>) {
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

fn unpack(to: *mut u64, saved: &Packed) {
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
fn bridge(old: &[u64], new: &[u64]) -> Bridge {
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
unsafe fn unpack_over(
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

/// A process's handle to its run's shared stack, which corosensei takes as the stack.
#[derive(Clone)]
pub struct OnSharedStack(pub Rc<SharedStack>);

// SAFETY: the shared stack has a guard page and more than MIN_STACK_SIZE usable bytes (a
// DefaultStack); that several coroutines use it is sound by the save/restore protocol of the
// module comment.
unsafe impl Stack for OnSharedStack {
    fn base(&self) -> StackPointer {
        self.0.stack.base()
    }

    fn limit(&self) -> StackPointer {
        self.0.stack.limit()
    }
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
            let packed = packed(&frames, &reference);
            let differing = frames.iter().zip(reference.iter()).filter(|(a, b)| a != b).count();
            let header = frames.len().div_ceil(64) + differing.div_ceil(32) + 1;
            prop_assert!(packed.packed.len() <= header + differing);
            let mut out = vec![0u64; frames.len()];
            unpack(out.as_mut_ptr(), &packed);
            prop_assert_eq!(out, frames);
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
            let packed = packed(&frames, &reference);
            let differing = frames.iter().zip(reference.iter()).filter(|(a, b)| a != b).count();
            let header = frames.len().div_ceil(64) + differing.div_ceil(32) + 1;
            prop_assert!(packed.packed.len() <= header + differing.div_ceil(2));
            let mut out = vec![0u64; frames.len()];
            unpack(out.as_mut_ptr(), &packed);
            prop_assert_eq!(out, frames);
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
