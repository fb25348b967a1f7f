//! Analysed GPU kernels in a system model (declared as [`hetsim_system::kernel`] describes),
//! and `kernel_params(name, #{…})`, which gives an application the Volkov/Gajger parameters
//! of a launch without numbers copied by hand:
//!
//! ```rhai
//! let k = kernel_params("saxpy2", #{ n: numElements, a: computeIntensity, block: blockSize });
//! ```
//!
//! The call emulates the launch (`hetsim kernel analyze --grid … --block … --args …`) and
//! returns `CUDACoreInstructions`, `issuedInstructions`, `GMEMBytesTransferred`,
//! `latencyBound`, `gridSize` and `blockSize` (the keys of the `gpu-volkov` model), and for the
//! `gpu-queueing` model also `fp32Instructions`, `intInstructions`, `sfuInstructions`,
//! `fp64Instructions`, `registersPerThread` and `dynamicSharedMemory`, and the launch's traffic
//! through the memory hierarchy (`hetsim_kernel::emulate::traffic`): `L1Wavefronts`,
//! `L2BytesTransferred`, `DRAMBytesTransferred`, `sharedWavefronts` and `barriers` per warp. A `trips` map
//! (`trips: #{L0: 8}`) asks for static counts instead. Results are memoised per launch, so a
//! sweep or a million processes pay for each distinct launch once.
//!
//! Each emulated launch also returns `launch`, a key the `gpu-teg` model takes to time that
//! launch with TEG (`teg_kernel(params)`, [`KernelLibrary::teg_seconds`]): the launch is
//! planned once per GPU and simulated once per distinct launch, so a sweep or a million
//! processes re-simulate nothing. TEG takes the traffic `kernel_params` measured (its two
//! corner tiles) instead of emulating them again.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use hetsim_kernel::emulate::Traffic;
use hetsim_kernel::{
    analyze, select_kernel, Arch, Arg, CalibratedLatencies, Launch, Listing, Options, Quantity,
};
use hetsim_models::queueing::traffic_keys;
use hetsim_system::{KernelSpec, SystemError};
use rhai::{Dynamic, Engine, EvalAltResult, Map};

use crate::errors::ScriptError;

/// A kernel ready to analyse.
struct LoadedKernel {
    spec: KernelSpec,
    listing: Listing,
    arch: Option<Arch>,
}

impl LoadedKernel {
    fn load(spec: &KernelSpec) -> Result<LoadedKernel, SystemError> {
        let parsed = spec.parse()?;
        Ok(LoadedKernel {
            spec: spec.clone(),
            listing: parsed.listing,
            arch: parsed.arch,
        })
    }

    /// The analysis options a call asks for.
    /// The options every analysis of this kernel starts from: its function and architecture.
    fn base_options(&self) -> Options {
        Options {
            kernel: self.spec.function.clone(),
            arch: self.arch,
            ..Options::default()
        }
    }

    fn options(&self, call: &Map) -> Result<Options, String> {
        let mut options = self.base_options();
        if let Some(trips) = call.get("trips") {
            let trips = trips
                .clone()
                .try_cast::<Map>()
                .ok_or("`trips` must be a map such as #{L0: 8}")?;
            for (loop_id, n) in trips {
                options
                    .trips
                    .insert(loop_id.to_string(), number(&n, &format!("trips.{loop_id}"))?);
            }
            return Ok(options);
        }
        let block = dims(
            call.get("block")
                .ok_or("give `block` (threads per block, or [x, y, z])")?,
            "block",
        )?;
        let mut args = Vec::with_capacity(self.spec.params.len());
        for p in &self.spec.params {
            args.push(if p.starts_with('*') {
                Arg::Pointer
            } else {
                let value = call
                    .get(p.as_str())
                    .ok_or_else(|| format!("give `{p}`, the kernel's parameter"))?;
                match value.as_int() {
                    Ok(i) => Arg::Int(i),
                    Err(_) => Arg::Float(number(value, p)?),
                }
            });
        }
        let grid = match (call.get("grid"), &self.spec.threads) {
            (Some(g), _) => dims(g, "grid")?,
            (None, Some(threads)) => {
                let n = number(
                    call.get(threads.as_str())
                        .ok_or_else(|| format!("give `{threads}` or `grid`"))?,
                    threads,
                )?;
                let per_block: f64 = block.iter().map(|&b| f64::from(b)).product();
                let blocks = (n / per_block).ceil();
                if !(1.0..=f64::from(u32::MAX)).contains(&blocks) {
                    return Err(format!(
                        "`{threads}` = {n} gives {blocks} blocks: expected 1 … 2³²−1"
                    ));
                }
                [blocks as u32, 1, 1]
            }
            (None, None) => {
                return Err("give `grid` (the kernel declares no `threads` parameter)".to_string())
            }
        };
        let dynamic_shared = match call.get("dynamicSharedMemory") {
            Some(v) => number(v, "dynamicSharedMemory")? as u32,
            None => 0,
        };
        options.launch = Some(Launch {
            grid,
            block,
            args,
            dynamic_shared,
        });
        Ok(options)
    }
}

