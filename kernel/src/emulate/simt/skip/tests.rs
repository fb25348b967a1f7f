//! Skipping against running every trip, on every shipped kernel and architecture.

use super::super::{Issued, Profile, Program, Sums};
use crate::cfg::Cfg;
use crate::emulate::launch::{ConstBank, Geometry};
use crate::emulate::{Arg, Launch};
use crate::latency::LatencyTable;
use crate::sass::{parse, Listing};

/// What a run of blocks gives: every warp's profile, each block's sums, the sectors touched
/// and those DRAM moves.
type Outcome = (Vec<Profile>, Vec<Sums>, u64, u64);

/// Runs `blocks`, each warp's stream kept (`Some`) or not (without one, a replay counts
/// shifting sectors for all its trips at once).
fn run_blocks(
    program: &mut Program,
    geometry: &Geometry,
    blocks: &[u64],
    traced: bool,
) -> (Outcome, Vec<Vec<Issued>>) {
    program.count_touched();
    let per_block = u64::from(geometry.warps_per_block);
    let (mut profiles, mut sums, mut streams) = (Vec::new(), Vec::new(), Vec::new());
    for &b in blocks {
        program.start_block();
        for w in geometry.warps_of(b) {
            if traced {
                let (profile, stream) = program.run_traced(w, geometry.warp(w)).expect("runs");
                profiles.push(profile);
                streams.push(stream);
            } else {
                profiles.push(program.run(w, geometry.warp(w)).expect("runs"));
            }
        }
        let block_sums = program.take_sums();
        if traced {
            // The sums are what the block's streams add up to.
            let block = &streams[streams.len() - per_block as usize..];
            let total = |f: fn(&Issued) -> u64| block.iter().flatten().map(f).sum::<u64>();
            let from_streams = Sums {
                missed: total(|i| i.missed_sectors.into()),
                l1_wavefronts: total(|i| i.l1_wavefronts.into()),
                wavefronts: total(|i| i.wavefronts.into()),
                conflict_free: total(|i| i.conflict_free_wavefronts.into()),
            };
            assert_eq!(block_sums, from_streams);
        }
        sums.push(block_sums);
    }
    let touched = (program.touched(), program.touched_dram_sectors());
    ((profiles, sums, touched.0, touched.1), streams)
}

/// The seven kernels of tests/sass/all_kernels_*.sass and a launch of each (the naive
/// SGEMM twice: N = 131 leaves a remainder to its unrolled loop).
fn launches() -> Vec<(&'static str, Launch)> {
    let p = || Arg::Pointer;
    let launch = |grid: [u32; 2], block: [u32; 2], args: Vec<Arg>| Launch {
        grid: [grid[0], grid[1], 1],
        block: [block[0], block[1], 1],
        args,
        dynamic_shared: 0,
    };
    vec![
        (
            "stencil5",
            launch([4, 4], [16, 16], vec![Arg::Int(64), Arg::Int(64), p(), p()]),
        ),
        (
            "sgemm_tiled",
            launch([8, 8], [16, 16], vec![Arg::Int(128), p(), p(), p()]),
        ),
        (
            "sgemm_naive",
            launch([8, 8], [16, 16], vec![Arg::Int(128), p(), p(), p()]),
        ),
        (
            "sgemm_naive",
            launch([9, 9], [16, 16], vec![Arg::Int(131), p(), p(), p()]),
        ),
        (
            "sfu_loop",
            launch([16, 1], [256, 1], vec![Arg::Int(4096), Arg::Int(100), p(), p()]),
        ),
        (
            "daxpy_loop",
            launch([16, 1], [256, 1], vec![Arg::Int(4000), Arg::Int(300), p(), p()]),
        ),
        (
            "strided_copy",
            launch([16, 1], [256, 1], vec![Arg::Int(4096), Arg::Int(3), p(), p()]),
        ),
        (
            "saxpy2",
            launch([16, 1], [256, 1], vec![Arg::Int(4000), Arg::Int(333), p(), p()]),
        ),
    ]
}

