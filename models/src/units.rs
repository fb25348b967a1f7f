//! The unit of each attribute the built-in catalog and models use, as pages and listings
//! show it beside the value (docs/MODELS.md's tables say the same).

/// The unit of attribute `name`, or `None` for a count (`SMs`, `cores`) or a ratio (`lambda`,
/// `duplex`), and for an attribute hetsim does not know.
pub fn attribute_unit(name: &str) -> Option<&'static str> {
    Some(match name {
        "SMCoreClock" | "memoryClock" => "MHz",
        "busWidth" => "bits",
        "GMEMThroughput" => "B/cycle/SM",
        "CUDACores" | "fp32Lanes" | "fp64Lanes" | "intLanes" | "sfuLanes" => "per SM",
        "schedulers" => "per SM",
        "warpSize" => "threads",
        "L2Size" => "B",
        "bandwidth" | "memoryBandwidth" | "L2Bandwidth" | "portBandwidth" => "B/s",
        "performance"
        | "peakFlops"
        | "peakFlopsFP64"
        | "peakFlopsFP64Tensor"
        | "peakFlopsTF32Tensor"
        | "peakFlopsFP16Tensor"
        | "peakFlopsBF16Tensor"
        | "peakFlopsFP8Tensor" => "FLOP/s",
        "blockLaunchRate" => "blocks/s",
        "kernelLaunchOverhead"
        | "latency"
        | "startup"
        | "startupDtH"
        | "startupHtD"
        | "startupPageableDtH"
        | "startupPageableHtD" => "s",
        "memoryQueueCycles" | "barrierCycles" => "cycles",
        "L1WavefrontsPerCycle" | "sharedWavefrontsPerCycle" => "wavefronts/cycle/SM",
        "calibratedResidentWarpsMax" | "calibratedResidentWarpsMin" => "warps/SM",
        "calibratedWarpsMax" | "calibratedWarpsMin" => "warps",
        "powerCompute" | "powerIdle" | "powerMemory" | "powerConsumptionIdle" | "powerConsumptionLoad" => "W",
        "pageableDtH" | "pageableHtD" => "SIZE [B]:BANDWIDTH [B/s] knots",
        "failureRate" => "1/s",
        "dataRate" => "transfers/clock",
        "errorCompute" | "errorMemory" | "errorLatency" | "errorLaunch" | "errorPageable" | "errorPinned"
        | "errorExtrapolation" => "relative",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_attribute_of_the_catalog_has_a_unit_or_is_a_known_ratio() {
        let ratios = [
            "SMs",
            "cores",
            "lambda",
            "lambdaDtH",
            "lambdaHtD",
            "duplex",
            "issueEfficiency",
            "warpSkew",
            "channels",
            "computeCapability",
            "ports",
            "hostInterfaces",
            "reduction",
        ];
        for component in crate::catalog::components() {
            for name in component.attributes.keys() {
                assert!(
                    attribute_unit(name).is_some() || ratios.contains(&name.as_str()),
                    "{}: attribute `{name}` has no unit",
                    component.name
                );
            }
        }
    }
}
