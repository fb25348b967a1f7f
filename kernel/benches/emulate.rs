//! Emulation-mode speed: `cargo bench -p hetsim-kernel --bench emulate`.
//!
//! - the H100's saxpy2 at the thesis's size (n = 4·10^8, block 256, a = 128): 12.5 million
//!   warps that behave alike, which must analyse in well under 2 s;
//! - the 5-point stencil on 4096 × 4096 (524,288 warps in 16 × 16 blocks), whose edge warps
//!   make grouping work harder;
//! - the tiled SGEMM at N = 4096 (65,536 blocks of 256 steps), whose memory traffic
//!   (`emulate::traffic`) costs most: the corner tiles run every step.
//!
//! Each analysis also measures the launch's memory traffic on corner tiles of the grid.

use criterion::{criterion_group, criterion_main, Criterion};
use hetsim_kernel::{analyze, parse, Arg, Launch, Listing, Options};
use std::hint::black_box;

fn listing(path: &str) -> Listing {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&path).expect("listing")).expect("parses")
}

fn options(grid: [u32; 3], block: [u32; 3], args: Vec<Arg>) -> Options {
    Options {
        launch: Some(Launch {
            grid,
            block,
            args,
            dynamic_shared: 0,
        }),
        ..Options::default()
    }
}

fn saxpy2_h100(c: &mut Criterion) {
    let listing = listing("../examples/kernels/saxpy2-sm90.sass");
    let args = vec![Arg::Int(400_000_000), Arg::Int(128), Arg::Pointer, Arg::Pointer];
    let options = options([1_562_500, 1, 1], [256, 1, 1], args);
    c.bench_function("saxpy2 sm_90, n = 4e8, a = 128: 12.5 M warps", |b| {
        b.iter(|| analyze(black_box(&listing), black_box(&options)).expect("emulates"))
    });
}

fn stencil5_4096(c: &mut Criterion) {
    let listing = listing("tests/sass/stencil5_sm90.sass");
    let args = vec![Arg::Int(4096), Arg::Int(4096), Arg::Pointer, Arg::Pointer];
    let options = options([256, 256, 1], [16, 16, 1], args);
    c.bench_function("stencil5 sm_90, 4096 x 4096: 524,288 warps", |b| {
        b.iter(|| analyze(black_box(&listing), black_box(&options)).expect("emulates"))
    });
}

fn sgemm_tiled_4096(c: &mut Criterion) {
    let listing = listing("tests/sass/sgemm_tiled_sm90.sass");
    let args = vec![Arg::Int(4096), Arg::Pointer, Arg::Pointer, Arg::Pointer];
    let options = options([256, 256, 1], [16, 16, 1], args);
    c.bench_function("sgemm_tiled sm_90, N = 4096: 524,288 warps", |b| {
        b.iter(|| analyze(black_box(&listing), black_box(&options)).expect("emulates"))
    });
}

criterion_group!(benches, saxpy2_h100, stencil5_4096, sgemm_tiled_4096);
criterion_main!(benches);
