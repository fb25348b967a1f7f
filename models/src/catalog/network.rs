//! The catalog's network parts beyond the host links: fabric links (InfiniBand NDR,
//! 400 GbE), and the SWITCH components a system file places as nodes: the HGX board's
//! NVSwitch, the ConnectX-7 NIC (a node that forwards between its PCIe and its network
//! port), and the Quantum-2 and Spectrum-4 switches.
//!
//! A switch's attributes: `latency` [s], added once per message that crosses it (the engine
//! reads it); `ports` and `portBandwidth` [B/s per direction] for generators and readers,
//! and `hostInterfaces` where a node also has a host side (a NIC's PCIe): a system file is
//! refused where more links end at a switch than its ports and host interfaces;
//! `reduction` (`NVLS`, `SHARP`) where the hardware reduces in the network. Where no
//! latency is published the entry says so and gives 0 s: calibrate it.

use std::collections::BTreeMap;

use super::{Component, ComponentKind, Link};
use crate::params::Scalar;

/// The fabric links, per direction, with the neutral startup and λ (not measured).
pub(super) fn links() -> [Link; 2] {
    [
        Link {
            name: "InfiniBand NDR 400G",
            comment: "one NDR port's link (4 lanes of 100 Gb/s), per direction",
            source: "InfiniBand Trade Association, NDR: 400 Gb/s per 4x port = 50 GB/s per direction; NVIDIA ConnectX-7 and Quantum-2 QM9700 datasheets (400 Gb/s per port); startup and lambda not measured (0 s, 1): calibrate",
            bandwidth: 50e9,
            measured: None,
            pageable: None,
            copy_engines: None,
            error_bars: None,
        },
        Link {
            name: "400GbE RoCE",
            comment: "one 400 Gigabit Ethernet port carrying RDMA over Converged Ethernet, per direction",
            source: "IEEE 802.3bs-2017 (400GBASE): 400 Gb/s = 50 GB/s per direction; startup and lambda not measured (0 s, 1): calibrate",
            bandwidth: 50e9,
            measured: None,
            pageable: None,
            copy_engines: None,
            error_bars: None,
        },
    ]
}

/// A SWITCH component.
struct Switch {
    name: &'static str,
    vendor: &'static str,
    comment: &'static str,
    source: &'static str,
    latency: f64,
    ports: f64,
    /// Host-side interfaces beside the ports (a NIC's PCIe side): links may end there too.
    host_interfaces: Option<f64>,
    port_bandwidth: f64,
    reduction: Option<&'static str>,
    power_load: Option<f64>,
}

impl Switch {
    fn component(self) -> Component {
        let mut attributes: BTreeMap<String, Scalar> = [
            ("latency", self.latency),
            ("ports", self.ports),
            ("portBandwidth", self.port_bandwidth),
        ]
        .into_iter()
        .chain(self.power_load.map(|w| ("powerConsumptionLoad", w)))
        .chain(self.host_interfaces.map(|n| ("hostInterfaces", n)))
        .map(|(k, v)| (k.to_owned(), Scalar::Number(v)))
        .collect();
        if let Some(reduction) = self.reduction {
            attributes.insert("reduction".to_owned(), Scalar::from(reduction));
        }
        Component {
            name: self.name.to_owned(),
            vendor: self.vendor.to_owned(),
            kind: ComponentKind::Switch,
            comment: self.comment.to_owned(),
            source: self.source.to_owned(),
            attributes,
        }
    }
}

/// The switches and NICs.
pub(super) fn switches() -> Vec<Component> {
    [
        Switch {
            name: "NVSwitch gen3 - HGX H100/H200",
            vendor: "NVIDIA",
            comment: "the four third-generation NVSwitch chips of an HGX H100 or H200 8-GPU board, written as one switch node: each GPU's 18 NVLink 4 links (5, 4, 4, 5 to the four chips) are one 450 GB/s link to it; NVLS (NVLink SHARP) reduces in the switch",
            source: "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), 'NVLink Switch System' and 'Third-generation NVSwitch': 64 NVLink 4 ports per chip, 25 GB/s per port and direction (50 GB/s bidirectional), NVLink SHARP in-network reductions; 4 chips per HGX H100 8-GPU board. No port-to-port latency is published: latency 0 s, calibrate",
            latency: 0.0,
            ports: 64.0,
            host_interfaces: None,
            port_bandwidth: 25e9,
            reduction: Some("NVLS"),
            power_load: None,
        },
        Switch {
            name: "ConnectX-7 400G",
            vendor: "NVIDIA",
            comment: "a ConnectX-7 NIC as a node that forwards between its host side (PCIe 5.0 x16) and one NDR 400G or 400GbE port; join it to its GPU or CPU with a PCIe 5.0 x16 link",
            source: "NVIDIA ConnectX-7 400G adapter datasheet: one port of InfiniBand NDR 400 Gb/s or 400 GbE, host interface PCIe 5.0 x16 (32 GT/s); no latency is given: latency 0 s, calibrate",
            latency: 0.0,
            ports: 1.0,
            host_interfaces: Some(1.0),
            port_bandwidth: 50e9,
            reduction: None,
            power_load: None,
        },
        Switch {
            name: "NVIDIA Quantum-2 QM9700",
            vendor: "NVIDIA",
            comment: "64-port NDR InfiniBand switch (32 OSFP cages of 2 ports), SHARPv3 in-network reductions",
            source: "NVIDIA Quantum-2 QM9700/QM9790 datasheet: 64 ports of NDR 400 Gb/s (50 GB/s per direction), 51.2 Tb/s bidirectional, SHARPv3. No port-to-port latency is given for Quantum-2; latency 130 ns is the previous generation's published figure (Quantum QM8700 datasheet: 130 ns port-to-port): calibrate",
            latency: 130e-9,
            ports: 64.0,
            host_interfaces: None,
            port_bandwidth: 50e9,
            reduction: Some("SHARP"),
            power_load: None,
        },
        Switch {
            name: "NVIDIA Spectrum-4 SN5600",
            vendor: "NVIDIA",
            comment: "Ethernet switch of 64 800GbE ports, each split into 2 x 400GbE here (128 ports of 400 Gb/s), for RoCE fabrics",
            source: "NVIDIA Spectrum-4 SN5000 series datasheet: SN5600, 64 ports of 800GbE (51.2 Tb/s), breakout to 128 x 400GbE (50 GB/s per direction); no latency is given: latency 0 s, calibrate",
            latency: 0.0,
            ports: 128.0,
            host_interfaces: None,
            port_bandwidth: 50e9,
            reduction: None,
            power_load: None,
        },
    ]
    .into_iter()
    .map(Switch::component)
    .collect()
}
