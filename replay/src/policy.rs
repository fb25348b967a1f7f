//! How long a compute node takes on the system: the compute policy.
//!
//! - `replay`: its recorded duration (`duration_micros`);
//! - `roofline`: `max(num_ops / peak FLOP/s, tensor_size / memory bandwidth)` of the GPU its
//!   rank runs on, from the catalog: peak FLOP/s is the rate of the node's data type
//!   (hetsim_chakra::DataType: FP64 and TF32/FP16/BF16/FP8 on the tensor cores, from the
//!   catalog's `peakFlops<TYPE>` attributes, hetsim_models::catalog::peak_keys), else the
//!   fallback (counted): the component's `peakFlops` attribute where stated, else FP32's
//!   (SMs × CUDA cores per SM × 2 × SM clock); the bandwidth is the memory's (memory clock
//!   × bus width / 8 × data rate). A node with neither attribute keeps its recorded
//!   duration (and is counted);
//! - `scale:GPU`: its recorded duration × (the roofline time on the rank's GPU / the
//!   roofline time on GPU, the catalog GPU the trace was recorded on); where the node has
//!   neither attribute, the ratio of the two GPUs' peak FLOP/s.
//!
//! - `model:FILE.rhai`: the script's `compute_time(node)` (crate::model).
//!
//! CPU ops keep their recorded duration under every policy.

use hetsim_chakra::{DataType, TraceNode};
use hetsim_models::catalog::{peak_keys, Component, ComponentKind};
use hetsim_system::number_attribute;

/// A compute policy, as `--compute` names it.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Policy {
    #[default]
    Replay,
    Roofline,
    /// The catalog GPU the trace was recorded on.
    Scale(Peak),
    /// A Rhai script's `compute_time(node)` (crate::model), its file and source.
    Model {
        path: std::path::PathBuf,
        source: String,
    },
}

impl Policy {
    /// `replay`, `roofline` or `scale:GPU NAME` (a GPU of the catalog).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            None if text == "replay" => Ok(Policy::Replay),
            None if text == "roofline" => Ok(Policy::Roofline),
            Some(("scale", gpu)) => {
                let catalog = hetsim_models::catalog::components();
                let found = catalog
                    .iter()
                    .find(|c| c.kind == ComponentKind::Gpu && c.name.eq_ignore_ascii_case(gpu.trim()))
                    .ok_or_else(|| {
                        let gpus: Vec<&str> = catalog
                            .iter()
                            .filter(|c| c.kind == ComponentKind::Gpu)
                            .map(|c| c.name.as_str())
                            .collect();
                        format!(
                            "scale:{gpu}: no GPU of that name in the catalog ({})",
                            gpus.join(", ")
                        )
                    })?;
                Peak::of(found)
                    .map(Policy::Scale)
                    .ok_or_else(|| format!("scale:{gpu}: the catalog states no peak FLOP/s for it"))
            }
            Some(("model", file)) => {
                let path = std::path::PathBuf::from(file);
                let source =
                    std::fs::read_to_string(&path).map_err(|e| format!("--compute model:{file}: {e}"))?;
                Ok(Policy::Model { path, source })
            }
            _ => Err(format!(
                "--compute {text:?}: expected replay, roofline, scale:GPU or model:FILE.rhai"
            )),
        }
    }
}

/// A GPU's peak rates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peak {
    /// The fallback rate: FP32's, or the component's `peakFlops` [FLOP/s].
    pub flops: f64,
    /// Memory bandwidth [B/s]; 0 where unknown.
    pub bandwidth: f64,
    /// The rate of each data type the catalog states, by `DataType as usize` [FLOP/s].
    pub by_type: [Option<f64>; DataType::ALL.len()],
}

