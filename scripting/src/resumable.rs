//! Application scripts as resumable state machines (issue 46).
//!
//! A script on Rhai needs a stack of its own while it waits on the engine ([`crate::process`]):
//! a process suspended in `sim.receive` keeps Rhai's evaluator frames, about 1.4 KiB, and
//! each resume copies them back. Most application scripts are loops around `sim` calls, and
//! those need no stack: [`compile`] turns such a script into a [`Program`] of flat
//! operations, and a [`ResumableProcess`] is one process's place in it (the next operation,
//! its operands, its variables). A `sim` call that waits hands its request to the engine and
//! returns; the answer is read when the engine resumes it.
//!
//! A run uses the machine when its script keeps to what the compiler takes (docs/SIMULATION.md,
//! "Scripts as state machines", lists it: loops, branches, variables, Rhai's operators on
//! numbers, texts and booleans, literals, a message's fields, and the `sim` calls, collectives
//! included) and runs every other script on Rhai, as before. Either way the results are the
//! same to the bit: the machine calls the same `sim` code ([`crate::sim::Method`]), applies
//! Rhai's operators as Rhai does ([`operators`]), checks Rhai's size limits where Rhai checks
//! them, and a type Rhai would refuse at run time is refused by the compiler, so that the
//! script runs on Rhai and fails with Rhai's message (tests: `scripting/tests/resumable.rs`).
//! Two things differ, and only for a script that runs past a sandbox limit: the machine counts
//! its own operations against `max_operations` (about one per operation of a [`Program`],
//! fewer than Rhai counts), and a script stopped for its operations or its wall time is placed
//! at its loop rather than at the expression Rhai was evaluating.

mod compile;
mod operators;
mod program;

use std::cell::RefCell;
use std::rc::Rc;

use hetsim_simulator::{Process, Request, Resume};
use rhai::{Dynamic, EvalAltResult, Position};

pub use compile::{compile, Names};
use program::{placed, Machine, Stop, Waiting};
pub use program::{Program, SizeLimits};

use crate::errors::{located, ScriptError};
use crate::sandbox::{Limits, SliceClock};
use crate::sim::Sim;

/// What the processes of a run share: the program and the sandbox.
pub struct Shared {
    pub program: Program,
    pub clock: SliceClock,
    pub origin: Rc<str>,
    /// The first script error of the run, with its place (see [`crate::process`]).
    pub failure: Rc<RefCell<Option<ScriptError>>>,
    pub sizes: SizeLimits,
    pub max_operations: u64,
    pub slice_seconds: f64,
}

impl Shared {
    pub fn new(
        program: Program,
        limits: &Limits,
        clock: SliceClock,
        origin: Rc<str>,
        failure: Rc<RefCell<Option<ScriptError>>>,
    ) -> Self {
        Shared {
            program,
            clock,
            origin,
            failure,
            sizes: SizeLimits {
                string: limits.max_string_size,
                array: limits.max_array_size,
                map: limits.max_map_size,
            },
            max_operations: limits.max_operations,
            slice_seconds: limits.max_slice_seconds,
        }
    }
}

/// One process of a run on the machine.
pub struct ResumableProcess {
    shared: Rc<Shared>,
    sim: Sim,
    machine: Machine,
    /// The `sim` call waiting on the engine: what reads its answer, and where it is.
    waiting: Option<(Waiting, Position)>,
    operations: u64,
}

impl ResumableProcess {
    pub fn new(shared: Rc<Shared>, sim: Sim, tag: Dynamic, rank: i64, pid: usize) -> Self {
        let mut slots = vec![Dynamic::UNIT; shared.program.slots].into_boxed_slice();
        slots[usize::from(compile::TAG)] = tag;
        slots[usize::from(compile::RANK)] = Dynamic::from_int(rank);
        slots[usize::from(compile::PID)] = Dynamic::from_int(pid as i64);
        ResumableProcess {
            shared,
            sim,
            machine: Machine {
                pc: 0,
                stack: Vec::new(),
                slots,
            },
            waiting: None,
            operations: 0,
        }
    }

    fn advance(&mut self, input: Resume) -> Result<Stop, Box<EvalAltResult>> {
        if let Some((waiting, at)) = self.waiting.take() {
            match waiting.take(&mut self.sim, input).map_err(|e| placed(e, at))? {
                Ok(value) => self.machine.stack.push(value),
                Err((request, waiting)) => return Ok(Stop::Wait(request, waiting, at)),
            }
        }
        let shared = &*self.shared;
        let operations = &mut self.operations;
        let mut tick = |ops: u32, read_clock: bool, at: Position| {
            *operations += u64::from(ops);
            if shared.max_operations > 0 && *operations > shared.max_operations {
                return Err(EvalAltResult::ErrorTooManyOperations(at).into());
            }
            match read_clock
                .then(|| shared.clock.interruption(shared.slice_seconds))
                .flatten()
            {
                Some(reason) => Err(EvalAltResult::ErrorTerminated(reason.into(), at).into()),
                None => Ok(()),
            }
        };
        self.machine
            .run(&shared.program, &mut self.sim, &shared.sizes, &mut tick)
    }

    /// The script's error: kept with its place unless the run has one, told the engine as text.
    fn fail(&self, error: EvalAltResult) -> Request {
        let error = located(&self.shared.origin, error);
        let text = error.to_string();
        self.shared.failure.borrow_mut().get_or_insert(error);
        Request::Fail(text)
    }
}

impl Process for ResumableProcess {
    fn resume(&mut self, now: f64, input: Resume) -> Request {
        if let Some(reason) = self.shared.clock.stop_reason() {
            return Request::Fail(reason);
        }
        self.sim.channel.now.set(now);
        self.shared.clock.restart();
        match self.advance(input) {
            Ok(Stop::Wait(request, waiting, at)) => {
                self.waiting = Some((waiting, at));
                request
            }
            Ok(Stop::End) => Request::Finish,
            Err(error) => self.fail(*error),
        }
    }
}

#[cfg(test)]
mod tests {
    /// A process on the machine is its place in the program, its `sim` handle and the call it
    /// waits on, 160 bytes; its variables (16 bytes each) and operands are two allocations
    /// beside (issue 46: a million master-worker workers, with the engine's state for each,
    /// take 1.4 GiB).
    #[test]
    fn a_process_on_the_machine_is_small() {
        let size = std::mem::size_of::<super::ResumableProcess>();
        assert!(size <= 160, "{size} bytes");
    }
}
