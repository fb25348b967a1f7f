//! The engine: runs processes over the event kernel ([`crate::events`]), with their
//! activities in [`activities`] (compute, sleep, receive, wait) and the messages on the links
//! in [`transfers`]; links and cores are [`crate::sharing::Shared`] resources.

mod activities;
mod handles;
mod transfers;

use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use crate::error::SimError;
use crate::events::{EventId, Events};
use crate::flows::{BundleId, Flows};
use crate::placement::Placement;
use crate::platform::{Direction, HostMemory, LinkId, Platform};
use crate::process::{Handle, Message, Process, Request, Resume, Source};
use crate::results::{NodeResult, ProcessResult, Results, Span, SpanKind};
use crate::sharing::Shared;
use crate::uncertainty::{Estimate, Spread};
use crate::Pid;

use handles::Handles;
use transfers::InFlight;

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
    /// The most spans the trace keeps (`None`: all); later spans are counted in
    /// [`Results::trace_dropped`], so that a capped trace says it is one.
    pub max_spans: Option<usize>,
    pub progress: Option<ProgressFn>,
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("trace", &self.trace)
            .field("max_spans", &self.max_spans)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

enum EventKind {
    Resume(Pid, Resume),
    /// A request made while the process ran ahead, due at its clock (see `serve`).
    Request(Pid, Request),
    /// A send made while the process ran ahead, leaving at its clock.
    Departs(Box<InFlight>),
    /// The next compute due on a node's shared cores is done.
    CoresFinish(usize),
    /// A message's latency is over: its bytes join the links of its route.
    Started(Box<InFlight>),
    /// The next flows due in a bundle are done.
    FlowsFinish(BundleId),
    /// A message needing no link time arrives.
    Deliver(Box<InFlight>),
}

/// What a process is blocked in.
enum Blocked {
    Receive(Source),
    Wait(Vec<Handle>),
}

/// A compute on shared cores, from its start until the cores finish it.
struct Computing {
    start: f64,
    /// Its error bar's half-width [s].
    uncertainty: f64,
    /// What its trace span says.
    detail: Option<Arc<str>>,
}

#[derive(Default)]
struct ProcessState {
    mailbox: VecDeque<Message>,
    /// Receives posted (`Irecv`) and not yet matched, in the order posted.
    posted: VecDeque<(Handle, Source)>,
    blocked: Option<Blocked>,
    blocked_since: f64,
    /// The compute in progress on shared cores.
    computing: Option<Computing>,
    /// The process's clock where it runs ahead of the engine's (see `serve`).
    ahead: f64,
    /// The error bar of the process's clock (once finished, of its finish time: a finished
    /// process's clock no longer moves).
    spread: Spread,
    finished: bool,
    finish_time: f64,
    compute_time: f64,
    /// Work of the computes [s]: compute time had no other process shared the cores.
    work: f64,
    /// The part of `work` whose power the model stated, and its energy [J].
    powered_work: f64,
    powered_energy: f64,
    wait_time: f64,
}

/// The pending finish event of activities sharing a resource (a node's cores, a bundle of
/// flows), with the event's time.
type Pending = Option<(EventId, f64)>;

/// Keeps `pending` at or before `next`, the next finish at the current shares (a join or a
/// finish changes them). A join only delays the next finish: the pending event stays, and if
/// it comes before anything is due it finds nothing and is scheduled again, so a burst of
/// joins costs one event, not one per join. A finish speeds the others up: the pending event
/// is cancelled for an earlier one.
fn keep_finish(pending: &mut Pending, next: f64, events: &mut Events<EventKind>, finish: EventKind) {
    match *pending {
        Some((_, at)) if at <= next => {}
        Some((event, _)) => {
            events.cancel(event);
            *pending = Some((events.schedule(next, finish), next));
        }
        None => *pending = Some((events.schedule(next, finish), next)),
    }
}

/// A shared resource and its pending finish event.
struct Resource<T> {
    shared: Shared<T>,
    finish: Pending,
}

impl<T> Resource<T> {
    fn new(capacity: f64) -> Self {
        Resource {
            shared: Shared::new(capacity),
            finish: None,
        }
    }

    /// Keeps a finish event at or before the resource's next finish (see [`keep_finish`]).
    fn reschedule(&mut self, events: &mut Events<EventKind>, finish: EventKind) {
        if let Some(next) = self.shared.next_finish() {
            keep_finish(&mut self.finish, next, events, finish);
        }
    }
}

struct Engine<'a, P> {
    platform: &'a Platform,
    placements: &'a [Placement],
    processes: Vec<P>,
    states: Vec<ProcessState>,
    handles: Handles,
    timing: &'a mut dyn LinkTiming,
    events: Events<EventKind>,
    /// The messages whose bytes are on the links.
    flows: Flows<Box<InFlight>>,
    /// Per bundle of flows, its pending finish event.
    bundle_events: Vec<Pending>,
    /// The bundles whose shares changed, kept to reuse its allocation.
    changed: Vec<BundleId>,
    /// Per node, its cores, shared by the processes computing on it; none where they cannot
    /// outnumber them.
    cores: Vec<Option<Resource<Pid>>>,
    trace: Option<Vec<Span>>,
    max_spans: usize,
    trace_dropped: u64,
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
        handles: Handles::default(),
        timing,
        events: Events::default(),
        flows: Flows::new(platform.links.iter().map(|l| l.channels)),
        bundle_events: Vec::new(),
        changed: Vec::new(),
        cores: shared_cores(platform, placements),
        trace: options.trace.then(Vec::new),
        max_spans: options.max_spans.unwrap_or(usize::MAX),
        trace_dropped: 0,
        progress: options.progress.clone(),
        finished: 0,
    };
    for pid in 0..engine.processes.len() {
        engine.events.schedule(0.0, EventKind::Resume(pid, Resume::Start));
    }
    engine.run()?;
    Ok(engine.results())
}

