//! The tuner against NCCL's tables and the picks NCCL is seen to make.

use super::*;

/// One DGX H100 board: 8 GPUs, NVLink 4 at 450 GB/s per direction to the NVSwitch.
fn dgx(ranks: usize) -> Fabric {
    Fabric {
        ranks,
        nodes: 1,
        intra: Hw::NvLink,
        intra_gbps: 450.0,
        inter_gbps: 50.0,
        nvls: true,
        collnet: false,
    }
}

#[test]
fn latencies_are_nccls_tables() {
    // Ring LL all-reduce on 8 GPUs: base 6.6 + 14 steps x 0.6 us (tuning.cc).
    let f = dgx(8);
    assert!((f.latency_us(Func::AllReduce, Algo::Ring, Proto::Ll) - 15.0).abs() < 1e-9);
    assert!((f.latency_us(Func::AllReduce, Algo::Nvls, Proto::Simple) - 25.0).abs() < 1e-9);
    // Tree Simple: 8.4 + 2 x 7 x 4.0.
    assert!((f.latency_us(Func::AllReduce, Algo::Tree, Proto::Simple) - 64.4).abs() < 1e-9);
}

#[test]
fn the_dgx_h100_picks_ring_ll_when_small_and_nvls_when_large() {
    // What NCCL runs on a DGX H100 (the README of ../shared/measurements/nccl): LL for
    // small all-reduces, NVLS for large ones; the switch lies near 1 MiB.
    let f = dgx(8);
    assert_eq!(f.pick(Func::AllReduce, 8.0), Some((Algo::Ring, Proto::Ll)));
    assert_eq!(f.pick(Func::AllReduce, 262144.0), Some((Algo::Ring, Proto::Ll)));
    assert_eq!(
        f.pick(Func::AllReduce, 16.0 * 1048576.0),
        Some((Algo::Nvls, Proto::Simple))
    );
    assert_eq!(f.pick(Func::AllReduce, 16e9), Some((Algo::Nvls, Proto::Simple)));
    // Broadcast has only the ring; without NVLS large all-reduces go to ring Simple.
    assert_eq!(f.pick(Func::Broadcast, 1e9).map(|p| p.0), Some(Algo::Ring));
    let pcie = Fabric {
        intra: Hw::Pci,
        intra_gbps: 50.0,
        nvls: false,
        ..f
    };
    assert_eq!(pcie.pick(Func::AllReduce, 1e9), Some((Algo::Ring, Proto::Simple)));
    assert_eq!(dgx(1).pick(Func::AllReduce, 1e6), None);
}

/// `nodes` DGX H100 boards, 8 ConnectX-7 400G each (50 GB/s per GPU).
fn cluster(nodes: usize) -> Fabric {
    Fabric {
        ranks: 8 * nodes,
        nodes,
        ..dgx(8)
    }
}

