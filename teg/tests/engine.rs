//! The issue engine on instruction streams built by hand, with seed 002's GT200 parameters
//! (teg/data/gt200.toml, from its Table 1 and section 3.2).

use hetsim_kernel::arch::Pipe;
use hetsim_kernel::emulate::Issued;
use hetsim_teg::arch::{pipe_index, ArchParams, SHIPPED};
use hetsim_teg::engine::{run, Block, SmConfig};
use hetsim_teg::program::{Op, Source};
use proptest::prelude::*;
use std::sync::Arc;

fn gt200() -> ArchParams {
    ArchParams::parse(SHIPPED[2].1, "gt200.toml").expect("reads")
}

/// An instruction of `pipe` with GT200's timing, reading `reads` and writing `writes`.
fn op(params: &ArchParams, pipe: Pipe, reads: &[u16], writes: &[u16]) -> Op {
    let t = params.pipe(pipe);
    let dram = pipe == Pipe::GlobalLoad;
    Op {
        pipe: pipe_index(pipe),
        interval: t.interval as u64,
        same_warp: t.same_warp as u64,
        latency: if dram {
            params.memory.global as u64
        } else {
            t.latency as u64
        },
        source: if dram { Source::Dram } else { Source::Unit },
        reads: reads.to_vec(),
        writes: writes.to_vec(),
        control: None,
    }
}

fn config(schedulers: usize, resident_blocks: usize, memory_slots: Option<usize>) -> SmConfig {
    SmConfig {
        schedulers,
        resident_blocks,
        taken_branch: 0,
        replacement: 0,
        dispatch_interval: 0,
        memory_slots,
        memory_queue_cycles: 0.0,
        sectors_per_wavefront: 4,
        perfect_coalescing: false,
    }
}

/// A warp running instructions `0..n` in order, `sectors` per access.
fn stream(n: u32, sectors: u16) -> Arc<[Issued]> {
    (0..n)
        .map(|i| Issued {
            instruction: i,
            lanes: 32,
            sectors,
            coalesced_sectors: sectors,
        })
        .collect::<Vec<_>>()
        .into()
}

#[test]
fn seed_002_fadd_chain_measures_its_execution_latency() {
    // Section 3.2.1: 21 dependent FADD32 between two clock() reads measure 514 cycles, of
    // which 28 are the reads' own and 8 the last FADD's issue latency within the warp.
    let p = gt200();
    let ops: Vec<Op> = (0..21).map(|_| op(&p, Pipe::Fp32, &[4], &[4])).collect();
    let sm = run(&ops, &config(1, 1, None), &[vec![stream(21, 0)]]);
    let last_issue = sm.cycles - 1;
    assert_eq!(
        last_issue,
        20 * 24,
        "each FADD waits for its predecessor's 24 cycles"
    );
    let measured = last_issue as f64 + 8.0 + 28.0;
    assert!(
        (measured - 514.0).abs() / 514.0 < 0.01,
        "{measured} cycles against the seed's 514"
    );
}

#[test]
fn one_warp_cannot_reach_the_pipes_peak_two_can() {
    // Section 3.2.2: within a warp FADD issues every 8 cycles, across warps every 4.
    let p = gt200();
    let ops: Vec<Op> = (0..16).map(|i| op(&p, Pipe::Fp32, &[], &[i])).collect();
    let one = run(&ops, &config(1, 1, None), &[vec![stream(16, 0)]]);
    assert_eq!(one.cycles, 15 * 8 + 1);
    let two = run(&ops, &config(1, 1, None), &[vec![stream(16, 0), stream(16, 0)]]);
    assert_eq!(two.cycles, 31 * 4 + 1, "the pipe, not the warp, sets the pace");
}

#[test]
fn memory_concurrency_caps_the_bandwidth() {
    // 64 warps each loading 8 coalesced accesses of 4 sectors (a warp ends when its loads
    // have arrived): with C_mem = 32 sectors held 440 cycles each, the SM moves 32/440
    // sectors a cycle, whatever the warps.
    let p = gt200();
    let ops: Vec<Op> = (0..8).map(|i| op(&p, Pipe::GlobalLoad, &[], &[i])).collect();
    let warps: Block = (0..64).map(|_| stream(8, 4)).collect();
    let sm = run(&ops, &config(1, 1, Some(32)), std::slice::from_ref(&warps));
    let sectors = 64 * 8 * 4;
    assert_eq!(sm.sectors, sectors);
    let bound = sectors as f64 / 32.0 * 440.0;
    assert!(
        sm.cycles as f64 >= bound && (sm.cycles as f64) < bound * 1.1,
        "{} cycles, bound {bound}",
        sm.cycles
    );
    let unbounded = run(&ops, &config(1, 1, None), &[warps]);
    assert!(
        unbounded.cycles * 5 < sm.cycles,
        "without C_mem only the issue slots remain"
    );
}

#[test]
fn blocks_wait_for_a_free_slot() {
    let p = gt200();
    let ops = vec![op(&p, Pipe::Fp32, &[1], &[1]); 3];
    let block = vec![stream(3, 0)];
    // One slot: three blocks run one after another, each 2 × 24 + 1 cycles, the next one's
    // first FADD waiting 3 more for the FP unit its predecessor's last took at cycle 48.
    let sm = run(
        &ops,
        &config(1, 1, None),
        &[block.clone(), block.clone(), block.clone()],
    );
    assert_eq!(sm.block_ends, vec![49, 101, 153]);
    // Three slots: together, each FADD 4 cycles (the FP unit's interval) after the other
    // block's.
    let sm = run(&ops, &config(1, 3, None), &[block.clone(), block.clone(), block]);
    assert_eq!(sm.block_ends, vec![49, 53, 57]);
}

proptest! {
    #[test]
    fn never_faster_than_the_issue_slots_or_one_warps_chain(
        warps in 1usize..12, length in 1u32..40, schedulers in 1usize..4, resident in 1usize..3,
    ) {
        let p = gt200();
        let ops: Vec<Op> = (0..length).map(|i| op(&p, if i % 3 == 0 { Pipe::Int } else { Pipe::Fp32 }, &[1], &[1])).collect();
        let blocks: Vec<Block> = (0..3).map(|_| (0..warps).map(|_| stream(length, 0)).collect()).collect();
        let sm = run(&ops, &config(schedulers, resident, None), &blocks);
        let instructions = (3 * warps) as u64 * u64::from(length);
        prop_assert_eq!(sm.issued, instructions);
        prop_assert!(sm.cycles >= instructions.div_ceil(schedulers as u64));
        prop_assert!(sm.cycles > u64::from(length - 1) * 24, "each warp's dependent chain");
        prop_assert!(sm.block_ends.iter().all(|&e| e <= sm.cycles));
    }
}
