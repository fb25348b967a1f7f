//! What the scripting crate's test files share.

use hetsim_scripting::{System, SystemFile};

/// Two CPU nodes (labels `P` and `Q`, 4 each) joined by a link of 1 ms + 1 µs per byte.
pub fn small_system() -> System {
    SystemFile::parse(
        r#"
        [[component]]
        name = "cpu"
        kind = "CPU"
        attributes = { performance = 1e9, powerConsumptionLoad = 100, powerConsumptionIdle = 10 }
        [[component]]
        name = "wire"
        kind = "NETWORK"
        attributes = { bandwidth = 1e6, startup = 1e-3, lambda = 1 }
        [[node]]
        id = "a"
        component = "cpu"
        model = "cpu-flops"
        labels = { P = 4 }
        [[node]]
        id = "b"
        component = "cpu"
        model = "cpu-flops"
        labels = { Q = 4 }
        [[link]]
        between = ["a", "b"]
        component = "wire"
        "#,
        "small.toml",
    )
    .unwrap()
    .resolve("small.toml", None)
    .unwrap()
}
