//! What a process does with its time: compute (on its node's shared cores), sleep, receive,
//! wait for and test its non-blocking sends and receives.

use std::sync::Arc;

use super::{Blocked, Computing, Engine, EventKind, ProcessState};
use crate::error::SimError;
use crate::process::{Handle, Message, Process, Request, Resume, Source};
use crate::results::SpanKind;
use crate::uncertainty::Spread;
use crate::Pid;

impl<P: Process> Engine<'_, P> {
    /// Resumes `pid` and serves its requests until it blocks, ends, or must wait for the
    /// engine's clock to reach its own.
    pub(super) fn step(&mut self, pid: Pid, mut input: Resume) -> Result<(), SimError> {
        loop {
            let clock = self.clock(pid);
            let request = self.processes[pid].resume(clock, input);
            match self.serve(pid, request)? {
                Some(answer) => input = answer,
                None => return Ok(()),
            }
        }
    }

    /// Serves a request that waited for the engine's clock ([`EventKind::Request`]), then goes
    /// on stepping the process.
    pub(super) fn serve_later(&mut self, pid: Pid, request: Request) -> Result<(), SimError> {
        match self.serve(pid, request)? {
            Some(answer) => self.step(pid, answer),
            None => Ok(()),
        }
    }

    /// The process's clock: the engine's, or later while the process runs ahead.
    fn clock(&self, pid: Pid) -> f64 {
        self.states[pid].ahead.max(self.now())
    }

    /// Serves `request` of `pid`: the answer to resume it with, or none while it blocks or
    /// waits for time to pass.
    ///
    /// A process runs ahead: a compute on cores nobody shares and a sleep depend on nothing
    /// another process does, so the process goes on at once with its own clock moved past
    /// them, and a send it makes then leaves at that clock (an [`EventKind::Departs`]). Any
    /// other request waits until the engine's clock reaches the process's (an
    /// [`EventKind::Request`]), so every interaction happens at the time it would have had.
    /// A worker that computes, sends and receives thus suspends once, not twice.
    fn serve(&mut self, pid: Pid, request: Request) -> Result<Option<Resume>, SimError> {
        let clock = self.clock(pid);
        let ahead = clock > self.now();
        let shared_cores = self.cores[self.placements[pid].node].is_some();
        Ok(Some(match request {
            Request::Compute {
                seconds,
                power,
                uncertainty,
                detail,
            } if !shared_cores => {
                let seconds = self.account_compute(pid, seconds, power, uncertainty)?;
                self.computed_alone(pid, [clock, clock + seconds], uncertainty, detail);
                Resume::Done
            }
            Request::Sleep { seconds } => {
                let seconds = self.checked_request(pid, seconds, "a duration [s]")?;
                self.span(pid, SpanKind::Sleep, [clock, clock + seconds], 0.0, String::new);
                self.states[pid].ahead = clock + seconds;
                Resume::Done
            }
            Request::Mark { kind, start, detail } => {
                self.span(pid, kind, [start, clock], 0.0, || detail);
                Resume::Done
            }
            Request::Fail(message) => {
                return Err(SimError::Process {
                    who: self.who(pid),
                    time: clock,
                    message,
                })
            }
            Request::Send {
                to,
                bytes,
                direction,
                host_memory,
                tracked,
            } => {
                // Timed now, so that a send that cannot go (no route, a link model's error)
                // fails at the script's call, even when it leaves later.
                let mut transfer = match self.prepare(pid, to, bytes, direction, host_memory) {
                    Ok(transfer) => transfer,
                    Err(why) => return Ok(Some(Resume::Refused(why))),
                };
                let handle = tracked.then(|| self.handles.make(pid));
                transfer.handle = handle;
                if ahead {
                    self.events.schedule(clock, EventKind::Departs(transfer));
                } else {
                    self.depart(transfer)?;
                }
                handle.map_or(Resume::Done, Resume::Handle)
            }
            request if ahead => {
                self.events.schedule(clock, EventKind::Request(pid, request));
                return Ok(None);
            }
            Request::Compute {
                seconds,
                power,
                uncertainty,
                detail,
            } => {
                let work = self.account_compute(pid, seconds, power, uncertainty)?;
                self.compute_shared(pid, work, uncertainty, detail);
                return Ok(None);
            }
            Request::Receive { from } => match self.take_from_mailbox(pid, from) {
                Some(message) => Resume::Message(message),
                None => {
                    self.block(pid, Blocked::Receive(from));
                    return Ok(None);
                }
            },
            Request::Post { from } => Resume::Handle(self.post(pid, from)),
            Request::Wait { handles } => {
                self.check_handles(pid, &handles)?;
                if handles.iter().all(|&h| self.handles.is_done(h)) {
                    Resume::Completed(self.handles.hand_over(&handles))
                } else {
                    self.block(pid, Blocked::Wait(handles));
                    return Ok(None);
                }
            }
            Request::Test { handle } => {
                self.check_handles(pid, &[handle])?;
                Resume::Tested(self.handles.is_done(handle))
            }
            Request::Finish => {
                self.finished += 1;
                let now = self.now();
                let state = &mut self.states[pid];
                state.finished = true;
                state.finish_time = now;
                return Ok(None);
            }
        }))
    }

    /// Checks a compute's numbers and counts its work (and energy, where its power is stated)
    /// to the process; returns the work [s].
    fn account_compute(
        &mut self,
        pid: Pid,
        work: f64,
        power: Option<f64>,
        uncertainty: f64,
    ) -> Result<f64, SimError> {
        let work = self.checked_request(pid, work, "a duration [s]")?;
        self.checked_request(pid, uncertainty, "a compute's uncertainty [s]")?;
        if let Some(watts) = power {
            self.checked_request(pid, watts, "a compute's power [W]")?;
        }
        let state = &mut self.states[pid];
        state.work += work;
        if let Some(watts) = power {
            state.powered_work += work;
            state.powered_energy += work * watts;
        }
        Ok(work)
    }

    /// A compute on cores of its own, `during` [start, end): the process's clock moves to its
    /// end.
    fn computed_alone(&mut self, pid: Pid, during: [f64; 2], uncertainty: f64, detail: Option<Arc<str>>) {
        self.states[pid].ahead = during[1];
        self.count_compute(pid, during, uncertainty, detail);
    }

    /// Counts a compute that ran `during` [start, end) to the process's compute time, its
    /// clock's error bar and its trace (its span saying `detail`).
    fn count_compute(&mut self, pid: Pid, during: [f64; 2], uncertainty: f64, detail: Option<Arc<str>>) {
        let state = &mut self.states[pid];
        state.compute_time += during[1] - during[0];
        state.spread = state.spread.widened(uncertainty);
        self.span(pid, SpanKind::Compute, during, uncertainty, || {
            detail.as_deref().unwrap_or_default().to_owned()
        });
    }

    /// Starts a compute of `work` seconds (with a core to itself) on the node's shared cores.
    fn compute_shared(&mut self, pid: Pid, work: f64, uncertainty: f64, detail: Option<Arc<str>>) {
        let now = self.now();
        self.states[pid].computing = Some(Computing {
            start: now,
            uncertainty,
            detail,
        });
        let node = self.placements[pid].node;
        if let Some(cores) = &mut self.cores[node] {
            cores.shared.join(now, work, pid);
        }
        self.reschedule_cores(node);
    }

    pub(super) fn cores_finish(&mut self, node: usize) -> Result<(), SimError> {
        let now = self.now();
        let Some(cores) = &mut self.cores[node] else {
            return Ok(());
        };
        cores.finish = None;
        let done = cores.shared.finish_due(now);
        self.reschedule_cores(node);
        for pid in done {
            self.computed(pid)?;
        }
        Ok(())
    }

    fn reschedule_cores(&mut self, node: usize) {
        if let Some(cores) = &mut self.cores[node] {
            cores.reschedule(&mut self.events, EventKind::CoresFinish(node));
        }
    }

    pub(super) fn computed(&mut self, pid: Pid) -> Result<(), SimError> {
        let now = self.now();
        let state = &mut self.states[pid];
        let Some(Computing {
            start,
            uncertainty,
            detail,
        }) = state.computing.take()
        else {
            return Ok(());
        };
        self.count_compute(pid, [start, now], uncertainty, detail);
        self.step(pid, Resume::Done)
    }

    fn block(&mut self, pid: Pid, blocked: Blocked) {
        let now = self.now();
        let state = &mut self.states[pid];
        state.blocked = Some(blocked);
        state.blocked_since = now;
    }

    /// Ends `pid`'s block at now, with `message`'s arrival joining its clock's error bar.
    fn unblock(&mut self, pid: Pid, message_spread: Option<(f64, Spread)>, detail: impl FnOnce() -> String) {
        let now = self.now();
        let state = &mut self.states[pid];
        state.blocked = None;
        let since = state.blocked_since;
        state.spread = match message_spread {
            Some(arrival) => Spread::of_later((since, state.spread), arrival),
            None => state.spread,
        };
        state.wait_time += now - since;
        self.span(pid, SpanKind::Wait, [since, now], 0.0, detail);
    }

    fn take_from_mailbox(&mut self, pid: Pid, from: Source) -> Option<Message> {
        let now = self.now();
        let state = &mut self.states[pid];
        let i = state.mailbox.iter().position(|m| from.accepts(m))?;
        let message = state.mailbox.remove(i)?;
        state.spread = Spread::of_later((now, state.spread), (message.arrived, message.spread));
        Some(message)
    }

    fn post(&mut self, pid: Pid, from: Source) -> Handle {
        let handle = self.handles.make(pid);
        match self.take_from_mailbox(pid, from) {
            Some(message) => {
                self.handles.complete(handle, Some(message));
            }
            None => self.states[pid].posted.push_back((handle, from)),
        }
        handle
    }

    fn check_handles(&self, pid: Pid, handles: &[Handle]) -> Result<(), SimError> {
        match handles.iter().find_map(|&h| self.handles.refusal(pid, h)) {
            Some(why) => Err(self.invalid(pid, why)),
            None => Ok(()),
        }
    }

    /// Completes `handle`, with a receive's message, and resumes its owner if it waits for
    /// it and the rest of what it waits for.
    pub(super) fn complete(&mut self, handle: Handle, message: Option<Message>) -> Result<(), SimError> {
        let owner = self.handles.complete(handle, message);
        let handles = match self.states[owner].blocked.take() {
            Some(Blocked::Wait(handles)) if handles.iter().all(|&h| self.handles.is_done(h)) => handles,
            blocked => {
                self.states[owner].blocked = blocked;
                return Ok(());
            }
        };
        let messages = self.handles.hand_over(&handles);
        let latest = messages
            .iter()
            .flatten()
            .map(|m| (m.arrived, m.spread))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        self.unblock(owner, latest, || "for its sends and receives".to_owned());
        self.step(owner, Resume::Completed(messages))
    }

    /// Hands an arrived message to its receiver: a posted receive that accepts it, else the
    /// blocking receive it waits in, else its mailbox.
    pub(super) fn arrive(&mut self, message: Message) -> Result<(), SimError> {
        let to = message.to;
        let state: &mut ProcessState = &mut self.states[to];
        if let Some(i) = state.posted.iter().position(|(_, from)| from.accepts(&message)) {
            let (handle, _) = state.posted.remove(i).expect("position is in range");
            return self.complete(handle, Some(message));
        }
        match state.blocked {
            Some(Blocked::Receive(from)) if from.accepts(&message) => {
                let from_pid = message.from;
                self.unblock(to, Some((message.arrived, message.spread)), || {
                    format!("from pid {from_pid}")
                });
                self.step(to, Resume::Message(message))
            }
            _ => {
                state.mailbox.push_back(message);
                Ok(())
            }
        }
    }
}
