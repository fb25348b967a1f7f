//! Transfer time over a link (seed 004, section 5.4, eq. 5.5).

use serde::Serialize;

use crate::params::{ParamError, ParamReader, Params};

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// `size` [bytes].
    pub size: f64,
    /// `bandwidth` [bytes/s], the link's theoretical peak in one direction (thesis Table 4.3).
    pub bandwidth: f64,
    /// `startup` [s] (t_s), default 0.
    pub startup: f64,
    /// `lambda`: the fraction of the bandwidth reached, default 1.
    pub lambda: f64,
}

impl Input {
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let input = Input {
            size: r.non_negative("size")?,
            bandwidth: r.positive("bandwidth")?,
            startup: r.non_negative_or("startup", 0.0)?,
            lambda: r.positive_or("lambda", 1.0)?,
        };
        r.finish()?;
        Ok(input)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Output {
    pub startup: f64,
    /// size / (bandwidth × λ) [s].
    pub streaming_seconds: f64,
    /// Eq. 5.5 [s].
    pub seconds: f64,
    /// size / seconds [bytes/s].
    pub effective_bandwidth: f64,
}

/// Eq. 5.5: T = t_s + n / (bw × λ).
///
/// The model applies to every size, 0 included (T = t_s): that an empty copy costs nothing
/// (thesis Table 5.1) is a rule of the simulator's links, not of this equation.
pub fn seconds(size: f64, bandwidth: f64, startup: f64, lambda: f64) -> f64 {
    startup + size / (bandwidth * lambda)
}

pub fn evaluate(i: &Input) -> Output {
    let total = seconds(i.size, i.bandwidth, i.startup, i.lambda);
    Output {
        startup: i.startup,
        streaming_seconds: total - i.startup,
        seconds: total,
        effective_bandwidth: if total > 0.0 { i.size / total } else { 0.0 },
    }
}
