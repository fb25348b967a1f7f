//! A run's memory budget: the bytes a run's thread holds, counted by the global allocator,
//! checked by the sandbox.
//!
//! A program that wants budgets enforced installs [`CountingAllocator`] as its
//! `#[global_allocator]` (the `hetsim` binary does). The allocator keeps, per thread, the
//! bytes allocated less the bytes freed; a run sets its budget on the thread it runs on (its
//! processes' coroutines run on that thread too) and the sandbox stops the run at its next
//! check once the count passes it: every `sim.*` call, every few thousand script operations
//! and every few thousand processes placed. So a run overshoots its budget by at most what
//! one step allocates, and fails naming the limit, instead of taking the whole worker with it
//! when the operating system runs out of memory. Memory a run frees on another thread is not
//! subtracted (the run's results are dropped after it, elsewhere); no run relies on that.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

thread_local! {
    /// Bytes allocated less bytes freed on this thread since its budget was set.
    static HELD: Cell<isize> = const { Cell::new(0) };
    /// This thread's budget [bytes] (0: none).
    static BUDGET: Cell<usize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: a thread being torn down has no thread-locals left, and must still free.
    let _ = HELD.try_with(|held| held.set(held.get().wrapping_add(delta)));
}

/// An allocator (the system's: `CountingAllocator(std::alloc::System)`), counting each
/// thread's bytes for [`Budget`].
pub struct CountingAllocator<A>(pub A);

// SAFETY: every call is forwarded to the inner allocator unchanged; counting touches only a
// thread-local `Cell` with a const initialiser and no destructor, which allocates nothing.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.0.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { self.0.dealloc(p, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { self.0.realloc(p, layout, new_size) };
        if !q.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        q
    }
}

/// A memory budget set on the current thread until dropped.
#[must_use = "the budget holds only while the guard lives"]
pub struct Budget(());

impl Budget {
    /// Sets a budget of `bytes` on this thread, counting from now; `None` when nothing
    /// counts this thread's allocations (the program's global allocator is not
    /// [`CountingAllocator`]), so that the caller can say the budget is not enforced.
    pub fn start(bytes: u64) -> Option<Budget> {
        if !counting() {
            return None;
        }
        HELD.with(|held| held.set(0));
        BUDGET.with(|budget| budget.set(usize::try_from(bytes).unwrap_or(usize::MAX).max(1)));
        Some(Budget(()))
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        BUDGET.with(|budget| budget.set(0));
    }
}

/// Whether the program counts allocations (its global allocator is [`CountingAllocator`]).
pub fn counting() -> bool {
    let before = HELD.with(Cell::get);
    let probe = std::hint::black_box(Box::new(0u64));
    let counted = HELD.with(Cell::get) != before;
    drop(probe);
    counted
}

/// The error of a run that passed this thread's budget, if it did.
pub fn over_budget() -> Option<String> {
    let budget = BUDGET.with(Cell::get);
    let held = HELD.with(Cell::get);
    (budget > 0 && held > 0 && held as usize > budget).then(|| {
        format!(
            "sandbox: the run held {} of memory, over its budget of {} (limit max_run_memory)",
            mebibytes(held as u64),
            mebibytes(budget as u64)
        )
    })
}

fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}
