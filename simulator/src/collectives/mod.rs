//! Collective operations as plans of point-to-point messages, so that any process (native or
//! scripted) runs them with its own sends and receives.
//!
//! Algorithms (chosen per call or per run):
//! - **flat**: the root sends to (or receives from) every other member in rank order;
//! - **binomial**: the binomial tree of MPICH over ranks relative to the root; a process
//!   receives from its parent, then sends to its children from the farthest to the nearest.
//!   Scatter and gather messages carry the data of the receiver's whole subtree.
//!
//! - **ring** (allreduce, allgather, alltoall): the bandwidth-optimal rings of MPICH and
//!   NCCL. Allreduce is a reduce-scatter then an allgather around the ring, 2(n − 1) steps
//!   each moving bytes / n to the right neighbour; allgather is n − 1 steps moving one
//!   member's share; alltoall is the pairwise exchange, n − 1 steps, step k sending to
//!   rank + k and receiving from rank − k.
//!
//! The all-to-all collectives under flat and binomial are built from the rooted ones at
//! member 0: allreduce is a reduce then a broadcast of the value, allgather a gather then a
//! broadcast of all n shares; alltoall is the pairwise exchange under binomial too (a tree
//! does not shorten it) and, flat, every member sending to every other then receiving.
//!
//! - **NCCL's algorithms** (ring with chunks, double binary tree, NVLS): see [`nccl`]; a
//!   call names one through [`plan_nccl`] with the protocol's costs in a [`Pipeline`]. Rings
//!   across nodes run as NCCL's rail-aligned channels ([`rails`]).
//!
//! Barrier is a zero-byte gather followed by a zero-byte broadcast; zero-byte messages take
//! no link time, so a barrier costs only the waiting. Reduce moves `bytes` on every edge
//! (the combined value) and models no combining time: add a `compute` for that.

use std::fmt;

use crate::Pid;

mod collnet;
pub mod nccl;
mod nvls_tree;
pub mod rails;
pub mod trees;
pub use nccl::{plan_nccl, Pipeline, Shape};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Algorithm {
    Flat,
    Binomial,
    /// For allreduce, allgather and alltoall; the rooted collectives take it as binomial.
    Ring,
    /// Whatever NCCL's tuner picks for the call (its caller resolves it to a [`Pipeline`]);
    /// the default of calls that name no algorithm.
    #[default]
    Nccl,
}

impl Algorithm {
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "flat" => Some(Algorithm::Flat),
            "binomial" => Some(Algorithm::Binomial),
            "ring" => Some(Algorithm::Ring),
            "nccl" | "auto" => Some(Algorithm::Nccl),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    Broadcast,
    Scatter,
    Gather,
    Reduce,
    Barrier,
    Allreduce,
    Allgather,
    Alltoall,
    /// Each member's `bytes` reduced and scattered: member i keeps the i-th 1/n of the sum.
    ReduceScatter,
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Collective::Broadcast => "broadcast",
            Collective::Scatter => "scatter",
            Collective::Gather => "gather",
            Collective::Reduce => "reduce",
            Collective::Barrier => "barrier",
            Collective::Allreduce => "allreduce",
            Collective::Allgather => "allgather",
            Collective::Alltoall => "alltoall",
            Collective::ReduceScatter => "reducescatter",
        })
    }
}

/// One step of a process's part in a collective.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    Send {
        to: Pid,
        bytes: f64,
    },
    Receive {
        from: Pid,
    },
    /// Pass `seconds` without sending: a protocol's latency per step (executed as a sleep).
    Delay {
        seconds: f64,
    },
    /// Wait until this process's earlier sends of the collective are delivered: what keeps
    /// a pipeline's chunks one after the other on a link instead of sharing it at once.
    Flush,
}

impl Step {
    /// After sends, while they are under way: the rest of the least time `bytes` of data take
    /// at `pace` [s/B] (NCCL's protocol caps, which bound what a channel's warps move whatever
    /// the links would carry: tuning.cc's `llMaxBws`, `perChMax…Bws`); none without a pace.
    fn paced(bytes: f64, pace: f64) -> Option<Step> {
        (pace > 0.0).then_some(Step::Delay {
            seconds: bytes * pace,
        })
    }
}

