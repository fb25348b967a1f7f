//! The engine's semantics, checked with native processes that replay a list of requests.

use std::collections::{BTreeMap, VecDeque};

mod common;

use common::node;
use hetsim_models::catalog::ComponentKind;
use hetsim_simulator::{
    place, simulate, Direction, Estimate, HostMemory, Link, LinkId, LinkTiming, Message, Options, Platform,
    Process, Request, Results, Resume, SimError, Source, SpanKind,
};

/// Replays its requests in order, keeping what it received.
#[derive(Default)]
struct Replay {
    requests: VecDeque<Request>,
    received: Vec<Message>,
}

impl Process for Replay {
    fn resume(&mut self, _now: f64, input: Resume) -> Request {
        if let Resume::Message(m) = input {
            self.received.push(m);
        }
        self.requests.pop_front().unwrap_or(Request::Finish)
    }
}

fn replay(requests: Vec<Request>) -> Replay {
    Replay {
        requests: requests.into(),
        received: Vec::new(),
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
            },
            Link {
                between: [1, 2],
                channels: 1,
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
    let labels: BTreeMap<String, u64> = labels.iter().map(|(l, n)| (l.to_string(), *n)).collect();
    let placements = place(platform, &labels)?;
    let processes: Vec<Replay> = programs.into_iter().map(replay).collect();
    simulate(
        platform,
        &placements,
        processes,
        &mut Linear,
        &Options {
            trace: true,
            ..Options::default()
        },
    )
}

fn send(to: usize, bytes: f64) -> Request {
    Request::Send {
        to,
        bytes,
        direction: None,
        host_memory: HostMemory::default(),
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

#[test]
fn compute_and_sleep_advance_the_clock() {
    let r = run(
        &line(),
        &[("A", 1)],
        vec![vec![
            Request::Compute {
                seconds: 2.0,
                power: None,
                uncertainty: 0.0,
            },
            Request::Sleep { seconds: 0.5 },
        ]],
    )
    .unwrap();
    assert_eq!(r.overall_time, 2.5);
    assert_eq!(r.processes[0].compute_time, 2.0);
    // Energy: 100 W × 2 s busy + 10 W × 0.5 s idle on host; 10 W × 2.5 s idle on the others.
    assert!(close(r.nodes[0].energy, 205.0));
    assert!(close(r.total_energy, 205.0 + 25.0 + 25.0));
}

#[test]
fn a_compute_that_states_its_power_is_charged_at_that_power() {
    let compute = |seconds, power| Request::Compute {
        seconds,
        power,
        uncertainty: 0.0,
    };
    let r = run(
        &line(),
        &[("A", 1)],
        vec![vec![
            compute(2.0, Some(300.0)),
            compute(1.0, None),
            Request::Sleep { seconds: 0.5 },
        ]],
    )
    .unwrap();
    // 300 W × 2 s stated + 100 W (load) × 1 s + 10 W (idle) × 0.5 s.
    assert!(
        close(r.nodes[0].energy, 600.0 + 100.0 + 5.0),
        "{}",
        r.nodes[0].energy
    );
    let bad = run(&line(), &[("A", 1)], vec![vec![compute(1.0, Some(f64::NAN))]]).unwrap_err();
    assert!(bad.to_string().contains("power"), "{bad}");
}

fn uncertain(seconds: f64, uncertainty: f64) -> Request {
    Request::Compute {
        seconds,
        power: None,
        uncertainty,
    }
}

fn assert_interval(got: [f64; 2], want: [f64; 2]) {
    assert!(
        close(got[0], want[0]) && close(got[1], want[1]),
        "{got:?} != {want:?}"
    );
}

#[test]
fn error_bars_add_along_a_process_and_a_late_message_brings_its_own() {
    // pid 0 on host: 1 s ± 0.1, then 1000 bytes HtD (3 ms ± 0.3 ms) arriving at 1.003 s ± 0.1003.
    // pid 1 on gpu: 0.5 s ± 0.01, waits for the message (which decides its clock), 2 s ± 0.2.
    let r = run(
        &line(),
        &[("A", 1), ("B", 1)],
        vec![
            vec![uncertain(1.0, 0.1), send(1, 1000.0)],
            vec![uncertain(0.5, 0.01), receive(0), uncertain(2.0, 0.2)],
        ],
    )
    .unwrap();
    assert_interval(r.processes[0].finish_interval, [0.9, 1.1]);
    let bar = 0.1003 + 0.2;
    assert!(close(r.processes[1].finish_time, 3.003));
    assert_interval(r.processes[1].finish_interval, [3.003 - bar, 3.003 + bar]);
    assert_interval(r.overall_time_interval, [3.003 - bar, 3.003 + bar]);
    let computes: Vec<f64> = r
        .trace
        .unwrap()
        .iter()
        .filter(|s| s.kind == SpanKind::Compute)
        .map(|s| s.uncertainty)
        .collect();
    assert_eq!(computes, [0.1, 0.01, 0.2]);
}

#[test]
fn a_receive_is_the_later_of_two_uncertain_times() {
    // The message (1.003 s ± 0.1003) waits in the mailbox until pid 1 is at 1.01 s ± 0.001:
    // the later of the two lies in [max(1.009, 0.9027), max(1.011, 1.1033)].
    let r = run(
        &line(),
        &[("A", 1), ("B", 1)],
        vec![
            vec![uncertain(1.0, 0.1), send(1, 1000.0)],
            vec![uncertain(1.01, 0.001), receive(0)],
        ],
    )
    .unwrap();
    assert!(close(r.processes[1].finish_time, 1.01));
    assert_interval(r.processes[1].finish_interval, [1.009, 1.1033]);
    let bad = run(&line(), &[("A", 1)], vec![vec![uncertain(1.0, f64::INFINITY)]]).unwrap_err();
    assert!(bad.to_string().contains("uncertainty"), "{bad}");
}

#[test]
fn a_send_costs_nothing_and_arrives_after_the_transfer_time() {
    // pid 0 = A[0] on host (CPU), pid 1 = B[0] on gpu (GPU): host-to-device, 2 µs per byte.
    let r = run(
        &line(),
        &[("A", 1), ("B", 1)],
        vec![vec![send(1, 1000.0)], vec![receive(0)]],
    )
    .unwrap();
    assert_eq!(r.processes[0].finish_time, 0.0);
    assert!(close(r.processes[1].finish_time, 1e-3 + 2e-3));
    assert!(close(r.processes[1].wait_time, 3e-3));
}

#[test]
fn messages_within_a_node_and_empty_messages_are_instant() {
    let r = run(
        &line(),
        &[("A", 2), ("B", 1)],
        vec![
            vec![send(1, 1e9), send(2, 0.0)],
            vec![receive(0)],
            vec![receive(0)],
        ],
    )
    .unwrap();
    assert_eq!(r.overall_time, 0.0);
}

#[test]
fn one_channel_queues_transfers_fifo_per_direction() {
    // Two 1000-byte HtD messages leave at t = 0: the second waits for the first (3 ms each).
    // A DtH message the other way does not wait (1 + 1 = 2 ms).
    let r = run(
        &line(),
        &[("A", 2), ("B", 1)],
        vec![
            vec![send(2, 1000.0), receive(2)],
            vec![send(2, 1000.0)],
            vec![receive(0), receive(1), send(0, 1000.0)],
        ],
    )
    .unwrap();
    assert!(close(r.processes[2].finish_time, 6e-3));
    assert!(close(r.processes[0].finish_time, 2e-3 + 6e-3));
}

#[test]
fn two_channels_carry_two_transfers_at_once() {
    let mut platform = line();
    platform.links[0].channels = 2;
    let platform = Platform::new(platform.nodes.clone(), platform.links.clone()).unwrap();
    let r = run(
        &platform,
        &[("A", 2), ("B", 1)],
        vec![
            vec![send(2, 1000.0)],
            vec![send(2, 1000.0)],
            vec![receive(0), receive(1)],
        ],
    )
    .unwrap();
    assert!(close(r.processes[2].finish_time, 3e-3));
}

#[test]
fn unlinked_nodes_store_and_forward_along_the_shortest_path() {
    // host → gpu → far: two hops of 1 ms + 1000 × 1 µs (HostToHost: both ends are CPUs).
    let r = run(
        &line(),
        &[("A", 1), ("C", 1)],
        vec![vec![send(1, 1000.0)], vec![receive(0)]],
    )
    .unwrap();
    assert!(close(r.processes[1].finish_time, 4e-3));
    let host_to_device = |host_memory| {
        run(
            &line(),
            &[("A", 1), ("C", 1)],
            vec![
                vec![Request::Send {
                    to: 1,
                    bytes: 1000.0,
                    direction: Some(Direction::HostToDevice),
                    host_memory,
                }],
                vec![receive(0)],
            ],
        )
        .unwrap()
    };
    assert!(
        close(
            host_to_device(HostMemory::Pageable).processes[1].finish_time,
            6e-3
        ),
        "the given direction holds on every hop"
    );
    assert!(
        close(host_to_device(HostMemory::Pinned).processes[1].finish_time, 4e-3),
        "the host memory reaches the timing on every hop"
    );
}

#[test]
fn receive_any_takes_the_first_arrival_and_specific_receive_waits_for_its_sender() {
    let r = run(
        &line(),
        &[("A", 2), ("B", 1)],
        vec![
            vec![Request::Sleep { seconds: 1.0 }, send(2, 0.0)],
            vec![send(2, 0.0)],
            vec![receive(0), Request::Receive { from: Source::Any }],
        ],
    )
    .unwrap();
    assert_eq!(r.processes[2].finish_time, 1.0);
}

#[test]
fn deadlock_names_every_blocked_process() {
    let err = run(
        &line(),
        &[("A", 1), ("B", 1)],
        vec![vec![receive(1)], vec![receive(0)]],
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("deadlock at t = 0 s"), "{text}");
    assert!(
        text.contains("process 0 (A[0] on node `host`) waits in receive for process 1 (B[0] on node `gpu`)")
    );
    assert!(text.contains("process 1 (B[0] on node `gpu`) waits in receive for process 0"));
}

#[test]
fn capacity_and_unknown_labels_are_errors() {
    let err = run(&line(), &[("A", 3)], vec![vec![], vec![], vec![]]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "label `A`: 3 processes asked, but the nodes carrying it host at most 2 (count × multiplicity)"
    );
    let err = run(&line(), &[("D", 1)], vec![vec![]]).unwrap_err();
    assert!(
        err.to_string().starts_with("label `D` is carried by no node"),
        "{err}"
    );
}

#[test]
fn bad_requests_fail_the_run_with_the_process_named() {
    let err = run(
        &line(),
        &[("A", 1)],
        vec![vec![Request::Compute {
            seconds: -1.0,
            power: None,
            uncertainty: 0.0,
        }]],
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("process 0 (A[0] on node `host`)"),
        "{err}"
    );
    let err = run(&line(), &[("A", 1)], vec![vec![send(9, 1.0)]]).unwrap_err();
    assert!(err.to_string().contains("send to pid 9"), "{err}");
    let err = run(&line(), &[("A", 1)], vec![vec![Request::Fail("boom".into())]]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "process 0 (A[0] on node `host`) failed at t = 0 s: boom"
    );
}

#[test]
fn identical_inputs_give_identical_results() {
    let programs = || {
        vec![
            vec![
                send(2, 10.0),
                Request::Compute {
                    seconds: 0.1,
                    power: None,
                    uncertainty: 0.0,
                },
                send(2, 20.0),
            ],
            vec![send(2, 10.0), send(2, 5.0)],
            (0..4).map(|_| Request::Receive { from: Source::Any }).collect(),
        ]
    };
    let a = run(&line(), &[("A", 2), ("B", 1)], programs()).unwrap();
    let b = run(&line(), &[("A", 2), ("B", 1)], programs()).unwrap();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    assert!(a.trace.as_ref().is_some_and(|t| !t.is_empty()));
}
