//! The event loop: processes, messages, links, deadlock detection.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use crate::platform::{Direction, Hop, HostMemory, LinkId, Placement, Platform, PlatformError};
use crate::results::{NodeResult, ProcessResult, Results, Span, SpanKind};
use crate::uncertainty::{Estimate, Spread};
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
    fn accepts(self, message: &Message) -> bool {
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
    /// the duration's error bar [s] (0 when the model states none).
    Compute {
        seconds: f64,
        power: Option<f64>,
        uncertainty: f64,
    },
    /// Advance the process's clock without computing.
    Sleep { seconds: f64 },
    /// Non-blocking send; the process resumes at once. `direction` defaults from the
    /// endpoints' kinds; `host_memory` is the host buffer of a host↔device copy, handed to
    /// the links' timing as it is (links that do not distinguish ignore it).
    Send {
        to: Pid,
        bytes: f64,
        direction: Option<Direction>,
        host_memory: HostMemory,
    },
    /// Block until a message from `from` is in the mailbox.
    Receive { from: Source },
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

/// Transfer times of the links, from their computational models.
pub trait LinkTiming {
    /// Seconds for `bytes` to cross `link` in `direction`, the message's host memory being
    /// `host_memory`, with their error bar where the link's model states one.
    fn transfer_time(
        &mut self,
        link: LinkId,
        bytes: f64,
        direction: Direction,
        host_memory: HostMemory,
    ) -> Result<Estimate, String>;
}

/// Where a run stands, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Simulated time [s].
    pub now: f64,
    pub events: u64,
    pub finished: usize,
    pub processes: usize,
}

/// Called with the run's progress every [`PROGRESS_EVERY`] events.
pub type ProgressFn = Rc<dyn Fn(Progress)>;

/// Events between two progress calls: rare enough to cost nothing measurable.
pub const PROGRESS_EVERY: u64 = 1 << 16;

#[derive(Clone, Default)]
pub struct Options {
    /// Record a trace of spans (compute, sleep, wait, send).
    pub trace: bool,
    pub progress: Option<ProgressFn>,
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("trace", &self.trace)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    Platform(PlatformError),
    /// Every unfinished process waits in receive and nothing is pending.
    Deadlock {
        time: f64,
        blocked: Vec<String>,
    },
    Process {
        who: String,
        time: f64,
        message: String,
    },
    Link {
        who: String,
        time: f64,
        message: String,
    },
    InvalidRequest {
        who: String,
        message: String,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Platform(e) => write!(f, "{e}"),
            SimError::Deadlock { time, blocked } => {
                write!(
                    f,
                    "deadlock at t = {time} s: every unfinished process waits and no message is on its way:"
                )?;
                for b in blocked {
                    write!(f, "\n  {b}")?;
                }
                Ok(())
            }
            SimError::Process { who, time, message } => write!(f, "{who} failed at t = {time} s: {message}"),
            SimError::Link { who, time, message } => {
                write!(f, "{who}: transfer time at t = {time} s: {message}")
            }
            SimError::InvalidRequest { who, message } => write!(f, "{who}: {message}"),
        }
    }
}

impl std::error::Error for SimError {}

impl From<PlatformError> for SimError {
    fn from(e: PlatformError) -> Self {
        SimError::Platform(e)
    }
}

enum EventKind {
    Resume(Pid, Resume),
    /// A message finished crossing hop `hop` of its route.
    Hop {
        message: Message,
        route: Rc<[Hop]>,
        hop: usize,
        direction: Direction,
        host_memory: HostMemory,
    },
    Deliver(Message),
}

struct Event {
    time: f64,
    seq: u64,
    kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    /// Reversed, so that the max-heap pops the earliest (time, sequence) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

#[derive(Default)]
struct ProcessState {
    mailbox: VecDeque<Message>,
    waiting: Option<Source>,
    blocked_since: f64,
    /// The error bar of the process's clock (once finished, of its finish time: a finished
    /// process's clock no longer moves).
    spread: Spread,
    finished: bool,
    finish_time: f64,
    compute_time: f64,
    /// The part of `compute_time` whose power the model stated, and its energy [J].
    powered_time: f64,
    powered_energy: f64,
    wait_time: f64,
}

struct Engine<'a, P> {
    platform: &'a Platform,
    placements: &'a [Placement],
    processes: Vec<P>,
    states: Vec<ProcessState>,
    timing: &'a mut dyn LinkTiming,
    queue: BinaryHeap<Event>,
    seq: u64,
    now: f64,
    events: u64,
    /// Per link, per direction (forward, backward): when each channel is next free.
    channels_free: Vec<[Vec<f64>; 2]>,
    trace: Option<Vec<Span>>,
    progress: Option<ProgressFn>,
    finished: usize,
}