/// The steps of member `me` (an index into `members`, which are in rank order) in
/// `collective` rooted at member `root` (the all-to-all collectives have none); `bytes` is
/// the size of the call (broadcast, reduce and allreduce: the whole value; scatter and gather:
/// one member's share; alltoall: what each member sends each other one; allgather and
/// reducescatter: nccl-tests' size, the gathered whole and each member's whole input, so
/// that a member's share is `bytes / n` in both, as NCCL's plans take them,
/// [`plan_nccl`]).
pub fn plan(
    collective: Collective,
    algorithm: Algorithm,
    members: &[Pid],
    root: usize,
    me: usize,
    bytes: f64,
) -> Vec<Step> {
    match collective {
        Collective::Broadcast => down(algorithm, members, root, me, |_| bytes),
        Collective::Scatter => down(algorithm, members, root, me, |subtree| bytes * subtree as f64),
        Collective::Gather => up(algorithm, members, root, me, |subtree| bytes * subtree as f64),
        Collective::Reduce => up(algorithm, members, root, me, |_| bytes),
        Collective::Barrier => {
            let mut steps = up(algorithm, members, root, me, |_| 0.0);
            steps.extend(down(algorithm, members, root, me, |_| 0.0));
            steps
        }
        Collective::Allreduce if algorithm == Algorithm::Ring => {
            ring(members, me, 2 * (members.len() - 1), bytes / members.len() as f64)
        }
        Collective::Allgather if algorithm == Algorithm::Ring => {
            ring(members, me, members.len() - 1, bytes / members.len() as f64)
        }
        Collective::Allreduce => {
            let mut steps = up(algorithm, members, 0, me, |_| bytes);
            steps.extend(down(algorithm, members, 0, me, |_| bytes));
            steps
        }
        // Flat and binomial: a gather of the shares to member 0, then a broadcast of the whole.
        Collective::Allgather => {
            let share = bytes / members.len() as f64;
            let mut steps = up(algorithm, members, 0, me, |subtree| share * subtree as f64);
            steps.extend(down(algorithm, members, 0, me, |_| bytes));
            steps
        }
        Collective::Alltoall if algorithm == Algorithm::Flat => {
            let others = (0..members.len()).filter(|&i| i != me);
            let mut steps: Vec<Step> = others
                .clone()
                .map(|i| Step::Send {
                    to: members[i],
                    bytes,
                })
                .collect();
            steps.extend(others.map(|i| Step::Receive { from: members[i] }));
            steps
        }
        Collective::Alltoall => pairwise(members, me, bytes),
        // A ring reduce-scatter moves one 1/n share per step, n − 1 steps; flat and binomial
        // are a reduce of the whole input to member 0, then a scatter of the shares.
        Collective::ReduceScatter if algorithm == Algorithm::Ring => {
            ring(members, me, members.len() - 1, bytes / members.len() as f64)
        }
        Collective::ReduceScatter => {
            let share = bytes / members.len() as f64;
            let mut steps = up(algorithm, members, 0, me, |_| bytes);
            steps.extend(down(algorithm, members, 0, me, |subtree| share * subtree as f64));
            steps
        }
    }
}

/// `rounds` steps around the ring: send `bytes` to the right neighbour, then receive from
/// the left one.
fn ring(members: &[Pid], me: usize, rounds: usize, bytes: f64) -> Vec<Step> {
    let n = members.len();
    let (right, left) = (members[(me + 1) % n], members[(me + n - 1) % n]);
    (0..if n > 1 { rounds } else { 0 })
        .flat_map(|_| [Step::Send { to: right, bytes }, Step::Receive { from: left }])
        .collect()
}

/// The pairwise exchange: step k sends to rank + k and receives from rank − k.
fn pairwise(members: &[Pid], me: usize, bytes: f64) -> Vec<Step> {
    let n = members.len();
    (1..n)
        .flat_map(|k| {
            [
                Step::Send {
                    to: members[(me + k) % n],
                    bytes,
                },
                Step::Receive {
                    from: members[(me + n - k) % n],
                },
            ]
        })
        .collect()
}

/// Rank relative to the root.
fn relative(me: usize, root: usize, n: usize) -> usize {
    (me + n - root) % n
}

fn absolute(rel: usize, root: usize, n: usize) -> usize {
    (rel + root) % n
}

