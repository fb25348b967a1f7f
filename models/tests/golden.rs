//! Golden values from the seeds, each test citing its equation, table or figure.

use hetsim_models::calibrate::{fit_kernel_lambda, fit_link, kernel_lambda};
use hetsim_models::{catalog, evaluate, hong_kim, occupancy, transfer, transit, volkov, wang_lou};
use hetsim_models::{Evaluation, ModelName, Params, Scalar};

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

fn params(pairs: &[(&str, f64)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Scalar::Number(*v)))
        .collect()
}

/// Hong & Kim Table 2: tiled matrix multiplication on a 16-SM, 1 GHz, 80 GB/s machine.
fn table2() -> Params {
    params(&[
        ("mem_ld", 420.0),
        ("departure_del_uncoal", 10.0),
        ("departure_del_coal", 1.0),
        ("freq", 1e9),
        ("mem_bandwidth", 80e9),
        ("active_sms", 16.0),
        ("threads_per_block", 128.0),
        ("blocks", 80.0),
        ("active_blocks_per_sm", 5.0),
        ("comp_insts", 27.0),
        ("uncoal_mem_insts", 6.0),
        ("coal_mem_insts", 0.0),
        ("synch_insts", 6.0),
        ("uncoal_per_mw", 32.0),
        ("load_bytes_per_warp", 128.0),
    ])
}

#[test]
fn hong_kim_table_2_intermediates_and_total() {
    let o = hong_kim::evaluate(&hong_kim::Input::from_params(table2()).unwrap());
    let p = &o.parallelism;
    assert_eq!(p.departure_delay, 320.0); // eq. 15: 32 × 10
    assert_eq!(p.mem_l, 730.0); // eqs. 10, 12: 420 + 31 × 10
    assert!((p.mwp_without_bw_full - 2.28).abs() < 0.01); // eq. 16: 730 / 320
    assert!(rel(p.bw_per_warp, 0.175e9) < 0.01); // eq. 7
                                                 // Eq. 6: 80 GB/s / (0.17534 GB/s × 16) = 28.52; the paper rounds BW_per_warp to 0.175
                                                 // first and prints 28.57.
    assert!(rel(p.mwp_peak_bw, 80e9 / (1e9 * 128.0 / 730.0 * 16.0)) < 1e-12);
    assert!(rel(p.mwp_peak_bw, 28.57) < 3e-3);
    assert_eq!(p.mwp, p.mwp_without_bw_full); // eq. 5: MIN(2.28, 28.57, 20)
    assert_eq!(p.n, 20.0); // 5 blocks × 4 warps
    assert_eq!(p.comp_cycles, 132.0); // eq. 19: 4 × (27 + 6)
    assert_eq!(p.mem_cycles, 4380.0); // eq. 18: 730 × 6
    assert!(rel(p.cwp_full, 34.18) < 1e-3); // eq. 8
    assert_eq!(p.cwp, 20.0); // eq. 9
    assert_eq!(p.rep, 1.0); // eq. 21: 80 / (5 × 16)
    assert_eq!(o.case, 23); // CWP > MWP
                            // Exact arithmetic (MWP = 2.28125): 38428.19 + 12300 = 50728.19; the paper, rounding MWP
                            // to 2.28, prints 38450 + 12288 = 50738.
    assert!((o.exec_cycles_with_synch - 50728.1875).abs() < 1e-6);
    assert!(rel(o.exec_cycles_with_synch, 50738.0) < 1e-3);
    assert!(rel(o.exec_cycles_app, 38450.0) < 1e-3);
    assert!(rel(o.synch_cost, 12288.0) < 1e-2);
}

