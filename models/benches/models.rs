//! Model evaluations per second (issue 2 target: ≥ 10 million volkov evaluations per second
//! on one core). Run: `cargo bench -p hetsim-models --bench models`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hetsim_models::{hong_kim, occupancy, transit, volkov};

fn table2() -> hong_kim::Input {
    hong_kim::Input {
        mem_ld: 420.0,
        departure_del_uncoal: 10.0,
        departure_del_coal: 1.0,
        freq: 1e9,
        mem_bandwidth: 80e9,
        active_sms: 16.0,
        threads_per_block: 128.0,
        blocks: 80.0,
        active_blocks_per_sm: 5.0,
        comp_insts: 27.0,
        uncoal_mem_insts: 6.0,
        coal_mem_insts: 0.0,
        synch_insts: 6.0,
        uncoal_per_mw: 32.0,
        coal_per_mw: 1.0,
        load_bytes_per_warp: 128.0,
        issue_cycles: 4.0,
        threads_per_warp: 32.0,
    }
}

fn models(c: &mut Criterion) {
    let mut group = c.benchmark_group("evaluate");
    group.throughput(Throughput::Elements(1));
    let mut kernel = volkov::Input::gajger_saxpy2_gtx970(128.0);
    group.bench_function("volkov", |b| {
        b.iter(|| {
            // Vary an input so the call cannot be hoisted out of the loop.
            kernel.occupancy = black_box(kernel.occupancy);
            black_box(volkov::evaluate(black_box(&kernel)))
        })
    });
    let hk = table2();
    group.bench_function("hong-kim", |b| {
        b.iter(|| black_box(hong_kim::evaluate(black_box(&hk))))
    });
    let machine = transit::Input {
        lanes: 32.0,
        peak_mem_throughput: 10.0,
        mem_transition_threads: 20.0,
        threads: 8.0,
        intensity: 4.0,
    };
    group.bench_function("transit", |b| {
        b.iter(|| black_box(transit::evaluate(black_box(&machine))))
    });
    let launch = occupancy::Input {
        limits: occupancy::limits_of("8.0").expect("8.0 is a known compute capability"),
        threads_per_block: 256,
        registers_per_thread: 40,
        shared_memory_per_block: 8192,
    };
    group.bench_function("occupancy", |b| {
        b.iter(|| black_box(occupancy::evaluate(black_box(&launch))))
    });
    group.finish();
}

criterion_group!(benches, models);
criterion_main!(benches);
