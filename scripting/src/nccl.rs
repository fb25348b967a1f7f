//! A collective's NCCL plan from the system: the fabric NCCL's tuner sees (NVLink islands,
//! link kinds and rates), the algorithm and protocol it picks or the call forces, and the
//! protocol's costs as a [`Pipeline`] for `hetsim_simulator::collectives::plan_nccl`.
//!
//! Hardware facts are link component attributes where a system states them, NCCL's tables
//! (`hetsim_models::nccl`) otherwise: `protocolLatencyLL`, `protocolLatencyLL128`,
//! `protocolLatencySimple` [s per step], and `nvlsRoundLatency` [s] on the NVLink component.
//! A link's kind is NVLink when its component's name says NVLink or NVSwitch, PCI when it says
//! PCIe, the network otherwise. A network port reaches SHARP when its link's other end is a
//! node whose component says `reduction = "SHARP"`; with the system's `collnet = true` the
//! tuner then weighs CollNet Direct and NVLS across NVLink islands.

use hetsim_models::catalog::ComponentKind;
use hetsim_models::nccl::{self, Algo, Fabric, Func, Hw, Proto};
use hetsim_models::params::Scalar;
use hetsim_simulator::collectives::{Algorithm, Collective, Pipeline, Shape};
use hetsim_system::{number_attribute, System};
use rhai::Map;

pub mod plans;

/// The time of one NVLS round (one chunk on every NVLS channel, 16 by default) beyond its
/// bytes [s]: **calibrated**, the one constant fitted on the DGX H100 all-reduce
/// (../shared/measurements/nccl, sizes ≥ 1 MiB, least mean relative error with NCCL's 25 µs
/// NVLS latency kept): 2.55 µs.
pub const NVLS_ROUND_LATENCY: f64 = 2.55e-6;

/// Most chunks a chain or tree call is cut into.
const MAX_CHUNKS: usize = 64;
/// Most stages an NVLS call across nodes (NVLS-Tree, NVLS with SHARP) is simulated in (each
/// then stands for several NVLS rounds and pays their latency): a plan's size, not a fitted
/// constant.
const NVLS_TREE_STAGES: usize = 256;
/// NCCL's step buffer per protocol divided into `NCCL_STEPS` = 8 slots (LL 256 KiB, LL128
/// 4.5 MiB, Simple 4 MiB; a chunk is one slot, LL's half of it is data).
fn chunk_bytes(proto: Proto) -> f64 {
    match proto {
        Proto::Ll => 262144.0 / 8.0 / 2.0,
        Proto::Ll128 => 4718592.0 / 8.0 * 120.0 / 128.0,
        Proto::Simple => 4194304.0 / 8.0,
    }
}

/// Per node: its NVLink island and the links' facts that the tuner reads.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    island: Vec<usize>,
    is_gpu: Vec<bool>,
    /// Per node: the fastest NVLink (else any) link touching it [B/s] and its kind.
    fastest: Vec<Option<(f64, Hw, usize)>>,
    /// The fastest network link of the system [B/s].
    network: f64,
    /// Per node: its fastest network link [B/s] (0: none), what a NIC's port carries.
    port: Vec<f64>,
    /// Per node: the nodes joined to it by a PCIe link (a GPU's NIC, its host).
    attached: Vec<Vec<usize>>,
    /// Per node: it has a network link to a switch that reduces (SHARP).
    sharp: Vec<bool>,
    /// NCCL's CollNet is enabled (the system's `collnet`).
    collnet: bool,
    /// `NCCL_MIN_CTAS` (the system's `nccl_min_ctas`; 0: NCCL's own channels).
    min_ctas: usize,
    latency: Vec<[Option<f64>; 3]>,
    round_latency: Vec<Option<f64>>,
}

fn kind_of(name: &str) -> Hw {
    let name = name.to_ascii_lowercase();
    if name.contains("nvlink") || name.contains("nvswitch") {
        Hw::NvLink
    } else if name.contains("pcie") {
        Hw::Pci
    } else {
        Hw::Net
    }
}

fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

