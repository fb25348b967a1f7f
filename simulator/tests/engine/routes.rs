//! Messages as flows over whole routes, worked by hand (a chain, a dumbbell, two flows the
//! two ways of one link), switches, a node's internal link, and routing.

use super::*;
use hetsim_simulator::{Node, Routing};

/// Per link, `t(bytes) = startup + bytes / bandwidth`, whatever the direction.
struct Table(Vec<(f64, f64)>);

impl LinkTiming for Table {
    fn transfer_time(
        &mut self,
        link: LinkId,
        bytes: f64,
        _direction: Direction,
        _host_memory: HostMemory,
    ) -> Result<Estimate, String> {
        let (startup, bandwidth) = self.0[link];
        Ok(Estimate {
            seconds: startup + bytes / bandwidth,
            uncertainty: 0.0,
        })
    }
}

fn link(a: usize, b: usize, latency: f64) -> Link {
    Link {
        between: [a, b],
        channels: 1,
        duplex: 1.0,
        latency,
    }
}

fn switch(id: &str, latency: f64) -> Node {
    Node {
        labels: BTreeMap::new(),
        latency,
        ..node(id, ComponentKind::Switch, "-", 0)
    }
}

/// When each message was taken by its receiver, in time order.
fn arrivals(
    platform: &Platform,
    labels: &[(&str, u64)],
    programs: Vec<Vec<Request>>,
    timing: &mut Table,
) -> Vec<f64> {
    let (_, seen) = run_with(platform, labels, programs, None, timing).unwrap();
    seen.into_iter()
        .filter_map(|(_, t, resume)| matches!(resume, Resume::Message(_)).then_some(t))
        .collect()
}

#[test]
fn a_message_over_k_equal_links_takes_their_latencies_plus_size_over_bandwidth() {
    // a — s1 — s2 — s3 — b, four links of 1 ms and 1 GB/s; switches of 2 µs each. 1 GB:
    // 4 × 1 ms + 3 × 2 µs + 1 s (store and forward would take 4 s).
    let platform = Platform::new(
        vec![
            node("a", ComponentKind::Cpu, "A", 1),
            switch("s1", 2e-6),
            switch("s2", 2e-6),
            switch("s3", 2e-6),
            node("b", ComponentKind::Cpu, "B", 1),
        ],
        (0..4).map(|i| link(i, i + 1, 1e-3)).collect(),
    )
    .unwrap();
    let mut timing = Table(vec![(1e-3, 1e9); 4]);
    let got = arrivals(
        &platform,
        &[("A", 1), ("B", 1)],
        vec![vec![send(1, 1e9)], vec![receive(0)]],
        &mut timing,
    );
    assert_eq!(got.len(), 1);
    assert!(close(got[0], 4e-3 + 6e-6 + 1.0), "{got:?}");
}

/// s1, s2 — left — right — r1, r2: the bottleneck left–right (link 2) at 1 MB/s, the access
/// links at `access` [B/s] but s2's at `slow`, no startups.
fn dumbbell(access: f64, slow: f64) -> (Platform, Table) {
    let cpu = |id, label| node(id, ComponentKind::Cpu, label, 1);
    let platform = Platform::new(
        vec![
            cpu("s1", "S1"),
            cpu("s2", "S2"),
            switch("left", 0.0),
            switch("right", 0.0),
            cpu("r1", "R1"),
            cpu("r2", "R2"),
        ],
        vec![
            link(0, 2, 0.0),
            link(1, 2, 0.0),
            link(2, 3, 0.0),
            link(3, 4, 0.0),
            link(3, 5, 0.0),
        ],
    )
    .unwrap();
    let timing = Table(vec![
        (0.0, access),
        (0.0, slow),
        (0.0, 1e6),
        (0.0, access),
        (0.0, access),
    ]);
    (platform, timing)
}

#[test]
fn flows_share_a_bottleneck_max_min_fairly_in_bytes_per_second() {
    // Labels in name order: pids 0 R1, 1 R2, 2 S1, 3 S2. S1 → R1 1 MB and S2 → R2 1 MB at
    // t = 0. S2's access link carries 0.25 MB/s, so that flow is held there at 0.25 MB/s and
    // S1's gets the rest of the bottleneck, 0.75 MB/s (CM02's max-min; equal shares of the
    // bottleneck would give 0.5 each). S1's arrives at 1 / 0.75 s; then S2's runs at 0.25 MB/s
    // still (its own link): it arrives at 4 s.
    let (platform, mut timing) = dumbbell(10e6, 0.25e6);
    let labels = [("R1", 1), ("R2", 1), ("S1", 1), ("S2", 1)];
    let programs = vec![
        vec![receive(2)],
        vec![receive(3)],
        vec![send(0, 1e6)],
        vec![send(1, 1e6)],
    ];
    let got = arrivals(&platform, &labels, programs, &mut timing);
    assert!(close(got[0], 1.0 / 0.75) && close(got[1], 4.0), "{got:?}");
}