/// A finite, non-negative number, or what it is instead.
/// `value` where it is a finite number >= 0; else the error naming `what` it is. The engine
/// checks every request with it; a script's glue checks first, so that the error names the
/// script's line.
pub fn finite_non_negative(value: f64, what: &str) -> Result<f64, String> {
    if value >= 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(format!("{what} must be a finite number >= 0, got {value}"))
    }
}

/// Spans by start, then pid (a span is recorded when it ends, a compute's end being known
/// only then on shared cores).
fn in_start_order(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.pid.cmp(&b.pid)));
    spans
}

/// Each node's cores, where they are stated and more processes are placed on it than it has
/// (count × cores): elsewhere a compute takes its time as its model says.
fn shared_cores(platform: &Platform, placements: &[Placement]) -> Vec<Option<Resource<Pid>>> {
    let mut placed = vec![0u64; platform.nodes.len()];
    for p in placements {
        placed[p.node] += 1;
    }
    platform
        .nodes
        .iter()
        .zip(placed)
        .map(|(n, placed)| {
            let cores = u64::from(n.count) * u64::from(n.cores?.max(1));
            (placed > cores).then(|| Resource::new(cores as f64))
        })
        .collect()
}

impl<P: Process> Engine<'_, P> {
    fn now(&self) -> f64 {
        self.events.now()
    }

    fn invalid(&self, pid: Pid, message: String) -> SimError {
        SimError::InvalidRequest {
            who: self.who(pid),
            message,
        }
    }

    /// `value` of `pid`'s request, if a finite number >= 0.
    fn checked_request(&self, pid: Pid, value: f64, what: &str) -> Result<f64, SimError> {
        finite_non_negative(value, what).map_err(|e| self.invalid(pid, e))
    }

    fn who(&self, pid: Pid) -> String {
        let p = &self.placements[pid];
        format!(
            "process {pid} ({}[{}] on node `{}`)",
            p.label, p.rank, self.platform.nodes[p.node].id
        )
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
            if trace.len() >= self.max_spans {
                self.trace_dropped += 1;
                return;
            }
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
        loop {
            if self.flows.is_unsettled() && self.events.next_time().is_none_or(|t| t > self.now()) {
                self.settle_flows();
            }
            let Some(event) = self.events.fire_next() else {
                break;
            };
            if self.events.fired() % PROGRESS_EVERY == 0 {
                if let Some(report) = &self.progress {
                    report(Progress {
                        now: self.now(),
                        events: self.events.fired(),
                        finished: self.finished,
                        processes: self.states.len(),
                    });
                }
            }
            match event {
                EventKind::Resume(pid, input) => self.step(pid, input)?,
                EventKind::Request(pid, request) => self.serve_later(pid, request)?,
                EventKind::Departs(transfer) => self.depart(transfer)?,
                EventKind::CoresFinish(node) => self.cores_finish(node)?,
                EventKind::Started(transfer) => self.join_links(transfer)?,
                EventKind::FlowsFinish(bundle) => self.flows_finish(bundle)?,
                EventKind::Deliver(transfer) => self.arrived(*transfer)?,
            }
        }
        self.deadlock_check()
    }

    fn deadlock_check(&self) -> Result<(), SimError> {
        let blocked: Vec<String> = (0..self.states.len())
            .filter(|&pid| !self.states[pid].finished)
            .map(|pid| match &self.states[pid].blocked {
                Some(Blocked::Receive(Source::Pid(from))) => {
                    format!("{} waits in receive for {}", self.who(pid), self.who(*from))
                }
                Some(Blocked::Receive(Source::Any)) => {
                    format!("{} waits in receive for any process", self.who(pid))
                }
                Some(Blocked::Wait(handles)) => {
                    let pending = handles.iter().filter(|&&h| !self.handles.is_done(h)).count();
                    format!("{} waits for {pending} of its sends and receives", self.who(pid))
                }
                None => format!("{} never finished", self.who(pid)),
            })
            .collect();
        if blocked.is_empty() {
            Ok(())
        } else {
            Err(SimError::Deadlock {
                time: self.now(),
                blocked,
            })
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
                busy[p.node] += s.work;
                powered[p.node].0 += s.powered_work;
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
                let idle_energy = n.power_idle * (f64::from(n.count) * overall_time - busy[i]).max(0.0);
                NodeResult {
                    id: node_ids[i].clone(),
                    busy_time: busy[i],
                    energy: powered[i].1 + n.power_load * (busy[i] - powered[i].0).max(0.0) + idle_energy,
                    idle_energy,
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
            events: self.events.fired(),
            processes,
            nodes,
            trace: self.trace.map(in_start_order),
            trace_dropped: self.trace_dropped,
        }
    }
}
