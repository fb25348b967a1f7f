//! The fit of teg/data/hopper.toml's fitted entries (docs/MODELS.md, "TEG"): a grid over
//! `memory.efficiency`, `memory.queue_cycles`, `blocks.replacement` and `taken_branch`,
//! scored by the MAPE over every saxpy2 launch of sweep.csv and occupancy_block256.csv.
//!
//! `cargo run --release -p hetsim-teg --example fit_hopper -- EFF,… QUEUE,… REPL,… BRANCH,… [FILE]`
//!
//! With FILE (`sweep.csv` or `occupancy_block256.csv`) the grid is scored on that file only,
//! and the best point is then scored on the other: a cross-validation of the fit.

#[path = "../tests/support/h100.rs"]
mod h100;

use hetsim_teg::Prepared;

fn list(arg: Option<String>, default: &[f64]) -> Vec<f64> {
    arg.map_or_else(
        || default.to_vec(),
        |a| a.split(',').filter_map(|x| x.parse().ok()).collect(),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let efficiency = list(args.next(), &[0.68]);
    let queue = list(args.next(), &[30.0]);
    let replacement = list(args.next(), &[600.0]);
    let branch = list(args.next(), &[5.0]);
    let files = ["sweep.csv", "occupancy_block256.csv"];
    let fit_on: Vec<&str> = match args.next() {
        Some(f) => files.iter().copied().filter(|&x| x == f).collect(),
        None => files.to_vec(),
    };
    assert!(!fit_on.is_empty(), "FILE: expected one of {files:?}");
    let listing = h100::saxpy2();
    let kernel = &listing.kernels[0];
    let mut prepared = Prepared::new(kernel, kernel.arch.expect("sm_90")).expect("prepares");
    let gpu = h100::h100();
    let launches: Vec<_> = fit_on.iter().flat_map(|f| h100::launches(f)).collect();
    let plans = h100::plans(&prepared, &gpu, &launches);
    let mut best = (f64::INFINITY, String::new(), prepared.params.clone());
    for &e in &efficiency {
        for &q in &queue {
            for &r in &replacement {
                for &b in &branch {
                    prepared.params.memory.efficiency = e;
                    prepared.params.memory.queue_cycles = q;
                    prepared.params.blocks.replacement = r;
                    prepared.params.taken_branch = b;
                    let (mape, worst) = h100::mape(&h100::errors(&prepared, &gpu, &launches, &plans));
                    let line = format!("efficiency {e} queue_cycles {q} replacement {r} taken_branch {b}: MAPE {:.2} %, worst {:.1} %", 100.0 * mape, 100.0 * worst);
                    println!("{line}");
                    if mape < best.0 {
                        best = (mape, line, prepared.params.clone());
                    }
                }
            }
        }
    }
    println!("best: {}", best.1);
    for held_out in files.iter().filter(|f| !fit_on.contains(f)) {
        prepared.params = best.2.clone();
        let launches = h100::launches(held_out);
        let plans = h100::plans(&prepared, &gpu, &launches);
        let (mape, worst) = h100::mape(&h100::errors(&prepared, &gpu, &launches, &plans));
        println!(
            "held out {held_out}: MAPE {:.2} %, worst {:.1} %",
            100.0 * mape,
            100.0 * worst
        );
    }
}
