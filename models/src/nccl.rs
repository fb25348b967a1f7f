//! NCCL's own cost model of its collectives (the "tuner"), as NCCL 2.2x writes it in
//! `src/graph/tuning.cc` (`ncclTopoTuneModel`, `ncclTopoGetAlgoTime`) and
//! `src/enqueue.cc` (`topoGetAlgoInfo`, the NVLS chunk size): for a collective, a size, the
//! GPU count and the fabric, the latency [µs] and bandwidth [GB/s] of every algorithm and
//! protocol, and the pair with the least `latency + bytes / (1000 · bandwidth)`, which is
//! the one NCCL runs when nothing forces another.
//!
//! Only the facts are taken over (the tables' numbers and the formulas' shape); the simulator
//! does not use these times, it runs the chosen algorithm as messages (see
//! `hetsim_simulator::collectives`). CollNet Direct (SHARP: the InfiniBand switches reduce)
//! is in where NCCL would run it: several nodes, each an NVSwitch island, and CollNet
//! enabled (the SHARP plugin and `NCCL_COLLNET_ENABLE=1`, a system file's `collnet = true`).
//! So is NVLS across nodes (NVLS inside each node, SHARP between them), which NCCL also runs
//! only with CollNet. Left out: CollNet Chain (systems without NVSwitch) and PAT (one GPU per
//! node). The tree "correction
//! factors" of medium sizes and the ring "plateau" factor are in. NVLS-Tree (NVLS inside each
//! node, a double binary tree between nodes) is in as NCCL 2.28's tuning.cc writes it
//! (`perChMaxNVLSTreeBws`, the 2-node factor of its network bandwidth, 20.9 µs per network
//! hop); NCCL 2.26 weighed it differently (its bus bandwidth × 5/6, 14 µs a hop).

/// NCCL's algorithms that the simulator runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algo {
    /// Double binary tree (all-reduce only).
    Tree,
    Ring,
    /// NVLink SHARP: in-switch reduction and multicast on an NVSwitch (Hopper and later).
    Nvls,
    /// NVLS inside each node and a double binary tree between nodes (all-reduce, 2+ nodes).
    NvlsTree,
    /// CollNet Direct (all-reduce, 2+ nodes): every GPU of a node heads a share of the value,
    /// gathered to it over NVLink and reduced across nodes by the network's switches (SHARP).
    CollNetDirect,
}

impl Algo {
    /// In NCCL's order (`NCCL_ALGO_TREE`, `_RING`, `_COLLNET_DIRECT`, `_NVLS`, `_NVLS_TREE`),
    /// which breaks ties.
    pub const ALL: [Algo; 5] = [
        Algo::Tree,
        Algo::Ring,
        Algo::CollNetDirect,
        Algo::Nvls,
        Algo::NvlsTree,
    ];
}

/// NCCL's protocols: LL (8-byte lines of 4 data bytes and a 4-byte flag), LL128 (128-byte
/// lines of which 120 are data) and Simple (bulk copies with a fence per step).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Proto {
    Ll,
    Ll128,
    Simple,
}

impl Proto {
    pub const ALL: [Proto; 3] = [Proto::Ll, Proto::Ll128, Proto::Simple];

