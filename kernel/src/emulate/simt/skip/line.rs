//! The line a loop's integer comparisons follow from trip to trip: whether a probed trip's
//! inputs lie on it, and where it makes some comparison change order (the loop's exit).

/// Whether comparison inputs `c`, read `j` trips from now, are those of trip 0 (`first`)
/// plus `j` times the step from trip 0 to trip 1 (`second`), and compare as in trip 0.
pub(super) fn on_the_line(
    first: &[Option<(i64, i64)>],
    second: &[Option<(i64, i64)>],
    c: &[Option<(i64, i64)>],
    j: u32,
) -> bool {
    let j = i128::from(j);
    let line =
        |x0: i64, x1: i64, z: i64| i128::from(x0) + j * (i128::from(x1) - i128::from(x0)) == i128::from(z);
    first.len() == c.len()
        && second.len() == c.len()
        && first
            .iter()
            .zip(second)
            .zip(c)
            .all(|((x, y), z)| match (x, y, z) {
                (Some(x), Some(y), Some(z)) => {
                    line(x.0, y.0, z.0) && line(x.1, y.1, z.1) && z.0.cmp(&z.1) == x.0.cmp(&x.1)
                }
                (None, None, None) => true,
                _ => false,
            })
}

/// The first trip from now at which some comparison, its inputs on the line through trips 0
/// (`first`) and 1 (`second`), orders them otherwise than in trip 0; `None` if none ever does.
/// Past it [`on_the_line`] fails, so the trips alike end there at the latest.
pub(super) fn first_reorder(first: &[Option<(i64, i64)>], second: &[Option<(i64, i64)>]) -> Option<u64> {
    first
        .iter()
        .zip(second)
        .filter_map(|(x, y)| {
            let (x, y) = ((*x)?, (*y)?);
            let gap = i128::from(x.0) - i128::from(x.1);
            let slope = i128::from(y.0) - i128::from(y.1) - gap;
            // The gap keeps its sign until it reaches zero (or leaves zero, if it starts there).
            if gap == 0 {
                return (slope != 0).then_some(1);
            }
            if gap.signum() == slope.signum() || slope == 0 {
                return None;
            }
            let trips = gap.unsigned_abs().div_ceil(slope.unsigned_abs());
            Some(u64::try_from(trips).unwrap_or(u64::MAX))
        })
        .min()
}
