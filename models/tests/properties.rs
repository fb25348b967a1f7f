//! Invariants of the models, checked on generated inputs.

use hetsim_models::{occupancy, volkov};
use proptest::prelude::*;

fn kernel() -> impl Strategy<Value = volkov::Input> {
    (
        (
            1.0..200.0f64,
            100.0..3000.0f64,
            16.0..256.0f64,
            1.0..8.0f64,
            1.0..64.0f64,
        ),
        (
            1.0..1e7f64,
            1.0..1024.0f64,
            0.0..1e4f64,
            0.0..1e4f64,
            0.0..4096.0f64,
        ),
        (1.0..1e5f64, 1.0..64.0f64, 0.1..2.0f64),
    )
        .prop_map(
            |((sms, clock, cores, sched, gmem), (grid, block, ins, issued, bytes), (lat, occ, lambda))| {
                volkov::Input {
                    sms: sms.round(),
                    sm_core_clock_mhz: clock,
                    cuda_cores: cores,
                    schedulers: sched.round(),
                    warp_size: 32.0,
                    gmem_throughput: gmem,
                    grid_size: grid.round(),
                    block_size: block.round(),
                    cuda_core_instructions: ins,
                    issued_instructions: issued,
                    gmem_bytes_transferred: bytes,
                    latency_bound: lat,
                    occupancy: occ,
                    kernel_execution_lambda: lambda,
                }
            },
        )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

proptest! {
    #[test]
    fn warp_throughput_never_exceeds_either_bound(k in kernel()) {
        let o = volkov::evaluate(&k);
        prop_assert!(o.warp_throughput <= o.throughput_bound);
        prop_assert!(o.warp_throughput <= o.latency_bound_throughput);
        prop_assert!(o.seconds.is_finite() && o.seconds >= 0.0);
    }

    #[test]
    fn kernel_time_is_monotone_in_each_count(k in kernel(), factor in 1.0..4.0f64) {
        let base = volkov::evaluate(&k).seconds;
        let grown: [fn(&mut volkov::Input, f64); 6] = [
            |k, f| k.grid_size *= f,
            |k, f| k.block_size *= f,
            |k, f| k.cuda_core_instructions *= f,
            |k, f| k.issued_instructions *= f,
            |k, f| k.gmem_bytes_transferred *= f,
            |k, f| k.latency_bound *= f,
        ];
        for grow in grown {
            let mut bigger = k.clone();
            grow(&mut bigger, factor);
            prop_assert!(volkov::evaluate(&bigger).seconds >= base * (1.0 - 1e-12));
        }
    }

    #[test]
    fn kernel_time_is_inverse_in_sms_clock_and_lambda(k in kernel(), factor in 1.0..8.0f64) {
        let base = volkov::evaluate(&k).seconds;
        let scaled: [fn(&mut volkov::Input, f64); 3] = [
            |k, f| k.sms *= f,
            |k, f| k.sm_core_clock_mhz *= f,
            |k, f| k.kernel_execution_lambda *= f,
        ];
        for scale in scaled {
            let mut faster = k.clone();
            scale(&mut faster, factor);
            prop_assert!(close(volkov::evaluate(&faster).seconds * factor, base));
        }
    }

    #[test]
    fn occupancy_never_exceeds_the_compute_capability_limits(
        cc in 0..occupancy::COMPUTE_CAPABILITIES.len(),
        threads in 1u32..=1024,
        regs in 1u32..=255,
        smem_fraction in 0.0..1.0f64,
    ) {
        let limits = &occupancy::COMPUTE_CAPABILITIES[cc];
        let smem = (f64::from(limits.max_shared_memory_per_block) * smem_fraction) as u32;
        let o = occupancy::evaluate(&occupancy::Input {
            limits,
            threads_per_block: threads,
            registers_per_thread: regs,
            shared_memory_per_block: smem,
        });
        prop_assert!(o.active_warps_per_sm <= limits.max_warps_per_sm);
        prop_assert!(o.active_blocks_per_sm <= limits.max_blocks_per_sm);
        prop_assert!(o.active_blocks_per_sm * o.warps_per_block * o.registers_per_warp <= limits.registers_per_sm);
        prop_assert!(o.active_blocks_per_sm * o.shared_memory_per_block_allocated <= limits.shared_memory_per_sm);
        prop_assert!((0.0..=1.0).contains(&o.occupancy));
    }
}
