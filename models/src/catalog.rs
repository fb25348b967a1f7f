//! The hardware catalog that ships with hetsim: the thesis testbeds (seed 004, Table 6.1,
//! Table 6.2, Figure 5.20) and current parts, each number with its source.
//!
//! GPU attributes keep the thesis's names (Figure 5.20) and add the memory figures of
//! eq. 4.7 (`memoryClock` [MHz], `busWidth` [bits], `dataRate`) and `computeCapability`;
//! link attributes are those of eq. 5.5 per direction. Where no measurement exists (startup
//! and λ of the current links), the entry says so in `source` and uses the neutral values
//! 0 s and 1: calibrate them with `hetsim calibrate`. `powerConsumptionIdle` is given only
//! where a source states it; a missing one counts as 0 W.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::hierarchy::Hierarchy;
use crate::params::Scalar;
use crate::queueing::ErrorBars;
use crate::transfer::{format_knots, Knot};
use crate::volkov::gmem_throughput;

mod cpu;
mod gpu_data;
mod network;
mod peaks;
pub use gpu_data::calibrated_value;
use gpu_data::h100_sxm5_measured;
pub use peaks::peak_keys;
use peaks::DatasheetPeaks;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ComponentKind {
    Gpu,
    Cpu,
    Network,
    /// A switch: a node that runs no processes and forwards the messages whose route crosses
    /// it (NVSwitch, an InfiniBand or Ethernet switch), adding its `latency` attribute.
    Switch,
}

impl ComponentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ComponentKind::Gpu => "GPU",
            ComponentKind::Cpu => "CPU",
            ComponentKind::Network => "NETWORK",
            ComponentKind::Switch => "SWITCH",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Component {
    pub name: String,
    pub vendor: String,
    pub kind: ComponentKind,
    pub comment: String,
    /// Where the numbers come from.
    pub source: String,
    pub attributes: BTreeMap<String, Scalar>,
}

struct Gpu {
    name: &'static str,
    comment: &'static str,
    source: &'static str,
    compute_capability: &'static str,
    sms: f64,
    sm_clock_mhz: f64,
    cuda_cores: f64,
    memory_clock_mhz: f64,
    bus_width_bits: f64,
    data_rate: f64,
    power_load_w: f64,
    /// Given where the source states it (eq. 5.2 for the GTX 970); else eq. 4.7.
    gmem_throughput: Option<f64>,
    /// The `gpu-queueing` model's attributes, where measurements calibrated them.
    queueing: Option<Queueing>,
    /// Peak FLOP/s by data type, where a datasheet states them.
    peaks: Option<&'static DatasheetPeaks>,
}

/// A calibration of the loaded-latency model ([`crate::queueing`]) and of board power.
#[derive(Clone)]
struct Queueing {
    memory_queue_cycles: f64,
    issue_efficiency: f64,
    block_launch_rate: f64,
    warp_skew: f64,
    launch_overhead: f64,
    power_idle: f64,
    power_compute: f64,
    power_memory: f64,
    error_bars: ErrorBars,
    /// L2's capacity [bytes], for the memory hierarchy ([`crate::hierarchy::Hierarchy::of`]).
    l2_size: f64,
}

impl Queueing {
    fn attributes(&self, gpu: &Gpu, memory_bandwidth: f64) -> Vec<(&'static str, f64)> {
        let compute_capability = gpu.compute_capability;
        use crate::queueing::keys;
        let lanes = crate::queueing::lanes_of(compute_capability);
        let mut out = vec![
            (keys::MEMORY_BANDWIDTH, memory_bandwidth),
            (keys::MEMORY_QUEUE_CYCLES, self.memory_queue_cycles),
            (keys::ISSUE_EFFICIENCY, self.issue_efficiency),
            (keys::BLOCK_LAUNCH_RATE, self.block_launch_rate),
            (keys::WARP_SKEW, self.warp_skew),
            (keys::LAUNCH_OVERHEAD, self.launch_overhead),
            ("powerConsumptionIdle", self.power_idle),
            (keys::POWER_IDLE, self.power_idle),
            (keys::POWER_COMPUTE, self.power_compute),
            (keys::POWER_MEMORY, self.power_memory),
        ];
        out.extend(self.error_bars.attributes());
        let hierarchy = Hierarchy::of(compute_capability, gpu.sms, gpu.sm_clock_mhz, self.l2_size);
        out.extend(hierarchy.iter().flat_map(Hierarchy::attributes));
        if let Some(l) = lanes {
            out.extend([
                ("fp32Lanes", l.fp32),
                ("intLanes", l.int),
                ("sfuLanes", l.sfu),
                ("fp64Lanes", l.fp64),
            ]);
        }
        out
    }
}

