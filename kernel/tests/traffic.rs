//! The memory hierarchy's traffic (`hetsim_kernel::emulate::traffic`) against values worked by
//! hand (docs/MODELS.md, "The memory hierarchy", has the working): a tiled SGEMM's shared
//! memory and barriers, a naive SGEMM's and a 5-point stencil's reuse through L1 and L2, and
//! the H100's DRAM read granularity on strided reads (hetsim GPU measurements, H100 SXM 80GB,
//! 2026-11-22, kit/ncu.csv: 4, 16 and 64 bytes of DRAM reads per element of x at strides 1, 4
//! and 32).

use hetsim_kernel::cfg::Cfg;
use hetsim_kernel::emulate::{traffic, Launch, Traffic};
use hetsim_kernel::latency::LatencyTable;
use hetsim_kernel::sass::{parse, Listing};
use hetsim_kernel::{analyze, select_kernel, Arch, Options};

fn listing(path: &str) -> Listing {
    let path = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&path).expect("reads")).expect("parses")
}

fn traffic_of(listing: &Listing, function: Option<&str>, launch: &Launch) -> Traffic {
    let kernel = select_kernel(listing, function, None).expect("one kernel");
    let arch = kernel.arch.unwrap_or(Arch::HOPPER);
    let cfg = Cfg::build(kernel).expect("cfg");
    let table = LatencyTable::for_arch(arch).expect("table");
    traffic(kernel, &cfg, arch, &table, launch).expect("emulates")
}

fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance * expected.abs()
}

#[test]
fn tiled_sgemm_shared_wavefronts_and_barriers() {
    // sgemm_tiled<16>, N = 256: 16 tile steps. Per warp and step: two LDG of two 16-float
    // rows (4 sectors, 2 lines each), two STS (1 wavefront each), two BAR.SYNC, and the inner
    // product unrolled into 16 LDS of Bs[k][tx] (1 wavefront each) and 4 LDS.128 of
    // As[ty][k..k+3] (a half-warp a pass, one address each: 2 wavefronts), none a bank
    // conflict; then one STG of C (4 sectors, 2 lines). A block has 8 warps. Nsight Compute
    // counts the same on the H100 at N = 2048: 3377 wavefronts per warp against 128 steps ×
    // 26 = 3328 (examples/validation/data/h100/families/ncu_families.csv).
    let l = listing("kernel/tests/sass/sgemm_tiled_sm90.sass");
    let t = traffic_of(
        &l,
        None,
        &Launch::plane([16, 16], [16, 16], &[Some(256), None, None, None]),
    );
    assert_eq!(t.warps_per_block, 8.0);
    assert_eq!(t.requested_sectors_per_block, 8.0 * (16.0 * 8.0 + 4.0));
    assert_eq!(t.l1_wavefronts_per_block, 8.0 * (16.0 * 4.0 + 2.0));
    assert_eq!(
        t.shared_wavefronts_per_block,
        8.0 * 16.0 * (2.0 + 16.0 + 4.0 * 2.0)
    );
    assert_eq!(
        t.conflict_free_wavefronts_per_block,
        t.shared_wavefronts_per_block
    );
    assert_eq!(t.barriers_per_block, 8.0 * 16.0 * 2.0);
    // No sector is loaded twice by one block: every request misses L1.
    assert_eq!(t.missed_sectors_per_block, t.requested_sectors_per_block);
    // N = 64 (4 × 4 blocks, all in the tiles): A, B and C are 512 sectors each, and the 16
    // blocks miss 4 steps × 64 sectors + 32 stored each: a third reaches DRAM.
    let t = traffic_of(
        &l,
        None,
        &Launch::plane([4, 4], [16, 16], &[Some(64), None, None, None]),
    );
    assert!(close(t.dram_fraction, 1536.0 / 4608.0, 1e-12), "{t:?}");
    assert_eq!(t.dram_granularity, 1.0);
}

