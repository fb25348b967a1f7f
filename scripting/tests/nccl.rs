//! Collectives as NCCL runs them, held to their closed forms on an ideal fabric: GPUs joined
//! pairwise by links of 1 GB/s per direction, no startup (every message is one hop, so the
//! engine's time of a message alone on its link is exactly bytes / bandwidth).

mod common;

use common::{labels, system_from};
use hetsim_models::nccl::{self, Algo, Hw, Proto};
use hetsim_scripting::{run, RunOptions};

const BANDWIDTH: f64 = 1e9;

/// `n` H100s, every pair joined by an "NVLink" of `bandwidth` B/s per direction (NCCL's
/// NVLink tables apply).
fn mesh(n: usize, link: &str, bandwidth: f64) -> hetsim_system::System {
    let mut toml = format!(
        "[[component]]\nname = \"{link}\"\nkind = \"NETWORK\"\nattributes = {{ bandwidth = {bandwidth}, startup = 0, lambda = 1 }}\n"
    );
    for i in 0..n {
        toml += &format!(
            "[[node]]\nid = \"g{i}\"\ncomponent = \"H100 SXM5 80GB\"\nmodel = \"gpu-volkov\"\nlabels = {{ GPU = 1 }}\n"
        );
    }
    for i in 0..n {
        for j in i + 1..n {
            toml += &format!("[[link]]\nbetween = [\"g{i}\", \"g{j}\"]\ncomponent = \"{link}\"\n");
        }
    }
    system_from(&toml, "mesh.toml")
}

/// The overall time of one `call` (e.g. `sim.allreduce(1e9, #{ algorithm: "ring" })`) on
/// links of 1 GB/s.
fn time(n: usize, link: &str, call: &str) -> Result<f64, String> {
    on(&mesh(n, link, BANDWIDTH), n, call)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
}

#[test]
fn ring_all_reduce_is_two_n_minus_one_nths_over_the_bandwidth_plus_its_steps_latency() {
    // NCCL's ring Simple: base 8.4 us + 2(n - 1) steps x 3.4 us (NVLink), each step 1/n of
    // the value at the share of an NVLink NCCL's copies reach (20.6 / 25).
    let (n, bytes) = (4, 1e9);
    let t = time(
        n,
        "NVLink test",
        "sim.allreduce(1e9, #{ algorithm: \"ring\", protocol: \"Simple\" });",
    )
    .unwrap();
    let steps = 2.0 * (n - 1) as f64;
    let expected = 8.4e-6 + steps * 3.4e-6 + steps / n as f64 * bytes / (BANDWIDTH * nccl::NVLINK_EFFICIENCY);
    assert!(close(t, expected), "{t} vs {expected}");
    // LL: twice the bytes on the wire, 0.6 us a step, 6.6 us base.
    let t = time(
        n,
        "NVLink test",
        "sim.allreduce(1e6, #{ algorithm: \"ring\", protocol: \"LL\" });",
    )
    .unwrap();
    let expected =
        6.6e-6 + steps * 0.6e-6 + steps / n as f64 * 2.0 * 1e6 / (BANDWIDTH * nccl::NVLINK_EFFICIENCY);
    assert!(close(t, expected), "{t} vs {expected}");
}

#[test]
fn ll_runs_no_faster_than_nccls_cap_where_the_links_would_carry_more() {
    // Links of 1 TB/s: a ring LL step would move its 1/n at 412 GB/s of data (NVLink
    // efficiency, LL's two wire bytes per data byte); tuning.cc's llMaxBws holds LL on one
    // Hopper node to 141 GB/s of bus bandwidth, so a step takes its 1/n at 141 GB/s.
    let (n, bytes) = (4, 1e6);
    let t = on(
        &mesh(n, "NVLink fast", 1e12),
        n,
        "sim.allreduce(1e6, #{ algorithm: \"ring\", protocol: \"LL\" });",
    )
    .unwrap();
    let steps = 2.0 * (n - 1) as f64;
    let expected = 6.6e-6 + steps * 0.6e-6 + steps / n as f64 * bytes / 141e9;
    assert!(close(t, expected), "{t} vs {expected}");
}