    /// Bytes on the wire per data byte: LL sends a flag with every 4 data bytes, LL128 one
    /// 8-byte flag per 128-byte line (NCCL's `NCCL_LL128_DATAELEMS / NCCL_LL128_LINEELEMS`).
    pub fn wire_factor(self) -> f64 {
        match self {
            Proto::Ll => 2.0,
            Proto::Ll128 => 128.0 / 120.0,
            Proto::Simple => 1.0,
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "ll" => Some(Proto::Ll),
            "ll128" => Some(Proto::Ll128),
            "simple" => Some(Proto::Simple),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Proto::Ll => "LL",
            Proto::Ll128 => "LL128",
            Proto::Simple => "Simple",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The collectives NCCL tunes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
}

/// What kind of link a hop is, for NCCL's latency table (`NCCL_HW_NVLINK`, `_PCI`, `_NET`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hw {
    NvLink,
    Pci,
    Net,
}

impl Hw {
    /// NCCL's per-step latency of `algo` and `proto` over this kind of link [µs]
    /// (`hwLatencies` of `ncclTunerConstantsDefaults`).
    pub fn latency_us(self, algo: Algo, proto: Proto) -> f64 {
        let table: [[f64; 3]; 5] = match self {
            // Tree, Ring, NVLS, NVLS-Tree, CollNet Direct; columns LL, LL128, Simple.
            Hw::NvLink => [
                [0.6, 1.25, 4.0],
                [0.6, 1.9, 3.4],
                [0.0, 0.0, 25.0],
                [0.0, 0.0, 25.0],
                [0.0, 0.0, 3.7],
            ],
            Hw::Pci => [
                [1.0, 1.9, 4.0],
                [1.0, 2.5, 5.7],
                [0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0],
                [0.0, 0.0, 3.7],
            ],
            Hw::Net => [
                [5.0, 8.5, 14.0],
                [2.7, 4.0, 14.0],
                [0.0, 0.0, 18.0],
                [0.0, 0.0, 20.9],
                [0.0, 0.0, 31.0],
            ],
        };
        table[algo_index(algo)][proto.index()]
    }
}

fn algo_index(algo: Algo) -> usize {
    match algo {
        Algo::Tree => 0,
        Algo::Ring => 1,
        Algo::Nvls => 2,
        Algo::NvlsTree => 3,
        Algo::CollNetDirect => 4,
    }
}

/// NCCL's base latency of each algorithm and protocol [µs] (`baseLatencies`); NVLS and
/// NVLS-Tree have none (their whole latency is the links').
pub fn base_latency_us(algo: Algo, proto: Proto) -> f64 {
    match algo {
        Algo::Tree => [6.8, 14.0, 8.4][proto.index()],
        Algo::Ring => [6.6, 14.0, 8.4][proto.index()],
        Algo::Nvls | Algo::NvlsTree | Algo::CollNetDirect => 0.0,
    }
}

/// NVLS-Tree's most bus bandwidth per channel on Hopper [GB/s] (`perChMaxNVLSTreeBws`, by two
/// nodes / more).
const NVLS_TREE_MAX_PER_CHANNEL: [f64; 2] = [57.7, 45.5];

/// NVLink bandwidth NCCL counts per Hopper NVLink 4 link (`SM90_NVLINK_BW`, GB/s) against the
/// link's 25 GB/s per direction: the share of an NVLink's rate a copy reaches.
pub const NVLINK_EFFICIENCY: f64 = 20.6 / 25.0;
/// NVLS channels on Hopper (`NVLS_NCHANNELS_SM90`), and ring/tree channels taken equal.
pub const CHANNELS: usize = 16;
/// The speeds NCCL's graph search tries for a channel inside a Hopper node, fastest first
/// (`sm90SpeedArrayIntra`, search.cc) [GB/s].
const SM90_SPEEDS_INTRA: [f64; 11] = [60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0];

/// The bandwidth of one channel of NCCL's NVLS graph on one node of `heads` GPUs, each with
/// `gpu_gbps` to the NVSwitch per direction [GB/s]. `ncclTopoSearchTryNvls` (search.cc) loads
/// every GPU's link with each channel's speed, the channel's head's twice, so `heads + 1`
/// speeds must fit one GPU's link; the search takes the fastest of its speeds that does.
/// On 8 H100s (370.8 GB/s of NVLink as NCCL counts it) that is 40 GB/s, and NVLS's bus
/// bandwidth 8 × 40 × 0.85 × 7/8 × 2 = 476 GB/s, the "480 GB/s" NCCL's maintainers quote; on
/// 2 to 4 GPUs it is 60 GB/s a channel, below the ring, which NCCL then picks.
fn nvls_channel_gbps(heads: f64, gpu_gbps: f64) -> f64 {
    fastest_fitting(&SM90_SPEEDS_INTRA, gpu_gbps / (heads + 1.0))
}

/// The speeds NCCL's graph search tries for a channel across Hopper nodes, fastest first
/// (`sm90SpeedArrayInter`, search.cc) [GB/s].
const SM90_SPEEDS_INTER: [f64; 17] = [
    48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12,
];

/// The fastest of `speeds` (fastest first) at most `limit`, else the slowest.
fn fastest_fitting(speeds: &[f64], limit: f64) -> f64 {
    speeds
        .iter()
        .copied()
        .find(|&speed| speed <= limit)
        .unwrap_or(speeds[speeds.len() - 1])
}

/// Most heads of a CollNet Direct node (`NCCL_MAX_DIRECT_ARITY` + 1, search.cc).
const COLLNET_DIRECT_MAX_HEADS: f64 = 8.0;
/// CollNet Direct's efficiency on Hopper and later (tuning.cc).
const COLLNET_DIRECT_EFFICIENCY: f64 = 0.85;
/// CollNet Direct's serialisation latency per local peer (tuning.cc's "arity" term) [µs].
const COLLNET_DIRECT_ARITY_LATENCY: f64 = 0.4;

/// tuning.cc's NVLS share of a channel of `per` GB/s inside a node of `heads` GPUs (its
/// efficiency, one channel of the node's spared), before the operation's factor.
fn nvls_share(per: f64, heads: f64) -> f64 {
    per * NVLS_EFFICIENCY * (heads - 1.0) / heads
}

/// NCCL's default NVLS chunk (`nvlsChunkSize`, 128 KiB).
pub const NVLS_CHUNK: f64 = 131072.0;
/// NVLS efficiency NCCL assumes on Hopper (`nvlsEfficiency`).
const NVLS_EFFICIENCY: f64 = 0.85;

/// The communicator and its fabric as NCCL's tuner sees them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fabric {
    pub ranks: usize,
    /// NVLink islands (boards) the ranks span: NCCL's `nNodes`.
    pub nodes: usize,
    /// The kind of link inside a node.
    pub intra: Hw,
    /// One GPU's bandwidth to its node's peers, per direction [GB/s] (NVLink: the link's rate).
    pub intra_gbps: f64,
    /// One GPU's bandwidth to other nodes [GB/s]: its node's NICs × their port rate over the
    /// node's GPUs; unused on one node.
    pub inter_gbps: f64,
    /// NVLS is possible inside each node: its ranks on one NVSwitch (or an NVLink fabric
    /// standing in for one). NCCL runs NVLS on one node, NVLS-Tree across several.
    pub nvls: bool,
    /// CollNet is enabled and every NIC of the ranks reaches a switch that reduces (SHARP).
    pub collnet: bool,
}

