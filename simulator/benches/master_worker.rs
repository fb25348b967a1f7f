//! Master-worker with native processes at scale: wall time and peak memory for W workers
//! (default 1,000,000), 10 rounds, each worker on its own node and link.
//! Run: `cargo bench -p hetsim-simulator --bench master_worker -- 1000000`.

// Shared with the engine bench, which uses the rest of it.
#[allow(dead_code)]
mod workloads;

use std::time::Instant;

use hetsim_simulator::{simulate, Options};
use workloads::{star, Ethernet, MasterWorker};

/// Peak resident memory of this process [KiB], from /proc (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let workers: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let started = Instant::now();
    let (platform, placements) = star(workers, "Master", "Worker");
    let processes = MasterWorker::processes(workers, 10);
    let built = started.elapsed().as_secs_f64();
    let results = simulate(
        &platform,
        &placements,
        processes,
        &mut Ethernet,
        &Options::default(),
    )
    .expect("master-worker runs");
    let wall = started.elapsed().as_secs_f64();
    println!(
        "master-worker native W={workers}: {} events, simulated {:.6} s, wall {wall:.2} s (platform {built:.2} s), \
         {:.1} M events/s, peak RSS {} MiB",
        results.events,
        results.overall_time,
        results.events as f64 / (wall - built) / 1e6,
        peak_rss_kib().map_or("?".into(), |k| (k / 1024).to_string())
    );
}
