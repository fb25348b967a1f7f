//! One rank's replay state, shared by its streams: which nodes wait on how many
//! dependencies, the ready nodes of each stream, which streams idle, the nodes in flight,
//! and the busy time the report reads.
//!
//! A rank has three streams, as ASTRA-sim defines a rank's resources: one CPU op, one GPU
//! compute and one GPU communication in flight at a time. Each stream is an engine
//! process of its own on the rank's node (crate::stream); they share this state (the
//! engine runs one process at a time, so a `RefCell` is enough) and wake each other
//! through the rank's relay process (crate::stream::Relay).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use hetsim_simulator::Pid;

use crate::busy::Busy;
use crate::kind::{stream_of, Stream, STREAMS};
use crate::nodes::Nodes;

/// What a rank's replay has done, and its state.
pub struct RankState {
    pub rank: usize,
    pub nodes: Nodes,
    /// Scratch buffers (what a completion frees, what making a node ready completes in
    /// turn), kept so that a completion allocates nothing.
    freed: Vec<u32>,
    work: Vec<u32>,
    ready: [BinaryHeap<Reverse<u32>>; 3],
    /// Per stream: waiting for a wake from the relay.
    pub idle: [bool; 3],
    /// Per stream: the node in flight, and when it started [s].
    pub current: [Option<u32>; 3],
    started: [f64; 3],
    done: usize,
    /// What the relay does per signal: wake a stream, or (`None`) finish.
    pub wakes: VecDeque<Option<Pid>>,
    pub pids: [Pid; 3],
    pub finished_streams: u8,
    pub busy: Busy,
    /// Nodes run per stream, and METADATA nodes.
    pub ran: [u64; 3],
    pub metadata: u64,
    /// GPU compute nodes whose recorded duration the policy kept for want of attributes.
    pub kept_recorded: u64,
    /// GPU compute nodes whose FLOPs were timed at FP32's rate for want of a data type or
    /// of the GPU's rate for it.
    pub fp32_fallback: u64,
}

impl RankState {
    /// The state of rank `rank` before its run, its nodes that wait for nothing ready;
    /// `Err` when its file cannot be read again.
    pub fn new(rank: usize, nodes: Nodes, pids: [Pid; 3]) -> Result<Self, String> {
        let mut state = RankState {
            rank,
            freed: Vec::new(),
            work: Vec::new(),
            nodes,
            ready: Default::default(),
            idle: [false; 3],
            current: [None; 3],
            started: [0.0; 3],
            done: 0,
            wakes: VecDeque::new(),
            pids,
            finished_streams: 0,
            busy: Busy::default(),
            ran: [0; 3],
            metadata: 0,
            kept_recorded: 0,
            fp32_fallback: 0,
        };
        let mut roots = Vec::new();
        state.nodes.start(&mut roots)?;
        for i in roots {
            state.make_ready(i)?;
        }
        Ok(state)
    }

    pub fn total(&self) -> usize {
        self.nodes.total() as usize
    }

    pub fn all_done(&self) -> bool {
        self.done == self.total()
    }

    /// Queues `i` on its stream, or completes it at once (METADATA), with what that
    /// releases in turn.
    fn make_ready(&mut self, i: u32) -> Result<(), String> {
        let mut work = std::mem::take(&mut self.work);
        work.push(i);
        while let Some(i) = work.pop() {
            let (kind, is_cpu_op) = self.nodes.kind(i);
            match stream_of(kind, is_cpu_op) {
                Some(s) => self.ready[s as usize].push(Reverse(i)),
                None => {
                    self.done += 1;
                    self.metadata += 1;
                    self.nodes.release(i, &mut work)?;
                }
            }
        }
        self.work = work;
        Ok(())
    }

    /// The next ready node of `stream` (lowest id first), in flight from `now`.
    pub fn next(&mut self, stream: Stream, now: f64) -> Option<u32> {
        let Reverse(i) = self.ready[stream as usize].pop()?;
        self.current[stream as usize] = Some(i);
        self.started[stream as usize] = now;
        Some(i)
    }

    /// `i` of `stream` ran from `start` to `end`: its dependants may issue. Returns how many
    /// wakes it queued for the relay (streams that idled and now have work, or every
    /// idle stream when the rank is done); `Err` when its file cannot be read on.
    pub fn complete(&mut self, i: u32, stream: Stream, start: f64, end: f64) -> Result<usize, String> {
        let s = stream as usize;
        self.current[s] = None;
        self.ran[s] += 1;
        self.done += 1;
        if end > start {
            self.busy.add(stream, start, end);
        }
        // What starts later starts at `end` or later; what is in flight, when it started.
        let horizon = STREAMS
            .iter()
            .filter(|&&o| self.current[o as usize].is_some())
            .map(|&o| self.started[o as usize])
            .fold(end, f64::min);
        self.busy.settle(horizon);
        let mut freed = std::mem::take(&mut self.freed);
        self.nodes.release(i, &mut freed)?;
        for c in freed.drain(..) {
            self.make_ready(c)?;
        }
        self.freed = freed;
        let mut woken = 0;
        for other in STREAMS {
            let o = other as usize;
            if o != s && self.idle[o] && (!self.ready[o].is_empty() || self.all_done()) {
                self.idle[o] = false;
                self.wakes.push_back(Some(self.pids[o]));
                woken += 1;
            }
        }
        Ok(woken)
    }

    /// What each busy stream is doing: for a deadlock's report.
    pub fn in_flight(&self) -> Vec<String> {
        STREAMS
            .iter()
            .filter_map(|&s| {
                let i = self.current[s as usize]?;
                Some(format!(
                    "rank {} node {} ({} {:?})",
                    self.rank,
                    self.nodes.id(i),
                    self.nodes.kind(i).0.name(),
                    self.nodes.name(i)
                ))
            })
            .collect()
    }
}
