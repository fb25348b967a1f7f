//! Shared-memory banks, block barriers and the cache levels, on the kernel corpus
//! (kernel/tests/sass, compiled for sm_90) and on hand-written listings.

use hetsim_kernel::arch::Arch;
use hetsim_kernel::emulate::{block_streams, traffic, Issued, Launch, Traffic};
use hetsim_kernel::sass::{parse, Kernel, Listing};
use hetsim_teg::{simulate_with_bottlenecks, Gpu, Options, Prepared};

fn corpus(name: &str) -> Listing {
    let path = format!("{}/../kernel/tests/sass/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(path).expect("reads")).expect("parses")
}

/// A one-kernel sm_90 listing without scheduling bits, instruction `k` at `0x10·k`.
fn sm90(body: &[&str]) -> Listing {
    let mut text = "\tcode for sm_90\n\t\tFunction : test\n".to_string();
    for (k, ins) in body.iter().enumerate() {
        text += &format!("        /*{:04x}*/                   {ins} ;\n", 16 * k);
    }
    parse(&text).expect("parses")
}

fn hopper(kernel: &Kernel) -> Prepared<'_> {
    Prepared::new(kernel, Arch::HOPPER).expect("prepares")
}

fn streams(kernel: &Kernel, launch: &Launch, blocks: &[u64]) -> Vec<Vec<std::sync::Arc<[Issued]>>> {
    let p = hopper(kernel);
    block_streams(kernel, &p.cfg, p.arch, &p.table, launch, blocks).expect("emulates")
}

fn reuse_of(kernel: &Kernel, launch: &Launch) -> Traffic {
    let p = hopper(kernel);
    traffic(kernel, &p.cfg, p.arch, &p.table, launch).expect("emulates")
}

/// The launch's time on the H100 and the share of it that bank conflicts cost.
fn bank_conflict_share(kernel: &Kernel, launch: &Launch) -> (f64, f64) {
    let gpu = Gpu::from_catalog("H100 SXM5 80GB").expect("in the catalog");
    let (sim, bottlenecks) =
        simulate_with_bottlenecks(&hopper(kernel), launch, &gpu, &Options::default()).expect("simulates");
    let conflicts = bottlenecks
        .iter()
        .find(|b| b.what == "shared-memory bank conflicts")
        .unwrap_or_else(|| panic!("reported: {bottlenecks:?}"));
    (sim.seconds, conflicts.share)
}

/// Each lane loads the shared word at `tid.x × stride` bytes, 16 times.
fn strided_shared(shift: u32) -> Listing {
    let shift = format!("SHF.L.U32 R1, R0, 0x{shift:x}, RZ");
    let mut body = vec!["S2R R0, SR_TID.X", shift.as_str()];
    body.extend(std::iter::repeat_n("LDS R2, [R1]", 16));
    body.push("EXIT");
    sm90(&body)
}

#[test]
fn bank_conflicts_come_from_the_lanes_addresses() {
    let one = Launch::plane([1, 1], [32, 1], &[]);
    for (shift, wavefronts) in [(2, 1), (3, 2), (7, 32)] {
        let listing = strided_shared(shift);
        let s = streams(&listing.kernels[0], &one, &[0]);
        let lds: Vec<&Issued> = s[0][0].iter().filter(|i| i.wavefronts > 0).collect();
        assert_eq!(lds.len(), 16);
        assert!(
            lds.iter()
                .all(|i| (i.wavefronts, i.conflict_free_wavefronts) == (wavefronts, 1)),
            "a stride of {} bytes: {:?}",
            1 << shift,
            lds[0]
        );
    }
    // The what-if removes exactly the replays: 32-way conflicts cost most of the time.
    let listing = strided_shared(7);
    let many = Launch::plane([132 * 8, 1], [256, 1], &[]);
    let (_, share) = bank_conflict_share(&listing.kernels[0], &many);
    assert!(share > 0.5, "{share}");
}

#[test]
fn tiled_sgemm_is_conflict_free_and_waits_at_its_barriers() {
    let listing = corpus("sgemm_tiled_sm90.sass");
    let kernel = &listing.kernels[0];
    let n = 256;
    let l = Launch::plane([16, 16], [16, 16], &[Some(n), None, None, None]);
    let s = streams(kernel, &l, &[0]);
    let barriers = kernel.instructions.iter().filter(|i| i.opcode == "BAR").count();
    assert_eq!(barriers, 2, "__syncthreads() before and after the inner product");
    // `As[ty][k]` is a broadcast; `Bs[k][tx]` 16 consecutive words of two rows; the stores
    // consecutive words: no access conflicts, and the shared window's base (from
    // SR_CgaCtaId) is known, so every address is.
    let shared: Vec<&Issued> = s[0]
        .iter()
        .flat_map(|w| w.iter())
        .filter(|i| i.wavefronts > 0)
        .collect();
    assert!(!shared.is_empty());
    assert!(
        shared.iter().all(|i| i.wavefronts == i.conflict_free_wavefronts),
        "{:?}",
        shared.iter().find(|i| i.wavefronts != i.conflict_free_wavefronts)
    );
    let (seconds, share) = bank_conflict_share(kernel, &l);
    assert_eq!(share, 0.0);
    assert!(seconds > 0.0);
}