impl Fabric {
    /// NCCL's `nChannels · bwIntra` (or `bwInter` past two nodes): the graph's bus bandwidth.
    /// Across nodes the ring search gives every channel one NIC and the same speed inside the
    /// node as on the network, one of its inter-node speeds (`search.cc`): the fastest that
    /// both a GPU's NIC and its share of the NVLink bandwidth its `ppn` channels load carry.
    /// On 8 H100s with 400G NICs that is 45 GB/s (8 × 48 would need 384 of NVLink's 370.8),
    /// so the ring's 360 GB/s stays below NVLS-Tree's 364 however large the call.
    fn graph_gbps(&self) -> f64 {
        let intra = match self.intra {
            Hw::NvLink => self.intra_gbps * NVLINK_EFFICIENCY,
            Hw::Pci | Hw::Net => self.intra_gbps,
        };
        if self.nodes <= 1 {
            intra
        } else {
            let ppn = self.ppn();
            ppn * fastest_fitting(&SM90_SPEEDS_INTER, (intra / ppn).min(self.inter_gbps))
        }
    }

    /// The speed of a channel of NCCL's graphs across nodes (CollNet Direct, NVLS): the
    /// fastest of the Hopper inter-node search speeds one GPU's share of its NICs carries.
    fn inter_channel_gbps(&self) -> f64 {
        fastest_fitting(&SM90_SPEEDS_INTER, self.inter_gbps)
    }

