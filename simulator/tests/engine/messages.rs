//! Messages: transfer times, channels, routing through unlinked nodes, which receive takes
//! which message, deadlocks, bad requests and labels, and determinism.

use super::*;

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
fn a_message_between_unlinked_nodes_streams_over_its_whole_route() {
    // host → gpu → far: the two links' 1 ms startups, then 1000 × 1 µs on both links at once
    // (HostToHost: both ends are CPUs).
    let r = run(
        &line(),
        &[("A", 1), ("C", 1)],
        vec![vec![send(1, 1000.0)], vec![receive(0)]],
    )
    .unwrap();
    assert!(close(r.processes[1].finish_time, 3e-3));
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
            4e-3
        ),
        "the given direction holds on every hop"
    );
    assert!(
        close(host_to_device(HostMemory::Pinned).processes[1].finish_time, 3e-3),
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
            detail: None,
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
                    detail: None,
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
