//! Invariants of the engine on generated programs.

mod common;

use std::collections::{BTreeMap, VecDeque};

use common::node;

use hetsim_models::catalog::ComponentKind;
use hetsim_simulator::{
    place, simulate, Direction, Estimate, HostMemory, Link, LinkId, LinkTiming, Options, Platform, Process,
    Request, Resume, Source,
};
use proptest::prelude::*;

/// Sends its messages (with computes between), then receives `expected` messages from anyone.
struct Program {
    steps: VecDeque<Request>,
    expected: usize,
    received: usize,
}

impl Process for Program {
    fn resume(&mut self, _now: f64, input: Resume) -> Request {
        if let Resume::Message(_) = input {
            self.received += 1;
        }
        if let Some(step) = self.steps.pop_front() {
            return step;
        }
        if self.received < self.expected {
            Request::Receive { from: Source::Any }
        } else {
            Request::Finish
        }
    }
}

struct Linear;

impl LinkTiming for Linear {
    fn transfer_time(
        &mut self,
        link: LinkId,
        bytes: f64,
        _d: Direction,
        _m: HostMemory,
    ) -> Result<Estimate, String> {
        Ok(Estimate::exact(1e-4 * (link + 1) as f64 + bytes * 1e-9))
    }
}

/// Three nodes in a line (so some messages take two hops), each hosting up to 4 processes.
fn platform() -> Platform {
    Platform::new(
        ["a", "b", "c"]
            .map(|id| node(id, ComponentKind::Cpu, "P", 4))
            .to_vec(),
        vec![
            Link {
                between: [0, 1],
                channels: 1,
                duplex: 1.0,
                latency: 0.0,
            },
            Link {
                between: [1, 2],
                channels: 2,
                duplex: 1.0,
                latency: 0.0,
            },
        ],
    )
    .unwrap()
}

fn messages() -> impl Strategy<Value = (usize, Vec<(usize, usize, f64, f64)>)> {
    (2usize..=12).prop_flat_map(|n| {
        (
            Just(n),
            proptest::collection::vec((0..n, 0..n, 0.0..1e6f64, 0.0..1e-3f64), 0..40),
        )
    })
}

proptest! {
    #[test]
    fn every_message_is_delivered_once_and_runs_repeat_exactly((n, sends) in messages()) {
        let platform = platform();
        let placements = place(&platform, &BTreeMap::from([("P".to_owned(), n as u64)])).unwrap();
        let programs = |bar: f64| {
            let mut programs: Vec<Program> =
                (0..n).map(|_| Program { steps: VecDeque::new(), expected: 0, received: 0 }).collect();
            for &(from, to, bytes, think) in &sends {
                programs[from].steps.push_back(Request::Compute { seconds: think, power: None, uncertainty: bar * think, detail: None });
                programs[from].steps.push_back(Request::Send { to, bytes, direction: None, host_memory: HostMemory::Pageable, tracked: false });
                programs[to].expected += 1;
            }
            programs
        };
        let a = simulate(&platform, &placements, programs(0.0), &mut Linear, &Options::default()).unwrap();
        let b = simulate(&platform, &placements, programs(0.0), &mut Linear, &Options::default()).unwrap();
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(a.overall_time_interval, [a.overall_time; 2]);
        // Error bars of ±10 % change no time; each interval holds its time and is no wider
        // than ±10 % of all the computes of the run.
        let c = simulate(&platform, &placements, programs(0.1), &mut Linear, &Options::default()).unwrap();
        let all: f64 = sends.iter().map(|s| s.3).sum();
        for (p, q) in a.processes.iter().zip(&c.processes) {
            let [low, high] = q.finish_interval;
            prop_assert_eq!(p.finish_time, q.finish_time);
            prop_assert!(low <= q.finish_time && q.finish_time <= high);
            prop_assert!(q.finish_time - low <= 0.1 * all * (1.0 + 1e-9) && high - q.finish_time <= 0.1 * all * (1.0 + 1e-9));
        }
        let [low, high] = c.overall_time_interval;
        prop_assert!(low <= c.overall_time && c.overall_time <= high);
        let compute: f64 = sends.iter().map(|s| s.3).sum();
        let busy: f64 = a.nodes.iter().map(|n| n.busy_time).sum();
        prop_assert!((busy - compute).abs() <= 1e-12 * compute.max(1.0));
        for p in &a.processes {
            prop_assert!(p.finish_time <= a.overall_time);
            prop_assert!(p.compute_time + p.wait_time <= p.finish_time + 1e-12);
        }
        for node in &a.nodes {
            // Load power while busy, idle power otherwise; processes sharing a unit do not
            // contend, so busy time may exceed the run's length.
            let idle = (a.overall_time - node.busy_time).max(0.0);
            let expected = 100.0 * node.busy_time + 10.0 * idle;
            prop_assert!((node.energy - expected).abs() <= 1e-9 * expected.max(1.0));
            prop_assert!(node.energy >= 10.0 * a.overall_time - 1e-9);
        }
    }
}