/// The catalog attributes that give a data type's rate, the first stated one winning:
/// FP64 on the tensor cores where there are, as cuBLAS's DGEMM runs (sm_80 and later).
fn rate_keys(dtype: DataType) -> &'static [&'static str] {
    match dtype {
        DataType::Fp64 => &[peak_keys::FP64_TENSOR, peak_keys::FP64],
        DataType::Fp32 => &[],
        DataType::Tf32 => &[peak_keys::TF32_TENSOR],
        DataType::Fp16 => &[peak_keys::FP16_TENSOR],
        DataType::Bf16 => &[peak_keys::BF16_TENSOR],
        DataType::Fp8 => &[peak_keys::FP8_TENSOR],
    }
}

/// A roofline time, and whether its FLOPs were timed at the fallback rate for want of the
/// node's data type or of the GPU's rate for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Roofline {
    pub seconds: f64,
    pub fallback: bool,
}

impl Peak {
    /// The peaks of a GPU component, or `None` when it states too little.
    pub fn of(component: &Component) -> Option<Self> {
        let a = |k| number_attribute(component, k);
        let flops =
            a("peakFlops").or_else(|| Some(a("SMs")? * a("CUDACores")? * 2.0 * a("SMCoreClock")? * 1e6))?;
        let bandwidth = match (a("memoryClock"), a("busWidth"), a("dataRate")) {
            (Some(clock), Some(width), Some(rate)) => clock * 1e6 * width / 8.0 * rate,
            _ => 0.0,
        };
        let mut by_type = [None; DataType::ALL.len()];
        for dtype in DataType::ALL {
            by_type[dtype as usize] = match dtype {
                DataType::Fp32 => Some(flops),
                _ => rate_keys(dtype).iter().find_map(|&k| a(k)).filter(|&r| r > 0.0),
            };
        }
        (flops > 0.0).then_some(Peak {
            flops,
            bandwidth,
            by_type,
        })
    }

    /// The rate a node of `dtype` computes at, and whether it is the fallback's.
    pub fn flops_for(&self, dtype: Option<DataType>) -> (f64, bool) {
        match dtype.and_then(|t| self.by_type[t as usize]) {
            Some(rate) => (rate, false),
            None => (self.flops, true),
        }
    }

    /// The roofline time of `node`, if it has `num_ops` or `tensor_size`.
    pub fn roofline(&self, node: &TraceNode) -> Option<Roofline> {
        let a = &node.attributes;
        if a.num_ops.is_none() && a.tensor_size.is_none() {
            return None;
        }
        let (flops, fallback) = self.flops_for(a.dtype);
        let compute = a.num_ops.unwrap_or(0.0) / flops;
        let memory = match a.tensor_size {
            Some(bytes) if self.bandwidth > 0.0 => bytes / self.bandwidth,
            _ => 0.0,
        };
        Some(Roofline {
            seconds: compute.max(memory),
            fallback: fallback && a.num_ops.is_some_and(|flops| flops > 0.0),
        })
    }
}

/// A GPU compute node's time under a policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuTime {
    /// [s]
    pub seconds: f64,
    /// The recorded duration was kept for want of the attributes the policy reads.
    pub kept_recorded: bool,
    /// Its FLOPs were timed at the fallback rate (FP32's) for want of a data type or of
    /// the GPU's rate for it.
    pub fallback: bool,
}