#[test]
fn wang_lou_reduces_to_hong_kim_when_l2_hits_cost_nothing_extra() {
    // With Mem_L2_cache_hit = 0 eq. 21 leaves Hong & Kim's eq. 22 terms without the N/MWP
    // repetition of memory periods; with hit = miss latency every repeated period costs a miss
    // and eq. 21 equals Hong & Kim's eq. 23.
    let mut p = table2();
    p.insert("first_comp_period_insts".into(), Scalar::Number(4.0));
    p.insert("mem_l2_cache_hit".into(), Scalar::Number(420.0));
    let all_miss = wang_lou::evaluate(&wang_lou::Input::from_params(p.clone()).unwrap());
    let hk = hong_kim::evaluate(&hong_kim::Input::from_params(table2()).unwrap());
    assert_eq!(all_miss.hong_kim.case, 21);
    assert!(rel(all_miss.hong_kim.exec_cycles_app, hk.exec_cycles_app) < 1e-12);
    p.insert("mem_l2_cache_hit".into(), Scalar::Number(42.0)); // a tenth of the latency (seed 003, 2.4)
    let cached = wang_lou::evaluate(&wang_lou::Input::from_params(p).unwrap());
    let hits = 20.0 / 2.28125 - 1.0;
    let expected = 4380.0 + 4380.0 * 0.1 * hits + 132.0 / 6.0 * 1.28125;
    assert!(rel(cached.hong_kim.exec_cycles_app, expected) < 1e-12);
    assert_eq!(cached.cache_hit_mem, Some(hits));
}

#[test]
fn gmem_throughput_eq_5_2_and_table_6_1() {
    // Eq. 5.2: 1753 × 256/8 × 4 / (13 × 1253) = 13.78 bytes/cycle (GTX 970).
    assert!((volkov::gmem_throughput(1753.0, 256.0, 4.0, 13.0, 1253.0) - 13.78).abs() < 0.005);
    // Table 6.1: 13.03 for the GTX TITAN X (24 SMs at 1076 MHz, 384-bit bus).
    assert!((volkov::gmem_throughput(1753.0, 384.0, 4.0, 24.0, 1076.0) - 13.03).abs() < 0.005);
}

#[test]
fn throughput_bound_eq_5_3() {
    // Eq. 5.3 takes INS_issued = 23 + 4a (section 5.2.3); Figure 5.23 later uses 26 + 4a.
    for a in [1.0, 8.0, 32.0, 128.0, 4096.0] {
        let mut k = volkov::Input::gajger_saxpy2_gtx970(a);
        k.issued_instructions = 23.0 + 4.0 * a;
        let expected = 1.0
            / (32.0 * (23.0 + 4.0 * a) / 128.0)
                .max((23.0 + 4.0 * a) / 4.0)
                .max(384.0 / 13.78);
        assert!(
            rel(volkov::evaluate(&k).throughput_bound, expected) < 1e-12,
            "a = {a}"
        );
    }
    // Low intensity is bound by global memory, high by the CUDA cores/issue (section 6.1).
    assert_eq!(
        volkov::evaluate(&volkov::Input::gajger_saxpy2_gtx970(1.0)).limiter,
        volkov::Limiter::GlobalMemory
    );
    assert_eq!(
        volkov::evaluate(&volkov::Input::gajger_saxpy2_gtx970(128.0)).limiter,
        volkov::Limiter::Issue
    );
}

#[test]
fn thesis_kernel_time_is_146_65_ms() {
    // Figure 5.23 with occupancy 64, computeIntensity 128, blockSize 256, numElements 4e8:
    // 1562500 blocks × 8 warps / (1/134.5 × 13 × 0.703787) cycles at 1253 MHz.
    let o = volkov::evaluate(&volkov::Input::gajger_saxpy2_gtx970(128.0));
    assert_eq!(o.warps_launched, 12_500_000.0);
    let expected = 12.5e6 * 134.5 / (13.0 * 0.703787) / 1253e6;
    assert!(rel(o.seconds, expected) < 1e-12);
    assert!((o.seconds * 1e3 - 146.65).abs() < 0.005);
}