impl Gpu {
    fn component(self) -> Component {
        let gmem = self.gmem_throughput.unwrap_or_else(|| {
            gmem_throughput(
                self.memory_clock_mhz,
                self.bus_width_bits,
                self.data_rate,
                self.sms,
                self.sm_clock_mhz,
            )
        });
        let bandwidth = self.memory_clock_mhz * 1e6 * self.bus_width_bits / 8.0 * self.data_rate;
        let queueing = self
            .queueing
            .as_ref()
            .map(|q| q.attributes(&self, bandwidth))
            .unwrap_or_default();
        let attributes = [
            ("SMs", self.sms),
            ("SMCoreClock", self.sm_clock_mhz),
            ("CUDACores", self.cuda_cores),
            ("schedulers", 4.0),
            ("warpSize", 32.0),
            ("GMEMThroughput", gmem),
            ("memoryClock", self.memory_clock_mhz),
            ("busWidth", self.bus_width_bits),
            ("dataRate", self.data_rate),
            ("powerConsumptionLoad", self.power_load_w),
        ]
        .into_iter()
        .chain(queueing)
        .chain(self.peaks.iter().flat_map(|p| p.rates.iter().copied()))
        .map(|(k, v)| (k.to_owned(), Scalar::Number(v)))
        .chain([(
            "computeCapability".to_owned(),
            Scalar::from(self.compute_capability),
        )])
        .collect();
        Component {
            name: self.name.to_owned(),
            vendor: "NVIDIA".to_owned(),
            kind: ComponentKind::Gpu,
            comment: self.comment.to_owned(),
            source: match self.peaks {
                Some(p) => format!("{}; {}", self.source, p.source),
                None => self.source.to_owned(),
            },
            attributes,
        }
    }
}

struct Link {
    name: &'static str,
    comment: &'static str,
    source: &'static str,
    bandwidth: f64,
    /// (startupHtD, startupDtH, lambdaHtD, lambdaDtH), where measured.
    measured: Option<[f64; 4]>,
    /// Pageable host memory (HtD, DtH), where measured: `startupPageable<Dir>` and the knots
    /// of `pageable<Dir>` ([`crate::transfer::BandwidthCurve`]).
    pageable: Option<[Pageable; 2]>,
    /// Copy engines (`channels`, `duplex`), where measured.
    copy_engines: Option<CopyEngines>,
    /// `errorPinned` and `errorPageable`: relative error bars at 90 % coverage, where measured.
    error_bars: Option<[f64; 2]>,
}

/// What concurrent copies get.
struct CopyEngines {
    /// Copies carried at once per direction.
    channels: f64,
    /// The fraction of its rate each direction keeps while the other carries bytes too.
    duplex: f64,
}

/// One direction's pageable copy: T = startup + n / B(n) (`crate::transfer::curve_seconds`).
struct Pageable {
    /// [s]
    startup: f64,
    /// (size [bytes], bandwidth [bytes/s]).
    knots: &'static [(f64, f64)],
}