impl Topology {
    pub fn of(system: &System) -> Self {
        let nodes = system.nodes.len();
        let mut parent: Vec<usize> = (0..nodes).collect();
        let mut fastest: Vec<Option<(f64, Hw, usize)>> = vec![None; nodes];
        let mut network: f64 = 0.0;
        let mut latency = Vec::new();
        let mut round_latency = Vec::new();
        let mut port = vec![0.0_f64; nodes];
        let mut attached = vec![Vec::new(); nodes];
        let reduces = |node: usize| matches!(system.nodes[node].component.attributes.get("reduction"), Some(Scalar::Text(r)) if r == "SHARP");
        let mut sharp = vec![false; nodes];
        for (index, (link, [a, b])) in system.links.iter().enumerate() {
            let hw = kind_of(&link.component.name);
            let rate = number_attribute(&link.component, "bandwidth").unwrap_or(0.0);
            let attribute = |name: &str| number_attribute(&link.component, name);
            latency.push([
                attribute("protocolLatencyLL"),
                attribute("protocolLatencyLL128"),
                attribute("protocolLatencySimple"),
            ]);
            round_latency.push(attribute("nvlsRoundLatency"));
            if hw == Hw::NvLink {
                let (ra, rb) = (root(&mut parent, *a), root(&mut parent, *b));
                parent[ra] = rb;
            }
            if hw == Hw::Net {
                network = network.max(rate);
                for end in [*a, *b] {
                    port[end] = port[end].max(rate);
                }
                sharp[*a] |= reduces(*b);
                sharp[*b] |= reduces(*a);
            }
            if hw == Hw::Pci {
                attached[*a].push(*b);
                attached[*b].push(*a);
            }
            for end in [*a, *b] {
                let better = match fastest[end] {
                    None => true,
                    Some((r, h, _)) => (hw == Hw::NvLink, rate) > (h == Hw::NvLink, r),
                };
                if better {
                    fastest[end] = Some((rate, hw, index));
                }
            }
        }
        Topology {
            island: (0..nodes).map(|i| root(&mut parent, i)).collect(),
            is_gpu: system
                .nodes
                .iter()
                .map(|n| n.component.kind == ComponentKind::Gpu)
                .collect(),
            fastest,
            network,
            port,
            attached,
            sharp,
            collnet: system.collnet,
            min_ctas: system.nccl_min_ctas.map_or(0, |n| n as usize),
            latency,
            round_latency,
        }
    }

    /// The channels (CTAs) NCCL's collectives run on: its [`nccl::CHANNELS`], or
    /// `NCCL_MIN_CTAS` where that is more (NVLS's in `nvls.cc`, the rings' and trees' in
    /// `connect.cc`).
    fn channels(&self) -> usize {
        nccl::CHANNELS.max(self.min_ctas)
    }

    /// The NVLink island of each node in `nodes`: which members share a board.
    pub fn groups(&self, nodes: &[usize]) -> Vec<usize> {
        nodes
            .iter()
            .map(|&n| self.island.get(n).copied().unwrap_or(n))
            .collect()
    }