#[test]
fn equal_flows_over_a_bottleneck_share_it_equally_and_the_freed_share_goes_to_the_rest() {
    // Both access links at 10 MB/s: S1 → R1 1 MB and S2 → R2 0.5 MB share the bottleneck
    // at 0.5 MB/s each; S2's arrives at 1 s, then S1's has 0.5 MB left at 1 MB/s: 1.5 s.
    let (platform, mut timing) = dumbbell(10e6, 10e6);
    let labels = [("R1", 1), ("R2", 1), ("S1", 1), ("S2", 1)];
    let programs = vec![
        vec![receive(2)],
        vec![receive(3)],
        vec![send(0, 1e6)],
        vec![send(1, 0.5e6)],
    ];
    let got = arrivals(&platform, &labels, programs, &mut timing);
    assert!(close(got[0], 1.0) && close(got[1], 1.5), "{got:?}");
}

#[test]
fn two_flows_the_two_ways_of_a_full_duplex_link_do_not_slow_each_other() {
    // a — s — b at 1 MB/s, 1 ms each: a → b and b → a, 1 MB each, both take 2 ms + 1 s.
    let platform = Platform::new(
        vec![
            node("a", ComponentKind::Cpu, "A", 1),
            switch("s", 0.0),
            node("b", ComponentKind::Cpu, "B", 1),
        ],
        vec![link(0, 1, 1e-3), link(1, 2, 1e-3)],
    )
    .unwrap();
    let mut timing = Table(vec![(1e-3, 1e6); 2]);
    let programs = vec![vec![send(1, 1e6), receive(1)], vec![send(0, 1e6), receive(0)]];
    let got = arrivals(&platform, &[("A", 1), ("B", 1)], programs, &mut timing);
    assert!(got.iter().all(|&t| close(t, 1.002)), "{got:?}");
}

#[test]
fn a_node_of_several_units_talks_over_its_internal_link_and_needs_one() {
    // Two units of one process each: a message between them crosses the internal link.
    let mut two = node("n", ComponentKind::Cpu, "P", 1);
    two.count = 2;
    let refused = Platform::new(vec![two.clone()], vec![]).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("node `n`: its 2 units talk over no link"),
        "{refused}"
    );
    let platform = Platform::new(vec![two], vec![link(0, 0, 1e-3)]).unwrap();
    let mut timing = Table(vec![(1e-3, 1e6)]);
    let got = arrivals(
        &platform,
        &[("P", 2)],
        vec![vec![send(1, 1e6)], vec![receive(0)]],
        &mut timing,
    );
    assert!(close(got[0], 1.001), "{got:?}");
}

#[test]
fn a_switch_runs_no_processes() {
    let mut labelled = switch("nvswitch", 0.0);
    labelled.labels.insert("GPU".into(), 1);
    let refused = Platform::new(vec![labelled], vec![]).unwrap_err();
    assert!(
        refused.to_string().contains("node `nvswitch` is a switch"),
        "{refused}"
    );
}

/// The hops of a route as the nodes it visits, each hop's direction checked.
fn visits(platform: &Platform, from: usize, to: usize) -> Vec<String> {
    let route = platform.route(from, to, [0, 0]).unwrap();
    let mut node = from;
    let mut seen = vec![platform.nodes[from].id.clone()];
    for hop in route.iter() {
        let [a, b] = platform.links[hop.link].between;
        assert_eq!(hop.forward, a == node, "hop {hop:?} crossed from {node}");
        node = if a == node { b } else { a };
        seen.push(platform.nodes[node].id.clone());
    }
    seen
}

