//! What a node asks of the engine, as a list of actions its stream runs in order.
//!
//! - COMP: a compute of the policy's time (GPU) or a sleep of the recorded time, or the
//!   model's `cpu_time` (CPU op);
//! - COMM_COLL: hetsim's plan of the collective over the group's members, exactly as a
//!   script's `sim.<collective>` runs it. `comm_size` is read as ASTRA-sim reads it, the
//!   rank's input buffer (all-reduce, reduce-scatter, broadcast, reduce: the whole value;
//!   all-gather: the rank's share, `n · comm_size` gathered; all-to-all: what a rank sends in
//!   all, `comm_size / n` to each peer; gather and scatter: one rank's share), and handed to
//!   the plan as `sim.<collective>` takes its size (crate hetsim-scripting's
//!   `Sim::collective`): the run's algorithm (NCCL's choice by default, its pipeline from the
//!   system's fabric), the same steps, sends tracked where the plan flushes;
//! - COMM_SEND: a message of `comm_size` bytes to `comm_dst`'s communication stream,
//!   waited for until delivered; COMM_RECV: the message from `comm_src` with `comm_tag`;
//! - MEM_LOAD / MEM_STORE: `tensor_size` bytes between the GPU and its host (host to
//!   device for a load), waited for.

use std::collections::VecDeque;
use std::rc::Rc;

use hetsim_chakra::proto::comm_type;
use hetsim_chakra::{NodeKind, TraceNode};
use hetsim_scripting::computational::Timed;
use hetsim_scripting::nccl::{self, Choice};
use hetsim_simulator::collectives::{self, Collective, Step};
use hetsim_simulator::word_hash::WordMap;
use hetsim_simulator::{Direction, Pid};

use crate::context::Context;
use crate::policy::gpu_time;

/// One thing a stream asks of the engine.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A compute of the policy's time, with what its model says of it (power, error bar).
    Compute(Timed),
    Sleep(f64),
    Send {
        to: Pid,
        bytes: f64,
        tracked: bool,
        direction: Option<Direction>,
    },
    Receive(Pid),
    /// Wait for the op's tracked sends.
    Flush,
    /// A point-to-point send: announce its tag, then send and wait.
    Announce {
        dst: usize,
        tag: i64,
    },
    /// The receive of the message from rank `src` with `tag`.
    Tagged {
        src: usize,
        tag: i64,
    },
    /// Wait until the engine's clock reaches the stream's (an empty wait).
    Sync,
    /// Record the collective's span (for traces).
    Mark(String),
}

fn collective_of(value: i64) -> Option<Collective> {
    Some(match value {
        comm_type::ALL_REDUCE => Collective::Allreduce,
        comm_type::REDUCE => Collective::Reduce,
        comm_type::ALL_GATHER => Collective::Allgather,
        comm_type::GATHER => Collective::Gather,
        comm_type::SCATTER => Collective::Scatter,
        comm_type::BROADCAST => Collective::Broadcast,
        comm_type::ALL_TO_ALL => Collective::Alltoall,
        comm_type::REDUCE_SCATTER | comm_type::REDUCE_SCATTER_BLOCK => Collective::ReduceScatter,
        comm_type::BARRIER => Collective::Barrier,
        _ => return None,
    })
}

fn rank_attr(value: Option<i64>, what: &str, ranks: usize) -> Result<usize, String> {
    let v = value.ok_or_else(|| format!("no `{what}` attribute"))?;
    usize::try_from(v)
        .ok()
        .filter(|&r| r < ranks)
        .ok_or_else(|| format!("`{what}` {v} is not a rank of the trace (0 to {})", ranks - 1))
}

/// What the report counts of a node's time (crate::policy::GpuTime).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counted {
    pub kept_recorded: bool,
    pub fallback: bool,
}

