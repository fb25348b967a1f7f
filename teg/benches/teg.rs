//! TEG's speed: `cargo bench -p hetsim-teg --bench teg`.
//!
//! A launch of 10⁶ blocks must simulate in under a second, so that TEG can serve inside
//! application simulations: saxpy2 on the H100 with 1,048,576 blocks of 256 threads (the
//! busiest SM runs 7,944 of them; 32 are emulated and simulated, the rest scaled), at
//! intensities 1 (memory-bound) and 128 (issue-bound), and a 5-point stencil of 1,048,576
//! blocks of 16 × 16 threads (a 16384² grid, whose edge blocks behave differently). Each
//! launch is timed twice: TEG measuring the launch's traffic itself, and TEG given the
//! traffic `kernel_params` measured (`Options::traffic`), as the application path runs it.

use criterion::{criterion_group, criterion_main, Criterion};
use hetsim_kernel::emulate::traffic;
use hetsim_kernel::sass::parse;
use hetsim_kernel::{Arg, Launch};
use hetsim_teg::{simulate, Gpu, Options, Prepared};
use std::hint::black_box;

fn h100() -> Gpu {
    Gpu::from_catalog("H100 SXM5 80GB").expect("in the catalog")
}

fn text(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).expect("listing")
}

fn million_blocks(c: &mut Criterion) {
    let gpu = h100();
    let saxpy2 = parse(&text("../examples/kernels/saxpy2-sm90.sass")).expect("parses");
    let kernel = &saxpy2.kernels[0];
    let prepared = Prepared::new(kernel, kernel.arch.expect("sm_90")).expect("prepares");
    let mut group = c.benchmark_group("teg");
    group.sample_size(10);
    for a in [1, 128] {
        let launch = Launch {
            grid: [1 << 20, 1, 1],
            block: [256, 1, 1],
            args: vec![Arg::Int(1 << 28), Arg::Int(a), Arg::Pointer, Arg::Pointer],
            dynamic_shared: 0,
        };
        both_ways(
            &mut group,
            &format!("saxpy2 a={a}, 1048576 blocks of 256"),
            &prepared,
            &launch,
            &gpu,
        );
    }
    let stencil = parse(&text("../kernel/tests/sass/stencil5_sm90.sass")).expect("parses");
    let kernel = &stencil.kernels[0];
    let prepared = Prepared::new(kernel, kernel.arch.expect("sm_90")).expect("prepares");
    let launch = Launch {
        grid: [1024, 1024, 1],
        block: [16, 16, 1],
        args: vec![Arg::Int(16384), Arg::Int(16384), Arg::Pointer, Arg::Pointer],
        dynamic_shared: 0,
    };
    both_ways(
        &mut group,
        "stencil5 16384², 1048576 blocks of 16×16",
        &prepared,
        &launch,
        &gpu,
    );
    group.finish();
}

/// Times `launch` with TEG measuring its traffic, then with the traffic given.
fn both_ways(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    prepared: &Prepared,
    launch: &Launch,
    gpu: &Gpu,
) {
    group.bench_function(name, |b| {
        b.iter(|| black_box(simulate(prepared, launch, gpu, &Options::default()).expect("simulates")))
    });
    let measured = traffic(
        prepared.kernel,
        &prepared.cfg,
        prepared.arch,
        &prepared.table,
        launch,
    )
    .expect("emulates");
    let given = Options {
        traffic: Some(measured),
        ..Options::default()
    };
    group.bench_function(format!("{name}, traffic given"), |b| {
        b.iter(|| black_box(simulate(prepared, launch, gpu, &given).expect("simulates")))
    });
}

criterion_group!(benches, million_blocks);
criterion_main!(benches);
