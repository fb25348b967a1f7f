//! The Nelder–Mead simplex minimiser (Nelder & Mead 1965, with the standard coefficients:
//! reflection 1, expansion 2, contraction ½, shrink ½), for calibrations whose objective
//! (a mean relative error) has no useful derivative.

/// The best point found and its objective value.
#[derive(Clone, Debug, PartialEq)]
pub struct Minimum {
    pub point: Vec<f64>,
    pub value: f64,
    pub evaluations: usize,
}

fn centroid(simplex: &[Vec<f64>]) -> Vec<f64> {
    let n = simplex.len() - 1;
    (0..simplex[0].len())
        .map(|j| simplex[..n].iter().map(|p| p[j]).sum::<f64>() / n as f64)
        .collect()
}

fn towards(from: &[f64], to: &[f64], t: f64) -> Vec<f64> {
    from.iter().zip(to).map(|(a, b)| a + t * (b - a)).collect()
}

/// Minimises `f` from `start`, each coordinate first stepped by `step`, restarting from the
/// best point `restarts` times (a restart escapes a collapsed simplex).
pub fn minimise(
    f: impl Fn(&[f64]) -> f64,
    start: &[f64],
    step: f64,
    iterations: usize,
    restarts: usize,
) -> Minimum {
    let mut best = start.to_vec();
    let mut evaluations = 0;
    let mut value = f64::INFINITY;
    for _ in 0..=restarts {
        let mut simplex: Vec<Vec<f64>> = std::iter::once(best.clone())
            .chain((0..best.len()).map(|i| {
                let mut p = best.clone();
                p[i] += step;
                p
            }))
            .collect();
        let mut values: Vec<f64> = simplex.iter().map(|p| f(p)).collect();
        evaluations += values.len();
        for _ in 0..iterations {
            let mut order: Vec<usize> = (0..simplex.len()).collect();
            order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
            simplex = order.iter().map(|&i| simplex[i].clone()).collect();
            values = order.iter().map(|&i| values[i]).collect();
            let worst = simplex.len() - 1;
            let c = centroid(&simplex);
            let reflected = towards(&c, &simplex[worst], -1.0);
            let fr = f(&reflected);
            evaluations += 1;
            if fr < values[0] {
                let expanded = towards(&c, &simplex[worst], -2.0);
                let fe = f(&expanded);
                evaluations += 1;
                (simplex[worst], values[worst]) = if fe < fr { (expanded, fe) } else { (reflected, fr) };
            } else if fr < values[worst - 1] {
                (simplex[worst], values[worst]) = (reflected, fr);
            } else {
                let contracted = towards(&c, &simplex[worst], 0.5);
                let fc = f(&contracted);
                evaluations += 1;
                if fc < values[worst] {
                    (simplex[worst], values[worst]) = (contracted, fc);
                } else {
                    for i in 1..simplex.len() {
                        simplex[i] = towards(&simplex[0], &simplex[i], 0.5);
                        values[i] = f(&simplex[i]);
                        evaluations += 1;
                    }
                }
            }
        }
        let i = (0..values.len())
            .min_by(|&a, &b| values[a].total_cmp(&values[b]))
            .unwrap_or(0);
        if values[i] <= value {
            value = values[i];
            best = simplex[i].clone();
        }
    }
    Minimum {
        point: best,
        value,
        evaluations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_minimum_of_rosenbrock() {
        let rosenbrock = |p: &[f64]| (1.0 - p[0]).powi(2) + 100.0 * (p[1] - p[0] * p[0]).powi(2);
        let m = minimise(rosenbrock, &[-1.2, 1.0], 0.5, 2000, 2);
        assert!(
            (m.point[0] - 1.0).abs() < 1e-4 && (m.point[1] - 1.0).abs() < 1e-4,
            "{m:?}"
        );
    }
}