#[test]
fn nvls_tree_is_nccls_across_boards() {
    // tuning.cc (2.28): 8 heads x min(50 x 0.85 x 7/8 x 2, 50 x 2 on two nodes (else 50),
    // 57.7 on two nodes (else 45.5)) bus bandwidth, x n / 2(n - 1) to algorithm bandwidth.
    let two = cluster(2);
    let bw = two
        .bandwidth(Func::AllReduce, Algo::NvlsTree, Proto::Simple)
        .unwrap();
    assert!((bw - 8.0 * 57.7 * 16.0 / 30.0).abs() < 1e-9, "{bw}");
    let eight = cluster(8);
    let bw = eight
        .bandwidth(Func::AllReduce, Algo::NvlsTree, Proto::Simple)
        .unwrap();
    assert!((bw - 8.0 * 45.5 * 64.0 / 126.0).abs() < 1e-9, "{bw}");
    // Latency: 25 us (NVLink) + 2 log2(nodes) x 20.9 us (network).
    let lat = eight.latency_us(Func::AllReduce, Algo::NvlsTree, Proto::Simple);
    assert!((lat - (25.0 + 6.0 * 20.9)).abs() < 1e-9, "{lat}");
    // Not on one node, not with LL, not for all-gather; NVLS itself only on one node.
    assert_eq!(
        dgx(8).bandwidth(Func::AllReduce, Algo::NvlsTree, Proto::Simple),
        None
    );
    assert_eq!(two.bandwidth(Func::AllReduce, Algo::NvlsTree, Proto::Ll), None);
    assert_eq!(
        two.bandwidth(Func::AllGather, Algo::NvlsTree, Proto::Simple),
        None
    );
    assert_eq!(two.bandwidth(Func::AllReduce, Algo::Nvls, Proto::Simple), None);
    // What NCCL runs across H100 boards by default for large all-reduces (nccl-tests #309),
    // however large: the ring's 360 GB/s (below) stays under NVLS-Tree's 364.
    for nodes in [2, 4, 8] {
        for bytes in [1073741824.0, 17179869184.0] {
            assert_eq!(
                cluster(nodes).pick(Func::AllReduce, bytes),
                Some((Algo::NvlsTree, Proto::Simple)),
                "{nodes} nodes, {bytes} B"
            );
        }
    }
}

#[test]
fn the_ring_graph_across_boards_runs_at_one_of_nccls_search_speeds() {
    // search.cc: a channel per NIC at one of sm90SpeedArrayInter's speeds, which its NIC
    // (50 GB/s) and its share of a GPU's NVLink (370.8 GB/s over 8 channels) both carry:
    // 45 GB/s, so 8 x 45 = 360 GB/s, not the NVLink's 370.8.
    let bus = |f: &Fabric| f.bus_bandwidth(Func::AllReduce, Algo::Ring, Proto::Simple);
    for nodes in [2, 4, 8] {
        assert_eq!(bus(&cluster(nodes)), Some(360.0), "{nodes} nodes");
    }
    // One GPU a board: its NIC's 48 GB/s. A 100G NIC a GPU: 12 GB/s a channel.
    let single = Fabric {
        ranks: 4,
        nodes: 4,
        ..dgx(4)
    };
    assert_eq!(bus(&single), Some(48.0));
    let slow = Fabric {
        inter_gbps: 12.5,
        ..cluster(2)
    };
    assert_eq!(bus(&slow), Some(8.0 * 12.0));
    // One board keeps the NVLink's rate (the in-sample rows).
    assert!(bus(&dgx(8)).is_some_and(|b| (b - 450.0 * NVLINK_EFFICIENCY).abs() < 1e-9));
}