/// A GPU compute node's time on a GPU with `peak`.
pub fn gpu_time(policy: &Policy, node: &TraceNode, peak: Option<&Peak>) -> GpuTime {
    let recorded = node.duration_micros as f64 * 1e-6;
    let time = |seconds, kept_recorded, fallback| GpuTime {
        seconds,
        kept_recorded,
        fallback,
    };
    match (policy, peak) {
        // A model's time is asked by the caller (crate::model); here it keeps the record.
        // (A model without `compute_time` keeps it by choice: not counted.)
        (Policy::Replay | Policy::Model { .. }, _) => time(recorded, false, false),
        (_, None) => time(recorded, true, false),
        (Policy::Roofline, Some(peak)) => match peak.roofline(node) {
            Some(r) => time(r.seconds, false, r.fallback),
            None => time(recorded, true, false),
        },
        (Policy::Scale(source), Some(target)) => match (target.roofline(node), source.roofline(node)) {
            (Some(t), Some(s)) if s.seconds > 0.0 => {
                time(recorded * t.seconds / s.seconds, false, t.fallback || s.fallback)
            }
            _ => {
                let (target_flops, t) = target.flops_for(node.attributes.dtype);
                let (source_flops, s) = source.flops_for(node.attributes.dtype);
                time(recorded * source_flops / target_flops, false, t || s)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetsim_chakra::writer::node;
    use hetsim_chakra::NodeKind;

    fn peak(flops: f64, bandwidth: f64) -> Peak {
        let mut by_type = [None; DataType::ALL.len()];
        by_type[DataType::Fp32 as usize] = Some(flops);
        Peak {
            flops,
            bandwidth,
            by_type,
        }
    }

    #[test]
    fn roofline_takes_the_slower_of_flops_and_bytes() {
        let peak = peak(1e12, 1e11);
        let mut n = node(1, "gemm", NodeKind::Comp);
        n.duration_micros = 7;
        n.attributes.num_ops = Some(2e9);
        n.attributes.tensor_size = Some(1e8);
        let time = |policy: &Policy, n: &TraceNode, p: &Peak| {
            let t = gpu_time(policy, n, Some(p));
            (t.seconds, t.kept_recorded)
        };
        // 2 ms of FLOPs, 1 ms of bytes; no data type: FP32's rate, the fallback.
        assert_eq!(time(&Policy::Roofline, &n, &peak), (2e-3, false));
        assert!(gpu_time(&Policy::Roofline, &n, Some(&peak)).fallback);
        n.attributes.num_ops = None;
        assert_eq!(time(&Policy::Roofline, &n, &peak), (1e-3, false));
        n.attributes.tensor_size = None;
        assert_eq!(time(&Policy::Roofline, &n, &peak), (7e-6, true));
        assert_eq!(time(&Policy::Replay, &n, &peak), (7e-6, false));
        let slower = Peak {
            flops: 0.5e12,
            ..peak
        };
        assert_eq!(time(&Policy::Scale(slower), &n, &peak), (3.5e-6, false));
    }

    #[test]
    fn a_data_type_picks_its_rate_and_a_missing_one_falls_back_to_fp32() {
        let mut tensor = peak(1e12, 1e11);
        tensor.by_type[DataType::Bf16 as usize] = Some(16e12);
        let mut n = node(1, "gemm", NodeKind::Comp);
        n.attributes.num_ops = Some(32e9);
        n.attributes.dtype = Some(DataType::Bf16);
        // 32 GFLOP at 16 TFLOP/s: 2 ms, not the fallback.
        let t = gpu_time(&Policy::Roofline, &n, Some(&tensor));
        assert_eq!((t.seconds, t.fallback), (2e-3, false));
        // FP8, which this GPU states no rate for: FP32's 1 TFLOP/s, counted.
        n.attributes.dtype = Some(DataType::Fp8);
        let t = gpu_time(&Policy::Roofline, &n, Some(&tensor));
        assert_eq!((t.seconds, t.fallback), (32e-3, true));
        // FP32 is FP32's rate, no fallback.
        n.attributes.dtype = Some(DataType::Fp32);
        assert!(!gpu_time(&Policy::Roofline, &n, Some(&tensor)).fallback);
    }

    #[test]
    fn policies_parse_and_scale_finds_catalog_gpus() {
        assert_eq!(Policy::parse("replay"), Ok(Policy::Replay));
        assert!(matches!(Policy::parse("scale:H100 SXM5 80GB"), Ok(Policy::Scale(p)) if p.flops > 6e13));
        let e = Policy::parse("scale:Nope").expect_err("unknown");
        assert!(e.contains("H100 SXM5 80GB"), "{e}");
        assert!(Policy::parse("fast").is_err());
    }
}
