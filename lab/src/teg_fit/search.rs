//! The search of TEG's fit: each launch's predicted seconds at the points it tries (kept
//! for the folds that share them), the MAPE over the launches a fit is on, the grid and the
//! pattern walk from it, and the fit without each family in turn.

use std::collections::HashMap;

use hetsim_teg::{Gpu, WhatIf};
use serde::Serialize;

use super::{TegLaunch, TegPoint, FINEST};

/// The first steps, halved twice down to [`FINEST`].
const COARSEST_SCALE: f64 = 4.0;

/// Each launch's predicted seconds at `point`, the launches spread over the machine's cores.
fn predicted(launches: &mut [TegLaunch], gpu: &Gpu, point: TegPoint) -> Vec<f64> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = launches.len().div_ceil(cores).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = launches
            .chunks_mut(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter_mut()
                        .map(|l| {
                            point.apply(&mut l.prepared);
                            hetsim_teg::run(&l.prepared, &l.plan, gpu, WhatIf::default()).seconds
                        })
                        .collect::<Vec<f64>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

/// Each launch's relative error (predicted − measured) / measured at `point`.
pub fn errors(launches: &mut [TegLaunch], gpu: &Gpu, point: TegPoint) -> Vec<f64> {
    let seconds = predicted(launches, gpu, point);
    launches
        .iter()
        .zip(seconds)
        .map(|(l, s)| (s - l.seconds) / l.seconds)
        .collect()
}

/// Mean absolute error.
pub fn mape(errors: &[f64]) -> f64 {
    errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len().max(1) as f64
}

/// Where the search stopped.
#[derive(Clone, Debug, Serialize)]
pub struct TegFit {
    pub point: TegPoint,
    pub mape: f64,
    pub worst: f64,
    pub launches: usize,
    /// Points the engine was run at.
    pub evaluations: usize,
}

/// What a fit tells as it goes (a fit runs TEG over every launch at each point, minutes in
/// all): the points scored so far and the least MAPE among them.
pub type FitProgress<'a> = &'a dyn Fn(usize, f64);

/// Every launch's predicted seconds at each point run so far. The fits of several folds over
/// one list of launches share it, so that a point any of them visits is run once: the folds
/// start from one grid ([`GRID`]) and walk near each other.
#[derive(Default)]
struct Runs {
    seconds: HashMap<[i64; 4], Vec<f64>>,
}

impl Runs {
    fn at(&mut self, launches: &mut [TegLaunch], gpu: &Gpu, p: TegPoint) -> &[f64] {
        self.seconds
            .entry(p.key())
            .or_insert_with(|| predicted(launches, gpu, p))
    }
}

/// The MAPE and the worst error at each point tried, over the launches `fitted` lists, so
/// that no point is scored twice.
struct Scores<'g> {
    gpu: &'g Gpu,
    runs: &'g mut Runs,
    fitted: &'g [usize],
    memo: HashMap<[i64; 4], (f64, f64)>,
    progress: FitProgress<'g>,
    least: f64,
}

impl<'g> Scores<'g> {
    fn new(gpu: &'g Gpu, runs: &'g mut Runs, fitted: &'g [usize], progress: FitProgress<'g>) -> Self {
        Scores {
            gpu,
            runs,
            fitted,
            memo: HashMap::new(),
            progress,
            least: f64::INFINITY,
        }
    }

    fn at(&mut self, launches: &mut [TegLaunch], p: TegPoint) -> f64 {
        if let Some(&(m, _)) = self.memo.get(&p.key()) {
            return m;
        }
        let seconds = self.runs.at(launches, self.gpu, p);
        let e: Vec<f64> = self
            .fitted
            .iter()
            .map(|&i| (seconds[i] - launches[i].seconds) / launches[i].seconds)
            .collect();
        let m = mape(&e);
        self.memo
            .insert(p.key(), (m, e.iter().map(|x| x.abs()).fold(0.0, f64::max)));
        self.least = self.least.min(m);
        (self.progress)(self.memo.len(), self.least);
        m
    }
    /// The pattern search from `start` (on the finest lattice), with first steps `scale` ×
    /// [`FINEST`] halved down to it; the point it stops at.
    fn search(&mut self, launches: &mut [TegLaunch], start: TegPoint, scale: f64) -> TegPoint {
        let mut best = start;
        let mut best_mape = self.at(launches, best);
        let mut scale = scale.max(1.0);
        loop {
            let mut moved = true;
            while moved {
                moved = false;
                for axis in 0..4 {
                    for sign in [1.0, -1.0] {
                        loop {
                            let mut v = best.values();
                            v[axis] += sign * scale * FINEST.values()[axis];
                            let candidate = snapped(v);
                            if !candidate.valid() {
                                break;
                            }
                            let m = self.at(launches, candidate);
                            if m >= best_mape {
                                break;
                            }
                            (best, best_mape, moved) = (candidate, m, true);
                        }
                    }
                }
            }
            if scale <= 1.0 {
                return best;
            }
            scale = (scale / 2.0).max(1.0);
        }
    }