/// The per-pipe counts `kernel_params` returns for the throughput bounds of the `gpu-queueing`
/// model, by the analyser's pipe names.
const PIPE_KEYS: [(&str, &str); 4] = [
    ("fp32Instructions", "fp32"),
    ("intInstructions", "int"),
    ("sfuInstructions", "sfu"),
    ("fp64Instructions", "fp64"),
];

/// A TEG time's memo key: the launch's key, the GPU (its `Debug` text) and resident warps.
type TegKey = (String, String, Option<u32>);

/// A launch `kernel_params` emulated: its kernel's name, and the traffic measured on the
/// architecture it was analysed for, which TEG takes instead of measuring it again.
struct Emulated {
    kernel: String,
    launch: Launch,
    traffic: Option<(Arch, Traffic)>,
}

/// The kernels of one run and the analyses done so far.
#[derive(Default)]
pub struct KernelLibrary {
    kernels: BTreeMap<String, LoadedKernel>,
    memo: RefCell<HashMap<String, Map>>,
    /// Emulated launches by the key `kernel_params` returns as `launch`.
    launches: RefCell<HashMap<String, Emulated>>,
    /// TEG's seconds by launch key, GPU and resident warps.
    teg: RefCell<HashMap<TegKey, f64>>,
    /// Each `kernel_params(name, …)` an application made and what it returned, where asked
    /// for ([`KernelLibrary::record_calls`]): what a calibration takes of a run of a
    /// benchmark set's application, so that the set's launch arguments are the app's, not a
    /// list kept beside it.
    calls: RefCell<Option<Vec<(String, Map)>>>,
}

impl KernelLibrary {
    /// Loads every kernel of a resolved system.
    pub fn new(specs: &[KernelSpec]) -> Result<KernelLibrary, SystemError> {
        let kernels = specs
            .iter()
            .map(|s| LoadedKernel::load(s).map(|k| (s.name.clone(), k)))
            .collect::<Result<_, _>>()?;
        Ok(KernelLibrary {
            kernels,
            ..KernelLibrary::default()
        })
    }

    /// Loads every kernel of `system`. Where the system's GPUs share one compute capability,
    /// a listing that names no architecture is analysed for it, and one compiled for
    /// another is refused (a kernel's `arch` forces one). Where they differ, TEG checks each
    /// GPU it times ([`KernelLibrary::teg_plan`]).
    pub fn for_system(system: &hetsim_system::System) -> Result<KernelLibrary, SystemError> {
        let mut library = KernelLibrary::new(&system.kernels)?;
        let mut archs = system
            .nodes
            .iter()
            .filter(|n| n.component.kind == hetsim_models::catalog::ComponentKind::Gpu)
            .filter_map(|n| n.component.attributes.get("computeCapability"))
            .filter_map(|cc| match cc {
                hetsim_models::Scalar::Text(t) => t.parse::<Arch>().ok(),
                hetsim_models::Scalar::Number(_) => None,
            });
        let Some(gpu) = archs.next() else {
            return Ok(library);
        };
        if archs.any(|a| a != gpu) {
            return Ok(library);
        }
        for (name, kernel) in &mut library.kernels {
            let chosen = select_kernel(
                &kernel.listing,
                kernel.spec.function.as_deref(),
                kernel.arch.or(Some(gpu)),
            )
            .map_err(|e| SystemError::new(format!("kernel `{name}`: {e}")))?;
            let choice = Arch::choose(kernel.arch, chosen.arch, Some(("the system's GPUs", gpu)))
                .map_err(|e| SystemError::new(format!("kernel `{name}`: {e}")))?;
            kernel.arch = choice.map(|c| c.arch);
        }
        Ok(library)
    }

