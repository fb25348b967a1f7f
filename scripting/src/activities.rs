//! A run's computes and transfers by kind, as the run page and `--json` show them: computes
//! per node, model and limiter; messages per pair of nodes, with their bytes, so that an
//! achieved bandwidth can be read. Kept as totals while the run goes, keyed by node index
//! (no text is built per compute or message), so a run of millions of computes costs a few
//! map entries, with or without a trace.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use hetsim_simulator::Activity;
use rhai::ImmutableString;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    /// A compute on a node, with the limiter its model named.
    Compute(usize, Option<ImmutableString>),
    /// Messages from a node to a node.
    Transfer(usize, usize),
}

#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    count: u64,
    seconds: f64,
    bytes: f64,
}

/// The totals of one run.
#[derive(Debug, Default)]
pub struct Activities(RefCell<BTreeMap<Key, Totals>>);

impl Activities {
    /// A compute of `seconds` on node `node`, bounded by `limiter` where its model says.
    pub fn compute(&self, node: usize, limiter: Option<ImmutableString>, seconds: f64) {
        let limiter = limiter.map(|l| match l.char_indices().nth(MAX_LIMITER) {
            Some((cut, _)) => ImmutableString::from(&l[..cut]),
            None => l,
        });
        self.add(Key::Compute(node, limiter), seconds, 0.0);
    }

    /// A message of `bytes` from node `from` to node `to`, `seconds` from send to arrival.
    pub fn transfer(&self, from: usize, to: usize, bytes: f64, seconds: f64) {
        self.add(Key::Transfer(from, to), seconds, bytes);
    }

    fn add(&self, key: Key, seconds: f64, bytes: f64) {
        let mut totals = self.0.borrow_mut();
        let t = totals.entry(key).or_default();
        t.count += 1;
        t.seconds += seconds;
        t.bytes += bytes;
    }

    /// The totals, the longest first, nodes named by `node_ids` and their models by
    /// `node_models`.
    pub fn rows(&self, node_ids: &[String], node_models: &[Arc<str>]) -> Vec<Activity> {
        let name = |i: usize| node_ids.get(i).cloned().unwrap_or_default();
        let mut rows: Vec<Activity> = self
            .0
            .borrow()
            .iter()
            .map(|(key, t)| {
                let (kind, place, model, limiter) = match key {
                    Key::Compute(node, limiter) => (
                        "compute",
                        name(*node),
                        node_models.get(*node).map(|m| m.to_string()).unwrap_or_default(),
                        limiter.as_ref().map(ToString::to_string).unwrap_or_default(),
                    ),
                    Key::Transfer(from, to) => (
                        "transfer",
                        format!("{} → {}", name(*from), name(*to)),
                        String::new(),
                        String::new(),
                    ),
                };
                Activity {
                    kind: kind.to_owned(),
                    place,
                    model,
                    limiter,
                    count: t.count,
                    seconds: t.seconds,
                    bytes: t.bytes,
                }
            })
            .collect();
        rows.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        if rows.len() > MAX_ROWS {
            let rest = rows.split_off(MAX_ROWS - 1);
            rows.push(Activity {
                kind: "other".to_owned(),
                place: format!("{} more kinds", rest.len()),
                model: String::new(),
                limiter: String::new(),
                count: rest.iter().map(|a| a.count).sum(),
                seconds: rest.iter().map(|a| a.seconds).sum(),
                bytes: rest.iter().map(|a| a.bytes).sum(),
            });
        }
        rows
    }
}

/// Rows a run's summary keeps: the longest, then one `other` row summing the rest (a
/// system of a thousand nodes messaging all to all would otherwise store a million).
pub const MAX_ROWS: usize = 100;

/// Characters of a limiter kept (a model may name its limiter as it likes).
const MAX_LIMITER: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_past_the_cap_are_summed_into_one() {
        let a = Activities::default();
        for from in 0..MAX_ROWS + 10 {
            a.transfer(from, 0, 1.0, 1.0 + from as f64);
        }
        let ids: Vec<String> = (0..MAX_ROWS + 10).map(|i| format!("n{i}")).collect();
        let rows = a.rows(&ids, &[]);
        assert_eq!(rows.len(), MAX_ROWS);
        let other = rows.last().unwrap();
        assert_eq!(
            (other.kind.as_str(), other.count, other.bytes),
            ("other", 11, 11.0)
        );
    }

    #[test]
    fn totals_are_kept_per_node_limiter_and_pair_longest_first() {
        let a = Activities::default();
        a.compute(1, Some("memory".into()), 0.2);
        a.compute(1, Some("memory".into()), 0.3);
        a.compute(1, Some("latency".into()), 0.1);
        a.transfer(0, 1, 1e9, 0.08);
        let rows = a.rows(
            &["host".into(), "gpu".into()],
            &["cpu-flops".into(), "gpu-volkov".into()],
        );
        assert_eq!(rows.len(), 3);
        let first = &rows[0];
        assert_eq!(
            (
                first.place.as_str(),
                first.model.as_str(),
                first.limiter.as_str(),
                first.count,
                first.seconds
            ),
            ("gpu", "gpu-volkov", "memory", 2, 0.5)
        );
        assert_eq!(
            (rows[2].kind.as_str(), rows[2].place.as_str(), rows[2].bytes),
            ("transfer", "host → gpu", 1e9)
        );
    }
}