/// Lowest set bit of `rel`; for the root, the first power of two ≥ n.
fn span_of(rel: usize, n: usize) -> usize {
    if rel == 0 {
        n.next_power_of_two()
    } else {
        1 << rel.trailing_zeros()
    }
}

/// Children of relative rank `rel`, farthest first, with their subtree sizes.
fn children(rel: usize, n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut mask = span_of(rel, n) >> 1;
    while mask > 0 {
        let child = rel + mask;
        if child < n {
            out.push((child, mask.min(n - child)));
        }
        mask >>= 1;
    }
    out
}

/// Data flowing from the root to every member; `size(subtree)` is a message's bytes.
fn down(
    algorithm: Algorithm,
    members: &[Pid],
    root: usize,
    me: usize,
    size: impl Fn(usize) -> f64,
) -> Vec<Step> {
    let n = members.len();
    match algorithm {
        Algorithm::Flat if me == root => (0..n)
            .filter(|&i| i != root)
            .map(|i| Step::Send {
                to: members[i],
                bytes: size(1),
            })
            .collect(),
        Algorithm::Flat => vec![Step::Receive { from: members[root] }],
        Algorithm::Binomial | Algorithm::Ring | Algorithm::Nccl => {
            let rel = relative(me, root, n);
            let mut steps = Vec::new();
            if rel != 0 {
                let parent = rel - span_of(rel, n);
                steps.push(Step::Receive {
                    from: members[absolute(parent, root, n)],
                });
            }
            steps.extend(children(rel, n).into_iter().map(|(child, subtree)| Step::Send {
                to: members[absolute(child, root, n)],
                bytes: size(subtree),
            }));
            steps
        }
    }
}