    /// Ranks per node (NCCL's `nRanks / nNodes`).
    pub fn ppn(&self) -> f64 {
        self.ranks as f64 / self.nodes.max(1) as f64
    }

    /// NCCL sets NVLS up only where a node has more than two of the communicator's GPUs
    /// (`ncclNvlsInit`, nvls.cc: `gpuCount <= 2` leaves it off); the nodes taken equal.
    pub fn nvls_possible(&self) -> bool {
        self.nvls && self.ppn() > 2.0
    }

    /// Whether NCCL would run `algo` with `proto` for `func` here.
    pub fn supports(&self, func: Func, algo: Algo, proto: Proto) -> bool {
        match (func, algo) {
            // Across nodes NVLS reduces over the network's switches too (SHARP): tuning.cc
            // enables it only with CollNet, and all-gather and reduce-scatter there only with
            // the plugin's own, which are not modelled.
            (_, Algo::Nvls) => {
                proto == Proto::Simple
                    && self.nvls_possible()
                    && match self.nodes {
                        1 => matches!(func, Func::AllReduce | Func::AllGather | Func::ReduceScatter),
                        _ => self.collnet && func == Func::AllReduce,
                    }
            }
            (_, Algo::NvlsTree) => {
                proto == Proto::Simple && self.nvls_possible() && self.nodes > 1 && func == Func::AllReduce
            }
            // tuning.cc: CollNet needs CollNet enabled, Direct an NVSwitch in the node;
            // all-gather and reduce-scatter need the plugin's own, which are not modelled.
            (_, Algo::CollNetDirect) => {
                proto == Proto::Simple
                    && self.collnet
                    && self.nvls
                    && self.nodes > 1
                    && func == Func::AllReduce
            }
            (Func::AllReduce, Algo::Tree) => true,
            (_, Algo::Tree) => false,
            (_, Algo::Ring) => true,
        }
    }

    /// NCCL's bandwidth of `algo`/`proto` for `func` [GB/s of nccl-tests' size], before the
    /// per-size corrections; `None` where NCCL does not run it.
    pub fn bandwidth(&self, func: Func, algo: Algo, proto: Proto) -> Option<f64> {
        let n = self.ranks as f64;
        let nsteps = match func {
            Func::AllReduce => 2.0 * (n - 1.0),
            Func::AllGather | Func::ReduceScatter => n - 1.0,
            Func::Broadcast | Func::Reduce => n,
        };
        // Bus bandwidth to algorithm bandwidth (NCCL leaves NVLS all-gather/reduce-scatter as is).
        let ratio = match (algo, func) {
            (Algo::Nvls, Func::AllGather | Func::ReduceScatter) => 1.0,
            (Algo::Ring | Algo::Nvls | Algo::NvlsTree, _) => n / nsteps,
            (Algo::Tree | Algo::CollNetDirect, _) => 0.5,
        };
        Some(self.bus_bandwidth(func, algo, proto)? * ratio)
    }