#[test]
fn collnet_direct_is_nccls_where_collnet_is_enabled() {
    let sharp = |nodes: usize| Fabric {
        collnet: true,
        ..cluster(nodes)
    };
    // tuning.cc: 8 heads x 48 GB/s (the fastest sm90 inter speed a 50 GB/s NIC carries)
    // x 0.85 (Hopper), one GPU per NIC (no discount), x 0.5 to algorithm bandwidth.
    let bw = sharp(2)
        .bandwidth(Func::AllReduce, Algo::CollNetDirect, Proto::Simple)
        .unwrap();
    assert!((bw - 8.0 * 48.0 * 0.85 * 0.5).abs() < 1e-9, "{bw}");
    // Latency: 2 (3.7 us NVLink + 7 peers x 0.4 us) + 31 us network.
    let lat = sharp(4).latency_us(Func::AllReduce, Algo::CollNetDirect, Proto::Simple);
    assert!((lat - (2.0 * (3.7 + 7.0 * 0.4) + 31.0)).abs() < 1e-9, "{lat}");
    // Two GPUs per NIC: 8 GPUs on 4 heads, factor 2 - 1/2.
    let shared = Fabric {
        inter_gbps: 25.0,
        ..sharp(2)
    };
    assert_eq!(
        shared.bandwidth(Func::AllReduce, Algo::CollNetDirect, Proto::Simple),
        Some(8.0 * 24.0 * 0.85 * 0.5)
    );
    // Not without CollNet, on one node, without NVSwitch, with LL, or for all-gather.
    for fabric in [
        cluster(2),
        Fabric {
            collnet: true,
            ..dgx(8)
        },
        Fabric {
            nvls: false,
            ..sharp(2)
        },
    ] {
        assert_eq!(
            fabric.bandwidth(Func::AllReduce, Algo::CollNetDirect, Proto::Simple),
            None
        );
    }
    assert_eq!(
        sharp(2).bandwidth(Func::AllReduce, Algo::CollNetDirect, Proto::Ll),
        None
    );
    assert_eq!(
        sharp(2).bandwidth(Func::AllGather, Algo::CollNetDirect, Proto::Simple),
        None
    );
    // Without CollNet the tuner never takes it, nor NVLS across nodes.
    for bytes in [1e3, 1e6, 64.0 * 1048576.0, 1e9, 16e9] {
        let pick = cluster(8).pick(Func::AllReduce, bytes).map(|p| p.0);
        assert!(
            !matches!(pick, Some(Algo::CollNetDirect | Algo::Nvls)),
            "{bytes}: {pick:?}"
        );
    }
}

#[test]
fn nvls_across_nodes_is_nccls_with_collnet() {
    let sharp = |nodes: usize| Fabric {
        collnet: true,
        ..cluster(nodes)
    };
    // tuning.cc over the NVLS graph across nodes: 8 heads x min(48 x 0.85 x 7/8 x 2, 48)
    // bus bandwidth, x n / 2(n - 1) to algorithm bandwidth; latency 25 us NVLink + 18 us
    // network.
    let four = sharp(4);
    let bw = four
        .bandwidth(Func::AllReduce, Algo::Nvls, Proto::Simple)
        .unwrap();
    assert!((bw - 8.0 * 48.0 * 32.0 / 62.0).abs() < 1e-9, "{bw}");
    let lat = four.latency_us(Func::AllReduce, Algo::Nvls, Proto::Simple);
    assert!((lat - 43.0).abs() < 1e-9, "{lat}");
    assert_eq!(four.bandwidth(Func::AllGather, Algo::Nvls, Proto::Simple), None);
    // With CollNet on, NVLS across nodes passes NVLS-Tree (8 x 45.5 GB/s bus) from 3 nodes
    // on, and CollNet Direct (163 GB/s, 44 us) everywhere; on two nodes NVLS-Tree's doubled
    // network share keeps it ahead at large sizes.
    for nodes in [4, 8] {
        assert_eq!(
            sharp(nodes).pick(Func::AllReduce, 1073741824.0),
            Some((Algo::Nvls, Proto::Simple)),
            "{nodes} nodes"
        );
    }
    assert_eq!(
        sharp(2).pick(Func::AllReduce, 1073741824.0),
        Some((Algo::NvlsTree, Proto::Simple))
    );
}