impl Link {
    fn component(self) -> Component {
        let mut attributes: BTreeMap<String, Scalar> = BTreeMap::new();
        attributes.insert("bandwidth".into(), Scalar::Number(self.bandwidth));
        match self.measured {
            Some([s_htd, s_dth, l_htd, l_dth]) => {
                for (k, v) in [
                    ("startupHtD", s_htd),
                    ("startupDtH", s_dth),
                    ("lambdaHtD", l_htd),
                    ("lambdaDtH", l_dth),
                ] {
                    attributes.insert(k.into(), Scalar::Number(v));
                }
            }
            None => {
                attributes.insert("startup".into(), Scalar::Number(0.0));
                attributes.insert("lambda".into(), Scalar::Number(1.0));
            }
        }
        for (suffix, p) in ["HtD", "DtH"].iter().zip(self.pageable.iter().flatten()) {
            let knots: Vec<Knot> = p
                .knots
                .iter()
                .map(|&(size, bandwidth)| Knot { size, bandwidth })
                .collect();
            attributes.insert(format!("startupPageable{suffix}"), Scalar::Number(p.startup));
            attributes.insert(format!("pageable{suffix}"), Scalar::Text(format_knots(&knots)));
        }
        if let Some(engines) = self.copy_engines {
            attributes.insert("channels".into(), Scalar::Number(engines.channels));
            attributes.insert("duplex".into(), Scalar::Number(engines.duplex));
        }
        if let Some([pinned, pageable]) = self.error_bars {
            attributes.insert("errorPinned".into(), Scalar::Number(pinned));
            attributes.insert("errorPageable".into(), Scalar::Number(pageable));
        }
        Component {
            name: self.name.to_owned(),
            vendor: String::new(),
            kind: ComponentKind::Network,
            comment: self.comment.to_owned(),
            source: self.source.to_owned(),
            attributes,
        }
    }
}

