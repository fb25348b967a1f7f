//! TEG against the H100: saxpy2's sweep.csv and occupancy_block256.csv predicted from the
//! measured SASS alone, with the shipped Hopper parameters and no per-kernel constant.

#[path = "support/h100.rs"]
mod h100;

use hetsim_teg::Prepared;

fn check(file: &str) {
    let listing = h100::saxpy2();
    let kernel = &listing.kernels[0];
    let prepared = Prepared::new(kernel, kernel.arch.expect("sm_90")).expect("prepares");
    let (gpu, launches) = (h100::h100(), h100::launches(file));
    let plans = h100::plans(&prepared, &gpu, &launches);
    let errors = h100::errors(&prepared, &gpu, &launches, &plans);
    for (e, label) in &errors {
        eprintln!("{file} {label}: {:+.1} %", 100.0 * e);
    }
    let (mape, worst) = h100::mape(&errors);
    eprintln!(
        "{file}: MAPE {:.1} %, worst {:.1} % over {} launches",
        100.0 * mape,
        100.0 * worst,
        errors.len()
    );
    assert!(mape <= 0.08, "{file}: MAPE {:.1} % > 8 %", 100.0 * mape);
}

#[test]
fn occupancy_block256_within_8_percent() {
    check("occupancy_block256.csv");
}

#[test]
fn sweep_within_8_percent() {
    check("sweep.csv");
}