#[test]
fn pcie_transfers_eqs_5_6_and_5_7() {
    let link = catalog::find("PCIe 3.0 16x - gajger").unwrap();
    let attr = |k: &str| link.attributes[k].as_number().unwrap();
    let n = 1.6e9;
    let htd = transfer::seconds(n, attr("bandwidth"), attr("startupHtD"), attr("lambdaHtD"));
    let dth = transfer::seconds(n, attr("bandwidth"), attr("startupDtH"), attr("lambdaDtH"));
    // Eq. 5.6 and 5.7 print the startups rounded to 3.9687e-6 and 5.1569e-6.
    assert!(rel(htd, 3.9687e-6 + n / (15.8e9 * 0.689)) < 1e-9);
    assert!(rel(dth, 5.1569e-6 + n / (15.8e9 * 0.653)) < 1e-9);
}

#[test]
fn link_fit_recovers_eqs_5_6_and_5_7() {
    let sizes = [0.0, 4.0, 1024.0, 1e6, 1e7, 1e8, 1e9, 2e9];
    for (startup, lambda) in [(3.9687e-6, 0.689), (5.1569e-6, 0.653)] {
        let samples: Vec<_> = sizes
            .iter()
            .map(|&n| {
                (
                    n,
                    if n == 0.0 {
                        1e-7
                    } else {
                        transfer::seconds(n, 15.8e9, startup, lambda)
                    },
                )
            })
            .collect();
        let fit = fit_link(&samples, 15.8e9).unwrap();
        assert_eq!(fit.samples, 7, "the zero-byte copy is left out");
        assert!(rel(fit.startup, startup) < 1e-6, "{fit:?}");
        assert!(rel(fit.lambda, lambda) < 1e-9, "{fit:?}");
        assert!(fit.r_squared > 0.999_999);
    }
}

#[test]
fn kernel_lambda_eq_4_4() {
    // λ = t_estimated / t_measured: a kernel simulated at 103.2 ms and measured at 146.65 ms.
    assert!(rel(kernel_lambda(0.10321, 0.14665), 0.703785) < 1e-5);
    assert!(rel(fit_kernel_lambda(&[(0.7, 1.0), (1.4, 2.0)]).unwrap(), 0.7) < 1e-12);
    assert!(fit_kernel_lambda(&[]).is_err());
}

#[test]
fn occupancy_figure_4_2() {
    // CC 5.2, 256 threads per block, 16 registers, no shared memory: 64 warps, 8 blocks, 100 %.
    let mut p = params(&[("threads_per_block", 256.0), ("registers_per_thread", 16.0)]);
    p.insert("compute_capability".into(), Scalar::from("5.2"));
    let o = occupancy::evaluate(&occupancy::Input::from_params(p).unwrap());
    assert_eq!(o.active_warps_per_sm, 64);
    assert_eq!(o.active_blocks_per_sm, 8);
    assert_eq!(o.active_threads_per_sm, 2048);
    assert_eq!(o.occupancy, 1.0);
    assert_eq!(o.limiter, occupancy::Limiter::Warps);
}

#[test]
fn occupancy_register_and_shared_memory_limits() {
    let run = |cc: &str, threads: f64, regs: f64, smem: f64| {
        let mut p = params(&[
            ("threads_per_block", threads),
            ("registers_per_thread", regs),
            ("shared_memory_per_block", smem),
        ]);
        p.insert("compute_capability".into(), Scalar::from(cc));
        occupancy::evaluate(&occupancy::Input::from_params(p).unwrap())
    };
    // 64 registers: 2048 per warp, 8 warps per 16K partition, 32 warps → 4 blocks of 8 warps.
    let o = run("7.0", 256.0, 64.0, 0.0);
    assert_eq!(
        (o.active_blocks_per_sm, o.limiter),
        (4, occupancy::Limiter::Registers)
    );
    // 8.0 reserves 1 KiB per block: 48 KiB + 1 KiB = 49 KiB; 164 KiB / 49 KiB → 3 blocks.
    let o = run("8.0", 128.0, 32.0, 49152.0);
    assert_eq!(o.shared_memory_per_block_allocated, 50176);
    assert_eq!(
        (o.active_blocks_per_sm, o.limiter),
        (3, occupancy::Limiter::SharedMemory)
    );
    // 7.5 holds 32 warps: 1024-thread blocks fit once.
    let o = run("7.5", 1024.0, 32.0, 0.0);
    assert_eq!((o.active_warps_per_sm, o.occupancy), (32, 1.0));
}