    /// NCCL's bus bandwidth of `algo`/`proto` for `func` [GB/s]: what one rank's sends of
    /// data bytes go at, with the protocol's and the algorithm's caps (tuning.cc's "model
    /// refinements"); `None` where NCCL does not run it.
    pub fn bus_bandwidth(&self, func: Func, algo: Algo, proto: Proto) -> Option<f64> {
        if self.ranks < 2 || !self.supports(func, algo, proto) {
            return None;
        }
        let channels = CHANNELS as f64;
        let single = self.nodes == 1;
        let mut bus = match algo {
            Algo::Nvls if !single => {
                // tuning.cc over the NVLS graph across nodes: a channel per head (a GPU with
                // its NIC), searched at the inter-node speeds (48 GB/s on a 400G NIC, inside the
                // node as between nodes), each the least of its NVLS share inside the node
                // (two operations pipelined) and its NIC.
                let heads = self.ppn();
                let per = self.inter_channel_gbps();
                heads * (nvls_share(per, heads) * 2.0).min(per)
            }
            Algo::Nvls => {
                // tuning.cc over the NVLS graph: a channel per head (every GPU of the node).
                let heads = self.ppn();
                let mut per = nvls_share(nvls_channel_gbps(heads, self.graph_gbps()), heads);
                per *= if func == Func::AllReduce {
                    2.0
                } else {
                    (heads - 1.0) / heads
                };
                per * heads
            }
            Algo::NvlsTree => {
                // tuning.cc: a channel per NVLS head (a GPU with its NIC), each at the NIC's
                // speed inside (NVLS efficiency, one channel of the node's spared, two
                // operations pipelined) and between nodes (twice on two nodes), at most
                // `perChMaxNVLSTreeBws`. One head per GPU: `ppn` channels of `inter_gbps`.
                let heads = self.ppn();
                let per = self.inter_gbps;
                let intra = nvls_share(per, heads) * 2.0;
                let inter = per * if self.nodes <= 2 { 2.0 } else { 1.0 };
                heads * intra.min(inter).min(self.nvls_tree_channel_cap())
            }
            Algo::CollNetDirect => {
                // tuning.cc over the CollNet Direct graph: a channel per head (a GPU with its
                // NIC, at most 8), each at the fastest inter-node speed its NIC carries; the
                // GPU/NIC ratio's discount, and Hopper's efficiency.
                let ppn = self.ppn();
                let channels = ppn.min(COLLNET_DIRECT_MAX_HEADS);
                let per = self.inter_channel_gbps();
                let mut factor = ppn / channels;
                factor -= (factor - 1.0) / 2.0;
                channels * per / factor * COLLNET_DIRECT_EFFICIENCY
            }
            Algo::Ring | Algo::Tree => self.graph_gbps(),
        };
        // llMaxBws (one node: Hopper's; more: an Intel host's) and Hopper's per-channel caps,
        // by one node / two / more.
        let column = self.nodes.clamp(1, 3) - 1;
        let ll_max: f64 = if single { 141.0 } else { [39.0, 39.0, 20.4][column] };
        match (algo, proto) {
            (Algo::Ring, Proto::Ll) => bus = ll_max.min(bus * 0.5),
            (Algo::Ring, Proto::Ll128) => bus = (bus * 0.92).min(channels * 36.7),
            (Algo::Tree, _) => {
                bus = (bus * 0.92).min(channels * [38.7, 41.4, 36.0][column]);
                match proto {
                    Proto::Ll => bus = (bus / 3.8).min(ll_max),
                    Proto::Ll128 => {
                        let cap = channels * [36.7, 36.7, 29.0][column];
                        bus = (bus * if single { 7.0 / 9.0 } else { 120.0 / 128.0 }).min(cap);
                    }
                    Proto::Simple => {}
                }
            }
            _ => {}
        }
        Some(bus)
    }

    /// NCCL's bus bandwidth for a call of `bytes` [GB/s]: [`Self::bus_bandwidth`] with the
    /// tree all-reduce's per-size efficiency (tuning.cc's `treeCorrectionFactor`).
    pub fn bus_bandwidth_at(&self, func: Func, algo: Algo, proto: Proto, bytes: f64) -> Option<f64> {
        Some(self.bus_bandwidth(func, algo, proto)? * size_correction(func, algo, proto, bytes))
    }