    /// The seconds TEG gives launch `key` (from `kernel_params`) on `gpu`, with
    /// `warps_per_sm` resident warps if given.
    pub fn teg_seconds(
        &self,
        key: &str,
        gpu: &hetsim_teg::Gpu,
        warps_per_sm: Option<u32>,
    ) -> Result<f64, ScriptError> {
        let memo_key = (key.to_string(), format!("{gpu:?}"), warps_per_sm);
        if let Some(&seconds) = self.teg.borrow().get(&memo_key) {
            return Ok(seconds);
        }
        let (prepared, plan) = self.teg_plan(key, gpu, warps_per_sm)?;
        let seconds = hetsim_teg::run(&prepared, &plan, gpu, hetsim_teg::WhatIf::default()).seconds;
        self.teg.borrow_mut().insert(memo_key, seconds);
        Ok(seconds)
    }

    /// TEG's plan of launch `key` (from `kernel_params`) on `gpu`: the kernel prepared for
    /// the engine, with the architecture's shipped parameters, and the streams of the blocks
    /// it simulates. A fit of those parameters reruns the engine on the plan alone.
    pub fn teg_plan(
        &self,
        key: &str,
        gpu: &hetsim_teg::Gpu,
        warps_per_sm: Option<u32>,
    ) -> Result<(hetsim_teg::Prepared<'_>, hetsim_teg::Plan), ScriptError> {
        let launches = self.launches.borrow();
        let Emulated {
            kernel: name,
            launch,
            traffic,
        } = launches.get(key).ok_or_else(|| {
            format!("`launch` = \"{key}\" is no launch of kernel_params(): pass kernel_params()'s map")
        })?;
        let kernel = &self.kernels[name];
        let chosen = select_kernel(&kernel.listing, kernel.spec.function.as_deref(), kernel.arch)
            .map_err(|e| format!("kernel `{name}`: {e}"))?;
        let gpu_arch = gpu
            .arch()
            .map_err(|e| format!("kernel `{name}`: the GPU's {e}"))?;
        let arch = Arch::choose(kernel.arch, chosen.arch, Some(("the GPU", gpu_arch)))
            .map_err(|e| format!("kernel `{name}`: {e}"))?
            .map_or(gpu_arch, |c| c.arch);
        let prepared =
            hetsim_teg::Prepared::new(chosen, arch).map_err(|e| format!("kernel `{name}`: {e}"))?;
        let options = hetsim_teg::Options {
            warps_per_sm,
            traffic: traffic
                .filter(|(measured_on, _)| *measured_on == arch)
                .map(|(_, t)| t),
            ..hetsim_teg::Options::default()
        };
        let plan = hetsim_teg::plan(&prepared, launch, gpu, &options)
            .map_err(|e| format!("kernel `{name}`: {e}"))?;
        Ok((prepared, plan))
    }

    /// The analyser's latency bound [cycles a warp] of launch `key` (from `kernel_params`)
    /// with `figures` in place of the latency table's calibrated two: what a fit of them
    /// weighs ([`Options::calibrated`]).
    pub fn latency_bound_with(&self, key: &str, figures: CalibratedLatencies) -> Result<f64, String> {
        let launches = self.launches.borrow();
        let emulated = launches.get(key).ok_or_else(|| {
            format!("`launch` = \"{key}\" is no launch of kernel_params(): pass kernel_params()'s map")
        })?;
        let name = &emulated.kernel;
        let kernel = &self.kernels[name];
        let options = Options {
            launch: Some(emulated.launch.clone()),
            calibrated: Some(figures),
            ..kernel.base_options()
        };
        let report = analyze(&kernel.listing, &options).map_err(|e| format!("kernel `{name}`: {e}"))?;
        report
            .latency_bound
            .value()
            .ok_or_else(|| format!("kernel `{name}`: the latency bound of an emulated launch is a formula"))
    }

    /// From now on, keeps each call of [`KernelLibrary::params`] (its kernel and the
    /// parameters it returned) until [`KernelLibrary::take_calls`].
    pub fn record_calls(&self) {
        self.calls.borrow_mut().get_or_insert_with(Vec::new);
    }

