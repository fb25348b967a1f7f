//! A rank's streams and its relay as engine processes.
//!
//! The engine's process does one request at a time, so a rank that overlaps computation
//! and communication is several processes on its node: a CPU stream (CPU ops, as sleeps of
//! their recorded time), a GPU stream (GPU computation, as computes on the node) and a
//! communication stream (collectives, sends, receives, loads and stores). Each issues the
//! lowest-id ready node of its kind, runs its actions (crate::comm), then marks it done in
//! the rank's shared state (crate::rank), which may make nodes of other streams ready.
//!
//! The engine runs a process ahead of its own clock through computes and sleeps (they
//! depend on no other process); a stream's node changes the rank's shared state only
//! once the engine's clock has caught up (each op ends with an empty wait, which the
//! engine serves at the process's time), so that no stream sees another's future.
//!
//! A stream with nothing ready blocks in a receive from the rank's relay. Whoever makes
//! work ready for an idle stream queues a wake in the shared state and sends the relay a
//! zero-byte message (it arrives at once, over no link); the relay forwards one zero-byte
//! message to the stream named. The relay exists so that the communication stream waits
//! on one known sender: it cannot receive from "anyone", since other ranks' collective
//! messages may sit in its mailbox. The relay sits on the GPU's host where the system has
//! one (then it is also the other end of loads and stores, whose bytes it drops).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use hetsim_scripting::nccl::plans::Plans;
use hetsim_simulator::{Handle, HostMemory, Pid, Process, Request, Resume, Source, SpanKind};

use crate::comm::{actions, Action};
use crate::context::Context;
use crate::kind::Stream;
use crate::rank::RankState;

/// What the last request's resume brings.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Nothing,
    Handle,
    Message,
    Wake,
    /// A point-to-point message from `src` for `tag`.
    Tagged {
        src: usize,
        tag: i64,
    },
}

struct Running {
    node: u32,
    start: f64,
    actions: VecDeque<Action>,
    pending: Vec<Handle>,
}

/// One stream of one rank.
pub struct StreamProcess {
    context: Rc<Context>,
    rank: Rc<RefCell<RankState>>,
    stream: Stream,
    relay: Pid,
    op: Option<Running>,
    /// The plans of the collective calls this stream met (the communication stream's).
    plans: Plans,
    /// The last op's action buffer, empty, for the next op: no allocation per node.
    spare: VecDeque<Action>,
    /// Zero-byte signals to send to the relay before anything else.
    signals: usize,
    expect: Expect,
    leaving: bool,
}

impl StreamProcess {
    pub fn new(context: Rc<Context>, rank: Rc<RefCell<RankState>>, stream: Stream, relay: Pid) -> Self {
        StreamProcess {
            context,
            rank,
            stream,
            relay,
            op: None,
            plans: Plans::default(),
            spare: VecDeque::new(),
            signals: 0,
            expect: Expect::Nothing,
            leaving: false,
        }
    }

    fn fail(&self, why: String) -> Request {
        let rank = self.rank.borrow();
        let node = self
            .op
            .as_ref()
            .map(|op| op.node)
            .map(|i| {
                let n = &rank.nodes;
                format!(", node {} ({} {:?})", n.id(i), n.kind(i).0.name(), n.name(i))
            })
            .unwrap_or_default();
        let file = self
            .context
            .files
            .get(rank.rank)
            .map(|f| format!("{} ", f.display()))
            .unwrap_or_default();
        Request::Fail(format!("{file}(rank {}){node}: {why}", rank.rank))
    }

    /// Takes in the outcome of the last request; `Some` is a request to make at once (a
    /// refusal's failure, a receive that goes on for its tag).
    fn take(&mut self, input: Resume) -> Option<Request> {
        let expect = std::mem::replace(&mut self.expect, Expect::Nothing);
        match (expect, input) {
            (_, Resume::Refused(why)) => Some(self.fail(why)),
            (Expect::Handle, Resume::Handle(h)) => {
                if let Some(op) = &mut self.op {
                    op.pending.push(h);
                }
                None
            }
            (Expect::Tagged { src, tag }, Resume::Message(_)) => {
                let me = self.rank.borrow().rank;
                let mut p2p = self.context.p2p.borrow_mut();
                match p2p.sent.get_mut(&(src, me)).and_then(VecDeque::pop_front) {
                    Some((t, _)) if t == tag => None,
                    Some((t, node)) => {
                        p2p.early.entry((src, me, t)).or_default().push_back(node);
                        self.expect = Expect::Tagged { src, tag };
                        Some(Request::Receive {
                            from: Source::Pid(self.context.comm_pids[src]),
                        })
                    }
                    None => {
                        drop(p2p);
                        Some(self.fail(format!("a message from rank {src} that no send of it announced")))
                    }
                }
            }
            _ => None,
        }
    }