/// Runs blocks 0, 1 and the last of `launch` with and without skipping, streams kept and
/// not, asserts that all four give the same outcome (and both ways the same streams), and
/// returns the trips skipped and the accesses whose skipped trips were counted at once.
fn trips_skipped_alike(listing: &Listing, name: &str, launch: &Launch) -> (u64, u64) {
    let kernel = listing
        .kernels
        .iter()
        .find(|k| k.name.contains(name))
        .expect("the kernel is in the listing");
    let arch = kernel.arch.expect("the listing names its architecture");
    let cfg = Cfg::build(kernel).expect("builds");
    let table = LatencyTable::for_arch(arch).expect("a table");
    let bank = ConstBank::new(arch, launch).expect("a bank");
    let geometry = Geometry::new(launch).expect("a geometry");
    let last = geometry.warps / u64::from(geometry.warps_per_block) - 1;
    let blocks = [0, 1, last];
    let new = || Program::new(kernel, &cfg, arch, &table, &bank, 1 << 30);
    let mut skipping = new();
    let skipped = run_blocks(&mut skipping, &geometry, &blocks, true);
    let running = run_blocks(&mut new().without_skipping(), &geometry, &blocks, true);
    assert!(
        skipped == running,
        "{name} on {arch:?}: skipping changes the outcome"
    );
    let mut untraced = new();
    let (at_once, _) = run_blocks(&mut untraced, &geometry, &blocks, false);
    assert_eq!(
        at_once, running.0,
        "{name} on {arch:?}: counting at once changes the outcome"
    );
    let (untraced_running, _) = run_blocks(&mut new().without_skipping(), &geometry, &blocks, false);
    assert_eq!(untraced_running, running.0, "{name} on {arch:?}");
    (skipping.watch.skipped, untraced.watch.at_once)
}

fn listing(file: &str) -> Listing {
    let path = format!("{}/tests/sass/{file}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&path).expect("reads")).expect("parses")
}

#[test]
fn skipping_a_loops_middle_trips_gives_what_running_them_gives() {
    for arch in ["sm52", "sm61", "sm70", "sm75", "sm80", "sm86", "sm89", "sm90"] {
        let listing = listing(&format!("all_kernels_{arch}.sass"));
        for (name, launch) in launches() {
            let (skipped, at_once) = trips_skipped_alike(&listing, name, &launch);
            // The others loop for dozens to hundreds of trips: this test must see them skipped.
            let looping = !matches!(name, "stencil5" | "strided_copy");
            assert_eq!(skipped > 0, looping, "{name} on {arch}");
            // The SGEMMs' loops read rows and columns that move by whole sectors a trip;
            // the other loops keep their global accesses outside.
            assert_eq!(at_once > 0, name.starts_with("sgemm"), "{name} on {arch}");
        }
    }
}

/// With m = 1 the inner loop's header is visited once per outer trip, and each stretch between
/// visits leaves the inner loop's body: the outer counter (which doubles, so the outer loop is
/// never skipped) ends the outer loop and is not among the registers the inner loop writes.
/// Skipping there would run the outer loop past its end; it must not happen. With m = 40 the
/// inner loop's own trips are skipped.
#[test]
fn an_inner_loop_of_one_trip_does_not_carry_its_outer_loop_along() {
    let listing = listing("nested_loop_sm90.sass");
    for (m, skips) in [(1, false), (40, true)] {
        let launch = Launch {
            grid: [4, 1, 1],
            block: [64, 1, 1],
            args: vec![Arg::Int(1 << 20), Arg::Int(m), Arg::Pointer, Arg::Pointer],
            dynamic_shared: 0,
        };
        let (skipped, _) = trips_skipped_alike(&listing, "nested_loop", &launch);
        assert_eq!(skipped > 0, skips, "m = {m}: {skipped} trips skipped");
    }
}

#[test]
fn the_line_of_a_loops_comparisons_says_where_it_leaves() {
    use super::line::first_reorder;
    // `k < n` with k = 0, 16, 32, … and n = 4096: the 256th trip from now compares equal.
    assert_eq!(first_reorder(&[Some((0, 4096))], &[Some((16, 4096))]), Some(256));
    // Counting down, `i > 0` from 10 by 3: 10, 7, 4, 1, then −2 at the fourth trip.
    assert_eq!(first_reorder(&[Some((10, 0))], &[Some((7, 0))]), Some(4));
    // The lane that leaves first decides; an unknown lane and a comparison that never
    // changes order do not.
    let first = [Some((0, 100)), None, Some((5, 5)), Some((0, 1))];
    let second = [Some((10, 100)), None, Some((5, 5)), Some((0, 1))];
    assert_eq!(first_reorder(&first, &second), Some(10));
    // Equal inputs that start to move apart change order at once.
    assert_eq!(first_reorder(&[Some((3, 3))], &[Some((4, 3))]), Some(1));
    // Moving apart: never.
    assert_eq!(first_reorder(&[Some((0, 10))], &[Some((-1, 10))]), None);
    assert_eq!(first_reorder(&[], &[]), None);
}