    /// The network bandwidth of the least-connected island of `nodes` [B/s]: the ports of the
    /// NICs of its members, each NIC counted once; 0 where an island has none.
    fn node_network(&self, nodes: &[usize]) -> f64 {
        let groups = self.groups(nodes);
        let mut islands = groups.clone();
        islands.sort_unstable();
        islands.dedup();
        islands
            .iter()
            .map(|island| {
                let members = nodes.iter().zip(&groups).filter(|(_, g)| *g == island);
                let nics = self.nics(members.map(|(&n, _)| n));
                nics.iter().map(|&x| self.port[x]).sum::<f64>()
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// The NICs of `members`: a network port on a member, or on a node attached to one by
    /// PCIe; each once.
    fn nics(&self, members: impl Iterator<Item = usize>) -> Vec<usize> {
        let mut nics: Vec<usize> = members
            .flat_map(|n| {
                let attached = self.attached.get(n).map_or(&[][..], Vec::as_slice);
                std::iter::once(n).chain(attached.iter().copied())
            })
            .filter(|&x| self.port.get(x).is_some_and(|&p| p > 0.0))
            .collect();
        nics.sort_unstable();
        nics.dedup();
        nics
    }

    /// NCCL may run CollNet over `nodes`: enabled, and every NIC of them reaches SHARP.
    fn collnet(&self, nodes: &[usize]) -> bool {
        let nics = self.nics(nodes.iter().copied());
        self.collnet && !nics.is_empty() && nics.iter().all(|&x| self.sharp.get(x) == Some(&true))
    }

    /// The fabric of members on `nodes` (one per member), as NCCL's tuner sees it.
    fn fabric(&self, nodes: &[usize]) -> (Fabric, Option<usize>) {
        let mut islands = self.groups(nodes);
        islands.sort_unstable();
        islands.dedup();
        // One GPU's share of its node's NICs (NICs x port rate per node, over its GPUs).
        let ppn = nodes.len() as f64 / islands.len().max(1) as f64;
        let node_network = self.node_network(nodes);
        let link = nodes
            .iter()
            .filter_map(|&n| self.fastest.get(n).copied().flatten())
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let (rate, intra) = link.map_or((0.0, Hw::Net), |(r, h, _)| (r, h));
        let all_gpus = nodes
            .iter()
            .all(|&n| self.is_gpu.get(n).copied().unwrap_or(false));
        let fabric = Fabric {
            ranks: nodes.len(),
            nodes: islands.len().max(1),
            intra,
            intra_gbps: rate / 1e9,
            inter_gbps: if node_network > 0.0 && node_network.is_finite() {
                node_network / ppn / 1e9
            } else if self.network > 0.0 {
                self.network / 1e9
            } else {
                50.0
            },
            // Each island is one NVSwitch (or an NVLink fabric standing in for one): NVLS on
            // one island, NVLS-Tree across several.
            nvls: all_gpus && intra == Hw::NvLink,
            collnet: self.collnet(nodes),
        };
        (fabric, link.map(|l| l.2))
    }
}

fn func(collective: Collective) -> Option<Func> {
    match collective {
        Collective::Allreduce => Some(Func::AllReduce),
        Collective::Allgather => Some(Func::AllGather),
        Collective::ReduceScatter => Some(Func::ReduceScatter),
        Collective::Broadcast => Some(Func::Broadcast),
        Collective::Reduce => Some(Func::Reduce),
        _ => None,
    }
}

/// What a call asks of NCCL: an algorithm (`None`: the tuner's) and a protocol (`None`: the
/// tuner's for that algorithm).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Asked {
    pub algo: Option<Algo>,
    pub proto: Option<Proto>,
}

/// The pipeline of `collective` over members on `nodes` for `bytes` (nccl-tests' size), with
/// the algorithm and protocol that run it; an error names what the fabric cannot run.
pub fn pipeline(
    topology: &Topology,
    collective: Collective,
    nodes: &[usize],
    bytes: f64,
    asked: Asked,
) -> Result<(Pipeline, Algo, Proto), String> {
    let (fabric, link) = topology.fabric(nodes);
    let channels = topology.channels();
    let tuned = func(collective);
    let choices = |algo: Algo| {
        Proto::ALL
            .into_iter()
            .filter(move |&p| asked.proto.is_none_or(|q| q == p))
            .map(move |p| (algo, p))
    };
    let candidates: Vec<(Algo, Proto)> = match asked.algo {
        Some(a) => choices(a).collect(),
        None => Algo::ALL.into_iter().flat_map(choices).collect(),
    };
    let (algo, proto) = match tuned {
        Some(f) => candidates
            .iter()
            .copied()
            .filter_map(|(a, p)| fabric.time_us(f, a, p, bytes).map(|t| (t, a, p)))
            .min_by(|x, y| x.0.total_cmp(&y.0))
            .map(|(_, a, p)| (a, p))
            .ok_or_else(|| {
                format!(
                    "NCCL does not run {collective} as {} here ({} GPUs on {} NVLink island(s)){}",
                    describe(asked),
                    fabric.ranks,
                    fabric.nodes,
                    match asked.algo {
                        Some(Algo::CollNetDirect) => COLLNET_NEEDS,
                        Some(Algo::Nvls | Algo::NvlsTree) if fabric.nvls && !fabric.nvls_possible() => {
                            NVLS_FEW_GPUS
                        }
                        Some(Algo::Nvls) if fabric.nodes > 1 => NVLS_ACROSS_NEEDS,
                        _ => "",
                    }
                )
            })?,
        // All-to-all and the collectives NCCL lacks: point to point, Simple.
        None => (Algo::Ring, asked.proto.unwrap_or(Proto::Simple)),
    };
    let stated = |p: Proto| {
        link.and_then(|l| topology.latency.get(l))
            .and_then(|l| l[p as usize])
    };
    let step = |a: Algo| stated(proto).unwrap_or(fabric.intra.latency_us(a, proto) * 1e-6);
    let efficiency = if fabric.intra == Hw::NvLink {
        nccl::NVLINK_EFFICIENCY
    } else {
        1.0
    };
    let pipeline = match algo {
        Algo::Nvls | Algo::NvlsTree => Pipeline {
            shape: if algo == Algo::Nvls {
                Shape::Nvls
            } else {
                Shape::NvlsTree
            },
            wire: 1.0,
            wire_net: 1.0,
            // tuning.cc's latency: on one node the NVLink's; across nodes NVLS with SHARP also
            // the network's. NVLS-Tree pays the NVLink's: its plan's stages carry its hops
            // between nodes (the simulator's collectives/nvls_tree.rs).
            base_delay: if algo == Algo::NvlsTree {
                fabric.intra.latency_us(algo, proto)
            } else {
                fabric.latency_us(Func::AllReduce, algo, proto)
            } * 1e-6,
            step_delay: link
                .and_then(|l| topology.round_latency.get(l).copied().flatten())
                .unwrap_or(NVLS_ROUND_LATENCY),
            step_delay_net: 0.0,
            // NVLS-Tree moves a loop at a time: every channel a chunk to each head.
            chunk: if algo == Algo::NvlsTree {
                let heads = fabric.ppn();
                channels as f64 * heads * nccl::nvls_tree_chunk(bytes, fabric.nodes, heads, channels)
            } else {
                channels as f64 * nccl::nvls_chunk(bytes, channels)
            },
            // Across nodes, stages (the simulator's collectives/nvls_tree.rs and collnet.rs);
            // NVLS's rounds on one node are all simulated.
            max_chunks: if fabric.nodes == 1 {
                usize::MAX
            } else {
                NVLS_TREE_STAGES
            },
            round: if algo == Algo::NvlsTree {
                channels as f64 * nccl::nvls_chunk(bytes, channels)
            } else {
                0.0
            },
            pace: if algo == Algo::NvlsTree {
                1e-9 / fabric.nvls_tree_ceiling_gbps(channels)
            } else {
                0.0
            },
        },
        // tuning.cc's whole latency up front; the stages pay none of their own.
        Algo::CollNetDirect => Pipeline {
            shape: Shape::CollNetDirect,
            wire: proto.wire_factor() / efficiency,
            wire_net: proto.wire_factor(),
            base_delay: fabric.latency_us(Func::AllReduce, algo, proto) * 1e-6,
            step_delay: 0.0,
            step_delay_net: 0.0,
            chunk: chunk_bytes(proto) * channels as f64,
            max_chunks: MAX_CHUNKS,
            round: 0.0,
            pace: 0.0,
        },
        Algo::Ring | Algo::Tree => Pipeline {
            shape: if algo == Algo::Tree {
                Shape::Tree
            } else {
                Shape::Ring
            },
            wire: proto.wire_factor() / efficiency,
            // NCCL's NVLink efficiency is NVLink's: hops between nodes carry the protocol's.
            wire_net: proto.wire_factor(),
            base_delay: nccl::base_latency_us(algo, proto) * 1e-6,
            step_delay: step(algo),
            // A tree's hop between nodes: NCCL's network latency (tuning.cc `hwLatencies`).
            step_delay_net: Hw::Net.latency_us(algo, proto) * 1e-6,
            chunk: chunk_bytes(proto) * channels as f64,
            max_chunks: MAX_CHUNKS,
            round: 0.0,
            // LL and LL128 no faster than NCCL's bus bandwidth for them: their caps (llMaxBws,
            // the per-channel maxima) and the tree's efficiency by size bound what the warps
            // that poll the flags move, whatever the links carry. Simple runs at the links'
            // rate: measured rings across two boards pass tuning.cc's figure
            // (docs/VALIDATION-NETWORK.md, "Protocol caps").
            pace: match (tuned, proto) {
                (Some(f), Proto::Ll | Proto::Ll128) => fabric
                    .bus_bandwidth_at(f, algo, proto, bytes)
                    .map_or(0.0, |bus| 1e-9 / bus),
                _ => 0.0,
            },
        },
    };
    Ok((pipeline, algo, proto))
}

/// What CollNet Direct needs, for the error that refuses it.
const COLLNET_NEEDS: &str = "; CollNet Direct needs the system's `collnet = true`, every GPU's NIC on a switch whose component says `reduction = \"SHARP\"`, each node an NVSwitch island and 2 or more of them, and runs all-reduce with Simple only";

/// Why NVLS is refused on islands of one or two GPUs.
const NVLS_FEW_GPUS: &str =
    "; NCCL sets NVLS up only where an NVLink island has more than two of the call's GPUs (nvls.cc)";

/// What NVLS across NVLink islands needs, for the error that refuses it.
const NVLS_ACROSS_NEEDS: &str = "; NVLS across NVLink islands needs CollNet: the system's `collnet = true` and every GPU's NIC on a switch whose component says `reduction = \"SHARP\"`, and runs all-reduce only";

fn describe(asked: Asked) -> String {
    format!(
        "{}/{}",
        asked.algo.map_or("any algorithm", name),
        asked.proto.map_or("any protocol", Proto::as_str)
    )
}

/// An algorithm's name as calls write it.
pub fn name(algo: Algo) -> &'static str {
    match algo {
        Algo::Tree => "tree",
        Algo::Ring => "ring",
        Algo::Nvls => "nvls",
        Algo::NvlsTree => "nvlstree",
        Algo::CollNetDirect => "collnetdirect",
    }
}

/// How a collective call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Choice {
    Plain(Algorithm),
    Nccl(Asked),
}