/// Runs `processes` (indexed by pid, placed by `placements`) to completion.
pub fn simulate<P: Process>(
    platform: &Platform,
    placements: &[Placement],
    processes: Vec<P>,
    timing: &mut dyn LinkTiming,
    options: &Options,
) -> Result<Results, SimError> {
    assert_eq!(placements.len(), processes.len(), "one placement per process");
    let mut engine = Engine {
        platform,
        placements,
        states: (0..processes.len()).map(|_| ProcessState::default()).collect(),
        processes,
        timing,
        queue: BinaryHeap::new(),
        seq: 0,
        now: 0.0,
        events: 0,
        channels_free: platform
            .links
            .iter()
            .map(|l| {
                let n = l.channels.max(1) as usize;
                [vec![0.0; n], vec![0.0; n]]
            })
            .collect(),
        trace: options.trace.then(Vec::new),
        progress: options.progress.clone(),
        finished: 0,
    };
    for pid in 0..engine.processes.len() {
        engine.schedule(0.0, EventKind::Resume(pid, Resume::Start));
    }
    engine.run()?;
    Ok(engine.results())
}

impl<P: Process> Engine<'_, P> {
    fn who(&self, pid: Pid) -> String {
        let p = &self.placements[pid];
        format!(
            "process {pid} ({}[{}] on node `{}`)",
            p.label, p.rank, self.platform.nodes[p.node].id
        )
    }

    fn schedule(&mut self, time: f64, kind: EventKind) {
        self.seq += 1;
        self.queue.push(Event {
            time,
            seq: self.seq,
            kind,
        });
    }

    /// Records a span, if tracing; `uncertainty` is a compute's error bar (0 for the rest).
    fn span(
        &mut self,
        pid: Pid,
        kind: SpanKind,
        [start, end]: [f64; 2],
        uncertainty: f64,
        detail: impl FnOnce() -> String,
    ) {
        if let Some(trace) = &mut self.trace {
            trace.push(Span {
                pid,
                kind,
                start,
                end,
                uncertainty,
                detail: detail(),
            });
        }
    }

    fn run(&mut self) -> Result<(), SimError> {
        while let Some(event) = self.queue.pop() {
            self.now = event.time;
            self.events += 1;
            if self.events % PROGRESS_EVERY == 0 {
                if let Some(report) = &self.progress {
                    report(Progress {
                        now: self.now,
                        events: self.events,
                        finished: self.finished,
                        processes: self.states.len(),
                    });
                }
            }
            match event.kind {
                EventKind::Resume(pid, input) => self.step(pid, input)?,
                EventKind::Hop {
                    message,
                    route,
                    hop,
                    direction,
                    host_memory,
                } => self.forward(message, route, hop + 1, direction, host_memory)?,
                EventKind::Deliver(message) => self.deliver(message)?,
            }
        }
        let blocked: Vec<String> = (0..self.states.len())
            .filter(|&pid| !self.states[pid].finished)
            .map(|pid| match self.states[pid].waiting {
                Some(Source::Pid(from)) => {
                    format!("{} waits in receive for {}", self.who(pid), self.who(from))
                }
                Some(Source::Any) => format!("{} waits in receive for any process", self.who(pid)),
                None => format!("{} never finished", self.who(pid)),
            })
            .collect();
        if blocked.is_empty() {
            Ok(())
        } else {
            Err(SimError::Deadlock {
                time: self.now,
                blocked,
            })
        }
    }

    /// Resumes `pid` and serves its requests until it blocks, computes, sleeps or ends.
    fn step(&mut self, pid: Pid, mut input: Resume) -> Result<(), SimError> {
        loop {
            match self.processes[pid].resume(self.now, input) {
                Request::Compute { seconds, .. } | Request::Sleep { seconds }
                    if !(seconds >= 0.0 && seconds.is_finite()) =>
                {
                    return Err(SimError::InvalidRequest {
                        who: self.who(pid),
                        message: format!("a duration must be a finite number of seconds >= 0, got {seconds}"),
                    });
                }
                Request::Compute {
                    power: Some(watts), ..
                } if !(watts >= 0.0 && watts.is_finite()) => {
                    return Err(SimError::InvalidRequest {
                        who: self.who(pid),
                        message: format!(
                            "a compute's power must be a finite number of watts >= 0, got {watts}"
                        ),
                    });
                }
                Request::Compute { uncertainty, .. } if !(uncertainty >= 0.0 && uncertainty.is_finite()) => {
                    return Err(SimError::InvalidRequest {
                        who: self.who(pid),
                        message: format!(
                            "a compute's uncertainty must be a finite number of seconds >= 0, got {uncertainty}"
                        ),
                    });
                }
                Request::Compute {
                    seconds,
                    power,
                    uncertainty,
                } => {
                    let state = &mut self.states[pid];
                    state.compute_time += seconds;
                    state.spread = state.spread.widened(uncertainty);
                    if let Some(watts) = power {
                        state.powered_time += seconds;
                        state.powered_energy += seconds * watts;
                    }
                    let during = [self.now, self.now + seconds];
                    self.span(pid, SpanKind::Compute, during, uncertainty, String::new);
                    self.schedule(self.now + seconds, EventKind::Resume(pid, Resume::Done));
                    return Ok(());
                }
                Request::Sleep { seconds } => {
                    let during = [self.now, self.now + seconds];
                    self.span(pid, SpanKind::Sleep, during, 0.0, String::new);
                    self.schedule(self.now + seconds, EventKind::Resume(pid, Resume::Done));
                    return Ok(());
                }
                Request::Send {
                    to,
                    bytes,
                    direction,
                    host_memory,
                } => {
                    self.send(pid, to, bytes, direction, host_memory)?;
                    input = Resume::Done;
                }
                Request::Receive { from } => {
                    let state = &mut self.states[pid];
                    match state.mailbox.iter().position(|m| from.accepts(m)) {
                        Some(i) => {
                            let message = state.mailbox.remove(i).expect("position is in range");
                            state.spread =
                                Spread::of_later((self.now, state.spread), (message.arrived, message.spread));
                            input = Resume::Message(message)
                        }
                        None => {
                            state.waiting = Some(from);
                            state.blocked_since = self.now;
                            return Ok(());
                        }
                    }
                }
                Request::Finish => {
                    self.finished += 1;
                    let state = &mut self.states[pid];
                    state.finished = true;
                    state.finish_time = self.now;
                    return Ok(());
                }
                Request::Fail(message) => {
                    return Err(SimError::Process {
                        who: self.who(pid),
                        time: self.now,
                        message,
                    })
                }
            }
        }
    }

    fn send(
        &mut self,
        from: Pid,
        to: Pid,
        bytes: f64,
        direction: Option<Direction>,
        host_memory: HostMemory,
    ) -> Result<(), SimError> {
        if to >= self.placements.len() {
            return Err(SimError::InvalidRequest {
                who: self.who(from),
                message: format!(
                    "send to pid {to}, but the run has pids 0 to {}",
                    self.placements.len() - 1
                ),
            });
        }
        if !(bytes >= 0.0 && bytes.is_finite()) {
            return Err(SimError::InvalidRequest {
                who: self.who(from),
                message: format!("a message size must be a finite number of bytes >= 0, got {bytes}"),
            });
        }
        let message = Message {
            from,
            to,
            bytes,
            sent: self.now,
            arrived: self.now,
            spread: self.states[from].spread,
        };
        let (a, b) = (self.placements[from].node, self.placements[to].node);
        // Same node, or a pure synchronization (thesis Table 5.1): no link time.
        if a == b || bytes == 0.0 {
            self.schedule(self.now, EventKind::Deliver(message));
            return Ok(());
        }
        let route = self.platform.route(a, b)?;
        let kinds = (self.platform.nodes[a].kind, self.platform.nodes[b].kind);
        let direction = direction.unwrap_or_else(|| Direction::between(kinds.0, kinds.1));
        self.cross(message, route, 0, direction, host_memory)
    }

    /// Puts `message` on hop `hop` of `route` now, queued FIFO behind the link's busy channels.
    fn cross(
        &mut self,
        mut message: Message,
        route: Rc<[Hop]>,
        hop: usize,
        direction: Direction,
        host_memory: HostMemory,
    ) -> Result<(), SimError> {
        let Hop { link, forward } = route[hop];
        let Estimate { seconds, uncertainty } = self
            .timing
            .transfer_time(link, message.bytes, direction, host_memory)
            .map_err(|e| SimError::Link {
                who: self.link_name(link),
                time: self.now,
                message: e,
            })?;
        if !(seconds >= 0.0 && seconds.is_finite()) {
            return Err(SimError::Link {
                who: self.link_name(link),
                time: self.now,
                message: format!("transfer_time must be a finite number of seconds >= 0, got {seconds}"),
            });
        }
        if !(uncertainty >= 0.0 && uncertainty.is_finite()) {
            return Err(SimError::Link {
                who: self.link_name(link),
                time: self.now,
                message: format!(
                    "transfer_time's uncertainty must be a finite number of seconds >= 0, got {uncertainty}"
                ),
            });
        }
        message.spread = message.spread.widened(uncertainty);
        let channels = &mut self.channels_free[link][usize::from(!forward)];
        let (channel, free) = channels
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("a link has at least one channel");
        let end = free.max(self.now) + seconds;
        channels[channel] = end;
        if self.trace.is_some() {
            let detail = format!(
                "{} bytes to pid {} over {}",
                message.bytes,
                message.to,
                self.link_name(link)
            );
            self.span(message.from, SpanKind::Send, [self.now, end], 0.0, || detail);
        }
        self.schedule(
            end,
            EventKind::Hop {
                message,
                route,
                hop,
                direction,
                host_memory,
            },
        );
        Ok(())
    }

    /// Store and forward: the next hop starts when the previous one ends.
    fn forward(
        &mut self,
        message: Message,
        route: Rc<[Hop]>,
        next: usize,
        direction: Direction,
        host_memory: HostMemory,
    ) -> Result<(), SimError> {
        if next == route.len() {
            return self.deliver(message);
        }
        self.cross(message, route, next, direction, host_memory)
    }

    fn link_name(&self, link: LinkId) -> String {
        let [a, b] = self.platform.links[link].between;
        format!(
            "link `{}`–`{}`",
            self.platform.nodes[a].id, self.platform.nodes[b].id
        )
    }

    fn deliver(&mut self, mut message: Message) -> Result<(), SimError> {
        message.arrived = self.now;
        let to = message.to;
        let state = &mut self.states[to];
        match state.waiting {
            Some(source) if source.accepts(&message) => {
                state.waiting = None;
                let since = state.blocked_since;
                state.spread = Spread::of_later((since, state.spread), (self.now, message.spread));
                state.wait_time += self.now - since;
                self.span(to, SpanKind::Wait, [since, self.now], 0.0, || {
                    format!("from pid {}", message.from)
                });
                self.step(to, Resume::Message(message))
            }
            _ => {
                state.mailbox.push_back(message);
                Ok(())
            }
        }
    }

    fn results(self) -> Results {
        let overall_time = self.states.iter().map(|s| s.finish_time).fold(0.0, f64::max);
        let overall_time_interval = self.states.iter().fold([0.0_f64, 0.0_f64], |[lo, hi], s| {
            let [a, b] = s.spread.interval(s.finish_time);
            [lo.max(a), hi.max(b)]
        });
        let node_ids: Vec<Arc<str>> = self
            .platform
            .nodes
            .iter()
            .map(|n| Arc::from(n.id.as_str()))
            .collect();
        let mut busy = vec![0.0; self.platform.nodes.len()];
        let mut powered = vec![(0.0, 0.0); self.platform.nodes.len()];
        let mut used = vec![false; self.platform.nodes.len()];
        let processes = self
            .states
            .iter()
            .zip(self.placements)
            .enumerate()
            .map(|(pid, (s, p))| {
                busy[p.node] += s.compute_time;
                powered[p.node].0 += s.powered_time;
                powered[p.node].1 += s.powered_energy;
                used[p.node] = true;
                ProcessResult {
                    pid,
                    label: p.label.clone(),
                    rank: p.rank,
                    node: node_ids[p.node].clone(),
                    finish_time: s.finish_time,
                    finish_interval: s.spread.interval(s.finish_time),
                    compute_time: s.compute_time,
                    wait_time: s.wait_time,
                }
            })
            .collect();
        let nodes: Vec<NodeResult> = self
            .platform
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let idle = (f64::from(n.count) * overall_time - busy[i]).max(0.0);
                NodeResult {
                    id: node_ids[i].clone(),
                    busy_time: busy[i],
                    energy: powered[i].1
                        + n.power_load * (busy[i] - powered[i].0).max(0.0)
                        + n.power_idle * idle,
                }
            })
            .collect();
        let failure_rate: f64 = self
            .platform
            .nodes
            .iter()
            .zip(&used)
            .filter(|(_, &u)| u)
            .map(|(n, _)| n.failure_rate * f64::from(n.count))
            .sum();
        Results {
            overall_time,
            overall_time_interval,
            total_energy: nodes.iter().map(|n| n.energy).sum(),
            failure_chance: 1.0 - (-failure_rate * overall_time).exp(),
            events: self.events,
            processes,
            nodes,
            trace: self.trace,
        }
    }
}
