//! A script's repeated collective is planned once per process (crate::nccl::plans), run end
//! to end; a module of its own, as it runs scripts (crate::run) that plan through the nccl
//! module.

use std::collections::BTreeMap;

use hetsim_system::SystemFile;

use crate::nccl::plans::PLANNED;
use crate::{run, RunOptions};

/// `n` H100s joined pairwise by NVLinks.
fn mesh(n: usize) -> hetsim_system::System {
    let mut toml = "[[component]]\nname = \"NVLink test\"\nkind = \"NETWORK\"\n\
                    attributes = { bandwidth = 1e9, startup = 0, lambda = 1 }\n"
        .to_owned();
    for i in 0..n {
        toml += &format!(
            "[[node]]\nid = \"g{i}\"\ncomponent = \"H100 SXM5 80GB\"\nmodel = \"gpu-volkov\"\nlabels = {{ GPU = 1 }}\n"
        );
    }
    for i in 0..n {
        for j in i + 1..n {
            toml += &format!("[[link]]\nbetween = [\"g{i}\", \"g{j}\"]\ncomponent = \"NVLink test\"\n");
        }
    }
    SystemFile::parse(&toml, "mesh.toml")
        .expect("parses")
        .resolve("mesh.toml", None)
        .expect("resolves")
}

#[test]
fn a_scripts_repeated_collective_is_planned_once_per_process_and_call() {
    // Five distinct calls (sizes, protocol, roots), each repeated four times.
    let script = r#"
        for i in 0..4 {
            sim.allreduce(1048576.0);
            sim.allreduce(2097152.0);
            sim.allreduce(1048576.0, #{ protocol: "LL" });
            sim.broadcast(1048576.0);
            sim.broadcast(1048576.0, #{ root: 1 });
        }
    "#;
    let gpus = BTreeMap::from([("GPU".to_owned(), 4)]);
    let before = PLANNED.with(|n| n.get());
    let report = run(
        script,
        "app.rhai",
        &mesh(4),
        &gpus,
        &Default::default(),
        &RunOptions::default(),
    )
    .expect("runs");
    assert!(report.results.overall_time > 0.0);
    assert_eq!(PLANNED.with(|n| n.get()) - before, 4 * 5);
}
