//! Polynomials in loop trip counts, so that static counts read `26 + 4·L0` until the trip
//! counts are known.

use std::collections::BTreeMap;
use std::fmt;

/// A sum of terms `coefficient · Lᵢ · Lⱼ …`; the empty product is the constant term.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Poly {
    terms: BTreeMap<Vec<usize>, f64>,
}

impl Poly {
    pub fn zero() -> Poly {
        Poly::default()
    }

    pub fn constant(c: f64) -> Poly {
        let mut p = Poly::zero();
        p.add_term(Vec::new(), c);
        p
    }

    /// The trip count of loop `l`.
    pub fn var(l: usize) -> Poly {
        let mut p = Poly::zero();
        p.add_term(vec![l], 1.0);
        p
    }

    fn add_term(&mut self, mut monomial: Vec<usize>, c: f64) {
        if c == 0.0 {
            return;
        }
        monomial.sort_unstable();
        let entry = self.terms.entry(monomial.clone()).or_insert(0.0);
        *entry += c;
        if *entry == 0.0 {
            self.terms.remove(&monomial);
        }
    }

    pub fn add(&self, other: &Poly) -> Poly {
        let mut out = self.clone();
        for (m, c) in &other.terms {
            out.add_term(m.clone(), *c);
        }
        out
    }

    pub fn scale(&self, k: f64) -> Poly {
        let mut out = Poly::zero();
        for (m, c) in &self.terms {
            out.add_term(m.clone(), c * k);
        }
        out
    }

    pub fn mul(&self, other: &Poly) -> Poly {
        let mut out = Poly::zero();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                out.add_term(ma.iter().chain(mb).copied().collect(), ca * cb);
            }
        }
        out
    }

    /// Divides by the trip count of loop `l` where every term holds it; `None` otherwise.
    pub fn divide_by_var(&self, l: usize) -> Option<Poly> {
        let mut out = Poly::zero();
        for (m, c) in &self.terms {
            let at = m.iter().position(|&x| x == l)?;
            let mut rest = m.clone();
            rest.remove(at);
            out.add_term(rest, *c);
        }
        Some(out)
    }

    /// The value with trip counts `trips` (indexed by loop); `None` if one is missing.
    pub fn eval(&self, trips: &[Option<f64>]) -> Option<f64> {
        self.terms.iter().try_fold(0.0, |sum, (m, c)| {
            m.iter()
                .try_fold(*c, |product, &l| {
                    trips.get(l).copied().flatten().map(|n| product * n)
                })
                .map(|t| sum + t)
        })
    }

    pub fn is_constant(&self) -> bool {
        self.terms.keys().all(Vec::is_empty)
    }

    /// Formats with loop names (`26 + 4·L0`).
    pub fn display<'a>(&'a self, names: &'a [String]) -> impl fmt::Display + 'a {
        PolyDisplay { poly: self, names }
    }
}

struct PolyDisplay<'a> {
    poly: &'a Poly,
    names: &'a [String],
}

fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

impl fmt::Display for PolyDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.poly.terms.is_empty() {
            return write!(f, "0");
        }
        // Constant first, then by degree and loop order.
        let mut terms: Vec<_> = self.poly.terms.iter().collect();
        terms.sort_by_key(|(m, _)| (m.len(), (*m).clone()));
        for (i, (m, c)) in terms.into_iter().enumerate() {
            let (sign, c) = if *c < 0.0 { ("-", -c) } else { ("+", *c) };
            match (i, sign) {
                (0, "-") => write!(f, "-")?,
                (0, _) => {}
                _ => write!(f, " {sign} ")?,
            }
            let vars: Vec<&str> = m
                .iter()
                .map(|&l| self.names.get(l).map_or("?", String::as_str))
                .collect();
            if m.is_empty() {
                write!(f, "{}", number(c))?;
            } else if c == 1.0 {
                write!(f, "{}", vars.join("·"))?;
            } else {
                write!(f, "{}·{}", number(c), vars.join("·"))?;
            }
        }
        Ok(())
    }
}
