//! What a simulated process and the engine say to each other: the process's requests and
//! the outcomes it resumes with.

use std::sync::Arc;

use crate::platform::{Direction, HostMemory};
use crate::results::SpanKind;
use crate::uncertainty::Spread;
use crate::Pid;

/// A delivered message.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub from: Pid,
    pub to: Pid,
    pub bytes: f64,
    /// When it was sent [s].
    pub sent: f64,
    /// When it arrived [s].
    pub arrived: f64,
    /// The error bar of its arrival: the sender's at the send, widened by each hop's.
    pub spread: Spread,
}

/// Whom a receive accepts a message from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Pid(Pid),
    Any,
}

impl Source {
    pub(crate) fn accepts(self, message: &Message) -> bool {
        match self {
            Source::Pid(pid) => message.from == pid,
            Source::Any => true,
        }
    }
}

/// What a process asks of the engine next.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// Occupy the process for `seconds` of computation, drawing `power` [W] on its node if
    /// the model states it (else the node's load power); `uncertainty` is the half-width of
    /// the duration's error bar [s] (0 when the model states none); `detail` is what its
    /// trace span says of it (the model, the kernel, the limiter), shared by every compute
    /// its model timed alike.
    Compute {
        seconds: f64,
        power: Option<f64>,
        uncertainty: f64,
        detail: Option<Arc<str>>,
    },
    /// Advance the process's clock without computing.
    Sleep { seconds: f64 },
    /// Non-blocking send; the process resumes at once, with `Done`, or when `tracked` (an
    /// isend) with a [`Handle`] that completes when the message is delivered. `direction`
    /// defaults from the endpoints' kinds; `host_memory` is the host buffer of a
    /// host↔device copy, handed to the links' timing as it is (links that do not
    /// distinguish ignore it).
    Send {
        to: Pid,
        bytes: f64,
        direction: Option<Direction>,
        host_memory: HostMemory,
        tracked: bool,
    },
    /// Block until a message from `from` is in the mailbox.
    Receive { from: Source },
    /// Post a receive (an irecv): the process resumes at once with a [`Handle`] that
    /// completes when a message from `from` is taken for it. Posted receives take arriving
    /// messages in the order they were posted, before a blocking receive does.
    Post { from: Source },
    /// Block until every handle has completed (`handles` of this process); resumes with
    /// `Completed`.
    Wait { handles: Vec<Handle> },
    /// Resumes at once with `Tested`: whether `handle` has completed.
    Test { handle: Handle },
    /// Records a span of `kind` from `start` to the process's clock (when tracing): what the
    /// process calls the requests it made since, a collective for one. Resumes at once.
    Mark {
        kind: SpanKind,
        start: f64,
        detail: String,
    },
    /// The program returned.
    Finish,
    /// The program failed; the run fails with this message.
    Fail(String),
}

/// The outcome of the previous request, handed to the process as it resumes.
#[derive(Clone, Debug, PartialEq)]
pub enum Resume {
    Start,
    /// The compute, sleep or send is done.
    Done,
    Message(Message),
    /// The handle of an isend or a posted receive.
    Handle(Handle),
    /// The handles waited for completed: per handle, a receive's message (`None` for a
    /// send, or a receive whose message an earlier wait handed over).
    Completed(Vec<Option<Message>>),
    Tested(bool),
    /// The request cannot be served, and why: a send to no process, of a bad size, over no
    /// route, or one its links' models refuse. A scripted process fails at its call with it.
    Refused(String),
}

/// An isend or a posted receive, to wait for or test: a slot of the engine's handle table
/// (the low 32 bits) and the slot's generation (the high 32 bits; slots are reused once a
/// wait has handed their handle over). A run's first handles are `Handle(0)`, `Handle(1)`, ….
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle(pub u64);

impl Handle {
    pub(crate) fn new(slot: u32, generation: u32) -> Self {
        Handle(u64::from(generation) << 32 | u64::from(slot))
    }

    pub(crate) fn slot(self) -> usize {
        (self.0 & u64::from(u32::MAX)) as usize
    }

    pub(crate) fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

/// A simulated process: anything that answers each resume with its next request.
pub trait Process {
    fn resume(&mut self, now: f64, input: Resume) -> Request;
}

impl<P: Process + ?Sized> Process for Box<P> {
    fn resume(&mut self, now: f64, input: Resume) -> Request {
        (**self).resume(now, input)
    }
}
