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
//! Saved frames are kept as the 8-byte words that differ from a reference: the first frames
//! of the same length saved in the run. Processes of one script suspend at a handful of
//! places with near-identical frames (the same return addresses, the same engine state);
//! what differs is their own pointers and counters. A master-worker worker's ≈ 11 KiB of
//! frames differs from its reference in ≈ 150 words, so it keeps ≈ 1.4 KiB
//! (docs/PERFORMANCE.md). A process resumed right after it suspended (a `send` returns at
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

const WORD: usize = std::mem::size_of::<u64>();

/// The stack the processes of one run take turns on.
pub struct SharedStack {
    stack: DefaultStack,
    /// Bytes usable below the base (the guard page lies below them).
    size: usize,
    /// The suspended process whose frames are on the stack and not saved yet.
    occupant: RefCell<Option<Rc<Frames>>>,
    /// Per frame length in words, the reference frames.
    references: RefCell<HashMap<usize, Rc<[u64]>>>,
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

/// Saved frames: `words` long, as the words that differ from `reference` (a bitmap of which
/// words differ, then those words), or whole where there is no reference.
#[derive(Default)]
struct Packed {
    words: usize,
    reference: Option<Rc<[u64]>>,
    packed: Vec<u64>,
}

impl SharedStack {
    pub fn new(size: usize) -> std::io::Result<Rc<Self>> {
        let size = size.max(MIN_STACK_SIZE);
        Ok(Rc::new(SharedStack {
            stack: DefaultStack::new(size)?,
            size,
            occupant: RefCell::new(None),
            references: RefCell::new(HashMap::new()),
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
        let reference = self.reference(frames_now);
        let mut saved = frames.saved.borrow_mut();
        match &reference {
            Some(reference) => pack(frames_now, reference, &mut saved.packed),
            None => {
                saved.packed.clear();
                saved.packed.extend_from_slice(frames_now);
            }
        }
        saved.words = words;
        saved.reference = reference;
        frames.is_saved.set(true);
    }

    /// The reference for `frames`: the first frames of their length saved (these, if none
    /// was); none once [`MAX_REFERENCES`] lengths have one.
    fn reference(&self, frames: &[u64]) -> Option<Rc<[u64]>> {
        let mut references = self.references.borrow_mut();
        if let Some(reference) = references.get(&frames.len()) {
            return Some(reference.clone());
        }
        if references.len() >= MAX_REFERENCES {
            return None;
        }
        let reference: Rc<[u64]> = frames.into();
        references.insert(frames.len(), reference.clone());
        Some(reference)
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

/// Writes into `changed` `frames` as a bitmap of the words that differ from `reference` (of
/// the same length), then those words.
fn pack(frames: &[u64], reference: &[u64], changed: &mut Vec<u64>) {
    changed.clear();
    changed.resize(frames.len().div_ceil(64), 0);
    // Most groups of 8 words are unchanged: find those with one XOR-OR pass that the compiler
    // vectorises, and look at words one by one only in the others.
    let groups = frames.chunks(8).zip(reference.chunks(8)).enumerate();
    for (group, (words, expected)) in groups {
        let differs = words.iter().zip(expected).fold(0, |acc, (a, b)| acc | (a ^ b));
        if differs == 0 {
            continue;
        }
        let bits = words
            .iter()
            .zip(expected)
            .enumerate()
            .fold(0u64, |bits, (k, (a, b))| bits | u64::from(a != b) << k);
        changed[group / 8] |= bits << (group % 8 * 8);
    }
    for block in 0..frames.len().div_ceil(64) {
        let mut bits = changed[block];
        while bits != 0 {
            changed.push(frames[block * 64 + bits.trailing_zeros() as usize]);
            bits &= bits - 1;
        }
    }
}

fn unpack(to: *mut u64, saved: &Packed) {
    let words = saved.words;
    // SAFETY: [to, to + words) lies within the stack's mapped, writable pages (checked by the
    // caller), and no live frame is there: the process that suspended there last was saved.
    unsafe {
        match &saved.reference {
            None => std::ptr::copy_nonoverlapping(saved.packed.as_ptr(), to, words),
            Some(reference) => {
                std::ptr::copy_nonoverlapping(reference.as_ptr(), to, words);
                let (bitmap, mut changed) = saved.packed.split_at(words.div_ceil(64));
                for (block, &bits) in bitmap.iter().enumerate() {
                    let mut bits = bits;
                    while bits != 0 {
                        let i = block * 64 + bits.trailing_zeros() as usize;
                        to.add(i).write(changed[0]);
                        changed = &changed[1..];
                        bits &= bits - 1;
                    }
                }
            }
        }
    }
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
            for (at, word) in changes {
                let n = frames.len();
                frames[at % n] = word;
            }
            let reference: Rc<[u64]> = reference.into();
            let mut changed = Vec::new();
            pack(&frames, &reference, &mut changed);
            let packed = Packed {
                words: frames.len(),
                packed: changed,
                reference: Some(reference.clone()),
            };
            let differing = frames.iter().zip(reference.iter()).filter(|(a, b)| a != b).count();
            prop_assert_eq!(packed.packed.len(), frames.len().div_ceil(64) + differing);
            let mut out = vec![0u64; frames.len()];
            unpack(out.as_mut_ptr(), &packed);
            prop_assert_eq!(out, frames);
        }
    }
}
