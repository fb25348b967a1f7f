//! Builders shared by the engine's tests.

use std::collections::BTreeMap;

use hetsim_models::catalog::ComponentKind;
use hetsim_simulator::Node;

/// One unit of `kind` hosting `multiplicity` processes of `label`, drawing 100 W computing and
/// 10 W idle.
pub fn node(id: &str, kind: ComponentKind, label: &str, multiplicity: u32) -> Node {
    Node {
        id: id.into(),
        kind,
        count: 1,
        cores: None,
        labels: BTreeMap::from([(label.to_owned(), multiplicity)]),
        power_load: 100.0,
        power_idle: 10.0,
        failure_rate: 0.0,
        latency: 0.0,
    }
}