fn transit_case(lanes: f64, r: f64, delta: f64, n: f64, z: f64) -> transit::Output {
    transit::evaluate(&transit::Input {
        lanes,
        peak_mem_throughput: r,
        mem_transition_threads: delta,
        threads: n,
        intensity: z,
    })
}

#[test]
fn transit_reaches_each_of_the_four_bounds() {
    // Few threads: both curves meet on their slopes: k/2 = (8 − k)/4 → k = 8/3 (2.4.1).
    let o = transit_case(32.0, 10.0, 20.0, 8.0, 4.0);
    assert_eq!(o.bound, transit::Bound::Thread);
    assert!(rel(o.k, 8.0 / 3.0) < 1e-12);
    // Slow memory: f flat at R = 1, g sloping: 1 = (10 − k)/1 → k = 9 (2.4.2).
    let o = transit_case(4.0, 1.0, 2.0, 10.0, 1.0);
    assert_eq!(
        (o.bound, o.k, o.ms_throughput),
        (transit::Bound::Memory, 9.0, 1.0)
    );
    // Few lanes: g flat at M/Z = 0.2, f sloping: 2k = 0.2 → k = 0.1 (2.4.3).
    let o = transit_case(2.0, 100.0, 50.0, 10.0, 10.0);
    assert_eq!(o.bound, transit::Bound::Computation);
    assert!(rel(o.k, 0.1) < 1e-12 && rel(o.cs_throughput, 2.0) < 1e-12);
    // Balanced machine, M/Z = R = 2, enough threads: both flat (2.4.4).
    let o = transit_case(4.0, 2.0, 3.0, 10.0, 2.0);
    assert_eq!(
        (o.bound, o.ms_throughput, o.cs_throughput),
        (transit::Bound::Capacity, 2.0, 4.0)
    );
}

#[test]
fn transit_svg_marks_the_equilibrium() {
    let input = transit::Input {
        lanes: 4.0,
        peak_mem_throughput: 1.0,
        mem_transition_threads: 2.0,
        threads: 10.0,
        intensity: 1.0,
    };
    let svg = transit::svg(&input, &transit::evaluate(&input));
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("memory bound") && svg.contains("<circle"));
}

#[test]
fn outputs_carry_the_issue_keys() {
    let volkov_keys = [
        "warps_launched",
        "cpw_cuda",
        "cpw_issue",
        "cpw_gmem",
        "throughput_bound",
        "latency_bound_throughput",
        "warp_throughput",
        "cycles",
        "seconds",
        "limiter",
    ];
    let json = serde_json::to_value(volkov::evaluate(&volkov::Input::gajger_saxpy2_gtx970(128.0))).unwrap();
    for key in volkov_keys {
        assert!(json.get(key).is_some(), "volkov output lacks {key}");
    }
    assert_eq!(json["limiter"], "issue");
    let hk_keys = [
        "mem_l",
        "departure_delay",
        "mwp_without_bw_full",
        "bw_per_warp",
        "mwp_peak_bw",
        "mwp",
        "comp_cycles",
        "mem_cycles",
        "cwp_full",
        "cwp",
        "n",
        "rep",
        "case",
        "exec_cycles_app",
        "synch_cost",
        "exec_cycles_with_synch",
        "cpi",
    ];
    let json = serde_json::to_value(evaluate(ModelName::HongKim, table2()).unwrap()).unwrap();
    for key in hk_keys {
        assert!(json.get(key).is_some(), "hong-kim output lacks {key}");
    }
}

