//! The catalog's server CPUs, stated as the desktop CPU entry is: `performance` = cores ×
//! base clock × FP32 FLOP per cycle and core (its vector FMA units), `cores`, and the TDP
//! as `powerConsumptionLoad`; no idle power, which neither vendor states.

use super::{Component, ComponentKind};
use crate::params::Scalar;

/// A CPU entry.
fn cpu(
    name: &str,
    vendor: &str,
    comment: &str,
    source: &str,
    cores: f64,
    performance: f64,
    tdp: f64,
) -> Component {
    Component {
        name: name.to_owned(),
        vendor: vendor.to_owned(),
        kind: ComponentKind::Cpu,
        comment: comment.to_owned(),
        source: source.to_owned(),
        attributes: [
            ("performance".to_owned(), Scalar::Number(performance)),
            ("cores".to_owned(), Scalar::Number(cores)),
            ("powerConsumptionLoad".to_owned(), Scalar::Number(tdp)),
        ]
        .into_iter()
        .collect(),
    }
}

/// The server CPUs of current GPU boards.
pub(super) fn server_cpus() -> [Component; 2] {
    [
        cpu(
            "AMD EPYC 9654",
            "AMD",
            "Zen 4 (Genoa), 96 cores, the host CPU of many HGX H100 servers",
            "AMD EPYC 9654 product page: 96 cores, 2.40 GHz base (3.70 GHz boost), 360 W default TDP; Zen 4 executes AVX-512 on two 256-bit FMA pipes: 2 x 8 FP32 x 2 = 32 FLOP/cycle; performance = 96 x 2.40 GHz x 32 = 7.37 TFLOP/s peak",
            96.0,
            96.0 * 2.4e9 * 32.0,
            360.0,
        ),
        cpu(
            "Intel Xeon Platinum 8480+",
            "Intel",
            "Sapphire Rapids, 56 cores, the host CPU of the DGX H100 (two per board)",
            "Intel ARK, Xeon Platinum 8480+: 56 cores, 2.00 GHz base (3.80 GHz turbo), 350 W TDP, two AVX-512 FMA units per core: 2 x 16 FP32 x 2 = 64 FLOP/cycle; performance = 56 x 2.00 GHz x 64 = 7.17 TFLOP/s peak; NVIDIA DGX H100 user guide: 2 x Xeon Platinum 8480C",
            56.0,
            56.0 * 2.0e9 * 64.0,
            350.0,
        ),
    ]
}
