//! A process's plans of its collective calls, planned once per call and reused while the
//! call repeats: one path and one cache for a script's `sim.<collective>` ([`crate::sim`])
//! and a Chakra trace's COMM_COLL (crate hetsim-replay). Planning a call under NCCL builds
//! its trees and rings over every member (`hetsim_simulator::collectives::plan_nccl`) and
//! costs more than running it: a training trace, or a script's loop, repeats the same call
//! every step.

use std::rc::Rc;

use hetsim_simulator::collectives::{self, Collective, Step};
use hetsim_simulator::word_hash::WordMap;
use hetsim_simulator::Pid;

use super::{pipeline, Choice, Topology};

/// The members of a call, named without copying them: every process of the run, or a
/// member list the run's context holds (a label's processes, a trace's process group) by its
/// address and length, which stay fixed while the run (and so the cache) lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    All,
    Listed(usize, usize),
}

impl Group {
    /// `members`, a list the run's context holds for the whole run.
    pub fn listed(members: &[usize]) -> Self {
        Group::Listed(members.as_ptr() as usize, members.len())
    }
}

/// What identifies a process's plan of a call within a run: the plan is a pure function of
/// these and the run's fixed facts (placements, fabric, default algorithm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Call {
    pub collective: Collective,
    pub group: Group,
    /// The root's position among the members.
    pub root: usize,
    /// This process's position among the members.
    pub me: usize,
    bytes: u64,
    pub choice: Choice,
}

impl Call {
    pub fn new(
        collective: Collective,
        group: Group,
        root: usize,
        me: usize,
        bytes: f64,
        choice: Choice,
    ) -> Self {
        Call {
            collective,
            group,
            root,
            me,
            bytes: bytes.to_bits(),
            choice,
        }
    }

    pub fn bytes(&self) -> f64 {
        f64::from_bits(self.bytes)
    }
}

/// A process's part of one call: its steps, and how the call runs ("ring", "tree ll128").
#[derive(Debug, PartialEq)]
pub struct Planned {
    pub steps: Vec<Step>,
    pub how: String,
}

/// This process's plan of `call` over `members` (process ids; `node_of` places them on the
/// system's nodes): the plain algorithm's steps, or NCCL's pipeline from the fabric
/// ([`pipeline`]); an error names what the fabric cannot run.
pub fn plan(
    call: &Call,
    members: &[Pid],
    node_of: impl Fn(Pid) -> usize,
    topology: &Topology,
) -> Result<Planned, String> {
    let (collective, root, me, bytes) = (call.collective, call.root, call.me, call.bytes());
    Ok(match call.choice {
        Choice::Plain(algorithm) => Planned {
            steps: collectives::plan(collective, algorithm, members, root, me, bytes),
            how: format!("{algorithm:?}").to_lowercase(),
        },
        Choice::Nccl(asked) => {
            let nodes: Vec<usize> = members.iter().map(|&p| node_of(p)).collect();
            let (pipeline, algo, proto) = pipeline(topology, collective, &nodes, bytes, asked)?;
            let groups = topology.groups(&nodes);
            Planned {
                steps: collectives::plan_nccl(collective, &pipeline, members, &groups, root, me, bytes),
                how: format!("{algo:?} {proto:?}").to_lowercase(),
            }
        }
    })
}

#[cfg(test)]
thread_local! {
    /// Plans made on this thread (a run's processes share its thread): tests count them.
    pub(crate) static PLANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A process's plans of the calls it met (a script's process, a trace rank's communication
/// stream), bounded: past [`Plans::HELD`] steps held the cache starts again. Empty, it
/// allocates nothing: a million processes that never call a collective pay its 40 bytes.
#[derive(Clone, Debug, Default)]
pub struct Plans {
    plans: WordMap<Call, Rc<Planned>>,
    held: usize,
}

impl Plans {
    /// About 1.5 MiB of steps a process.
    pub const HELD: usize = 1 << 16;

    /// The plan of `call`, from the cache or from `plan` (kept unless it fails).
    pub fn get_or_plan(
        &mut self,
        call: Call,
        plan: impl FnOnce() -> Result<Planned, String>,
    ) -> Result<Rc<Planned>, String> {
        if let Some(found) = self.plans.get(&call) {
            return Ok(found.clone());
        }
        let planned = Rc::new(plan()?);
        #[cfg(test)]
        PLANNED.with(|n| n.set(n.get() + 1));
        if self.held + planned.steps.len() > Self::HELD {
            self.plans.clear();
            self.held = 0;
        }
        self.held += planned.steps.len();
        self.plans.insert(call, planned.clone());
        Ok(planned)
    }
}

#[cfg(test)]
mod tests {
    use super::{Call, Group, Planned, Plans};
    use crate::nccl::{Asked, Choice};
    use hetsim_models::nccl::Proto;
    use hetsim_simulator::collectives::{Algorithm, Collective, Step};

    fn planned(steps: usize) -> Result<Planned, String> {
        Ok(Planned {
            steps: vec![Step::Flush; steps],
            how: "ring".to_owned(),
        })
    }

    fn call(group: Group, root: usize, bytes: f64, choice: Choice) -> Call {
        Call::new(Collective::Allreduce, group, root, 1, bytes, choice)
    }

    #[test]
    fn a_call_is_planned_once_and_calls_differing_in_any_part_are_not_conflated() {
        let members = [3, 4, 5];
        let nccl = Choice::Nccl(Asked::default());
        let ll = Choice::Nccl(Asked {
            algo: None,
            proto: Some(Proto::Ll),
        });
        let calls = [
            call(Group::All, 0, 1024.0, nccl),
            call(Group::All, 0, 2048.0, nccl),
            call(Group::All, 1, 1024.0, nccl),
            call(Group::All, 0, 1024.0, ll),
            call(Group::All, 0, 1024.0, Choice::Plain(Algorithm::Ring)),
            call(Group::listed(&members), 0, 1024.0, nccl),
        ];
        let mut plans = Plans::default();
        let mut planning = 0;
        for _ in 0..3 {
            for c in calls {
                let plan = plans
                    .get_or_plan(c, || {
                        planning += 1;
                        planned(4)
                    })
                    .expect("plans");
                assert_eq!(plan.steps.len(), 4);
            }
        }
        assert_eq!((planning, plans.plans.len()), (calls.len(), calls.len()));
    }

    #[test]
    fn a_failed_plan_is_not_kept_and_the_cache_starts_again_when_full() {
        let mut plans = Plans::default();
        let nccl = Choice::Nccl(Asked::default());
        for _ in 0..2 {
            let e = plans.get_or_plan(call(Group::All, 0, 0.0, nccl), || Err("no group".to_owned()));
            assert_eq!(e.expect_err("fails"), "no group");
        }
        assert!(plans.plans.is_empty());
        plans
            .get_or_plan(call(Group::All, 0, 1.0, nccl), || planned(4))
            .expect("plans");
        plans
            .get_or_plan(call(Group::All, 0, 2.0, nccl), || planned(Plans::HELD))
            .expect("plans");
        assert_eq!((plans.plans.len(), plans.held), (1, Plans::HELD));
    }
}