#[test]
fn ring_all_gather_and_reduce_scatter_take_n_minus_one_steps() {
    let n = 8;
    let expected = 8.4e-6 + 7.0 * 3.4e-6 + 7.0 / 8.0 * 8e8 / (BANDWIDTH * nccl::NVLINK_EFFICIENCY);
    for call in ["allgather", "reducescatter"] {
        let app = format!("sim.{call}(8e8, #{{ algorithm: \"ring\", protocol: \"Simple\" }});");
        let t = time(n, "NVLink test", &app).unwrap();
        assert!(close(t, expected), "{call}: {t} vs {expected}");
    }
}

#[test]
fn nvls_all_reduce_moves_one_and_one_nth_of_the_value_per_port_in_rounds() {
    // 25 us (NCCL's NVLS latency) + a round latency per 16 x 128 KiB of the value +
    // bytes (1 + 1/n) / bandwidth.
    let (n, bytes) = (8, 2f64.powi(30));
    let t = time(
        n,
        "NVLink test",
        "sim.allreduce(1073741824.0, #{ algorithm: \"nvls\" });",
    )
    .unwrap();
    let rounds = nccl::nvls_rounds(bytes, nccl::CHANNELS) as f64;
    let expected = 25e-6
        + rounds * hetsim_scripting::nccl::NVLS_ROUND_LATENCY
        + bytes * (1.0 + 1.0 / n as f64) / BANDWIDTH;
    assert!(close(t, expected), "{t} vs {expected}");
    assert_eq!(rounds, 512.0);
}

#[test]
fn tree_all_reduce_is_pipelined_near_its_bandwidth_bound() {
    // Each tree carries half the value; up then down, in 60 chunks: the bandwidth term
    // (every link direction carries the half once up and once down, phases one after the
    // other) is B / bw, plus the fill of (depth - 1) chunks and the lag per phase (1.265 s:
    // 4 % over; in step, the two trees took 7.26 s, 6 x).
    let (n, bytes) = (8, 1e9);
    let t = time(
        n,
        "NVLink test",
        "sim.allreduce(1e9, #{ algorithm: \"tree\", protocol: \"Simple\" });",
    )
    .unwrap();
    let bound = bytes / (BANDWIDTH * nccl::NVLINK_EFFICIENCY);
    assert!(t > bound && t < bound * 1.15, "{t} vs bound {bound}");
}

#[test]
fn the_default_is_nccls_pick_and_bad_choices_are_refused() {
    // 8 B on 8 GPUs: NCCL's ring LL, 6.6 + 14 x 0.6 us and next to no bytes.
    let t = time(8, "NVLink test", "sim.allreduce(8);").unwrap();
    let fabric = nccl::Fabric {
        ranks: 8,
        nodes: 1,
        intra: Hw::NvLink,
        intra_gbps: 1.0,
        inter_gbps: 50.0,
        nvls: true,
        collnet: false,
    };
    assert_eq!(
        fabric.pick(nccl::Func::AllReduce, 8.0),
        Some((Algo::Ring, Proto::Ll))
    );
    assert!((t - 15.0e-6).abs() < 1e-7, "{t}");
    // The plain ring of before (no protocol) keeps its old time: 2(n - 1)/n B / bw.
    let t = time(4, "NVLink test", "sim.allreduce(4e6, #{ algorithm: \"ring\" });").unwrap();
    assert!(close(t, 1.5 * 4e6 / BANDWIDTH), "{t}");
    // NVLS needs NVLink: over a plain network link it is refused, naming the call.
    let error = time(4, "Ethernet", "sim.allreduce(1e6, #{ algorithm: \"nvls\" });").unwrap_err();
    assert!(
        error.contains("sim.allreduce") && error.contains("nvls"),
        "{error}"
    );
    // NCCL sets NVLS up only on more than two GPUs of a board: refused on two, saying so.
    let error = time(2, "NVLink test", "sim.allreduce(1e6, #{ algorithm: \"nvls\" });").unwrap_err();
    assert!(error.contains("more than two"), "{error}");
    assert!(time(3, "NVLink test", "sim.allreduce(1e6, #{ algorithm: \"nvls\" });").is_ok());
    let error = time(4, "NVLink test", "sim.allreduce(1e6, #{ protocol: \"fast\" });").unwrap_err();
    assert!(error.contains("protocol `fast`"), "{error}");
}

/// Two boards of `g` GPUs: each GPU on an NVLink of 100 GB/s to its board's switch node and on
/// a PCIe link of 100 GB/s to its own NIC; every NIC's port (`BANDWIDTH` per direction) goes to
/// one network switch. Nothing has a startup or a latency.
fn two_boards(g: usize) -> hetsim_system::System {
    system_from(&two_boards_toml(g), "two-boards.toml")
}

