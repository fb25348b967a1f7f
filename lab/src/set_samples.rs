//! The launches of a benchmark set ([`crate::benchset`]) as calibration samples of the
//! `gpu-queueing` model: each launch analysed as `kernel_params()` analyses it in a run (the
//! set's `gpu-queueing` system names the SASS, the function and the parameter names), so that
//! `hetsim calibrate gpu --set` and the leave-one-family-out refit of `hetsim validate` fit
//! on any kernels a descriptor lists, with no code per kernel.

use anyhow::{anyhow, Result};
use hetsim_models::queueing::calibration::Sample;
use hetsim_models::queueing::Kernel;
use hetsim_scripting::functions::params_from_map;
use hetsim_scripting::kernels::KernelLibrary;
use hetsim_system::Variable;
use rhai::{Array, Dynamic, Map};

use crate::benchset::{BenchSet, TimedLaunch};

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
    let library = set.kernel_library(MODEL, "the set's kernels are analysed through it")?;
    let name = set.name();
    set.launches
        .iter()
        .filter(|l| set.scores(l))
        .map(|launch| {
            let kernel = kernel(&library, launch)
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

/// The model's kernel input for one launch.
fn kernel(library: &KernelLibrary, launch: &TimedLaunch) -> Result<Kernel> {
    let (name, params) = kernel_params(library, launch)?;
    let mut params = params_from_map(&params, "kernel_params").map_err(|e| anyhow!("{e}"))?;
    // Volkov's CUDA-core count and TEG's launch key, which gpu-queueing.rhai drops as well.
    params.remove("CUDACoreInstructions");
    params.remove("launch");
    Kernel::from_params(params).map_err(|e| anyhow!("kernel `{name}`: {e}"))
}

/// The kernel a launch runs (its `kernel` variable) and what `kernel_params()` returns for
/// it in the set's application, analysed by `library`.
pub fn kernel_params(library: &KernelLibrary, launch: &TimedLaunch) -> Result<(String, Map)> {
    let name = launch
        .variables
        .iter()
        .find_map(|(k, v)| match (k.as_str(), v) {
            ("kernel", Variable::Text(name)) => Some(name.clone()),
            _ => None,
        })
        .ok_or_else(|| anyhow!("no `kernel` variable"))?;
    let params = library
        .params(&name, &call(&launch.variables))
        .map_err(|e| anyhow!("kernel_params(\"{name}\"): {e}"))?;
    Ok((name, params))
}

/// The variables examples/validation/kernels/app.rhai passes on to `kernel_params()` as they
/// are: a 1D launch's, and the kernels' parameters it knows.
const APP_KEYS: [&str; 6] = ["n", "block", "stride", "intensity", "N", "M"];

/// `kernel_params()`'s argument for a launch's variables, as examples/validation/kernels/app.rhai
/// builds it: a 2D launch's `gx`, `gy`, `bx`, `by` as `grid` and `block`, and [`APP_KEYS`] as
/// they are. A test holds the two equal on the shipped sets.
fn call(variables: &[(String, Variable)]) -> Map {
    let number = |key: &str| {
        variables.iter().find_map(|(k, v)| match v {
            Variable::Int(i) if k == key => Some(Dynamic::from_int(*i)),
            Variable::Float(x) if k == key => Some(Dynamic::from_float(*x)),
            _ => None,
        })
    };
    let mut map: Map = APP_KEYS
        .iter()
        .filter_map(|&k| number(k).map(|v| (k.into(), v)))
        .collect();
    if let [Some(gx), Some(gy), Some(bx), Some(by)] = ["gx", "gy", "bx", "by"].map(number) {
        map.insert("grid".into(), Dynamic::from_array(Array::from([gx, gy])));
        map.insert("block".into(), Dynamic::from_array(Array::from([bx, by])));
    }
    map
}
