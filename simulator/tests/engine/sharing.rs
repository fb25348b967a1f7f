//! Sharing: flows share a link's channels max-min fairly (both ways on a half-duplex link),
//! and processes share their node's cores.

use super::*;

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
            latency: 0.0,
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
