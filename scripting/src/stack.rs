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
//! before it in ≈ 67 words, from the run's first in ≈ 420 (docs/PERFORMANCE.md). A process
//! resumed right after it suspended (a `send` returns at once) finds its frames still on the
//! stack and copies nothing.
//!
//! The invariant that makes this sound: between a process's suspension and its resumption
//! nothing reads or writes its frames except this module's save and restore (a process never
//! resumes another; only the engine, on its own stack, resumes processes).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use corosensei::stack::{DefaultStack, Stack, StackPointer, MIN_STACK_SIZE};

mod packed;

use packed::{bridge, keep, pack, unpack, unpack_over, Bridge, Changes, Packed};

/// Bytes below the last frame a suspending process marks that the switch itself may use
/// (`Yielder::suspend` and the context switch push a few words; 1 KiB leaves ample room).
const SWITCH_MARGIN: usize = 1024;

/// Distinct frame lengths kept as references; frames of further lengths are saved whole.
const MAX_REFERENCES: usize = 256;

/// Pairs of references whose differences are kept (see [`SharedStack::bridge`]).
const MAX_BRIDGES: usize = 1024;

const WORD: usize = std::mem::size_of::<u64>();

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
/// save and the next two vote on the new one, word by word ([`majority`]). Frames
/// saved against an earlier reference keep it.
///
/// The vote is there because the save that finds the reference stale is often an outlier: its
/// process ran a deeper path since it last suspended (a model evaluated where the others hit
/// the memo), which left other values in the dead slots of its frames. Made the reference, it
/// differed from every later save in those slots: ≈ 215 changed words a save where typical
/// saves differ from each other in ≈ 55 (master-worker at W = 100,000, docs/PERFORMANCE.md).
struct Current {
    words: Rc<[u64]>,
    uses: usize,
    /// The changes of the first save against it.
    baseline: Option<usize>,
    /// The saves since it was found stale.
    voters: Vec<Box<[u64]>>,
}

impl Current {
    fn new(words: Rc<[u64]>) -> Self {
        Current {
            words,
            uses: 0,
            baseline: None,
            voters: Vec::new(),
        }
    }

    /// Counts a save of `frames`, `changes` words off the reference; the reference to replace
    /// it with, once the vote is complete.
    fn successor(&mut self, frames: &[u64], changes: usize) -> Option<Rc<[u64]>> {
        self.uses += 1;
        let baseline = *self.baseline.get_or_insert(changes);
        let is_stale = self.uses >= REFRESH_AFTER && changes > baseline + baseline / 2 + 8;
        if self.voters.is_empty() && !is_stale {
            return None;
        }
        if self.voters.len() < 2 {
            self.voters.push(frames.into());
            return None;
        }
        Some(majority(&self.voters[0], &self.voters[1], frames))
    }
}

/// Word by word, the value that two of three frames agree on, else the last one's.
fn majority(a: &[u64], b: &[u64], c: &[u64]) -> Rc<[u64]> {
    a.iter()
        .zip(b)
        .zip(c)
        .map(|((&a, &b), &c)| if a == b { a } else { c })
        .collect()
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
    /// words; the new reference when that one is replaced (see [`Current`]).
    fn refreshed(&self, frames: &[u64], changes: usize) -> Option<Rc<[u64]>> {
        let mut references = self.references.borrow_mut();
        let current = references.get_mut(&frames.len())?;
        *current = Current::new(current.successor(frames, changes)?);
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

    #[test]
    fn majority_takes_the_word_two_frames_agree_on_else_the_last() {
        let voted = majority(&[1, 2, 3, 4], &[1, 5, 6, 7], &[9, 5, 3, 8]);
        assert_eq!(&*voted, &[1, 5, 3, 8]);
    }

    /// Frames of a process: `slots` the same for all, word 0 its own pointer.
    fn frames(pointer: u64, slots: &[u64]) -> Vec<u64> {
        std::iter::once(pointer).chain(slots.iter().copied()).collect()
    }

    #[test]
    fn a_stale_reference_is_replaced_by_the_vote_not_by_the_outlier_that_found_it_stale() {
        let old_slots = [0u64; 40];
        let typical = [7u64; 40];
        let mut outlier = typical;
        outlier[..20].fill(0xdead);
        let mut current = Current::new(frames(1, &old_slots).into());
        for pointer in 0..REFRESH_AFTER as u64 {
            assert!(current.successor(&frames(pointer, &old_slots), 1).is_none());
        }
        assert!(current.successor(&frames(2, &outlier), 41).is_none());
        assert!(current.successor(&frames(3, &typical), 41).is_none());
        let mut last = typical;
        last[30] = 0xbeef;
        let successor = current
            .successor(&frames(4, &last), 41)
            .expect("the third voter completes the vote");
        assert_eq!(&*successor, &frames(4, &typical)[..]);
    }

    #[test]
    fn a_reference_that_keeps_up_is_kept() {
        let slots = [7u64; 40];
        let mut current = Current::new(frames(1, &slots).into());
        for pointer in 0..10 * REFRESH_AFTER as u64 {
            assert!(current.successor(&frames(pointer, &slots), 1).is_none());
        }
    }
}