fn two_boards_toml(g: usize) -> String {
    let mut toml = format!(
        r#"
        [[component]]
        name = "NVLink test"
        kind = "NETWORK"
        attributes = {{ bandwidth = 100e9, startup = 0, lambda = 1 }}
        [[component]]
        name = "PCIe test"
        kind = "NETWORK"
        attributes = {{ bandwidth = 100e9, startup = 0, lambda = 1 }}
        [[component]]
        name = "Net test"
        kind = "NETWORK"
        attributes = {{ bandwidth = {BANDWIDTH}, startup = 0, lambda = 1 }}
        [[component]]
        name = "Switch test"
        kind = "SWITCH"
        attributes = {{ latency = 0.0 }}
        [[node]]
        id = "net"
        component = "Switch test"
        "#
    );
    for b in 0..2 {
        toml += &format!("[[node]]\nid = \"b{b}.sw\"\ncomponent = \"Switch test\"\n");
        for k in 0..g {
            toml += &format!(
                "[[node]]\nid = \"b{b}.gpu{k}\"\ncomponent = \"H100 SXM5 80GB\"\nmodel = \"gpu-volkov\"\nlabels = {{ GPU = 1 }}\n\
                 [[node]]\nid = \"b{b}.nic{k}\"\ncomponent = \"Switch test\"\n\
                 [[link]]\nbetween = [\"b{b}.gpu{k}\", \"b{b}.sw\"]\ncomponent = \"NVLink test\"\n\
                 [[link]]\nbetween = [\"b{b}.gpu{k}\", \"b{b}.nic{k}\"]\ncomponent = \"PCIe test\"\n\
                 [[link]]\nbetween = [\"b{b}.nic{k}\", \"net\"]\ncomponent = \"Net test\"\n"
            );
        }
    }
    toml
}

#[test]
fn ring_all_reduce_across_two_boards_runs_at_all_their_nics() {
    // Rail-aligned channels (one leaving each board through each GPU's NIC): the ring's
    // bandwidth term is NCCL's bus bandwidth bound over the node's NICs, 2(n − 1)/n · B / (k·b)
    // (Thakur, Rabenseifner & Gropp, "Optimization of collective communication operations in
    // MPICH", IJHPCA 2005, for the ring's volume; NCCL's `busBw` in nccl-tests' PERFORMANCE.md).
    // Plus NCCL's base latency and its NVLink step latency per step; the NVLink hops (at
    // 100 x b) run beside the network's and cost nothing more.
    let (g, bytes) = (4, 1e9);
    let n = 2 * g;
    let t = on_two_boards(
        g,
        "sim.allreduce(1e9, #{ algorithm: \"ring\", protocol: \"Simple\" });",
    );
    let steps = 2.0 * (n - 1) as f64;
    let bound = steps / n as f64 * bytes / (g as f64 * BANDWIDTH);
    let expected = 8.4e-6 + steps * 3.4e-6 + bound;
    assert!(close(t, expected), "{t} vs {expected}");
    // One ring in member order would cross between the boards through one NIC: g times slower.
    assert!(t < 1.1 * bound, "{t} vs bound {bound}");
    // All-gather and reduce-scatter: n − 1 steps, (n − 1)/n · B / (k·b).
    for call in ["allgather", "reducescatter"] {
        let app = format!("sim.{call}(1e9, #{{ algorithm: \"ring\", protocol: \"Simple\" }});");
        let t = on_two_boards(g, &app);
        let expected =
            8.4e-6 + (n - 1) as f64 * 3.4e-6 + (n - 1) as f64 / n as f64 * bytes / (g as f64 * BANDWIDTH);
        assert!(close(t, expected), "{call}: {t} vs {expected}");
    }
}

/// The overall time of one `call` on [`two_boards`]`(g)`.
fn on_two_boards(g: usize, call: &str) -> f64 {
    on(&two_boards(g), 2 * g, call).unwrap_or_else(|e| panic!("{call}: {e}"))
}

fn on(system: &hetsim_system::System, gpus: usize, call: &str) -> Result<f64, String> {
    let gpus = labels(&[("GPU", gpus as u64)]);
    run(
        call,
        "app.rhai",
        system,
        &gpus,
        &Default::default(),
        &RunOptions::default(),
    )
    .map(|r| r.results.overall_time)
    .map_err(|e| e.to_string())
}