    /// The most algorithm bandwidth NVLS-Tree's `channels` reach [GB/s of nccl-tests' size]:
    /// a channel per head at `perChMaxNVLSTreeBws`, NCCL's measured ceiling of one channel
    /// (the warps that serve it) with its [`CHANNELS`] CTAs, whatever the links would carry;
    /// more CTAs (`NCCL_MIN_CTAS`) bring more warps, and the ceiling rises with them.
    pub fn nvls_tree_ceiling_gbps(&self, channels: usize) -> f64 {
        let n = self.ranks as f64;
        let ctas = channels as f64 / CHANNELS as f64;
        self.ppn() * self.nvls_tree_channel_cap() * ctas * n / (2.0 * (n - 1.0))
    }

    /// `perChMaxNVLSTreeBws` for this many nodes [GB/s of bus bandwidth].
    fn nvls_tree_channel_cap(&self) -> f64 {
        NVLS_TREE_MAX_PER_CHANNEL[usize::from(self.nodes > 2)]
    }

    /// NCCL's latency of `algo`/`proto` for `func` [µs].
    pub fn latency_us(&self, func: Func, algo: Algo, proto: Proto) -> f64 {
        let n = self.ranks as f64;
        let ppn = self.ppn();
        let intra = self.intra.latency_us(algo, proto);
        let net_algo = if ppn <= 1.0 { Algo::Tree } else { algo };
        let inter = Hw::Net.latency_us(net_algo, proto);
        let base = base_latency_us(algo, proto);
        match algo {
            Algo::Ring => {
                let nsteps = match func {
                    Func::AllReduce => 2.0 * (n - 1.0),
                    Func::AllGather | Func::ReduceScatter => n - 1.0,
                    Func::Broadcast | Func::Reduce => return base + intra,
                };
                let nodes = self.nodes as f64;
                let inter_steps = match (self.nodes, func) {
                    (1, _) => 0.0,
                    (_, Func::AllReduce) => 2.0 * (nodes - 1.0),
                    _ => nodes - 1.0,
                };
                let overhead = if self.nodes > 1 {
                    if proto == Proto::Simple {
                        3.0
                    } else {
                        1.0
                    }
                } else {
                    0.0
                };
                base + (nsteps - inter_steps) * intra.max(overhead) + inter_steps * inter
            }
            Algo::Tree => {
                let levels = (self.nodes.max(1) as f64).log2().floor();
                base + 2.0 * ((ppn - 1.0) * intra + levels * inter)
            }
            Algo::Nvls if self.nodes > 1 => intra + inter,
            Algo::Nvls => intra,
            Algo::NvlsTree => {
                let levels = (self.nodes.max(1) as f64).log2().floor();
                intra + 2.0 * levels * inter
            }
            Algo::CollNetDirect => {
                base + 2.0 * ((ppn - 1.0).min(1.0) * intra + (ppn - 1.0) * COLLNET_DIRECT_ARITY_LATENCY)
                    + inter
            }
        }
    }

    /// NCCL's estimate of one call [µs], or `None` where NCCL does not run `algo`/`proto`.
    pub fn time_us(&self, func: Func, algo: Algo, proto: Proto, bytes: f64) -> Option<f64> {
        let bw = self.bandwidth(func, algo, proto)? * size_correction(func, algo, proto, bytes);
        let mut latency = self.latency_us(func, algo, proto);
        let per_rank = bytes / (CHANNELS * self.ranks) as f64;
        if algo == Algo::Ring
            && proto == Proto::Simple
            && self.nodes > 1
            && func == Func::AllReduce
            && per_rank >= 64.0
        {
            latency *= 1.4; // the ring's "plateau" on Ampere and later
        }
        (bw > 0.0).then(|| latency + bytes / (1000.0 * bw))
    }