/// Appends the actions of `node` on `rank` to `out` (a stream's buffer, reused from node to
/// node); returns what the report counts of its time. An error says what of the node is
/// wrong.
pub fn actions(
    context: &Context,
    plans: &mut Plans,
    rank: usize,
    node: &TraceNode,
    out: &mut VecDeque<Action>,
) -> Result<Counted, String> {
    let a = &node.attributes;
    let recorded = node.duration_micros as f64 * 1e-6;
    let mut counted = Counted::default();
    match node.kind {
        _ if a.is_cpu_op => {
            let modelled = match &context.model {
                Some(model) => {
                    model.cpu_time(node, &context.gpu(rank), &context.models, context.host(rank))?
                }
                None => None,
            };
            out.push_back(Action::Sleep(modelled.unwrap_or(recorded)));
        }
        NodeKind::Metadata => {}
        NodeKind::Comp => {
            let modelled = match &context.model {
                Some(model) => {
                    let system_node = context.placements[rank].node;
                    model.gpu_time(node, &context.gpu(rank), &context.models, system_node)?
                }
                None => None,
            };
            let timed = modelled.unwrap_or_else(|| {
                let t = gpu_time(&context.policy, node, context.peaks[rank].as_ref());
                counted = Counted {
                    kept_recorded: t.kept_recorded,
                    fallback: t.fallback,
                };
                Timed::bare(t.seconds)
            });
            out.push_back(Action::Compute(timed));
        }
        NodeKind::CommColl => collective(context, plans, rank, node, out)?,
        NodeKind::CommSend => {
            let dst = rank_attr(a.comm_dst, "comm_dst", context.ranks())?;
            let bytes = a.comm_size.ok_or("no `comm_size` attribute")?;
            out.extend([
                Action::Announce {
                    dst,
                    tag: a.comm_tag.unwrap_or(0),
                },
                Action::Send {
                    to: context.comm_pids[dst],
                    bytes,
                    tracked: true,
                    direction: None,
                },
                Action::Flush,
            ]);
        }
        NodeKind::CommRecv => {
            let src = rank_attr(a.comm_src, "comm_src", context.ranks())?;
            out.push_back(Action::Tagged {
                src,
                tag: a.comm_tag.unwrap_or(0),
            });
        }
        NodeKind::MemLoad | NodeKind::MemStore => {
            let bytes = a.tensor_size.or(a.comm_size).unwrap_or(0.0);
            let (relay, on_host) = context.relays[rank];
            if bytes > 0.0 && on_host {
                let direction = if node.kind == NodeKind::MemLoad {
                    Direction::HostToDevice
                } else {
                    Direction::DeviceToHost
                };
                out.extend([
                    Action::Send {
                        to: relay,
                        bytes,
                        tracked: true,
                        direction: Some(direction),
                    },
                    Action::Flush,
                ]);
            }
        }
    }
    Ok(counted)
}

/// A rank's part of one collective call: its actions without the closing mark, and what
/// the mark says of the call.
#[derive(Debug)]
struct Plan {
    actions: Vec<Action>,
    label: String,
}

/// What identifies a rank's plan of a call within a run: the call's `comm_type`, group and
/// size. The plan is a pure function of these, the rank and the run's fixed facts.
type PlanKey = (i64, Option<String>, u64);

/// A rank's plans of the collective calls it met, planned once each (its communication
/// stream holds them: the only stream that runs collectives). A training trace calls
/// the same collectives every step, and planning one (NCCL's trees and rings over every
/// member) costs more than running it: half of a 64-rank replay's time before this cache.
#[derive(Debug, Default)]
pub struct Plans {
    plans: WordMap<PlanKey, Rc<Plan>>,
    /// Actions held in all plans; past [`Plans::HELD`] the cache starts again.
    held: usize,
}

impl Plans {
    /// About 2.5 MiB of actions a rank.
    const HELD: usize = 1 << 16;

    fn get_or_plan(
        &mut self,
        key: PlanKey,
        plan: impl FnOnce() -> Result<Plan, String>,
    ) -> Result<Rc<Plan>, String> {
        if let Some(found) = self.plans.get(&key) {
            return Ok(found.clone());
        }
        let planned = Rc::new(plan()?);
        if self.held + planned.actions.len() > Self::HELD {
            self.plans.clear();
            self.held = 0;
        }
        self.held += planned.actions.len();
        self.plans.insert(key, planned.clone());
        Ok(planned)
    }
}

/// The actions of a COMM_COLL node, as `sim.<collective>` runs it: its rank's plan of the
/// call (planned once per rank and call, [`Plans`]), then the mark naming the node; appended
/// to `out`.
fn collective(
    context: &Context,
    plans: &mut Plans,
    rank: usize,
    node: &TraceNode,
    out: &mut VecDeque<Action>,
) -> Result<(), String> {
    let a = &node.attributes;
    let value = a.comm_type.ok_or("a COMM_COLL without `comm_type`")?;
    let key = (value, a.pg_name.clone(), a.comm_size.unwrap_or(0.0).to_bits());
    let plan = plans.get_or_plan(key, || plan(context, rank, node, value))?;
    out.extend(plan.actions.iter().cloned());
    out.push_back(Action::Mark(format!("{} (node {})", plan.label, node.id)));
    Ok(())
}

