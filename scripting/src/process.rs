//! A Rhai application script as an engine [`Process`].
//!
//! Rhai cannot yield by itself, so each process's script runs on a stackful coroutine
//! (corosensei): a `sim.*` primitive suspends the coroutine with a [`Request`] for the engine,
//! and the engine resumes it with the outcome. All processes share one compiled AST; each has
//! its own scope. The coroutines of a run take turns on one [`SharedStack`]: a suspended
//! process keeps only the used part of its stack (see [`crate::stack`]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use corosensei::{Coroutine, CoroutineResult, Yielder};
use hetsim_simulator::{Process, Request, Resume};
use rhai::{Engine, Scope, AST};

use crate::errors::{located, ScriptError};
use crate::sandbox::SliceClock;
use crate::stack::{Frames, OnSharedStack, SharedStack};

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
    /// The process's frames on the shared stack; none for a process on the machine.
    frames: Option<Rc<Frames>>,
    pub now: Cell<f64>,
}

impl Channel {
    /// The channel of a process on the machine ([`crate::resumable`]): its `sim` reads the time
    /// here, and its calls never suspend on a coroutine.
    pub fn new() -> Rc<Channel> {
        Channel::with_frames(None)
    }

    fn with_frames(frames: Option<Rc<Frames>>) -> Rc<Channel> {
        Rc::new(Channel {
            yielder: Cell::new(std::ptr::null()),
            frames,
            now: Cell::new(0.0),
        })
    }

    /// Suspends the script with `request` until the engine resumes it.
    pub fn request(&self, request: Request) -> Resume {
        let yielder = self.yielder.get();
        assert!(!yielder.is_null(), "sim.* called outside the process's coroutine");
        let marker = 0u8;
        if let Some(frames) = &self.frames {
            frames.mark(std::hint::black_box(&marker) as *const u8 as usize);
        }
        // SAFETY: the pointer is set at the start of the coroutine's body, which owns the
        // yielder for its whole run, and the script (hence this call) only runs inside it.
        unsafe { (*yielder).suspend(request) }
    }
}

type ScriptCoroutine = Coroutine<Resume, Request, Request, OnSharedStack>;

/// The script's body, run once the coroutine first resumes.
type Body = Box<dyn FnOnce(&Yielder<Resume, Request>) -> Request>;

enum Life {
    /// Not started: the coroutine is made at the first resume, since making it writes to
    /// the shared stack.
    Ready(Body),
    /// Started, and suspended (its frames on the stack or saved, see [`SharedStack`]).
    Suspended(ScriptCoroutine),
    Ended,
}

pub struct ScriptProcess {
    life: Life,
    stack: Rc<SharedStack>,
    /// The process's frames on the shared stack (its channel marks where they end).
    frames: Rc<Frames>,
    channel: Rc<Channel>,
    clock: SliceClock,
}

impl ScriptProcess {
    /// `scope_for` builds the process's scope from its channel (so its `sim` handle can reach
    /// the coroutine). A script that fails tells the engine why as text, and keeps the error
    /// itself (with its place) in `failure` unless an earlier one is there.
    pub fn new(
        engine: Rc<Engine>,
        ast: Rc<AST>,
        origin: Rc<str>,
        stack: Rc<SharedStack>,
        clock: SliceClock,
        failure: Rc<RefCell<Option<ScriptError>>>,
        scope_for: impl FnOnce(Rc<Channel>) -> Scope<'static> + 'static,
    ) -> Self {
        let frames = Rc::new(Frames::default());
        let channel = Channel::with_frames(Some(frames.clone()));
        let inner = channel.clone();
        let body: Body = Box::new(move |yielder| {
            inner.yielder.set(yielder);
            let mut scope = scope_for(inner.clone());
            match engine.run_ast_with_scope(&mut scope, &ast) {
                Ok(()) => Request::Finish,
                Err(e) => {
                    let error = located(&origin, *e);
                    let text = error.to_string();
                    // At a run's end (see `stop`) this is the teardown's error: the run's own
                    // failure came first, and the engine's message matches only that one.
                    failure.borrow_mut().get_or_insert(error);
                    Request::Fail(text)
                }
            }
        });
        ScriptProcess {
            life: Life::Ready(body),
            stack,
            frames,
            channel,
            clock,
        }
    }

    fn run_until_it_suspends(&mut self, input: Resume) -> Request {
        let frames = &self.frames;
        self.stack.enter(frames);
        let mut coroutine = match std::mem::replace(&mut self.life, Life::Ended) {
            Life::Ready(body) => {
                let stack = OnSharedStack(self.stack.clone());
                Coroutine::with_stack(stack, move |yielder, _start: Resume| body(yielder))
            }
            Life::Suspended(coroutine) => coroutine,
            Life::Ended => return Request::Fail("resumed after it ended".to_owned()),
        };
        match coroutine.resume(input) {
            CoroutineResult::Yield(request) => {
                self.stack.leave(frames);
                self.life = Life::Suspended(coroutine);
                request
            }
            CoroutineResult::Return(request) => request,
        }
    }
}

impl Process for ScriptProcess {
    fn resume(&mut self, now: f64, input: Resume) -> Request {
        if let Some(reason) = self.clock.stop_reason() {
            return Request::Fail(reason);
        }
        self.channel.now.set(now);
        self.clock.restart();
        self.run_until_it_suspends(input)
    }
}

/// How many times a process suspended at its run's end is resumed with an error before its
/// frames are unwound instead (a script that catches the error and calls `sim` again).
const STOP_RESUMES: usize = 4;

impl ScriptProcess {
    /// Ends a process left suspended by its run's end (a failure, a deadlock, a cancel): its
    /// pending `sim.*` call returns an error, which returns through the script's frames as
    /// Rhai errors do. Unwinding them instead (a forced unwind, what dropping a suspended
    /// coroutine does) costs tens of µs a process: seconds for a cancelled run of 100,000
    /// suspended workers. A script that catches the error is stopped by the sandbox's next
    /// check, which the ended clock fails.
    fn stop(&mut self) {
        if !matches!(self.life, Life::Suspended(_)) {
            return;
        }
        self.clock.end();
        for _ in 0..STOP_RESUMES {
            self.run_until_it_suspends(Resume::Refused(crate::sandbox::ENDED.to_owned()));
            if !matches!(self.life, Life::Suspended(_)) {
                return;
            }
        }
    }
}

impl Drop for ScriptProcess {
    /// A process dropped while suspended (its run failed, or deadlocked) is stopped; one that
    /// will not stop unwinds its script's frames, on its own stack: put it back first.
    fn drop(&mut self) {
        self.stop();
        if let Life::Suspended(coroutine) = std::mem::replace(&mut self.life, Life::Ended) {
            self.stack.enter(&self.frames);
            drop(coroutine);
        }
    }
}

/// Shared, interior-mutable run log.
pub type SharedLog = Rc<RefCell<RunLog>>;
