//! The flow model's invariants and a case worked by hand.
use super::*;
use proptest::prelude::*;
use std::collections::HashMap;

const TOLERANCE: f64 = 1e-9;

/// Each flow: (its hops as (link, forward), its bytes, its link time per hop).
type Spec = (Vec<(usize, bool)>, f64, Vec<f64>);

/// Flows joined at once over `channels.len()` links, settled once.
fn joined(channels: &[u32], specs: &[Spec]) -> Flows<usize> {
    joined_settling(channels, specs, false)
}

/// Flows joined at once, settled after each join where `each` (as at successive instants).
fn joined_settling(channels: &[u32], specs: &[Spec], each: bool) -> Flows<usize> {
    let mut flows = Flows::new(channels.iter().copied());
    let mut changed = Vec::new();
    for (i, (hops, bytes, works)) in specs.iter().enumerate() {
        flows.join(0.0, &route(hops), *bytes, works, i, &mut changed);
        if each {
            flows.settle(0.0, &mut changed);
        }
    }
    flows.settle(0.0, &mut changed);
    flows
}

fn route(hops: &[(usize, bool)]) -> Rc<[Hop]> {
    hops.iter()
        .map(|&(link, forward)| Hop { link, forward })
        .collect()
}

/// The shares of the bundles with flows, by bundle.
fn shares(flows: &Flows<usize>) -> Vec<(BundleId, u64)> {
    (0..flows.bundles.len())
        .filter(|&id| flows.count(id) > 0)
        .map(|id| (id, flows.bundles[id].as_ref().map_or(0, |b| b.share.to_bits())))
        .collect()
}

fn bundles(flows: &Flows<usize>) -> impl Iterator<Item = &Bundle<usize>> {
    flows.bundles.iter().flatten().filter(|b| b.count > 0)
}

/// Per direction crossed, the units its flows use.
fn used(flows: &Flows<usize>) -> HashMap<(LinkId, bool), f64> {
    let mut used = HashMap::new();
    for b in bundles(flows) {
        for (hop, a) in b.key.route.iter().zip(b.weights.iter()) {
            *used.entry((hop.link, hop.forward)).or_insert(0.0) += b.count as f64 * a * b.share;
        }
    }
    used
}

#[test]
fn a_flow_that_ends_frees_its_links_for_the_flows_it_tied_together_even_when_its_bundle_closes() {
    // Flow 0 crosses links 0 and 1, flow 1 link 0, flow 2 link 1, all at 1 B/s alone (flow
    // 0 for 1 s, the others 3 s): each link is shared by two, shares 1/2. At 2 s flow 0
    // ends, then more flows alone on links of their own than idle bundles are kept: flow 0's
    // bundle, idle the longest, closes at that instant, and flows 1 and 2, no longer
    // sharing, run at full speed.
    let mut flows = Flows::new([1; 2 + IDLE_KEPT + 1]);
    let mut changed = Vec::new();
    for (i, hops) in [vec![(0, true), (1, true)], vec![(0, true)], vec![(1, true)]]
        .iter()
        .enumerate()
    {
        let seconds = if i == 0 { 1.0 } else { 3.0 };
        flows.join(
            0.0,
            &route(hops),
            seconds,
            &vec![seconds; hops.len()],
            i,
            &mut changed,
        );
    }
    let alone = 2..2 + IDLE_KEPT + 1;
    for link in alone.clone() {
        flows.join(0.0, &route(&[(link, true)]), 1.0, &[2.0], link, &mut changed);
    }
    flows.settle(0.0, &mut changed);
    let first = flows
        .direction(Hop {
            link: 0,
            forward: true,
        })
        .bundles[0]
        .0;
    assert_eq!(flows.finish_due(2.0, first, &mut changed), vec![0]);
    for link in alone {
        let id = flows.direction(Hop { link, forward: true }).bundles[0].0;
        assert_eq!(flows.finish_due(2.0, id, &mut changed), vec![link]);
    }
    flows.settle(2.0, &mut changed);
    assert!(flows.bundles[first].is_none(), "flow 0's bundle is closed");
    let left: Vec<f64> = shares(&flows).iter().map(|&(_, s)| f64::from_bits(s)).collect();
    assert_eq!(left, vec![1.0, 1.0]);
}

#[test]
fn a_flow_held_by_its_own_slow_link_leaves_the_rest_of_the_bottleneck_to_the_other() {
    // The dumbbell worked by hand: A crosses links 0 (10 MB/s), 2 (1 MB/s), 3; B crosses 1
    // (0.25 MB/s), 2, 4. B runs at 0.25 MB/s, A at 0.75 MB/s: shares 0.75 and 1.
    let flows = joined(
        &[1; 5],
        &[
            (vec![(0, true), (2, true), (3, true)], 1e6, vec![0.1, 1.0, 0.1]),
            (vec![(1, true), (2, true), (4, true)], 1e6, vec![4.0, 1.0, 0.1]),
        ],
    );
    let shares: Vec<f64> = bundles(&flows).map(|b| b.share).collect();
    assert!((shares[0] - 0.75).abs() < 1e-15 && shares[1] == 1.0, "{shares:?}");
}

/// Up to 9 flows, each over 1 to 3 of 4 links in one direction, with its bytes and link
/// times.
fn specs() -> impl Strategy<Value = Vec<Spec>> {
    let flow = (
        proptest::sample::subsequence(vec![0usize, 1, 2, 3], 1..4),
        any::<bool>(),
        1.0f64..100.0,
        proptest::collection::vec(0.01f64..10.0, 4),
    )
        .prop_map(|(links, forward, bytes, works)| {
            let hops: Vec<(usize, bool)> = links.iter().map(|&l| (l, forward)).collect();
            let works = works[..hops.len()].to_vec();
            (hops, bytes, works)
        });
    proptest::collection::vec(flow, 1..10)
}

proptest! {
    /// The shares are feasible (no direction over its capacity, no flow over one unit of
    /// a direction) and max-min fair: every flow is at its own bound, or crosses a full
    /// direction on which no flow has a higher rate.
    #[test]
    fn shares_are_feasible_and_max_min_fair(
        channels in proptest::collection::vec(1u32..3, 4),
        specs in specs(),
    ) {
        let flows = joined(&channels, &specs);
        let used = used(&flows);
        for (&(link, _), &units) in &used {
            prop_assert!(units <= f64::from(channels[link]) * (1.0 + TOLERANCE));
        }
        for b in bundles(&flows) {
            let rate = b.share * b.rate;
            let at_bound = b.weights.iter().any(|a| a * b.share >= 1.0 - TOLERANCE);
            let bottlenecked = b.key.route.iter().any(|hop| {
                let full = used[&(hop.link, hop.forward)] >= f64::from(channels[hop.link]) * (1.0 - TOLERANCE);
                let highest = bundles(&flows)
                    .filter(|o| o.key.route.contains(hop))
                    .all(|o| o.share * o.rate <= rate * (1.0 + TOLERANCE));
                full && highest
            });
            prop_assert!(at_bound || bottlenecked, "bundle {:?} at rate {rate}", b.key.route);
        }
    }

    /// Settling the flows of an instant once gives every bundle the share, to the bit, that
    /// settling after each join gives.
    #[test]
    fn one_settle_an_instant_gives_the_shares_of_a_settle_a_join(
        channels in proptest::collection::vec(1u32..3, 4),
        specs in specs(),
    ) {
        let once = joined_settling(&channels, &specs, false);
        let each = joined_settling(&channels, &specs, true);
        prop_assert_eq!(shares(&once), shares(&each));
    }
}
