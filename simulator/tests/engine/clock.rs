//! Time, energy and error bars: computing and sleeping advance the clock, a compute is
//! charged at the power it states, error bars add along a process and a receive takes the
//! later of two uncertain times.

use super::*;

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
                detail: None,
            },
            Request::Sleep { seconds: 0.5 },
        ]],
    )
    .unwrap();
    assert_eq!(r.overall_time, 2.5);
    assert_eq!(r.processes[0].compute_time, 2.0);
    // Energy: 100 W × 2 s busy + 10 W × 0.5 s idle on host; 10 W × 2.5 s idle on the others.
    assert!(close(r.nodes[0].energy, 205.0));
    assert!(close(r.nodes[0].idle_energy, 5.0), "{}", r.nodes[0].idle_energy);
    assert!(close(r.nodes[1].idle_energy, r.nodes[1].energy));
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
        detail: None,
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