#[test]
fn nvls_bandwidth_follows_nccls_nvls_graph_and_loses_to_the_ring_on_few_gpus() {
    // 370.8 GB/s of NVLink (450 x 20.6/25) over heads + 1 channel loads: 60 GB/s a
    // channel up to 5 GPUs, 50 on 6, 40 on 7 and 8 (search.cc's sm90 speeds).
    let bus = |n: usize| {
        dgx(n)
            .bandwidth(Func::AllReduce, Algo::Nvls, Proto::Simple)
            .unwrap()
            * 2.0
            * (n as f64 - 1.0)
            / n as f64
    };
    assert!(
        (bus(8) - 8.0 * 40.0 * 0.85 * 7.0 / 8.0 * 2.0).abs() < 1e-9,
        "{}",
        bus(8)
    );
    assert!(
        (bus(6) - 6.0 * 50.0 * 0.85 * 5.0 / 6.0 * 2.0).abs() < 1e-9,
        "{}",
        bus(6)
    );
    assert!(
        (bus(3) - 3.0 * 60.0 * 0.85 * 2.0 / 3.0 * 2.0).abs() < 1e-9,
        "{}",
        bus(3)
    );
    // nvls.cc sets NVLS up only on more than two GPUs a node: none on 2, on one board or two.
    assert_eq!(dgx(2).bandwidth(Func::AllReduce, Algo::Nvls, Proto::Simple), None);
    let pairs = Fabric {
        ranks: 4,
        nodes: 2,
        ..dgx(4)
    };
    assert_eq!(
        pairs.bandwidth(Func::AllReduce, Algo::NvlsTree, Proto::Simple),
        None
    );
    // nccl #1455 (8 x H100 SXM): NVLS passes the ring from 5 GPUs on, not below.
    for n in 2..=4 {
        assert_eq!(
            dgx(n).pick(Func::AllReduce, 4e9),
            Some((Algo::Ring, Proto::Simple)),
            "{n} GPUs"
        );
    }
    for n in 5..=8 {
        assert_eq!(
            dgx(n).pick(Func::AllReduce, 4e9),
            Some((Algo::Nvls, Proto::Simple)),
            "{n} GPUs"
        );
    }
}

#[test]
fn nvls_chunks_shrink_for_small_calls() {
    assert_eq!(nvls_chunk(16e9, CHANNELS), 131072.0);
    assert_eq!(nvls_chunk(16.0 * 1048576.0, CHANNELS), 65536.0);
    assert_eq!(nvls_chunk(4.0 * 1048576.0, CHANNELS), 32768.0);
    assert_eq!(nvls_chunk(512.0 * 1024.0, CHANNELS), 16384.0);
    // 16 GiB in rounds of 16 channels x 128 KiB.
    assert_eq!(nvls_rounds(17179869184.0, CHANNELS), 8192);
    assert_eq!(nvls_rounds(8.0, CHANNELS), 1);
}

#[test]
fn nvls_tree_chunks_are_enqueues() {
    // enqueue.cc: 128 KiB from 4 loops of 16 channels × 8 heads (64 MiB) on 2 or 3 nodes, at
    // most 64 KiB from 4 nodes on; 32 KiB below one loop of 64 KiB chunks (8 MiB).
    let mib = 1048576.0;
    assert_eq!(nvls_tree_chunk(64.0 * mib, 2, 8.0, CHANNELS), 131072.0);
    assert_eq!(nvls_tree_chunk(63.0 * mib, 2, 8.0, CHANNELS), 65536.0);
    assert_eq!(nvls_tree_chunk(8.0 * mib, 3, 8.0, CHANNELS), 65536.0);
    assert_eq!(nvls_tree_chunk(7.0 * mib, 2, 8.0, CHANNELS), 32768.0);
    assert_eq!(nvls_tree_chunk(16e9, 4, 8.0, CHANNELS), 65536.0);
    assert_eq!(nvls_tree_chunk(7.0 * mib, 8, 8.0, CHANNELS), 32768.0);
    // Fewer heads, smaller loops: 4 heads' loop of 128 KiB chunks is 8 MiB.
    assert_eq!(nvls_tree_chunk(32.0 * mib, 2, 4.0, CHANNELS), 131072.0);
    // NCCL_MIN_CTAS=24: loops of 24 × 8 chunks, so the thresholds move by 3/2 (96 MiB).
    assert_eq!(nvls_tree_chunk(95.0 * mib, 2, 8.0, 24), 65536.0);
    assert_eq!(nvls_tree_chunk(96.0 * mib, 2, 8.0, 24), 131072.0);
    assert_eq!(nvls_chunk(24.0 * 64.0 * 131072.0, 24), 131072.0);
    assert_eq!(nvls_chunk(16.0 * 64.0 * 131072.0, 24), 65536.0);
}