/// Data flowing from every member to the root: the mirror of [`down`].
fn up(
    algorithm: Algorithm,
    members: &[Pid],
    root: usize,
    me: usize,
    size: impl Fn(usize) -> f64,
) -> Vec<Step> {
    let n = members.len();
    match algorithm {
        Algorithm::Flat if me == root => (0..n)
            .filter(|&i| i != root)
            .map(|i| Step::Receive { from: members[i] })
            .collect(),
        Algorithm::Flat => vec![Step::Send {
            to: members[root],
            bytes: size(1),
        }],
        Algorithm::Binomial | Algorithm::Ring | Algorithm::Nccl => {
            let rel = relative(me, root, n);
            let subtree = span_of(rel, n).min(n - rel);
            let mut steps: Vec<Step> = children(rel, n)
                .into_iter()
                .rev()
                .map(|(child, _)| Step::Receive {
                    from: members[absolute(child, root, n)],
                })
                .collect();
            if rel != 0 {
                let parent = rel - span_of(rel, n);
                steps.push(Step::Send {
                    to: members[absolute(parent, root, n)],
                    bytes: size(subtree),
                });
            }
            steps
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sends(steps: &[Step]) -> Vec<(Pid, f64)> {
        steps
            .iter()
            .filter_map(|s| match *s {
                Step::Send { to, bytes } => Some((to, bytes)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn binomial_broadcast_of_eight_reaches_everyone_once() {
        let members: Vec<Pid> = (10..18).collect();
        let mut received = vec![0; 8];
        for me in 0..8 {
            for (to, _) in sends(&plan(
                Collective::Broadcast,
                Algorithm::Binomial,
                &members,
                0,
                me,
                1.0,
            )) {
                received[to - 10] += 1;
            }
        }
        assert_eq!(received, [0, 1, 1, 1, 1, 1, 1, 1]);
        // The root sends to relative ranks 4, 2, 1: farthest first.
        let root = sends(&plan(
            Collective::Broadcast,
            Algorithm::Binomial,
            &members,
            0,
            0,
            1.0,
        ));
        assert_eq!(root, [(14, 1.0), (12, 1.0), (11, 1.0)]);
    }

    #[test]
    fn binomial_scatter_carries_subtrees_and_gather_mirrors_it() {
        let members: Vec<Pid> = (0..6).collect();
        let root = sends(&plan(
            Collective::Scatter,
            Algorithm::Binomial,
            &members,
            0,
            0,
            10.0,
        ));
        // Relative ranks 4 (subtree 4..6: 2 members), 2 (2..4: 2), 1 (1).
        assert_eq!(root, [(4, 20.0), (2, 20.0), (1, 10.0)]);
        let leaf = plan(Collective::Gather, Algorithm::Binomial, &members, 0, 5, 10.0);
        assert_eq!(leaf, [Step::Send { to: 4, bytes: 10.0 }]);
        let mid = plan(Collective::Gather, Algorithm::Binomial, &members, 0, 4, 10.0);
        assert_eq!(
            mid,
            [Step::Receive { from: 5 }, Step::Send { to: 0, bytes: 20.0 }]
        );
    }

    /// Bytes each member sends and receives in `collective` over `n` members.
    fn traffic(collective: Collective, algorithm: Algorithm, n: usize, bytes: f64) -> (Vec<f64>, Vec<f64>) {
        let members: Vec<Pid> = (0..n).collect();
        let (mut sent, mut received) = (vec![0.0; n], vec![0.0; n]);
        for (me, sent_by_me) in sent.iter_mut().enumerate() {
            for (to, b) in sends(&plan(collective, algorithm, &members, 0, me, bytes)) {
                *sent_by_me += b;
                received[to] += b;
            }
        }
        (sent, received)
    }

    #[test]
    fn a_ring_allreduce_moves_two_n_minus_one_nths_of_the_value_per_member() {
        // 2 (n − 1) / n × bytes each way per member: the bandwidth-optimal volume.
        let (sent, received) = traffic(Collective::Allreduce, Algorithm::Ring, 4, 8.0);
        assert_eq!(sent, [12.0; 4]);
        assert_eq!(received, [12.0; 4]);
        let steps = plan(Collective::Allreduce, Algorithm::Ring, &[5, 6, 7, 8], 0, 1, 8.0);
        assert_eq!(steps.len(), 12);
        assert_eq!(
            steps[..2],
            [Step::Send { to: 7, bytes: 2.0 }, Step::Receive { from: 5 }]
        );
        assert!(plan(Collective::Allreduce, Algorithm::Ring, &[5], 0, 0, 8.0).is_empty());
    }

    #[test]
    fn allgather_and_alltoall_deliver_every_share_once() {
        let n = 5;
        // All-gather of 15 bytes in all: each member forwards the 4 shares of 3 it lacks.
        let (sent, received) = traffic(Collective::Allgather, Algorithm::Ring, n, 15.0);
        assert_eq!(sent, [12.0; 5]);
        assert_eq!(received, [12.0; 5]);
        // Flat: the 4 shares of 3 to member 0, then the whole 15 to each of the 4 others.
        // Binomial: the same broadcast; the gather's messages carry subtrees (member 2 sends
        // member 3's share with its own): 5 shares.
        for (algorithm, gathered) in [(Algorithm::Flat, 4.0), (Algorithm::Binomial, 5.0)] {
            let (sent, _) = traffic(Collective::Allgather, algorithm, n, 15.0);
            assert_eq!(
                sent.iter().sum::<f64>(),
                gathered * 3.0 + 4.0 * 15.0,
                "{algorithm:?}"
            );
        }
        for algorithm in [Algorithm::Ring, Algorithm::Binomial, Algorithm::Flat] {
            let (sent, received) = traffic(Collective::Alltoall, algorithm, n, 2.0);
            assert_eq!(sent, [8.0; 5], "{algorithm:?}");
            assert_eq!(received, [8.0; 5], "{algorithm:?}");
        }
        // The tree allreduce is a reduce then a broadcast of the whole value: 2 (n − 1) edges.
        let (sent, _) = traffic(Collective::Allreduce, Algorithm::Binomial, n, 1.0);
        assert_eq!(sent.iter().sum::<f64>(), 2.0 * (n - 1) as f64);
    }

    #[test]
    fn rooted_elsewhere_and_flat() {
        let members = [7, 8, 9];
        let root = plan(Collective::Broadcast, Algorithm::Binomial, &members, 2, 2, 1.0);
        assert_eq!(sends(&root), [(8, 1.0), (7, 1.0)]);
        let flat = plan(Collective::Reduce, Algorithm::Flat, &members, 0, 0, 4.0);
        assert_eq!(flat, [Step::Receive { from: 8 }, Step::Receive { from: 9 }]);
        let barrier = plan(Collective::Barrier, Algorithm::Flat, &members, 0, 1, 0.0);
        assert_eq!(
            barrier,
            [Step::Send { to: 7, bytes: 0.0 }, Step::Receive { from: 7 }]
        );
    }
}
