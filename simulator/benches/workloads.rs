//! Native-process workloads shared by the engine benchmarks: state machines that implement
//! [`Process`] directly, so that the engine alone is measured.

use std::collections::BTreeMap;

use hetsim_models::catalog::ComponentKind;
use hetsim_simulator::{
    Direction, Estimate, HostMemory, Link, LinkId, LinkTiming, Node, Placement, Platform, Process, Request,
    Resume, Source,
};

/// Gigabit Ethernet: 50 µs + bytes / 125 MB/s.
pub struct Ethernet;

impl LinkTiming for Ethernet {
    fn transfer_time(
        &mut self,
        _link: LinkId,
        bytes: f64,
        _direction: Direction,
        _host_memory: HostMemory,
    ) -> Result<Estimate, String> {
        Ok(Estimate::exact(50e-6 + bytes / 125e6))
    }
}

fn cpu(id: String, label: &str) -> Node {
    Node {
        id,
        kind: ComponentKind::Cpu,
        count: 1,
        cores: None,
        labels: BTreeMap::from([(label.to_owned(), 1)]),
        power_load: 88.0,
        power_idle: 0.0,
        failure_rate: 0.0,
        latency: 0.0,
    }
}

/// Node 0 hosts the first process; nodes 1..=n each host one of the others, linked to node 0.
pub fn star(n: usize, centre: &str, leaf: &str) -> (Platform, Vec<Placement>) {
    let nodes = std::iter::once(cpu("centre".into(), centre))
        .chain((0..n).map(|i| cpu(format!("n{i}"), leaf)))
        .collect();
    let links = (1..=n)
        .map(|i| Link {
            between: [0, i],
            channels: 1,
            duplex: 1.0,
            latency: 0.0,
        })
        .collect();
    let placements = std::iter::once(Placement {
        label: centre.into(),
        rank: 0,
        node: 0,
        unit: 0,
    })
    .chain((0..n).map(|i| Placement {
        label: leaf.into(),
        rank: i as u64,
        node: i + 1,
        unit: 0,
    }))
    .collect();
    (
        Platform::new(nodes, links).expect("a star is a valid platform"),
        placements,
    )
}

/// Ping-pong: pid 0 sends first, pid 1 answers; `rounds` round trips of 1000 bytes.
pub struct PingPong {
    peer: usize,
    first: bool,
    rounds: u64,
    done: u64,
}

impl PingPong {
    pub fn pair(rounds: u64) -> Vec<PingPong> {
        vec![
            PingPong {
                peer: 1,
                first: true,
                rounds,
                done: 0,
            },
            PingPong {
                peer: 0,
                first: false,
                rounds,
                done: 0,
            },
        ]
    }
}

impl Process for PingPong {
    fn resume(&mut self, _now: f64, input: Resume) -> Request {
        let send = Request::Send {
            to: self.peer,
            bytes: 1000.0,
            direction: None,
            host_memory: HostMemory::Pageable,
            tracked: false,
        };
        let receive = Request::Receive {
            from: Source::Pid(self.peer),
        };
        match (self.first, input) {
            (_, Resume::Start) if self.rounds == 0 => Request::Finish,
            (true, Resume::Start) => send,
            (true, Resume::Done) => receive,
            (true, Resume::Message(_)) => {
                self.done += 1;
                if self.done == self.rounds {
                    Request::Finish
                } else {
                    send
                }
            }
            (false, Resume::Start) => receive,
            (false, Resume::Message(_)) => send,
            (false, Resume::Done) => {
                self.done += 1;
                if self.done == self.rounds {
                    Request::Finish
                } else {
                    receive
                }
            }
            (_, other) => Request::Fail(format!("ping-pong: unexpected {other:?}")),
        }
    }
}

/// Master-worker: the master sends a 1 MB task to every worker, each computes 1.95 ms and
/// returns 1 kB; `rounds` rounds (the scripted example's numbers).
pub enum MasterWorker {
    Master {
        workers: usize,
        rounds: u64,
        round: u64,
        sent: usize,
        received: usize,
    },
    Worker {
        rounds: u64,
        round: u64,
        computing: bool,
    },
}

impl MasterWorker {
    pub fn processes(workers: usize, rounds: u64) -> Vec<MasterWorker> {
        std::iter::once(MasterWorker::Master {
            workers,
            rounds,
            round: 0,
            sent: 0,
            received: 0,
        })
        .chain((0..workers).map(|_| MasterWorker::Worker {
            rounds,
            round: 0,
            computing: false,
        }))
        .collect()
    }
}

impl Process for MasterWorker {
    fn resume(&mut self, _now: f64, input: Resume) -> Request {
        match self {
            MasterWorker::Master {
                workers,
                rounds,
                round,
                sent,
                received,
            } => {
                if matches!(input, Resume::Message(_)) {
                    *received += 1;
                    if *received == *workers {
                        *round += 1;
                        *sent = 0;
                        *received = 0;
                    }
                }
                if *round == *rounds {
                    Request::Finish
                } else if *sent < *workers {
                    *sent += 1;
                    Request::Send {
                        to: *sent,
                        bytes: 1e6,
                        direction: None,
                        host_memory: HostMemory::Pageable,
                        tracked: false,
                    }
                } else {
                    Request::Receive { from: Source::Any }
                }
            }
            MasterWorker::Worker {
                rounds,
                round,
                computing,
            } => match input {
                Resume::Start if *rounds == 0 => Request::Finish,
                Resume::Start => Request::Receive { from: Source::Pid(0) },
                Resume::Message(_) => {
                    *computing = true;
                    Request::Compute {
                        seconds: 1e9 / 512e9,
                        power: None,
                        uncertainty: 0.0,
                        detail: None,
                    }
                }
                Resume::Done if *computing => {
                    *computing = false;
                    Request::Send {
                        to: 0,
                        bytes: 1e3,
                        direction: None,
                        host_memory: HostMemory::Pageable,
                        tracked: false,
                    }
                }
                Resume::Done => {
                    *round += 1;
                    if *round == *rounds {
                        Request::Finish
                    } else {
                        Request::Receive { from: Source::Pid(0) }
                    }
                }
                other => Request::Fail(format!("worker: unexpected {other:?}")),
            },
        }
    }
}