#[test]
fn gpu_to_gpu_routes_stay_off_the_host_while_a_gpu_side_path_exists() {
    // The case of issue 48: a host declared first, PCIe to g0, and g0..g3 on an NVLink ring.
    // g2 → g0 was routed g2 → host → g0 (declaration order); it takes g2 → g3 → g0 (or g1).
    let gpu = |id| node(id, ComponentKind::Gpu, "GPU", 1);
    let platform = Platform::new(
        vec![
            node("host", ComponentKind::Cpu, "CPU", 1),
            gpu("g0"),
            gpu("g1"),
            gpu("g2"),
            gpu("g3"),
        ],
        vec![
            link(0, 1, 1e-6),
            link(0, 3, 1e-6),
            link(1, 2, 2e-6),
            link(2, 3, 2e-6),
            link(3, 4, 2e-6),
            link(4, 1, 2e-6),
        ],
    )
    .unwrap();
    let route = visits(&platform, 3, 1);
    assert_eq!(route.len(), 3, "{route:?}");
    assert!(!route.contains(&"host".to_owned()), "{route:?}");
    // The host itself reaches a GPU over its own PCIe link.
    assert_eq!(visits(&platform, 0, 3), ["host", "g2"]);
}

#[test]
fn routes_take_the_least_latency_then_the_fewest_links() {
    // a — b directly at 10 µs, or a — s1 — s2 — b over three 1 µs links: the latter.
    let cpu = |id, label| node(id, ComponentKind::Cpu, label, 1);
    let nodes = || vec![cpu("a", "A"), cpu("b", "B"), switch("s1", 0.0), switch("s2", 0.0)];
    let slow_direct = Platform::new(
        nodes(),
        vec![
            link(0, 1, 10e-6),
            link(0, 2, 1e-6),
            link(2, 3, 1e-6),
            link(3, 1, 1e-6),
        ],
    )
    .unwrap();
    assert_eq!(visits(&slow_direct, 0, 1), ["a", "s1", "s2", "b"]);
    // At equal latency (3 units both ways, exact in binary), the fewest links.
    let equal = Platform::new(
        nodes(),
        vec![link(0, 1, 3.0), link(0, 2, 1.0), link(2, 3, 1.0), link(3, 1, 1.0)],
    )
    .unwrap();
    assert_eq!(visits(&equal, 0, 1), ["a", "b"]);
}

#[test]
fn ecmp_spreads_pairs_over_equal_paths_and_keeps_each_pair_on_one() {
    // Eight hosts under leaf l0, eight under leaf l1, four spines: each pair across the
    // leaves has four equal paths. Shortest routing takes the first spine for every pair;
    // ECMP uses more than one, and routes a pair the same way every time.
    let mut nodes: Vec<Node> = (0..16)
        .map(|i| node(&format!("h{i}"), ComponentKind::Cpu, "H", 1))
        .collect();
    nodes.extend(["l0", "l1", "s0", "s1", "s2", "s3"].map(|id| switch(id, 0.0)));
    let mut links: Vec<Link> = (0..16).map(|h| link(h, 16 + h / 8, 1e-6)).collect();
    for spine in 18..22 {
        links.extend([link(16, spine, 1e-6), link(17, spine, 1e-6)]);
    }
    let spines = |platform: &Platform| -> std::collections::BTreeSet<String> {
        (0..8)
            .flat_map(|a| (8..16).map(move |b| (a, b)))
            .map(|(a, b)| visits(platform, a, b)[2].clone())
            .collect()
    };
    let shortest = Platform::new(nodes.clone(), links.clone()).unwrap();
    assert_eq!(spines(&shortest).len(), 1);
    let ecmp = Platform::new(nodes, links).unwrap().with_routing(Routing::Ecmp);
    assert!(spines(&ecmp).len() > 1);
    assert_eq!(visits(&ecmp, 2, 13), visits(&ecmp, 2, 13));
}

#[test]
fn destination_routing_sends_every_route_to_a_node_over_one_spine_and_spreads_the_nodes() {
    // Two leaves of four hosts, four spines: routes to one host all cross one spine, and
    // the four hosts under a leaf are reached over the four spines (ids 4..8 modulo 4).
    let mut nodes: Vec<Node> = (0..8)
        .map(|i| node(&format!("h{i}"), ComponentKind::Cpu, "H", 1))
        .collect();
    nodes.extend(["l0", "l1", "s0", "s1", "s2", "s3"].map(|id| switch(id, 0.0)));
    let mut links: Vec<Link> = (0..8).map(|h| link(h, 8 + h / 4, 1e-6)).collect();
    for spine in 10..14 {
        links.extend([link(8, spine, 1e-6), link(9, spine, 1e-6)]);
    }
    let platform = Platform::new(nodes, links)
        .unwrap()
        .with_routing(Routing::Destination);
    let spine = |a, b| visits(&platform, a, b)[2].clone();
    for b in 4..8 {
        assert!((0..4).all(|a| spine(a, b) == spine(0, b)));
    }
    let spines: std::collections::BTreeSet<String> = (4..8).map(|b| spine(0, b)).collect();
    assert_eq!(spines.len(), 4);
}
