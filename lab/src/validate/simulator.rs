//! The validation application run on a system file: one run per measured configuration,
//! the system's GPU optionally replaced by a catalog entry (`hetsim validate --gpu`), and its
//! power coefficients replaced to weigh a launch's utilisations.

use std::path::Path;

use anyhow::{anyhow, Result};
use hetsim_models::catalog::{components, Component, ComponentKind};
use hetsim_scripting::RunReport;
use hetsim_system::{load as load_system, System, Variable};

use crate::app_run::AppRun;
use crate::measurements::KernelRun;

/// Runs the validation application with `vars`.
pub(super) struct Simulator(AppRun);

impl Simulator {
    /// The application `app` on the system file `system`, each process label once; its GPU
    /// node's component the catalog's `gpu` where given (`hetsim validate --gpu`).
    pub(super) fn load(app: &Path, system: &Path, gpu: Option<&str>) -> Result<Simulator> {
        let mut system = load_system(system).map_err(|e| anyhow!(e))?;
        if let Some(name) = gpu {
            let at = Self::gpu_node(&system)?;
            system.nodes[at].component = catalog_gpu(name)?;
            system.nodes[at].spec.component = name.to_owned();
        }
        Ok(Simulator(AppRun::new(app, system)?))
    }

    pub(super) fn run(&self, vars: &[(&str, Variable)]) -> Result<RunReport> {
        let variables: Vec<(String, Variable)> =
            vars.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        self.0.run(&variables, None)
    }

    /// The system's GPU node (the first whose id starts with `gpu`).
    pub(super) fn gpu_node(system: &System) -> Result<usize> {
        system
            .nodes
            .iter()
            .position(|n| n.spec.id.starts_with("gpu"))
            .ok_or_else(|| anyhow!("the system has no node `gpu`"))
    }

    /// The same application on the same system, the GPU's power coefficients replaced by
    /// `[idle, compute, memory]` [W] (`power` weighs a launch's utilisations with unit ones).
    pub(super) fn with_gpu_power(&self, coefficients: [f64; 3]) -> Result<Simulator> {
        let mut run = self.0.clone();
        let at = Self::gpu_node(&run.system)?;
        let gpu = &mut run.system.nodes[at].component;
        for (key, value) in POWER_KEYS.into_iter().zip(coefficients) {
            gpu.attributes.insert(key.to_owned(), value.into());
        }
        Ok(Simulator(run))
    }

    /// The GPU's power coefficients `[idle, compute, memory]` [W], where its component has them.
    pub(super) fn gpu_power_coefficients(&self) -> Result<Option<[f64; 3]>> {
        let system = &self.0.system;
        let gpu = &system.nodes[Self::gpu_node(system)?].component;
        let coefficient = |key: &str| gpu.attributes.get(key).and_then(|v| v.as_number());
        Ok(match POWER_KEYS.map(coefficient) {
            [Some(idle), Some(compute), Some(memory)] => Some([idle, compute, memory]),
            _ => None,
        })
    }

    /// The catalog name of the system's GPU (its node `gpu`'s component), for TEG.
    pub(super) fn gpu(&self) -> Result<&str> {
        let system = &self.0.system;
        Ok(&system.nodes[Self::gpu_node(system)?].spec.component)
    }

    pub(super) fn kernel(&self, run: &KernelRun) -> Result<RunReport> {
        self.run(&[
            ("phases", Variable::Text("kernel".into())),
            ("computeIntensity", Variable::Int(run.intensity as i64)),
            ("blockSize", Variable::Int(run.block as i64)),
            ("numElements", Variable::Int(run.n as i64)),
            ("dynamicSharedMemory", Variable::Int(run.dynamic_shared as i64)),
        ])
    }
}

/// The catalog's GPU `name`, or an error listing the catalog's GPUs.
fn catalog_gpu(name: &str) -> Result<Component> {
    let gpus: Vec<Component> = components()
        .into_iter()
        .filter(|c| c.kind == ComponentKind::Gpu)
        .collect();
    let names: Vec<String> = gpus.iter().map(|c| format!("{:?}", c.name)).collect();
    gpus.iter().find(|c| c.name == name).cloned().ok_or_else(|| {
        anyhow!(
            "--gpu {name:?}: no GPU of that name in the catalog (it has {})",
            names.join(", ")
        )
    })
}

/// The `gpu-queueing` model's board-power coefficients: idle, compute, memory.
const POWER_KEYS: [&str; 3] = {
    use hetsim_models::queueing::keys;
    [keys::POWER_IDLE, keys::POWER_COMPUTE, keys::POWER_MEMORY]
};

/// The GPU node's mean power over a kernel-only run [W].
pub(super) fn gpu_power(report: &RunReport) -> Option<f64> {
    let gpu = report.results.nodes.iter().find(|n| n.id.starts_with("gpu"))?;
    (report.results.overall_time > 0.0).then(|| gpu.energy / report.results.overall_time)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::Simulator;

    #[test]
    fn gpu_puts_a_catalog_gpu_in_the_system_or_lists_the_catalogs() {
        let examples = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/validation/saxpy2"
        ));
        let (app, system) = (examples.join("app.rhai"), examples.join("h100.toml"));
        let sim = Simulator::load(&app, &system, Some("H200 SXM 141GB")).expect("loads");
        assert_eq!(sim.gpu().expect("a gpu node"), "H200 SXM 141GB");
        let gpu = &sim.0.system.nodes[Simulator::gpu_node(&sim.0.system).expect("gpu")].component;
        assert_eq!(gpu.name, "H200 SXM 141GB");
        let own = Simulator::load(&app, &system, None).expect("loads");
        assert_eq!(own.gpu().expect("a gpu node"), "H100 SXM5 80GB");
        let e = Simulator::load(&app, &system, Some("H300"))
            .err()
            .expect("no such GPU");
        let text = e.to_string();
        assert!(
            text.contains("--gpu \"H300\"") && text.contains("\"H200 SXM 141GB\""),
            "{text}"
        );
    }
}
