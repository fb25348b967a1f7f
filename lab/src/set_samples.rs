//! The launches of a benchmark set ([`crate::benchset`]) as calibration samples of the
//! `gpu-queueing` model: each launch run by the set's own application on the set's
//! `gpu-queueing` system, and the `kernel_params()` call it made taken as the launch's
//! kernel (the system names the SASS, the function and the parameter names; the app maps the
//! launch's variables onto them), so that `hetsim calibrate gpu --set`, the
//! leave-one-family-out refit of `hetsim validate` and TEG's fit take any kernels a
//! descriptor lists, with no code and no list of parameter names per kernel.

use std::rc::Rc;

use anyhow::{anyhow, bail, Result};
use hetsim_models::queueing::calibration::Sample;
use hetsim_models::queueing::Kernel;
use hetsim_scripting::functions::params_from_map;
use hetsim_scripting::kernels::KernelLibrary;
use hetsim_system::Variable;
use rhai::Map;

use crate::app_run::AppRun;
use crate::benchset::BenchSet;

/// The GPU model whose device the samples calibrate.
const MODEL: &str = "gpu-queueing";

/// One timed launch of a set as a sample.
#[derive(Clone, Debug)]
pub struct SetSample {
    /// `kit: strided`: the set's name and the family.
    pub family: String,
    /// `kernels.csv line 7: strided n=…`.
    pub what: String,
    /// Whether the descriptor says a number was fitted on the family's launches.
    pub fitted: bool,
    pub sample: Sample,
}

/// Whether the set can calibrate the model: it has a `gpu-queueing` system.
pub fn calibrates(set: &BenchSet) -> bool {
    set.systems.contains_key(MODEL)
}

/// The set's launches that its family's target applies to (the others sit outside what any
/// model here describes, as the descriptor's `outside` says), as samples.
pub fn set_samples(set: &BenchSet) -> Result<Vec<SetSample>> {
    let app = SetApp::load(set, MODEL, "the set's kernels are analysed through it")?;
    let name = set.name();
    set.launches
        .iter()
        .filter(|l| set.scores(l))
        .map(|launch| {
            let kernel = kernel(&app, &launch.variables)
                .map_err(|e| anyhow!("{}: {}: {e}", set.path.display(), launch.at))?;
            Ok(SetSample {
                family: format!("{name}: {}", launch.family),
                what: format!("{}: {} {}", launch.at, launch.family, launch.params),
                fitted: set
                    .families
                    .get(&launch.family)
                    .is_some_and(|f| f.fitted_for(MODEL).is_some()),
                sample: Sample {
                    kernel,
                    seconds: launch.seconds,
                },
            })
        })
        .collect()
}

/// The model's kernel input for the launch the set's app makes with `variables`.
pub fn kernel(app: &SetApp, variables: &[(String, Variable)]) -> Result<Kernel> {
    let (name, params) = app.kernel_params(variables)?;
    kernel_of(&name, &params)
}

/// The model's kernel input for what `kernel_params(name, …)` returned.
pub fn kernel_of(name: &str, params: &Map) -> Result<Kernel> {
    let mut params = params_from_map(params, "kernel_params").map_err(|e| anyhow!("{e}"))?;
    // Volkov's CUDA-core count and TEG's launch key, which gpu-queueing.rhai drops as well.
    params.remove("CUDACoreInstructions");
    params.remove("launch");
    Kernel::from_params(params).map_err(|e| anyhow!("kernel `{name}`: {e}"))
}

/// A set's application on its system for one GPU model, and the kernels its runs share
/// (each distinct launch analysed once).
pub struct SetApp {
    run: AppRun,
    library: Rc<KernelLibrary>,
}

impl SetApp {
    /// The set's application on its `model` system (`why` says what for, should the set
    /// have none).
    pub fn load(set: &BenchSet, model: &str, why: &str) -> Result<SetApp> {
        let path = set
            .systems
            .get(model)
            .ok_or_else(|| anyhow!("{}: no `{model}` system in `systems`: {why}", set.path.display()))?;
        let system = hetsim_system::load(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let library = KernelLibrary::for_system(&system).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        library.record_calls();
        Ok(SetApp {
            run: AppRun::new(&set.app, system)?,
            library: Rc::new(library),
        })
    }

    /// The kernels the set's launches were analysed through.
    pub fn library(&self) -> &KernelLibrary {
        &self.library
    }

    /// The kernel a launch runs and what `kernel_params()` returned for it: the one call the
    /// set's application made, run with the launch's `variables`.
    pub fn kernel_params(&self, variables: &[(String, Variable)]) -> Result<(String, Map)> {
        self.library.take_calls();
        self.run.run(variables, Some(self.library.clone()))?;
        let mut calls = self.library.take_calls();
        match calls.len() {
            1 => Ok(calls.remove(0)),
            n => bail!(
                "{} called kernel_params() {n} times with this launch's variables: a timed launch is one kernel, so the app must call it once",
                self.run.origin()
            ),
        }
    }
}