#[test]
fn naive_sgemm_hits_l1_and_l2() {
    // sgemm_naive, N = 256, 16 × 16 blocks: per warp and k, A[row·N + k] for two rows (2
    // sectors, 2 lines) and B[k·N + col] for 16 columns (2 sectors, 1 line); then C (4, 2).
    let l = listing("kernel/tests/sass/sgemm_naive_sm90.sass");
    let t = traffic_of(
        &l,
        None,
        &Launch::plane([16, 16], [16, 16], &[Some(256), None, None, None]),
    );
    assert_eq!(t.requested_sectors_per_block, 8.0 * (256.0 * 4.0 + 4.0));
    assert_eq!(t.l1_wavefronts_per_block, 8.0 * (256.0 * 3.0 + 2.0));
    // L1 misses: A's 16 rows (n/8 sectors each), B's n rows of 16 columns (2 sectors) and
    // C's 16 rows × 2 sectors stored.
    assert_eq!(
        t.missed_sectors_per_block,
        (16 * 256 / 8 + 256 * 2 + 16 * 2) as f64
    );
    let warp = t.per_warp(32.0 * t.requested_sectors_per_block / 8.0);
    assert!(close(warp.l2_bytes, 32.0 * 1056.0 / 8.0, 1e-12), "{warp:?}");
    assert_eq!((warp.shared_wavefronts, warp.barriers), (0.0, 0.0));
}

#[test]
fn stencil_reuses_its_neighbours() {
    // stencil5, 1024 × 1024, 16 × 16 blocks; an interior warp (two rows of 16) loads in[idx]
    // (4 sectors), in[idx ± 1] (6 each: one more sector per row) and in[idx ± M] (4 each), and
    // stores 4: 28 sectors, in 14 L1 wavefronts on average (in[idx ± 1] crosses a 128-byte
    // line in every other block column). Its block misses 16 rows × 4 sectors + 2 halo rows × 2 + 32 stored
    // = 100, of which only its own 32 loaded and 32 stored are the launch's: 64 reach DRAM.
    // The tiles sit in the grid's corner, whose edge blocks copy instead (within 3 %), and
    // the halo rows and columns just outside a tile count as its own distinct sectors, half a
    // 64-byte pair at a time (within 8 % for the DRAM share).
    let l = listing("kernel/tests/sass/stencil5_sm90.sass");
    let t = traffic_of(
        &l,
        None,
        &Launch::plane([64, 64], [16, 16], &[Some(1024), Some(1024), None, None]),
    );
    assert!(close(t.requested_sectors_per_block, 8.0 * 28.0, 0.03), "{t:?}");
    assert!(close(t.missed_sectors_per_block, 100.0, 0.03), "{t:?}");
    assert!(close(t.l1_wavefronts_per_block, 8.0 * 14.0, 0.03), "{t:?}");
    assert!(close(t.dram_fraction * t.dram_granularity, 0.64, 0.08), "{t:?}");
    // At 16384 × 16384 the share keeps its floor (the tiles' perimeter law): 64 of 100
    // sectors, not the ever-falling power law's 57. Nsight Compute measures 254 B of DRAM per
    // warp there (examples/validation/data/h100/families/ncu_families.csv), 0.64 of 400.
    let big = traffic_of(
        &l,
        None,
        &Launch::plane([1024, 1024], [16, 16], &[Some(16384), Some(16384), None, None]),
    );
    assert!(
        close(big.dram_fraction * big.dram_granularity, 0.64, 0.05),
        "{big:?}"
    );
    // Sharing is between neighbours only: the DRAM share hardly falls with the blocks.
    assert!(t.reuse_exponent > -0.1, "{t:?}");
}

#[test]
fn strided_reads_move_64_byte_pairs_from_dram() {
    // The kit's strided kernel (n, stride, a, x, y): y[i] += f(x[i·stride]). Per warp: x's
    // 32 lanes, y read and y written. DRAM bytes per element as kit/ncu.csv measured: x 4,
    // 16, 64 at strides 1, 4, 32 (plus y's 4 read and 4 written).
    let l = listing("examples/validation/data/h100/kit/kernels_sm90.sass");
    for (stride, x_bytes, lines) in [(1, 4.0, 3.0), (4, 16.0, 6.0), (32, 64.0, 34.0)] {
        let args = [Some(1 << 20), Some(stride), Some(1), None, None];
        let report = analyze(
            &l,
            &Options {
                kernel: Some("strided".into()),
                launch: Some(Launch::plane([4096, 1], [256, 1], &args)),
                ..Options::default()
            },
        )
        .expect("analyses");
        let m = report.memory.expect("emulation mode measures the traffic");
        assert!(
            close(m.dram_bytes, 32.0 * (x_bytes + 8.0), 1e-9),
            "stride {stride}: {m:?}"
        );
        assert!(close(m.l1_wavefronts, lines, 1e-9), "stride {stride}: {m:?}");
        assert_eq!(m.l2_bytes, m.requested_bytes, "stride {stride}: nothing shared");
    }
}
