//! The engine alone, with native Rust processes: events per second (issue 3 target: 10
//! million). Run: `cargo bench -p hetsim-simulator --bench engine`.

mod workloads;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hetsim_simulator::{simulate, Options};
use workloads::{star, Ethernet, MasterWorker, PingPong};

fn engine(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);

    let (platform, placements) = star(1, "Ping", "Pong");
    let events = simulate(
        &platform,
        &placements,
        PingPong::pair(100_000),
        &mut Ethernet,
        &Options::default(),
    )
    .expect("ping-pong runs")
    .events;
    group.throughput(Throughput::Elements(events));
    group.bench_function("ping-pong 100k round trips (events)", |b| {
        b.iter(|| {
            black_box(simulate(
                &platform,
                &placements,
                PingPong::pair(100_000),
                &mut Ethernet,
                &Options::default(),
            ))
        })
    });

    let (platform, placements) = star(10_000, "Master", "Worker");
    let events = simulate(
        &platform,
        &placements,
        MasterWorker::processes(10_000, 10),
        &mut Ethernet,
        &Options::default(),
    )
    .expect("master-worker runs")
    .events;
    group.throughput(Throughput::Elements(events));
    group.bench_function("master-worker W=10k, 10 rounds (events)", |b| {
        b.iter(|| {
            black_box(simulate(
                &platform,
                &placements,
                MasterWorker::processes(10_000, 10),
                &mut Ethernet,
                &Options::default(),
            ))
        })
    });
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