#[test]
fn nvls_tree_ceiling_is_its_channels_most() {
    // 8 channels of perChMaxNVLSTreeBws (57.7 GB/s on two nodes, 45.5 on more) of bus
    // bandwidth, × n / 2(n − 1) to algorithm bandwidth.
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(close(
        cluster(2).nvls_tree_ceiling_gbps(CHANNELS),
        8.0 * 57.7 * 16.0 / 30.0
    ));
    assert!(close(
        cluster(4).nvls_tree_ceiling_gbps(CHANNELS),
        8.0 * 45.5 * 32.0 / 62.0
    ));
    // It is the tuner's NVLS-Tree bandwidth on these boards, whose links carry more.
    let tuned = cluster(4).bandwidth(Func::AllReduce, Algo::NvlsTree, Proto::Simple);
    assert!(tuned.is_some_and(|bw| close(bw, cluster(4).nvls_tree_ceiling_gbps(CHANNELS))));
    // NCCL_MIN_CTAS=24 runs 24 NVLS channels: half as many warps again, half as much again.
    assert!(close(
        cluster(4).nvls_tree_ceiling_gbps(24),
        1.5 * 8.0 * 45.5 * 32.0 / 62.0
    ));
}

#[test]
fn protocols_parse_and_weigh_their_flags() {
    assert_eq!(Proto::parse("ll128"), Some(Proto::Ll128));
    assert_eq!(Proto::parse("SIMPLE"), Some(Proto::Simple));
    assert_eq!(Proto::parse("fast"), None);
    assert_eq!(Proto::Ll.wire_factor(), 2.0);
    assert!(Proto::Ll128.wire_factor() > 1.0 && Proto::Ll128.wire_factor() < 1.07);
}

#[test]
fn bus_bandwidths_carry_the_protocols_caps_and_the_trees_efficiency_by_size() {
    // One board: ring LL at llMaxBws' 141 GB/s (the graph's 370.8 × 0.5 would be 185.4);
    // LL128 at the graph's 370.8 × 0.92.
    let board = dgx(8);
    let bus = |f: &Fabric, algo, proto| f.bus_bandwidth(Func::AllReduce, algo, proto).unwrap_or(0.0);
    assert!((bus(&board, Algo::Ring, Proto::Ll) - 141.0).abs() < 1e-9);
    let graph = 450.0 * NVLINK_EFFICIENCY;
    assert!((bus(&board, Algo::Ring, Proto::Ll128) - graph * 0.92).abs() < 1e-9);
    // Two boards: tree LL at llMaxBws' 39 GB/s; tree LL128 at the graph's (8 × 45 GB/s
    // across boards) × 0.92 × 120/128, and for a 1 MiB call × 0.6 (treeCorrectionFactor,
    // 2^14 lines of 64 B), 4 MiB × 0.8.
    let two = cluster(2);
    assert!((bus(&two, Algo::Tree, Proto::Ll) - 39.0).abs() < 1e-9);
    let ll128 = 360.0 * 0.92 * 120.0 / 128.0;
    assert!((bus(&two, Algo::Tree, Proto::Ll128) - ll128).abs() < 1e-9);
    let at = |bytes: f64| two.bus_bandwidth_at(Func::AllReduce, Algo::Tree, Proto::Ll128, bytes);
    assert!((at(1048576.0).unwrap_or(0.0) - 0.6 * ll128).abs() < 1e-9);
    assert!((at(4194304.0).unwrap_or(0.0) - 0.8 * ll128).abs() < 1e-9);
    // The ring has no correction by size.
    let ring = two.bus_bandwidth_at(Func::AllReduce, Algo::Ring, Proto::Ll128, 1048576.0);
    assert_eq!(ring, two.bus_bandwidth(Func::AllReduce, Algo::Ring, Proto::Ll128));
}
