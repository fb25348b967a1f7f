//! A compute node's data type, which picks the GPU's peak FLOP/s in a roofline.
//!
//! Chakra's schema has no data-type attribute. Traces converted from PyTorch carry the
//! types of a node's inputs as PyTorch's execution trace records them (`IOInfo.types`,
//! e.g. `['Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)', 'Int']`): a node's type is the
//! first floating-point tensor's. A trace may also state it in a `dtype` string attribute
//! (hetsim's extension, which wins over the inputs): `fp64`, `fp32`, `tf32`, `fp16`, `bf16`,
//! `fp8`, or PyTorch's names (`float`, `c10::Half`, `bfloat16`, `Float8_e4m3fn`, ...).

/// The floating-point types whose peak rates GPU datasheets state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    Fp64,
    Fp32,
    /// FP32 operands multiplied on tensor cores at TF32 precision: PyTorch records such
    /// tensors as `float`, so only a `dtype` attribute names it.
    Tf32,
    Fp16,
    Bf16,
    /// Any 8-bit float (E4M3, E5M2).
    Fp8,
}

impl DataType {
    pub const ALL: [DataType; 6] = [
        DataType::Fp64,
        DataType::Fp32,
        DataType::Tf32,
        DataType::Fp16,
        DataType::Bf16,
        DataType::Fp8,
    ];

    /// hetsim's name: `fp64`, `fp32`, `tf32`, `fp16`, `bf16`, `fp8`.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Fp64 => "fp64",
            DataType::Fp32 => "fp32",
            DataType::Tf32 => "tf32",
            DataType::Fp16 => "fp16",
            DataType::Bf16 => "bf16",
            DataType::Fp8 => "fp8",
        }
    }

    /// The type `text` names: hetsim's name or PyTorch's (with or without `c10::`,
    /// `torch.` or `Tensor(...)` around it), case aside; `None` for any other type
    /// (integers, booleans, complex numbers).
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        let t = t
            .strip_prefix("Tensor(")
            .and_then(|inner| inner.strip_suffix(')'))
            .unwrap_or(t);
        let t = t.trim_start_matches("c10::").trim_start_matches("torch.");
        let lower = t.to_ascii_lowercase();
        Some(match lower.as_str() {
            "fp64" | "double" | "float64" => DataType::Fp64,
            "fp32" | "float" | "float32" => DataType::Fp32,
            "tf32" => DataType::Tf32,
            "fp16" | "half" | "float16" => DataType::Fp16,
            "bf16" | "bfloat16" => DataType::Bf16,
            _ if lower.starts_with("fp8") || lower.starts_with("float8") => DataType::Fp8,
            _ => return None,
        })
    }

    /// The type of the first floating-point tensor in PyTorch's input types (the text
    /// of `IOInfo.types`; tensors inside `GenericList[...]` count too).
    pub fn of_input_types(types: &str) -> Option<Self> {
        types.match_indices("Tensor(").find_map(|(at, _)| {
            let rest = &types[at + "Tensor(".len()..];
            let end = rest.find(')')?;
            DataType::parse(&rest[..end])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::DataType;

    #[test]
    fn pytorch_input_types_and_hetsim_names_give_the_type() {
        // As Chakra's test trace (tests/data/feeder_tests_trace.tar.gz) records a kernel's
        // inputs, and a bf16 GEMM's (an index tensor first, then the operands).
        assert_eq!(
            DataType::of_input_types("['GenericList[Tensor(float),Tensor(float)]', 'Int']"),
            Some(DataType::Fp32)
        );
        assert_eq!(
            DataType::of_input_types(
                "['Tensor(long int)', 'Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)']"
            ),
            Some(DataType::Bf16)
        );
        assert_eq!(DataType::of_input_types("['Int', 'Tensor(bool)']"), None);
        for (text, expected) in [
            ("c10::Half", DataType::Fp16),
            ("double", DataType::Fp64),
            ("TF32", DataType::Tf32),
            ("c10::Float8_e4m3fn", DataType::Fp8),
            ("torch.bfloat16", DataType::Bf16),
        ] {
            assert_eq!(DataType::parse(text), Some(expected), "{text}");
        }
        for t in DataType::ALL {
            assert_eq!(DataType::parse(t.name()), Some(t));
        }
    }
}
