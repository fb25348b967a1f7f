//! The built-in computational models: Rhai sources that a system names by `model`
//! (`gpu-volkov`, `cpu-flops`, `link-startup-bandwidth`, ...).
//!
//! Where they live: `system/models/*.rhai`, beside this crate, which includes them as text
//! (`include_str!`). Resolving a system is what turns a model's name into its source, so the
//! names and the sources belong with that resolution, and this crate needs no Rhai to hold
//! them: they are data here. The scripting crate compiles and runs them; a user copies them
//! as the starting point of a model of their own.

/// The built-in computational models by name, each shipped as a file a user can copy.
pub const BUILTIN_MODELS: [(&str, &str); 7] = [
    ("gpu-volkov", include_str!("../models/gpu-volkov.rhai")),
    ("gpu-queueing", include_str!("../models/gpu-queueing.rhai")),
    ("gpu-teg", include_str!("../models/gpu-teg.rhai")),
    ("gpu-hong-kim", include_str!("../models/gpu-hong-kim.rhai")),
    ("cpu-flops", include_str!("../models/cpu-flops.rhai")),
    (
        "link-startup-bandwidth",
        include_str!("../models/link-startup-bandwidth.rhai"),
    ),
    (
        "link-host-memory",
        include_str!("../models/link-host-memory.rhai"),
    ),
];
