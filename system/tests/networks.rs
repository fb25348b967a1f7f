//! Networks as they are built (issue 48), as system files say them: switch nodes, a node's
//! internal link, board templates copied into clusters joined by a generated topology, and
//! the messages of files that get them wrong (file, line, field).

use std::collections::BTreeMap;
use std::path::Path;

use hetsim_models::catalog::ComponentKind;
use hetsim_system::{load, load_with, resolve_text, System, Variable};

fn example(path: &str) -> System {
    let file = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples")).join(path);
    load(&file).unwrap_or_else(|e| panic!("{e}"))
}

fn count(system: &System, kind: ComponentKind) -> usize {
    system.nodes.iter().filter(|n| n.component.kind == kind).count()
}

/// The error of `text` as `bad.toml`, parsed and resolved.
fn error(text: &str) -> String {
    resolve_text(text, "bad.toml", None, &BTreeMap::new())
        .unwrap_err()
        .to_string()
}

#[test]
fn the_dumbbells_routers_and_the_hgx_boards_nvswitch_are_switches() {
    let dumbbell = example("dumbbell/system.toml");
    let switches: Vec<&str> = dumbbell
        .nodes
        .iter()
        .filter(|n| n.component.kind == ComponentKind::Switch)
        .map(|n| n.spec.id.as_str())
        .collect();
    assert_eq!(switches, ["left", "right"]);
    // 8 GPUs, one NVLink 4 each to the one switch.
    let training = example("training-8gpu/system.toml");
    assert_eq!(
        (
            count(&training, ComponentKind::Gpu),
            count(&training, ComponentKind::Switch)
        ),
        (8, 1)
    );
    let switch = training
        .nodes
        .iter()
        .position(|n| n.spec.id == "nvswitch")
        .unwrap();
    assert_eq!(training.links.len(), 8);
    assert!(training
        .links
        .iter()
        .all(|(l, ends)| ends[1] == switch && l.component.name == "NVLink 4"));
}

#[test]
fn one_hgx_board_has_its_parts() {
    // 8 GPUs, 1 NVSwitch, 2 CPUs, 8 NICs; 8 NVLink 4, 8 + 8 PCIe 5.0 links.
    let hgx = example("clusters/hgx-h100.toml");
    assert_eq!(count(&hgx, ComponentKind::Gpu), 8);
    assert_eq!(count(&hgx, ComponentKind::Cpu), 2);
    assert_eq!(count(&hgx, ComponentKind::Switch), 1 + 8);
    assert_eq!(hgx.links.len(), 24);
    let gpus: u32 = hgx
        .nodes
        .iter()
        .map(|n| n.spec.labels.get("GPU").copied().unwrap_or(0))
        .sum();
    assert_eq!(gpus, 8);
    // The first 8 labelled nodes are the GPUs, in order: `--label GPU=N` takes the first N.
    let labelled: Vec<&str> = hgx
        .nodes
        .iter()
        .filter(|n| !n.spec.labels.is_empty())
        .map(|n| n.spec.id.as_str())
        .collect();
    assert_eq!(
        labelled,
        ["gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"]
    );
}

#[test]
fn a_cluster_copies_its_board_and_joins_the_copies_with_its_topology() {
    // 2 boards (the default): 2·19 board nodes, 1 leaf (16 NICs ≤ 32), 32 spines;
    // links: 2·24 on the boards, 16 NIC–leaf, 1·32 leaf–spine.
    let ib = example("clusters/h100-ib.toml");
    assert_eq!(ib.nodes.len(), 2 * 19 + 1 + 32);
    assert_eq!(ib.links.len(), 2 * 24 + 16 + 32);
    assert!(ib.nodes.iter().any(|n| n.spec.id == "b1.gpu7"));
    let leaf = ib.nodes.iter().position(|n| n.spec.id == "ib.leaf0").unwrap();
    let nic = ib.nodes.iter().position(|n| n.spec.id == "b1.nic3").unwrap();
    assert!(ib
        .links
        .iter()
        .any(|(l, ends)| *ends == [nic, leaf] && l.component.name == "InfiniBand NDR 400G"));
    // The run variable `boards` = 5: 40 NICs need 2 leaves; 5·24 + 40 + 2·32 links.
    let variables = BTreeMap::from([("boards".to_owned(), Variable::Int(5))]);
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/clusters/h100-ib.toml"
    ));
    let five = load_with(path, &variables).unwrap();
    assert_eq!(five.nodes.len(), 5 * 19 + 2 + 32);
    assert_eq!(five.links.len(), 5 * 24 + 40 + 64);
    let gpus: u32 = five
        .nodes
        .iter()
        .map(|n| n.spec.labels.get("GPU").copied().unwrap_or(0))
        .sum();
    assert_eq!(gpus, 40);
    let bad = BTreeMap::from([("boards".to_owned(), Variable::Float(2.5))]);
    let err = load_with(path, &bad).unwrap_err();
    assert_eq!(err.path.as_deref(), Some("cluster[0].boards"));
    assert!(
        err.to_string()
            .contains("run variable `boards` is Float(2.5), expected a whole number"),
        "{err}"
    );
}

