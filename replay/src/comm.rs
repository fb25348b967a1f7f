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

use hetsim_chakra::proto::comm_type;
use hetsim_chakra::{NodeKind, TraceNode};
use hetsim_scripting::computational::Timed;
use hetsim_scripting::nccl;
use hetsim_scripting::nccl::plans::{self, Call, Group, Plans};
use hetsim_simulator::collectives::{Collective, Step};
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

/// The actions of a COMM_COLL node, as `sim.<collective>` runs it: its rank's plan of the
/// call (planned once per rank and call, hetsim-scripting's [`Plans`], which its
/// communication stream holds: the only stream that runs collectives), then the mark naming
/// the node; appended to `out`.
fn collective(
    context: &Context,
    plans: &mut Plans,
    rank: usize,
    node: &TraceNode,
    out: &mut VecDeque<Action>,
) -> Result<(), String> {
    let a = &node.attributes;
    let value = a.comm_type.ok_or("a COMM_COLL without `comm_type`")?;
    let collective = collective_of(value).ok_or_else(|| format!("unknown `comm_type` {value}"))?;
    let bytes = a.comm_size.unwrap_or(0.0);
    let group = a.pg_name.as_deref().and_then(|pg| context.groups.get(pg));
    let all: Vec<usize>;
    let ranks: &[usize] = match group {
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
        out.push_back(Action::Mark(format!(
            "{collective} alone, {bytes} bytes (node {})",
            node.id
        )));
        return Ok(());
    }
    // comm_size is the rank's input; `sim.allgather` takes the gathered whole and
    // `sim.alltoall` what a member sends each other one.
    let bytes = match collective {
        Collective::Allgather => bytes * ranks.len() as f64,
        Collective::Alltoall => bytes / ranks.len() as f64,
        _ => bytes,
    };
    let choice = nccl::choice(&rhai::Map::new(), context.algorithm, collective, "")?;
    let group = group.map_or(Group::All, Group::listed);
    let call = Call::new(collective, group, 0, me, bytes, choice);
    let planned = plans.get_or_plan(call, || {
        let members: Vec<Pid> = ranks.iter().map(|&r| context.comm_pids[r]).collect();
        plans::plan(&call, &members, |p| context.placements[p].node, &context.topology)
    })?;
    push_steps(&planned.steps, out);
    out.push_back(Action::Mark(format!(
        "{collective} {} {bytes} bytes (node {})",
        planned.how, node.id
    )));
    Ok(())
}

/// A plan's steps as actions: sends tracked where the plan flushes (and flushed at its end),
/// no empty delays.
fn push_steps(steps: &[Step], out: &mut VecDeque<Action>) {
    let tracked = steps.contains(&Step::Flush);
    out.extend(steps.iter().filter_map(|&step| match step {
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
    }));
    if tracked {
        out.push_back(Action::Flush);
    }
}
