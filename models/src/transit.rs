//! The transit model: flow balance between the memory and computation systems of a
//! multithreaded machine (seed 001, sections 2.2–2.4).
//!
//! Supply of the memory system f(k) = R·min(k, δ)/δ with k threads in it; demand of the
//! computation system g(x) = min(x, M)/Z with x = n − k threads in it. The machine sits at
//! f(k) = g(n − k) (eq. 3), solved here exactly: both sides are piecewise linear.

use std::fmt::Write as _;

use serde::Serialize;

use crate::params::{ParamError, ParamReader, Params};

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// M: concurrent execution lanes.
    pub lanes: f64,
    /// R: peak memory-system throughput [requests/cycle].
    pub peak_mem_throughput: f64,
    /// δ: threads in the memory system at which it saturates.
    pub mem_transition_threads: f64,
    /// n: threads in the machine.
    pub threads: f64,
    /// Z: arithmetic intensity [cycles of computation per memory request].
    pub intensity: f64,
}

impl Input {
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let input = Input {
            lanes: r.positive("lanes")?,
            peak_mem_throughput: r.positive("peak_mem_throughput")?,
            mem_transition_threads: r.positive("mem_transition_threads")?,
            threads: r.positive("threads")?,
            intensity: r.positive("intensity")?,
        };
        r.finish()?;
        Ok(input)
    }

    /// f(k): memory-system service supply.
    pub fn supply(&self, k: f64) -> f64 {
        self.peak_mem_throughput * k.min(self.mem_transition_threads) / self.mem_transition_threads
    }

    /// g(x): memory-system service demand of x threads computing.
    pub fn demand(&self, x: f64) -> f64 {
        x.min(self.lanes) / self.intensity
    }

    /// f(k) − g(n − k): non-decreasing in k, negative at 0 and positive at n.
    fn imbalance(&self, k: f64) -> f64 {
        self.supply(k) - self.demand(self.threads - k)
    }
}

/// The four performance bounds of section 2.4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Both curves meet on their sloping parts (2.4.1).
    Thread,
    /// On the flat part of f and the sloping part of g (2.4.2).
    Memory,
    /// On the flat part of g and the sloping part of f (2.4.3).
    Computation,
    /// On both flat parts: M/Z = R (2.4.4).
    Capacity,
}

impl Bound {
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Thread => "thread",
            Bound::Memory => "memory",
            Bound::Computation => "computation",
            Bound::Capacity => "capacity",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Output {
    /// Threads in the memory system at equilibrium.
    pub k: f64,
    /// Threads in the computation system (n − k).
    pub x: f64,
    /// f(k) = g(x).
    pub ms_throughput: f64,
    /// Z × MS throughput = min(x, M).
    pub cs_throughput: f64,
    pub bound: Bound,
}

/// Relative slack for deciding that an equilibrium lies on a flat part, so that a solution a
/// rounding error short of a transition point counts as reaching it.
const FLAT_TOLERANCE: f64 = 1e-9;

pub fn evaluate(i: &Input) -> Output {
    let k = equilibrium(i);
    let x = i.threads - k;
    let ms_throughput = i.supply(k);
    let memory_flat = k >= i.mem_transition_threads * (1.0 - FLAT_TOLERANCE);
    let computation_flat = x >= i.lanes * (1.0 - FLAT_TOLERANCE);
    let bound = match (memory_flat, computation_flat) {
        (false, false) => Bound::Thread,
        (true, false) => Bound::Memory,
        (false, true) => Bound::Computation,
        (true, true) => Bound::Capacity,
    };
    Output {
        k,
        x,
        ms_throughput,
        cs_throughput: ms_throughput * i.intensity,
        bound,
    }
}

/// The smallest k in [0, n] with f(k) = g(n − k). Between consecutive breakpoints (0, δ,
/// n − M, n) both sides are linear, so the root is found by one interpolation, exactly.
fn equilibrium(i: &Input) -> f64 {
    let n = i.threads;
    let mut breakpoints = vec![0.0, n];
    for b in [i.mem_transition_threads, n - i.lanes] {
        if b > 0.0 && b < n {
            breakpoints.push(b);
        }
    }
    breakpoints.sort_by(f64::total_cmp);
    let mut previous = (0.0, i.imbalance(0.0));
    for &b in &breakpoints[1..] {
        let h = i.imbalance(b);
        if h >= 0.0 {
            let (b0, h0) = previous;
            return b0 - h0 * (b - b0) / (h - h0);
        }
        previous = (b, h);
    }
    n
}

/// The transit figure (seed 001, Fig. 6) as a standalone SVG: supply f(k) and demand
/// g(n − k) over the threads in the memory system, with the equilibrium marked.
pub fn svg(i: &Input, o: &Output) -> String {
    const W: f64 = 640.0;
    const H: f64 = 420.0;
    const PAD: f64 = 60.0;
    let n = i.threads;
    let top = i.peak_mem_throughput.max(i.lanes / i.intensity) * 1.15;
    let px = |k: f64| PAD + k / n * (W - 2.0 * PAD);
    let py = |y: f64| H - PAD - y / top * (H - 2.0 * PAD);
    let polyline = |points: &[f64], curve: &dyn Fn(f64) -> f64| {
        points
            .iter()
            .map(|&k| format!("{:.2},{:.2}", px(k), py(curve(k))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let clamp = |k: f64| k.clamp(0.0, n);
    let supply_points = [0.0, clamp(i.mem_transition_threads), n];
    let demand_points = [0.0, clamp(n - i.lanes), n];
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="13">
<title>Transit figure: {bound} bound</title>
<rect width="100%" height="100%" fill="white"/>
<line x1="{PAD}" y1="{y0}" x2="{xe}" y2="{y0}" stroke="black"/>
<line x1="{PAD}" y1="{y0}" x2="{PAD}" y2="{PAD}" stroke="black"/>
<text x="{xm}" y="{yl}" text-anchor="middle">threads in the memory system k (n = {n})</text>
<text x="16" y="{ym}" transform="rotate(-90 16 {ym})" text-anchor="middle">memory throughput</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="2.5" points="{supply}"/>
<polyline fill="none" stroke="#d62728" stroke-width="2.5" points="{demand}"/>
<circle cx="{cx:.2}" cy="{cy:.2}" r="5" fill="black"/>
<text x="{tx:.2}" y="{ty:.2}">k = {k:.3}, throughput = {t:.4} ({bound} bound)</text>
<text x="{lx}" y="{l1}" fill="#1f77b4">supply f(k) = R·min(k, δ)/δ</text>
<text x="{lx}" y="{l2}" fill="#d62728">demand g(n − k) = min(n − k, M)/Z</text>
</svg>
"##,
        y0 = H - PAD,
        xe = W - PAD,
        xm = W / 2.0,
        yl = H - 20.0,
        ym = H / 2.0,
        supply = polyline(&supply_points, &|k| i.supply(k)),
        demand = polyline(&demand_points, &|k| i.demand(n - k)),
        cx = px(o.k),
        cy = py(o.ms_throughput),
        tx = (px(o.k) + 8.0).min(W - 300.0),
        ty = py(o.ms_throughput) - 10.0,
        k = o.k,
        t = o.ms_throughput,
        bound = o.bound.as_str(),
        lx = PAD + 10.0,
        l1 = PAD - 30.0,
        l2 = PAD - 12.0,
    );
    s
}
