//! One replay end to end: the rank files read into graphs, the system resolved, four
//! engine processes placed per rank (its GPU, communication and CPU streams on the node of
//! the label's r-th process, its relay there or on the GPU's host), the engine run, and the
//! report.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use hetsim_chakra::{Groups, RankReader};
use hetsim_models::catalog::ComponentKind;
use hetsim_scripting::computational::{Models, Timing};
use hetsim_scripting::kernels::KernelLibrary;
use hetsim_scripting::nccl::Topology;
use hetsim_scripting::sandbox::SliceClock;
use hetsim_scripting::{platform, CancelFlag, Limits, RunReport};
use hetsim_simulator::collectives::Algorithm;
use hetsim_simulator::{place, simulate, Options, Placement, PlatformError, Process, SimError};
use hetsim_system::System;

use crate::context::{Context, P2p};
use crate::error::ReplayError;
use crate::feed::{self, Feed};
use crate::graph::{Graph, GraphError};
use crate::kind::{Stream, STREAMS};
use crate::model::ScriptModel;
use crate::nodes::Nodes;
use crate::policy::{Peak, Policy};
use crate::rank::RankState;
use crate::report::{RankReport, ReplayReport};
use crate::stream::{Relay, StreamProcess};

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// The label whose r-th process runs rank r.
    pub label: String,
    pub policy: Policy,
    /// The policy as the user wrote it, for the report.
    pub policy_text: String,
    /// Process groups given beside the trace (a communicator-group JSON): they add to the
    /// groups of the trace's METADATA nodes and replace those of the same name.
    pub groups: Groups,
    pub algorithm: Algorithm,
    /// Follow control dependencies (breaking the cycles they close); false: data
    /// dependencies only, as Chakra's feeder reads a trace.
    pub follow_ctrl: bool,
    pub engine: Options,
    /// Set from another thread to stop the replay (it then fails with
    /// [`hetsim_scripting::CANCELLED`]).
    pub cancel: CancelFlag,
    /// A rank's file in dependency order with at least this many nodes is read as the run
    /// goes (crate::feed); a smaller one is read whole, since its graph costs less than
    /// the open file's buffers (64 KiB, twice with gzip).
    pub feed_from_nodes: u64,
}

/// At most this many ranks' files are held open to be read as the run goes (a process's
/// open files are commonly limited to 1,024); the ranks after them are read whole.
const MAX_FED_RANKS: usize = 512;

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            label: "GPU".to_owned(),
            policy: Policy::Replay,
            policy_text: "replay".to_owned(),
            groups: Groups::default(),
            algorithm: Algorithm::Nccl,
            follow_ctrl: true,
            engine: Options::default(),
            cancel: CancelFlag::default(),
            feed_from_nodes: 4096,
        }
    }
}

/// Reads rank `rank`'s file into its graph, and the process groups its METADATA nodes
/// state.
fn graph(file: &Path, rank: usize, follow_ctrl: bool) -> Result<(Graph, Groups), ReplayError> {
    let mut reader = RankReader::open(file, rank)?;
    let nodes = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
    let graph = Graph::build(nodes, follow_ctrl).map_err(|e| match e {
        GraphError::Duplicate(id) => ReplayError::Duplicate {
            file: file.to_owned(),
            rank,
            id,
        },
        GraphError::Cycle(nodes) => ReplayError::Cycle {
            file: file.to_owned(),
            rank,
            nodes,
        },
    })?;
    Ok((graph, reader.groups))
}

