//! The handles of isends and posted receives, in a table whose slots are reused.
//!
//! A slot is freed when a wait hands its handle over (the handle is done and its message
//! taken), so that the table holds the handles not yet waited for rather than every one a
//! run ever made: a replay or a script that isends in a loop would otherwise grow the
//! engine by a slot per message (about 80 bytes; at 10⁶ trace nodes it was most of the
//! replay's peak memory). A reused slot's generation moves on; a handle of an earlier
//! generation was handed over, so it reads as a done handle without a message, which is
//! what a second wait on a handle gave before slots were reused.

use crate::process::{Handle, Message};
use crate::Pid;

/// One slot: the handle of its current generation.
struct Slot {
    owner: Pid,
    generation: u32,
    done: bool,
    /// A completed receive's message, until a wait hands it over.
    message: Option<Message>,
}

/// The handle table.
#[derive(Default)]
pub(super) struct Handles {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

/// What a handle names.
enum Lookup<'a> {
    Live(&'a Slot),
    /// Handed over by a wait before its slot was reused.
    HandedOver,
    /// Never made by this run.
    Unknown,
}

impl Handles {
    /// A new handle of `owner`, not done.
    pub fn make(&mut self, owner: Pid) -> Handle {
        match self.free.pop() {
            Some(slot) => {
                let s = &mut self.slots[slot as usize];
                s.owner = owner;
                s.done = false;
                Handle::new(slot, s.generation)
            }
            None => {
                let slot = u32::try_from(self.slots.len()).expect("fewer than 2³² handles in use at once");
                self.slots.push(Slot {
                    owner,
                    generation: 0,
                    done: false,
                    message: None,
                });
                Handle::new(slot, 0)
            }
        }
    }

    fn lookup(&self, handle: Handle) -> Lookup<'_> {
        match self.slots.get(handle.slot()) {
            Some(s) if s.generation == handle.generation() => Lookup::Live(s),
            Some(s) if handle.generation() < s.generation => Lookup::HandedOver,
            _ => Lookup::Unknown,
        }
    }

    /// Why `pid` may not wait for or test `handle`, if it may not: it was never made, or it
    /// is another process's (a handle already handed over is anyone's: its slot no longer
    /// says whose it was).
    pub fn refusal(&self, pid: Pid, handle: Handle) -> Option<String> {
        let not_mine = || Some(format!("handle {} is not one of this process's", handle.0));
        match self.lookup(handle) {
            Lookup::Live(s) if s.owner != pid => not_mine(),
            Lookup::Unknown => not_mine(),
            _ => None,
        }
    }

    pub fn is_done(&self, handle: Handle) -> bool {
        match self.lookup(handle) {
            Lookup::Live(s) => s.done,
            Lookup::HandedOver | Lookup::Unknown => true,
        }
    }

    /// Marks `handle` done, with a receive's message; returns its owner.
    pub fn complete(&mut self, handle: Handle, message: Option<Message>) -> Pid {
        let s = &mut self.slots[handle.slot()];
        debug_assert_eq!(
            s.generation,
            handle.generation(),
            "a handle completes before any wait hands it over"
        );
        s.done = true;
        s.message = message;
        s.owner
    }

    /// The messages of `handles` (all done), per handle (`None` for a send's, or one
    /// handed over before, a handle named twice included), their slots freed.
    pub fn hand_over(&mut self, handles: &[Handle]) -> Vec<Option<Message>> {
        handles
            .iter()
            .map(|&h| {
                if !matches!(self.lookup(h), Lookup::Live(_)) {
                    return None;
                }
                let s = &mut self.slots[h.slot()];
                s.generation = s.generation.wrapping_add(1);
                self.free.push(h.slot() as u32);
                s.message.take()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_reused_after_its_handle_is_handed_over_and_the_old_handle_reads_done() {
        let mut t = Handles::default();
        let a = t.make(3);
        assert!(!t.is_done(a));
        assert_eq!(t.complete(a, None), 3);
        assert_eq!(t.hand_over(&[a, a]), [None, None]);
        let b = t.make(4);
        assert_eq!(b.slot(), a.slot());
        assert_ne!(b, a);
        assert!(t.is_done(a) && !t.is_done(b));
        assert_eq!(t.refusal(3, a), None);
        assert!(t.refusal(3, b).is_some());
        assert!(t.refusal(4, Handle::new(7, 0)).is_some());
        assert_eq!(t.slots.len(), 1);
    }
}