    /// The calls kept since the last take, in the order they were made (none where
    /// [`KernelLibrary::record_calls`] was not asked).
    pub fn take_calls(&self) -> Vec<(String, Map)> {
        self.calls
            .borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// `kernel_params(name, call)`: the launch's model parameters (also what a calibration
    /// outside a run takes of each measured launch).
    pub fn params(&self, name: &str, call: &Map) -> Result<Map, String> {
        let params = self.analysed(name, call)?;
        if let Some(calls) = self.calls.borrow_mut().as_mut() {
            calls.push((name.to_owned(), params.clone()));
        }
        Ok(params)
    }

    fn analysed(&self, name: &str, call: &Map) -> Result<Map, String> {
        let kernel = self.kernels.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.kernels.keys().map(String::as_str).collect();
            format!(
                "no kernel `{name}` in the system model (it declares: {})",
                if known.is_empty() {
                    "none; add a [[kernel]] table".to_string()
                } else {
                    known.join(", ")
                }
            )
        })?;
        let options = kernel.options(call)?;
        let key = format!("{name}|{:?}|{:?}", options.launch, options.trips);
        if let Some(hit) = self.memo.borrow().get(&key) {
            return Ok(hit.clone());
        }
        let report = analyze(&kernel.listing, &options).map_err(|e| format!("kernel `{name}`: {e}"))?;
        let mut out = Map::new();
        let p = &report.parameters;
        for (key, q) in [
            ("CUDACoreInstructions", &p.CUDACoreInstructions),
            ("issuedInstructions", &p.issuedInstructions),
            ("GMEMBytesTransferred", &p.GMEMBytesTransferred),
            ("latencyBound", &p.latencyBound),
        ] {
            let value = match q {
                Quantity::Value(v) => *v,
                Quantity::Formula(f) => {
                    return Err(format!("kernel `{name}`: {key} is `{f}`: give the trip counts in `trips` (e.g. trips: #{{L0: 8}})"))
                }
            };
            out.insert(key.into(), Dynamic::from_float(value));
        }
        for (key, pipe) in PIPE_KEYS {
            let count = report
                .per_warp
                .by_pipe
                .get(pipe)
                .and_then(Quantity::value)
                .unwrap_or(0.0);
            out.insert(key.into(), Dynamic::from_float(count));
        }
        if let Some(m) = &report.memory {
            for (key, value) in [
                (traffic_keys::L2_BYTES, m.l2_bytes),
                (traffic_keys::DRAM_BYTES, m.dram_bytes),
                (traffic_keys::L1_WAVEFRONTS, m.l1_wavefronts),
                (traffic_keys::REUSE_EXPONENT, m.reuse_exponent),
                (traffic_keys::SHARED_WAVEFRONTS, m.shared_wavefronts),
                (traffic_keys::BARRIERS, m.barriers),
            ] {
                out.insert(key.into(), Dynamic::from_float(value));
            }
        }
        if let Some(registers) = report.registers {
            out.insert(
                "registersPerThread".into(),
                Dynamic::from_int(i64::from(registers)),
            );
        }
        if let Some(launch) = &options.launch {
            out.insert(
                "dynamicSharedMemory".into(),
                Dynamic::from_int(i64::from(launch.dynamic_shared)),
            );
            let grid: u64 = launch.grid.iter().map(|&g| u64::from(g)).product();
            let block: u64 = launch.block.iter().map(|&b| u64::from(b)).product();
            out.insert("gridSize".into(), Dynamic::from_int(grid as i64));
            out.insert("blockSize".into(), Dynamic::from_int(block as i64));
            out.insert("launch".into(), Dynamic::from(key.clone()));
            let emulated = Emulated {
                kernel: name.to_string(),
                launch: launch.clone(),
                traffic: report.block_traffic.map(|t| (report.arch, t)),
            };
            self.launches.borrow_mut().insert(key.clone(), emulated);
        }
        self.memo.borrow_mut().insert(key, out.clone());
        Ok(out)
    }
}

fn number(value: &Dynamic, key: &str) -> Result<f64, String> {
    value
        .as_float()
        .or_else(|_| value.as_int().map(|i| i as f64))
        .map_err(|t| format!("`{key}`: expected a number, got {t}"))
}

/// `256` or `[16, 16]` or `[16, 16, 1]`, each dimension 1 … 2³²−1.
fn dims(value: &Dynamic, key: &str) -> Result<[u32; 3], String> {
    let items: Vec<Dynamic> = match value.clone().try_cast::<rhai::Array>() {
        Some(a) => a,
        None => vec![value.clone()],
    };
    if items.is_empty() || items.len() > 3 {
        return Err(format!("`{key}`: expected a number or [x, y, z]"));
    }
    let mut out = [1u32; 3];
    for (slot, item) in out.iter_mut().zip(&items) {
        let x = number(item, key)?;
        if x < 1.0 || x > f64::from(u32::MAX) || x.fract() != 0.0 {
            return Err(format!("`{key}`: {x} is not a whole number from 1 to 2³²−1"));
        }
        *slot = x as u32;
    }
    Ok(out)
}

/// Registers `kernel_params` on an application engine.
pub fn register(engine: &mut Engine, library: Rc<KernelLibrary>) {
    engine.register_fn(
        "kernel_params",
        move |name: &str, call: Map| -> Result<Map, Box<EvalAltResult>> {
            library
                .params(name, &call)
                .map_err(|e| format!("kernel_params(\"{name}\"): {e}").into())
        },
    );
}
