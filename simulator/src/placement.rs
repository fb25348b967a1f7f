//! Where processes run: each label's processes placed on the nodes that carry it.

use std::collections::BTreeMap;
use std::sync::Arc;

use hetsim_models::params::closest;

use crate::platform::{NodeId, Platform, PlatformError};

/// Where one process runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    pub label: Arc<str>,
    /// 0-based index within its label.
    pub rank: u64,
    pub node: NodeId,
    /// The unit of the node it runs on (0-based; see [`Node::count`]).
    pub unit: u32,
}

/// Assigns processes to nodes: labels in name order, each label's processes in rank order to
/// the nodes carrying it, in declaration order, up to count × multiplicity on each, filling
/// a node's units in order (multiplicity processes of the label on each). The index of a
/// placement is the process's pid.
pub fn place(platform: &Platform, labels: &BTreeMap<String, u64>) -> Result<Vec<Placement>, PlatformError> {
    let mut placements = Vec::new();
    for (label, &asked) in labels {
        // (node, processes it hosts, per unit)
        let hosts: Vec<(NodeId, u64, u64)> = platform
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(id, n)| {
                n.labels
                    .get(label)
                    .map(|&m| (id, u64::from(m) * u64::from(n.count), u64::from(m.max(1))))
            })
            .collect();
        // A label no node carries is a typo even when asked 0 processes.
        if hosts.is_empty() {
            return Err(PlatformError::UnknownLabel {
                label: label.clone(),
                hint: closest(
                    label,
                    platform
                        .nodes
                        .iter()
                        .flat_map(|n| n.labels.keys().map(String::as_str)),
                ),
            });
        }
        let capacity: u64 = hosts.iter().map(|h| h.1).sum();
        if asked > capacity {
            return Err(PlatformError::Capacity {
                label: label.clone(),
                asked,
                capacity,
            });
        }
        let name: Arc<str> = Arc::from(label.as_str());
        let mut rank = 0;
        for (node, slots, per_unit) in hosts {
            let here = slots.min(asked - rank);
            let first = rank;
            placements.extend((rank..rank + here).map(|rank| Placement {
                label: name.clone(),
                rank,
                node,
                unit: u32::try_from((rank - first) / per_unit).unwrap_or(u32::MAX),
            }));
            rank += here;
        }
    }
    Ok(placements)
}