const SWITCH: &str = "[[component]]\nname = \"sw\"\nkind = \"SWITCH\"\nattributes = { latency = 1e-7 }\n";

#[test]
fn a_switch_takes_no_model_and_no_labels_and_other_nodes_need_a_model() {
    let ok = format!("{SWITCH}[[node]]\nid = \"s\"\ncomponent = \"sw\"\n");
    let system = resolve_text(&ok, "ok.toml", None, &BTreeMap::new()).unwrap();
    assert_eq!(system.nodes[0].model.name, "switch (no model)");
    let err = error(&format!("{ok}labels = {{ P = 1 }}\n"));
    assert_eq!(
        err,
        "bad.toml:8: node `s`: a switch runs no processes, so it takes no `labels`"
    );
    let err = error("[[node]]\nid = \"c\"\ncomponent = \"Intel Core i7-4790K\"\n");
    assert!(
        err.starts_with("bad.toml:1: node `c`: `model` is required"),
        "{err}"
    );
}

#[test]
fn a_node_of_many_units_needs_its_internal_link_which_joins_it_to_itself() {
    let node = "[[node]]\nid = \"workers\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\ncount = 1000000\n";
    assert_eq!(
        error(node),
        "bad.toml:5: node `workers`: count 1000000 needs `internal`, the link its units talk over"
    );
    let ok = format!("{node}internal = \"InfiniBand NDR 400G\"\n");
    let system = resolve_text(&ok, "ok.toml", None, &BTreeMap::new()).unwrap();
    let (link, ends) = &system.links[0];
    assert_eq!(
        (*ends, link.spec.between.clone()),
        ([0, 0], ["workers".to_owned(), "workers".to_owned()])
    );
    assert_eq!(link.model.name, "link-startup-bandwidth.rhai");
    let err = error(&format!("{node}internal = \"H100 SXM5 80GB\"\n"));
    assert_eq!(
        err,
        "bad.toml:6: node[0].internal `workers`–`workers`: component `H100 SXM5 80GB` is a GPU, not a NETWORK"
    );
}

/// A one-node board `b` attaching node `n`, and a cluster of it with `cluster` lines.
fn cluster(cluster: &str) -> String {
    format!(
        "{SWITCH}[[board]]\nname = \"b\"\nattach = [\"n\"]\n[[board.node]]\nid = \"n\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\n\
         [[cluster]]\nboard = \"b\"\nboards = 4\nswitch = \"sw\"\nlink = \"InfiniBand NDR 400G\"\n{cluster}"
    )
}

#[test]
fn every_topology_builds_its_counts() {
    let resolve = |text: &str| resolve_text(&cluster(text), "ok.toml", None, &BTreeMap::new()).unwrap();
    // (nodes, links) over 4 boards of one node: a star 4 + 1, 4; a ring 4, 4; a 2×2 torus 4,
    // 4·2 (two wires per pair along a dimension of 2, as SimGrid); a fat-tree
    // "2;2,2;1,2;1,1": 4 + 2 + 2, 4 + 2·2; a dragonfly "2,1;1,1;2,1;1": 4 + 4 routers,
    // 4 access + 2 green + 1 blue.
    for (topology, nodes, links) in [
        ("topology = \"star\"", 5, 4),
        ("topology = \"ring\"", 4, 4),
        ("topology = \"torus\"\ndims = [2, 2]", 4, 8),
        ("topology = \"fat-tree\"\ndown = [2, 2]\nup = [1, 2]", 8, 8),
        (
            "topology = \"leaf-spine\"\nleaf_down = 2\nspines = 3",
            4 + 2 + 3,
            4 + 6,
        ),
        (
            "topology = \"dragonfly\"\ngroups = [2, 1]\nchassis = [1, 1]\nrouters = [2, 1]\nnodes = 1",
            8,
            7,
        ),
    ] {
        let system = resolve(topology);
        assert_eq!(
            (system.nodes.len(), system.links.len()),
            (nodes, links),
            "{topology}"
        );
    }
}