/// Every preset, GPUs first, then CPUs, then links, then switches and NICs.
pub fn components() -> Vec<Component> {
    let h100 = h100_sxm5_measured();
    let gpus = [
        Gpu {
            name: "GTX 970 - gajger",
            comment: "Maxwell GM204, the thesis's calibration testbed",
            source: "Gajger 2017 (seed 004): Table 6.1, Figure 5.20, eq. 5.2 (GMEMThroughput 13.78)",
            compute_capability: "5.2",
            sms: 13.0,
            sm_clock_mhz: 1253.0,
            cuda_cores: 128.0,
            memory_clock_mhz: 1753.0,
            bus_width_bits: 256.0,
            data_rate: 4.0,
            power_load_w: 168.0,
            gmem_throughput: Some(13.78),
            queueing: None,
            peaks: None,
        },
        Gpu {
            name: "GTX TITAN X - gajger",
            comment: "Maxwell GM200, the thesis's second testbed",
            source: "Gajger 2017 (seed 004): Table 6.1 (GMEMThroughput 13.03); 250 W board power: NVIDIA GeForce GTX TITAN X specifications",
            compute_capability: "5.2",
            sms: 24.0,
            sm_clock_mhz: 1076.0,
            cuda_cores: 128.0,
            memory_clock_mhz: 1753.0,
            bus_width_bits: 384.0,
            data_rate: 4.0,
            power_load_w: 250.0,
            gmem_throughput: Some(13.03),
            queueing: None,
            peaks: None,
        },
        Gpu {
            name: "Tesla V100 SXM2",
            comment: "Volta GV100, 16/32 GB HBM2",
            source: "NVIDIA Tesla V100 GPU Architecture whitepaper (2017): 80 SMs, 1530 MHz boost, 64 FP32 cores/SM, 4096-bit HBM2 at 877 MHz (900 GB/s), 300 W; GMEMThroughput by eq. 4.7",
            compute_capability: "7.0",
            sms: 80.0,
            sm_clock_mhz: 1530.0,
            cuda_cores: 64.0,
            memory_clock_mhz: 877.0,
            bus_width_bits: 4096.0,
            data_rate: 2.0,
            power_load_w: 300.0,
            gmem_throughput: None,
            queueing: None,
            peaks: Some(&peaks::V100_SXM2),
        },
        Gpu {
            name: "A100 SXM4 40GB",
            comment: "Ampere GA100",
            source: "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 108 SMs, 1410 MHz boost, 64 FP32 cores/SM, 5120-bit HBM2 at 1215 MHz (1555 GB/s), 400 W; GMEMThroughput by eq. 4.7",
            compute_capability: "8.0",
            sms: 108.0,
            sm_clock_mhz: 1410.0,
            cuda_cores: 64.0,
            memory_clock_mhz: 1215.0,
            bus_width_bits: 5120.0,
            data_rate: 2.0,
            power_load_w: 400.0,
            gmem_throughput: None,
            queueing: None,
            peaks: Some(&peaks::A100_SXM4),
        },
        Gpu {
            name: "H100 SXM5 80GB",
            comment: "Hopper GH100, 80 GB HBM3; calibrated for the gpu-queueing model",
            source: "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022) and datasheet: 132 SMs, 1980 MHz boost, 128 FP32 cores/SM, 5120-bit HBM3 at 2619 MHz (3.35 TB/s), 700 W limit; GMEMThroughput by eq. 4.7. memoryQueueCycles, issueEfficiency, blockLaunchRate, warpSkew, kernelLaunchOverhead and power* and the error bars (error*, calibratedWarps*: conformal 90 % quantiles per regime of the residuals of a leave-one-block-size/occupancy-level-out cross-validation): hetsim GPU measurements, H100 SXM 80GB, 2026-11-22 (sweep.csv, occupancy_block256.csv, launch.csv, power.csv) fitted by `hetsim calibrate gpu`, read from models/data/h100-sxm5-80gb.toml, which says what each number is and from what; the memory hierarchy (hetsim_models::hierarchy): L2Size 50 MiB (whitepaper), L1WavefrontsPerCycle and sharedWavefrontsPerCycle 1 (128 B a cycle per SM, whitepaper), L2Bandwidth (bytes a cycle per SM) fitted on the H100 kit's L2-resident launches and read from models/data/hopper.toml, barrierCycles 20 assumed",
            compute_capability: "9.0",
            sms: 132.0,
            sm_clock_mhz: 1980.0,
            cuda_cores: 128.0,
            memory_clock_mhz: 2619.0,
            bus_width_bits: 5120.0,
            data_rate: 2.0,
            power_load_w: 275.0,
            gmem_throughput: None,
            queueing: Some(h100.clone()),
            peaks: Some(&peaks::H100_SXM5),
        },
        Gpu {
            name: "H200 SXM 141GB",
            comment: "Hopper GH100 with 141 GB HBM3e; the H100's calibration carried over, not measured",
            source: "NVIDIA H200 datasheet (2024): 132 SMs, 1980 MHz boost, 6016-bit HBM3e at 3201 MHz (4.8 TB/s), 700 W limit. From the H100 (same SMs and clocks): issueEfficiency, blockLaunchRate, warpSkew, kernelLaunchOverhead and power; memoryQueueCycles the H100's scaled by the memory clocks (x 2619/3201); L2Size 60 MiB (the CUDA runtime's l2CacheSize on an H200, data/h200/props.csv: a device property, not a timing); the rest of the memory hierarchy (L2Bandwidth, L1WavefrontsPerCycle, sharedWavefrontsPerCycle, barrierCycles) the H100's, the same GH100, since the queue drains at the memory's pace; error bars the H100's, doubled (errorExtrapolation) since no calibrated domain is given. No H200 timing was used",
            compute_capability: "9.0",
            sms: 132.0,
            sm_clock_mhz: 1980.0,
            cuda_cores: 128.0,
            memory_clock_mhz: 3201.0,
            bus_width_bits: 6016.0,
            data_rate: 2.0,
            power_load_w: 275.0,
            gmem_throughput: None,
            queueing: Some(Queueing {
                memory_queue_cycles: h100.memory_queue_cycles * 2619.0 / 3201.0,
                // Not measured: every prediction is an extrapolation (twice the H100's bars).
                error_bars: ErrorBars {
                    domain: None,
                    ..h100.error_bars.clone()
                },
                // Its own L2, as the CUDA runtime reports it (l2CacheSize: 60 MiB).
                l2_size: 62_914_560.0,
                ..h100.clone()
            }),
            peaks: Some(&peaks::H200_SXM),
        },
        Gpu {
            name: "H100 PCIe",
            comment: "Hopper GH100, 80 GB HBM2e",
            source: "NVIDIA H100 datasheet (2022): 114 SMs, 1755 MHz boost, 128 FP32 cores/SM, 5120-bit HBM2e at 1593 MHz (2.0 TB/s), 350 W; GMEMThroughput by eq. 4.7",
            compute_capability: "9.0",
            sms: 114.0,
            sm_clock_mhz: 1755.0,
            cuda_cores: 128.0,
            memory_clock_mhz: 1593.0,
            bus_width_bits: 5120.0,
            data_rate: 2.0,
            power_load_w: 350.0,
            gmem_throughput: None,
            queueing: None,
            peaks: Some(&peaks::H100_PCIE),
        },
    ];
    let links = [
        Link {
            name: "PCIe 3.0 16x - gajger",
            comment: "the GTX 970 testbed's bus (PCIe 3.1 x16)",
            source: "Gajger 2017 (seed 004): Table 6.2, Figure 5.20, eqs. 5.6-5.7; 15.8 GB/s from Table 4.3",
            bandwidth: 15.8e9,
            measured: Some([3.96868e-6, 5.15692e-6, 0.689, 0.653]),
            pageable: None,
            copy_engines: None,
            error_bars: None,
        },
        Link {
            name: "PCIe 2.0 4x - gajger",
            comment: "the GTX TITAN X testbed's bus",
            source: "Gajger 2017 (seed 004): Table 6.2; 2 GB/s from Table 4.3",
            bandwidth: 2e9,
            measured: Some([7.3276e-6, 1.167905e-5, 0.8435, 0.8421]),
            pageable: None,
            copy_engines: None,
            error_bars: None,
        },
        Link {
            name: "PCIe 4.0 x16",
            comment: "theoretical peak per direction",
            source: "PCI-SIG PCIe 4.0: 16 GT/s x 16 lanes x 128b/130b = 31.5 GB/s; startup and lambda not measured (0 s, 1): calibrate",
            bandwidth: 31.5e9,
            measured: None,
            pageable: None,
            copy_engines: None,
            error_bars: None,
        },
        Link {
            name: "PCIe 5.0 x16",
            comment: "theoretical peak per direction",
            source: "PCI-SIG PCIe 5.0: 32 GT/s x 16 lanes x 128b/130b = 63.0 GB/s; startup and lambda not measured (0 s, 1): calibrate",
            bandwidth: 63.0e9,
            measured: None,
            pageable: None,
            copy_engines: None,
            error_bars: None,
        },
        Link {
            name: "PCIe 5.0 x16 - H100 host",
            comment: "the H100 SXM test machine's host link (PCIe 5.0 x16, in a virtual machine): pinned copies by eq. 5.5 (startupHtD, lambdaHtD, ...), pageable copies by a bandwidth curve (startupPageableHtD, pageableHtD, ...); use the link-host-memory model",
            source: "hetsim GPU measurements, H100 SXM 80GB, 2026-11-22: transfers.csv (cudaMemcpy, 3 trials per size; pinned: eq. 5.5 by least squares of relative residuals over the copies >= 1 MiB, against PCIe 5.0 x16's 63.0 GB/s; pageable: startup = median time at 4 B, knots at 1 KiB, 4 KiB, ..., 4 GiB from the medians per size) and copies_concurrent.csv (one copy engine per direction: channels = 1; an HtD copy with a DtH copy at once took 57.36 ms for 10 x 256 MiB against 48.82 ms alone: duplex = 48.82 / 57.36 = 0.851); errorPinned and errorPageable: the conformal 90 % quantiles of the relative residuals over all non-empty copies of transfers.csv (`hetsim validate` prints them)",
            bandwidth: 63.0e9,
            measured: Some([8.0636e-6, 7.9108e-6, 0.85846, 0.85796]),
            pageable: Some([
                Pageable {
                    startup: 5.8082e-6,
                    knots: &[
                        (1024.0, 1.2311e9),
                        (4096.0, 2.8081e9),
                        (16384.0, 5.0599e9),
                        (65536.0, 5.3884e9),
                        (262144.0, 1.0183e10),
                        (1048576.0, 1.0845e10),
                        (4194304.0, 1.2277e10),
                        (16777216.0, 1.2067e10),
                        (67108864.0, 8.6667e9),
                        (268435456.0, 7.2869e9),
                        (1073741824.0, 6.9702e9),
                        (4294967296.0, 7.0768e9),
                    ],
                },
                Pageable {
                    startup: 8.8096e-6,
                    knots: &[
                        (1024.0, 2.8863e9),
                        (4096.0, 5.2079e9),
                        (16384.0, 7.3385e9),
                        (65536.0, 6.5842e9),
                        (262144.0, 7.6257e9),
                        (1048576.0, 7.8082e9),
                        (4194304.0, 9.0961e9),
                        (16777216.0, 1.0566e10),
                        (67108864.0, 1.0638e10),
                        (268435456.0, 1.2586e10),
                        (1073741824.0, 1.0478e10),
                        (4294967296.0, 1.1142e10),
                    ],
                },
            ]),
            copy_engines: Some(CopyEngines {
                channels: 1.0,
                duplex: 0.851,
            }),
            error_bars: Some([0.03652, 0.1051]),
        },
        Link {
            name: "NVLink 4",
            comment: "H100 SXM5, all 18 links, per direction",
            source: "NVIDIA H100 whitepaper: 18 NVLink 4 links, 900 GB/s bidirectional = 450 GB/s per direction; startup and lambda not measured and no link latency is published (0 s, 1): calibrate",
            bandwidth: 450e9,
            measured: None,
            pageable: None,
            copy_engines: None,
            error_bars: None,
        },
    ];
    let cpu = Component {
        name: "Intel Core i7-4790K".to_owned(),
        vendor: "Intel".to_owned(),
        kind: ComponentKind::Cpu,
        comment: "Haswell, 4 cores, the host of a desktop testbed like the thesis's".to_owned(),
        source: "Intel ARK: 4 cores, 4.0 GHz base, 88 W TDP; performance = 4 cores x 4.0 GHz x 32 FP32 FLOP/cycle (2 AVX2 FMA units) = 512 GFLOP/s peak".to_owned(),
        attributes: [
            ("performance".to_owned(), Scalar::Number(512e9)),
            ("cores".to_owned(), Scalar::Number(4.0)),
            ("powerConsumptionLoad".to_owned(), Scalar::Number(88.0)),
        ]
        .into_iter()
        .collect(),
    };
    gpus.into_iter()
        .map(Gpu::component)
        .chain([cpu])
        .chain(cpu::server_cpus())
        .chain(links.into_iter().chain(network::links()).map(Link::component))
        .chain(network::switches())
        .collect()
}