/// [`two_boards`] whose network switch reduces (SHARP), with NCCL's CollNet enabled or not.
fn two_boards_sharp(g: usize, collnet: bool) -> hetsim_system::System {
    let toml = two_boards_toml(g).replace(
        "id = \"net\"\n        component = \"Switch test\"",
        "id = \"net\"\n        component = \"SHARP test\"",
    );
    let sharp = "[[component]]\nname = \"SHARP test\"\nkind = \"SWITCH\"\nattributes = { latency = 0.0, reduction = \"SHARP\" }\n";
    system_from(
        &format!("collnet = {collnet}\n{sharp}{toml}"),
        "two-boards-sharp.toml",
    )
}

#[test]
fn collnet_direct_all_reduce_moves_each_gpus_share_once_each_way_over_its_nic() {
    // CollNet Direct: each GPU heads 1/g of the value; its NIC carries that share up to the
    // switch once and the reduced share down once (SHARP reduces in the switch), B / (g · b)
    // per NIC; the scatter and gather over NVLink (at 100 b) run beside it in a pipeline of
    // 64 chunks. Plus NCCL's CollNet Direct latency: 2 (3.7 µs NVLink + (g − 1) × 0.4 µs)
    // + 31 µs network (tuning.cc).
    let (g, bytes) = (4, 1e9);
    let system = two_boards_sharp(g, true);
    let t = on(
        &system,
        2 * g,
        "sim.allreduce(1e9, #{ algorithm: \"collnetdirect\" });",
    )
    .unwrap();
    let latency = (2.0 * (3.7 + (g - 1) as f64 * 0.4) + 31.0) * 1e-6;
    let expected = latency + bytes / (g as f64 * BANDWIDTH);
    assert!(t > expected && t < expected * 1.02, "{t} vs {expected}");
    // Without CollNet enabled, or without a switch that reduces, NCCL has no CollNet: refused,
    // saying what it needs.
    for system in [two_boards_sharp(g, false), two_boards(g)] {
        let error = on(
            &system,
            2 * g,
            "sim.allreduce(1e9, #{ algorithm: \"collnetdirect\" });",
        )
        .unwrap_err();
        assert!(
            error.contains("collnet = true") && error.contains("SHARP"),
            "{error}"
        );
    }
    // On one board neither.
    let error = on(&system, g, "sim.allreduce(1e9, #{ algorithm: \"collnet\" });").unwrap_err();
    assert!(error.contains("collnetdirect"), "{error}");
}

#[test]
fn nvls_across_boards_over_sharp_moves_each_gpus_share_once_each_way_over_its_nic() {
    // NVLS inside each board (a port carries B (1 + 1/g) at 100 b, beside the network) and
    // SHARP between boards (a NIC carries its GPU's 1/g share once each way): B / (g · b).
    // Plus NCCL's NVLS latency across nodes (25 µs NVLink + 18 µs network) and the round
    // latency of each of NCCL's NVLS rounds (16 × 128 KiB).
    let (g, bytes) = (4, 2f64.powi(30));
    let call = "sim.allreduce(1073741824.0, #{ algorithm: \"nvls\" });";
    let t = on(&two_boards_sharp(g, true), 2 * g, call).unwrap();
    let rounds = nccl::nvls_rounds(bytes, nccl::CHANNELS) as f64;
    let expected =
        43e-6 + rounds * hetsim_scripting::nccl::NVLS_ROUND_LATENCY + bytes / (g as f64 * BANDWIDTH);
    // Each stage's NVLink shift ends before its network shift: the sum is exact.
    assert!(close(t, expected), "{t} vs {expected}");
    // Without CollNet NCCL runs NVLS on one node only.
    let error = on(&two_boards(g), 2 * g, call).unwrap_err();
    assert!(
        error.contains("nvls") && error.contains("collnet = true"),
        "{error}"
    );
}

