//! Pinned and pageable host↔device copies on the H100 host (hetsim GPU measurements, H100 SXM
//! 80GB, 2026-11-22: transfers.csv, copied unchanged to examples/validation/data/h100/): the
//! catalog entry "PCIe 5.0 x16 - H100 host" is what the calibration gives, and the pageable
//! curve never makes a larger copy faster.

use std::path::Path;

use hetsim_models::calibrate::{fit_link_relative, fit_pageable, powers_of_four};
use hetsim_models::catalog;
use hetsim_models::transfer::{self, BandwidthCurve, Knot};
use hetsim_models::Scalar;
use proptest::prelude::*;

const LINK: &str = "PCIe 5.0 x16 - H100 host";
const MIB: f64 = 1048576.0;

/// (direction, memory, bytes, seconds) per row of transfers.csv.
fn transfers() -> Vec<(String, String, f64, f64)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data/h100/transfers.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("direction,memory,bytes,reps,trial,mean_seconds")
    );
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            (
                f[0].to_owned(),
                f[1].to_owned(),
                f[2].parse().unwrap(),
                f[5].parse().unwrap(),
            )
        })
        .collect()
}

fn samples(direction: &str, memory: &str) -> Vec<(f64, f64)> {
    transfers()
        .into_iter()
        .filter(|(d, m, _, _)| d == direction && m == memory)
        .map(|(_, _, n, t)| (n, t))
        .collect()
}

fn attribute(key: &str) -> Scalar {
    let link = catalog::find(LINK).expect("the H100 host link is in the catalog");
    link.attributes
        .get(key)
        .unwrap_or_else(|| panic!("{LINK} has no {key}"))
        .clone()
}

fn number(key: &str) -> f64 {
    attribute(key).as_number().unwrap()
}

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

#[test]
fn the_catalog_entry_is_the_calibration_of_transfers_csv() {
    let bandwidth = number("bandwidth");
    for (direction, suffix) in [("HostToDevice", "HtD"), ("DeviceToHost", "DtH")] {
        // Pinned: eq. 5.5 by least squares of relative residuals over the copies >= 1 MiB.
        let pinned: Vec<_> = samples(direction, "pinned")
            .into_iter()
            .filter(|(n, _)| *n >= MIB)
            .collect();
        let fit = fit_link_relative(&pinned, bandwidth).unwrap();
        assert!(
            rel(number(&format!("startup{suffix}")), fit.startup) < 1e-3,
            "{suffix} {fit:?}"
        );
        assert!(
            rel(number(&format!("lambda{suffix}")), fit.lambda) < 1e-4,
            "{suffix} {fit:?}"
        );
        // Pageable: knots at 1 KiB, 4 KiB, …, 4 GiB from the medians of the three trials.
        let fit = fit_pageable(
            &samples(direction, "pageable"),
            &powers_of_four(1024.0, 4.0 * 1024.0 * MIB),
        )
        .unwrap();
        assert_eq!(fit.raised, 0);
        assert!(rel(number(&format!("startupPageable{suffix}")), fit.startup) < 1e-3);
        let Scalar::Text(text) = attribute(&format!("pageable{suffix}")) else {
            panic!("pageable{suffix} is not text");
        };
        let curve: BandwidthCurve = text.parse().unwrap();
        assert_eq!(curve.knots().len(), fit.curve.knots().len());
        for (stored, fitted) in curve.knots().iter().zip(fit.curve.knots()) {
            assert_eq!(stored.size, fitted.size);
            assert!(
                rel(stored.bandwidth, fitted.bandwidth) < 1e-3,
                "{suffix} {stored:?} {fitted:?}"
            );
        }
    }
}

#[test]
fn every_catalog_curve_parses() {
    for c in catalog::components() {
        for (key, value) in &c.attributes {
            if key.starts_with("pageable") {
                let Scalar::Text(text) = value else {
                    panic!("{}: {key} is not text", c.name)
                };
                text.parse::<BandwidthCurve>()
                    .unwrap_or_else(|e| panic!("{}: {key}: {e}", c.name));
            }
        }
    }
}

/// Knots with increasing sizes and non-decreasing streaming times, as `new` requires.
fn curve() -> impl Strategy<Value = BandwidthCurve> {
    (
        1.0..1e6f64,
        1e-9..1e-3f64,
        prop::collection::vec((1.01..64.0f64, 1.0..64.0f64), 0..12),
    )
        .prop_map(|(size, time, steps)| {
            let mut knots = vec![Knot {
                size,
                bandwidth: size / time,
            }];
            let (mut n, mut t) = (size, time);
            for (grow, slow) in steps {
                n *= grow;
                t *= slow;
                knots.push(Knot {
                    size: n,
                    bandwidth: n / t,
                });
            }
            BandwidthCurve::new(knots).expect("valid by construction")
        })
}

fn h100_curves() -> Vec<(BandwidthCurve, f64)> {
    ["HtD", "DtH"]
        .iter()
        .map(|s| {
            let Scalar::Text(text) = attribute(&format!("pageable{s}")) else {
                panic!("pageable{s} is not text")
            };
            (text.parse().unwrap(), number(&format!("startupPageable{s}")))
        })
        .collect()
}

proptest! {
    #[test]
    fn pageable_time_never_falls_with_size(c in curve(), a in 0.0..1e12f64, b in 0.0..1e12f64, startup in 0.0..1e-4f64) {
        let (small, large) = (a.min(b), a.max(b));
        prop_assert!(transfer::curve_seconds(small, &c, startup) <= transfer::curve_seconds(large, &c, startup));
    }

    #[test]
    fn h100_pageable_time_never_falls_with_size(x in 0.0..36.0f64, dx in 0.0..4.0f64) {
        // Sizes 1 B … 2^40 B, spread evenly over log2(size).
        for (c, startup) in h100_curves() {
            let (small, large) = (x.exp2(), (x + dx).exp2());
            prop_assert!(transfer::curve_seconds(small, &c, startup) <= transfer::curve_seconds(large, &c, startup));
        }
    }

    #[test]
    fn any_knots_new_accepts_give_a_monotone_curve(
        knots in prop::collection::vec((1.0..1e10f64, 1e3..1e11f64), 1..8),
        a in 0.0..1e11f64,
        b in 0.0..1e11f64,
    ) {
        let mut knots: Vec<Knot> = knots.into_iter().map(|(size, bandwidth)| Knot { size, bandwidth }).collect();
        knots.sort_by(|x, y| x.size.total_cmp(&y.size));
        if let Ok(c) = BandwidthCurve::new(knots) {
            prop_assert!(c.streaming_seconds(a.min(b)) <= c.streaming_seconds(a.max(b)));
        }
    }
}