/// The preset named `name`, exactly.
pub fn find(name: &str) -> Option<Component> {
    components().into_iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::transfer::check_link_attributes;

    fn params(pairs: &[(&str, Scalar)]) -> Params {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn every_catalog_link_has_good_attributes_and_bad_ones_are_named() {
        let links = components()
            .into_iter()
            .filter(|c| c.kind == ComponentKind::Network);
        for link in links {
            assert_eq!(check_link_attributes(&link.attributes), Ok(()), "{}", link.name);
        }
        for (key, value, expected) in [
            (
                "bandwidth",
                Scalar::Number(f64::INFINITY),
                "expected a finite number, got inf",
            ),
            (
                "startupDtD",
                Scalar::Number(f64::NAN),
                "expected a finite number, got NaN",
            ),
            (
                "lambdaHtH",
                1.01.into(),
                "expected a fraction in (0, 1], got 1.01",
            ),
            ("errorPinned", (-0.1).into(), "expected a number >= 0, got -0.1"),
            (
                "pageableDtH",
                5.0.into(),
                "expected knots SIZE:BANDWIDTH ... (text), got 5",
            ),
        ] {
            let err = check_link_attributes(&params(&[(key, value)])).unwrap_err();
            assert_eq!(err.to_string(), format!("key `{key}`: {expected}"));
        }
        // Attributes of other models are theirs to check.
        assert_eq!(check_link_attributes(&params(&[("hops", (-1.0).into())])), Ok(()));
    }
}