#[test]
fn bad_clusters_are_named_by_file_line_and_field() {
    let err = error(&cluster("topology = \"fat-tre\"\n"));
    assert!(
        err.starts_with("bad.toml:17: cluster[0].topology: \"fat-tre\" is not one of"),
        "{err}"
    );
    let err =
        error(&cluster("topology = \"star\"\n").replace("board = \"b\"\nboards", "board = \"bb\"\nboards"));
    assert_eq!(
        err,
        "bad.toml:13: cluster `fabric`: no [[board]] is named `bb`; did you mean `b`?"
    );
    let err = error(&cluster("topology = \"fat-tree\"\ndown = [2, 2]\nup = [1]\n"));
    assert_eq!(
        err,
        "bad.toml:19: cluster `fabric`: `up`: expected 2 counts, got 1"
    );
    let err = error(&cluster("topology = \"torus\"\ndims = [3]\n"));
    assert_eq!(
        err,
        "bad.toml:18: cluster `fabric`: `dims`: the torus has 3 positions (the product of `dims`), 4 endpoints attach"
    );
    let err = error(&cluster("topology = \"star\"\ndims = [4]\n"));
    assert_eq!(
        err,
        "bad.toml:18: cluster `fabric`: `dims` is no parameter of star (it takes none)"
    );
    let err = error(&cluster("topology = \"fat-tree\"\n"));
    assert!(
        err.starts_with("bad.toml:17: cluster `fabric`: topology fat-tree needs `down` and `up`"),
        "{err}"
    );
    let err = error(&cluster("topology = \"ring\"\n").replace("attach = [\"n\"]", "attach = [\"m\"]"));
    assert_eq!(err, "bad.toml:7: board `b`: no node `m` on the board");
}

/// CPUs `a`, `b`, `c` and the links `links` between them (pairs of ids), then `extra`.
fn triangle(links: &[(&str, &str)], extra: &str) -> String {
    let nodes: String = ["a", "b", "c"]
        .iter()
        .map(|id| {
            format!("[[node]]\nid = \"{id}\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\n")
        })
        .collect();
    let links: String = links
        .iter()
        .map(|(x, y)| {
            format!("[[link]]\nbetween = [\"{x}\", \"{y}\"]\ncomponent = \"InfiniBand NDR 400G\"\n")
        })
        .collect();
    format!("{nodes}{links}{extra}")
}

#[test]
fn a_route_fixed_by_hand_is_its_path_of_nodes_both_ways_unless_it_says_otherwise() {
    let all = [("a", "b"), ("b", "c"), ("a", "c")];
    let resolved = |extra: &str| {
        resolve_text(&triangle(&all, extra), "ok.toml", None, &BTreeMap::new())
            .unwrap_or_else(|e| panic!("{e}"))
            .routes
    };
    let route = "[[route]]\nfrom = \"a\"\nto = \"c\"\nvia = [\"b\"]\n";
    assert_eq!(
        resolved(route),
        [vec![2, 1, 0], vec![0, 1, 2]],
        "the way back first"
    );
    assert_eq!(resolved(&format!("{route}symmetric = false\n")), [vec![0, 1, 2]]);
}

#[test]
fn bad_routes_are_named_by_file_line_and_field() {
    let route = |via: &str| format!("[[route]]\nfrom = \"a\"\nto = \"c\"\nvia = {via}\n");
    let err = error(&triangle(&[("a", "b"), ("b", "c")], &route("[\"bb\"]")));
    assert!(
        err.starts_with("bad.toml:")
            && err.ends_with("route from `a` to `c`: unknown node `bb`; did you mean `b`?"),
        "{err}"
    );
    let err = error(&triangle(&[("a", "b"), ("b", "c")], &route("[]")));
    assert!(
        err.ends_with("route from `a` to `c`: no link joins `a` and `c`: each step of a route needs one"),
        "{err}"
    );
    let err = error(&triangle(&[("a", "b"), ("b", "c")], &route("[\"b\", \"a\"]")));
    assert!(
        err.ends_with("crosses node `a` twice (a route is a path: no loops)"),
        "{err}"
    );
}

#[test]
fn a_switch_with_more_links_than_ports_is_refused_naming_it() {
    let two_ports = "[[component]]\nname = \"sw\"\nkind = \"SWITCH\"\nattributes = { ports = 2 }\n[[node]]\nid = \"s\"\ncomponent = \"sw\"\n";
    let ok = triangle(&[("a", "s"), ("b", "s")], "");
    resolve_text(&format!("{two_ports}{ok}"), "ok.toml", None, &BTreeMap::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let err = error(&format!(
        "{two_ports}{}",
        triangle(&[("a", "s"), ("b", "s"), ("c", "s")], "")
    ));
    assert_eq!(
        err,
        "bad.toml:5: node `s`: 3 links end at it, more than the 2 ports and host interfaces of its component `sw`"
    );
}

#[test]
fn nccl_min_ctas_is_carried_and_out_of_range_values_are_refused_naming_the_field() {
    let text = |ctas: &str| format!("nccl_min_ctas = {ctas}\n{}", triangle(&[("a", "b")], ""));
    let system =
        resolve_text(&text("24"), "ok.toml", None, &BTreeMap::new()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(system.nccl_min_ctas, Some(24));
    let unset = resolve_text(&triangle(&[("a", "b")], ""), "ok.toml", None, &BTreeMap::new());
    assert_eq!(unset.map(|s| s.nccl_min_ctas).ok(), Some(None));
    // NCCL's MAXCHANNELS is 64; no collective runs on no channel; a count, not a text or a
    // fraction.
    for bad in ["0", "65", "\"24\"", "2.5"] {
        let err = error(&text(bad));
        assert!(err.starts_with("bad.toml:1: nccl_min_ctas: "), "{err}");
    }
}
