//! Peak FLOP/s by data type, as NVIDIA's datasheets state them, for a roofline of compute
//! by its data type (hetsim-replay's `roofline` and `scale` policies).
//!
//! The figures are the dense ones: where a datasheet gives a tensor-core rate "with
//! sparsity" only (H100, H200), it is halved, as its footnote says the dense rate is. The
//! FP32 rate is not listed: it is SMs × CUDA cores per SM × 2 × boost clock, the
//! attributes every catalog GPU has (66.9 TFLOP/s for the H100 SXM5 and the H200 against
//! their datasheets' 67; 19.5 for the A100).

/// The attribute names, by data type.
pub mod peak_keys {
    /// FP64 on the CUDA cores [FLOP/s].
    pub const FP64: &str = "peakFlopsFP64";
    /// FP64 on the tensor cores (DMMA, sm_80 and later) [FLOP/s].
    pub const FP64_TENSOR: &str = "peakFlopsFP64Tensor";
    /// TF32 on the tensor cores [FLOP/s].
    pub const TF32_TENSOR: &str = "peakFlopsTF32Tensor";
    /// FP16 on the tensor cores (FP32 accumulate) [FLOP/s].
    pub const FP16_TENSOR: &str = "peakFlopsFP16Tensor";
    /// BF16 on the tensor cores [FLOP/s].
    pub const BF16_TENSOR: &str = "peakFlopsBF16Tensor";
    /// FP8 (E4M3 or E5M2) on the tensor cores [FLOP/s].
    pub const FP8_TENSOR: &str = "peakFlopsFP8Tensor";
}

use peak_keys::*;

/// A datasheet's dense peak rates and where they come from.
pub(super) struct DatasheetPeaks {
    pub source: &'static str,
    pub rates: &'static [(&'static str, f64)],
}

/// The H100 SXM5's rates, which the H200's datasheet repeats (the same GH100 at the same
/// clocks).
const HOPPER_SXM: &[(&str, f64)] = &[
    (FP64, 34e12),
    (FP64_TENSOR, 67e12),
    (TF32_TENSOR, 494.5e12),
    (FP16_TENSOR, 989.5e12),
    (BF16_TENSOR, 989.5e12),
    (FP8_TENSOR, 1979e12),
];

pub(super) const H100_SXM5: DatasheetPeaks = DatasheetPeaks {
    source: "peak FLOP/s, NVIDIA H100 Tensor Core GPU datasheet (2023), SXM column: FP64 34, FP64 Tensor 67, TF32 Tensor 989*, BF16 and FP16 Tensor 1,979*, FP8 Tensor 3,958* TFLOPS, * with sparsity: the dense half of each is taken",
    rates: HOPPER_SXM,
};

pub(super) const H200_SXM: DatasheetPeaks = DatasheetPeaks {
    source: "peak FLOP/s, NVIDIA H200 Tensor Core GPU datasheet (2024), SXM column: FP64 34, FP64 Tensor 67, TF32 Tensor 989*, BF16 and FP16 Tensor 1,979*, FP8 Tensor 3,958* TFLOPS, * with sparsity: the dense half of each is taken",
    rates: HOPPER_SXM,
};

pub(super) const H100_PCIE: DatasheetPeaks = DatasheetPeaks {
    source: "peak FLOP/s, NVIDIA H100 Tensor Core GPU datasheet (2023), PCIe column: FP64 26, FP64 Tensor 51, TF32 Tensor 756*, BF16 and FP16 Tensor 1,513*, FP8 Tensor 3,026* TFLOPS, * with sparsity: the dense half of each is taken",
    rates: &[
        (FP64, 26e12),
        (FP64_TENSOR, 51e12),
        (TF32_TENSOR, 378e12),
        (FP16_TENSOR, 756.5e12),
        (BF16_TENSOR, 756.5e12),
        (FP8_TENSOR, 1513e12),
    ],
};

pub(super) const A100_SXM4: DatasheetPeaks = DatasheetPeaks {
    source: "peak FLOP/s, NVIDIA A100 Tensor Core GPU datasheet (2021): FP64 9.7, FP64 Tensor 19.5, TF32 Tensor 156, BF16 and FP16 Tensor 312 TFLOPS (dense; no FP8)",
    rates: &[
        (FP64, 9.7e12),
        (FP64_TENSOR, 19.5e12),
        (TF32_TENSOR, 156e12),
        (FP16_TENSOR, 312e12),
        (BF16_TENSOR, 312e12),
    ],
};

pub(super) const V100_SXM2: DatasheetPeaks = DatasheetPeaks {
    source: "peak FLOP/s, NVIDIA Tesla V100 datasheet (2020), SXM2: double precision 7.8, tensor performance 125 TFLOPS (FP16; no FP64, TF32, BF16 or FP8 tensor cores)",
    rates: &[(FP64, 7.8e12), (FP16_TENSOR, 125e12)],
};
