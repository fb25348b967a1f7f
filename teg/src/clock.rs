//! Seed 002, section 3.2.1: an execution latency from a `clock()` measurement.

/// The execution latency of an instruction from `n` dependent copies of it between two
/// `clock()` reads that measured `cycles`: the reads' own cost (`overhead`: the dependent
/// `SHL` after `S2R`, 24 + 4 cycles on GT200) and the last copy's issue latency within a warp
/// (`issue`) are taken off, and the rest spread over the `n − 1` dependences.
pub fn execution_latency(cycles: f64, overhead: f64, issue: f64, n: u32) -> f64 {
    (cycles - overhead - issue) / f64::from(n.saturating_sub(1).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_002_fadd32_is_24_cycles() {
        // "For 21 FADD32 instructions between the two clock measurements, the measured cycles
        // are 514 ... (514 − 28 − 8)/20 ≈ 24."
        let l = execution_latency(514.0, 28.0, 8.0, 21);
        assert!((l - 23.9).abs() < 1e-9, "{l}");
        assert_eq!(l.round(), 24.0);
    }
}