fn text(value: &rhai::Dynamic, what: &str) -> Result<String, String> {
    value
        .clone()
        .try_cast::<rhai::ImmutableString>()
        .map(|s| s.to_string())
        .ok_or_else(|| format!("{what}: expected a string, got {}", value.type_name()))
}

/// The call's `algorithm` and `protocol`, or the run's default.
pub fn choice(
    options: &Map,
    default: Algorithm,
    collective: Collective,
    call: &str,
) -> Result<Choice, String> {
    let protocol = match options.get("protocol") {
        Some(p) => {
            let name = text(p, &format!("{call}: option `protocol`"))?;
            Some(
                Proto::parse(&name)
                    .ok_or_else(|| format!("{call}: protocol `{name}` is not LL, LL128 or Simple"))?,
            )
        }
        None => None,
    };
    let name = match options.get("algorithm") {
        Some(a) => text(a, &format!("{call}: option `algorithm`"))?,
        None if protocol.is_some() => "nccl".to_owned(),
        None => {
            return Ok(match default {
                // NCCL has no barrier, scatter or gather: those stay binomial.
                Algorithm::Nccl
                    if matches!(
                        collective,
                        Collective::Barrier | Collective::Scatter | Collective::Gather
                    ) =>
                {
                    Choice::Plain(Algorithm::Binomial)
                }
                Algorithm::Nccl => Choice::Nccl(Asked::default()),
                plain => Choice::Plain(plain),
            });
        }
    };
    let algo = match name.to_ascii_lowercase().as_str() {
        "tree" => Some(Algo::Tree),
        "nvls" => Some(Algo::Nvls),
        "nvlstree" | "nvls_tree" | "nvls-tree" => Some(Algo::NvlsTree),
        "collnetdirect" | "collnet_direct" | "collnet-direct" | "collnet" => Some(Algo::CollNetDirect),
        "ring" if protocol.is_some() => Some(Algo::Ring),
        _ => match Algorithm::parse(&name) {
            Some(Algorithm::Nccl) => None,
            Some(plain) if protocol.is_none() => return Ok(Choice::Plain(plain)),
            Some(_) => return Err(format!("{call}: algorithm `{name}` takes no protocol")),
            None => {
                return Err(format!(
                    "{call}: algorithm `{name}` is not flat, binomial, ring, tree, nvls, nvlstree, collnetdirect or nccl"
                ))
            }
        },
    };
    Ok(Choice::Nccl(Asked {
        algo,
        proto: protocol,
    }))
}