/// The run's process groups: those the ranks' METADATA nodes state (a name two ranks give
/// different ranks is an error naming the second file), then `given` (a communicator-group
/// JSON), whose groups replace the trace's of the same name.
fn groups(files: &[PathBuf], per_rank: Vec<Groups>, given: &Groups) -> Result<Groups, ReplayError> {
    let mut all = Groups::default();
    for (file, groups) in files.iter().zip(&per_rank) {
        all.merge(groups)
            .map_err(|why| ReplayError::Other(format!("{}: {why}", file.display())))?;
    }
    all.0.extend(given.0.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(all)
}

/// The CPU node linked directly to `node`, its host, if any.
fn host_of(system: &System, node: usize) -> Option<usize> {
    system.links.iter().find_map(|(_, [a, b])| {
        let other = if *a == node {
            *b
        } else if *b == node {
            *a
        } else {
            return None;
        };
        (system.nodes[other].component.kind == ComponentKind::Cpu).then_some(other)
    })
}

/// Rank `rank`'s nodes, read as the run goes where its file is in dependency order and large
/// enough (crate::feed) and `feed` allows, else its whole graph; and the process groups its
/// METADATA nodes state.
fn rank_nodes(
    file: &Path,
    rank: usize,
    options: &ReplayOptions,
    feed: bool,
) -> Result<(Nodes, Groups), ReplayError> {
    if feed {
        if let Some(mut scan) = feed::scan(file, rank, options.follow_ctrl)? {
            if scan.nodes >= options.feed_from_nodes {
                let groups = std::mem::take(&mut scan.groups);
                return Ok((Nodes::Fed(Box::new(Feed::open(file, rank, scan)?)), groups));
            }
        }
    }
    let (graph, groups) = graph(file, rank, options.follow_ctrl)?;
    Ok((Nodes::whole(graph), groups))
}

/// Replays the trace whose rank files are `files` (rank r in `files[r]`) on `system`.
pub fn replay(
    files: &[PathBuf],
    system: &System,
    options: &ReplayOptions,
) -> Result<ReplayReport, ReplayError> {
    let mut nodes = Vec::with_capacity(files.len());
    let mut per_rank = Vec::with_capacity(files.len());
    let mut fed = 0;
    for (rank, file) in files.iter().enumerate() {
        let (n, groups) = rank_nodes(file, rank, options, fed < MAX_FED_RANKS)?;
        fed += usize::from(matches!(n, Nodes::Fed(_)));
        nodes.push(n);
        per_rank.push(groups);
    }
    let groups = groups(files, per_rank, &options.groups)?;
    let n = nodes.len();
    let platform = platform(system)?;
    let labels = BTreeMap::from([(options.label.clone(), n as u64)]);
    let base = place(&platform, &labels).map_err(|e| match e {
        PlatformError::Capacity { label, capacity, .. } => ReplayError::Ranks {
            ranks: n,
            label,
            capacity,
        },
        other => ReplayError::Engine(SimError::Platform(other)),
    })?;
    // Pids: GPU streams 0..n (the label's own, so the report's rows of the label are the
    // ranks' GPUs), communication streams n..2n, CPU streams 2n..3n, relays 3n..4n.
    let label = &options.label;
    let mut placements: Vec<Placement> = Vec::with_capacity(4 * n);
    let mut relays = Vec::with_capacity(n);
    for (suffix, _) in [("", 0), (".comm", 1), (".cpu", 2)] {
        let name: Arc<str> = Arc::from(format!("{label}{suffix}"));
        placements.extend(base.iter().map(|p| Placement {
            label: name.clone(),
            ..p.clone()
        }));
    }
    let relay_label: Arc<str> = Arc::from(format!("{label}.relay"));
    for (r, p) in base.iter().enumerate() {
        let host = host_of(system, p.node);
        let (node, unit) = match host {
            Some(h) => {
                let (count, gpu_count) = (
                    system.nodes[h].spec.count.max(1),
                    system.nodes[p.node].spec.count.max(1),
                );
                let unit =
                    (u64::from(p.unit) * u64::from(count) / u64::from(gpu_count)).min(u64::from(count) - 1);
                (h, u32::try_from(unit).unwrap_or(0))
            }
            None => (p.node, p.unit),
        };
        relays.push((3 * n + r, host.is_some()));
        placements.push(Placement {
            label: relay_label.clone(),
            rank: r as u64,
            node,
            unit,
        });
    }
    let peaks = base
        .iter()
        .map(|p| {
            let c = &system.nodes[p.node].component;
            (c.kind == ComponentKind::Gpu).then(|| Peak::of(c)).flatten()
        })
        .collect();
    let clock = SliceClock::new(options.cancel.clone());
    let kernels = Rc::new(KernelLibrary::for_system(system).map_err(|e| ReplayError::Other(e.to_string()))?);
    let models = Rc::new(Models::compile(
        system,
        &Limits::default(),
        &clock,
        kernels.clone(),
    )?);
    let model = match &options.policy {
        Policy::Model { path, source } => {
            Some(ScriptModel::compile(path, source, kernels).map_err(ReplayError::Other)?)
        }
        _ => None,
    };
    let gpus = base
        .iter()
        .map(|p| system.nodes[p.node].component.name.clone())
        .collect();
    let context = Rc::new(Context {
        files: files.to_vec(),
        placements: placements.clone(),
        comm_pids: (n..2 * n).collect(),
        relays: relays.clone(),
        groups,
        topology: Topology::of(system),
        algorithm: options.algorithm,
        policy: options.policy.clone(),
        peaks,
        gpus,
        model,
        models: models.clone(),
        p2p: RefCell::new(P2p::default()),
        cancel: options.cancel.clone(),
    });
    let ranks: Vec<Rc<RefCell<RankState>>> = nodes
        .into_iter()
        .enumerate()
        .map(|(r, nodes)| {
            RankState::new(r, nodes, [2 * n + r, r, n + r])
                .map(|state| Rc::new(RefCell::new(state)))
                .map_err(|why| ReplayError::Other(format!("{} (rank {r}): {why}", files[r].display())))
        })
        .collect::<Result<_, _>>()?;
    let mut processes: Vec<Box<dyn Process>> = Vec::with_capacity(4 * n);
    for stream in [Stream::Gpu, Stream::Comm, Stream::Cpu] {
        for (r, rank) in ranks.iter().enumerate() {
            processes.push(Box::new(StreamProcess::new(
                context.clone(),
                rank.clone(),
                stream,
                relays[r].0,
            )));
        }
    }
    for rank in &ranks {
        processes.push(Box::new(Relay { rank: rank.clone() }));
    }
    let results = simulate(
        &platform,
        &placements,
        processes,
        &mut Timing(models),
        &options.engine,
    )
    .map_err(|e| match e {
        SimError::Deadlock { time, .. } => ReplayError::Deadlock {
            time,
            waiting: ranks.iter().flat_map(|r| r.borrow().in_flight()).collect(),
        },
        other => ReplayError::Engine(other),
    })?;
    let p2p = context.p2p.borrow();
    let mut sends: Vec<String> = p2p
        .sent
        .iter()
        .flat_map(|(&(src, dst), q)| {
            q.iter().map(move |(tag, node)| {
                format!("rank {src} node {node}: a send to rank {dst} with tag {tag}")
            })
        })
        .chain(p2p.early.iter().flat_map(|(&(src, dst, tag), q)| {
            q.iter()
                .map(move |node| format!("rank {src} node {node}: a send to rank {dst} with tag {tag}"))
        }))
        .collect();
    if !sends.is_empty() {
        sends.sort();
        return Err(ReplayError::Unmatched { sends });
    }
    let reports = ranks
        .iter()
        .zip(files)
        .map(|(rank, file)| {
            let mut s = rank.borrow_mut();
            let finish = [s.pids[0], s.pids[1], s.pids[2]]
                .iter()
                .map(|&pid| results.processes[pid].finish_time)
                .fold(0.0, f64::max);
            let ran: u64 = STREAMS.iter().map(|&st| s.ran[st as usize]).sum::<u64>() + s.metadata;
            RankReport {
                rank: s.rank,
                file: file.to_owned(),
                nodes: s.total() as u64,
                ran,
                cpu_nodes: s.ran[Stream::Cpu as usize],
                gpu_nodes: s.ran[Stream::Gpu as usize],
                comm_nodes: s.ran[Stream::Comm as usize],
                metadata_nodes: s.metadata,
                missing_deps: s.nodes.missing_deps(),
                dropped_ctrl: s.nodes.dropped_ctrl(),
                kept_recorded: s.kept_recorded,
                fp32_fallback: s.fp32_fallback,
                finish_time: finish,
                cpu_time: s.busy.time(Stream::Cpu),
                compute_time: s.busy.time(Stream::Gpu),
                comm_time: s.busy.time(Stream::Comm),
                exposed_comm: s.busy.exposed(),
            }
        })
        .collect();
    Ok(ReplayReport {
        run: RunReport {
            results,
            log: Vec::new(),
            log_dropped: 0,
            activities: Vec::new(),
        },
        policy: options.policy_text.clone(),
        ranks: reports,
    })
}
