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
        per_sm: t.per_sm,
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
        barrier: false,
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
        perfect_coalescing: false,
        conflict_free_shared: false,
        l1_latency: 38,
        l2_latency: 200,
        dram_fraction: None,
        barrier: 20,
        one_l1_data_path: false,
    }
}

/// Instruction `instruction` on 32 lanes, moving nothing.
fn issued(instruction: u32) -> Issued {
    Issued {
        instruction,
        lanes: 32,
        sectors: 0,
        coalesced_sectors: 0,
        missed_sectors: 0,
        l1_wavefronts: 0,
        wavefronts: 0,
        conflict_free_wavefronts: 0,
    }
}

/// A warp running `entries` in order.
fn warp(entries: impl IntoIterator<Item = Issued>) -> Arc<[Issued]> {
    entries.into_iter().collect::<Vec<_>>().into()
}

/// A warp running instructions `0..n` in order, `sectors` per access, all missing in L1.
fn stream(n: u32, sectors: u16) -> Arc<[Issued]> {
    warp((0..n).map(|i| Issued {
        sectors,
        coalesced_sectors: sectors,
        missed_sectors: sectors,
        ..issued(i)
    }))
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

/// A warp running `instructions`, in that order, with no memory traffic.
fn running(instructions: impl IntoIterator<Item = u32>) -> Arc<[Issued]> {
    warp(instructions.into_iter().map(issued))
}

#[test]
fn a_barrier_holds_the_block_until_its_last_warp_arrives() {
    // Instructions 0–9: a dependent FADD chain; 10: BAR.SYNC; 11–20: another chain.
    let p = gt200();
    let mut ops: Vec<Op> = (0..21).map(|_| op(&p, Pipe::Fp32, &[1], &[1])).collect();
    ops[10] = Op {
        barrier: true,
        reads: vec![],
        writes: vec![],
        ..op(&p, Pipe::Control, &[], &[])
    };
    // The slow warp reaches the barrier at 9 × 24 + 8 = 224 (its last FADD's same-warp issue
    // latency); the fast one waits there until 224 + 20, then for the FP unit the slow warp's
    // own FADD takes first (4 cycles), then runs its chain.
    let slow = running((0..11).chain([11]));
    let fast = running(10..21);
    let sm = run(&ops, &config(1, 1, None), &[vec![slow.clone(), fast.clone()]]);
    assert_eq!(sm.cycles, 224 + 20 + 4 + 9 * 24 + 1);
    // Without the barrier the fast warp runs its chain at once.
    ops[10].barrier = false;
    let free = run(&ops, &config(1, 1, None), &[vec![slow, fast]]);
    assert!(free.cycles < 260, "{} cycles", free.cycles);
}

#[test]
fn a_warp_that_ends_counts_as_arrived() {
    let p = gt200();
    let mut ops: Vec<Op> = (0..3).map(|_| op(&p, Pipe::Fp32, &[], &[1])).collect();
    ops[0].barrier = true;
    // One warp waits at the barrier; the other never reaches it and ends: the first goes on.
    let sm = run(&ops, &config(1, 1, None), &[vec![running([0, 1]), running([2])]]);
    assert!(sm.cycles > 20 && sm.cycles < 100, "{} cycles", sm.cycles);
    assert_eq!(sm.issued, 3);
}

#[test]
fn bank_conflicts_replay_through_the_pipe() {
    // Four independent shared loads of one warp, conflict-free (one every 8 cycles, the
    // same-warp issue latency) against 32-way conflicted: each holds the pipe for 32 passes.
    let p = gt200();
    let ops: Vec<Op> = (0..4)
        .map(|i| Op {
            source: Source::Shared,
            latency: 38,
            ..op(&p, Pipe::Shared, &[], &[i])
        })
        .collect();
    let accesses = |wavefronts| {
        warp((0..4).map(|i| Issued {
            wavefronts,
            conflict_free_wavefronts: 1,
            ..issued(i)
        }))
    };
    let interval = p.pipe(Pipe::Shared).interval as u64;
    let clean = run(&ops, &config(1, 1, None), &[vec![accesses(1)]]);
    let conflicted = run(&ops, &config(1, 1, None), &[vec![accesses(32)]]);
    assert_eq!(clean.cycles, 3 * 8 + 1);
    assert_eq!(conflicted.cycles, 3 * 32 * interval + 1);
    let what_if = SmConfig {
        conflict_free_shared: true,
        ..config(1, 1, None)
    };
    assert_eq!(run(&ops, &what_if, &[vec![accesses(32)]]).cycles, clean.cycles);
}

#[test]
fn loads_come_back_from_the_level_that_holds_them() {
    // One load of 4 sectors: all L1 hits; all missing with L2 holding every one; all DRAM.
    let p = gt200();
    let ops = vec![op(&p, Pipe::GlobalLoad, &[], &[2])];
    let load = |missed| {
        warp([Issued {
            sectors: 4,
            coalesced_sectors: 4,
            missed_sectors: missed,
            ..issued(0)
        }])
    };
    let cached = |f| SmConfig {
        dram_fraction: Some(f),
        ..config(1, 1, Some(32))
    };
    let l1 = run(&ops, &cached(0.0), &[vec![load(0)]]);
    let l2 = run(&ops, &cached(0.0), &[vec![load(4)]]);
    let dram = run(&ops, &cached(1.0), &[vec![load(4)]]);
    let uncached = run(&ops, &config(1, 1, Some(32)), &[vec![load(0)]]);
    assert_eq!((l1.cycles, l2.cycles), (38, 200));
    assert_eq!((l1.sectors, l2.sectors, dram.sectors), (0, 0, 4));
    assert_eq!(dram.cycles, 440);
    assert_eq!(
        (uncached.sectors, uncached.cycles),
        (4, 440),
        "no caches: every sector"
    );
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

#[test]
fn one_l1_data_path_makes_a_conflicted_shared_access_hold_up_a_global_load() {
    // Warp 0 reads shared memory 32-way conflicted, warp 1 then loads from global memory.
    // Apart (sm_5x–6x), the load issues the next cycle; on one L1 data path (sm_70+) it
    // waits for the shared access's 32 wavefronts.
    let p = gt200();
    let shared = Op {
        source: Source::Shared,
        latency: 38,
        per_sm: true,
        ..op(&p, Pipe::Shared, &[], &[1])
    };
    let load = Op {
        per_sm: true,
        ..op(&p, Pipe::GlobalLoad, &[], &[2])
    };
    let block = vec![
        warp([Issued {
            wavefronts: 32,
            conflict_free_wavefronts: 1,
            ..issued(0)
        }]),
        warp([Issued {
            sectors: 4,
            coalesced_sectors: 4,
            missed_sectors: 4,
            ..issued(1)
        }]),
    ];
    let apart = run(
        &[shared.clone(), load.clone()],
        &config(1, 1, None),
        std::slice::from_ref(&block),
    );
    let one_path = SmConfig {
        one_l1_data_path: true,
        ..config(1, 1, None)
    };
    let together = run(&[shared, load], &one_path, &[block]);
    let global = p.memory.global as u64;
    assert_eq!(apart.cycles, 1 + global, "the load issues at cycle 1");
    assert_eq!(together.cycles, 32 * shared_interval(&p) + global);
}

fn shared_interval(p: &ArchParams) -> u64 {
    p.pipe(Pipe::Shared).interval as u64
}
