//! A Rhai application script as an engine [`Process`].
//!
//! Rhai cannot yield by itself, so each process's script runs on its own stackful coroutine
//! (corosensei): a `sim.*` primitive suspends the coroutine with a [`Request`] for the engine,
//! and the engine resumes it with the outcome. All processes share one compiled AST; each has
//! its own scope.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use hetsim_simulator::{Process, Request, Resume};
use rhai::{Engine, Scope, AST};

use crate::errors::located;
use crate::sandbox::{SliceClock, CANCELLED};

/// The run log: bounded, with the count of lines dropped.
#[derive(Debug, Default)]
pub struct RunLog {
    pub lines: Vec<String>,
    pub dropped: u64,
    /// Lines kept at most.
    pub limit: usize,
    /// Bytes kept at most: a line that would pass them is counted, not kept.
    pub byte_limit: usize,
    pub bytes: usize,
}

impl RunLog {
    pub fn push(&mut self, line: String) {
        if self.lines.len() < self.limit && self.bytes.saturating_add(line.len()) <= self.byte_limit {
            self.bytes += line.len();
            self.lines.push(line);
        } else {
            self.dropped += 1;
        }
    }
}

/// What the `sim` handle of one process shares with its coroutine.
pub struct Channel {
    yielder: Cell<*const Yielder<Resume, Request>>,
    pub now: Cell<f64>,
}

impl Channel {
    /// Suspends the script with `request` until the engine resumes it.
    pub fn request(&self, request: Request) -> Resume {
        let yielder = self.yielder.get();
        assert!(!yielder.is_null(), "sim.* called outside the process's coroutine");
        // SAFETY: the pointer is set at the start of the coroutine's body, which owns the
        // yielder for its whole run, and the script (hence this call) only runs inside it.
        unsafe { (*yielder).suspend(request) }
    }
}

type ScriptCoroutine = Coroutine<Resume, Request, Request, DefaultStack>;

pub struct ScriptProcess {
    coroutine: ScriptCoroutine,
    channel: Rc<Channel>,
    clock: SliceClock,
}

impl ScriptProcess {
    /// `scope_for` builds the process's scope from its channel (so its `sim` handle can reach
    /// the coroutine).
    pub fn new(
        engine: Rc<Engine>,
        ast: Rc<AST>,
        origin: Rc<str>,
        stack_size: usize,
        clock: SliceClock,
        scope_for: impl FnOnce(Rc<Channel>) -> Scope<'static> + 'static,
    ) -> std::io::Result<Self> {
        let channel = Rc::new(Channel {
            yielder: Cell::new(std::ptr::null()),
            now: Cell::new(0.0),
        });
        let inner = channel.clone();
        let stack = DefaultStack::new(stack_size)?;
        let coroutine = Coroutine::with_stack(
            stack,
            move |yielder: &Yielder<Resume, Request>, _start: Resume| {
                inner.yielder.set(yielder);
                let mut scope = scope_for(inner.clone());
                match engine.run_ast_with_scope(&mut scope, &ast) {
                    Ok(()) => Request::Finish,
                    Err(e) => Request::Fail(located(&origin, *e)),
                }
            },
        );
        Ok(ScriptProcess {
            coroutine,
            channel,
            clock,
        })
    }
}

impl Process for ScriptProcess {
    fn resume(&mut self, now: f64, input: Resume) -> Request {
        if self.clock.cancelled() {
            return Request::Fail(CANCELLED.to_owned());
        }
        self.channel.now.set(now);
        self.clock.restart();
        match self.coroutine.resume(input) {
            CoroutineResult::Yield(request) | CoroutineResult::Return(request) => request,
        }
    }
}

/// Shared, interior-mutable run log.
pub type SharedLog = Rc<RefCell<RunLog>>;