#[test]
fn tree_all_reduce_across_two_boards_runs_its_rails_at_all_their_nics() {
    // NCCL's tree across nodes: per channel (one per GPU, so per NIC) a chain inside each board
    // and a double binary tree between the chains' heads. Over two nodes each tree sends its
    // half of a channel's 1/g share up one way and down the other, so every NIC carries B / g
    // each way over the call: the bandwidth term is B / (g · b) (the NVLink chains at 100 b
    // run beside it). Plus NCCL's latency of the tree, its levels' once each way (base 8.4 µs,
    // 4 µs a hop inside a board and 14 µs between boards, Simple: tuning.cc), and the fill of
    // the 64 chunks' pipeline, which the 1 % leaves room for. One tree over the ranks in order
    // crossed between the boards through one GPU's NIC: g times slower.
    let (g, bytes) = (4, 1e9);
    let t = on_two_boards(
        g,
        "sim.allreduce(1e9, #{ algorithm: \"tree\", protocol: \"Simple\" });",
    );
    let latency = 8.4e-6 + 2.0 * ((g - 1) as f64 * 4e-6 + 14e-6);
    let expected = latency + bytes / (g as f64 * BANDWIDTH);
    assert!(t > expected && t < expected * 1.01, "{t} vs {expected}");
}

#[test]
fn nvls_tree_all_reduce_across_two_boards_moves_each_gpus_shard_over_its_nic() {
    // NVLS inside each board (the switch reduces: a port carries B (1 + 1/g) at 100 b, beside
    // the network) and per rail the double binary tree over the two boards carrying that GPU's
    // 1/g shard, half per tree, once up and once down: B / (g · b) per NIC. Plus NCCL's
    // NVLS-Tree NVLink latency (25 µs) and the pipeline's fill (under 0.2 % here: 128 loops).
    let (g, bytes) = (4, 2f64.powi(30));
    let t = on_two_boards(g, "sim.allreduce(1073741824.0, #{ algorithm: \"nvlstree\" });");
    let expected = 25e-6 + bytes / (g as f64 * BANDWIDTH);
    assert!(t > expected && t < expected * 1.002, "{t} vs {expected}");
    // With the network and NVLink 1,000 times faster, NCCL's per-channel ceiling binds: g
    // channels of 57.7 GB/s of bus bandwidth (`perChMaxNVLSTreeBws` on two nodes), algorithm
    // bandwidth × n / 2(n − 1). Each of the 128 loops' halves takes half a loop at that rate,
    // and the pipeline's fill is 4 more (NVLS-reduce, the hop up, the hop down, the multicast;
    // a hop's transfer takes next to nothing here), after the 25 µs.
    let fast = two_boards_toml(g)
        .replace(&format!("bandwidth = {BANDWIDTH}"), "bandwidth = 1e12")
        .replace("bandwidth = 100e9", "bandwidth = 1e14");
    let system = system_from(&fast, "two-fast-boards.toml");
    let t = on(
        &system,
        2 * g,
        "sim.allreduce(1073741824.0, #{ algorithm: \"nvlstree\" });",
    )
    .unwrap();
    let n = 2.0 * g as f64;
    let ceiling = g as f64 * 57.7e9 * n / (2.0 * (n - 1.0));
    let half_loop = bytes / 128.0 / ceiling / 2.0;
    let expected = 25e-6 + (2.0 * 128.0 + 4.0) * half_loop;
    assert!((t / expected - 1.0).abs() < 0.002, "{t} vs {expected}");
    // NCCL_MIN_CTAS=24 (the system's `nccl_min_ctas`): 24 NVLS channels, so loops of 24 × g
    // chunks (1 GiB in 86 of them, the last one short) and a ceiling half as high again.
    let wide = system_from(&format!("nccl_min_ctas = 24\n{fast}"), "two-fast-boards-24.toml");
    let t = on(
        &wide,
        2 * g,
        "sim.allreduce(1073741824.0, #{ algorithm: \"nvlstree\" });",
    )
    .unwrap();
    let loops = (bytes / (24.0 * g as f64 * 131072.0)).ceil();
    let half_loop = bytes / loops / (1.5 * ceiling) / 2.0;
    let expected = 25e-6 + (2.0 * loops + 4.0) * half_loop;
    assert!((t / expected - 1.0).abs() < 0.002, "{t} vs {expected}");
    // On one board NCCL has no NVLS-Tree (tuning.cc disables it): asking for it is refused.
    let error = time(
        8,
        "NVLink test",
        "sim.allreduce(1e6, #{ algorithm: \"nvlstree\" });",
    )
    .unwrap_err();
    assert!(error.contains("nvlstree"), "{error}");
}
