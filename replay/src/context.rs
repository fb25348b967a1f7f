//! What every stream of a replay reads: where the ranks run, the process groups, the
//! fabric NCCL's tuner sees, the compute policy, and the point-to-point messages on their
//! way (for matching by tag).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use hetsim_chakra::Groups;
use hetsim_scripting::computational::Models;
use hetsim_scripting::nccl::Topology;
use hetsim_scripting::CancelFlag;
use hetsim_simulator::collectives::Algorithm;
use hetsim_simulator::{Pid, Placement};

use crate::model::{Gpu, ScriptModel};
use crate::policy::{Peak, Policy};

/// Sends on their way and receives that took a message for another tag.
#[derive(Debug, Default)]
pub struct P2p {
    /// Per (source rank, destination rank): the (tag, node id) of each send, in send order
    /// (the order their messages arrive: a rank's communication stream sends one message
    /// at a time and waits for its delivery).
    pub sent: HashMap<(usize, usize), VecDeque<(i64, u64)>>,
    /// Per (source, destination, tag): messages that arrived before a receive of their tag
    /// (the sending nodes' ids).
    pub early: HashMap<(usize, usize, i64), VecDeque<u64>>,
}

/// The run's shared facts.
pub struct Context {
    /// Per rank: its trace file (errors name it).
    pub files: Vec<std::path::PathBuf>,
    pub placements: Vec<Placement>,
    /// Per rank: its communication stream's pid (whom other ranks send to).
    pub comm_pids: Vec<Pid>,
    /// Per rank: its relay's pid, and whether the relay sits on the GPU's host (then loads
    /// and stores move their bytes over the host link; else they take no time).
    pub relays: Vec<(Pid, bool)>,
    pub groups: Groups,
    pub topology: Topology,
    pub algorithm: Algorithm,
    pub policy: Policy,
    /// Per rank: its GPU's peaks (None where its node is no GPU of known peaks).
    pub peaks: Vec<Option<Peak>>,
    /// Per rank: its node's component name.
    pub gpus: Vec<String>,
    /// The compiled `model:FILE.rhai` policy, if it is the policy.
    pub model: Option<ScriptModel>,
    /// The system's computational models, which time what a model script's
    /// `compute_time` returns as a map (`kernel_params(...)`).
    pub models: Rc<Models>,
    pub p2p: RefCell<P2p>,
    /// Set from another thread to stop the replay: each stream fails at its next turn.
    pub cancel: CancelFlag,
}

impl Context {
    pub fn ranks(&self) -> usize {
        self.comm_pids.len()
    }

    /// The system node of rank `rank`'s host CPU, where its relay sits on one.
    pub fn host(&self, rank: usize) -> Option<usize> {
        let (relay, on_host) = self.relays[rank];
        on_host.then(|| self.placements[relay].node)
    }

    /// Rank `rank`'s GPU, as a model script sees it.
    pub fn gpu(&self, rank: usize) -> Gpu<'_> {
        Gpu {
            name: &self.gpus[rank],
            peak: self.peaks[rank].as_ref(),
        }
    }
}
