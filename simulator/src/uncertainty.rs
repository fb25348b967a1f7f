//! Error bars carried along the happens-before order of a run.
//!
//! A model may state how uncertain a duration is, as the half-width of an interval that holds
//! the real duration at the model's stated coverage (90 % for the calibrated GPU models,
//! docs/MODELS.md "Error bars"). The engine treats those intervals by interval arithmetic:
//! along one process the widths add (a worst case: the errors of one kernel run after run are
//! not independent, since they come from one calibration), and where a receive waits for a
//! message the process's clock becomes the later of two uncertain times, whose interval is
//! `[max(lo), max(hi)]`. The interval of the overall time is that of the latest finish, so it
//! is the sum of the widths along the critical path.

use serde::Serialize;

/// A duration and the half-width of its interval [s].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimate {
    pub seconds: f64,
    /// 0 when the model states none.
    pub uncertainty: f64,
}

impl Estimate {
    pub fn exact(seconds: f64) -> Self {
        Estimate {
            seconds,
            uncertainty: 0.0,
        }
    }
}

/// How far below and above a nominal time its interval reaches [s].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    pub below: f64,
    pub above: f64,
}

impl Spread {
    /// The spread after a further duration of half-width `uncertainty`.
    pub fn widened(self, uncertainty: f64) -> Spread {
        Spread {
            below: self.below + uncertainty,
            above: self.above + uncertainty,
        }
    }

    /// The spread of `max(a, b)` for the nominal times `a.0` and `b.0`, relative to the later.
    pub fn of_later((a, sa): (f64, Spread), (b, sb): (f64, Spread)) -> Spread {
        let nominal = a.max(b);
        let low = (a - sa.below).max(b - sb.below);
        let high = (a + sa.above).max(b + sb.above);
        Spread {
            below: (nominal - low).max(0.0),
            above: (high - nominal).max(0.0),
        }
    }

    /// `[nominal − below, nominal + above]`.
    pub fn interval(self, nominal: f64) -> [f64; 2] {
        [nominal - self.below, nominal + self.above]
    }
}
