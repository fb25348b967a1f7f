//! Error bars: split-conformal half-widths, their regimes and their domain.

use hetsim_models::queueing::{Domain, ErrorBars, Regime, Scored, DEFAULT_EXTRAPOLATION};
use hetsim_models::uncertainty::{conformal_half_width, coverage, relative_residual, COVERAGE};
use proptest::prelude::*;

#[test]
fn the_conformal_half_width_is_the_rank_ceil_n_plus_1_times_c() {
    // n = 9 at 90 %: rank ⌈10 · 0.9⌉ = 9, the largest; n = 19: rank 18.
    let nine: Vec<f64> = (1..=9).map(|i| f64::from(i) / 100.0).collect();
    assert_eq!(conformal_half_width(&nine, COVERAGE), Some(0.09));
    let nineteen: Vec<f64> = (1..=19).rev().map(f64::from).collect();
    assert_eq!(conformal_half_width(&nineteen, COVERAGE), Some(18.0));
    assert_eq!(
        conformal_half_width(&nine[..8], COVERAGE),
        None,
        "too few for 90 %"
    );
    assert_eq!(conformal_half_width(&[0.1, f64::NAN, 0.2], 0.5), None);
    assert_eq!(relative_residual(2.0, 2.5), 0.25);
    assert_eq!(coverage([(0.0, 1.0, 0.5), (0.0, 1.0, 2.0)]), Some(0.5));
    assert_eq!(coverage(std::iter::empty()), None);
}

fn scored(regime: Regime, residual: f64, resident_warps: f64) -> Scored {
    Scored {
        regime,
        warps_launched: 1000.0,
        resident_warps,
        residual,
    }
}

#[test]
fn each_regime_gets_its_own_quantile_and_a_sparse_one_the_pooled_quantile() {
    let mut residuals: Vec<Scored> = (1..=19)
        .map(|i| scored(Regime::Memory, f64::from(i) / 100.0, 32.0))
        .collect();
    residuals.extend((1..=9).map(|i| scored(Regime::Compute, f64::from(i) / 1000.0, 64.0)));
    residuals.push(scored(Regime::Latency, 0.5, 8.0));
    let bars = ErrorBars::from_residuals(&residuals).expect("29 residuals");
    assert_eq!(bars.memory, 0.18);
    assert_eq!(bars.compute, 0.009);
    // Latency and launch have fewer than 9: the quantile of all 29 (rank 27 of 29).
    let mut all: Vec<f64> = residuals.iter().map(|s| s.residual).collect();
    all.sort_by(f64::total_cmp);
    assert_eq!(bars.latency, all[26]);
    assert_eq!(bars.launch, all[26]);
    assert_eq!(
        bars.domain,
        Some(Domain {
            warps_launched: [1000.0, 1000.0],
            resident_warps: [8.0, 64.0],
        })
    );
    assert_eq!(bars.extrapolation, DEFAULT_EXTRAPOLATION);
}

#[test]
fn outside_the_calibrated_domain_a_bar_is_widened() {
    let bars = ErrorBars {
        compute: 0.05,
        memory: 0.06,
        latency: 0.12,
        launch: 0.07,
        extrapolation: 2.0,
        domain: Some(Domain {
            warps_launched: [1e6, 2e6],
            resident_warps: [8.0, 64.0],
        }),
    };
    let inside = bars.bar(Regime::Memory, 3e6, 32.0);
    assert!(!inside.extrapolated && inside.relative == 0.06, "{inside:?}");
    for (warps, resident) in [(5e6, 32.0), (4e5, 32.0), (1.5e6, 4.0)] {
        let outside = bars.bar(Regime::Memory, warps, resident);
        assert!(
            outside.extrapolated && outside.relative == 0.12,
            "{warps} {resident}: {outside:?}"
        );
    }
    let nowhere = ErrorBars { domain: None, ..bars };
    assert!(nowhere.bar(Regime::Compute, 1.5e6, 32.0).extrapolated);
}

proptest! {
    /// The conformal half-width covers at least ⌈(n + 1)·c⌉ of its own n residuals.
    #[test]
    fn a_conformal_bar_covers_its_own_residuals_at_the_stated_rate(
        residuals in prop::collection::vec(0.0f64..1.0, 9..200),
    ) {
        let w = conformal_half_width(&residuals, COVERAGE).expect("n >= 9");
        let inside = residuals.iter().filter(|&&r| r <= w).count();
        prop_assert!(inside as f64 >= COVERAGE * residuals.len() as f64, "{inside} of {}", residuals.len());
    }
}