    /// The request for `action`, or `None` when it asks nothing of the engine.
    fn issue(&mut self, action: Action) -> Option<Request> {
        let me = self.rank.borrow().rank;
        let op = self.op.as_mut()?;
        match action {
            Action::Compute(timed) => Some(Request::Compute {
                seconds: timed.seconds,
                power: timed.power,
                uncertainty: timed.uncertainty_seconds(),
                detail: timed.detail,
            }),
            Action::Sleep(seconds) => Some(Request::Sleep { seconds }),
            Action::Send {
                to,
                bytes,
                tracked,
                direction,
            } => {
                if tracked {
                    self.expect = Expect::Handle;
                }
                Some(Request::Send {
                    to,
                    bytes,
                    direction,
                    host_memory: HostMemory::default(),
                    tracked,
                })
            }
            Action::Receive(from) => {
                self.expect = Expect::Message;
                Some(Request::Receive {
                    from: Source::Pid(from),
                })
            }
            Action::Flush if op.pending.is_empty() => None,
            Action::Flush => Some(Request::Wait {
                handles: std::mem::take(&mut op.pending),
            }),
            Action::Announce { dst, tag } => {
                let id = self.rank.borrow().nodes.id(op.node);
                let mut p2p = self.context.p2p.borrow_mut();
                p2p.sent.entry((me, dst)).or_default().push_back((tag, id));
                None
            }
            Action::Tagged { src, tag } => {
                let mut p2p = self.context.p2p.borrow_mut();
                if let Some(early) = p2p.early.get_mut(&(src, me, tag)) {
                    if early.pop_front().is_some() {
                        return None;
                    }
                }
                self.expect = Expect::Tagged { src, tag };
                Some(Request::Receive {
                    from: Source::Pid(self.context.comm_pids[src]),
                })
            }
            Action::Sync => Some(Request::Wait { handles: Vec::new() }),
            Action::Mark(detail) => Some(Request::Mark {
                kind: SpanKind::Collective,
                start: op.start,
                detail,
            }),
        }
    }

    /// Starts node `i`: its actions, or a failure naming it.
    fn start(&mut self, i: u32, now: f64) -> Result<(), String> {
        let mut list = std::mem::take(&mut self.spare);
        let counted = {
            let state = self.rank.borrow();
            actions(
                &self.context,
                &mut self.plans,
                state.rank,
                &state.nodes.node(i),
                &mut list,
            )
        };
        // The engine lets a process run ahead of its clock through computes and sleeps;
        // the rank's shared state must change at the engine's time, so every op ends by
        // catching up with it.
        list.push_back(Action::Sync);
        self.op = Some(Running {
            node: i,
            start: now,
            actions: list,
            pending: Vec::new(),
        });
        let counted = counted?;
        let mut state = self.rank.borrow_mut();
        state.kept_recorded += u64::from(counted.kept_recorded);
        state.fp32_fallback += u64::from(counted.fallback);
        Ok(())
    }
}

impl Process for StreamProcess {
    fn resume(&mut self, now: f64, input: Resume) -> Request {
        if self.context.cancel.is_cancelled() {
            return Request::Fail(hetsim_scripting::CANCELLED.to_owned());
        }
        if let Some(request) = self.take(input) {
            return request;
        }
        loop {
            if self.signals > 0 {
                self.signals -= 1;
                return signal(self.relay);
            }
            if self.leaving {
                return Request::Finish;
            }
            if let Some(op) = &mut self.op {
                if let Some(action) = op.actions.pop_front() {
                    match self.issue(action) {
                        Some(request) => return request,
                        None => continue,
                    }
                }
                let (node, start) = (op.node, op.start);
                if let Some(done) = self.op.take() {
                    self.spare = done.actions;
                }
                let woken = self.rank.borrow_mut().complete(node, self.stream, start, now);
                match woken {
                    Ok(woken) => self.signals += woken,
                    Err(why) => return self.fail(why),
                }
                continue;
            }
            let next = self.rank.borrow_mut().next(self.stream, now);
            if let Some(i) = next {
                if let Err(why) = self.start(i, now) {
                    return self.fail(why);
                }
                continue;
            }
            let mut rank = self.rank.borrow_mut();
            if rank.all_done() {
                rank.finished_streams += 1;
                self.leaving = true;
                if rank.finished_streams == 3 {
                    rank.wakes.push_back(None);
                    self.signals += 1;
                }
                continue;
            }
            rank.idle[self.stream as usize] = true;
            self.expect = Expect::Wake;
            return Request::Receive {
                from: Source::Pid(self.relay),
            };
        }
    }
}

/// A zero-byte message to `to`: a wake.
fn signal(to: Pid) -> Request {
    Request::Send {
        to,
        bytes: 0.0,
        direction: None,
        host_memory: HostMemory::default(),
        tracked: false,
    }
}

/// A rank's relay: forwards wakes to its streams, drops the bytes of loads and stores, and
/// finishes after the rank's last stream.
pub struct Relay {
    pub rank: Rc<RefCell<RankState>>,
}

impl Process for Relay {
    fn resume(&mut self, _now: f64, input: Resume) -> Request {
        if let Resume::Message(m) = input {
            if m.bytes == 0.0 {
                match self.rank.borrow_mut().wakes.pop_front() {
                    Some(Some(pid)) => return signal(pid),
                    Some(None) => return Request::Finish,
                    None => {}
                }
            }
        }
        Request::Receive { from: Source::Any }
    }
}
