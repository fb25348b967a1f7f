//! The H100 measurements of saxpy2 (hetsim GPU measurements, H100 SXM 80GB, 2026-11-22:
//! examples/validation/data/h100) as launches, for the validation test.

use hetsim_kernel::emulate::{Arg, Launch};
use hetsim_kernel::sass::{parse, Listing};
use hetsim_teg::{plan, run, Gpu, Options, Plan, Prepared, WhatIf};
use std::path::PathBuf;

pub fn data(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/validation/data/h100")
        .join(file)
}

pub fn h100() -> Gpu {
    Gpu::from_catalog("H100 SXM5 80GB").expect("in the catalog")
}

pub fn saxpy2() -> Listing {
    parse(&std::fs::read_to_string(data("saxpy2_sm90.sass")).expect("reads")).expect("parses")
}

/// A measured launch.
pub struct Measured {
    pub launch: Launch,
    pub seconds: f64,
    pub label: String,
}

/// Every launch of `file` (sweep.csv or occupancy_block256.csv).
pub fn launches(file: &str) -> Vec<Measured> {
    let mut reader = csv::Reader::from_path(data(file)).expect("opens");
    let headers = reader.headers().expect("headers").clone();
    let col = |name: &str| headers.iter().position(|h| h == name).expect(name);
    let (n, a, block, measured) = (col("n"), col("intensity"), col("block"), col("median_seconds"));
    let smem = headers.iter().position(|h| h == "dynamic_smem");
    reader
        .records()
        .map(|r| {
            let r = r.expect("a row");
            let num = |i: usize| r[i].parse::<f64>().expect("a number");
            let threads = num(block) as u32;
            Measured {
                launch: Launch {
                    grid: [(num(n) as u32).div_ceil(threads), 1, 1],
                    block: [threads, 1, 1],
                    args: vec![
                        Arg::Int(num(n) as i64),
                        Arg::Int(num(a) as i64),
                        Arg::Pointer,
                        Arg::Pointer,
                    ],
                    dynamic_shared: smem.map_or(0, |i| num(i) as u32),
                },
                seconds: num(measured),
                label: format!(
                    "a={} block={} smem={}",
                    &r[a],
                    &r[block],
                    smem.map_or("0", |i| &r[i])
                ),
            }
        })
        .collect()
}

/// Each launch's plan (the emulation, independent of the engine's parameters).
pub fn plans(prepared: &Prepared, gpu: &Gpu, launches: &[Measured]) -> Vec<Plan> {
    launches
        .iter()
        .map(|m| plan(prepared, &m.launch, gpu, &Options::default()).expect("emulates"))
        .collect()
}

/// Relative errors (predicted − measured) / measured, with each launch's label and limiter.
pub fn errors(prepared: &Prepared, gpu: &Gpu, launches: &[Measured], plans: &[Plan]) -> Vec<(f64, String)> {
    launches
        .iter()
        .zip(plans)
        .map(|(m, plan)| {
            let s = run(prepared, plan, gpu, WhatIf::default());
            let label = format!("{} warps/SM={} {}", m.label, s.warps_per_sm, s.limiter);
            ((s.seconds - m.seconds) / m.seconds, label)
        })
        .collect()
}

/// Mean and worst absolute error.
pub fn mape(errors: &[(f64, String)]) -> (f64, f64) {
    let worst = errors.iter().map(|e| e.0.abs()).fold(0.0, f64::max);
    (
        errors.iter().map(|e| e.0.abs()).sum::<f64>() / errors.len() as f64,
        worst,
    )
}