#[test]
fn errors_name_the_key() {
    let mut p = table2();
    p.remove("freq");
    assert_eq!(evaluate(ModelName::HongKim, p).unwrap_err().key(), "freq");
    let mut p = table2();
    p.insert("threads_per_blok".into(), Scalar::Number(1.0));
    let err = evaluate(ModelName::HongKim, p).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown key `threads_per_blok`; did you mean `threads_per_block`?"
    );
    let err = evaluate(ModelName::Transfer, params(&[("size", 1.0), ("bandwidth", 0.0)])).unwrap_err();
    assert_eq!(err.to_string(), "key `bandwidth`: expected a number > 0, got 0");
    assert!(matches!(
        evaluate(ModelName::Transfer, params(&[("size", 8.0), ("bandwidth", 4.0)])),
        Ok(Evaluation::Transfer(o)) if o.seconds == 2.0
    ));
    let err = "volkow".parse::<ModelName>().unwrap_err();
    assert_eq!(err.hint.as_deref(), Some("volkov"));
}

#[test]
fn catalog_entries_have_sources_and_thesis_values() {
    let all = catalog::components();
    for name in [
        "GTX 970 - gajger",
        "GTX TITAN X - gajger",
        "PCIe 3.0 16x - gajger",
        "PCIe 2.0 4x - gajger",
        "Tesla V100 SXM2",
        "A100 SXM4 40GB",
        "H100 SXM5 80GB",
        "H100 PCIe",
        "PCIe 4.0 x16",
        "PCIe 5.0 x16",
        "NVLink 4",
        "NVSwitch gen3 - HGX H100/H200",
        "InfiniBand NDR 400G",
        "ConnectX-7 400G",
        "NVIDIA Quantum-2 QM9700",
        "400GbE RoCE",
        "NVIDIA Spectrum-4 SN5600",
        "AMD EPYC 9654",
        "Intel Xeon Platinum 8480+",
    ] {
        let c = all
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert!(!c.source.is_empty(), "{name} has no source");
    }
    let titan = catalog::find("GTX TITAN X - gajger").unwrap();
    assert_eq!(titan.attributes["GMEMThroughput"], Scalar::Number(13.03));
    let pcie2 = catalog::find("PCIe 2.0 4x - gajger").unwrap();
    assert_eq!(pcie2.attributes["lambdaDtH"], Scalar::Number(0.8421)); // Table 6.2
                                                                       // Datasheet arithmetic: 96 cores x 2.4 GHz x 32 FP32 FLOP/cycle (AMD EPYC 9654);
                                                                       // 56 x 2.0 GHz x 64 (Xeon 8480+); NDR 400 Gb/s = 50 GB/s per direction.
    let epyc = catalog::find("AMD EPYC 9654").unwrap();
    assert_eq!(epyc.attributes["performance"], Scalar::Number(7.3728e12));
    let xeon = catalog::find("Intel Xeon Platinum 8480+").unwrap();
    assert_eq!(xeon.attributes["performance"], Scalar::Number(7.168e12));
    assert_eq!(
        catalog::find("InfiniBand NDR 400G").unwrap().attributes["bandwidth"],
        Scalar::Number(50e9)
    );
    // Switches state what the engine reads (latency) and, where they have it, their reduction.
    for (name, reduction) in [
        ("NVSwitch gen3 - HGX H100/H200", Some("NVLS")),
        ("NVIDIA Quantum-2 QM9700", Some("SHARP")),
        ("ConnectX-7 400G", None),
    ] {
        let c = catalog::find(name).unwrap();
        assert_eq!(c.kind, catalog::ComponentKind::Switch, "{name}");
        assert!(
            c.attributes["latency"].as_number().is_some_and(|l| l >= 0.0),
            "{name}"
        );
        let stated = c.attributes.get("reduction").map(|r| r.to_string());
        assert_eq!(stated, reduction.map(|r| format!("{r:?}")), "{name}");
    }
}
