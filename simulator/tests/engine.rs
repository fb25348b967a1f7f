//! The engine's semantics, checked with native processes that replay a list of requests.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

mod common;

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
        self.seen.borrow_mut().push((self.pid, now, input));
        let mine = |h: &Handle| self.handles.get(h.0).copied().unwrap_or(*h);
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
            },
            Link {
                between: [1, 2],
                channels: 1,
                duplex: 1.0,
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
        &mut Linear,
        &Options {
            trace: true,
            ..Options::default()
        },
    )?;
    Ok((results, seen.take()))
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
    }
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
fn one_channel_shares_its_bandwidth_between_the_transfers_of_a_direction() {
    // Two 1000-byte HtD messages leave at t = 0: after their 1 ms startups their bytes (2 ms
    // each at full rate) share the link at half rate each, so both arrive at 1 + 4 = 5 ms
    // (a FIFO queue would give 3 and 6 ms). A DtH message the other way does not share
    // (1 + 1 = 2 ms).
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
    assert!(close(r.processes[2].finish_time, 5e-3));
    assert!(close(r.processes[0].finish_time, 5e-3 + 2e-3));
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
                    tracked: false,
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

#[test]
fn two_flows_share_a_link_max_min_fairly() {
    // Worked by hand. A0 sends 2000 B at 0: startup to 1 ms, then 2 ms of bytes. A1 sends
    // 1000 B at 0.5 ms: startup to 1.5 ms, then 1 ms of bytes. A0 alone until 1.5 ms (0.5 ms
    // of its bytes done), then both at half rate: A1 ends at 1.5 + 2 × 1 = 3.5 ms; A0 has
    // 0.5 ms left, alone again: 4.0 ms.
    let r = run(
        &pair(1),
        &[("A", 2), ("B", 2)],
        vec![
            vec![send(2, 2000.0)],
            vec![sleep(0.5e-3), send(3, 1000.0)],
            vec![receive(0)],
            vec![receive(1)],
        ],
    )
    .unwrap();
    assert_times(&finish_times(&r)[2..], &[4.0e-3, 3.5e-3]);
}

#[test]
fn three_flows_share_two_channels_max_min_fairly() {
    // Worked by hand, capacity 2 (each flow at most one channel's rate). After the 1 ms
    // startups: A0 (3 ms of bytes) and A1 (1 ms) from 1 ms, A2 (2 ms) from 1.5 ms.
    // [1, 1.5): two flows, full rate each: A0 has 2.5 left, A1 0.5.
    // [1.5, …): three flows at 2/3: A1 ends at 1.5 + 0.5 / (2/3) = 2.25 ms; A0 has 2.0 left,
    // A2 1.5. Then two at full rate: A2 ends at 2.25 + 1.5 = 3.75 ms, A0 at 2.25 + 2 = 4.25.
    let r = run(
        &pair(2),
        &[("A", 3), ("B", 3)],
        vec![
            vec![send(3, 3000.0)],
            vec![send(4, 1000.0)],
            vec![sleep(0.5e-3), send(5, 2000.0)],
            vec![receive(0)],
            vec![receive(1)],
            vec![receive(2)],
        ],
    )
    .unwrap();
    assert_times(&finish_times(&r)[3..], &[4.25e-3, 2.25e-3, 3.75e-3]);
}

#[test]
fn opposite_flows_slow_each_other_on_a_half_duplex_link() {
    // Worked by hand, duplex 0.8. A0 sends 2000 B to B0 at 0: startup to 1 ms, then 2 ms of
    // bytes. B1 sends 1000 B to A1 at 0.5 ms: startup to 1.5 ms, then 1 ms of bytes. From
    // 1.5 ms both directions carry bytes, at 0.8: B1's ends at 1.5 + 1 / 0.8 = 2.75 ms; A0's
    // has 1.5 ms left at 1.5 ms, 0.5 at 2.75 ms, then runs alone: 3.25 ms.
    let programs = || {
        vec![
            vec![send(2, 2000.0)],
            vec![receive(3)],
            vec![receive(0)],
            vec![sleep(0.5e-3), send(1, 1000.0)],
        ]
    };
    let r = run(&duplex_pair(1, 0.8), &[("A", 2), ("B", 2)], programs()).unwrap();
    assert_times(&finish_times(&r)[1..3], &[2.75e-3, 3.25e-3]);
    // Full duplex: each direction at its own full rate.
    let r = run(&pair(1), &[("A", 2), ("B", 2)], programs()).unwrap();
    assert_times(&finish_times(&r)[1..3], &[2.5e-3, 3.0e-3]);
    let err = Platform::new(
        vec![
            node("a", ComponentKind::Cpu, "A", 1),
            node("b", ComponentKind::Cpu, "B", 1),
        ],
        vec![Link {
            between: [0, 1],
            channels: 1,
            duplex: 1.5,
        }],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "link 0: `duplex` is 1.5, expected a fraction in (0, 1]"
    );
}

#[test]
fn processes_share_the_cores_of_their_node_when_they_outnumber_them() {
    // One core for three processes, worked by hand: A0 computes 3 s and A1 1 s from 0, A2
    // 2 s from 0.5 s. [0, 0.5): two at half speed (A0 has 2.75 left, A1 0.75). Three at a
    // third: A1 ends at 0.5 + 3 × 0.75 = 2.75 s (A0 has 2, A2 1.25 left). Two at half: A2
    // ends at 2.75 + 2.5 = 5.25 s; A0 has 0.75 left, alone: 6 s.
    let mut nodes = vec![node("a", ComponentKind::Cpu, "A", 3)];
    nodes[0].cores = Some(1);
    let platform = Platform::new(nodes, vec![]).unwrap();
    let r = run(
        &platform,
        &[("A", 3)],
        vec![
            vec![compute(3.0, None)],
            vec![compute(1.0, None)],
            vec![sleep(0.5), compute(2.0, None)],
        ],
    )
    .unwrap();
    assert_times(&finish_times(&r), &[6.0, 2.75, 5.25]);
    let computing: Vec<f64> = r.processes.iter().map(|p| p.compute_time).collect();
    assert_times(&computing, &[6.0, 2.75, 4.75]);
    // Energy counts the work (6 core-seconds), not the stretched time.
    assert!(close(r.nodes[0].busy_time, 6.0));
    // With a core each (unstated cores), each computes as if alone.
    let alone = Platform::new(vec![node("a", ComponentKind::Cpu, "A", 3)], vec![]).unwrap();
    let r = run(
        &alone,
        &[("A", 3)],
        vec![
            vec![compute(3.0, None)],
            vec![compute(1.0, None)],
            vec![compute(2.0, None)],
        ],
    )
    .unwrap();
    assert_times(&finish_times(&r), &[3.0, 1.0, 2.0]);
}

fn isend(to: usize, bytes: f64) -> Request {
    Request::Send {
        to,
        bytes,
        direction: None,
        host_memory: HostMemory::default(),
        tracked: true,
    }
}

fn post(from: usize) -> Request {
    Request::Post {
        from: Source::Pid(from),
    }
}

fn wait(handles: &[usize]) -> Request {
    Request::Wait {
        handles: handles.iter().map(|&k| Handle(k)).collect(),
    }
}

/// Per wait that returned: the waiting pid and `field` of each handle's message (none for a
/// send's).
fn completions(seen: &[Resumed], field: impl Fn(&Message) -> f64) -> Vec<(usize, Vec<Option<f64>>)> {
    seen.iter()
        .filter_map(|(pid, _, r)| match r {
            Resume::Completed(messages) => {
                Some((*pid, messages.iter().map(|m| m.as_ref().map(&field)).collect()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn an_isend_completes_at_delivery_and_a_posted_receive_takes_its_message() {
    // 1000 B from a to b: 1 + 1 = 2 ms. A0 waits for its isend: 2 ms. B0 posts a receive,
    // tests it at once (not done), computes 5 ms, and its wait returns at once with the
    // message. B1 posts and waits: 2 ms, blocked all along.
    let r = run_seen(
        &pair(2),
        &[("A", 2), ("B", 2)],
        vec![
            vec![isend(2, 1000.0), wait(&[0])],
            vec![isend(3, 1000.0)],
            vec![
                post(0),
                Request::Test { handle: Handle(0) },
                compute(5e-3, None),
                wait(&[0]),
            ],
            vec![post(1), wait(&[0])],
        ],
    )
    .unwrap();
    let (results, seen) = r;
    assert_times(&finish_times(&results), &[2e-3, 0.0, 5e-3, 2e-3]);
    assert!(close(results.processes[3].wait_time, 2e-3));
    assert!(close(results.processes[2].wait_time, 0.0));
    let tested: Vec<bool> = seen
        .iter()
        .filter_map(|(_, _, r)| match r {
            Resume::Tested(done) => Some(*done),
            _ => None,
        })
        .collect();
    assert_eq!(tested, [false]);
    let completed = completions(&seen, |m| m.arrived);
    assert_eq!(completed.len(), 3);
    assert!(completed.contains(&(0, vec![None])), "{completed:?}");
    assert!(completed
        .iter()
        .any(|(pid, m)| *pid == 2 && m.len() == 1 && m[0].is_some_and(|t| close(t, 2e-3))));
}

#[test]
fn posted_receives_take_messages_before_a_blocking_receive_and_in_posting_order() {
    // A0 sends 1000 B then 3000 B to B0, which posts two receives and waits for both, the
    // second first: the posted receives take the messages in the order the messages arrive
    // and the receives were posted.
    let (results, seen) = run_seen(
        &pair(1),
        &[("A", 1), ("B", 1)],
        vec![
            vec![send(1, 1000.0), send(1, 3000.0)],
            vec![post(0), post(0), wait(&[1, 0])],
        ],
    )
    .unwrap();
    // 1000 B: 1 ms of bytes, 3000 B: 3 ms; shared from 1 ms: the small one ends at 3 ms, the
    // large one has 2 ms left, alone: 5 ms.
    assert!(close(results.processes[1].finish_time, 5e-3));
    let sizes = completions(&seen, |m| m.bytes);
    assert_eq!(sizes, [(1, vec![Some(3000.0), Some(1000.0)])]);
}

#[test]
fn waiting_for_another_process_s_handle_fails_the_run() {
    // B0 has no handle of its own: its Wait names A0's isend.
    let err = run(
        &pair(1),
        &[("A", 1), ("B", 1)],
        vec![
            vec![isend(1, 10.0)],
            vec![Request::Wait {
                handles: vec![Handle(0)],
            }],
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("handle 0 is not one of this process's") && err.contains("B[0]"),
        "{err}"
    );
}
