//! How long a compute node takes on the system: the compute policy.
//!
//! - `replay`: its recorded duration (`duration_micros`);
//! - `roofline`: `max(num_ops / peak FLOP/s, tensor_size / memory bandwidth)` of the GPU its
//!   rank runs on, from the catalog: peak FLOP/s is the component's `peakFlops` attribute
//!   where stated, else FP32's (SMs × CUDA cores per SM × 2 × SM clock); the bandwidth is
//!   the memory's (memory clock × bus width / 8 × data rate). A node with neither
//!   attribute keeps its recorded duration (and is counted);
//! - `scale:GPU`: its recorded duration × (the roofline time on the rank's GPU / the
//!   roofline time on GPU, the catalog GPU the trace was recorded on); where the node has
//!   neither attribute, the ratio of the two GPUs' peak FLOP/s.
//!
//! - `model:FILE.rhai`: the script's `compute_time(node)` (crate::model).
//!
//! CPU ops keep their recorded duration under every policy.

use hetsim_chakra::TraceNode;
use hetsim_models::catalog::{Component, ComponentKind};
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
    /// [FLOP/s]
    pub flops: f64,
    /// Memory bandwidth [B/s]; 0 where unknown.
    pub bandwidth: f64,
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
        (flops > 0.0).then_some(Peak { flops, bandwidth })
    }

    /// The roofline time of `node`, if it has `num_ops` or `tensor_size`.
    pub fn roofline(&self, node: &TraceNode) -> Option<f64> {
        let a = &node.attributes;
        if a.num_ops.is_none() && a.tensor_size.is_none() {
            return None;
        }
        let compute = a.num_ops.unwrap_or(0.0) / self.flops;
        let memory = match a.tensor_size {
            Some(bytes) if self.bandwidth > 0.0 => bytes / self.bandwidth,
            _ => 0.0,
        };
        Some(compute.max(memory))
    }
}

/// A GPU compute node's time on a GPU with `peak` [s], and whether its recorded duration
/// was kept for want of the attributes the policy reads.
pub fn gpu_time(policy: &Policy, node: &TraceNode, peak: Option<&Peak>) -> (f64, bool) {
    let recorded = node.duration_micros as f64 * 1e-6;
    match (policy, peak) {
        // A model's time is asked by the caller (crate::model); here it keeps the record.
        (Policy::Replay | Policy::Model { .. }, _) | (_, None) => {
            (recorded, !matches!(policy, Policy::Replay))
        }
        (Policy::Roofline, Some(peak)) => match peak.roofline(node) {
            Some(t) => (t, false),
            None => (recorded, true),
        },
        (Policy::Scale(source), Some(target)) => match (target.roofline(node), source.roofline(node)) {
            (Some(t), Some(s)) if s > 0.0 => (recorded * t / s, false),
            _ => (recorded * source.flops / target.flops, false),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetsim_chakra::writer::node;
    use hetsim_chakra::NodeKind;

    #[test]
    fn roofline_takes_the_slower_of_flops_and_bytes() {
        let peak = Peak {
            flops: 1e12,
            bandwidth: 1e11,
        };
        let mut n = node(1, "gemm", NodeKind::Comp);
        n.duration_micros = 7;
        n.attributes.num_ops = Some(2e9);
        n.attributes.tensor_size = Some(1e8);
        // 2 ms of FLOPs, 1 ms of bytes.
        assert_eq!(gpu_time(&Policy::Roofline, &n, Some(&peak)), (2e-3, false));
        n.attributes.num_ops = None;
        assert_eq!(gpu_time(&Policy::Roofline, &n, Some(&peak)), (1e-3, false));
        n.attributes.tensor_size = None;
        assert_eq!(gpu_time(&Policy::Roofline, &n, Some(&peak)), (7e-6, true));
        assert_eq!(gpu_time(&Policy::Replay, &n, Some(&peak)), (7e-6, false));
        let slower = Peak {
            flops: 0.5e12,
            bandwidth: 1e11,
        };
        assert_eq!(gpu_time(&Policy::Scale(slower), &n, Some(&peak)), (3.5e-6, false));
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
