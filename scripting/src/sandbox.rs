//! The limits every script runs under, and a Rhai engine configured with them.
//!
//! Scripts have no file, network or module access (Rhai has none unless granted; imports
//! are refused) and no `eval`. Operations, call depth, expression depth and the sizes of
//! strings, arrays and maps are bounded, and a script that runs longer than
//! `max_slice_seconds` of wall time without handing control back to the simulator (a
//! `sim.*` call) is stopped: an infinite loop ends with a clear error in about a second.
//! A run's [`CancelFlag`], set from another thread, stops it the same way, and so does a
//! run's memory budget (`crate::memory`) once passed.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rhai::module_resolvers::DummyModuleResolver;
use rhai::{Dynamic, Engine};

#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Rhai operations per process over its whole life (0: unbounded).
    pub max_operations: u64,
    pub max_call_levels: usize,
    pub max_expr_depth: usize,
    pub max_string_size: usize,
    pub max_array_size: usize,
    pub max_map_size: usize,
    /// Wall time a script may run between two `sim.*` calls.
    pub max_slice_seconds: f64,
    /// Lines kept in the run log; later lines are counted, not kept.
    pub max_log_lines: usize,
    /// Bytes kept in the run log (a script that logs long lines could otherwise grow it
    /// without bound); later lines are counted, not kept.
    pub max_log_bytes: usize,
    /// Processes a run may place (the labels' counts summed): placing allocates per process,
    /// so a count of 4·10⁹ must be refused before, not discovered by the allocator.
    pub max_processes: u64,
    /// Stack a script may use [bytes]: the one stack the run's processes take turns on
    /// (`crate::stack`), reserved address space of which only touched pages become resident.
    /// 8 MiB holds `max_call_levels` = 64 of Rhai recursion even in a debug build (which
    /// needs 1–4 MiB; a release build far less).
    pub stack_size: usize,
    /// Bytes the run may hold (`crate::memory`; enforced where the program counts
    /// allocations). `None`: unbounded.
    pub max_run_memory: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_operations: 1_000_000_000,
            max_call_levels: 64,
            max_expr_depth: 64,
            max_string_size: 1 << 20,
            max_array_size: 1 << 20,
            max_map_size: 1 << 16,
            max_slice_seconds: 1.0,
            max_log_lines: 10_000,
            max_log_bytes: 1 << 20,
            max_processes: 1 << 20,
            stack_size: 8 << 20,
            max_run_memory: None,
        }
    }
}

/// Set by whoever owns a run (a worker told that the run was cancelled) to stop it: scripts
/// check it every `CLOCK_EVERY` operations and at every `sim.*` call.
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The error a cancelled run's scripts stop with.
pub const CANCELLED: &str = "sandbox: the run was cancelled";

/// The error the scripts still suspended when their run ends stop with.
pub const ENDED: &str = "sandbox: the run ended";

/// When the running script's slice started, shared by all scripts of a run (one runs at a
/// time), the run's cancel flag, and whether the run has ended.
///
/// A slice starts at the first clock check after the script got control (none: not checked
/// yet), not when it got control: reading the clock at every resume was 2 % of a ping-pong's
/// time (issue 46), and a slice so starts at most `CLOCK_EVERY` operations (well under a
/// millisecond) late.
#[derive(Clone, Debug)]
pub struct SliceClock {
    started: Rc<Cell<Option<Instant>>>,
    cancel: CancelFlag,
    ended: Rc<Cell<bool>>,
}

impl SliceClock {
    pub fn new(cancel: CancelFlag) -> Self {
        SliceClock {
            started: Rc::default(),
            cancel,
            ended: Rc::default(),
        }
    }

    pub fn restart(&self) {
        self.started.set(None);
    }

    /// Whether the slice has lasted longer than `slice` (starting it if it has not started).
    fn over(&self, slice: Duration) -> bool {
        match self.started.get() {
            Some(started) => started.elapsed() > slice,
            None => {
                self.started.set(Some(Instant::now()));
                false
            }
        }
    }

    /// Ends the run for every script still suspended in it: each stops at its next check
    /// (see [`crate::process`]'s teardown).
    pub fn end(&self) {
        self.ended.set(true);
    }

    /// Why the running script must stop now, if it must: [`SliceClock::stop_reason`], or it
    /// has run `slice_seconds` without a `sim.*` call.
    pub fn interruption(&self, slice_seconds: f64) -> Option<String> {
        if let Some(reason) = self.stop_reason() {
            Some(reason)
        } else if self.over(Duration::from_secs_f64(slice_seconds)) {
            Some(format!(
                "sandbox: the script ran {slice_seconds} s of wall time without a sim.* call (limit max_slice_seconds)"
            ))
        } else {
            None
        }
    }

    /// Why the run must stop now, if it must: cancelled, ended, or over its memory budget.
    pub fn stop_reason(&self) -> Option<String> {
        if self.cancel.is_cancelled() {
            return Some(CANCELLED.to_owned());
        }
        if self.ended.get() {
            return Some(ENDED.to_owned());
        }
        crate::memory::over_budget()
    }
}

/// How often (in operations) the wall clock is read: reading it costs more than an operation.
const CLOCK_EVERY: u64 = 1 << 14;

/// A Rhai engine with the sandbox of `limits`, stopping any script that holds control longer
/// than the slice limit since `clock` was last restarted, or whose run was cancelled.
pub fn engine(limits: &Limits, clock: &SliceClock) -> Engine {
    let mut engine = Engine::new();
    engine
        .set_max_operations(limits.max_operations)
        .set_max_call_levels(limits.max_call_levels)
        .set_max_expr_depths(limits.max_expr_depth, limits.max_expr_depth)
        .set_max_string_size(limits.max_string_size)
        .set_max_array_size(limits.max_array_size)
        .set_max_map_size(limits.max_map_size)
        .set_module_resolver(DummyModuleResolver::new())
        .disable_symbol("eval");
    let clock = clock.clone();
    let seconds = limits.max_slice_seconds;
    engine.on_progress(move |ops| {
        if ops % CLOCK_EVERY != 0 {
            None
        } else {
            clock.interruption(seconds).map(Dynamic::from)
        }
    });
    engine
}