    /// The fit's summary at `point`, a point tried.
    fn result(&mut self, launches: &mut [TegLaunch], point: TegPoint) -> TegFit {
        self.at(launches, point);
        let (mape, worst) = self.memo[&point.key()];
        TegFit {
            point,
            mape,
            worst,
            launches: self.fitted.len(),
            evaluations: self.memo.len(),
        }
    }
}

/// The point on the finest lattice nearest to `values`. A step below 1 divides by its
/// reciprocal, so that 86 hundredths is the double nearest 0.86 and the file reads `0.86`.
fn snapped(values: [f64; 4]) -> TegPoint {
    let mut v = values;
    for (x, s) in v.iter_mut().zip(FINEST.values()) {
        let steps = (*x / s).round();
        *x = if s < 1.0 {
            steps / (1.0 / s).round()
        } else {
            steps * s
        };
    }
    TegPoint::from_values(v)
}

/// The fit: the best of `start` and [`GRID`]'s points, then the pattern search from there,
/// steps from 4 × [`FINEST`] down to it. The grid keeps the walk from stopping in a dip next
/// to `start` (from the file's former values, 0.68, 30, 600 and 5, the walk alone stopped at
/// 4.97 % where the grid's best start reaches lower).
pub fn fit(launches: &mut [TegLaunch], gpu: &Gpu, start: TegPoint, progress: FitProgress) -> TegFit {
    let every: Vec<usize> = (0..launches.len()).collect();
    fit_on(launches, gpu, start, progress, &mut Runs::default(), &every)
}

/// [`fit`] on the launches `fitted` lists, with the points already run in `runs`.
fn fit_on(
    launches: &mut [TegLaunch],
    gpu: &Gpu,
    start: TegPoint,
    progress: FitProgress,
    runs: &mut Runs,
    fitted: &[usize],
) -> TegFit {
    let mut scores = Scores::new(gpu, runs, fitted, progress);
    let start = snapped(start.values());
    let mut best = (scores.at(launches, start), start);
    for &efficiency in GRID[0] {
        for &queue_cycles in GRID[1] {
            for &replacement in GRID[2] {
                let point = snapped([efficiency, queue_cycles, replacement, start.taken_branch]);
                let m = scores.at(launches, point);
                if m < best.0 {
                    best = (m, point);
                }
            }
        }
    }
    let point = scores.search(launches, best.1, COARSEST_SCALE);
    scores.result(launches, point)
}

/// The coarse grid [`fit`] starts from: the share of the bandwidth from 60 to 90 %, the
/// queueing scale and the block replacement over their plausible ranges (`taken_branch`
/// stays at the start's: the walk moves it).
const GRID: [&[f64]; 3] = [
    &[0.60, 0.66, 0.72, 0.78, 0.84, 0.90],
    &[0.0, 25.0, 50.0],
    &[500.0, 700.0, 900.0],
];

/// The search's finest stage from `point` (on the finest lattice): where it stops. At the
/// point a fit ended on, no neighbour one [`FINEST`] step away lowers the MAPE, and this
/// returns it (what a test can afford of the whole fit).
pub fn refit_at_finest(launches: &mut [TegLaunch], gpu: &Gpu, point: TegPoint) -> TegFit {
    let every: Vec<usize> = (0..launches.len()).collect();
    let mut runs = Runs::default();
    let mut scores = Scores::new(gpu, &mut runs, &every, &|_, _| {});
    let point = scores.search(launches, snapped(point.values()), 1.0);
    scores.result(launches, point)
}

/// Where every fit that must not lean on a fitted point starts: the values the shipped
/// Hopper file held before TEG was first fitted (teg/data/hopper.toml's history), fitted on
/// nothing.
pub const UNFITTED_START: TegPoint = TegPoint {
    efficiency: 0.68,
    queue_cycles: 30.0,
    replacement: 600.0,
    taken_branch: 5.0,
};

/// One family held out of TEG's fit: the fit on every other launch, and the family's
/// launches (indices into the fit's launches) with their predicted seconds at its point.
pub struct Fold {
    pub family: String,
    pub fit: TegFit,
    pub held: Vec<(usize, f64)>,
}

/// TEG's fit ([`fit`], from [`UNFITTED_START`]) without each of `families` in turn, each
/// scored on the family it left out. The folds share the points they run ([`Runs`]), so the
/// grid every fit starts with is run once for all of them.
pub fn leave_one_family_out(
    launches: &mut [TegLaunch],
    gpu: &Gpu,
    families: &[String],
    progress: &dyn Fn(&str, usize, f64),
) -> Vec<Fold> {
    let mut runs = Runs::default();
    families
        .iter()
        .map(|family| {
            let (held, fitted): (Vec<usize>, Vec<usize>) =
                (0..launches.len()).partition(|&i| launches[i].family == *family);
            let told = |points: usize, least: f64| progress(family, points, least);
            let fit = fit_on(launches, gpu, UNFITTED_START, &told, &mut runs, &fitted);
            let seconds = runs.at(launches, gpu, fit.point);
            let held = held.into_iter().map(|i| (i, seconds[i])).collect();
            Fold {
                family: family.clone(),
                fit,
                held,
            }
        })
        .collect()
}
