//! The engine's semantics, checked with native processes that replay a list of requests.
//! One file a topic: [`clock`], [`messages`], [`routes`] (flows over routes, routing),
//! [`sharing`], [`handles`]; this one holds the
//! replaying process, the platforms and the request builders they share.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

#[path = "../common/mod.rs"]
mod common;

mod clock;
mod handles;
mod messages;
mod routes;
mod sharing;

use common::node;
use hetsim_models::catalog::ComponentKind;
use hetsim_simulator::{
    place, simulate, Direction, Estimate, Handle, HostMemory, Link, LinkId, LinkTiming, Message, Options,
    Platform, Process, Request, Results, Resume, SimError, Source, SpanKind,
};

/// What a process resumed with: (pid, time, outcome).
type Resumed = (usize, f64, Resume);

/// What the processes of a run resumed with.
type Seen = Rc<RefCell<Vec<Resumed>>>;

/// Replays its requests in order, noting what it resumed with. In a `Wait` or a `Test`,
/// `Handle(k)` stands for the k-th handle the process got (for the engine's `Handle(k)` if it
/// got fewer).
struct Replay {
    pid: usize,
    requests: VecDeque<Request>,
    handles: Vec<Handle>,
    seen: Seen,
}

impl Process for Replay {
    fn resume(&mut self, now: f64, input: Resume) -> Request {
        if let Resume::Handle(h) = input {
            self.handles.push(h);
        }
        if let Resume::Refused(why) = &input {
            return Request::Fail(why.clone());
        }
        self.seen.borrow_mut().push((self.pid, now, input));
        let mine = |h: &Handle| self.handles.get(h.0 as usize).copied().unwrap_or(*h);
        match self.requests.pop_front() {
            Some(Request::Wait { handles }) => Request::Wait {
                handles: handles.iter().map(mine).collect(),
            },
            Some(Request::Test { handle }) => Request::Test {
                handle: mine(&handle),
            },
            Some(request) => request,
            None => Request::Finish,
        }
    }
}

/// 1 ms startup + bytes / (1 MB/s), HtD twice as slow as the rest, pinned host memory twice
/// as fast; its error bar is ±10 % of that.
struct Linear;

impl LinkTiming for Linear {
    fn transfer_time(
        &mut self,
        _link: LinkId,
        bytes: f64,
        direction: Direction,
        host_memory: HostMemory,
    ) -> Result<Estimate, String> {
        let per_byte = if direction == Direction::HostToDevice {
            2e-6
        } else {
            1e-6
        };
        let speedup = if host_memory == HostMemory::Pinned {
            2.0
        } else {
            1.0
        };
        let seconds = 1e-3 + bytes * per_byte / speedup;
        Ok(Estimate {
            seconds,
            uncertainty: 0.1 * seconds,
        })
    }
}

/// host(CPU) — gpu(GPU) — far(CPU) in a line, one channel each.
fn line() -> Platform {
    Platform::new(
        vec![
            node("host", ComponentKind::Cpu, "A", 2),
            node("gpu", ComponentKind::Gpu, "B", 1),
            node("far", ComponentKind::Cpu, "C", 1),
        ],
        vec![
            Link {
                between: [0, 1],
                channels: 1,
                duplex: 1.0,
                latency: 0.0,
            },
            Link {
                between: [1, 2],
                channels: 1,
                duplex: 1.0,
                latency: 0.0,
            },
        ],
    )
    .unwrap()
}

fn run(
    platform: &Platform,
    labels: &[(&str, u64)],
    programs: Vec<Vec<Request>>,
) -> Result<Results, SimError> {
    run_seen(platform, labels, programs).map(|(results, _)| results)
}

/// A run, and what its processes resumed with.
fn run_seen(
    platform: &Platform,
    labels: &[(&str, u64)],
    programs: Vec<Vec<Request>>,
) -> Result<(Results, Vec<Resumed>), SimError> {
    run_with(platform, labels, programs, None, &mut Linear)
}

/// A traced run keeping at most `max_spans` spans, and what its processes resumed with.
fn run_with(
    platform: &Platform,
    labels: &[(&str, u64)],
    programs: Vec<Vec<Request>>,
    max_spans: Option<usize>,
    timing: &mut dyn LinkTiming,
) -> Result<(Results, Vec<Resumed>), SimError> {
    let labels: BTreeMap<String, u64> = labels.iter().map(|(l, n)| (l.to_string(), *n)).collect();
    let placements = place(platform, &labels)?;
    let seen = Seen::default();
    let processes: Vec<Replay> = programs
        .into_iter()
        .enumerate()
        .map(|(pid, requests)| Replay {
            pid,
            requests: requests.into(),
            handles: Vec::new(),
            seen: seen.clone(),
        })
        .collect();
    let results = simulate(
        platform,
        &placements,
        processes,
        timing,
        &Options {
            trace: true,
            max_spans,
            ..Options::default()
        },
    )?;
    Ok((results, seen.take()))
}

#[test]
fn a_capped_trace_keeps_the_first_spans_and_counts_the_rest() {
    let programs = || vec![vec![sleep(1.0), sleep(1.0), sleep(1.0)], vec![sleep(0.5)]];
    let (whole, _) = run_with(&pair(1), &[("A", 2)], programs(), None, &mut Linear).unwrap();
    let (capped, _) = run_with(&pair(1), &[("A", 2)], programs(), Some(2), &mut Linear).unwrap();
    let spans = |r: &Results| r.trace.as_ref().map_or(0, Vec::len);
    assert_eq!((spans(&whole), whole.trace_dropped), (4, 0));
    assert_eq!((spans(&capped), capped.trace_dropped), (2, 2));
    // The spans kept are spans of the whole trace (the first recorded, which is not time
    // order: a process runs ahead of the engine's clock until it must wait).
    let kept = capped.trace.iter().flatten();
    assert!(kept.clone().all(|s| whole.trace.iter().flatten().any(|w| w == s)));
    // Capping the trace changes no result.
    assert_eq!(capped.overall_time, whole.overall_time);
}

fn send(to: usize, bytes: f64) -> Request {
    Request::Send {
        to,
        bytes,
        direction: None,
        host_memory: HostMemory::default(),
        tracked: false,
    }
}

fn receive(from: usize) -> Request {
    Request::Receive {
        from: Source::Pid(from),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-9)
}

fn compute(seconds: f64, power: Option<f64>) -> Request {
    Request::Compute {
        seconds,
        power,
        uncertainty: 0.0,
        detail: None,
    }
}

/// Two CPU nodes, `a` (label A, 3 processes) and `b` (label B, 3), joined by one link of
/// `channels`: 1 ms startup + 1 µs per byte at full rate.
fn pair(channels: u32) -> Platform {
    duplex_pair(channels, 1.0)
}

/// [`pair`] whose link keeps `duplex` of its rate per direction while both carry bytes.
fn duplex_pair(channels: u32, duplex: f64) -> Platform {
    Platform::new(
        vec![
            node("a", ComponentKind::Cpu, "A", 3),
            node("b", ComponentKind::Cpu, "B", 3),
        ],
        vec![Link {
            between: [0, 1],
            channels,
            duplex,
            latency: 0.0,
        }],
    )
    .unwrap()
}

fn sleep(seconds: f64) -> Request {
    Request::Sleep { seconds }
}

fn finish_times(r: &Results) -> Vec<f64> {
    r.processes.iter().map(|p| p.finish_time).collect()
}

fn assert_times(got: &[f64], want: &[f64]) {
    assert!(
        got.len() == want.len() && got.iter().zip(want).all(|(a, b)| close(*a, *b)),
        "{got:?} != {want:?}"
    );
}