#[test]
fn a_block_loads_each_sector_once_from_beyond_l1() {
    // sgemm_naive: a warp's two rows of 16 threads share A's row element and B's 16 columns;
    // the block's 8 warps share them again, so nearly every load after the first warp's hits.
    let listing = corpus("sgemm_naive_sm90.sass");
    let kernel = &listing.kernels[0];
    let n = 256;
    let l = Launch::plane([16, 16], [16, 16], &[Some(n), None, None, None]);
    let s = streams(kernel, &l, &[0]);
    let total =
        |f: fn(&Issued) -> u16| -> u64 { s[0].iter().flat_map(|w| w.iter()).map(|i| u64::from(f(i))).sum() };
    let (touched, missed) = (total(|i| i.sectors), total(|i| i.missed_sectors));
    // Misses: A's 16 rows of the block, n floats each (n/8 sectors); B's n rows, each 16
    // columns of 64 bytes (2 sectors); and C's stores, 16 rows × 2 sectors.
    let expected = 16 * n / 8 + n * 2 + 16 * 2;
    assert_eq!(missed, expected as u64, "touched {touched}");
    assert!(touched > 4 * missed);
}

#[test]
fn reuse_across_blocks_follows_the_sharing() {
    // sgemm_naive: blocks of a grid row share A, of a grid column B: the DRAM fraction falls
    // as 1/side of the tile, and at 64 × 64 blocks is about 1/64.
    let listing = corpus("sgemm_naive_sm90.sass");
    let n = 1024;
    let r = reuse_of(
        &listing.kernels[0],
        &Launch::plane([64, 64], [16, 16], &[Some(n), None, None, None]),
    );
    assert!(r.dram_fraction > 0.01 && r.dram_fraction < 0.03, "{r:?}");
    // stencil5: a 16 × 16 block misses 16 rows × 4 sectors (its 2, and the halo columns'
    // sector on either side), 2 × 2 for the halo rows and 16 × 2 stored: 100 sectors, of
    // which the launch's own are its 32 loaded and 32 stored: 0.64.
    let listing = corpus("stencil5_sm90.sass");
    let r = reuse_of(
        &listing.kernels[0],
        &Launch::plane([64, 64], [16, 16], &[Some(1024), Some(1024), None, None]),
    );
    assert!((r.missed_sectors_per_block - 100.0).abs() <= 1.0, "{r:?}");
    assert!((r.dram_fraction - 0.64).abs() < 0.05, "{r:?}");
    // A strided copy shares nothing.
    let listing = corpus("strided_sm90.sass");
    let r = reuse_of(
        &listing.kernels[0],
        &Launch::plane([4096, 1], [256, 1], &[Some(1 << 20), Some(2), None, None]),
    );
    assert!((r.dram_fraction - 1.0).abs() < 1e-9, "{r:?}");
}

#[test]
fn traffic_measured_by_the_analysis_is_taken_as_is() {
    // `kernel_params` hands TEG the traffic its analysis measured: the same time as TEG
    // measuring it itself, and a different traffic changes the time (so it is the one used).
    let listing = corpus("stencil5_sm90.sass");
    let kernel = &listing.kernels[0];
    let launch = Launch::plane([64, 64], [16, 16], &[Some(1024), Some(1024), None, None]);
    let gpu = Gpu::from_catalog("H100 SXM5 80GB").expect("in the catalog");
    let time = |traffic: Option<Traffic>| {
        let options = Options {
            traffic,
            ..Options::default()
        };
        hetsim_teg::simulate(&hopper(kernel), &launch, &gpu, &options)
            .expect("simulates")
            .seconds
    };
    let measured = reuse_of(kernel, &launch);
    assert_eq!(time(Some(measured)), time(None));
    let no_reuse = Traffic {
        dram_fraction: 1.0,
        reuse_exponent: 0.0,
        ..measured
    };
    assert!(
        time(Some(no_reuse)) > time(None),
        "a larger DRAM share takes longer"
    );
}