/// Rank `rank`'s plan of the COMM_COLL `node`, whose `comm_type` is `value`.
fn plan(context: &Context, rank: usize, node: &TraceNode, value: i64) -> Result<Plan, String> {
    let a = &node.attributes;
    let collective = collective_of(value).ok_or_else(|| format!("unknown `comm_type` {value}"))?;
    let bytes = a.comm_size.unwrap_or(0.0);
    let all: Vec<usize>;
    let ranks: &[usize] = match a.pg_name.as_deref().and_then(|pg| context.groups.get(pg)) {
        Some(group) => group,
        None => {
            all = (0..context.ranks()).collect();
            &all
        }
    };
    if let Some(&r) = ranks.iter().find(|&&r| r >= context.ranks()) {
        return Err(format!(
            "its group {:?} names rank {r}, but the trace has ranks 0 to {}",
            a.pg_name.as_deref().unwrap_or(""),
            context.ranks() - 1
        ));
    }
    let me = ranks.iter().position(|&r| r == rank).ok_or_else(|| {
        format!(
            "rank {rank} is not in its group {:?} ({ranks:?})",
            a.pg_name.as_deref().unwrap_or("")
        )
    })?;
    if ranks.len() < 2 {
        // Nothing to exchange (a one-rank trace cut from a larger job, say): no time.
        return Ok(Plan {
            actions: Vec::new(),
            label: format!("{collective} alone, {bytes} bytes"),
        });
    }
    let members: Vec<Pid> = ranks.iter().map(|&r| context.comm_pids[r]).collect();
    // comm_size is the rank's input; `sim.allgather` takes the gathered whole and
    // `sim.alltoall` what a member sends each other one.
    let bytes = match collective {
        Collective::Allgather => bytes * ranks.len() as f64,
        Collective::Alltoall => bytes / ranks.len() as f64,
        _ => bytes,
    };
    let call = format!("{collective}");
    let (steps, how) = match nccl::choice(&rhai::Map::new(), context.algorithm, collective, &call)? {
        Choice::Plain(algorithm) => (
            collectives::plan(collective, algorithm, &members, 0, me, bytes),
            format!("{algorithm:?}").to_lowercase(),
        ),
        Choice::Nccl(asked) => {
            let nodes: Vec<usize> = members.iter().map(|&p| context.placements[p].node).collect();
            let (pipeline, algo, proto) =
                nccl::pipeline(&context.topology, collective, &nodes, bytes, asked)?;
            let groups = context.topology.groups(&nodes);
            (
                collectives::plan_nccl(collective, &pipeline, &members, &groups, 0, me, bytes),
                format!("{algo:?} {proto:?}").to_lowercase(),
            )
        }
    };
    let tracked = steps.contains(&Step::Flush);
    let mut actions: Vec<Action> = steps
        .into_iter()
        .filter_map(|step| match step {
            Step::Send { to, bytes } => Some(Action::Send {
                to,
                bytes,
                tracked,
                direction: None,
            }),
            Step::Receive { from } => Some(Action::Receive(from)),
            Step::Delay { seconds } if seconds > 0.0 => Some(Action::Sleep(seconds)),
            Step::Delay { .. } => None,
            Step::Flush => Some(Action::Flush),
        })
        .collect();
    if tracked {
        actions.push(Action::Flush);
    }
    Ok(Plan {
        actions,
        label: format!("{collective} {how} {bytes} bytes"),
    })
}

#[cfg(test)]
mod tests {
    use super::{Action, Plan, Plans};

    fn planned(actions: usize) -> Result<Plan, String> {
        Ok(Plan {
            actions: vec![Action::Sync; actions],
            label: "all_reduce".to_owned(),
        })
    }

    #[test]
    fn a_call_is_planned_once_and_the_cache_starts_again_when_full() {
        let mut plans = Plans::default();
        let mut calls = 0;
        for _ in 0..3 {
            for size in [1024f64, 2048.0] {
                let key = (0, Some("dp".to_owned()), size.to_bits());
                let plan = plans
                    .get_or_plan(key, || {
                        calls += 1;
                        planned(4)
                    })
                    .expect("plans");
                assert_eq!(plan.actions.len(), 4);
            }
        }
        assert_eq!(calls, 2);
        // A failed plan is not kept: the next call plans again (and fails again).
        for _ in 0..2 {
            let e = plans.get_or_plan((1, None, 0), || Err("no group".to_owned()));
            assert_eq!(e.expect_err("fails"), "no group");
        }
        assert_eq!(plans.plans.len(), 2);
        plans
            .get_or_plan((2, None, 0), || planned(Plans::HELD))
            .expect("plans");
        assert_eq!((plans.plans.len(), plans.held), (1, Plans::HELD));
    }
}