    /// The algorithm and protocol NCCL picks for `bytes` of `func` (nccl-tests' size): the
    /// least [`Self::time_us`]; ties go to the earlier of tree, ring, CollNet Direct, NVLS, NVLS-Tree and LL,
    /// LL128, Simple.
    pub fn pick(&self, func: Func, bytes: f64) -> Option<(Algo, Proto)> {
        let mut best: Option<(f64, Algo, Proto)> = None;
        for algo in Algo::ALL {
            for proto in Proto::ALL {
                if let Some(t) = self.time_us(func, algo, proto, bytes) {
                    if best.is_none_or(|(b, _, _)| t < b) {
                        best = Some((t, algo, proto));
                    }
                }
            }
        }
        best.map(|(_, a, p)| (a, p))
    }
}

/// The factor tuning.cc applies to the bandwidth of `algo` for a call of `bytes`: the tree
/// all-reduce's `treeCorrectionFactor`, 1 elsewhere.
fn size_correction(func: Func, algo: Algo, proto: Proto, bytes: f64) -> f64 {
    if algo == Algo::Tree && func == Func::AllReduce {
        tree_correction(proto, bytes)
    } else {
        1.0
    }
}

/// `treeCorrectionFactor` of tuning.cc: powers of two from 64 B to 256 MiB.
fn tree_correction(proto: Proto, bytes: f64) -> f64 {
    const TABLE: [[f64; 24]; 3] = [
        [
            1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
            1.0, 1.0, 1.0, 1.0, 1.0,
        ],
        [
            1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9,
            0.9, 0.9, 1.0, 1.0, 1.0,
        ],
        [
            0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7,
            0.7, 0.8, 0.9, 0.9, 0.9,
        ],
    ];
    let lines = (bytes / 64.0).floor();
    if lines < 1.0 {
        return 1.0;
    }
    let log = lines.log2().floor() as usize;
    if log < 23 {
        TABLE[proto.index()][log]
    } else {
        1.0
    }
}

/// NCCL's NVLS chunk for `bytes` over `channels` NVLS channels (enqueue.cc): 128 KiB, halved
/// to 64, 32 and 16 KiB below 64, 8 and 2 rounds of `channels` chunks of the larger size.
pub fn nvls_chunk(bytes: f64, channels: usize) -> f64 {
    let ops = channels as f64;
    let mut chunk = NVLS_CHUNK;
    if bytes < 64.0 * ops * chunk && chunk > 65536.0 {
        chunk = 65536.0;
    }
    if bytes < 8.0 * ops * chunk && chunk > 32768.0 {
        chunk = 32768.0;
    }
    if bytes < 2.0 * ops * chunk && chunk > 16384.0 {
        chunk = 16384.0;
    }
    chunk
}

/// NCCL's NVLS-Tree chunk for `bytes` on `nodes` nodes of `heads` NVLS heads and `channels`
/// NVLS channels (enqueue.cc, 2.2x): NVLS's 128 KiB, at most 64 KiB from 4 nodes on, halved to
/// 64 and 32 KiB below 4 and 1 loops of `channels × heads` chunks (a loop: every channel
/// moves a chunk to each head).
pub fn nvls_tree_chunk(bytes: f64, nodes: usize, heads: f64, channels: usize) -> f64 {
    let ops = channels as f64 * heads;
    let mut chunk = if nodes >= 4 { 65536.0 } else { NVLS_CHUNK };
    if bytes < 4.0 * ops * chunk && chunk > 65536.0 {
        chunk = 65536.0;
    }
    if bytes < ops * chunk && chunk > 32768.0 {
        chunk = 32768.0;
    }
    chunk
}

/// Rounds of an NVLS call over `channels` channels: each moves one chunk on every channel.
pub fn nvls_rounds(bytes: f64, channels: usize) -> usize {
    (bytes / (channels as f64 * nvls_chunk(bytes, channels)))
        .ceil()
        .max(1.0) as usize
}

#[cfg(test)]
mod tests;
